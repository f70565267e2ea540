//! A task tool that asks first (`#[tool(task = required, asks_first)]`),
//! served stateful and stateless to raw requests of protocol 2026-07-28:
//! its question comes back as an input-required result, the call made
//! again with the answer becomes a task carrying the answer to its result,
//! and a question asked once it is a task waits in the task. Then the
//! attacks: answers the server did not ask for or of the wrong shape, a
//! request state of another call or altered, tasks never polled, and
//! cancellation while the task waits for an answer.

#[path = "../peers.rs"]
mod peers;
#[path = "../raw_http.rs"]
mod raw_http;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TOOL: &str = "test_tool_with_task";

/// The modes the server runs in: with sessions, and without.
const MODES: [&[&str]; 2] = [&[], &["--stateless"]];

/// One request of protocol 2026-07-28 (no session; the client says its
/// version and capabilities in the request), answered with its JSON-RPC
/// response. `name` is the tool's or the task's, for the header that must
/// match it.
fn request(url: &str, method: &str, name: Option<&str>, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    let (status, response) = raw_http::post(url, &headers, &body);
    let start = response
        .find("{\"jsonrpc\"")
        .unwrap_or_else(|| panic!("no JSON-RPC message ({status}): {response}"));
    serde_json::Deserializer::from_str(&response[start..])
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("not JSON ({status}): {response}"))
}

/// A call of the tool with `params` added to its name.
fn call(url: &str, mut params: Value) -> Value {
    params["name"] = json!(TOOL);
    request(url, "tools/call", Some(TOOL), params)
}

fn accept(name: Value) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

/// The first round of a call with `arguments`: its question and the state
/// to send back with the answer.
fn first_round(url: &str, arguments: &Value) -> String {
    let round = call(url, json!({"arguments": arguments}));
    let result = &round["result"];
    assert_eq!(result["resultType"], "input_required", "{round}");
    assert!(result.get("taskId").is_none(), "{round}");
    assert_eq!(
        result["inputRequests"]["user_name"]["method"], "elicitation/create",
        "{round}"
    );
    result["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no state: {round}"))
        .to_owned()
}

/// The task a call's last round answered with.
fn task_of(round: &Value) -> String {
    let result = &round["result"];
    assert_eq!(result["resultType"], "task", "{round}");
    assert!(result.get("requestState").is_none(), "{round}");
    assert!(result.get("inputRequests").is_none(), "{round}");
    result["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {round}"))
        .to_owned()
}

/// `tasks/get` until the task's status is one of `until` (bounded).
fn poll(url: &str, task: &str, until: &[&str]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = request(url, "tasks/get", Some(task), json!({"taskId": task}));
        let status = got["result"]["status"].as_str().unwrap_or_default();
        if until.contains(&status) {
            return got["result"].clone();
        }
        assert!(Instant::now() < deadline, "the task stayed {got}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn result_text(task: &Value) -> String {
    task["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {task}"))
        .to_owned()
}

#[test]
fn the_question_comes_in_a_round_and_the_work_runs_as_a_task() {
    for mode in MODES {
        let server = peers::fixture_http(mode);
        let url = &server.url;
        // The tool is still working when the task is made, and when done
        // within the first poll interval: a task either way.
        for work in [0.5, 0.0] {
            let arguments = json!({"work_seconds": work});
            let state = first_round(url, &arguments);
            let round = call(
                url,
                json!({"arguments": arguments, "requestState": state,
                    "inputResponses": {"user_name": accept(json!("Alice"))}}),
            );
            let task = poll(url, &task_of(&round), &["completed", "failed"]);
            assert_eq!(task["status"], "completed", "{mode:?} {work}: {task}");
            assert_eq!(result_text(&task), "Hello, Alice!", "{mode:?}");
        }
        // A question asked once the call is a task waits in the task.
        let arguments = json!({"work_seconds": 0.3, "confirm": true});
        let state = first_round(url, &arguments);
        let round = call(
            url,
            json!({"arguments": arguments, "requestState": state,
                "inputResponses": {"user_name": accept(json!("Bob"))}}),
        );
        let id = task_of(&round);
        let waiting = poll(url, &id, &["input_required", "completed", "failed"]);
        assert_eq!(waiting["status"], "input_required", "{waiting}");
        assert!(waiting["inputRequests"]["go_on"].is_object(), "{waiting}");
        let update = request(
            url,
            "tasks/update",
            Some(&id),
            json!({"taskId": id, "inputResponses": {"go_on": {"action": "accept", "content": {"confirm": true}}}}),
        );
        assert!(update.get("error").is_none(), "{update}");
        let task = poll(url, &id, &["completed", "failed"]);
        assert_eq!(result_text(&task), "Hello, Bob!", "{mode:?}: {task}");
    }
}

