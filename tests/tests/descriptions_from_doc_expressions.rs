//! A description may come from doc attributes the compiler evaluates
//! (`concat!`, `include_str!`), mixed with ordinary `///` lines.

use tk::{Tool, tool};

#[doc = concat!("Count the ", "words in a text.")]
///
/// Words are separated by white space.
#[tool(read_only)]
async fn count_words(text: String) -> usize {
    text.split_whitespace().count()
}

#[test]
fn the_compiler_joins_the_description() {
    assert_eq!(
        CountWordsTool.spec().description,
        "Count the words in a text.\n\nWords are separated by white space."
    );
}
