//! A tool whose arguments are one struct of the user's own (`#[arg(flatten)]`).

use tk::schemars::JsonSchema;
use tk::serde::Deserialize;
use tk::tool;

/// What kind of result to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "tk::serde", rename_all = "lowercase")]
#[schemars(crate = "tk::schemars")]
pub enum Kind {
    /// Source files.
    Code,
    /// Prose.
    Docs,
}

/// The arguments of `search`, as one struct.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
pub struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 1))]
    pub query: String,
    /// How many results at most.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
    /// Only results of these kinds; all kinds when empty.
    #[serde(default)]
    pub kinds: Vec<Kind>,
}

fn default_limit() -> u32 {
    10
}

/// Search the workspace.
///
/// Returns one match per line.
#[tool(read_only)]
pub async fn search(#[arg(flatten)] args: SearchArgs) -> String {
    format!(
        "query={} limit={} kinds={:?}",
        args.query, args.limit, args.kinds
    )
}
