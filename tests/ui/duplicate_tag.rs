// Why this is refused: a tag given twice says nothing more the second time,
// and usually means another tag was meant. An empty tag could never be
// chosen.

use tk::tool;

/// Resize an image.
#[tool(tags = ["images", "files", "images", ""])]
async fn resize(path: String) -> String {
    path
}

fn main() {}
