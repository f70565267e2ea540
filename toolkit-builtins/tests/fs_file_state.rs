//! `FileState` against real files: existing files are changed only once
//! read as they are now, repeated reads of unchanged lines get a note, each
//! part can be turned off, and a FIFO or symlink swapped in between the read
//! and the edit is refused or harmless.

mod fs_support;

use std::future::Future;
use std::time::Duration;

use fs_support::{Env, mkfifo, set_mtime};
use serde_json::json;
use toolsmith_builtins::fs::{FileState, FsLimits};

/// Every call here must end; a hang is a failed test, not a stuck suite.
async fn bounded<T>(call: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("the call did not return")
}

fn session() -> Env {
    Env::new().with_file_state(FileState::new())
}

fn edit(old: &str, new: &str) -> serde_json::Value {
    json!({"path": "a.txt", "old_text": old, "new_text": new})
}

#[tokio::test]
async fn an_existing_file_is_changed_only_after_a_read() {
    let env = session();
    env.write("a.txt", "one\ntwo\n");
    let err = env.err("edit_file", edit("two", "2")).await;
    assert!(
        err.contains("`a.txt` has not been read in this session; read it with read_file first"),
        "{err}"
    );
    let err = env
        .err("write_file", json!({"path": "a.txt", "content": "new\n"}))
        .await;
    assert!(err.contains("has not been read in this session"), "{err}");
    assert_eq!(env.read("a.txt"), "one\ntwo\n");

    // Any read counts, even of one line: the model saw the file as it is.
    env.ok("read_file", json!({"path": "a.txt", "limit": 1}))
        .await;
    env.ok("edit_file", edit("two", "2")).await;
    // What the session wrote counts as read: no read is needed in between.
    env.ok("edit_file", edit("one", "1")).await;
    env.ok("write_file", json!({"path": "a.txt", "content": "whole\n"}))
        .await;
    assert_eq!(env.read("a.txt"), "whole\n");
}

#[tokio::test]
async fn creating_a_file_needs_no_read() {
    let env = session();
    env.ok("write_file", json!({"path": "new/b.txt", "content": "b\n"}))
        .await;
    env.ok(
        "edit_file",
        json!({"path": "new/b.txt", "old_text": "b", "new_text": "c"}),
    )
    .await;
    assert_eq!(env.read("new/b.txt"), "c\n");
}

#[tokio::test]
async fn a_path_spelled_another_way_is_the_same_file() {
    let env = session();
    env.write("d/a.txt", "x\n");
    env.ok("read_file", json!({"path": "./d/../d/a.txt"})).await;
    let abs = env.ws.join("d/a.txt").to_string_lossy().into_owned();
    env.ok(
        "edit_file",
        json!({"path": abs, "old_text": "x", "new_text": "y"}),
    )
    .await;
    assert_eq!(env.read("d/a.txt"), "y\n");
}

#[tokio::test]
async fn a_change_on_disk_since_the_read_is_refused() {
    let env = session();
    let path = env.write("a.txt", "one\ntwo\n");
    env.ok("read_file", json!({"path": "a.txt"})).await;
    std::fs::write(&path, "one\nTWO\n").unwrap();
    let err = env.err("edit_file", edit("one", "1")).await;
    assert!(
        err.contains("`a.txt` changed on disk since it was last read; read it again"),
        "{err}"
    );
    let err = env
        .err("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(err.contains("changed on disk"), "{err}");
    env.ok("read_file", json!({"path": "a.txt"})).await;
    env.ok("edit_file", edit("one", "1")).await;
    assert_eq!(env.read("a.txt"), "1\nTWO\n");
}

/// The same length and the same modification time, different bytes: what a
/// coarse clock makes of two quick writes. The content hash tells them apart.
#[tokio::test]
async fn a_change_hidden_from_the_clock_is_still_seen() {
    let env = session();
    let path = env.write("a.txt", "aaaa\n");
    set_mtime(&path, 1_000_000);
    env.ok("read_file", json!({"path": "a.txt"})).await;
    std::fs::write(&path, "bbbb\n").unwrap();
    set_mtime(&path, 1_000_000);
    let err = env.err("edit_file", edit("bbbb", "c")).await;
    assert!(err.contains("changed on disk"), "{err}");
    assert_eq!(env.read("a.txt"), "bbbb\n");
}

/// Only the time changed (`touch`): what the model read is still the
/// content, so the edit goes ahead.
#[tokio::test]
async fn a_touch_alone_is_no_change() {
    let env = session();
    let path = env.write("a.txt", "same\n");
    env.ok("read_file", json!({"path": "a.txt"})).await;
    set_mtime(&path, 42);
    env.ok("edit_file", edit("same", "other")).await;
    assert_eq!(env.read("a.txt"), "other\n");
}

#[tokio::test]
async fn a_repeated_read_of_unchanged_lines_gets_a_note() {
    let env = session();
    let path = env.write("a.txt", "1\n2\n3\n4\n5\n");
    let first = env.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(first.content, "1|1\n2|2\n3|3\n4|4\n5|5\n");
    let again = env
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": 2, "limit": 2}),
        )
        .await;
    assert_eq!(
        again.content,
        "Lines 2-3 of `a.txt` are unchanged since your last read_file of them: the text you have is current. (Call read_file again with the same arguments to get it anyway.)"
    );
    // Asked again: the text, for a model that lost the earlier answer.
    let third = env
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": 2, "limit": 2}),
        )
        .await;
    assert_eq!(
        third.content,
        "2|2\n3|3\n(showing lines 2-3 of 5; call read_file with offset=4 to continue)\n"
    );
    // Lines never shown, or a changed file: the text.
    std::fs::write(&path, "1\n2\n3\n4\n5\n6\n").unwrap();
    let changed = env
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": 2, "limit": 2}),
        )
        .await;
    assert_eq!(
        changed.content,
        "2|2\n3|3\n(showing lines 2-3 of 6; call read_file with offset=4 to continue)\n"
    );
    let more = env
        .ok("read_file", json!({"path": "a.txt", "offset": 4}))
        .await;
    assert_eq!(more.content, "4|4\n5|5\n6|6\n");
}

