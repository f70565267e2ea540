//! JSON Schema's equality, for `enum`, `const` and `uniqueItems`.
//!
//! It differs from `Value`'s `==` in one way: numbers are equal by value, so
//! `1` and `1.0` are the same.

use std::cmp::Ordering;

use serde_json::Value;

use super::node::MAX_DEPTH;
use super::number::Num;

/// Whether two values are equal as JSON Schema sees them.
///
/// Containers more than [`MAX_DEPTH`] levels below the ones compared are
/// never equal: arguments nested that deep are refused anyway, and the
/// bound keeps the recursion short on values whose depth is not yet
/// measured (the fast check compares before it looks inside).
pub(super) fn json_equal(a: &Value, b: &Value) -> bool {
    equal_within(a, b, MAX_DEPTH)
}

/// [`json_equal`], looking at most `levels` containers deep.
fn equal_within(a: &Value, b: &Value, levels: usize) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            Num::of(x).compare(Num::of(y)) == Some(Ordering::Equal)
        }
        (Value::Array(x), Value::Array(y)) => {
            levels > 0
                && x.len() == y.len()
                && x.iter().zip(y).all(|(x, y)| equal_within(x, y, levels - 1))
        }
        (Value::Object(x), Value::Object(y)) => {
            levels > 0
                && x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| equal_within(x, y, levels - 1)))
        }
        _ => a == b,
    }
}

/// Whether any two items of a list are equal.
pub(super) fn has_duplicates(items: &[Value]) -> bool {
    items.iter().enumerate().any(|(i, a)| {
        items
            .get(i + 1..)
            .unwrap_or_default()
            .iter()
            .any(|b| json_equal(a, b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_equal_by_value() {
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(json_equal(&json!([1, {"a": 2}]), &json!([1.0, {"a": 2.0}])));
        assert!(!json_equal(&json!(1), &json!("1")));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    }

    #[test]
    fn comparing_stops_at_the_depth_limit() {
        use crate::args::depth::{Shape, nested};
        for shape in [Shape::Arrays, Shape::Objects] {
            let (deep, same) = (nested(MAX_DEPTH, shape), nested(MAX_DEPTH, shape));
            assert!(json_equal(&deep, &same), "{shape:?}");
            // Far past the limit: refused by the bound, not by the stack.
            let pair = [nested(100_000, shape), nested(100_000, shape)];
            assert!(!json_equal(&pair[0], &pair[1]), "{shape:?}");
            assert!(!has_duplicates(&pair), "{shape:?}");
            pair.into_iter().for_each(crate::args::depth::discard);
        }
    }

    #[test]
    fn duplicates_are_found_anywhere() {
        assert!(has_duplicates(&[json!(1), json!(2), json!(1.0)]));
        assert!(!has_duplicates(&[json!(1), json!("1"), json!([1])]));
        assert!(!has_duplicates(&[]));
    }
}
