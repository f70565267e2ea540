//! Provider dialects: one JSON Schema 2020-12 per tool, rewritten into what
//! each provider accepts. One module per concern; [`render`](super::render)
//! picks the ones a format needs.

mod compose;
mod gemini;
mod keywords;
mod names;
mod nullable;
mod refs;
mod strict;
mod strictness;
mod walk;

pub(crate) use gemini::gemini_parameters;
pub(crate) use names::sanitize_tool_name;
use refs::inline_refs;
pub(crate) use strict::openai_strict;
pub(crate) use strictness::{StrictDialect, anthropic_strict, strict_problem};

#[cfg(test)]
mod test_support {
    use serde_json::{Map, Value};

    /// Apply a rewrite to an object schema, as the dialect passes do.
    pub(super) fn with(schema: Value, rewrite: impl FnOnce(&mut Map<String, Value>)) -> Value {
        let Value::Object(mut map) = schema else {
            unreachable!("test schemas are objects")
        };
        rewrite(&mut map);
        Value::Object(map)
    }
}
