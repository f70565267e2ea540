// Why this is refused: a `&T` parameter is injected from the context, where
// values are stored by type. `str` (here behind an alias) has no size, so it
// cannot be stored there; text from the model is an owned `String`.

use tk::tool;

type Text = str;

/// Shout the text.
#[tool]
async fn shout(text: &Text) -> String {
    text.to_uppercase()
}

fn main() {}
