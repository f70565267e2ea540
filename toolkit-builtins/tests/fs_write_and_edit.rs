//! `write_file` and `edit_file` against real files: parents created,
//! atomic replacement, diffs, every way of matching and every refusal.

mod fs_support;

use std::os::unix::fs::PermissionsExt;

use fs_support::Env;
use serde_json::json;

#[tokio::test]
async fn write_creates_parents_and_shows_a_diff() {
    let env = Env::new();
    let out = env
        .ok(
            "write_file",
            json!({"path": "deep/er/new.txt", "content": "one\ntwo\n"}),
        )
        .await;
    assert_eq!(env.read("deep/er/new.txt"), "one\ntwo\n");
    assert_eq!(out.content, "Created `deep/er/new.txt` (2 lines, 8 bytes).");
    assert_eq!(
        out.display.as_deref().unwrap(),
        "--- /dev/null\n+++ b/deep/er/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    );
}

#[tokio::test]
async fn write_replaces_atomically_keeping_the_mode() {
    let env = Env::new();
    let path = env.write("run.sh", "echo old\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    let inode_before = std::fs::metadata(&path)
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
        .unwrap();
    let out = env
        .ok(
            "write_file",
            json!({"path": "run.sh", "content": "echo new\n"}),
        )
        .await;
    assert_eq!(env.read("run.sh"), "echo new\n");
    assert_eq!(
        out.content,
        "Replaced `run.sh` (+1 -1 lines; now 1 lines, 9 bytes)."
    );
    assert!(out.display.unwrap().contains("-echo old\n+echo new\n"));
    let meta = std::fs::metadata(&path).unwrap();
    // A rename put a new file in place: a new inode, the old permissions.
    assert_ne!(std::os::unix::fs::MetadataExt::ino(&meta), inode_before);
    assert_eq!(meta.permissions().mode() & 0o777, 0o750);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(&env.ws)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("run.sh")]);
}

#[tokio::test]
async fn writing_the_same_content_changes_nothing() {
    let env = Env::new();
    env.write("a.txt", "same\n");
    let out = env
        .ok("write_file", json!({"path": "a.txt", "content": "same\n"}))
        .await;
    assert_eq!(
        out.content,
        "`a.txt` already has this content; nothing changed."
    );
}

#[tokio::test]
async fn write_refuses_directories_and_read_only_dirs() {
    let env = Env::new().with_read_only_outside();
    env.write("d/x", "");
    let err = env
        .err("write_file", json!({"path": "d", "content": "x"}))
        .await;
    assert!(err.contains("`d` is a directory"), "{err}");
    let target = env.secret_path().display().to_string();
    // Readable...
    let out = env.ok("read_file", json!({"path": target})).await;
    assert!(out.content.contains(fs_support::SECRET));
    // ...but never writable.
    let err = env
        .err("write_file", json!({"path": target, "content": "x"}))
        .await;
    assert!(err.contains("is in a read-only directory"), "{err}");
    env.assert_outside_untouched();
}

#[tokio::test]
async fn write_and_edit_are_marked_as_writers() {
    let env = Env::new();
    for name in ["write_file", "edit_file", "notebook_edit"] {
        let spec = env.registry.get(name).unwrap().spec().clone();
        assert!(!spec.annotations.read_only, "{name}");
        assert!(spec.annotations.destructive, "{name}");
        assert!(spec.annotations.exclusive, "{name}");
        assert_eq!(
            spec.category,
            Some(toolsmith::ToolCategory::FilesystemWrite),
            "{name}"
        );
    }
    let write = env.registry.get("write_file").unwrap().spec().clone();
    assert!(write.annotations.idempotent);
}

