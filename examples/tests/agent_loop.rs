//! The `agent_loop` example against a scripted OpenAI-compatible server.
//!
//! The test plays the model: a small HTTP server on the loopback interface
//! answers each chat completions request with the next scripted response and
//! records what the agent sent. The example runs as a child process, built
//! by `cargo test` like every example, with its stdin piped to answer the
//! approval prompt.

mod common;
use common::example_binary;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;

const MODEL: &str = "scripted-model";
const API_KEY: &str = "test-key";

// ---------------------------------------------------------------------------
// The scripted model
// ---------------------------------------------------------------------------

/// One request the agent sent.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    authorization: Option<String>,
    body: Value,
}

/// A server that answers the n-th request with the n-th scripted response.
struct ScriptedServer {
    base_url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl ScriptedServer {
    /// Serve `script`: (HTTP status, JSON body) per request, in order.
    async fn start(script: Vec<(u16, Value)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        tokio::spawn(async move {
            let mut script = script.into_iter();
            while let Ok((stream, _)) = listener.accept().await {
                let Some(request) = read_request(stream).await else {
                    continue;
                };
                let (stream, request) = request;
                recorded.lock().unwrap().push(request);
                let (status, body) = script
                    .next()
                    .unwrap_or((500, json!({"error": "the script has no more turns"})));
                write_response(stream, status, &body).await;
            }
        });
        Self {
            base_url: format!("http://{address}/v1"),
            requests,
        }
    }

    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// Read one HTTP/1.1 request: request line, headers, `Content-Length` body.
async fn read_request(stream: TcpStream) -> Option<(TcpStream, Request)> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).await.ok()?;
    let path = request_line.split_whitespace().nth(1)?.to_owned();
    let mut content_length = 0;
    let mut authorization = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => content_length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0; content_length];
    reader.read_exact(&mut body).await.ok()?;
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let request = Request {
        path,
        authorization,
        body,
    };
    Some((reader.into_inner(), request))
}

async fn write_response(mut stream: TcpStream, status: u16, body: &Value) {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// A model turn that calls tools: (id, name, arguments as a JSON string).
fn calls_tools(calls: &[(&str, &str, &str)]) -> (u16, Value) {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    completion(json!({"role": "assistant", "content": null, "tool_calls": tool_calls}))
}

/// A model turn that answers.
fn answers(text: &str) -> (u16, Value) {
    completion(json!({"role": "assistant", "content": text}))
}

fn completion(message: Value) -> (u16, Value) {
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    let body = json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    });
    (200, body)
}

// ---------------------------------------------------------------------------
// The example as a child process
// ---------------------------------------------------------------------------

struct Finished {
    success: bool,
    stdout: String,
    stderr: String,
}