#[tokio::test]
async fn after_an_edit_the_file_is_read_in_full_again() {
    // The model knows what it changed, not the whole file with its new line
    // numbers: a read after an edit returns the text.
    let env = session();
    env.write("a.txt", "one\ntwo\n");
    env.ok("read_file", json!({"path": "a.txt"})).await;
    env.ok("edit_file", edit("two", "2")).await;
    let out = env.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(out.content, "1|one\n2|2\n");
}

#[tokio::test]
async fn the_host_can_turn_each_part_off() {
    let env = Env::new().with_file_state(FileState::new().require_read_before_write(false));
    env.write("a.txt", "x\n");
    env.ok("edit_file", edit("x", "y")).await;
    env.ok("read_file", json!({"path": "a.txt"})).await;
    let out = env.ok("read_file", json!({"path": "a.txt"})).await;
    assert!(
        out.content
            .starts_with("Lines 1-1 of `a.txt` are unchanged"),
        "{}",
        out.content
    );

    let env = Env::new().with_file_state(FileState::new().skip_unchanged_reads(false));
    env.write("a.txt", "x\n");
    env.ok("read_file", json!({"path": "a.txt"})).await;
    let out = env.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(out.content, "1|x\n");
    env.write("c.txt", "c\n");
    let err = env
        .err("write_file", json!({"path": "c.txt", "content": "z"}))
        .await;
    assert!(
        err.contains("has not been read"),
        "the other part stays on: {err}"
    );
}

/// Without a `FileState` the tools track nothing, as before.
#[tokio::test]
async fn without_a_state_nothing_is_tracked() {
    let env = Env::new();
    env.write("a.txt", "x\n");
    env.ok("edit_file", edit("x", "y")).await;
    env.ok("read_file", json!({"path": "a.txt"})).await;
    let out = env.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(out.content, "1|y\n");
}

#[tokio::test]
async fn each_session_has_its_own_state() {
    let reader = session();
    reader.write("a.txt", "x\n");
    reader.ok("read_file", json!({"path": "a.txt"})).await;
    // Another session on the same workspace has not read it.
    let other = reader.ctx.clone().with_state(FileState::new());
    let out = reader
        .registry
        .call("edit_file", edit("x", "y"), &other)
        .await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content.contains("has not been read in this session"),
        "{}",
        out.content
    );
    // After the host dropped old results from the conversation.
    reader.ctx.state::<FileState>().unwrap().clear();
    let err = reader.err("edit_file", edit("x", "y")).await;
    assert!(err.contains("has not been read in this session"), "{err}");
}

#[tokio::test]
async fn a_notebook_is_edited_only_after_a_read() {
    let env = session();
    env.write(
        "n.ipynb",
        r#"{"cells": [{"cell_type": "code", "source": ["1"], "metadata": {}, "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}"#,
    );
    let args = json!({"path": "n.ipynb", "cell_index": 0, "new_source": "2"});
    let err = env.err("notebook_edit", args.clone()).await;
    assert!(err.contains("has not been read in this session"), "{err}");
    env.ok("read_file", json!({"path": "n.ipynb"})).await;
    env.ok("notebook_edit", args).await;
    // Its own write counts as read.
    env.ok(
        "notebook_edit",
        json!({"path": "n.ipynb", "edit_mode": "insert", "new_source": "3"}),
    )
    .await;
}

