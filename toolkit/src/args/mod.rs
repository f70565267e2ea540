//! Steps 1, 3 and 4 of a call: read the payload, cast leniently, validate.
//!
//! All of it is driven by a tool's JSON Schema, compiled once into an
//! [`ArgumentSchema`] when the tool is registered.

use serde_json::Value;

use crate::error::{ArgumentError, PayloadError};

/// A tool's input schema, compiled once for casting and validation.
#[derive(Debug, Clone)]
pub struct ArgumentSchema {
    _private: (),
}

/// A schema the compiler cannot use (a `$ref` that points nowhere, a bad pattern).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaError(pub String);

/// One lenient conversion applied to the arguments, for logging.
#[derive(Debug, Clone, PartialEq)]
pub struct Cast {
    /// Where, as `meta.flags[0]`.
    pub path: String,
    /// What was sent, e.g. `string "60"`.
    pub from: String,
    /// The JSON type it became, e.g. `integer`.
    pub to: &'static str,
}

impl std::fmt::Display for Cast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} -> {}", self.path, self.from, self.to)
    }
}

impl ArgumentSchema {
    /// Compile a tool's input schema.
    pub fn compile(_schema: &Value) -> Result<Self, SchemaError> {
        Ok(Self { _private: () })
    }

    /// Whether the schema declares a top-level parameter with this name.
    pub fn has_parameter(&self, _name: &str) -> bool {
        false
    }

    /// Step 3: cast what can be cast, in place; never fails.
    pub fn cast(&self, _args: &mut Value) -> Vec<Cast> {
        Vec::new()
    }

    /// Step 4: every problem at once.
    pub fn validate(&self, _args: &Value) -> Result<(), Vec<ArgumentError>> {
        Ok(())
    }
}

/// Step 1: turn what the model sent into an arguments object.
pub fn normalize_payload(
    payload: Value,
    takes_arguments_param: bool,
) -> Result<Value, PayloadError> {
    let _ = takes_arguments_param;
    Ok(payload)
}
