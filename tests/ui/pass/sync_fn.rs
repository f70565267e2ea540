// Must compile: a plain `fn` is a tool too; it runs on the blocking pool so it
// never stalls the async threads.

use tk::tool;

/// Add two numbers.
#[tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    assert_eq!(add(2, 3), 5);
    let _ = AddTool;
}
