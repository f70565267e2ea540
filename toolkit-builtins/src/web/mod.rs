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
}

impl WebError {
    fn from_reqwest(url: &Url, error: reqwest::Error) -> Self {
        if error.is_timeout() {
            return Self::Timeout(url.to_string());
        }
        let mut message = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            message.push_str(": ");
            message.push_str(&inner.to_string());
            source = inner.source();
        }
        Self::Request {
            url: url.to_string(),
            message,
        }
    }
}

impl From<WebError> for ToolError {
    fn from(error: WebError) -> Self {
        match error {
            WebError::Client(_) => ToolError::internal(error),
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
