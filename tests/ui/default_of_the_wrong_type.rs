// Why this is refused: a default must be a value of the parameter's type.
// For the types whose literals Rust spells one way (numbers, `bool`, `char`,
// `String`, `PathBuf`), the macro reads the literal itself and says what to
// write; anything else is the compiler's to check (see
// `default_expression_of_the_wrong_type.rs`).

use tk::tool;

/// List the newest notes.
#[tool]
async fn newest_notes(
    #[arg(default = "ten")] limit: u32,
    #[arg(default = 0)] min_score: f64,
    #[arg(default = -1)] skip: u64,
    #[arg(default = 2024)] tag: String,
) -> String {
    format!("{limit} {min_score} {skip} {tag}")
}

fn main() {}
