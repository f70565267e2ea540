//! [`Hooks`]: the runner's before- and after-hooks as a layer.

use std::sync::Arc;

use async_trait::async_trait;

use super::{Call, Layer, Next, Stage, error_output};
use crate::error::CallError;
use crate::exec::{BeforeCall, CallInfo, Hook};
use crate::output::ToolOutput;

/// Before-hooks see the model's arguments before they are checked (what
/// they leave is still checked) and may refuse the call; after-hooks see
/// every result before it is shaped, failures as the text the model will
/// read. Hooks run in the order they were added.
#[derive(Clone, Default)]
pub struct Hooks {
    hooks: Vec<Arc<dyn Hook>>,
}

impl Hooks {
    /// No hooks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a hook, to run after the ones added before.
    pub fn with(mut self, hook: impl Hook + 'static) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// [`with`](Self::with) for a hook already shared.
    pub fn with_arc(mut self, hook: Arc<dyn Hook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Whether there are no hooks.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("hooks", &self.hooks.len())
            .finish()
    }
}

#[async_trait]
impl Layer for Hooks {
    fn stage(&self) -> Stage {
        Stage::Received
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        for hook in &self.hooks {
            let mut arguments = std::mem::take(call.arguments_mut());
            let verdict = hook.before(info(call), &mut arguments).await;
            *call.arguments_mut() = arguments;
            if let BeforeCall::Refuse(reason) = verdict {
                return Err(call.refuse(reason));
            }
        }
        let mut output = match next.run(call).await {
            Ok(output) => output,
            Err(error) => error_output(&error),
        };
        for hook in &self.hooks {
            hook.after(info(call), &mut output).await;
        }
        Ok(output)
    }
}

fn info<'c>(call: &'c Call<'_>) -> CallInfo<'c> {
    CallInfo {
        call_id: call.id(),
        tool: call.name(),
        spec: call.spec(),
    }
}
