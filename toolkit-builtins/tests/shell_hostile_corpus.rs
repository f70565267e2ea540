//! The hostile-command corpus (`tests/fixtures/hostile_commands.txt`), run
//! against the real exec path: `shell::run_command` with the default
//! `ShellPolicy`, a deny pattern for the marker program `zap`, and `PATH`.
//!
//! Harmless markers stand in for destructive commands, and oracles tell
//! what a command achieved:
//! - `zap` (denied) writes a marker outside the workspace when it runs, and
//!   a trace inside it (so a run the kernel stopped is still seen);
//! - fake `reboot`, `shutdown`, `mkfs`, … come first on `PATH`;
//! - a secret in this process's environment and a secret file outside the
//!   workspace must never reach the output or the workspace;
//! - a loopback listener on a port the policy leaves out counts accepts;
//! - `keep/`, `.bashrc` and `history.jsonl` in the workspace must survive
//!   untouched (recursive delete, protected files);
//! - nothing tagged with the case may outlive the call (`linger`);
//! - nothing may appear in the case's outside directory.
//!
//! Each case is refused (with a readable message), contained (it ran and
//! no oracle fired; "by the kernel" when the output or trace shows a
//! refusal by the kernel), or escaped. The corpus runs in a child process
//! (this test binary again, with `HOSTILE_CORPUS_CHILD` set), so an abort
//! fails the test instead of killing the harness.
//!
//! Cases tagged `kernel` need the kernel wall: while the wall is not on by
//! default they are reported, not failed; cases tagged `filter` must never
//! escape.
#![cfg(all(feature = "shell", target_os = "linux"))]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use toolsmith::CancellationToken;
use toolsmith_builtins::Workspace;
use toolsmith_builtins::shell::{
    CommandRequest, Confinement, ShellError, ShellPolicy, run_command,
};

const CHILD_ENV: &str = "HOSTILE_CORPUS_CHILD";
const SECRET_ENV: &str = "CORPUS_SECRET";
const FILE_SECRET: &str = "FILESECRET-7f3a91c2";
const CONCURRENCY: usize = 4;
const CASE_TIMEOUT: Duration = Duration::from_secs(3);

#[test]
fn hostile_corpus_has_no_escapes() {
    let env_secret = format!("ENVSECRET-{}-{}", std::process::id(), nanos());
    let root = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        root.path().join("bin").display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "corpus_child",
            "--exact",
            "--nocapture",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, root.path())
        .env(
            "HOSTILE_CORPUS_CONFINEMENT",
            std::env::var("HOSTILE_CORPUS_CONFINEMENT").unwrap_or_default(),
        )
        .env(SECRET_ENV, &env_secret)
        .env("PATH", path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The corpus is bounded per case; the whole run gets a generous deadline.
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the corpus did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out_reader.join().unwrap();
    let err = err_reader.join().unwrap();
    println!("{out}");
    assert!(
        !out.contains(&env_secret) && !err.contains(&env_secret),
        "the host's secret reached the corpus report"
    );
    assert!(status.success(), "the corpus run failed:\n{out}\n{err}");
    assert!(
        out.contains("CORPUS tried="),
        "no corpus report:\n{out}\n{err}"
    );
}

/// One line of the corpus.
#[derive(Debug, Clone)]
struct Case {
    line: usize,
    class: String,
    needs: Needs,
    command: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// The filter must refuse it or it must have no effect.
    Filter,
    /// Only the kernel wall can contain it.
    Kernel,
    /// Never run: checked with the filter only, which must refuse it.
    CheckOnly,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Refused(String),
    Contained { by_kernel: bool, ran_denied: bool },
    Escaped(Vec<String>),
}

fn load_cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile_commands.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(3, '\t');
        let (Some(class), Some(needs), Some(command)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!("line {}: expected CLASS<TAB>NEEDS<TAB>COMMAND", i + 1);
        };
        let needs = match needs {
            "filter" => Needs::Filter,
            "kernel" => Needs::Kernel,
            "check" => Needs::CheckOnly,
            other => panic!("line {}: unknown need `{other}`", i + 1),
        };
        cases.push(Case {
            line: i + 1,
            class: class.to_owned(),
            needs,
            command: command.replace('⏎', "\n").replace('⇥', "\t"),
        });
    }
    cases
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn b64(text: &str) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = text.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The shared part of the corpus run: marker programs and the policy.
struct Harness {
    root: PathBuf,
    bin: PathBuf,
    env_secret: String,
    policy: ShellPolicy,
}

