//! An agent loop against any OpenAI-compatible chat completions endpoint.
//!
//! The model is offered the `#[tool]` functions below. Each turn's tool calls
//! run as one batch through a [`Runner`], which asks a person at the terminal
//! before a call that changes something. The results go back to the model,
//! and the loop ends when the model answers without calling a tool.
//!
//! ```text
//! OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4o-mini \
//!     cargo run --example agent_loop -- "What's the weather in Oslo? Save a note about it."
//! ```
//!
//! Configuration comes from the environment:
//! - `OPENAI_BASE_URL`: the API root, by default `https://api.openai.com/v1`.
//!   Local servers work too, e.g. `http://localhost:11434/v1` for Ollama.
//! - `OPENAI_MODEL`: the model to use (required).
//! - `OPENAI_API_KEY`: sent as a bearer token when set.
//! - `AGENT_WORKSPACE`: the directory `save_note` writes `notes.md` in; by
//!   default `toolsmith-agent-loop` in the system's temp directory.
//!
//! The answer goes to stdout; a trace of the tool calls and the approval
//! prompts go to stderr.

use std::error::Error;
use std::fs::OpenOptions;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::exec::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, CallRecord, Runner, ToolCall, meta,
};
use toolsmith::serde::Deserialize;
use toolsmith::{
    Definition, DefinitionFormat, ToolContext, ToolFilter, ToolRegistry, async_trait, tool,
};

// ---------------------------------------------------------------------------
// The tools
// ---------------------------------------------------------------------------

/// The weather in one city.
#[toolsmith::data(Serialize, JsonSchema)]
struct Weather {
    city: String,
    temperature_c: f64,
    conditions: &'static str,
}

/// Get the current weather for a city.
#[tool(read_only)]
async fn get_weather(
    /// City name, such as "Oslo".
    #[arg(min_length = 1)]
    city: String,
) -> Weather {
    // Canned data keeps the example self-contained; a real tool would ask a
    // weather service here.
    let (temperature_c, conditions) = match city.to_lowercase().as_str() {
        "oslo" => (4.5, "light snow"),
        "lisbon" => (19.0, "sunny"),
        _ => (12.0, "overcast"),
    };
    Weather {
        city,
        temperature_c,
        conditions,
    }
}

/// Add two integers.
#[tool(read_only)]
async fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
) -> i64 {
    a + b
}

/// The file `save_note` appends to. The host puts it in the context; the
/// tool asks for it by type.
struct NotesFile(PathBuf);

/// Save a note for the user in their notes file, one line per note.
///
/// Use it when the user asks you to remember or write something down.
// `filesystem_write` makes this a medium-risk tool, so the runner below asks
// before every call. It is a sync function: the runner runs it off the async
// threads, so plain `std::fs` is fine.
#[tool(category = filesystem_write)]
fn save_note(
    notes: &NotesFile,
    /// The note, as one line of text.
    #[arg(min_length = 1)]
    text: String,
) -> Result<String, std::io::Error> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&notes.0)?;
    writeln!(file, "- {}", text.replace('\n', " "))?;
    Ok(format!("Saved the note to {}", notes.0.display()))
}

// ---------------------------------------------------------------------------
// The loop
// ---------------------------------------------------------------------------

/// A model that keeps calling tools is stopped after this many turns.
const MAX_TURNS: usize = 10;

const SYSTEM_PROMPT: &str = "You are a helpful assistant. Use the tools when they help. \
     When a tool reports an error, read it and correct your call.";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(answer) => {
            println!("{answer}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<String, Box<dyn Error>> {
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    if prompt.trim().is_empty() {
        return Err(
            "give the prompt as arguments: cargo run --example agent_loop -- \"...\"".into(),
        );
    }
    let chat = ChatClient::from_env()?;

    // Every `#[tool]` in this program. (The default filter would leave out
    // high-risk tools such as shell access; there are none here.)
    let registry = Arc::new(ToolRegistry::from_inventory(&ToolFilter::default())?);
    // Medium- and high-risk calls wait for a yes at the terminal; the
    // read-only tools run at once.
    let runner = Runner::new(Arc::clone(&registry))
        .with_policy(ApprovalPolicy::RequireForDangerous)
        .with_approver(TerminalApprover);
    let workspace = workspace_dir()?;
    let ctx = ToolContext::new()
        .with_workspace(&workspace)
        .with_state(NotesFile(workspace.join("notes.md")));

    // Rendered once and cached: every request carries byte-identical tools.
    let tools = registry.definitions(DefinitionFormat::OpenAi);
    let mut messages = vec![
        json!({"role": "system", "content": SYSTEM_PROMPT}),
        json!({"role": "user", "content": prompt}),
    ];

    for _ in 0..MAX_TURNS {
        let reply = chat.complete(&messages, &tools).await?;
        let tool_calls = reply.tool_calls.unwrap_or_default();
        if tool_calls.is_empty() {
            return Ok(reply.content.unwrap_or_default());
        }

        // The assistant's turn goes into the history with its tool calls;
        // each tool message below answers one of them by id.
        messages.push(json!({
            "role": "assistant",
            "content": reply.content,
            "tool_calls": tool_calls,
        }));

        // `arguments` is a JSON string; the registry reads it as it is.
        let calls = tool_calls
            .iter()
            .map(ToolCall::from_openai_chat)
            .collect::<Result<Vec<_>, _>>()?;
        for call in &calls {
            eprintln!("-> {} {}", call.name, arguments_text(&call.arguments));
        }

        // One batch per turn. Consecutive read-only calls run at the same
        // time, others one by one; every call ends with a result the model
        // can read (an error saying what to fix, if it failed), in call order.
        let batch = runner.run(calls, &ctx).await;
        batch.calls.iter().for_each(trace_result);
        messages.extend(batch.openai_chat_messages());
    }
    Err(format!("the model gave no final answer within {MAX_TURNS} turns").into())
}

/// Where `save_note` writes: `AGENT_WORKSPACE`, or a directory in the temp dir.
fn workspace_dir() -> std::io::Result<PathBuf> {
    let dir = std::env::var_os("AGENT_WORKSPACE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("toolsmith-agent-loop"));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

// ---------------------------------------------------------------------------
// Approval at the terminal
// ---------------------------------------------------------------------------

/// Asks `Approve RISK call NAME ARGS? [y/N]` on stderr (after a line with
/// the warning, for a high-risk call) and reads one line from stdin: `y` or
/// `yes` approves; anything else, or end of input, denies.
struct TerminalApprover;

#[async_trait]
impl Approver for TerminalApprover {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalDecision {
        // A high-risk call comes with a warning, shown first, on its own line.
        if let Some(warning) = &request.warning {
            eprintln!("!! {warning}");
        }
        eprint!(
            "Approve {} call {} {}? [y/N] ",
            request.risk,
            request.tool,
            arguments_text(&request.arguments)
        );
        // Reading stdin blocks, so it happens off the async threads.
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|_| line)
        })
        .await;
        let answer = match line {
            Ok(Ok(line)) => line,
            _ => String::new(),
        };
        // At a terminal the person's Enter ends the prompt's line; echo
        // piped input (or end of input) so the transcript reads the same.
        if answer.is_empty() || !std::io::stdin().is_terminal() {
            eprintln!("{}", answer.trim_end());
        }
        match answer.trim().to_lowercase().as_str() {
            "y" | "yes" => ApprovalDecision::Approve,
            _ => ApprovalDecision::Deny(None),
        }
    }
}

