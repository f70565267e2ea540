//! The code `#[tool]` writes binds names of its own (the parsed arguments,
//! an error, a value, the spec), and a pattern that names a constant or a
//! unit struct in scope matches against it instead of binding: a user's
//! `const value` would have broken every tool in its module. Each module
//! here puts one kind of item under every such name, then defines tools
//! through every path of the expansion (async and blocking, injected
//! context, defaults, `Result` outputs with a schema, metadata, the derive
//! path of a flattened struct), beside a trait for every type with methods
//! named like its probes'. That this file compiles is the test; the
//! calls check that the tools still run. The tools are in
//! `generated_names/tools.rs`, included once per module.

#![allow(non_upper_case_globals, non_camel_case_types, dead_code)]
#![deny(warnings)]

use serde_json::json;
use tk::{ToolContext, ToolRegistry, data};

// The user's own types stay outside the modules below: schemars' derive,
// which `#[data]` writes, binds `schema` and `generator` itself, as it
// would under a plain `#[derive(JsonSchema)]`.

/// A measurement, returned as structured output.
#[data]
pub struct Measured {
    /// Characters in the text.
    pub length: usize,
}

/// A search's arguments, taken whole.
#[data(Deserialize, JsonSchema)]
pub struct SearchArguments {
    /// What to look for.
    pub query: String,
    /// At most this many.
    #[serde(default = "ten")]
    pub limit: u32,
}

fn ten() -> u32 {
    10
}

/// Lowercase constants under the generated code's names.
mod constants {
    use super::{Measured, SearchArguments};
    use tk::{ToolContext, ToolError, tool};

    const args: u8 = 0;
    const error: u8 = 0;
    const value: u8 = 0;
    const wrapped: u8 = 0;
    const spec: u8 = 0;
    const schema: u8 = 0;
    const generator: u8 = 0;
    const entries: u8 = 0;
    const key: u8 = 0;
    const function: u8 = 0;
    const ctx: u8 = 0;
    const ret: u8 = 0;
    const future: u8 = 0;
    const default: u8 = 0;
    const parsed: u8 = 0;
    const output: u8 = 0;
    const name: u8 = 0;

    include!("generated_names/tools.rs");
}

/// Lowercase unit structs under the same names (a pattern matches them too),
/// and a trait for every type, in scope, with the method names the
/// generated code calls on its own probes.
mod unit_structs {
    // Used only if a probe call took one of its methods, which would not
    // compile.
    #[allow(unused_imports)]
    use super::Everything as _;
    use super::{Measured, SearchArguments};
    use tk::{ToolContext, ToolError, tool};

    struct args;
    struct error;
    struct value;
    struct wrapped;
    struct spec;
    struct schema;
    struct generator;
    struct entries;
    struct key;
    struct function;
    struct ret;
    struct future;
    struct default;
    struct parsed;
    struct output;

    include!("generated_names/tools.rs");
}

/// A parameter the author names outside snake case, and allows: the
/// generated code binds it too, and must not warn where the author
/// allowed it (this file denies warnings).
#[allow(non_snake_case)]
#[tk::tool]
async fn lookup(
    /// Whom to look up.
    userID: String,
) -> String {
    userID
}

/// Methods for every type under the names the generated code's probe
/// methods had: method lookup must not take one of these for a probe's.
pub trait Everything {
    fn split(&self) {}
    fn to_output(&self) {}
    fn output_schema(&self) {}
    fn to_tool_error(&self) {}
    fn inject(&self) {}
    fn fns(&self) {}
}

impl<T: ?Sized> Everything for T {}

async fn call(registry: &ToolRegistry, name: &str, payload: serde_json::Value) -> String {
    let output = registry.call(name, payload, &ToolContext::new()).await;
    assert!(!output.is_error, "{name}: {}", output.content);
    output.content
}

#[tokio::test]
async fn tools_run_beside_items_named_like_the_generated_bindings() {
    let under_constants = ToolRegistry::new();
    under_constants.register(constants::GreetTool).unwrap();
    under_constants.register(constants::CountTool).unwrap();
    under_constants.register(constants::MeasureTool).unwrap();
    under_constants.register(constants::SearchTool).unwrap();
    under_constants.register(constants::SumTool).unwrap();
    under_constants.register(constants::EchoTool).unwrap();
    under_constants
        .register(constants::EchoBlockingTool)
        .unwrap();
    under_constants.register(LookupTool).unwrap();
    let under_unit_structs = ToolRegistry::new();
    under_unit_structs
        .register(unit_structs::GreetTool)
        .unwrap();
    under_unit_structs
        .register(unit_structs::CountTool)
        .unwrap();
    under_unit_structs
        .register(unit_structs::MeasureTool)
        .unwrap();
    under_unit_structs
        .register(unit_structs::SearchTool)
        .unwrap();
    under_unit_structs.register(unit_structs::SumTool).unwrap();
    under_unit_structs.register(unit_structs::EchoTool).unwrap();
    under_unit_structs
        .register(unit_structs::EchoBlockingTool)
        .unwrap();
    under_unit_structs.register(LookupTool).unwrap();
    for registry in [under_constants, under_unit_structs] {
        assert_eq!(
            call(&registry, "greet", json!({"who": "Ada"})).await,
            "Hello, Ada!"
        );
        assert_eq!(call(&registry, "count", json!({"limit": 3})).await, "3");
        assert_eq!(
            call(&registry, "measure", json!({"text": "four"})).await,
            r#"{"length":4}"#
        );
        assert_eq!(
            call(&registry, "search", json!({"query": "q"})).await,
            "q:10"
        );
        let numbers: serde_json::Map<String, serde_json::Value> = ('a'..='p')
            .map(|name| (name.to_string(), json!(1)))
            .collect();
        assert_eq!(call(&registry, "sum", numbers.into()).await, "16");
        assert_eq!(call(&registry, "echo", json!({"echo": "e"})).await, "e");
        assert_eq!(
            call(&registry, "echo_blocking", json!({"echo_blocking": "b"})).await,
            "b"
        );
        assert_eq!(call(&registry, "lookup", json!({"userID": "u"})).await, "u");
        let greet = registry.get("greet").unwrap();
        assert_eq!(greet.spec().title.as_deref(), Some("Greeting"));
    }
}
