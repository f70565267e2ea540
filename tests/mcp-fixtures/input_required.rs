//! The tools the conformance suite's `input-required-result-*` scenarios
//! call (protocol 2026-07-28): each asks the client through
//! `ClientSession`, as it would on any protocol version, under the keys
//! the suite expects.

use tk::mcp::ClientSession;
use tk::serde_json::{Value, json};
use tk::{ToolError, tool};

fn form(message: &str, field: &str, kind: &str) -> Value {
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {field: {"type": kind}},
            "required": [field]
        }
    })
}

fn question(text: &str, max_tokens: u32) -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens
    })
}

fn sampled_text(answer: &Value) -> String {
    answer["content"]["text"].as_str().unwrap_or("").to_owned()
}

async fn ask_name(session: &ClientSession, key: &str, message: &str) -> Result<String, ToolError> {
    let answer = session
        .ask(key, "elicitation/create", form(message, "name", "string"))
        .await?;
    Ok(answer["content"]["name"]
        .as_str()
        .unwrap_or("stranger")
        .to_owned())
}

/// Asks the user's name, then greets them.
#[tool(read_only)]
async fn test_input_required_result_elicitation(
    session: &ClientSession,
) -> Result<String, ToolError> {
    let name = ask_name(session, "user_name", "What is your name?").await?;
    Ok(format!("Hello, {name}!"))
}

/// Asks the client's model a question and returns its answer.
#[tool(read_only)]
async fn test_input_required_result_sampling(session: &ClientSession) -> Result<String, ToolError> {
    let answer = session
        .ask(
            "capital_question",
            "sampling/createMessage",
            question("What is the capital of France?", 100),
        )
        .await?;
    Ok(format!("The model said: {}", sampled_text(&answer)))
}

/// Asks the client for its roots and lists them.
#[tool(read_only)]
async fn test_input_required_result_list_roots(
    session: &ClientSession,
) -> Result<String, ToolError> {
    let answer = session.ask("client_roots", "roots/list", json!({})).await?;
    let roots: Vec<&str> = answer["roots"]
        .as_array()
        .map(|r| r.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    Ok(format!("Roots: {}", roots.join(", ")))
}

/// Asks for a confirmation; the answer comes back with the signed state.
#[tool(read_only)]
async fn test_input_required_result_request_state(
    session: &ClientSession,
) -> Result<String, ToolError> {
    session
        .ask(
            "confirm",
            "elicitation/create",
            form("Please confirm", "ok", "boolean"),
        )
        .await?;
    Ok("state-ok: confirmed".into())
}

/// Asks three questions at once.
#[tool(read_only)]
async fn test_input_required_result_multiple_inputs(
    session: &ClientSession,
) -> Result<String, ToolError> {
    let (name, greeting, roots) = tokio::join!(
        ask_name(session, "user_name", "What is your name?"),
        session.ask(
            "greeting",
            "sampling/createMessage",
            question("Generate a greeting", 50)
        ),
        session.ask("client_roots", "roots/list", json!({})),
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "{name}: {} ({} roots)",
        sampled_text(&greeting),
        roots["roots"].as_array().map_or(0, Vec::len)
    ))
}

/// Asks one question, then another.
#[tool(read_only)]
async fn test_input_required_result_multi_round(
    session: &ClientSession,
) -> Result<String, ToolError> {
    let name = ask_name(session, "step1", "Step 1: What is your name?").await?;
    let color = session
        .ask(
            "step2",
            "elicitation/create",
            form("Step 2: What is your favorite color?", "color", "string"),
        )
        .await?;
    Ok(format!(
        "{name} likes {}",
        color["content"]["color"].as_str().unwrap_or("no color")
    ))
}

/// Asks a question; a changed `requestState` is refused by the server.
#[tool(read_only)]
async fn test_input_required_result_tampered_state(
    session: &ClientSession,
) -> Result<String, ToolError> {
    let name = ask_name(session, "user_name", "What is your name?").await?;
    Ok(format!("Hello, {name}!"))
}

/// Asks only what the client offers to answer.
#[tool(read_only)]
async fn test_input_required_result_capabilities(
    session: &ClientSession,
) -> Result<String, ToolError> {
    let mut answers = Vec::new();
    if session.can_ask("elicitation/create") {
        answers.push(ask_name(session, "user_name", "What is your name?").await?);
    }
    if session.can_ask("sampling/createMessage") {
        let answer = session
            .ask(
                "capital_question",
                "sampling/createMessage",
                question("What is the capital of France?", 100),
            )
            .await?;
        answers.push(sampled_text(&answer));
    }
    Ok(answers.join("; "))
}

/// Asks the client's model, whether or not the client offers sampling.
#[tool(read_only)]
async fn test_missing_capability(session: &ClientSession) -> Result<String, ToolError> {
    let answer = session.sample(question("Say hi", 10)).await?;
    Ok(sampled_text(&answer))
}

/// The tools above.
pub fn tools() -> Vec<std::sync::Arc<dyn tk::Tool>> {
    vec![
        std::sync::Arc::new(TestInputRequiredResultElicitationTool),
        std::sync::Arc::new(TestInputRequiredResultSamplingTool),
        std::sync::Arc::new(TestInputRequiredResultListRootsTool),
        std::sync::Arc::new(TestInputRequiredResultRequestStateTool),
        std::sync::Arc::new(TestInputRequiredResultMultipleInputsTool),
        std::sync::Arc::new(TestInputRequiredResultMultiRoundTool),
        std::sync::Arc::new(TestInputRequiredResultTamperedStateTool),
        std::sync::Arc::new(TestInputRequiredResultCapabilitiesTool),
        std::sync::Arc::new(TestMissingCapabilityTool),
    ]
}
