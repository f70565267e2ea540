//! The JSON search APIs: Brave, Tavily and SearXNG.

use std::fmt;

use toolsmith::async_trait;
use toolsmith::serde_json::json;

use super::{SearchBackend, SearchError, SearchResult, endpoint, json_of, results_from};

/// A hosted search API: its key and where it is. Brave and Tavily differ
/// only in how they ask and answer, not in this.
#[derive(Clone)]
struct KeyedApi {
    api_key: String,
    base_url: String,
}

impl KeyedApi {
    fn new(api_key: impl Into<String>, base_url: &str) -> Self {
        Self {
            api_key: api_key.into(),
            base_url: base_url.into(),
        }
    }

    /// The URL of `path` on this API, once there is a key to send there.
    fn endpoint(&self, backend: &'static str, path: &str) -> Result<url::Url, SearchError> {
        if self.api_key.trim().is_empty() {
            return Err(SearchError::NotConfigured {
                backend,
                missing: "it needs an API key".into(),
            });
        }
        endpoint(backend, &self.base_url, path)
    }
}

/// `Debug` for a backend named `name`: its base URL, never its key.
fn debug_backend(name: &str, base_url: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.debug_struct(name)
        .field("base_url", &base_url)
        .finish_non_exhaustive()
}

/// The Brave Search API (`X-Subscription-Token`).
#[derive(Clone)]
pub struct Brave {
    api: KeyedApi,
}

impl fmt::Debug for Brave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_backend("Brave", &self.api.base_url, f)
    }
}

impl Brave {
    /// Brave at `https://api.search.brave.com` with `api_key`.
    pub fn new(api_key: impl Into<String>) -> Self {
        Self {
            api: KeyedApi::new(api_key, "https://api.search.brave.com"),
        }
    }

    /// Use another base URL (a proxy, or a test server).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.api.base_url = base_url.into();
        self
    }
}

#[async_trait]
impl SearchBackend for Brave {
    fn name(&self) -> &'static str {
        "brave"
    }

    async fn search(
        &self,
        http: &reqwest::Client,
        query: &str,
        count: usize,
    ) -> Result<Vec<SearchResult>, SearchError> {
        let mut url = self.api.endpoint(self.name(), "res/v1/web/search")?;
        url.query_pairs_mut()
            .append_pair("q", query)
            .append_pair("count", &count.to_string());
        let request = http
            .get(url)
            .header("Accept", "application/json")
            .header("X-Subscription-Token", &self.api.api_key);
        let answer = json_of(self.name(), request).await?;
        results_from(self.name(), answer.pointer("/web/results"), "description")
    }
}

/// The Tavily search API (bearer key).
#[derive(Clone)]
pub struct Tavily {
    api: KeyedApi,
}

impl fmt::Debug for Tavily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_backend("Tavily", &self.api.base_url, f)
    }
}

impl Tavily {
    /// Tavily at `https://api.tavily.com` with `api_key`.
    pub fn new(api_key: impl Into<String>) -> Self {
        Self {
            api: KeyedApi::new(api_key, "https://api.tavily.com"),
        }
    }

    /// Use another base URL.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.api.base_url = base_url.into();
        self
    }
}

#[async_trait]
impl SearchBackend for Tavily {
    fn name(&self) -> &'static str {
        "tavily"
    }

    async fn search(
        &self,
        http: &reqwest::Client,
        query: &str,
        count: usize,
    ) -> Result<Vec<SearchResult>, SearchError> {
        let url = self.api.endpoint(self.name(), "search")?;
        let body = json!({ "query": query, "max_results": count });
        let request = http
            .post(url)
            .bearer_auth(&self.api.api_key)
            .header("Content-Type", "application/json")
            .body(body.to_string());
        let answer = json_of(self.name(), request).await?;
        results_from(self.name(), answer.get("results"), "content")
    }
}

/// A SearXNG instance's JSON API (`format=json` must be enabled there).
#[derive(Clone)]
pub struct Searxng {
    base_url: String,
    api_key: Option<String>,
}

impl fmt::Debug for Searxng {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_backend("Searxng", &self.base_url, f)
    }
}

impl Searxng {
    /// The instance at `base_url`.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
        }
    }

    /// Send this key as a bearer token (for an instance behind an
    /// authenticating proxy).
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }
}

#[async_trait]
impl SearchBackend for Searxng {
    fn name(&self) -> &'static str {
        "searxng"
    }

    async fn search(
        &self,
        http: &reqwest::Client,
        query: &str,
        _count: usize,
    ) -> Result<Vec<SearchResult>, SearchError> {
        if self.base_url.trim().is_empty() {
            return Err(SearchError::NotConfigured {
                backend: self.name(),
                missing: "it needs the base URL of a SearXNG instance".into(),
            });
        }
        let mut url = endpoint(self.name(), &self.base_url, "search")?;
        url.query_pairs_mut()
            .append_pair("q", query)
            .append_pair("format", "json");
        let mut request = http.get(url).header("Accept", "application/json");
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let answer = json_of(self.name(), request).await?;
        results_from(self.name(), answer.get("results"), "content")
    }
}
