//! `grep` against real trees: every parameter, every output mode, paging,
//! binary files, noise and `.gitignore`.

mod fs_support;

use fs_support::Env;
use serde_json::json;

fn tree(env: &Env) {
    env.write(
        "src/lib.rs",
        "use std::fmt;\n\npub fn alpha() -> u32 {\n    1\n}\n\npub fn beta() -> u32 {\n    2\n}\n",
    );
    env.write("src/main.rs", "fn main() {\n    ALPHA();\n}\n");
    env.write("app.py", "def alpha():\n    return 'alpha'\n");
    env.write("notes.md", "alpha and (alpha)\n");
    env.write("data.bin", b"alpha\0\x01\x02binary");
    env.write("target/gen.rs", "pub fn alpha() {}\n");
    env.write(".git/config", "alpha\n");
    env.write("skip/me.rs", "pub fn alpha() {}\n");
    env.write(".gitignore", "skip/\n");
}

#[tokio::test]
async fn files_with_matches_is_the_default() {
    let env = Env::new();
    tree(&env);
    let out = env.ok("grep", json!({"pattern": "alpha"})).await;
    // Binary, noise and ignored files are skipped; sorted by path.
    assert_eq!(out.content, "app.py\nnotes.md\nsrc/lib.rs\n");
}

#[tokio::test]
async fn case_insensitive_and_fixed_strings() {
    let env = Env::new();
    tree(&env);
    let out = env
        .ok(
            "grep",
            json!({"pattern": "ALPHA", "case_insensitive": true, "output_mode": "count"}),
        )
        .await;
    assert_eq!(
        out.content,
        "app.py:2\nnotes.md:1\nsrc/lib.rs:1\nsrc/main.rs:1\n(total: 5 matching lines in 4 files)\n"
    );
    let out = env
        .ok("grep", json!({"pattern": "(alpha)", "fixed_strings": true}))
        .await;
    assert_eq!(out.content, "notes.md\n");
    let err = env.err("grep", json!({"pattern": "(alpha"})).await;
    assert!(err.contains("is not a valid regular expression"), "{err}");
    assert!(err.contains("fixed_strings=true"), "{err}");
}

#[tokio::test]
async fn content_mode_numbers_lines_with_context() {
    let env = Env::new();
    tree(&env);
    let out = env
        .ok(
            "grep",
            json!({"pattern": r"fn \w+\(\) -> u32", "output_mode": "content", "path": "src"}),
        )
        .await;
    assert_eq!(
        out.content,
        "src/lib.rs\n3:pub fn alpha() -> u32 {\n7:pub fn beta() -> u32 {\n"
    );
    let out = env
        .ok(
            "grep",
            json!({"pattern": "fn beta", "output_mode": "content", "before_context": 1, "after_context": "2"}),
        )
        .await;
    assert_eq!(
        out.content,
        "src/lib.rs\n6-\n7:pub fn beta() -> u32 {\n8-    2\n9-}\n"
    );
    let out = env
        .ok(
            "grep",
            json!({"pattern": "-> u32", "output_mode": "content", "context": 1, "glob": "*.rs"}),
        )
        .await;
    assert_eq!(
        out.content,
        "src/lib.rs\n2-\n3:pub fn alpha() -> u32 {\n4-    1\n--\n6-\n7:pub fn beta() -> u32 {\n8-    2\n"
    );
}

#[tokio::test]
async fn glob_and_type_filters_narrow_the_files() {
    let env = Env::new();
    tree(&env);
    let out = env
        .ok("grep", json!({"pattern": "alpha", "type": "py"}))
        .await;
    assert_eq!(out.content, "app.py\n");
    let out = env
        .ok("grep", json!({"pattern": "alpha", "glob": "*.md"}))
        .await;
    assert_eq!(out.content, "notes.md\n");
    let out = env
        .ok("grep", json!({"pattern": "alpha", "glob": "!*.md"}))
        .await;
    assert_eq!(out.content, "app.py\nsrc/lib.rs\n");
    let out = env
        .ok(
            "grep",
            json!({"pattern": "fn", "glob": "src/*.rs", "type": "rust"}),
        )
        .await;
    assert_eq!(out.content, "src/lib.rs\nsrc/main.rs\n");
    let err = env
        .err("grep", json!({"pattern": "alpha", "type": "pythn"}))
        .await;
    assert!(err.contains("`pythn` is not a known file type"), "{err}");
    assert!(err.contains("py"), "{err}");
}

