//! Built-in tools for the `toolkit` crate, each written with `#[tool]`
//! exactly as a user would write one.
//!
//! Linking this crate registers its tools with `inventory`; a registry only
//! takes the ones its [`toolkit::ToolFilter`] selects, and the risky ones
//! (shell, network) also refuse to run until the host puts their policy in
//! the context's state. Configuration always comes through typed state.
//! Every guard of those tools is listed in [`guards`].

pub mod sandbox;

#[cfg(feature = "fs")]
pub mod fs;
#[cfg(feature = "fs")]
pub mod search;

pub use sandbox::{Access, SandboxError, Workspace};

#[cfg(all(feature = "shell", unix))]
pub mod shell;

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
