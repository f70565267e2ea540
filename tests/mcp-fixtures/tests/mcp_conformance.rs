//! The official MCP conformance suite (`@modelcontextprotocol/conformance`):
//! every active server scenario against our fixture server over streamable
//! HTTP, and the client scenarios against our client. The suite's summary
//! lines are printed (run with `--nocapture` to see them).
//!
//! The suite comes from `scripts/mcp_peers.sh`.

#[path = "../peers.rs"]
mod peers;

use std::process::Command;

/// The suite measures timings (the SSE retry interval, say): its runs take
/// turns rather than compete for a small machine's cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn suite(args: &[&str]) -> (bool, String) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cli = peers::npm_script("@modelcontextprotocol/conformance", "dist/index.js");
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
