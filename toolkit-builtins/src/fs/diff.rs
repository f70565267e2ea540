//! Unified diffs of a change, for the person watching.

use similar::{ChangeTag, TextDiff};

/// A unified diff from `old` (`None` for a new file) to `new`, with three
/// lines of context, headed `a/PATH` and `b/PATH` as git does.
pub fn unified(path: &str, old: Option<&str>, new: &str) -> String {
    let before = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    TextDiff::from_lines(old.unwrap_or(""), new)
        .unified_diff()
        .context_radius(3)
        .header(&before, &format!("b/{path}"))
        .to_string()
}

/// Lines added and removed between `old` and `new`.
pub fn line_counts(old: &str, new: &str) -> (usize, usize) {
    let diff = TextDiff::from_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_are_unified_with_git_headers() {
        let diff = unified("a.txt", Some("one\ntwo\n"), "one\n2\n");
        assert!(
            diff.starts_with("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n"),
            "{diff}"
        );
        assert!(diff.contains("-two\n+2\n"), "{diff}");
        assert!(unified("n.txt", None, "x\n").starts_with("--- /dev/null\n+++ b/n.txt\n"));
        assert_eq!(line_counts("a\nb\n", "a\nc\nd\n"), (2, 1));
    }
}
