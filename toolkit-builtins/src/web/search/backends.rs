//! The JSON search APIs: Brave, Tavily and SearXNG.

use toolkit::async_trait;
use toolkit::serde_json::json;

use super::{SearchBackend, SearchError, SearchResult, endpoint, json_of, results_from};

fn require_key(backend: &'static str, key: &str) -> Result<(), SearchError> {
    if key.trim().is_empty() {
        return Err(SearchError::NotConfigured {
            backend,
            missing: "it needs an API key".into(),
        });
    }
    Ok(())
}

/// The Brave Search API (`X-Subscription-Token`).
#[derive(Clone)]
pub struct Brave {
    api_key: String,
    base_url: String,
}

impl std::fmt::Debug for Brave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Brave")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl Brave {
    /// Brave at `https://api.search.brave.com` with `api_key`.
    pub fn new(api_key: impl Into<String>) -> Self {
        Self {
            api_key: api_key.into(),
            base_url: "https://api.search.brave.com".into(),
        }
    }

    /// Use another base URL (a proxy, or a test server).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
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
        require_key(self.name(), &self.api_key)?;
        let mut url = endpoint(self.name(), &self.base_url, "res/v1/web/search")?;
        url.query_pairs_mut()
            .append_pair("q", query)
            .append_pair("count", &count.to_string());
        let request = http
            .get(url)
            .header("Accept", "application/json")
            .header("X-Subscription-Token", &self.api_key);
        let answer = json_of(self.name(), request).await?;
        results_from(self.name(), answer.pointer("/web/results"), "description")
    }
}

/// The Tavily search API (bearer key).
#[derive(Clone)]
pub struct Tavily {
    api_key: String,
    base_url: String,
}

impl std::fmt::Debug for Tavily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tavily")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl Tavily {
    /// Tavily at `https://api.tavily.com` with `api_key`.
    pub fn new(api_key: impl Into<String>) -> Self {
        Self {
            api_key: api_key.into(),
            base_url: "https://api.tavily.com".into(),
        }
    }

    /// Use another base URL.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
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
        require_key(self.name(), &self.api_key)?;
        let url = endpoint(self.name(), &self.base_url, "search")?;
        let body = json!({ "query": query, "max_results": count });
        let request = http
            .post(url)
            .bearer_auth(&self.api_key)
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

impl std::fmt::Debug for Searxng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Searxng")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
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
