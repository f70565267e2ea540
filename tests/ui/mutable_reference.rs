// Why this is refused: tools may run at the same time, so they only ever get
// shared access to the context's state. Take arguments by value, and shared
// state by `&T` (use a `Mutex` inside it if it must change).

use tk::tool;

/// Append a line to the log.
#[tool]
async fn append(log: &mut Vec<String>, line: String) -> String {
    log.push(line);
    log.len().to_string()
}

fn main() {}
