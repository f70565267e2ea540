//! What `#[tool]` refuses, and what it must keep accepting.
//!
//! Each file in `ui/` is one rule: a leading comment says why the code is
//! refused, and the `.stderr` beside it is the exact message a user sees.
//! These files are shown in the book, so they must read well. The messages
//! depend on the compiler version; regenerate them with
//! `TRYBUILD=overwrite cargo test -p toolkit-tests --test compile_fail`
//! and read every changed file before committing it.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
    cases.pass("ui/pass/*.rs");
}
