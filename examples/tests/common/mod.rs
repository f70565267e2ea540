//! Helpers shared by the tests that run the examples as programs.

use std::path::{Path, PathBuf};

/// An example's binary: cargo puts examples in `examples/` next to the
/// `deps/` directory that holds the running test.
pub fn example_binary(name: &str) -> PathBuf {
    let test_binary = std::env::current_exe().unwrap();
    let profile_dir = test_binary
        .parent()
        .and_then(Path::parent)
        .expect("a test binary lives in <target>/<profile>/deps");
    let binary = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        binary.is_file(),
        "{} is missing: run this test with `cargo test -p toolsmith-examples`, which builds the examples",
        binary.display()
    );
    binary
}
