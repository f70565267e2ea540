//! [`Mask`]: the host decides what the model reads of a failure.

use std::sync::Arc;

use async_trait::async_trait;

use super::{Call, Layer, Next, Stage};
use crate::error::{CallError, ErrorKind};
use crate::exec::shape::meta;
use crate::output::ToolOutput;

/// A failure as [`Mask`]'s policy sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Failure<'a> {
    /// The tool's own name (the name as written when no tool has it).
    pub tool: &'a str,
    /// What kind of failure; it stays the same whatever the model reads.
    pub kind: ErrorKind,
    /// The text the model would read.
    pub text: &'a str,
    /// The typed error, when the failure reached the layer as one (a layer
    /// inside it may have made it a result already, as
    /// [`Retry`](super::Retry) does when it retried).
    pub error: Option<&'a CallError>,
}

type Policy = Arc<dyn Fn(&Failure<'_>) -> Option<String> + Send + Sync>;

/// Decides what the model reads when a call fails: a policy, given each
/// [`Failure`], returns the text to show instead, or `None` to show the
/// failure as it is.
///
/// A replaced failure comes back as an error result with the new text and
/// the same kind under [`meta::ERROR_KIND`]; its original text is kept
/// under [`meta::MASKED_ERROR`] (metadata never reaches the model) and
/// logged with `tracing` at the warn level. The [default](Self::new)
/// policy, [`Mask::default_text`], hides what the model cannot act on and
/// should not see: a panic's message, an internal error, a setup problem
/// of the host. Results a tool wrote as errors itself are its own words,
/// and are left alone.
///
/// It sits at [`Stage::Execute`]. Layers of one stage run in the order
/// they were added, the first outermost, so add `Mask` first to let it see
/// the failures of the other layers there; a sensible order is `Mask`,
/// then [`Cache`](super::Cache), then [`Retry`](super::Retry): the cache
/// keeps what the retries got to, and the mask sees what they gave up on.
/// It does not see refusals made before [`Stage::Execute`] (the check's,
/// the limits', approval's), which are written for the model already.
///
/// ```
/// use toolsmith::ErrorKind;
/// use toolsmith::pipeline::{Mask, Pipeline};
///
/// let mask = Mask::with(|failure| match failure.kind {
///     ErrorKind::Failed => Some(format!("Error: '{}' did not work; try something else.", failure.tool)),
///     _ => Mask::default_text(failure),
/// });
/// let pipeline = Pipeline::new().layer(mask);
/// # let _ = pipeline;
/// ```
#[derive(Clone)]
pub struct Mask {
    policy: Policy,
}

impl Default for Mask {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Mask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mask").finish_non_exhaustive()
    }
}

impl Mask {
    /// The default policy, [`Mask::default_text`].
    pub fn new() -> Self {
        Self::with(Self::default_text)
    }

    /// Show the model what `policy` returns for a failure (`None`: the
    /// failure as it is).
    pub fn with(policy: impl Fn(&Failure<'_>) -> Option<String> + Send + Sync + 'static) -> Self {
        Self {
            policy: Arc::new(policy),
        }
    }

    /// The default policy: a panic, an internal error and a setup problem
    /// are told as a fault on the host's side that the model's arguments
    /// did not cause, without their text; anything else is shown as it is.
    pub fn default_text(failure: &Failure<'_>) -> Option<String> {
        let what = match failure.kind {
            ErrorKind::Panicked | ErrorKind::Internal => "an internal error",
            ErrorKind::Setup => "a problem with how the host set it up",
            _ => return None,
        };
        Some(format!(
            "Error: Tool '{}' failed because of {what}; the details were logged for the developers.\n\n[This is not caused by your arguments; tell the user, or use another tool.]",
            failure.tool
        ))
    }

    fn masked(
        &self,
        tool: &str,
        kind: ErrorKind,
        text: &str,
        error: Option<&CallError>,
    ) -> Option<ToolOutput> {
        let failure = Failure {
            tool,
            kind,
            text,
            error,
        };
        let shown = (self.policy)(&failure)?;
        tracing::warn!(
            tool,
            error.type = kind.as_str(),
            original = text,
            "a failure's text was masked for the model"
        );
        let mut output = ToolOutput::error(shown);
        output.metadata.write(&meta::ERROR_KIND, &kind);
        output.metadata.write(&meta::MASKED_ERROR, &text.to_owned());
        Some(output)
    }
}

#[async_trait]
impl Layer for Mask {
    fn stage(&self) -> Stage {
        Stage::Execute
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        let result = next.run(call).await;
        let tool = call.tool_name();
        match result {
            Err(error) => {
                let text = error.to_model_text();
                match self.masked(tool, error.kind(), &text, Some(&error)) {
                    Some(output) => Ok(output),
                    None => Err(error),
                }
            }
            Ok(output) if output.is_error => {
                let Some(kind) = output.metadata.read(&meta::ERROR_KIND) else {
                    // The tool's own error result.
                    return Ok(output);
                };
                match self.masked(tool, kind, &output.content, None) {
                    Some(mut masked) => {
                        // Keep what the layers inside recorded (attempts, …).
                        for (key, value) in output.metadata.iter() {
                            if !masked.metadata.contains_key(key) {
                                masked.metadata.insert(key.clone(), value.clone());
                            }
                        }
                        Ok(masked)
                    }
                    None => Ok(output),
                }
            }
            ok => ok,
        }
    }
}
