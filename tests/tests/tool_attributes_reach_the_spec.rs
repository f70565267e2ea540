//! Every key of `#[tool(...)]` ends up in the tool's `ToolSpec`.

use std::time::Duration;

use tk::{RiskLevel, Tool, ToolAnnotations, ToolCategory};
use toolsmith_tests::attributes::{CreateAccountTool, ExecTool, FetchTool, PurgeCacheTool};
use toolsmith_tests::naming::ReadFileTool;
use toolsmith_tests::returns::ShoutTool;

#[test]
fn name_and_description_override_the_function_and_its_docs() {
    let spec = FetchTool.spec();
    assert_eq!(spec.name, "fetch_page");
    assert_eq!(
        spec.description,
        "Fetch a web page. Returns the page's text, without markup."
    );
}

#[test]
fn flags_become_annotations() {
    assert_eq!(
        FetchTool.spec().annotations,
        ToolAnnotations {
            read_only: true,
            exclusive: false,
            destructive: false,
            idempotent: true,
            open_world: true,
        }
    );
    assert_eq!(
        ExecTool.spec().annotations,
        ToolAnnotations {
            exclusive: true,
            ..ToolAnnotations::default()
        }
    );
    assert_eq!(
        PurgeCacheTool.spec().annotations,
        ToolAnnotations {
            destructive: true,
            ..ToolAnnotations::default()
        }
    );
    assert_eq!(
        CreateAccountTool.spec().annotations,
        ToolAnnotations {
            idempotent: true,
            ..ToolAnnotations::default()
        }
    );
}

#[test]
fn exclusive_tools_are_not_run_beside_others() {
    assert!(FetchTool.spec().concurrency_safe());
    assert!(ReadFileTool.spec().concurrency_safe());
    assert!(!ExecTool.spec().concurrency_safe());
    assert!(!PurgeCacheTool.spec().concurrency_safe());
}

#[test]
fn category_and_risk_set_the_risk_level() {
    let fetch = FetchTool.spec();
    assert_eq!(fetch.category, Some(ToolCategory::NetworkRead));
    assert_eq!(fetch.risk, Some(RiskLevel::Medium));
    assert_eq!(
        fetch.risk_level(),
        RiskLevel::Medium,
        "explicit beats category"
    );

    let exec = ExecTool.spec();
    assert_eq!(exec.category, Some(ToolCategory::Shell));
    assert_eq!(exec.risk, None);
    assert_eq!(exec.risk_level(), RiskLevel::High);

    let purge = PurgeCacheTool.spec();
    assert_eq!(purge.category, Some(ToolCategory::FilesystemWrite));
    assert_eq!(purge.risk_level(), RiskLevel::High);

    assert_eq!(ReadFileTool.spec().risk_level(), RiskLevel::Low);
    assert_eq!(ShoutTool.spec().category, None);
    assert_eq!(ShoutTool.spec().risk_level(), RiskLevel::Low, "read-only");
    assert_eq!(CreateAccountTool.spec().risk_level(), RiskLevel::Medium);
}

#[test]
fn timeouts_take_seconds_or_a_duration_string() {
    assert_eq!(FetchTool.spec().timeout, Some(Duration::from_secs(5)));
    assert_eq!(ExecTool.spec().timeout, Some(Duration::from_secs(30)));
    assert_eq!(
        PurgeCacheTool.spec().timeout,
        Some(Duration::from_secs(120))
    );
    assert_eq!(ShoutTool.spec().timeout, None);
}

#[test]
fn the_module_path_is_where_the_function_is() {
    assert_eq!(FetchTool.spec().module_path, "toolsmith_tests::attributes");
    assert_eq!(ReadFileTool.spec().module_path, "toolsmith_tests::naming");
}
