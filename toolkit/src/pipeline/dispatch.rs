//! The future of [`Pipeline::call`](super::Pipeline::call), written out by
//! hand.
//!
//! As an `async fn`, a call kept the tool's future in its own state, copied
//! there from where it was made, and handed the tool's output up through
//! each `await` and each `match` on the way out, a copy at each: most of
//! what a call cost beyond its checks was moving those two (the output is
//! 120 bytes, the future up to 112). Here the tool's future is made once
//! and runs where it lies, and the output is shaped where the guard gives
//! it, then handed to the caller.
//!
//! When the pipeline has layers, or a tracing subscriber may record the
//! call, the call takes the general path, an `async fn` like any other: it
//! builds the [`Call`] that layers and spans read, and these costs do not
//! stand out beside theirs.

use std::future::Future;
use std::marker::PhantomPinned;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use serde_json::Value;

use super::guard::{Guarded, guarded_at};
use super::{Call, Pipeline, error_output, trace};
use crate::context::ToolContext;
use crate::error::{CallError, ToolError};
use crate::exec::shape::shape_for_call;
use crate::output::ToolOutput;
use crate::registry::{Entry, ToolRegistry, check_in_place_unlogged};
use crate::tool::Arguments;
use crate::tool_future::ToolFuture;

/// What a call was given.
pub(super) struct Inputs<'a> {
    pub(super) pipeline: &'a Pipeline,
    pub(super) registry: &'a ToolRegistry,
    pub(super) name: &'a str,
    pub(super) payload: Value,
    pub(super) ctx: &'a ToolContext,
}

/// Where a call is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Made, not polled yet: the inputs are all there.
    Start,
    /// The tool runs under the guard: `work.running` holds its future, and
    /// `entry` what that future borrows.
    Running,
    /// Layers, or a subscriber that may record the call: `work.general`.
    General,
    /// The result is being saved to a file, off the async threads:
    /// `work.saving`.
    Saving,
    /// The output was handed over; `work` holds nothing.
    Done,
}

/// What the stage holds; which one, [`Stage`] says.
union Work<'a, S> {
    /// `Start`: the call's payload.
    payload: ManuallyDrop<Value>,
    running: ManuallyDrop<Guarded<'a, ToolFuture<'a>>>,
    general: ManuallyDrop<S>,
    saving: ManuallyDrop<Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>>,
}

/// A call of [`Pipeline::call`](super::Pipeline::call): the bare steps run
/// here; the general path is `S`, made by `general` from the inputs when
/// the call is first polled (whether a subscriber may record it is known
/// then, not before).
pub(super) struct CallFuture<'a, S> {
    pipeline: &'a Pipeline,
    registry: &'a ToolRegistry,
    name: &'a str,
    ctx: &'a ToolContext,
    general: fn(Inputs<'a>) -> S,
    stage: Stage,
    work: MaybeUninit<Work<'a, S>>,
    /// The entry the running tool's future borrows from: dropped after it.
    entry: Option<Arc<Entry>>,
    /// `work` is polled where it lies.
    _pinned: PhantomPinned,
}

impl<'a, S> CallFuture<'a, S> {
    /// A call with `inputs`, whose general path `general` makes.
    pub(super) fn new(inputs: Inputs<'a>, general: fn(Inputs<'a>) -> S) -> Self {
        let Inputs {
            pipeline,
            registry,
            name,
            payload,
            ctx,
        } = inputs;
        let mut work = MaybeUninit::<Work<'a, S>>::uninit();
        // SAFETY: a field of the union, written in place; the stage is
        // `Start`, which says it holds the payload.
        unsafe {
            std::ptr::addr_of_mut!((*work.as_mut_ptr()).payload).write(ManuallyDrop::new(payload))
        };
        Self {
            pipeline,
            registry,
            name,
            ctx,
            general,
            stage: Stage::Start,
            work,
            entry: None,
            _pinned: PhantomPinned,
        }
    }
}

/// The general path: every layer, inside the call's span, then the result
/// as the model reads it.
pub(super) async fn general(inputs: Inputs<'_>) -> ToolOutput {
    let Inputs {
        pipeline,
        registry,
        name,
        payload,
        ctx,
    } = inputs;
    let id = ctx.call_id().unwrap_or_default();
    let result = {
        // Let go (its entry, its arguments, what a layer kept in it) before
        // the result is saved, as the tool's own future is.
        let mut call = Call::new(registry, id, name, payload, ctx);
        pipeline.run(&mut call).await
    };
    let config = &pipeline.settings.shape;
    if config.persist_dir.is_some() {
        // Boxed: the future of every call stays as small as its own steps.
        return Box::pin(pipeline.finish(result, name, id, ctx)).await;
    }
    let mut output = result.unwrap_or_else(|error| error_output(&error));
    shape_for_call(&mut output, name, config, ctx);
    output
}

