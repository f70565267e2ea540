//! The one path every call takes, whoever makes it: [`ToolRegistry::call`],
//! the [`Runner`](crate::exec::Runner), the MCP server, and the tools
//! mounted from MCP servers.
//!
//! ```text
//!  the model's call ── span `execute_tool {name}` ───────────────────────────┐
//!  │ layers at Stage::Received    (hooks, retry budget)   see the raw arguments
//!  │ check: find the tool, read the payload, cast, validate
//!  │ layers at Stage::Checked     (validators, limits)    see checked arguments
//!  │ layers at Stage::Approval    (approval)
//!  │ layers at Stage::Execute     (masking, caching, retries)
//!  │ guard: timeout, cancellation, panic containment
//!  │ the tool
//!  └─ result: an error becomes text the model can act on, then shaping ─────┘
//! ```
//!
//! A [`Pipeline`] is the guard's defaults (the timeout of tools that set
//! none, how results are shaped) and the [`Layer`]s a host adds. Every
//! entry point runs the same steps, so a failure reads the same wherever
//! the call came from. With no layers, a call costs what the bare steps
//! cost: nothing is boxed, nothing is copied, and the timer and the
//! cancellation watch are set only when the tool has to wait.
//!
//! ```
//! use std::time::Duration;
//! use toolsmith::pipeline::{Call, Layer, Next, Pipeline, Stage};
//! use toolsmith::{CallError, ToolContext, ToolOutput, ToolRegistry, async_trait, tool};
//! use serde_json::json;
//!
//! /// Add two numbers.
//! #[tool(read_only)]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! /// Refuses numbers above 100, after casting and before any approval.
//! struct Small;
//!
//! #[async_trait]
//! impl Layer for Small {
//!     fn stage(&self) -> Stage { Stage::Checked }
//!     async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
//!         if call.arguments()["a"].as_i64() > Some(100) {
//!             return Err(call.invalid_arguments("a", "must be 100 or less"));
//!         }
//!         next.run(call).await
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = ToolRegistry::new()
//!     .with_pipeline(Pipeline::new().with_timeout(Duration::from_secs(5)).layer(Small));
//! registry.register(AddTool).unwrap();
//! let ctx = ToolContext::new();
//! assert_eq!(registry.call("add", json!({"a": "2", "b": 3}), &ctx).await.content, "5");
//! let refused = registry.call("add", json!({"a": 200, "b": 3}), &ctx).await;
//! assert!(refused.content.contains("a must be 100 or less"));
//! # }
//! ```

mod approval;
mod budget;
mod cache;
mod call;
mod dispatch;
mod guard;
mod hooks;
mod limits;
mod mask;
mod retry;
mod trace;
mod validate;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tracing::Instrument;

use crate::context::ToolContext;
use crate::error::{CallError, ToolError};
use crate::exec::shape::{ShapeConfig, meta, shape_in_place, shape_output};
use crate::output::ToolOutput;
use crate::registry::ToolRegistry;
use crate::tool::Arguments;

pub use approval::Approval;
pub use budget::RetryBudget;
pub use cache::Cache;
pub use call::{ApprovalMark, Call, Phase};
pub use hooks::Hooks;
pub use limits::{CallLimits, Rate, RateLimit};
pub use mask::{Failure, Mask};
pub use retry::Retry;
pub use validate::Validators;

pub(crate) use guard::start_contained;
#[cfg(all(feature = "otel", feature = "mcp"))]
pub(crate) use trace::with_remote_parent;

/// The timeout of tools that set none, unless a pipeline says otherwise: 60 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Where in the pipeline a layer sits; layers of one stage run in the
/// order they were added, outermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// Before the arguments are checked: the layer sees them as the model
    /// sent them (and may rewrite them; what it leaves is still checked),
    /// and sees every refusal of the check, so it can count them.
    Received,
    /// After casting and validation: the arguments fit the schema. Argument
    /// validators and limits go here, so a model can fix a call before a
    /// person is asked about it.
    Checked,
    /// Where approval is asked.
    Approval,
    /// Around the tool itself, after approval: retries, caching, masking.
    Execute,
}

/// One concern around every call: code that runs before and after the rest
/// of the pipeline, given as [`Next`].
///
/// A layer may change the call (its arguments, its context), answer without
/// calling `next` (a refusal, a cached result), call `next` more than once
/// (a retry), and change or replace what comes back.
#[async_trait]
pub trait Layer: Send + Sync + 'static {
    /// Where the layer sits; [`Stage::Execute`] unless it says otherwise.
    fn stage(&self) -> Stage {
        Stage::Execute
    }

    /// Handle one call: usually some work, `next.run(call).await`, more work.
    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError>;
}

