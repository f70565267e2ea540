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
use super::glob::Glob;
use super::nested::Seen;
use super::paths::check_paths;
use super::words::{Segment, Word};
use super::wrappers::{Resolved, basename, long_is, resolve};
use crate::sandbox::Workspace;

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
        // No process can receive a NUL byte in an argument: the kernel would
        // cut the command there, and the filter would have read another one.
        if command.contains('\0') {
            return Err(Refusal {
                rule: Rule::OpaqueCode,
                detail: "the command contains a NUL byte, which no shell receives: remove it"
                    .into(),
            });
        }
        let strict = !self.deny.is_empty() || self.allow_only;
        let mut seen = Seen::of(command, strict);
        // The deny rules speak first (their message is the most specific);
        // unreadable code is refused whatever the allow patterns say.
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
        if let Some(refusal) = seen.refusal.take() {
            return Err(refusal);
        }
        if strict
            && let Some(workspace) = workspace
            && let Some(file) = seen
                .executed
                .iter()
                .find(|f| !f.starts_with('/') && !workspace.root().join(f).exists())
        {
            // A script the command itself creates is code no deny pattern saw.
            return Err(Refusal {
                rule: Rule::OpaqueCode,
                detail: format!(
                    "`{file}` is run but does not exist yet, so the command creates it and its \
                     code cannot be checked against the host's deny patterns"
                ),
            });
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
            if self.may_be_protected(&redirect.target) {
                return refuse(
                    Rule::ProtectedFile,
                    format!(
                        "`{text}` writes to {}, which is or may be a protected file",
                        redirect.target.text
                    ),
                );
            }
        }
        let (name, args) = command_of(&segment.words)?;
        let flags = short_flags(args);
        let has_long = |long: &str| args.iter().any(|a| a.text == long);
        match name.as_str() {
            "rm" if flags.contains(['r', 'R'])
                || args.iter().any(|a| long_is(&a.text, "recursive", 1)) =>
            {
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
        let writes = writes_its_arguments(&name, &flags, args);
        let last_operand = args.iter().rev().find(|a| !a.text.starts_with('-'));
        let reads_only = READ_ONLY.contains(&name.as_str());
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
                if self.may_be_protected(&Word {
                    text: target.to_owned(),
                    literal_tail: arg.literal_tail.saturating_sub(3),
                    ..arg.clone()
                }) {
                    return refuse(
                        Rule::ProtectedFile,
                        format!("`{text}` writes to {target}, which is or may be a protected file"),
                    );
                }
            }
            if writes && !arg.text.starts_with('-') {
                if is_device(&arg.text) {
                    return refuse(
                        Rule::DeviceWrite,
                        format!("`{text}` writes to the device {}", arg.text),
                    );
                }
                // `cp`, `install` and `ln` write only their last operand.
                let written = !matches!(name.as_str(), "cp" | "install" | "ln")
                    || last_operand.is_some_and(|last| std::ptr::eq(last, arg));
                let protected = if written {
                    self.may_be_protected(arg)
                } else {
                    self.is_protected(&arg.text)
                };
                if protected {
                    return refuse(
                        Rule::ProtectedFile,
                        format!(
                            "`{text}` writes to {}, which is or may be a protected file",
                            arg.text
                        ),
                    );
                }
            }
            // Any program not known to only read may write what it is
            // given: a protected file may not be named to it at all.
            if !reads_only
                && let Some(path) = attached_paths(&arg.text)
                    .into_iter()
                    .find(|p| self.is_protected(p))
            {
                return refuse(
                    Rule::ProtectedFile,
                    format!(
                        "`{text}` names the protected file {path} to `{name}`, which may write to it"
                    ),
                );
            }
        }
        None
    }

    /// Whether `word` names, or may name once expanded, a protected file.
    fn may_be_protected(&self, word: &Word) -> bool {
        if self.is_protected(&word.text) {
            return true;
        }
        if let Some(pattern) = &word.glob {
            let last = pattern.rsplit('/').next().unwrap_or(pattern);
            let glob = Glob::new(last);
            if self.protected.iter().any(|p| glob.matches(basename(p))) {
                return true;
            }
        }
        if word.dynamic {
            let tail = word.text.get(word.literal_tail..).unwrap_or_default();
            return self.protected.iter().any(|p| p.ends_with(tail));
        }
        false
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
        // Git runs hooks and reads its configuration from the repository:
        // writing them is writing code that runs later.
        let git_code = path.contains(".git/hooks/")
            || path == ".git/hooks"
            || path == ".git/config"
            || path.ends_with("/.git/config")
            || path.ends_with("/.git/hooks");
        git_code
            || self.protected.iter().any(|p| {
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
fn writes_its_arguments(name: &str, flags: &str, args: &[Word]) -> bool {
    match name {
        "tee" | "truncate" | "cp" | "mv" | "install" | "ln" | "rm" | "shred" | "touch"
        | "chmod" | "chown" => true,
        "sed" => flags.contains('i') || args.iter().any(|a| long_is(&a.text, "in-place", 1)),
        "perl" => flags.contains('i'),
        _ => false,
    }
}

/// Device files a command may write to without harm.
pub(crate) const HARMLESS_DEVICES: &[&str] = &[
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

/// Programs that only read the files they are given.
const READ_ONLY: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "wc",
    "diff",
    "cmp",
    "comm",
    "ls",
    "stat",
    "file",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "echo",
    "printf",
    "test",
    "[",
    "[[",
    "readlink",
    "realpath",
    "basename",
    "dirname",
    "du",
    "nl",
    "cut",
    "tr",
    "jq",
    "column",
    "fold",
    "fmt",
    "tac",
    "rev",
    "type",
    "which",
    "command",
    ".",
    "source",
    "bat",
    "true",
    "false",
];

/// The word and the paths a value attached to it may name: `--opt=value`,
/// `NAME=value`, and for short options every tail (`-qO.bashrc` may be
/// `-q -O .bashrc`).
fn attached_paths(text: &str) -> Vec<&str> {
    let mut paths = vec![text];
    if let Some((_, value)) = text.split_once('=') {
        paths.push(value);
    }
    if text.starts_with('-') && !text.starts_with("--") {
        paths.extend(text.char_indices().skip(2).map(|(at, _)| &text[at..]));
    }
    paths
}

/// The command a segment runs, past assignments, keywords and wrappers;
/// `None` if there is none or it cannot be told.
fn command_of(words: &[Word]) -> Option<(String, &[Word])> {
    match resolve(words) {
        Resolved::Runs(command) => Some((command.name, command.args)),
        _ => None,
    }
}

/// The most function definitions one command may hold: each is checked
/// against the rest of the text, so this bounds the work.
const MAX_FUNCTIONS: usize = 64;

/// A function that calls itself in a pipe or in the background.
///
/// Each definition's body is taken from its opening `{` or `(` to the last
/// closing one in the text: a body can hold quoted or escaped brackets, so
/// counting them could end it early, and taking more than the body can
/// only find more calls. Backslashes are dropped from the body first, so a
/// call spelled for `eval` (`eval f\|f\&`) is seen too.
pub(crate) fn fork_bomb(text: &str) -> Option<String> {
    use std::sync::OnceLock;
    static DEFINITION: OnceLock<Regex> = OnceLock::new();
    let definition = DEFINITION.get_or_init(|| {
        Regex::new(
            r"(?:function\s+([A-Za-z_:.][\w:.-]*)\s*(?:\(\s*\))?|([A-Za-z_:.][\w:.-]*)\s*\(\s*\))\s*[{(]",
        )
        .expect("a valid regex")
    });
    let body_end = text.rfind(['}', ')']).unwrap_or(text.len());
    for (defined, captures) in definition.captures_iter(text).enumerate() {
        if defined == MAX_FUNCTIONS {
            return Some(format!(
                "the command defines more than {MAX_FUNCTIONS} functions, too many to check"
            ));
        }
        let Some(found) = captures.get(1).or_else(|| captures.get(2)) else {
            continue;
        };
        let opened = captures.get(0).map_or(text.len(), |m| m.end());
        let body = text.get(opened..body_end.max(opened)).unwrap_or_default();
        if calls_itself_apart(&body.replace('\\', ""), found.as_str()) {
            return Some(format!(
                "the function `{}` spawns copies of itself",
                found.as_str()
            ));
        }
    }
    None
}

/// Whether `body` calls `name` into a pipe (`|`, not `||`) or the
/// background (`&`, not `&&`): the name standing on its own to its left
/// (no character a name may hold before it), then optional white space.
///
/// Scanned by hand: a regex built from the name would be compiled anew
/// for every function the model's command defines.
fn calls_itself_apart(body: &str, name: &str) -> bool {
    let in_a_name = |c: char| regex_syntax::is_word_character(c) || matches!(c, ':' | '.' | '-');
    // Occurrences that overlap an earlier one are skipped, and need no
    // look: the character before them is part of the name, so they never
    // stand on their own.
    body.match_indices(name).any(|(at, _)| {
        let apart = body[..at].chars().next_back().is_none_or(|c| !in_a_name(c));
        let mut after = body[at + name.len()..].trim_start().chars();
        apart
            && match after.next() {
                Some('|') => after.next().is_some_and(|c| c != '|'),
                Some('&') => after.next() != Some('&'),
                _ => false,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::calls_itself_apart;

    /// The scan says what the regex it replaced said, on every mix of what
    /// stands before the name, the space after it and what follows.
    #[test]
    fn the_self_call_scan_agrees_with_its_regex() {
        let before = [
            "", " ", "x", "_", ":", ".", "-", "é", "\u{301}", ";", "(", "\n", "{",
        ];
        let names = ["f", "a.b", ":", "f-1", "aa", "é"];
        let space = ["", " ", "\t", "\n", "  \u{a0}"];
        let after = [
            "|", "||", "| ", "|x", "&", "&&", "& ", "&x", "|&", ";", "", "x", "a |",
        ];
        let mut tried = 0;
        for name in names {
            let regex = regex::Regex::new(&format!(
                r"(^|[^\w:.-]){}\s*(\|[^|]|&([^&]|$))",
                regex::escape(name)
            ))
            .unwrap();
            for b in before {
                for s in space {
                    for a in after {
                        for body in [
                            format!("{b}{name}{s}{a}"),
                            format!("{name}{b}{name}{s}{a}"),
                            format!("x; {b}{name}{name}{s}{a} y"),
                        ] {
                            tried += 1;
                            assert_eq!(
                                calls_itself_apart(&body, name),
                                regex.is_match(&body),
                                "{name:?} in {body:?}"
                            );
                        }
                    }
                }
            }
        }
        assert!(tried > 5_000, "{tried}");
    }
}
