//! [`JwtVerifier`]: access tokens as JWTs signed with the authorization
//! server's keys, which it publishes as a JWKS.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use tokio::sync::{Mutex, RwLock};

use super::{Claims, TokenError, TokenVerifier};

/// The most a JWKS document may weigh: 256 KiB.
const JWKS_LIMIT: usize = 256 << 10;
/// The most keys kept from one JWKS.
const KEY_LIMIT: usize = 64;

/// Checks bearer tokens that are JWTs (RFC 9068 access tokens and the
/// like): signed by one of the keys of the JWKS at the URL the host gives
/// (fetched on first use, cached, fetched again when a token names a key
/// it does not hold, or when older than [`max_age`](Self::max_age)),
/// issued by the issuer, for the audience, and not expired.
///
/// Only asymmetric algorithms are taken (RS*, PS*, ES256, ES384, EdDSA by
/// default): `alg: none` and HMAC never pass. A key whose `alg` is given
/// signs with that algorithm only.
///
/// The JWKS is fetched at most once per
/// [`refresh_interval`](Self::refresh_interval), whether the fetch works
/// or fails (a flood of tokens naming unknown keys does not flood the
/// authorization server, even while it is down), within a
/// timeout, at most 256 KiB and 64 keys. A JWKS over `https` needs the
/// TLS of feature `mcp-tls`, which `mcp-jwt` brings.
///
/// ```no_run
/// use toolsmith::mcp::{HttpOptions, JwtVerifier, OAuthResource};
///
/// let verifier = JwtVerifier::new(
///     "https://auth.example.com/.well-known/jwks.json",
///     "https://auth.example.com",
///     "https://mcp.example.com/mcp",
/// );
/// let resource = OAuthResource::new("https://mcp.example.com/mcp", "https://auth.example.com", verifier)
///     .require_scopes(["mcp"]);
/// let options = HttpOptions::default().auth(resource);
/// ```
pub struct JwtVerifier {
    jwks_url: String,
    issuers: Vec<String>,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    refresh_interval: Duration,
    max_age: Duration,
    client: reqwest::Client,
    keys: RwLock<Arc<Keys>>,
    /// The last fetch tried, held while fetching so concurrent misses
    /// fetch once.
    fetching: Mutex<Option<Attempt>>,
}

/// A fetch of the JWKS, whether it worked or not: the throttle counts
/// attempts, so a JWKS that keeps failing is not asked once per token.
struct Attempt {
    at: Instant,
    /// Why it failed, told to every token that needs a fetch until the
    /// next attempt is allowed.
    failure: Option<TokenError>,
}

struct Keys {
    by_id: HashMap<String, (DecodingKey, Option<Algorithm>)>,
    /// Keys without a `kid`, for tokens that name none.
    unnamed: Vec<(DecodingKey, Option<Algorithm>)>,
    fetched: Option<Instant>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("jwks_url", &self.jwks_url)
            .field("issuers", &self.issuers)
            .field("audiences", &self.audiences)
            .field("algorithms", &self.algorithms)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Tokens signed by a key of the JWKS at `jwks_url`, issued by
    /// `issuer` (`iss`, compared exactly) for `audience` (one of `aud`:
    /// the MCP endpoint's canonical URI).
    pub fn new(
        jwks_url: impl Into<String>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Self {
        Self {
            jwks_url: jwks_url.into(),
            issuers: vec![issuer.into()],
            audiences: vec![audience.into()],
            algorithms: vec![
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
                Algorithm::ES256,
                Algorithm::ES384,
                Algorithm::EdDSA,
            ],
            leeway: Duration::from_secs(30),
            refresh_interval: Duration::from_secs(30),
            max_age: Duration::from_secs(3600),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            keys: RwLock::new(Arc::new(Keys {
                by_id: HashMap::new(),
                unnamed: Vec::new(),
                fetched: None,
            })),
            fetching: Mutex::new(None),
        }
    }

    /// Accept another audience too (a second name of the same endpoint).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Accept another issuer too.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// Accept only these algorithms (HMAC ones are ignored: a shared secret
    /// has no place in a JWKS).
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms
            .into_iter()
            .filter(|a| !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect();
        self
    }

    /// How far clocks may disagree on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The least time between two fetches of the JWKS (default 30 s).
    pub fn refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// How long fetched keys are used before being fetched again (default 1 h).
    pub fn max_age(mut self, age: Duration) -> Self {
        self.max_age = age;
        self
    }

    /// The key for a token that names `kid` (or none) and `alg`, fetching
    /// the JWKS when it is not held.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, TokenError> {
        let keys = Arc::clone(&*self.keys.read().await);
        let stale = keys.fetched.is_none_or(|at| at.elapsed() >= self.max_age);
        if !stale && let Some(key) = find(&keys, kid, alg)? {
            return Ok(key);
        }
        let mut last = self.fetching.lock().await;
        // Another call may have fetched while this one waited.
        let keys = Arc::clone(&*self.keys.read().await);
        let stale = keys.fetched.is_none_or(|at| at.elapsed() >= self.max_age);
        let recent = last
            .as_ref()
            .filter(|attempt| attempt.at.elapsed() < self.refresh_interval);
        let keys = match recent {
            // Keys still young enough serve while the server is away.
            Some(Attempt {
                failure: Some(why), ..
            }) if stale => return Err(why.clone()),
            Some(_) => keys,
            None => {
                let fetched = self.fetch().await;
                *last = Some(Attempt {
                    at: Instant::now(),
                    failure: fetched.as_ref().err().cloned(),
                });
                match fetched {
                    Ok(fresh) => {
                        let fresh = Arc::new(fresh);
                        *self.keys.write().await = Arc::clone(&fresh);
                        fresh
                    }
                    Err(e) if stale => return Err(e),
                    Err(_) => keys,
                }
            }
        };
        find(&keys, kid, alg)?.ok_or_else(|| match kid {
            Some(kid) => TokenError::Invalid(format!("no key `{kid}` signs tokens here")),
            None => TokenError::Invalid("the token names no key (`kid`)".into()),
        })
    }

