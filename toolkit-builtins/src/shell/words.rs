//! Split a shell command into the simple commands the shell would run.
//!
//! The guard checks words, not raw text: quotes and backslashes are removed
//! the way the shell removes them (so `r''m -r\f` is `rm -rf`), and the text
//! of every command substitution (`$(…)`, backticks, `<(…)`) becomes a
//! segment of its own. This is a lexer for checking, not a shell: it never
//! expands anything, and it marks a word whose value is only known at run
//! time (`$VAR`, `$(…)`) as dynamic so the guard can refuse what it cannot see.

/// One word of a simple command, with quotes and escapes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text after quote removal, with expansions left as written.
    pub text: String,
    /// Whether part of the word is expanded at run time.
    pub dynamic: bool,
}

/// A redirection: its operator and target word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// `>`, `>>`, `<`, `&>`, `>&`, `<<` and so on.
    pub op: String,
    /// What it redirects to or from.
    pub target: Word,
}

impl Redirect {
    /// Whether the redirect writes to its target.
    pub fn writes(&self) -> bool {
        self.op.contains('>')
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
}

/// A parsed command line: its segments and the text of every substitution,
/// which the caller parses in turn.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// The simple commands of this level.
    pub segments: Vec<Segment>,
    /// The source of each `$(…)`, backtick or process substitution.
    pub substitutions: Vec<String>,
}

/// Split `command` into segments.
pub(crate) fn parse(command: &str) -> Parsed {
    Lexer::new(command).run()
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    parsed: Parsed,
    segment: Segment,
    word: Option<Word>,
    /// Whether the current word has quotes or escapes (for heredoc delimiters).
    word_quoted: bool,
    /// A redirect operator waiting for its target word.
    pending_redirect: Option<String>,
    /// Heredocs whose bodies start after the next newline.
    heredocs: Vec<Heredoc>,
}

/// A `<<` redirect waiting for its body.
struct Heredoc {
    delimiter: String,
    /// A quoted delimiter makes the body literal: nothing in it runs.
    literal: bool,
    /// `<<-` strips leading tabs from the body and the delimiter line.
    strip_tabs: bool,
}

impl Lexer {
    fn new(command: &str) -> Self {
        Self {
            chars: command.chars().collect(),
            pos: 0,
            parsed: Parsed::default(),
            segment: Segment::default(),
            word: None,
            word_quoted: false,
            pending_redirect: None,
            heredocs: Vec::new(),
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(|| Word {
            text: String::new(),
            dynamic: false,
        })
    }

    fn push_char(&mut self, c: char) {
        self.word().text.push(c);
    }

    fn end_word(&mut self) {
        let quoted = std::mem::take(&mut self.word_quoted);
        if let Some(word) = self.word.take() {
            match self.pending_redirect.take() {
                Some(op) => {
                    if op == "<<" || op == "<<-" {
                        self.heredocs.push(Heredoc {
                            delimiter: word.text.clone(),
                            literal: quoted,
                            strip_tabs: op == "<<-",
                        });
                    }
                    self.segment.redirects.push(Redirect { op, target: word });
                }
                None => self.segment.words.push(word),
            }
        }
    }

    /// Skip the bodies of the heredocs opened on the line just ended. A
    /// body is data, not commands, but an unquoted one still runs its
    /// `$(…)` and backticks, so those are kept as substitutions.
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
            if !heredoc.literal {
                self.substitutions_in(&body);
            }
        }
    }

    fn substitutions_in(&mut self, text: &str) {
        let mut inner = Lexer::new(text);
        while let Some(c) = inner.peek(0) {
            match (c, inner.peek(1)) {
                ('\\', _) => inner.pos += 2,
                ('$', Some('(')) => {
                    inner.pos += 2;
                    let found = inner.until_close_paren();
                    self.parsed.substitutions.push(found);
                }
                ('`', _) => {
                    inner.pos += 1;
                    let found = inner.until_backtick();
                    self.parsed.substitutions.push(found);
                }
                _ => inner.pos += 1,
            }
        }
    }

    fn end_segment(&mut self, next_piped: bool) {
        self.end_word();
        if let Some(op) = self.pending_redirect.take() {
            // A redirect without a target: keep it so nothing is lost.
            self.segment.redirects.push(Redirect {
                op,
                target: Word {
                    text: String::new(),
                    dynamic: false,
                },
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
                    self.parsed.substitutions.push(inner);
                    self.word().dynamic = true;
                }
                '<' | '>' => self.redirect(),
                '\\' => {
                    self.word_quoted = true;
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(next) => self.push_char(next),
                        None => {}
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
                        self.push_char(c);
                    }
                }
                '"' => {
                    self.word_quoted = true;
                    self.word();
                    self.pos += 1;
                    self.double_quoted();
                }
                '`' => {
                    self.pos += 1;
                    let inner = self.until_backtick();
                    self.parsed.substitutions.push(inner);
                    self.word().dynamic = true;
                }
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
        // `2>`: the digits before the operator are its descriptor, not a word.
        if let Some(word) = &self.word
            && !word.dynamic
            && !word.text.is_empty()
            && word.text.chars().all(|c| c.is_ascii_digit())
        {
            self.word = None;
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
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    match self.peek(1) {
                        Some(next @ ('$' | '`' | '"' | '\\')) => self.push_char(next),
                        Some('\n') => {}
                        Some(next) => {
                            self.push_char('\\');
                            self.push_char(next);
                        }
                        None => {}
                    }
                    self.pos += 2;
                }
                '`' => {
                    self.pos += 1;
                    let inner = self.until_backtick();
                    self.parsed.substitutions.push(inner);
                    self.word().dynamic = true;
                }
                '$' => self.dollar(),
                _ => {
                    self.push_char(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `$(…)`, `$((…))`, `${…}`, `$NAME` or a lone `$`.
    fn dollar(&mut self) {
        match self.peek(1) {
            Some('(') => {
                self.pos += 2;
                let inner = self.until_close_paren();
                self.parsed.substitutions.push(inner);
                self.word().dynamic = true;
            }
            Some('{') => {
                let start = self.pos;
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    if c == '}' {
                        break;
                    }
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                let word = self.word();
                word.text.push_str(&text);
                word.dynamic = true;
            }
            Some('\'') => {
                // `$'…'`: ANSI-C quoting can spell any byte, so the value is
                // treated as unknown.
                self.pos += 2;
                let word = self.word();
                word.dynamic = true;
                word.text.push('$');
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    match c {
                        '\\' => self.pos += 1,
                        '\'' => break,
                        _ => self.push_char(c),
                    }
                }
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
                let word = self.word();
                word.text.push_str(&text);
                word.dynamic = true;
            }
            _ => {
                self.push_char('$');
                self.pos += 1;
            }
        }
    }

    /// The text up to the `)` that closes an opening already consumed.
    fn until_close_paren(&mut self) -> String {
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
                (None, '(') => depth += 1,
                (None, ')') => {
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
        self.chars[start..].iter().collect()
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
