//! Which program a simple command runs, past assignments, keywords and
//! wrappers (`sudo`, `env`, `nohup`, `timeout`, `xargs`, `su -c`, …).
//!
//! Each wrapper's options are read the way its own option parser reads
//! them: clustered short options, values attached or separate, `--`, and
//! GNU long options by any unambiguous prefix. An option the table does not
//! know makes the command unreadable: the filter cannot tell where the
//! wrapped command starts, so it refuses rather than guess.

use super::words::Word;

/// What a simple command runs.
#[derive(Debug)]
pub(crate) enum Resolved<'a> {
    /// A program, with its arguments.
    Runs(Command<'a>),
    /// A wrapper runs this shell text (`su -c TEXT`, `watch TEXT`).
    Script(Word),
    /// The filter cannot tell what runs; the text says why.
    Unreadable(String),
    /// Nothing runs but the shell's own work (assignments, a bare wrapper).
    Nothing,
}

/// The program a simple command runs.
#[derive(Debug)]
pub(crate) struct Command<'a> {
    /// Its name, without directories.
    pub name: String,
    /// The index of its word in the segment's words.
    pub at: usize,
    /// Its arguments.
    pub args: &'a [Word],
    /// Whether a wrapper (`xargs`) appends arguments read from data.
    pub via_data: bool,
}

/// Words that start a compound command rather than name a program.
pub(crate) const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
    "esac", "select", "function", "!", "{", "}", "[[", "]]", "coproc",
];

/// How a wrapper reads its options and finds the command it runs.
struct Spec {
    /// Short options without a value.
    flags: &'static str,
    /// Short options with a value (attached or the next word).
    valued: &'static str,
    /// Long options without a value (an `=value` is accepted too).
    long_flags: &'static [&'static str],
    /// Long options with a value (`--name=value` or the next word).
    long_valued: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `flock FILE`).
    positionals: usize,
    /// How the command is given.
    then: Then,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Then {
    /// The rest of the words are the command.
    Argv,
    /// The rest of the words are the command, and more arguments come
    /// from data (`xargs`).
    Data,
    /// The rest of the words, joined by spaces, are shell text (`watch`).
    Joined,
    /// `NAME=value` operands, then the command (`env`).
    Env,
}

const fn spec(flags: &'static str, valued: &'static str) -> Spec {
    Spec {
        flags,
        valued,
        long_flags: &[],
        long_valued: &[],
        positionals: 0,
        then: Then::Argv,
    }
}

