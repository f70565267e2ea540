//! Note tools. They share the host's `Notebook`, injected from the context.

use std::sync::Mutex;

use toolsmith::{ToolError, tool};

/// The notes of one user, kept by the host.
#[derive(Default)]
pub struct Notebook {
    notes: Mutex<Vec<(String, String)>>,
}

/// Add a note to the user's notebook.
#[tool(idempotent)]
pub async fn add_note(
    notebook: &Notebook,
    /// A short title.
    #[arg(min_length = 1, max_length = 80)]
    title: String,
    /// The note's text.
    text: String,
) -> Result<String, ToolError> {
    let mut notes = notebook.notes.lock().map_err(ToolError::internal)?;
    notes.retain(|(t, _)| t != &title);
    notes.push((title.clone(), text));
    Ok(format!("saved \"{title}\" ({} notes)", notes.len()))
}

/// List the titles of the user's notes.
#[tool(read_only)]
pub async fn list_notes(notebook: &Notebook) -> Result<String, ToolError> {
    let notes = notebook.notes.lock().map_err(ToolError::internal)?;
    let titles: Vec<&str> = notes.iter().map(|(t, _)| t.as_str()).collect();
    Ok(titles.join(", "))
}
