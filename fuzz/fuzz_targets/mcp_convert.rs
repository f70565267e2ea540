//! MCP's JSON converted to ours: the input, as JSON, is read as a tool
//! definition from `tools/list`, as a `CallToolResult`, as a content block
//! and as resource contents.
//!
//! Invariants:
//! - nothing panics, whatever the shapes;
//! - a definition's `inputSchema` either fails to compile with an error or
//!   compiles into a schema that checks the definition's own `arguments`
//!   member (if any) with the outcome of cast then validate;
//! - our result turned back into a `CallToolResult` and read again keeps
//!   its images, structured content and error flag.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith::ToolOutput;
use toolsmith::args::ArgumentSchema;
use toolsmith::fuzzing::{
    add_content_block, annotations_from_mcp, annotations_to_mcp, call_result_from_output,
    output_from_call_result, resource_attachment, spec_from_mcp_tool,
};
use toolsmith::serde_json::{self, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };

    let spec = spec_from_mcp_tool("mcp_fuzz_tool", "fuzz", &value);
    let annotations = annotations_from_mcp(value.get("annotations"));
    assert_eq!(
        annotations_from_mcp(Some(&annotations_to_mcp(&annotations))),
        annotations
    );
    if let Ok(schema) = ArgumentSchema::compile(&spec.input_schema)
        && let Some(args) = value.get("arguments")
    {
        let mut fast = args.clone();
        let mut full = args.clone();
        let checked = schema.check(&mut fast);
        let casts = schema.cast(&mut full);
        match (checked, schema.validate(&full)) {
            (Ok(fast_casts), Ok(())) => {
                assert_eq!(fast, full);
                assert_eq!(fast_casts, casts);
            }
            (Err(_), Err(_)) => {}
            (checked, validated) => {
                panic!("check says {checked:?}, cast + validate say {validated:?}")
            }
        }
    }

    let output = output_from_call_result(&value);
    let back = output_from_call_result(&call_result_from_output(&output));
    assert_eq!(back.images, output.images);
    assert_eq!(back.structured, output.structured);
    assert_eq!(back.is_error, output.is_error);

    let mut block_output = ToolOutput::default();
    let mut texts = Vec::new();
    add_content_block(&mut block_output, &mut texts, &value);
    std::hint::black_box(resource_attachment(&value));
});
