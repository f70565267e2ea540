//! The [`Tool`] trait and the static description of a tool, [`ToolSpec`].

use std::any::type_name;
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::args::{ArgumentSchema, SchemaError};
use crate::context::ToolContext;
use crate::error::{ArgumentError, ToolError};
use crate::output::ToolOutput;
use crate::schema::DefinitionCache;
use crate::tool_future::ToolFuture;

/// A tool an agent can call.
///
/// Most tools are written with [`#[tool]`](crate::tool), which implements this
/// trait. Implement it by hand for tools whose schema is only known at run time
/// (a tool mounted from an MCP server, a tool defined in a configuration file).
///
/// The registry runs steps 1 to 4 of a call (payload, lookup, lenient cast,
/// validation) before the tool sees anything, so [`Tool::bind`] and
/// [`Tool::call`] receive arguments that already match [`ToolSpec::input_schema`].
///
/// ```
/// use toolsmith::{Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait};
/// use serde_json::json;
///
/// struct Shout(ToolSpec);
///
/// #[async_trait]
/// impl Tool for Shout {
///     fn spec(&self) -> &ToolSpec {
///         &self.0
///     }
///     async fn call(&self, args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
///         let args = args.into_json();
///         Ok(args["text"].as_str().unwrap_or_default().to_uppercase().into())
///     }
/// }
///
/// let spec = ToolSpec::new(
///     "shout",
///     "Repeat the text in capitals.",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
/// );
/// let tool = Shout(spec);
/// assert_eq!(tool.spec().name, "shout");
/// ```
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The tool's name, description, schemas and annotations.
    fn spec(&self) -> &ToolSpec;

    /// [`ToolSpec::input_schema`] compiled for casting and validation; the
    /// registry asks for it once, when the tool is registered.
    ///
    /// The default compiles the schema on every request. `#[tool]` keeps the
    /// compiled form in a static beside the spec, so a program that builds
    /// many registries (one per session, say) compiles each tool once.
    /// Override it only to cache the same way; the result must be what
    /// compiling `spec().input_schema` gives.
    fn argument_schema(&self) -> Result<ArgumentSchema, SchemaError> {
        ArgumentSchema::compile(&self.spec().input_schema)
    }

    /// Where this tool's rendered definitions are kept beyond one registry,
    /// or `None` (the default) for the registry to keep them itself, once
    /// per registered tool.
    ///
    /// `#[tool]` keeps a cache in a static beside the spec, so a program
    /// that builds many registries (one per session, say) renders each
    /// definition once. Return a cache only if it is this tool's alone and
    /// [`spec`](Self::spec) never changes: its renderings are of the spec
    /// they were first made from. A tool that wraps another and changes its
    /// spec (renames it, hides a parameter) must not return the other's.
    fn definition_cache(&self) -> Option<&DefinitionCache> {
        None
    }

    /// Step 5 of a call: turn validated JSON arguments into this tool's own
    /// argument type. The default keeps them as JSON.
    fn bind(&self, args: Value) -> Result<Arguments, ArgumentError> {
        Ok(Arguments::json(args))
    }

    /// Run the tool with bound arguments.
    async fn call(&self, args: Arguments, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;

    /// [`call`](Self::call)'s future, as the registry runs it: the same
    /// call, held in a [`ToolFuture`]. The default holds `call`'s boxed
    /// future as it is.
    ///
    /// `#[tool]` overrides it to hold its future in place when it is small
    /// (a tool that computes its answer without waiting, mostly), so such
    /// a call costs no allocation. Override it only that way: with a
    /// future that does exactly what `call` does.
    fn start<'a>(&'a self, args: Arguments, ctx: &'a ToolContext) -> ToolFuture<'a> {
        ToolFuture::boxed(self.call(args, ctx))
    }
}

/// Arguments after binding: either still JSON or the tool's typed value.
pub struct Arguments(ArgumentsRepr);

enum ArgumentsRepr {
    Json(Value),
    Typed(Box<dyn std::any::Any + Send>),
}

