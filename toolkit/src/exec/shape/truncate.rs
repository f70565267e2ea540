//! Cutting text to a character budget: keep the head and the tail, and say
//! in between how much was removed.
//!
//! Both ends matter: the head of a file or listing says what it is, the tail
//! of a command's output holds the error and the exit status. Every cut lands
//! on a character boundary, and moves to a line end when one is close, so the
//! model never sees half a character and rarely half a line.
//!
//! The walks are bounded by the budget, not by the text: finding the cut
//! points visits only the characters that are kept, from each end, so a
//! 10 MB result costs one counting pass and two short walks.

use super::count::{count_chars, count_newlines, quantity};

/// How far from a cut we look for a line end, at most, in characters. Close
/// enough that snapping to it loses little; far enough to find the end of an
/// ordinary source or log line.
const LINE_SNAP_CHARS: usize = 200;

/// Text cut to a budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Truncated {
    /// Head, marker and tail.
    pub text: String,
    /// Characters of the original that were kept (the marker not included).
    pub kept_chars: usize,
}

/// Cut `text` (`total_chars` characters long) so that head, marker and tail
/// together are at most `max_chars` characters; `head_fraction` of what the
/// marker leaves goes to the head.
///
/// When `max_chars` cannot even hold the marker, the head alone is kept: the
/// limit is a promise to the caller's context window and wins over the marker.
pub(super) fn truncate(
    text: &str,
    total_chars: usize,
    max_chars: usize,
    head_fraction: f64,
) -> Truncated {
    if total_chars <= max_chars {
        return Truncated {
            text: text.to_owned(),
            kept_chars: total_chars,
        };
    }
    // The marker's numbers are not known until the cuts are, and the cuts
    // depend on the marker's length; the largest possible numbers give a
    // length that is never exceeded (+1 for a plural `s` the totals may lack).
    let marker_room = count_chars(&marker(total_chars, count_newlines(text))) + 1;
    let Some(budget) = max_chars.checked_sub(marker_room) else {
        let (end, kept_chars) = head_cut(text, max_chars);
        return Truncated {
            text: text[..end].to_owned(),
            kept_chars,
        };
    };
    let head_budget = split_budget(budget, head_fraction);
    let (head_end, head_chars) = head_cut(text, head_budget);
    let (tail_start, tail_chars) = tail_cut(text, budget - head_budget);
    // Head and tail cannot overlap: together they hold fewer characters than
    // the text has. The `max` only keeps slicing infallible.
    let tail_start = tail_start.max(head_end);
    let removed = &text[head_end..tail_start];
    let marker = marker(
        total_chars - head_chars - tail_chars,
        count_newlines(removed),
    );
    let mut out = String::with_capacity(head_end + marker.len() + (text.len() - tail_start));
    out.push_str(&text[..head_end]);
    out.push_str(&marker);
    out.push_str(&text[tail_start..]);
    Truncated {
        text: out,
        kept_chars: head_chars + tail_chars,
    }
}

/// The visible note where text was removed. Line counts are left out when no
/// line break was removed, as in one long line of minified JSON.
fn marker(removed_chars: usize, removed_lines: usize) -> String {
    let chars = quantity(removed_chars, "character");
    if removed_lines == 0 {
        format!("\n\n[... {chars} removed ...]\n\n")
    } else {
        let lines = quantity(removed_lines, "line");
        format!("\n\n[... {chars} ({lines}) removed ...]\n\n")
    }
}

/// The head's share of `budget`; a fraction outside 0..=1 (or NaN) is clamped
/// rather than trusted, since it comes from configuration.
fn split_budget(budget: usize, head_fraction: f64) -> usize {
    let fraction = if head_fraction.is_nan() {
        0.5
    } else {
        head_fraction.clamp(0.0, 1.0)
    };
    // `as` saturates, and the product is within 0..=budget.
    ((budget as f64 * fraction).round() as usize).min(budget)
}

/// Where to end a head of at most `chars` characters: returns the byte index
/// after the head and how many characters it holds. The end moves back to
/// just after a newline when one is within reach.
pub(super) fn head_cut(text: &str, chars: usize) -> (usize, usize) {
    let Some((end, _)) = text.char_indices().nth(chars) else {
        return (text.len(), count_chars(text));
    };
    let head = &text[..end];
    let snap = (chars / 4).min(LINE_SNAP_CHARS);
    if snap == 0 || head.ends_with('\n') || text[end..].starts_with('\n') {
        return (end, chars);
    }
    let window_start = head
        .char_indices()
        .rev()
        .nth(snap - 1)
        .map_or(0, |(i, _)| i);
    match head[window_start..].rfind('\n') {
        Some(newline) => {
            let new_end = window_start + newline + 1;
            (new_end, chars - count_chars(&text[new_end..end]))
        }
        None => (end, chars),
    }
}

