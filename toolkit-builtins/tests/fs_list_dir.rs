//! `list_dir` against real trees: marking, recursion, the entry cap, noise.

mod fs_support;

use fs_support::Env;
use serde_json::json;

fn tree(env: &Env) {
    env.write("README.md", "hello\n");
    env.write("src/lib.rs", "x".repeat(2048));
    env.write("src/bin/main.rs", "");
    env.write(".git/HEAD", "ref\n");
    env.write("node_modules/pkg/index.js", "");
    env.write("target/debug/app", "");
    env.write("__pycache__/m.pyc", "");
    env.write("env1/pyvenv.cfg", "home = /usr\n");
    env.write("env1/lib/site.py", "");
    std::os::unix::fs::symlink("src/lib.rs", env.ws.join("link.rs")).unwrap();
}

#[tokio::test]
async fn one_level_marks_directories_and_skips_noise() {
    let env = Env::new();
    tree(&env);
    let out = env.ok("list_dir", json!({})).await;
    assert_eq!(
        out.content,
        "README.md  (6 B)\nlink.rs -> src/lib.rs\nsrc/\n(skipped noise: .git/, __pycache__/, env1/, node_modules/, target/)\n"
    );
}

#[tokio::test]
async fn recursion_lists_everything_below() {
    let env = Env::new();
    tree(&env);
    let out = env
        .ok("list_dir", json!({"path": "src", "recursive": "true"}))
        .await;
    assert_eq!(out.content, "bin/\nbin/main.rs  (0 B)\nlib.rs  (2.0 KB)\n");
    let out = env.ok("list_dir", json!({"recursive": true})).await;
    assert!(
        out.content.contains("src/bin/main.rs  (0 B)\n"),
        "{}",
        out.content
    );
    assert!(!out.content.contains("node_modules/pkg"), "{}", out.content);
}

#[tokio::test]
async fn a_noise_directory_named_as_the_path_is_listed() {
    let env = Env::new();
    tree(&env);
    let out = env.ok("list_dir", json!({"path": "target"})).await;
    assert_eq!(out.content, "debug/\n");
}

#[tokio::test]
async fn the_entry_cap_stops_the_listing_with_a_note() {
    let env = Env::new();
    for i in 0..30 {
        env.write(&format!("d/f{i:02}.txt"), "");
    }
    let out = env
        .ok("list_dir", json!({"path": "d", "max_entries": 5}))
        .await;
    let lines: Vec<&str> = out.content.lines().collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0], "f00.txt  (0 B)");
    assert_eq!(
        lines[5],
        "(stopped at 5 entries; list a subdirectory or raise max_entries to see more)"
    );
    let err = env
        .err("list_dir", json!({"path": "d", "max_entries": 0}))
        .await;
    assert!(err.contains("max_entries"), "{err}");
}

#[tokio::test]
async fn files_missing_paths_and_empty_directories_are_explained() {
    let env = Env::new();
    env.write("a.txt", "");
    std::fs::create_dir(env.ws.join("empty")).unwrap();
    let err = env.err("list_dir", json!({"path": "a.txt"})).await;
    assert!(
        err.contains("is a file, not a directory; use read_file"),
        "{err}"
    );
    let err = env.err("list_dir", json!({"path": "nope"})).await;
    assert!(err.contains("`nope` does not exist"), "{err}");
    let out = env.ok("list_dir", json!({"path": "empty"})).await;
    assert_eq!(out.content, "`empty` is empty");
}
