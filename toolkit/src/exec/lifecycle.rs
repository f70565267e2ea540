//! The life of one call and of a batch: statuses, the legal transitions
//! between them, and recovery from a checkpoint.
//!
//! ```text
//!                 ┌──────────── approved ─────────────┐
//!                 ▼                                   │
//!  (model) ──▶ pending ──▶ awaiting_approval ─────────┘
//!               │  │  │            │ denied
//!               │  │  │            ▼
//!               │  │  └────────▶ cancelled ◀────────┐
//!               │  ▼                                │
//!               │ executing ──▶ success             │
//!               │  │  │  └────▶ error               │
//!               │  │  └───────▶ cancelled           │
//!               │  ▼                                │
//!               │ interrupted ── retry ──▶ pending  │
//!               │  └──────────── cancel ────────────┘
//!               └──▶ error   (refused before running: unknown tool, bad arguments, a hook)
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::output::ToolOutput;

/// One tool call from a model turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call, echoed back with the result.
    pub id: String,
    /// The tool the model asked for.
    pub name: String,
    /// What the model sent as arguments, untouched.
    pub arguments: Value,
}

impl ToolCall {
    /// A call with the provider's id, the tool's name and the arguments as sent.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// Where a call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// Waiting to run (or to be checked for approval).
    Pending,
    /// Waiting for a person to approve it.
    AwaitingApproval,
    /// Running now.
    Executing,
    /// Finished and succeeded. Never run again.
    Success,
    /// Finished, or was refused before running, with an error. Never run again.
    Error,
    /// Denied or cancelled. Never run again.
    Cancelled,
    /// Was running when the process stopped; its effect is unknown. Waits
    /// for an explicit [`BatchState::retry`] or [`BatchState::cancel`].
    Interrupted,
}

impl CallStatus {
    /// Whether `self -> next` is a legal step.
    pub fn can_become(self, next: CallStatus) -> bool {
        use CallStatus::*;
        matches!(
            (self, next),
            (Pending, AwaitingApproval | Executing | Cancelled | Error)
                | (AwaitingApproval, Pending | Cancelled)
                | (Executing, Success | Error | Cancelled | Interrupted)
                | (Interrupted, Pending | Cancelled)
        )
    }

    /// Success, error and cancelled are final.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Success | Self::Error | Self::Cancelled)
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Executing => "executing",
            Self::Success => "success",
            Self::Error => "error",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for CallStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A step the lifecycle does not allow, or a call that is not in the batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LifecycleError {
    /// The transition is not on the diagram.
    #[error("call '{id}' cannot go from {from} to {to}")]
    Illegal {
        /// The call.
        id: String,
        /// Its status.
        from: CallStatus,
        /// The refused status.
        to: CallStatus,
    },
    /// No call with that id.
    #[error("no call with id '{0}' in this batch")]
    UnknownCall(String),
}

/// One call, its status and, once final, its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The call as the model made it.
    pub call: ToolCall,
    /// Where it is.
    pub status: CallStatus,
    /// The result the model will read, once there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ToolOutput>,
    /// A person approved this call. Kept in the checkpoint, so a batch
    /// resumed after an interruption runs an approved call again (once
    /// retried) without asking a second time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub approved: bool,
}

/// Every call of one model turn: serializable, so a host can checkpoint it
/// and pick up after a crash.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchState {
    /// The calls, in the order the model made them.
    pub calls: Vec<CallRecord>,
}

impl BatchState {
    /// A batch of pending calls.
    pub fn new(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self {
            calls: calls
                .into_iter()
                .map(|call| CallRecord {
                    call,
                    status: CallStatus::Pending,
                    output: None,
                    approved: false,
                })
                .collect(),
        }
    }

    /// Prepare a restored checkpoint to run again: a call that was executing
    /// when the process stopped becomes interrupted (its effect is unknown, so
    /// it is not re-run by itself). Calls awaiting approval are asked again
    /// when the batch runs; final calls are never re-run.
    pub fn recover(&mut self) {
        for record in &mut self.calls {
            if record.status == CallStatus::Executing {
                record.status = CallStatus::Interrupted;
            }
        }
    }

    /// Run an interrupted call again when the batch next runs.
    pub fn retry(&mut self, id: &str) -> Result<(), LifecycleError> {
        let index = self.index_of(id)?;
        self.transition(index, CallStatus::Pending)
    }