impl Arguments {
    /// Arguments kept as JSON.
    pub fn json(value: Value) -> Self {
        Self(ArgumentsRepr::Json(value))
    }

    /// Arguments already deserialized into a tool's own type.
    pub fn typed<T: Send + 'static>(value: T) -> Self {
        Self(ArgumentsRepr::Typed(Box::new(value)))
    }

    /// The JSON arguments, or `null` when they were bound to a typed value.
    pub fn into_json(self) -> Value {
        match self.0 {
            ArgumentsRepr::Json(value) => value,
            ArgumentsRepr::Typed(_) => Value::Null,
        }
    }

    /// The arguments as a `T`: taken as they are if they were bound to a `T`,
    /// deserialized if they are still JSON.
    ///
    /// JSON that does not deserialize as a `T` (a value serde refuses that
    /// the schema let through) is [`ToolError::InvalidArguments`] with
    /// serde's words, for the model to fix: the same failure a `#[tool]`
    /// reports when it binds its arguments. Arguments bound to another type
    /// are [`ToolError::Internal`], a fault in the tool.
    #[inline]
    pub fn parse<T: serde::de::DeserializeOwned + 'static>(self) -> Result<T, ToolError> {
        // `match`es rather than closures, here and below: every tool compiles
        // these for its own `T`, so each closure would be one more function
        // per tool.
        match self.0 {
            ArgumentsRepr::Json(value) => match serde_json::from_value(value) {
                Ok(parsed) => Ok(parsed),
                Err(e) => Err(ToolError::InvalidArguments(e.to_string())),
            },
            ArgumentsRepr::Typed(any) => typed_value(any),
        }
    }

    /// The arguments of the generated tool `O`, as the tuple `fields`
    /// reads: taken as they are if `O` bound them, read if they are still
    /// JSON. Errors as [`parse`](Self::parse)'s.
    #[inline(always)]
    pub(crate) fn parse_fields<O: 'static, T: crate::fields::ArgTuple>(
        self,
        fields: &crate::fields::Fields<T>,
    ) -> Result<T, ToolError> {
        match self.0 {
            ArgumentsRepr::Json(value) => match fields.read(value) {
                Ok(parsed) => Ok(parsed),
                Err(e) => Err(ToolError::InvalidArguments(e.to_string())),
            },
            ArgumentsRepr::Typed(any) => {
                match typed_value::<crate::__private_0_1::BoundBy<O, T>>(any) {
                    Ok(bound) => Ok(bound.arguments),
                    Err(error) => Err(error),
                }
            }
        }
    }

    /// The typed arguments, if they were bound as a `T`.
    ///
    /// A tool's `call` receives the value its own `bind` produced, so for a
    /// tool that binds typed arguments this only fails on a programming error.
    pub fn into_typed<T: 'static>(self) -> Result<T, ToolError> {
        match self.0 {
            ArgumentsRepr::Typed(any) => typed_value(any),
            ArgumentsRepr::Json(value) => {
                let any: Box<dyn std::any::Any> = Box::new(value);
                match any.downcast::<T>() {
                    Ok(value) => Ok(*value),
                    Err(_) => Err(not_bound_as("arguments are JSON, not", type_name::<T>())),
                }
            }
        }
    }
}

/// The value bound as a `T`, or an internal error naming `T`.
fn typed_value<T: 'static>(any: Box<dyn std::any::Any + Send>) -> Result<T, ToolError> {
    match any.downcast::<T>() {
        Ok(value) => Ok(*value),
        Err(_) => Err(not_bound_as(
            "arguments were bound to another type than",
            type_name::<T>(),
        )),
    }
}

/// A tool given arguments of another type than it reads: a fault in the tool.
fn not_bound_as(what: &str, wanted: &str) -> ToolError {
    ToolError::internal(format!("{what} {wanted}"))
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ArgumentsRepr::Json(value) => f.debug_tuple("Arguments").field(value).finish(),
            ArgumentsRepr::Typed(_) => f.write_str("Arguments(<typed>)"),
        }
    }
}

