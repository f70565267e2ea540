//! The `mcpServers` configuration, in the format Claude Desktop and Cursor
//! use, and in nanobot's snake_case spelling; written in JSON, TOML or YAML.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

mod oauth;

pub use oauth::{DEFAULT_OAUTH_REQUEST_TIMEOUT, OAuthConfig};

/// How long one tool call may wait for its answer, or between two of its
/// progress reports, when a server's `toolTimeout` is not set.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one tool call that keeps reporting progress may take in all,
/// when a server's `maxTotalTimeout` is not set (or `toolTimeout`, when
/// that is longer).
pub const DEFAULT_MAX_TOTAL_TIMEOUT: Duration = Duration::from_secs(300);

/// Every configured MCP server, by name, in the order they were written.
///
/// The servers sit under `mcpServers` (or nanobot's `mcp_servers`), at the
/// top of the document or under `tools`. Every key reads in camelCase and in
/// snake_case (`toolTimeout` or `tool_timeout`, `enabledTools` or
/// `enabled_tools`) and in any case (`Command`); a document that gives one
/// key in both spellings is refused, as is an unknown key in either. The
/// document may be JSON, TOML or YAML: [`from_path`](Self::from_path) goes by
/// the file's extension, [`from_str_any`](Self::from_str_any) (and `parse`)
/// by its content.
///
/// ```
/// use toolsmith::mcp::{McpConfig, Transport};
/// use serde_json::json;
///
/// let config = McpConfig::from_json(&json!({
///     "tools": {"mcpServers": {
///         "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
///         "remote": {"url": "https://example.com/sse", "toolTimeout": 60}
///     }}
/// })).unwrap();
/// assert!(matches!(config.servers[0].transport, Transport::Stdio { .. }));
/// assert!(matches!(config.servers[1].transport, Transport::Sse { .. }));
///
/// let err = McpConfig::from_json(&json!({"mcpServers": {"files": {"comand": "npx"}}})).unwrap_err();
/// assert_eq!(err.to_string(), "MCP server `files`: unknown key `comand`; expected one of: command, args, env, cwd, url, headers, caCertificate, oauth, type, toolTimeout, resetTimeoutOnProgress, maxTotalTimeout, enabledTools, comment");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpConfig {
    /// The servers, in the order of the configuration.
    pub servers: Vec<ServerConfig>,
}

/// One MCP server: how to reach it and which of its tools to use.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The server's name, the `{server}` in `mcp_{server}_{tool}`.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// How long one call may wait for its answer (`toolTimeout`, seconds;
    /// default 30). With [`reset_timeout_on_progress`](Self::reset_timeout_on_progress),
    /// each progress report the server sends for the call starts this wait
    /// again, up to [`max_total_timeout`](Self::max_total_timeout) in all.
    pub tool_timeout: Duration,
    /// Whether a progress report for a tool call starts its `toolTimeout`
    /// again (`resetTimeoutOnProgress`; default true), as the TypeScript
    /// SDK's option of that name.
    pub reset_timeout_on_progress: bool,
    /// The most one tool call may take in all, however often it reports
    /// progress (`maxTotalTimeout`, seconds; default 300, or `toolTimeout`
    /// when that is longer; never less than `toolTimeout`).
    pub max_total_timeout: Duration,
    /// Which tools, resources, resource templates and prompts to mount
    /// (`enabledTools`).
    pub enabled_tools: EnabledTools,
    /// A PEM file of one or more certificates to trust, besides the
    /// system's roots, when reaching an `https` server (`caCertificate`): a
    /// private certificate authority's, or a self-signed server's own. A
    /// relative path is taken from the process's working directory. Only for
    /// servers reached by `url`, and only with the feature `mcp-tls` (without
    /// it, connecting fails and says so).
    pub ca_certificate: Option<PathBuf>,
    /// How to sign in to a streamable HTTP server that requires OAuth
    /// (`oauth`): with it, a `401` from the server starts the authorization
    /// the server's metadata describes. Only with the feature `mcp-oauth`
    /// (without it, connecting fails and says so).
    pub oauth: Option<OAuthConfig>,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP on its standard input and output.
    Stdio {
        /// The program to run.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables, besides the few the host passes on to
        /// every stdio server (`PATH`, `HOME` and the like, never a secret).
        env: BTreeMap<String, String>,
        /// The directory to run it in.
        cwd: Option<PathBuf>,
    },
    /// The older HTTP+SSE transport: a GET event stream and POSTed messages.
    Sse {
        /// The event stream's URL.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// Streamable HTTP.
    StreamableHttp {
        /// The endpoint's URL.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// A server in this process, reached over an in-memory pipe, with no
    /// child process and no port: made by
    /// [`McpClients::add_in_process`](crate::mcp::McpClients::add_in_process),
    /// never read from a configuration.
    InProcess,
}

/// Which of a server's tools, resources, resource templates and prompts
/// become tools here.
///
/// A name in the list matches exactly (case and all) either the server's own
/// name of the item (`read_file`, a resource's or a prompt's `name`) or the
/// name it is mounted under (`mcp_fs_read_file`,
/// `mcp_fs_resource_{name}`, `mcp_fs_prompt_{name}`, after sanitizing). A
/// raw name is not tied to a kind: `"echo"` takes the tool, the resource and
/// the prompt called `echo`; the mounted name takes just one of them.
///
/// ```
/// use toolsmith::mcp::EnabledTools;
///
/// let only = EnabledTools::Only(vec!["echo".into(), "mcp_fx_prompt_greet".into()]);
/// assert!(only.allows("echo", "mcp_fx_echo"));
/// assert!(only.allows("echo", "mcp_fx_prompt_echo"));
/// assert!(only.allows("greet", "mcp_fx_prompt_greet"));
/// assert!(!only.allows("greet", "mcp_fx_greet"));
/// assert!(!only.allows("Echo", "mcp_fx_Echo"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnabledTools {
    /// All of them (`["*"]`, the default).
    All,
    /// Only these, by the server's name or the mounted name (`[]` for none).
    Only(Vec<String>),
}

