// Why this is refused: this function makes five independent mistakes. All of
// them are reported in one build, each at its own token, and none causes a
// follow-on error, so one round of fixes is enough.

use tk::tool;

#[derive(Debug)]
struct SearchError;

/// Search the notes.
#[tool(read_ony, timeout = 0)]
async fn search(
    query: &str,
    #[arg(minimum = 10, maximum = 1)] limit: u32,
) -> Result<String, SearchError> {
    Ok(format!("{query} {limit}"))
}

fn main() {}