/// The wrappers the filter sees through, and how each reads its options.
fn wrapper(name: &str) -> Option<Spec> {
    Some(match name {
        "sudo" => Spec {
            long_flags: &[
                "askpass",
                "background",
                "bell",
                "preserve-env",
                "help",
                "set-home",
                "login",
                "remove-timestamp",
                "reset-timestamp",
                "non-interactive",
                "preserve-groups",
                "stdin",
                "shell",
                "version",
            ],
            long_valued: &[
                "close-from",
                "chdir",
                "group",
                "host",
                "prompt",
                "chroot",
                "role",
                "type",
                "command-timeout",
                "other-user",
                "user",
            ],
            ..spec("AbEHKknPSsiBN", "ugChprtTUDR")
        },
        "doas" => spec("ns", "uC"),
        "env" => Spec {
            long_flags: &["ignore-environment", "null", "debug"],
            long_valued: &["unset", "chdir"],
            then: Then::Env,
            ..spec("i0v", "uC")
        },
        "nice" => Spec {
            long_valued: &["adjustment"],
            ..spec("0123456789", "n")
        },
        "nohup" | "builtin" | "busybox" | "toybox" | "catchsegv" => spec("", ""),
        // `-v` and `-V` only describe the command; checking it as if it ran
        // is the safe side.
        "command" => spec("pvV", ""),
        "exec" => spec("cl", "a"),
        "time" => Spec {
            long_flags: &["portability", "verbose", "quiet", "append"],
            long_valued: &["format", "output"],
            ..spec("pvqa", "fo")
        },
        "setsid" => Spec {
            long_flags: &["ctty", "fork", "wait"],
            ..spec("cfw", "")
        },
        "timeout" => Spec {
            long_flags: &["preserve-status", "foreground", "verbose"],
            long_valued: &["signal", "kill-after"],
            positionals: 1,
            ..spec("v", "sk")
        },
        "stdbuf" => Spec {
            long_valued: &["input", "output", "error"],
            ..spec("", "ioe")
        },
        "ionice" => Spec {
            long_flags: &["ignore"],
            long_valued: &["class", "classdata", "pid", "pgid", "uid"],
            ..spec("t", "cnpPu")
        },
        "taskset" => Spec {
            long_flags: &["all-tasks", "cpu-list"],
            positionals: 1,
            ..spec("ac", "")
        },
        "chrt" => Spec {
            long_flags: &[
                "all-tasks",
                "batch",
                "deadline",
                "fifo",
                "idle",
                "other",
                "rr",
                "reset-on-fork",
                "max",
                "verbose",
            ],
            long_valued: &["sched-runtime", "sched-period", "sched-deadline"],
            positionals: 1,
            ..spec("abdfiormRv", "TPD")
        },
        "flock" => Spec {
            long_flags: &[
                "shared",
                "exclusive",
                "unlock",
                "nonblock",
                "close",
                "no-fork",
                "verbose",
            ],
            long_valued: &["timeout", "wait", "conflict-exit-code"],
            positionals: 1,
            ..spec("sxeunoFv", "wE")
        },
        "xargs" => Spec {
            long_flags: &[
                "null",
                "no-run-if-empty",
                "verbose",
                "interactive",
                "exit",
                "open-tty",
                "show-limits",
            ],
            long_valued: &[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "replace",
                "max-lines",
                "max-chars",
                "eof",
                "process-slot-var",
            ],
            then: Then::Data,
            ..spec("0rtpxoile", "InPdLsEa")
        },
        "chroot" => Spec {
            long_flags: &["skip-chdir"],
            long_valued: &["userspec", "groups"],
            positionals: 1,
            ..spec("", "")
        },
        "watch" => Spec {
            long_flags: &[
                "beep",
                "color",
                "no-color",
                "differences",
                "errexit",
                "chgexit",
                "equexit",
                "precise",
                "no-title",
                "no-wrap",
                "no-linewrap",
            ],
            long_valued: &["interval", "equexit"],
            then: Then::Joined,
            ..spec("bcCdegptw", "nq")
        },
        "unbuffer" => spec("p", ""),
        "chronic" => spec("ev", ""),
        _ => return None,
    })
}

/// Programs that run commands in ways the filter does not model (their
/// own command language, a service manager, a debugger); refused outright.
const OPAQUE_RUNNERS: &[&str] = &[
    "tmux",
    "screen",
    "expect",
    "at",
    "batch",
    "crontab",
    "systemd-run",
    "parallel",
    "gdb",
    "strace",
    "ltrace",
    "valgrind",
    "unshare",
    "nsenter",
    "setpriv",
    "prlimit",
    "firejail",
    "bwrap",
    "fakeroot",
    "proot",
    "pkexec",
    "rlwrap",
    "dbus-run-session",
    "xvfb-run",
    "newgrp",
    "perf",
    "tsp",
];

/// Whether `word` assigns a shell variable (`NAME=value`, `a[i]=v`).
pub(crate) fn is_assignment(word: &Word) -> bool {
    let Some((name, _)) = word.text.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let name = match name.split_once('[') {
        Some((base, subscript)) if subscript.ends_with(']') => base,
        Some(_) => return false,
        None => name,
    };
    !word.expanded_start
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The last path component of a program name.
pub(crate) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// What `words` runs.
pub(crate) fn resolve(words: &[Word]) -> Resolved<'_> {
    resolve_from(words, 0, false)
}

