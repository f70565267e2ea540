// Why this is refused: `#[tool]` puts a type beside the function, named after
// it (`read_file` gets `ReadFileTool`), and this module already has a type of
// that name. Yours keeps the name, so your code is unaffected, and the clash
// is this one error instead of one for the name and one for every impl the
// type would get twice. Rename your type, or rename the function and keep the
// tool's name with `#[tool(name = "read_file")]`.

use tk::tool;

/// How the host describes the tool in its own UI.
#[derive(Debug, Clone, Default)]
struct ReadFileTool {
    label: String,
}

/// Read a text file.
#[tool(read_only)]
async fn read_file(path: String) -> Result<String, std::io::Error> {
    std::fs::read_to_string(path)
}

fn main() {
    let _ = ReadFileTool::default().label;
}
