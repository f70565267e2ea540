//! Scale-out behind a real load balancer: three fixture servers behind
//! HAProxy (`scripts/install_haproxy.sh`), reached by our MCP client through
//! the balancer alone (the client, or raw HTTP for an older protocol's
//! sessions).
//!
//! Stateless servers take any request wherever it lands: a thousand calls at
//! once, dealt round robin, each answer checked against its own arguments
//! and counted by the process that served it. Stateful servers keep each
//! session in one process: with HAProxy sticking on the `Mcp-Session-Id`
//! header, as the book shows, every request of a session (protocol
//! 2025-11-25 and older) reaches the process that opened it; without it,
//! the other replicas refuse the session.

#[path = "../haproxy.rs"]
mod haproxy;
#[path = "../peers.rs"]
mod peers;
#[path = "../raw_http.rs"]
mod raw_http;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tk::mcp::{McpClients, McpConfig};
use tk::{ToolContext, ToolRegistry};

use haproxy::{GLOBAL, Scratch};
use peers::Running;

/// Every test's body runs within this, so a server or balancer that hangs
/// fails the test instead of holding the suite.
async fn bounded<F: std::future::Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(120), body)
        .await
        .expect("the test did not finish within 120 s")
}

/// Three fixture servers over HTTP, with `extra` arguments.
fn replicas(extra: &[&str]) -> Vec<Running> {
    (0..3).map(|_| peers::fixture_http(extra)).collect()
}

/// A `backend` section of `replicas`, its lines after the `balance` line
/// from `rules`.
fn backend(replicas: &[Running], rules: &str) -> String {
    let mut section = format!("backend replicas\n    balance roundrobin\n{rules}");
    for (i, replica) in replicas.iter().enumerate() {
        let at = haproxy::authority(&replica.url);
        section.push_str(&format!("    server r{i} {at}\n"));
    }
    section
}

/// HAProxy on a free port in front of `backend`.
fn balancer(dir: &Scratch, backend: &str) -> Running {
    let port = peers::free_port();
    let config = format!(
        "{GLOBAL}
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas

{backend}"
    );
    haproxy::start(dir, &config, port)
}

/// Our client, its one server (`lb`) reached at `url`.
async fn client(url: &str) -> (Arc<ToolRegistry>, McpClients) {
    let config = McpConfig::from_json(&json!({"mcpServers": {"lb": {"url": url}}})).unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    for (server, outcome) in clients.connect().await {
        outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
    }
    (registry, clients)
}

/// `calls` calls of `which_replica` at once, each with its own message;
/// checks each answer carries its own message back, and returns how many
/// calls each process id served.
async fn call_all(registry: &Arc<ToolRegistry>, calls: usize) -> BTreeMap<u32, usize> {
    let mut running = tokio::task::JoinSet::new();
    for i in 0..calls {
        let registry = Arc::clone(registry);
        running.spawn(async move {
            let message = format!("call {i} of {calls}");
            let args = json!({"message": message});
            let out = registry
                .call("mcp_lb_which_replica", args, &ToolContext::new())
                .await;
            assert!(!out.is_error, "call {i}: {}", out.content);
            let answer: Value = serde_json::from_str(&out.content)
                .unwrap_or_else(|e| panic!("call {i}: {e}: {}", out.content));
            assert_eq!(answer["message"], message, "call {i} got another's answer");
            answer["pid"].as_u64().unwrap() as u32
        });
    }
    let mut served = BTreeMap::new();
    while let Some(pid) = running.join_next().await {
        *served.entry(pid.unwrap()).or_default() += 1;
    }
    served
}

