//! Tools that run as tasks when served (`#[tool(task)]`), the fixtures the
//! conformance suite's `tasks-*` scenarios call by name.

use std::time::Duration;

use tk::mcp::ClientSession;
use tk::serde_json::{Value, json};
use tk::{ToolContext, ToolError, tool};

/// Greets someone at once (never a task).
#[tool(read_only)]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Sleeps for `seconds`, then says so; stops when cancelled.
#[tool(read_only, task)]
async fn slow_compute(
    ctx: &ToolContext,
    /// How long to work, in seconds.
    seconds: f64,
    /// A label to return.
    label: Option<String>,
) -> Result<String, ToolError> {
    let work = tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 600.0)));
    tokio::select! {
        () = work => Ok(format!("computed {}", label.unwrap_or_default())),
        () = ctx.cancellation().cancelled() => Err(ToolError::Cancelled),
    }
}

/// Fails after a second, as a tool does (a result marked as an error).
#[tool(read_only, task = required)]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::failed("the job failed"))
}

/// Panics.
#[tool(read_only, task)]
async fn protocol_error_job() -> String {
    panic!("the job crashed")
}

fn confirm_form(message: &str) -> Value {
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}, "name": {"type": "string"}},
        }
    })
}

/// Asks the user to confirm before deleting.
#[tool(destructive, task)]
async fn confirm_delete(
    session: &ClientSession,
    /// What to delete.
    filename: Option<String>,
) -> Result<String, ToolError> {
    let answer = session.elicit(confirm_form("Delete it?")).await?;
    Ok(format!(
        "{} {}",
        if answer["action"] == "accept" {
            "deleted"
        } else {
            "kept"
        },
        filename.unwrap_or_default()
    ))
}

/// Asks two questions at once.
#[tool(read_only, task)]
async fn multi_input(session: &ClientSession) -> Result<String, ToolError> {
    let (first, second) = tokio::join!(
        session.elicit(confirm_form("First?")),
        session.elicit(confirm_form("Second?")),
    );
    Ok(format!("{} and {}", first?["action"], second?["action"]))
}

/// Asks the user's name, then works (`work_seconds`, half a second unless
/// told) and greets them. It asks first: on protocol 2026-07-28 the name
/// comes through an input-required round, and the work runs as a task.
/// With `confirm`, it asks again after the work, once it is a task.
#[tool(read_only, task = required, asks_first)]
async fn test_tool_with_task(
    ctx: &ToolContext,
    session: &ClientSession,
    /// How long to work, in seconds.
    work_seconds: Option<f64>,
    /// Ask to go on after the work.
    confirm: Option<bool>,
) -> Result<String, ToolError> {
    let form = json!({
        "message": "What is your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }
    });
    let answer = session.ask("user_name", "elicitation/create", form).await?;
    let name = answer["content"]["name"].as_str().unwrap_or("stranger");
    let work = Duration::from_secs_f64(work_seconds.unwrap_or(0.5).clamp(0.0, 600.0));
    tokio::select! {
        () = tokio::time::sleep(work) => {}
        () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
    }
    if confirm == Some(true) {
        let answer = session
            .ask("go_on", "elicitation/create", confirm_form("Go on?"))
            .await?;
        if answer["action"] != "accept" {
            return Ok(format!("stopped before greeting {name}"));
        }
    }
    Ok(format!("Hello, {name}!"))
}

/// The tools above.
pub fn tools() -> Vec<std::sync::Arc<dyn tk::Tool>> {
    vec![
        std::sync::Arc::new(GreetTool),
        std::sync::Arc::new(SlowComputeTool),
        std::sync::Arc::new(FailingJobTool),
        std::sync::Arc::new(ProtocolErrorJobTool),
        std::sync::Arc::new(ConfirmDeleteTool),
        std::sync::Arc::new(MultiInputTool),
        std::sync::Arc::new(TestToolWithTaskTool),
    ]
}
