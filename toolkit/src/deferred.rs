//! Deferred loading: large catalogs whose tools are found by search
//! instead of being sent to the model on every turn.
//!
//! [`DeferredTools`] says which tools are deferred (by name, prefix, MCP
//! server, tag or category), keeps each session's loaded set, and renders
//! the definitions of a turn. [`ToolSearch`] is the `tool_search` tool the
//! model calls to find deferred tools; what it finds is loaded for the
//! session and sent in full from the next turn on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::registry::{CatalogView, ToolRegistry};
use crate::schema::{Definition, DefinitionFormat, mark_deferred, native_tool_search};
use crate::tool::{Arguments, Tool, ToolCategory, ToolSpec};

/// The name of the [`ToolSearch`] tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// Tools found by one search when the model gives no limit.
const DEFAULT_LIMIT: usize = 5;
/// The most tools one search may find.
const MAX_LIMIT: usize = 20;
/// The longest regular expression a search accepts, in bytes.
const MAX_PATTERN: usize = 256;

/// Which tools a registry sends only once they are searched for, and what
/// each session has loaded.
///
/// A deferred tool's definition is not sent to the model: it stays in the
/// registry (a call to it still runs), and the model finds it with the
/// [`ToolSearch`] tool by what it does. What a search finds is loaded for
/// the session (the context's [`session_key`](ToolContext::session_key);
/// calls without one share one session) and sent in full from the next
/// turn on.
///
/// Each turn the host asks for the definitions to send with
/// [`definitions`](Self::definitions). Their order is stable, so a
/// provider's prompt cache keeps hitting: the tools that are not deferred
/// come first, in the registry's order, then the loaded tools in the order
/// they were loaded. Loading a tool appends it; nothing already sent
/// moves. A session loads at most [`with_max_loaded`](Self::with_max_loaded)
/// tools (64 by default); past that the one loaded first is dropped.
///
/// Providers that defer natively are left to do it themselves (turn this
/// off with [`with_native`](Self::with_native)): for
/// [`DefinitionFormat::Anthropic`] every tool is sent, deferred ones with
/// `"defer_loading": true`, beside Anthropic's tool search tool (BM25, or
/// regex with [`with_native_regex`](Self::with_native_regex)); for
/// [`DefinitionFormat::OpenAiResponses`] the same beside the hosted
/// `{"type": "tool_search"}`. The registry's own `tool_search` is then left
/// out, and the provider loads what its search finds.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{DefinitionFormat, DeferredTools, ToolContext, ToolRegistry, ToolSearch, tool};
/// use serde_json::json;
///
/// /// Read a file.
/// #[tool(read_only)]
/// async fn read_file(path: String) -> String { path }
///
/// /// Open an issue in the tracker.
/// #[tool(tags = ["tracker"])]
/// async fn open_issue(title: String, body: String) -> String { title }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let registry = Arc::new(ToolRegistry::new());
/// registry.register(ReadFileTool).unwrap();
/// registry.register(OpenIssueTool).unwrap();
/// let deferred = Arc::new(DeferredTools::new().defer_tag("tracker"));
/// registry.register(ToolSearch::new(&registry, deferred.clone())).unwrap();
///
/// let ctx = ToolContext::new().with_session_key("chat-1");
/// let names = |defs: Vec<toolsmith::Definition>| -> Vec<String> {
///     defs.iter().map(|d| d["function"]["name"].as_str().unwrap().to_owned()).collect()
/// };
/// // The first turn: the tracker's tools are not sent.
/// let turn = deferred.definitions(&registry, DefinitionFormat::OpenAi, &ctx);
/// assert_eq!(names(turn), ["read_file", "tool_search"]);
///
/// // The model searches; what it finds is sent from the next turn on.
/// let found = registry.call("tool_search", json!({"query": "open an issue"}), &ctx).await;
/// assert!(found.content.contains("open_issue"));
/// let turn = deferred.definitions(&registry, DefinitionFormat::OpenAi, &ctx);
/// assert_eq!(names(turn), ["read_file", "tool_search", "open_issue"]);
/// # }
/// ```
pub struct DeferredTools {
    rules: Vec<Rule>,
    native: bool,
    native_regex: bool,
    max_loaded: usize,
    max_sessions: usize,
    sessions: Mutex<Sessions>,
    /// The search index of the last set of tools seen.
    index: Mutex<Option<(CatalogView, Arc<SearchIndex>)>>,
    /// Definitions for providers that defer natively, by format.
    native_definitions: Mutex<HashMap<DefinitionFormat, Rendered>>,
}

/// Definitions rendered from one set of tools.
type Rendered = (CatalogView, Arc<[Definition]>);

