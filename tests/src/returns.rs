//! Every kind of return: text, `ToolOutput`, `()`, a structured value,
//! `Result`s with a `String` or a `ToolError`, and a sync function.

use tk::schemars::JsonSchema;
use tk::serde::Serialize;
use tk::{ToolError, ToolOutput, tool};

use crate::collections::Color;

/// Repeat the text in capitals.
#[tool(read_only)]
pub async fn shout(
    /// What to shout.
    text: String,
) -> String {
    format!("{}!", text.to_uppercase())
}

/// Summarise a diff for the model and the user differently.
#[tool(read_only)]
pub async fn summarize_diff(
    /// Files changed.
    files: u32,
) -> ToolOutput {
    ToolOutput::text(format!("{files} files changed"))
        .with_display(format!("✔ {files} files"))
        .with_metadata("files", files)
}

/// Forget everything. Returns nothing.
#[tool]
pub async fn forget() {}

/// The weather in one city.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
pub struct Weather {
    /// The city asked about.
    pub city: String,
    /// Temperature in degrees Celsius.
    pub celsius: i32,
    /// The sky's colour.
    pub sky: Color,
}

/// Look up the weather in a city.
#[tool(read_only, open_world)]
pub async fn weather(
    /// The city's name.
    city: String,
) -> Weather {
    Weather {
        celsius: i32::try_from(city.len()).unwrap_or(i32::MAX) - 10,
        city,
        sky: Color::DeepBlue,
    }
}

/// Divide `a` by `b`.
#[tool(read_only)]
pub async fn divide(
    /// The dividend.
    a: f64,
    /// The divisor; not zero.
    b: f64,
) -> Result<f64, String> {
    if b == 0.0 {
        Err("cannot divide by zero".to_owned())
    } else {
        Ok(a / b)
    }
}

/// Take the square root of a number.
#[tool(read_only)]
pub async fn square_root(
    /// A number that is not negative.
    x: f64,
) -> Result<String, ToolError> {
    if x < 0.0 {
        Err(ToolError::InvalidArguments(format!(
            "{x} is negative; pass a number >= 0"
        )))
    } else {
        Ok(format!("{}", x.sqrt()))
    }
}

/// Count the words in a text. A sync function.
#[tool(read_only)]
pub fn word_count(
    /// The text to count.
    text: String,
) -> usize {
    text.split_whitespace().count()
}
