//! `notebook_edit` against real notebooks: replace, insert, delete, by
//! index and by id, and the file stays a valid notebook.

mod child_support;
mod fs_support;

use child_support::{in_child, is_child, peak_rss_kb, reset_peak_rss};
use fs_support::Env;
use serde_json::{Value, json};

fn notebook(minor: u64) -> Value {
    json!({
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "text"]},
            {"cell_type": "code", "id": "calc", "metadata": {"tags": []}, "execution_count": 3,
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["2\n"]}],
             "source": "print(1 + 1)"}
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": minor
    })
}

fn load(env: &Env) -> Value {
    serde_json::from_str(&env.read("nb.ipynb")).unwrap()
}

/// What Jupyter requires of every cell.
fn assert_valid(nb: &Value) {
    assert_eq!(nb["nbformat"], 4);
    for cell in nb["cells"].as_array().unwrap() {
        let kind = cell["cell_type"].as_str().unwrap();
        assert!(cell["metadata"].is_object());
        assert!(cell["source"].is_array() || cell["source"].is_string());
        if kind == "code" {
            assert!(cell["outputs"].is_array(), "{cell}");
            assert!(cell.get("execution_count").is_some(), "{cell}");
        } else {
            assert!(cell.get("outputs").is_none(), "{cell}");
        }
        if nb["nbformat_minor"].as_u64().unwrap() >= 5 {
            assert!(cell["id"].is_string(), "{cell}");
        }
    }
}

#[tokio::test]
async fn replacing_a_code_cell_clears_its_outputs() {
    let env = Env::new();
    env.write("nb.ipynb", serde_json::to_string(&notebook(5)).unwrap());
    let out = env
        .ok(
            "notebook_edit",
            json!({"path": "nb.ipynb", "cell_index": 1, "new_source": "x = 2\nprint(x)"}),
        )
        .await;
    assert_eq!(
        out.content,
        "Replaced cell 1 (code) in `nb.ipynb`; it now has 2 cells."
    );
    assert!(out.display.unwrap().contains("-print(1 + 1)\n"));
    let nb = load(&env);
    assert_valid(&nb);
    assert_eq!(nb["cells"][1]["source"], json!(["x = 2\n", "print(x)"]));
    assert_eq!(nb["cells"][1]["outputs"], json!([]));
    assert_eq!(nb["cells"][1]["execution_count"], Value::Null);
    assert_eq!(nb["cells"][1]["metadata"], json!({"tags": []}));
    assert_eq!(nb["cells"][1]["id"], "calc");
    // Written as Jupyter writes it: one-space indent, trailing newline.
    assert!(env.read("nb.ipynb").starts_with("{\n \"cells\": [\n  {\n"));
    assert!(env.read("nb.ipynb").ends_with("}\n"));
}

#[tokio::test]
async fn a_cell_changes_type_by_id() {
    let env = Env::new();
    env.write("nb.ipynb", serde_json::to_string(&notebook(5)).unwrap());
    env.ok(
        "notebook_edit",
        json!({"path": "nb.ipynb", "cell_id": "calc", "new_source": "Now prose.", "cell_type": "markdown"}),
    )
    .await;
    let nb = load(&env);
    assert_valid(&nb);
    assert_eq!(nb["cells"][1]["cell_type"], "markdown");
}

