//! What particular programs do with their arguments: which run code given
//! inline (interpreters), which options make a program run a command (`sed`'s
//! `e`, `awk`'s `system`, `git -c core.pager=…`, `tar --to-command`), and
//! which environment variables make a program load or run code.
//!
//! Each check answers `Some(reason)` when the program would run something
//! the filter cannot read.

use super::words::Word;
use super::wrappers::long_is;

/// Interpreters of languages other than the shell: their code is not read.
pub(crate) fn is_interpreter(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "perl",
        "ruby",
        "irb",
        "node",
        "nodejs",
        "deno",
        "bun",
        "php",
        "lua",
        "luajit",
        "tclsh",
        "wish",
        "Rscript",
        "R",
        "julia",
        "pwsh",
        "powershell",
        "osascript",
        "jshell",
        "groovy",
        "scala",
        "guile",
        "racket",
        "sbcl",
        "clisp",
        "ghci",
        "runghc",
        "elixir",
        "escript",
        "erl",
        "dc",
        "gdb",
        "jjs",
        "rhino",
        "qjs",
        "swipl",
        "ocaml",
        "pypy",
        "pypy3",
    ];
    NAMES.contains(&name)
        || name
            .strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        || name
            .strip_prefix("perl")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// How an interpreter invocation gets its code.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Code {
    /// Inline, from standard input, a descriptor or a process substitution.
    Unread(&'static str),
    /// From a script file named by this word.
    File(Word),
    /// It does not run code (`--version`, no input).
    None,
}

/// Where `args` of an interpreter take its code from; `fed` says whether its
/// standard input carries data.
pub(crate) fn interpreter_code(args: &[Word], fed: bool) -> Code {
    for (i, arg) in args.iter().enumerate() {
        let text = arg.text.as_str();
        if arg.expanded_start {
            return Code::Unread("an argument only known when it runs");
        }
        if text == "-" || is_descriptor_path(text) {
            return Code::Unread("code read from standard input or a descriptor");
        }
        if arg.dynamic && text.starts_with("<(") {
            return Code::Unread("code from a process substitution");
        }
        if let Some(long) = text.strip_prefix("--") {
            if ["eval", "print", "command", "expression", "execute"]
                .iter()
                .any(|o| long_is(text, o, 2))
                || long.is_empty()
            {
                if long.is_empty() {
                    // `--`: the next word is the script.
                    return args
                        .get(i + 1)
                        .map_or(Code::None, |w| Code::File(w.clone()));
                }
                return Code::Unread("inline code");
            }
            continue;
        }
        if let Some(letters) = text.strip_prefix('-') {
            // -c (python, pwsh), -e/-E (perl, ruby, node, lua, julia, dc),
            // -r (php), -p (node --print), -x (gdb).
            if letters
                .chars()
                .any(|c| matches!(c, 'c' | 'e' | 'E' | 'r' | 'p' | 'x'))
                || letters.eq_ignore_ascii_case("command")
            {
                return Code::Unread("inline code");
            }
            continue;
        }
        return Code::File(arg.clone());
    }
    if fed {
        Code::Unread("code read from standard input")
    } else {
        Code::None
    }
}

/// `/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N` and the like: a script
/// read from a descriptor.
pub(crate) fn is_descriptor_path(text: &str) -> bool {
    // The kernel reads `//dev/stdin`, `/dev/./stdin` and `/dev/../dev/stdin`
    // as `/dev/stdin`: compare the path as written and as resolved.
    [text.to_owned(), lexical_path(text)].iter().any(|text| {
        text == "/dev/stdin"
            || text.starts_with("/dev/fd/")
            || (text.starts_with("/proc/") && text.contains("/fd/"))
    })
}

/// `path` with repeated slashes collapsed, `.` left out and `..` taken
/// back where a name precedes it, as the kernel reads it when no link is
/// in the way: `.//s` is `s`, `/dev/../dev/stdin` is `/dev/stdin`.
pub(crate) fn lexical_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                // `/..` is `/`; a relative path keeps its leading `..`.
                _ if absolute => {}
                _ => parts.push(".."),
            },
            name => parts.push(name),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// Environment variables that make programs load or run code named in
