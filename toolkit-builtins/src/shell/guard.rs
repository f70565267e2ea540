//! The command filter: decide from the text of a command whether it may run.
//!
//! The checks work on parsed words (see [`words`](super::words)), follow the
//! commands a command runs itself (`sh -c`, `eval`, `$(…)`, `find -exec`,
//! `xargs`, `sudo`, `env`, `nohup`, …) and refuse what they cannot see through
//! (a command name computed at run time, code piped into a shell). A filter
//! cannot see everything a program will do; [`Confinement`](super::Confinement)
//! is the wall behind it.

use std::fmt;

use regex::Regex;

use super::ShellPolicy;
use super::words::{Segment, Word, parse};
use crate::sandbox::{Access, SandboxError, Workspace};

/// Which guard refused a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `rm -r`, `rm --recursive`, `find -delete`, `rmdir /s`, `del /s`.
    RecursiveDelete,
    /// `mkfs`, `fdisk`, `wipefs`, `format` and other disk tools.
    DiskFormat,
    /// Writing to a device file (`dd of=/dev/sda`, `> /dev/nvme0n1`).
    DeviceWrite,
    /// `shutdown`, `reboot`, `poweroff`, `halt`, `init 0`, `systemctl reboot`.
    PowerOff,
    /// A shell function that runs itself twice or in the background.
    ForkBomb,
    /// Writing to a file the policy protects.
    ProtectedFile,
    /// Code the filter cannot read: a computed command name, `eval` of a
    /// variable, a script piped into a shell, nesting too deep.
    OpaqueCode,
    /// One of the host's deny patterns.
    DenyPattern,
    /// Allow-only mode and a segment no allow pattern matches.
    NotAllowed,
    /// A path outside the workspace (`..`, `~`, an absolute path elsewhere).
    OutsideWorkspace,
}

impl Rule {
    /// A short name for messages and logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::RecursiveDelete => "recursive delete",
            Self::DiskFormat => "disk formatting",
            Self::DeviceWrite => "write to a device",
            Self::PowerOff => "power off",
            Self::ForkBomb => "fork bomb",
            Self::ProtectedFile => "protected file",
            Self::OpaqueCode => "unreadable code",
            Self::DenyPattern => "deny pattern",
            Self::NotAllowed => "not on the allow list",
            Self::OutsideWorkspace => "outside the workspace",
        }
    }
}

/// Why a command was refused: the rule and the part of the command it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The guard that refused.
    pub rule: Rule,
    /// What it saw, in words a model can act on.
    pub detail: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the command was refused ({}): {}",
            self.rule.name(),
            self.detail
        )
    }
}

impl std::error::Error for Refusal {}

/// How deep `sh -c`, `eval` and substitutions may nest before the filter
/// gives up and refuses.
const MAX_DEPTH: usize = 8;

impl ShellPolicy {
    /// Check `command` against every guard of this policy. With a
    /// `workspace` and workspace restriction on, paths are checked too.
    ///
    /// This is the filter `exec` runs before anything starts; command tools
    /// defined in configuration call it through
    /// [`run_command`](super::run_command).
    pub fn check_command(
        &self,
        command: &str,
        workspace: Option<&Workspace>,
    ) -> Result<(), Refusal> {
        let mut seen = Seen::default();
        seen.collect(command, 0);
        if let Some(refusal) = seen.refusal.take() {
            return Err(refusal);
        }
        let denied = seen
            .segments
            .iter()
            .find_map(|s| self.builtin_rules(s))
            .or_else(|| self.deny_patterns(command, &seen.segments));
        let all_allowed = !self.allow.is_empty()
            && seen
                .segments
                .iter()
                .all(|s| matches_any(&self.allow, &s.normalized()));
        if let Some(refusal) = denied
            && !all_allowed
        {
            return Err(refusal);
        }
        if self.allow_only && !all_allowed {
            let segment = seen
                .segments
                .iter()
                .map(Segment::normalized)
                .find(|text| !matches_any(&self.allow, text))
                .unwrap_or_default();
            return Err(Refusal {
                rule: Rule::NotAllowed,
                detail: format!("`{segment}` matches no allowed command pattern"),
            });
        }
        if self.restrict_to_workspace
            && let Some(workspace) = workspace
        {
            for segment in &seen.segments {
                check_paths(segment, workspace)?;
            }
        }
        Ok(())
    }

