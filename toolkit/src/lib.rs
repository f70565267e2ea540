//! Write the tools LLM agents call as plain Rust functions.
//!
//! Put [`#[tool]`](macro@tool) on an `async fn` with typed arguments and get a
//! complete tool: a JSON Schema generated from the types, lenient casting of
//! what models really send (`"60"` for an integer), validation errors a model
//! can act on, and automatic registration.
//!
//! ```
//! use toolkit::{ToolContext, ToolFilter, ToolRegistry, tool};
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

#![warn(missing_docs)]

// Lets `#[tool]` name this crate `::toolkit` everywhere, this crate included.
extern crate self as toolkit;

pub mod args;
mod context;
mod discovery;
mod error;
pub mod exec;
mod output;
mod registry;
pub mod schema;
pub(crate) mod suggest;
mod tool;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use args::Cast;
pub use async_trait::async_trait;
pub use context::{CancellationToken, FromContext, ToolContext};
pub use discovery::ToolFilter;
pub use error::{
    ArgumentError, CallError, InvalidArguments, PayloadError, Problem, RegistryError, ToolError,
    UnknownTool,
};
pub use output::{Image, Metadata, ToolOutput};
pub use registry::{CheckedCall, PreparedCall, ToolRegistry, is_valid_tool_name};
pub use schema::DefinitionFormat;
pub use tool::{Arguments, RiskLevel, Tool, ToolAnnotations, ToolCategory, ToolSpec};
pub use toolkit_macros::tool;

/// `schemars`, re-exported for the same reason.
pub use schemars;
/// `serde`, re-exported so tool crates need only `toolkit` in their `Cargo.toml`.
pub use serde;
/// `serde_json`, re-exported for the same reason.
pub use serde_json;