/// Everything a registry and a model need to know about a tool, without running it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls, `[A-Za-z0-9_-]{1,64}`.
    pub name: Cow<'static, str>,
    /// What the tool does, for the model.
    pub description: Cow<'static, str>,
    /// JSON Schema of the arguments object.
    pub input_schema: Value,
    /// JSON Schema of the structured result, when the tool returns one.
    pub output_schema: Option<Value>,
    /// Behaviour hints used for scheduling and shown to MCP clients.
    pub annotations: ToolAnnotations,
    /// What kind of thing the tool touches; drives the default risk level.
    pub category: Option<ToolCategory>,
    /// An explicit risk level; when `None` it is derived from the category.
    pub risk: Option<RiskLevel>,
    /// How long one call may run before it is stopped; `None` uses the runner's default.
    pub timeout: Option<Duration>,
    /// The Rust module the tool was defined in, for filtering; empty for run-time tools.
    pub module_path: Cow<'static, str>,
    /// A name for people (MCP's `title`), where `name` is for the model.
    pub title: Option<Cow<'static, str>>,
    /// Pictures for a client's interface (MCP's `icons`).
    pub icons: Vec<ToolIcon>,
    /// Labels for choosing tools (see [`ToolFilter::tags`](crate::ToolFilter::tags)),
    /// carried over MCP in `_meta`.
    pub tags: Vec<Cow<'static, str>>,
    /// Set when the tool is on its way out: what to use instead. The tool
    /// still runs; definitions tell the model so, and
    /// [`ToolFilter::without_deprecated`](crate::ToolFilter::without_deprecated)
    /// leaves it out.
    pub deprecated: Option<Cow<'static, str>>,
    /// Example arguments, each valid against `input_schema` (the registry
    /// refuses a tool whose examples are not). Sent to providers that take
    /// them (Anthropic's `input_examples`) and over MCP in `_meta`.
    pub input_examples: Vec<Value>,
    /// Anything else for clients, sent as MCP's `_meta` and kept from an MCP
    /// server's tool. Keys follow MCP's rules; those under `toolsmith/` are
    /// this crate's own: `toolsmith/tags`, `toolsmith/deprecated` and
    /// `toolsmith/inputExamples` carry `tags`, `deprecated` and
    /// `input_examples` over MCP, both ways.
    pub meta: Map<String, Value>,
    /// Ask providers that can enforce a schema while the model writes the
    /// call (OpenAI's `"strict": true`, Anthropic's strict tool use) to do
    /// so for this tool. A schema that cannot be strict (free-form keys,
    /// values of any type, recursion for Anthropic) is sent non-strict
    /// instead, with a warning logged once.
    pub strict: bool,
    /// Whether the tool runs as a task when served over MCP (the
    /// `io.modelcontextprotocol/tasks` extension): the call answers at once
    /// with a task the client polls, cancels or answers questions for.
    /// `#[tool(task)]` sets [`TaskSupport::Optional`],
    /// `#[tool(task = required)]` [`TaskSupport::Required`].
    pub task_support: TaskSupport,
    /// For a tool that runs as a task: it asks the client its questions
    /// first, and only then becomes a task. Served to a client of protocol
    /// 2026-07-28, the call runs at once; a question it asks in its first
    /// moments (before it has run a task poll interval without asking)
    /// comes back as an input-required result, and the client calls again
    /// with the answer; once the tool has run that long without asking, or
    /// has finished, the call answers with a task, and a later question
    /// waits in the task. Without it, a task tool's call is a task from
    /// the start. `#[tool(task, asks_first)]` sets it.
    pub asks_first: bool,
}

/// Whether a tool served over MCP runs as a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never: every call is answered when the tool is done (the default).
    #[default]
    Forbidden,
    /// For clients that take tasks; others get the result when it is done.
    Optional,
    /// Only as a task: a client that does not take tasks is refused.
    Required,
}

impl TaskSupport {
    /// MCP's name for it (`execution.taskSupport` of a tool).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// A picture of a tool for a client's interface, as MCP describes one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolIcon {
    /// Where the picture is: an `https:` URL, or a `data:` URI holding it.
    pub src: String,
    /// Its media type (`image/png`, `image/svg+xml`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes it comes in (`48x48`, or `any` for a scalable picture).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// The background it is drawn for, when it suits only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl ToolIcon {
    /// An icon at `src`, with nothing else said about it.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }

