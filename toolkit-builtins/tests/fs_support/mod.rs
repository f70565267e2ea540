//! A workspace in a temporary directory, with the file tools registered the
//! way a host registers them, and a secret file outside it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use tempfile::TempDir;
use toolsmith::{ToolContext, ToolFilter, ToolOutput, ToolRegistry};
use toolsmith_builtins::fs::{FileState, FsLimits};
use toolsmith_builtins::sandbox::Workspace;

/// The built-in file and search tools.
pub use toolsmith_builtins::FILE_TOOLS as FS_TOOLS;

/// Text no tool may ever return or overwrite.
pub const SECRET: &str = "TOP-SECRET-OUTSIDE";

pub struct Env {
    /// Holds `ws/` (the workspace) and `outside/` (a neighbour).
    pub dir: TempDir,
    pub ws: PathBuf,
    pub outside: PathBuf,
    pub registry: ToolRegistry,
    pub ctx: ToolContext,
}

impl Env {
    pub fn new() -> Self {
        Self::with_limits(FsLimits::default())
    }

    pub fn with_limits(limits: FsLimits) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        let ws = ws.canonicalize().unwrap();
        let outside = outside.canonicalize().unwrap();
        let registry =
            ToolRegistry::from_inventory(&ToolFilter::default().names(FS_TOOLS)).unwrap();
        let ctx = ToolContext::new()
            .with_state(Workspace::new(&ws).unwrap())
            .with_state(limits);
        Self {
            dir,
            ws,
            outside,
            registry,
            ctx,
        }
    }

    /// The same, with `outside/` readable as an extra directory.
    pub fn with_read_only_outside(mut self) -> Self {
        let workspace = Workspace::new(&self.ws)
            .unwrap()
            .with_read_only_dir(&self.outside)
            .unwrap();
        self.ctx = self.ctx.clone().with_state(workspace);
        self
    }

    /// The same, tracking one agent session's reads and writes in `state`.
    pub fn with_file_state(mut self, state: FileState) -> Self {
        self.ctx = self.ctx.clone().with_state(state);
        self
    }

    /// Call a tool through the registry, as a model's call arrives.
    pub async fn call(&self, name: &str, args: Value) -> ToolOutput {
        self.registry.call(name, args, &self.ctx).await
    }

    /// A successful call's text; panics with the error otherwise.
    pub async fn ok(&self, name: &str, args: Value) -> ToolOutput {
        let out = self.call(name, args.clone()).await;
        assert!(!out.is_error, "{name}({args}) failed: {}", out.content);
        out
    }

    /// A failed call's text; panics if it succeeded.
    pub async fn err(&self, name: &str, args: Value) -> String {
        let out = self.call(name, args.clone()).await;
        assert!(
            out.is_error,
            "{name}({args}) should fail but said: {}",
            out.content
        );
        out.content
    }

    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.ws.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.ws.join(relative)).unwrap()
    }

    pub fn exists(&self, relative: &str) -> bool {
        self.ws.join(relative).exists()
    }

    pub fn secret_path(&self) -> PathBuf {
        self.outside.join("secret.txt")
    }

    /// The secret file still holds the secret and nothing was added beside it.
    pub fn assert_outside_untouched(&self) {
        assert_eq!(std::fs::read_to_string(self.secret_path()).unwrap(), SECRET);
        let names: Vec<_> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("secret.txt")],
            "{names:?}"
        );
    }
}

/// Set a file's modification time, seconds after the epoch.
pub fn set_mtime(path: &Path, seconds: u64) {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

/// Make a named pipe at `path`.
pub fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}
