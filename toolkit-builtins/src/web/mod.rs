//! `web_fetch`, `http_request` and `web_search`.
//!
//! Each is off until the host puts its policy in the context's state:
//! [`WebPolicy`] for `web_fetch`, [`HttpPolicy`] for `http_request`,
//! [`SearchConfig`] for `web_search`. Every URL a model names goes through
//! the network guard ([`crate::net::NetPolicy`]) at every redirect; the
//! guards are listed in [`crate::guards`].
//!
//! ```
//! use toolsmith::ToolContext;
//! use toolsmith_builtins::net::NetPolicy;
//! use toolsmith_builtins::web::{Brave, HttpPolicy, SearchConfig, WebPolicy};
//!
//! let ctx = ToolContext::new()
//!     .with_state(WebPolicy::new())
//!     .with_state(HttpPolicy::new(["api.example.com", "*.example.org"]))
//!     .with_state(SearchConfig::new(Brave::new("brave-api-key")));
//! ```

mod client;
pub(crate) mod extract;
mod fetch;
mod html;
mod html_text;
mod main_content;
mod request;
mod search;

use std::time::Duration;

use toolsmith::ToolError;
use url::Url;

pub use client::MAX_REDIRECTS;
pub use extract::{EXTERNAL_CONTENT_BANNER, EXTERNAL_CONTENT_END, ExtractMode};
pub use fetch::{WebFetchTool, web_fetch};
pub use request::{HttpMethod, HttpRequestTool, http_request};
pub use search::{
    Brave, DuckDuckGo, SearchAnswer, SearchBackend, SearchClient, SearchConfig, SearchError,
    SearchResult, Searxng, Tavily, WebSearchTool, format_results, web_search,
};

use crate::net::{NetError, NetPolicy};

/// Why a web request failed.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The network guard refused a destination.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The URL is not a URL.
    #[error("`{0}` is not a valid URL")]
    InvalidUrl(String),
    /// `http_request` may not reach this host.
    #[error("`{0}` is not one of the domains this tool may reach")]
    DomainNotAllowed(String),
    /// More redirects than allowed.
    #[error("more than {0} redirects; stopped")]
    TooManyRedirects(usize),
    /// A redirect that leads nowhere usable.
    #[error("the server redirected to `{0}`, which is not a valid URL")]
    BadRedirect(String),
    /// A header the model gave cannot be sent.
    #[error("header `{0}` cannot be set: {1}")]
    Header(String, &'static str),
    /// The request did not finish in time.
    #[error("the request to `{0}` timed out")]
    Timeout(String),
    /// The connection was refused, reset or closed before the answer was
    /// complete: a failure that may pass on a later try.
    #[error("the request to `{url}` failed: {message}")]
    Network {
        /// The URL of the hop that failed.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The server asked to slow down (HTTP 429) or is down for now (HTTP
    /// 502, 503 or 504): a failure that may pass on a later try.
    #[error("`{url}` answered HTTP {status}{}", busy_suffix(*status, *retry_after))]
    Busy {
        /// The URL that answered.
        url: String,
        /// The HTTP status.
        status: u16,
        /// When the server said to try again (its `Retry-After` in seconds).
        retry_after: Option<Duration>,
    },
    /// The connection or exchange failed.
    #[error("the request to `{url}` failed: {message}")]
    Request {
        /// The URL of the hop that failed.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
    /// The body came compressed (`Content-Encoding`), which this client
    /// does not decode: its bytes would reach the model as text.
    #[error(
        "`{url}` sent its body encoded as `{encoding}`, which this tool cannot decode; ask without an `Accept-Encoding` header"
    )]
    Encoded {
        /// The URL that answered.
        url: String,
        /// The `Content-Encoding` it named.
        encoding: String,
    },
}

impl WebError {
    fn from_reqwest(url: &Url, error: reqwest::Error) -> Self {
        if error.is_timeout() {
            return Self::Timeout(url.to_string());
        }
        let mut message = error.to_string();
        let mut network = error.is_connect();
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            message.push_str(": ");
            message.push_str(&inner.to_string());
            network |= is_connection_failure(inner);
            source = inner.source();
        }
        let url = url.to_string();
        if network {
            Self::Network { url, message }
        } else {
            Self::Request { url, message }
        }
    }

    /// The failure a response's status is, when it is one that may pass
    /// on a later try: 429, 502, 503 or 504.
    pub(crate) fn from_status(
        url: &Url,
        status: reqwest::StatusCode,
        headers: &reqwest::header::HeaderMap,
    ) -> Option<Self> {
        let status = status.as_u16();
        if !matches!(status, 429 | 502 | 503 | 504) {
            return None;
        }
        Some(Self::Busy {
            url: url.to_string(),
            status,
            retry_after: retry_after(headers),
        })
    }
}

/// A connection refused, reset, aborted or cut short, seen in an error's
/// chain of sources.
fn is_connection_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind;
    if let Some(io) = error.downcast_ref::<std::io::Error>() {
        return matches!(
            io.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::NotConnected
                | ErrorKind::BrokenPipe
                | ErrorKind::UnexpectedEof
        );
    }
    // hyper's words for a connection closed before the answer was complete.
    error
        .to_string()
        .contains("connection closed before message completed")
}

