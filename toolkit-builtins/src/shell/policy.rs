//! `ShellPolicy`: everything the host decides about running commands.

use std::path::PathBuf;
use std::time::Duration;

use regex::Regex;

use super::ShellError;

/// Whether the child is confined by the kernel (Landlock, Linux), on top of
/// the command filter. See [`KernelWalls`](super::KernelWalls) for what the
/// running kernel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Confinement {
    /// The explicit opt-out: no Landlock, so the filter and the working
    /// directory are the only walls around files and the network. (Every
    /// process the command starts still dies with the call.)
    Off,
    /// Confine with Landlock as far as the kernel supports it; where it does
    /// not, run anyway and say so once in the output. The default.
    #[default]
    BestEffort,
    /// Confine with Landlock, or refuse to run the command.
    Required,
}

/// Which TCP connections a confined command may make (Landlock ABI 4+).
/// UDP and Unix sockets are not covered by these rules.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum NetAccess {
    /// No TCP connect or bind at all: the default.
    #[default]
    None,
    /// Connect to and bind only these TCP ports (on any address).
    Ports {
        /// Ports the command may connect to.
        connect: Vec<u16>,
        /// Ports the command may listen on.
        bind: Vec<u16>,
    },
    /// No network rule: any TCP connection.
    Any,
}

/// How `exec` (and any command tool built on [`run_command`](super::run_command))
/// may run commands. Put one in the context's state to enable `exec`:
/// without it the tool refuses to run.
///
/// The defaults are the safe ones: the built-in deny rules are on, commands
/// are restricted to the workspace, the kernel confines the child where it
/// can (Landlock: reads of the system and the workspace, writes to the
/// workspace and a temporary directory of its own, no TCP, no signals or
/// abstract sockets outside; its own PID namespace; a control group that
/// bounds it to 1024 processes and half the machine's memory), only `HOME`,
/// `LANG`, `TERM` and `TMPDIR` reach the child, the timeout is 60 s by
/// default and 600 s at most, and each output stream keeps at most 10 000
/// bytes (head and tail).
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
    pub(crate) network: NetAccess,
    pub(crate) pid_namespace: bool,
    pub(crate) extra_read_dirs: Vec<PathBuf>,
    pub(crate) path_append: Vec<PathBuf>,
    pub(crate) max_processes: u64,
    pub(crate) max_memory: Option<u64>,
}

impl Default for ShellPolicy {
    fn default() -> Self {
        Self::new()
    }
}