fn pids(replicas: &[Running]) -> Vec<u32> {
    replicas.iter().map(|r| r.child.id()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_at_once_are_shared_by_three_stateless_replicas() {
    haproxy::raise_open_files_limit();
    let dir = Scratch::new("balancer");
    let replicas = replicas(&["--stateless"]);
    let _balancer = balancer(&dir, &backend(&replicas, ""));
    let url = _balancer.url.clone();
    bounded(async {
        let (registry, _clients) = client(&url).await;
        let served = call_all(&registry, 1000).await;
        eprintln!("calls served per replica (pid: calls): {served:?}");
        assert_eq!(served.values().sum::<usize>(), 1000);
        let ours = pids(&replicas);
        assert!(
            served.keys().all(|pid| ours.contains(pid)),
            "{served:?} from {ours:?}"
        );
        // Round robin deals the requests in turn: each replica serves about
        // a third of them (the client's own requests, such as the tool
        // list, take turns too).
        for pid in &ours {
            let calls = served.get(pid).copied().unwrap_or(0);
            assert!(
                calls >= 250,
                "replica {pid} served {calls} of 1000: {served:?}"
            );
        }
    })
    .await;
}

/// The lines the book gives for stateful servers: learn each session's
/// server from the `Mcp-Session-Id` header of the answer that opened it,
/// and send each request that carries the header there.
const STICK_ON_SESSION: &str = "\
    stick-table type string len 128 size 100k expire 1h
    stick store-response res.hdr(mcp-session-id)
    stick match req.hdr(mcp-session-id)
";

/// `which_replica` called over raw HTTP in the session `session` (protocol
/// 2025-11-25, whose sessions live in one process): the status, and the
/// process id that answered when the call succeeded.
fn call_in_session(url: &str, session: &str, message: &str) -> (u16, Option<u32>) {
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "which_replica", "arguments": {"message": message}}});
    let headers = [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (status, response) = raw_http::post(url, &headers, &call);
    if status != 200 {
        return (status, None);
    }
    // The answer is JSON or an event of a stream, perhaps in chunks: the
    // line that is the JSON-RPC answer.
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    let json = body
        .lines()
        .map(|line| line.strip_prefix("data:").unwrap_or(line).trim())
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|answer| answer.get("jsonrpc").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC answer in {response}"));
    let text = json["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {json}"));
    let answer: Value = serde_json::from_str(text).unwrap();
    assert_eq!(answer["message"], message, "{json}");
    (status, answer["pid"].as_u64().map(|pid| pid as u32))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateful_sessions_stay_with_their_replica_when_the_balancer_sticks_on_the_session_id() {
    let dir = Scratch::new("sticky");
    let replicas = replicas(&[]);
    let balancer = balancer(&dir, &backend(&replicas, STICK_ON_SESSION));
    let url = balancer.url.clone();
    let homes = bounded(tokio::task::spawn_blocking(move || {
        // Three sessions opened in turn: round robin puts them on different
        // replicas, and every request of each stays where it began.
        let mut homes = Vec::new();
        for s in 0..3 {
            let session = raw_http::open_session(&url);
            let mut served = BTreeMap::<u32, usize>::new();
            for i in 0..20 {
                let (status, pid) = call_in_session(&url, &session, &format!("{s}.{i}"));
                assert_eq!(status, 200, "session {s}, call {i}");
                *served.entry(pid.unwrap()).or_default() += 1;
            }
            eprintln!("session {s}'s calls (pid: calls): {served:?}");
            assert_eq!(
                served.len(),
                1,
                "session {s}'s calls were split: {served:?}"
            );
            homes.push(*served.keys().next().unwrap());
        }
        homes
    }))
    .await
    .unwrap();
    let ours = pids(&replicas);
    assert!(homes.iter().all(|pid| ours.contains(pid)), "{homes:?}");
    let distinct: std::collections::BTreeSet<_> = homes.iter().collect();
    assert_eq!(distinct.len(), 3, "sessions not spread: {homes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_affinity_a_stateful_session_is_lost_on_the_other_replicas() {
    let dir = Scratch::new("unsticky");
    let replicas = replicas(&[]);
    let balancer = balancer(&dir, &backend(&replicas, ""));
    let url = balancer.url.clone();
    let statuses = bounded(tokio::task::spawn_blocking(move || {
        // `initialize` alone (what follows it takes turns too).
        let (status, response) = raw_http::post(&url, &[], &raw_http::initialize());
        assert_eq!(status, 200, "{response}");
        let session = response
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no session id: {response}"));
        (0..3)
            .map(|i| call_in_session(&url, &session, &i.to_string()).0)
            .collect::<Vec<_>>()
    }))
    .await
    .unwrap();
    eprintln!("a session's next three requests, dealt round robin: {statuses:?}");
    // Two of the next three requests reach replicas that never saw the
    // session, and are refused.
    assert_eq!(
        statuses.iter().filter(|s| **s == 404).count(),
        2,
        "{statuses:?}"
    );
}
