// Why this is refused: a parameter mirrored in an HTTP header is sent by
// MCP clients as `Mcp-Param-{name}`, so the name must be one a client can
// send (letters, digits and inner `-`). A name with a space or a colon
// would make every call of the tool fail at the server's header check.

use tk::tool;

/// Route a request.
#[tool]
async fn route(#[arg(header = "Region: eu")] region: String) -> String {
    region
}

fn main() {}
