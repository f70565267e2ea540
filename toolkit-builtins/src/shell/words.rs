//! Split a shell command into the simple commands the shell would run.
//!
//! The guard checks words, not raw text: quotes and backslashes are removed
//! the way the shell removes them (so `r''m -r\f` is `rm -rf`), and the text
//! of every command substitution (`$(…)`, backticks, `<(…)`, and those inside
//! `${x:-…}` operands, arithmetic and unquoted here-documents) becomes a
//! segment of its own. This is a lexer for checking, not a shell: it never
//! expands anything. It marks what only the run will tell: a word with an
//! expansion is dynamic, one whose first character comes from an expansion
//! may turn out to be an option, and unquoted glob and brace characters are
//! kept as a pattern. Arithmetic texts are collected, because bash evaluates
//! the variables they name as code.

/// One word of a simple command, with quotes and escapes removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Word {
    /// The text after quote removal, with expansions left as written.
    pub text: String,
    /// Whether part of the word is expanded at run time.
    pub dynamic: bool,
    /// Whether its first character comes from an expansion (a variable, a
    /// substitution, a glob or a brace expansion), so that it may start with
    /// `-` when it runs.
    pub expanded_start: bool,
    /// The word as a glob pattern (quoted metacharacters escaped with `\`),
    /// when it has unquoted glob characters.
    pub glob: Option<String>,
    /// Whether it has an unquoted brace expansion (`{a,b}`, `{1..3}`).
    pub brace: bool,
    /// The word as a pattern (quoted metacharacters escaped with `\`).
    pub pattern: String,
    /// `text[literal_tail..]` is known text after the last expansion.
    pub literal_tail: usize,
}

impl Word {
    /// A word with this literal text.
    pub fn literal(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            ..Self::default()
        }
    }

    /// Whether what the shell runs may differ from `text`: an expansion,
    /// a glob or a brace expansion.
    pub fn uncertain(&self) -> bool {
        self.dynamic || self.glob.is_some() || self.brace
    }
}

/// A redirection: its operator and target word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// `>`, `>>`, `<`, `&>`, `>&`, `<<`, `<<<` and so on.
    pub op: String,
    /// What it redirects to or from (a here-document's delimiter).
    pub target: Word,
    /// A here-document's body: dynamic when an unquoted delimiter lets it expand.
    pub body: Option<Word>,
}

impl Redirect {
    /// Whether the redirect writes to its target.
    pub fn writes(&self) -> bool {
        self.op.contains('>')
    }

    /// Whether it feeds the command's standard input.
    pub fn feeds_input(&self) -> bool {
        self.op.starts_with('<')
    }
}

/// One simple command: words and redirections, between operators.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Segment {
    /// The words, command first.
    pub words: Vec<Word>,
    /// The redirections, in order.
    pub redirects: Vec<Redirect>,
    /// Whether this command's standard input is a pipe from the previous one.
    pub piped_in: bool,
}

impl Segment {
    /// The words joined by single spaces: what deny and allow patterns see.
    pub fn normalized(&self) -> String {
        let mut out = String::new();
        for word in &self.words {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&word.text);
        }
        for redirect in &self.redirects {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&redirect.op);
            out.push_str(&redirect.target.text);
        }
        out
    }

    /// Whether its standard input is fed by a pipe, a file or a here-document.
    pub fn input_fed(&self) -> bool {
        self.piped_in || self.redirects.iter().any(Redirect::feeds_input)
    }
}

/// A parsed command line: its segments, the text of every substitution
/// (which the caller parses in turn) and of every arithmetic expression.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// The simple commands of this level.
    pub segments: Vec<Segment>,
    /// The source of each `$(…)`, backtick or process substitution.
    pub substitutions: Vec<String>,
    /// The text of each `$((…))`, `((…))`, `$[…]`, array subscript and
    /// substring offset.
    pub arithmetic: Vec<String>,
    /// Expansions nest deeper than the lexer follows (`${x:-${y:-…}}`).
    pub too_deep: bool,
}

