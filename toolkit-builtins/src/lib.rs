//! Built-in tools for the `toolkit` crate, each written with `#[tool]`
//! exactly as a user would write one.
//!
//! Linking this crate registers its tools with `inventory`; a registry only
//! takes the ones its [`toolkit::ToolFilter`] selects, and the risky ones
//! (shell, network) also refuse to run until the host puts their policy in
//! the context's state. Configuration always comes through typed state.

pub mod sandbox;

pub use sandbox::{Access, SandboxError, Workspace};
