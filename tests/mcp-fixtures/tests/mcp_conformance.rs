//! The official MCP conformance suite (`@modelcontextprotocol/conformance`):
//! every active server scenario against our fixture server over streamable
//! HTTP, and the client scenarios against our client. The suite's summary
//! lines are printed (run with `--nocapture` to see them).
//!
//! The newest suite (`conformance-next`, for protocol 2026-07-28 and the
//! tasks extension) runs every scenario against the server kept in
//! sessions and the stateless one, and its 2026-07-28 client scenarios
//! against our client.
//!
//! The suites come from `scripts/mcp_peers.sh`.

#[path = "../peers.rs"]
mod peers;

use std::process::Command;

/// The suite measures timings (the SSE retry interval, say): its runs take
/// turns rather than compete for a small machine's cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn suite(args: &[&str]) -> (bool, String) {
    suite_of("@modelcontextprotocol/conformance", args)
}

fn suite_of(package: &str, args: &[&str]) -> (bool, String) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cli = peers::npm_script(package, "dist/index.js");
    // The suite writes its results under the working directory.
    let dir = std::env::temp_dir().join(format!("mcp-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(peers::node())
        .arg(cli)
        .args(args)
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn every_active_server_scenario_passes() {
    let server = peers::fixture_http(&[]);
    let (ok, output) = suite(&["server", "--url", &server.url, "--suite", "active"]);
    let summary = &output[output.find("=== SUMMARY ===").unwrap_or(0)..];
    println!("{summary}");
    assert!(ok, "the conformance suite failed:\n{output}");
    let total = summary
        .lines()
        .find(|l| l.starts_with("Total:"))
        .expect("a total line");
    assert!(total.ends_with(" 0 failed"), "{total}");
    // Every scenario the suite lists as active was run.
    for scenario in [
        "server-initialize",
        "tools-call-with-progress",
        "tools-call-elicitation",
        "resources-subscribe",
        "prompts-get-with-image",
        "dns-rebinding-protection",
    ] {
        assert!(
            summary.contains(&format!("✓ {scenario}:")),
            "{scenario} missing:\n{summary}"
        );
    }
    assert!(!summary.contains('✗'), "{summary}");
}

#[test]
fn the_client_scenarios_pass() {
    let client = env!("CARGO_BIN_EXE_mcp-fixture-client");
    for scenario in [
        "initialize",
        "tools_call",
        "sse-retry",
        "elicitation-sep1034-client-defaults",
    ] {
        let (ok, output) = suite(&["client", "--command", client, "--scenario", scenario]);
        let results = &output[output.find("Test Results:").unwrap_or(0)..];
        println!(
            "{scenario}: {}",
            results.lines().nth(1).unwrap_or("").trim()
        );
        assert!(
            ok && output.contains("OVERALL: PASSED"),
            "{scenario} failed:\n{output}"
        );
        assert!(results.contains(" 0 failed"), "{scenario}:\n{results}");
    }
}

/// The newest suite's server scenarios our server does not pass yet, in
/// both modes: none.
const NOT_YET: &[&str] = &[];

/// Failing on a stateless server by design: 2025-11-25 scenarios whose
/// tools ask the client in the middle of a call, which that version can
/// only do on a session (the tool's question fails at once instead).
const NEED_A_SESSION: &[&str] = &[
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
];

/// Scenarios that measure timings (concurrent streams read within two
/// seconds, the stateless checks' warnings) and can fail on a loaded
/// machine: reported, not held against us.
const TIMING: &[&str] = &["server-sse-multiple-streams", "server-stateless"];

/// Run every scenario of the newest suite against the fixture server
/// started with `mode`; fail on any failing scenario not in `expected`.
fn newest_server_scenarios(mode: &[&str], expected: &[&str]) {
    let server = peers::fixture_http(mode);
    let (_, output) = suite_of(
        "conformance-next",
        &["server", "--url", &server.url, "--suite", "all"],
    );
    let summary = &output[output.find("=== SUMMARY ===").unwrap_or(0)..];
    let total = summary.lines().find(|l| l.starts_with("Total:"));
    println!("{mode:?}: {}", total.unwrap_or("no total"));
    assert!(total.is_some(), "the suite did not finish:\n{output}");
    let failing: Vec<&str> = summary
        .lines()
        .filter_map(|l| l.strip_prefix("✗ "))
        .filter_map(|l| l.split(':').next())
        .collect();
    for scenario in &failing {
        println!("  failing: {scenario}");
    }
    let unexpected: Vec<&&str> = failing
        .iter()
        .filter(|s| !expected.contains(s) && !TIMING.contains(s))
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?} failed:\n{summary}");
    for scenario in [
        "server-initialize",
        "input-required-result-multi-round",
        "tasks-lifecycle",
        "caching",
    ] {
        assert!(
            summary.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{summary}"
        );
    }
}

#[test]
fn the_newest_suite_passes_our_server_kept_in_sessions() {
    newest_server_scenarios(&[], NOT_YET);
}

#[test]
fn the_newest_suite_passes_our_stateless_server() {
    let expected: Vec<&str> = NOT_YET.iter().chain(NEED_A_SESSION).copied().collect();
    newest_server_scenarios(&["--stateless"], &expected);
}

#[test]
fn the_newest_suite_passes_the_2026_client_scenarios() {
    newest_client_scenarios(&[
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
    ]);
}

/// The newest suite's sign-in scenarios for our client (feature
/// `mcp-oauth`), with the suite's own authorization server, which approves
/// at once: all 27 of its client auth scenarios outside extensions.
#[test]
fn the_newest_suite_passes_the_client_sign_in_scenarios() {
    newest_client_scenarios(&[
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
        "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "auth/basic-cimd",
        "auth/scope-step-up",
        "auth/authorization-server-migration",
    ]);
}

/// Run each of the newest suite's client `scenarios` against our fixture
/// client; fail on the first that does not pass.
fn newest_client_scenarios(scenarios: &[&str]) {
    let client = env!("CARGO_BIN_EXE_mcp-fixture-client");
    for scenario in scenarios {
        let (ok, output) = suite_of(
            "conformance-next",
            &["client", "--command", client, "--scenario", scenario],
        );
        let results = &output[output.find("Test Results:").unwrap_or(0)..];
        println!(
            "{scenario}: {}",
            results.lines().nth(1).unwrap_or("").trim()
        );
        assert!(
            ok && output.contains("OVERALL: PASSED"),
            "{scenario} failed:\n{output}"
        );
    }
}
