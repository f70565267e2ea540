//! Running tools for an agent: batches, timeouts, approval, hooks, the call
//! lifecycle with checkpoints, and shaping results for the model.

mod approval;
pub(crate) mod blocking;
mod hooks;
mod lifecycle;
mod runner;
pub mod shape;
mod wire;

pub(crate) use approval::warning_for;
pub use approval::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, NoApprover, RiskTable,
};
pub use blocking::{BlockingLimit, run_blocking};
pub use hooks::{BeforeCall, CallInfo, Hook};
pub use lifecycle::{BatchState, CallRecord, CallStatus, LifecycleError, ToolCall};
pub use runner::{Checkpoint, Runner};
pub use shape::{CompactConfig, ShapeConfig, compact_history, meta, shape_output};
pub use wire::WireError;
