//! Write the tools LLM agents call as plain Rust functions.
//!
//! Put [`#[tool]`](macro@tool) on an `async fn` with typed arguments and get a
//! complete tool: a JSON Schema generated from the types, lenient casting of
//! what models really send (`"60"` for an integer), validation errors a model
//! can act on, and automatic registration.
//!
//! ```
//! use toolsmith::{ToolContext, ToolFilter, ToolRegistry, tool};
//! use serde_json::json;
//!
//! /// Greet someone by name.
//! #[tool(read_only)]
//! async fn greet(
//!     /// Who to greet.
//!     name: String,
//!     /// How many exclamation marks.
//!     #[arg(default = 1, maximum = 5)]
//!     excitement: u8,
//! ) -> String {
//!     format!("Hello, {name}{}", "!".repeat(excitement as usize))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["greet"])).unwrap();
//! let out = registry
//!     .call("greet", json!({"name": "Ada", "excitement": "3"}), &ToolContext::new())
//!     .await;
//! assert_eq!(out.content, "Hello, Ada!!!");
//! # }
//! ```
//!
//! The path of one call is described on [`ToolRegistry`]; the crate's book
//! walks through every part.
//!
//! # Features
//!
//! - `mcp`: the MCP bridge (the `mcp` module): servers' tools as tools of a
//!   registry, and a registry served over MCP. `mcp-tls` adds TLS for
//!   `https` servers.
//! - `otel` (with `mcp`): W3C trace context crosses MCP. Every call has an
//!   `execute_tool` span (see [`pipeline`]) whatever the features; with
//!   `otel`, a mounted tool writes its span's context into the `_meta` of
//!   its `tools/call` request (`traceparent`, `tracestate`, with the
//!   application's OpenTelemetry propagator, else W3C Trace Context), and
//!   a served call's span takes the context it reads there as its parent,
//!   so one trace runs from a client through the servers it calls. Spans
//!   reach OpenTelemetry through a `tracing-opentelemetry` layer the
//!   application installs.

#![warn(missing_docs)]
// docs.rs shows which feature each item needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Lets `#[tool]` name this crate `::toolsmith` everywhere, this crate included.
extern crate self as toolsmith;

pub mod args;
mod context;
mod deferred;
mod discovery;
mod error;
pub mod exec;
mod fields;
mod filed_name;
mod json_size;
mod late;
#[cfg(feature = "mcp")]
pub mod mcp;
mod output;
mod panics;
pub mod pipeline;
mod registry;
pub mod schema;
pub(crate) mod suggest;
pub mod testing;
mod tool;
mod tool_future;
pub mod toolset;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private_0_1;

// Not part of the API: reached only by the fuzz targets in `fuzz/`.
#[doc(hidden)]
pub mod fuzzing;

/// The README's Rust examples, compiled as doctests so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;

