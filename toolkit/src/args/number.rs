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
                if quotient.abs() >= LENIENT_BELOW {
                    // Too large for a float (1.5 of a step of 5e-324), or
                    // for the allowance below to leave any number out
                    // (1e9 + 0.5 of a step of 1): decided exactly, as the
                    // binary numbers they are or as the decimals they read.
                    return self.is_exact_multiple_of(step) || self.is_decimal_multiple_of(step);
                }
                let whole = quotient.round();
                if whole == 0.0 {
                    // Only zero is a multiple this close to zero: 1e-12 is
                    // no multiple of 1, however small the difference.
                    return a == 0.0;
                }
                // Decimal steps like 0.01 are not exact in binary; allow the
                // rounding error of one division of two rounded numbers (a
                // few units in the quotient's last place), or a billionth
                // of a step, whichever is more: not a fraction of the
                // quotient, which near the bound above let through numbers
                // a third of a step off (400000000.3 of a step of 1).
                (quotient - whole).abs() <= (4.0 * f64::EPSILON * quotient.abs()).max(1e-9)
            }
        }
    }

    /// Whether `self` is a whole multiple of `step` exactly, as the binary
    /// numbers they are: `m1 * 2^e1` is one of `m2 * 2^e2` (each `m` odd)
    /// when `m2` divides `m1` and `e1` is at least `e2`.
    fn is_exact_multiple_of(self, step: Num) -> bool {
        match (self.dyadic(), step.dyadic()) {
            (Some((0, _)), _) => true,
            (Some((m1, e1)), Some((m2, e2))) if m2 != 0 => e1 >= e2 && m1 % m2 == 0,
            _ => false,
        }
    }

    /// Whether `self` is a whole multiple of `step` as the shortest
    /// decimals that read back as them (what a schema or a payload most
    /// likely wrote): `d1 * 10^e1` is one of `d2 * 10^e2` when `d2 * 10^e2`
    /// divides `d1 * 10^e1`. Signs do not matter.
    fn is_decimal_multiple_of(self, step: Num) -> bool {
        let (Some((d1, e1)), Some((d2, e2))) = (self.decimal(), step.decimal()) else {
            return false;
        };
        if d1 == 0 || d2 == 0 {
            return d1 == 0;
        }
        match u32::try_from(e1 - e2) {
            // `d2` divides `d1 * 10^shift`: residues below `d2` (at most
            // `u64::MAX`), whose products fit a `u128`.
            Ok(shift) => ((d1 % d2) * pow_mod(10, shift, d2)).is_multiple_of(d2),
            // `d2 * 10^shift` divides `d1`, which it cannot once larger.
            Err(_) => 10u128
                .checked_pow(e2.abs_diff(e1))
                .and_then(|scale| scale.checked_mul(d2))
                .is_some_and(|divisor| d1.is_multiple_of(divisor)),
        }
    }

    /// The number's magnitude as `d * 10^e`: an integer exactly, a float as
    /// the shortest decimal that reads back as it. `None` for a float that
    /// is not finite.
    fn decimal(self) -> Option<(u128, i32)> {
        match self {
            Num::Int(int) => Some((int.unsigned_abs(), 0)),
            Num::Float(float) if !float.is_finite() => None,
            Num::Float(float) => {
                // `{:e}` writes the shortest form: `1.2345e-7`.
                let written = format!("{:e}", float.abs());
                let (mantissa, exponent) = written.split_once('e')?;
                let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
                let digits = format!("{whole}{fraction}").parse().ok()?;
                let exponent: i32 = exponent.parse().ok()?;
                Some((digits, exponent - i32::try_from(fraction.len()).ok()?))
            }
        }
    }

    /// The number as `m * 2^e` with `m` odd (or zero), exactly: every
    /// integer here and every finite float is one. `None` for a float that
    /// is not finite.
    fn dyadic(self) -> Option<(i128, i32)> {
        match self {
            Num::Int(0) => Some((0, 0)),
            Num::Int(int) => {
                let zeros = int.trailing_zeros();
                Some((int >> zeros, zeros as i32))
            }
            Num::Float(float) if !float.is_finite() => None,
            // Either zero: a float pattern compares as `==` does.
            Num::Float(0.0) => Some((0, 0)),
            Num::Float(float) => {
                let bits = float.to_bits();
                let biased = ((bits >> 52) & 0x7ff) as i32;
                let fraction = bits & ((1 << 52) - 1);
                // Subnormals have no implicit leading bit.
                let (mantissa, exponent) = if biased == 0 {
                    (fraction, -1074)
                } else {
                    (fraction | 1 << 52, biased - 1075)
                };
                let zeros = mantissa.trailing_zeros();
                let odd = i128::from(mantissa >> zeros);
                let odd = if float < 0.0 { -odd } else { odd };
                Some((odd, exponent + zeros as i32))
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

/// Quotients from this size up are decided exactly by
/// [`Num::is_multiple_of`]: the allowance for decimal steps, a billionth of
/// the quotient, is half a step here, and would let every number pass.
const LENIENT_BELOW: f64 = 5e8;

/// `base^exponent` modulo `modulus` (not zero), by squaring; `modulus` at
/// most `u64::MAX`, so that no product overflows.
fn pow_mod(base: u128, mut exponent: u32, modulus: u128) -> u128 {
    let (mut result, mut base) = (1 % modulus, base % modulus);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result * base % modulus;
        }
        base = base * base % modulus;
        exponent >>= 1;
    }
    result
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
    fn a_number_off_a_multiple_by_a_fraction_of_a_step_is_none_below_the_exact_bound() {
        for (value, step) in [
            (json!(400_000_000.3), json!(1)),
            (json!(400_000_000.5), json!(1.0)),
            (json!(1_000_001.25), json!(0.5)),
            (json!(12_345.678_9), json!(0.001)),
        ] {
            assert!(
                !num(value.clone()).is_multiple_of(num(step.clone())),
                "{value} of {step}"
            );
        }
        for (value, step) in [
            (json!(1_234_567.89), json!(0.01)),
            (json!(400_000_000.2), json!(0.1)),
            (json!(0.3), json!(0.1)),
            (json!(12_345.678), json!(0.001)),
        ] {
            assert!(
                num(value.clone()).is_multiple_of(num(step.clone())),
                "{value} of {step}"
            );
        }
    }

    #[test]
    fn a_small_number_is_no_multiple_of_a_larger_step() {
        assert!(!num(json!(1e-12)).is_multiple_of(num(json!(1))));
        assert!(!num(json!(-1e-12)).is_multiple_of(num(json!(0.5))));
        assert!(!num(json!(5e-324)).is_multiple_of(num(json!(1e308))));
        assert!(num(json!(0.0)).is_multiple_of(num(json!(1e308))));
        assert!(num(json!(-0.0)).is_multiple_of(num(json!(0.25))));
        // Near zero, a decimal step's rounding is still allowed.
        assert!(num(json!(0.01)).is_multiple_of(num(json!(0.01))));
        assert!(num(json!(-0.03)).is_multiple_of(num(json!(0.01))));
    }

    #[test]
    fn a_quotient_too_large_for_a_float_is_decided_exactly() {
        // Every finite float is a multiple of the smallest one.
        for value in [
            json!(1.5),
            json!(-1.5),
            json!(1e308),
            json!(u64::MAX),
            json!(i64::MIN),
        ] {
            assert!(
                num(value.clone()).is_multiple_of(num(json!(5e-324))),
                "{value}"
            );
        }
        // 2^-1073 is two of the smallest float: an odd count of them is not.
        let two_smallest = f64::from_bits(2);
        assert!(num(json!(1.5)).is_multiple_of(num(json!(two_smallest))));
        assert!(!num(json!(5e-324)).is_multiple_of(num(json!(two_smallest))));
        // 1e308 over 1e-300 overflows; 1e-300's odd part does not divide
        // 1e308's, but as the decimals they read, 1e608 of it is 1e308.
        assert!(num(json!(1e308)).is_multiple_of(num(json!(1e-300))));
        assert!(num(json!(u64::MAX)).is_multiple_of(num(json!(1e-300))));
        assert!(!num(json!(1e308)).is_multiple_of(num(json!(3e-300))));
        assert!(!num(json!(1.5e-323)).is_multiple_of(num(json!(1e-323))));
        // 3 * 2^1000 is a multiple of 3 * 2^-100 (the quotient, 2^1100, is
        // beyond a float), and not of 5 * 2^-100.
        let big = 3.0 * 2f64.powi(1000);
        assert!(num(json!(big)).is_multiple_of(num(json!(3.0 * 2f64.powi(-100)))));
        assert!(!num(json!(big)).is_multiple_of(num(json!(5.0 * 2f64.powi(-100)))));
    }

    #[test]
    fn a_large_quotient_is_no_multiple_by_allowance_alone() {
        // A billionth of these quotients is half a step or more: the
        // allowance for decimal steps let every number pass.
        for (value, step) in [
            (json!(1_000_000_000.5), json!(1)),
            (json!(-1_000_000_000.5), json!(1)),
            (json!(1_000_000_001), json!(2.0)),
            (json!(1_000_000_000.25), json!(0.5)),
            (json!(9_007_199_254_740_993_u64), json!(2.0)),
            (json!(1e15 + 0.5), json!(1)),
            (json!(12_345_678_901.235), json!(0.01)),
        ] {
            assert!(
                !num(value.clone()).is_multiple_of(num(step.clone())),
                "{value} of {step}"
            );
        }
        // Multiples there, binary or decimal, still are.
        for (value, step) in [
            (json!(1_000_000_002), json!(2.0)),
            (json!(9_007_199_254_740_994_u64), json!(2.0)),
            (json!(12_345_678_901.23), json!(0.01)),
            (json!(-12_345_678_901.23), json!(0.01)),
            (json!(1e300), json!(1e-10)),
            (json!(1e300), json!(1e-5)),
            (json!(u64::MAX), json!(5e-9)),
            (json!(i64::MIN), json!(2e-9)),
        ] {
            assert!(
                num(value.clone()).is_multiple_of(num(step.clone())),
                "{value} of {step}"
            );
        }
    }

    #[test]
    fn numbers_take_their_shortest_decimal_form() {
        assert_eq!(Num::Int(-120).decimal(), Some((120, 0)));
        assert_eq!(Num::Int(i128::from(i64::MIN)).decimal(), Some((1 << 63, 0)));
        assert_eq!(Num::Float(0.01).decimal(), Some((1, -2)));
        assert_eq!(Num::Float(-12.5).decimal(), Some((125, -1)));
        assert_eq!(Num::Float(1e300).decimal(), Some((1, 300)));
        assert_eq!(Num::Float(5e-324).decimal(), Some((5, -324)));
        assert_eq!(Num::Float(0.0).decimal(), Some((0, 0)));
        assert_eq!(Num::Float(f64::INFINITY).decimal(), None);
        assert_eq!(pow_mod(10, 0, 1), 0);
        assert_eq!(pow_mod(10, 3, 7), 1000 % 7);
        let max = u128::from(u64::MAX);
        assert_eq!(pow_mod(max - 1, 2, max), 1);
    }

    #[test]
    fn numbers_take_their_exact_binary_form() {
        assert_eq!(Num::Int(12).dyadic(), Some((3, 2)));
        assert_eq!(Num::Int(-8).dyadic(), Some((-1, 3)));
        assert_eq!(Num::Float(1.5).dyadic(), Some((3, -1)));
        assert_eq!(Num::Float(-0.375).dyadic(), Some((-3, -3)));
        assert_eq!(Num::Float(5e-324).dyadic(), Some((1, -1074)));
        assert_eq!(Num::Float(f64::MAX).dyadic(), Some(((1 << 53) - 1, 971)));
        assert_eq!(Num::Float(0.0).dyadic(), Some((0, 0)));
        assert_eq!(Num::Float(f64::NAN).dyadic(), None);
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
