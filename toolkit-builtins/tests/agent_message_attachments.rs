//! An attachment is checked when the model names it and read later by the
//! host's channel: what the channel reads must be the file that was
//! checked, whatever is put at its name in between (a link out, a FIFO).

#![cfg(all(feature = "agent", unix))]

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
use toolsmith_builtins::agent::{Attachment, ChannelSink, Messenger, OutboundMessage};

/// Put a link to `target` at `path`, in one rename: the name never stops existing.
fn swap_in_link(path: &Path, target: &Path) {
    let temp = path.with_extension("swap");
    std::os::unix::fs::symlink(target, &temp).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

/// Put a FIFO at `path`, in one rename.
fn swap_in_fifo(path: &Path) {
    let temp = path.with_extension("swap");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &temp,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    std::fs::rename(&temp, path).unwrap();
}

/// What a channel reads of the message's attachments: through the open
/// file, and (on Linux) by the path that names it. Each read is in a thread
/// of its own, bounded in time: a FIFO would block it for ever.
fn read_as_the_channel(message: &OutboundMessage) -> Vec<Option<Vec<u8>>> {
    let mut reads: Vec<Box<dyn FnOnce() -> Option<Vec<u8>> + Send>> = Vec::new();
    for attachment in &message.media {
        let attachment = attachment.clone();
        reads.push(Box::new(move || {
            let mut bytes = Vec::new();
            attachment.reader().read_to_end(&mut bytes).ok()?;
            Some(bytes)
        }));
    }
    #[cfg(target_os = "linux")]
    for attachment in &message.media {
        let attachment = attachment.clone();
        reads.push(Box::new(move || std::fs::read(attachment.fd_path()).ok()));
    }
    reads
        .into_iter()
        .map(|read| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || tx.send(read()));
            rx.recv_timeout(Duration::from_secs(10)).ok().flatten()
        })
        .collect()
}

/// Between the check and the channel's read, the file's name, and then the
/// folder it lies in, are swapped for links out of the workspace, and a
/// FIFO is put in place of a third: the channel still reads the three files
/// the model named, not the secret, and is not left waiting.
#[tokio::test]
async fn the_channel_reads_the_file_that_was_checked() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "SECRET").unwrap();
    std::fs::create_dir(outside.path().join("out")).unwrap();
    std::fs::write(outside.path().join("out/chart.png"), "SECRET").unwrap();
    let root = dir.path();
    std::fs::write(root.join("notes.txt"), "notes").unwrap();
    std::fs::create_dir(root.join("out")).unwrap();
    std::fs::write(root.join("out/chart.png"), "chart").unwrap();
    std::fs::write(root.join("song.mp3"), "song").unwrap();

    let (sink, mut outbox) = ChannelSink::new(8);
    let ctx = ToolContext::new()
        .with_workspace(root)
        .with_channel("cli", "1")
        .with_state(Messenger::new(sink));
    let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["message"])).unwrap();
    let out = registry
        .call(
            "message",
            json!({"content": "see", "media": ["notes.txt", "out/chart.png", "song.mp3"]}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    let message = outbox.recv().await.unwrap();

    swap_in_link(&root.join("notes.txt"), &secret);
    std::fs::rename(root.join("out"), root.join("out.old")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("out"), root.join("out")).unwrap();
    swap_in_fifo(&root.join("song.mp3"));

    let read = read_as_the_channel(&message);
    let mut expected: Vec<Option<Vec<u8>>> = ["notes", "chart", "song"]
        .iter()
        .map(|text| Some(text.as_bytes().to_vec()))
        .collect();
    if cfg!(target_os = "linux") {
        expected.extend(expected.clone());
    }
    assert_eq!(read, expected);

    // Each reader starts at the start, whatever another has read.
    let mut first = message.media[0].reader();
    let mut head = [0u8; 2];
    first.read_exact(&mut head).unwrap();
    let mut whole = String::new();
    message.media[0]
        .reader()
        .read_to_string(&mut whole)
        .unwrap();
    assert_eq!((&head, whole.as_str()), (b"no", "notes"));
    assert_eq!(first.seek(SeekFrom::End(-1)).unwrap(), 4);
    assert!(first.seek(SeekFrom::Current(-10)).is_err());

    // A host attaching files of its own attaches regular files only.
    assert!(Attachment::new(std::fs::File::open(root).unwrap(), root).is_err());
}

/// A library that takes paths often hands them to a program it runs
/// (`ffmpeg`, `curl -F @file`): the path names this process's open file,
/// not the program's own descriptor of that number, so the program reads
/// the attachment while it lives.
#[cfg(target_os = "linux")]
#[test]
fn fd_path_opens_the_file_in_a_program_the_channel_runs() {
    let dir = tempfile::tempdir().unwrap();
    let picture = dir.path().join("picture.png");
    std::fs::write(&picture, "PICTURE").unwrap();
    let attachment = Attachment::new(std::fs::File::open(&picture).unwrap(), &picture).unwrap();
    let path = attachment.fd_path();
    assert!(
        path.starts_with(format!("/proc/{}/fd", std::process::id())),
        "{}",
        path.display()
    );
    let mut child = std::process::Command::new("cat")
        .arg(&*path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    std::thread::spawn(move || {
        let (mut out, mut err) = (String::new(), String::new());
        let _ = stdout.read_to_string(&mut out);
        let _ = stderr.read_to_string(&mut err);
        let _ = tx.send((out, err));
    });
    let Ok((out, err)) = rx.recv_timeout(Duration::from_secs(20)) else {
        let _ = child.kill();
        panic!("cat {} did not end", path.display());
    };
    let _ = child.wait();
    assert_eq!(out, "PICTURE", "cat {}: {err}", path.display());
}

/// Runs `f` in a thread of its own, failing the test if it takes longer than a minute.
#[cfg(target_os = "linux")]
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(value) => value,
        // The body panicked: report its panic, not a timeout.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().unwrap_err())
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the test ran for more than a minute")
        }
    }
}