/// How deep `${…}` operands may nest inside one another before the lexer
/// stops following them (and the guard refuses).
const MAX_NESTING: usize = 32;

/// Split `command` into segments.
pub(crate) fn parse(command: &str) -> Parsed {
    Lexer::new(command).run()
}

/// The substitutions and arithmetic in `text`, read as a context where the
/// shell expands them (an array subscript, an arithmetic operand).
pub(crate) fn code_in(text: &str) -> Parsed {
    let mut lexer = Lexer::new("");
    lexer.scan_code(text);
    lexer.parsed
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    parsed: Parsed,
    segment: Segment,
    word: Option<Word>,
    /// The current word as a glob pattern: quoted metacharacters escaped.
    pattern: String,
    /// Whether the current word has quotes or escapes (for heredoc delimiters).
    word_quoted: bool,
    /// A redirect operator waiting for its target word.
    pending_redirect: Option<String>,
    /// Heredocs whose bodies start after the next newline.
    heredocs: Vec<Heredoc>,
    /// Inside double quotes, where `$'` and `$"` are plain text.
    in_double: bool,
    /// How many expansion texts enclose this one.
    nesting: usize,
}

/// A `<<` redirect waiting for its body.
struct Heredoc {
    delimiter: String,
    /// A quoted delimiter makes the body literal: nothing in it runs.
    literal: bool,
    /// `<<-` strips leading tabs from the body and the delimiter line.
    strip_tabs: bool,
    /// Where the redirect is: its segment's index and its own.
    segment: usize,
    redirect: usize,
}

/// Characters a glob or brace expansion gives meaning to: quoted, they are
/// written escaped in the pattern. `!`, `^` and `-` too, which mean
/// something inside a class (`[\!a]` holds `!`, it is not negated).
const PATTERN_META: &str = "*?[]{},\\!^-";