impl<S> Future for CallFuture<'_, S>
where
    S: Future<Output = ToolOutput>,
{
    type Output = ToolOutput;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolOutput> {
        // SAFETY: nothing in `work` is moved out while it lives: each
        // future is polled through a pin of where it lies, and dropped there.
        let this = unsafe { self.get_unchecked_mut() };
        let work = this.work.as_mut_ptr();
        if this.stage == Stage::Start
            && let Some(output) = this.start()
        {
            return Poll::Ready(output);
        }
        // The stage the start left (a tool running, the general path, a
        // refusal being saved), or a poll before.
        match this.stage {
            Stage::Running => {
                // SAFETY: `Running` means `work.running` holds the future.
                let guarded = unsafe { Pin::new_unchecked(&mut *(*work).running) };
                // The tool's result is written here by the tool's future,
                // concluded here, and copied once: to the caller.
                let mut result = MaybeUninit::uninit();
                guarded.poll_into(cx, &mut result);
                // SAFETY: `poll_into` always writes `result`, which is
                // read out below at most once (and never dropped here).
                let Poll::Ready(result) = (unsafe { result.assume_init_mut() }) else {
                    return Poll::Pending;
                };
                let output = this.tool_finished(result);
                if this.conclude(output) {
                    // SAFETY: read once; `result` is not used again.
                    return Poll::Ready(unsafe { std::ptr::read(output) });
                }
                this.poll_saving(cx)
            }
            Stage::General => {
                // SAFETY: `General` means `work.general` holds the future.
                let future = unsafe { Pin::new_unchecked(&mut *(*work).general) };
                let output = ready!(future.poll(cx));
                this.drop_work();
                Poll::Ready(output)
            }
            Stage::Saving => this.poll_saving(cx),
            Stage::Start | Stage::Done => {
                panic!("a tool call's future was polled after it finished")
            }
        }
    }
}

impl<S> Drop for CallFuture<'_, S> {
    fn drop(&mut self) {
        // A finished call holds nothing: its entry went with its future.
        if self.stage != Stage::Done {
            self.drop_work();
        }
    }
}

impl<'a, S> CallFuture<'a, S> {
    /// The first poll: the general path if anything may look at the call;
    /// else the tool found and the arguments checked, then the tool started
    /// under the guard, where it will be polled. The output if there is one
    /// already (a refusal), else the stage to poll next is set.
    fn start(&mut self) -> Option<ToolOutput> {
        let work = self.work.as_mut_ptr();
        if !self.pipeline.settings.layers.is_empty() || trace::may_record() {
            let inputs = Inputs {
                pipeline: self.pipeline,
                registry: self.registry,
                name: self.name,
                payload: self.take_payload(),
                ctx: self.ctx,
            };
            let future = ManuallyDrop::new((self.general)(inputs));
            // SAFETY: `work` holds nothing now: its payload was taken.
            unsafe { std::ptr::addr_of_mut!((*work).general).write(future) };
            self.stage = Stage::General;
            return None;
        }
        let Some(entry) = self.registry.entry(self.name) else {
            crate::args::discard(self.take_payload());
            return self.refuse(&self.registry.unknown_tool(self.name));
        };
        // Checked where it lies: it moves once, to the tool.
        // SAFETY: the stage is still `Start`, so `work` holds the payload.
        if let Err(error) = check_in_place_unlogged(&entry, unsafe { &mut (*work).payload }) {
            drop(self.take_payload());
            return self.refuse(&error);
        }
        // SAFETY: the entry is kept in `self.entry` until the future that
        // borrows from it is dropped (`drop_work`); it is an `Arc`, so the
        // `Entry` does not move when the `Arc` does.
        let filed: &'a Entry = unsafe { &*Arc::as_ptr(&entry) };
        self.entry = Some(entry);
        // The payload goes to the tool as its arguments: taken by the tool's
        // start alone, from where it lies.
        self.stage = Stage::Done;
        // SAFETY: a place in `work`, not read here.
        let payload = unsafe { std::ptr::addr_of_mut!((*work).payload) };
        // SAFETY (the read): `work` held the payload while the stage was
        // `Start`, left just above; it is read once, whether the start
        // panics or not, and before the running future is written over it
        // (see `guarded_at`).
        let arguments = || Arguments::json(ManuallyDrop::into_inner(unsafe { payload.read() }));
        // SAFETY: `work` holds only the payload, which `arguments` reads
        // before anything is written there; the future written there is
        // pinned from now on, as `self` is. `ManuallyDrop` has the layout
        // of what it holds.
        unsafe {
            guarded_at(
                std::ptr::addr_of_mut!((*work).running).cast(),
                filed,
                arguments,
                self.ctx,
                &self.pipeline.settings,
            );
        }
        self.stage = Stage::Running;
        None
    }

