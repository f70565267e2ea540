//! [`CallLimits`] and [`RateLimit`]: how many calls a model may make.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::retry::failure_kind;
use super::{Call, Layer, Next, Stage};
use crate::error::CallError;
use crate::output::ToolOutput;

fn calls(n: u32) -> String {
    if n == 1 {
        "1 call".to_owned()
    } else {
        format!("{n} calls")
    }
}

fn tool_calls(n: u32) -> String {
    if n == 1 {
        "1 tool call".to_owned()
    } else {
        format!("{n} tool calls")
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Refuses calls past a number per turn and per session, in all or of one
/// tool.
///
/// A session is the context's [`session_key`](crate::ToolContext::session_key)
/// (calls without one share a scope). A turn is one model turn of a
/// session, told apart by the context's
/// [`message_id`](crate::ToolContext::message_id), which a host sets for
/// each turn: a call with another message id than the session's last one
/// starts a new turn and its counts. A host that sets no message id has one
/// turn per session, so per-turn limits then count the whole session.
///
/// A call counts when it passes: refused calls do not use up the limits,
/// nor calls a layer after this one refuses (a validator, approval, a
/// rate) or that stop before their tool starts. It sits at [`Stage::Checked`], so a call whose arguments are wrong is
/// refused for them (and can be fixed) without being counted, and retries
/// made by [`Retry`](super::Retry) count once. Tools are counted by their
/// own names, whatever alias the model used. Memory is bounded: the counts
/// of at most [`with_max_sessions`](Self::with_max_sessions) sessions are
/// kept (the least recently used goes first, and its counts start again).
///
/// ```
/// use toolsmith::pipeline::{CallLimits, Pipeline};
///
/// let limits = CallLimits::new()
///     .per_turn(25)
///     .per_session(500)
///     .tool_per_turn("web_search", 5);
/// let pipeline = Pipeline::new().layer(limits);
/// # let _ = pipeline;
/// ```
#[derive(Debug, Clone)]
pub struct CallLimits {
    per_turn: Option<u32>,
    per_session: Option<u32>,
    tools: HashMap<String, ToolLimit>,
    max_sessions: usize,
    sessions: Arc<Mutex<Sessions>>,
}

#[derive(Debug, Clone, Copy, Default)]
struct ToolLimit {
    per_turn: Option<u32>,
    per_session: Option<u32>,
}

#[derive(Debug, Default)]
struct Sessions {
    by_key: HashMap<Option<String>, Counts>,
    clock: u64,
}

#[derive(Debug, Default)]
struct Counts {
    turn: Option<String>,
    turn_calls: u32,
    session_calls: u32,
    /// (this turn, this session) of the tools that have limits.
    tools: HashMap<String, (u32, u32)>,
    used: u64,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self::new()
    }
}

impl CallLimits {
    /// No limits yet; the counts of at most 4096 sessions are kept.
    pub fn new() -> Self {
        Self {
            per_turn: None,
            per_session: None,
            tools: HashMap::new(),
            max_sessions: 4096,
            sessions: Arc::default(),
        }
    }

    /// At most `calls` calls in one turn.
    pub fn per_turn(mut self, calls: u32) -> Self {
        self.per_turn = Some(calls);
        self
    }

    /// At most `calls` calls in one session.
    pub fn per_session(mut self, calls: u32) -> Self {
        self.per_session = Some(calls);
        self
    }

    /// At most `calls` calls of the tool named `tool` (its own name) in one turn.
    pub fn tool_per_turn(mut self, tool: impl Into<String>, calls: u32) -> Self {
        self.tools.entry(tool.into()).or_default().per_turn = Some(calls);
        self
    }

    /// At most `calls` calls of the tool named `tool` (its own name) in one session.
    pub fn tool_per_session(mut self, tool: impl Into<String>, calls: u32) -> Self {
        self.tools.entry(tool.into()).or_default().per_session = Some(calls);
        self
    }

    /// Keep the counts of at most `sessions` sessions (at least 1).
    pub fn with_max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions.max(1);
        self
    }

    /// Whether any limit is set.
    fn limits_anything(&self) -> bool {
        self.per_turn.is_some() || self.per_session.is_some() || !self.tools.is_empty()
    }

    /// Count a call of `tool` in `session` and `turn`, or say which limit it is over.
    fn admit(&self, session: Option<&str>, turn: Option<&str>, tool: &str) -> Result<(), String> {
        if !self.limits_anything() {
            return Ok(());
        }
        let mut sessions = lock(&self.sessions);
        sessions.clock += 1;
        let now = sessions.clock;
        let key = session.map(str::to_owned);
        if !sessions.by_key.contains_key(&key) && sessions.by_key.len() >= self.max_sessions {
            let oldest = sessions
                .by_key
                .iter()
                .min_by_key(|(_, counts)| counts.used)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                sessions.by_key.remove(&oldest);
            }
        }
        let counts = sessions.by_key.entry(key).or_default();
        counts.used = now;
        if counts.turn.as_deref() != turn {
            counts.turn = turn.map(str::to_owned);
            counts.turn_calls = 0;
            for (in_turn, _) in counts.tools.values_mut() {
                *in_turn = 0;
            }
        }
        let limit = self.tools.get(tool);
        let (tool_turn, tool_session) = counts.tools.get(tool).copied().unwrap_or_default();
        let over = |used: u32, max: Option<u32>| max.is_some_and(|max| used >= max);
        if let Some(max) = limit
            .and_then(|l| l.per_session)
            .filter(|&m| over(tool_session, Some(m)))
        {
            return Err(format!(
                "the limit of {} of '{tool}' per session is reached; do not call '{tool}' again in this conversation, continue without it",
                calls(max)
            ));
        }
        if let Some(max) = limit
            .and_then(|l| l.per_turn)
            .filter(|&m| over(tool_turn, Some(m)))
        {
            return Err(format!(
                "the limit of {} of '{tool}' per turn is reached; do not call '{tool}' again before the user's next message, continue with what you have",
                calls(max)
            ));
        }
        if let Some(max) = self
            .per_session
            .filter(|&m| over(counts.session_calls, Some(m)))
        {
            return Err(format!(
                "the limit of {} per session is reached; no more tools can be called in this conversation: answer with what you have",
                tool_calls(max)
            ));
        }
        if let Some(max) = self.per_turn.filter(|&m| over(counts.turn_calls, Some(m))) {
            return Err(format!(
                "the limit of {} per turn is reached; stop calling tools and answer with what you have",
                tool_calls(max)
            ));
        }
        counts.turn_calls = counts.turn_calls.saturating_add(1);
        counts.session_calls = counts.session_calls.saturating_add(1);
        if limit.is_some() {
            let entry = counts.tools.entry(tool.to_owned()).or_default();
            entry.0 = entry.0.saturating_add(1);
            entry.1 = entry.1.saturating_add(1);
        }
        Ok(())
    }

    /// Take back the count of a call [`admit`](Self::admit) let through
    /// and a later layer refused: it never ran.
    fn refund(&self, session: Option<String>, turn: Option<&str>, tool: &str) {
        let mut sessions = lock(&self.sessions);
        let Some(counts) = sessions.by_key.get_mut(&session) else {
            return;
        };
        let same_turn = counts.turn.as_deref() == turn;
        counts.session_calls = counts.session_calls.saturating_sub(1);
        if same_turn {
            counts.turn_calls = counts.turn_calls.saturating_sub(1);
        }
        if let Some((in_turn, in_session)) = counts.tools.get_mut(tool) {
            *in_session = in_session.saturating_sub(1);
            if same_turn {
                *in_turn = in_turn.saturating_sub(1);
            }
        }
    }
}

