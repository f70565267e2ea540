//! Tools that fail the ways every entry point must report alike: one that
//! outlives its timeout, one that panics, one whose arguments are checked,
//! and a destructive one for the host's approval policy. The fixture server
//! serves them, and the tests call them in process too, so the texts can be
//! compared.

#![allow(dead_code)] // The server and each test use their own part of this.

use std::sync::Arc;
use std::time::Duration;

use tk::{Tool, ToolRegistry, tool};

/// Sleeps for `seconds`, past its own timeout of 1 s.
#[tool(read_only, timeout = 1)]
async fn oversleep(
    /// Seconds to sleep.
    #[arg(maximum = 60)]
    seconds: u64,
) -> String {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    format!("slept {seconds}s")
}

/// Panics with the message it is given.
#[tool(read_only)]
async fn boom(
    /// What the panic says.
    message: String,
) -> String {
    panic!("{message}")
}

/// Counts to `n`.
#[tool(read_only, idempotent)]
async fn count_to(
    /// How far to count.
    #[arg(minimum = 1, maximum = 10)]
    n: u32,
) -> String {
    (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
}

/// Erases a named record (it only says so).
#[tool(destructive)]
async fn erase(
    /// The record to erase.
    record: String,
) -> String {
    format!("erased {record}")
}

/// The tools above, for a registry.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(OversleepTool),
        Arc::new(BoomTool),
        Arc::new(CountToTool),
        Arc::new(EraseTool),
    ]
}

/// A registry of these tools alone.
pub fn registry() -> Arc<ToolRegistry> {
    let registry = ToolRegistry::new();
    for tool in tools() {
        registry
            .register_arc(tool)
            .expect("the bad-call tools are valid");
    }
    Arc::new(registry)
}
