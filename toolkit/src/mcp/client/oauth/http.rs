//! The HTTP client every request to an authorization server goes through.
//!
//! An authorization server's answers are input from a peer this process
//! does not control, reached at addresses another peer (the MCP server's
//! metadata) named. So every request is bounded in time and every answer in
//! size, redirects are followed only within one origin and a few times, only
//! `https` is spoken (plain `http` only to this machine's loopback), and
//! no request reaches an address that is never an authorization server's:
//! link-local (cloud metadata services live there), multicast, unspecified,
//! or this machine's loopback unless the MCP server itself is on it.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

/// The most an authorization server's answer may hold: metadata, a
/// registration or a token response is a few kilobytes.
pub(crate) const MAX_RESPONSE_BYTES: usize = 256 * 1024;

/// The most redirects one request follows, all within its origin.
const MAX_REDIRECTS: usize = 5;

/// Which addresses requests may reach.
#[derive(Debug, Clone, Copy)]
struct Reach {
    /// Whether loopback addresses may be reached: only when the MCP
    /// server is on this machine too.
    loopback: bool,
}

impl Reach {
    fn allows(self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        if ip.is_loopback() {
            return self.loopback;
        }
        let reserved = match ip {
            IpAddr::V4(v4) => v4.is_link_local() || v4.is_broadcast() || v4.octets()[0] == 0,
            IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
        };
        !(reserved || ip.is_unspecified() || ip.is_multicast())
    }

    /// Whether `url` may be requested: over `https`, or plain `http` only
    /// to this machine's loopback (where nothing crosses a network), as
    /// the MCP specification has authorization servers served; an address
    /// literal is checked here (the resolver never sees one), a name when
    /// it is resolved.
    fn allows_url(self, url: &reqwest::Url) -> bool {
        let Some(host) = url.host_str() else {
            return false;
        };
        let literal = address_of(host);
        let secure = match url.scheme() {
            "https" => true,
            "http" => {
                host.eq_ignore_ascii_case("localhost") || literal.is_some_and(|ip| ip.is_loopback())
            }
            _ => false,
        };
        secure && literal.is_none_or(|ip| self.allows(ip))
    }
}