pub use args::Cast;
pub use async_trait::async_trait;
pub use context::{CancellationToken, FromContext, Progress, ProgressReporter, ToolContext};
pub use deferred::{DeferredTools, TOOL_SEARCH, ToolSearch};
pub use discovery::ToolFilter;
pub use error::{
    ArgumentError, CallError, ErrorKind, InvalidArguments, PayloadError, Problem, RegistryError,
    ToolError, UnknownTool,
};
pub use late::{LateReceiver, LateResult, LateResults, NotDelivered};
pub use output::{Attachment, Image, MetaKey, Metadata, ToolOutput};
pub use panics::{discard as discard_panic, message as panic_message};
pub use registry::{CheckedCall, PreparedCall, ToolRegistry, is_valid_tool_name};
pub use schema::{Definition, DefinitionFormat};
pub use tool::{
    Arguments, IconTheme, RiskLevel, TaskSupport, Tool, ToolAnnotations, ToolCategory, ToolIcon,
    ToolSpec,
};
pub use tool_future::{BoxedToolFuture, ToolFuture};
/// Turn a function into a tool.
///
/// The function stays an ordinary function you can call and test; beside it
/// `#[tool]` generates a unit struct named after it (`read_file` gets
/// `ReadFileTool`) that implements [`Tool`], and registers it so
/// [`ToolRegistry::from_inventory`] can find it.
///
/// ```
/// use toolsmith::{ToolContext, ToolError, tool};
///
/// /// Read a text file from the workspace.
/// ///
/// /// Lines come back as `LINE|CONTENT`.
/// #[tool(read_only, category = filesystem_read, timeout = "10s")]
/// async fn read_file(
///     ctx: &ToolContext,
///     /// Path relative to the workspace.
///     path: String,
///     /// First line to return, 1-based.
///     #[arg(default = 1, minimum = 1)]
///     offset: u64,
///     /// How many lines at most.
///     limit: Option<u64>,
/// ) -> Result<String, ToolError> {
///     # let _ = (ctx, path, offset, limit);
///     Ok(String::new())
/// }
///
/// use toolsmith::Tool;
/// let spec = ReadFileTool.spec();
/// assert_eq!(spec.name, "read_file");
/// assert_eq!(spec.input_schema["required"], serde_json::json!(["path"]));
/// ```
///
/// # The description
///
/// The doc comment is the tool's description and each parameter's doc
/// comment describes it; `#[tool(description = "...")]` and
/// `#[arg(description = "...")]` override them. A tool without any
/// description is refused: it is the model's only guide to when to call it.
///
/// The sections rustdoc keeps for programmers, `# Errors`, `# Panics`,
/// `# Safety` and `# Examples`, are left out of the description, each up to
/// the next heading of its level or higher. A `# Arguments` section is left
/// out too, and its list (`` * `name` - text ``, `- name: text`) describes
/// the parameters that have no doc comment of their own, so a function
/// documented the rustdoc way gives the model the same words.
///
/// # Parameters
///
/// - **Arguments** are parameters taken by value. Their types must implement
///   `Deserialize` and `JsonSchema`: every integer and float width (with its
///   natural bounds in the schema), `bool`, `String`, `PathBuf`, `Vec<T>`,
///   maps, Rust enums, and your own structs deriving both (use
///   [`serde`] and [`schemars`] through this crate). `Option<T>` is optional.
/// - **Injected** parameters are taken by reference, `&T`, and never appear
///   in the schema: `&ToolContext`, `&CancellationToken`, anything
///   implementing [`FromContext`], and otherwise any shared state the host put
///   in the context with [`ToolContext::with_state`]. They are recognised by
///   being references, so renamed imports work.
/// - `#[arg(flatten)]` on the only argument makes a whole-arguments struct:
///   its fields are the tool's parameters.
///
/// `#[arg(...)]` keys: `default = expr`, `rename = "name"`,
/// `description = "..."`, `minimum`, `maximum`, `min_length`, `max_length`
/// (text), `min_items`, `max_items` (lists), `pattern = "regex"`,
/// `one_of = [...]` (numbers and text), `flatten`.
///
/// `one_of = ["celsius", "fahrenheit"]` or `one_of = [1, 2, 4]` lists the
/// values a number or text parameter may take. They become the schema's
/// `enum`, so the model is shown them, and a call with another value is
/// refused with an error that names them (a value cast first, `"2"` for
/// `2`, passes when it is one). On an `Option` they are the values it may
/// hold, and `null` stays allowed; on a list (`Vec<T>`, a set, an array),
/// the values each item may take. The list is checked when the crate
/// compiles: each value of the parameter's type (written as a Rust literal
/// of it, except that an integer is taken for a float), none given twice,
/// not empty, and a literal default among them. For a fixed set of named
/// choices, take an enum that derives `Deserialize` and `JsonSchema`: its
/// schema lists the variants by itself.
///
/// ```
/// use toolsmith::{Tool, tool};
///
/// /// Convert a temperature.
/// #[tool]
/// async fn convert(
///     degrees: f64,
///     #[arg(one_of = ["celsius", "fahrenheit"])] to: String,
///     /// Digits after the point.
///     #[arg(one_of = [0, 1, 2], default = 1)]
///     digits: u8,
/// ) -> String {
///     format!("{degrees:.*} {to}", usize::from(digits))
/// }
///
/// let schema = &ConvertTool.spec().input_schema["properties"];
/// assert_eq!(schema["to"]["enum"], serde_json::json!(["celsius", "fahrenheit"]));
/// assert_eq!(schema["digits"]["enum"], serde_json::json!([0, 1, 2]));
/// ```
///
/// # Return types
///
/// `String` (or `&'static str`, `()`, `serde_json::Value`), [`ToolOutput`],
/// any `Serialize` value (structured output; with `JsonSchema` too, an
/// output schema), or a `Result` of one of those whose error implements
/// `Display` (a [`ToolError`] keeps its kind).
///
/// # Synchronous functions
///
/// A plain `fn` runs on tokio's blocking pool, so it never stalls the async
/// threads. A timeout stops waiting for it, and cancels the context's token,
/// but cannot stop a thread that does not check the token: long-running sync
/// tools should look at [`ToolContext::is_cancelled`]. A body that does not
/// stop goes on running on its thread, its result dropped when it returns,
/// and keeps one slot of a bounded number ([`exec::BlockingLimit`], 64 by
/// default) until then, so a tool that hangs again and again makes later
/// sync calls wait a while and then fail with an error saying why, rather
/// than use up the blocking pool.
///
/// # `#[tool(...)]` keys
///
/// `name = "..."` (`[A-Za-z0-9_-]{1,64}`, default: the function's name),
/// `description = "..."`, the annotations `read_only`, `exclusive`,
/// `destructive`, `idempotent`, `open_world`, `category = ...` (one of
/// [`ToolCategory`]'s snake_case names), `risk = low | medium | high`,
/// `timeout = 30` (seconds) or `"500ms"`, `task` (or `task = required`) to
/// run as a task when served over MCP ([`ToolSpec::task_support`]), with
/// `asks_first` for a task tool that asks the client before it becomes a
/// task ([`ToolSpec::asks_first`]),
/// `strict` to ask providers to enforce the schema ([`ToolSpec::strict`]),
/// and `crate = path` when this crate is reachable only through a
/// re-export.
///
/// For people and clients more than for the model, each setting a field of
/// [`ToolSpec`]:
///
/// - `title = "..."`: a name for people ([`ToolSpec::title`], MCP's `title`).
/// - `tags = ["...", ...]`: string literals, each once
///   ([`ToolSpec::tags`], chosen by [`ToolFilter::tags`]).
/// - `icon = "https://..."`, or `icon(src = "...", mime_type = "image/png",
///   sizes = ["48x48"], theme = light | dark)`; may be given more than once
///   ([`ToolSpec::icons`]). The source must be an `https:` URL or a `data:`
///   URI: MCP clients load only those, and definitions leave any other out.
/// - `deprecated = "what to use instead"`, or `deprecated` alone
///   ([`ToolSpec::deprecated`]). Rust's own `#[deprecated]` on the function
///   does the same with its note (none: an empty text, shown as
///   `Deprecated.`); the key wins when both are there. The function's other
///   callers are warned as usual; the generated code is not.
/// - `example = r#"{...}"#`: example arguments, a string holding a JSON
///   object, checked to be one when the crate compiles; may be given more
///   than once ([`ToolSpec::input_examples`]). Whether it fits the schema is
///   checked when the tool is registered
///   ([`RegistryError::InvalidExample`]).
///
/// ```
/// use toolsmith::{Tool, tool};
///
/// /// Resize an image to a width.
/// #[tool(
///     title = "Resize image",
///     tags = ["images"],
///     icon(src = "https://example.com/resize.svg", sizes = ["any"], theme = dark),
///     example = r#"{"path": "cat.png", "width": 640}"#,
/// )]
/// async fn resize(path: String, width: u32) -> String {
///     format!("{path} at {width} px")
/// }
///
/// /// Make a thumbnail of an image.
/// #[deprecated(note = "call `resize` with a width of 128")]
/// #[tool]
/// async fn thumbnail(path: String) -> String {
///     format!("{path} at 128 px")
/// }
///
/// let spec = ResizeTool.spec();
/// assert_eq!(spec.title.as_deref(), Some("Resize image"));
/// assert_eq!(spec.input_examples[0]["width"], 640);
/// assert_eq!(
///     ThumbnailTool.spec().deprecated.as_deref(),
///     Some("call `resize` with a width of 128")
/// );
/// ```
///
/// Every misuse is a compile error at the offending token; the cases are in
/// the repository's `tests/ui` directory, each with the compiler's message.
pub use toolsmith_macros::tool;