/// The processes and threads a command may have at once unless the host
/// says otherwise: room for a parallel build, not for a fork bomb.
const DEFAULT_MAX_PROCESSES: u64 = 1024;

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
            confinement: Confinement::BestEffort,
            network: NetAccess::None,
            pid_namespace: true,
            extra_read_dirs: Vec::new(),
            path_append: Vec::new(),
            max_processes: DEFAULT_MAX_PROCESSES,
            max_memory: None,
        }
    }

    /// At most `count` processes and threads of a command at once (1024
    /// unless set), held by the kernel where it can make the command a
    /// control group of its own ([`KernelWalls::resource_limits`](super::KernelWalls::resource_limits)).
    /// A command that tries to start more gets an error from the kernel
    /// (`fork: Resource temporarily unavailable`).
    pub fn with_max_processes(mut self, count: u64) -> Self {
        self.max_processes = count;
        self
    }

    /// At most `bytes` of memory (swap included, where the kernel accounts
    /// it) used by a command and
    /// everything it starts, together; half of the machine's memory unless
    /// set. Held, like [`with_max_processes`](Self::with_max_processes), by a
    /// control group: a command that needs more is killed by the kernel
    /// (`SIGKILL`), not the host.
    pub fn with_max_memory(mut self, bytes: u64) -> Self {
        self.max_memory = Some(bytes);
        self
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

    /// The longest timeout a call may ask for; larger requests are refused.
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

    /// How strictly the child is confined by Landlock (Linux);
    /// [`Confinement::BestEffort`] unless set.
    pub fn with_confinement(mut self, confinement: Confinement) -> Self {
        self.confinement = confinement;
        self
    }

    /// Let a confined command connect to these TCP ports (on any address:
    /// `443` lets it reach every HTTPS server, loopback included).
    pub fn allow_tcp_connect(mut self, ports: impl IntoIterator<Item = u16>) -> Self {
        if let Some((connect, _)) = self.port_lists() {
            connect.extend(ports);
        }
        self
    }

    /// Let a confined command listen on these TCP ports.
    pub fn allow_tcp_bind(mut self, ports: impl IntoIterator<Item = u16>) -> Self {
        if let Some((_, bind)) = self.port_lists() {
            bind.extend(ports);
        }
        self
    }

    /// Put no rule on the command's network use at all.
    pub fn allow_any_network(mut self) -> Self {
        self.network = NetAccess::Any;
        self
    }

    /// The connect and bind port lists, made if there were none; `None`
    /// when any network is allowed already.
    fn port_lists(&mut self) -> Option<(&mut Vec<u16>, &mut Vec<u16>)> {
        if self.network == NetAccess::None {
            self.network = NetAccess::Ports {
                connect: Vec::new(),
                bind: Vec::new(),
            };
        }
        match &mut self.network {
            NetAccess::Ports { connect, bind } => Some((connect, bind)),
            NetAccess::None | NetAccess::Any => None,
        }
    }

    /// Whether the command gets a PID namespace of its own where the system
    /// allows it (on by default): it then sees only its own processes, and
    /// the kernel kills all of them with it. Without one, a subreaper still
    /// finds and kills every process the command started.
    pub fn with_pid_namespace(mut self, yes: bool) -> Self {
        self.pid_namespace = yes;
        self
    }

    /// Under confinement, also let the child read (never write) this directory.
    pub fn with_confined_read_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.extra_read_dirs.push(dir.into());
        self
    }

    /// Append `dirs` to the command's `PATH`, so that programs installed
    /// there (a toolchain's `bin`, a project's tools) run by name.
    ///
    /// They come after the host's own `PATH` when [`allow_env`](Self::allow_env)
    /// passes it, or else after the standard system directories
    /// (`/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`), so a
    /// program of theirs never stands in for a system one of the same name.
    /// Under confinement the command may read and run what is in them, and
    /// never write there. Each must be an absolute path in UTF-8 without `:`
    /// (which would split it); anything else is refused here. A directory
    /// that does not exist is kept in `PATH` and opens nothing.
    ///
    /// ```
    /// use toolsmith_builtins::shell::ShellPolicy;
    ///
    /// let policy = ShellPolicy::new().with_path_append(["/opt/toolchain/bin"]).unwrap();
    /// assert!(ShellPolicy::new().with_path_append(["bin"]).is_err());
    /// ```
    pub fn with_path_append<P: Into<PathBuf>>(
        mut self,
        dirs: impl IntoIterator<Item = P>,
    ) -> Result<Self, ShellError> {
        for dir in dirs {
            let dir = dir.into();
            let refuse = |reason: &'static str| ShellError::PathAppend {
                dir: dir.clone(),
                reason,
            };
            let Some(text) = dir.to_str() else {
                return Err(refuse("it is not UTF-8"));
            };
            if !dir.is_absolute() {
                // A relative entry is looked up from wherever the command
                // is: the workspace, where a model can put a program.
                return Err(refuse("it is not an absolute path"));
            }
            if text.contains(':') || text.contains('\0') {
                return Err(refuse("it holds `:` or a NUL byte, which would split PATH"));
            }
            self.path_append.push(dir);
        }
        Ok(self)
    }

    /// The timeout for a request: the default when it gives none, at least
    /// one second, and refused above the maximum (changing the request
    /// silently would leave the model believing it got what it asked for).
    pub fn timeout_for(&self, requested: Option<Duration>) -> Result<Duration, ShellError> {
        match requested {
            None => Ok(self.default_timeout),
            Some(t) if t > self.max_timeout => Err(ShellError::TimeoutTooLong {
                requested: t.as_secs(),
                max: self.max_timeout.as_secs(),
            }),
            Some(t) => Ok(t.max(Duration::from_secs(1))),
        }
    }
}

fn compile(pattern: &str) -> Result<Regex, ShellError> {
    Regex::new(pattern).map_err(|e| ShellError::Pattern(e.to_string()))
}
