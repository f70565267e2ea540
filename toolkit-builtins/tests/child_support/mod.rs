//! One test of this binary run again in a child process, so a stack
//! overflow, an abort or a runaway allocation there fails that test
//! instead of killing the whole test binary; and the peak memory of this
//! process, read from `/proc`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the child's environment: the test it runs sees it and does the
/// hostile work instead of starting another child.
const CHILD_VAR: &str = "HOSTILE_CHILD";

/// At most this much of each of the child's streams is shown when it
/// fails: a child that wrote gigabytes still fails with a readable message.
const SHOWN_BYTES: u64 = 64 * 1024;

/// Whether this process is the child [`in_child`] started.
pub fn is_child() -> bool {
    std::env::var_os(CHILD_VAR).is_some()
}

/// Runs the test `name` of this binary again in a child process with
/// [`CHILD_VAR`] set and returns what it wrote to stdout. The test fails,
/// showing what the child wrote, if the child fails or runs no test, or if
/// it has not ended within `deadline` (it is then killed, not left
/// running).
pub fn in_child(name: &str, deadline: Duration) -> String {
    // Files, not pipes: a child writing more than a pipe holds would wait
    // on a parent that reads only once it ends, until its deadline.
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Ok(status);
        }
        if start.elapsed() > deadline {
            // Reaped as well as killed, so its output is whole when read.
            let _ = child.kill();
            break Err(child.wait().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    match status {
        Ok(status) if status.success() => {
            let stdout = String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).into_owned();
            // A name that matched no test would pass with none run.
            assert!(
                stdout.contains(" 1 passed;"),
                "the child ran no test `{name}`: {}",
                shown(&out_path, &err_path)
            );
            stdout
        }
        Ok(status) => panic!(
            "the child failed ({status}): {}",
            shown(&out_path, &err_path)
        ),
        Err(killed) => panic!(
            "the child did not end within {deadline:?} and was killed ({killed}): {}",
            shown(&out_path, &err_path)
        ),
    }
}

/// The ends of the child's stdout and stderr, for a failure's message.
fn shown(out_path: &Path, err_path: &Path) -> String {
    format!("{}\n{}", tail(out_path), tail(err_path))
}

/// The last [`SHOWN_BYTES`] of the file at `path`, as text.
fn tail(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).unwrap();
    let len = file.metadata().unwrap().len();
    let skipped = len.saturating_sub(SHOWN_BYTES);
    file.seek(SeekFrom::Start(skipped)).unwrap();
    let mut bytes = Vec::new();
    file.take(SHOWN_BYTES).read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    if skipped > 0 {
        format!("[{skipped} bytes left out]…{text}")
    } else {
        text.into_owned()
    }
}

/// Starts the next [`peak_rss_kb`] from the memory in use now, not from
/// the highest so far, so one case's peak is not hidden under an earlier
/// one's (`5` resets the peak; a kernel that refuses leaves it as it was).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The peak resident memory of this process, in KB.
pub fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}