fn resolve_from(words: &[Word], mut i: usize, mut via_data: bool) -> Resolved<'_> {
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        // `case WORD in`, `for NAME in …`: a compound command's header,
        // whose words are data (the loop variable is noted elsewhere).
        if !word.uncertain() && matches!(text, "case" | "for" | "select") {
            return Resolved::Nothing;
        }
        // `function NAME { …`: the name is defined, not run; so is
        // `coproc NAME {` (or `(`, or a keyword) — the body runs.
        let names_next = !word.uncertain()
            && (text == "function"
                || (text == "coproc"
                    && words.get(i + 2).is_some_and(|after| {
                        !after.uncertain()
                            && (matches!(after.text.as_str(), "{" | "(" | "((")
                                || KEYWORDS.contains(&after.text.as_str()))
                    })));
        if names_next {
            i += 2;
            continue;
        }
        if is_assignment(word) || (!word.uncertain() && KEYWORDS.contains(&text)) {
            i += 1;
            continue;
        }
        if word.uncertain() {
            return Resolved::Unreadable(format!(
                "the command name `{text}` is only known when it runs (an expansion, a glob or \
                 a brace expansion), so it cannot be checked"
            ));
        }
        let name = basename(text);
        if via_data
            && (wrapper(name).is_some() || matches!(name, "su" | "runuser" | "script" | "sg"))
        {
            return Resolved::Unreadable(format!(
                "`xargs` appends data to `{name}`, which may make it run a command the filter \
                 cannot see"
            ));
        }
        if OPAQUE_RUNNERS.contains(&name) {
            return Resolved::Unreadable(format!(
                "`{name}` runs commands in a way the filter does not read; run the command \
                 directly"
            ));
        }
        match name {
            "su" | "runuser" => return switch_user(name, &words[i + 1..], words, i),
            "script" => return script(&words[i + 1..]),
            "sg" => return sg(&words[i + 1..]),
            "env" if words[i + 1..].iter().any(|w| split_string(&w.text)) => {
                return Resolved::Unreadable(
                    "`env -S` splits a string into a command by its own rules, which the \
                     filter does not read; write the command directly"
                        .into(),
                );
            }
            "flock"
                if words[i + 1..]
                    .iter()
                    .any(|w| w.text == "-c" || long_is(&w.text, "command", 3)) =>
            {
                return flock_script(&words[i + 1..]);
            }
            _ => {}
        }
        let Some(spec) = wrapper(name) else {
            return Resolved::Runs(Command {
                name: name.to_owned(),
                at: i,
                args: &words[i + 1..],
                via_data,
            });
        };
        i += 1;
        match options(name, &spec, words, &mut i) {
            Ok(()) => {}
            Err(reason) => return Resolved::Unreadable(reason),
        }
        if spec.then == Then::Env {
            // env takes every word with `=` before the command as a variable.
            while words
                .get(i)
                .is_some_and(|w| w.text.contains('=') && !w.expanded_start)
            {
                i += 1;
            }
        }
        let mut skipped = 0;
        while skipped < spec.positionals && i < words.len() {
            i += 1;
            skipped += 1;
        }
        if i >= words.len() {
            return Resolved::Nothing;
        }
        match spec.then {
            Then::Joined => {
                let exec_form = words
                    .iter()
                    .any(|w| w.text == "-x" || long_is(&w.text, "exec", 3));
                if !exec_form {
                    return Resolved::Script(join(&words[i..]));
                }
            }
            Then::Data => via_data = true,
            Then::Argv | Then::Env => {}
        }
    }
    Resolved::Nothing
}

