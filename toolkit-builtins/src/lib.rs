//! Built-in tools for the `toolsmith` crate, each written with `#[tool]`
//! exactly as a user would write one.
//!
//! Linking this crate registers its tools with `inventory`; a registry only
//! takes the ones its [`toolsmith::ToolFilter`] selects, and the risky ones
//! (shell, network) also refuse to run until the host puts their policy in
//! the context's state. Configuration always comes through typed state.
//! Every guard of those tools is listed in [`guards`].

// docs.rs shows which feature each item needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod sandbox;

#[cfg(feature = "fs")]
pub mod fs;
#[cfg(feature = "fs")]
pub mod search;

/// The names of the file and search tools (feature `fs`), all confined to
/// the [`Workspace`]: what a host serving "the file tools" selects.
///
/// ```
/// use toolsmith::{ToolFilter, ToolRegistry};
///
/// toolsmith::link_tools!(toolsmith_builtins);
/// let registry =
///     ToolRegistry::from_inventory(&ToolFilter::default().names(toolsmith_builtins::FILE_TOOLS))
///         .unwrap();
/// assert_eq!(registry.len(), 7);
/// ```
#[cfg(feature = "fs")]
pub const FILE_TOOLS: [&str; 7] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
    "notebook_edit",
];

pub use sandbox::{Access, SandboxError, Workspace, WorkspacePath};

#[cfg(feature = "fs")]
mod defaults;
#[cfg(feature = "fs")]
pub use defaults::{DefaultTools, SetupError, default_tools};

#[cfg(all(feature = "shell", unix))]
pub mod shell;

#[cfg(all(target_os = "linux", any(feature = "shell", feature = "browser")))]
mod cgroup;

#[cfg(feature = "net")]
pub mod net;

#[cfg(feature = "web")]
pub mod web;

#[doc = include_str!("../GUARDS.md")]
pub mod guards {}

#[cfg(feature = "agent")]
pub mod agent;

#[cfg(all(feature = "config", unix))]
pub mod config;

#[cfg(feature = "browser")]
pub mod browser;

// Not part of the API: reached only by the fuzz targets in `fuzz/`.
#[doc(hidden)]
pub mod fuzzing;
