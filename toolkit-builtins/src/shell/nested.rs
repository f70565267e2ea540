//! Every simple command a command line runs, as far as its text tells, and
//! the refusal of what the text cannot tell.
//!
//! The collector follows the commands a command runs itself (`sh -c`,
//! `eval`, `$(…)`, `trap`, `find -exec`, `xargs`, `su -c`, here-documents
//! fed to a shell, …) and refuses, as unreadable code, every place where
//! the shell or a program would run something only known at run time: a
//! computed command name, a script from standard input or a descriptor,
//! options in variables, data that becomes arguments of a shell, arithmetic
//! on variables whose value the text does not show, environment variables
//! that make programs load code, aliases and `hash -p`.

use std::collections::HashSet;

use super::guard::{Refusal, Rule};
use super::programs::{self, Code};
use super::words::{Segment, Word, code_in, parse};
use super::wrappers::{Command, Resolved, SHELLS, is_assignment, long_is, resolve};

/// How deep `sh -c`, `eval` and substitutions may nest before the filter
/// gives up and refuses.
const MAX_DEPTH: usize = 8;

/// Every simple command found, and the first refusal.
pub(crate) struct Seen {
    /// Whether the policy promises to keep named programs out (deny
    /// patterns or allow-only mode): code in other languages is then
    /// refused, since those promises cannot be checked inside it.
    strict: bool,
    /// Every simple command, nested ones included.
    pub segments: Vec<Segment>,
    /// The first reason to refuse.
    pub refusal: Option<Refusal>,
    arithmetic: Vec<String>,
    numeric: HashSet<String>,
    not_numeric: HashSet<String>,
    written: Vec<String>,
    /// Files run as programs or scripts (paths as written, `./` removed).
    pub executed: Vec<String>,
}

impl Seen {
    /// Collect `command`; `strict` as described on the field.
    pub(crate) fn of(command: &str, strict: bool) -> Self {
        let mut seen = Self {
            strict,
            segments: Vec::new(),
            refusal: None,
            arithmetic: Vec::new(),
            numeric: HashSet::new(),
            not_numeric: HashSet::new(),
            written: Vec::new(),
            executed: Vec::new(),
        };
        seen.collect(command, 0);
        seen.check_arithmetic();
        if strict {
            seen.check_written_scripts();
        }
        seen
    }

    fn refuse(&mut self, detail: String) {
        self.refuse_as(Rule::OpaqueCode, detail);
    }

    fn refuse_as(&mut self, rule: Rule, detail: String) {
        self.refusal.get_or_insert(Refusal { rule, detail });
    }

