//! Arguments nested far deeper than any model sends (a host can build such a
//! `Value` in-process) are refused before anything recurses into them, on
//! every entry point, and the deepest accepted ones still bind and run.
//!
//! A stack overflow aborts the whole process, which a test cannot catch: each
//! case runs in a child process (this test binary, run again for that one
//! case), so an overflow is a failed test with the child's words, not a
//! killed test run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolsmith::args::ArgumentSchema;
use toolsmith::{CallError, ToolContext, ToolRegistry, tool};

/// Set in a child process: the case it runs.
const CASE: &str = "TOOLSMITH_DEEP_CASE";

/// The deepest arguments accepted: values inside 128 containers.
const LIMIT: usize = 128;

/// A tree of numbers, as models send it: `[1, [2, 3]]`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Tree {
    /// A number.
    Leaf(i64),
    /// A list of trees.
    Branch(Vec<Tree>),
}

/// A chain of links, each holding the next.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Link {
    /// The next link, if any.
    pub next: Option<Box<Link>>,
}

/// Takes any JSON at all.
#[tool]
async fn take_any(value: Value) -> String {
    format!("any {}", value.is_null())
}

/// Takes a tree through an untagged enum.
#[tool]
async fn take_tree(tree: Tree) -> String {
    format!("tree {}", matches!(tree, Tree::Branch(_)))
}

/// Takes a chain through a recursive `$ref`.
#[tool]
async fn take_link(link: Link) -> String {
    format!("link {}", link.next.is_some())
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(TakeAnyTool).unwrap();
    registry.register(TakeTreeTool).unwrap();
    registry.register(TakeLinkTool).unwrap();
    registry
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    Arrays,
    Objects,
    Alternating,
    /// Objects with the `next` key, as `Link` nests.
    Links,
}

const SHAPES: [Shape; 4] = [
    Shape::Arrays,
    Shape::Objects,
    Shape::Alternating,
    Shape::Links,
];

/// A value `levels` containers deep, built without recursion.
fn nested(levels: usize, shape: Shape) -> Value {
    let mut value = match shape {
        Shape::Links => json!({"next": null}),
        _ => json!(1),
    };
    for level in 0..levels {
        let (object, key) = match shape {
            Shape::Arrays => (false, "a"),
            Shape::Objects => (true, "a"),
            Shape::Alternating => (level % 2 == 0, "a"),
            Shape::Links => (true, "next"),
        };
        value = if object {
            let mut map = Map::new();
            map.insert(key.to_owned(), value);
            Value::Object(map)
        } else {
            Value::Array(vec![value])
        };
    }
    value
}

/// `{key: inner}`, built without `json!`, which would copy `inner` by
/// recursion.
fn object(key: &str, inner: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.to_owned(), inner);
    Value::Object(map)
}

/// Drop `value` without recursion: serde_json's own `Drop` recurses, and
/// would overflow on the deepest values here. Each container is emptied onto
/// a stack before it is dropped.
fn take_apart(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, child)| child)),
            _ => {}
        }
    }
}

/// The arguments of `tool` with its parameter holding `inner`.
fn args(tool: &str, inner: Value) -> Value {
    let key = match tool {
        "take_any" => "value",
        "take_tree" => "tree",
        _ => "link",
    };
    object(key, inner)
}

fn is_depth_error(text: &str) -> bool {
    text.contains(&format!("nest more than {LIMIT} levels deep"))
        || text.contains(&format!("nested more than {LIMIT} levels deep"))
}

/// Every entry point refuses `payload` for `tool`, saying it nests too deep.
fn refused_everywhere(tool: &str, payload: impl Fn() -> Value) {
    refused_by_every_entry(tool, payload, is_depth_error);
}

