//! Attacks on the HTTP server's rules of who may see what, over real HTTP
//! on loopback, each by class with several spellings, counting what was
//! tried and what was refused: tasks kept to the caller that started them,
//! the JWKS throttle while the authorization server fails, `Mcp-Param-*`
//! headers against what the tool receives, session keys a client cannot
//! choose, sessions kept to an issuer and subject, answers of input-required
//! rounds kept to the questions asked, and hidden parameters of a mounted
//! tool out of reach of a doubled `arguments` envelope.

#![cfg(all(feature = "mcp", feature = "mcp-jwt"))]

mod mcp_http;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_http::{
    FAILING, GARBAGE, HEALTHY, ISSUER, Key, Reply, claims, jwks, no_auth, post, post_text, serve,
};
use serde_json::{Value, json};
use toolsmith::mcp::OAuthResource;
use toolsmith::mcp::{ClientSession, JwtVerifier, McpClients, McpConfig, McpServer};
use toolsmith::pipeline::{CallLimits, Pipeline};
use toolsmith::toolset::{ArgTransform, Toolset};
use toolsmith::{
    Arguments, CancellationToken, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
    async_trait, tool,
};

const OTHER_ISSUER: &str = "https://other-as.test";
const LIMIT: Duration = Duration::from_secs(60);
const NEW: &str = "2026-07-28";
const OLD: &str = "2025-11-25";

/// What one class of attack tried and how much of it was refused.
struct Tally {
    class: &'static str,
    tried: usize,
    refused: usize,
}

impl Tally {
    fn new(class: &'static str) -> Self {
        Self {
            class,
            tried: 0,
            refused: 0,
        }
    }

    fn count(&mut self, refused: bool) {
        self.tried += 1;
        self.refused += usize::from(refused);
    }

    /// Print the counts; every attempt must have been refused.
    fn all_refused(&self) {
        println!(
            "{}: tried {}, refused {}",
            self.class, self.tried, self.refused
        );
        assert!(self.tried > 0, "{}: nothing tried", self.class);
        assert_eq!(self.tried, self.refused, "{}: not all refused", self.class);
    }
}

// ---------------------------------------------------------------- serving

/// The resource server of `url` whose tokens `jwks` publishes the keys of,
/// from either issuer.
fn resource(jwks_url: &str) -> impl FnOnce(String) -> Option<OAuthResource> + use<> {
    let jwks_url = jwks_url.to_owned();
    move |url: String| {
        let verifier = JwtVerifier::new(jwks_url, ISSUER, url.clone()).issuer(OTHER_ISSUER);
        Some(OAuthResource::new(url, ISSUER, verifier))
    }
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A session of protocol 2025-11-25 opened with `capabilities`: its id.
async fn open_session(url: &str, token: Option<&str>, capabilities: Value) -> String {
    let init = request(
        1,
        "initialize",
        json!({"protocolVersion": OLD, "capabilities": capabilities,
               "clientInfo": {"name": "raw", "version": "0"}}),
    );
    let reply = post(url, token, &[], &init).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let session = reply.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", OLD),
    ];
    let reply = post(url, token, &headers, &initialized).await;
    assert!(reply.status < 300, "{}", reply.status);
    session
}

/// Headers and `_meta` of a stateless request of protocol 2026-07-28.
fn new_headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![("mcp-protocol-version", NEW), ("Mcp-Method", method)];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    headers
}

fn new_meta(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": NEW,
           "io.modelcontextprotocol/clientCapabilities": capabilities})
}

/// The text of a complete tool result, or `None` when it is not one.
fn result_text(reply: &Reply) -> Option<String> {
    let result = reply.body.get("result")?;
    if result["isError"] == json!(true) {
        return None;
    }
    result["content"][0]["text"].as_str().map(str::to_owned)
}

/// The first `taskId` anywhere in `value`.
fn task_id(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => map
            .get("taskId")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| map.values().find_map(task_id)),
        Value::Array(items) => items.iter().find_map(task_id),
        _ => None,
    }
}

// ---------------------------------------------------------------- tools

/// Wait a long while, as a task.
#[tool(task)]
async fn wait_long() -> String {
    tokio::time::sleep(Duration::from_secs(50)).await;
    "waited".into()
}

