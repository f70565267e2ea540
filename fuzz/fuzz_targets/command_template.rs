//! Command tools' `{{param}}` templates filled with hostile values.
//!
//! The input is the template, then each value, separated by NUL bytes; the
//! values go to the template's placeholders in order (a value that is JSON
//! other than a string is passed as that JSON). Invariants, for every
//! template loading accepts:
//! - nothing panics;
//! - a value with a NUL byte is refused, and any other value fills in;
//! - each value stays one shell word: the filled command line lexes into
//!   the same commands, words and substitutions as the same template
//!   filled with a plain `x` (unless `sh -n` finds that line malformed).
//!
//! Templates with `${` are skipped: the guard's lexer ends `${…}` at the
//! first `}` even inside quotes (a shell does not), so its word counts are
//! no oracle there. Lift this once the lexer reads quotes inside `${…}`.
#![no_main]

use std::process::{Command, Stdio};

use libfuzzer_sys::fuzz_target;
use toolsmith::serde_json::{self, Map, Value};
use toolsmith_builtins::fuzzing::{command_line, shell_words};
use toolsmith_builtins::shell::ShellPolicy;

/// How many words each command of `line` has, and the same for each
/// substitution in turn, to a few levels deep.
fn shape(line: &str, depth: usize) -> Vec<Vec<usize>> {
    let (segments, substitutions) = shell_words(line);
    let mut out = vec![segments.iter().map(Vec::len).collect::<Vec<_>>()];
    out.push(vec![substitutions.len()]);
    if depth < 4 {
        for substitution in &substitutions {
            out.extend(shape(substitution, depth + 1));
        }
    }
    out
}

/// Whether `sh -n` reads `line` without a syntax error. The lexer is not
/// a parser: on text a shell refuses (an unclosed `$((`, say) its reading
/// may depend on the values, and nothing runs anyway. Asked only when the
/// shapes differ, which is rare.
fn parses(line: &str) -> bool {
    Command::new("sh")
        .args(["-n", "-c", line])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let template = parts.next().unwrap_or_default();
    if template.contains("${") {
        return;
    }
    // Placeholders in order of first use, as loading names them.
    let names: Vec<String> = template
        .split("{{")
        .skip(1)
        .filter_map(|rest| {
            rest.split_once("}}")
                .map(|(name, _)| name.trim().to_owned())
        })
        .collect();
    let mut args = Map::new();
    let mut plain = Map::new();
    for (name, value) in names.iter().zip(parts) {
        let value = match serde_json::from_str::<Value>(value) {
            Ok(json) if !json.is_string() => json,
            _ => Value::String(value.to_owned()),
        };
        args.insert(name.clone(), value);
        plain.insert(name.clone(), Value::String("x".into()));
    }
    let has_nul = args
        .values()
        .any(|v| v.as_str().is_some_and(|s| s.contains('\0')));
    let (args, plain) = (Value::Object(args), Value::Object(plain));

    let Some(filled) = command_line(template, &args) else {
        return;
    };
    let line = match filled {
        Ok(line) => line,
        Err(error) => {
            // A NUL byte, or a value that would read as an option, is refused:
            // a text that starts with `-`, or a negative number (`-0.0` too).
            let leading_dash = args.as_object().is_some_and(|a| {
                a.values().any(|v| {
                    v.as_str().is_some_and(|s| s.starts_with('-'))
                        || v.as_f64().is_some_and(f64::is_sign_negative)
                })
            });
            assert!(
                has_nul || leading_dash,
                "refused values without a NUL or a leading dash: {error}"
            );
            return;
        }
    };
    assert!(!has_nul, "a NUL byte reached the command line {line:?}");
    let reference = command_line(template, &plain)
        .expect("the template was accepted a moment ago")
        .expect("plain values are always accepted");
    if shape(&line, 0) != shape(&reference, 0) && parses(&reference) {
        panic!(
            "values changed the commands: {line:?} against {reference:?}: {:?} against {:?}",
            shape(&line, 0),
            shape(&reference, 0)
        );
    }
    let _ = std::hint::black_box(ShellPolicy::new().check_command(&line, None));
});
