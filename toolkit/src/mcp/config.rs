//! The `mcpServers` configuration, in the format Claude Desktop and Cursor use.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

/// How long one tool call may take when a server's `toolTimeout` is not set.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// Every configured MCP server, by name, in the order they were written.
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
/// assert_eq!(err.to_string(), "MCP server `files`: unknown key `comand`; expected one of: command, args, env, cwd, url, headers, type, toolTimeout, enabledTools, comment");
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
    /// How long one call may take (`toolTimeout`, seconds; default 30).
    pub tool_timeout: Duration,
    /// Which tools to mount (`enabledTools`).
    pub enabled_tools: EnabledTools,
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
        /// Extra environment variables.
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
}

/// Which of a server's tools become tools here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnabledTools {
    /// All of them (`["*"]`, the default).
    All,
    /// Only these, by the server's name or the wrapped `mcp_{server}_{tool}` name (`[]` for none).
    Only(Vec<String>),
}

impl EnabledTools {
    /// Whether a tool the server calls `raw`, mounted as `wrapped`, is enabled.
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
    /// The server whose entry is wrong; empty for the `mcpServers` object itself.
    pub server: String,
    /// The offending key.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.server.is_empty() {
            write!(f, "MCP configuration: `{}`: {}", self.key, self.message)
        } else {
            write!(f, "MCP server `{}`: {}", self.server, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// The keys a server entry may have. `comment` is accepted and ignored, as
/// configuration files use it to explain an entry.
const KEYS: [&str; 10] = [
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "type",
    "toolTimeout",
    "enabledTools",
    "comment",
];

impl McpConfig {
    /// Read `mcpServers` from a configuration document: at the top level or
    /// under `tools`. A document with neither has no servers.
    pub fn from_json(document: &Value) -> Result<Self, ConfigError> {
        let servers = key(document, "mcpServers")
            .or_else(|| key(document, "tools").and_then(|t| key(t, "mcpServers")));
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
}

impl std::str::FromStr for McpConfig {
    type Err = ConfigError;

    /// Parse a configuration file's text (JSON).
    fn from_str(text: &str) -> Result<Self, ConfigError> {
        let document: Value = serde_json::from_str(text).map_err(|e| ConfigError {
            server: String::new(),
            key: "mcpServers".into(),
            message: format!("the configuration is not valid JSON: {e}"),
        })?;
        Self::from_json(&document)
    }
}

impl ServerConfig {
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
        // Keys match without regard to case, so configurations written for
        // hosts that capitalize them (`Command`, `Args`) read the same.
        let mut canonical = Map::new();
        for (key, value) in entry {
            let Some(known) = KEYS.iter().find(|k| k.eq_ignore_ascii_case(key)) else {
                return Err(err(
                    key,
                    format!("unknown key `{key}`; expected one of: {}", KEYS.join(", ")),
                ));
            };
            if canonical
                .insert((*known).to_owned(), value.clone())
                .is_some()
            {
                return Err(err(key, format!("`{known}` is given twice")));
            }
        }
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
        let tool_timeout = match entry.get("toolTimeout") {
            None | Some(Value::Null) => DEFAULT_TOOL_TIMEOUT,
            Some(Value::Number(n)) if n.as_f64().is_some_and(|s| s > 0.0 && s < 1e9) => {
                Duration::from_secs_f64(n.as_f64().unwrap_or(30.0))
            }
            Some(other) => {
                return Err(err(
                    "toolTimeout",
                    format!(
                        "`toolTimeout` must be a positive number of seconds, got {}",
                        show(other)
                    ),
                ));
            }
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
            enabled_tools,
        })
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

/// The value under `name` in an object, matching the key without regard to case.
fn key<'v>(object: &'v Value, name: &str) -> Option<&'v Value> {
    let object = object.as_object()?;
    object.get(name).or_else(|| {
        object
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
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
trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, index: usize) -> usize;
}

impl FloorCharBoundary for String {
    fn floor_char_boundary_compat(&self, mut index: usize) -> usize {
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
    fn defaults_are_thirty_seconds_and_every_tool() {
        let c = one(json!({"command": "x"})).unwrap();
        assert_eq!(c.tool_timeout, Duration::from_secs(30));
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
}
