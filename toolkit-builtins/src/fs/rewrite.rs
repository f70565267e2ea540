//! `edit_file`'s regex mode: a pattern from the model, compiled within
//! bounds, and a replacement whose group references are checked against it.
//!
//! The `regex` crate matches in time linear in the file's size (no
//! backtracking, so no pattern can make it blow up); what is left to bound is
//! the size of the compiled pattern (`a{1000}{1000}` asks for a million
//! states), its nesting (the parser recurses) and the memory of the lazy
//! DFA. A pattern past a bound is refused with what to change.

use std::ops::Range;

use regex::{Regex, RegexBuilder};

use super::blocking::Stop;

/// Bytes a compiled pattern may take.
pub const SIZE_LIMIT: usize = 1 << 20;

/// Bytes of cache the lazy DFA may use while matching.
const DFA_SIZE_LIMIT: usize = 4 << 20;

/// How deeply groups and repetitions may nest.
const NEST_LIMIT: u32 = 100;

/// Characters of a pattern quoted back in a message.
const QUOTE_CHARS: usize = 200;

/// Compile `pattern` within the bounds, or say what is wrong with it.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .nest_limit(NEST_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => format!(
                "the pattern `{}` is too large once compiled (more than {} KiB); simplify it: large counted repetitions such as {{1000}} and long alternations grow it",
                quote(pattern),
                SIZE_LIMIT / 1024
            ),
            e => format!(
                "`{}` is not a valid regular expression: {e}\nEscape special characters, or set regex=false to match old_text as written.",
                quote(pattern)
            ),
        })
}

/// Where `regex` matches in `content`, in order: at most `max + 1` matches
/// (the caller refuses more than `max`), `None` if the caller left.
pub fn find(regex: &Regex, content: &str, max: usize, stop: &Stop) -> Option<Vec<Range<usize>>> {
    let mut ranges = Vec::new();
    for found in regex.find_iter(content).take(max.saturating_add(1)) {
        if stop.is_set() {
            return None;
        }
        ranges.push(found.range());
    }
    Some(ranges)
}

/// The replacement text of the matches whose indices are in `chosen`
/// (ascending), with `$1`, `${name}` and `$$` expanded; `None` if the
/// caller left.
pub fn expand(
    regex: &Regex,
    content: &str,
    template: &str,
    chosen: &[usize],
    stop: &Stop,
) -> Option<Vec<String>> {
    let mut out = Vec::with_capacity(chosen.len());
    let mut wanted = chosen.iter().copied().peekable();
    // The same iteration as `find`'s, so match `i` here is match `i` there.
    for (index, captures) in regex.captures_iter(content).enumerate() {
        if stop.is_set() {
            return None;
        }
        let Some(&next) = wanted.peek() else { break };
        if index == next {
            let mut text = String::new();
            captures.expand(template, &mut text);
            out.push(text);
            wanted.next();
        }
    }
    Some(out)
}

/// Refuse a replacement that names a group the pattern does not have: the
/// `regex` crate would put nothing there, silently. `$1a` names a group
/// `1a` (as the crate reads it), so the message says to write `${1}a`.
pub fn check_template(regex: &Regex, template: &str) -> Result<(), String> {
    for name in references(template) {
        let exists = match name.parse::<usize>() {
            Ok(index) => index < regex.captures_len(),
            Err(_) => regex.capture_names().flatten().any(|n| n == name),
        };
        if exists {
            continue;
        }
        let digits = name.bytes().take_while(u8::is_ascii_digit).count();
        let hint = if digits > 0 && digits < name.len() {
            format!(
                " (`${name}` reads as a group named `{name}`; write `${{{}}}{}` for group {} followed by `{}`)",
                &name[..digits],
                &name[digits..],
                &name[..digits],
                &name[digits..]
            )
        } else {
            String::new()
        };
        let groups = regex.captures_len() - 1;
        let named: Vec<&str> = regex.capture_names().flatten().collect();
        let has = if named.is_empty() {
            format!("{groups} numbered group(s)")
        } else {
            format!("{groups} group(s), named {}", named.join(", "))
        };
        return Err(format!(
            "new_text refers to group `{name}`, which the pattern does not have{hint}; the pattern has {has} ($0 is the whole match). Write `$$` for a literal `$`."
        ));
    }
    Ok(())
}