/// The rest of the pipeline after a layer: the later layers, the check, the
/// guard and the tool. Copy it to run the rest more than once.
#[derive(Clone, Copy)]
pub struct Next<'p> {
    settings: &'p Settings,
    position: usize,
}

impl Next<'_> {
    /// Run the rest of the pipeline for `call`.
    pub async fn run(self, call: &mut Call<'_>) -> Result<ToolOutput, CallError> {
        let settings = self.settings;
        if self.position == settings.check_at && !call.is_checked() {
            call.check()?;
        }
        match settings.layers.get(self.position) {
            Some(layer) => {
                let next = Next {
                    settings,
                    position: self.position + 1,
                };
                layer.handle(call, next).await
            }
            None => execute(settings, call)?.run().await,
        }
    }
}

/// The steps and layers every call goes through; see the [module](self).
///
/// Cheap to clone: the layers are shared.
#[derive(Clone)]
pub struct Pipeline {
    settings: Arc<Settings>,
}

#[derive(Clone)]
struct Settings {
    /// Every layer, sorted by stage (stable: the order added within one).
    layers: Vec<Arc<dyn Layer>>,
    /// The index of the first layer after the check.
    check_at: usize,
    timeout: Duration,
    shape: ShapeConfig,
}

impl Default for Pipeline {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("layers", &self.settings.layers.len())
            .field("timeout", &self.settings.timeout)
            .field("shape", &self.settings.shape)
            .finish()
    }
}

impl Pipeline {
    /// The defaults alone: a 60 s timeout for tools that set none,
    /// cancellation, panic containment and the default shaping.
    pub fn new() -> Self {
        Self {
            settings: Arc::new(Settings {
                layers: Vec::new(),
                check_at: 0,
                timeout: DEFAULT_TIMEOUT,
                shape: ShapeConfig::default(),
            }),
        }
    }

    fn edit(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(Arc::make_mut(&mut self.settings));
        self
    }

    /// The timeout of tools that do not set their own.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        self.edit(|s| s.timeout = timeout)
    }

    /// How results are cut or saved for the model.
    pub fn with_shape(self, shape: ShapeConfig) -> Self {
        self.edit(|s| s.shape = shape)
    }

    /// Add a layer, after (inside) the layers of its stage added before.
    pub fn layer(self, layer: impl Layer) -> Self {
        self.layer_arc(Arc::new(layer))
    }

    /// [`layer`](Self::layer) for a layer already shared.
    pub fn layer_arc(self, layer: Arc<dyn Layer>) -> Self {
        self.edit(|s| {
            let stage = layer.stage();
            let at = s.layers.partition_point(|l| l.stage() <= stage);
            s.layers.insert(at, layer);
            s.check_at = s.layers.partition_point(|l| l.stage() == Stage::Received);
        })
    }

    /// The timeout of tools that do not set their own.
    pub fn timeout(&self) -> Duration {
        self.settings.timeout
    }

    /// How results are shaped.
    pub fn shape(&self) -> &ShapeConfig {
        &self.settings.shape
    }

    /// How many layers were added.
    pub fn len(&self) -> usize {
        self.settings.layers.len()
    }

    /// Whether only the defaults run.
    pub fn is_empty(&self) -> bool {
        self.settings.layers.is_empty()
    }

    /// Run a call of `name` in `registry` and return what the model reads:
    /// the tool's output, or an error whose text says what to do next, shaped.
    ///
    /// With the defaults alone and no subscriber, nothing can look at the
    /// call on its way: the check and the guarded tool run in the call's
    /// own future, with no [`Call`] to record it, and the casts are not
    /// written out (only layers and spans read them).
    pub fn call<'a>(
        &'a self,
        registry: &'a ToolRegistry,
        name: &'a str,
        payload: Value,
        ctx: &'a ToolContext,
    ) -> impl Future<Output = ToolOutput> + Send + 'a {
        let inputs = dispatch::Inputs {
            pipeline: self,
            registry,
            name,
            payload,
            ctx,
        };
        dispatch::CallFuture::new(inputs, dispatch::general)
    }

    /// Run a call; a failure comes back as the typed error, and an output
    /// is not shaped.
    pub async fn try_call(
        &self,
        registry: &ToolRegistry,
        name: &str,
        payload: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, CallError> {
        let id = ctx.call_id().unwrap_or_default();
        let mut call = Call::new(registry, id, name, payload, ctx);
        self.run(&mut call).await
    }

    /// Run `call` through every layer, the check, the guard and the tool,
    /// inside the call's span.
    pub async fn run(&self, call: &mut Call<'_>) -> Result<ToolOutput, CallError> {
        let span = trace::span_for(call);
        // Without a subscriber the span is a no-op: skip entering it on
        // every poll, and, without layers, go straight to the guarded tool.
        if span.is_disabled() {
            if self.settings.layers.is_empty() {
                return check_and_execute(&self.settings, call, true)?.run().await;
            }
            return self.steps(call)?.await;
        }
        let result = match self.steps(call) {
            Ok(steps) => steps.instrument(span.clone()).await,
            Err(error) => Err(error),
        };
        trace::record_result(&span, call.tool_name(), &result);
        result
    }

    /// The layers, the check and the tool, as one future; without layers,
    /// the check now and the guarded tool, with no state machine between.
    fn steps<'c>(
        &'c self,
        call: &'c mut Call<'_>,
    ) -> Result<impl Future<Output = Result<ToolOutput, CallError>> + 'c, CallError> {
        use futures_util::future::Either;
        let settings = &*self.settings;
        if settings.layers.is_empty() {
            return Ok(Either::Left(check_and_execute(settings, call, true)?.run()));
        }
        Ok(Either::Right(layered(settings, call)))
    }

    /// What the model reads of a result: an error as its text (its kind in
    /// the metadata), then shaped. A result saved to a file is written off
    /// the async threads.
    pub async fn finish(
        &self,
        result: Result<ToolOutput, CallError>,
        name: &str,
        id: &str,
        ctx: &ToolContext,
    ) -> ToolOutput {
        let mut output = match result {
            Ok(output) => output,
            Err(error) => error_output(&error),
        };
        let config = &self.settings.shape;
        if config.persist_dir.is_none() {
            shape_in_place(&mut output, name, id, config, ctx.workspace());
            return output;
        }
        let (config, name, id) = (config.clone(), name.to_owned(), id.to_owned());
        let workspace = ctx.workspace().map(ToOwned::to_owned);
        let fallback = ToolOutput::error(format!(
            "Error: the result of '{name}' could not be shaped."
        ));
        tokio::task::spawn_blocking(move || {
            shape_output(output, &name, &id, &config, workspace.as_deref())
        })
        .await
        .unwrap_or(fallback)
    }
}

