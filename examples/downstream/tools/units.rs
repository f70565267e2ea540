//! Unit conversions: pure functions, so plain `fn`s.

use toolsmith::tool;

/// Convert degrees Celsius to Fahrenheit.
#[tool(read_only)]
pub fn celsius_to_fahrenheit(
    /// Degrees Celsius.
    celsius: f64,
) -> String {
    format!("{:.1} °F", celsius * 9.0 / 5.0 + 32.0)
}

/// Convert kilometres to miles.
#[tool(read_only)]
pub fn kilometres_to_miles(
    /// Kilometres.
    #[arg(minimum = 0)]
    km: f64,
) -> String {
    format!("{:.2} mi", km / 1.609_344)
}