/// What makes a tool deferred.
#[derive(Debug, Clone)]
enum Rule {
    All,
    Name(String),
    Prefix(String),
    Tag(String),
    Category(ToolCategory),
}

impl Rule {
    fn matches(&self, spec: &ToolSpec) -> bool {
        match self {
            Rule::All => true,
            Rule::Name(name) => spec.name == name.as_str(),
            Rule::Prefix(prefix) => spec.name.starts_with(prefix.as_str()),
            Rule::Tag(tag) => spec.tags.iter().any(|t| t == tag.as_str()),
            Rule::Category(category) => spec.category == Some(*category),
        }
    }
}

#[derive(Default)]
struct Sessions {
    by_key: HashMap<String, Session>,
    /// Counts uses, to find the session used longest ago.
    clock: u64,
}

#[derive(Default)]
struct Session {
    /// Loaded tools, in the order they were loaded.
    loaded: Vec<String>,
    last_used: u64,
}

impl Default for DeferredTools {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for DeferredTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredTools")
            .field("rules", &self.rules)
            .field("native", &self.native)
            .field("max_loaded", &self.max_loaded)
            .finish()
    }
}

impl DeferredTools {
    /// Defers nothing until told what to defer.
    pub fn new() -> Self {
        Self {
            rules: Vec::new(),
            native: true,
            native_regex: false,
            max_loaded: 64,
            max_sessions: 10_000,
            sessions: Mutex::default(),
            index: Mutex::default(),
            native_definitions: Mutex::default(),
        }
    }

    /// Defer every tool (but [`ToolSearch`] itself).
    pub fn defer_all(mut self) -> Self {
        self.rules.push(Rule::All);
        self
    }

    /// Defer the tool called `name`.
    pub fn defer_tool(mut self, name: impl Into<String>) -> Self {
        self.rules.push(Rule::Name(name.into()));
        self
    }