/// Read a wrapper's options from `words[*i..]`, leaving `i` at its first
/// operand.
fn options(name: &str, spec: &Spec, words: &[Word], i: &mut usize) -> Result<(), String> {
    let unknown = |option: &str| {
        format!(
            "`{name}` is given an option the filter does not know (`{option}`), so it cannot \
             tell which command runs"
        )
    };
    while let Some(word) = words.get(*i) {
        let text = word.text.as_str();
        if word.expanded_start {
            return Err(format!(
                "`{name}` is given `{text}`, which is only known when it runs and may be an \
                 option or the command"
            ));
        }
        if text == "--" {
            *i += 1;
            return Ok(());
        }
        if name == "env" && text == "-" {
            *i += 1;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (key, value) = match long.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (long, None),
            };
            match long_option(key, spec) {
                Some(true) => *i += if value.is_some() { 1 } else { 2 },
                Some(false) => *i += 1,
                None => return Err(unknown(text)),
            }
            continue;
        }
        let Some(letters) = text.strip_prefix('-').filter(|l| !l.is_empty()) else {
            return Ok(());
        };
        *i += 1;
        for (at, letter) in letters.char_indices() {
            if spec.valued.contains(letter) {
                if at + letter.len_utf8() == letters.len() {
                    *i += 1;
                }
                break;
            }
            if !spec.flags.contains(letter) {
                return Err(unknown(text));
            }
        }
    }
    Ok(())
}

/// Whether a long option (by its name or an unambiguous prefix of it) takes
/// a value: `Some(true)`, `Some(false)`, or `None` when it is unknown or
/// ambiguous.
fn long_option(key: &str, spec: &Spec) -> Option<bool> {
    let exact_valued = spec.long_valued.contains(&key);
    if exact_valued || spec.long_flags.contains(&key) {
        return Some(exact_valued);
    }
    let valued = spec
        .long_valued
        .iter()
        .filter(|o| !key.is_empty() && o.starts_with(key));
    let flags = spec
        .long_flags
        .iter()
        .filter(|o| !key.is_empty() && o.starts_with(key));
    match (valued.count(), flags.count()) {
        (1, 0) => Some(true),
        (0, 1) => Some(false),
        _ => None,
    }
}

/// Whether `arg` is the GNU long option `--name` (or `--name=…`), spelled
/// in full or by a prefix of at least `min` characters after the dashes.
pub(crate) fn long_is(arg: &str, name: &str, min: usize) -> bool {
    let Some(long) = arg.strip_prefix("--") else {
        return false;
    };
    let key = long.split_once('=').map_or(long, |(k, _)| k);
    key.len() >= min.min(name.len()) && name.starts_with(key)
}

/// `env -S`, `-S…`, `-iS…`, `--split-string`: env's own string splitting.
fn split_string(arg: &str) -> bool {
    if long_is(arg, "split-string", 1) {
        return true;
    }
    arg.strip_prefix('-').is_some_and(|l| {
        !l.starts_with('-')
            && l.chars()
                .take_while(|c| *c != 'u' && *c != 'C')
                .any(|c| c == 'S')
    })
}

/// The words joined by spaces, as a shell would read them again.
fn join(words: &[Word]) -> Word {
    let text = words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    Word {
        dynamic: words.iter().any(Word::uncertain),
        expanded_start: words.first().is_some_and(|w| w.expanded_start),
        ..Word::literal(&text)
    }
}

