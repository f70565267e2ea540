//! A name pattern as the search tools take it.

use std::path::Path;

use globset::{Glob, GlobBuilder, GlobMatcher};

/// A glob matched against paths below the searched directory. A pattern
/// without `/` matches a file's name at any depth (`*.rs`), one with `/` the
/// whole relative path (`src/**/*.rs`), as in `.gitignore` and `rg -g`. A
/// leading `!` negates it.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
    negated: bool,
}

impl PathGlob {
    /// Parse `pattern`, or say what is wrong with it.
    pub fn new(pattern: &str) -> Result<Self, String> {
        let (negated, pattern) = match pattern.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let pattern = pattern.trim_start_matches("./");
        if pattern.starts_with('/') || pattern.split('/').any(|part| part == "..") {
            return Err(format!(
                "the pattern `{pattern}` must be relative to `path` and stay below it; put the directory in `path` instead"
            ));
        }
        let by_name = !pattern.contains('/');
        let glob: Glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("`{pattern}` is not a valid glob: {}", e.kind()))?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            by_name,
            negated,
        })
    }

    /// Whether the file at `relative` (below the searched directory) matches.
    pub fn is_match(&self, relative: &Path) -> bool {
        let hit = if self.by_name {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        };
        hit != self.negated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_at_any_depth_and_paths_from_the_top() {
        let rs = PathGlob::new("*.rs").unwrap();
        assert!(rs.is_match(Path::new("a/b/c.rs")));
        assert!(!rs.is_match(Path::new("a/b/c.rst")));
        let src = PathGlob::new("src/**/*.rs").unwrap();
        assert!(src.is_match(Path::new("src/x/y.rs")));
        assert!(src.is_match(Path::new("src/y.rs")));
        assert!(!src.is_match(Path::new("lib/src/y.rs")));
        let not = PathGlob::new("!*.md").unwrap();
        assert!(not.is_match(Path::new("a.rs")));
        assert!(!not.is_match(Path::new("a.md")));
        assert!(PathGlob::new("../*.rs").is_err());
        assert!(PathGlob::new("a[").is_err());
    }
}
