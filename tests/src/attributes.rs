//! Every key of `#[tool(...)]` and `#[arg(...)]`.

use std::path::PathBuf;

use tk::{ToolError, tool};

/// Create a user account.
///
/// The handle must be lowercase; everything else has a default.
#[tool(idempotent)]
pub async fn create_account(
    /// The login handle.
    #[arg(
        rename = "handle",
        min_length = 3,
        max_length = 16,
        pattern = "^[a-z][a-z0-9_]*$"
    )]
    user_handle: String,
    /// Age in years.
    #[arg(minimum = 13, maximum = 130)]
    age: u8,
    /// Labels for the account.
    #[arg(min_items = 1, max_items = 3)]
    tags: Vec<String>,
    /// This doc comment loses to the attribute's description.
    #[arg(description = "How to greet the user.", default = "Hello")]
    greeting: String,
    /// The home directory.
    #[arg(default = "/home/guest")]
    home: PathBuf,
    /// Share of the quota to grant, from 0 to 1.
    #[arg(default = 0.5, minimum = 0.0, maximum = 1.0)]
    quota: f64,
    /// Days until the account expires.
    #[arg(default = 30, minimum = 1)]
    expires_in_days: u16,
) -> String {
    format!(
        "handle={user_handle} age={age} tags={tags:?} greeting={greeting} home={} quota={quota} expires_in_days={expires_in_days}",
        home.display()
    )
}

/// Run a shell command in the workspace. The output is returned.
///
/// Nothing is really run: this tool only reports what it would do.
#[tool(exclusive, category = shell, timeout = 30)]
pub async fn exec(
    /// The command line.
    #[arg(min_length = 1)]
    command: String,
    /// Seconds before the command is stopped.
    #[arg(default = 60, minimum = 1, maximum = 600)]
    timeout: u32,
) -> String {
    format!("would run `{command}` for at most {timeout} s")
}

/// This doc comment is replaced by the attribute's description.
#[tool(
    name = "fetch_page",
    description = "Fetch a web page. Returns the page's text, without markup.",
    read_only,
    idempotent,
    open_world,
    category = network_read,
    risk = medium,
    timeout = "5s"
)]
pub async fn fetch(
    /// The page's address.
    #[arg(pattern = "^https?://")]
    url: String,
) -> Result<String, ToolError> {
    if url.contains("unreachable") {
        return Err(ToolError::failed(format!("could not reach {url}")));
    }
    Ok(format!("text of {url}"))
}

/// Delete every cached file. This cannot be undone.
#[tool(destructive, category = filesystem_write, risk = high, timeout = "2m")]
pub async fn purge_cache(
    /// Must be `true` to go ahead.
    confirm: bool,
) -> Result<String, String> {
    if confirm {
        Ok("cache purged".to_owned())
    } else {
        Err("nothing done: set confirm to true".to_owned())
    }
}

/// Launch a program with arguments.
#[tool]
pub async fn launch(
    /// The program to run.
    #[arg(default = "ls")]
    program: String,
    /// Its command-line arguments.
    arguments: Vec<String>,
) -> String {
    std::iter::once(program)
        .chain(arguments)
        .collect::<Vec<_>>()
        .join(" ")
}
