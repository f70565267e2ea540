// Must compile: a plain `fn` is a tool too; it runs on the blocking pool so it
// never stalls the async threads. A tool may also take no arguments at all.

use tk::tool;

/// Add two numbers.
#[tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The server's name.
#[tool(read_only)]
fn server_name() -> String {
    "example".to_owned()
}

fn main() {
    assert_eq!(add(2, 3), 5);
    assert_eq!(server_name(), "example");
    let _ = (AddTool, ServerNameTool);
}