impl EnabledTools {
    /// Whether an item the server calls `raw`, mounted as `wrapped`, is enabled.
    pub fn allows(&self, raw: &str, wrapped: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(names) => names.iter().any(|n| n == raw || n == wrapped),
        }
    }
}

/// A configuration mistake, naming the server and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The server whose entry is wrong; empty for the `mcpServers` object
    /// itself and for the document as a whole.
    pub server: String,
    /// The offending key; empty when the document as a whole is wrong (a
    /// file that cannot be read, text that does not parse).
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.server.is_empty() && self.key.is_empty() {
            write!(f, "MCP configuration: {}", self.message)
        } else if self.server.is_empty() {
            write!(f, "MCP configuration: `{}`: {}", self.key, self.message)
        } else {
            write!(f, "MCP server `{}`: {}", self.server, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// The keys a server entry may have, in camelCase; each reads in snake_case
/// too (see [`spelled`]). `comment` is accepted and ignored, as configuration
/// files use it to explain an entry.
const KEYS: [&str; 14] = [
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "caCertificate",
    "oauth",
    "type",
    "toolTimeout",
    "resetTimeoutOnProgress",
    "maxTotalTimeout",
    "enabledTools",
    "comment",
];

impl McpConfig {
    /// Read `mcpServers` (or `mcp_servers`) from a configuration document:
    /// at the top level or under `tools`. A document with neither has no
    /// servers.
    pub fn from_json(document: &Value) -> Result<Self, ConfigError> {
        let servers = match lookup(document, "mcpServers")? {
            Some(servers) => Some(servers),
            None => match lookup(document, "tools")? {
                Some(tools) => lookup(tools, "mcpServers")?,
                None => None,
            },
        };
        let Some(servers) = servers else {
            return Ok(Self::default());
        };
        let Value::Object(servers) = servers else {
            return Err(ConfigError {
                server: String::new(),
                key: "mcpServers".into(),
                message: format!("expected an object of servers, got {}", kind(servers)),
            });
        };
        let servers = servers
            .iter()
            .map(|(name, entry)| ServerConfig::from_json(name, entry))
            .collect::<Result<_, _>>()?;
        Ok(Self { servers })
    }

    /// Parse a configuration document in JSON, TOML or YAML, told apart by
    /// its content: JSON starts with `{`, TOML with a `[table]` or a
    /// `key = value` line, anything else is read as YAML (comments and blank
    /// lines first are skipped). An empty document has no servers.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolsmith::mcp::{EnabledTools, McpConfig};
    ///
    /// // nanobot's YAML, in its snake_case spelling.
    /// let yaml = McpConfig::from_str_any("
    /// mcp_servers:
    ///   my_server:
    ///     command: python
    ///     args: [-m, my_mcp_server]
    ///     enabled_tools: [search]
    ///     tool_timeout: 45
    /// ").unwrap();
    /// assert_eq!(yaml.servers[0].tool_timeout, Duration::from_secs(45));
    /// assert_eq!(yaml.servers[0].enabled_tools, EnabledTools::Only(vec!["search".into()]));
    ///
    /// let toml = McpConfig::from_str_any(r#"
    /// [tools.mcpServers.my_server]
    /// command = "python"
    /// args = ["-m", "my_mcp_server"]
    /// enabledTools = ["search"]
    /// toolTimeout = 45
    /// "#).unwrap();
    /// assert_eq!(toml, yaml);
    ///
    /// let both = McpConfig::from_str_any("
    /// mcp_servers:
    ///   s: {command: x, toolTimeout: 5, tool_timeout: 6}
    /// ").unwrap_err();
    /// assert_eq!(
    ///     both.to_string(),
    ///     "MCP server `s`: `toolTimeout` and `tool_timeout` are one key in two spellings; give it once"
    /// );
    /// ```
    pub fn from_str_any(text: &str) -> Result<Self, ConfigError> {
        let format = Format::sniff(text);
        Self::from_json(&format.parse(text)?)
    }

    /// Read a configuration file: JSON, TOML or YAML by its extension
    /// (`.json`, `.toml`, `.yaml`, `.yml`, in any case), by its content for
    /// any other name. Only a regular file of at most 4 MiB is read: a
    /// FIFO or a device named by mistake is refused before it is opened.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), toolsmith::mcp::ConfigError> {
    /// let config = toolsmith::mcp::McpConfig::from_path("/home/me/.nanobot/config.yaml")?;
    /// # Ok(()) }
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let failed = |message: String| ConfigError {
            server: String::new(),
            key: String::new(),
            message: format!("{}: {message}", path.display()),
        };
        let text = read_bounded(path).map_err(failed)?;
        let format = path
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Format::from_extension)
            .unwrap_or_else(|| Format::sniff(&text));
        let document = format.parse(&text).map_err(|e| failed(e.message))?;
        Self::from_json(&document)
    }
}

/// The most a configuration file may hold: far more than any real one, and
/// little enough to read whole.
const MAX_FILE_BYTES: u64 = 4 << 20;

