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
