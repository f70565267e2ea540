//! Parameters mirrored in headers (`x-mcp-header`, MCP's SEP-2243): a
//! tool's input schema marks a property with `"x-mcp-header": "Region"`,
//! and a client of protocol version 2026-07-28 or later sends its value as
//! `Mcp-Param-Region` too, so a proxy can route on it without reading the
//! body. The server checks that the header and the body agree, and that
//! the header says what the tool will receive once the arguments are read
//! as every call's are (an `arguments` envelope taken off, a key in
//! another spelling renamed, a value cast).

use base64::Engine;
use hyper::http::HeaderMap;
use serde_json::{Map, Value};

use crate::registry::{Entry, check_call};

/// The first protocol version whose clients mirror parameters in headers.
const FIRST_VERSION: &str = "2026-07-28";

/// Whether the request's protocol version (`MCP-Protocol-Version`) is one
/// whose clients send `Mcp-Param-*` headers: dated versions from
/// [`FIRST_VERSION`] on, and names that are not dates (a draft). Requests
/// of older versions, or that name none, are not held to it.
pub(super) fn applies(headers: &HeaderMap) -> bool {
    let Some(version) = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let version = version.trim();
    let dated = version.len() == 10
        && version.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    !dated || version >= FIRST_VERSION
}

/// Check the `Mcp-Param-*` headers of a call of the tool with `schema`
/// against its `arguments`; the error says what does not match.
pub(super) fn check(
    schema: &Value,
    arguments: Option<&Map<String, Value>>,
    headers: &HeaderMap,
) -> Result<(), String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, property) in properties {
        let Some(suffix) = property.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        let header = format!("Mcp-Param-{suffix}");
        let body = arguments.and_then(|a| a.get(name)).filter(|v| !v.is_null());
        let body = match body {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => Some(v.to_string()),
            // Objects and arrays are not mirrored.
            Some(_) => continue,
        };
        let sent = match headers.get(&header) {
            None => None,
            Some(value) => {
                let text = value
                    .to_str()
                    .map_err(|_| format!("the {header} header is not ASCII text"))?;
                Some(decode(text.trim()).map_err(|e| format!("the {header} header {e}"))?)
            }
        };
        match (sent, body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(format!(
                    "the {header} header is missing; it must repeat the argument `{name}`"
                ));
            }
            (Some(_), None) => {
                return Err(format!(
                    "the {header} header was sent without the argument `{name}`"
                ));
            }
            (Some(sent), Some(body)) if sent != body => {
                return Err(format!(
                    "the {header} header does not match the argument `{name}`"
                ));
            }
            (Some(_), Some(_)) => {}
        }
    }
    Ok(())
}

/// Check the `Mcp-Param-*` headers against the arguments the tool of
/// `entry` will receive: what [`check`] compares with the body, read as a
/// call reads it. A value that casts to another (`"EU"` to an enum's
/// `"eu"`, `"9.0"` to `9`), a key in another spelling (`REGION`), or
/// arguments in an envelope would otherwise pass with a header that says
/// something else than what the tool gets. Arguments the call will refuse
/// reach no tool, and are left to the call to refuse.
pub(super) fn check_received(
    entry: &Entry,
    arguments: Option<&Map<String, Value>>,
    headers: &HeaderMap,
) -> Result<(), String> {
    let schema = &entry.tool.spec().input_schema;
    if !mirrors(schema) {
        return Ok(());
    }
    let sent = Value::Object(arguments.cloned().unwrap_or_default());
    let Ok((received, _)) = check_call(entry, sent) else {
        return Ok(());
    };
    check(schema, received.as_object(), headers)
        .map_err(|problem| format!("{problem}, as the tool receives it"))
}

/// Whether any property of `schema` is mirrored in a header.
fn mirrors(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.values().any(|p| p.get("x-mcp-header").is_some()))
}

/// A header's value: the text itself, or the Base64 (standard alphabet,
/// padded) between `=?base64?` (in any case) and `?=`.
fn decode(value: &str) -> Result<String, &'static str> {
    const PREFIX: &str = "=?base64?";
    const SUFFIX: &str = "?=";
    let wrapped = value.len() >= PREFIX.len() + SUFFIX.len()
        && value[..PREFIX.len()].eq_ignore_ascii_case(PREFIX)
        && value.ends_with(SUFFIX);
    if !wrapped {
        return Ok(value.to_owned());
    }
    let payload = &value[PREFIX.len()..value.len() - SUFFIX.len()];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|_| "is not valid Base64")?;
    String::from_utf8(bytes).map_err(|_| "is not UTF-8 once decoded")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(
                hyper::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn headers_are_decoded_as_the_scenario_expects() {
        assert_eq!(decode("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert_eq!(decode("=?BASE64?SGVsbG8=?=").unwrap(), "Hello");
        assert!(decode("=?base64?SGVsbG8?=").is_err());
        assert!(decode("=?base64?SGVs!!!bG8=?=").is_err());
        assert_eq!(decode("SGVsbG8=").unwrap(), "SGVsbG8=");
        assert_eq!(decode("=?base64?SGVsbG8=").unwrap(), "=?base64?SGVsbG8=");
        assert_eq!(decode("=?base64?=").unwrap(), "=?base64?=");
    }

    #[test]
    fn header_and_body_must_agree() {
        let schema = json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "other": {"type": "string"}}});
        let args = json!({"region": "eu", "n": 3, "other": "x"});
        let args = args.as_object();
        let ok = headers(&[("mcp-param-region", " eu "), ("Mcp-Param-N", "3")]);
        assert!(check(&schema, args, &ok).is_ok());
        let missing = headers(&[("Mcp-Param-N", "3")]);
        assert!(
            check(&schema, args, &missing)
                .unwrap_err()
                .contains("missing")
        );
        let wrong = headers(&[("Mcp-Param-Region", "us"), ("Mcp-Param-N", "3")]);
        assert!(check(&schema, args, &wrong).unwrap_err().contains("match"));
        assert!(check(&schema, None, &ok).unwrap_err().contains("without"));
        assert!(check(&schema, None, &HeaderMap::new()).is_ok());
    }

    #[test]
    fn only_new_protocol_versions_mirror_parameters() {
        assert!(!applies(&HeaderMap::new()));
        assert!(!applies(&headers(&[(
            "mcp-protocol-version",
            "2025-11-25"
        )])));
        assert!(applies(&headers(&[("mcp-protocol-version", "2026-07-28")])));
        assert!(applies(&headers(&[(
            "mcp-protocol-version",
            "DRAFT-2026-v1"
        )])));
    }
}