    /// Give up on an interrupted (or pending) call; the model is told it was cancelled.
    pub fn cancel(&mut self, id: &str) -> Result<(), LifecycleError> {
        let index = self.index_of(id)?;
        self.transition(index, CallStatus::Cancelled)?;
        self.calls[index].output = Some(ToolOutput::error(
            "Error: the call was cancelled before it finished.\n\n[Do not retry this call unless the user asks; continue without it.]",
        ));
        Ok(())
    }

    /// Whether every call is final.
    pub fn is_finished(&self) -> bool {
        self.calls.iter().all(|r| r.status.is_final())
    }

    /// The record of a call.
    pub fn get(&self, id: &str) -> Option<&CallRecord> {
        self.calls.iter().find(|r| r.call.id == id)
    }

    fn index_of(&self, id: &str) -> Result<usize, LifecycleError> {
        self.calls
            .iter()
            .position(|r| r.call.id == id)
            .ok_or_else(|| LifecycleError::UnknownCall(id.to_owned()))
    }

    /// Move call `index` to `next`, if the lifecycle allows it.
    pub(crate) fn transition(
        &mut self,
        index: usize,
        next: CallStatus,
    ) -> Result<(), LifecycleError> {
        let record = &mut self.calls[index];
        if !record.status.can_become(next) {
            return Err(LifecycleError::Illegal {
                id: record.call.id.clone(),
                from: record.status,
                to: next,
            });
        }
        record.status = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CallStatus::*;
    use serde_json::json;

    const ALL: [CallStatus; 7] = [
        Pending,
        AwaitingApproval,
        Executing,
        Success,
        Error,
        Cancelled,
        Interrupted,
    ];

    #[test]
    fn final_statuses_never_move() {
        for from in [Success, Error, Cancelled] {
            for to in ALL {
                assert!(!from.can_become(to), "{from} -> {to} must be illegal");
            }
        }
    }

    #[test]
    fn the_diagram_and_nothing_else() {
        let legal: Vec<(CallStatus, CallStatus)> = ALL
            .iter()
            .flat_map(|&a| ALL.iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| a.can_become(b))
            .collect();
        assert_eq!(
            legal,
            vec![
                (Pending, AwaitingApproval),
                (Pending, Executing),
                (Pending, Error),
                (Pending, Cancelled),
                (AwaitingApproval, Pending),
                (AwaitingApproval, Cancelled),
                (Executing, Success),
                (Executing, Error),
                (Executing, Cancelled),
                (Executing, Interrupted),
                (Interrupted, Pending),
                (Interrupted, Cancelled),
            ]
        );
    }

    #[test]
    fn recovery_interrupts_only_executing_calls() {
        let mut state =
            BatchState::new(["a", "b", "c", "d"].map(|id| ToolCall::new(id, "t", json!({}))));
        state.calls[0].status = Success;
        state.calls[1].status = Executing;
        state.calls[2].status = AwaitingApproval;
        state.recover();
        let statuses: Vec<_> = state.calls.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [Success, Interrupted, AwaitingApproval, Pending]);
    }

    #[test]
    fn interrupted_calls_wait_for_retry_or_cancel() {
        let mut state = BatchState::new([
            ToolCall::new("a", "t", json!({})),
            ToolCall::new("b", "t", json!({})),
        ]);
        state.calls[0].status = Interrupted;
        state.calls[1].status = Interrupted;
        state.retry("a").unwrap();
        state.cancel("b").unwrap();
        assert_eq!(state.calls[0].status, Pending);
        assert_eq!(state.calls[1].status, Cancelled);
        assert!(state.calls[1].output.as_ref().unwrap().is_error);
        assert_eq!(
            state.retry("b"),
            Err(LifecycleError::Illegal {
                id: "b".into(),
                from: Cancelled,
                to: Pending
            })
        );
        assert_eq!(
            state.retry("zzz"),
            Err(LifecycleError::UnknownCall("zzz".into()))
        );
    }

    #[test]
    fn a_batch_round_trips_through_json() {
        let mut state = BatchState::new([ToolCall::new("a", "t", json!({"x": 1}))]);
        state.calls[0].status = AwaitingApproval;
        let text = serde_json::to_string(&state).unwrap();
        assert!(text.contains("\"awaiting_approval\""));
        let back: BatchState = serde_json::from_str(&text).unwrap();
        assert_eq!(back, state);
    }
}