    /// Say what media type the picture is.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Add a size the picture comes in (`48x48`, `any`).
    pub fn with_size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }

    /// Say which background the picture is drawn for.
    pub fn with_theme(mut self, theme: IconTheme) -> Self {
        self.theme = Some(theme);
        self
    }

    /// Whether a client may load the picture without reaching a place the
    /// tool's author did not mean, or running what it holds: an `https://`
    /// URL, or a `data:` URI of a raster image (PNG, JPEG, GIF, WebP, AVIF
    /// or an icon file). SVG is refused inline, since it can carry script
    /// and icons are served on to clients whose rendering is unknown; a
    /// `mime_type`, when given, must be an image type.
    pub fn is_safe(&self) -> bool {
        const RASTER: [&str; 7] = [
            "image/png",
            "image/jpeg",
            "image/gif",
            "image/webp",
            "image/avif",
            "image/x-icon",
            "image/vnd.microsoft.icon",
        ];
        let lower = self.src.to_ascii_lowercase();
        let source_ok = if let Some(rest) = lower.strip_prefix("https://") {
            !rest.is_empty()
        } else if let Some(rest) = lower.strip_prefix("data:") {
            let media = rest.split([';', ',']).next().unwrap_or("");
            RASTER.contains(&media) && rest.len() > media.len()
        } else {
            false
        };
        let mime_ok = self
            .mime_type
            .as_deref()
            .is_none_or(|m| m.to_ascii_lowercase().starts_with("image/"));
        source_ok && mime_ok
    }
}

/// The background an icon is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// A light background.
    Light,
    /// A dark background.
    Dark,
}

/// The keys this crate writes in MCP's `_meta` for what MCP's tool
/// definition has no field for, and reads back from a server's tools.
pub(crate) mod meta_keys {
    /// [`ToolSpec::tags`](super::ToolSpec::tags): a list of strings.
    pub const TAGS: &str = "toolsmith/tags";
    /// [`ToolSpec::deprecated`](super::ToolSpec::deprecated): a string.
    pub const DEPRECATED: &str = "toolsmith/deprecated";
    /// [`ToolSpec::input_examples`](super::ToolSpec::input_examples): a list
    /// of argument objects.
    pub const INPUT_EXAMPLES: &str = "toolsmith/inputExamples";
}