/// Whether a call failed before its tool started: a later layer refused
/// it (a validator, approval, another limit) or it was stopped first.
fn refused_before_running(call: &Call<'_>, result: &Result<ToolOutput, CallError>) -> bool {
    !call.tool_started() && failure_kind(result).is_some()
}

#[async_trait]
impl Layer for CallLimits {
    fn stage(&self) -> Stage {
        Stage::Checked
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        if !self.limits_anything() {
            return next.run(call).await;
        }
        let ctx = call.context();
        let (session, turn) = (ctx.session_key(), ctx.message_id());
        if let Err(reason) = self.admit(session, turn, call.tool_name()) {
            return Err(call.refuse(reason));
        }
        let (session, turn) = (session.map(str::to_owned), turn.map(str::to_owned));
        let result = next.run(call).await;
        if refused_before_running(call, &result) {
            self.refund(session, turn.as_deref(), call.tool_name());
        }
        result
    }
}

/// How fast calls may come: `calls` per `period`, as a token bucket that
/// holds `calls` tokens and refills one every `period / calls`. So `calls`
/// may come at once, and then one every `period / calls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    calls: u32,
    period: Duration,
}

impl Rate {
    /// `calls` (at least 1) per `period`.
    pub fn new(calls: u32, period: Duration) -> Self {
        Self {
            calls: calls.max(1),
            period,
        }
    }

