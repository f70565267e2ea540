//! Schemas: generated once per tool from Rust types, rendered per provider.

mod definition;
mod dialect;
// `schema_for_args` is reached by the code `#[tool]` generates, through the
// hidden `__private_0_1` module.
pub(crate) mod generate;
pub(crate) mod properties;
mod render;
#[cfg(test)]
mod snapshot_tests;

pub use definition::{Definition, DefinitionCache};
pub(crate) use dialect::sanitize_tool_name;
pub(crate) use generate::schema_for_output;
pub use render::{DefinitionFormat, ToolChoice, render_definition, render_tool_choice};
pub(crate) use render::{mark_deferred, native_tool_search};