/// A `Retry-After` given in seconds (the HTTP-date form is not read), at
/// most a day.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds.min(86_400)))
}

fn busy_suffix(status: u16, retry_after: Option<Duration>) -> String {
    let what = match status {
        429 => " (Too Many Requests): the server asks to slow down",
        502 => " (Bad Gateway): the server is unavailable for now",
        503 => " (Service Unavailable): the server is unavailable for now",
        _ => " (Gateway Timeout): the server is unavailable for now",
    };
    match retry_after {
        Some(after) => format!("{what}; try again in {} s", after.as_secs()),
        None => format!("{what}; try again later"),
    }
}

impl From<WebError> for ToolError {
    fn from(error: WebError) -> Self {
        match error {
            WebError::Client(_) => ToolError::internal(error),
            WebError::Network { .. } | WebError::Net(NetError::Resolve { .. }) => {
                ToolError::network(error)
            }
            WebError::Busy {
                status: 429,
                retry_after,
                ..
            } => ToolError::rate_limited(error, retry_after),
            WebError::Busy { .. } => ToolError::unavailable(error),
            _ => ToolError::failed(error),
        }
    }
}

fn parse_url(url: &str) -> Result<Url, WebError> {
    Url::parse(url.trim()).map_err(|_| WebError::InvalidUrl(url.to_string()))
}

/// How `web_fetch` may fetch. Put one in the context's state to enable it.
///
/// Defaults: public addresses only, 2 MiB read at most, 50 000 characters
/// returned at most, 30 s timeout.
#[derive(Debug, Clone)]
pub struct WebPolicy {
    net: NetPolicy,
    max_response_bytes: usize,
    max_chars: usize,
    timeout: Duration,
}

impl Default for WebPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl WebPolicy {
    /// The defaults above.
    pub fn new() -> Self {
        Self {
            net: NetPolicy::new(),
            max_response_bytes: 2 * 1024 * 1024,
            max_chars: 50_000,
            timeout: Duration::from_secs(30),
        }
    }

    /// Use this network guard (for an allow list).
    pub fn with_net(mut self, net: NetPolicy) -> Self {
        self.net = net;
        self
    }

    /// Read at most this many bytes of a response.
    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Return at most this many characters (a call may ask for fewer).
    pub fn with_max_chars(mut self, chars: usize) -> Self {
        self.max_chars = chars;
        self
    }

    /// Give up on a request after this long.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The network guard.
    pub fn net(&self) -> &NetPolicy {
        &self.net
    }
}

/// How `http_request` may send requests. Put one in the context's state
/// to enable it.
///
/// Only hosts matching an allowed domain are reached: `api.example.com`
/// exactly, `*.example.com` any subdomain (not `example.com` itself), `*`
/// any host; the network guard still applies. Defaults: 30 s timeout (a
/// call may ask for less, never more), 512 KiB read at most, 50 000
/// characters returned at most (JSON is pretty-printed up to that cap).
#[derive(Debug, Clone)]
pub struct HttpPolicy {
    net: NetPolicy,
    allowed_domains: Vec<String>,
    timeout: Duration,
    max_response_bytes: usize,
    max_chars: usize,
}

impl HttpPolicy {
    /// A policy reaching `allowed_domains`.
    pub fn new<S: Into<String>>(allowed_domains: impl IntoIterator<Item = S>) -> Self {
        Self {
            net: NetPolicy::new(),
            allowed_domains: allowed_domains
                .into_iter()
                .map(|d| normalize_host(&d.into()))
                .collect(),
            timeout: Duration::from_secs(30),
            max_response_bytes: 512 * 1024,
            max_chars: 50_000,
        }
    }

    /// Use this network guard (for an allow list).
    pub fn with_net(mut self, net: NetPolicy) -> Self {
        self.net = net;
        self
    }

    /// The longest a request may take.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Read at most this many bytes of a response.
    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Return at most this many characters of a response body.
    pub fn with_max_chars(mut self, chars: usize) -> Self {
        self.max_chars = chars;
        self
    }

    /// Whether `url`'s host matches an allowed domain.
    pub fn allows(&self, url: &Url) -> bool {
        let Some(host) = url.host_str() else {
            return false;
        };
        let host = normalize_host(host);
        self.allowed_domains.iter().any(|pattern| {
            if pattern == "*" {
                return true;
            }
            match pattern.strip_prefix("*.") {
                Some(parent) => {
                    host.len() > parent.len() + 1 && host.ends_with(&format!(".{parent}"))
                }
                None => *pattern == host,
            }
        })
    }
}

fn normalize_host(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolsmith::ErrorKind;

    #[test]
    fn a_name_that_does_not_resolve_is_a_network_failure_with_its_text() {
        let error = WebError::Net(NetError::Resolve {
            host: "api.example.com".into(),
            message: "Temporary failure in name resolution".into(),
        });
        let text = error.to_string();
        let error = ToolError::from(error);
        assert_eq!(error.kind(), ErrorKind::Network);
        assert_eq!(error.to_string(), text);
        // A refusal of the guard is not something a retry can change.
        let refused = ToolError::from(WebError::Net(NetError::NoHost));
        assert_eq!(refused.kind(), ErrorKind::Failed);
    }
}
