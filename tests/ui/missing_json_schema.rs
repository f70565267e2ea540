// Why this is refused: the model sees a tool's arguments only through their
// JSON Schema, so a struct used as an argument must derive `JsonSchema` as
// well as `Deserialize`. Deriving only one is the most common slip.

use tk::serde::Deserialize;
use tk::tool;

#[derive(Deserialize)]
#[serde(crate = "tk::serde")]
struct Point {
    x: f64,
    y: f64,
}

/// Plot a point.
#[tool]
async fn plot(point: Point) -> String {
    format!("({}, {})", point.x, point.y)
}

fn main() {}
