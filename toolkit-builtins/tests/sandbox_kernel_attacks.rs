//! What the kernel does with each path a model can send, attacked with real
//! files: hard links and dangling links to files outside, a workspace that
//! is itself a link, directories swapped for links while writes and
//! searches run, sockets, huge sparse files, and files of the kernel's
//! pseudo file systems mounted (or bound) inside the workspace. Every call
//! runs under a deadline, so a hang fails the test instead of stalling it.
//!
//! The mount cases need the right to mount (root in this namespace); where
//! a mount is refused the case is reported and left out, never counted as
//! passing.

mod fs_support;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fs_support::{Env, SECRET};
use serde_json::{Value, json};
use toolsmith::ToolOutput;
use toolsmith_builtins::sandbox::Workspace;

const DEADLINE: Duration = Duration::from_secs(60);

/// A call that must return before the deadline.
async fn call(env: &Env, tool: &str, args: Value) -> ToolOutput {
    tokio::time::timeout(DEADLINE, env.call(tool, args.clone()))
        .await
        .unwrap_or_else(|_| panic!("{tool}({args}) did not return within {DEADLINE:?}"))
}

/// The tools that read a file's content where it is.
fn readers(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": path})),
        ("grep", json!({"pattern": ".", "path": path})),
        (
            "edit_file",
            json!({"path": path, "old_text": "x", "new_text": "y"}),
        ),
        ("write_file", json!({"path": path, "content": "y"})),
    ]
}

#[tokio::test]
async fn a_hard_link_to_a_file_outside_is_replaced_never_written_through() {
    let env = Env::new();
    let secret = env.outside.join("secret.txt");
    if std::fs::hard_link(&secret, env.ws.join("hard.txt")).is_err() {
        eprintln!("hard links across these directories are refused here: case left out");
        return;
    }
    let out = call(&env, "read_file", json!({"path": "hard.txt"})).await;
    // The kernel cannot tell a hard link from the file: its content is the
    // workspace's now, and reading it is allowed.
    assert!(!out.is_error, "{}", out.content);
    for (tool, args) in [
        (
            "write_file",
            json!({"path": "hard.txt", "content": "pwned"}),
        ),
        (
            "edit_file",
            json!({"path": "hard.txt", "old_text": SECRET, "new_text": "pwned"}),
        ),
    ] {
        let out = call(&env, tool, args).await;
        assert_eq!(
            std::fs::read_to_string(&secret).unwrap(),
            SECRET,
            "{tool} wrote through the hard link: {}",
            out.content
        );
    }
}

