//! `read_file` against real files: numbering, paging, the character cap,
//! streaming through a large file, devices, binaries and images.

// Only the peak-memory reading is used here: the huge file is read in
// this process, no test runs in a child, so the rest is unused.
#[allow(dead_code)]
mod child_support;
mod fs_support;

use std::io::Write;

use child_support::peak_rss_kb;
use fs_support::Env;
use serde_json::json;
use toolsmith::ToolContext;
use toolsmith_builtins::fs::{FsLimits, read_file};
use toolsmith_builtins::sandbox::Workspace;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn lines_come_back_numbered() {
    let env = Env::new();
    env.write("a.txt", "alpha\nbeta\r\ngamma");
    let out = env.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(out.content, "1|alpha\n2|beta\n3|gamma\n");
}

#[tokio::test]
async fn offset_and_limit_page_with_a_note_on_how_to_continue() {
    let env = Env::new();
    env.write("a.txt", numbered(5000));
    // Lenient casting: the model sent numbers as strings.
    let out = env
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": "201", "limit": "3"}),
        )
        .await;
    assert_eq!(
        out.content,
        "201|line 201\n202|line 202\n203|line 203\n(showing lines 201-203 of 5000; call read_file with offset=204 to continue)\n"
    );
    let out = env
        .ok("read_file", json!({"path": "a.txt", "offset": 4999}))
        .await;
    assert_eq!(out.content, "4999|line 4999\n5000|line 5000\n");
}

#[tokio::test]
async fn end_line_is_another_way_to_give_the_limit() {
    let env = Env::new();
    env.write("a.txt", numbered(100));
    let out = env
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": 40, "end_line": 42}),
        )
        .await;
    assert_eq!(
        out.content,
        "40|line 40\n41|line 41\n42|line 42\n(showing lines 40-42 of 100; call read_file with offset=43 to continue)\n"
    );
    // With both, the shorter wins.
    let out = env
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": 40, "end_line": 60, "limit": 1}),
        )
        .await;
    assert!(
        out.content
            .starts_with("40|line 40\n(showing lines 40-40 of 100;")
    );
    let err = env
        .err(
            "read_file",
            json!({"path": "a.txt", "offset": 40, "end_line": 39}),
        )
        .await;
    assert!(err.contains("end_line 39 is before offset 40"), "{err}");
}

#[tokio::test]
async fn without_a_limit_the_default_line_count_applies() {
    let env = Env::with_limits(FsLimits {
        default_read_lines: 10,
        ..FsLimits::default()
    });
    env.write("a.txt", numbered(30));
    let out = env.ok("read_file", json!({"path": "a.txt"})).await;
    assert!(out.content.starts_with("1|line 1\n"));
    assert!(out.content.ends_with(
        "10|line 10\n(showing lines 1-10 of 30; call read_file with offset=11 to continue)\n"
    ));
}

#[tokio::test]
async fn the_character_cap_stops_the_output_with_a_note() {
    let env = Env::with_limits(FsLimits {
        max_read_chars: 100,
        ..FsLimits::default()
    });
    env.write("a.txt", numbered(100));
    let out = env.ok("read_file", json!({"path": "a.txt"})).await;
    let body: Vec<&str> = out.content.lines().collect();
    let note = body.last().unwrap();
    assert!(
        note.starts_with("(output capped at 100 characters; showing lines 1-"),
        "{note}"
    );
    let shown = body.len() - 1;
    assert!(
        note.ends_with(&format!(
            "of 100; call read_file with offset={} to continue)",
            shown + 1
        )),
        "{note}"
    );
    assert!(out.content.len() < 100 + note.len() + 2);
}

#[tokio::test]
async fn long_lines_are_cut() {
    let env = Env::with_limits(FsLimits {
        max_line_chars: 10,
        ..FsLimits::default()
    });
    env.write("a.txt", format!("{}\nshort\n", "é".repeat(50)));
    let out = env.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(
        out.content,
        format!(
            "1|{}… [line cut: 100 bytes in all]\n2|short\n",
            "é".repeat(10)
        )
    );
}

#[tokio::test]
async fn bad_offsets_and_missing_files_are_explained() {
    let env = Env::new();
    env.write("a.txt", "one\ntwo\n");
    let err = env
        .err("read_file", json!({"path": "a.txt", "offset": 9}))
        .await;
    assert!(
        err.contains("offset 9 is past the end of `a.txt`, which has 2 lines"),
        "{err}"
    );
    let err = env
        .err("read_file", json!({"path": "a.txt", "offset": 0}))
        .await;
    assert!(err.contains("offset"), "{err}");
    let err = env.err("read_file", json!({"path": "nope.txt"})).await;
    assert!(err.contains("`nope.txt` does not exist"), "{err}");
    env.write("d/x", "");
    let err = env.err("read_file", json!({"path": "d"})).await;
    assert!(err.contains("is a directory; use list_dir"), "{err}");
    let out = env.ok("read_file", json!({"path": "d/x"})).await;
    assert_eq!(out.content, "(`d/x` is empty)");
}

