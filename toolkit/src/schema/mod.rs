//! Schemas: generated once per tool from Rust types, rendered per provider.

mod generate;
mod render;

pub use generate::{schema_for_args, schema_for_output};
pub use render::{DefinitionFormat, first_sentence, render_definition};