#[tokio::test]
async fn a_single_file_can_be_searched() {
    let env = Env::new();
    tree(&env);
    let out = env
        .ok(
            "grep",
            json!({"pattern": "u32", "path": "src/lib.rs", "output_mode": "content"}),
        )
        .await;
    assert_eq!(
        out.content,
        "src/lib.rs\n3:pub fn alpha() -> u32 {\n7:pub fn beta() -> u32 {\n"
    );
}

#[tokio::test]
async fn multiline_patterns_span_lines() {
    let env = Env::new();
    tree(&env);
    let out = env
        .ok(
            "grep",
            json!({"pattern": r"alpha\(\) -> u32 \{\n\s+1", "multiline": true, "output_mode": "content"}),
        )
        .await;
    assert_eq!(
        out.content,
        "src/lib.rs\n3:pub fn alpha() -> u32 {\n4:    1\n"
    );
    let err = env.err("grep", json!({"pattern": r"u32 \{\n\s+1"})).await;
    assert!(err.contains("Set multiline=true"), "{err}");
}

#[tokio::test]
async fn results_are_paged_with_head_limit_and_offset() {
    let env = Env::new();
    let lines: String = (1..=30).map(|i| format!("hit {i}\n")).collect();
    env.write("many.txt", &lines);
    for i in 0..5 {
        env.write(&format!("f{i}.txt"), "hit\n");
    }
    let out = env
        .ok("grep", json!({"pattern": "hit", "output_mode": "content", "path": "many.txt", "head_limit": 3, "offset": 10}))
        .await;
    assert_eq!(
        out.content,
        "many.txt\n11:hit 11\n12:hit 12\n13:hit 13\n(showing 11-13 of 30 matching lines; call grep with offset=13 to see more)\n"
    );
    let out = env
        .ok(
            "grep",
            json!({"pattern": "hit", "head_limit": "2", "offset": "2"}),
        )
        .await;
    assert_eq!(
        out.content,
        "f2.txt\nf3.txt\n(showing 3-4 of 6 files; call grep with offset=4 to see more)\n"
    );
    let out = env
        .ok(
            "grep",
            json!({"pattern": "hit", "output_mode": "count", "head_limit": 1}),
        )
        .await;
    assert_eq!(
        out.content,
        "f0.txt:1\n(showing 1-1 of 6 files; call grep with offset=1 to see more)\n(total: 35 matching lines in 6 files)\n"
    );
    let out = env
        .ok("grep", json!({"pattern": "hit", "offset": 50}))
        .await;
    assert_eq!(
        out.content,
        "(offset 50 is past the end: there are 6 files)\n"
    );
}

#[tokio::test]
async fn the_character_cap_bounds_content_mode() {
    let env = Env::with_limits(toolsmith_builtins::fs::FsLimits {
        max_grep_chars: 50,
        ..Default::default()
    });
    let lines: String = (1..=100).map(|i| format!("match number {i}\n")).collect();
    env.write("big.txt", &lines);
    let out = env
        .ok(
            "grep",
            json!({"pattern": "match", "output_mode": "content"}),
        )
        .await;
    let last = out.content.lines().last().unwrap();
    assert!(
        last.starts_with("(output capped at 50 characters; showing matches 1-"),
        "{last}"
    );
    assert!(last.contains("of 100; call grep with offset="), "{last}");
    assert!(out.content.len() < 200, "{}", out.content);
}

#[tokio::test]
async fn grep_is_read_only() {
    let env = Env::new();
    let spec = env.registry.get("grep").unwrap().spec().clone();
    assert!(spec.annotations.read_only && spec.annotations.concurrency_safe());
    let schema = spec.input_schema.clone();
    assert!(schema["properties"]["type"].is_object(), "{schema}");
    let required = schema["required"].as_array().unwrap();
    assert_eq!(required, &[json!("pattern")], "{schema}");
}