    fn builtin_rules(&self, segment: &Segment) -> Option<Refusal> {
        let refuse = |rule, detail: String| Some(Refusal { rule, detail });
        let text = segment.normalized();
        for redirect in segment.redirects.iter().filter(|r| r.writes()) {
            if is_device(&redirect.target.text) {
                return refuse(
                    Rule::DeviceWrite,
                    format!("`{text}` writes to the device {}", redirect.target.text),
                );
            }
            if self.is_protected(&redirect.target.text) {
                return refuse(
                    Rule::ProtectedFile,
                    format!(
                        "`{text}` writes to the protected file {}",
                        redirect.target.text
                    ),
                );
            }
        }
        let (name, args) = command_of(&segment.words)?;
        let flags = short_flags(args);
        let has_long = |long: &str| args.iter().any(|a| a.text == long);
        match name.as_str() {
            "rm" if flags.contains(['r', 'R']) || has_long("--recursive") => {
                return refuse(
                    Rule::RecursiveDelete,
                    format!("`{text}` deletes recursively"),
                );
            }
            "find" if has_long("-delete") => {
                return refuse(
                    Rule::RecursiveDelete,
                    format!("`{text}` deletes what it finds"),
                );
            }
            "rmdir" | "rd" | "del" | "erase"
                if args.iter().any(|a| {
                    let t = a.text.to_ascii_lowercase();
                    t == "/s" || t == "/q" || t == "/f"
                }) =>
            {
                return refuse(
                    Rule::RecursiveDelete,
                    format!("`{text}` deletes recursively"),
                );
            }
            "mkfs" | "mke2fs" | "mkswap" | "format" | "diskpart" | "fdisk" | "sfdisk"
            | "cfdisk" | "gdisk" | "sgdisk" | "parted" | "wipefs" | "blkdiscard" => {
                return refuse(
                    Rule::DiskFormat,
                    format!("`{text}` changes disks or partitions"),
                );
            }
            n if n.starts_with("mkfs.") => {
                return refuse(Rule::DiskFormat, format!("`{text}` formats a disk"));
            }
            "shutdown" | "reboot" | "poweroff" | "halt" => {
                return refuse(Rule::PowerOff, format!("`{text}` stops the machine"));
            }
            "init" | "telinit" if args.iter().any(|a| a.text == "0" || a.text == "6") => {
                return refuse(Rule::PowerOff, format!("`{text}` stops the machine"));
            }
            "systemctl"
                if args.iter().any(|a| {
                    matches!(
                        a.text.as_str(),
                        "poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate"
                    )
                }) =>
            {
                return refuse(Rule::PowerOff, format!("`{text}` stops the machine"));
            }
            _ => {}
        }
        for arg in args {
            let value = arg.text.strip_prefix("of=");
            if name == "dd"
                && let Some(target) = value
            {
                if is_device(target) {
                    return refuse(
                        Rule::DeviceWrite,
                        format!("`{text}` writes to the device {target}"),
                    );
                }
                if self.is_protected(target) {
                    return refuse(
                        Rule::ProtectedFile,
                        format!("`{text}` writes to the protected file {target}"),
                    );
                }
            }
            if writes_its_arguments(&name, &flags) && !arg.text.starts_with('-') {
                if is_device(&arg.text) {
                    return refuse(
                        Rule::DeviceWrite,
                        format!("`{text}` writes to the device {}", arg.text),
                    );
                }
                if self.is_protected(&arg.text) {
                    return refuse(
                        Rule::ProtectedFile,
                        format!("`{text}` writes to the protected file {}", arg.text),
                    );
                }
            }
        }
        None
    }

    fn deny_patterns(&self, command: &str, segments: &[Segment]) -> Option<Refusal> {
        let hit = |text: &str| self.deny.iter().find(|re| re.is_match(text));
        let refuse = |re: &Regex| Refusal {
            rule: Rule::DenyPattern,
            detail: format!("it matches the deny pattern `{}`", re.as_str()),
        };
        if let Some(re) = hit(command) {
            return Some(refuse(re));
        }
        segments
            .iter()
            .find_map(|s| hit(&s.normalized()))
            .map(refuse)
    }

    fn is_protected(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        if path.is_empty() {
            return false;
        }
        self.protected.iter().any(|p| {
            if p.starts_with('/') {
                path == p
            } else {
                path == p || path.ends_with(&format!("/{p}"))
            }
        })
    }
}

fn matches_any(patterns: &[Regex], text: &str) -> bool {
    patterns.iter().any(|re| re.is_match(text))
}

/// Commands whose plain arguments are files they write to.
fn writes_its_arguments(name: &str, flags: &str) -> bool {
    match name {
        "tee" | "truncate" | "cp" | "mv" | "install" | "ln" | "rm" | "shred" | "touch"
        | "chmod" | "chown" => true,
        "sed" | "perl" => flags.contains('i'),
        _ => false,
    }
}

