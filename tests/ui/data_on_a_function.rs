// `#[data]` is for the types a tool takes or returns, not for the tool.
use tk::data;

#[data]
fn settings() -> bool {
    true
}

fn main() {}
