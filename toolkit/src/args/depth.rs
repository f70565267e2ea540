//! How deep arguments may nest, checked before anything recurses into them.
//!
//! Arguments parsed from JSON text can nest at most 128 levels (serde_json's
//! parser refuses more), but a host may build a [`Value`] in-process, or a
//! cast may parse a string into a container below another. Everything that
//! walks a value by recursion (the walks here, serde's deserialization into
//! a tool's own type, `Clone`, `==`, and even serde_json's `Drop`) would
//! overflow the stack on a value nested a few thousand levels deep. So
//! every value is measured against [`MAX_DEPTH`] first, by a walk that
//! itself stops one level past the limit, and refused past it.
//!
//! A value we own and refuse is taken apart iteratively ([`discard`]) rather
//! than dropped, since serde_json drops by recursion. What a host does with
//! its own deep values (cloning, dropping) is the host's to bound.

use serde_json::Value;

use super::node::MAX_DEPTH;
use crate::error::{ArgumentError, Problem};

/// Whether every value inside `value`, which itself sits `depth` levels into
/// the arguments, is at most [`MAX_DEPTH`] levels deep.
///
/// Recursive, but never deeper than [`MAX_DEPTH`] + 1 frames: the walk
/// stops at the first value past the limit. Allocates nothing.
pub(super) fn fits(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::Array(items) => items.iter().all(|item| fits(item, depth + 1)),
        Value::Object(map) => map.values().all(|child| fits(child, depth + 1)),
        _ => true,
    }
}

/// The error for arguments that nest too deep, at their root.
pub(super) fn too_deep() -> ArgumentError {
    ArgumentError::new(
        String::new(),
        Problem::Other(format!(
            "nest more than {MAX_DEPTH} levels deep; send them with less nesting"
        )),
    )
}

/// Drop `value` without recursion when it nests too deep for serde_json's
/// recursive `Drop`; drop it as usual otherwise.
pub(crate) fn discard(value: Value) {
    if fits(&value, 0) {
        return;
    }
    // Each container is emptied onto the stack before it is dropped, so no
    // drop ever sees a nested container.
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, child)| child)),
            _ => {}
        }
    }
}

/// A value `levels` containers deep, built without recursion: arrays, or
/// objects with one key, or both in turn.
#[cfg(test)]
pub(crate) fn nested(levels: usize, shape: Shape) -> Value {
    let mut value = Value::from(1);
    for level in 0..levels {
        let object = match shape {
            Shape::Arrays => false,
            Shape::Objects => true,
            Shape::Alternating => level % 2 == 0,
        };
        value = if object {
            let mut map = serde_json::Map::new();
            map.insert("a".to_owned(), value);
            Value::Object(map)
        } else {
            Value::Array(vec![value])
        };
    }
    value
}

/// What [`nested`] builds.
#[cfg(test)]
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    Arrays,
    Objects,
    Alternating,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_limit_is_counted_in_containers_above_a_value() {
        for shape in [Shape::Arrays, Shape::Objects, Shape::Alternating] {
            assert!(fits(&nested(MAX_DEPTH, shape), 0), "{shape:?}");
            assert!(!fits(&nested(MAX_DEPTH + 1, shape), 0), "{shape:?}");
            assert!(fits(&nested(MAX_DEPTH - 3, shape), 3), "{shape:?}");
            assert!(!fits(&nested(MAX_DEPTH - 2, shape), 3), "{shape:?}");
        }
        assert!(fits(&json!({"a": [1, {"b": null}], "c": "x"}), 0));
    }

    #[test]
    fn one_deep_branch_among_many_is_found() {
        let mut wide: Vec<Value> = (0..1000).map(Value::from).collect();
        wide.push(nested(MAX_DEPTH, Shape::Objects));
        assert!(!fits(&Value::Array(wide), 0));
    }

    #[test]
    fn serde_json_parses_what_fits_and_refuses_what_does_not() {
        // The limit is serde_json's own: text it parses always fits.
        let text = |levels: usize| format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
        let parsed: Value = serde_json::from_str(&text(MAX_DEPTH - 1)).unwrap();
        assert!(fits(&parsed, 0));
        assert!(serde_json::from_str::<Value>(&text(MAX_DEPTH + 1)).is_err());
    }

    #[test]
    fn the_error_reads_at_the_root() {
        assert_eq!(
            too_deep().to_string(),
            format!(
                "arguments nest more than {MAX_DEPTH} levels deep; send them with less nesting"
            )
        );
    }

    #[test]
    fn discarding_takes_any_value_apart() {
        discard(json!({"a": [1, 2, {"b": "c"}]}));
        discard(nested(100_000, Shape::Alternating));
    }
}
