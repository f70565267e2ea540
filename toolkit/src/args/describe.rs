//! Short words for values and types, for messages a model reads.

use serde_json::Value;

use super::node::Types;

/// How long a quoted string may get before it is cut, in characters.
const MAX_QUOTED: usize = 40;

/// What a value is, briefly: `string "abc"`, `integer 5`, `boolean true`,
/// `an object`. Containers are not spelled out; the model knows what it sent.
pub(super) fn value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) if n.is_f64() => format!("number {n}"),
        Value::Number(n) => format!("integer {n}"),
        Value::String(s) => format!("string {}", quote(s)),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// A string as JSON, cut on a character boundary when long.
fn quote(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED) {
        None => Value::from(s).to_string(),
        Some((cut, _)) => {
            let quoted = Value::from(&s[..cut]).to_string();
            // The closing quote stays last so the cut is visible as `…"`.
            let open = quoted.strip_suffix('"').unwrap_or(&quoted);
            format!("{open}…\"")
        }
    }
}

/// The allowed types as words: `integer`, `string or null`,
/// `object, array or null`. An integer is a number, so `integer` is not
/// listed beside `number`.
pub(super) fn types(types: Types) -> String {
    let names: Vec<&str> = Types::NAMED
        .iter()
        .filter(|(t, _)| types.contains(*t))
        .filter(|(t, _)| !(*t == Types::INTEGER && types.contains(Types::NUMBER)))
        .map(|(_, name)| *name)
        .collect();
    match names.as_slice() {
        [] => "nothing".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_named_with_their_type() {
        assert_eq!(value(&json!("abc")), r#"string "abc""#);
        assert_eq!(value(&json!(5)), "integer 5");
        assert_eq!(value(&json!(2.5)), "number 2.5");
        assert_eq!(value(&json!(30.0)), "number 30.0");
        assert_eq!(value(&json!(true)), "boolean true");
        assert_eq!(value(&json!(null)), "null");
        assert_eq!(value(&json!([1])), "an array");
        assert_eq!(value(&json!({"a": 1})), "an object");
    }

    #[test]
    fn long_strings_are_cut_on_a_character_boundary() {
        let long = "é".repeat(100);
        let text = value(&json!(long));
        assert!(text.ends_with("…\""), "{text}");
        assert_eq!(text.chars().filter(|c| *c == 'é').count(), MAX_QUOTED);
        let exact = "x".repeat(MAX_QUOTED);
        assert_eq!(value(&json!(exact)), format!("string \"{exact}\""));
    }

    #[test]
    fn type_lists_read_as_words() {
        assert_eq!(types(Types::INTEGER), "integer");
        assert_eq!(types(Types::STRING.union(Types::NULL)), "string or null");
        assert_eq!(
            types(Types::OBJECT.union(Types::ARRAY).union(Types::NULL)),
            "object, array or null"
        );
        assert_eq!(types(Types::INTEGER.union(Types::NUMBER)), "number");
        assert_eq!(types(Types::NONE), "nothing");
    }
}