/// Every entry point refuses `payload` for `tool`, with a message `expected`.
fn refused_by_every_entry(tool: &str, payload: impl Fn() -> Value, expected: fn(&str) -> bool) {
    let registry = registry();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(registry.call(tool, payload(), &ToolContext::new()));
    assert!(out.is_error, "{tool}: {}", out.content);
    assert!(expected(&out.content), "{tool}: {}", out.content);
    for result in [
        registry.prepare(tool, payload()).map(|_| ()),
        registry.check(tool, payload()).map(|_| ()),
        runtime
            .block_on(registry.try_call(tool, payload(), &ToolContext::new()))
            .map(|_| ()),
    ] {
        match result {
            Err(error @ (CallError::InvalidArguments(_) | CallError::InvalidPayload { .. })) => {
                assert!(expected(&error.to_string()), "{tool}: {error}")
            }
            other => panic!("{tool}: {other:?}"),
        }
    }
    // An unknown tool: the payload is dropped unread.
    let out = runtime.block_on(registry.call("no_such_tool", payload(), &ToolContext::new()));
    assert!(out.is_error);
    assert!(registry.check("no_such_tool", payload()).is_err());
}

/// The case named `case`, run in this process.
fn run_case(case: &str) {
    let (levels, shape) = match case.split_once('/') {
        Some((levels, shape)) => (
            levels.parse::<usize>().unwrap(),
            SHAPES[shape.parse::<usize>().unwrap()],
        ),
        None => (0, Shape::Arrays),
    };
    match case {
        "limit" => {
            // The deepest accepted arguments bind and run, on a thread with
            // the stack of a tokio worker.
            let registry = std::sync::Arc::new(registry());
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_stack_size(2 << 20)
                .enable_all()
                .build()
                .unwrap();
            for (tool, inner) in [
                ("take_any", nested(LIMIT - 1, Shape::Alternating)),
                ("take_tree", nested(LIMIT - 1, Shape::Arrays)),
                // `{"link": {"next": ... {"next": null}}}`
                // (the innermost `{"next": null}` is a level of its own).
                ("take_link", nested(LIMIT - 2, Shape::Links)),
            ] {
                let payload = args(tool, inner.clone());
                let out = runtime.block_on(async {
                    let registry = std::sync::Arc::clone(&registry);
                    let tool = tool.to_owned();
                    tokio::spawn(
                        async move { registry.call(&tool, payload, &ToolContext::new()).await },
                    )
                    .await
                    .unwrap()
                });
                assert!(!out.is_error, "{tool}: {}", out.content);
                // One level more is refused.
                let deeper = match inner {
                    Value::Object(_) if tool == "take_link" => object("next", inner),
                    _ => Value::Array(vec![inner]),
                };
                let out =
                    runtime.block_on(registry.call(tool, args(tool, deeper), &ToolContext::new()));
                assert!(
                    out.is_error && is_depth_error(&out.content),
                    "{tool}: {}",
                    out.content
                );
            }
        }
        "schema" => {
            // The schema's own entry points, with a hostile depth under
            // `anyOf` and `$ref`.
            let schema = ArgumentSchema::compile(&json!({
                "type": "object",
                "properties": {"x": {"anyOf": [
                    {"type": "integer"},
                    {"type": "array", "items": {"$ref": "#/properties/x"}},
                    {"type": "object", "additionalProperties": {"$ref": "#/properties/x"}},
                    {"type": "string", "pattern": "^never$"}
                ]}}
            }))
            .unwrap();
            for (levels, shape) in SHAPES
                .into_iter()
                .map(|shape| (4_000, shape))
                .chain([(1_000_000, Shape::Alternating)])
            {
                {
                    let mut value = object("x", nested(levels, shape));
                    assert!(schema.cast(&mut value).is_empty());
                    let errors = schema.validate(&value).unwrap_err();
                    assert_eq!(errors.len(), 1);
                    assert!(is_depth_error(&errors[0].to_string()), "{}", errors[0]);
                    assert!(schema.check(&mut value).is_err());
                    take_apart(value);
                }
            }
        }
        "payload" => {
            // Text nested too deep is refused by serde_json's parser, once
            // or twice encoded, and nothing of ours reads past it.
            let registry = registry();
            for levels in [LIMIT + 1, 4_000, 1_000_000] {
                let text = format!(
                    "{{\"value\": {}1{}}}",
                    "[".repeat(levels),
                    "]".repeat(levels)
                );
                for payload in [json!(text.clone()), json!(json!(text.clone()).to_string())] {
                    let error = registry.check("take_any", payload).unwrap_err();
                    assert!(matches!(error, CallError::InvalidPayload { .. }), "{error}");
                }
            }
        }
        _ => {
            let tools = ["take_any", "take_tree", "take_link"];
            // A million levels take a second to build in a debug build:
            // one tool per shape is enough there.
            let tools = if levels > 100_000 {
                &tools[shape as usize % 3..][..1]
            } else {
                &tools[..]
            };
            for &tool in tools {
                refused_everywhere(tool, || args(tool, nested(levels, shape)));
            }
            if levels > 100_000 && shape as usize != 0 {
                return;
            }
            // The payload itself, not under a parameter: an array is not
            // arguments at all, an object nests too deep.
            refused_by_every_entry(
                "take_any",
                || nested(levels, shape),
                |text| is_depth_error(text) || text.contains("must be a JSON object"),
            );
            // Wrapped as `{"arguments": ...}`.
            refused_everywhere("take_any", || {
                object("arguments", args("take_any", nested(levels, shape)))
            });
        }
    }
}