/// `Command::arg` keeps a copy of `fd_path`, which does not borrow the
/// attachment: the safe use keeps the attachment until the program has
/// ended, and a file the host opens after it is dropped (given the same
/// number) is not what the program read. A program handed a duplicate of
/// the open file as its input reads the attachment even when the
/// attachment is dropped before it runs and its number given to another
/// file.
#[cfg(target_os = "linux")]
#[test]
fn a_program_reads_the_attachment_by_its_path_while_it_lives_or_by_its_open_file() {
    use std::os::fd::AsRawFd;
    use std::process::{Command, Stdio};

    let (by_path, by_file, reused) = within_a_minute(|| {
        let dir = tempfile::tempdir().unwrap();
        let picture = dir.path().join("picture.png");
        std::fs::write(&picture, "PICTURE").unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "SECRET").unwrap();

        // By its path: built, run and waited for while the attachment lives.
        let attachment = Attachment::new(std::fs::File::open(&picture).unwrap(), &picture).unwrap();
        let by_path = Command::new("cat")
            .arg(attachment.fd_path())
            .stderr(Stdio::null())
            .output()
            .unwrap();
        drop(attachment);
        let after = std::fs::File::open(&secret).unwrap();
        drop(after);

        // By its open file: a duplicate of the descriptor as the program's input.
        let attachment = Attachment::new(std::fs::File::open(&picture).unwrap(), &picture).unwrap();
        let number = attachment.file().as_raw_fd();
        let mut command = Command::new("cat");
        command
            .stdin(attachment.file().try_clone().unwrap())
            .stderr(Stdio::null());
        drop(attachment);
        // The lowest free number: the one the attachment had.
        let held = std::fs::File::open(&secret).unwrap();
        let reused = held.as_raw_fd() == number;
        let by_file = command.output().unwrap();
        drop(held);
        (
            String::from_utf8_lossy(&by_path.stdout).into_owned(),
            String::from_utf8_lossy(&by_file.stdout).into_owned(),
            reused,
        )
    });
    assert_eq!(by_path, "PICTURE");
    assert_eq!(by_file, "PICTURE", "the number was given again: {reused}");
}

/// How long one hostile call may take before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(30);

/// A workspace with `inside.txt`, a neighbour holding a secret, and the
/// `message` tool wired to an outbox.
struct Hostile {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    ctx: ToolContext,
    registry: ToolRegistry,
    outbox: tokio::sync::mpsc::Receiver<OutboundMessage>,
}

impl Hostile {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "SECRET").unwrap();
        std::fs::write(root.join("inside.txt"), "inside").unwrap();
        let (sink, outbox) = ChannelSink::new(1024);
        let ctx = ToolContext::new()
            .with_workspace(&root)
            .with_channel("cli", "1")
            .with_state(Messenger::new(sink));
        let registry =
            ToolRegistry::from_inventory(&ToolFilter::default().names(["message"])).unwrap();
        Self {
            _dir: dir,
            root: root.canonicalize().unwrap(),
            outside: outside.canonicalize().unwrap(),
            ctx,
            registry,
            outbox,
        }
    }

    /// Attach `path`: the message sent, or the refusal's text.
    async fn attach(&mut self, path: &str) -> Result<OutboundMessage, String> {
        let call = self.registry.call(
            "message",
            json!({"content": "see", "media": [path]}),
            &self.ctx,
        );
        let out = tokio::time::timeout(DEADLINE, call)
            .await
            .unwrap_or_else(|_| panic!("attaching {path:?} did not answer within {DEADLINE:?}"));
        assert!(
            !out.content.contains("internal error"),
            "{path:?}: {}",
            out.content
        );
        if out.is_error {
            assert!(
                self.outbox.try_recv().is_err(),
                "{path:?}: refused, yet sent"
            );
            Err(out.content)
        } else {
            Ok(self.outbox.try_recv().expect("a message was sent"))
        }
    }
}

