//! Render a [`ToolSpec`] as the tool definition a provider expects.

use serde_json::{Map, Value, json};

use crate::tool::ToolSpec;

/// The wire format of a tool definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DefinitionFormat {
    /// OpenAI function calling: `{"type": "function", "function": {name, description, parameters}}`.
    OpenAi,
    /// MCP `tools/list` entries: `{name, description, inputSchema, outputSchema?, annotations}`.
    Mcp,
}

/// One tool's definition in `format`; `compact` keeps only the first sentence of the description.
pub fn render_definition(spec: &ToolSpec, format: DefinitionFormat, compact: bool) -> Value {
    let description = if compact {
        first_sentence(&spec.description)
    } else {
        spec.description.trim()
    };
    match format {
        DefinitionFormat::OpenAi => json!({
            "type": "function",
            "function": {
                "name": spec.name,
                "description": description,
                "parameters": spec.input_schema,
            }
        }),
        DefinitionFormat::Mcp => {
            let mut def = Map::new();
            def.insert("name".into(), json!(spec.name));
            def.insert("description".into(), json!(description));
            def.insert("inputSchema".into(), spec.input_schema.clone());
            if let Some(output) = &spec.output_schema {
                def.insert("outputSchema".into(), output.clone());
            }
            let a = &spec.annotations;
            def.insert(
                "annotations".into(),
                json!({
                    "readOnlyHint": a.read_only,
                    "destructiveHint": a.destructive,
                    "idempotentHint": a.idempotent,
                    "openWorldHint": a.open_world,
                }),
            );
            Value::Object(def)
        }
    }
}

/// The first sentence of a description: up to the first `. ` or the first blank line.
pub fn first_sentence(description: &str) -> &str {
    let text = description.trim();
    let paragraph_end = text.find("\n\n").unwrap_or(text.len());
    let paragraph = &text[..paragraph_end];
    let mut search_from = 0;
    while let Some(offset) = paragraph[search_from..].find(['.', '!', '?']) {
        let end = search_from + offset + 1;
        match paragraph[end..].chars().next() {
            None => return paragraph,
            Some(c) if c.is_whitespace() => return &paragraph[..end],
            // "e.g." or "v1.2": not the end of a sentence.
            Some(_) => search_from = end,
        }
    }
    paragraph
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolAnnotations;

    #[test]
    fn first_sentence_stops_at_the_first_full_stop_or_blank_line() {
        assert_eq!(
            first_sentence("Read a file. Lines are numbered."),
            "Read a file."
        );
        assert_eq!(first_sentence("Read a file\n\nMore."), "Read a file");
        assert_eq!(
            first_sentence("Use e.g. v1.2 here. Then"),
            "Use e.g. v1.2 here."
        );
        assert_eq!(first_sentence("  Only one.  "), "Only one.");
        assert_eq!(first_sentence("No stop"), "No stop");
    }

    #[test]
    fn openai_and_mcp_shapes() {
        let spec = ToolSpec::new("t", "Does t. Really.", json!({"type": "object"}))
            .with_annotations(ToolAnnotations {
                read_only: true,
                ..Default::default()
            });
        let openai = render_definition(&spec, DefinitionFormat::OpenAi, true);
        assert_eq!(
            openai,
            json!({"type": "function", "function": {"name": "t", "description": "Does t.", "parameters": {"type": "object"}}})
        );
        let mcp = render_definition(&spec, DefinitionFormat::Mcp, false);
        assert_eq!(mcp["inputSchema"], json!({"type": "object"}));
        assert_eq!(mcp["description"], json!("Does t. Really."));
        assert_eq!(mcp["annotations"]["readOnlyHint"], json!(true));
        assert!(mcp.get("outputSchema").is_none());
    }
}
