//! File tools: `read_file`, `write_file`, `edit_file`, `list_dir` and
//! `notebook_edit`, each written with `#[tool]`.
//!
//! Every path goes through the [`Workspace`](crate::sandbox::Workspace) in
//! the context's state; limits come from [`FsLimits`] in the same state, or
//! its defaults. A [`FileState`] in the state makes the tools remember, for
//! one agent session, which files were read at which version: existing
//! files are then changed only once read as they are now, and a repeated
//! read of unchanged lines gets a short note instead of the same text.
//!
//! `edit_file` replaces literal text (exactly, then ignoring whitespace
//! differences) or, with `regex`, what a bounded regular expression matches
//! (the `regex` crate: linear time, compiled size capped). The model reads
//! the changed lines with their numbers, bounded; the user gets the whole
//! unified diff as display text. Why these crates: `similar` makes the unified diffs shown to
//! the user (the one diff crate with a unified-diff writer and no extra
//! dependencies); `base64` encodes images for models that can see them;
//! file types are told by a short table of magic numbers in [`sniff`]
//! rather than a detection crate, since only a handful of types matter.

pub(crate) mod blocking;
mod diff;
mod edit;
mod limits;
mod list;
mod matching;
pub mod noise;
mod notebook;
mod read;
mod rewrite;
pub mod sniff;
mod state;
mod write;

pub use edit::{EditFileTool, edit_file};
pub use limits::FsLimits;
pub use list::{ListDirTool, list_dir};
pub use notebook::{CellType, EditMode, NotebookEditTool, notebook_edit};
pub use read::{ReadFileTool, read_file};
pub use state::FileState;
pub use write::{WriteFileTool, write_file};
