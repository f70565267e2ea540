//! What `#[tool]` refuses, and what it must keep accepting.
//!
//! Each file in `ui/` is one rule: a leading comment says why the code is
//! refused, and the `.stderr` beside it is the exact message a user sees.
//! These files are shown in the book, so they must read well. The messages
//! depend on the compiler version; regenerate them with
//! `TRYBUILD=overwrite cargo test -p toolsmith-tests --test compile_fail`
//! and read every changed file before committing it.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
    cases.pass("ui/pass/*.rs");
}

/// The book's chapter on refusals shows every case: a new rule is not done
/// until a reader can find it there.
#[test]
fn every_case_is_shown_in_the_book() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let chapter = std::fs::read_to_string(root.join("../book/src/refusals.md")).unwrap();
    let mut missing = Vec::new();
    for dir in ["ui", "ui/pass"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                let shown = format!(
                    "tests/{dir}/{}",
                    path.file_name().unwrap().to_str().unwrap()
                );
                if !chapter.contains(&format!("{{{{#include ../../{shown}}}}}")) {
                    missing.push(shown);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "book/src/refusals.md does not show {missing:?}"
    );
}