/// Every layer, the check and the tool. A panic in a layer (a hook, an
/// approver, a validator, a policy: the host's code) is contained like a
/// tool's: an error for this call alone, not for the host.
async fn layered(settings: &Settings, call: &mut Call<'_>) -> Result<ToolOutput, CallError> {
    use futures_util::FutureExt;
    let next = Next {
        settings,
        position: 0,
    };
    match std::panic::AssertUnwindSafe(next.run(call))
        .catch_unwind()
        .await
    {
        Ok(result) => result,
        Err(panic) => Err(call.fail(ToolError::Panicked(crate::panics::message(panic)))),
    }
}

/// An error as the result the model reads, its kind kept for the host.
pub fn error_output(error: &CallError) -> ToolOutput {
    let mut output = ToolOutput::error(error.to_model_text());
    output.metadata.write(&meta::ERROR_KIND, &error.kind());
    output
}

/// The check, then the guarded tool: all of a call that no layer wraps.
/// The casts are kept in `call` if `log_casts`.
#[inline(always)]
fn check_and_execute<'c>(
    settings: &Settings,
    call: &'c mut Call<'_>,
    log_casts: bool,
) -> Result<guard::Ready<'c>, CallError> {
    call.check_logging(log_casts)?;
    execute(settings, call)
}

/// The innermost step: the tool, its arguments and its bounds, ready to
/// start under the guard ([`guard::Ready::run`]). The tool's future is
/// made where it is awaited, so the call's future is not moved on its way.
#[inline(always)]
fn execute<'c>(settings: &Settings, call: &'c mut Call<'_>) -> Result<guard::Ready<'c>, CallError> {
    if call.approval() == ApprovalMark::Asked {
        // Approval was asked for (before an interruption, say) and no layer
        // has answered it: nobody said yes, so the tool does not run.
        return Err(call.fail(ToolError::Denied(Some(
            "approval is required and no approver is configured".into(),
        ))));
    }
    call.mark_started();
    call.notify(Phase::Executing);
    let arguments = Arguments::json(std::mem::take(call.arguments_mut()));
    let call: &'c Call<'_> = call;
    let Some(entry) = call.entry() else {
        // `check` found the tool, or the call never got here.
        return Err(call.unknown_tool());
    };
    Ok(guard::Ready::new(
        entry,
        arguments,
        call.context(),
        settings,
    ))
}