    /// The payload, taken from the call at its start; the stage leaves
    /// `Start` with it, so neither a later poll nor the drop takes it again
    /// (until then a panic leaves it to the drop).
    fn take_payload(&mut self) -> Value {
        debug_assert!(self.stage == Stage::Start);
        self.stage = Stage::Done;
        // SAFETY: held while the stage is `Start`, which it leaves here.
        unsafe { ManuallyDrop::take(&mut (*self.work.as_mut_ptr()).payload) }
    }

    /// A call refused before its tool ran, concluded: the output if it is
    /// ready, `None` if it is being saved.
    #[cold]
    fn refuse(&mut self, error: &CallError) -> Option<ToolOutput> {
        let mut output = error_output(error);
        self.conclude(&mut output).then_some(output)
    }

    /// The output of the tool's `result`, its failure as the model reads
    /// it; the tool's future and its entry dropped.
    fn tool_finished<'r>(
        &mut self,
        result: &'r mut Result<ToolOutput, ToolError>,
    ) -> &'r mut ToolOutput {
        if let Err(error) = result {
            let name = self.entry.as_ref().map_or("", |entry| entry.name.as_str());
            let error = std::mem::replace(error, ToolError::Cancelled);
            *result = Ok(error_output(&CallError::tool_failed(name, error)));
        }
        // The tool's future and its entry go before the caller has the
        // result, as they would at the end of an `await`.
        self.drop_work();
        match result {
            Ok(output) => output,
            Err(_) => unreachable!("a failure was made an output above"),
        }
    }

    /// `output` as the model reads it: shaped in place (true, stage
    /// `Done`), or taken to be saved to a file off the async threads
    /// (false, stage `Saving`).
    #[inline(always)]
    fn conclude(&mut self, output: &mut ToolOutput) -> bool {
        let (pipeline, name, ctx) = (self.pipeline, self.name, self.ctx);
        let config = &pipeline.settings.shape;
        if config.persist_dir.is_none() {
            shape_for_call(output, name, config, ctx);
            self.stage = Stage::Done;
            return true;
        }
        let id = ctx.call_id().unwrap_or_default();
        let output = std::mem::take(output);
        let future: Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>> =
            Box::pin(pipeline.finish(Ok(output), name, id, ctx));
        // SAFETY: `work` holds nothing once a call concludes.
        unsafe {
            std::ptr::addr_of_mut!((*self.work.as_mut_ptr()).saving)
                .write(ManuallyDrop::new(future));
        }
        self.stage = Stage::Saving;
        false
    }

    fn poll_saving(&mut self, cx: &mut Context<'_>) -> Poll<ToolOutput> {
        // SAFETY: called in stage `Saving`, where `work.saving` holds the future.
        let future = unsafe { &mut *(*self.work.as_mut_ptr()).saving };
        let output = ready!(future.as_mut().poll(cx));
        self.drop_work();
        Poll::Ready(output)
    }

    /// Drop the future of the current stage where it lies, then the entry
    /// it borrowed from; the stage is `Done` after.
    #[inline(always)]
    fn drop_work(&mut self) {
        let stage = std::mem::replace(&mut self.stage, Stage::Done);
        let work = self.work.as_mut_ptr();
        // SAFETY: the stage says which future `work` holds; it is dropped
        // once (the stage is `Done` from here, even if the drop panics).
        unsafe {
            match stage {
                Stage::Running => ManuallyDrop::drop(&mut (*work).running),
                Stage::General => ManuallyDrop::drop(&mut (*work).general),
                Stage::Saving => ManuallyDrop::drop(&mut (*work).saving),
                Stage::Start => ManuallyDrop::drop(&mut (*work).payload),
                Stage::Done => {}
            }
        }
        self.entry = None;
    }
}