/// Where to start a tail of at most `chars` characters: returns the byte index
/// of its start and how many characters it holds. The start moves forward to
/// just after a newline when one is within reach.
fn tail_cut(text: &str, chars: usize) -> (usize, usize) {
    if chars == 0 {
        return (text.len(), 0);
    }
    let Some((start, _)) = text.char_indices().rev().nth(chars - 1) else {
        return (0, count_chars(text));
    };
    let snap = (chars / 4).min(LINE_SNAP_CHARS);
    if snap == 0 || text[..start].ends_with('\n') {
        return (start, chars);
    }
    let tail = &text[start..];
    let window_end = tail.char_indices().nth(snap).map_or(tail.len(), |(i, _)| i);
    match tail[..window_end].find('\n') {
        Some(newline) => {
            let new_start = start + newline + 1;
            (new_start, chars - count_chars(&text[start..new_start]))
        }
        None => (start, chars),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, max_chars: usize) -> Truncated {
        truncate(text, count_chars(text), max_chars, 0.6)
    }

    /// Splits a truncated text into head, removed characters, removed lines, tail.
    fn parse(text: &str) -> (&str, usize, Option<usize>, &str) {
        let (head, rest) = text.split_once("\n\n[... ").expect("marker start");
        let (inside, tail) = rest.split_once(" removed ...]\n\n").expect("marker end");
        let number = |s: &str| s.replace(',', "").parse::<usize>().expect("a number");
        let (chars, lines) = match inside.split_once(" (") {
            Some((chars, lines)) => (chars, Some(lines.trim_end_matches(')'))),
            None => (inside, None),
        };
        let chars = number(chars.split(' ').next().unwrap());
        let lines = lines.map(|l| number(l.split(' ').next().unwrap()));
        (head, chars, lines, tail)
    }

    #[test]
    fn text_within_the_limit_is_unchanged() {
        let text = "x".repeat(100);
        assert_eq!(cut(&text, 100).text, text);
        assert_eq!(cut(&text, 100).kept_chars, 100);
    }

    #[test]
    fn ten_megabytes_of_multibyte_text_keeps_head_and_tail_within_the_limit() {
        let unit = "aé漢🙂\n";
        let text = unit.repeat(10 * 1024 * 1024 / unit.len());
        let total = count_chars(&text);
        let max = 16_000;
        let out = truncate(&text, total, max, 0.6);

        assert!(count_chars(&out.text) <= max);
        assert!(count_chars(&out.text) > max - 300, "the budget is used");
        let (head, removed_chars, removed_lines, tail) = parse(&out.text);
        assert!(text.starts_with(head) && !head.is_empty());
        assert!(text.ends_with(tail) && !tail.is_empty());
        let kept = count_chars(head) + count_chars(tail);
        assert_eq!(kept, out.kept_chars);
        assert_eq!(removed_chars, total - kept);
        let middle = &text[head.len()..text.len() - tail.len()];
        assert_eq!(removed_lines, Some(count_newlines(middle)));
        // Cuts land on line ends here, since every line is short.
        assert!(head.ends_with('\n'));
        assert!(tail.starts_with('a'));
        // The head gets about 60% of what the marker leaves.
        let share = count_chars(head) as f64 / kept as f64;
        assert!((0.55..0.65).contains(&share), "{share}");
    }

    #[test]
    fn cuts_never_split_a_character() {
        let text = "🙂".repeat(1_000);
        for max in [100, 101, 333, 999] {
            let out = cut(&text, max);
            assert!(count_chars(&out.text) <= max);
            let (head, _, lines, tail) = parse(&out.text);
            assert!(head.chars().all(|c| c == '🙂'));
            assert!(tail.chars().all(|c| c == '🙂'));
            assert_eq!(lines, None, "no line was removed");
        }
    }

    #[test]
    fn a_cut_moves_to_a_nearby_line_end() {
        let line = format!("{}\n", "word ".repeat(7)); // 36 characters
        let text = line.repeat(100);
        let out = cut(&text, 1_000);
        let (head, _, _, tail) = parse(&out.text);
        assert!(head.ends_with('\n'));
        assert!(tail.starts_with("word"));
    }

    #[test]
    fn a_cut_stays_put_when_no_line_end_is_near() {
        let text = format!("{}\n{}", "a".repeat(5_000), "b".repeat(5_000));
        let out = cut(&text, 1_000);
        let (head, _, lines, tail) = parse(&out.text);
        assert!(head.chars().all(|c| c == 'a'));
        assert!(tail.chars().all(|c| c == 'b'));
        assert_eq!(lines, Some(1));
        assert_eq!(count_chars(head) + count_chars(tail), out.kept_chars);
    }

    #[test]
    fn a_limit_too_small_for_the_marker_keeps_only_the_head() {
        let out = cut(&"x".repeat(1_000), 10);
        assert_eq!(out.text, "x".repeat(10));
        assert_eq!(out.kept_chars, 10);
    }

    #[test]
    fn an_odd_head_fraction_is_clamped() {
        let text = "x".repeat(1_000);
        for fraction in [f64::NAN, -1.0, 2.0, f64::INFINITY] {
            let out = truncate(&text, 1_000, 200, fraction);
            assert!(count_chars(&out.text) <= 200);
        }
        let all_tail = truncate(&text, 1_000, 200, 0.0);
        assert!(all_tail.text.starts_with("\n\n[..."));
        let all_head = truncate(&text, 1_000, 200, 1.0);
        assert!(all_head.text.ends_with("...]\n\n"));
    }

    #[test]
    fn head_cut_counts_what_it_keeps() {
        assert_eq!(head_cut("aé漢", 2), (3, 2));
        assert_eq!(head_cut("aé漢", 10), (6, 3));
        assert_eq!(head_cut("", 0), (0, 0));
        assert_eq!(tail_cut("aé漢", 1), (3, 1));
        assert_eq!(tail_cut("aé漢", 10), (0, 3));
    }
}
