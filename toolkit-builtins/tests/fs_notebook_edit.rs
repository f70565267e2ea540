//! `notebook_edit` against real notebooks: replace, insert, delete, by
//! index and by id, and the file stays a valid notebook.

mod fs_support;

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
