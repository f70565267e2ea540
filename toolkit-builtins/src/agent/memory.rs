//! `save_memory`: facts the agent keeps across sessions, as bullets under a
//! heading of a Markdown file in the workspace.

use std::sync::Mutex;

use toolsmith::{ToolContext, ToolError, tool};

use crate::sandbox::{Access, SandboxError, Workspace};

/// Where `save_memory` writes: a Markdown file in the workspace and the
/// heading its facts go under. Put one in the context's state to change the
/// defaults (`CONTEXT.md`, `## Agent Memories`).
///
/// ```
/// use toolsmith::ToolContext;
/// use toolsmith_builtins::agent::MemoryFile;
///
/// let ctx = ToolContext::new()
///     .with_workspace("/srv/agent")
///     .with_state(MemoryFile::new("memory/MEMORY.md", "Facts"));
/// # let _ = ctx;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The heading text, without the leading `## `.
    pub heading: String,
}

impl MemoryFile {
    /// A memory file at `path` (relative to the workspace) with facts under `## heading`.
    pub fn new(path: impl Into<String>, heading: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            heading: heading.into(),
        }
    }
}

impl Default for MemoryFile {
    fn default() -> Self {
        Self::new("CONTEXT.md", "Agent Memories")
    }
}

/// The largest memory file a fact is added to. The whole file is read and
/// written back for each fact: a larger one (a sparse file, a log written
/// there by mistake) would be read into memory whole.
const MAX_MEMORY_FILE_BYTES: u64 = 4 << 20;

/// The memory file's text, read up to [`MAX_MEMORY_FILE_BYTES`] (one byte
/// past it tells a file that is too large, however large it says it is).
fn read_capped(file: std::fs::File, path: &str) -> Result<String, ToolError> {
    use std::io::Read;
    let mut text = String::new();
    file.take(MAX_MEMORY_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| ToolError::failed(format!("cannot read {path}: {e}")))?;
    if text.len() as u64 > MAX_MEMORY_FILE_BYTES {
        return Err(ToolError::failed(format!(
            "{path} is too large to add a fact to (over {} MiB); ask the user to trim it",
            MAX_MEMORY_FILE_BYTES >> 20
        )));
    }
    Ok(text)
}

/// Two calls in one process must not both read the old file and each write
/// back their own version, losing the other's fact.
static WRITING: Mutex<()> = Mutex::new(());

/// Save an important fact to long-term memory, so it is available in later
/// sessions. Use it for durable facts (preferences, decisions, names), not for
/// the current task's progress. Saving a fact that is already there does nothing.
#[tool(category = memory, idempotent)]
pub fn save_memory(
    ctx: &ToolContext,
    /// The fact, as one short self-contained sentence.
    #[arg(min_length = 1, max_length = 2000)]
    fact: String,
) -> Result<String, ToolError> {
    let fact = one_line(&fact);
    if fact.is_empty() {
        return Err(ToolError::InvalidArguments(
            "fact is blank; give the fact to remember".into(),
        ));
    }
    let config = ctx.state::<MemoryFile>().cloned().unwrap_or_default();
    let workspace = Workspace::of(ctx)?;
    // Read and replaced through the sandbox: a FIFO or device put where the
    // file belongs is refused, not read, and a link swapped in cannot lead
    // the read or the write outside.
    let target = workspace.locate(&config.path, Access::Write)?;
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let document = match target.open_file() {
        Ok(opened) => read_capped(opened.file, &config.path)?,
        Err(SandboxError::NotFound { .. }) => String::new(),
        Err(e) => return Err(e.into()),
    };
    match add_fact(&document, &config.heading, &fact) {
        None => Ok(format!("Already remembered in {}: {fact}", config.path)),
        Some(updated) => {
            target.write_atomic(updated.as_bytes())?;
            Ok(format!(
                "Saved to {} under '{}': {fact}",
                config.path, config.heading
            ))
        }
    }
}

/// The fact as one bullet line: whitespace runs, newlines included, become one space.
fn one_line(fact: &str) -> String {
    fact.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How two facts are compared: case, whitespace and a final period do not count.
fn fact_key(fact: &str) -> String {
    one_line(fact).trim_end_matches('.').to_lowercase()
}

/// A Markdown heading's level and text, if `line` is one.
fn heading_of(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|&c| c == '#').count();
    let rest = &line[level..];
    (level > 0 && (rest.is_empty() || rest.starts_with(' '))).then(|| (level, rest.trim()))
}

/// The document with `fact` added as a bullet at the end of the `## heading`
/// section (created at the end of the document if missing), or `None` when
/// the section already holds the same fact.
pub(crate) fn add_fact(document: &str, heading: &str, fact: &str) -> Option<String> {
    let lines: Vec<&str> = document.lines().collect();
    let start = lines
        .iter()
        .position(|line| heading_of(line) == Some((2, heading)));
    let Some(start) = start else {
        let mut out = document.trim_end().to_owned();
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&format!("## {heading}\n\n- {fact}\n"));
        return Some(out);
    };
    // The section runs to the next heading of the same or a higher level.
    let end = lines[start + 1..]
        .iter()
        .position(|line| heading_of(line).is_some_and(|(level, _)| level <= 2))
        .map_or(lines.len(), |offset| start + 1 + offset);
    let wanted = fact_key(fact);
    let known = lines[start + 1..end].iter().any(|line| {
        let line = line.trim_start();
        line.strip_prefix("- ")
            .or_else(|| line.strip_prefix("* "))
            .is_some_and(|item| fact_key(item) == wanted)
    });
    if known {
        return None;
    }
    // Insert after the section's last non-blank line, keeping the blank
    // lines that separate it from the next section.
    let mut insert_at = end;
    while insert_at > start + 1 && lines[insert_at - 1].trim().is_empty() {
        insert_at -= 1;
    }
    let bullet = format!("- {fact}");
    let mut out: Vec<&str> = Vec::with_capacity(lines.len() + 2);
    out.extend_from_slice(&lines[..insert_at]);
    if insert_at == start + 1 {
        out.push("");
    }
    out.push(&bullet);
    out.extend_from_slice(&lines[insert_at..]);
    Some(out.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_section_is_added_at_the_end() {
        let out = add_fact("# Project\n\nNotes.\n", "Agent Memories", "Uses tabs").unwrap();
        assert_eq!(
            out,
            "# Project\n\nNotes.\n\n## Agent Memories\n\n- Uses tabs\n"
        );
    }

    #[test]
    fn a_fact_goes_at_the_end_of_its_section_not_the_next() {
        let doc = "## Agent Memories\n\n- one\n\n## Other\n\n- x\n";
        let out = add_fact(doc, "Agent Memories", "two").unwrap();
        assert_eq!(
            out,
            "## Agent Memories\n\n- one\n- two\n\n## Other\n\n- x\n"
        );
    }

    #[test]
    fn the_same_fact_in_another_spelling_is_not_added_twice() {
        let doc = "## Agent Memories\n\n- The user prefers Rust.\n";
        assert_eq!(
            add_fact(doc, "Agent Memories", "the user  prefers rust"),
            None
        );
        // The same words under another heading do not count.
        let doc = "## Other\n\n- the user prefers rust\n";
        assert!(add_fact(doc, "Agent Memories", "the user prefers rust").is_some());
    }

    #[test]
    fn a_deeper_heading_stays_inside_the_section() {
        let doc = "## Agent Memories\n### Old\n- a\n## Next\n";
        let out = add_fact(doc, "Agent Memories", "b").unwrap();
        assert_eq!(out, "## Agent Memories\n### Old\n- a\n- b\n## Next\n");
    }
}