    fn collect(&mut self, command: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.refuse("commands nest too deeply to be checked".into());
            return;
        }
        if let Some(detail) = super::guard::fork_bomb(command) {
            self.refuse_as(Rule::ForkBomb, detail);
            return;
        }
        if let Some(detail) = expansion_runs_code(command) {
            self.refuse(detail);
            return;
        }
        let parsed = parse(command);
        if parsed.too_deep {
            self.refuse("expansions nest too deeply to be checked".into());
            return;
        }
        for inner in &parsed.substitutions {
            self.collect(inner, depth + 1);
        }
        self.arithmetic.extend(parsed.arithmetic);
        for segment in parsed.segments {
            self.segment(segment, depth);
        }
    }

    /// Collect a word's text as shell code, or refuse if it is only known
    /// when it runs.
    fn code(&mut self, word: &Word, what: &str, depth: usize) {
        if word.uncertain() {
            self.refuse(format!(
                "{what} runs `{}`, text only known when it runs, so it cannot be checked",
                word.text
            ));
        } else {
            self.collect(&word.text.clone(), depth + 1);
        }
    }

    fn segment(&mut self, segment: Segment, depth: usize) {
        let words = segment.words.clone();
        self.compound_header(&words);
        let command_at = match resolve(&words) {
            Resolved::Unreadable(reason) => {
                self.refuse(reason);
                words.len()
            }
            Resolved::Script(script) => {
                self.code(&script, "a wrapper", depth);
                words.len()
            }
            Resolved::Nothing => words.len(),
            Resolved::Runs(command) => {
                let at = command.at;
                self.runs(&command, &segment, depth);
                at
            }
        };
        for word in &words[..command_at.min(words.len())] {
            if is_assignment(word) {
                self.assignment(word);
            } else if let Some((name, _)) = word.text.split_once('=')
                && programs::runs_code_from_env(name)
            {
                // `env 'BASH_FUNC_f%%=…'`: env accepts any name.
                self.refuse(format!(
                    "setting `{name}` makes programs load or run code the filter cannot read"
                ));
            }
        }
        for redirect in segment.redirects.iter().filter(|r| r.writes()) {
            if !redirect.target.uncertain() {
                self.written.push(plain_path(&redirect.target.text));
            }
        }
        self.segments.push(segment);
    }

    /// `for NAME in WORDS`: the loop variable's values.
    fn compound_header(&mut self, words: &[Word]) {
        if let [first, name, rest @ ..] = words
            && matches!(first.text.as_str(), "for" | "select")
        {
            let values: Vec<&Word> = rest.iter().skip(1).collect();
            let numeric = rest.first().is_some_and(|w| w.text == "in")
                && values.iter().all(|w| !w.uncertain() && is_integer(&w.text));
            self.mark(&name.text, numeric);
            self.assigned_name(&name.text, first.text.as_str());
        }
    }

    /// A variable a builtin assigns (`read NAME`, `printf -v NAME`, `for
    /// NAME in`, `mapfile NAME`): the names that make programs load code
    /// are refused as in a plain assignment, and a subscript is arithmetic.
    fn assigned_name(&mut self, name: &str, by: &str) {
        let (base, subscript) = match name.split_once('[') {
            Some((base, sub)) => (base, Some(sub.trim_end_matches(']'))),
            None => (name, None),
        };
        if programs::runs_code_from_env(base) {
            self.refuse(format!(
                "`{by}` sets `{base}`, which makes programs load or run code the filter cannot read"
            ));
        }
        if let Some(subscript) = subscript {
            self.arithmetic_word(subscript);
        }
    }

    /// bash builtins that run text as code or assign variables by name,
    /// beyond the ones with their own rules.
    fn bash_builtin(&mut self, name: &str, args: &[Word], depth: usize) {
        // The value of an option, attached (`-Cfoo`) or the next word.
        let value_of = |flag: char| -> Option<Word> {
            let mut words = args.iter();
            while let Some(word) = words.next() {
                if let Some(letters) = word.text.strip_prefix('-')
                    && !letters.starts_with('-')
                    && let Some(at) = letters.find(flag)
                {
                    let rest = &letters[at + 1..];
                    return if rest.is_empty() {
                        words.next().cloned()
                    } else {
                        Some(Word {
                            text: rest.to_owned(),
                            ..word.clone()
                        })
                    };
                }
            }
            None
        };
        match name {
            // `-C CODE` runs CODE for every chunk of lines read.
            "mapfile" | "readarray" => {
                if let Some(code) = value_of('C') {
                    self.code(&code, &format!("`{name} -C`"), depth);
                }
                if let Some(array) = args.iter().rev().find(|a| !a.text.starts_with('-')) {
                    self.assigned_name(&array.text, name);
                }
            }
            // `compgen -C CODE` runs it; `-W WORDS` expands WORDS, command
            // substitutions included; `-F FUNCTION` runs a function.
            "compgen" | "complete" => {
                if let Some(code) = value_of('C') {
                    self.code(&code, &format!("`{name} -C`"), depth);
                }
                if let Some(words) = value_of('W') {
                    self.code(&words, &format!("the words `{name} -W` expands"), depth);
                }
            }
            "read" => {
                let mut skip_value = false;
                for arg in args {
                    if skip_value {
                        skip_value = false;
                    } else if let Some(letters) = arg.text.strip_prefix('-') {
                        // The value of -d, -i, -n, -N, -p, -t or -u is no
                        // name; that of -a is checked below.
                        skip_value = letters.ends_with(['d', 'i', 'n', 'N', 'p', 't', 'u']);
                    } else {
                        self.assigned_name(&arg.text, name);
                    }
                }
                if let Some(array) = value_of('a') {
                    self.assigned_name(&array.text, name);
                }
            }
            "printf" => {
                if let Some(variable) = value_of('v') {
                    self.assigned_name(&variable.text, name);
                }
            }
            // A name given to `-v` (test) or `-p` (wait) has its subscript
            // evaluated as arithmetic.
            "test" | "[" | "[[" => {
                for pair in args.windows(2) {
                    if pair[0].text == "-v" {
                        self.assigned_name(&pair[1].text, name);
                    }
                }
            }
            "wait" => {
                if let Some(variable) = value_of('p') {
                    self.assigned_name(&variable.text, name);
                }
            }
            _ => {}
        }
    }

    /// A variable assignment: the names that make programs load code are
    /// refused, and whether the value is a plain number is noted for the
    /// arithmetic check.
    fn assignment(&mut self, word: &Word) {
        let (name, value) = word.text.split_once('=').unwrap_or((&word.text, ""));
        let name = name.trim_end_matches('+');
        let (base, subscript) = match name.split_once('[') {
            Some((base, sub)) => (base, Some(sub.trim_end_matches(']'))),
            None => (name, None),
        };
        if programs::runs_code_from_env(base) {
            self.refuse(format!(
                "setting `{base}` makes programs load or run code the filter cannot read"
            ));
        }
        if let Some(subscript) = subscript {
            self.arithmetic_word(subscript);
        }
        let value_start = word.text.len() - value.len();
        let numeric = (!word.dynamic && is_integer(value))
            || (word.dynamic
                && value.starts_with("$((")
                && value.ends_with("))")
                && !word.text[value_start + 3..word.text.len() - 2].contains("))"));
        self.mark(base, numeric);
    }

    fn mark(&mut self, name: &str, numeric: bool) {
        if numeric {
            self.numeric.insert(name.to_owned());
        } else {
            self.not_numeric.insert(name.to_owned());
        }
    }

    /// Text the shell evaluates as arithmetic: its substitutions run, and
    /// the variables it names are checked at the end.
    fn arithmetic_word(&mut self, text: &str) {
        let parsed = code_in(text);
        for inner in &parsed.substitutions {
            self.collect(inner, 1);
        }
        self.arithmetic.extend(parsed.arithmetic);
        self.arithmetic.push(text.to_owned());
    }

    fn runs(&mut self, command: &Command<'_>, segment: &Segment, depth: usize) {
        let name = command.name.as_str();
        let args = command.args;
        if command.via_data {
            self.data_arguments(command, segment);
        }
        if let Some(word) = option_from_data(name, args) {
            self.refuse(format!(
                "`{name}` is given `{}`, which is only known when it runs and may become an \
                 option; put `--` before it or start it with `./`",
                word.text
            ));
        }
        if SHELLS.contains(&name) {
            self.shell(name, args, segment, depth);
            return;
        }
        if programs::is_interpreter(name) {
            match programs::interpreter_code(args, segment.input_fed()) {
                Code::Unread(how) if self.strict => self.refuse(format!(
                    "`{name}` runs {how}, which the filter cannot check against the host's \
                     deny patterns"
                )),
                Code::File(file) => self.executed.push(plain_path(&file.text)),
                _ => {}
            }
            return;
        }
        if segment.words[command.at].text.contains('/') {
            self.executed
                .push(plain_path(&segment.words[command.at].text));
        }
        let reason = match name {
            "sed" => programs::sed(args),
            "awk" | "gawk" | "mawk" | "nawk" => programs::awk(args),
            "git" => programs::git(args),
            "tar" => programs::tar(args),
            _ => programs::runs_command_option(name, args),
        };
        if let Some(reason) = reason {
            self.refuse(reason);
            return;
        }
        self.bash_builtin(name, args, depth);
        match name {
            "eval" => {
                // bash's `eval` ends its options at a first `--` and skips
                // it; dash's runs a program named `--`, which holds nothing
                // to check. The code is bash's reading.
                let args = match args {
                    [first, rest @ ..] if first.text == "--" && !first.uncertain() => rest,
                    _ => args,
                };
                let joined = Word {
                    dynamic: args.iter().any(Word::uncertain),
                    ..Word::literal(
                        &args
                            .iter()
                            .map(|a| a.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                    )
                };
                self.code(&joined, "`eval`", depth);
            }
            // Both shells end `.`'s options at `--`: the file is the next word.
            "." | "source" => match args
                .iter()
                .position(|a| a.text != "--" || a.uncertain())
                .and_then(|first| args.get(first))
            {
                Some(file)
                    if file.uncertain()
                        || file.text == "-"
                        || programs::is_descriptor_path(&file.text) =>
                {
                    self.refuse(format!(
                        "`{name} {}` runs a script the filter cannot read",
                        file.text
                    ))
                }
                Some(file) => self.executed.push(plain_path(&file.text)),
                None => {}
            },
            "trap" => self.trap(args, depth),
            "alias" if args.iter().any(|a| a.text.contains('=') || a.uncertain()) => self
                .refuse("`alias` makes a command name run something the text does not show".into()),
            // An option only known at run time may be the one refused here.
            "hash"
                if args.iter().any(|a| {
                    a.uncertain() || (a.text.starts_with('-') && a.text.contains('p'))
                }) =>
            {
                self.refuse("`hash -p` makes a command name run another program".into())
            }
            "enable"
                if args.iter().any(|a| {
                    a.uncertain() || (a.text.starts_with('-') && a.text.contains('f'))
                }) =>
            {
                self.refuse("`enable -f` loads a builtin from a library".into())
            }
            // `fc` runs an editor (any program) on the history, or runs
            // history entries again; `history -s` writes an entry to run.
            "fc" => self
                .refuse("`fc` runs commands from the history, which the filter cannot read".into()),
            "history"
                if args.iter().any(|a| {
                    a.uncertain() || (a.text.starts_with('-') && a.text.contains('s'))
                }) =>
            {
                self.refuse("`history -s` adds a command to the history, to be run later".into())
            }
            "set" if sets_keyword_option(args) => self.refuse(
                "`set -k` makes assignments anywhere on a command line reach its environment"
                    .into(),
            ),
            "shopt"
                if args.iter().any(|a| {
                    a.uncertain() || a.text == "expand_aliases" || a.text == "extdebug"
                }) =>
            {
                self.refuse(format!(
                    "`shopt {}` changes how commands are read",
                    args.iter()
                        .map(|a| a.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ))
            }
            "let" => {
                for arg in args {
                    self.arithmetic_word(&arg.text);
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => self.declaration(name, args),
            "read" | "mapfile" | "readarray" | "getopts" | "unset" | "printf" => {
                self.names_assigned(name, args)
            }
            "[[" => self.conditional(args),
            "find" => self.find(args, depth),
            "command" | "type" | "which" => {}
            "make" | "gmake" => {
                // The makefile is a script: the one named, or the default.
                let named = args
                    .iter()
                    .enumerate()
                    .find_map(|(i, a)| match a.text.as_str() {
                        "-f" | "--file" | "--makefile" => args.get(i + 1).map(|w| w.text.clone()),
                        t if t.starts_with("-f") && t.len() > 2 => Some(t[2..].to_owned()),
                        t if t.starts_with("--file=") || t.starts_with("--makefile=") => {
                            t.split_once('=').map(|(_, v)| v.to_owned())
                        }
                        _ => None,
                    });
                let file = named.unwrap_or_else(|| {
                    ["GNUmakefile", "makefile"]
                        .into_iter()
                        .find(|f| self.written.iter().any(|w| w == f))
                        .unwrap_or("Makefile")
                        .to_owned()
                });
                self.executed.push(plain_path(&file));
            }
            "cp" | "mv" | "install" | "ln" => {
                if let Some(last) = args.iter().rev().find(|a| !a.text.starts_with('-'))
                    && !last.uncertain()
                {
                    self.written.push(plain_path(&last.text));
                }
            }
            "tee" => {
                for arg in args
                    .iter()
                    .filter(|a| !a.text.starts_with('-') && !a.uncertain())
                {
                    self.written.push(plain_path(&arg.text));
                }
            }
            "dd" => {
                for arg in args {
                    if let Some(file) = arg.text.strip_prefix("of=") {
                        self.written.push(plain_path(file));
                    }
                }
            }
            "curl" | "wget" => {
                for (i, arg) in args.iter().enumerate() {
                    if matches!(
                        arg.text.as_str(),
                        "-o" | "-O" | "--output" | "--output-document"
                    ) && let Some(file) = args.get(i + 1)
                    {
                        self.written.push(plain_path(&file.text));
                    }
                }
            }
            _ => {}
        }
    }

    /// A shell: its `-c` text, its script operand, or the script it reads
    /// from standard input.
    fn shell(&mut self, name: &str, args: &[Word], segment: &Segment, depth: usize) {
        let mut i = 0;
        let mut command_text = false;
        let mut from_stdin = false;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            if arg.expanded_start {
                self.refuse(format!(
                    "`{name}` is given `{text}`, which is only known when it runs and may be an \
                     option such as `-c`"
                ));
                return;
            }
            if text == "--" || text == "-" {
                i += 1;
                break;
            }
            if text.starts_with("--") {
                if ["rcfile", "init-file"].iter().any(|o| long_is(text, o, 2)) {
                    // A start-up file is a script the shell runs.
                    let file = match text.split_once('=') {
                        Some((_, v)) => Some(Word::literal(v)),
                        None => {
                            i += 1;
                            args.get(i).cloned()
                        }
                    };
                    match file {
                        Some(file)
                            if file.uncertain() || programs::is_descriptor_path(&file.text) =>
                        {
                            self.refuse(format!(
                                "`{name}` runs the start-up file `{}`, which the filter cannot read",
                                file.text
                            ));
                            return;
                        }
                        Some(file) => self.executed.push(plain_path(&file.text)),
                        None => {}
                    }
                }
                i += 1;
                continue;
            }
            if text.len() > 1 && (text.starts_with('-') || text.starts_with('+')) {
                let letters = &text[1..];
                // `+c` is `-c` too: both shells read the letter, whatever its sign.
                command_text |= letters.contains('c');
                from_stdin |= letters.contains('s');
                if letters.contains(['o', 'O']) {
                    i += 1;
                }
                i += 1;
                continue;
            }
            break;
        }
        let operands = args.get(i..).unwrap_or_default();
        if command_text {
            if let Some(script) = operands.first() {
                self.code(script, &format!("`{name} -c`"), depth);
            }
            return;
        }
        if !from_stdin && let Some(file) = operands.first() {
            if file.uncertain() || programs::is_descriptor_path(&file.text) {
                self.refuse(format!(
                    "`{name} {}` runs a script the filter cannot read",
                    file.text
                ));
            } else {
                self.executed.push(plain_path(&file.text));
            }
            return;
        }
        if segment.piped_in {
            self.refuse(format!(
                "`{}` feeds a script to {name} that cannot be checked; run the commands directly",
                segment.normalized()
            ));
        }
        for redirect in segment.redirects.iter().filter(|r| r.feeds_input()) {
            match (&redirect.body, redirect.op.as_str()) {
                (Some(body), _) => {
                    self.code(body, &format!("a here-document fed to `{name}`"), depth)
                }
                (None, "<<<") => self.code(
                    &redirect.target,
                    &format!("a here-string fed to `{name}`"),
                    depth,
                ),
                _ => self.refuse(format!(
                    "`{}` feeds a script to {name} that cannot be checked; run the commands \
                     directly",
                    segment.normalized()
                )),
            }
        }
    }

    /// `trap ACTION SIGNAL…`: the action is shell code run later.
    fn trap(&mut self, args: &[Word], depth: usize) {
        let (args, after_dashes) = match args.first() {
            Some(first) if first.text == "--" && !first.uncertain() => (&args[1..], true),
            _ => (args, false),
        };
        // `trap [-lpP] [action signal…]`: only `-` alone resets a signal,
        // and only before `--` are `-l`, `-p` and `-P` options. Anything
        // else in the action's place, `-;rm -rf x` included, is code both
        // shells run when the signal comes.
        let is_option = |text: &str| {
            !after_dashes
                && text.strip_prefix('-').is_some_and(|letters| {
                    !letters.is_empty() && letters.chars().all(|c| "lpP".contains(c))
                })
        };
        match args.first() {
            Some(action) if action.uncertain() => self.code(action, "`trap`", depth),
            Some(action) if action.text == "-" || is_option(&action.text) => {}
            Some(action) => self.code(action, "`trap`", depth),
            None => {}
        }
    }

    /// `declare` and its kin: attributes that make later assignments
    /// evaluate code, and the assignments they make.
    fn declaration(&mut self, name: &str, args: &[Word]) {
        for arg in args {
            if arg.expanded_start {
                self.refuse(format!(
                    "`{name}` is given `{}`, which is only known when it runs",
                    arg.text
                ));
            } else if let Some(flags) = arg.text.strip_prefix('-') {
                if flags.contains(['i', 'n']) {
                    self.refuse(format!(
                        "`{name} {}` makes later assignments evaluate their values as code \
                         (arithmetic or a name reference)",
                        arg.text
                    ));
                }
            } else if is_assignment(arg) {
                self.assignment(arg);
            } else {
                let base = arg.text.split('[').next().unwrap_or_default();
                if programs::runs_code_from_env(base) {
                    self.refuse(format!(
                        "exporting `{base}` makes programs load or run code the filter cannot read"
                    ));
                }
                self.subscripts(&arg.text);
            }
        }
    }

    /// `read NAME`, `printf -v NAME`, `unset NAME`: the names get values the
    /// text does not show, and bash evaluates their subscripts.
    fn names_assigned(&mut self, name: &str, args: &[Word]) {
        let mut names: Vec<&Word> = Vec::new();
        if name == "printf" {
            if let Some(at) = args.iter().position(|a| a.text == "-v") {
                names.extend(args.get(at + 1));
            }
        } else {
            names.extend(args.iter().filter(|a| !a.text.starts_with('-')));
        }
        for word in names {
            if word.uncertain() && name != "unset" {
                self.refuse(format!(
                    "`{name}` assigns to `{}`, a name only known when it runs",
                    word.text
                ));
            }
            let base = word.text.split('[').next().unwrap_or_default().to_owned();
            self.mark(&base, false);
            self.subscripts(&word.text);
        }
    }

    /// The subscript of `a[…]` is arithmetic.
    fn subscripts(&mut self, text: &str) {
        if let Some((_, rest)) = text.split_once('[') {
            let subscript = rest.rsplit_once(']').map_or(rest, |(s, _)| s);
            self.arithmetic_word(subscript);
        }
    }

    /// `[[ … ]]`: the operands of arithmetic comparisons are arithmetic.
    fn conditional(&mut self, args: &[Word]) {
        for (i, arg) in args.iter().enumerate() {
            if matches!(
                arg.text.as_str(),
                "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
            ) {
                for side in [i.checked_sub(1), Some(i + 1)].into_iter().flatten() {
                    if let Some(word) = args.get(side) {
                        self.arithmetic_word(&word.text);
                    }
                }
            }
            if arg.text == "-v"
                && let Some(word) = args.get(i + 1)
            {
                self.subscripts(&word.text);
            }
        }
    }

    /// `find -exec`: the command it runs, with `{}` standing for data (a
    /// found path, which starts with a start point).
    fn find(&mut self, args: &[Word], depth: usize) {
        let starts: Vec<&Word> = args
            .iter()
            .take_while(|a| !a.text.starts_with('-') && !matches!(a.text.as_str(), "(" | "!" | ")"))
            .collect();
        let found_may_be_option = starts.iter().any(|s| s.expanded_start);
        let mut i = 0;
        while i < args.len() {
            if matches!(
                args[i].text.as_str(),
                "-exec" | "-execdir" | "-ok" | "-okdir"
            ) {
                let end = args[i + 1..]
                    .iter()
                    .position(|a| a.text == ";" || a.text == "+")
                    .map_or(args.len(), |p| i + 1 + p);
                let words = args[i + 1..end]
                    .iter()
                    .map(|w| {
                        if w.text.contains("{}") {
                            Word {
                                dynamic: true,
                                expanded_start: w.text.starts_with("{}") && found_may_be_option
                                    || w.text.starts_with("{}") && args[i].text.ends_with("dir"),
                                ..w.clone()
                            }
                        } else {
                            w.clone()
                        }
                    })
                    .collect::<Vec<_>>();
                if words.first().is_some_and(|w| w.text.contains("{}")) {
                    self.refuse(
                        "`find -exec {}` runs a program named by a found file, which the \
                         filter cannot check"
                            .into(),
                    );
                }
                self.segment(
                    Segment {
                        words,
                        ..Segment::default()
                    },
                    depth + 1,
                );
                i = end;
            }
            i += 1;
        }
    }

    /// `xargs`: arguments read from data are appended to the command. Data
    /// must not become a command name, shell code or an option.
    fn data_arguments(&mut self, command: &Command<'_>, segment: &Segment) {
        let name = command.name.as_str();
        let word = &segment.words[command.at];
        let replace = segment.words[..command.at]
            .iter()
            .enumerate()
            .find_map(|(i, w)| {
                if w.text == "-I" {
                    segment.words.get(i + 1).map(|v| v.text.clone())
                } else if let Some(v) = w.text.strip_prefix("-I") {
                    Some(v.to_owned())
                } else if w.text.starts_with("-i") || long_is(&w.text, "replace", 3) {
                    Some("{}".to_owned())
                } else {
                    None
                }
            });
        if replace
            .as_deref()
            .is_some_and(|r| !r.is_empty() && word.text.contains(r))
        {
            self.refuse(format!(
                "`xargs` puts data into the command name `{}`, which cannot be checked",
                word.text
            ));
        }
        let runs_code = SHELLS.contains(&name)
            || programs::is_interpreter(name)
            || matches!(
                name,
                "eval"
                    | "."
                    | "source"
                    | "env"
                    | "sudo"
                    | "doas"
                    | "xargs"
                    | "find"
                    | "su"
                    | "runuser"
                    | "timeout"
                    | "nice"
                    | "nohup"
                    | "exec"
                    | "command"
                    | "watch"
                    | "awk"
                    | "gawk"
                    | "mawk"
                    | "nawk"
                    | "sed"
                    | "perl"
                    | "git"
                    | "tar"
                    | "busybox"
            );
        if runs_code {
            self.refuse(format!(
                "`xargs` appends data to `{name}` as arguments, where it may become code or \
                 options the filter cannot check"
            ));
        } else if OPTION_SENSITIVE.contains(&name) && !command.args.iter().any(|a| a.text == "--") {
            self.refuse(format!(
                "`xargs` appends data to `{name}` as arguments, which may be options; put `--` \
                 after `{name}`'s own options"
            ));
        }
    }

    /// Refuse arithmetic that reads a variable whose value may be more than
    /// a number: bash evaluates such a value as an expression, and an array
    /// subscript in it (`a[$(…)]`) runs a command.
    fn check_arithmetic(&mut self) {
        const SAFE: &[&str] = &[
            "RANDOM",
            "SECONDS",
            "LINENO",
            "BASHPID",
            "PPID",
            "UID",
            "EUID",
            "OPTIND",
            "SRANDOM",
            "EPOCHSECONDS",
            "COLUMNS",
            "LINES",
            "#",
            "?",
            "$",
            "!",
        ];
        let texts = std::mem::take(&mut self.arithmetic);
        for text in &texts {
            for assigned in arithmetic_names(text).into_iter().filter(|(_, a)| *a) {
                self.numeric.insert(assigned.0);
            }
        }
        for text in &texts {
            for (name, _) in arithmetic_names(text) {
                let safe = SAFE.contains(&name.as_str())
                    || (self.numeric.contains(&name) && !self.not_numeric.contains(&name));
                if !safe {
                    self.refuse(format!(
                        "the arithmetic `{}` reads `{name}`, whose value the command does not \
                         show as a number; bash evaluates such a value as code",
                        text.trim()
                    ));
                    return;
                }
            }
        }
    }

    /// Refuse running a file this same command writes (`… > x.sh; sh x.sh`):
    /// its code is data the deny patterns never see.
    fn check_written_scripts(&mut self) {
        if let Some(file) = self.executed.iter().find(|e| self.written.contains(e)) {
            let file = file.clone();
            self.refuse(format!(
                "the command writes `{file}` and runs it, so its code cannot be checked against \
                 the host's deny patterns"
            ));
        }
    }
}

/// bash expansions that run text the command does not show: `${x@P}`
/// expands a prompt string (command substitutions included), and
/// `${!x}` reads the variable `x` names, whose subscript may be code.
/// (`${!x[@]}` and `${!x[*]}`, an array's keys, and `${!prefix*}` are
/// plain lists and pass.)
fn expansion_runs_code(command: &str) -> Option<String> {
    if command.contains("@P}") {
        return Some("`${…@P}` expands its value as a prompt, running the commands in it".into());
    }
    let mut rest = command;
    while let Some(at) = rest.find("${!") {
        let after = &rest[at + 3..];
        let name_end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let tail = &after[name_end..];
        let lists = tail.starts_with("[@]}")
            || tail.starts_with("[*]}")
            || tail.starts_with("*}")
            || tail.starts_with("@}");
        if name_end > 0 && !lists {
            return Some(format!(
                "`${{!{}…}}` reads a variable named by another one's value, which the filter \
                 cannot read",
                &after[..name_end]
            ));
        }
        rest = after;
    }
    None
}

/// Whether `set`'s options (the words before `--`) turn on `keyword`
/// (`-k`, `-o keyword`), or are only known at run time.
fn sets_keyword_option(args: &[Word]) -> bool {
    args.iter()
        .take_while(|a| a.text != "--" || a.uncertain())
        .any(|a| {
            a.uncertain()
                || a.text == "keyword"
                || ((a.text.starts_with('-') || a.text.starts_with('+')) && a.text.contains('k'))
        })
}

/// Programs whose options decide what a rule of this filter sees, or make
/// them run code: an operand only known at run time must not be an option.
const OPTION_SENSITIVE: &[&str] = &[
    "rm",
    "rmdir",
    "find",
    "sed",
    "perl",
    "dd",
    "systemctl",
    "init",
    "telinit",
    "tar",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "zip",
    "man",
    "less",
    "more",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "ps",
    "git",
    "chmod",
    "chown",
    "cp",
    "mv",
    "ln",
    "install",
    "tee",
    "truncate",
    "shred",
];

/// Predicates of `find` that take a value.
const FIND_VALUED: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-newer",
    "-user",
    "-group",
    "-size",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-maxdepth",
    "-mindepth",
    "-perm",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-samefile",
    "-fstype",
    "-printf",
    "-fprint",
    "-fprintf",
];

/// The first argument of an option-sensitive program that may turn out to
/// be an option: its first character comes from an expansion, and no `--`
/// comes before it.
fn option_from_data<'a>(name: &str, args: &'a [Word]) -> Option<&'a Word> {
    if !OPTION_SENSITIVE.contains(&name) && !SHELLS.contains(&name) {
        return None;
    }
    for (i, arg) in args.iter().enumerate() {
        if arg.text == "--" && !arg.uncertain() {
            return None;
        }
        if !arg.expanded_start {
            continue;
        }
        let after_value_option =
            i.checked_sub(1)
                .map(|p| args[p].text.as_str())
                .is_some_and(|prev| match name {
                    "find" => FIND_VALUED.contains(&prev),
                    "sed" => prev == "-e" || prev == "-f",
                    "git" => matches!(prev, "-m" | "--message" | "-F" | "--file" | "-C"),
                    _ => false,
                });
        if !after_value_option {
            return Some(arg);
        }
    }
    None
}