/// A report far longer than a result may be, as a task or not.
#[tool(task)]
async fn long_report() -> String {
    "line of the report\n".repeat(5_000)
}

/// The session key the call runs under.
struct SessionKeyTool(ToolSpec);

#[async_trait]
impl Tool for SessionKeyTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _args: Arguments, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(json!(ctx.session_key()).to_string()))
    }
}

fn session_key_tool() -> SessionKeyTool {
    SessionKeyTool(ToolSpec::new(
        "my_key",
        "The session key of this call.",
        json!({"type": "object", "properties": {}}),
    ))
}

/// A tool that records the arguments it receives.
struct Recorder {
    spec: ToolSpec,
    seen: Arc<Mutex<Vec<Value>>>,
}

#[async_trait]
impl Tool for Recorder {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args = args.into_json();
        self.seen.lock().unwrap().push(args.clone());
        Ok(ToolOutput::text(args.to_string()))
    }
}

/// Ask two questions, `first` then `second`, and say both answers.
#[tool]
async fn two_names(session: &ClientSession) -> Result<String, ToolError> {
    let form = |message: &str| {
        json!({"mode": "form", "message": message, "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]}})
    };
    let first = session
        .ask("first", "elicitation/create", form("First name?"))
        .await?;
    let second = session
        .ask("second", "elicitation/create", form("Second name?"))
        .await?;
    let name = |answer: &Value| answer["content"]["name"].as_str().unwrap_or("?").to_owned();
    Ok(format!("{} {}", name(&first), name(&second)))
}

// ---------------------------------------------------------------- 1. tasks

/// Start a task of `wait_long` in the session `session` (or statelessly,
/// protocol 2026-07-28, when `None`); its id, or the error refusing it.
async fn start_task(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    tool: &str,
) -> Result<String, Value> {
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let reply = match session {
        Some(session) => {
            let headers = [("mcp-session-id", session), ("mcp-protocol-version", OLD)];
            let call = request(7, "tools/call", json!({"name": tool, "arguments": {}}));
            post(url, token, &headers, &call).await
        }
        None => {
            let call = request(
                7,
                "tools/call",
                json!({"name": tool, "arguments": {}, "_meta": new_meta(tasks)}),
            );
            post(url, token, &new_headers("tools/call", Some(tool)), &call).await
        }
    };
    task_id(&reply.body["result"]).ok_or(reply.body)
}

/// `method` (`tasks/get`, `tasks/cancel`, `tasks/update`) on task `id`
/// with the params spelled as `params` (its `{id}` replaced): the answer.
async fn on_task(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    method: &str,
    params: &str,
    id: &str,
) -> Value {
    let params = params.replace("{id}", id);
    let (headers, params): (Vec<(&str, &str)>, String) = match session {
        Some(session) => (
            vec![("mcp-session-id", session), ("mcp-protocol-version", OLD)],
            params,
        ),
        None => {
            let meta = new_meta(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
            let open = &params[..params.len() - 1];
            let params = format!("{open}, \"_meta\": {meta}}}");
            (new_headers(method, Some(id)), params)
        }
    };
    let body =
        format!(r#"{{"jsonrpc": "2.0", "id": 9, "method": "{method}", "params": {params}}}"#);
    post_text(url, token, &headers, body).await.body
}

/// The spellings of a task's params an attacker may try, `{id}` for the id.
const TASK_PARAMS: [&str; 5] = [
    r#"{"taskId": "{id}"}"#,
    r#"{"taskId": "{id}", "inputResponses": {"x": {"action": "cancel"}}}"#,
    r#"{"taskId": "nope", "taskId": "{id}"}"#,
    r#"{"task\u0049d": "{id}"}"#,
    r#"{"taskId": "{id}", "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "{id}"}}}"#,
];

/// Whether `answer` is the error a task that does not exist gets, once its
/// id is out of the message.
fn reads_as_unknown(answer: &Value, id: &str, unknown: &Value) -> bool {
    let message = |v: &Value, id: &str| v["error"]["message"].as_str().map(|m| m.replace(id, "ID"));
    let same = answer.get("result").is_none()
        && answer["error"]["code"] == unknown["error"]["code"]
        && message(answer, id) == message(unknown, "00000000-0000-4000-8000-000000000000");
    if !same {
        println!("{answer} differs from {unknown}");
    }
    same
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_its_starters_alone() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let registry = Arc::new(ToolRegistry::new());
        registry.register(WaitLongTool).unwrap();
        let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        let mut tally = Tally::new("tasks of another session");
        let url = serve(McpServer::new(Arc::clone(&registry)), false, no_auth, &stop).await;
        let alice = open_session(&url, None, tasks.clone()).await;
        let mallory = open_session(&url, None, tasks.clone()).await;
        let id = start_task(&url, None, Some(&alice), "wait_long")
            .await
            .unwrap();
        let never = "00000000-0000-4000-8000-000000000000";
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            for spelling in TASK_PARAMS {
                let unknown = on_task(&url, None, Some(&mallory), method, spelling, never).await;
                assert!(unknown.get("error").is_some(), "{unknown}");
                for guess in [id.clone(), id.to_uppercase(), format!(" {id}")] {
                    let answer =
                        on_task(&url, None, Some(&mallory), method, spelling, &guess).await;
                    tally.count(reads_as_unknown(&answer, &guess, &unknown));
                }
            }
        }
        tally.all_refused();
        // The starter still sees it working: nothing was cancelled.
        let own = on_task(&url, None, Some(&alice), "tasks/get", TASK_PARAMS[0], &id).await;
        assert_eq!(own["result"]["status"], "working", "{own}");

        // Without sessions, the verified issuer and subject own a task.
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let url = serve(McpServer::new(registry), true, resource(&jwks.url), &stop).await;
        let alice = key.sign(&claims(&url, ISSUER, Some("alice")));
        let others = [
            key.sign(&claims(&url, ISSUER, Some("bob"))),
            key.sign(&claims(&url, OTHER_ISSUER, Some("alice"))),
            key.sign(&claims(&url, ISSUER, Some("Alice"))),
            key.sign(&claims(&url, ISSUER, Some("\u{430}lice"))),
            key.sign(&claims(&url, ISSUER, None)),
        ];
        let id = start_task(&url, Some(&alice), None, "wait_long")
            .await
            .unwrap();
        let mut tally = Tally::new("tasks of another token");
        for token in &others {
            for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
                for spelling in TASK_PARAMS {
                    let unknown = on_task(&url, Some(token), None, method, spelling, never).await;
                    let answer = on_task(&url, Some(token), None, method, spelling, &id).await;
                    tally.count(reads_as_unknown(&answer, &id, &unknown));
                }
            }
        }
        tally.all_refused();
        let own = on_task(&url, Some(&alice), None, "tasks/get", TASK_PARAMS[0], &id).await;
        assert_eq!(own["result"]["status"], "working", "{own}");
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_capped_per_caller_and_in_all() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let registry = Arc::new(ToolRegistry::new());
        registry.register(WaitLongTool).unwrap();
        let server = McpServer::new(registry).with_task_limits(3, 5);
        let url = serve(server, false, no_auth, &stop).await;
        let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        let first = open_session(&url, None, tasks.clone()).await;
        let second = open_session(&url, None, tasks.clone()).await;
        let mut started = 0;
        let mut tally = Tally::new("tasks past the caps");
        for _ in 0..3 {
            start_task(&url, None, Some(&first), "wait_long")
                .await
                .unwrap();
            started += 1;
        }
        let refusal = start_task(&url, None, Some(&first), "wait_long")
            .await
            .unwrap_err();
        let message = refusal["error"]["message"].as_str().unwrap_or_default();
        tally.count(message.contains("3 tasks"));
        println!("refused: {message}");
        // Another caller still may, until the server's cap.
        for _ in 0..2 {
            start_task(&url, None, Some(&second), "wait_long")
                .await
                .unwrap();
            started += 1;
        }
        let third = open_session(&url, None, tasks).await;
        let refusal = start_task(&url, None, Some(&third), "wait_long")
            .await
            .unwrap_err();
        let message = refusal["error"]["message"].as_str().unwrap_or_default();
        println!("refused: {message}");
        tally.count(message.contains("5 tasks"));
        assert_eq!(started, 5);
        tally.all_refused();
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_result_is_shaped_as_a_direct_calls() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let registry = Arc::new(ToolRegistry::new());
        registry.register(LongReportTool).unwrap();
        let url = serve(McpServer::new(registry), false, no_auth, &stop).await;
        let plain = open_session(&url, None, json!({})).await;
        let headers = [
            ("mcp-session-id", plain.as_str()),
            ("mcp-protocol-version", OLD),
        ];
        let call = request(
            7,
            "tools/call",
            json!({"name": "long_report", "arguments": {}}),
        );
        let direct = post(&url, None, &headers, &call).await;
        let direct = result_text(&direct).expect("a direct result");
        assert!(direct.len() < 20_000, "a direct call's result is cut");
        let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        let session = open_session(&url, None, tasks).await;
        let id = start_task(&url, None, Some(&session), "long_report")
            .await
            .unwrap();
        let result = loop {
            let got = on_task(&url, None, Some(&session), "tasks/get", TASK_PARAMS[0], &id).await;
            if got["result"]["status"] == "completed" {
                break got;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let text = result["result"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        println!("direct {} chars, task {} chars", direct.len(), text.len());
        assert!(text == direct, "the task's result is not the direct call's");
        stop.cancel();
    })
    .await
    .unwrap();
}

// ---------------------------------------------------------------- 2. JWKS

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_jwks_is_asked_once_per_interval_however_many_tokens_come() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], FAILING, stop.clone()).await;
        let registry = Arc::new(ToolRegistry::new());
        registry.register(session_key_tool()).unwrap();
        let url = serve(McpServer::new(registry), true, resource(&jwks.url), &stop).await;
        let call = request(7, "tools/call", json!({"name": "my_key", "arguments": {}}));
        let kids = [
            Some("k1"),
            Some("x1"),
            Some("K1"),
            Some("k1 "),
            Some("k\u{200b}1"),
            Some("\u{ff4b}1"),
            Some(""),
            None,
        ];
        let mut tally = Tally::new("unknown keys while the JWKS fails");
        for mode in [FAILING, GARBAGE] {
            jwks.mode.store(mode, Ordering::SeqCst);
            for kid in kids {
                for _ in 0..3 {
                    let mut signer = Key::new("any");
                    signer.kid = kid.map(str::to_owned);
                    let token = signer.sign(&claims(&url, ISSUER, Some("alice")));
                    let reply = post(&url, Some(&token), &[], &call).await;
                    tally.count(reply.status == 503 || reply.status == 401);
                }
            }
        }
        tally.all_refused();
        let fetches = jwks.fetches.load(Ordering::SeqCst);
        println!("{} tokens, {fetches} fetches", tally.tried);
        assert_eq!(fetches, 1, "one attempt per interval");
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jwks_is_tried_again_once_the_interval_has_passed() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], FAILING, stop.clone()).await;
        let jwks_url = jwks.url.clone();
        let auth = move |url: String| {
            let verifier = JwtVerifier::new(jwks_url.clone(), ISSUER, url.clone())
                .refresh_interval(Duration::from_millis(200));
            Some(OAuthResource::new(url, ISSUER, verifier))
        };
        let registry = Arc::new(ToolRegistry::new());
        registry.register(session_key_tool()).unwrap();
        let url = serve(McpServer::new(registry), true, auth, &stop).await;
        let call = request(7, "tools/call", json!({"name": "my_key", "arguments": {}}));
        let token = key.sign(&claims(&url, ISSUER, Some("alice")));
        for _ in 0..3 {
            let reply = post(&url, Some(&token), &[], &call).await;
            assert_eq!(reply.status, 503, "{}", reply.body);
        }
        assert_eq!(jwks.fetches.load(Ordering::SeqCst), 1);
        jwks.mode.store(HEALTHY, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let reply = post(&url, Some(&token), &[], &call).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(jwks.fetches.load(Ordering::SeqCst), 2);
        stop.cancel();
    })
    .await
    .unwrap();
}

