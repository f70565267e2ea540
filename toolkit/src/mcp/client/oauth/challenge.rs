//! What an MCP server's refusal of a request asks for: a `401` (sign in,
//! perhaps at another authorization server) or a `403` with
//! `insufficient_scope` (sign in again for more scopes), and the scopes a
//! challenge names, checked before they reach an authorization request.

use rmcp::transport::auth::WWWAuthenticateParams;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, StreamableHttpError,
};

/// The most scopes one sign-in asks for, a challenge's and the ones held
/// together: a server asking for ever more cannot grow the request (and
/// the user's prompts) without end.
pub(crate) const MAX_SCOPES: usize = 32;

/// The longest `scope` a challenge may carry.
pub(crate) const MAX_SCOPE_CHARS: usize = 1024;

/// Why the MCP server refused a request, with its `WWW-Authenticate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `401`: no token, or one the server no longer takes (expired,
    /// revoked, or minted by an authorization server it no longer trusts).
    Unauthorized(String),
    /// `403` `insufficient_scope`: the token lacks scopes this request needs.
    InsufficientScope(String),
}

/// The refusal behind a failed request, if the server refused it for want
/// of authorization: the transport's error, its causes walked (the request
/// error does not name the transport's as its source).
pub(crate) fn refusal_of(error: &rmcp::ServiceError) -> Option<Refusal> {
    let rmcp::ServiceError::TransportSend(sent) = error else {
        return None;
    };
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(sent);
    while let Some(cause) = next {
        if let Some(found) = refusal_in(cause) {
            return Some(found);
        }
        next = cause.source();
    }
    None
}

fn refusal_in(cause: &(dyn std::error::Error + 'static)) -> Option<Refusal> {
    if let Some(refused) = cause.downcast_ref::<AuthRequiredError>() {
        return Some(Refusal::Unauthorized(
            refused.www_authenticate_header.clone(),
        ));
    }
    if let Some(refused) = cause.downcast_ref::<InsufficientScopeError>() {
        return Some(Refusal::InsufficientScope(
            refused.www_authenticate_header.clone(),
        ));
    }
    match cause.downcast_ref::<StreamableHttpError<reqwest::Error>>()? {
        StreamableHttpError::AuthRequired(refused) => Some(Refusal::Unauthorized(
            refused.www_authenticate_header.clone(),
        )),
        StreamableHttpError::InsufficientScope(refused) => Some(Refusal::InsufficientScope(
            refused.www_authenticate_header.clone(),
        )),
        _ => None,
    }
}

/// The scopes `challenge` names (its `scope` parameter), each checked to be
/// a scope token as RFC 6749 §3.3 defines it (printable ASCII, no space,
/// quote or backslash), at most [`MAX_SCOPES`] of them in at most
/// [`MAX_SCOPE_CHARS`]. Empty when it names none.
pub(crate) fn scopes_of(challenge: &str, server_url: &reqwest::Url) -> Result<Vec<String>, String> {
    let params = WWWAuthenticateParams::parse(challenge, server_url);
    let Some(scope) = params.scope else {
        return Ok(Vec::new());
    };
    if scope.chars().count() > MAX_SCOPE_CHARS {
        return Err(format!(
            "the server's challenge asks for a scope of more than {MAX_SCOPE_CHARS} characters"
        ));
    }
    let scopes: Vec<String> = scope
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(bad) = scopes.iter().find(|s| !is_scope_token(s)) {
        let shown: String = bad.chars().filter(|c| !c.is_control()).take(40).collect();
        return Err(format!(
            "the server's challenge asks for a scope that is not a scope token: `{shown}`"
        ));
    }
    if scopes.len() > MAX_SCOPES {
        return Err(format!(
            "the server's challenge asks for more than {MAX_SCOPES} scopes"
        ));
    }
    Ok(scopes)
}

/// RFC 6749 §3.3: `1*( %x21 / %x23-5B / %x5D-7E )`.
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// `held` with `asked` added, in order, each once.
pub(crate) fn union(held: &[String], asked: &[String]) -> Vec<String> {
    let mut all: Vec<String> = Vec::with_capacity(held.len() + asked.len());
    for scope in held.iter().chain(asked) {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> reqwest::Url {
        reqwest::Url::parse("http://127.0.0.1:1/mcp").unwrap()
    }

    fn scopes(challenge: &str) -> Result<Vec<String>, String> {
        scopes_of(challenge, &url())
    }

    #[test]
    fn a_challenges_scopes_are_read() {
        let asked = scopes(r#"Bearer error="insufficient_scope", scope="files:read files:write""#);
        assert_eq!(asked.unwrap(), ["files:read", "files:write"]);
        assert_eq!(scopes("Bearer").unwrap(), Vec::<String>::new());
        assert_eq!(
            scopes(r#"Bearer resource_metadata="http://127.0.0.1:1/x""#).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn hostile_scopes_are_refused() {
        let huge = format!(r#"Bearer scope="{}""#, "a".repeat(MAX_SCOPE_CHARS + 1));
        let many = format!(
            r#"Bearer scope="{}""#,
            (0..=MAX_SCOPES)
                .map(|i| format!("s{i}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let hostile = [
            huge,
            many,
            "Bearer scope=\"read\u{7}write\"".to_owned(),
            "Bearer scope=\"read\u{1b}[2J\"".to_owned(),
            "Bearer scope=\"read\twrite\"".to_owned(),
            "Bearer scope=\"r\u{e9}ad\"".to_owned(),
            "Bearer scope=\"read\u{202e}etirw\"".to_owned(),
            "Bearer scope=\"a\\\\b\"".to_owned(),
        ];
        for challenge in &hostile {
            let refused = scopes(challenge);
            assert!(refused.is_err(), "{challenge:?} gave {refused:?}");
            let said = refused.unwrap_err();
            assert!(
                said.len() < 200 && !said.chars().any(char::is_control),
                "{said:?}"
            );
        }
    }

    #[test]
    fn a_union_keeps_order_and_adds_each_scope_once() {
        let held = vec!["a".to_owned(), "b".to_owned()];
        let asked = vec!["b".to_owned(), "c".to_owned(), "c".to_owned()];
        assert_eq!(union(&held, &asked), ["a", "b", "c"]);
        assert_eq!(union(&held, &[]), held);
    }
}