/// Device files a command may write to without harm.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
];

fn is_device(path: &str) -> bool {
    path.starts_with("/dev/")
        && !HARMLESS_DEVICES.contains(&path)
        && !path.starts_with("/dev/fd/")
        && !path.starts_with("/dev/shm/")
}

/// Every short flag letter of `args` (`-rf -v` gives `rfv`), stopping at `--`.
fn short_flags(args: &[Word]) -> String {
    let mut flags = String::new();
    for arg in args {
        if arg.text == "--" {
            break;
        }
        if let Some(letters) = arg.text.strip_prefix('-')
            && !letters.starts_with('-')
        {
            flags.push_str(letters);
        }
    }
    flags
}

/// Words that start a compound command rather than name a program.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
    "esac", "select", "function", "!", "{", "}", "[[", "]]", "time", "coproc",
];

/// The command a segment runs, past assignments, keywords and wrappers such
/// as `sudo`, `env`, `nohup`, `timeout` and `xargs`; `None` if there is none.
fn command_of(words: &[Word]) -> Option<(String, &[Word])> {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        if is_assignment(word) || KEYWORDS.contains(&text) {
            i += 1;
            continue;
        }
        let name = basename(text);
        // Options of a wrapper that take a value, so the value is skipped too.
        let valued: &[&str] = match name {
            "sudo" | "doas" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
            "env" => &["-u", "-C", "-S", "--unset", "--chdir"],
            "nice" => &["-n", "--adjustment"],
            "ionice" => &["-c", "-n", "-p", "-t"],
            "xargs" => &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a", "-i", "-l"],
            "timeout" => &["-s", "-k", "--signal", "--kill-after"],
            "stdbuf" => &["-i", "-o", "-e"],
            "watch" => &["-n", "-d", "--interval"],
            "nohup" | "command" | "builtin" | "exec" | "setsid" | "unbuffer" | "chronic"
            | "flock" | "chroot" | "busybox" | "taskset" | "strace" | "ltrace" | "caffeinate" => {
                &[]
            }
            _ => return Some((name.to_string(), &words[i + 1..])),
        };
        i += 1;
        while let Some(arg) = words.get(i) {
            if arg.text.starts_with('-') && arg.text.len() > 1 {
                i += if valued.contains(&arg.text.as_str()) {
                    2
                } else {
                    1
                };
            } else if name == "env" && is_assignment(arg) {
                i += 1;
            } else {
                break;
            }
        }
        match name {
            // These take a positional argument before the command.
            "timeout" | "flock" | "chroot" | "taskset" => i += 1,
            _ => {}
        }
    }
    None
}

fn is_assignment(word: &Word) -> bool {
    match word.text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
];

/// Every simple command a command line runs, as far as the text tells.
#[derive(Default)]
struct Seen {
    segments: Vec<Segment>,
    refusal: Option<Refusal>,
}

impl Seen {
    fn refuse(&mut self, detail: String) {
        self.refusal.get_or_insert(Refusal {
            rule: Rule::OpaqueCode,
            detail,
        });
    }

    fn collect(&mut self, command: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.refuse("commands nest too deeply to be checked".into());
            return;
        }
        if let Some(detail) = fork_bomb(command) {
            self.refusal.get_or_insert(Refusal {
                rule: Rule::ForkBomb,
                detail,
            });
            return;
        }
        let parsed = parse(command);
        for inner in &parsed.substitutions {
            self.collect(inner, depth + 1);
        }
        for segment in parsed.segments {
            self.segment(segment, depth);
        }
    }

    fn segment(&mut self, segment: Segment, depth: usize) {
        let words = segment.words.clone();
        if let Some(first) = words.iter().find(|w| !is_assignment(w))
            && first.dynamic
        {
            self.refuse(format!(
                "the command name `{}` is computed when it runs, so it cannot be checked",
                first.text
            ));
        }
        if let Some((name, args)) = command_of(&words) {
            let position = words.len() - args.len() - 1;
            if position > 0 && words[position].dynamic {
                self.refuse(format!(
                    "the command name `{}` is computed when it runs, so it cannot be checked",
                    words[position].text
                ));
            }
            self.nested(&name, args, &segment, depth);
        }
        self.segments.push(segment);
    }

    /// Follow commands that run other commands.
    fn nested(&mut self, name: &str, args: &[Word], segment: &Segment, depth: usize) {
        if SHELLS.contains(&name) {
            let script = args
                .iter()
                .position(|a| {
                    a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c')
                })
                .and_then(|i| args.get(i + 1));
            match script {
                Some(script) if script.dynamic => {
                    self.refuse(format!("`{name} -c` runs text computed when it runs"))
                }
                Some(script) => self.collect(&script.text, depth + 1),
                None => {
                    let reads_stdin = !args.iter().any(|a| !a.text.starts_with('-'));
                    let fed =
                        segment.piped_in || segment.redirects.iter().any(|r| r.op.starts_with('<'));
                    if reads_stdin && fed {
                        self.refuse(format!(
                            "`{}` feeds a script to {name} that cannot be checked; run the commands directly",
                            segment.normalized()
                        ));
                    }
                }
            }
        } else if name == "eval" {
            if args.iter().any(|a| a.dynamic) {
                self.refuse("`eval` runs text computed when it runs".into());
            } else {
                let text: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                self.collect(&text.join(" "), depth + 1);
            }
        } else if name == "find" {
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
                    self.segment(
                        Segment {
                            words: args[i + 1..end].to_vec(),
                            ..Segment::default()
                        },
                        depth + 1,
                    );
                    i = end;
                }
                i += 1;
            }
        }
    }
}

