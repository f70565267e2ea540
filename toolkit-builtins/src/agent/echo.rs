//! `echo`: the smallest useful tool, for tests and examples.

use toolsmith::tool;

/// Repeat a message back unchanged. Useful to test that tool calls work.
#[tool(read_only, idempotent)]
pub async fn echo(
    /// The text to repeat.
    message: String,
) -> String {
    message
}
