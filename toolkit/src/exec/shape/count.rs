//! Measuring text the way the model's context is budgeted: in characters and
//! lines, with numbers printed the way people read them.

/// Characters (Unicode scalar values), not bytes: limits are about what the
/// model reads, and a byte limit would cut CJK text to a third of the intent.
pub(super) fn count_chars(text: &str) -> usize {
    text.chars().count()
}

/// Line breaks in `text`; a byte scan is exact because `\n` never occurs inside
/// a multi-byte UTF-8 sequence.
pub(super) fn count_newlines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

/// Lines as an editor numbers them: a final line without `\n` still counts.
pub(super) fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        count_newlines(text) + usize::from(!text.ends_with('\n'))
    }
}

/// `1234567` as `1,234,567`: models and people misread long digit runs.
pub(super) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `1 line`, `2 lines`, `1,000 lines`.
pub(super) fn quantity(n: usize, noun: &str) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{} {noun}{plural}", thousands(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_are_counted_not_bytes() {
        assert_eq!(count_chars("aé漢🙂"), 4);
    }

    #[test]
    fn a_last_line_without_newline_still_counts() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_newlines("a\nb\n"), 2);
    }

    #[test]
    fn thousands_are_separated_by_commas() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(
            thousands(usize::MAX).replace(',', ""),
            usize::MAX.to_string()
        );
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(quantity(1, "line"), "1 line");
        assert_eq!(quantity(0, "line"), "0 lines");
        assert_eq!(quantity(12_345, "character"), "12,345 characters");
    }
}
