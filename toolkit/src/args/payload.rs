//! Step 1: turn what the model sent into an object of named arguments.
//!
//! Providers and models disagree on the envelope: some send an object, some
//! a JSON string of one, some `null` or nothing for a tool without
//! parameters, and some wrap everything once more as `{"arguments": ...}`.
//! All of these mean the same call. A string that is almost JSON is
//! repaired where only one reading is possible, each repair reported like
//! a cast (see [`repair`](super::repair)); anything else cannot be read as
//! named parameters and is refused with words the model can act on, and
//! text that does not parse with the line, column and an excerpt of where
//! it went wrong.

use serde_json::{Map, Value};

use super::Cast;
use super::depth::discard;
use super::node::same_name;
use super::repair;
use crate::error::PayloadError;

/// The key some clients wrap the real arguments in.
const WRAPPER: &str = "arguments";

/// Step 1: turn what the model sent into an arguments object.
///
/// Accepts an object; `null` or an empty string (no arguments, `{}`); a JSON
/// string holding an object; and any of these wrapped as
/// `{"arguments": ...}`. The wrapper is only taken off when the tool has no
/// parameter of its own named `arguments` (`takes_arguments_param`), since
/// then the object is an ordinary call.
///
/// Text that is almost JSON is repaired where only one reading is possible
/// (see [`repair`](super::repair) for the list: code fences, a label or
/// prose around the object, comments, trailing commas, raw line breaks and
/// tabs in strings, single quotes, Python's `True`/`False`/`None`, closing
/// brackets missing at the very end), and each kind of repair made is
/// returned as a [`Cast`] with an empty path and `to` set to `repaired`,
/// so the host sees the payload was repaired. Text that still does not
/// parse is refused with the line, column and an excerpt of where parsing
/// failed.
///
/// The result is always a [`Value::Object`]. Nothing here recurses into
/// the payload: text is parsed by serde_json, which refuses more than 128
/// levels, repaired in one loop with no recursion, and a refused payload
/// is taken apart without recursion. How deep an object sent as such nests
/// is measured by the schema's check.
pub(crate) fn read_payload(
    payload: Value,
    takes_arguments_param: bool,
) -> Result<(Value, Vec<Cast>), PayloadError> {
    if is_plain_arguments(&payload, takes_arguments_param) {
        return Ok((payload, Vec::new()));
    }
    let (object, repairs) = read_object(payload)?;
    if takes_arguments_param || !is_envelope(&object) {
        return Ok((Value::Object(object), repairs));
    }
    let inner = object.into_iter().next().map_or(Value::Null, |(_, v)| v);
    read_object(inner).map(|(object, repairs)| (Value::Object(object), repairs))
}

/// Whether the payload is the usual call, an object of arguments, which
/// [`read_payload`] passes through untouched.
#[inline]
pub(crate) fn is_plain_arguments(payload: &Value, takes_arguments_param: bool) -> bool {
    matches!(payload, Value::Object(object) if takes_arguments_param || !is_envelope(object))
}

/// [`read_payload`] without the repairs made.
pub(crate) fn normalize_payload(
    payload: Value,
    takes_arguments_param: bool,
) -> Result<Value, PayloadError> {
    read_payload(payload, takes_arguments_param).map(|(args, _)| args)
}

/// Whether the object is `{"arguments": ...}` around the real arguments.
/// Only an envelope holds an object, a string or `null`; `{"arguments": 5}`
/// is a call with a parameter the tool lacks, for validation to report.
/// Inlined: asked of every call, and mostly answered by the length.
#[inline]
fn is_envelope(object: &Map<String, Value>) -> bool {
    object.len() == 1
        && object.iter().next().is_some_and(|(key, inner)| {
            same_name(key, WRAPPER)
                && matches!(inner, Value::Object(_) | Value::String(_) | Value::Null)
        })
}

/// An object, `null`, or a string holding an object, as an object, with
/// the repairs made to the string.
fn read_object(payload: Value) -> Result<(Map<String, Value>, Vec<Cast>), PayloadError> {
    match payload {
        Value::Object(object) => Ok((object, Vec::new())),
        Value::Null => Ok((Map::new(), Vec::new())),
        Value::String(text) => parse_object(&text),
        other => {
            let what = describe(&other);
            // It may nest too deep for serde_json's recursive drop.
            discard(other);
            Err(PayloadError::NotAnObject(what))
        }
    }
}

fn parse_object(text: &str) -> Result<(Map<String, Value>, Vec<Cast>), PayloadError> {
    // Some providers send "" for a call without parameters.
    if text.trim().is_empty() {
        return Ok((Map::new(), Vec::new()));
    }
    match repair::parse(text) {
        Ok((Value::Object(object), repairs)) => Ok((object, repairs)),
        // `"null"` is as empty as `null`.
        Ok((Value::Null, repairs)) => Ok((Map::new(), repairs)),
        // Arguments encoded twice (a JSON string of the JSON text), as some
        // models produce: read one more level, and no further.
        Ok((Value::String(inner), _)) => match repair::parse(&inner) {
            Ok((Value::Object(object), repairs)) => Ok((object, repairs)),
            _ => Err(PayloadError::NotAnObject(describe(&Value::String(inner)))),
        },
        Ok((other, _)) => Err(PayloadError::NotAnObject(describe(&other))),
        Err(e) => Err(PayloadError::NotJson(e)),
    }
}

/// What was sent instead of an object, briefly: `an array`, `a number (5)`.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
#[path = "tests/payload.rs"]
mod tests;
