//! Measuring structured content without building its JSON text.

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
    fn huge_values_are_measured_without_serializing_them_whole() {
        let value = json!({"rows": vec!["漢字"; 1_000_000]});
        assert!(json_exceeds(&value, 16_000));
    }
}
