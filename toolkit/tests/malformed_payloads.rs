//! Payloads that are almost JSON, as models send them: a corpus of real
//! slips (`fixtures/malformed_payloads.jsonl`, one case a line), each sent
//! as the text of the arguments through `ToolRegistry::check` and `call`.
//!
//! A case is either `{"name", "sent", "repaired": <arguments after the
//! check>, "repairs": [<the start of each repair's description>]}` or
//! `{"name", "sent", "refused": <a part of the refusal>}`.

use serde_json::{Value, json};
use toolsmith::exec::{Runner, ToolCall, meta};
use toolsmith::{CallError, PayloadError, ToolContext, ToolRegistry, tool};

/// Write text to a file (it writes nothing: it answers what it was given).
#[tool]
async fn write_file(
    /// Where.
    path: String,
    /// What.
    content: String,
    /// Whether to create the file.
    create: Option<bool>,
    /// Labels.
    tags: Option<Vec<String>>,
    /// At most this many lines.
    limit: Option<u32>,
) -> String {
    format!("{path} {} {create:?} {tags:?} {limit:?}", content.len())
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(WriteFileTool).unwrap();
    registry
}

fn corpus() -> Vec<Value> {
    include_str!("fixtures/malformed_payloads.jsonl")
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("a corpus line is JSON"))
        .collect()
}

#[tokio::test]
async fn the_corpus_is_repaired_or_refused_as_recorded() {
    let registry = registry();
    let ctx = ToolContext::new();
    let (mut repaired, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for case in corpus() {
        let name = case["name"].as_str().unwrap();
        let sent = case["sent"].as_str().unwrap();
        let payload = json!(sent);
        let checked = registry.check("write_file", payload.clone());
        let called = registry.call("write_file", payload, &ctx).await;
        if let Some(expected) = case.get("repaired") {
            repaired += 1;
            let checked = match checked {
                Ok(checked) => checked,
                Err(error) => {
                    failures.push(format!("{name}: refused: {error}"));
                    continue;
                }
            };
            if checked.arguments() != expected {
                failures.push(format!(
                    "{name}: repaired to {}, expected {expected}",
                    checked.arguments()
                ));
            }
            let repairs: Vec<&str> = checked
                .casts()
                .iter()
                .filter(|cast| cast.to == "repaired")
                .map(|cast| {
                    assert!(cast.path.is_empty(), "{name}: {cast}");
                    cast.from.as_str()
                })
                .collect();
            let kinds = case["repairs"].as_array().unwrap();
            let all_reported = kinds.len() == repairs.len()
                && kinds.iter().all(|kind| {
                    repairs
                        .iter()
                        .any(|r| r.starts_with(kind.as_str().unwrap()))
                });
            if !all_reported {
                failures.push(format!("{name}: repairs {repairs:?}, expected {kinds:?}"));
            }
            if called.is_error {
                failures.push(format!(
                    "{name}: checked, but call failed: {}",
                    called.content
                ));
            }
            if let Err(error) = checked.bind() {
                failures.push(format!("{name}: checked, but binding failed: {error}"));
            }
        } else {
            refused += 1;
            let part = case["refused"].as_str().unwrap();
            match checked {
                Ok(checked) => failures.push(format!(
                    "{name}: accepted as {} with {:?}",
                    checked.arguments(),
                    checked.casts()
                )),
                Err(error) => {
                    let text = error.to_string();
                    if !matches!(error, CallError::InvalidPayload { .. }) || !text.contains(part) {
                        failures.push(format!("{name}: refused with {text:?}, expected {part:?}"));
                    }
                }
            }
            if !called.is_error {
                failures.push(format!("{name}: refused by check, run by call"));
            }
        }
    }
    println!(
        "corpus: {} tried, {repaired} repaired, {refused} refused",
        repaired + refused
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(repaired + refused >= 50, "{repaired} + {refused} cases");
}

#[tokio::test]
async fn a_refusal_quotes_the_place_with_a_caret() {
    let error = registry()
        .check(
            "write_file",
            json!("{\"path\": \"a.txt\" \"content\": \"hi\"}"),
        )
        .unwrap_err();
    assert_eq!(
        error,
        CallError::InvalidPayload {
            tool: "write_file".into(),
            error: PayloadError::NotJson(
                "expected `,` or `}` at line 1, column 18:\n    \
                 {\"path\": \"a.txt\" \"content\": \"hi\"}\n    \
                 \x20                ^\n"
                    .into()
            ),
        }
    );
    assert_eq!(
        error.to_model_text(),
        "Error: Invalid arguments for tool 'write_file': arguments are not valid JSON (\
         expected `,` or `}` at line 1, column 18:\n    \
         {\"path\": \"a.txt\" \"content\": \"hi\"}\n    \
         \x20                ^\n\
         ); send a JSON object of named parameters\n\n\
         [Fix the arguments as described and call the tool again.]"
    );
}

#[tokio::test]
async fn an_excerpt_of_a_long_line_is_short() {
    let long = format!(
        "{{\"path\": \"a.txt\", \"content\": \"{}\" \"x\": 1}}",
        "y".repeat(100_000)
    );
    let error = registry().check("write_file", json!(long)).unwrap_err();
    let text = error.to_string();
    assert!(text.len() < 300, "{text}");
    assert!(text.contains("at line 1, column 100033:"), "{text}");
}

#[tokio::test]
async fn deep_or_huge_text_is_refused_without_trouble() {
    let registry = registry();
    for text in [
        format!("{{\"path\": {}", "[".repeat(100_000)),
        format!("{{\"path\": \"a.txt\", \"tags\": {}]", "[".repeat(200)),
        format!("{{\"path\": \"a\", \"content\": \"{}", "\n".repeat(100_000)),
        "{'a': '".repeat(10_000),
        ",".repeat(100_000),
    ] {
        let error = registry.check("write_file", json!(text)).unwrap_err();
        assert!(matches!(error, CallError::InvalidPayload { .. }), "{error}");
    }
}

#[tokio::test]
async fn the_runner_records_the_repairs_with_the_casts() {
    let registry = std::sync::Arc::new(registry());
    let state = Runner::new(registry)
        .run(
            vec![ToolCall::new(
                "1",
                "write_file",
                json!("```json\n{'path': 'a.txt', 'content': 'hi', 'limit': '5',}\n```"),
            )],
            &ToolContext::new(),
        )
        .await;
    let output = state.calls[0].output.as_ref().unwrap();
    assert!(!output.is_error, "{}", output.content);
    let casts: Vec<String> = output
        .metadata
        .read(&meta::CASTS)
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        casts,
        [
            "code fence around the JSON at line 1, column 1 -> repaired",
            "trailing comma at line 2, column 48 -> repaired",
            "single-quoted string at line 2, column 2 (6 times) -> repaired",
            "limit: string \"5\" -> integer",
        ]
    );
}
