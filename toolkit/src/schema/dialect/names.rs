//! Tool names each provider accepts, and a deterministic rewrite into them.

use std::borrow::Cow;

use crate::schema::DefinitionFormat;

/// What a provider accepts as a tool name.
struct NameRule {
    max_len: usize,
    /// Characters allowed besides ASCII letters and digits.
    punctuation: &'static str,
    /// Gemini: the first character must be a letter or `_`.
    letter_or_underscore_first: bool,
}

impl NameRule {
    fn of(format: DefinitionFormat) -> Self {
        match format {
            // OpenAI: `^[a-zA-Z0-9_-]{1,64}$`. Anthropic documents the same
            // regex for client tools.
            DefinitionFormat::OpenAi
            | DefinitionFormat::OpenAiResponses
            | DefinitionFormat::OpenAiStrict
            | DefinitionFormat::Anthropic => NameRule {
                max_len: 64,
                punctuation: "_-",
                letter_or_underscore_first: false,
            },
            // Gemini: starts with a letter or `_`; then letters, digits,
            // `_`, `.`, `:`, `-`; at most 64 characters.
            DefinitionFormat::Gemini => NameRule {
                max_len: 64,
                punctuation: "_.:-",
                letter_or_underscore_first: true,
            },
            // MCP (2025-11-25): 1 to 128 of letters, digits, `_`, `-`, `.`.
            DefinitionFormat::Mcp => NameRule {
                max_len: 128,
                punctuation: "_-.",
                letter_or_underscore_first: false,
            },
        }
    }

    fn allows(&self, c: char) -> bool {
        c.is_ascii_alphanumeric() || self.punctuation.contains(c)
    }

    fn allows_first(&self, c: char) -> bool {
        !self.letter_or_underscore_first || c.is_ascii_alphabetic() || c == '_'
    }

    fn accepts(&self, name: &str) -> bool {
        name.chars().next().is_some_and(|c| self.allows_first(c))
            && name.len() <= self.max_len
            && name.chars().all(|c| self.allows(c))
    }
}

/// `name` made acceptable to the provider behind `format`, unchanged when it
/// already is.
///
/// Characters the provider rejects become `_`; a Gemini name that does not
/// start with a letter or `_` gets a leading `_`; a name still too long is cut
/// and ends with `_` and 8 hex digits of a hash of the whole original name,
/// so two long names that differ only at the end stay different. The same
/// input always gives the same output. Names that differ only in replaced
/// characters (`a.b` and `a_b` for OpenAI) can end up equal; registry names
/// (`[A-Za-z0-9_-]{1,64}`) only ever change for Gemini, and only when they
/// start with a digit or `-`.
///
/// | format | accepted |
/// | --- | --- |
/// | OpenAI (all three) | `^[a-zA-Z0-9_-]{1,64}$` |
/// | Anthropic | `^[a-zA-Z0-9_-]{1,64}$` |
/// | Gemini | `^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$` |
/// | MCP | `^[a-zA-Z0-9_.-]{1,128}$` |
pub(crate) fn sanitize_tool_name(name: &str, format: DefinitionFormat) -> Cow<'_, str> {
    let rule = NameRule::of(format);
    if rule.accepts(name) {
        return Cow::Borrowed(name);
    }
    let mut sanitized: String = name
        .chars()
        .map(|c| if rule.allows(c) { c } else { '_' })
        .collect();
    if !sanitized
        .chars()
        .next()
        .is_some_and(|c| rule.allows_first(c))
    {
        sanitized.insert(0, '_');
    }
    if sanitized.len() > rule.max_len {
        let suffix = format!("_{:08x}", fnv1a(name.as_bytes()));
        // Every character is ASCII by now, so any byte index is a boundary.
        sanitized.truncate(rule.max_len - suffix.len());
        sanitized.push_str(&suffix);
    }
    Cow::Owned(sanitized)
}

/// 32-bit FNV-1a: a hash that is the same on every platform and every Rust
/// release, unlike `std`'s `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [DefinitionFormat; 6] = [
        DefinitionFormat::OpenAi,
        DefinitionFormat::OpenAiResponses,
        DefinitionFormat::OpenAiStrict,
        DefinitionFormat::Anthropic,
        DefinitionFormat::Gemini,
        DefinitionFormat::Mcp,
    ];

    #[test]
    fn valid_names_are_borrowed_unchanged() {
        for format in ALL {
            assert!(matches!(
                sanitize_tool_name("read_file-2", format),
                Cow::Borrowed("read_file-2")
            ));
        }
    }

    #[test]
    fn gemini_names_start_with_a_letter_or_underscore() {
        assert_eq!(
            sanitize_tool_name("7zip", DefinitionFormat::Gemini),
            "_7zip"
        );
        assert_eq!(sanitize_tool_name("-x", DefinitionFormat::Gemini), "_-x");
        assert_eq!(sanitize_tool_name("7zip", DefinitionFormat::OpenAi), "7zip");
        assert_eq!(
            sanitize_tool_name("ns:tool.v1", DefinitionFormat::Gemini),
            "ns:tool.v1"
        );
    }

    #[test]
    fn rejected_characters_become_underscores() {
        assert_eq!(
            sanitize_tool_name("fs.read", DefinitionFormat::Anthropic),
            "fs_read"
        );
        assert_eq!(
            sanitize_tool_name("ns:tool", DefinitionFormat::Mcp),
            "ns_tool"
        );
        assert_eq!(
            sanitize_tool_name("héllo wörld", DefinitionFormat::OpenAi),
            "h_llo_w_rld"
        );
        assert_eq!(sanitize_tool_name("", DefinitionFormat::OpenAi), "_");
        assert_eq!(
            sanitize_tool_name("fs.read", DefinitionFormat::OpenAi),
            "fs_read"
        );
        assert_eq!(
            sanitize_tool_name("fs.read", DefinitionFormat::Mcp),
            "fs.read"
        );
        assert_eq!(
            sanitize_tool_name("2fa_code", DefinitionFormat::Gemini),
            "_2fa_code"
        );
    }

    #[test]
    fn long_names_are_cut_with_a_stable_hash_of_the_original() {
        let base = "a".repeat(70);
        let one = sanitize_tool_name(&format!("{base}_one"), DefinitionFormat::OpenAi).into_owned();
        let two = sanitize_tool_name(&format!("{base}_two"), DefinitionFormat::OpenAi).into_owned();
        assert_eq!(one.len(), 64);
        assert_eq!(two.len(), 64);
        assert_ne!(one, two);
        assert_eq!(
            one,
            sanitize_tool_name(&format!("{base}_one"), DefinitionFormat::OpenAi)
        );
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        let gemini = sanitize_tool_name(&"9".repeat(64), DefinitionFormat::Gemini).into_owned();
        assert_eq!(gemini.len(), 64);
        assert!(gemini.starts_with("_9"));
    }

    #[test]
    fn sanitized_names_are_accepted_by_their_rule() {
        let names = ["7zip", "a b", "x".repeat(200).as_str(), "-", "ok"].map(str::to_owned);
        for format in ALL {
            for name in &names {
                let sanitized = sanitize_tool_name(name, format);
                assert!(
                    NameRule::of(format).accepts(&sanitized),
                    "{sanitized} for {format:?}"
                );
            }
        }
    }
}