/// Run the test `test` of this binary in a child process with `env` set;
/// its status and output. Bounded: a child that hangs is killed.
fn child(test: &str, env: (&str, &str)) -> (std::process::ExitStatus, String) {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The output is read on threads so a full pipe cannot stall the child.
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{test} ({}) did not finish within 300 s", env.1);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = format!("{}\n{}", stdout.join().unwrap(), stderr.join().unwrap());
    (status, output)
}

/// Run `case` in a child process and fail with its output if it fails.
fn in_child(case: &str) {
    let (status, output) = child("child_case", (CASE, case));
    assert!(status.success(), "case {case} failed ({status}):\n{output}");
}

/// The entry point of a child process; does nothing in the parent.
#[test]
fn child_case() {
    if let Ok(case) = std::env::var(CASE) {
        run_case(&case);
    }
}

#[test]
fn values_a_few_thousand_levels_deep_are_refused_everywhere() {
    for shape in 0..SHAPES.len() {
        in_child(&format!("4000/{shape}"));
    }
}

#[test]
fn values_a_million_levels_deep_are_refused_without_recursion() {
    for shape in 0..SHAPES.len() {
        in_child(&format!("1000000/{shape}"));
    }
}

#[test]
fn values_just_past_the_limit_are_refused() {
    for shape in 0..SHAPES.len() {
        in_child(&format!("{}/{shape}", LIMIT + 1));
    }
}

#[test]
fn the_deepest_accepted_arguments_bind_and_run_on_a_worker_stack() {
    in_child("limit");
}

#[test]
fn the_schema_entry_points_refuse_deep_values_through_any_of_and_ref() {
    in_child("schema");
}

#[test]
fn payload_text_nested_too_deep_is_refused_by_the_parser() {
    in_child("payload");
}

#[test]
fn the_child_process_harness_reports_an_overflow_as_a_failure() {
    // Without the harness this would abort the whole test binary: a
    // million-level value dropped by serde_json's recursive `Drop`.
    if std::env::var(CASE).is_ok() {
        return;
    }
    let (status, output) = child("overflow_child", ("TOOLSMITH_DEEP_OVERFLOW", "1"));
    assert!(!status.success(), "{status}");
    assert!(output.contains("overflow"), "{output}");
}

/// Drops a million-level value the ordinary way: serde_json's `Drop`
/// recurses and overflows. Runs only in a child of the test above.
#[test]
fn overflow_child() {
    if std::env::var("TOOLSMITH_DEEP_OVERFLOW").is_ok() {
        // The thread's stack is small, so the overflow is certain.
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| drop(nested(1_000_000, Shape::Arrays)))
            .unwrap()
            .join()
            .unwrap();
    }
}