#[tokio::test]
async fn binary_files_are_described_not_dumped() {
    let env = Env::new();
    let mut elf = b"\x7fELF\x02\x01\x01\0".to_vec();
    elf.extend_from_slice(&[0u8; 2000]);
    env.write("prog", &elf);
    let out = env.ok("read_file", json!({"path": "prog"})).await;
    assert_eq!(
        out.content,
        "`prog` is a binary file (ELF executable or library, 2.0 KB); read_file shows only text and images."
    );
    env.write("data.bin", b"abc\0def");
    let out = env.ok("read_file", json!({"path": "data.bin"})).await;
    assert!(out.content.contains("binary data"), "{}", out.content);
}

#[tokio::test]
async fn images_are_returned_as_images() {
    let env = Env::new();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";
    env.write("pic.png", png);
    let out = env.ok("read_file", json!({"path": "pic.png"})).await;
    assert_eq!(out.images.len(), 1);
    assert_eq!(out.images[0].mime_type, "image/png");
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&out.images[0].data)
        .unwrap();
    assert_eq!(decoded, png);
    let small = Env::with_limits(FsLimits {
        max_image_bytes: 10,
        ..FsLimits::default()
    });
    small.write("pic.png", png);
    let err = small.err("read_file", json!({"path": "pic.png"})).await;
    assert!(err.contains("is an image (image/png)"), "{err}");
}

#[tokio::test]
async fn devices_pipes_and_process_files_are_refused() {
    let env = Env::new();
    // A named pipe inside the workspace: opening it must not hang.
    let fifo = env.ws.join("pipe");
    rustix_mkfifo(&fifo);
    let err = env.err("read_file", json!({"path": "pipe"})).await;
    assert!(err.contains("is a named pipe"), "{err}");

    // A workspace rooted at `/` still refuses devices (by their type) and
    // another process's descriptors (magic links are never jumped through;
    // another process's are not even listed to us without privileges).
    let ctx = ToolContext::new().with_state(Workspace::new("/").unwrap());
    for (path, reasons) in [
        ("/dev/zero", &["is a device file"][..]),
        ("/dev/urandom", &["is a device file"]),
        ("dev/null", &["is a device file"]),
        ("/proc/self/fd/0", &["through a symlink"]),
        ("/proc/1/fd/1", &["through a symlink", "Permission denied"]),
    ] {
        let err = read_file(&ctx, path.to_owned(), 1, None, None)
            .await
            .unwrap_err()
            .to_string();
        assert!(reasons.iter().any(|r| err.contains(r)), "{path}: {err}");
    }
}

fn rustix_mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Reading lines 1,000,000-1,000,100 of a 2 GB file streams: the process
/// grows by far less than the file (measured as peak resident memory).
#[tokio::test]
async fn a_huge_file_is_streamed_not_loaded() {
    let env = Env::new();
    let path = env.ws.join("huge.log");
    {
        let mut file =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
        // 1,000,200 numbered lines, then a sparse tail up to 2 GB.
        for i in 1..=1_000_200u64 {
            writeln!(file, "row {i:>10} {}", "x".repeat(40)).unwrap();
        }
        file.flush().unwrap();
    }
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(2 * 1024 * 1024 * 1024).unwrap();
    let before = peak_rss_kb();
    let out = read_file(&env.ctx, "huge.log".to_owned(), 1_000_000, Some(101), None)
        .await
        .unwrap();
    let grown = peak_rss_kb().saturating_sub(before);
    let lines: Vec<&str> = out.content.lines().collect();
    assert_eq!(lines.len(), 102, "{}", lines.last().unwrap());
    assert!(
        lines[0].starts_with("1000000|row    1000000 "),
        "{}",
        lines[0]
    );
    assert!(
        lines[100].starts_with("1000100|row    1000100 "),
        "{}",
        lines[100]
    );
    assert_eq!(
        *lines.last().unwrap(),
        "(showing lines 1000000-1000100 of a 2.0 GB file; call read_file with offset=1000101 to continue)"
    );
    assert!(grown < 64 * 1024, "peak memory grew by {grown} KB");
}

#[tokio::test]
async fn the_tool_is_marked_read_only() {
    let env = Env::new();
    let spec = env.registry.get("read_file").unwrap().spec().clone();
    assert!(spec.annotations.read_only);
    assert!(spec.annotations.concurrency_safe());
}
