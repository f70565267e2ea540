//! The shell lexer and `ShellPolicy::check_command` on arbitrary text.
//!
//! Invariants:
//! - nothing panics, under a default policy and under one with deny and
//!   allow patterns and workspace restriction;
//! - wrapping cannot hide a command: what a policy refuses, it still
//!   refuses as `sh -c -- '…'`, `bash -c -- '…'`, `eval '…'` or
//!   `eval -- '…'` (the text quoted as one shell word).
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith_builtins::Workspace;
use toolsmith_builtins::fuzzing::shell_words;
use toolsmith_builtins::shell::{ShellPolicy, quote};

struct Fixture {
    policies: Vec<ShellPolicy>,
    workspace: Workspace,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| {
        // A real directory, made once per process and left in the
        // system's temporary directory (it holds nothing).
        let root = std::env::temp_dir().join(format!("toolsmith-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let strict = ShellPolicy::new()
            .deny_pattern(r"\bcurl\b")
            .unwrap()
            .allow_pattern(r"^git (status|log)\b")
            .unwrap()
            .protect_file(".env")
            .restrict_to_workspace(true);
        Fixture {
            policies: vec![ShellPolicy::new(), strict],
            workspace: Workspace::new(&root).unwrap(),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let command = String::from_utf8_lossy(data);
    std::hint::black_box(shell_words(&command));
    let Fixture {
        policies,
        workspace,
    } = fixture();
    for policy in policies {
        let plain = policy.check_command(&command, Some(workspace));
        if let Err(refusal) = plain {
            let quoted = quote(&command);
            // `--` ends the shells' options: without it, a text that
            // starts with `-` or `+` is read as options and never runs.
            for wrapped in [
                format!("sh -c -- {quoted}"),
                format!("bash -c -- {quoted}"),
                format!("eval {quoted}"),
                format!("eval -- {quoted}"),
            ] {
                assert!(
                    policy.check_command(&wrapped, Some(workspace)).is_err(),
                    "refused ({refusal}) as {command:?}, allowed as {wrapped:?}"
                );
            }
        }
    }
});
