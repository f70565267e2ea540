//! One component of a shell glob (`*`, `?`, `[…]`, `[!…]`), matched as the
//! shell matches it against a file name.
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

/// A parsed glob component.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    /// This character.
    Literal(char),
    /// `?`: any one character.
    One,
    /// `*`: any run of characters, none included.
    Any,
    /// `[…]`: one character in (or, negated, not in) the class.
    Class { negated: bool, items: Vec<Item> },
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
    /// A name the shell does not know: matches every character.
    Unknown,
}

impl Named {
    fn parse(name: &str) -> Self {
        match name {
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
            _ => Self::Unknown,
        }
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
            Self::Unknown => true,
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

impl Part {
    fn matches(&self, c: char) -> bool {
        match self {
            Self::Literal(literal) => *literal == c,
            Self::One | Self::Any => true,
            Self::Class { negated, items } => items.iter().any(|item| item.contains(c)) != *negated,
        }
    }
}

impl Glob {
    /// Parse one component (no `/`). A backslash makes the next character
    /// literal, inside a class too; a `[` with no closing `]` is a literal.
    pub(crate) fn new(component: &str) -> Self {
        let chars: Vec<char> = component.chars().collect();
        let mut parts = Vec::new();
        let mut at = 0;
        while at < chars.len() {
            let c = chars[at];
            at += 1;
            match c {
                '\\' => {
                    if let Some(&next) = chars.get(at) {
                        parts.push(Part::Literal(next));
                        at += 1;
                    }
                }
                '*' => {
                    if !matches!(parts.last(), Some(Part::Any)) {
                        parts.push(Part::Any);
                    }
                }
                '?' => parts.push(Part::One),
                '[' => match parse_class(&chars[at..]) {
                    Some((class, used)) => {
                        parts.push(class);
                        at += used;
                    }
                    None => parts.push(Part::Literal('[')),
                },
                other => parts.push(Part::Literal(other)),
            }
        }
        Self { parts }
    }

    /// Whether the whole of `name` matches.
    pub(crate) fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        let (mut p, mut n) = (0, 0);
        // Where to go back to: the part after the last `*`, and the next
        // character that star will take in.
        let mut back: Option<(usize, usize)> = None;
        while n < name.len() {
            match self.parts.get(p) {
                Some(Part::Any) => {
                    back = Some((p + 1, n));
                    p += 1;
                }
                Some(part) if part.matches(name[n]) => {
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
        self.parts[p..].iter().all(|part| matches!(part, Part::Any))
    }
}

/// The class whose text follows a `[` (`rest`), and how many characters it
/// took, up to its `]`; `None` if it is never closed.
fn parse_class(rest: &[char]) -> Option<(Part, usize)> {
    let mut at = 0;
    let negated = matches!(rest.first(), Some('!' | '^'));
    if negated {
        at += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let c = *rest.get(at)?;
        at += 1;
        if c == ']' && !first {
            return Some((Part::Class { negated, items }, at));
        }
        first = false;
        let low = match c {
            '[' if rest.get(at) == Some(&':') => {
                let name_start = at + 1;
                let close = (name_start..rest.len().saturating_sub(1))
                    .find(|&i| rest[i] == ':' && rest[i + 1] == ']');
                if let Some(close) = close {
                    let name: String = rest[name_start..close].iter().collect();
                    items.push(Item::Named(Named::parse(&name)));
                    at = close + 2;
                    continue;
                }
                '['
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
            items.push(Item::Range(low, high));
        } else {
            items.push(Item::Range(low, low));
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
        let glob = "*a".repeat(200) + "b";
        let name = "a".repeat(2_000);
        assert!(!matches(&glob, &name));
    }
}
