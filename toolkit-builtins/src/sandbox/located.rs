//! The lexical half of resolution: what a model's path string names, before
//! the file system is asked anything.
//!
//! A string is turned into a base directory (the workspace root or one of the
//! extra read-only directories) and a relative path with no `.`, `..` or root
//! component. Everything a string alone can prove wrong is refused here; what
//! only the file system can tell (symlinks) is left to [`super::beneath`].

use std::path::{Component, Path, PathBuf};

use super::SandboxError;

/// The longest path accepted, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest file name accepted, in bytes (Linux `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// Which allowed directory a path lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The workspace root.
    Root,
    /// The extra read-only directory at this index.
    ReadOnly(usize),
}

/// A path split into its base directory and the part below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub base: Base,
    /// Relative, normalised: only normal components; empty for the base itself.
    pub relative: PathBuf,
}

/// Split `path` against `root` and the `read_only` directories (all canonical).
pub fn locate(path: &str, root: &Path, read_only: &[PathBuf]) -> Result<Located, SandboxError> {
    let invalid = |reason| SandboxError::Invalid {
        path: path.to_owned(),
        reason,
    };
    if path.contains('\0') {
        return Err(invalid("it contains a NUL byte"));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(invalid("it is longer than 4096 bytes"));
    }
    if has_overlong_name(path) {
        return Err(invalid("a name in it is longer than 255 bytes"));
    }
    if path.starts_with('~') {
        return Err(invalid(
            "`~` is not expanded; use a path relative to the workspace root",
        ));
    }
    let given = Path::new(path);
    if given.is_absolute() {
        let normal = normalize(given).ok_or_else(|| outside(path))?;
        if let Ok(rest) = normal.strip_prefix(root) {
            return Ok(Located {
                base: Base::Root,
                relative: rest.to_path_buf(),
            });
        }
        for (index, dir) in read_only.iter().enumerate() {
            if let Ok(rest) = normal.strip_prefix(dir) {
                return Ok(Located {
                    base: Base::ReadOnly(index),
                    relative: rest.to_path_buf(),
                });
            }
        }
        return Err(outside(path));
    }
    let relative = normalize(given).ok_or_else(|| outside(path))?;
    Ok(Located {
        base: Base::Root,
        relative,
    })
}

fn outside(path: &str) -> SandboxError {
    SandboxError::Outside {
        path: path.to_owned(),
    }
}

/// Drop `.`, apply `..` lexically, keep the root of an absolute path;
/// `None` when `..` climbs above the start. (Name lengths are checked
/// before, by [`has_overlong_name`].)
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Prefix(_) => return None,
            Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return None;
                }
                depth -= 1;
                out.pop();
            }
            Component::Normal(name) => {
                depth += 1;
                out.push(name);
            }
        }
    }
    Some(out)
}

/// Whether some file name in `path` is longer than [`MAX_NAME_BYTES`].
pub fn has_overlong_name(path: &str) -> bool {
    Path::new(path)
        .components()
        .any(|c| matches!(c, Component::Normal(name) if name.len() > MAX_NAME_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(path: &str) -> Result<Located, SandboxError> {
        locate(path, Path::new("/ws"), &[PathBuf::from("/docs")])
    }

    #[test]
    fn relative_paths_are_normalised_below_the_root() {
        let located = at("./a/./b/../c").unwrap();
        assert_eq!(located.base, Base::Root);
        assert_eq!(located.relative, Path::new("a/c"));
        assert_eq!(at("").unwrap().relative, Path::new(""));
        assert_eq!(at(".").unwrap().relative, Path::new(""));
    }

    #[test]
    fn absolute_paths_find_their_base() {
        assert_eq!(at("/ws/x").unwrap().relative, Path::new("x"));
        assert_eq!(at("/docs/y").unwrap().base, Base::ReadOnly(0));
        assert!(matches!(
            at("/etc/passwd"),
            Err(SandboxError::Outside { .. })
        ));
        assert!(matches!(at("/wsx/a"), Err(SandboxError::Outside { .. })));
        assert!(matches!(
            at("/ws/../etc"),
            Err(SandboxError::Outside { .. })
        ));
    }

    #[test]
    fn climbing_out_is_refused() {
        assert!(matches!(at(".."), Err(SandboxError::Outside { .. })));
        assert!(matches!(at("a/../../b"), Err(SandboxError::Outside { .. })));
    }

    #[test]
    fn strings_that_are_no_paths_are_refused() {
        assert!(matches!(at("a\0b"), Err(SandboxError::Invalid { .. })));
        assert!(matches!(at("~/x"), Err(SandboxError::Invalid { .. })));
        assert!(matches!(
            at(&"a/".repeat(3000)),
            Err(SandboxError::Invalid { .. })
        ));
        assert!(matches!(
            at(&"n".repeat(300)),
            Err(SandboxError::Invalid { .. })
        ));
    }
}