impl Lexer {
    fn new(command: &str) -> Self {
        Self {
            chars: command.chars().collect(),
            pos: 0,
            parsed: Parsed::default(),
            segment: Segment::default(),
            word: None,
            pattern: String::new(),
            word_quoted: false,
            pending_redirect: None,
            heredocs: Vec::new(),
            in_double: false,
            nesting: 0,
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    /// Add a character the shell takes as written (`quoted`) or may give a
    /// glob or brace meaning.
    fn push(&mut self, c: char, quoted: bool) {
        self.word().text.push(c);
        if quoted && PATTERN_META.contains(c) {
            self.pattern.push('\\');
        }
        self.pattern.push(c);
    }

    fn push_char(&mut self, c: char) {
        self.push(c, false);
    }

    fn push_quoted(&mut self, c: char) {
        self.push(c, true);
    }

    /// Add an expansion, written as `source`, whose value the run decides.
    fn push_expansion(&mut self, source: &str) {
        let word = self.word();
        if word.text.is_empty() {
            word.expanded_start = true;
        }
        word.text.push_str(source);
        word.dynamic = true;
        word.literal_tail = word.text.len();
        for c in source.chars() {
            if PATTERN_META.contains(c) {
                self.pattern.push('\\');
            }
            self.pattern.push(c);
        }
    }

    fn end_word(&mut self) {
        let quoted = std::mem::take(&mut self.word_quoted);
        let pattern = std::mem::take(&mut self.pattern);
        if let Some(mut word) = self.word.take() {
            if has_glob(&pattern) {
                word.expanded_start |= pattern.starts_with(['*', '?', '[']);
                word.glob = Some(pattern.clone());
            }
            if has_brace(&pattern) {
                word.brace = true;
                word.expanded_start |= pattern.starts_with('{');
            }
            word.pattern = pattern;
            match self.pending_redirect.take() {
                Some(op) => {
                    if op == "<<" || op == "<<-" {
                        self.heredocs.push(Heredoc {
                            delimiter: word.text.clone(),
                            literal: quoted,
                            strip_tabs: op == "<<-",
                            segment: self.parsed.segments.len(),
                            redirect: self.segment.redirects.len(),
                        });
                    }
                    self.segment.redirects.push(Redirect {
                        op,
                        target: word,
                        body: None,
                    });
                }
                None => self.segment.words.push(word),
            }
        }
    }

    /// Read the bodies of the heredocs opened on the line just ended. A
    /// body is data, not commands, but an unquoted one still runs its
    /// `$(…)` and backticks, so those are kept as substitutions; the body
    /// is kept on its redirect for commands that run what they read.
    fn heredoc_bodies(&mut self) {
        for heredoc in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(self.chars.len(), |i| self.pos + i);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = end + 1;
                let compared = if heredoc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if compared == heredoc.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            let expands = !heredoc.literal && body.contains(['$', '`', '\\']);
            if !heredoc.literal {
                self.scan_code(&body);
            }
            if let Some(redirect) = self
                .parsed
                .segments
                .get_mut(heredoc.segment)
                .and_then(|s| s.redirects.get_mut(heredoc.redirect))
            {
                redirect.body = Some(Word {
                    dynamic: expands,
                    expanded_start: expands,
                    ..Word::literal(&body)
                });
            }
        }
    }

    /// Collect the substitutions and arithmetic of `text`, a context where
    /// the shell expands them (a here-document, a `${…}` operand). Quotes
    /// are not honoured: inside double quotes a single quote is plain text,
    /// so this finds every place that might run.
    fn scan_code(&mut self, text: &str) {
        if self.nesting >= MAX_NESTING {
            self.parsed.too_deep = true;
            return;
        }
        let mut inner = Lexer::new(text);
        inner.nesting = self.nesting + 1;
        while let Some(c) = inner.peek(0) {
            match (c, inner.peek(1)) {
                ('\\', _) => inner.pos += 2,
                ('$', Some('(' | '[')) => inner.dollar(),
                ('<' | '>', Some('(')) => {
                    inner.pos += 2;
                    let found = inner.until_close_paren();
                    inner.parsed.substitutions.push(found);
                }
                ('`', _) => inner.backtick_substitution(),
                _ => inner.pos += 1,
            }
        }
        self.parsed
            .substitutions
            .append(&mut inner.parsed.substitutions);
        self.parsed.arithmetic.append(&mut inner.parsed.arithmetic);
        self.parsed.too_deep |= inner.parsed.too_deep;
    }

    fn end_segment(&mut self, next_piped: bool) {
        self.end_word();
        if let Some(op) = self.pending_redirect.take() {
            // A redirect without a target: keep it so nothing is lost.
            self.segment.redirects.push(Redirect {
                op,
                target: Word::default(),
                body: None,
            });
        }
        let segment = std::mem::take(&mut self.segment);
        if !segment.words.is_empty() || !segment.redirects.is_empty() {
            self.parsed.segments.push(segment);
        }
        self.segment.piped_in = next_piped;
    }

    fn run(mut self) -> Parsed {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => {
                    self.end_word();
                    self.pos += 1;
                }
                '\n' => {
                    self.end_segment(false);
                    self.pos += 1;
                    self.heredoc_bodies();
                }
                '(' if self.word.is_none() && self.peek(1) == Some('(') => {
                    // `((…))`: an arithmetic command.
                    self.end_segment(false);
                    self.pos += 1;
                    let inner = self.until_close_paren();
                    self.arithmetic_or_code(inner);
                }
                ';' | '(' | ')' => {
                    self.end_segment(false);
                    self.pos += 1;
                }
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '|' => {
                    let double = self.peek(1) == Some('|');
                    self.end_segment(!double);
                    self.pos += if double || self.peek(1) == Some('&') {
                        2
                    } else {
                        1
                    };
                }
                '&' if self.peek(1) == Some('>') => self.redirect(),
                '&' => {
                    self.end_segment(false);
                    self.pos += if self.peek(1) == Some('&') { 2 } else { 1 };
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    self.pos += 2;
                    let inner = self.until_close_paren();
                    let source = format!("<({inner})");
                    self.parsed.substitutions.push(inner);
                    self.push_expansion(&source);
                }
                '<' | '>' => self.redirect(),
                '\\' => {
                    self.word_quoted = true;
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(next) => {
                            self.word();
                            self.push_quoted(next);
                        }
                        // Last in the text, the shells keep it as it is.
                        None => {
                            self.word();
                            self.push_quoted('\\');
                        }
                    }
                    self.pos += 2;
                }
                '\'' => {
                    self.word_quoted = true;
                    self.word();
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        if c == '\'' {
                            break;
                        }
                        self.push_quoted(c);
                    }
                }
                '"' => {
                    self.word_quoted = true;
                    self.word();
                    self.pos += 1;
                    self.double_quoted();
                }
                '`' => self.backtick_substitution(),
                '$' => self.dollar(),
                _ => {
                    self.push_char(c);
                    self.pos += 1;
                }
            }
        }
        self.end_segment(false);
        self.parsed
    }

    /// A redirect operator, possibly preceded by a file descriptor number.
    fn redirect(&mut self) {
        // `2>`: the digits before the operator are its descriptor, not a
        // word; quoted digits (`'8'>`, `\2>`) are a word like any other.
        if let Some(word) = &self.word
            && !self.word_quoted
            && !word.dynamic
            && !word.text.is_empty()
            && word.text.chars().all(|c| c.is_ascii_digit())
        {
            self.word = None;
            self.pattern.clear();
        }
        self.end_word();
        let mut op = String::new();
        while let Some(c) = self.peek(0) {
            if matches!(c, '<' | '>' | '&' | '|') && op.len() < 3 {
                // `>|` and `>&` are operators; `|` alone after `<` is not.
                if c == '|' && !op.ends_with('>') {
                    break;
                }
                if c == '&' && !op.is_empty() && !op.ends_with('>') && !op.ends_with('<') {
                    break;
                }
                op.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        if op == "<<" && self.peek(0) == Some('-') {
            op.push('-');
            self.pos += 1;
        }
        self.pending_redirect = Some(op);
    }

    fn double_quoted(&mut self) {
        let outer = std::mem::replace(&mut self.in_double, true);
        self.double_quoted_body();
        self.in_double = outer;
    }

    fn double_quoted_body(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    match self.peek(1) {
                        Some(next @ ('$' | '`' | '"' | '\\')) => self.push_quoted(next),
                        Some('\n') => {}
                        Some(next) => {
                            self.push_quoted('\\');
                            self.push_quoted(next);
                        }
                        None => {}
                    }
                    self.pos += 2;
                }
                '`' => self.backtick_substitution(),
                '$' => self.dollar(),
                _ => {
                    self.push_quoted(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `$(…)`, `$((…))`, `$[…]`, `${…}`, `$'…'`, `$"…"`, `$NAME` or a lone `$`.
    fn dollar(&mut self) {
        match self.peek(1) {
            Some('(') => {
                self.pos += 2;
                let arithmetic = self.peek(0) == Some('(');
                let inner = self.until_close_paren();
                let source = format!("$({inner})");
                if arithmetic {
                    self.arithmetic_or_code(inner);
                } else {
                    self.parsed.substitutions.push(inner);
                }
                self.push_expansion(&source);
            }
            Some('[') => {
                self.pos += 2;
                let inner = self.until_close(']', '[');
                self.scan_code(&inner);
                self.parsed.arithmetic.push(inner.clone());
                self.push_expansion(&format!("$[{inner}]"));
            }
            Some('{') => {
                self.pos += 2;
                let inner = self.until_close('}', '{');
                self.parameter(&inner);
                self.push_expansion(&format!("${{{inner}}}"));
            }
            Some('"') if !self.in_double => {
                // `$"…"`: translated text; as far as the filter knows, plain
                // double quotes.
                self.pos += 1;
            }
            Some('\'') if !self.in_double => {
                // `$'…'`: ANSI-C quoting can spell any byte, so the value is
                // treated as unknown.
                self.pos += 2;
                let mut text = String::from("$'");
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    match c {
                        '\\' => {
                            text.push('\\');
                            if let Some(next) = self.peek(0) {
                                text.push(next);
                            }
                            self.pos += 1;
                        }
                        '\'' => break,
                        _ => text.push(c),
                    }
                }
                self.word_quoted = true;
                self.push_expansion(&text);
            }
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                let start = self.pos;
                self.pos += 1;
                if c.is_ascii_alphabetic() || c == '_' {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.pos += 1;
                    }
                } else {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                self.push_expansion(&text);
            }
            _ => {
                self.push_char('$');
                self.pos += 1;
            }
        }
    }

    /// The inside of `${…}`: substitutions in its operand, and the
    /// arithmetic of a subscript (`${a[i]}`) or an offset (`${x:i:n}`).
    fn parameter(&mut self, inner: &str) {
        self.scan_code(inner);
        let rest = inner.trim_start_matches(['#', '!']);
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let after = &rest[name_end..];
        if let Some(subscript) = after.strip_prefix('[') {
            let end = subscript.rfind(']').unwrap_or(subscript.len());
            self.parsed.arithmetic.push(subscript[..end].to_owned());
        } else if let Some(offset) = after.strip_prefix(':')
            && !offset.starts_with(['-', '=', '+', '?'])
        {
            self.parsed.arithmetic.push(offset.to_owned());
        }
    }

    /// `((…))` read as arithmetic when it closes as `))`, else as a nested
    /// subshell's code.
    fn arithmetic_or_code(&mut self, inner: String) {
        match inner.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
            Some(expression) => {
                self.scan_code(expression);
                self.parsed.arithmetic.push(expression.to_owned());
            }
            None => self.parsed.substitutions.push(inner),
        }
    }

    /// The text up to the `)` that closes an opening already consumed.
    fn until_close_paren(&mut self) -> String {
        self.until_close(')', '(')
    }

    /// The text up to the `close` that matches an `open` already consumed,
    /// skipping quoted text and escapes.
    fn until_close(&mut self, close: char, open: char) -> String {
        let start = self.pos;
        let mut depth = 1usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') => self.pos += 1,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '\\') => self.pos += 1,
                (None, c) if c == open => depth += 1,
                (None, c) if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        let end = self.pos - 1;
                        return self.chars[start..end].iter().collect();
                    }
                }
                _ => {}
            }
        }
        self.pos = self.pos.min(self.chars.len());
        self.chars[start.min(self.chars.len())..].iter().collect()
    }

    /// A `` `...` `` command substitution, at its opening backtick: its text is
    /// a substitution to check, and it makes the word it stands in dynamic.
    fn backtick_substitution(&mut self) {
        self.pos += 1;
        let inner = self.until_backtick();
        let source = format!("`{inner}`");
        self.parsed.substitutions.push(inner);
        self.push_expansion(&source);
    }

    /// The text up to the next unescaped backtick.
    fn until_backtick(&mut self) -> String {
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(next) = self.peek(0) {
                        inner.push(next);
                        self.pos += 1;
                    }
                }
                _ => inner.push(c),
            }
        }
        inner
    }
}

