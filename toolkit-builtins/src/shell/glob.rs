//! One component of a shell glob (`*`, `?`, `[…]`, `[!…]`), matched as the
//! shells match it against a file name: a name that bash or dash may
//! produce is a match.
//!
//! Written by hand rather than translated to a regular expression: the
//! guard matches globs from the model's command, so a translation would
//! compile a new automaton for each one on every call, and would follow
//! the regex's rules where the shell's differ (`*` and `?` match a newline
//! in a file name; `[[:alpha:]]` is a class of letters). Where the shell's
//! rule is unclear or invalid, the matcher matches more rather than less:
//! every use of it is a guard, and a name matched by mistake is checked or
//! refused, never let through.
//!
//! Matching goes back only to the last `*` (the usual two-pointer match),
//! so it takes at most the name's length times the pattern's steps: no
//! pattern makes it backtrack exponentially.

/// Past this many characters a component is not read: it is taken to match
/// every name. A file name has at most 255 bytes, and the bound keeps a
/// hostile pattern's parsing and matching small.
const MAX_CHARS: usize = 256;

/// A parsed glob component.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    /// Each shell's reading of the pattern (bash takes `[^…]` as negation
    /// and reads `[.x.]` and `[=x=]` inside a class, dash takes `^`, `[.`
    /// and `[=` as members): a name matched by either may be produced.
    /// `None`: too long to read, matches every name.
    readings: Option<Vec<Reading>>,
}

/// One shell's reading, ready to match names by characters and by bytes.
#[derive(Debug, Clone)]
struct Reading {
    chars: Vec<Part>,
    /// The same parts with each literal written in several bytes split
    /// into those bytes (dash compares bytes).
    bytes: Vec<Part>,
    /// Whether every literal is ASCII: then an ASCII name's bytes are its
    /// characters, and one match answers for both.
    ascii: bool,
}

impl Reading {
    fn new(chars: Vec<Part>) -> Self {
        let bytes = chars
            .iter()
            .flat_map(|part| match part {
                Part::Literal(c) if *c >= 0x80 => char::from_u32(*c)
                    .map(|c| c.to_string().into_bytes())
                    .unwrap_or_default()
                    .into_iter()
                    .map(|b| Part::Literal(u32::from(b)))
                    .collect(),
                other => vec![other.clone()],
            })
            .collect();
        let ascii = chars
            .iter()
            .all(|part| !matches!(part, Part::Literal(c) if *c >= 0x80));
        Self {
            chars,
            bytes,
            ascii,
        }
    }

    /// Whether this reading may match all of `name`.
    fn matches(&self, name: &str) -> bool {
        let chars: Vec<u32> = name.chars().map(u32::from).collect();
        if matches_symbols(&self.chars, &chars, false) {
            return true;
        }
        if self.ascii && name.is_ascii() {
            return false;
        }
        let bytes: Vec<u32> = name.bytes().map(u32::from).collect();
        matches_symbols(&self.bytes, &bytes, true)
    }
}

#[derive(Debug, Clone)]
enum Part {
    /// This character (or, matching bytes, this byte).
    Literal(u32),
    /// `?`: any one character.
    One,
    /// `*`: any run of characters, none included.
    Any,
    /// `[…]`: one character in (or, negated, not in) the class.
    Class(Class),
}

#[derive(Debug, Clone)]
struct Class {
    negated: bool,
    /// Members the shells agree on.
    sure: Vec<Item>,
    /// Whether the class holds a member read differently by different
    /// shells or not read at all (`[[:nonsense:]]`, `[[.a.]]`, `[[=e=]]`, a
    /// `[:` never closed): it may match any character, and excludes none
    /// when the class is negated.
    uncertain: bool,
}

#[derive(Debug, Clone)]
enum Item {
    /// A character, or a range of them (`a-z`); a reversed range (`z-a`)
    /// matches nothing.
    Range(char, char),
    /// A named class, `[:alpha:]`.
    Named(Named),
}