/// Derive what a tool's own argument and output types need, with nothing
/// but this crate in `Cargo.toml`.
///
/// The rule for your own types (a struct or enum a tool takes or returns):
/// arguments need `Deserialize` and `JsonSchema`, outputs `Serialize` and
/// `JsonSchema`.
///
/// - **With `serde` and `schemars` (1.x) as dependencies of your own**,
///   derive them as usual: `#[derive(Deserialize, JsonSchema)]`. Nothing
///   else is needed.
/// - **With only this crate**, write `#[toolsmith::data]` instead. It
///   derives `Serialize`, `Deserialize` and `JsonSchema` through this
///   crate's re-exports and adds the `#[serde(crate = …)]` and
///   `#[schemars(crate = …)]` attributes that the derives need to find
///   them. `#[data(Deserialize, JsonSchema)]` derives only the traits named
///   (for an argument type with a field that cannot be serialized, say).
///
/// `#[serde(...)]` and `#[schemars(...)]` attributes on the type and its
/// fields work as usual either way; `#[data]` must come before them.
///
/// ```
/// use toolsmith::{data, tool};
///
/// /// How urgent a reminder is.
/// #[data]
/// #[serde(rename_all = "lowercase")]
/// enum Priority {
///     /// Whenever.
///     Low,
///     /// Now.
///     High,
/// }
///
/// /// What was scheduled.
/// #[data(Serialize, JsonSchema)]
/// struct Scheduled {
///     /// When, in minutes from now.
///     in_minutes: u32,
///     /// How urgent.
///     priority: Priority,
/// }
///
/// /// Schedule a reminder.
/// #[tool]
/// async fn remind(
///     /// Minutes from now.
///     in_minutes: u32,
///     /// How urgent.
///     priority: Priority,
/// ) -> Scheduled {
///     Scheduled { in_minutes, priority }
/// }
///
/// // `Scheduled` is the tool's structured output.
/// assert!(toolsmith::Tool::spec(&RemindTool).output_schema.is_some());
/// ```
///
/// A crate that reaches this crate only through a re-export says where with
/// `#[data(crate = path::to::toolsmith)]`.
pub use toolsmith_macros::data;

/// `schemars`, re-exported for the same reason.
pub use schemars;
/// `serde`, re-exported so tool crates need only `toolsmith` in their `Cargo.toml`.
pub use serde;
/// `serde_json`, re-exported for the same reason.
pub use serde_json;