/// The text of the regular file at `path`, refusing anything else.
fn read_bounded(path: &Path) -> Result<String, String> {
    let metadata = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !metadata.is_file() {
        return Err("not a regular file".into());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut bytes = Vec::new();
    // Bounded by what is read, not by the size seen before: the file may grow.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB, too large for a configuration",
            MAX_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

/// The languages a configuration document may be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Toml,
    Yaml,
}

impl Format {
    fn from_extension(extension: &str) -> Option<Self> {
        match extension.to_ascii_lowercase().as_str() {
            "json" => Some(Self::Json),
            "toml" => Some(Self::Toml),
            "yaml" | "yml" => Some(Self::Yaml),
            _ => None,
        }
    }

    /// The language of `text`, from its first line that is not blank or a
    /// comment. JSON is YAML too, but read as JSON its mistakes are told in
    /// JSON's terms.
    fn sniff(text: &str) -> Self {
        let text = text.trim_start_matches('\u{feff}');
        let Some(first) = text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'))
        else {
            return Self::Yaml;
        };
        if first.starts_with('{') {
            return Self::Json;
        }
        // A `[table]` header, or a bare or quoted key followed by `=`.
        let key_end = first
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_-.\"' ".contains(c)))
            .unwrap_or(first.len());
        if first.starts_with('[') || first[key_end..].starts_with('=') {
            Self::Toml
        } else {
            Self::Yaml
        }
    }

    /// The document `text` holds, as JSON values.
    fn parse(self, text: &str) -> Result<Value, ConfigError> {
        let text = text.trim_start_matches('\u{feff}');
        let failed = |language: &str, e: &dyn fmt::Display| ConfigError {
            server: String::new(),
            key: String::new(),
            message: format!("not valid {language}: {e}"),
        };
        match self {
            Self::Json => serde_json::from_str(text).map_err(|e| failed("JSON", &e)),
            Self::Toml => toml::from_str(text).map_err(|e| failed("TOML", &e)),
            Self::Yaml if text.trim().is_empty() => Ok(Value::Null),
            // The reader expands aliases within a bound, so a few lines
            // cannot unfold into gigabytes (the "billion laughs"), and
            // refuses deep nesting; but it reads the whole text first, in
            // time that grows with the square of the `[`/`{` nesting, which
            // is why that is measured before.
            Self::Yaml if flow_depth(text) > MAX_YAML_FLOW_DEPTH => Err(failed(
                "YAML",
                &format!("`[` and `{{` nested deeper than {MAX_YAML_FLOW_DEPTH} levels"),
            )),
            Self::Yaml => yaml_serde::from_str(text).map_err(|e| failed("YAML", &e)),
        }
    }
}

/// How deep `[` and `{` may nest in YAML: the YAML reader's own limit on
/// nesting.
const MAX_YAML_FLOW_DEPTH: usize = 128;

/// The deepest nesting of YAML flow collections in `text`, from a quick
/// look that skips quoted scalars and comments. A `[` inside a plain scalar
/// (`a[b`) counts too: too deep is only ever overstated.
fn flow_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    let mut after_space = true;
    while let Some(c) = chars.next() {
        match c {
            '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            '#' if after_space => while chars.next_if(|&c| c != '\n').is_some() {},
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' => {
                // `''` inside is a quote, read as closing and opening again.
                while chars.next_if(|&c| c != '\'').is_some() {}
                chars.next();
            }
            _ => {}
        }
        after_space = c.is_whitespace() || matches!(c, '[' | '{' | ',');
    }
    deepest
}

impl std::str::FromStr for McpConfig {
    type Err = ConfigError;

    /// Parse a configuration file's text: JSON, TOML or YAML, as
    /// [`McpConfig::from_str_any`] tells them apart.
    fn from_str(text: &str) -> Result<Self, ConfigError> {
        Self::from_str_any(text)
    }
}

