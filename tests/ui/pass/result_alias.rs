// Must compile: a one-parameter `Result` alias, as `anyhow::Result<T>` is,
// splits into success and error by trait, not by its spelling.

use tk::tool;

type Result<T> = std::result::Result<T, String>;

/// Parse a number.
#[tool]
async fn parse_number(text: String) -> Result<i64> {
    text.trim()
        .parse()
        .map_err(|e| format!("not a number: {e}"))
}

fn main() {
    let _ = ParseNumberTool;
}
