//! `ShellPolicy`: everything the host decides about running commands.

use std::path::PathBuf;
use std::time::Duration;

use regex::Regex;

use super::ShellError;

/// Whether the child is confined to the workspace by the kernel, on top of
/// the command filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Confinement {
    /// No kernel confinement: the filter and the working directory are the
    /// only walls.
    #[default]
    Off,
    /// Confine with Landlock where the kernel supports it; run unconfined
    /// (and say so in the output) where it does not.
    BestEffort,
    /// Confine with Landlock, or refuse to run the command.
    Required,
}

/// How `exec` (and any command tool built on [`run_command`](super::run_command))
/// may run commands. Put one in the context's state to enable `exec`:
/// without it the tool refuses to run.
///
/// The defaults are the safe ones: the built-in deny rules are on, commands
/// are restricted to the workspace, only `HOME`, `LANG` and `TERM` reach the
/// child, the timeout is 60 s by default and 600 s at most, and each output
/// stream keeps at most 10 000 bytes (head and tail).
///
/// ```
/// use std::time::Duration;
/// use toolsmith_builtins::shell::ShellPolicy;
///
/// let policy = ShellPolicy::new()
///     .allow_env(["PATH", "CARGO_HOME"])
///     .with_max_timeout(Duration::from_secs(120))
///     .deny_pattern(r"\bgit\s+push\b")
///     .unwrap()
///     .protect_file("history.jsonl");
/// assert!(policy.check_command("git status", None).is_ok());
/// assert!(policy.check_command("git push origin main", None).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct ShellPolicy {
    pub(crate) shell: PathBuf,
    pub(crate) default_timeout: Duration,
    pub(crate) max_timeout: Duration,
    pub(crate) max_output_bytes: usize,
    pub(crate) env_allow: Vec<String>,
    pub(crate) deny: Vec<Regex>,
    pub(crate) allow: Vec<Regex>,
    pub(crate) allow_only: bool,
    pub(crate) protected: Vec<String>,
    pub(crate) restrict_to_workspace: bool,
    pub(crate) confinement: Confinement,
    pub(crate) extra_read_dirs: Vec<PathBuf>,
}

impl Default for ShellPolicy {
    fn default() -> Self {
        Self::new()
    }
}

/// Files no command may write to, whatever the host adds.
const PROTECTED_BY_DEFAULT: &[&str] = &[
    "/etc/passwd",
    "/etc/shadow",
    "/etc/sudoers",
    "authorized_keys",
    ".bashrc",
    ".profile",
];

impl ShellPolicy {
    /// The safe defaults described above.
    pub fn new() -> Self {
        Self {
            shell: PathBuf::from("/bin/sh"),
            default_timeout: Duration::from_secs(60),
            max_timeout: Duration::from_secs(600),
            max_output_bytes: 10_000,
            env_allow: Vec::new(),
            deny: Vec::new(),
            allow: Vec::new(),
            allow_only: false,
            protected: PROTECTED_BY_DEFAULT.iter().map(|s| s.to_string()).collect(),
            restrict_to_workspace: true,
            confinement: Confinement::Off,
            extra_read_dirs: Vec::new(),
        }
    }

    /// Run commands with this shell (`-c COMMAND`) instead of `/bin/sh`.
    pub fn with_shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell = shell.into();
        self
    }

    /// The timeout when the call gives none.
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// The longest timeout a call may ask for; larger requests are clamped.
    ///
    /// `exec` itself runs under a 660 s tool timeout (so the default 600 s
    /// maximum always fits); above that, a batch runner stops the call first,
    /// which still kills the command's whole process group.
    pub fn with_max_timeout(mut self, timeout: Duration) -> Self {
        self.max_timeout = timeout;
        self
    }

    /// How many bytes of each output stream are kept (half head, half tail).
    pub fn with_max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes.max(2);
        self
    }

    /// Also pass these variables from the host's environment to the child
    /// (besides `HOME`, `LANG` and `TERM`).
    pub fn allow_env<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.env_allow.extend(names.into_iter().map(Into::into));
        self
    }

    /// Refuse commands in which any segment matches this regular expression
    /// (searched in the segment with quotes removed and in the raw command).
    pub fn deny_pattern(mut self, pattern: &str) -> Result<Self, ShellError> {
        self.deny.push(compile(pattern)?);
        Ok(self)
    }

    /// Let a command the deny rules refuse run anyway when every one of its
    /// segments (including `$(…)` and `sh -c` texts) matches some allow
    /// pattern. Workspace restriction still applies.
    pub fn allow_pattern(mut self, pattern: &str) -> Result<Self, ShellError> {
        self.allow.push(compile(pattern)?);
        Ok(self)
    }

    /// Run only commands whose every segment matches an allow pattern.
    pub fn allow_only_matching(mut self, only: bool) -> Self {
        self.allow_only = only;
        self
    }

    /// Refuse commands that write to a file with this name (`history.jsonl`)
    /// or at this absolute path.
    pub fn protect_file(mut self, name: impl Into<String>) -> Self {
        self.protected.push(name.into());
        self
    }

    /// Whether paths in commands must stay inside the workspace (on by default).
    pub fn restrict_to_workspace(mut self, restrict: bool) -> Self {
        self.restrict_to_workspace = restrict;
        self
    }

    /// Confine the child with Landlock (needs the `landlock` feature, Linux).
    pub fn with_confinement(mut self, confinement: Confinement) -> Self {
        self.confinement = confinement;
        self
    }

    /// Under confinement, also let the child read (never write) this directory.
    pub fn with_confined_read_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.extra_read_dirs.push(dir.into());
        self
    }

    /// The timeout for a request, clamped to the maximum, and a note when it was.
    pub fn timeout_for(&self, requested: Option<Duration>) -> (Duration, Option<String>) {
        match requested {
            None => (self.default_timeout, None),
            Some(t) if t > self.max_timeout => (
                self.max_timeout,
                Some(format!(
                    "the requested timeout of {} s is above the limit; it was clamped to {} s",
                    t.as_secs(),
                    self.max_timeout.as_secs()
                )),
            ),
            Some(t) => (t.max(Duration::from_secs(1)), None),
        }
    }
}

fn compile(pattern: &str) -> Result<Regex, ShellError> {
    Regex::new(pattern).map_err(|e| ShellError::Pattern(e.to_string()))
}