impl ServerConfig {
    /// The configuration of a server called `name` in this process, with
    /// the default timeouts and every tool enabled.
    pub(crate) fn in_process(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            transport: Transport::InProcess,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            reset_timeout_on_progress: true,
            max_total_timeout: DEFAULT_MAX_TOTAL_TIMEOUT,
            enabled_tools: EnabledTools::All,
            ca_certificate: None,
            oauth: None,
        }
    }

    /// Parse one server's entry.
    pub fn from_json(name: &str, entry: &Value) -> Result<Self, ConfigError> {
        let err = |key: &str, message: String| ConfigError {
            server: name.to_owned(),
            key: key.to_owned(),
            message,
        };
        if name.is_empty() {
            return Err(err("", "a server needs a non-empty name".into()));
        }
        let Value::Object(entry) = entry else {
            return Err(err("", format!("expected an object, got {}", kind(entry))));
        };
        let canonical =
            canonical_keys(entry, &KEYS).map_err(|(key, message)| err(&key, message))?;
        let entry = &canonical;
        let fields = Fields {
            server: name,
            entry,
        };
        let command = fields.string("command")?;
        let url = fields.string("url")?;
        let kind_name = fields.string("type")?;
        let args = fields.strings("args")?.unwrap_or_default();
        let env = fields.string_map("env")?;
        let headers = fields.string_map("headers")?;
        let cwd = fields.string("cwd")?.map(PathBuf::from);
        let ca_certificate = fields.string("caCertificate")?.map(PathBuf::from);
        let oauth = match entry.get("oauth") {
            None | Some(Value::Null) => None,
            Some(block) => Some(OAuthConfig::from_json(name, block)?),
        };
        let tool_timeout = fields
            .seconds("toolTimeout")?
            .unwrap_or(DEFAULT_TOOL_TIMEOUT);
        let reset_timeout_on_progress = match entry.get("resetTimeoutOnProgress") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(reset)) => *reset,
            Some(other) => {
                return Err(fields.wrong("resetTimeoutOnProgress", "true or false", other));
            }
        };
        let max_total_timeout = match fields.seconds("maxTotalTimeout")? {
            None => DEFAULT_MAX_TOTAL_TIMEOUT.max(tool_timeout),
            Some(total) if total < tool_timeout => {
                return Err(err(
                    "maxTotalTimeout",
                    format!(
                        "`maxTotalTimeout` ({}) must be at least `toolTimeout` ({})",
                        total.as_secs_f64(),
                        tool_timeout.as_secs_f64()
                    ),
                ));
            }
            Some(total) => total,
        };
        let enabled_tools = match fields.strings("enabledTools")? {
            None => EnabledTools::All,
            Some(names) if names.iter().any(|n| n == "*") => EnabledTools::All,
            Some(names) => EnabledTools::Only(names),
        };
        let kind_name = match kind_name.as_deref() {
            Some(k @ ("stdio" | "sse" | "streamableHttp")) => k,
            Some(other) => {
                return Err(err(
                    "type",
                    format!(
                        "unknown transport type `{other}`; expected `stdio`, `sse` or `streamableHttp`"
                    ),
                ));
            }
            None if command.is_some() => "stdio",
            None => match url.as_deref() {
                Some(u) if u.trim_end_matches('/').ends_with("/sse") => "sse",
                Some(_) => "streamableHttp",
                None => {
                    return Err(err(
                        "",
                        "needs `command` (a local server) or `url` (a remote one)".into(),
                    ));
                }
            },
        };
        let transport = if kind_name == "stdio" {
            let Some(command) = command.filter(|c| !c.is_empty()) else {
                return Err(err(
                    "command",
                    "a stdio server needs a non-empty `command`".into(),
                ));
            };
            if ca_certificate.is_some() {
                return Err(err(
                    "caCertificate",
                    "`caCertificate` is for servers reached by `url`, not a stdio server".into(),
                ));
            }
            if oauth.is_some() {
                return Err(err(
                    "oauth",
                    "`oauth` is for servers reached by `url`, not a stdio server".into(),
                ));
            }
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        } else {
            let Some(url) = url else {
                return Err(err("url", format!("a `{kind_name}` server needs a `url`")));
            };
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(err(
                    "url",
                    format!("`url` must start with http:// or https://, got `{url}`"),
                ));
            }
            if kind_name == "sse" && oauth.is_some() {
                return Err(err(
                    "oauth",
                    "`oauth` is for streamable HTTP servers, not the older HTTP+SSE transport"
                        .into(),
                ));
            }
            if kind_name == "sse" {
                Transport::Sse { url, headers }
            } else {
                Transport::StreamableHttp { url, headers }
            }
        };
        Ok(Self {
            name: name.to_owned(),
            transport,
            tool_timeout,
            reset_timeout_on_progress,
            max_total_timeout,
            enabled_tools,
            ca_certificate,
            oauth,
        })
    }

    /// The most one tool call may take in all: [`max_total_timeout`](Self::max_total_timeout)
    /// when progress starts the `toolTimeout` again, else the `toolTimeout`
    /// itself. A mounted tool's [`ToolSpec::timeout`](crate::ToolSpec::timeout).
    pub fn call_timeout(&self) -> Duration {
        if self.reset_timeout_on_progress {
            self.max_total_timeout.max(self.tool_timeout)
        } else {
            self.tool_timeout
        }
    }
}

/// Typed access to one server entry's keys, with errors naming server and key.
struct Fields<'a> {
    server: &'a str,
    entry: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn wrong(&self, key: &str, expected: &str, got: &Value) -> ConfigError {
        ConfigError {
            server: self.server.to_owned(),
            key: key.to_owned(),
            message: format!("`{key}` must be {expected}, got {}", show(got)),
        }
    }

    /// A positive number of seconds.
    fn seconds(&self, key: &str) -> Result<Option<Duration>, ConfigError> {
        match self.entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_f64().is_some_and(|s| s > 0.0 && s < 1e9) => {
                Ok(n.as_f64().map(Duration::from_secs_f64))
            }
            Some(other) => Err(self.wrong(key, "a positive number of seconds", other)),
        }
    }

    fn string(&self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    fn strings(&self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        match self.entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(self.wrong(key, "a list of strings", other)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(self.wrong(key, "a list of strings", other)),
        }
    }

    fn string_map(&self, key: &str) -> Result<BTreeMap<String, String>, ConfigError> {
        match self.entry.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    // Numbers and booleans in env blocks are common and unambiguous.
                    Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
                    other => Err(self.wrong(key, "an object of strings", other)),
                })
                .collect(),
            Some(other) => Err(self.wrong(key, "an object of strings", other)),
        }
    }
}

/// `entry` with each key in its camelCase spelling from `keys`. Keys match
/// without regard to case, so configurations written for hosts that
/// capitalize them (`Command`, `Args`) read the same, and in snake_case, as
/// nanobot writes them (`tool_timeout`). An unknown key, or one key given
/// twice, is refused: the error names the key as written.
fn canonical_keys(
    entry: &Map<String, Value>,
    keys: &[&str],
) -> Result<Map<String, Value>, (String, String)> {
    let mut canonical = Map::new();
    let mut written: BTreeMap<&str, &str> = BTreeMap::new();
    for (key, value) in entry {
        let Some(known) = keys.iter().copied().find(|k| spelled(k, key)) else {
            return Err((
                key.clone(),
                format!("unknown key `{key}`; expected one of: {}", keys.join(", ")),
            ));
        };
        if let Some(first) = written.insert(known, key) {
            return Err((key.clone(), twice(known, first, key)));
        }
        canonical.insert(known.to_owned(), value.clone());
    }
    Ok(canonical)
}

