//! [`RetryBudget`]: stop a model that keeps making the same mistake.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::retry::failure_kind;
use super::{Call, Layer, Next, Stage};
use crate::error::CallError;
use crate::output::ToolOutput;

/// Refuses calls of a tool after a model got it wrong too many times in a
/// row: a failure the model can fix ([`ErrorKind::is_model_correctable`](crate::ErrorKind::is_model_correctable):
/// arguments the check or the tool refused, a name no tool has) counts,
/// a success starts the count again, and other failures (a timeout, a
/// denial, another layer's refusal) leave it as it is.
///
/// Counts are kept per session ([`ToolContext::session_key`], one scope
/// for calls without one) and per tool, by the tool's own name whatever
/// alias the model used; names no tool has are counted together, so a
/// model cannot escape by inventing a new name each time. Once a count
/// reaches the budget, calls of that tool are refused for the rest of the
/// turn, with a message that says why and quotes the last problem. A new
/// turn (another [`message_id`](crate::ToolContext::message_id)) gives the
/// model one more try: one more failure refuses it again, a success clears
/// the count. A host that sets no message id keeps the refusal until
/// [`forgive`](Self::forgive).
///
/// It sits at [`Stage::Received`], outside the check, so it sees the
/// check's refusals. Memory is bounded: at most
/// [`with_max_tracked`](Self::with_max_tracked) counts are kept (the least
/// recently touched goes first), and a success removes its count.
///
/// [`ToolContext::session_key`]: crate::ToolContext::session_key
///
/// ```
/// use toolsmith::pipeline::{Pipeline, RetryBudget};
///
/// let pipeline = Pipeline::new().layer(RetryBudget::new(3));
/// # let _ = pipeline;
/// ```
#[derive(Debug, Clone)]
pub struct RetryBudget {
    budget: u32,
    max_tracked: usize,
    counts: Arc<Mutex<Counts>>,
}

/// The longest problem kept to quote, in characters.
const MAX_PROBLEM_CHARS: usize = 300;

/// (session, the tool's own name, or `None` for names no tool has).
type Key = (Option<String>, Option<String>);

#[derive(Debug, Default)]
struct Counts {
    entries: HashMap<Key, Strikes>,
    clock: u64,
}

#[derive(Debug)]
struct Strikes {
    failures: u32,
    last_problem: String,
    /// The turn of the last failure.
    turn: Option<String>,
    touched: u64,
}

impl RetryBudget {
    /// Refuse a tool after `budget` failures in a row the model could have
    /// fixed (at least 1); at most 4096 counts are kept.
    pub fn new(budget: u32) -> Self {
        Self {
            budget: budget.max(1),
            max_tracked: 4096,
            counts: Arc::default(),
        }
    }

    /// Keep at most `keys` counts (at least 1).
    pub fn with_max_tracked(mut self, keys: usize) -> Self {
        self.max_tracked = keys.max(1);
        self
    }

    /// Clear the counts of `session` (`None`: calls made without one), so
    /// its refused tools may be called again.
    pub fn forgive(&self, session: Option<&str>) {
        let mut counts = self.lock();
        counts
            .entries
            .retain(|(scope, _), _| scope.as_deref() != session);
    }

    /// How many counts are kept now.
    pub fn tracked(&self) -> usize {
        self.lock().entries.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The refusal for a call over its budget, if it is.
    fn over_budget(&self, key: &Key, turn: Option<&str>) -> Option<(u32, String)> {
        let mut counts = self.lock();
        let strikes = counts.entries.get_mut(key)?;
        if strikes.failures < self.budget {
            return None;
        }
        if turn.is_some() && strikes.turn.as_deref() != turn {
            // A new turn: one more try.
            strikes.failures = self.budget - 1;
            return None;
        }
        Some((strikes.failures, strikes.last_problem.clone()))
    }

    fn record(&self, key: Key, turn: Option<&str>, problem: String) {
        let mut counts = self.lock();
        counts.clock += 1;
        let now = counts.clock;
        if !counts.entries.contains_key(&key) && counts.entries.len() >= self.max_tracked {
            let oldest = counts
                .entries
                .iter()
                .min_by_key(|(_, strikes)| strikes.touched)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                counts.entries.remove(&oldest);
            }
        }
        let strikes = counts.entries.entry(key).or_insert(Strikes {
            failures: 0,
            last_problem: String::new(),
            turn: None,
            touched: now,
        });
        strikes.failures = strikes.failures.saturating_add(1);
        strikes.last_problem = problem;
        strikes.turn = turn.map(str::to_owned);
        strikes.touched = now;
    }

    fn clear(&self, key: &Key) {
        let mut counts = self.lock();
        if !counts.entries.is_empty() {
            counts.entries.remove(key);
        }
    }
}

/// What went wrong, as one short line to quote.
fn problem_of(result: &Result<ToolOutput, CallError>) -> String {
    let text = match result {
        Err(error) => error.to_string(),
        // An error result reads "Error: …\n\n[what to do]": quote the error.
        Ok(output) => {
            let content = output
                .content
                .strip_prefix("Error: ")
                .unwrap_or(&output.content);
            content.split("\n\n[").next().unwrap_or_default().to_owned()
        }
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(MAX_PROBLEM_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[async_trait]
impl Layer for RetryBudget {
    fn stage(&self) -> Stage {
        Stage::Received
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        let ctx = call.context();
        let session = ctx.session_key().map(str::to_owned);
        let turn = ctx.message_id().map(str::to_owned);
        let tool = call.spec().map(|spec| spec.name.to_string());
        let key = (session, tool);
        if let Some((failures, last)) = self.over_budget(&key, turn.as_deref()) {
            let reason = match &key.1 {
                Some(tool) => format!(
                    "'{tool}' was called {failures} times in a row with arguments it refused (the last problem: {last}). Stop retrying '{tool}' with guessed arguments: read its description and parameters again and change the approach, use another tool, or tell the user what is wrong."
                ),
                None => format!(
                    "{failures} calls in a row named tools that do not exist (the last: {last}). Stop guessing tool names: call only the tools you were given, by their exact names, or tell the user what you need."
                ),
            };
            return Err(call.refuse(reason));
        }
        let result = next.run(call).await;
        match failure_kind(&result) {
            Some(kind) if kind.is_model_correctable() => {
                self.record(key, turn.as_deref(), problem_of(&result));
            }
            None if result.as_ref().is_ok_and(|output| !output.is_error) => self.clear(&key),
            // Other failures neither count nor clear.
            _ => {}
        }
        result
    }
}
