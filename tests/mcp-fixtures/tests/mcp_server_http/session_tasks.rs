//! A task belongs to the session that started it: only that session
//! reaches it again, so when the session is closed the task is stopped,
//! not left running where no request can read or cancel it.

use std::time::Duration;

use serde_json::json;
use tk::mcp::HttpOptions;

use crate::raw_http;
use crate::support::{Served, bounded, header, in_session, meta, status};

const BOUND: Duration = Duration::from_secs(60);

/// A session of client 127.0.0.`client` whose client takes tasks: its id.
async fn open_taking_tasks(served: &Served, client: u8) -> String {
    let mut initialize = raw_http::initialize();
    initialize["params"]["capabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let answer = served
        .exchange(
            client,
            served.post(&initialize, &[]),
            Duration::from_secs(10),
        )
        .await;
    let session = header(&answer, "mcp-session-id").expect("a session");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    served
        .exchange(
            client,
            served.post(&initialized, &in_session(&session)),
            Duration::from_secs(10),
        )
        .await;
    session
}

/// A call of `block_task` in `session`, counted as `counted`.
fn task_call(served: &Served, session: &str, id: u64, counted: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "block_task", "arguments": {"client": counted}}});
    served.post(&body, &in_session(session))
}

/// Two sessions each start a task that waits at the gate; one session is
/// deleted: its task stops (the tool's future dropped), the other's runs
/// on until released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_sessions_task_stops_and_another_sessions_runs_on() {
    let served = Served::new(HttpOptions::default()).await;
    bounded(BOUND, async {
        let closing = open_taking_tasks(&served, 2).await;
        let staying = open_taking_tasks(&served, 3).await;
        for (session, counted, id) in [(&closing, "closing", 1), (&staying, "staying", 2)] {
            let answer = served
                .exchange(
                    2,
                    task_call(&served, session, id, counted),
                    Duration::from_secs(10),
                )
                .await;
            assert!(answer.contains("taskId"), "a task: {answer}");
        }
        assert_eq!(
            served
                .gate
                .wait_running("closing", 1, Duration::from_secs(10))
                .await,
            1
        );
        assert_eq!(
            served
                .gate
                .wait_running("staying", 1, Duration::from_secs(10))
                .await,
            1
        );

        let deleted = served
            .exchange(2, served.delete(&closing), Duration::from_secs(10))
            .await;
        assert!((200..300).contains(&status(&deleted)), "{deleted}");
        assert_eq!(
            served
                .gate
                .wait_stopped("closing", Duration::from_secs(10))
                .await,
            0,
            "the deleted session's task still runs"
        );
        assert_eq!(
            served.gate.running("staying"),
            1,
            "the other session's task was stopped too"
        );
        served.gate.release();
        assert_eq!(served.gate.wait_idle().await, 0);
    })
    .await;
}

/// A request of protocol 2026-07-28 belongs to no session, whatever
/// `Mcp-Session-Id` it names (the id is not checked on that path): its task
/// runs on as the same call's without the header does, where it used to
/// be taken for a task of the request's own handler, and stopped as that
/// handler went.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessionless_task_naming_a_session_runs_on() {
    let served = Served::new(HttpOptions::default()).await;
    bounded(BOUND, async {
        let session = open_taking_tasks(&served, 2).await;
        let call = |counted: &str, naming: bool| {
            let mut meta = meta();
            meta["io.modelcontextprotocol/clientCapabilities"] =
                json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
            let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "block_task", "arguments": {"client": counted},
                    "_meta": meta}});
            let mut headers = vec![
                "MCP-Protocol-Version: 2026-07-28".to_owned(),
                "Mcp-Method: tools/call".to_owned(),
                "Mcp-Name: block_task".to_owned(),
            ];
            if naming {
                headers.push(format!("Mcp-Session-Id: {session}"));
            }
            served.post(&body, &headers)
        };
        for (counted, naming) in [("plain", false), ("naming", true)] {
            let answer = served
                .exchange(3, call(counted, naming), Duration::from_secs(10))
                .await;
            assert!(answer.contains("taskId"), "{counted}: a task: {answer}");
            served
                .gate
                .wait_started(counted, 1, Duration::from_secs(10))
                .await;
        }
        // Time for a stop to land, had one been sent.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(served.gate.running("plain"), 1);
        assert_eq!(
            served.gate.running("naming"),
            1,
            "the task naming a session was stopped"
        );
        served.gate.release();
    })
    .await;
}

/// A full server gives a newcomer a session of a client over its part, an
/// idle one first: a session whose only work is a task running is not
/// idle, so the client's other session is given instead, and the task
/// runs on (it used to be taken for idle, and its task stopped with it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_running_a_task_is_not_given_to_another_client() {
    let served = Served::new(HttpOptions::default().max_sessions(2)).await;
    bounded(BOUND, async {
        let working = open_taking_tasks(&served, 2).await;
        let _spare = open_taking_tasks(&served, 2).await;
        let answer = served
            .exchange(
                2,
                task_call(&served, &working, 1, "long"),
                Duration::from_secs(10),
            )
            .await;
        assert!(answer.contains("taskId"), "a task: {answer}");
        served
            .gate
            .wait_running("long", 1, Duration::from_secs(10))
            .await;
        let newcomer = served.open(3).await;
        assert!(newcomer.is_ok(), "{newcomer:?}");
        // Time for a stop to land, had one been sent.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(served.gate.running("long"), 1, "the task was stopped");
        assert_eq!(served.ping(2, &working).await, 200, "its session was taken");
        served.gate.release();
    })
    .await;
}

/// A session is deleted while one of its tasks and one of its plain calls
/// both run: the task stops all the same, and so does the call (a running
/// call's handler holds the session's state, whose end stops the task: the
/// SDK cancels the session's requests as it closes, so neither outlives
/// it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_sessions_task_stops_while_another_of_its_calls_runs() {
    let served = Served::new(HttpOptions::default()).await;
    let mut tasks = tokio::task::JoinSet::new();
    bounded(BOUND, async {
        let session = open_taking_tasks(&served, 2).await;
        let answer = served
            .exchange(
                2,
                task_call(&served, &session, 1, "task"),
                Duration::from_secs(10),
            )
            .await;
        assert!(answer.contains("taskId"), "a task: {answer}");
        let plain = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "block", "arguments": {"client": "plain"}}});
        served.held(&mut tasks, 2, served.post(&plain, &in_session(&session)));
        for counted in ["task", "plain"] {
            assert_eq!(
                served
                    .gate
                    .wait_running(counted, 1, Duration::from_secs(10))
                    .await,
                1,
                "{counted} runs"
            );
        }

        let deleted = served
            .exchange(2, served.delete(&session), Duration::from_secs(10))
            .await;
        assert!((200..300).contains(&status(&deleted)), "{deleted}");
        for (counted, what) in [("task", "task"), ("plain", "call")] {
            assert_eq!(
                served
                    .gate
                    .wait_stopped(counted, Duration::from_secs(10))
                    .await,
                0,
                "the deleted session's {what} still runs"
            );
        }
    })
    .await;
    served.gate.release();
}
