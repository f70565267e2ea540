//! `echo`: the smallest useful tool, for tests and examples.

use toolsmith::tool;

/// Repeat a message back unchanged. Useful to test that tool calls work.
// The shell category, as agents that list their tools by category expect
// of `echo`; low risk, because it runs nothing.
#[tool(read_only, idempotent, category = shell, risk = low)]
pub async fn echo(
    /// The text to repeat.
    message: String,
) -> String {
    message
}