/// Paths a model names to attach a secret of the host's or to leave the
/// channel waiting: the host's environment and open files in /proc,
/// devices, links out (absolute, relative, through a linked parent, chains),
/// a device and a socket made in the workspace, a FIFO with a writer, odd
/// spellings. Each is refused; an attachment that is sent is a file of the
/// workspace, named by its real name, and read without waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_attachments_are_refused_or_stay_inside() {
    use std::os::unix::fs::symlink;
    let mut env = Hostile::new();
    let root = env.root.clone();
    let outside = env.outside.clone();
    symlink("/proc/self/environ", root.join("environ.txt")).unwrap();
    symlink(outside.join("secret.txt"), root.join("abs.txt")).unwrap();
    symlink("../outside/secret.txt", root.join("rel.txt")).unwrap();
    symlink("../outside", root.join("linked_dir")).unwrap();
    symlink(&outside, root.join("abs_dir")).unwrap();
    symlink("..", root.join("up")).unwrap();
    symlink("chain2", root.join("chain1")).unwrap();
    symlink("rel.txt", root.join("chain2")).unwrap();
    symlink("loop", root.join("loop")).unwrap();
    symlink("inside.txt", root.join("alias.txt")).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(root.join("sock.png")).unwrap();
    let pipe = root.join("pipe.png");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &pipe,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    // A writer holds the FIFO open: an open for reading would not block,
    // but a read would wait for bytes that never come.
    let _writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&pipe)
        .unwrap();
    // A device made in the workspace (needs root; left out otherwise).
    let device = rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("zero.png"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o600),
        rustix::fs::makedev(1, 5),
    )
    .is_ok();
    let outside_abs = outside.join("secret.txt").display().to_string();
    let mut hostile = vec![
        "/proc/self/environ".to_owned(),
        "/proc/self/fd/0".to_owned(),
        "/proc/self/cwd/inside.txt".to_owned(),
        "/proc/self/root/etc/passwd".to_owned(),
        "/dev/zero".to_owned(),
        "/dev/stdin".to_owned(),
        "/etc/passwd".to_owned(),
        outside_abs,
        format!("{}/../outside/secret.txt", root.display()),
        "../outside/secret.txt".to_owned(),
        "sub/../../outside/secret.txt".to_owned(),
        "environ.txt".to_owned(),
        "abs.txt".to_owned(),
        "rel.txt".to_owned(),
        "linked_dir/secret.txt".to_owned(),
        "abs_dir/secret.txt".to_owned(),
        "up/outside/secret.txt".to_owned(),
        // Out and back in: the kernel refuses the way out.
        "up/ws/inside.txt".to_owned(),
        "chain1".to_owned(),
        "loop".to_owned(),
        "sock.png".to_owned(),
        "pipe.png".to_owned(),
        "sub".to_owned(),
        ".".to_owned(),
        "/".to_owned(),
        String::new(),
        "~/.ssh/id_rsa".to_owned(),
        "inside.txt\0".to_owned(),
        "\u{202e}txt.edisni".to_owned(),
        "inside\u{0301}.txt".to_owned(),
        "a/".repeat(3000),
        "x".repeat(300),
    ];
    if device {
        hostile.push("zero.png".to_owned());
    } else {
        eprintln!("no device can be made here: that case is left out");
    }
    let (mut tried, mut refused) = (0, 0);
    for path in &hostile {
        tried += 1;
        match env.attach(path).await {
            Err(_) => refused += 1,
            Ok(message) => panic!("{path:?} was attached: {:?}", message.media),
        }
    }
    // What is sent stays inside, under its real name, and reads at once.
    let mut contained = 0;
    for path in [
        "inside.txt",
        "alias.txt",
        "./sub/../inside.txt",
        // Read as `inside.txt`, as every file tool reads these spellings.
        "inside.txt/",
        "inside.txt/.",
    ] {
        tried += 1;
        let message = env
            .attach(path)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(message.media[0].path(), root.join("inside.txt"));
        assert_eq!(
            read_as_the_channel(&message),
            vec![Some(b"inside".to_vec()); 2]
        );
        contained += 1;
    }
    eprintln!("attachments: tried {tried}, refused {refused}, contained {contained}, escaped 0");
    assert_eq!(tried, refused + contained);
}