/// `su` and `runuser`: `-c TEXT` (anywhere: their parser permutes) runs
/// shell text; `runuser -u USER CMD…` runs a command; arguments after the
/// user otherwise go to the user's shell, which the filter cannot follow.
fn switch_user<'a>(name: &str, args: &'a [Word], words: &'a [Word], at: usize) -> Resolved<'a> {
    const VALUED: &[&str] = &[
        "command",
        "session-command",
        "shell",
        "group",
        "supp-group",
        "whitelist-environment",
        "user",
    ];
    const FLAGS: &[&str] = &["login", "preserve-environment", "pty", "fast", "help"];
    let mut script = None;
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if word.expanded_start {
            return Resolved::Unreadable(format!(
                "`{name}` is given `{text}`, which is only known when it runs"
            ));
        }
        if text == "--" {
            operands.extend(args[i + 1..].iter());
            break;
        }
        if text == "-" {
            i += 1;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (key, value) = long
                .split_once('=')
                .map_or((long, None), |(k, v)| (k, Some(v)));
            let full = VALUED
                .iter()
                .chain(FLAGS)
                .filter(|o| !key.is_empty() && o.starts_with(key))
                .collect::<Vec<_>>();
            let [full] = full.as_slice() else {
                return Resolved::Unreadable(format!(
                    "`{name}` is given an option the filter does not know (`{text}`)"
                ));
            };
            let takes_value = VALUED.contains(full);
            let value_word = if takes_value && value.is_none() {
                i += 1;
                args.get(i).cloned()
            } else {
                value.map(Word::literal)
            };
            if matches!(**full, "command" | "session-command") {
                script = value_word;
            } else if **full == "user" && name == "runuser" {
                return runuser_command(args, i + 1, words, at);
            }
            i += 1;
            continue;
        }
        if let Some(letters) = text.strip_prefix('-') {
            for (pos, letter) in letters.char_indices() {
                match letter {
                    'c' | 's' | 'g' | 'G' | 'w' | 'C' | 'u' => {
                        let rest = &letters[pos + 1..];
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i).cloned()
                        } else {
                            Some(Word::literal(rest))
                        };
                        if letter == 'c' {
                            script = value;
                        } else if letter == 'u' && name == "runuser" {
                            return runuser_command(args, i + 1, words, at);
                        } else if letter == 's'
                            && !value.as_ref().is_some_and(|v| {
                                !v.uncertain() && SHELLS.contains(&basename(&v.text))
                            })
                        {
                            return Resolved::Unreadable(format!(
                                "`{name} -s` runs a program the filter does not read as a shell"
                            ));
                        }
                        break;
                    }
                    'l' | 'm' | 'p' | 'P' | 'f' => {}
                    _ => {
                        return Resolved::Unreadable(format!(
                            "`{name}` is given an option the filter does not know (`{text}`)"
                        ));
                    }
                }
            }
            i += 1;
            continue;
        }
        operands.push(word);
        i += 1;
    }
    match script {
        Some(script) => Resolved::Script(script),
        None if operands.len() > 1 => Resolved::Unreadable(format!(
            "`{name}` passes arguments to the user's shell, which the filter cannot follow; use \
             `{name} -c 'command'`"
        )),
        None => Resolved::Nothing,
    }
}

/// `runuser -u USER [--] CMD…`: the words after the user name.
fn runuser_command<'a>(
    args: &'a [Word],
    next: usize,
    words: &'a [Word],
    at: usize,
) -> Resolved<'a> {
    let mut i = next;
    if args.get(i).is_some_and(|w| w.text == "--") {
        i += 1;
    }
    let start = at + 1 + i;
    if start >= words.len() {
        return Resolved::Nothing;
    }
    resolve_from(words, start, false)
}

/// `script [options] [file]`: `-c TEXT` runs shell text; without it the
/// shell it starts reads the (empty) standard input.
fn script(args: &[Word]) -> Resolved<'_> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if word.expanded_start {
            return Resolved::Unreadable(format!(
                "`script` is given `{text}`, which is only known when it runs"
            ));
        }
        if text == "--" {
            break;
        }
        if long_is(text, "command", 1) {
            return match text.split_once('=') {
                Some((_, v)) => Resolved::Script(Word::literal(v)),
                None => args
                    .get(i + 1)
                    .cloned()
                    .map_or(Resolved::Nothing, Resolved::Script),
            };
        }
        if let Some(letters) = text.strip_prefix('-').filter(|l| !l.starts_with('-'))
            && let Some(pos) = letters.find('c')
        {
            let rest = &letters[pos + 1..];
            return if rest.is_empty() {
                args.get(i + 1)
                    .cloned()
                    .map_or(Resolved::Nothing, Resolved::Script)
            } else {
                Resolved::Script(Word::literal(rest))
            };
        }
        i += 1;
    }
    Resolved::Nothing
}