// ---------------------------------------------------------------------------
// The trace on stderr
// ---------------------------------------------------------------------------

/// Arguments as the model wrote them: the JSON string itself, not a quoted copy.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `<- NAME [STATUS] RESULT`, with the lenient casts the call needed.
fn trace_result(record: &CallRecord) {
    let mut line = format!(
        "<- {} [{}] {}",
        record.call.name,
        record.status,
        shorten(record.content(), 160)
    );
    let casts = record
        .output
        .as_ref()
        .and_then(|o| o.metadata.read(&meta::CASTS));
    if let Some(casts) = casts {
        let casts: Vec<String> = casts.iter().map(ToString::to_string).collect();
        line.push_str(&format!(" (cast {})", casts.join(", ")));
    }
    eprintln!("{line}");
}

/// The first line of `text`, at most `max` characters, marked when cut.
fn shorten(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    let kept: String = line.chars().take(max).collect();
    if kept.len() < text.trim_end().len() {
        format!("{kept} ...")
    } else {
        kept
    }
}

// ---------------------------------------------------------------------------
// The chat completions endpoint
// ---------------------------------------------------------------------------

/// `POST {OPENAI_BASE_URL}/chat/completions` with a model, an optional key
/// and the tools.
struct ChatClient {
    http: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
}

/// The part of a chat completions response the loop reads.
#[derive(Deserialize)]
#[serde(crate = "toolsmith::serde")]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
#[serde(crate = "toolsmith::serde")]
struct Choice {
    message: AssistantMessage,
}

#[derive(Deserialize)]
#[serde(crate = "toolsmith::serde")]
struct AssistantMessage {
    content: Option<String>,
    /// Kept as JSON: they go back into the history exactly as they came.
    tool_calls: Option<Vec<Value>>,
}

impl ChatClient {
    fn from_env() -> Result<Self, Box<dyn Error>> {
        let base = std::env::var("OPENAI_BASE_URL")
            .unwrap_or_else(|_| "https://api.openai.com/v1".to_owned());
        let model = std::env::var("OPENAI_MODEL")
            .map_err(|_| "set OPENAI_MODEL to the model to use, e.g. gpt-4o-mini")?;
        let api_key = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|key| !key.is_empty());
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()?;
        Ok(Self {
            http,
            url: format!("{}/chat/completions", base.trim_end_matches('/')),
            model,
            api_key,
        })
    }

    /// Send the conversation; return the assistant's message, or an error
    /// with the endpoint's status and body.
    async fn complete(
        &self,
        messages: &[Value],
        tools: &[Definition],
    ) -> Result<AssistantMessage, Box<dyn Error>> {
        let body = json!({"model": self.model, "messages": messages, "tools": tools});
        let mut request = self.http.post(&self.url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("could not reach {}: {}", self.url, with_causes(&e)))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| {
            format!(
                "could not read the answer of {}: {}",
                self.url,
                with_causes(&e)
            )
        })?;
        if !status.is_success() {
            return Err(format!("{} answered {status}: {text}", self.url).into());
        }
        let reply: ChatResponse = serde_json::from_str(&text)
            .map_err(|e| format!("{} sent an unexpected answer ({e}): {text}", self.url))?;
        let choice = reply.choices.into_iter().next();
        choice
            .map(|choice| choice.message)
            .ok_or_else(|| format!("{} answered without a choice: {text}", self.url).into())
    }
}

/// An error and its causes, `outer: inner: innermost` (reqwest keeps the
/// useful part, such as "connection refused", in the causes).
fn with_causes(error: &dyn Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}
