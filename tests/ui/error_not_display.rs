// Why this is refused: when a tool fails, the error's text is what the model
// reads to correct itself, so the error type of a `Result` must implement
// `Display`. The error points at the error type.

use tk::tool;

#[derive(Debug)]
enum LookupError {
    NotFound,
}

/// Look up a word in the dictionary.
#[tool]
async fn lookup(word: String) -> Result<String, LookupError> {
    if word.is_empty() {
        Err(LookupError::NotFound)
    } else {
        Ok(word)
    }
}

fn main() {}
