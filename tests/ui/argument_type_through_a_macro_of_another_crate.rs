// Why this is refused: a file is no argument a model can write, whoever
// declares the tool. Here the tool is declared by a macro of another crate
// (`extra_tools::echo_tool!`); the error still points at the type this file
// passed to it, not into the other crate's macro.

use tk as toolsmith;

extra_tools::echo_tool!(echo_file, std::fs::File);

fn main() {}
