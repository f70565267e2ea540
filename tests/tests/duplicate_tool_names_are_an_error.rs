//! Two linked `#[tool]`s with one name make `from_inventory` fail with an
//! error that names the tool and the modules of both, instead of one
//! silently shadowing the other. (In one module the two names are a compile
//! error: `tests/ui/two_tools_with_one_name.rs`. Across modules, as here, a
//! crate has no shared namespace the macro could use, so the registry says.)

use tk::{RegistryError, ToolFilter, ToolRegistry};
use toolsmith_tests::module;

/// A second `read_file`, clashing with the one in `toolsmith_tests::naming`.
#[tk::tool(name = "read_file")]
async fn another_read_file(
    /// Some path.
    path: String,
) -> String {
    path
}

#[test]
fn two_linked_tools_with_one_name_are_a_clear_error() {
    let err = ToolRegistry::from_inventory(&ToolFilter::all()).expect_err("the names clash");
    let RegistryError::Duplicate {
        name,
        existing,
        added,
    } = &err
    else {
        panic!("expected a duplicate, got {err:?}");
    };
    assert_eq!(name, "read_file");
    // Which of the two registered first depends on link order; the error
    // names both, each by its module.
    let mut origins = [existing.clone(), added.clone()];
    origins.sort();
    assert_eq!(
        origins,
        [
            format!("#[tool] in {}", module_path!()),
            "#[tool] in toolsmith_tests::naming".to_owned(),
        ]
    );
    assert_eq!(
        err.to_string(),
        format!(
            "a tool named 'read_file' is already registered (from {existing}); the one from {added} needs another name: tool names must be unique"
        )
    );
}

#[test]
fn a_filter_that_takes_only_one_of_them_works() {
    let registry = ToolRegistry::from_inventory(&ToolFilter::all().module_prefix(module("naming")))
        .expect("one read_file");
    assert!(registry.contains("read_file"));
    let registry = ToolRegistry::from_inventory(&ToolFilter::all().module_prefix(module_path!()))
        .expect("one read_file");
    assert_eq!(registry.names(), ["read_file"]);
    assert_eq!(
        registry
            .get("read_file")
            .expect("registered")
            .spec()
            .module_path,
        module_path!()
    );
}
