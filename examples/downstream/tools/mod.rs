//! The crate's tools, one module per family. Declaring a module is all it
//! takes: each `#[tool]` registers itself.

pub mod notes;
pub mod units;
