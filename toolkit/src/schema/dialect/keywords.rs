//! Keep the keywords a dialect accepts. A dropped constraint is not lost on
//! the model: its value is appended to the description, so `minLength: 1` or
//! `default: 10` still reach the model as words. The registry validates
//! arguments against the full schema either way.

use serde_json::{Map, Value};

/// Keywords that constrain or explain values; the ones worth a note when dropped.
const WORTH_TELLING: &[&str] = &[
    "default",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// Remove every keyword not in `allowed`; returns notes on the dropped
/// constraints, in the order they appeared, for [`add_notes`].
#[must_use]
pub(super) fn keep_only(map: &mut Map<String, Value>, allowed: &[&str]) -> Vec<String> {
    let mut notes = Vec::new();
    map.retain(|keyword, value| {
        if allowed.contains(&keyword.as_str()) {
            return true;
        }
        if WORTH_TELLING.contains(&keyword.as_str()) {
            notes.push(note(keyword, value));
        }
        false
    });
    notes
}

/// `keyword: value`, with string-valued keywords (`format`, `pattern`) unquoted.
pub(super) fn note(keyword: &str, value: &Value) -> String {
    match (keyword, value) {
        ("format" | "pattern", Value::String(text)) => format!("{keyword}: {text}"),
        _ => format!("{keyword}: {value}"),
    }
}

/// Append `notes` to the description: `Text. (minLength: 1, default: 2)`.
pub(super) fn add_notes(map: &mut Map<String, Value>, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    let notes = notes.join(", ");
    let description = match map.get("description").and_then(Value::as_str) {
        Some(text) if !text.trim().is_empty() => format!("{} ({notes})", text.trim_end()),
        _ => notes,
    };
    map.insert("description".into(), Value::String(description));
}

/// Drop a `format` the dialect does not know for this `type`; returns a
/// note for [`add_notes`] unless it was a numeric width (`uint32`, `int8`,
/// ...), which goes silently: schemars puts the bounds that matter in
/// `minimum`/`maximum`.
#[must_use]
pub(super) fn drop_unknown_format(
    map: &mut Map<String, Value>,
    known: impl Fn(&str, &str) -> bool,
) -> Option<String> {
    let Some(Value::String(format)) = map.get("format") else {
        return None;
    };
    let kind = match map.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        // `["integer", "null"]`: the format is about the integer.
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or_default(),
        _ => "",
    };
    if known(kind, format) {
        return None;
    }
    let numeric = matches!(kind, "integer" | "number");
    let format = map.shift_remove("format")?;
    (!numeric).then(|| note("format", &format))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::with;
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_keywords_go_and_constraints_become_notes() {
        let schema = json!({
            "type": "string",
            "title": "Name",
            "description": "Who.",
            "minLength": 1,
            "default": "Ada",
            "examples": ["Grace"],
        });
        assert_eq!(
            with(schema, |map| {
                let notes = keep_only(map, &["type", "description"]);
                add_notes(map, &notes);
            }),
            json!({"type": "string", "description": "Who. (minLength: 1, default: \"Ada\")"})
        );
    }

    #[test]
    fn notes_stand_alone_without_a_description() {
        assert_eq!(
            with(json!({"type": "integer", "default": 3}), |map| {
                let notes = keep_only(map, &["type"]);
                add_notes(map, &notes);
            }),
            json!({"type": "integer", "description": "default: 3"})
        );
    }

    #[test]
    fn numeric_widths_go_silently_and_string_formats_are_noted() {
        let known = |kind: &str, format: &str| kind == "string" && format == "date-time";
        let mut width = Map::from_iter([
            ("type".to_owned(), json!("integer")),
            ("format".to_owned(), json!("uint64")),
        ]);
        assert_eq!(drop_unknown_format(&mut width, known), None);
        assert_eq!(Value::Object(width), json!({"type": "integer"}));
        let mut optional = Map::from_iter([
            ("type".to_owned(), json!(["integer", "null"])),
            ("format".to_owned(), json!("uint32")),
        ]);
        assert_eq!(drop_unknown_format(&mut optional, known), None);
        let mut optional_date = Map::from_iter([
            ("type".to_owned(), json!(["null", "string"])),
            ("format".to_owned(), json!("date-time")),
        ]);
        assert_eq!(drop_unknown_format(&mut optional_date, known), None);
        assert_eq!(optional_date["format"], json!("date-time"));
        let mut uuid = Map::from_iter([
            ("type".to_owned(), json!("string")),
            ("format".to_owned(), json!("uuid")),
        ]);
        assert_eq!(
            drop_unknown_format(&mut uuid, known).as_deref(),
            Some("format: uuid")
        );
        assert_eq!(Value::Object(uuid), json!({"type": "string"}));
        let mut date = Map::from_iter([
            ("type".to_owned(), json!("string")),
            ("format".to_owned(), json!("date-time")),
        ]);
        assert_eq!(drop_unknown_format(&mut date, known), None);
        assert_eq!(date["format"], json!("date-time"));
    }
}