// ---------------------------------------------------------------- 3. headers

fn mirrored_tool(seen: &Arc<Mutex<Vec<Value>>>) -> Recorder {
    let schema = json!({"type": "object", "additionalProperties": false, "properties": {
        "region": {"type": "string", "enum": ["eu", "us"], "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "loud": {"type": "boolean", "x-mcp-header": "Loud"},
        "note": {"type": "string"}}});
    Recorder {
        spec: ToolSpec::new("place", "Place something in a region.", schema),
        seen: Arc::clone(seen),
    }
}

/// A class of attack, the arguments as written, and the headers sent.
type MirrorCase = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirrored_header_says_what_the_tool_receives() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let registry = Arc::new(ToolRegistry::new());
        registry.register(mirrored_tool(&seen)).unwrap();
        let url = serve(McpServer::new(registry), true, no_auth, &stop).await;
        // (class, arguments as written, headers): each would have the tool
        // receive a value its header does not say.
        let cases: &[MirrorCase] = &[
            ("key spelling", r#"{"REGION": "us"}"#, &[]),
            ("key spelling", r#"{"Region": "us"}"#, &[]),
            ("key spelling", r#"{"re-gion": "us"}"#, &[]),
            ("key spelling", r#"{"REGION": "us"}"#, &[("Mcp-Param-Region", "eu")]),
            ("key spelling", r#"{"\u0052egion": "us"}"#, &[]),
            ("envelope", r#"{"arguments": {"region": "us"}}"#, &[]),
            ("envelope", r#"{"arguments": "{\"region\": \"us\"}"}"#, &[]),
            ("envelope", r#"{"arguments": {"priority": 9}}"#, &[]),
            ("cast value", r#"{"region": "US"}"#, &[("Mcp-Param-Region", "US")]),
            ("cast value", r#"{"region": "Eu"}"#, &[("Mcp-Param-Region", "=?base64?RXU=?=")]),
            ("cast value", r#"{"priority": "9.0"}"#, &[("Mcp-Param-Priority", "9.0")]),
            ("cast value", r#"{"priority": 9.0}"#, &[("Mcp-Param-Priority", "9.0")]),
            ("cast value", r#"{"priority": "0009"}"#, &[("Mcp-Param-Priority", "0009")]),
            ("cast value", r#"{"loud": "yes"}"#, &[("Mcp-Param-Loud", "yes")]),
            ("cast value", r#"{"loud": "TRUE"}"#, &[("Mcp-Param-Loud", "TRUE")]),
            ("cast value", r#"{"loud": 1}"#, &[("Mcp-Param-Loud", "1")]),
            ("duplicate keys", r#"{"region": "eu", "REGION": "us"}"#, &[("Mcp-Param-Region", "eu")]),
        ];
        let mut tallies: Vec<Tally> = Vec::new();
        for (class, arguments, extra) in cases {
            let before = seen.lock().unwrap().len();
            let mut headers = new_headers("tools/call", Some("place"));
            headers.extend_from_slice(extra);
            let meta = new_meta(json!({}));
            let body = format!(
                r#"{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {{"name": "place", "arguments": {arguments}, "_meta": {meta}}}}}"#
            );
            let reply = post_text(&url, None, &headers, body).await;
            let ran = seen.lock().unwrap().get(before).cloned();
            // Refused (the tool never ran), or the tool received what the
            // headers say: either way the attack failed.
            let consistent = match &ran {
                None => true,
                Some(args) => ["Region", "Priority", "Loud"].iter().all(|suffix| {
                    let name = suffix.to_lowercase();
                    let name = if name == "region" { "region" } else { &name };
                    let header = extra
                        .iter()
                        .find(|(h, _)| h.eq_ignore_ascii_case(&format!("Mcp-Param-{suffix}")))
                        .map(|(_, v)| (*v).to_owned());
                    let received = args.get(name).map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    header == received
                }),
            };
            if !consistent {
                println!("{class}: {arguments} {extra:?} -> tool got {ran:?} ({})", reply.status);
            }
            match tallies.iter_mut().find(|t| t.class == *class) {
                Some(tally) => tally.count(consistent),
                None => {
                    let mut tally = Tally::new(class);
                    tally.count(consistent);
                    tallies.push(tally);
                }
            }
            if ran.is_none() && reply.status != 400 {
                // Refused by the call itself (not an argument the tool takes).
                assert_eq!(result_text(&reply), None, "{class} {arguments}");
            }
        }
        for tally in &tallies {
            tally.all_refused();
        }
        // What the conformance scenario sends still passes.
        for (arguments, header) in [
            (r#"{"region": "eu"}"#, "eu"),
            (r#"{"region": "us"}"#, "=?base64?dXM=?="),
        ] {
            let mut headers = new_headers("tools/call", Some("place"));
            headers.push(("Mcp-Param-Region", header));
            let meta = new_meta(json!({}));
            let body = format!(
                r#"{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {{"name": "place", "arguments": {arguments}, "_meta": {meta}}}}}"#
            );
            let reply = post_text(&url, None, &headers, body).await;
            assert!(result_text(&reply).is_some(), "{}", reply.body);
        }
        stop.cancel();
    })
    .await
    .unwrap();
}

// ---------------------------------------------------------------- 4. keys

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_request_cannot_choose_its_session_key() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let registry = Arc::new(ToolRegistry::new());
        registry.register(session_key_tool()).unwrap();
        let limited = Pipeline::new().layer(CallLimits::new().per_session(3));
        let server = McpServer::new(Arc::clone(&registry)).with_pipeline(limited);
        let url = serve(server, true, resource(&jwks.url), &stop).await;
        let call = request(7, "tools/call", json!({"name": "my_key", "arguments": {}}));
        let alice = key.sign(&claims(&url, ISSUER, Some("alice")));
        let bob = key.sign(&claims(&url, ISSUER, Some("bob")));
        let key_of = async |token: &str, headers: &[(&str, &str)]| {
            let reply = post(&url, Some(token), headers, &call).await;
            result_text(&reply)
        };
        let alices = key_of(&alice, &[]).await.expect("alice's key");
        let bobs = key_of(&bob, &[]).await.expect("bob's key");
        assert_ne!(alices, bobs);
        let bob_raw: String = serde_json::from_str(&bobs).unwrap();
        let chosen: Vec<Vec<(&str, &str)>> = vec![
            vec![("mcp-session-id", "shared")],
            vec![("MCP-SESSION-ID", "shared")],
            vec![("Mcp-Session-Id", "mcp-subject:bob")],
            vec![("mcp-session-id", bob_raw.as_str())],
            vec![("mcp-session-id", " shared ")],
            vec![("mcp-session-id", "a"), ("mcp-session-id", "b")],
            vec![("mcp-session-id", "fresh-1")],
        ];
        // Alice has two calls left of three; whatever she sends, her key is hers.
        let mut tally = Tally::new("chosen session keys, with a token");
        for headers in &chosen {
            let got = key_of(&alice, headers).await;
            tally.count(got.as_ref().is_none_or(|k| *k == alices));
        }
        tally.all_refused();
        // Bob's limit was not spent by Alice: two calls left.
        assert!(key_of(&bob, &[]).await.is_some());
        assert!(key_of(&bob, &[]).await.is_some());
        assert!(
            key_of(&bob, &[]).await.is_none(),
            "bob's fourth call is refused"
        );

        // Without a token, requests of no session cannot be told apart: no
        // key at all, whatever they send.
        let url = serve(McpServer::new(registry), true, no_auth, &stop).await;
        let mut tally = Tally::new("chosen session keys, without a token");
        for headers in &chosen {
            let reply = post(&url, None, headers, &call).await;
            tally.count(result_text(&reply).as_deref() == Some("null"));
        }
        tally.all_refused();
        stop.cancel();
    })
    .await
    .unwrap();
}

// ---------------------------------------------------------------- 5. owners

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_kept_to_its_issuer_and_subject() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let registry = Arc::new(ToolRegistry::new());
        registry.register(session_key_tool()).unwrap();
        let url = serve(McpServer::new(registry), false, resource(&jwks.url), &stop).await;
        let alice = key.sign(&claims(&url, ISSUER, Some("alice")));
        let session = open_session(&url, Some(&alice), json!({})).await;
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", OLD),
        ];
        let call = request(7, "tools/call", json!({"name": "my_key", "arguments": {}}));
        let own = post(&url, Some(&alice), &headers, &call).await;
        assert!(result_text(&own).is_some(), "{}", own.body);
        let mut client_alice = claims(&url, ISSUER, None);
        client_alice["client_id"] = json!("alice");
        let mut azp_alice = claims(&url, ISSUER, None);
        azp_alice["azp"] = json!("alice");
        let others = [
            ("other issuer", claims(&url, OTHER_ISSUER, Some("alice"))),
            ("client id as subject", client_alice),
            ("azp as subject", azp_alice),
            ("case", claims(&url, ISSUER, Some("Alice"))),
            ("space", claims(&url, ISSUER, Some("alice "))),
            ("lookalike", claims(&url, ISSUER, Some("\u{430}lice"))),
            ("no subject", claims(&url, ISSUER, None)),
        ];
        let mut tally = Tally::new("another identity in the session");
        for (what, claims) in &others {
            let reply = post(&url, Some(&key.sign(claims)), &headers, &call).await;
            if reply.status != 404 {
                println!("{what}: {} {}", reply.status, reply.body);
            }
            tally.count(reply.status == 404);
        }
        tally.all_refused();
        stop.cancel();
    })
    .await
    .unwrap();
}

// ---------------------------------------------------------------- 6. answers

/// One round of `two_names` on protocol 2026-07-28: the body of the answer.
async fn two_names_round(url: &str, state: Option<&str>, responses: &str) -> Value {
    let meta = new_meta(json!({"elicitation": {"form": {}}}));
    let mut params = format!(r#"{{"name": "two_names", "arguments": {{}}, "_meta": {meta}"#);
    if let Some(state) = state {
        params.push_str(&format!(r#", "requestState": {}"#, json!(state)));
    }
    if !responses.is_empty() {
        params.push_str(&format!(r#", "inputResponses": {responses}"#));
    }
    params.push('}');
    let body =
        format!(r#"{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {params}}}"#);
    post_text(
        url,
        None,
        &new_headers("tools/call", Some("two_names")),
        body,
    )
    .await
    .body
}

fn named(name: &str) -> String {
    json!({"action": "accept", "content": {"name": name}}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_count_only_for_the_questions_asked() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let registry = Arc::new(ToolRegistry::new());
        registry.register(TwoNamesTool).unwrap();
        let url = serve(McpServer::new(registry), true, no_auth, &stop).await;
        let (ada, bob, evil) = (named("Ada"), named("Bob"), named("Evil"));
        // The honest rounds: `first` asked, answered; `second` asked, answered.
        let round = two_names_round(&url, None, "").await;
        assert_eq!(round["result"]["resultType"], "input_required", "{round}");
        let first_state = round["result"]["requestState"].as_str().unwrap().to_owned();
        let round =
            two_names_round(&url, Some(&first_state), &format!(r#"{{"first": {ada}}}"#)).await;
        assert_eq!(round["result"]["resultType"], "input_required", "{round}");
        let second_state = round["result"]["requestState"].as_str().unwrap().to_owned();
        let done = two_names_round(
            &url,
            Some(&second_state),
            &format!(r#"{{"second": {bob}}}"#),
        )
        .await;
        assert_eq!(done["result"]["content"][0]["text"], "Ada Bob", "{done}");

        // Answers to questions not asked yet, and answers replacing signed ones.
        let attacks: Vec<(&str, Option<&str>, String)> = vec![
            (
                "unasked, no state",
                None,
                format!(r#"{{"first": {evil}, "second": {evil}}}"#),
            ),
            (
                "unasked, no state",
                None,
                format!(r#"{{"\u0066irst": {evil}, "second": {evil}}}"#),
            ),
            (
                "unasked",
                Some(&first_state),
                format!(r#"{{"first": {ada}, "second": {evil}}}"#),
            ),
            (
                "unasked",
                Some(&first_state),
                format!(r#"{{"first": {ada}, "s\u0065cond": {evil}}}"#),
            ),
            (
                "unasked",
                Some(&first_state),
                format!(r#"{{"first": {ada}, "second": {evil}, "second": {evil}}}"#),
            ),
            (
                "replacing",
                Some(&second_state),
                format!(r#"{{"first": {evil}, "second": {bob}}}"#),
            ),
            (
                "replacing",
                Some(&second_state),
                format!(r#"{{"fir\u0073t": {evil}, "second": {bob}}}"#),
            ),
            (
                "replacing",
                Some(&second_state),
                format!(r#"{{"second": {bob}, "first": {ada}, "first": {evil}}}"#),
            ),
            (
                "replacing",
                Some(&second_state),
                format!(r#"{{"first": {{"action": "decline"}}, "second": {bob}}}"#),
            ),
        ];
        let mut tallies: Vec<Tally> = Vec::new();
        for (class, state, responses) in &attacks {
            let answer = two_names_round(&url, *state, responses).await;
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            let refused = !text.contains("Evil") && !text.contains('?');
            if !refused {
                println!("{class}: {responses} -> {answer}");
            }
            match tallies.iter_mut().find(|t| t.class == *class) {
                Some(tally) => tally.count(refused),
                None => {
                    let mut tally = Tally::new(class);
                    tally.count(refused);
                    tallies.push(tally);
                }
            }
        }
        for tally in &tallies {
            tally.all_refused();
        }
        // A lookalike key is another key: never an answer to `first`.
        let lookalike = two_names_round(&url, None, &format!(r#"{{"\ufb01rst": {evil}}}"#)).await;
        assert_eq!(
            lookalike["result"]["resultType"], "input_required",
            "{lookalike}"
        );
        stop.cancel();
    })
    .await
    .unwrap();
}

// ---------------------------------------------------------------- 7. envelopes

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hidden_parameter_of_a_mounted_tool_stays_hidden_in_any_envelope() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let schema = json!({"type": "object", "properties": {
            "filter": {"type": "string"},
            "include_secret": {"type": "boolean"}}});
        let served = Arc::new(ToolRegistry::new());
        served
            .register(Recorder {
                spec: ToolSpec::new("list_files", "List files.", schema),
                seen: Arc::clone(&seen),
            })
            .unwrap();
        let url = serve(McpServer::new(served), false, no_auth, &stop).await;
        let config = McpConfig::from_json(
            &json!({"mcpServers": {"srv": {"url": url, "type": "streamableHttp"}}}),
        )
        .unwrap();
        let mounted = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(config, &mounted);
        for (_, outcome) in clients.connect().await {
            outcome.expect("connected");
        }
        let toolbox = Toolset::from_registry(&mounted)
            .transform_arg(
                "mcp_srv_list_files",
                "include_secret",
                ArgTransform::new().hide(),
            )
            .build()
            .unwrap();
        let registry = ToolRegistry::new();
        toolbox.register(&registry).unwrap();
        let secret = json!({"include_secret": true});
        let text = secret.to_string();
        let twice = json!({"arguments": secret}).to_string();
        let attacks = [
            json!({"include_secret": true}),
            json!({"arguments": {"arguments": secret}}),
            json!({"arguments": {"arguments": text}}),
            json!({"arguments": json!({"arguments": secret}).to_string()}),
            json!({"arguments": {"arguments": twice}}),
            json!({"arguments": {"arguments": {"arguments": secret}}}),
            json!({"arguments": {"arguments": {"arguments": {"arguments": secret}}}}),
            json!(json!({"arguments": {"arguments": secret}}).to_string()),
            json!({"arguments": {"arguments": {"include_secret": "yes"}}}),
            json!({"arguments": {"arguments": {"INCLUDE_SECRET": true}}}),
            json!({"arguments": {"arguments": {"include-secret": true}}}),
        ];
        let mut tally = Tally::new("hidden parameter in envelopes");
        let ctx = ToolContext::new();
        for attack in attacks {
            let before = seen.lock().unwrap().len();
            let out = registry
                .call("mcp_srv_list_files", attack.clone(), &ctx)
                .await;
            let reached = seen.lock().unwrap()[before..].to_vec();
            let leaked = reached.iter().any(|args| {
                args.to_string()
                    .to_lowercase()
                    .replace('-', "_")
                    .contains("include_secret")
            });
            if leaked {
                println!("{attack} -> {reached:?} ({})", out.content);
            }
            tally.count(!leaked);
        }
        tally.all_refused();
        // An honest call still runs.
        let out = registry
            .call("mcp_srv_list_files", json!({"filter": "*.md"}), &ctx)
            .await;
        assert!(!out.is_error, "{}", out.content);
        clients.disconnect().await;
        stop.cancel();
    })
    .await
    .unwrap();
}