#[derive(Debug, Clone, Copy)]
enum Named {
    Alnum,
    Alpha,
    Blank,
    Cntrl,
    Digit,
    Graph,
    Lower,
    Print,
    Punct,
    Space,
    Upper,
    Xdigit,
}

impl Named {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "alnum" => Self::Alnum,
            "alpha" => Self::Alpha,
            "blank" => Self::Blank,
            "cntrl" => Self::Cntrl,
            "digit" => Self::Digit,
            "graph" => Self::Graph,
            "lower" => Self::Lower,
            "print" => Self::Print,
            "punct" => Self::Punct,
            "space" => Self::Space,
            "upper" => Self::Upper,
            "xdigit" => Self::Xdigit,
            _ => return None,
        })
    }

    fn contains(self, c: char) -> bool {
        match self {
            Self::Alnum => c.is_alphanumeric(),
            Self::Alpha => c.is_alphabetic(),
            Self::Blank => c == ' ' || c == '\t',
            Self::Cntrl => c.is_control(),
            Self::Digit => c.is_ascii_digit(),
            Self::Graph => !c.is_control() && !c.is_whitespace(),
            Self::Lower => c.is_lowercase(),
            Self::Print => !c.is_control(),
            Self::Punct => !c.is_control() && !c.is_whitespace() && !c.is_alphanumeric(),
            Self::Space => c.is_whitespace(),
            Self::Upper => c.is_uppercase(),
            Self::Xdigit => c.is_ascii_hexdigit(),
        }
    }
}

impl Item {
    fn contains(&self, c: char) -> bool {
        match self {
            Self::Range(low, high) => (*low..=*high).contains(&c),
            Self::Named(named) => named.contains(c),
        }
    }
}

impl Class {
    /// Whether the class may match `symbol`: a character, or with `bytes`
    /// a byte of the name's UTF-8.
    fn may_match(&self, symbol: u32, bytes: bool) -> bool {
        // One byte of a character written in several: which member it
        // stands for depends on the shell, so it may match.
        if bytes && symbol >= 0x80 {
            return true;
        }
        let Some(c) = char::from_u32(symbol) else {
            return true;
        };
        let in_sure = self.sure.iter().any(|item| item.contains(c));
        if self.negated {
            !in_sure
        } else {
            in_sure || self.uncertain
        }
    }
}

impl Part {
    fn may_match(&self, symbol: u32, bytes: bool) -> bool {
        match self {
            Self::Literal(literal) => *literal == symbol,
            Self::One | Self::Any => true,
            Self::Class(class) => class.may_match(symbol, bytes),
        }
    }
}

impl Glob {
    /// Parse one component (no `/`). A backslash makes the next character
    /// literal, inside a class too (a last backslash stands for itself); a
    /// `[` with no closing `]` is a literal.
    pub(crate) fn new(component: &str) -> Self {
        let chars: Vec<char> = component.chars().collect();
        if chars.len() > MAX_CHARS {
            return Self { readings: None };
        }
        let mut readings = vec![Reading::new(parse(&chars, Shell::Bash))];
        if component.contains('[') {
            readings.push(Reading::new(parse(&chars, Shell::Dash)));
        }
        Self {
            readings: Some(readings),
        }
    }

    /// Whether a shell may match the whole of `name`: as characters (bash),
    /// or as bytes (dash, where `??` matches one two-byte character).
    pub(crate) fn matches(&self, name: &str) -> bool {
        let Some(readings) = &self.readings else {
            return true;
        };
        readings.iter().any(|reading| reading.matches(name))
    }
}

/// Whether `parts` may match all of `name`. Goes back only to the last `*`
/// (the usual two-pointer match), so it takes at most the name's length
/// times the pattern's steps.
fn matches_symbols(parts: &[Part], name: &[u32], bytes: bool) -> bool {
    let (mut p, mut n) = (0, 0);
    // Where to go back to: the part after the last `*`, and the next
    // symbol that star will take in.
    let mut back: Option<(usize, usize)> = None;
    while n < name.len() {
        match parts.get(p) {
            Some(Part::Any) => {
                back = Some((p + 1, n));
                p += 1;
            }
            Some(part) if part.may_match(name[n], bytes) => {
                p += 1;
                n += 1;
            }
            _ => match back {
                Some((after_star, taken)) => {
                    p = after_star;
                    n = taken + 1;
                    back = Some((after_star, taken + 1));
                }
                None => return false,
            },
        }
    }
    parts[p..].iter().all(|part| matches!(part, Part::Any))
}