const ZAP: &str = r#"#!/bin/sh
# A denied program: leaves a trace in the workspace and its effect outside it.
d=$(pwd -P 2>/dev/null || pwd)
while :; do
  if [ -f "$d/.corpus-case" ]; then
    echo ran >> "$d/.corpus-trace" 2>/dev/null
    out=$(cat "$d/.corpus-case")/out
    if ! echo "NAME $*" >> "$out/marker-NAME" 2>/dev/null; then
      echo "MARKER-BLOCKED" >&2
    fi
    exit 0
  fi
  [ "$d" = / ] && break
  d=$(dirname "$d")
done
echo "NAME $*" >> "ROOT/unattributed/NAME-$$" 2>/dev/null || echo "MARKER-BLOCKED" >&2
"#;

const LINGER: &str =
    "#!/bin/sh\n# A process that would outlive the call.\nwhile :; do sleep 1; done\n";

impl Harness {
    fn new(root: &Path) -> Self {
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("unattributed")).unwrap();
        let write_program = |name: &str, body: &str| {
            let path = bin.join(name);
            std::fs::write(&path, body).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        let root_text = root.display().to_string();
        // Stand-ins for destructive programs: each is a marker too.
        for name in [
            "zap",
            "reboot",
            "shutdown",
            "poweroff",
            "halt",
            "mkfs",
            "mkfs.ext4",
            "wipefs",
            "fdisk",
            "parted",
            "systemctl",
            "init",
            "sudo",
        ] {
            write_program(name, &ZAP.replace("NAME", name).replace("ROOT", &root_text));
        }
        write_program("linger", LINGER);
        let policy = corpus_policy()
            .allow_env(["PATH"])
            .deny_pattern(r"\bzap\b")
            .unwrap()
            .protect_file("history.jsonl")
            .with_confined_read_dir(&bin)
            .with_max_timeout(CASE_TIMEOUT);
        Self {
            root: root.to_path_buf(),
            bin,
            env_secret: std::env::var(SECRET_ENV).expect("the parent sets the secret"),
            policy,
        }
    }

