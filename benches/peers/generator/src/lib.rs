//! Writes the same set of tools three ways: with this SDK's `#[tool]`, with
//! rmcp's `#[tool_router]`/`#[tool]` and with rig's `#[rig_tool]`.
//!
//! Every tool has the shape of the dispatch benchmark's `forecast`: `city:
//! String`, `days: u32` bounded 1..=14, `metric: bool`, and a doc comment per
//! argument. Only the name and the description change from tool to tool, so
//! the three sets describe the same tools. The peers have no place to declare
//! the bound that a caller would see enforced, so their tools check it by hand
//! (rmcp's schema states it, as ours does; rig's cannot).
//!
//! Used by the benchmark crate's build script (definitions of 200 tools) and
//! by `scripts/bench_compile.sh` (crates of 100 tools, timed while building).

use std::fmt::Write;

/// The name of tool `index`: `forecast_000`, `forecast_001`, ...
pub fn tool_name(index: usize) -> String {
    format!("forecast_{index:03}")
}

/// `count` tools written with this SDK's `#[tool]`; the crate is `toolsmith`.
pub fn ours(count: usize) -> String {
    let mut out = String::from("use toolsmith::tool;\n");
    for index in 0..count {
        let name = tool_name(index);
        write!(
            out,
            r#"
/// Forecast the weather in place number {index}.
#[tool(read_only)]
pub async fn {name}(
    /// The city.
    city: String,
    /// How many days ahead.
    #[arg(minimum = 1, maximum = 14)]
    days: u32,
    /// Metric units.
    metric: bool,
) -> String {{
    format!("{{city}}:{{days}}:{{metric}}:{index}")
}}
"#
        )
        .expect("writing to a String");
    }
    out
}

/// `count` tools written with rmcp's macros, as methods of `server` whose
/// router is `server::tool_router()`; the crates are `rmcp`, `serde` and `schemars`.
pub fn rmcp(count: usize, server: &str) -> String {
    let mut out = format!(
        r#"use rmcp::handler::server::wrapper::Parameters;
use rmcp::{{ErrorData, tool, tool_router}};

/// The server the tools belong to, as rmcp's macros require.
#[derive(Clone, Default)]
pub struct {server};
"#
    );
    for index in 0..count {
        write!(
            out,
            r#"
/// The arguments of `{name}`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct {args} {{
    /// The city.
    pub city: String,
    /// How many days ahead.
    #[schemars(range(min = 1, max = 14))]
    pub days: u32,
    /// Metric units.
    pub metric: bool,
}}
"#,
            name = tool_name(index),
            args = rmcp_args(index),
        )
        .expect("writing to a String");
    }
    write!(out, "\n#[tool_router(vis = \"pub\")]\nimpl {server} {{\n")
        .expect("writing to a String");
    for index in 0..count {
        write!(
            out,
            r#"    /// Forecast the weather in place number {index}.
    #[tool(annotations(read_only_hint = true))]
    async fn {name}(&self, Parameters(args): Parameters<{args}>) -> Result<String, ErrorData> {{
        if !(1..=14).contains(&args.days) {{
            return Err(ErrorData::invalid_params("days must be between 1 and 14", None));
        }}
        Ok(format!("{{}}:{{}}:{{}}:{index}", args.city, args.days, args.metric))
    }}
"#,
            name = tool_name(index),
            args = rmcp_args(index),
        )
        .expect("writing to a String");
    }
    out.push_str("}\n");
    out
}

/// The arguments struct of rmcp tool `index`.
pub fn rmcp_args(index: usize) -> String {
    format!("Forecast{index:03}Args")
}

/// `count` tools written with rig's `#[rig_tool]`; the crate is `rig_core`.
/// Each generates a unit struct named in Pascal case (`Forecast000`).
pub fn rig(count: usize) -> String {
    let mut out =
        String::from("use rig_core::rig_tool;\nuse rig_core::tool::ToolExecutionError;\n");
    for index in 0..count {
        let name = tool_name(index);
        write!(
            out,
            r#"
/// Forecast the weather in place number {index}.
#[rig_tool(params(city = "The city.", days = "How many days ahead.", metric = "Metric units."))]
pub async fn {name}(city: String, days: u32, metric: bool) -> Result<String, ToolExecutionError> {{
    if !(1..=14).contains(&days) {{
        return Err(ToolExecutionError::invalid_args("days must be between 1 and 14"));
    }}
    Ok(format!("{{city}}:{{days}}:{{metric}}:{index}"))
}}
"#
        )
        .expect("writing to a String");
    }
    out
}

/// The struct `#[rig_tool]` generates for tool `index`.
pub fn rig_struct(index: usize) -> String {
    format!("Forecast{index:03}")
}