    async fn fetch(&self) -> Result<Keys, TokenError> {
        let unavailable = |e: &dyn std::fmt::Display| {
            TokenError::Unavailable(format!(
                "the keys at {} could not be read: {e}",
                self.jwks_url
            ))
        };
        let mut response = self
            .client
            .get(&self.jwks_url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        if !response.status().is_success() {
            return Err(unavailable(&response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| unavailable(&e))? {
            if body.len() + chunk.len() > JWKS_LIMIT {
                return Err(unavailable(&"the document is too large"));
            }
            body.extend_from_slice(&chunk);
        }
        let set: JwkSet = serde_json::from_slice(&body).map_err(|e| unavailable(&e))?;
        let mut keys = Keys {
            by_id: HashMap::new(),
            unnamed: Vec::new(),
            fetched: Some(Instant::now()),
        };
        for jwk in set.keys.iter().take(KEY_LIMIT) {
            if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
                continue;
            }
            if jwk
                .common
                .public_key_use
                .as_ref()
                .is_some_and(|u| *u != jsonwebtoken::jwk::PublicKeyUse::Signature)
            {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let alg = match jwk.common.key_algorithm {
                None => None,
                Some(alg) => match signing_algorithm(alg) {
                    Some(alg) => Some(alg),
                    None => continue,
                },
            };
            match &jwk.common.key_id {
                Some(kid) => {
                    keys.by_id.insert(kid.clone(), (key, alg));
                }
                None => keys.unnamed.push((key, alg)),
            }
        }
        Ok(keys)
    }
}

/// The key of `keys` a token naming `kid` and `alg` is checked with.
fn find(keys: &Keys, kid: Option<&str>, alg: Algorithm) -> Result<Option<DecodingKey>, TokenError> {
    let found = match kid {
        Some(kid) => keys.by_id.get(kid),
        // Without a `kid`, only a JWKS of one key says which.
        None if keys.by_id.len() + keys.unnamed.len() == 1 => {
            keys.by_id.values().chain(&keys.unnamed).next()
        }
        None => None,
    };
    match found {
        None => Ok(None),
        Some((_, Some(only))) if *only != alg => Err(TokenError::Invalid(format!(
            "the key is for {only:?}, not {alg:?}"
        ))),
        Some((key, _)) => Ok(Some(key.clone())),
    }
}

/// The signing algorithm a JWK's `alg` names, if it is one.
fn signing_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    alg.to_string().parse().ok()
}

#[async_trait]
impl TokenVerifier for JwtVerifier {
    async fn verify(&self, token: &str) -> Result<Claims, TokenError> {
        // An unknown `alg` (`none` among them) does not decode.
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| TokenError::Invalid(format!("the token is malformed: {e}")))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(TokenError::Invalid(format!(
                "tokens signed with {:?} are not accepted",
                header.alg
            )));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_audience(&self.audiences);
        validation.set_issuer(&self.issuers);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| TokenError::Invalid(reason(&e)))?;
        Ok(Claims::from_json(data.claims))
    }
}

/// What was wrong with a token, in words for its holder.
fn reason(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet".into(),
        ErrorKind::InvalidAudience => "the token is for another audience".into(),
        ErrorKind::InvalidIssuer => "the token is from another issuer".into(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}`"),
        _ => format!("the token is not valid: {error}"),
    }
}