    /// `calls` per second.
    pub fn per_second(calls: u32) -> Self {
        Self::new(calls, Duration::from_secs(1))
    }

    /// `calls` per minute.
    pub fn per_minute(calls: u32) -> Self {
        Self::new(calls, Duration::from_secs(60))
    }

    /// The time one token takes to come back.
    fn refill(self) -> Duration {
        self.period / self.calls
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.calls {
            1 => write!(f, "once per {}", seconds(self.period)),
            n => write!(f, "{n} times per {}", seconds(self.period)),
        }
    }
}

/// `d` for the model: whole seconds, rounded up, or milliseconds below one.
fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis().max(1))
    } else {
        let whole = d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0));
        format!("{whole} s")
    }
}

/// Refuses calls that come faster than a [`Rate`]: overall, per tool, or
/// for each tool on its own, shared by every session (a rate protects the
/// services behind the tools, which every session reaches). The refusal
/// says which rate and when to try again.
///
/// Tools are counted by their own names, whatever alias the model used, so
/// an alias draws from the same bucket. A call passes only when every
/// bucket it draws from has a token, and then takes one from each. It sits
/// at [`Stage::Checked`], so retries made by [`Retry`](super::Retry) are
/// not counted again; a call a later layer refuses before its tool starts
/// gives its tokens back. At most [`with_max_tools`](Self::with_max_tools)
/// buckets are kept for [`each_tool`](Self::each_tool) (full buckets go
/// first, as they have nothing to remember).
///
/// ```
/// use toolsmith::pipeline::{Pipeline, Rate, RateLimit};
///
/// let limit = RateLimit::new()
///     .overall(Rate::per_second(10))
///     .tool("web_search", Rate::per_minute(6));
/// let pipeline = Pipeline::new().layer(limit);
/// # let _ = pipeline;
/// ```
#[derive(Debug, Clone)]
pub struct RateLimit {
    overall: Option<Rate>,
    each_tool: Option<Rate>,
    tools: HashMap<String, Rate>,
    max_tools: usize,
    buckets: Arc<Mutex<Buckets>>,
}

#[derive(Debug, Default)]
struct Buckets {
    overall: Option<Bucket>,
    tools: HashMap<String, Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(rate: Rate, now: Instant) -> Self {
        Self {
            tokens: f64::from(rate.calls),
            at: now,
        }
    }

    /// Refill for the time since the last look.
    fn refill(&mut self, rate: Rate, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at);
        let refill = rate.refill().as_secs_f64();
        let gained = if refill > 0.0 {
            elapsed.as_secs_f64() / refill
        } else {
            f64::INFINITY
        };
        self.tokens = (self.tokens + gained).min(f64::from(rate.calls));
        self.at = now;
    }

    /// How long until a token is there; zero when one is.
    fn wait(&self, rate: Rate) -> Duration {
        if self.tokens >= 1.0 {
            return Duration::ZERO;
        }
        // Never more than one refill (a token is missing); a period too
        // long for a `Duration` in seconds waits the longest there is.
        let seconds = rate.refill().as_secs_f64() * (1.0 - self.tokens);
        Duration::try_from_secs_f64(seconds).map_or(Duration::MAX, |wait| wait.min(rate.refill()))
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        Self::new()
    }
}

impl RateLimit {
    /// No rates yet; at most 1024 buckets for each tool.
    pub fn new() -> Self {
        Self {
            overall: None,
            each_tool: None,
            tools: HashMap::new(),
            max_tools: 1024,
            buckets: Arc::default(),
        }
    }

    /// All calls together at most at `rate`.
    pub fn overall(mut self, rate: Rate) -> Self {
        self.overall = Some(rate);
        self
    }

    /// Calls of each tool at most at `rate`, every tool on its own (a tool
    /// with its own [`tool`](Self::tool) rate uses that one instead).
    pub fn each_tool(mut self, rate: Rate) -> Self {
        self.each_tool = Some(rate);
        self
    }