/// A function that calls itself in a pipe or in the background.
fn fork_bomb(text: &str) -> Option<String> {
    use std::sync::OnceLock;
    static DEFINITION: OnceLock<Regex> = OnceLock::new();
    let definition = DEFINITION.get_or_init(|| {
        Regex::new(
            r"(?s)(?:function\s+([A-Za-z_:.][\w:.-]*)\s*(?:\(\s*\))?|([A-Za-z_:.][\w:.-]*)\s*\(\s*\))\s*\{(.*)\}",
        )
            .expect("a valid regex")
    });
    for captures in definition.captures_iter(text) {
        let Some(found) = captures.get(1).or_else(|| captures.get(2)) else {
            continue;
        };
        let name = regex::escape(found.as_str());
        let body = &captures[3];
        let recursive = Regex::new(&format!(r"(^|[^\w:.-]){name}\s*(\|[^|]|&([^&]|$))")).ok()?;
        if recursive.is_match(body) {
            return Some(format!(
                "the function `{}` spawns copies of itself",
                found.as_str()
            ));
        }
    }
    None
}

/// Refuse `..`, `~` and absolute paths outside the workspace.
fn check_paths(segment: &Segment, workspace: &Workspace) -> Result<(), Refusal> {
    // The program names (the first word and the command past any wrapper)
    // may be absolute paths to system programs; their arguments may not.
    let command_at =
        command_of(&segment.words).map(|(_, args)| segment.words.len() - args.len() - 1);
    let first = segment.words.iter().position(|w| !is_assignment(w));
    let words = segment
        .words
        .iter()
        .enumerate()
        .map(|(i, w)| (w, Some(i) == command_at || Some(i) == first));
    let targets = segment.redirects.iter().map(|r| (&r.target, false));
    for (word, is_command) in words.chain(targets) {
        let mut candidates = vec![word.text.as_str()];
        if let Some((_, value)) = word.text.split_once('=') {
            candidates.push(value);
        }
        for path in candidates {
            if let Some(reason) = outside(path, word.dynamic, is_command, workspace) {
                return Err(Refusal {
                    rule: Rule::OutsideWorkspace,
                    detail: format!("`{path}` {reason}; use paths inside the workspace"),
                });
            }
        }
    }
    Ok(())
}

fn outside(
    path: &str,
    dynamic: bool,
    is_command: bool,
    workspace: &Workspace,
) -> Option<&'static str> {
    if path.starts_with('~') {
        return Some("is in a home directory");
    }
    if dynamic && (path.contains("$HOME") || path.contains("${HOME")) {
        return Some("is in the home directory");
    }
    if path.split('/').any(|part| part == "..") {
        return Some("uses `..`");
    }
    if is_command || HARMLESS_DEVICES.contains(&path) || path.starts_with("/dev/fd/") {
        return None;
    }
    if path.starts_with('/') {
        return match workspace.resolve(path, Access::Write) {
            Ok(_) => None,
            Err(_) => Some("is outside the workspace"),
        };
    }
    // A relative word that names an existing symlink leading out of the
    // workspace (`link/passwd` with `link -> /etc`) is refused too; words
    // that are not paths resolve inside and pass.
    match workspace.resolve(path, Access::Write) {
        Err(SandboxError::Outside { .. }) => Some("leads outside the workspace through a symlink"),
        _ => None,
    }
}