/// A folder on the attachment's path is swapped for a link out of the
/// workspace, over and over, while the model attaches a file in it: every
/// attachment sent is the workspace's file, never the neighbour's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_while_attaching_never_leads_out() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let mut env = Hostile::new();
    let root = env.root.clone();
    std::fs::create_dir(root.join("real")).unwrap();
    std::fs::write(root.join("real/f.txt"), "inside").unwrap();
    std::fs::write(env.outside.join("f.txt"), "SECRET").unwrap();
    std::os::unix::fs::symlink("real", root.join("d")).unwrap();
    std::os::unix::fs::symlink("../outside", root.join("evil")).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let flipper = {
        let (done, swaps, root) = (Arc::clone(&done), Arc::clone(&swaps), root.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                // `d` becomes, in one rename each, a link to the real
                // folder and a link out.
                for target in ["real", "../outside"] {
                    let temp = root.join("d.swap");
                    let _ = std::fs::remove_file(&temp);
                    std::os::unix::fs::symlink(target, &temp).unwrap();
                    std::fs::rename(&temp, root.join("d")).unwrap();
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let (mut tried, mut refused, mut contained) = (0, 0, 0);
    for _ in 0..400 {
        for path in ["d/f.txt", "evil/f.txt", "d/../real/f.txt"] {
            tried += 1;
            match env.attach(path).await {
                Err(_) => refused += 1,
                Ok(message) => {
                    assert_eq!(message.media[0].path(), root.join("real/f.txt"));
                    let mut text = String::new();
                    message.media[0].reader().read_to_string(&mut text).unwrap();
                    assert_eq!(text, "inside", "{path}");
                    contained += 1;
                }
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    eprintln!(
        "swapped folder: tried {tried}, refused {refused}, contained {contained}, escaped 0, swaps {}",
        swaps.load(Ordering::Relaxed)
    );
    assert!(swaps.load(Ordering::Relaxed) > 10, "the swap hardly ran");
    assert!(
        contained > 0 && refused > 0,
        "the race never went both ways"
    );
}

/// Ten attachments of a sparse terabyte: the tool opens them, never reads
/// them, and answers at once; the channel reads what it chooses to.
#[tokio::test]
async fn huge_attachments_are_opened_not_read() {
    let mut env = Hostile::new();
    let big = std::fs::File::create(env.root.join("big.bin")).unwrap();
    if big.set_len(1 << 40).is_err() {
        eprintln!("this file system refuses a sparse terabyte: case left out");
        return;
    }
    let call = env.registry.call(
        "message",
        json!({"content": "see", "media": vec!["big.bin"; 10]}),
        &env.ctx,
    );
    let out = tokio::time::timeout(DEADLINE, call).await.unwrap();
    assert!(!out.is_error, "{}", out.content);
    let message = env.outbox.try_recv().unwrap();
    assert_eq!(message.media.len(), 10);
    // Eleven are past the bound.
    let call = env.registry.call(
        "message",
        json!({"content": "see", "media": vec!["big.bin"; 11]}),
        &env.ctx,
    );
    let out = tokio::time::timeout(DEADLINE, call).await.unwrap();
    assert!(out.is_error, "{}", out.content);
}

/// The host's outbox is full and nobody reads it (a stalled channel): a
/// message the model sends then does not wait for ever, but ends with the
/// call's time limit, as an error.
#[tokio::test(start_paused = true)]
async fn a_stalled_outbox_does_not_hold_the_call_for_ever() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let (sink, outbox) = ChannelSink::new(1);
    let ctx = ToolContext::new()
        .with_workspace(dir.path())
        .with_channel("cli", "1")
        .with_state(Messenger::new(sink));
    let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["message"])).unwrap();
    let args = json!({"content": "see", "media": ["a.txt"]});
    let first = registry.call("message", args.clone(), &ctx).await;
    assert!(!first.is_error, "{}", first.content);
    // Paused time moves on when every task waits: a call with no bound
    // would make this wait for an hour, then fail.
    let second = tokio::time::timeout(
        Duration::from_secs(3600),
        registry.call("message", args, &ctx),
    )
    .await
    .expect("the call is bounded in time");
    assert!(second.is_error, "{}", second.content);
    drop(outbox);
}