/// The bracket expression `[x…]` at the start of `rest` (which follows a
/// `[`), with `kind` the character after its `[`: its length up to and
/// with the closing `]`, or `None` if it has none before the class's own
/// `]` could be reached. Looks only up to the first `]`, so each costs
/// its own length.
fn bracket_expression(rest: &[char], kind: char) -> Option<usize> {
    // The closing `kind` must be past the opening one: `[:]` is not one.
    let close = rest.iter().skip(3).position(|&c| c == ']')? + 3;
    (rest[close - 1] == kind).then_some(close + 1)
}

/// Whose reading of a class.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shell {
    /// `[^…]` negated as `[!…]` is; `[.x.]` and `[=x=]` read.
    Bash,
    /// `^`, and the `[` of `[.` and `[=`, are members.
    Dash,
}

/// One shell's reading of a component's characters.
fn parse(chars: &[char], shell: Shell) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        at += 1;
        match c {
            '\\' => {
                parts.push(Part::Literal(u32::from(
                    chars.get(at).copied().unwrap_or('\\'),
                )));
                at += 1;
            }
            '*' => {
                if !matches!(parts.last(), Some(Part::Any)) {
                    parts.push(Part::Any);
                }
            }
            '?' => parts.push(Part::One),
            '[' => match parse_class(&chars[at..], shell) {
                Some((class, used)) => {
                    parts.push(Part::Class(class));
                    at += used;
                }
                None => parts.push(Part::Literal(u32::from('['))),
            },
            other => parts.push(Part::Literal(u32::from(other))),
        }
    }
    parts
}