/// Whether `written` is the camelCase key `known`, in that spelling or in
/// snake_case, in any case.
fn spelled(known: &str, written: &str) -> bool {
    written.eq_ignore_ascii_case(known) || written.eq_ignore_ascii_case(&snake_case(known))
}

/// `toolTimeout` as `tool_timeout`.
fn snake_case(camel: &str) -> String {
    let mut snake = String::with_capacity(camel.len() + 2);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    snake
}

/// Why the key `known`, written `first` and then `then`, is refused.
fn twice(known: &str, first: &str, then: &str) -> String {
    let snake = |k: &str| k.contains('_') && !known.contains('_');
    if snake(first) == snake(then) {
        format!("`{known}` is given twice")
    } else {
        format!("`{first}` and `{then}` are one key in two spellings; give it once")
    }
}

/// The value under `name` in an object, matching the key in either spelling
/// and without regard to case; a key given twice is an error.
fn lookup<'v>(object: &'v Value, name: &str) -> Result<Option<&'v Value>, ConfigError> {
    let Some(object) = object.as_object() else {
        return Ok(None);
    };
    let mut found: Option<(&str, &Value)> = None;
    for (key, value) in object.iter().filter(|(k, _)| spelled(name, k)) {
        if let Some((first, _)) = found {
            return Err(ConfigError {
                server: String::new(),
                key: name.to_owned(),
                message: twice(name, first, key),
            });
        }
        found = Some((key, value));
    }
    Ok(found.map(|(_, value)| value))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 60 {
        format!(
            "{} ({}…)",
            kind(value),
            &text[..text.floor_char_boundary_compat(57)]
        )
    } else {
        format!("{} ({text})", kind(value))
    }
}

/// `str::floor_char_boundary` is newer than the MSRV.
pub(crate) trait FloorCharBoundary {
    /// The largest index at most `index` (and at most the length) that
    /// falls on a character boundary.
    fn floor_char_boundary_compat(&self, index: usize) -> usize;
}

impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, index: usize) -> usize {
        let mut index = index.min(self.len());
        while !self.is_char_boundary(index) {
            index -= 1;
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(entry: Value) -> Result<ServerConfig, ConfigError> {
        ServerConfig::from_json("srv", &entry)
    }

    #[test]
    fn transports_are_inferred() {
        let stdio = one(json!({"command": "npx", "args": ["a"], "env": {"K": "v"}, "cwd": "/tmp"}))
            .unwrap();
        assert_eq!(
            stdio.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["a".into()],
                env: [("K".to_owned(), "v".to_owned())].into(),
                cwd: Some("/tmp".into())
            }
        );
        assert!(matches!(
            one(json!({"url": "http://h/sse"})).unwrap().transport,
            Transport::Sse { .. }
        ));
        assert!(matches!(
            one(json!({"url": "http://h/sse/"})).unwrap().transport,
            Transport::Sse { .. }
        ));
        assert!(matches!(
            one(json!({"url": "http://h/mcp", "headers": {"A": "b"}}))
                .unwrap()
                .transport,
            Transport::StreamableHttp { .. }
        ));
        // An explicit type wins over the inference.
        assert!(matches!(
            one(json!({"url": "http://h/sse", "type": "streamableHttp"}))
                .unwrap()
                .transport,
            Transport::StreamableHttp { .. }
        ));
        assert!(matches!(
            one(json!({"url": "http://h/events", "type": "sse"}))
                .unwrap()
                .transport,
            Transport::Sse { .. }
        ));
    }

    #[test]
    fn a_ca_certificate_is_a_path_for_servers_reached_by_url() {
        let c = one(json!({"url": "https://h/mcp", "ca_certificate": "certs/ca.pem"})).unwrap();
        assert_eq!(c.ca_certificate, Some(PathBuf::from("certs/ca.pem")));
        assert_eq!(
            one(json!({"url": "https://h/mcp"})).unwrap().ca_certificate,
            None
        );
        let err = one(json!({"command": "x", "caCertificate": "ca.pem"})).unwrap_err();
        assert_eq!(err.key, "caCertificate");
        assert_eq!(
            err.message,
            "`caCertificate` is for servers reached by `url`, not a stdio server"
        );
        let err = one(json!({"url": "https://h/mcp", "caCertificate": 1})).unwrap_err();
        assert_eq!(err.key, "caCertificate");
    }

    #[test]
    fn defaults_are_thirty_seconds_and_every_tool() {
        let c = one(json!({"command": "x"})).unwrap();
        assert_eq!(c.tool_timeout, Duration::from_secs(30));
        assert!(c.reset_timeout_on_progress);
        assert_eq!(c.max_total_timeout, Duration::from_secs(300));
        assert_eq!(c.call_timeout(), Duration::from_secs(300));
        assert_eq!(c.enabled_tools, EnabledTools::All);
        let c = one(json!({"command": "x", "toolTimeout": 2.5, "enabledTools": []})).unwrap();
        assert_eq!(c.tool_timeout, Duration::from_millis(2500));
        assert_eq!(c.enabled_tools, EnabledTools::Only(vec![]));
        assert!(!c.enabled_tools.allows("a", "mcp_srv_a"));
        let c = one(json!({"command": "x", "enabledTools": ["a", "mcp_srv_b"]})).unwrap();
        assert!(c.enabled_tools.allows("a", "mcp_srv_a"));
        assert!(c.enabled_tools.allows("b", "mcp_srv_b"));
        assert!(!c.enabled_tools.allows("c", "mcp_srv_c"));
        let c = one(json!({"command": "x", "enabledTools": ["*"]})).unwrap();
        assert_eq!(c.enabled_tools, EnabledTools::All);
    }

    #[test]
    fn progress_resets_the_timeout_up_to_a_total() {
        let c = one(json!({"command": "x", "toolTimeout": 2, "maxTotalTimeout": 9.5})).unwrap();
        assert_eq!(c.max_total_timeout, Duration::from_millis(9500));
        assert_eq!(c.call_timeout(), Duration::from_millis(9500));
        let snake =
            one(json!({"command": "x", "tool_timeout": 2, "max_total_timeout": 9.5})).unwrap();
        assert_eq!(snake, c);
        // No reset: the `toolTimeout` is the whole call's.
        let c = one(json!({"command": "x", "toolTimeout": 2, "reset_timeout_on_progress": false}))
            .unwrap();
        assert!(!c.reset_timeout_on_progress);
        assert_eq!(c.call_timeout(), Duration::from_secs(2));
        // A `toolTimeout` longer than the default total is the total.
        let c = one(json!({"command": "x", "toolTimeout": 600})).unwrap();
        assert_eq!(c.call_timeout(), Duration::from_secs(600));
        for (entry, message) in [
            (
                json!({"command": "x", "toolTimeout": 5, "maxTotalTimeout": 4}),
                "MCP server `srv`: `maxTotalTimeout` (4) must be at least `toolTimeout` (5)",
            ),
            (
                json!({"command": "x", "maxTotalTimeout": -1}),
                "MCP server `srv`: `maxTotalTimeout` must be a positive number of seconds, got a number (-1)",
            ),
            (
                json!({"command": "x", "resetTimeoutOnProgress": "yes"}),
                "MCP server `srv`: `resetTimeoutOnProgress` must be true or false, got a string (\"yes\")",
            ),
            (
                json!({"command": "x", "maxTotalTimeout": 9, "max_total_timeout": 9}),
                "MCP server `srv`: `maxTotalTimeout` and `max_total_timeout` are one key in two spellings; give it once",
            ),
        ] {
            assert_eq!(one(entry).unwrap_err().to_string(), message);
        }
    }

    #[test]
    fn mistakes_name_the_server_and_the_key() {
        let cases = [
            (
                json!({"command": 3}),
                "MCP server `srv`: `command` must be a string, got a number (3)",
            ),
            (
                json!({"command": "x", "args": "a b"}),
                "MCP server `srv`: `args` must be a list of strings, got a string (\"a b\")",
            ),
            (
                json!({"command": "x", "args": [1]}),
                "MCP server `srv`: `args` must be a list of strings, got a number (1)",
            ),
            (
                json!({"command": "x", "env": ["A"]}),
                "MCP server `srv`: `env` must be an object of strings, got a list ([\"A\"])",
            ),
            (
                json!({"url": "http://h", "headers": {"A": {}}}),
                "MCP server `srv`: `headers` must be an object of strings, got an object ({})",
            ),
            (
                json!({"command": "x", "toolTimeout": "30"}),
                "MCP server `srv`: `toolTimeout` must be a positive number of seconds, got a string (\"30\")",
            ),
            (
                json!({"command": "x", "toolTimeout": 0}),
                "MCP server `srv`: `toolTimeout` must be a positive number of seconds, got a number (0)",
            ),
            (
                json!({"command": "x", "type": "websocket"}),
                "MCP server `srv`: unknown transport type `websocket`; expected `stdio`, `sse` or `streamableHttp`",
            ),
            (
                json!({"type": "sse"}),
                "MCP server `srv`: a `sse` server needs a `url`",
            ),
            (
                json!({"type": "stdio", "url": "http://h"}),
                "MCP server `srv`: a stdio server needs a non-empty `command`",
            ),
            (
                json!({}),
                "MCP server `srv`: needs `command` (a local server) or `url` (a remote one)",
            ),
            (
                json!({"url": "ftp://h"}),
                "MCP server `srv`: `url` must start with http:// or https://, got `ftp://h`",
            ),
            (
                json!("npx"),
                "MCP server `srv`: expected an object, got a string",
            ),
        ];
        for (entry, expected) in cases {
            let err = one(entry.clone()).unwrap_err();
            assert_eq!(err.to_string(), expected, "{entry}");
            assert_eq!(err.server, "srv");
        }
        let err = one(json!({"command": "x", "timeout": 3})).unwrap_err();
        assert_eq!(err.key, "timeout");
    }

    #[test]
    fn servers_are_found_at_the_top_or_under_tools() {
        let top = McpConfig::from_json(
            &json!({"mcpServers": {"a": {"command": "x"}, "b": {"url": "http://h/mcp"}}}),
        )
        .unwrap();
        assert_eq!(
            top.servers
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        let nested =
            McpConfig::from_json(&json!({"tools": {"mcpServers": {"a": {"command": "x"}}}}))
                .unwrap();
        assert_eq!(nested.servers.len(), 1);
        assert!(McpConfig::from_json(&json!({})).unwrap().servers.is_empty());
        // Capitalized keys, as some hosts write them, read the same.
        let pascal = McpConfig::from_json(&json!({"Tools": {"McpServers": {"fs": {
            "Command": "npx", "Args": ["-y", "server"], "Env": {"TOKEN": "t"}, "ToolTimeout": 5
        }}}}))
        .unwrap();
        assert_eq!(pascal.servers[0].tool_timeout, Duration::from_secs(5));
        assert!(
            matches!(&pascal.servers[0].transport, Transport::Stdio { args, env, .. } if args.len() == 2 && env["TOKEN"] == "t")
        );
        let twice =
            McpConfig::from_json(&json!({"mcpServers": {"fs": {"command": "a", "Command": "b"}}}))
                .unwrap_err();
        assert_eq!(
            twice.to_string(),
            "MCP server `fs`: `command` is given twice"
        );
        let err = McpConfig::from_json(&json!({"mcpServers": []})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "MCP configuration: `mcpServers`: expected an object of servers, got a list"
        );
        let err = "{".parse::<McpConfig>().unwrap_err();
        assert!(err.to_string().contains("not valid JSON"));
    }

    #[test]
    fn nanobots_snake_case_reads_as_camel_case() {
        let camel = McpConfig::from_json(&json!({"tools": {"mcpServers": {"s": {
            "command": "x", "toolTimeout": 7, "enabledTools": ["a"]
        }}}}))
        .unwrap();
        for snake in [
            json!({"tools": {"mcp_servers": {"s": {"command": "x", "tool_timeout": 7, "enabled_tools": ["a"]}}}}),
            json!({"tools": {"MCP_SERVERS": {"s": {"command": "x", "Tool_Timeout": 7, "ENABLED_TOOLS": ["a"]}}}}),
            // Spellings mix freely as long as no key is given twice.
            json!({"tools": {"mcp_servers": {"s": {"command": "x", "toolTimeout": 7, "enabled_tools": ["a"]}}}}),
        ] {
            assert_eq!(McpConfig::from_json(&snake).unwrap(), camel, "{snake}");
        }
        let top = McpConfig::from_json(&json!({"mcp_servers": {"s": {
            "command": "x", "tool_timeout": 7, "enabled_tools": ["a"]
        }}}))
        .unwrap();
        assert_eq!(top, camel);
    }

    #[test]
    fn one_key_in_two_spellings_is_refused() {
        let cases = [
            (
                json!({"mcpServers": {}, "mcp_servers": {}}),
                "MCP configuration: `mcpServers`: `mcpServers` and `mcp_servers` are one key in two spellings; give it once",
            ),
            (
                json!({"tools": {"mcp_servers": {}, "McpServers": {}}}),
                "MCP configuration: `mcpServers`: `mcp_servers` and `McpServers` are one key in two spellings; give it once",
            ),
            (
                json!({"mcpServers": {}, "McpServers": {}}),
                "MCP configuration: `mcpServers`: `mcpServers` is given twice",
            ),
            (
                json!({"mcpServers": {"s": {"command": "x", "enabled_tools": [], "enabledTools": []}}}),
                "MCP server `s`: `enabled_tools` and `enabledTools` are one key in two spellings; give it once",
            ),
            (
                json!({"mcpServers": {"s": {"command": "x", "ToolTimeout": 1, "tool_timeout": 2}}}),
                "MCP server `s`: `ToolTimeout` and `tool_timeout` are one key in two spellings; give it once",
            ),
        ];
        for (document, expected) in cases {
            let err = McpConfig::from_json(&document).unwrap_err();
            assert_eq!(err.to_string(), expected, "{document}");
        }
    }

    #[test]
    fn unknown_keys_are_refused_alike_in_either_spelling() {
        let expected = "unknown key `{}`; expected one of: command, args, env, cwd, url, headers, caCertificate, oauth, type, toolTimeout, resetTimeoutOnProgress, maxTotalTimeout, enabledTools, comment";
        for (document, key) in [
            (
                json!({"mcpServers": {"s": {"command": "x", "toolTimout": 1}}}),
                "toolTimout",
            ),
            (
                json!({"mcp_servers": {"s": {"command": "x", "tool_timout": 1}}}),
                "tool_timout",
            ),
            // Only camelCase keys have a second spelling.
            (
                json!({"mcp_servers": {"s": {"command": "x", "com_mand": "y"}}}),
                "com_mand",
            ),
        ] {
            let err = McpConfig::from_json(&document).unwrap_err();
            assert_eq!(err.message, expected.replace("{}", key), "{document}");
            assert_eq!((err.server.as_str(), err.key.as_str()), ("s", key));
        }
    }

    /// One configuration, written in each language.
    const JSON: &str = r#"{"tools": {"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"DEBUG": "1"}},
        "web": {"url": "https://example.com/mcp", "headers": {"X-Key": "k"}, "toolTimeout": 60, "enabledTools": ["search"]}
    }}}"#;
    const TOML: &str = r#"