/// their value.
pub(crate) fn runs_code_from_env(name: &str) -> bool {
    const NAMES: &[&str] = &[
        // bash's command hash table and alias table: a name in them runs
        // whatever path or text the assignment gave.
        "BASH_CMDS",
        "BASH_ALIASES",
        // `fc` runs its editor on the history.
        "FCEDIT",
        "BASH_ENV",
        "ENV",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "CDPATH",
        "GLOBIGNORE",
        "GCONV_PATH",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "PERL5DB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PAGER",
        "MANPAGER",
        "SYSTEMD_PAGER",
        "EDITOR",
        "VISUAL",
        "LESSOPEN",
        "LESSCLOSE",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "TAR_OPTIONS",
        "ZIPOPT",
        "UNZIP",
        "MAKEFLAGS",
        "GNUMAKEFLAGS",
    ];
    NAMES.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("BASH_FUNC_")
        || name.starts_with("DYLD_")
        || (name.starts_with("GIT_")
            && [
                "SSH",
                "EDITOR",
                "PAGER",
                "EXTERNAL_DIFF",
                "ASKPASS",
                "EXEC_PATH",
                "TEMPLATE_DIR",
                "PROXY_COMMAND",
                "CONFIG",
                "SEQUENCE_EDITOR",
                "DIFF_OPTS",
            ]
            .iter()
            .any(|part| name[4..].starts_with(part)))
}

/// `sed` scripts: the `e` command and `s///e` run shell code; `w`, `W`,
/// `s///w`, `r` and `R` write or read files the filter does not check.
pub(crate) fn sed(args: &[Word]) -> Option<String> {
    let mut scripts: Vec<Word> = Vec::new();
    let mut operand_script = true;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if text == "--" {
            if operand_script {
                scripts.extend(args.get(i + 1).cloned());
            }
            break;
        }
        if long_is(text, "expression", 1) {
            operand_script = false;
            match text.split_once('=') {
                Some((_, v)) => scripts.push(Word::literal(v)),
                None => {
                    scripts.extend(args.get(i + 1).cloned());
                    i += 1;
                }
            }
        } else if long_is(text, "file", 1) {
            operand_script = false;
            let value = match text.split_once('=') {
                Some((_, v)) => Some(Word::literal(v)),
                None => {
                    i += 1;
                    args.get(i).cloned()
                }
            };
            if let Some(reason) = script_file("sed", value.as_ref()) {
                return Some(reason);
            }
        } else if let Some(letters) = text
            .strip_prefix('-')
            .filter(|l| !l.starts_with('-') && !l.is_empty())
        {
            for (pos, letter) in letters.char_indices() {
                match letter {
                    'e' | 'f' => {
                        operand_script = false;
                        let rest = &letters[pos + 1..];
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i).cloned()
                        } else {
                            Some(Word::literal(rest))
                        };
                        if letter == 'e' {
                            scripts.extend(value);
                        } else if let Some(reason) = script_file("sed", value.as_ref()) {
                            return Some(reason);
                        }
                        break;
                    }
                    'l' => {
                        if pos + 1 == letters.len() {
                            i += 1;
                        }
                        break;
                    }
                    _ => {}
                }
            }
        } else if !text.starts_with('-') && operand_script {
            scripts.push(arg.clone());
            operand_script = false;
        }
        i += 1;
    }
    for script in &scripts {
        if script.uncertain() {
            return Some(format!(
                "the sed script `{}` is only known when it runs, and sed scripts can run \
                 commands (`e`) and write files (`w`)",
                script.text
            ));
        }
        if let Some(reason) = sed_script(&script.text) {
            return Some(reason);
        }
    }
    None
}

/// A program file given with `-f`: refused when it is read from standard
/// input, a descriptor, or a name only known at run time.
fn script_file(program: &str, file: Option<&Word>) -> Option<String> {
    let file = file?;
    (file.uncertain() || file.text == "-" || is_descriptor_path(&file.text)).then(|| {
        format!(
            "`{program} -f {}` reads its program from a place the filter cannot read",
            file.text
        )
    })
}

