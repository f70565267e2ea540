//! [`Cache`]: answer a repeated call of a read-only tool from memory.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::time::Instant;

use super::retry::safe_to_repeat;
use super::{Call, Layer, Next, Stage};
use crate::error::CallError;
use crate::exec::shape::meta;
use crate::output::ToolOutput;

/// Keeps the successful results of read-only and idempotent tools for a
/// while, and answers the same call again from them without running the
/// tool; such an answer carries [`meta::CACHE_HIT`].
///
/// A call is the same when it names the same tool (by its own name,
/// whatever alias the model used) with the same checked arguments: after
/// the check's casts, compared in a canonical form where the keys of every
/// object are sorted, so `{"a": 1, "b": 2}` and `{"b": 2, "a": 1}` are one
/// call (this crate's `serde_json` keeps keys in the order they came).
///
/// Results are kept per session by default ([`ToolContext::session_key`];
/// calls without one share a scope): a read-only tool's result may depend
/// on more than its arguments (the user's files, their account), and one
/// session must never be answered with what another was shown. A host
/// whose cached tools answer the same for everyone may share results
/// across sessions with [`shared_across_sessions`](Self::shared_across_sessions).
///
/// Failures are never kept, nor results that only say work has started
/// (`is_async`), nor results with attachments or larger than
/// [`with_max_entry_bytes`](Self::with_max_entry_bytes). At most
/// [`with_max_entries`](Self::with_max_entries) results are kept: when
/// full, expired ones go first, then the oldest.
///
/// It sits at [`Stage::Execute`], after approval: a call that needs
/// approval is asked about even when its answer is at hand. Added before
/// [`Retry`](super::Retry), it keeps the result the retries got to.
///
/// [`ToolContext::session_key`]: crate::ToolContext::session_key
///
/// ```
/// use std::time::Duration;
/// use toolsmith::pipeline::{Cache, Pipeline};
///
/// let pipeline = Pipeline::new().layer(Cache::new(Duration::from_secs(60)).with_max_entries(500));
/// # let _ = pipeline;
/// ```
#[derive(Debug, Clone)]
pub struct Cache {
    ttl: Duration,
    max_entries: usize,
    max_entry_bytes: usize,
    per_session: bool,
    excluded: Vec<String>,
    entries: Arc<Mutex<HashMap<String, Entry>>>,
}

#[derive(Debug)]
struct Entry {
    output: ToolOutput,
    stored: Instant,
}

impl Cache {
    /// Keep results for `ttl`; at most 256 results of at most 256 KiB
    /// each, per session.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            max_entries: 256,
            max_entry_bytes: 256 * 1024,
            per_session: true,
            excluded: Vec::new(),
            entries: Arc::default(),
        }
    }

    /// Keep at most `entries` results.
    pub fn with_max_entries(mut self, entries: usize) -> Self {
        self.max_entries = entries;
        self
    }

    /// Do not keep a result whose arguments, text, images and other
    /// content together are larger than `bytes`.
    pub fn with_max_entry_bytes(mut self, bytes: usize) -> Self {
        self.max_entry_bytes = bytes;
        self
    }

    /// Answer every session from the same results. Only for tools whose
    /// results depend on their arguments alone.
    pub fn shared_across_sessions(mut self) -> Self {
        self.per_session = false;
        self
    }

    /// Never cache the tool named `tool` (its own name).
    pub fn exclude(mut self, tool: impl Into<String>) -> Self {
        self.excluded.push(tool.into());
        self
    }

    /// How many results are kept now (expired ones included until they
    /// are dropped).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no result is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drop every result.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn key(&self, call: &Call<'_>) -> String {
        let mut key = String::new();
        push_str(&mut key, call.tool_name());
        if self.per_session {
            match call.context().session_key() {
                Some(session) => push_str(&mut key, session),
                None => key.push_str("null,"),
            }
        }
        canonical(call.arguments(), &mut key);
        key
    }

    fn store(&self, key: String, output: &ToolOutput) {
        let mut entries = self.lock();
        let now = Instant::now();
        if !entries.contains_key(&key) && entries.len() >= self.max_entries {
            entries.retain(|_, entry| now.duration_since(entry.stored) < self.ttl);
            if entries.len() >= self.max_entries {
                let oldest = entries
                    .iter()
                    .min_by_key(|(_, entry)| entry.stored)
                    .map(|(key, _)| key.clone());
                if let Some(oldest) = oldest {
                    entries.remove(&oldest);
                }
            }
        }
        let mut output = output.clone();
        output.metadata.remove(meta::ATTEMPTS.name());
        entries.insert(
            key,
            Entry {
                output,
                stored: now,
            },
        );
    }

    fn lookup(&self, key: &str) -> Option<ToolOutput> {
        let mut entries = self.lock();
        let entry = entries.get(key)?;
        if entry.stored.elapsed() >= self.ttl {
            entries.remove(key);
            return None;
        }
        Some(entry.output.clone())
    }
}

/// About how many bytes `output` holds.
fn size(output: &ToolOutput) -> usize {
    let images: usize = output.images.iter().map(|image| image.data.len()).sum();
    let structured = output.structured.as_deref().map_or(0, |value| {
        serde_json::to_string(value).map_or(usize::MAX, |s| s.len())
    });
    output
        .content
        .len()
        .saturating_add(output.display.as_ref().map_or(0, String::len))
        .saturating_add(images)
        .saturating_add(structured)
}

/// A string as JSON writes it, so no value can pass for another.
fn push_str(out: &mut String, text: &str) {
    let _ = write!(out, "{}", Value::from(text));
    out.push(',');
}

/// `value` as compact JSON with the keys of every object sorted.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{}:", Value::from(key.as_str()));
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

#[async_trait]
impl Layer for Cache {
    fn stage(&self) -> Stage {
        Stage::Execute
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        if self.ttl.is_zero()
            || self.max_entries == 0
            || !safe_to_repeat(call.spec())
            || self.excluded.iter().any(|tool| tool == call.tool_name())
        {
            return next.run(call).await;
        }
        let key = self.key(call);
        if let Some(mut output) = self.lookup(&key) {
            output.metadata.write(&meta::CACHE_HIT, &true);
            return Ok(output);
        }
        let result = next.run(call).await;
        if let Ok(output) = &result
            && !output.is_error
            && !output.is_async
            && output.attachments.is_empty()
            && key.len().saturating_add(size(output)) <= self.max_entry_bytes
        {
            self.store(key, output);
        }
        result
    }
}