    /// Defer every tool whose name starts with `prefix`.
    pub fn defer_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.rules.push(Rule::Prefix(prefix.into()));
        self
    }

    /// Defer the tools mounted from the MCP server `server`: those named
    /// `mcp_{server}_…`.
    pub fn defer_mcp_server(self, server: &str) -> Self {
        self.defer_prefix(format!("mcp_{server}_"))
    }

    /// Defer every tool with the tag `tag` ([`ToolSpec::tags`]).
    pub fn defer_tag(mut self, tag: impl Into<String>) -> Self {
        self.rules.push(Rule::Tag(tag.into()));
        self
    }

    /// Defer every tool of `category` ([`ToolSpec::category`]).
    pub fn defer_category(mut self, category: ToolCategory) -> Self {
        self.rules.push(Rule::Category(category));
        self
    }

    /// Whether to leave deferral to providers that do it themselves
    /// (Anthropic, OpenAI Responses); on by default. Off, the registry
    /// does it for them as for the others. OpenAI's `tool_search` needs a
    /// model that knows it (GPT-5.4 and later).
    pub fn with_native(mut self, native: bool) -> Self {
        self.native = native;
        self
    }

    /// Offer Anthropic's regex tool search instead of its BM25 one.
    pub fn with_native_regex(mut self) -> Self {
        self.native_regex = true;
        self
    }

    /// The most tools one session keeps loaded (64 by default, at least 1);
    /// loading one more drops the one loaded first.
    pub fn with_max_loaded(mut self, max: usize) -> Self {
        self.max_loaded = max.max(1);
        self
    }

    /// The most sessions whose loaded tools are kept (10,000 by default, at
    /// least 1); one more forgets the session used longest ago.
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// Whether the tool `spec` describes is deferred. [`ToolSearch`] never is.
    pub fn is_deferred(&self, spec: &ToolSpec) -> bool {
        spec.name != TOOL_SEARCH && self.rules.iter().any(|rule| rule.matches(spec))
    }

    /// The definitions to send this turn in `format`, for the session of `ctx`.
    ///
    /// For a provider that defers natively (see the type's documentation):
    /// every tool, the deferred ones marked, and the provider's search tool
    /// first. For the others: the tools that are not deferred, in the
    /// registry's order, then those the session loaded, in the order they
    /// were loaded.
    pub fn definitions(
        &self,
        registry: &ToolRegistry,
        format: DefinitionFormat,
        ctx: &ToolContext,
    ) -> Vec<Definition> {
        let view = registry.view();
        let index = self.index_of(&view);
        if self.native
            && let Some(definitions) = self.native_definitions(&view, &index, format)
        {
            return definitions.to_vec();
        }
        let all = view.definitions(format);
        let loaded = self.loaded(session_of(ctx));
        let mut out = Vec::with_capacity(index.eager.len() + loaded.len());
        out.extend(index.eager.iter().map(|&i| all[i].clone()));
        out.extend(
            loaded
                .iter()
                .filter_map(|name| index.position.get(name))
                .map(|&i| all[i].clone()),
        );
        out
    }

    /// Every tool for a provider that defers natively, cached per set of
    /// tools; `None` for the other formats.
    fn native_definitions(
        &self,
        view: &CatalogView,
        index: &SearchIndex,
        format: DefinitionFormat,
    ) -> Option<Arc<[Definition]>> {
        let search = native_tool_search(format, self.native_regex)?;
        let mut cache = lock(&self.native_definitions);
        if let Some((seen, definitions)) = cache.get(&format)
            && seen.same(view)
        {
            return Some(Arc::clone(definitions));
        }
        let all = view.definitions(format);
        let mut out = Vec::with_capacity(all.len() + 1);
        if !index.docs.is_empty() {
            out.push(Definition::from(search));
        }
        for (name, definition) in view.order().iter().zip(all.iter()) {
            if name == TOOL_SEARCH {
                continue;
            }
            if index.eager_names.contains(name) {
                out.push(definition.clone());
            } else {
                let mut marked = Value::clone(definition);
                mark_deferred(&mut marked);
                out.push(Definition::from(marked));
            }
        }
        let out: Arc<[Definition]> = out.into();
        cache.insert(format, (view.clone(), Arc::clone(&out)));
        Some(out)
    }

    /// The deferred tools that best match `query` (words), best first: BM25
    /// over their names, descriptions and parameter names, at most `limit`
    /// (1 to 20). A query that is a deferred tool's name finds it first.
    pub fn search(&self, registry: &ToolRegistry, query: &str, limit: usize) -> Vec<String> {
        let index = self.index_of(&registry.view());
        index.rank(query, limit.clamp(1, MAX_LIMIT))
    }

    /// The deferred tools whose name, description or parameter names match
    /// the regular expression `pattern` (case-insensitive), in the
    /// registry's order, at most `limit` (1 to 20).
    ///
    /// The pattern is bounded: at most 256 bytes, and a pattern whose
    /// compiled form would be large (`(a{100}){100}`) is refused, as
    /// [`ToolError::InvalidArguments`] saying why. Matching takes time
    /// linear in the text whatever the pattern.
    pub fn search_regex(
        &self,
        registry: &ToolRegistry,
        pattern: &str,
        limit: usize,
    ) -> Result<Vec<String>, ToolError> {
        if pattern.len() > MAX_PATTERN {
            return Err(ToolError::InvalidArguments(format!(
                "the pattern is {} bytes long; at most {MAX_PATTERN} are accepted",
                pattern.len()
            )));
        }
        let regex = regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(64 * 1024)
            .dfa_size_limit(256 * 1024)
            .nest_limit(16)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => ToolError::InvalidArguments(
                    "the pattern is refused: it compiles too large (too many repetitions); use a simpler one".into(),
                ),
                other => ToolError::InvalidArguments(format!("the pattern is refused: {other}")),
            })?;
        let index = self.index_of(&registry.view());
        Ok(index
            .docs
            .iter()
            .filter(|doc| regex.is_match(&doc.text))
            .take(limit.clamp(1, MAX_LIMIT))
            .map(|doc| doc.name.clone())
            .collect())
    }

    /// Load `names` for `session`, as a search that found them does; those
    /// already loaded keep their place.
    pub fn load(&self, session: &str, names: &[String]) {
        let mut sessions = lock(&self.sessions);
        sessions.clock += 1;
        let now = sessions.clock;
        if !sessions.by_key.contains_key(session) && sessions.by_key.len() >= self.max_sessions {
            // Forget the session used longest ago.
            let oldest = sessions
                .by_key
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                sessions.by_key.remove(&oldest);
            }
        }
        let entry = sessions.by_key.entry(session.to_owned()).or_default();
        entry.last_used = now;
        for name in names {
            if entry.loaded.contains(name) {
                continue;
            }
            if entry.loaded.len() >= self.max_loaded {
                entry.loaded.remove(0);
            }
            entry.loaded.push(name.clone());
        }
    }

    /// The tools `session` has loaded, in the order they were loaded.
    pub fn loaded(&self, session: &str) -> Vec<String> {
        let mut sessions = lock(&self.sessions);
        sessions.clock += 1;
        let now = sessions.clock;
        match sessions.by_key.get_mut(session) {
            Some(entry) => {
                entry.last_used = now;
                entry.loaded.clone()
            }
            None => Vec::new(),
        }
    }

    /// Forget what `session` loaded (when the conversation ends).
    pub fn forget_session(&self, session: &str) {
        lock(&self.sessions).by_key.remove(session);
    }

    /// The search index of `view`'s deferred tools, built once per set of tools.
    fn index_of(&self, view: &CatalogView) -> Arc<SearchIndex> {
        let mut cached = lock(&self.index);
        if let Some((seen, index)) = cached.as_ref()
            && seen.same(view)
        {
            return Arc::clone(index);
        }
        let index = Arc::new(SearchIndex::build(view, |spec| self.is_deferred(spec)));
        *cached = Some((view.clone(), Arc::clone(&index)));
        index
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn session_of(ctx: &ToolContext) -> &str {
    ctx.session_key().unwrap_or_default()
}

/// BM25 over the deferred tools of one set of tools.
struct SearchIndex {
    /// Positions (in definition order) of the tools that are not deferred.
    eager: Vec<usize>,
    eager_names: std::collections::HashSet<String>,
    /// Every tool's position in definition order.
    position: HashMap<String, usize>,
    /// The deferred tools, in definition order.
    docs: Vec<Doc>,
    /// For each term, the deferred tools holding it and how often.
    postings: HashMap<String, Vec<(u32, u32)>>,
    average_length: f32,
}

struct Doc {
    name: String,
    /// Name, description and parameter names, for regular expressions.
    text: String,
    /// How many terms the tool's text has.
    length: f32,
}

/// BM25's term-frequency saturation and length normalization.
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// How many times a name's words count, against once for a description's.
const NAME_WEIGHT: u32 = 3;

impl SearchIndex {
    fn build(view: &CatalogView, deferred: impl Fn(&ToolSpec) -> bool) -> Self {
        let mut eager = Vec::new();
        let mut eager_names = std::collections::HashSet::new();
        let mut position = HashMap::with_capacity(view.order().len());
        let mut docs = Vec::new();
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut total = 0usize;
        for (i, name) in view.order().iter().enumerate() {
            position.insert(name.clone(), i);
            let Some(spec) = view.spec(name) else {
                continue;
            };
            if !deferred(spec) {
                eager.push(i);
                eager_names.insert(name.clone());
                continue;
            }
            let parameters = parameter_names(&spec.input_schema);
            let mut counts: HashMap<String, u32> = HashMap::new();
            for term in terms(name) {
                *counts.entry(term).or_default() += NAME_WEIGHT;
            }
            for term in terms(&spec.description).chain(terms(&parameters)) {
                *counts.entry(term).or_default() += 1;
            }
            let length: u32 = counts.values().sum();
            total += length as usize;
            let doc = docs.len() as u32;
            for (term, count) in counts {
                postings.entry(term).or_default().push((doc, count));
            }
            docs.push(Doc {
                name: name.clone(),
                text: format!("{name}\n{}\n{parameters}", spec.description),
                length: length as f32,
            });
        }
        let average_length = if docs.is_empty() {
            1.0
        } else {
            (total as f32 / docs.len() as f32).max(1.0)
        };
        Self {
            eager,
            eager_names,
            position,
            docs,
            postings,
            average_length,
        }
    }

    /// The best `limit` deferred tools for `query`, best first; ties keep
    /// definition order.
    fn rank(&self, query: &str, limit: usize) -> Vec<String> {
        let n = self.docs.len() as f32;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for term in terms(query) {
            if !seen.insert(term.clone()) {
                continue;
            }
            let Some(holders) = self.postings.get(&term) else {
                continue;
            };
            let df = holders.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in holders {
                let tf = tf as f32;
                let norm = 1.0 - B + B * self.docs[doc as usize].length / self.average_length;
                *scores.entry(doc).or_default() += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        // A query that names a tool finds that tool first.
        let exact = query.trim();
        if let Some(doc) = self.docs.iter().position(|d| d.name == exact) {
            *scores.entry(doc as u32).or_default() += 1_000.0;
        }
        let mut ranked: Vec<(u32, f32)> = scores.into_iter().filter(|(_, s)| *s > 0.0).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(limit)
            .map(|(doc, _)| self.docs[doc as usize].name.clone())
            .collect()
    }
}

/// The names of a schema's top-level parameters, space-separated.
fn parameter_names(schema: &Value) -> String {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "with", "i", "me", "my", "you", "your", "can", "do",
];

/// The search terms of `text`: words split at anything not a letter or
/// digit and at camelCase humps, lowercased, stop words dropped, a plural
/// `s` taken off (`files` finds `file`).
fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(split_camel_case)
        .map(|word| stem(&word.to_lowercase()))
        .filter(|word| !word.is_empty() && !STOP_WORDS.contains(&word.as_str()))
}

fn split_camel_case(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut previous_lower = false;
    for (i, c) in word.char_indices() {
        if c.is_uppercase() && previous_lower {
            parts.push(&word[start..i]);
            start = i;
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    parts.push(&word[start..]);
    parts
}

fn stem(word: &str) -> String {
    if word.len() > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..word.len() - 3]);
    }
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        return word[..word.len() - 1].to_owned();
    }
    word.to_owned()
}