/// Scan one sed script for the commands that run or write.
fn sed_script(script: &str) -> Option<String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let refuse = |what: &str| Some(format!("the sed script `{script}` {what}"));
    while i < chars.len() {
        // Skip separators and addresses.
        while i < chars.len() && (chars[i].is_whitespace() || matches!(chars[i], ';' | '{' | '}')) {
            i += 1;
        }
        loop {
            match chars.get(i) {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '!' | '~' | '+' | ' ') => {
                    i += 1
                }
                Some('/') => i = skip_delimited(&chars, i + 1, '/'),
                Some('\\') => match chars.get(i + 1) {
                    Some(&d) => i = skip_delimited(&chars, i + 2, d),
                    None => i += 1,
                },
                _ => break,
            }
        }
        let Some(&command) = chars.get(i) else {
            break;
        };
        i += 1;
        match command {
            'e' => return refuse("runs a shell command (`e`)"),
            'w' | 'W' => return refuse("writes to a file (`w`)"),
            'r' | 'R' => return refuse("reads a file the filter does not check (`r`)"),
            's' | 'y' => {
                let Some(&delimiter) = chars.get(i) else {
                    break;
                };
                i = skip_delimited(&chars, i + 1, delimiter);
                i = skip_delimited(&chars, i, delimiter);
                if command == 's' {
                    while let Some(&flag) = chars.get(i) {
                        if matches!(flag, ';' | '\n' | '}') {
                            break;
                        }
                        match flag {
                            'e' => return refuse("runs its result as a shell command (`s///e`)"),
                            'w' => return refuse("writes to a file (`s///w`)"),
                            _ => i += 1,
                        }
                    }
                }
            }
            'a' | 'i' | 'c' | 'b' | 't' | 'T' | ':' | 'q' | 'Q' | 'l' | 'L' => {
                // Text or a label to the end of the line (or of the command).
                while i < chars.len()
                    && chars[i] != '\n'
                    && !(command != 'a' && command != 'i' && command != 'c' && chars[i] == ';')
                {
                    i += 1;
                }
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            other => return refuse(&format!("uses `{other}`, which the filter does not read")),
        }
    }
    None
}

/// The index after the next unescaped `delimiter` from `i`.
fn skip_delimited(chars: &[char], mut i: usize, delimiter: char) -> usize {
    while i < chars.len() {
        if chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == delimiter {
            return i + 1;
        }
        i += 1;
    }
    i
}

/// `awk` programs: `system()`, pipes to and from commands, `print > file`
/// and loaded extensions run or write what the filter cannot read.
pub(crate) fn awk(args: &[Word]) -> Option<String> {
    let mut program = None;
    let mut from_file = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if text == "--" {
            program = program.or_else(|| args.get(i + 1).cloned());
            break;
        }
        if text.starts_with("--") {
            if ["load", "include", "exec", "source"]
                .iter()
                .any(|o| long_is(text, o, 2))
            {
                return Some(format!("`awk {text}` loads code the filter does not read"));
            }
            if long_is(text, "file", 2) {
                from_file = true;
                let value = match text.split_once('=') {
                    Some((_, v)) => Some(Word::literal(v)),
                    None => args.get(i + 1).cloned(),
                };
                if let Some(reason) = script_file("awk", value.as_ref()) {
                    return Some(reason);
                }
            }
            if !text.contains('=')
                && ["assign", "field-separator", "file"]
                    .iter()
                    .any(|o| long_is(text, o, 2))
            {
                i += 1;
            }
        } else if let Some(letters) = text.strip_prefix('-').filter(|l| !l.is_empty()) {
            match letters.chars().next() {
                Some('l' | 'i' | 'e' | 'E') => {
                    return Some(format!("`awk {text}` loads code the filter does not read"));
                }
                Some('f') => {
                    from_file = true;
                    let value = if letters.len() == 1 {
                        i += 1;
                        args.get(i).cloned()
                    } else {
                        Some(Word::literal(&letters[1..]))
                    };
                    if let Some(reason) = script_file("awk", value.as_ref()) {
                        return Some(reason);
                    }
                }
                Some('v' | 'F') if letters.len() == 1 => i += 1,
                _ => {}
            }
        } else {
            if !from_file {
                program = Some(arg.clone());
            }
            break;
        }
        i += 1;
    }
    let program = program?;
    if program.uncertain() {
        return Some(format!(
            "the awk program `{}` is only known when it runs",
            program.text
        ));
    }
    awk_program(&program.text)
}

fn awk_program(program: &str) -> Option<String> {
    let refuse = |what: &str| Some(format!("the awk program `{program}` {what}"));
    let code = strip_awk_strings(program);
    if code.contains("system") || code.contains("@load") {
        return refuse("runs a command (`system`)");
    }
    if code.contains("getline") {
        return refuse("reads from a command or file (`getline`)");
    }
    let bytes = code.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'|' && bytes.get(i + 1) != Some(&b'|') && (i == 0 || bytes[i - 1] != b'|') {
            return refuse("pipes to or from a command (`|`)");
        }
    }
    // `print … > file`: a `>` at paren depth 0 inside a print statement.
    for statement in code.split([';', '\n', '{', '}']) {
        let trimmed = statement.trim_start();
        if trimmed.starts_with("print") {
            let mut depth = 0i32;
            for c in trimmed.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    '>' if depth <= 0 => return refuse("writes to a file (`print >`)"),
                    _ => {}
                }
            }
        }
    }
    None
}