#[tokio::test]
async fn insert_places_a_valid_new_cell() {
    let env = Env::new();
    env.write("nb.ipynb", serde_json::to_string(&notebook(5)).unwrap());
    let out = env
        .ok(
            "notebook_edit",
            json!({"path": "nb.ipynb", "edit_mode": "insert", "cell_index": 0, "new_source": "import os"}),
        )
        .await;
    assert_eq!(
        out.content,
        "Inserted a code cell at index 0 in `nb.ipynb`; it now has 3 cells."
    );
    // After a given id, as markdown.
    env.ok(
        "notebook_edit",
        json!({"path": "nb.ipynb", "edit_mode": "insert", "cell_id": "intro", "new_source": "more", "cell_type": "markdown"}),
    )
    .await;
    // Appended when no place is given.
    env.ok(
        "notebook_edit",
        json!({"path": "nb.ipynb", "edit_mode": "insert", "new_source": "last()"}),
    )
    .await;
    let nb = load(&env);
    assert_valid(&nb);
    let sources: Vec<String> = nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| match &c["source"] {
            Value::Array(lines) => lines.iter().map(|l| l.as_str().unwrap()).collect(),
            other => other.as_str().unwrap().to_owned(),
        })
        .collect();
    assert_eq!(
        sources,
        [
            "import os",
            "# Title\ntext",
            "more",
            "print(1 + 1)",
            "last()"
        ]
    );
    let ids: std::collections::HashSet<_> = nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(ids.len(), 5, "ids are unique");
}

#[tokio::test]
async fn delete_removes_the_cell() {
    let env = Env::new();
    env.write("nb.ipynb", serde_json::to_string(&notebook(4)).unwrap());
    let out = env
        .ok(
            "notebook_edit",
            json!({"path": "nb.ipynb", "edit_mode": "delete", "cell_index": 0}),
        )
        .await;
    assert_eq!(
        out.content,
        "Deleted cell 0 in `nb.ipynb`; it now has 1 cells."
    );
    let nb = load(&env);
    assert_valid(&nb);
    assert_eq!(nb["cells"][0]["id"], "calc");
}