#[test]
fn answers_the_server_did_not_ask_for_never_reach_the_tool() {
    for mode in MODES {
        let server = peers::fixture_http(mode);
        let url = &server.url;
        let arguments = json!({"work_seconds": 0});
        // Answering ahead of the question, with no state: asked anyway.
        let round = call(
            url,
            json!({"arguments": arguments,
                "inputResponses": {"user_name": accept(json!("Mallory"))}}),
        );
        assert_eq!(round["result"]["resultType"], "input_required", "{round}");
        // Answers that are not results of the question asked: asked again,
        // with nothing made of them; answers to keys never asked: ignored.
        let deep = (0..100).fold(json!("x"), |inner, _| json!({"a": inner}));
        for hostile in [
            json!(42),
            json!(null),
            json!("Mallory"),
            json!([accept(json!("Mallory"))]),
            json!({"action": "accept", "content": "Mallory"}),
            json!({"action": "obey"}),
            json!({"action": "accept", "content": deep}),
            json!({"action": "accept", "content": {"name": "x".repeat(1 << 20)}}),
        ] {
            let state = first_round(url, &arguments);
            let round = call(
                url,
                json!({"arguments": arguments, "requestState": state,
                    "inputResponses": {"user_name": hostile, "go_on": accept(json!("?")),
                        "elicitation-1": accept(json!("?"))}}),
            );
            let result = &round["result"];
            if result["resultType"] == "task" {
                // A well-formed answer of another content: the tool reads
                // what it asked for, or does without.
                let task = poll(url, &task_of(&round), &["completed", "failed"]);
                let text = result_text(&task);
                assert!(text.starts_with("Hello, "), "{mode:?}: {text:.200}");
            } else {
                assert_eq!(result["resultType"], "input_required", "{round:.400}");
                assert!(result["inputRequests"]["user_name"].is_object());
                assert!(result["inputRequests"].get("go_on").is_none());
            }
        }
    }
}

#[test]
fn a_request_state_not_issued_for_this_call_is_refused() {
    for mode in MODES {
        let server = peers::fixture_http(mode);
        let url = &server.url;
        let arguments = json!({"work_seconds": 0, "confirm": false});
        let state = first_round(url, &arguments);
        let answer = json!({"user_name": accept(json!("Alice"))});
        let refused = |round: &Value| {
            assert!(round["result"].is_null(), "{mode:?}: {round}");
            let message = round["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains("requestState"), "{round}");
        };
        // Issued for the same tool with other arguments.
        let round = call(
            url,
            json!({"arguments": {"work_seconds": 5}, "requestState": state, "inputResponses": answer}),
        );
        refused(&round);
        // Issued for another tool.
        let other = request(
            url,
            "tools/call",
            Some("test_input_required_result_elicitation"),
            json!({"name": "test_input_required_result_elicitation", "arguments": {}}),
        );
        let other_state = other["result"]["requestState"].as_str().unwrap().to_owned();
        let round = call(
            url,
            json!({"arguments": {}, "requestState": other_state, "inputResponses": answer}),
        );
        refused(&round);
        // Altered, cut, empty, not a state at all.
        let mut altered = state.clone().into_bytes();
        let middle = altered.len() / 2;
        altered[middle] = if altered[middle] == b'A' { b'B' } else { b'A' };
        for forged in [
            String::from_utf8(altered).unwrap(),
            state[..state.len() / 2].to_owned(),
            String::new(),
            "x".repeat(100_000),
            "eyJhbnN3ZXJzIjp7fX0".to_owned(),
        ] {
            let round = call(
                url,
                json!({"arguments": arguments, "requestState": forged, "inputResponses": answer}),
            );
            refused(&round);
        }
        // The same call with its arguments in another order is the same call.
        let round = call(
            url,
            json!({"arguments": {"confirm": false, "work_seconds": 0},
                "requestState": state, "inputResponses": answer}),
        );
        let task = poll(url, &task_of(&round), &["completed", "failed"]);
        assert_eq!(result_text(&task), "Hello, Alice!");
    }
}

#[test]
fn tasks_never_polled_count_against_the_cap_until_they_end() {
    for mode in MODES {
        let mut args = vec!["--tasks-per-caller", "2"];
        args.extend_from_slice(mode);
        let server = peers::fixture_http(&args);
        let url = &server.url;
        let arguments = json!({"work_seconds": 2});
        let start = || {
            let state = first_round(url, &arguments);
            call(
                url,
                json!({"arguments": arguments, "requestState": state,
                    "inputResponses": {"user_name": accept(json!("Alice"))}}),
            )
        };
        // Two tasks started and never polled: a third is refused while
        // they run, and the call that asked for it with them.
        let first = task_of(&start());
        task_of(&start());
        let third = start();
        let message = third["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("too many tasks"), "{mode:?}: {third}");
        // Once they end, there is room again; an unpolled task's result
        // is kept for when it is asked for.
        let done = poll(url, &first, &["completed", "failed"]);
        assert_eq!(result_text(&done), "Hello, Alice!");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let round = start();
            if round["result"]["resultType"] == "task" {
                break;
            }
            assert!(Instant::now() < deadline, "never room again: {round}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn a_task_cancelled_while_it_waits_for_an_answer_ends_cancelled() {
    for mode in MODES {
        let server = peers::fixture_http(mode);
        let url = &server.url;
        let arguments = json!({"work_seconds": 0.3, "confirm": true});
        let state = first_round(url, &arguments);
        let round = call(
            url,
            json!({"arguments": arguments, "requestState": state,
                "inputResponses": {"user_name": accept(json!("Alice"))}}),
        );
        let id = task_of(&round);
        poll(url, &id, &["input_required"]);
        let cancel = request(url, "tasks/cancel", Some(&id), json!({"taskId": id}));
        assert!(cancel.get("error").is_none(), "{cancel}");
        let task = poll(url, &id, &["cancelled", "completed", "failed"]);
        assert_eq!(task["status"], "cancelled", "{mode:?}: {task}");
        // The answer that comes too late changes nothing.
        let late = request(
            url,
            "tasks/update",
            Some(&id),
            json!({"taskId": id, "inputResponses": {"go_on": {"action": "accept", "content": {}}}}),
        );
        let task = poll(url, &id, &["cancelled", "completed", "failed"]);
        assert_eq!(task["status"], "cancelled", "{late} then {task}");
    }
}
