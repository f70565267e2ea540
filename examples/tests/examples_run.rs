//! The examples that need no peer run as programs and say what they should.

mod common;

use std::process::Command;

use common::example_binary;

fn run(name: &str) -> String {
    let output = Command::new(example_binary(name)).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn quickstart_shows_definitions_casts_and_errors() {
    let out = run("quickstart");
    assert!(out.contains("\"name\": \"get_weather\""), "{out}");
    assert!(out.contains("cast: seconds"), "{out}");
    assert!(out.contains("WAITED 60 S"), "{out}");
    assert!(out.contains("did you mean 'loud'"), "{out}");
    assert!(out.contains("get_weather"), "{out}");
}

#[test]
fn downstream_collects_tools_from_every_module() {
    let out = run("downstream");
    assert!(
        out.contains("tools: add_note, celsius_to_fahrenheit, kilometres_to_miles, list_notes"),
        "{out}"
    );
    assert!(out.contains("list_notes: groceries, ideas"), "{out}");
    assert!(out.contains("celsius_to_fahrenheit: 70.7 °F"), "{out}");
    assert!(out.contains("kilometres_to_miles: 26.22 mi"), "{out}");
}

#[test]
fn config_tools_load_and_keep_values_in_their_place() {
    let out = run("config_tools");
    assert!(
        out.contains(r#"from tools.toml: ["count_lines", "plan_trip"]"#),
        "{out}"
    );
    assert!(out.contains(r#"from plugins/: ["shout"]"#), "{out}");
    assert!(
        out.contains("shout is read-only: true, risk Low, timeout Some(5s)"),
        "{out}"
    );
    assert!(out.contains("Plan a 3-day trip to Lisbon"), "{out}");
    assert!(out.contains("count_lines: 23"), "{out}");
    // The value that tried to run `echo` was one word: a file name.
    assert!(out.contains("cannot open x; echo escaped"), "{out}");
    assert!(!out.contains("\nescaped"), "{out}");
    assert!(out.contains("shout: HELLO!"), "{out}");
}