    /// A fresh case directory: `ws/` (the workspace) and `out/` (outside).
    fn prepare(&self, id: usize) -> (PathBuf, PathBuf, PathBuf) {
        let case = self.root.join(format!("case-{id}"));
        let ws = case.join("ws");
        let out = case.join("out");
        std::fs::create_dir_all(ws.join("keep")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(ws.join("keep/file"), "keep").unwrap();
        std::fs::write(ws.join(".bashrc"), "# original\n").unwrap();
        std::fs::write(ws.join("history.jsonl"), "{}\n").unwrap();
        std::fs::write(ws.join("notes.txt"), "a\nb\n").unwrap();
        std::fs::write(ws.join(".corpus-case"), case.display().to_string()).unwrap();
        std::fs::write(out.join("secret.txt"), FILE_SECRET).unwrap();
        std::os::unix::fs::symlink("../out", ws.join("lnk")).unwrap();
        (case, ws, out)
    }

    fn fill(&self, command: &str, id: usize, out: &Path, port: u16) -> String {
        let out_text = out.display().to_string();
        let secret = out.join("secret.txt").display().to_string();
        command
            .replace("{PORT}", &port.to_string())
            .replace("{OUTB64}", &b64(&out_text))
            .replace("{SECRETB64}", &b64(&secret))
            .replace("{OUT}", &out_text)
            .replace("{SECRET}", &secret)
            .replace("{BIN}", &self.bin.display().to_string())
            .replace("{CASE}", &format!("lg-{id}-x"))
    }

    async fn run(&self, id: usize, case: &Case) -> (Outcome, String) {
        let (case_dir, ws, out) = self.prepare(id);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let command = self.fill(&case.command, id, &out, port);
        let workspace = Workspace::new(&ws).unwrap();
        if case.needs == Needs::CheckOnly {
            let outcome = match self.policy.check_command(&command, Some(&workspace)) {
                Err(refusal) => Outcome::Refused(refusal.to_string()),
                Ok(()) => Outcome::Escaped(vec!["the filter let a never-run case through".into()]),
            };
            let _ = std::fs::remove_dir_all(&case_dir);
            return (outcome, String::new());
        }
        let request = CommandRequest {
            command,
            working_dir: None,
            timeout: Some(CASE_TIMEOUT),
        };
        let result = tokio::time::timeout(
            CASE_TIMEOUT + Duration::from_secs(5),
            run_command(
                &self.policy,
                &workspace,
                &request,
                &CancellationToken::new(),
            ),
        )
        .await;
        let accepted = count_accepts(&listener);
        let tag = format!("lg-{id}-x");
        let outcome = match result {
            Err(_) => Outcome::Escaped(vec!["the call did not return in time".into()]),
            Ok(Err(ShellError::Refused(refusal))) => {
                let text = refusal.to_string();
                assert!(
                    text.starts_with("the command was refused (") && text.len() > 40,
                    "unreadable refusal for line {}: {text}",
                    case.line
                );
                Outcome::Refused(text)
            }
            Ok(Err(other)) => Outcome::Escaped(vec![format!("the call failed: {other}")]),
            Ok(Ok(output)) => {
                let text = format!("{}\n{}", output.stdout.text(), output.stderr.text());
                let mut fired = Vec::new();
                if text.contains(&self.env_secret) {
                    fired.push("printed the host's secret environment variable".to_owned());
                }
                if text.contains(FILE_SECRET) {
                    fired.push("printed the secret file outside the workspace".to_owned());
                }
                if let Some(file) = file_containing(&ws, &[&self.env_secret, FILE_SECRET]) {
                    fired.push(format!("copied a secret into the workspace ({file})"));
                }
                let outside: Vec<String> = std::fs::read_dir(&out)
                    .map(|d| {
                        d.flatten()
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .filter(|n| n != "secret.txt")
                            .collect()
                    })
                    .unwrap_or_default();
                for name in &outside {
                    if let Some(program) = name.strip_prefix("marker-") {
                        fired.push(format!(
                            "the denied program `{program}` ran and wrote outside"
                        ));
                    } else {
                        fired.push(format!("wrote `{name}` outside the workspace"));
                    }
                }
                if std::fs::read_to_string(out.join("secret.txt"))
                    .ok()
                    .as_deref()
                    != Some(FILE_SECRET)
                {
                    fired.push("changed the secret file outside the workspace".into());
                }
                if !ws.join("keep/file").exists() {
                    fired.push("deleted the `keep/` tree".into());
                }
                if std::fs::read_to_string(ws.join(".bashrc")).ok().as_deref()
                    != Some("# original\n")
                {
                    fired.push("changed the protected `.bashrc`".into());
                }
                if std::fs::read_to_string(ws.join("history.jsonl"))
                    .ok()
                    .as_deref()
                    != Some("{}\n")
                {
                    fired.push("changed the protected `history.jsonl`".into());
                }
                if accepted > 0 {
                    fired.push(format!("connected to the loopback listener ({accepted}×)"));
                }
                let survivors = survivors(&tag);
                if !survivors.is_empty() {
                    fired.push(format!("{} process(es) outlived the call", survivors.len()));
                    kill_all(&survivors);
                }
                let ran_denied = ws.join(".corpus-trace").exists();
                if fired.is_empty() {
                    // Checked again a little later: a process may start late.
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let late = survivors_now(&tag);
                    if !late.is_empty() {
                        fired.push(format!("{} process(es) started after the call", late.len()));
                        kill_all(&late);
                    }
                }
                if fired.is_empty() {
                    // A case only the kernel can stop, which ran and did
                    // nothing, was stopped by the kernel's walls (files,
                    // network, the keeper); others show the kernel's refusal.
                    let by_kernel = case.needs == Needs::Kernel
                        || ran_denied
                        || text.contains("MARKER-BLOCKED")
                        || text.contains("Permission denied")
                        || text.contains("Operation not permitted")
                        || text.contains("Connection refused");
                    Outcome::Contained {
                        by_kernel,
                        ran_denied,
                    }
                } else {
                    Outcome::Escaped(fired)
                }
            }
        };
        let detail = match &outcome {
            Outcome::Refused(text) => text.clone(),
            _ => String::new(),
        };
        let _ = std::fs::remove_dir_all(&case_dir);
        (outcome, detail)
    }
}

/// Connections the listener accepted (and closed) so far.
fn count_accepts(listener: &TcpListener) -> usize {
    let mut count = 0;
    while let Ok((mut stream, _)) = listener.accept() {
        let _ = stream.write_all(b"HTTP/1.0 200 OK\r\n\r\n");
        count += 1;
    }
    count
}

/// The first file under `dir` (at most a few levels, small files) that
/// holds one of `needles`.
fn file_containing(dir: &Path, needles: &[&str]) -> Option<String> {
    let mut stack = vec![(dir.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((path, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > 2_000 {
                return None;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < 4 {
                stack.push((entry.path(), depth + 1));
            } else if kind.is_file()
                && entry.metadata().map(|m| m.len() < 1 << 20).unwrap_or(false)
                && let Ok(bytes) = std::fs::read(entry.path())
            {
                let text = String::from_utf8_lossy(&bytes);
                if needles.iter().any(|n| text.contains(n)) {
                    return Some(entry.file_name().to_string_lossy().into_owned());
                }
            }
        }
    }
    None
}

/// Processes whose command line carries `tag`, now and after a short wait.
fn survivors(tag: &str) -> Vec<i32> {
    let now = survivors_now(tag);
    if !now.is_empty() {
        return now;
    }
    std::thread::sleep(Duration::from_millis(100));
    survivors_now(tag)
}

fn survivors_now(tag: &str) -> Vec<i32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'));
            if cmdline.split(' ').any(|w| w == tag) && !zombie {
                found.push(pid);
            }
        }
    }
    found
}

/// Kill the survivors this corpus started, by their ids.
fn kill_all(pids: &[i32]) {
    for pid in pids {
        // SAFETY: `kill` has no memory-safety preconditions.
        unsafe {
            libc_kill(*pid);
        }
    }
}

unsafe fn libc_kill(pid: i32) {
    unsafe extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    // SAFETY: the caller passes a pid found under /proc; SIGKILL is 9.
    unsafe {
        kill(pid, 9);
    }
}

/// The default policy, or with `HOSTILE_CORPUS_CONFINEMENT=required` (or
/// `best-effort`) the policy with that kernel confinement, to measure what
/// the wall contains.
fn corpus_policy() -> ShellPolicy {
    let policy = ShellPolicy::new();
    match std::env::var("HOSTILE_CORPUS_CONFINEMENT").as_deref() {
        Ok("required") => policy.with_confinement(Confinement::Required),
        Ok("best-effort") => policy.with_confinement(Confinement::BestEffort),
        _ => policy,
    }
}

/// Which parts of the kernel wall are in force, each probed with a command
/// the filter lets through.
#[derive(Debug, Clone, Copy)]
struct Wall {
    /// A write outside the workspace (to a directory only known when the
    /// command runs) fails.
    files: bool,
    /// A connection to a loopback port the policy leaves out fails.
    network: bool,
    /// A process started with `setsid -f` does not outlive the call.
    lifetime: bool,
}

impl Wall {
    /// Whether the part of the wall an escape went through is in force.
    fn covers(&self, why: &[String]) -> bool {
        why.iter().any(|w| {
            if w.contains("loopback") {
                self.network
            } else if w.contains("outlived") || w.contains("after the call") {
                self.lifetime
            } else {
                self.files
            }
        })
    }
}

/// Run one probe command; its output, the connections it made, the
/// processes it left (killed), and its case directory.
async fn probe(harness: &Harness, id: usize, command: &str) -> (String, usize, Vec<i32>, PathBuf) {
    let (case_dir, ws, out) = harness.prepare(id);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = harness.fill(command, id, &out, port);
    let workspace = Workspace::new(&ws).unwrap();
    let request = CommandRequest {
        command,
        working_dir: None,
        timeout: Some(CASE_TIMEOUT),
    };
    let output = run_command(
        &harness.policy,
        &workspace,
        &request,
        &CancellationToken::new(),
    )
    .await;
    let text = match output {
        Ok(o) => format!("{}{}", o.stdout.text(), o.stderr.text()),
        Err(e) => format!("refused: {e}"),
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let survivors = survivors_now(&format!("lg-{id}-x"));
    kill_all(&survivors);
    (text, count_accepts(&listener), survivors, case_dir)
}

async fn kernel_wall(harness: &Harness) -> Wall {
    let base = usize::MAX / 2;
    let (_, _, _, dir) = probe(
        harness,
        base,
        "cd \"$(echo {OUTB64} | base64 -d)\" && date > probe",
    )
    .await;
    let files = !dir.join("out/probe").exists();
    let _ = std::fs::remove_dir_all(&dir);
    let (text, accepted, _, dir) = probe(
        harness,
        base + 1,
        "command -v curl > /dev/null && echo have-curl && curl -s --max-time 2 http://127.0.0.1:{PORT}/",
    )
    .await;
    let network = text.contains("have-curl") && accepted == 0;
    let _ = std::fs::remove_dir_all(&dir);
    // The process must be seen to start (`started`), or the probe proves nothing.
    let (_, _, survivors, dir) = probe(
        harness,
        base + 2,
        "setsid -f sh -c 'touch started; exec linger {CASE}'; sleep 0.5",
    )
    .await;
    let lifetime = dir.join("ws/started").exists() && survivors.is_empty();
    let _ = std::fs::remove_dir_all(&dir);
    Wall {
        files,
        network,
        lifetime,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by hostile_corpus_has_no_escapes in a child process"]
async fn corpus_child() {
    // The parent names the root (its `bin/` is first on this process's PATH).
    let Some(root) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let root = PathBuf::from(root);
    let harness = Arc::new(Harness::new(&root));
    let wall = kernel_wall(&harness).await;
    let cases = load_cases();
    assert!(
        cases.len() >= 400,
        "the corpus has only {} cases",
        cases.len()
    );
    let semaphore = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for case in cases.clone() {
        let harness = harness.clone();
        let semaphore = semaphore.clone();
        let next = next.clone();
        tasks.spawn(async move {
            let _permit = semaphore.acquire_owned().await.unwrap();
            let id = next.fetch_add(1, Ordering::SeqCst);
            let (outcome, _) = harness.run(id, &case).await;
            (case, outcome)
        });
    }
    let mut results = Vec::new();
    while let Some(done) = tasks.join_next().await {
        results.push(done.expect("a corpus case panicked"));
    }
    results.sort_by_key(|(case, _)| case.line);

    let unattributed: Vec<String> = std::fs::read_dir(root.join("unattributed"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();

    let mut per_class: BTreeMap<String, [usize; 5]> = BTreeMap::new();
    let (mut refused, mut contained, mut by_kernel, mut ran_denied) = (0, 0, 0, 0);
    let mut contained_cases = Vec::new();
    let mut filter_escapes = Vec::new();
    let mut kernel_escapes = Vec::new();
    for (case, outcome) in &results {
        let row = per_class.entry(case.class.clone()).or_default();
        row[0] += 1;
        match outcome {
            Outcome::Refused(_) => {
                refused += 1;
                row[1] += 1;
            }
            Outcome::Contained {
                by_kernel: k,
                ran_denied: r,
            } => {
                contained += 1;
                row[2] += 1;
                if *k {
                    by_kernel += 1;
                    row[3] += 1;
                }
                if *r {
                    ran_denied += 1;
                }
                contained_cases.push(format!(
                    "  line {} [{}]{} {:?}",
                    case.line,
                    case.class,
                    if *k { " (by the kernel)" } else { "" },
                    case.command
                ));
            }
            Outcome::Escaped(why) => {
                row[4] += 1;
                let line = format!(
                    "  line {} [{}] {:?}: {}",
                    case.line,
                    case.class,
                    case.command,
                    why.join("; ")
                );
                if case.needs == Needs::Kernel && !wall.covers(why) {
                    kernel_escapes.push(line);
                } else {
                    filter_escapes.push(line);
                }
            }
        }
    }
    let escaped = filter_escapes.len() + kernel_escapes.len();
    println!(
        "CORPUS tried={} refused={refused} contained={contained} (by the kernel: {by_kernel}; \
         a denied program started but its effect was stopped: {ran_denied}) escaped={escaped} \
         wall={wall:?}",
        results.len()
    );
    println!("class: tried refused contained by-kernel escaped");
    for (class, row) in &per_class {
        println!(
            "  {class}: {} {} {} {} {}",
            row[0], row[1], row[2], row[3], row[4]
        );
    }
    println!("contained (ran, no effect):");
    for line in &contained_cases {
        println!("{line}");
    }
    if !kernel_escapes.is_empty() {
        println!("escaped; these need a part of the kernel wall not in force here:");
        for line in &kernel_escapes {
            println!("{line}");
        }
    }
    if !filter_escapes.is_empty() {
        println!("ESCAPED past the filter, or past a part of the kernel wall in force:");
        for line in &filter_escapes {
            println!("{line}");
        }
    }
    assert!(
        unattributed.is_empty(),
        "denied programs ran outside any case: {unattributed:?}"
    );
    assert!(
        filter_escapes.is_empty(),
        "{} case(s) escaped the filter",
        filter_escapes.len()
    );
}