/// The class whose text follows a `[` (`rest`), and how many characters it
/// took, up to its `]`; `None` if it is never closed.
fn parse_class(rest: &[char], shell: Shell) -> Option<(Class, usize)> {
    let mut at = 0;
    let negated = match rest.first() {
        Some('!') => true,
        Some('^') => shell == Shell::Bash,
        _ => false,
    };
    if negated {
        at += 1;
    }
    let mut class = Class {
        negated,
        sure: Vec::new(),
        uncertain: false,
    };
    let mut first = true;
    loop {
        let c = *rest.get(at)?;
        at += 1;
        if c == ']' && !first {
            return Some((class, at));
        }
        first = false;
        let low = match c {
            // `[:name:]`, `[.x.]`, `[=x=]`.
            '[' if rest.get(at) == Some(&':')
                || (shell == Shell::Bash && matches!(rest.get(at), Some('.' | '='))) =>
            {
                let kind = rest[at];
                let read = bracket_expression(&rest[at - 1..], kind).map(|length| {
                    let inner: String = rest[at + 1..at - 1 + length - 2].iter().collect();
                    (length, Named::parse(&inner).filter(|_| kind == ':'))
                });
                match (read, shell) {
                    (Some((length, Some(named))), _) => {
                        class.sure.push(Item::Named(named));
                        at += length - 1;
                        continue;
                    }
                    // bash: a name it does not know, a collating symbol or
                    // an equivalence class; or a `[:` never closed.
                    (Some((length, None)), Shell::Bash) => {
                        class.uncertain = true;
                        at += length - 1;
                        continue;
                    }
                    (None, Shell::Bash) => {
                        class.uncertain = true;
                        continue;
                    }
                    // dash reads what it does not know as members.
                    (_, Shell::Dash) => '[',
                }
            }
            '\\' => {
                let escaped = *rest.get(at)?;
                at += 1;
                escaped
            }
            other => other,
        };
        // `a-z`, unless the `-` is last (`[a-]` holds a dash).
        if rest.get(at) == Some(&'-') && rest.get(at + 1).is_some_and(|&c| c != ']') {
            let mut high = rest[at + 1];
            at += 2;
            if high == '\\' {
                high = *rest.get(at)?;
                at += 1;
            }
            class.sure.push(Item::Range(low, high));
        } else {
            class.sure.push(Item::Range(low, low));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    fn matches(glob: &str, name: &str) -> bool {
        Glob::new(glob).matches(name)
    }

    #[test]
    fn stars_and_marks() {
        assert!(matches("*", ""));
        assert!(matches("*", "anything"));
        assert!(matches("e?c*", "exc"));
        assert!(matches("e?c*", "etc-passwd"));
        assert!(!matches("e?c*", "ec"));
        assert!(matches("*.rs", "main.rs"));
        assert!(!matches("*.rs", "main.rsx"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
        assert!(matches("**", "x"));
        // The shell's `*` and `?` take a newline in a name; a regex's `.`
        // would not.
        assert!(matches("a*", "a\nb"));
        assert!(matches("a?b", "a\nb"));
    }

    #[test]
    fn classes() {
        assert!(matches("[ab]x", "bx"));
        assert!(!matches("[ab]x", "cx"));
        assert!(matches("[!ab]x", "cx"));
        assert!(matches("[^ab]x", "cx"));
        assert!(!matches("[!ab]x", "ax"));
        assert!(matches("[a-c]", "b"));
        assert!(!matches("[a-c]", "d"));
        assert!(matches("[a-]", "-"));
        assert!(matches("[]]", "]"));
        assert!(matches("[!]]", "x"));
        assert!(!matches("[!]]", "]"));
        assert!(matches("[\\]]", "]"));
        assert!(matches("[[:alpha:]]*", "link"));
        assert!(!matches("[[:digit:]]", "x"));
        assert!(matches("[[:digit:]x]", "x"));
        // Unknown names match anything; a reversed range matches nothing,
        // and the rest of its class still counts.
        assert!(matches("[[:nonsense:]]", "q"));
        assert!(!matches("[z-a]", "m"));
        assert!(matches("[z-al]ink", "link"));
    }

    #[test]
    fn literals() {
        assert!(matches("\\*", "*"));
        assert!(!matches("\\*", "x"));
        assert!(matches("[abc", "[abc"));
        assert!(matches(".env", ".env"));
        assert!(matches("e?c*[!x]", "etc/"));
        assert!(!matches("e?c*[!x]", "etcx"));
    }

    #[test]
    fn a_hostile_pattern_does_not_backtrack_exponentially() {
        let glob = "*a".repeat(100) + "b";
        let name = "a".repeat(2_000);
        assert!(!matches(&glob, &name));
        // Past the bound, a component is not read, and may match anything.
        assert!(matches(&("x".repeat(300) + "[[:"), "anything"));
        assert!(matches(&"[[:".repeat(3_000), "anything"));
    }

    /// What bash or dash may match, and a reading by one shell alone would
    /// not.
    #[test]
    fn either_shell_may_match() {
        // dash takes `^` as a member, bash as negation.
        assert!(matches(".[^.]", ".."));
        assert!(matches("[^a]uthorized_keys", "authorized_keys"));
        assert!(matches("[^]", "^"));
        assert!(matches("[^]]", "^]"));
        assert!(!matches("[!a]x", "ax"));
        // dash compares bytes: `??` is one two-byte character.
        assert!(matches("??", "é"));
        assert!(matches("?[é]", "é"));
        assert!(matches("[!.]?", "é"));
        // Collating symbols and equivalence classes are not read: they may
        // match anything, and exclude nothing from a negated class.
        assert!(matches("[[.-.]]", "-"));
        assert!(matches(".[[=e=]]nv", ".env"));
        assert!(matches("[[.a.]-z]", "b"));
        assert!(matches("[![:foo:]]", "x"));
        assert!(matches("[!.[:]*", "["));
        assert!(matches("[^[:[[:alpha:]].", "a."));
        // A last backslash stands for itself.
        assert!(matches("a\\", "a\\"));
    }
}
