// `#[data]` derives serde's and schemars' traits, nothing else; other
// traits are derived with `#[derive]` as usual.
use tk::data;

#[data(Deserialise, Debug)]
struct Settings {
    verbose: bool,
}

fn main() {}