/// Whether `pattern` (quoted characters escaped) has an unquoted `*`, `?`
/// or a `[…]` bracket expression.
pub(crate) fn has_glob(pattern: &str) -> bool {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' => return true,
            '[' => {
                let rest: String = chars.clone().collect();
                if unescaped(&rest).skip(1).any(|c| c == ']') {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether `pattern` has an unquoted brace expansion: `{`, then `,` or `..`
/// before the matching `}`.
fn has_brace(pattern: &str) -> bool {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut tried = 0usize;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '{' => {
                // Bounded work on hostile input: past a few dozen openings,
                // assume the worst.
                tried += 1;
                if tried > 64 {
                    return true;
                }
                let mut depth = 0usize;
                let mut j = i;
                while j < chars.len() {
                    match chars[j] {
                        '\\' => j += 1,
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => return j < chars.len(),
                        '.' if depth == 1 && chars.get(j + 1) == Some(&'.') => return true,
                        _ => {}
                    }
                    j += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    false
}

/// The unescaped characters of a pattern (escaped ones are skipped).
fn unescaped(pattern: &str) -> impl Iterator<Item = char> + '_ {
    let mut chars = pattern.chars();
    std::iter::from_fn(move || {
        loop {
            match chars.next()? {
                '\\' => {
                    chars.next();
                }
                c => return Some(c),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<Vec<String>> {
        parse(command)
            .segments
            .iter()
            .map(|s| s.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn quotes_and_escapes_are_removed_like_the_shell_does() {
        assert_eq!(words(r#"r''m -r\f "a b""#), [["rm", "-rf", "a b"]]);
    }

    #[test]
    fn operators_split_segments_and_pipes_are_marked() {
        let parsed = parse("a 1 && b | c; d & e || f\ng");
        let names: Vec<&str> = parsed
            .segments
            .iter()
            .map(|s| s.words[0].text.as_str())
            .collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f", "g"]);
        assert!(parsed.segments[2].piped_in);
        assert!(!parsed.segments[1].piped_in);
    }

    #[test]
    fn substitutions_become_their_own_text() {
        let parsed = parse("echo $(rm -rf x) `reboot` <(cat y) \"$(dd if=a)\"");
        assert_eq!(
            parsed.substitutions,
            ["rm -rf x", "reboot", "cat y", "dd if=a"]
        );
        assert!(parsed.segments[0].words[1].dynamic);
    }

    #[test]
    fn redirects_keep_their_operator_and_target() {
        let parsed = parse("echo hi 2>/dev/null >> 'out file' &>all");
        let seg = &parsed.segments[0];
        assert_eq!(seg.words.len(), 2);
        let ops: Vec<(&str, &str)> = seg
            .redirects
            .iter()
            .map(|r| (r.op.as_str(), r.target.text.as_str()))
            .collect();
        assert_eq!(ops, [(">", "/dev/null"), (">>", "out file"), ("&>", "all")]);
        assert!(seg.redirects.iter().all(Redirect::writes));
    }

    #[test]
    fn only_unquoted_digits_name_a_descriptor() {
        // bash and dash: `8>f` redirects descriptor 8, but `'8'>f` and
        // `\8>f` pass the word 8 and redirect standard output.
        assert_eq!(words("echo 8>f"), [["echo"]]);
        assert_eq!(words("echo '8'>f"), [["echo", "8"]]);
        assert_eq!(words("echo \\8>f"), [["echo", "8"]]);
        assert_eq!(words("echo \"8\">f"), [["echo", "8"]]);
    }

    #[test]
    fn variables_make_a_word_dynamic() {
        let parsed = parse("$CMD -rf ${HOME}/x plain");
        let seg = &parsed.segments[0];
        assert!(seg.words[0].dynamic);
        assert!(seg.words[2].dynamic);
        assert!(!seg.words[3].dynamic);
    }

    #[test]
    fn heredoc_bodies_are_data_but_their_substitutions_run() {
        let parsed = parse("cat <<EOF > notes.md\nrm -rf is dangerous\n$(reboot)\nEOF\necho next");
        let names: Vec<&str> = parsed
            .segments
            .iter()
            .map(|s| s.words[0].text.as_str())
            .collect();
        assert_eq!(names, ["cat", "echo"]);
        assert_eq!(parsed.substitutions, ["reboot"]);
        let literal = parse("cat <<'EOF'\n$(reboot)\nEOF\n");
        assert!(literal.substitutions.is_empty());
        let tabs = parse("cat <<-END\n\trm -rf x\n\tEND\nls");
        assert_eq!(tabs.segments.len(), 2);
    }

    #[test]
    fn unterminated_input_does_not_panic() {
        for input in [
            "'abc",
            "\"abc",
            "$(abc",
            "`abc",
            "a \\",
            "${x",
            "$'ab",
            ">",
            "cat <<E\nx",
            "<<\n",
        ] {
            let _ = parse(input);
        }
    }
}