impl ToolSpec {
    /// A spec with a name, a description and an input schema; everything else default.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
            annotations: ToolAnnotations::default(),
            category: None,
            risk: None,
            timeout: None,
            module_path: Cow::Borrowed(""),
            title: None,
            icons: Vec::new(),
            tags: Vec::new(),
            deprecated: None,
            input_examples: Vec::new(),
            meta: Map::new(),
            strict: false,
            task_support: TaskSupport::Forbidden,
            asks_first: false,
        }
    }

    /// Set the output schema.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Set the annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Set the category.
    pub fn with_category(mut self, category: ToolCategory) -> Self {
        self.category = Some(category);
        self
    }

    /// Set an explicit risk level.
    pub fn with_risk(mut self, risk: RiskLevel) -> Self {
        self.risk = Some(risk);
        self
    }

    /// Set the per-call timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Set the module path used by registry filters.
    pub fn with_module_path(mut self, module_path: impl Into<Cow<'static, str>>) -> Self {
        self.module_path = module_path.into();
        self
    }

    /// Set the name shown to people.
    pub fn with_title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Add an icon.
    pub fn with_icon(mut self, icon: ToolIcon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Add a tag.
    pub fn with_tag(mut self, tag: impl Into<Cow<'static, str>>) -> Self {
        self.tags.push(tag.into());
        self
    }

    /// Mark the tool deprecated; `instead` says what to use instead.
    pub fn with_deprecated(mut self, instead: impl Into<Cow<'static, str>>) -> Self {
        self.deprecated = Some(instead.into());
        self
    }

    /// Add example arguments.
    pub fn with_input_example(mut self, example: Value) -> Self {
        self.input_examples.push(example);
        self
    }

    /// Ask for strict mode for this tool (see [`ToolSpec::strict`]).
    pub fn with_strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Run as a task when served over MCP (see [`ToolSpec::task_support`]).
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Ask the client first, then run as a task (see [`ToolSpec::asks_first`]).
    pub fn with_asks_first(mut self) -> Self {
        self.asks_first = true;
        self
    }

    /// Set one `_meta` entry.
    pub fn with_meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta.insert(key.into(), value);
        self
    }

    /// The risk level, from the first of these that applies:
    ///
    /// | the spec has                                  | risk                    |
    /// |-----------------------------------------------|-------------------------|
    /// | an explicit `risk`                            | that one                |
    /// | the `destructive` annotation                  | [`RiskLevel::High`]     |
    /// | a `category`                                  | [`ToolCategory::risk`]  |
    /// | the `read_only` annotation                    | [`RiskLevel::Low`]      |
    /// | none of these                                 | [`RiskLevel::Medium`]   |
    ///
    /// So a tool that may destroy data is high risk unless it says
    /// otherwise (the built-in `write_file` says `risk = medium`: it
    /// overwrites files, but only inside the workspace).
    pub fn risk_level(&self) -> RiskLevel {
        if let Some(risk) = self.risk {
            risk
        } else if self.annotations.destructive {
            RiskLevel::High
        } else if let Some(category) = self.category {
            category.risk()
        } else if self.annotations.read_only {
            RiskLevel::Low
        } else {
            RiskLevel::Medium
        }
    }

    /// Whether calls of this tool may run at the same time as other safe calls.
    pub fn concurrency_safe(&self) -> bool {
        self.annotations.concurrency_safe()
    }
}

/// Behaviour hints, with the meanings MCP gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    pub read_only: bool,
    /// The tool must run alone, never beside another call (a shell, say).
    pub exclusive: bool,
    /// The tool may destroy data or make changes that cannot be undone.
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool talks to things outside the host (the web, other people).
    pub open_world: bool,
}

impl ToolAnnotations {
    /// Read-only and not exclusive: safe to run beside other such calls.
    pub fn concurrency_safe(&self) -> bool {
        self.read_only && !self.exclusive
    }
}

/// What a tool touches. Drives the default [`RiskLevel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCategory {
    /// Reads files.
    FilesystemRead,
    /// Creates, changes or deletes files.
    FilesystemWrite,
    /// Reads from the network without changing anything there.
    NetworkRead,
    /// Changes state somewhere on the network.
    NetworkWrite,
    /// Runs shell commands.
    Shell,
    /// Drives hardware or peripherals.
    Hardware,
    /// Reads or writes the agent's memory.
    Memory,
    /// Sends messages to people.
    Messaging,
    /// Destructive or otherwise high-risk operations.
    Destructive,
}

impl ToolCategory {
    /// Every category, in declaration order.
    pub const ALL: [ToolCategory; 9] = [
        Self::FilesystemRead,
        Self::FilesystemWrite,
        Self::NetworkRead,
        Self::NetworkWrite,
        Self::Shell,
        Self::Hardware,
        Self::Memory,
        Self::Messaging,
        Self::Destructive,
    ];

    /// The risk a tool of this category carries unless it says otherwise.
    pub fn risk(self) -> RiskLevel {
        match self {
            Self::FilesystemRead | Self::NetworkRead | Self::Memory => RiskLevel::Low,
            Self::FilesystemWrite | Self::NetworkWrite | Self::Messaging => RiskLevel::Medium,
            Self::Shell | Self::Hardware | Self::Destructive => RiskLevel::High,
        }
    }

    /// The snake_case name used in attributes and configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FilesystemRead => "filesystem_read",
            Self::FilesystemWrite => "filesystem_write",
            Self::NetworkRead => "network_read",
            Self::NetworkWrite => "network_write",
            Self::Shell => "shell",
            Self::Hardware => "hardware",
            Self::Memory => "memory",
            Self::Messaging => "messaging",
            Self::Destructive => "destructive",
        }
    }
}