/// The variables an arithmetic text names, each with whether the text
/// assigns it (`i=0`, `i++`, `i+=2`).
fn arithmetic_names(text: &str) -> Vec<(String, bool)> {
    let chars: Vec<char> = text.chars().collect();
    let mut names = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '$' {
            match chars.get(i + 1) {
                Some('(') => {
                    // A substitution: collected and checked on its own.
                    let mut depth = 0usize;
                    while i < chars.len() {
                        match chars[i] {
                            '(' => depth += 1,
                            ')' => {
                                depth = depth.saturating_sub(1);
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    i += 1;
                }
                Some('{') => {
                    let start = i + 2;
                    let inner: String = chars[start..]
                        .iter()
                        .skip_while(|c| matches!(c, '#' | '!'))
                        .take_while(|c| {
                            c.is_ascii_alphanumeric() || **c == '_' || "@*#?$!".contains(**c)
                        })
                        .collect();
                    names.push((inner, false));
                    i = chars[start..]
                        .iter()
                        .position(|c| *c == '}')
                        .map_or(chars.len(), |p| start + p + 1);
                }
                Some(&n) if n.is_ascii_alphanumeric() || n == '_' => {
                    let start = i + 1;
                    let mut end = start + 1;
                    if n.is_ascii_alphabetic() || n == '_' {
                        while end < chars.len()
                            && (chars[end].is_ascii_alphanumeric() || chars[end] == '_')
                        {
                            end += 1;
                        }
                    }
                    names.push((chars[start..end].iter().collect(), false));
                    i = end;
                }
                Some(&n) if "@*".contains(n) => {
                    names.push((n.to_string(), false));
                    i += 2;
                }
                _ => i += 2,
            }
            continue;
        }
        if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '#' || chars[i] == '_')
            {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            let before: String = chars[..start]
                .iter()
                .rev()
                .take_while(|c| !c.is_whitespace())
                .take(2)
                .collect();
            let after: String = chars[i..]
                .iter()
                .skip_while(|c| c.is_whitespace())
                .take(3)
                .collect();
            let assigns = before.starts_with("++")
                || before.starts_with("--")
                || after.starts_with("++")
                || after.starts_with("--")
                || (after.starts_with('=') && !after.starts_with("=="))
                || ["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="]
                    .iter()
                    .any(|op| after.starts_with(op));
            names.push((name, assigns));
            continue;
        }
        i += 1;
    }
    names
}

fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// A path as written, without a leading `./`, for comparing names.
fn plain_path(text: &str) -> String {
    // `./s`, `.//s` and `d/../s` name one file, and so must compare equal;
    // `.//s` must not become the absolute-looking `/s`.
    programs::lexical_path(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_compare_as_the_kernel_reads_them() {
        for (written, plain) in [
            ("./s", "s"),
            (".//s", "s"),
            ("././s", "s"),
            ("d/../s", "s"),
            ("../s", "../s"),
            ("//dev/stdin", "/dev/stdin"),
            ("/dev/./stdin", "/dev/stdin"),
            ("/dev/../dev/stdin", "/dev/stdin"),
            ("/..", "/"),
            (".", "."),
        ] {
            assert_eq!(plain_path(written), plain, "{written}");
        }
        for descriptor in [
            "//dev/stdin",
            "/dev//stdin",
            "/dev/./stdin",
            "/dev/../dev/stdin",
            "/dev//fd/0",
        ] {
            assert!(programs::is_descriptor_path(descriptor), "{descriptor}");
        }
    }

    #[test]
    fn arithmetic_names_and_assignments() {
        let names = arithmetic_names("i++ + n * $x - ${y} + 0x1F + $1 + a[j] + k=3");
        let plain: Vec<(&str, bool)> = names.iter().map(|(n, a)| (n.as_str(), *a)).collect();
        assert_eq!(
            plain,
            [
                ("i", true),
                ("n", false),
                ("x", false),
                ("y", false),
                ("1", false),
                ("a", false),
                ("j", false),
                ("k", true)
            ]
        );
    }
}
