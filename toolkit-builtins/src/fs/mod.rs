//! File tools: `read_file`, `write_file`, `edit_file`, `list_dir` and
//! `notebook_edit`, each written with `#[tool]`.
//!
//! Every path goes through the [`Workspace`](crate::sandbox::Workspace) in
//! the context's state; limits come from [`FsLimits`] in the same state, or
//! its defaults. Why these crates: `similar` makes the unified diffs shown to
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
pub mod sniff;
mod write;

pub use edit::{EditFileTool, edit_file};
pub use limits::FsLimits;
pub use list::{ListDirTool, list_dir};
pub use notebook::{CellType, EditMode, NotebookEditTool, notebook_edit};
pub use read::{ReadFileTool, read_file};
pub use write::{WriteFileTool, write_file};