#[tokio::test]
async fn edit_replaces_an_exact_match_and_returns_a_diff() {
    let env = Env::new();
    env.write("lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    let out = env
        .ok(
            "edit_file",
            json!({"path": "lib.rs", "old_text": "fn b() {}", "new_text": "fn b() {\n    todo!()\n}"}),
        )
        .await;
    assert_eq!(
        env.read("lib.rs"),
        "fn a() {}\nfn b() {\n    todo!()\n}\nfn c() {}\n"
    );
    // The model reads the changed lines with their numbers; the user gets
    // the whole diff.
    assert_eq!(
        out.content,
        "Edited `lib.rs`: replaced 1 occurrence at line 2 (+3 -1 lines).\n 1|fn a() {}\n-2|fn b() {}\n+2|fn b() {\n+3|    todo!()\n+4|}\n 5|fn c() {}\n"
    );
    assert_eq!(
        out.display.as_deref().unwrap(),
        "--- a/lib.rs\n+++ b/lib.rs\n@@ -1,3 +1,5 @@\n fn a() {}\n-fn b() {}\n+fn b() {\n+    todo!()\n+}\n fn c() {}\n"
    );
}

#[tokio::test]
async fn edit_falls_back_to_a_whitespace_tolerant_match() {
    let env = Env::new();
    env.write(
        "m.py",
        "class A:\n    def f(self):\n        return  1\n\n    def g(self):\n        pass\n",
    );
    // The model's indentation is off by four and one space is missing.
    let out = env
        .ok(
            "edit_file",
            json!({
                "path": "m.py",
                "old_text": "def f(self):\n    return 1\n",
                "new_text": "def f(self):\n    x = 2\n    return x\n",
            }),
        )
        .await;
    assert!(
        out.content
            .contains("(matched ignoring whitespace differences).\n"),
        "{}",
        out.content
    );
    // What was really replaced, at the file's indentation.
    assert!(
        out.content.ends_with(
            " 2|    def f(self):\n-3|        return  1\n+3|        x = 2\n+4|        return x\n 5|\n"
        ),
        "{}",
        out.content
    );
    assert_eq!(
        env.read("m.py"),
        "class A:\n    def f(self):\n        x = 2\n        return x\n\n    def g(self):\n        pass\n"
    );
}

#[tokio::test]
async fn edit_keeps_crlf_line_endings() {
    let env = Env::new();
    env.write("w.txt", "one\r\ntwo\r\nthree\r\n");
    env.ok(
        "edit_file",
        json!({"path": "w.txt", "old_text": "one\ntwo", "new_text": "1\n2"}),
    )
    .await;
    assert_eq!(env.read("w.txt"), "1\r\n2\r\nthree\r\n");
}

#[tokio::test]
async fn a_missing_text_gets_a_hint_with_the_most_similar_passage() {
    let env = Env::new();
    env.write(
        "calc.rs",
        "use std::fmt;\n\nfn compute(value: i32) -> i32 {\n    value * 2\n}\n\nfn main() {}\n",
    );
    let err = env
        .err(
            "edit_file",
            json!({"path": "calc.rs", "old_text": "fn compute(value: u32) -> u32 {\n    value * 2\n}", "new_text": "x"}),
        )
        .await;
    assert!(
        err.contains("old_text was not found in `calc.rs`. The most similar text (96% alike, "),
        "{err}"
    );
    assert!(
        err.contains("lines 3-5) is:\nfn compute(value: i32) -> i32 {\n    value * 2\n}\n"),
        "{err}"
    );
    let err = env
        .err(
            "edit_file",
            json!({"path": "calc.rs", "old_text": "qqqqqqqqqqqqqqqqqq", "new_text": "x"}),
        )
        .await;
    assert!(err.contains("nothing in it is similar"), "{err}");
    assert!(env.read("calc.rs").starts_with("use std::fmt;"));
}

#[tokio::test]
async fn ambiguous_matches_need_replace_all_or_an_occurrence() {
    let env = Env::new();
    env.write("t.txt", "x = 1\ny = 2\nx = 1\nz\nx = 1\n");
    let err = env
        .err(
            "edit_file",
            json!({"path": "t.txt", "old_text": "x = 1", "new_text": "x = 9"}),
        )
        .await;
    assert!(
        err.contains("old_text occurs 3 times in `t.txt` (at lines 1, 3, 5)"),
        "{err}"
    );
    assert!(
        err.contains("replace_all=true") && err.contains("occurrence=N"),
        "{err}"
    );
    assert_eq!(env.read("t.txt"), "x = 1\ny = 2\nx = 1\nz\nx = 1\n");

    // The second one only (lenient: "2" as a string).
    let out = env
        .ok(
            "edit_file",
            json!({"path": "t.txt", "old_text": "x = 1", "new_text": "x = 2", "occurrence": "2"}),
        )
        .await;
    assert_eq!(
        out.content,
        "Edited `t.txt`: replaced 1 occurrence at line 3 (+1 -1 lines).\n 2|y = 2\n-3|x = 1\n+3|x = 2\n 4|z\n"
    );
    assert_eq!(env.read("t.txt"), "x = 1\ny = 2\nx = 2\nz\nx = 1\n");

    let err = env
        .err(
            "edit_file",
            json!({"path": "t.txt", "old_text": "x = 1", "new_text": "q", "occurrence": 5}),
        )
        .await;
    assert!(
        err.contains("occurrence 5 asked for, but old_text occurs 2 time(s)"),
        "{err}"
    );

    let out = env
        .ok(
            "edit_file",
            json!({"path": "t.txt", "old_text": "x = 1", "new_text": "x = 0", "replace_all": "true"}),
        )
        .await;
    assert_eq!(
        out.content,
        "Edited `t.txt`: replaced 2 occurrences, the first at line 1 (+2 -2 lines).\n-1|x = 1\n+1|x = 0\n 2|y = 2\n…\n 4|z\n-5|x = 1\n+5|x = 0\n"
    );
    assert_eq!(env.read("t.txt"), "x = 0\ny = 2\nx = 2\nz\nx = 0\n");
}

#[tokio::test]
async fn edit_refusals_are_explained() {
    let env = Env::new();
    env.write("a.txt", "abc\n");
    let err = env
        .err(
            "edit_file",
            json!({"path": "gone.txt", "old_text": "a", "new_text": "b"}),
        )
        .await;
    assert!(
        err.contains("does not exist; use write_file to create it"),
        "{err}"
    );
    let err = env
        .err(
            "edit_file",
            json!({"path": "a.txt", "old_text": "abc", "new_text": "abc"}),
        )
        .await;
    assert!(err.contains("the same"), "{err}");
    let err = env
        .err(
            "edit_file",
            json!({"path": "a.txt", "old_text": "", "new_text": "x"}),
        )
        .await;
    assert!(err.contains("old_text"), "{err}");
    let err = env
        .err(
            "edit_file",
            json!({"path": "a.txt", "old_text": "abc", "new_text": "x", "replace_all": true, "occurrence": 1}),
        )
        .await;
    assert!(err.contains("not both"), "{err}");
    env.write("bin", b"\xff\xfe\0\x01");
    let err = env
        .err(
            "edit_file",
            json!({"path": "bin", "old_text": "a", "new_text": "b"}),
        )
        .await;
    assert!(err.contains("is a binary file"), "{err}");
}

#[tokio::test]
async fn edit_understands_parameters_written_in_camel_case() {
    // Models trained on other tool sets write `oldText`, `newText` and
    // `replaceAll`; the registry renames them to the parameters they mean.
    let env = Env::new();
    env.write("notes.txt", "tea\ntea\n");
    env.ok(
        "edit_file",
        json!({"path": "notes.txt", "oldText": "tea", "newText": "coffee", "replaceAll": "true"}),
    )
    .await;
    assert_eq!(env.read("notes.txt"), "coffee\ncoffee\n");
}

#[tokio::test]
async fn regex_mode_replaces_with_capture_groups() {
    let env = Env::new();
    env.write("cfg.txt", "name = alpha\nport = 8080\n");
    let out = env
        .ok(
            "edit_file",
            json!({"path": "cfg.txt", "old_text": r"port = (\d+)", "new_text": "port = 1$1", "regex": true}),
        )
        .await;
    assert_eq!(env.read("cfg.txt"), "name = alpha\nport = 18080\n");
    assert_eq!(
        out.content,
        "Edited `cfg.txt`: replaced 1 match at line 2 (+1 -1 lines).\n 1|name = alpha\n-2|port = 8080\n+2|port = 18080\n"
    );
    assert!(
        out.display
            .unwrap()
            .contains("-port = 8080\n+port = 18080\n")
    );
    // Named groups, `${1}` before a letter, `$$` for a dollar sign.
    env.ok(
        "edit_file",
        json!({"path": "cfg.txt", "old_text": r"(?P<key>\w+) = (?P<value>[a-z]+)", "new_text": "${key}: $${value} ${2}x", "regex": true}),
    )
    .await;
    assert_eq!(env.read("cfg.txt"), "name: ${value} alphax\nport = 18080\n");
}

#[tokio::test]
async fn regex_mode_has_the_ambiguity_rules_of_exact_mode() {
    let env = Env::new();
    env.write("t.txt", "v1 = 1\nv2 = 2\nv3 = 3\n");
    let args = |extra: serde_json::Value| {
        let mut args = json!({"path": "t.txt", "old_text": r"(?m)^v(\d) = \d$", "new_text": "v$1 = 0", "regex": true});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };
    let err = env.err("edit_file", args(json!({}))).await;
    assert!(
        err.contains("the pattern matches 3 times in `t.txt` (at lines 1, 2, 3)"),
        "{err}"
    );
    assert!(
        err.contains("replace_all=true") && err.contains("occurrence=N"),
        "{err}"
    );
    let out = env.ok("edit_file", args(json!({"occurrence": 2}))).await;
    assert!(
        out.content
            .starts_with("Edited `t.txt`: replaced 1 match at line 2 (+1 -1 lines).")
    );
    assert_eq!(env.read("t.txt"), "v1 = 1\nv2 = 0\nv3 = 3\n");
    let err = env.err("edit_file", args(json!({"occurrence": 9}))).await;
    assert!(
        err.contains("occurrence 9 asked for, but the pattern matches 3 time(s)"),
        "{err}"
    );
    let out = env
        .ok("edit_file", args(json!({"replace_all": true})))
        .await;
    assert!(
        out.content
            .starts_with("Edited `t.txt`: replaced 3 matches, the first at line 1 (+2 -2 lines)."),
        "{}",
        out.content
    );
    assert_eq!(env.read("t.txt"), "v1 = 0\nv2 = 0\nv3 = 0\n");
    // Matching again changes nothing, and says so.
    let err = env
        .err("edit_file", args(json!({"replace_all": true})))
        .await;
    assert!(err.contains("leaves `t.txt` as it is"), "{err}");
}

#[tokio::test]
async fn regex_mode_explains_what_it_refuses() {
    let env = Env::new();
    env.write("f.rs", "call(x);\nother();\n");
    let regex = |old: &str, new: &str| json!({"path": "f.rs", "old_text": old, "new_text": new, "regex": true});
    // No match: the literal text is there, unescaped.
    let err = env.err("edit_file", regex("call(x);", "y")).await;
    assert!(
        err.contains("the pattern `call(x);` matches nothing in `f.rs`"),
        "{err}"
    );
    assert!(err.contains("As plain text it occurs 1 time(s)"), "{err}");
    let err = env.err("edit_file", regex("^other", "y")).await;
    assert!(err.contains("start the pattern with (?m)"), "{err}");
    // Not a regex, a group that does not exist, a pattern too large.
    let err = env.err("edit_file", regex("call(", "y")).await;
    assert!(err.contains("is not a valid regular expression"), "{err}");
    let err = env.err("edit_file", regex(r"call\((\w)\)", "$2")).await;
    assert!(
        err.contains("refers to group `2`, which the pattern does not have"),
        "{err}"
    );
    let err = env.err("edit_file", regex(r"(\w)", "$1_x")).await;
    assert!(err.contains("write `${1}_x`"), "{err}");
    let err = env.err("edit_file", regex(r"\w{1000}{1000}", "y")).await;
    assert!(err.contains("too large once compiled"), "{err}");
    assert_eq!(env.read("f.rs"), "call(x);\nother();\n");
}

#[tokio::test]
async fn regex_mode_can_insert_at_every_line() {
    let env = Env::new();
    env.write("s.sh", "a\nb\n");
    env.ok(
        "edit_file",
        json!({"path": "s.sh", "old_text": "(?m)^", "new_text": "# ", "regex": true, "replace_all": true}),
    )
    .await;
    // `^` with (?m) also matches after the last line break: an empty line.
    assert_eq!(env.read("s.sh"), "# a\n# b\n# ");
}

#[tokio::test]
async fn a_huge_edit_shows_the_model_a_bounded_diff() {
    let env = Env::new();
    let content: String = (0..5000).map(|i| format!("item {i}\n")).collect();
    env.write("big.txt", &content);
    let out = env
        .ok(
            "edit_file",
            json!({"path": "big.txt", "old_text": "item", "new_text": "entry", "replace_all": true}),
        )
        .await;
    assert!(
        out.content.starts_with(
            "Edited `big.txt`: replaced 5000 occurrences, the first at line 1 (+5000 -5000 lines).\n-1|item 0\n+1|entry 0\n"
        ),
        "{}",
        &out.content[..200]
    );
    assert!(out.content.len() < 10_000, "{}", out.content.len());
    assert!(
        out.content
            .ends_with("more changed lines not shown; read_file shows the file as it is now)\n"),
        "{}",
        out.content
    );
    // The user's display has the whole diff.
    let display = out.display.unwrap();
    assert!(display.contains("-item 4999\n") && display.contains("+entry 4999\n"));
    assert!(env.read("big.txt").ends_with("entry 4999\n"));
}

#[tokio::test]
async fn an_edit_may_not_grow_a_file_past_the_cap() {
    let env = Env::with_limits(toolsmith_builtins::fs::FsLimits {
        max_edit_bytes: 1000,
        ..Default::default()
    });
    env.write("a.txt", "x".repeat(100));
    let err = env
        .err(
            "edit_file",
            json!({"path": "a.txt", "old_text": "x", "new_text": "yyyyyyyyyyyyyyyyyyyy", "replace_all": true}),
        )
        .await;
    assert!(
        err.contains("more than the 1000 B edit_file writes"),
        "{err}"
    );
    assert_eq!(env.read("a.txt"), "x".repeat(100));
}
