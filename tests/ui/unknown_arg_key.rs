// Why this is refused: a misspelled bound would otherwise be ignored and the
// model could send any value. Unknown keys are errors, with the nearest known
// key suggested.

use tk::tool;

/// Sleep for a while.
#[tool]
async fn sleep(#[arg(max = 60)] seconds: u64) -> String {
    seconds.to_string()
}

fn main() {}
