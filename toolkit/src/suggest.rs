//! "Did you mean" for names a model got almost right: parameters, tools.
//!
//! Models mostly miss a name by its spelling convention (`readFile` for
//! `read_file`) or by a typo (`pth` for `path`). The first kind is matched
//! exactly after normalising; the second by a small edit distance. A
//! suggestion is only made when exactly one candidate is that close: a wrong
//! guess costs the model more than no guess.

/// The one candidate `input` most likely meant, if exactly one is close.
///
/// Returns `None` when `input` is itself a candidate, when nothing is close,
/// or when two candidates are equally close.
pub(crate) fn did_you_mean<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let wanted = normalize(input);
    if wanted.is_empty() || wanted.len() > MAX_NAME {
        return None;
    }
    // Typos scale with length: one slip in a short name, at most three in any.
    let threshold = (wanted.len() / 3).clamp(1, 3);

    let mut same_shape = Pick::None;
    let mut nearest = Pick::None;
    let mut nearest_distance = usize::MAX;
    for candidate in candidates {
        if candidate == input {
            return None;
        }
        // Past four bytes a character, longer than any name suggested.
        if candidate.len() > 4 * MAX_NAME {
            continue;
        }
        let shape = normalize(candidate);
        if shape == wanted {
            same_shape = same_shape.with(candidate);
            continue;
        }
        // No fewer edits than the lengths differ by: not worth measuring.
        if shape.len().abs_diff(wanted.len()) > threshold {
            continue;
        }
        let distance = edit_distance(&wanted, &shape);
        if distance > threshold {
            continue;
        }
        if distance < nearest_distance {
            nearest_distance = distance;
            nearest = Pick::One(candidate);
        } else if distance == nearest_distance {
            nearest = nearest.with(candidate);
        }
    }
    match same_shape {
        Pick::One(name) => Some(name),
        Pick::Ambiguous => None,
        Pick::None => match nearest {
            Pick::One(name) => Some(name),
            Pick::None | Pick::Ambiguous => None,
        },
    }
}

/// The longest name, in characters once normalised, that is suggested or
/// suggested for. A typo is a slip in a short name; and measuring costs the
/// product of two names' lengths, which a server's schema and its results
/// (both hostile, at worst) choose: a key of 20,000 characters against 20
/// names of 2,000 took 23 s.
const MAX_NAME: usize = 64;

/// How many candidates are equally good so far.
#[derive(Clone, Copy)]
enum Pick<'a> {
    None,
    One(&'a str),
    Ambiguous,
}

impl<'a> Pick<'a> {
    fn with(self, candidate: &'a str) -> Self {
        match self {
            Pick::None => Pick::One(candidate),
            // A name listed twice is still one name.
            Pick::One(name) if name == candidate => self,
            Pick::One(_) | Pick::Ambiguous => Pick::Ambiguous,
        }
    }
}

/// The name without its spelling convention: case, `_`, `-`, spaces, dots.
fn normalize(name: &str) -> Vec<char> {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' ' | '.') && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions
/// and swaps of neighbours each cost one, the usual shapes of a typo.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    // Three rows: the swap rule looks two rows back.
    let mut before = vec![0; width];
    let mut previous: Vec<usize> = (0..width).collect();
    let mut current = vec![0; width];
    for (i, &ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && a.get(i - 1) == Some(&cb) && b.get(j - 1) == Some(&ca) {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: [&str; 4] = ["read_file", "write_file", "list_dir", "exec"];

    #[test]
    fn spelling_conventions_match_after_normalising() {
        for input in [
            "readFile",
            "read-file",
            "READ_FILE",
            "read file",
            "Read.File",
            "ReadFile",
        ] {
            assert_eq!(did_you_mean(input, TOOLS), Some("read_file"), "{input}");
        }
    }

    #[test]
    fn small_typos_match_by_edit_distance() {
        assert_eq!(
            did_you_mean("pth", ["path", "offset", "limit"]),
            Some("path")
        );
        assert_eq!(
            did_you_mean("timout", ["timeout", "command"]),
            Some("timeout")
        );
        assert_eq!(did_you_mean("raed_file", TOOLS), Some("read_file"));
        assert_eq!(did_you_mean("exce", TOOLS), Some("exec"));
    }

    #[test]
    fn swapped_neighbours_cost_one_edit() {
        assert_eq!(edit_distance(&normalize("ab"), &normalize("ba")), 1);
        assert_eq!(
            edit_distance(&normalize("kitten"), &normalize("sitting")),
            3
        );
        assert_eq!(edit_distance(&[], &normalize("abc")), 3);
    }

    #[test]
    fn long_names_are_not_measured() {
        let name = "a".repeat(MAX_NAME);
        let near = format!("{}b", "a".repeat(MAX_NAME - 1));
        assert_eq!(did_you_mean(&near, [name.as_str()]), Some(name.as_str()));
        // One character longer, either side: no suggestion.
        let longer = format!("{name}a");
        assert_eq!(did_you_mean(&longer, [name.as_str()]), None);
        assert_eq!(did_you_mean(&format!("{near}a"), [longer.as_str()]), None);
        // Only the shape can match beyond the length difference.
        assert_eq!(did_you_mean("abc", ["abcdefg", "xyz"]), None);
        assert_eq!(
            did_you_mean("read-file", ["readFile", "r"]),
            Some("readFile")
        );
    }

    #[test]
    fn far_names_get_no_suggestion() {
        assert_eq!(did_you_mean("delete_everything", TOOLS), None);
        assert_eq!(did_you_mean("x", ["path", "offset"]), None);
    }

    #[test]
    fn the_threshold_grows_with_length_but_stays_small() {
        // Three letters allow one edit, not two.
        assert_eq!(did_you_mean("pat", ["path"]), Some("path"));
        assert_eq!(did_you_mean("pa", ["path"]), None);
        // Even long names allow at most three.
        assert_eq!(
            did_you_mean("a_very_long_parameter_nam", ["a_very_long_parameter_name"]),
            Some("a_very_long_parameter_name")
        );
        assert_eq!(
            did_you_mean("a_very_long_paramxxxx_name", ["a_very_long_parameter_name"]),
            None
        );
    }

    #[test]
    fn ties_are_ambiguous() {
        assert_eq!(did_you_mean("cat", ["bat", "hat"]), None);
        assert_eq!(did_you_mean("readfile", ["read_file", "read-file"]), None);
    }

    #[test]
    fn a_normalised_match_beats_a_typo() {
        assert_eq!(
            did_you_mean("readFile", ["read_file", "readfilx"]),
            Some("read_file")
        );
    }

    #[test]
    fn an_exact_name_needs_no_suggestion() {
        assert_eq!(did_you_mean("read_file", TOOLS), None);
    }

    #[test]
    fn a_name_listed_twice_is_not_a_tie() {
        assert_eq!(did_you_mean("pth", ["path", "path"]), Some("path"));
    }

    #[test]
    fn empty_input_or_no_candidates_give_nothing() {
        assert_eq!(did_you_mean("", TOOLS), None);
        assert_eq!(did_you_mean("__", TOOLS), None);
        assert_eq!(did_you_mean("path", std::iter::empty()), None);
    }
}
