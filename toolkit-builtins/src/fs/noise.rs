//! Directories no search or listing wants to descend into: version control,
//! dependencies, caches, virtual environments and build output.

use std::ffi::OsStr;

/// Directory names skipped by `list_dir`, `glob` and `grep` (unless the
/// call names one of them as its own path).
pub const NOISE_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".jj",
    "node_modules",
    "bower_components",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".ipynb_checkpoints",
    "site-packages",
    "dist",
    "build",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".gradle",
    ".terraform",
    ".cache",
];

/// Whether a directory called `name` is noise.
pub fn is_noise_dir(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    NOISE_DIRS.contains(&name) || name.ends_with(".egg-info")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_known_by_name() {
        assert!(is_noise_dir(OsStr::new("node_modules")));
        assert!(is_noise_dir(OsStr::new("pkg.egg-info")));
        assert!(!is_noise_dir(OsStr::new("src")));
    }
}
