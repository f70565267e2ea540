//! Whether the browser may request a URL: the one decision every navigation,
//! redirect and sub-request goes through. It is the network guard every
//! network tool shares, [`NetPolicy`]: http and https only, public addresses
//! only unless the allow list names the host or `host:port`.

use std::net::SocketAddr;

use url::Url;

use crate::net::NetPolicy;

/// A URL the browser was not allowed to request, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused `{url}`: {reason}")]
pub(crate) struct Refusal {
    /// The URL as requested.
    pub(crate) url: String,
    /// What the network guard said.
    pub(crate) reason: String,
}

/// Checks one URL against `policy`, resolving its host so a name that leads
/// to a private address is refused like the address itself.
pub(crate) async fn check(policy: &NetPolicy, url: &str) -> Result<(), Refusal> {
    check_addresses(policy, url).await.map(drop)
}

/// [`check`], returning the addresses checked: the only ones to connect to.
pub(crate) async fn check_addresses(
    policy: &NetPolicy,
    url: &str,
) -> Result<Vec<SocketAddr>, Refusal> {
    let refuse = |reason: String| Refusal {
        url: url.to_owned(),
        reason,
    };
    let parsed = Url::parse(url).map_err(|e| refuse(format!("not a valid URL ({e})")))?;
    policy
        .check_url(&parsed)
        .await
        .map_err(|e| refuse(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refusal_names_the_url_and_the_address() {
        let policy = NetPolicy::new().allow("127.0.0.1:8080").unwrap();
        assert_eq!(check(&policy, "http://127.0.0.1:8080/x").await, Ok(()));
        let refused = check(&policy, "http://127.0.0.1:8081/x").await.unwrap_err();
        assert_eq!(refused.url, "http://127.0.0.1:8081/x");
        assert!(refused.to_string().contains("127.0.0.1:8081"), "{refused}");
        let invalid = check(&policy, "not a url").await.unwrap_err();
        assert!(invalid.reason.contains("not a valid URL"), "{invalid}");
    }
}