/// The `tool_search` tool: finds deferred tools (see [`DeferredTools`]) by
/// what they do, and loads them for the session, so their definitions are
/// sent from the next turn on.
///
/// It takes `query` (words, or a regular expression with `"regex": true`)
/// and an optional `limit` (5 by default, at most 20), and answers with the
/// names and descriptions of what it found. Register it in the registry
/// whose tools it searches; it holds the registry weakly, so neither keeps
/// the other alive.
pub struct ToolSearch {
    registry: Weak<ToolRegistry>,
    deferred: Arc<DeferredTools>,
    spec: ToolSpec,
}

impl std::fmt::Debug for ToolSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSearch")
            .field("deferred", &self.deferred)
            .finish()
    }
}

impl ToolSearch {
    /// The search over `registry`'s tools that `deferred` defers.
    pub fn new(registry: &Arc<ToolRegistry>, deferred: Arc<DeferredTools>) -> Self {
        let spec = ToolSpec::new(
            TOOL_SEARCH,
            "Find tools that are not loaded yet by what they do. The tools found are \
             loaded: you can call them from your next turn. Search with a few words \
             (\"create calendar event\"), or with a regular expression over tool names, \
             descriptions and parameter names when `regex` is true.",
            json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What the tool should do, in a few words; or a regular expression when `regex` is true.",
                        "minLength": 1,
                        "maxLength": MAX_PATTERN,
                    },
                    "limit": {
                        "type": "integer",
                        "description": "How many tools to load at most.",
                        "minimum": 1,
                        "maximum": MAX_LIMIT,
                        "default": DEFAULT_LIMIT,
                    },
                    "regex": {
                        "type": "boolean",
                        "description": "Whether `query` is a regular expression.",
                        "default": false,
                    },
                },
                "required": ["query"],
                "additionalProperties": false,
            }),
        )
        .with_annotations(crate::ToolAnnotations {
            read_only: true,
            idempotent: true,
            ..Default::default()
        });
        Self {
            registry: Arc::downgrade(registry),
            deferred,
            spec,
        }
    }
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    limit: Option<usize>,
    #[serde(default)]
    regex: bool,
}

