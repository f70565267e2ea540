//! [`Call`]: one call on its way through the pipeline, as layers see it.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::args::Cast;
use crate::context::ToolContext;
use crate::error::{ArgumentError, CallError, InvalidArguments, ToolError};
use crate::registry::{Entry, ToolRegistry};
use crate::tool::{Tool, ToolSpec};

/// Where a call stands with approval, for a host that keeps calls across
/// an interruption (the [`Runner`](crate::exec::Runner)'s batch state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalMark {
    /// Not asked yet: the policy decides.
    #[default]
    NotAsked,
    /// Asked before and not answered (the batch was stopped): ask again.
    Asked,
    /// A person said yes: do not ask again.
    Approved,
}

/// A step of a call that a host may want to record as it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Approval is being asked.
    AwaitingApproval,
    /// Approval was given.
    Approved,
    /// The tool is starting.
    Executing,
}

/// One call on its way through the pipeline: which tool, with what
/// arguments, in what context, and what has been decided so far.
pub struct Call<'a> {
    registry: &'a ToolRegistry,
    id: &'a str,
    name: &'a str,
    arguments: Value,
    ctx: Cow<'a, ToolContext>,
    entry: Option<Arc<Entry>>,
    checked: bool,
    casts: Vec<Cast>,
    approval: ApprovalMark,
    observer: Option<&'a (dyn Fn(Phase) + Send + Sync)>,
    /// Whether the tool was started (at least once).
    started: bool,
}

impl<'a> Call<'a> {
    /// A call of the tool the model named `name`, with the model's
    /// `payload`, made in `ctx`; `id` is the provider's call id ("" if none).
    #[inline]
    pub fn new(
        registry: &'a ToolRegistry,
        id: &'a str,
        name: &'a str,
        payload: Value,
        ctx: &'a ToolContext,
    ) -> Self {
        Self {
            registry,
            id,
            name,
            arguments: payload,
            ctx: Cow::Borrowed(ctx),
            entry: registry.entry(name),
            checked: false,
            casts: Vec::new(),
            approval: ApprovalMark::NotAsked,
            observer: None,
            started: false,
        }
    }

    /// Where the call stands with approval (for a call resumed after an interruption).
    pub fn with_approval(mut self, mark: ApprovalMark) -> Self {
        self.approval = mark;
        self
    }

    /// Tell `observer` each [`Phase`] as the call reaches it.
    pub fn with_observer(mut self, observer: &'a (dyn Fn(Phase) + Send + Sync)) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The provider's call id; empty when there is none.
    pub fn id(&self) -> &str {
        self.id
    }

    /// The tool's name as the model wrote it.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The tool's own name when it exists (the model may have used an
    /// alias a provider's rules made of it), else the name as written.
    pub fn tool_name(&self) -> &str {
        // As the registry filed it, not asked of the tool again.
        self.entry
            .as_ref()
            .map_or(self.name, |entry| entry.name.as_str())
    }

    /// The tool, when one has that name.
    pub fn tool(&self) -> Option<&Arc<dyn Tool>> {
        self.entry.as_ref().map(|entry| &*entry.tool)
    }

    /// The tool's entry in the registry, when one has that name.
    pub(crate) fn entry(&self) -> Option<&Entry> {
        self.entry.as_deref()
    }

    /// The tool's spec, when one has that name.
    pub fn spec(&self) -> Option<&ToolSpec> {
        self.tool().map(|tool| tool.spec())
    }

    /// The arguments: as the model sent them before the check, cast and
    /// valid for the tool's schema after it ([`is_checked`](Self::is_checked)).
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The arguments, to change. Changes made after the check are not
    /// checked again. The tool takes them when it runs: a layer that runs
    /// the rest of the pipeline again keeps a copy and puts it back.
    pub fn arguments_mut(&mut self) -> &mut Value {
        &mut self.arguments
    }

    /// Whether the arguments passed the check.
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// The lenient casts the check applied (and the repairs of the
    /// payload's text before them).
    pub fn casts(&self) -> &[Cast] {
        &self.casts
    }

    /// The context the tool will run in.
    pub fn context(&self) -> &ToolContext {
        &self.ctx
    }

    /// Run the tool in another context (with more state, another token).
    pub fn set_context(&mut self, ctx: ToolContext) {
        self.ctx = Cow::Owned(ctx);
    }

    /// Where the call stands with approval.
    pub fn approval(&self) -> ApprovalMark {
        self.approval
    }

    /// Record where the call stands with approval, and tell the observer.
    pub fn set_approval(&mut self, mark: ApprovalMark) {
        self.approval = mark;
        match mark {
            ApprovalMark::Asked => self.notify(Phase::AwaitingApproval),
            ApprovalMark::Approved => self.notify(Phase::Approved),
            ApprovalMark::NotAsked => {}
        }
    }

    /// Whether the tool itself was started; a call answered or refused by
    /// a layer never was.
    pub fn tool_started(&self) -> bool {
        self.started
    }

    pub(crate) fn mark_started(&mut self) {
        self.started = true;
    }

    #[inline]
    pub(crate) fn notify(&self, phase: Phase) {
        if let Some(observer) = self.observer {
            observer(phase);
        }
    }

    /// The error for arguments a layer refuses: `path` as `meta.flags[0]`
    /// ("" for the arguments as a whole) and what is wrong there, read by
    /// the model like the schema's own refusals.
    pub fn invalid_arguments(&self, path: &str, problem: impl Into<String>) -> CallError {
        CallError::InvalidArguments(InvalidArguments {
            tool: self.tool_name().to_owned(),
            errors: vec![ArgumentError::other(path, problem)],
        })
    }

    /// The error for a call a layer refuses to run, with the reason the model reads.
    pub fn refuse(&self, reason: impl Into<String>) -> CallError {
        CallError::Refused {
            tool: self.tool_name().to_owned(),
            reason: reason.into(),
        }
    }

    /// A [`ToolError`] of this call's tool.
    pub fn fail(&self, error: ToolError) -> CallError {
        CallError::tool_failed(self.tool_name(), error)
    }

    /// The error for a name no tool has.
    pub(crate) fn unknown_tool(&self) -> CallError {
        // Looked up in the registry the call was made with, when it was made.
        match &self.entry {
            Some(_) => CallError::Tool {
                tool: self.tool_name().to_owned(),
                error: ToolError::internal("the tool was found, yet not run"),
            },
            None => self.registry.unknown_tool(self.name),
        }
    }

    /// Find the tool, read the payload, cast and validate.
    #[inline(always)]
    pub(crate) fn check(&mut self) -> Result<(), CallError> {
        self.check_logging(true)
    }

    /// [`check`](Self::check); the casts are kept for [`casts`](Self::casts)
    /// only if `log_casts`, for a call nobody can ask them of.
    #[inline(always)]
    pub(crate) fn check_logging(&mut self, log_casts: bool) -> Result<(), CallError> {
        let Some(entry) = &self.entry else {
            crate::args::discard(std::mem::take(&mut self.arguments));
            return Err(self.unknown_tool());
        };
        if log_casts {
            self.casts = crate::registry::check_in_place(entry, &mut self.arguments)?;
        } else {
            crate::registry::check_in_place_unlogged(entry, &mut self.arguments)?;
        }
        self.checked = true;
        Ok(())
    }
}

impl std::fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .field("checked", &self.checked)
            .field("casts", &self.casts)
            .field("approval", &self.approval)
            .finish()
    }
}
