// Tools through every path of `#[tool]`'s expansion, included by
// `generated_names_do_not_clash.rs` into modules whose items are named like
// the bindings of the generated code.

/// Greet someone.
#[tool(
    read_only,
    category = network_read,
    risk = low,
    title = "Greeting",
    tags = ["social"],
    example = r#"{"who": "Ada"}"#,
    meta = r#"{"team": "core"}"#,
    timeout = 5,
    strict
)]
pub async fn greet(
    /// Who to greet.
    #[arg(min_length = 1, max_length = 40, pattern = "^[A-Za-z]+$")]
    who: String,
    /// The greeting.
    #[arg(default = "Hello", one_of = ["Hello", "Hi"])]
    greeting: String,
    context: &ToolContext,
) -> Result<String, ToolError> {
    let _ = context;
    Ok(format!("{greeting}, {who}!"))
}

/// Count up to a limit, off the async threads.
#[tool]
pub fn count(
    /// Where to stop.
    #[arg(minimum = 1, maximum = 100, default = 10)]
    limit: u32,
    context: &ToolContext,
) -> Result<String, ToolError> {
    let _ = context;
    Ok((1..=limit).count().to_string())
}

/// Measure a text.
#[tool(idempotent)]
pub async fn measure(
    /// The text.
    text: String,
) -> Result<Measured, ToolError> {
    Ok(Measured {
        length: text.chars().count(),
    })
}

/// Search, with the arguments as one struct (the derive's path).
#[tool]
pub async fn search(#[arg(flatten)] arguments: SearchArguments) -> String {
    format!("{}:{}", arguments.query, arguments.limit)
}

/// Add seventeen numbers (more parameters than the tuple path takes).
#[tool]
#[allow(clippy::too_many_arguments)]
pub async fn sum(
    /// A number.
    a: u8,
    /// A number.
    b: u8,
    /// A number.
    c: u8,
    /// A number.
    d: u8,
    /// A number.
    e: u8,
    /// A number.
    f: u8,
    /// A number.
    g: u8,
    /// A number.
    h: u8,
    /// A number.
    i: u8,
    /// A number.
    j: u8,
    /// A number.
    k: u8,
    /// A number.
    l: u8,
    /// A number.
    m: u8,
    /// A number.
    n: u8,
    /// A number.
    o: u8,
    /// A number.
    p: u8,
    /// A number.
    #[arg(default = 0)]
    q: u8,
) -> String {
    [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q]
        .iter()
        .map(|x| u32::from(*x))
        .sum::<u32>()
        .to_string()
}

/// Echo a text, through a parameter named like the function.
#[tool]
pub async fn echo(
    /// The text.
    echo: String,
) -> String {
    echo
}

/// Echo a text off the async threads, through a parameter named like the
/// function.
#[tool]
pub fn echo_blocking(
    /// The text.
    echo_blocking: String,
) -> String {
    echo_blocking
}
