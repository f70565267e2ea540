//! A doc comment is written for programmers as well as for the model. The
//! sections rustdoc keeps for programmers (`# Errors`, `# Panics`,
//! `# Safety`, `# Examples`) are left out of the tool's description, and a
//! `# Arguments` list describes the parameters in the schema instead.

use tk::{Tool, tool};

/// Search the notes for a text.
///
/// Returns the matching lines, best first.
///
/// # Arguments
///
/// * `query` - The words to find.
/// * limit - How many lines
///   at most.
/// - `tag`: Only notes with this tag.
///
/// # Errors
///
/// When the index cannot be read.
///
/// # Panics
///
/// Never; the index is checked when it is opened.
///
/// ## Why
///
/// A subsection of `# Panics`, left out with it.
///
/// # Usage
///
/// Prefer short queries.
///
/// # Examples
///
/// ```
/// # use notes::search;
/// let lines = search("rust".into(), 5, None).await?;
/// ```
#[tool(read_only)]
async fn search_notes(
    query: String,
    limit: u32,
    /// Its own doc comment wins over the `# Arguments` entry.
    tag: Option<String>,
    #[arg(description = "The attribute wins too.")] exact: Option<bool>,
) -> String {
    format!("{query} {limit} {tag:?} {exact:?}")
}

#[test]
fn the_description_leaves_out_the_sections_for_programmers() {
    assert_eq!(
        SearchNotesTool.spec().description,
        "Search the notes for a text.\n\nReturns the matching lines, best first.\n\n# Usage\n\nPrefer short queries."
    );
}

#[test]
fn the_arguments_section_describes_parameters_without_docs_of_their_own() {
    let schema = &SearchNotesTool.spec().input_schema;
    let description = |name: &str| schema["properties"][name]["description"].as_str();
    assert_eq!(description("query"), Some("The words to find."));
    assert_eq!(description("limit"), Some("How many lines at most."));
    assert_eq!(
        description("tag"),
        Some("Its own doc comment wins over the `# Arguments` entry.")
    );
    assert_eq!(description("exact"), Some("The attribute wins too."));
}