/// A fresh directory for the example's notes file.
fn workspace(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("agent_loop")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run the example against `server` with `prompt`, typing `stdin` into it.
async fn run_agent(
    server: &ScriptedServer,
    workspace: &Path,
    prompt: &str,
    stdin: &str,
) -> Finished {
    let mut child = Command::new(example_binary("agent_loop"))
        .arg(prompt)
        // Only what the test sets: no proxy or real key from the environment.
        .env_clear()
        .env("OPENAI_BASE_URL", &server.base_url)
        .env("OPENAI_MODEL", MODEL)
        .env("OPENAI_API_KEY", API_KEY)
        .env("AGENT_WORKSPACE", workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the example");
    let mut input = child.stdin.take().unwrap();
    // The child may already have exited (its output will say why).
    let _ = input.write_all(stdin.as_bytes()).await;
    drop(input);
    // A guard against a hung child, not a timing check: on timeout the child
    // is dropped, which kills it.
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the example hung and was killed")
        .unwrap();
    Finished {
        success: output.status.success(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

// ---------------------------------------------------------------------------
// Checks on what the agent sent
// ---------------------------------------------------------------------------

fn messages(request: &Request) -> &Vec<Value> {
    request.body["messages"].as_array().expect("messages")
}

/// The `(tool_call_id, content)` of the tool messages in `messages[range]`.
fn tool_results(messages: &[Value]) -> Vec<(&str, &str)> {
    messages
        .iter()
        .map(|m| {
            assert_eq!(m["role"], "tool", "{m}");
            (
                m["tool_call_id"].as_str().unwrap(),
                m["content"].as_str().unwrap(),
            )
        })
        .collect()
}

/// Every request goes to the chat completions path with the model, the key
/// and the same tools.
fn check_every_request(requests: &[Request]) {
    let tools = &requests[0].body["tools"];
    for request in requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {API_KEY}").as_str())
        );
        assert_eq!(request.body["model"], MODEL);
        assert_eq!(&request.body["tools"], tools);
    }
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

const TURN_1_CALLS: [(&str, &str, &str); 3] = [
    ("call_1", "get_weather", r#"{"city": "Oslo"}"#),
    ("call_2", "get_weather", r#"{"city": "Lisbon"}"#),
    (
        "call_3",
        "save_note",
        r#"{"text": "Pack warm boots for Oslo"}"#,
    ),
];

const PROMPT: &str = "What's the weather in Oslo and Lisbon? Note down what to pack.";

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

#[tokio::test]
async fn the_agent_runs_tool_calls_and_feeds_results_and_errors_back() {
    let answer = "Oslo has light snow at 4.5 °C and Lisbon is sunny at 19 °C. \
                  I noted the boots, and 40 + 2 = 42.";
    let server = ScriptedServer::start(vec![
        calls_tools(&TURN_1_CALLS),
        calls_tools(&[
            ("call_4", "add", r#"{"a": "two", "b": 3}"#),
            ("call_5", "get_wether", r#"{"city": "Oslo"}"#),
            ("call_6", "add", r#"{"a": "40", "b": 2.0}"#),
        ]),
        answers(answer),
    ])
    .await;
    let workspace = workspace("approved");

    let run = run_agent(&server, &workspace, PROMPT, "y\n").await;

    assert!(run.success, "the example failed:\n{}", run.stderr);
    assert!(
        run.stdout.trim_end().ends_with(answer),
        "stdout: {}",
        run.stdout
    );
    assert!(
        run.stderr.contains(
            r#"Approve medium call save_note {"text":"Pack warm boots for Oslo"}? [y/N]"#
        ),
        "stderr: {}",
        run.stderr
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    check_every_request(&requests);

    // Turn 1: the system prompt, the user's prompt, and the three tools.
    let sent = messages(&requests[0]);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0]["role"], "system");
    assert!(sent[0]["content"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(sent[1], json!({"role": "user", "content": PROMPT}));
    let tools = requests[0].body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            assert_eq!(t["function"]["parameters"]["type"], "object");
            t["function"]["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, ["add", "get_weather", "save_note"]);
    assert_eq!(
        tools[1]["function"]["parameters"]["required"],
        json!(["city"])
    );

    // Turn 2: the assistant's tool calls as the model made them, then one
    // result per call, in call order.
    let sent = messages(&requests[1]);
    assert_eq!(sent.len(), 6);
    assert_eq!(sent[..2], messages(&requests[0])[..]);
    let turn_1 = calls_tools(&TURN_1_CALLS).1;
    assert_eq!(sent[2]["role"], "assistant");
    assert_eq!(sent[2]["content"], Value::Null);
    assert_eq!(
        sent[2]["tool_calls"],
        turn_1["choices"][0]["message"]["tool_calls"]
    );
    let results = tool_results(&sent[3..]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
    assert_eq!(
        json_of(results[0].1),
        json!({"city": "Oslo", "temperature_c": 4.5, "conditions": "light snow"})
    );
    assert_eq!(
        json_of(results[1].1),
        json!({"city": "Lisbon", "temperature_c": 19.0, "conditions": "sunny"})
    );
    assert!(
        results[2].1.starts_with("Saved the note to ") && results[2].1.ends_with("notes.md"),
        "{}",
        results[2].1
    );
    let notes = std::fs::read_to_string(workspace.join("notes.md")).unwrap();
    assert_eq!(notes, "- Pack warm boots for Oslo\n");

    // Turn 3: errors the model can act on, and the lenient cast's result.
    let sent = messages(&requests[2]);
    assert_eq!(sent.len(), 10);
    assert_eq!(sent[..6], messages(&requests[1])[..]);
    assert_eq!(sent[6]["role"], "assistant");
    assert_eq!(sent[6]["tool_calls"].as_array().unwrap().len(), 3);
    let results = tool_results(&sent[7..]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, ["call_4", "call_5", "call_6"]);
    let first_line = |text: &str| text.lines().next().unwrap_or_default().to_owned();
    assert_eq!(
        first_line(results[0].1),
        r#"Error: Invalid parameters for tool 'add': a should be integer, got string "two""#
    );
    assert_eq!(
        first_line(results[1].1),
        "Error: Tool 'get_wether' not found. Did you mean 'get_weather'? \
         Available: add, get_weather, save_note"
    );
    for (_, error) in &results[..2] {
        // Each error ends with a hint on what to do next.
        assert!(error.trim_end().ends_with(']'), "{error}");
    }
    assert_eq!(results[2].1, "42");
}

#[tokio::test]
async fn a_denied_call_is_reported_to_the_model_and_never_runs() {
    let answer =
        "Oslo is 4.5 °C with light snow; Lisbon is 19 °C and sunny. I did not save a note.";
    let server = ScriptedServer::start(vec![calls_tools(&TURN_1_CALLS), answers(answer)]).await;
    let workspace = workspace("denied");

    let run = run_agent(&server, &workspace, PROMPT, "n\n").await;

    assert!(run.success, "the example failed:\n{}", run.stderr);
    assert!(
        run.stdout.trim_end().ends_with(answer),
        "stdout: {}",
        run.stdout
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    check_every_request(&requests);
    let results = tool_results(&messages(&requests[1])[3..]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
    // The read-only calls ran without asking.
    assert_eq!(json_of(results[0].1)["city"], "Oslo");
    assert_eq!(json_of(results[1].1)["city"], "Lisbon");
    assert!(
        results[2]
            .1
            .starts_with("Error: Tool 'save_note' failed: the user did not approve this call"),
        "{}",
        results[2].1
    );
    assert!(!workspace.join("notes.md").exists());
}

#[tokio::test]
async fn end_of_input_at_the_prompt_denies() {
    let server = ScriptedServer::start(vec![
        calls_tools(&[("call_1", "save_note", r#"{"text": "x"}"#)]),
        answers("Not saved."),
    ])
    .await;
    let workspace = workspace("end_of_input");

    let run = run_agent(&server, &workspace, "Save x.", "").await;

    assert!(run.success, "the example failed:\n{}", run.stderr);
    let requests = server.requests();
    let results = tool_results(&messages(&requests[1])[3..]);
    assert!(
        results[0].1.contains("the user did not approve this call"),
        "{}",
        results[0].1
    );
    assert!(!workspace.join("notes.md").exists());
}

#[tokio::test]
async fn an_endpoint_error_stops_the_agent_with_its_status_and_body() {
    let server = ScriptedServer::start(vec![(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
    )])
    .await;
    let workspace = workspace("endpoint_error");

    let run = run_agent(&server, &workspace, PROMPT, "").await;

    assert!(!run.success);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("401 Unauthorized"), "{}", run.stderr);
    assert!(
        run.stderr.contains("Incorrect API key provided"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn a_model_that_never_answers_is_stopped_after_the_turn_limit() {
    let forever = (0..20)
        .map(|_| calls_tools(&[("call_1", "add", r#"{"a": 1, "b": 1}"#)]))
        .collect();
    let server = ScriptedServer::start(forever).await;
    let workspace = workspace("turn_limit");

    let run = run_agent(&server, &workspace, "Loop.", "").await;

    assert!(!run.success);
    assert!(
        run.stderr.contains("no final answer within 10 turns"),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 10);
}
