// Why this is refused: a risk level drives approval, so it must be one the
// registry knows: low, medium or high. A typo must not silently become a
// default.

use tk::tool;

/// Restart the service.
#[tool(risk = severe)]
async fn restart() -> String {
    "restarted".into()
}

fn main() {}
