//! JSON Schema's equality, for `enum`, `const` and `uniqueItems`.
//!
//! It differs from `Value`'s `==` in one way: numbers are equal by value, so
//! `1` and `1.0` are the same.

use std::cmp::Ordering;

use serde_json::Value;

use super::number::Num;

/// Whether two values are equal as JSON Schema sees them.
pub(super) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            Num::of(x).compare(Num::of(y)) == Some(Ordering::Equal)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| json_equal(x, y)))
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
    fn duplicates_are_found_anywhere() {
        assert!(has_duplicates(&[json!(1), json!(2), json!(1.0)]));
        assert!(!has_duplicates(&[json!(1), json!("1"), json!([1])]));
        assert!(!has_duplicates(&[]));
    }
}
