//! The call's span, as OpenTelemetry's semantic conventions for generative
//! AI describe a tool's execution (`execute_tool`, span kind INTERNAL).
//!
//! | field | value |
//! | --- | --- |
//! | span name (`otel.name`) | `execute_tool {gen_ai.tool.name}` |
//! | `gen_ai.operation.name` | `execute_tool` |
//! | `gen_ai.tool.name` | the tool's name (as the model wrote it when no tool has it) |
//! | `gen_ai.tool.call.id` | the provider's call id, when there is one |
//! | `gen_ai.tool.type` | `function` |
//! | `gen_ai.tool.description` | the first line of the tool's description |
//! | `error.type` | on failure: the [`ErrorKind`] (`invalid_arguments`, `timeout`, …; `failed` for a result the tool marked as an error) |
//! | `otel.status_code`, `otel.status_description` | on failure: `ERROR` and the first line of the error, cut to [`STATUS_DESCRIPTION_MAX`] bytes (for arguments refused, only where they are wrong) |
//!
//! The arguments and the result are not recorded: they may hold what a
//! user would not want in a trace, and may be large.
//!
//! With the `otel` feature a served MCP call's span continues the caller's
//! trace: see [`with_remote_parent`].

use tracing::Span;
use tracing::field::Empty;

use super::call::Call;
use crate::error::{CallError, ErrorKind};
use crate::exec::shape::meta;
use crate::output::ToolOutput;

/// The longest status description recorded, in bytes.
const STATUS_DESCRIPTION_MAX: usize = 256;

/// The call's span. Its fields are filled only when a subscriber listens.
#[inline]
pub(super) fn span_for(call: &Call<'_>) -> Span {
    if !may_record() {
        return Span::none();
    }
    new_span(call)
}

/// Whether a span could be recorded: false when no subscriber was ever
/// set, told by one load instead of the callsite checks.
#[inline]
pub(super) fn may_record() -> bool {
    tracing::dispatcher::has_been_set()
}

fn new_span(call: &Call<'_>) -> Span {
    let name = call.tool_name();
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = Empty,
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = Empty,
        gen_ai.tool.type = "function",
        gen_ai.tool.description = Empty,
        error.type = Empty,
    );
    #[cfg(all(feature = "otel", feature = "mcp"))]
    remote::adopt_parent(&span);
    if !span.is_disabled() {
        span.record("otel.name", format!("execute_tool {name}"));
        if !call.id().is_empty() {
            span.record("gen_ai.tool.call.id", call.id());
        }
        if let Some(spec) = call.spec() {
            let description = spec.description.lines().next().unwrap_or_default();
            span.record("gen_ai.tool.description", description);
        }
    }
    span
}

/// Record how the call ended: on a failure, its kind and an error status.
pub(super) fn record_result(span: &Span, tool: &str, result: &Result<ToolOutput, CallError>) {
    if span.is_disabled() {
        return;
    }
    let (kind, description) = match result {
        Ok(output) if !output.is_error => return,
        // A failure a layer made the result the model reads keeps its kind;
        // its text may quote the arguments, which a trace does not hold.
        Ok(output) => match output.metadata.read(&meta::ERROR_KIND) {
            Some(ErrorKind::InvalidArguments) => (
                ErrorKind::InvalidArguments,
                first_line(&format!("invalid arguments for '{tool}'")),
            ),
            Some(kind) => (kind, first_line(&output.content)),
            None => (ErrorKind::Failed, first_line(&output.content)),
        },
        Err(error) => (error.kind(), description(error)),
    };
    span.record("error.type", kind.as_str());
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", description);
}

/// What went wrong, without the values of the arguments: a refusal of the
/// arguments names only where they are wrong.
fn description(error: &CallError) -> String {
    match error {
        CallError::InvalidArguments(invalid) => {
            let paths: Vec<&str> = invalid
                .errors
                .iter()
                .map(|e| {
                    if e.path.is_empty() {
                        "(the arguments)"
                    } else {
                        e.path.as_str()
                    }
                })
                .collect();
            let tool = &invalid.tool;
            first_line(&format!(
                "invalid arguments for '{tool}' at {}",
                paths.join(", ")
            ))
        }
        CallError::InvalidPayload { .. } => first_line("the arguments could not be read"),
        _ => first_line(&error.to_string()),
    }
}

/// The first line of `text`, cut to [`STATUS_DESCRIPTION_MAX`] bytes on a
/// character boundary.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut end = line.len().min(STATUS_DESCRIPTION_MAX);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_owned()
}

#[cfg(all(feature = "otel", feature = "mcp"))]
pub(crate) use remote::with_remote_parent;

#[cfg(all(feature = "otel", feature = "mcp"))]
mod remote {
    use std::cell::Cell;
    use std::future::Future;

    use opentelemetry::trace::TraceContextExt;
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    tokio::task_local! {
        /// The remote parent of the next call's span in this task, taken by it.
        static REMOTE_PARENT: Cell<Option<opentelemetry::Context>>;
    }

    /// Run `future` so that the first call it makes (the first `execute_tool`
    /// span it opens) has `parent` as its parent: a context another process
    /// sent, such as the trace context of an MCP request. The calls that
    /// call makes are its children as usual. A `parent` without a valid
    /// span changes nothing.
    pub(crate) async fn with_remote_parent<F: Future>(
        parent: opentelemetry::Context,
        future: F,
    ) -> F::Output {
        if !parent.span().span_context().is_valid() {
            return future.await;
        }
        REMOTE_PARENT.scope(Cell::new(Some(parent)), future).await
    }

    /// Give `span` the remote parent waiting in this task, if any; the
    /// span the caller is in, if any, becomes a link.
    pub(super) fn adopt_parent(span: &Span) {
        let Ok(Some(parent)) = REMOTE_PARENT.try_with(Cell::take) else {
            return;
        };
        if span.is_disabled() {
            return;
        }
        let ambient = Span::current();
        if !ambient.is_disabled() {
            let linked = ambient.context().span().span_context().clone();
            if linked.is_valid() {
                span.add_link(linked);
            }
        }
        // Fails only when no OpenTelemetry layer listens: nothing to parent then.
        let _ = span.set_parent(parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_one_bounded_line() {
        assert_eq!(first_line("one\ntwo"), "one");
        let long = "é".repeat(STATUS_DESCRIPTION_MAX);
        let cut = first_line(&long);
        assert!(cut.len() <= STATUS_DESCRIPTION_MAX && cut.chars().all(|c| c == 'é'));
    }
}