/// `sg GROUP [-c] TEXT`: the text runs in `/bin/sh`.
fn sg(args: &[Word]) -> Resolved<'_> {
    let mut rest = args.get(1..).unwrap_or_default();
    if rest.first().is_some_and(|w| w.text == "-c") {
        rest = &rest[1..];
    }
    if rest.is_empty() {
        Resolved::Nothing
    } else {
        Resolved::Script(join(rest))
    }
}

/// `flock [options] FILE -c TEXT`.
fn flock_script(args: &[Word]) -> Resolved<'_> {
    let at = args
        .iter()
        .position(|w| w.text == "-c" || long_is(&w.text, "command", 3));
    match at {
        Some(at) => match args[at].text.split_once('=') {
            Some((_, v)) if args[at].text.starts_with("--") => Resolved::Script(Word::literal(v)),
            _ => args
                .get(at + 1)
                .cloned()
                .map_or(Resolved::Nothing, Resolved::Script),
        },
        None => Resolved::Nothing,
    }
}

/// Shells whose `-c` text and scripts the filter follows.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "posh",
    "rbash", "ksh93", "pdksh", "oksh", "loksh",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::words::parse;

    fn resolved(command: &str) -> String {
        let parsed = parse(command);
        match resolve(&parsed.segments[0].words) {
            Resolved::Runs(c) => format!("runs {} {}", c.name, c.args.len()),
            Resolved::Script(w) => format!("script {}", w.text),
            Resolved::Unreadable(_) => "unreadable".into(),
            Resolved::Nothing => "nothing".into(),
        }
    }

    #[test]
    fn wrappers_are_read_by_their_own_option_rules() {
        assert_eq!(resolved("sudo -u root rm -rf x"), "runs rm 2");
        assert_eq!(resolved("sudo -uroot -- rm x"), "runs rm 1");
        assert_eq!(resolved("env -i -- A=1 rm x"), "runs rm 1");
        assert_eq!(resolved("env --unset=X rm x"), "runs rm 1");
        assert_eq!(resolved("env --uns X rm x"), "runs rm 1");
        assert_eq!(resolved("env -S 'rm x'"), "unreadable");
        assert_eq!(resolved("env -iS'rm x'"), "unreadable");
        assert_eq!(resolved("env --split 'rm x'"), "unreadable");
        assert_eq!(resolved("timeout -s KILL 5 rm x"), "runs rm 1");
        assert_eq!(resolved("nice -5 rm x"), "runs rm 1");
        assert_eq!(resolved("sudo -Z rm x"), "unreadable");
        assert_eq!(resolved("su -c 'rm x' root"), "script rm x");
        assert_eq!(resolved("su root -c 'rm x'"), "script rm x");
        assert_eq!(resolved("su --comm='rm x'"), "script rm x");
        assert_eq!(resolved("runuser -u nobody -- rm x"), "runs rm 1");
        assert_eq!(resolved("su root x.sh"), "unreadable");
        assert_eq!(resolved("script -qc 'rm x' /dev/null"), "script rm x");
        assert_eq!(resolved("watch -n 1 rm x"), "script rm x");
        assert_eq!(resolved("exec -a name rm x"), "runs rm 1");
        assert_eq!(resolved("time -p rm x"), "runs rm 1");
        assert_eq!(resolved("flock f -c 'rm x'"), "script rm x");
        assert_eq!(resolved("r{m,} x"), "unreadable");
        assert_eq!(resolved("/bin/r? x"), "unreadable");
        assert_eq!(resolved("sudo $OPT rm x"), "unreadable");
        assert_eq!(resolved("tmux new -d 'rm x'"), "unreadable");
        assert_eq!(resolved("A=1 B=2"), "nothing");
    }
}
