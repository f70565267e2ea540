// Why this is refused: `read_only` promises the tool changes nothing and
// `destructive` warns that it may destroy data. Hosts decide approval from
// these flags, so they cannot contradict each other.

use tk::tool;

/// Delete a file.
#[tool(read_only, destructive)]
async fn delete_file(path: String) -> String {
    path
}

fn main() {}
