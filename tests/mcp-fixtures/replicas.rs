//! A tool that says which server process answered: the load-balancing
//! test runs several replicas of the fixture server behind one balancer and
//! counts the calls each served.

use tk::serde_json::json;
use tk::tool;

/// Returns `message` with the id of the process that served the call.
#[tool(read_only, idempotent)]
async fn which_replica(
    /// Returned as it came.
    message: String,
) -> String {
    json!({"message": message, "pid": std::process::id()}).to_string()
}

pub fn tools() -> Vec<std::sync::Arc<dyn tk::Tool>> {
    vec![std::sync::Arc::new(WhichReplicaTool)]
}
