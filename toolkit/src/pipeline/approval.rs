//! [`Approval`]: ask before a call runs, when the policy says so.

use std::sync::Arc;

use async_trait::async_trait;

use super::{ApprovalMark, Call, Layer, Next, Stage};
use crate::error::{CallError, ToolError};
use crate::exec::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, NoApprover, RiskTable,
};
use crate::output::ToolOutput;

/// Asks an [`Approver`] before a call the [`ApprovalPolicy`] holds back.
///
/// It sits after the check and the [`Stage::Checked`] layers, so a person
/// is only asked about arguments that fit the tool and passed its
/// validators, and sees them as the tool will receive them. One question
/// is asked at a time, however many calls run at once. A call stopped
/// while asking is cancelled, and one a person already approved (before an
/// interruption, see [`ApprovalMark`]) is not asked about again.
#[derive(Clone)]
pub struct Approval {
    policy: ApprovalPolicy,
    risks: RiskTable,
    approver: Arc<dyn Approver>,
    /// One question at a time.
    asking: Arc<tokio::sync::Mutex<()>>,
}

impl Approval {
    /// Ask `approver` about the calls `policy` holds back.
    pub fn new(policy: ApprovalPolicy, approver: impl Approver + 'static) -> Self {
        Self::with_arc(policy, Arc::new(approver))
    }

    /// [`new`](Self::new) for an approver already shared.
    pub fn with_arc(policy: ApprovalPolicy, approver: Arc<dyn Approver>) -> Self {
        Self {
            policy,
            risks: RiskTable::default(),
            approver,
            asking: Arc::default(),
        }
    }

    /// Refuse every call the policy holds back: the host's policy alone
    /// decides, and nobody is asked.
    pub fn deny(policy: ApprovalPolicy) -> Self {
        Self::new(policy, NoApprover)
    }

    /// Risk overrides by tool name.
    pub fn with_risk_table(mut self, risks: RiskTable) -> Self {
        self.risks = risks;
        self
    }
}

impl std::fmt::Debug for Approval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approval")
            .field("policy", &self.policy)
            .field("risks", &self.risks)
            .finish()
    }
}

#[async_trait]
impl Layer for Approval {
    fn stage(&self) -> Stage {
        Stage::Approval
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        // Policy and risk go by the tool's own name, whatever alias the
        // model used for it.
        let tool = call.tool_name().to_owned();
        let spec = call.spec();
        let risk = self.risks.risk_of(&tool, spec);
        let needs = match call.approval() {
            ApprovalMark::Approved => false,
            ApprovalMark::Asked => true,
            ApprovalMark::NotAsked => self.policy.requires(&tool, risk),
        };
        if !needs {
            return next.run(call).await;
        }
        let request = ApprovalRequest {
            call_id: call.id().to_owned(),
            warning: crate::exec::warning_for(&tool, risk, spec),
            tool,
            arguments: call.arguments().clone(),
            risk,
        };
        call.set_approval(ApprovalMark::Asked);
        let cancelled = call.context().cancellation().clone();
        let decision = tokio::select! {
            () = cancelled.cancelled() => None,
            decision = async {
                let _turn = self.asking.lock().await;
                self.approver.approve(&request).await
            } => Some(decision),
        };
        match decision {
            Some(ApprovalDecision::Approve) => {
                call.set_approval(ApprovalMark::Approved);
                next.run(call).await
            }
            Some(ApprovalDecision::Deny(reason)) => Err(call.fail(ToolError::Denied(reason))),
            // Nobody said no: the call was stopped while asking.
            None => Err(call.fail(ToolError::Cancelled)),
        }
    }
}