/// The program with string literals emptied and regex literals kept (a `|`
/// in `/a|b/` is alternation, not a pipe).
fn strip_awk_strings(program: &str) -> String {
    let mut out = String::new();
    let mut chars = program.chars().peekable();
    let mut last_significant = ' ';
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str("\"\"");
                last_significant = '"';
            }
            '/' if matches!(
                last_significant,
                ' ' | '(' | ',' | '~' | '!' | '&' | '|' | '{' | ';' | '\n'
            ) =>
            {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '/' => break,
                        _ => {}
                    }
                }
                out.push_str("//");
                last_significant = '/';
            }
            _ => {
                out.push(c);
                if !c.is_whitespace() {
                    last_significant = c;
                }
            }
        }
    }
    out
}

/// `git`: configuration that names a command (`-c core.pager=…`,
/// `git config alias.x '!…'`), and subcommands that run shell text.
pub(crate) fn git(args: &[Word]) -> Option<String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if arg.expanded_start {
            return Some(format!(
                "`git` is given `{text}`, which is only known when it runs"
            ));
        }
        if text == "-c" || long_is(text, "config-env", 8) {
            let setting = match text.split_once('=') {
                Some((_, v)) if text.starts_with("--") => Some(Word::literal(v)),
                _ => {
                    i += 1;
                    args.get(i).cloned()
                }
            };
            if let Some(setting) = setting {
                let key = setting.text.split('=').next().unwrap_or_default();
                if setting.uncertain() || git_key_runs_code(key) {
                    return Some(format!(
                        "`git -c {}` sets an option that runs a command",
                        setting.text
                    ));
                }
            }
        } else if long_is(text, "exec-path", 6) && text.contains('=') {
            return Some("`git --exec-path` runs programs from another directory".into());
        } else if matches!(text, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
            i += 1;
        } else if !text.starts_with('-') {
            return git_subcommand(text, &args[i + 1..]);
        }
        i += 1;
    }
    None
}

fn git_subcommand(name: &str, rest: &[Word]) -> Option<String> {
    match name {
        "config" => {
            let operands: Vec<&Word> = rest
                .iter()
                .filter(|w| !w.text.starts_with('-') && w.text != "set")
                .collect();
            let key = operands.first()?;
            if operands.len() >= 2 && (key.uncertain() || git_key_runs_code(&key.text)) {
                return Some(format!(
                    "`git config {}` sets an option that runs a command",
                    key.text
                ));
            }
            None
        }
        "submodule" if rest.iter().any(|w| w.text == "foreach") => {
            Some("`git submodule foreach` runs shell text the filter does not follow".into())
        }
        "rebase"
            if rest
                .iter()
                .any(|w| w.text == "-x" || long_is(&w.text, "exec", 3)) =>
        {
            Some("`git rebase --exec` runs shell text the filter does not follow".into())
        }
        "filter-branch" | "bisect" | "difftool" | "mergetool" => Some(format!(
            "`git {name}` runs commands the filter does not follow"
        )),
        _ => None,
    }
}

/// Git configuration keys whose value is a command or a file of code.
fn git_key_runs_code(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let last = key.rsplit('.').next().unwrap_or_default();
    key.starts_with("alias.")
        || key.starts_with("pager.")
        || key.starts_with("include")
        || key.starts_with("credential")
        || key.starts_with("gpg.")
        || key.starts_with("url.")
        || [
            "core.pager",
            "core.editor",
            "core.sshcommand",
            "core.fsmonitor",
            "core.hookspath",
            "core.askpass",
            "core.gitproxy",
            "sequence.editor",
            "diff.external",
            "web.browser",
            "init.templatedir",
            "uploadpack.packobjectshook",
            "protocol.allow",
        ]
        .contains(&key.as_str())
        || [
            "command",
            "cmd",
            "driver",
            "helper",
            "program",
            "textconv",
            "clean",
            "smudge",
            "process",
            "uploadpack",
            "receivepack",
            "proxy",
            "path",
            "editor",
            "pager",
            "sshcommand",
            "tool",
        ]
        .contains(&last)
}