    /// Calls of the tool named `tool` (its own name) at most at `rate`.
    pub fn tool(mut self, tool: impl Into<String>, rate: Rate) -> Self {
        self.tools.insert(tool.into(), rate);
        self
    }

    /// Keep at most `tools` buckets for [`each_tool`](Self::each_tool) (at least 1).
    pub fn with_max_tools(mut self, tools: usize) -> Self {
        self.max_tools = tools.max(1);
        self
    }

    /// Take a token for a call of `tool`, or say which rate it is over and
    /// how long until it would pass.
    fn admit(&self, tool: &str) -> Result<(), String> {
        let tool_rate = self.tools.get(tool).copied().or(self.each_tool);
        if self.overall.is_none() && tool_rate.is_none() {
            return Ok(());
        }
        let now = Instant::now();
        let mut buckets = lock(&self.buckets);
        let buckets = &mut *buckets;
        let overall = self.overall.map(|rate| {
            let bucket = buckets
                .overall
                .get_or_insert_with(|| Bucket::full(rate, now));
            bucket.refill(rate, now);
            (rate, bucket)
        });
        if let Some(rate) = tool_rate
            && !buckets.tools.contains_key(tool)
            && buckets.tools.len() >= self.max_tools
        {
            // Full buckets remember nothing; else the fullest goes.
            buckets.tools.retain(|name, bucket| {
                let rate = self
                    .tools
                    .get(name)
                    .copied()
                    .or(self.each_tool)
                    .unwrap_or(rate);
                bucket.refill(rate, now);
                bucket.tokens < f64::from(rate.calls)
            });
            if buckets.tools.len() >= self.max_tools {
                let fullest = buckets
                    .tools
                    .iter()
                    .max_by(|a, b| a.1.tokens.total_cmp(&b.1.tokens))
                    .map(|(name, _)| name.clone());
                if let Some(fullest) = fullest {
                    buckets.tools.remove(&fullest);
                }
            }
        }
        let tool_bucket = tool_rate.map(|rate| {
            let bucket = buckets
                .tools
                .entry(tool.to_owned())
                .or_insert_with(|| Bucket::full(rate, now));
            bucket.refill(rate, now);
            (rate, bucket)
        });
        let tool_wait = tool_bucket.as_ref().map(|(rate, b)| (*rate, b.wait(*rate)));
        let overall_wait = overall.as_ref().map(|(rate, b)| (*rate, b.wait(*rate)));
        if let Some((rate, wait)) = tool_wait.filter(|(_, wait)| !wait.is_zero()) {
            return Err(format!(
                "'{tool}' may be called at most {rate}, and that rate is reached; try again in {}, or continue without it",
                seconds(wait)
            ));
        }
        if let Some((rate, wait)) = overall_wait.filter(|(_, wait)| !wait.is_zero()) {
            return Err(format!(
                "tools may be called at most {rate} in all, and that rate is reached; try again in {}",
                seconds(wait)
            ));
        }
        if let Some((_, bucket)) = tool_bucket {
            bucket.tokens -= 1.0;
        }
        if let Some((_, bucket)) = overall {
            bucket.tokens -= 1.0;
        }
        Ok(())
    }

    /// Put back the tokens [`admit`](Self::admit) took for a call a later
    /// layer refused: it never reached the service the rate protects.
    fn refund(&self, tool: &str) {
        let mut buckets = lock(&self.buckets);
        if let (Some(rate), Some(bucket)) = (self.overall, buckets.overall.as_mut()) {
            bucket.tokens = (bucket.tokens + 1.0).min(f64::from(rate.calls));
        }
        let tool_rate = self.tools.get(tool).copied().or(self.each_tool);
        if let (Some(rate), Some(bucket)) = (tool_rate, buckets.tools.get_mut(tool)) {
            bucket.tokens = (bucket.tokens + 1.0).min(f64::from(rate.calls));
        }
    }
}

#[async_trait]
impl Layer for RateLimit {
    fn stage(&self) -> Stage {
        Stage::Checked
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        if let Err(reason) = self.admit(call.tool_name()) {
            return Err(call.refuse(reason));
        }
        let result = next.run(call).await;
        if refused_before_running(call, &result) {
            self.refund(call.tool_name());
        }
        result
    }
}