#[tokio::test]
async fn a_dangling_link_pointing_outside_is_replaced_not_followed() {
    let env = Env::new();
    let target = env.outside.join("created.txt");
    symlink(&target, env.ws.join("absolute.txt")).unwrap();
    symlink("../outside/created2.txt", env.ws.join("relative.txt")).unwrap();
    std::fs::create_dir(env.ws.join("sub")).unwrap();
    symlink("../../outside/created3.txt", env.ws.join("sub/deep.txt")).unwrap();
    // Dangling links where a parent directory would be created.
    symlink("../outside/made", env.ws.join("dir_rel")).unwrap();
    symlink(env.outside.join("made2"), env.ws.join("dir_abs")).unwrap();
    for path in [
        "absolute.txt",
        "relative.txt",
        "sub/deep.txt",
        "dir_rel/x.txt",
        "dir_abs/x.txt",
        "dir_rel/deeper/x.txt",
    ] {
        for (tool, args) in [
            ("write_file", json!({"path": path, "content": "pwned"})),
            (
                "notebook_edit",
                json!({"path": path, "cell_index": 0, "new_source": "x", "edit_mode": "insert", "cell_type": "code"}),
            ),
        ] {
            let _ = call(&env, tool, args).await;
        }
    }
    let made: Vec<_> = std::fs::read_dir(&env.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(made, vec![std::ffi::OsString::from("secret.txt")]);
}

#[tokio::test]
async fn a_workspace_that_is_itself_a_link_stays_where_the_link_led() {
    let env = Env::new();
    let link = env.dir.path().join("ws-link");
    symlink(&env.ws, &link).unwrap();
    std::fs::write(env.ws.join("in.txt"), "inside").unwrap();
    let workspace = Workspace::new(&link).unwrap();
    assert_eq!(workspace.root(), env.ws);
    let ctx = env.ctx.clone().with_state(workspace);
    let read = |path: &str| env.registry.call("read_file", json!({"path": path}), &ctx);
    assert!(!read("in.txt").await.is_error);
    for path in ["../outside/secret.txt", "../ws-link/../outside/secret.txt"] {
        let out = read(path).await;
        assert!(out.is_error && !out.content.contains(SECRET), "{path}");
    }
    // Pointing the link elsewhere afterwards moves nothing: the handle holds.
    std::fs::remove_file(&link).unwrap();
    symlink(&env.outside, &link).unwrap();
    let out = read("secret.txt").await;
    assert!(
        out.is_error && !out.content.contains(SECRET),
        "{}",
        out.content
    );
    assert!(!read("in.txt").await.is_error);
}

/// Flip `path` between a real directory and a link to `outside` until
/// `done`, by renames (each state is complete when it appears).
fn flipper(path: PathBuf, outside: PathBuf, done: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let parent = path.parent().unwrap().to_path_buf();
        let real = parent.join(".real");
        let link = parent.join(".link");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("f.txt"), "inside").unwrap();
        symlink(&outside, &link).unwrap();
        while !done.load(Ordering::Relaxed) {
            // Swap the real directory in, then the link.
            let _ = std::fs::rename(&real, &path);
            std::thread::yield_now();
            let _ = std::fs::rename(&path, &real);
            let _ = std::fs::rename(&link, &path);
            std::thread::yield_now();
            let _ = std::fs::rename(&path, &link);
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_during_writes_leads_no_write_outside() {
    let env = Env::new();
    let done = Arc::new(AtomicBool::new(false));
    let flip = flipper(env.ws.join("d"), env.outside.clone(), Arc::clone(&done));
    for round in 0..300 {
        let file = format!("d/w{round}.txt");
        let _ = call(
            &env,
            "write_file",
            json!({"path": file, "content": "pwned"}),
        )
        .await;
        let _ = call(
            &env,
            "edit_file",
            json!({"path": "d/f.txt", "old_text": "inside", "new_text": "pwned"}),
        )
        .await;
        let file = format!("d/new{round}/x.txt");
        let _ = call(
            &env,
            "write_file",
            json!({"path": file, "content": "pwned"}),
        )
        .await;
    }
    done.store(true, Ordering::Relaxed);
    flip.join().unwrap();
    let made: Vec<_> = std::fs::read_dir(&env.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(made, vec![std::ffi::OsString::from("secret.txt")]);
    assert_eq!(
        std::fs::read_to_string(env.outside.join("secret.txt")).unwrap(),
        SECRET
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_during_searches_shows_nothing_outside() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws.join("tree")).unwrap();
    std::fs::write(env.ws.join("tree/a.txt"), "inside").unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let flip = flipper(
        env.ws.join("tree/d"),
        env.outside.clone(),
        Arc::clone(&done),
    );
    for _ in 0..300 {
        for (tool, args) in [
            ("grep", json!({"pattern": "SECRET", "path": "."})),
            (
                "grep",
                json!({"pattern": "SECRET", "path": "tree/d", "output_mode": "content"}),
            ),
            ("glob", json!({"pattern": "**/secret*", "path": "."})),
            ("list_dir", json!({"path": "tree/d"})),
            ("read_file", json!({"path": "tree/d/secret.txt"})),
        ] {
            let out = call(&env, tool, args.clone()).await;
            // A refusal names the path given; a listing must not name the
            // file outside.
            let listed = tool != "read_file" && out.content.contains("secret.txt");
            assert!(
                !out.content.contains(SECRET) && !listed,
                "{tool}({args}) saw outside: {}",
                out.content
            );
        }
    }
    done.store(true, Ordering::Relaxed);
    flip.join().unwrap();
}

#[tokio::test]
async fn a_socket_is_refused_by_every_reader() {
    let env = Env::new();
    let _listener = std::os::unix::net::UnixListener::bind(env.ws.join("sock.txt")).unwrap();
    for (tool, args) in readers("sock.txt") {
        let out = call(&env, tool, args).await;
        assert!(
            out.is_error && out.content.contains("a socket"),
            "{tool}: {}",
            out.content
        );
    }
    let kind = std::fs::symlink_metadata(env.ws.join("sock.txt")).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_socket(&kind.file_type()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_sparse_file_is_not_read_whole() {
    let env = Env::new();
    let big = std::fs::File::create(env.ws.join("big.txt")).unwrap();
    // A terabyte of holes: reading it whole would take minutes and memory.
    if big.set_len(1 << 40).is_err() {
        eprintln!("this file system refuses a sparse terabyte: case left out");
        return;
    }
    drop(big);
    std::fs::create_dir(env.ws.join("tree")).unwrap();
    std::fs::write(env.ws.join("tree/a.txt"), "x\n").unwrap();
    let big = std::fs::File::create(env.ws.join("tree/big.txt")).unwrap();
    big.set_len(1 << 40).unwrap();
    drop(big);
    // Every reader returns in time with a short answer; write_file, last,
    // may replace the file (that is its job).
    for (tool, args) in readers("big.txt").into_iter().chain([
        ("grep", json!({"pattern": "x", "path": "tree"})),
        ("grep", json!({"pattern": "^$", "path": "tree"})),
        (
            "read_file",
            json!({"path": "tree/big.txt", "offset": 1_000_000}),
        ),
    ]) {
        let out = call(&env, tool, args.clone()).await;
        assert!(out.content.len() < 1 << 20, "{tool}({args})");
    }
}

/// A mount of `fstype` at `target`, taken away when dropped.
struct Mount(PathBuf);

impl Mount {
    fn new(fstype: &str, source: &str, target: &Path, bind: bool) -> Option<Self> {
        let mut command = std::process::Command::new("mount");
        if bind {
            command.arg("--bind");
        } else {
            command.args(["-t", fstype]);
        }
        let status = command
            .arg(source)
            .arg(target)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| Mount(target.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// The first regular file below `dir`, at most three levels down.
fn first_file(dir: &Path, depth: usize) -> Option<PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir).ok()?.flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in &entries {
        let kind = entry.file_type().ok()?;
        if kind.is_file() {
            return Some(entry.path());
        }
    }
    if depth == 0 {
        return None;
    }
    entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|k| k.is_dir()))
        .find_map(|e| first_file(&e.path(), depth - 1))
}

#[tokio::test]
async fn files_of_pseudo_file_systems_mounted_inside_are_refused() {
    let env = Env::new();
    let mut tried = 0;
    // (file system, a file to make in it when it starts empty)
    let kinds: &[(&str, Option<&str>)] = &[
        ("proc", None),
        ("sysfs", None),
        ("mqueue", Some("queue")),
        ("debugfs", None),
        ("tracefs", None),
        ("securityfs", None),
        ("cgroup2", None),
        ("bpf", None),
        ("pstore", None),
        ("binfmt_misc", None),
        ("fusectl", None),
        ("configfs", None),
    ];
    for (fstype, make) in kinds {
        let mount_point = env.ws.join(fstype);
        std::fs::create_dir(&mount_point).unwrap();
        let Some(_mounted) = Mount::new(fstype, "none", &mount_point, false) else {
            eprintln!("{fstype}: cannot be mounted here: left out");
            continue;
        };
        if let Some(name) = make {
            let _ = std::fs::File::create(mount_point.join(name));
        }
        let Some(file) = first_file(&mount_point, 3) else {
            eprintln!("{fstype}: holds no regular file: left out");
            continue;
        };
        tried += 1;
        let relative = file.strip_prefix(&env.ws).unwrap().to_str().unwrap();
        for (tool, args) in readers(relative) {
            let out = call(&env, tool, args).await;
            assert!(
                out.is_error && out.content.contains("kernel"),
                "{tool}({relative}) on {fstype} was not refused: {:.200}",
                out.content
            );
        }
    }
    // A file of /proc/sys bound onto a workspace file keeps its file system.
    let bound = env.ws.join("ostype.txt");
    std::fs::write(&bound, "x").unwrap();
    if let Some(_mounted) = Mount::new("", "/proc/sys/kernel/ostype", &bound, true) {
        tried += 1;
        for (tool, args) in readers("ostype.txt") {
            let out = call(&env, tool, args).await;
            assert!(
                out.is_error && out.content.contains("kernel"),
                "{tool}(ostype.txt) was not refused: {:.200}",
                out.content
            );
        }
    }
    eprintln!("pseudo file systems tried: {tried}");
}

/// An attachment is read by the channel later: it gets the open file, and
/// as its name the one the kernel found it at, with no link in it, so
/// repointing a link the model named afterwards leads the channel nowhere
/// else.
#[cfg(feature = "agent")]
#[tokio::test]
async fn an_attachment_named_through_a_link_is_handed_on_by_its_real_name() {
    use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
    use toolsmith_builtins::agent::{ChannelSink, Messenger};
    let env = Env::new();
    std::fs::create_dir(env.ws.join("real")).unwrap();
    std::fs::write(env.ws.join("real/a.txt"), "inside").unwrap();
    symlink("real", env.ws.join("docs")).unwrap();
    symlink("real/a.txt", env.ws.join("alias.txt")).unwrap();
    let (sink, mut outbox) = ChannelSink::new(8);
    let ctx = ToolContext::new()
        .with_workspace(&env.ws)
        .with_channel("cli", "1")
        .with_state(Messenger::new(sink));
    let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["message"])).unwrap();
    let out = registry
        .call(
            "message",
            json!({"content": "see", "media": ["docs/a.txt", "alias.txt", "./real/../docs/a.txt"]}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    let media = outbox.recv().await.unwrap().media;
    // The model repoints the links it named once the tool has answered.
    std::fs::remove_file(env.ws.join("docs")).unwrap();
    symlink(&env.outside, env.ws.join("docs")).unwrap();
    std::fs::remove_file(env.ws.join("alias.txt")).unwrap();
    symlink(env.outside.join("secret.txt"), env.ws.join("alias.txt")).unwrap();
    std::fs::write(env.outside.join("a.txt"), SECRET).unwrap();
    assert_eq!(media.len(), 3);
    let real = env.ws.canonicalize().unwrap().join("real/a.txt");
    for attachment in &media {
        assert_eq!(attachment.path(), real);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut attachment.reader(), &mut text).unwrap();
        assert_eq!(text, "inside");
    }
}

/// Replacing a file keeps its permissions, but never its set-user-ID or
/// set-group-ID bit: model-written bytes must not become a program that
/// runs as the file's owner (the tool's own user, root for some hosts).
#[tokio::test]
async fn a_replaced_set_id_program_keeps_no_set_id_bit() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    for (name, mode) in [
        ("suid.sh", 0o4755),
        ("sgid.sh", 0o2755),
        ("both.sh", 0o6750),
    ] {
        let path = env.ws.join(name);
        std::fs::write(&path, "#!/bin/sh\necho old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = call(
            &env,
            "write_file",
            json!({"path": name, "content": "#!/bin/sh\necho pwned\n"}),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        let kept = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(kept, mode & 0o777, "{name}: mode {kept:o}");
        let out = call(
            &env,
            "edit_file",
            json!({"path": name, "old_text": "pwned", "new_text": "again"}),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        let kept = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(kept, mode & 0o777, "{name} after an edit: mode {kept:o}");
    }
}

/// Ignore files are read by the search tools themselves: a FIFO, a link to
/// a device and a sparse terabyte in their place block and exhaust nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_ignore_files_block_no_search() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws.join("a/.git/info")).unwrap();
    std::fs::create_dir_all(env.ws.join("b")).unwrap();
    std::fs::create_dir_all(env.ws.join("c")).unwrap();
    std::fs::write(env.ws.join("a/x.txt"), "needle\n").unwrap();
    std::fs::write(env.ws.join("b/x.txt"), "needle\n").unwrap();
    std::fs::write(env.ws.join("c/x.txt"), "needle\n").unwrap();
    fs_support::mkfifo(&env.ws.join("a/.gitignore"));
    fs_support::mkfifo(&env.ws.join("a/.git/info/exclude"));
    symlink("/dev/zero", env.ws.join("b/.ignore")).unwrap();
    let big = std::fs::File::create(env.ws.join("c/.gitignore")).unwrap();
    if big.set_len(1 << 40).is_err() {
        eprintln!("no sparse terabyte here: c/.gitignore left empty");
    }
    for (tool, args) in [
        ("grep", json!({"pattern": "needle", "path": "."})),
        ("grep", json!({"pattern": "needle", "path": "a"})),
        ("glob", json!({"pattern": "**/x.txt"})),
        ("list_dir", json!({"path": "."})),
    ] {
        let out = call(&env, tool, args.clone()).await;
        assert!(!out.is_error, "{tool}({args}): {}", out.content);
    }
}

/// The memory file is read whole to add a fact: a sparse terabyte in its
/// place is refused after a bounded read, never read into memory.
#[cfg(feature = "agent")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_memory_file_is_refused_not_read_whole() {
    use toolsmith_builtins::agent::{MemoryFile, save_memory};
    let env = Env::new();
    let big = std::fs::File::create(env.ws.join("MEMORY.md")).unwrap();
    if big.set_len(1 << 40).is_err() {
        eprintln!("this file system refuses a sparse terabyte: case left out");
        return;
    }
    drop(big);
    let ctx = env
        .ctx
        .clone()
        .with_state(MemoryFile::new("MEMORY.md", "Facts"));
    let err = tokio::time::timeout(
        DEADLINE,
        tokio::task::spawn_blocking(move || save_memory(&ctx, "a fact".into())),
    )
    .await
    .expect("save_memory returns")
    .unwrap()
    .unwrap_err();
    assert!(err.to_string().contains("too large"), "{err}");
    assert_eq!(
        std::fs::metadata(env.ws.join("MEMORY.md")).unwrap().len(),
        1 << 40
    );
}