/// The address a URL's host names literally (`[::1]` as `::1`), if it
/// names one rather than a domain.
fn address_of(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Resolves names as the system does, dropping the addresses [`Reach`]
/// refuses.
struct Screened(Reach);

impl Resolve for Screened {
    fn resolve(&self, name: Name) -> Resolving {
        let reach = self.0;
        Box::pin(async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let allowed: Vec<SocketAddr> = found.filter(|a| reach.allows(a.ip())).collect();
            if allowed.is_empty() {
                return Err(format!(
                    "`{}` resolves to no address an authorization server may have",
                    name.as_str()
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The bounded client, in the SDK's shape.
pub(super) struct BoundedHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    reach: Reach,
}

impl BoundedHttp {
    /// A client for the authorization servers of the MCP server at
    /// `server_url`, each request taking at most `timeout`; `trusting`
    /// adds the certificates the server's entry names (`caCertificate`).
    pub(super) fn new(
        server_url: &reqwest::Url,
        timeout: Duration,
        trusting: Option<&std::path::Path>,
    ) -> Result<Self, String> {
        let reach = Reach {
            loopback: server_url.host_str().is_some_and(|host| {
                host.eq_ignore_ascii_case("localhost")
                    || address_of(host).is_some_and(|ip| ip.is_loopback())
            }),
        };
        let build = |redirect: reqwest::redirect::Policy| {
            let builder = reqwest::Client::builder()
                .timeout(timeout)
                .connect_timeout(timeout)
                .redirect(redirect)
                .dns_resolver(Arc::new(Screened(reach)));
            let builder = match trusting {
                Some(path) => crate::mcp::client::trust::trust(builder, path)?,
                None => builder,
            };
            builder.build().map_err(|e| e.to_string())
        };
        let same_origin = reqwest::redirect::Policy::custom(move |attempt| {
            let from = attempt.previous().first().map(reqwest::Url::origin);
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if from.as_ref() != Some(&attempt.url().origin()) {
                let to = attempt.url().origin().ascii_serialization();
                attempt.error(format!(
                    "a redirect to another origin ({to}) is not followed"
                ))
            } else if !reach.allows_url(attempt.url()) {
                attempt.error("a redirect to an address no authorization server has")
            } else {
                attempt.follow()
            }
        });
        Ok(Self {
            follow: build(same_origin)?,
            stop: build(reqwest::redirect::Policy::none())?,
            reach,
        })
    }
}

impl OAuthHttpClient for BoundedHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let client = match request.redirect_policy {
            OAuthHttpRedirectPolicy::Stop => &self.stop,
            _ => &self.follow,
        };
        let request = reqwest::Request::try_from(request.request);
        Box::pin(async move {
            let request = request.map_err(boxed)?;
            if !self.reach.allows_url(request.url()) {
                return Err(format!(
                    "{} is no address an authorization server is reached at (https, or http on this machine's loopback)",
                    request.url().origin().ascii_serialization()
                )
                .into());
            }
            let response = client.execute(request).await.map_err(boxed)?;
            let mut answer = hyper::http::Response::builder()
                .status(response.status())
                .version(response.version());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let body = read_bounded(response).await?;
            answer.body(body).map_err(boxed)
        })
    }
}

/// The body of `response`, refused once it passes [`MAX_RESPONSE_BYTES`]
/// (before reading anything when its length says so).
async fn read_bounded(response: reqwest::Response) -> Result<Vec<u8>, OAuthHttpClientError> {
    let too_large =
        || format!("the authorization server's answer is larger than {MAX_RESPONSE_BYTES} bytes");
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(too_large().into());
    }
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(boxed)?;
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(too_large().into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn boxed(e: impl std::error::Error + Send + Sync + 'static) -> OAuthHttpClientError {
    Box::new(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_no_authorization_server_has_are_refused() {
        let remote = Reach { loopback: false };
        let local = Reach { loopback: true };
        for refused in [
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "::",
            "fe80::1",
            "ff02::1",
            "::ffff:169.254.169.254",
        ] {
            let ip: IpAddr = refused.parse().unwrap();
            assert!(!remote.allows(ip) && !local.allows(ip), "{refused}");
        }
        for loopback in ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"] {
            let ip: IpAddr = loopback.parse().unwrap();
            assert!(!remote.allows(ip) && local.allows(ip), "{loopback}");
        }
        for allowed in ["10.0.0.9", "192.168.1.1", "93.184.216.34", "2001:db8::1"] {
            let ip: IpAddr = allowed.parse().unwrap();
            assert!(remote.allows(ip), "{allowed}");
        }
    }

    #[test]
    fn authorization_servers_are_reached_over_https_or_on_loopback() {
        let local = Reach { loopback: true };
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        for allowed in [
            "https://auth.example.com/.well-known/oauth-authorization-server",
            "https://10.0.0.9/token",
            "http://127.0.0.1:9000/token",
            "http://[::1]:9000/token",
            "http://localhost:9000/token",
        ] {
            assert!(local.allows_url(&url(allowed)), "{allowed}");
        }
        for refused in [
            "http://auth.example.com/token",
            "http://10.0.0.9/token",
            "http://localhost.example.com/token",
            "http://127.0.0.1.example.com/token",
            "https://169.254.169.254/latest/meta-data",
            "ftp://127.0.0.1/token",
            "file:///etc/passwd",
            "ws://127.0.0.1/token",
        ] {
            assert!(!local.allows_url(&url(refused)), "{refused}");
        }
        let remote = Reach { loopback: false };
        assert!(!remote.allows_url(&url("http://127.0.0.1:9000/token")));
    }
}
