//! Helpers for testing tools the way a model uses them.
//!
//! - [`ArgumentGenerator`]: arguments generated from a tool's schema,
//!   valid, sloppy in the ways casting accepts, and invalid, deterministic
//!   from a seed.
//! - [`Robustness`] and [`assert_tool_is_robust`]: many generated calls
//!   run through the registry, each checked: no crash, every error with
//!   text that names what to fix, valid arguments accepted.
//! - `mcp_pair` (feature `mcp`): a registry served over MCP and mounted
//!   in another, in the same process, over an in-memory pipe.

mod generate;
#[cfg(feature = "mcp")]
mod pair;
mod robust;

pub use generate::{ArgumentGenerator, Case, CaseKind, Rng};
#[cfg(feature = "mcp")]
pub use pair::{McpPair, mcp_pair};
pub use robust::{Robustness, RobustnessFailure, RobustnessReport, assert_tool_is_robust};
