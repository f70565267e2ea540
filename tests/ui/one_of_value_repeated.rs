// Why this is refused: a value listed twice in `one_of` says nothing more,
// and is more likely a typo for a value left out. Values are compared as the
// schema compares them, so `1` and `1.0` are the same number. The error
// points at the second one.

use tk::tool;

/// Set the fan.
#[tool]
async fn set_fan(
    #[arg(one_of = ["slow", "fast", "slow"])] speed: String,
    #[arg(one_of = [0.5, 1, 1.0])] step: f64,
) -> String {
    format!("{speed} {step}")
}

fn main() {}