/// The group names a replacement refers to, read as the `regex` crate
/// reads them: `$$` is a `$`; `${name}` names anything up to `}`; `$name`
/// takes the longest run of letters, digits and `_`; any other `$` is
/// literal.
fn references(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            rest = after;
        } else if let Some(braced) = rest.strip_prefix('{') {
            if let Some(end) = braced.find('}') {
                if end > 0 {
                    names.push(&braced[..end]);
                }
                rest = &braced[end + 1..];
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if end > 0 {
                names.push(&rest[..end]);
            }
            rest = &rest[end..];
        }
    }
    names
}

/// Why a pattern matched nothing, with what the model can try.
pub fn no_match(path: &str, content: &str, pattern: &str) -> String {
    let mut out = format!(
        "the pattern `{}` matches nothing in `{path}`.",
        quote(pattern)
    );
    let literal = content.matches(pattern).take(1000).count();
    if literal > 0 {
        out.push_str(&format!(
            " As plain text it occurs {literal} time(s): escape the regex characters in it (`\\.`, `\\(`, `\\[`, `\\*`...) or set regex=false."
        ));
    }
    // Flags set at the start, as in `(?m)` or `(?ms:...)`.
    let flags = pattern
        .strip_prefix("(?")
        .and_then(|rest| rest.find([')', ':']).map(|end| &rest[..end]))
        .unwrap_or("");
    if (pattern.contains('^') || pattern.contains('$')) && !flags.contains('m') {
        out.push_str(" `^` and `$` match only at the start and end of the file; start the pattern with (?m) to match them at every line.");
    }
    if pattern.contains('.') && !flags.contains('s') && content.contains('\n') {
        out.push_str(" `.` does not match a line break; start the pattern with (?s) to let it.");
    }
    if content.contains("\r\n") && (pattern.contains("\\n") || pattern.contains('\n')) {
        out.push_str(" The file ends its lines with \\r\\n; match them with \\r?\\n.");
    }
    out.push_str(" read_file shows the current content.");
    out
}

/// `pattern`, cut for quoting in a message.
fn quote(pattern: &str) -> String {
    match pattern.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &pattern[..cut]),
        None => pattern.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_read_as_the_regex_crate_reads_them() {
        assert_eq!(
            references("a$1 ${name}x $$2 $a_b-c ${} $"),
            vec!["1", "name", "a_b"]
        );
        assert_eq!(references("${unclosed"), Vec::<&str>::new());
        assert_eq!(references("$1a"), vec!["1a"]);
    }

    #[test]
    fn unknown_groups_are_refused_with_the_fix() {
        let regex = compile(r"(\w+)=(?P<value>\d+)").unwrap();
        check_template(&regex, "$0 ${1} $2 ${value} $value $$9").unwrap();
        let err = check_template(&regex, "$3").unwrap_err();
        assert!(err.contains("group `3`"), "{err}");
        assert!(err.contains("2 group(s), named value"), "{err}");
        let err = check_template(&regex, "$1_suffix").unwrap_err();
        assert!(err.contains("write `${1}_suffix`"), "{err}");
    }

    #[test]
    fn the_compiled_size_is_bounded() {
        let err = compile("(a{1000}){1000}").unwrap_err();
        assert!(err.contains("too large once compiled"), "{err}");
        let err = compile("(unclosed").unwrap_err();
        assert!(err.contains("not a valid regular expression"), "{err}");
        let deep = format!("{}a{}", "(".repeat(500), ")".repeat(500));
        assert!(compile(&deep).is_err());
    }

    #[test]
    fn matches_and_expansions_line_up() {
        let regex = compile(r"(?m)^(\w+)$").unwrap();
        let content = "one\ntwo\nthree\n";
        let stop = Stop::default();
        let ranges = find(&regex, content, 10, &stop).unwrap();
        assert_eq!(ranges, vec![0..3, 4..7, 8..13]);
        let texts = expand(&regex, content, "<$1>", &[0, 2], &stop).unwrap();
        assert_eq!(texts, vec!["<one>", "<three>"]);
        // At most max + 1 are collected.
        assert_eq!(find(&regex, content, 1, &stop).unwrap().len(), 2);
    }

    #[test]
    fn a_pattern_that_matches_nothing_is_explained() {
        let why = no_match("a.rs", "f(x)\nline two\n", "f(x)");
        assert!(why.contains("As plain text it occurs 1 time(s)"), "{why}");
        let why = no_match("a.rs", "a\r\nb\r\n", "^b$\\n");
        assert!(why.contains("(?m)"), "{why}");
        assert!(why.contains("\\r?\\n"), "{why}");
        let why = no_match("a.rs", "a\nb\n", "(?m)a.b");
        assert!(why.contains("(?s)"), "{why}");
        assert!(!why.contains("(?m) to"), "{why}");
    }
}
