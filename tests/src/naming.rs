//! Tools with the names models most often misspell.

use std::path::PathBuf;

use tk::tool;

/// Read a text file from the workspace.
///
/// Lines come back as `LINE|CONTENT`.
#[tool(read_only, category = filesystem_read)]
pub async fn read_file(
    /// Path relative to the workspace.
    path: PathBuf,
    /// First line to return, 1-based.
    #[arg(default = 1, minimum = 1)]
    offset: u64,
    /// How many lines at most.
    limit: Option<u64>,
) -> String {
    format!("read {} from line {offset} limit {limit:?}", path.display())
}

/// Write a text file in the workspace, replacing it.
#[tool(category = filesystem_write)]
pub async fn write_file(
    /// Path relative to the workspace.
    path: PathBuf,
    /// The new content.
    content: String,
) -> String {
    format!("wrote {} bytes to {}", content.len(), path.display())
}

/// List a directory of the workspace.
#[tool(read_only, category = filesystem_read)]
pub async fn list_dir(
    /// Directory relative to the workspace; the workspace itself when absent.
    path: Option<PathBuf>,
) -> String {
    format!(
        "listing {}",
        path.map_or(".".into(), |p| p.display().to_string())
    )
}
