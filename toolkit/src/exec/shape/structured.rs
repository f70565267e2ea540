//! Measuring structured content without building its JSON text, and
//! writing it as text for the model without the binary payloads it carries.

use std::io;

use serde_json::Value;

/// Whether `value`, written as compact JSON, is longer than `limit`
/// characters. Serialization stops at the first write past the limit, so a
/// huge value costs about `limit` characters of work and no allocation.
pub(super) fn json_exceeds(value: &Value, limit: usize) -> bool {
    let mut counter = CharCounter { chars: 0, limit };
    // The only error the counter raises is "over the limit"; serializing a
    // `Value` cannot fail otherwise, and if it did, keeping it is the safe side.
    serde_json::to_writer(&mut counter, value).is_err() && counter.chars > limit
}

/// The shortest string taken for a binary payload: shorter ones (hashes,
/// ids, short tokens) are kept as they are.
const PAYLOAD_MIN_CHARS: usize = 256;

/// `value` as compact JSON for the model to read, with every binary payload
/// in it (a long base64 string, a `data:` URL) replaced by a short note of
/// its type and size: a server's structured result may carry the bytes of an
/// image (MCP servers mirror their content blocks there), and those are
/// never text for a model.
pub(crate) fn as_text(value: &Value) -> String {
    if !has_payload(value) {
        return value.to_string();
    }
    let mut value = value.clone();
    elide_payloads(&mut value, None);
    value.to_string()
}

fn has_payload(value: &Value) -> bool {
    match value {
        Value::String(s) => is_payload(s),
        Value::Array(items) => items.iter().any(has_payload),
        Value::Object(map) => map.values().any(has_payload),
        _ => false,
    }
}

/// Replace the payloads under `value`; `mime` is the `mimeType` beside it.
fn elide_payloads(value: &mut Value, mime: Option<&str>) {
    match value {
        Value::String(s) if is_payload(s) => *s = payload_note(s, mime),
        Value::Array(items) => items.iter_mut().for_each(|item| elide_payloads(item, None)),
        Value::Object(map) => {
            let mime = ["mimeType", "mime_type", "contentType"]
                .iter()
                .find_map(|key| map.get(*key).and_then(Value::as_str))
                .map(str::to_owned);
            for item in map.values_mut() {
                elide_payloads(item, mime.as_deref());
            }
        }
        _ => {}
    }
}

/// Whether `s` is binary data written as text: a `data:` URL in base64, or a
/// long run of the base64 alphabet alone (with the line breaks some
/// encoders put in).
fn is_payload(s: &str) -> bool {
    if s.len() < PAYLOAD_MIN_CHARS {
        return false;
    }
    if s.starts_with("data:") && s.contains(";base64,") {
        return true;
    }
    s.bytes().all(|b| {
        b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_' | b'\r' | b'\n')
    })
}

/// What the model reads instead of a payload.
fn payload_note(s: &str, mime: Option<&str>) -> String {
    let (mime, data) = match s
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    {
        Some((url_mime, data)) => (Some(url_mime).filter(|m| !m.is_empty()).or(mime), data),
        None => (mime, s),
    };
    let encoded = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let bytes = encoded / 4 * 3;
    format!(
        "[{} data, {bytes} bytes, not shown]",
        mime.unwrap_or("binary")
    )
}

/// A sink that counts UTF-8 characters and refuses to go past a limit.
struct CharCounter {
    chars: usize,
    limit: usize,
}

impl io::Write for CharCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Every byte except a continuation byte (0b10xx_xxxx) starts a character.
        self.chars += buf.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        if self.chars > self.limit {
            Err(io::Error::other("over the limit"))
        } else {
            Ok(buf.len())
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_at_the_limit_is_not_over_it() {
        let value = json!({"a": "é"}); // {"a":"é"} is 9 characters, 10 bytes
        assert!(!json_exceeds(&value, 9));
        assert!(json_exceeds(&value, 8));
    }

    #[test]
    fn binary_payloads_never_reach_the_text() {
        let png = "iVBORw0KGgo".repeat(100);
        let value = json!({
            "content": [{"type": "image", "data": png, "mimeType": "image/png"}],
            "url": format!("data:image/gif;base64,{png}"),
            "blob": format!("{}\n{}", "QUJD".repeat(40), "QUJD".repeat(40)),
            "hash": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "prose": "a sentence ".repeat(100),
        });
        let text = as_text(&value);
        assert!(!text.contains("iVBOR") && !text.contains("QUJD"), "{text}");
        assert!(
            text.contains(r#""data":"[image/png data, 825 bytes, not shown]""#),
            "{text}"
        );
        assert!(
            text.contains(r#""url":"[image/gif data, 825 bytes, not shown]""#),
            "{text}"
        );
        assert!(
            text.contains(r#""blob":"[binary data, 240 bytes, not shown]""#),
            "{text}"
        );
        // Short tokens and prose stay.
        assert!(text.contains("e3b0c442") && text.contains("a sentence a sentence"));
        // Without payloads the text is the JSON itself.
        assert_eq!(as_text(&json!({"a": 1})), r#"{"a":1}"#);
    }

    #[test]
    fn huge_values_are_measured_without_serializing_them_whole() {
        let value = json!({"rows": vec!["漢字"; 1_000_000]});
        assert!(json_exceeds(&value, 16_000));
    }
}
