//! Schemas: generated once per tool from Rust types, rendered per provider.

mod dialect;
mod generate;
mod render;
#[cfg(test)]
mod snapshot_tests;

pub use dialect::{RECURSION_LIMIT, inline_refs, sanitize_tool_name};
pub use generate::{schema_for_args, schema_for_output};
pub use render::{DefinitionFormat, first_sentence, render_definition};
