//! What the authorization server's redirect carries back to the client.

use std::fmt;

/// The most of an authorization server's `error_description` passed on:
/// the text is the server's, shown to a person, and need not be long.
const MAX_DESCRIPTION_CHARS: usize = 200;

/// The parameters of the redirect that ends the user's sign-in: the code
/// to trade for tokens, the `state` the client sent (checked against it),
/// and the authorization server's issuer when it names it (`iss`, RFC 9207;
/// checked against the issuer of its metadata).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationRedirect {
    /// The authorization code.
    pub code: String,
    /// The `state` the client put in the authorization URL, as it came back.
    pub state: String,
    /// The `iss` parameter, when the authorization server sends one.
    pub issuer: Option<String>,
}

impl fmt::Debug for AuthorizationRedirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationRedirect")
            .field("code", &"[REDACTED]")
            .field("state", &"[REDACTED]")
            .field("issuer", &self.issuer)
            .finish()
    }
}

impl AuthorizationRedirect {
    /// A redirect carrying `code` and `state`, and no `iss`.
    pub fn new(code: impl Into<String>, state: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            state: state.into(),
            issuer: None,
        }
    }

    /// The same, naming the issuer (`iss`).
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Read the redirect's URL (or just its path and query): its `code`,
    /// `state` and `iss`. A redirect that carries an `error` instead (the
    /// user declined, the server refused) is an error saying so.
    ///
    /// ```
    /// use toolsmith::mcp::AuthorizationRedirect;
    ///
    /// let back = AuthorizationRedirect::from_url(
    ///     "http://127.0.0.1:8976/callback?code=c0de&state=s7a7e&iss=https%3A%2F%2Fas.example",
    /// ).unwrap();
    /// assert_eq!((back.code.as_str(), back.state.as_str()), ("c0de", "s7a7e"));
    /// assert_eq!(back.issuer.as_deref(), Some("https://as.example"));
    ///
    /// let refused = AuthorizationRedirect::from_url("/callback?error=access_denied&state=s").unwrap_err();
    /// assert_eq!(refused, "the authorization server refused: access_denied");
    /// ```
    pub fn from_url(url: &str) -> Result<Self, String> {
        let parsed = match reqwest::Url::parse(url) {
            Ok(parsed) => parsed,
            // A path and query alone, as an HTTP request line carries them.
            Err(_) if url.starts_with('/') => reqwest::Url::parse("http://127.0.0.1")
                .and_then(|base| base.join(url))
                .map_err(|e| format!("the redirect is not a URL: {e}"))?,
            Err(e) => return Err(format!("the redirect is not a URL: {e}")),
        };
        let (mut code, mut state, mut issuer, mut error, mut description) =
            (None, None, None, None, None);
        for (key, value) in parsed.query_pairs() {
            let slot = match key.as_ref() {
                "code" => &mut code,
                "state" => &mut state,
                "iss" => &mut issuer,
                "error" => &mut error,
                "error_description" => &mut description,
                _ => continue,
            };
            // A parameter given twice is ambiguous: which one did the
            // server mean? Refused rather than guessed.
            if slot.replace(value.into_owned()).is_some() {
                return Err(format!("the redirect gives `{key}` twice"));
            }
        }
        if let Some(error) = error {
            let mut said = format!("the authorization server refused: {}", printable(&error));
            if let Some(description) = description {
                said = format!("{said} ({})", printable(&description));
            }
            return Err(said);
        }
        let code = code
            .filter(|c| !c.is_empty())
            .ok_or("the redirect carries no `code`")?;
        let state = state
            .filter(|s| !s.is_empty())
            .ok_or("the redirect carries no `state`")?;
        Ok(Self {
            code,
            state,
            issuer,
        })
    }
}

/// The server's text as a person may be shown it: no control characters
/// (a terminal's escapes, a forged log line), and not too long.
fn printable(text: &str) -> String {
    let mut shown: String = text
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_DESCRIPTION_CHARS)
        .collect();
    if text.chars().filter(|c| !c.is_control()).count() > MAX_DESCRIPTION_CHARS {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_without_code_or_state_is_refused() {
        for url in [
            "http://127.0.0.1/cb",
            "http://127.0.0.1/cb?code=c",
            "http://127.0.0.1/cb?state=s",
            "http://127.0.0.1/cb?code=&state=s",
            "http://127.0.0.1/cb?code=c&state=",
            "not a url",
            "",
        ] {
            assert!(AuthorizationRedirect::from_url(url).is_err(), "{url}");
        }
    }

    #[test]
    fn a_parameter_given_twice_is_refused() {
        for url in [
            "/cb?code=a&code=b&state=s",
            "/cb?code=a&state=s&state=t",
            "/cb?code=a&state=s&iss=x&iss=y",
        ] {
            let err = AuthorizationRedirect::from_url(url).unwrap_err();
            assert!(err.contains("twice"), "{url}: {err}");
        }
    }

    #[test]
    fn the_servers_error_text_is_bounded_and_stripped_of_controls() {
        let long = "x".repeat(10_000);
        let err = AuthorizationRedirect::from_url(&format!(
            "/cb?error=e%1b%5b2J&error_description={long}"
        ))
        .unwrap_err();
        assert!(!err.contains('\u{1b}'), "{err}");
        assert!(err.chars().count() < MAX_DESCRIPTION_CHARS + 80, "{err}");
        assert!(err.ends_with("…)"), "{err}");
    }

    #[test]
    fn debug_never_shows_the_code() {
        let back = AuthorizationRedirect::new("c0de-secret", "st4te");
        let shown = format!("{back:?}");
        assert!(!shown.contains("c0de-secret") && !shown.contains("st4te"));
    }
}