/// `tar` options that run a program, long (by any prefix GNU accepts) or
/// short (`-I`, `-F`, also in the old bundled form `tar xIf`).
pub(crate) fn tar(args: &[Word]) -> Option<String> {
    const LONG: &[&str] = &[
        "to-command",
        "checkpoint-action",
        "use-compress-program",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
        "index-file",
    ];
    for (i, arg) in args.iter().enumerate() {
        let text = arg.text.as_str();
        if text == "--" {
            break;
        }
        if arg.expanded_start {
            return Some(format!(
                "`tar` is given `{text}`, which is only known when it runs"
            ));
        }
        if let Some(option) = LONG.iter().find(|o| long_is(text, o, 3)) {
            return Some(format!(
                "`tar --{option}` runs a program the filter does not read"
            ));
        }
        let bundled = i == 0 && !text.starts_with('-');
        let letters = if bundled {
            Some(text)
        } else {
            text.strip_prefix('-').filter(|l| !l.starts_with('-'))
        };
        if let Some(letters) = letters
            && letters
                .chars()
                .take_while(|c| *c != 'f')
                .any(|c| c == 'I' || c == 'F')
        {
            return Some(format!(
                "`tar {text}` runs a program the filter does not read"
            ));
        }
    }
    None
}

/// Options of other programs that run a command the filter does not read.
pub(crate) fn runs_command_option(name: &str, args: &[Word]) -> Option<String> {
    let has = |short: &[&str], long: &[&str]| {
        args.iter().find(|a| {
            short.iter().any(|s| {
                a.text == *s || (a.text.starts_with(s) && s.len() == 2 && !a.text.starts_with("--"))
            }) || long.iter().any(|l| long_is(&a.text, l, 3))
        })
    };
    let found = match name {
        "zip" => has(&["-TT"], &["unzip-command"]),
        "rsync" => has(&["-e"], &["rsh", "rsync-path"]),
        "ssh" | "scp" | "sftp" => has(&["-o", "-F", "-S", "-D"], &[]),
        "man" => has(&["-P", "-H"], &["pager", "html"]),
        "less" | "more" => args
            .iter()
            .find(|a| a.text.starts_with('+') || a.text.starts_with("-+")),
        "vi" | "vim" | "nvim" | "view" | "vimdiff" | "ex" | "ed" | "emacs" => {
            return Some(format!(
                "`{name}` runs editor commands the filter does not read; edit files with the \
                 file tools"
            ));
        }
        "make" | "gmake" => has(&["-E"], &["eval"]),
        "ps" => {
            // BSD-style `ps e` shows other processes' environments.
            return args
                .iter()
                .find(|a| {
                    !a.text.starts_with('-')
                        && a.text.chars().all(|c| c.is_ascii_alphabetic())
                        && a.text.contains('e')
                })
                .map(|a| format!("`ps {}` shows the environment of other processes", a.text));
        }
        _ => None,
    };
    found.map(|arg| {
        format!(
            "`{name} {}` runs a command the filter does not read",
            arg.text
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts_that_run_or_write_are_found() {
        for bad in [
            "1e ls",
            "s/a/b/e",
            "s|a|b|w out",
            "w out",
            "$!N;e id",
            "/x/ r /etc/passwd",
            "\\,x, e id",
        ] {
            assert!(sed_script(bad).is_some(), "{bad}");
        }
        for good in [
            "s/a/b/g",
            "1,5p",
            "/^#/d",
            "s/e/w/g",
            "y/abc/xyz/",
            "a\\ text with e and w",
            "$d",
            "s/x/y/2;p",
        ] {
            assert_eq!(sed_script(good), None, "{good}");
        }
    }

    #[test]
    fn awk_programs_that_run_or_write_are_found() {
        for bad in [
            "BEGIN{system(\"id\")}",
            "{print | \"sh\"}",
            "BEGIN{\"id\" | getline x}",
            "{print $1 > \"out\"}",
            "{printf \"%s\", $0 >> \"f\"}",
        ] {
            assert!(awk_program(bad).is_some(), "{bad}");
        }
        for good in [
            "{print $1}",
            "$1 > 5 {print}",
            "/a|b/ {n++} END{print n}",
            "{print ($1 > 2)}",
            "$1 || $2",
        ] {
            assert_eq!(awk_program(good), None, "{good}");
        }
    }
}
