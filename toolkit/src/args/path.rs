//! Where a value sits in the arguments, as `meta.flags[0]`.
//!
//! The path is a chain of stack frames, one per level of recursion, so
//! walking a well-typed call allocates nothing; it becomes a string only when
//! a cast or an error needs it.

use std::fmt::Write as _;

/// One step down from a parent value.
#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The path to a value: its last step, and the path to its parent.
#[derive(Debug, Clone, Copy)]
pub(super) struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    step: Option<Step<'a>>,
}

impl<'a> Path<'a> {
    /// The arguments object itself.
    pub(super) const ROOT: Path<'static> = Path {
        parent: None,
        step: None,
    };

    /// The path to this object's `key`.
    pub(super) fn key(&'a self, key: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            step: Some(Step::Key(key)),
        }
    }

    /// The path to this array's item at `index`.
    pub(super) fn index(&'a self, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            step: Some(Step::Index(index)),
        }
    }

    /// The path as text: `timeout`, `meta.flags[0]`, `labels["odd key"]`;
    /// empty for the arguments object itself.
    pub(super) fn render(&self) -> String {
        let mut steps = Vec::new();
        let mut at = Some(self);
        while let Some(path) = at {
            steps.extend(path.step);
            at = path.parent;
        }
        let mut text = String::new();
        for step in steps.iter().rev() {
            match step {
                Step::Key(key) if is_plain(key) => {
                    if !text.is_empty() {
                        text.push('.');
                    }
                    text.push_str(key);
                }
                // Quoted as JSON so any key reads back unambiguously.
                Step::Key(key) => {
                    let quoted = serde_json::Value::from(*key).to_string();
                    let _ = write!(text, "[{quoted}]");
                }
                Step::Index(index) => {
                    let _ = write!(text, "[{index}]");
                }
            }
        }
        text
    }
}

/// Whether a key can be written after a dot without confusion.
fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | '@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_empty() {
        assert_eq!(Path::ROOT.render(), "");
    }

    #[test]
    fn top_level_keys_are_bare() {
        assert_eq!(Path::ROOT.key("timeout").render(), "timeout");
    }

    #[test]
    fn nested_keys_and_indexes() {
        let meta = Path::ROOT.key("meta");
        let flags = meta.key("flags");
        assert_eq!(flags.index(0).render(), "meta.flags[0]");
        let item = Path::ROOT.index(2);
        assert_eq!(item.key("x").render(), "[2].x");
    }

    #[test]
    fn odd_keys_are_quoted() {
        let labels = Path::ROOT.key("labels");
        assert_eq!(labels.key("odd key").render(), r#"labels["odd key"]"#);
        assert_eq!(Path::ROOT.key("a.b").render(), r#"["a.b"]"#);
        assert_eq!(Path::ROOT.key("").render(), r#"[""]"#);
        assert_eq!(Path::ROOT.key("say \"hi\"").render(), r#"["say \"hi\""]"#);
    }
}
