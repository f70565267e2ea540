//! `ToolRegistry::from_inventory` collects `#[tool]`s from every module of
//! every linked crate, and a `ToolFilter` decides which it takes.

use tk::{RiskLevel, ToolCategory, ToolFilter, ToolRegistry};
use toolsmith_tests::{MODULE, TOOLS, module};

/// A tool defined in the test binary itself is collected as well.
#[tk::tool(read_only)]
async fn local_echo(
    /// Echoed back.
    text: String,
) -> String {
    text
}

fn names(filter: &ToolFilter) -> Vec<String> {
    ToolRegistry::from_inventory(filter)
        .expect("linked tools have distinct names")
        .names()
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    names.sort();
    names
}

#[test]
fn tools_are_collected_from_every_module_of_the_crate() {
    let all = names(&ToolFilter::all().module_prefix(MODULE));
    let expected: Vec<&str> = TOOLS
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
        .collect();
    assert_eq!(all, sorted(&expected));
}

#[test]
fn a_module_prefix_takes_one_module_and_not_its_namesakes() {
    for (name, tools) in TOOLS {
        assert_eq!(
            names(&ToolFilter::all().module_prefix(module(name))),
            sorted(tools),
            "{name}"
        );
    }
    // `toolsmith_tests::name` is not a prefix of `toolsmith_tests::naming`.
    assert!(names(&ToolFilter::all().module_prefix(module("nam"))).is_empty());
    // Several prefixes add up.
    assert_eq!(
        names(
            &ToolFilter::all()
                .module_prefix(module("naming"))
                .module_prefix(module("whole"))
        ),
        sorted(&["list_dir", "read_file", "search", "write_file"])
    );
}

#[test]
fn tools_of_the_test_binary_itself_are_collected() {
    let this_crate = module_path!();
    assert_eq!(
        names(&ToolFilter::all().module_prefix(this_crate)),
        ["local_echo"]
    );
    assert!(names(&ToolFilter::default()).contains(&"local_echo".to_owned()));
}

#[test]
fn high_risk_tools_are_left_out_by_default() {
    let default = names(&ToolFilter::default().module_prefix(MODULE));
    // `exec` is high risk by its category, `purge_cache` by its attribute.
    assert!(!default.contains(&"exec".to_owned()), "{default:?}");
    assert!(!default.contains(&"purge_cache".to_owned()), "{default:?}");
    let everything = names(&ToolFilter::all().module_prefix(MODULE));
    let mut missing: Vec<&String> = everything
        .iter()
        .filter(|name| !default.contains(name))
        .collect();
    missing.sort();
    assert_eq!(missing, ["exec", "purge_cache"]);

    let registry = ToolRegistry::from_inventory(&ToolFilter::default()).expect("registers");
    assert!(
        registry
            .specs()
            .iter()
            .all(|spec| spec.risk_level() < RiskLevel::High)
    );
}

#[test]
fn naming_a_high_risk_tool_takes_it() {
    assert_eq!(
        names(&ToolFilter::default().names(["exec", "read_file", "no_such_tool"])),
        ["exec", "read_file"]
    );
}

#[test]
fn categories_select_what_a_tool_touches() {
    assert_eq!(
        names(&ToolFilter::default().categories([ToolCategory::FilesystemRead])),
        ["list_dir", "read_file"]
    );
    assert_eq!(
        names(
            &ToolFilter::default()
                .categories([ToolCategory::FilesystemRead, ToolCategory::NetworkRead])
        ),
        ["fetch_page", "list_dir", "read_file"]
    );
    // Categories do not lift the high-risk rule.
    assert_eq!(
        names(&ToolFilter::default().categories([ToolCategory::Shell])),
        Vec::<String>::new()
    );
    assert_eq!(
        names(&ToolFilter::all().categories([ToolCategory::Shell])),
        ["exec"]
    );
}

#[test]
fn exclusions_win_over_everything() {
    let taken = names(
        &ToolFilter::all()
            .module_prefix(module("naming"))
            .exclude(["write_file"]),
    );
    assert_eq!(taken, ["list_dir", "read_file"]);
    assert!(names(&ToolFilter::default().names(["exec"]).exclude(["exec"])).is_empty());
}

#[test]
fn filters_combine_by_and() {
    assert_eq!(
        names(
            &ToolFilter::default()
                .module_prefix(module("naming"))
                .categories([ToolCategory::FilesystemWrite])
        ),
        ["write_file"]
    );
    assert!(
        names(
            &ToolFilter::default()
                .names(["read_file"])
                .module_prefix(module("returns"))
        )
        .is_empty()
    );
}

#[test]
fn register_inventory_adds_to_an_existing_registry() {
    let registry = ToolRegistry::new();
    let added = registry
        .register_inventory(&ToolFilter::all().module_prefix(module("numbers")))
        .expect("registers");
    assert_eq!(added, 5);
    let added = registry
        .register_inventory(&ToolFilter::all().module_prefix(module("whole")))
        .expect("registers");
    assert_eq!(added, 1);
    assert_eq!(
        registry.names(),
        [
            "integer_widths",
            "ping",
            "scalars",
            "search",
            "seventeen",
            "sixteen"
        ]
    );
}