#[tokio::test]
async fn bad_requests_leave_the_notebook_alone() {
    let env = Env::new();
    let original = serde_json::to_string(&notebook(5)).unwrap();
    env.write("nb.ipynb", &original);
    env.write("broken.ipynb", "{not json");
    env.write("old.ipynb", r#"{"nbformat": 3, "worksheets": []}"#);
    let cases = [
        (
            json!({"path": "nb.ipynb", "cell_index": 7, "new_source": "x"}),
            "cell_index 7 is out of range: `nb.ipynb` has 2 cells (0-1)",
        ),
        (
            json!({"path": "nb.ipynb", "cell_id": "nope", "new_source": "x"}),
            "no cell in `nb.ipynb` has id `nope`",
        ),
        (
            json!({"path": "nb.ipynb", "new_source": "x"}),
            "name the cell with cell_index",
        ),
        (
            json!({"path": "nb.ipynb", "cell_index": 0}),
            "new_source is required",
        ),
        (
            json!({"path": "nb.ipynb", "edit_mode": "move", "cell_index": 0}),
            "edit_mode",
        ),
        (
            json!({"path": "broken.ipynb", "cell_index": 0, "new_source": "x"}),
            "is not valid notebook JSON",
        ),
        (
            json!({"path": "old.ipynb", "cell_index": 0, "new_source": "x"}),
            "only nbformat 4",
        ),
        (
            json!({"path": "none.ipynb", "cell_index": 0, "new_source": "x"}),
            "does not exist",
        ),
    ];
    for (args, expected) in cases {
        let err = env.err("notebook_edit", args).await;
        assert!(err.contains(expected), "{err}");
    }
    assert_eq!(env.read("nb.ipynb"), original);
}

/// How long one hostile case may take before it counts as a hang.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// A notebook of `bytes` bytes whose metadata holds `item` over and over.
fn padded_notebook(item: &str, bytes: usize) -> String {
    let head = r#"{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"pad": ["#;
    let tail = "]}}";
    let count = (bytes - head.len() - tail.len()) / (item.len() + 1);
    let mut text = String::with_capacity(bytes);
    text.push_str(head);
    for i in 0..count {
        if i > 0 {
            text.push(',');
        }
        text.push_str(item);
    }
    text.push_str(tail);
    text
}

/// Hostile notebooks of the largest size read (16 MiB): many tiny values,
/// which load as nodes of ~100 bytes each (60 times the file), nesting far
/// past what a recursive parser survives, a million values nested 120 deep
/// (each written back on a line indented 120 bytes: 60 times the file),
/// numbers of 16 million digits, and a string of ~16 MiB. Each is
/// refused or edited with the child's peak memory a small multiple of the
/// file, and nothing overflows the stack (in a child process, so an abort
/// fails this test instead of killing the others).
#[test]
fn hostile_notebooks_are_refused_or_edited_in_bounded_memory() {
    if !is_child() {
        let out = in_child(
            "hostile_notebooks_are_refused_or_edited_in_bounded_memory",
            DEADLINE,
        );
        assert!(out.contains("CASES 10 REFUSED 7 EDITED 3"), "{out}");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let env = Env::new();
    let size = 16 * 1024 * 1024 - 64;
    let deep = {
        let depth = 100_000;
        format!(
            r#"{{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {{"pad": {}{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let long_string = {
        let mut nb = notebook(5);
        nb["cells"][1]["outputs"][0]["text"] = json!(["A".repeat(size - 1024)]);
        serde_json::to_string(&nb).unwrap()
    };
    // Just under the bound of values, in the costliest form: an object each.
    let at_the_bound = padded_notebook(r#"{"a":0}"#, 8 * 333_000);
    let number = |digits: &str| {
        format!(
            r#"{{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {{"pad": {digits}}}}}"#
        )
    };
    let long_float = number(&format!("0.{}1", "0".repeat(size - 128)));
    let long_integer = number(&format!("1{}", "0".repeat(size - 128)));
    let indented = {
        let depth = 120;
        format!(
            r#"{{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {{"pad": {}{}{}}}}}"#,
            "[".repeat(depth),
            "0,".repeat(990_000) + "0",
            "]".repeat(depth)
        )
    };
    let cases: [(&str, String, Option<&str>); 10] = [
        ("indented", indented, Some("would be larger than 16.0 MB")),
        ("zeros", padded_notebook("0", size), Some("JSON values")),
        ("lists", padded_notebook("[]", size), Some("JSON values")),
        (
            "objects",
            padded_notebook(r#"{"a":0}"#, size),
            Some("JSON values"),
        ),
        (
            "strings",
            padded_notebook(r#""""#, size),
            Some("JSON values"),
        ),
        ("deep", deep, Some("not valid notebook JSON")),
        ("long string", long_string, None),
        ("long float", long_float, None),
        (
            "long integer",
            long_integer,
            Some("not valid notebook JSON"),
        ),
        ("at the bound", at_the_bound, None),
    ];
    let (mut refused, mut edited) = (0, 0);
    for (name, text, refusal) in &cases {
        env.write("nb.ipynb", text);
        // Each case's peak from the memory in use now, not the last peak.
        reset_peak_rss();
        let before = peak_rss_kb();
        let out = runtime.block_on(async {
            tokio::time::timeout(
                DEADLINE,
                env.call(
                    "notebook_edit",
                    json!({"path": "nb.ipynb", "cell_index": 0, "edit_mode": "insert", "new_source": "x"}),
                ),
            )
            .await
            .unwrap_or_else(|_| panic!("{name}: no answer within {DEADLINE:?}"))
        });
        let grown = peak_rss_kb().saturating_sub(before);
        println!("{name}: {} bytes, peak grew {grown} KB", text.len());
        // Unbounded, 16 MiB of zeros took 650 MB and of objects 1 GB.
        assert!(grown < 256 * 1024, "{name}: peak memory grew by {grown} KB");
        match refusal {
            Some(expected) => {
                assert!(
                    out.is_error && out.content.contains(expected),
                    "{name}: {}",
                    out.content
                );
                assert_eq!(&env.read("nb.ipynb"), text, "{name} changed");
                refused += 1;
            }
            None => {
                assert!(!out.is_error, "{name}: {}", out.content);
                assert_eq!(load(&env)["cells"][0]["source"], json!(["x"]), "{name}");
                edited += 1;
            }
        }
    }
    println!("CASES {} REFUSED {refused} EDITED {edited}", cases.len());
}

/// Cell numbers as a model may write them: negative, past `usize`, as
/// strings, floats and other types, through lenient casting, for every
/// edit mode; and cells that are not objects, ids that are not strings.
/// Each call answers (a refusal leaves the file alone), none panics.
#[tokio::test]
async fn hostile_cell_numbers_and_cells_never_panic() {
    let env = Env::new();
    let mut nb = notebook(5);
    nb["cells"].as_array_mut().unwrap().extend([
        json!(null),
        json!(7),
        json!({"id": 5, "source": {"x": 1}}),
        json!("é"),
    ]);
    let original = serde_json::to_string(&nb).unwrap();
    let numbers = [
        json!(-1),
        json!("-1"),
        json!(i64::MIN),
        json!(u64::MAX),
        json!("18446744073709551616"),
        json!(1e300),
        json!(-0.0),
        json!(2.5),
        json!("NaN"),
        json!("inf"),
        json!("0x1"),
        json!(" 3 "),
        json!(true),
        json!([0]),
        json!({"index": 0}),
        json!("٣"),
        json!(6),
        json!(2),
        json!(3),
        json!(4),
    ];
    let (mut tried, mut refused, mut edited) = (0, 0, 0);
    for mode in ["replace", "insert", "delete"] {
        for number in &numbers {
            for args in [
                json!({"path": "nb.ipynb", "edit_mode": mode, "cell_index": number, "new_source": "x\u{202e}\u{0}"}),
                json!({"path": "nb.ipynb", "edit_mode": mode, "cell_id": number, "new_source": "x"}),
            ] {
                env.write("nb.ipynb", &original);
                let out = tokio::time::timeout(DEADLINE, env.call("notebook_edit", args.clone()))
                    .await
                    .unwrap_or_else(|_| panic!("{args}: no answer"));
                tried += 1;
                assert!(
                    !out.content.contains("internal error"),
                    "{args}: {}",
                    out.content
                );
                if out.is_error {
                    assert_eq!(env.read("nb.ipynb"), original, "{args} changed the file");
                    refused += 1;
                } else {
                    let _: Value = serde_json::from_str(&env.read("nb.ipynb")).unwrap();
                    edited += 1;
                }
            }
        }
    }
    println!("tried {tried}, refused {refused}, edited {edited}");
    assert_eq!(tried, refused + edited);
}

/// The folder of the notebook is swapped, over and over, for a link to a
/// folder outside holding a notebook of the same name, while the model
/// edits it: edits land inside or are refused; the notebook outside is
/// never read into an edit nor written, and nothing appears beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_while_editing_leads_no_edit_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let env = Env::new();
    let theirs = serde_json::to_string(&notebook(5))
        .unwrap()
        .replace("# Title", "SECRET");
    std::fs::write(env.outside.join("nb.ipynb"), &theirs).unwrap();
    std::fs::create_dir(env.ws.join("real")).unwrap();
    std::fs::write(
        env.ws.join("real/nb.ipynb"),
        serde_json::to_string(&notebook(5)).unwrap(),
    )
    .unwrap();
    std::os::unix::fs::symlink("real", env.ws.join("d")).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let flipper = {
        let (done, swaps, ws) = (Arc::clone(&done), Arc::clone(&swaps), env.ws.clone());
        let outside = env.outside.clone();
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                for target in [std::path::Path::new("real"), &outside] {
                    let temp = ws.join("d.swap");
                    let _ = std::fs::remove_file(&temp);
                    std::os::unix::fs::symlink(target, &temp).unwrap();
                    std::fs::rename(&temp, ws.join("d")).unwrap();
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let (mut tried, mut refused, mut edited) = (0, 0, 0);
    for round in 0..300 {
        tried += 1;
        let args = json!({"path": "d/nb.ipynb", "edit_mode": "insert", "cell_index": 0,
                          "new_source": format!("round {round}")});
        let out = tokio::time::timeout(DEADLINE, env.call("notebook_edit", args))
            .await
            .expect("an answer in time");
        assert!(!out.content.contains("SECRET"), "{}", out.content);
        if out.is_error {
            refused += 1;
        } else {
            edited += 1;
            assert!(!out.display.unwrap_or_default().contains("SECRET"));
        }
    }
    done.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    eprintln!(
        "swapped notebook folder: tried {tried}, refused {refused}, edited {edited}, escaped 0, swaps {}",
        swaps.load(Ordering::Relaxed)
    );
    assert_eq!(
        std::fs::read_to_string(env.outside.join("nb.ipynb")).unwrap(),
        theirs
    );
    let mut names: Vec<_> = std::fs::read_dir(&env.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["nb.ipynb", "secret.txt"]);
    let inside = load_at(&env, "real/nb.ipynb");
    assert_eq!(inside["cells"].as_array().unwrap().len(), 2 + edited);
    assert!(swaps.load(Ordering::Relaxed) > 10, "the swap hardly ran");
}

fn load_at(env: &Env, path: &str) -> Value {
    serde_json::from_str(&env.read(path)).unwrap()
}

/// Files that are JSON but not notebooks, or notebooks of odd shape: each
/// edit answers without a panic, and a refusal leaves the file alone.
#[tokio::test]
async fn odd_shaped_notebooks_never_panic() {
    let env = Env::new();
    let shapes = [
        "[]",
        "\"cells\"",
        "null",
        "4",
        r#"{"nbformat": 4}"#,
        r#"{"nbformat": 4, "cells": {}}"#,
        r#"{"nbformat": 4, "cells": null}"#,
        r#"{"nbformat": 4.5, "cells": []}"#,
        r#"{"nbformat": -4, "cells": []}"#,
        r#"{"nbformat": "4", "cells": []}"#,
        r#"{"nbformat": 18446744073709551615, "cells": []}"#,
        r#"{"nbformat": 4, "nbformat_minor": -1, "cells": [{"id": null}]}"#,
        r#"{"nbformat": 4, "nbformat_minor": 1e308, "cells": [[], {"id": []}]}"#,
        r#"{"nbformat": 4, "cells": [{"source": [1, null, "x"]}], "cells": []}"#,
        "\u{feff}{\"nbformat\": 4, \"cells\": []}",
    ];
    let (mut tried, mut refused, mut edited) = (0, 0, 0);
    for shape in shapes {
        for args in [
            json!({"path": "nb.ipynb", "cell_index": 0, "new_source": "x"}),
            json!({"path": "nb.ipynb", "cell_index": 0, "edit_mode": "insert", "new_source": "x"}),
            json!({"path": "nb.ipynb", "cell_index": 0, "edit_mode": "delete"}),
            json!({"path": "nb.ipynb", "cell_id": "x", "edit_mode": "insert", "new_source": "x"}),
        ] {
            env.write("nb.ipynb", shape);
            tried += 1;
            let out = tokio::time::timeout(DEADLINE, env.call("notebook_edit", args.clone()))
                .await
                .expect("an answer in time");
            assert!(
                !out.content.contains("internal error"),
                "{shape} {args}: {}",
                out.content
            );
            if out.is_error {
                assert_eq!(env.read("nb.ipynb"), shape);
                refused += 1;
            } else {
                let _: Value = serde_json::from_str(&env.read("nb.ipynb")).unwrap();
                edited += 1;
            }
        }
    }
    eprintln!("odd notebooks: tried {tried}, refused {refused}, edited {edited}");
    assert!(refused > 0);
}