/// A file too large to hash is told apart by its metadata.
#[tokio::test]
async fn a_file_too_large_to_hash_is_tracked_by_its_metadata() {
    let limits = FsLimits {
        max_edit_bytes: 16,
        ..FsLimits::default()
    };
    let env = Env::with_limits(limits).with_file_state(FileState::new());
    let path = env.write("big.txt", "0123456789\n0123456789\n");
    let err = env
        .err(
            "write_file",
            json!({"path": "big.txt", "content": "small\n"}),
        )
        .await;
    assert!(err.contains("has not been read"), "{err}");
    env.ok("read_file", json!({"path": "big.txt", "limit": 1}))
        .await;
    std::fs::write(&path, "0123456789\n0123456789\nmore\n").unwrap();
    let err = env
        .err(
            "write_file",
            json!({"path": "big.txt", "content": "small\n"}),
        )
        .await;
    assert!(err.contains("changed on disk"), "{err}");
    env.ok("read_file", json!({"path": "big.txt", "limit": 1}))
        .await;
    env.ok(
        "write_file",
        json!({"path": "big.txt", "content": "small\n"}),
    )
    .await;
    assert_eq!(env.read("big.txt"), "small\n");
}

/// Read, then the file is swapped for a FIFO: the edit and the write are
/// refused by the file's type, without waiting for a writer.
#[tokio::test]
async fn a_fifo_swapped_in_after_the_read_is_refused_without_blocking() {
    let env = session();
    let path = env.write("a.txt", "x\n");
    env.ok("read_file", json!({"path": "a.txt"})).await;
    std::fs::remove_file(&path).unwrap();
    mkfifo(&path);
    let err = bounded(env.err("edit_file", edit("x", "y"))).await;
    assert!(err.contains("named pipe"), "{err}");
    let err = bounded(env.err("write_file", json!({"path": "a.txt", "content": "y"}))).await;
    assert!(err.contains("named pipe"), "{err}");
    let err = bounded(env.err("read_file", json!({"path": "a.txt"}))).await;
    assert!(err.contains("named pipe"), "{err}");
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()));
}

/// Read, then the file is swapped for a symlink leading out: refused, and
/// nothing outside is read or written.
#[tokio::test]
async fn a_symlink_out_swapped_in_after_the_read_is_refused() {
    let env = session();
    let path = env.write("a.txt", "x\n");
    env.ok("read_file", json!({"path": "a.txt"})).await;
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("../outside/secret.txt", &path).unwrap();
    let err = bounded(env.err("edit_file", edit("TOP", "y"))).await;
    assert!(err.contains("outside the workspace"), "{err}");
    let err = bounded(env.err("write_file", json!({"path": "a.txt", "content": "y"}))).await;
    assert!(!err.contains(fs_support::SECRET), "{err}");
    env.assert_outside_untouched();
}

/// Read, then the file is swapped for a symlink to another file inside:
/// with other content the edit is refused as a change; with the same
/// content it goes ahead and replaces the link, never writing through it.
#[tokio::test]
async fn a_symlink_inside_swapped_in_is_judged_by_its_content() {
    let env = session();
    let path = env.write("a.txt", "x\n");
    env.write("other.txt", "different\n");
    env.write("twin.txt", "x\n");
    env.ok("read_file", json!({"path": "a.txt"})).await;

    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("other.txt", &path).unwrap();
    let err = bounded(env.err("edit_file", edit("different", "y"))).await;
    assert!(err.contains("changed on disk"), "{err}");
    assert_eq!(env.read("other.txt"), "different\n");

    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("twin.txt", &path).unwrap();
    bounded(env.ok("edit_file", edit("x", "y"))).await;
    assert_eq!(env.read("a.txt"), "y\n");
    assert_eq!(
        env.read("twin.txt"),
        "x\n",
        "the link's target is untouched"
    );
    assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
}

/// With a state, a read hashes the file to know its version, but never
/// past the edit cap: a huge (sparse) file is read as far as the cap, and
/// told apart by its metadata afterwards.
#[tokio::test]
async fn a_huge_file_is_not_read_whole_to_hash_it() {
    let env = session();
    // Text first, so the start reads as text; then 64 GB of holes.
    let path = env.write("huge.log", format!("first\n{}", "line\n".repeat(4096)));
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(64 << 30)
        .unwrap();
    let out = bounded(env.ok("read_file", json!({"path": "huge.log", "limit": 1}))).await;
    assert!(
        out.content
            .starts_with("1|first\n(showing lines 1-1 of a 64.0 GB file"),
        "{}",
        out.content
    );
    // Read, so it may be replaced; a write by someone else since is seen.
    bounded(env.ok(
        "write_file",
        json!({"path": "huge.log", "content": "small\n"}),
    ))
    .await;
    assert_eq!(env.read("huge.log"), "small\n");
}
