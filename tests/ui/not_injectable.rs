// Why this is refused: a `&T` parameter is shared state taken from the
// ToolContext, which tools share across threads, so `T` must be
// `Send + Sync + 'static`. An `Rc` is none of those; use an `Arc`.

use std::rc::Rc;

use tk::tool;

/// Count the users.
#[tool]
async fn count_users(users: &Rc<Vec<String>>) -> String {
    users.len().to_string()
}

fn main() {}
