// Why this is refused: `one_of` lists the values the model may send, so each
// must be a value of the parameter's type; one that is not could never be
// sent, and the list would mislead the model. For the types whose spelling
// says what they are (numbers, `String`, `PathBuf`), the macro reads each
// value as it reads a default (see `default_of_the_wrong_type.rs`) and says
// what to write; in a list, each value is an item's. An integer is taken for
// a float: in JSON, `1` and `1.0` are one number.

use tk::tool;

/// Set the fan.
#[tool]
async fn set_fan(
    #[arg(one_of = [1, "2", 3])] speed: u32,
    #[arg(one_of = [0.5, 1])] step: u8,
    #[arg(one_of = [-1, 0, 1])] tilt: u16,
    #[arg(one_of = [100, 300])] levels: Vec<u8>,
    #[arg(one_of = [1, 2])] label: Option<String>,
    #[arg(one_of = [0, 0.5, 1])] mix: f64,
) -> String {
    format!("{speed} {step} {tilt} {levels:?} {label:?} {mix}")
}

fn main() {}
