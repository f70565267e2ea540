//! Search tools: `glob` (files by name, newest first) and `grep` (files by
//! content), each written with `#[tool]`.
//!
//! Built from the crates ripgrep is built from, so they search as fast and
//! skip the same things: `ignore` walks the tree in parallel honouring
//! `.gitignore` and knows ripgrep's file types; `grep-searcher` and
//! `grep-regex` search each file line by line with binary detection;
//! `globset` matches name patterns. Noise directories are skipped by
//! [`crate::fs::noise`]. File contents are opened below the searched
//! directory's handle (see [`crate::sandbox`]), so a symlink swapped in
//! during the walk cannot lead the search to read outside the workspace.

mod glob;
mod grep;
mod ignores;
mod pattern;
mod sink;
mod walk;

pub use glob::{GlobTool, glob};
pub use grep::{GrepTool, OutputMode, grep};
