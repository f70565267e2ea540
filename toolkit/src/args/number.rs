//! Exact numeric comparison across JSON's integer and float forms.
//!
//! A `u64` above `i64::MAX` against a float bound, or `i64::MIN` against an
//! integer one, must compare right; converting everything to `f64` would not.

use std::cmp::Ordering;

use serde_json::Number;

/// A JSON number in a form that compares exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    /// Every `i64` and `u64` fits.
    Int(i128),
    Float(f64),
}

impl Num {
    #[inline]
    pub(super) fn of(n: &Number) -> Num {
        if let Some(i) = n.as_i64() {
            Num::Int(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            Num::Int(i128::from(u))
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// Whether the number is an integer in JSON Schema's sense: `30.0` is.
    #[inline]
    pub(super) fn is_integral(self) -> bool {
        match self {
            Num::Int(_) => true,
            Num::Float(f) => f.is_finite() && f.fract() == 0.0,
        }
    }

    /// Whether the number is neither NaN nor infinite.
    #[inline]
    pub(super) fn is_finite(self) -> bool {
        match self {
            Num::Int(_) => true,
            Num::Float(f) => f.is_finite(),
        }
    }

    /// Exact order; `None` only when a NaN is involved.
    #[inline]
    pub(super) fn compare(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b),
            (Num::Int(a), Num::Float(b)) => compare_int_float(a, b),
            (Num::Float(a), Num::Int(b)) => compare_int_float(b, a).map(Ordering::reverse),
        }
    }

    /// Whether `self` is a whole multiple of `step`.
    pub(super) fn is_multiple_of(self, step: Num) -> bool {
        match (self, step) {
            (_, Num::Int(0)) => true,
            (Num::Int(a), Num::Int(b)) => a % b == 0,
            _ => {
                let (a, b) = (self.as_f64(), step.as_f64());
                if b == 0.0 || !a.is_finite() || !b.is_finite() {
                    return b == 0.0;
                }
                let quotient = a / b;
                // Decimal steps like 0.01 are not exact in binary; allow the
                // rounding error of one division.
                (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
            }
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            // Rounds only beyond 2^53, where float steps make the test moot.
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// Compare an integer with a float without rounding either.
fn compare_int_float(int: i128, float: f64) -> Option<Ordering> {
    if float.is_nan() {
        return None;
    }
    // 2^127: beyond it no i128 can reach, and `as` would saturate.
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if float >= LIMIT {
        return Some(Ordering::Less);
    }
    if float < -LIMIT {
        return Some(Ordering::Greater);
    }
    let whole = float.floor();
    // Exact: `whole` is integral and within i128's range.
    let whole_int = whole as i128;
    Some(match int.cmp(&whole_int) {
        Ordering::Equal if float > whole => Ordering::Less,
        order => order,
    })
}

/// The range a numeric `format` implies, as `(minimum, maximum)`.
///
/// schemars 1.x writes these formats for Rust's number types, often without
/// the matching `minimum`/`maximum`, so the range stops an `i64` argument
/// from accepting what would overflow when the tool deserializes it.
pub(super) fn format_range(format: &str) -> Option<(Number, Number)> {
    fn ints(min: i64, max: u64) -> Option<(Number, Number)> {
        Some((Number::from(min), Number::from(max)))
    }
    // Maximums as u64: `u64::MAX` is past i64's range.
    match format {
        "int8" => ints(i8::MIN.into(), i8::MAX as u64),
        "int16" => ints(i16::MIN.into(), i16::MAX as u64),
        "int32" => ints(i32::MIN.into(), i32::MAX as u64),
        "int64" => ints(i64::MIN, i64::MAX as u64),
        "uint8" => ints(0, u8::MAX.into()),
        "uint16" => ints(0, u16::MAX.into()),
        "uint32" => ints(0, u32::MAX.into()),
        "uint64" => ints(0, u64::MAX),
        // schemars' names for isize and usize: the width of this platform.
        "int" => ints(isize::MIN as i64, isize::MAX as u64),
        "uint" => ints(0, usize::MAX as u64),
        "float" => {
            let max = f64::from(f32::MAX);
            Some((Number::from_f64(-max)?, Number::from_f64(max)?))
        }
        "double" => Some((Number::from_f64(f64::MIN)?, Number::from_f64(f64::MAX)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(v: serde_json::Value) -> Num {
        match v {
            serde_json::Value::Number(n) => Num::of(&n),
            other => panic!("not a number: {other}"),
        }
    }

    #[test]
    fn integers_compare_exactly_across_i64_and_u64() {
        assert_eq!(
            num(json!(u64::MAX)).compare(num(json!(i64::MAX))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            num(json!(i64::MIN)).compare(num(json!(0))),
            Some(Ordering::Less)
        );
        assert_eq!(
            num(json!(u64::MAX)).compare(num(json!(u64::MAX))),
            Some(Ordering::Equal)
        );
    }

    #[test]
    fn integers_compare_exactly_with_floats() {
        // 2^63 as a float equals i64::MAX + 1 exactly, so i64::MAX is below it.
        let two_63 = num(json!(9_223_372_036_854_775_808.0));
        assert_eq!(num(json!(i64::MAX)).compare(two_63), Some(Ordering::Less));
        assert_eq!(
            num(json!(9_223_372_036_854_775_808_u64)).compare(two_63),
            Some(Ordering::Equal)
        );
        assert_eq!(num(json!(5)).compare(num(json!(5.5))), Some(Ordering::Less));
        assert_eq!(
            num(json!(6)).compare(num(json!(5.5))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            num(json!(-6)).compare(num(json!(-5.5))),
            Some(Ordering::Less)
        );
        assert_eq!(
            num(json!(5.5)).compare(num(json!(5))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            num(json!(1)).compare(num(json!(1e300))),
            Some(Ordering::Less)
        );
        assert_eq!(
            num(json!(1)).compare(num(json!(-1e300))),
            Some(Ordering::Greater)
        );
        assert_eq!(Num::Int(1).compare(Num::Float(f64::NAN)), None);
    }

    #[test]
    fn only_floats_can_be_non_finite() {
        assert!(Num::Int(i128::MAX).is_finite());
        assert!(Num::Float(1.5).is_finite());
        assert!(!Num::Float(f64::INFINITY).is_finite());
        assert!(!Num::Float(f64::NAN).is_finite());
    }

    #[test]
    fn multiples() {
        assert!(num(json!(15)).is_multiple_of(num(json!(5))));
        assert!(!num(json!(16)).is_multiple_of(num(json!(5))));
        assert!(num(json!(0.07)).is_multiple_of(num(json!(0.01))));
        assert!(!num(json!(0.075)).is_multiple_of(num(json!(0.01))));
        assert!(num(json!(3)).is_multiple_of(num(json!(1.5))));
        assert!(num(json!(u64::MAX)).is_multiple_of(num(json!(1))));
    }

    #[test]
    fn formats_imply_their_type_ranges() {
        let (min, max) = format_range("uint8").unwrap();
        assert_eq!(
            (min.to_string(), max.to_string()),
            ("0".into(), "255".into())
        );
        let (min, max) = format_range("int64").unwrap();
        assert_eq!(min.as_i64(), Some(i64::MIN));
        assert_eq!(max.as_i64(), Some(i64::MAX));
        let (_, max) = format_range("uint64").unwrap();
        assert_eq!(max.as_u64(), Some(u64::MAX));
        let (min, max) = format_range("float").unwrap();
        assert_eq!(max.as_f64(), Some(f64::from(f32::MAX)));
        assert_eq!(min.as_f64(), Some(-f64::from(f32::MAX)));
        assert!(format_range("email").is_none());
    }
}