# MCP servers, as TOML.
[tools.mcpServers.fs]
command = "npx"
args = ["-y", "server-filesystem", "/tmp"]
env = { DEBUG = "1" }

[tools.mcpServers.web]
url = "https://example.com/mcp"
headers = { X-Key = "k" }
toolTimeout = 60
enabledTools = ["search"]
"#;
    const YAML: &str = "
# MCP servers, as nanobot writes them.
tools:
  mcp_servers:
    fs:
      command: npx
      args: [-y, server-filesystem, /tmp]
      env:
        DEBUG: 1
    web:
      url: https://example.com/mcp
      headers: {X-Key: k}
      tool_timeout: 60
      enabled_tools:
        - search
";

    #[test]
    fn json_toml_and_yaml_read_the_same() {
        let json = McpConfig::from_str_any(JSON).unwrap();
        assert_eq!(json.servers.len(), 2);
        assert_eq!(McpConfig::from_str_any(TOML).unwrap(), json);
        assert_eq!(McpConfig::from_str_any(YAML).unwrap(), json);
        assert_eq!(YAML.parse::<McpConfig>().unwrap(), json);
        // A byte order mark and leading comments do not hide the language.
        let marked = format!("\u{feff}{TOML}");
        assert_eq!(McpConfig::from_str_any(&marked).unwrap(), json);
        assert_eq!(
            McpConfig::from_str_any("mcpServers = {}").unwrap(),
            McpConfig::default()
        );
        for empty in ["", "  \n", "# nothing yet\n", "---\n"] {
            assert_eq!(
                McpConfig::from_str_any(empty).unwrap(),
                McpConfig::default(),
                "{empty:?}"
            );
        }
    }

    #[test]
    fn documents_that_do_not_parse_say_in_which_language() {
        for (text, language) in [
            ("{\"mcpServers\": ", "JSON"),
            ("[tools.mcpServers.fs\ncommand = 1", "TOML"),
            ("mcp_servers:\n  fs: [unclosed", "YAML"),
            ("a: b\n- c", "YAML"),
        ] {
            let err = McpConfig::from_str_any(text).unwrap_err();
            let shown = err.to_string();
            assert!(
                shown.starts_with(&format!("MCP configuration: not valid {language}: ")),
                "{text:?}: {shown}"
            );
            assert!(err.server.is_empty() && err.key.is_empty());
        }
        // A document of the wrong shape is an error about the shape.
        let err = McpConfig::from_str_any("mcp_servers: [a, b]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "MCP configuration: `mcpServers`: expected an object of servers, got a list"
        );
    }

    #[test]
    fn hostile_documents_are_refused_within_bounds() {
        // A billion laughs: nine levels of ten aliases each.
        let mut laughs = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for level in b'b'..=b'j' {
            let previous = (level - 1) as char;
            let level = level as char;
            let refs = vec![format!("*{previous}"); 10].join(",");
            laughs.push_str(&format!("{level}: &{level} [{refs}]\n"));
        }
        let err = McpConfig::from_str_any(&laughs).unwrap_err();
        assert!(err.message.contains("not valid YAML"), "{err}");
        let err = McpConfig::from_str_any(&format!("a: {}", "[".repeat(129))).unwrap_err();
        assert_eq!(
            err.message,
            "not valid YAML: `[` and `{` nested deeper than 128 levels"
        );
        // Nesting deep enough to overflow a recursive reader's stack.
        let depth = 100_000;
        for deep in [
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
            format!("a: {}{}", "[".repeat(depth), "]".repeat(depth)),
            format!("a = {}{}", "[".repeat(depth), "]".repeat(depth)),
            format!("{{\"a\": {}{}}}", "[".repeat(depth), "]".repeat(depth)),
        ] {
            assert!(McpConfig::from_str_any(&deep).is_err(), "{}", &deep[..8]);
        }
    }

    #[test]
    fn flow_nesting_is_measured_outside_quotes_and_comments() {
        assert_eq!(flow_depth("a: [[1], {b: [2]}]"), 3);
        assert_eq!(flow_depth("a: '[[[' # [[[[\nb: \"[[\\\"[\" [x]"), 1);
        assert_eq!(flow_depth("a: 'it''s [' [y]"), 1);
        assert_eq!(flow_depth("a#[[: [z]"), 3);
        assert_eq!(flow_depth("]]] [ok]"), 1);
    }

    /// A fresh directory for one test's files.
    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolsmith-mcp-config-{}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn files_are_read_by_extension_or_content() {
        let dir = scratch("files");
        let expected = McpConfig::from_str_any(JSON).unwrap();
        for (name, text) in [
            ("a.json", JSON),
            ("b.toml", TOML),
            ("c.yaml", YAML),
            ("d.YML", YAML),
            ("e.conf", TOML),
            ("f", YAML),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            assert_eq!(McpConfig::from_path(&path).unwrap(), expected, "{name}");
        }
        // The extension decides: YAML text in a `.toml` file is a TOML error.
        let wrong = dir.join("g.toml");
        std::fs::write(&wrong, YAML).unwrap();
        let err = McpConfig::from_path(&wrong).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "MCP configuration: {}: not valid TOML",
                wrong.display()
            )),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = scratch("refused");
        let missing = McpConfig::from_path(dir.join("none.json")).unwrap_err();
        assert!(missing.message.contains("cannot read it"), "{missing}");
        let folder = McpConfig::from_path(&dir).unwrap_err();
        assert!(folder.message.ends_with("not a regular file"), "{folder}");
        let big = dir.join("big.json");
        std::fs::write(&big, vec![b' '; (MAX_FILE_BYTES + 1) as usize]).unwrap();
        let err = McpConfig::from_path(&big).unwrap_err();
        assert!(err.message.contains("too large"), "{err}");
        let binary = dir.join("binary.yaml");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        let err = McpConfig::from_path(&binary).unwrap_err();
        assert!(err.message.ends_with("not UTF-8 text"), "{err}");
        #[cfg(unix)]
        {
            // A FIFO nobody writes to would block a reader forever.
            let fifo = dir.join("fifo.json");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if made.is_ok_and(|s| s.success()) {
                let err = McpConfig::from_path(&fifo).unwrap_err();
                assert!(err.message.ends_with("not a regular file"), "{err}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