#[async_trait]
impl Tool for ToolSearch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: SearchArgs = args.parse()?;
        let registry = self
            .registry
            .upgrade()
            .ok_or_else(|| ToolError::internal("the registry searched is gone"))?;
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let found = if args.regex {
            self.deferred.search_regex(&registry, &args.query, limit)?
        } else {
            self.deferred.search(&registry, &args.query, limit)
        };
        self.deferred.load(session_of(ctx), &found);
        let tools: Vec<Value> = found
            .iter()
            .filter_map(|name| {
                let tool = registry.get(name)?;
                let spec = tool.spec();
                Some(json!({"name": spec.name, "description": spec.description}))
            })
            .collect();
        let note = if tools.is_empty() {
            "No tool matches; try other words."
        } else {
            "These tools are loaded: call them from your next turn."
        };
        Ok(ToolOutput::structured(
            &json!({"tools": tools, "note": note}),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_split_words_humps_and_plurals() {
        let found: Vec<String> = terms("listOpenIssues in the repo_files, 3 queries").collect();
        assert_eq!(
            found,
            ["list", "open", "issue", "repo", "file", "3", "query"]
        );
    }

    #[test]
    fn a_pattern_that_compiles_too_large_is_refused() {
        let registry = ToolRegistry::new();
        let deferred = DeferredTools::new().defer_all();
        let refused = deferred.search_regex(&registry, "(a{100}){100}", 5);
        assert!(
            matches!(&refused, Err(ToolError::InvalidArguments(why)) if why.contains("too large")),
            "{refused:?}"
        );
        let long = "a".repeat(MAX_PATTERN + 1);
        assert!(deferred.search_regex(&registry, &long, 5).is_err());
        let broken = deferred.search_regex(&registry, "(unclosed", 5);
        assert!(matches!(broken, Err(ToolError::InvalidArguments(_))));
    }
}
