//! Scalars: every integer width, both float widths, booleans, strings and paths.

use std::path::PathBuf;

use tk::tool;

/// Echo one value of every integer width.
///
/// Each parameter is bounded by its Rust type.
#[tool(read_only)]
#[allow(clippy::too_many_arguments)]
pub async fn integer_widths(
    /// An 8-bit signed integer.
    a_i8: i8,
    /// A 16-bit signed integer.
    a_i16: i16,
    /// A 32-bit signed integer.
    a_i32: i32,
    /// A 64-bit signed integer.
    a_i64: i64,
    /// A pointer-sized signed integer.
    a_isize: isize,
    /// An 8-bit unsigned integer.
    a_u8: u8,
    /// A 16-bit unsigned integer.
    a_u16: u16,
    /// A 32-bit unsigned integer.
    a_u32: u32,
    /// A 64-bit unsigned integer.
    a_u64: u64,
    /// A pointer-sized unsigned integer.
    a_usize: usize,
) -> String {
    format!(
        "i8={a_i8} i16={a_i16} i32={a_i32} i64={a_i64} isize={a_isize} \
         u8={a_u8} u16={a_u16} u32={a_u32} u64={a_u64} usize={a_usize}"
    )
}

/// Echo floats, a flag, a string and a path.
#[tool(read_only)]
pub async fn scalars(
    /// A single-precision number.
    ratio: f32,
    /// A double-precision number.
    precise: f64,
    /// Whether to be verbose.
    verbose: bool,
    /// Any text.
    label: String,
    /// A file path.
    path: PathBuf,
) -> String {
    format!(
        "ratio={ratio} precise={precise} verbose={verbose} label={label} path={}",
        path.display()
    )
}

/// Answer `pong`. Takes no parameters.
#[tool(read_only, idempotent)]
pub async fn ping() -> String {
    "pong".to_owned()
}

/// Sixteen numbers: the most parameters read as a tuple.
#[tool(read_only)]
#[allow(clippy::too_many_arguments)]
pub async fn sixteen(
    /// Number 1.
    n01: u8,
    /// Renamed.
    #[arg(rename = "second")]
    n02: u8,
    /// With a default.
    #[arg(default = 3)]
    n03: u8,
    /// Optional.
    n04: Option<u8>,
    /// Number 5.
    n05: u8,
    /// Number 6.
    n06: u8,
    /// Number 7.
    n07: u8,
    /// Number 8.
    n08: u8,
    /// Number 9.
    n09: u8,
    /// Number 10.
    n10: u8,
    /// Number 11.
    n11: u8,
    /// Number 12.
    n12: u8,
    /// Number 13.
    n13: u8,
    /// Number 14.
    n14: u8,
    /// Number 15.
    n15: u8,
    /// Number 16.
    n16: u8,
) -> String {
    format!(
        "{n01:?} {n02:?} {n03:?} {n04:?} {n05:?} {n06:?} {n07:?} {n08:?} {n09:?} {n10:?} {n11:?} {n12:?} {n13:?} {n14:?} {n15:?} {n16:?}"
    )
}

/// Seventeen numbers: one more than is read as a tuple, so read by a derived struct.
#[tool(read_only)]
#[allow(clippy::too_many_arguments)]
pub async fn seventeen(
    /// Number 1.
    n01: u8,
    /// Renamed.
    #[arg(rename = "second")]
    n02: u8,
    /// With a default.
    #[arg(default = 3)]
    n03: u8,
    /// Optional.
    n04: Option<u8>,
    /// Number 5.
    n05: u8,
    /// Number 6.
    n06: u8,
    /// Number 7.
    n07: u8,
    /// Number 8.
    n08: u8,
    /// Number 9.
    n09: u8,
    /// Number 10.
    n10: u8,
    /// Number 11.
    n11: u8,
    /// Number 12.
    n12: u8,
    /// Number 13.
    n13: u8,
    /// Number 14.
    n14: u8,
    /// Number 15.
    n15: u8,
    /// Number 16.
    n16: u8,
    /// Number 17.
    n17: u8,
) -> String {
    format!(
        "{n01:?} {n02:?} {n03:?} {n04:?} {n05:?} {n06:?} {n07:?} {n08:?} {n09:?} {n10:?} {n11:?} {n12:?} {n13:?} {n14:?} {n15:?} {n16:?} {n17:?}"
    )
}
