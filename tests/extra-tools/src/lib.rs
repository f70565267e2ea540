//! A second library crate of tools. The integration tests prove that a
//! registry collects tools from it, not only from the crate it is built in.

use toolsmith::tool;

/// Reverse a text, character by character.
#[tool(read_only)]
pub async fn reverse_text(
    /// The text to reverse.
    text: String,
) -> String {
    text.chars().rev().collect()
}

/// Count the characters of a text. A sync function.
#[tool(read_only)]
pub fn count_chars(
    /// The text to measure.
    text: String,
) -> usize {
    text.chars().count()
}

/// Declares a tool that echoes a value of the given type, for crates that
/// declare tools through a macro of another crate.
#[macro_export]
macro_rules! echo_tool {
    ($name:ident, $ty:ty) => {
        /// Echo a value.
        #[toolsmith::tool]
        async fn $name(
            /// The value.
            value: $ty,
        ) -> String {
            format!("{value:?}")
        }
    };
}