impl fmt::Display for ToolCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much care a call needs before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    /// Runs without asking.
    Low,
    /// Asks for approval under a "dangerous tools" policy.
    Medium,
    /// Asks for approval, with a warning.
    High,
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_that_do_not_fit_are_the_models_and_a_wrong_type_is_internal() {
        let parsed =
            Arguments::json(json!({"n": "x"})).parse::<std::collections::HashMap<String, u8>>();
        assert!(
            matches!(&parsed, Err(ToolError::InvalidArguments(text)) if text.contains("invalid type")),
            "{parsed:?}"
        );
        let parsed = Arguments::typed(5u8).parse::<String>();
        assert!(matches!(parsed, Err(ToolError::Internal(_))), "{parsed:?}");
        assert_eq!(Arguments::typed(5u8).parse::<u8>(), Ok(5));
    }

    #[test]
    fn concurrency_safe_means_read_only_and_not_exclusive() {
        let mut a = ToolAnnotations::default();
        assert!(!a.concurrency_safe());
        a.read_only = true;
        assert!(a.concurrency_safe());
        a.exclusive = true;
        assert!(!a.concurrency_safe());
    }

    #[test]
    fn risk_comes_from_explicit_then_category_then_read_only() {
        let spec = ToolSpec::new("t", "d", json!({"type": "object"}));
        assert_eq!(spec.risk_level(), RiskLevel::Medium);
        let read_only = spec.clone().with_annotations(ToolAnnotations {
            read_only: true,
            ..Default::default()
        });
        assert_eq!(read_only.risk_level(), RiskLevel::Low);
        let shell = spec.clone().with_category(ToolCategory::Shell);
        assert_eq!(shell.risk_level(), RiskLevel::High);
        assert_eq!(shell.with_risk(RiskLevel::Low).risk_level(), RiskLevel::Low);
    }

    #[test]
    fn destructive_tools_are_high_risk_unless_they_say_otherwise() {
        let destructive = ToolSpec::new("t", "d", json!({"type": "object"}))
            .with_category(ToolCategory::FilesystemWrite)
            .with_annotations(ToolAnnotations {
                destructive: true,
                ..Default::default()
            });
        assert_eq!(destructive.risk_level(), RiskLevel::High);
        assert_eq!(
            destructive.with_risk(RiskLevel::Medium).risk_level(),
            RiskLevel::Medium
        );
    }

    #[test]
    fn only_https_and_data_icons_are_safe() {
        for safe in [
            "https://example.com/a.png",
            "HTTPS://x/y",
            "data:image/png;base64,AA==",
            "DATA:image/webp;base64,AA==",
        ] {
            assert!(ToolIcon::new(safe).is_safe(), "{safe}");
        }
        for unsafe_ in [
            "http://example.com/a.png",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "https:javascript:alert(1)",
            "https://",
            "data:text/html,<script>alert(1)</script>",
            "data:image/svg+xml,<svg onload=alert(1)/>",
            "data:image/svg+xml;base64,PHN2Zy8+",
            "DATA:text/javascript,alert(1)",
            "data:,hello",
            "data:image/png",
            "/icon.png",
            "",
            "ftp://x/y",
        ] {
            assert!(!ToolIcon::new(unsafe_).is_safe(), "{unsafe_}");
        }
        let html = ToolIcon::new("https://example.com/a").with_mime_type("text/html");
        assert!(!html.is_safe());
    }

    #[test]
    fn every_category_has_its_risk_and_its_name() {
        use RiskLevel::*;
        let risks: Vec<RiskLevel> = ToolCategory::ALL.iter().map(|c| c.risk()).collect();
        // filesystem read/write, network read/write, shell, hardware, memory,
        // messaging, destructive
        assert_eq!(
            risks,
            [Low, Medium, Low, Medium, High, High, Low, Medium, High]
        );
        for category in ToolCategory::ALL {
            let name = serde_json::to_value(category).unwrap();
            assert_eq!(name, json!(category.as_str()));
        }
    }
}
