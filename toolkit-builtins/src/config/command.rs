//! Command tools: a shell command template with `{{param}}` placeholders,
//! run through the same guards as `exec` ([`run_command`]).
//!
//! Each value is put into the command as one single-quoted shell word, so
//! no value can end its word, start another command or be expanded. That
//! only holds where the template leaves a placeholder as a word of its own
//! (or part of one, like `--name={{name}}`): inside quotes, a comment or a
//! here-document a quoted value would be read differently, so such
//! templates are refused when they are loaded.

use std::time::Duration;

use serde_json::Value;
use toolsmith::{
    Arguments, Tool, ToolAnnotations, ToolCategory, ToolContext, ToolError, ToolOutput, ToolSpec,
    async_trait,
};

use super::params::Params;
use super::template::{Piece, Template};
use crate::sandbox::Workspace;
use crate::shell::{CommandRequest, ShellPolicy, quote, run_command};

/// A tool that runs a configured shell command with the model's values in it.
///
/// It needs a [`ShellPolicy`] in the context's state, like `exec`: without
/// one it refuses to run.
///
/// ```json
/// { "name": "disk_usage", "description": "Size of a directory",
///   "command": "du -sh -- {{path}}", "timeout_secs": 10,
///   "parameters": { "path": { "type": "string", "description": "A directory" } } }
/// ```
#[derive(Debug)]
pub struct CommandTool {
    spec: ToolSpec,
    params: Params,
    command: Template,
    timeout: Option<Duration>,
}

/// The extra time the registry's own timer allows beyond the command's, so
/// the command's timeout (which kills its whole process group) fires first.
const TIMER_MARGIN: Duration = Duration::from_secs(10);

impl CommandTool {
    pub(crate) fn new(
        name: String,
        description: String,
        params: Params,
        command: Template,
        timeout_secs: Option<u64>,
    ) -> Result<Self, String> {
        check_placement(&command)?;
        let timeout = timeout_secs.map(Duration::from_secs);
        let annotations = ToolAnnotations {
            exclusive: true,
            destructive: true,
            open_world: true,
            ..ToolAnnotations::default()
        };
        let mut spec = ToolSpec::new(name, description, params.schema())
            .with_annotations(annotations)
            .with_category(ToolCategory::Shell);
        if let Some(timeout) = timeout {
            spec = spec.with_timeout(timeout + TIMER_MARGIN);
        }
        Ok(Self {
            spec,
            params,
            command,
            timeout,
        })
    }

    /// The command line for `args`: every value as one quoted shell word.
    pub fn command_line(&self, args: &Value) -> Result<String, ToolError> {
        let values = self.params.values(args);
        let mut nul = None;
        let line = self.command.fill(|name| {
            let text = match values.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            if text.contains('\0') {
                nul = Some(name.to_owned());
            }
            quote(&text)
        });
        match nul {
            Some(name) => Err(ToolError::InvalidArguments(format!(
                "{name} contains a NUL byte, which a command line cannot carry"
            ))),
            None => Ok(line),
        }
    }
}

#[async_trait]
impl Tool for CommandTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let policy = ctx.require::<ShellPolicy>()?;
        let workspace = Workspace::of(ctx)?;
        let request = CommandRequest {
            command: self.command_line(&args.into_json())?,
            working_dir: None,
            timeout: self.timeout,
        };
        let output = run_command(policy, &workspace, &request, ctx.cancellation()).await?;
        Ok(output.to_tool_output())
    }
}

/// Where the shell would be, reading the template up to a placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Backticks,
    Comment,
}

/// Refuse templates that put a placeholder where a single-quoted word would
/// not stay one word: inside quotes or backticks, in a comment (a newline
/// in the value would end the comment), or after a here-document operator
/// (its body expands `$(...)` whatever the quotes).
fn check_placement(template: &Template) -> Result<(), String> {
    let mut context = Context::Plain;
    let mut escaped = false;
    let mut word_start = true;
    let mut heredoc = false;
    for piece in &template.pieces {
        match piece {
            Piece::Param(name) => {
                let place = match context {
                    _ if heredoc => Some("after a here-document (`<<`)"),
                    Context::Plain if escaped => Some("right after a backslash"),
                    Context::Plain => None,
                    Context::SingleQuoted | Context::DoubleQuoted => Some("inside quotes"),
                    Context::Backticks => Some("inside backticks"),
                    Context::Comment => Some("inside a comment"),
                };
                if let Some(place) = place {
                    return Err(format!(
                        "placeholder `{{{{{name}}}}}` is {place}; values are quoted for you, so \
                         write it as a bare word: `echo {{{{{name}}}}}`, not `echo \"{{{{{name}}}}}\"`"
                    ));
                }
                word_start = false;
            }
            Piece::Text(text) => {
                let mut chars = text.chars().peekable();
                while let Some(c) = chars.next() {
                    if escaped {
                        escaped = false;
                        word_start = false;
                        continue;
                    }
                    match context {
                        Context::Plain => match c {
                            '\\' => escaped = true,
                            '\'' => context = Context::SingleQuoted,
                            '"' => context = Context::DoubleQuoted,
                            '`' => context = Context::Backticks,
                            '#' if word_start => context = Context::Comment,
                            '<' if chars.peek() == Some(&'<') => heredoc = true,
                            _ => {}
                        },
                        Context::SingleQuoted if c == '\'' => context = Context::Plain,
                        Context::DoubleQuoted | Context::Backticks if c == '\\' => escaped = true,
                        Context::DoubleQuoted if c == '"' => context = Context::Plain,
                        Context::Backticks if c == '`' => context = Context::Plain,
                        Context::Comment if c == '\n' => context = Context::Plain,
                        _ => {}
                    }
                    word_start = c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')');
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placement(text: &str) -> Result<(), String> {
        check_placement(&Template::parse(text).unwrap())
    }

    #[test]
    fn bare_words_and_parts_of_words_are_fine() {
        for ok in [
            "echo {{x}}",
            "grep -n -- {{pattern}} {{file}}",
            "git log --author={{who}} | head -5",
            "echo 'fixed text' {{x}} \"more\" # done",
            "echo $(date) {{x}}",
            "echo a#b {{x}}",
        ] {
            assert_eq!(placement(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn quoted_commented_and_heredoc_placeholders_are_refused() {
        for (bad, why) in [
            ("echo \"{{x}}\"", "inside quotes"),
            ("echo '{{x}}'", "inside quotes"),
            ("echo `{{x}}`", "inside backticks"),
            ("echo hi # {{x}}", "inside a comment"),
            ("cat <<EOF\n{{x}}\nEOF", "after a here-document"),
            ("echo \\{{x}}", "right after a backslash"),
        ] {
            let err = placement(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
