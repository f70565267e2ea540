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
    /// Placeholders whose values can never be read as options.
    never_options: Vec<String>,
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
        let placement = check_placement(&command)?;
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
            never_options: placement.never_options,
        })
    }

    /// The command line for `args`: every value as one quoted shell word.
    ///
    /// A value that begins with `-` is refused unless its parameter allows
    /// it (`"allow_leading_dash": true`) or the template only uses it after
    /// `--` or inside a word: otherwise the program would read it as an
    /// option.
    pub fn command_line(&self, args: &Value) -> Result<String, ToolError> {
        let values = self.params.values(args);
        let mut problem = None;
        let line = self.command.fill(|name| {
            let text = match values.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            if text.contains('\0') {
                problem.get_or_insert(format!(
                    "{name} contains a NUL byte, which a command line cannot carry"
                ));
            }
            if text.starts_with('-')
                && !self.never_options.iter().any(|n| n == name)
                && !self.params.allows_leading_dash(name)
            {
                problem.get_or_insert(format!(
                    "{name} begins with `-`, which the command would read as an option; give a \
                     value that does not (for a file, write `./{text}`)"
                ));
            }
            quote(&text)
        });
        match problem {
            Some(message) => Err(ToolError::InvalidArguments(message)),
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
    /// Plain text, or a command substitution's text (a plain context too),
    /// with the depth of parentheses opened inside it.
    Plain(usize),
    SingleQuoted,
    DoubleQuoted,
    Backticks,
    Comment,
    /// `$'…'`: shells end it at different places (dash has no ANSI-C quoting).
    AnsiC,
    /// `$((…))` or `((…))`, with the depth of parentheses opened inside.
    Arithmetic(usize),
    /// `$[…]`.
    OldArithmetic,
    /// `${…}`, with the depth of braces opened inside.
    Parameter(usize),
}

impl Context {
    fn refusal(self) -> Option<&'static str> {
        Some(match self {
            Self::Plain(_) => return None,
            Self::SingleQuoted | Self::DoubleQuoted => "inside quotes",
            Self::Backticks => "inside backticks",
            Self::Comment => "inside a comment",
            Self::AnsiC => "inside ANSI-C quoting (`$'…'`)",
            Self::Arithmetic(_) | Self::OldArithmetic => {
                "inside arithmetic, which evaluates a value as code"
            }
            Self::Parameter(_) => "inside a parameter expansion (`${…}`)",
        })
    }
}

/// Builtins that evaluate their arguments as code or as arithmetic.
const EVALUATING: &[&str] = &[
    "eval", "let", "[[", "declare", "typeset", "local", "readonly", "export", "alias", "trap",
    "source", ".", "unset",
];

/// The simple command being read at one level: its words so far.
#[derive(Debug, Default)]
struct Simple {
    /// The command word, once seen.
    command: Option<String>,
    /// Whether a `--` word has been seen.
    after_dashdash: bool,
    /// The current word's literal text (`None` before it starts).
    word: Option<String>,
}

impl Simple {
    fn end_word(&mut self) {
        let Some(word) = self.word.take() else {
            return;
        };
        if word == "--" {
            self.after_dashdash = true;
        }
        let assignment = word.split_once('=').is_some_and(|(n, _)| {
            !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if self.command.is_none() && !assignment && !KEYWORDS.contains(&word.as_str()) {
            self.command = Some(word);
        }
    }
}

const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "time",
];

/// How a template places its placeholders.
#[derive(Debug, Default)]
pub(crate) struct Placement {
    /// Placeholders whose every use either sits after a `--` or does not
    /// start a word: their values can never be read as options.
    pub never_options: Vec<String>,
}

/// Refuse templates that put a placeholder where a single-quoted word would
/// not stay one literal word, in any shell the host may use: inside quotes,
/// backticks, ANSI-C quoting, arithmetic or `${…}`, in a comment (a newline
/// in the value would end it), right after a backslash, after a
/// here-document operator (its body expands `$(...)` whatever the quotes),
/// as the command name, or as an argument of a builtin that evaluates its
/// arguments (`eval`, `let`, `[[`, `declare`, …).
fn check_placement(template: &Template) -> Result<Placement, String> {
    let mut stack = vec![Context::Plain(0)];
    let mut simples = vec![Simple::default()];
    let mut escaped = false;
    let mut word_start = true;
    let mut heredoc = false;
    let mut ansi_c = false;
    let mut uses: Vec<(String, bool)> = Vec::new();
    for piece in &template.pieces {
        match piece {
            Piece::Param(name) => {
                let simple = simples.last_mut().expect("never empty");
                let starts_word = simple.word.is_none();
                let place = if heredoc {
                    Some("after a here-document (`<<`)")
                } else if ansi_c {
                    Some("after ANSI-C quoting (`$'…'`), which shells end at different places")
                } else if escaped {
                    Some("right after a backslash")
                } else if let Some(place) = stack.iter().rev().find_map(|c| c.refusal()) {
                    Some(place)
                } else if starts_word && simple.command.is_none() {
                    Some("the command name, so a value would choose the program")
                } else if simple
                    .command
                    .as_deref()
                    .is_some_and(|c| EVALUATING.contains(&c))
                {
                    Some("an argument of a builtin that evaluates its arguments as code")
                } else {
                    None
                };
                if let Some(place) = place {
                    return Err(format!(
                        "placeholder `{{{{{name}}}}}` is {place}; values are quoted for you, so \
                         write it as a bare word: `echo {{{{{name}}}}}`, not `echo \"{{{{{name}}}}}\"`"
                    ));
                }
                uses.push((name.clone(), !starts_word || simple.after_dashdash));
                simple.word.get_or_insert_with(String::new).push('\u{0}');
                word_start = false;
            }
            Piece::Text(text) => {
                let chars: Vec<char> = text.chars().collect();
                let mut i = 0;
                while i < chars.len() {
                    let c = chars[i];
                    let next = chars.get(i + 1).copied();
                    let after = chars.get(i + 2).copied();
                    i += 1;
                    if escaped {
                        escaped = false;
                        if c != '\n' {
                            simples
                                .last_mut()
                                .expect("never empty")
                                .word
                                .get_or_insert_with(String::new)
                                .push(c);
                        }
                        word_start = false;
                        continue;
                    }
                    let top = *stack.last().expect("never empty");
                    match top {
                        Context::Plain(depth) => {
                            let simple = simples.last_mut().expect("never empty");
                            if !c.is_whitespace() && !matches!(c, ';' | '&' | '|' | '(' | ')') {
                                simple.word.get_or_insert_with(String::new);
                            }
                            match c {
                                '\\' => escaped = true,
                                '\'' => stack.push(Context::SingleQuoted),
                                '"' => stack.push(Context::DoubleQuoted),
                                '`' => stack.push(Context::Backticks),
                                '#' if word_start => stack.push(Context::Comment),
                                '<' if next == Some('<') => heredoc = true,
                                '$' if next == Some('\'') => {
                                    stack.push(Context::AnsiC);
                                    ansi_c = true;
                                    i += 1;
                                }
                                '$' if next == Some('(') && after == Some('(') => {
                                    stack.push(Context::Arithmetic(0));
                                    i += 2;
                                }
                                '$' if next == Some('(') => {
                                    stack.push(Context::Plain(0));
                                    simples.push(Simple::default());
                                    i += 1;
                                }
                                '$' if next == Some('[') => {
                                    stack.push(Context::OldArithmetic);
                                    i += 1;
                                }
                                '$' if next == Some('{') => {
                                    stack.push(Context::Parameter(0));
                                    i += 1;
                                }
                                '(' if word_start && next == Some('(') => {
                                    stack.push(Context::Arithmetic(0));
                                    i += 1;
                                }
                                '(' => {
                                    *stack.last_mut().expect("never empty") =
                                        Context::Plain(depth + 1);
                                    simple.end_word();
                                    *simple = Simple::default();
                                }
                                ')' if depth == 0 && stack.len() > 1 => {
                                    stack.pop();
                                    simples.pop();
                                }
                                ')' => {
                                    *stack.last_mut().expect("never empty") =
                                        Context::Plain(depth.saturating_sub(1));
                                    *simple = Simple::default();
                                }
                                ';' | '&' | '|' | '\n' => {
                                    simple.end_word();
                                    *simple = Simple::default();
                                }
                                c if c.is_whitespace() => simple.end_word(),
                                c => simple.word.get_or_insert_with(String::new).push(c),
                            }
                        }
                        Context::SingleQuoted if c == '\'' => {
                            stack.pop();
                        }
                        Context::DoubleQuoted | Context::Backticks | Context::AnsiC
                            if c == '\\' =>
                        {
                            escaped = true
                        }
                        Context::DoubleQuoted if c == '"' => {
                            stack.pop();
                        }
                        Context::DoubleQuoted if c == '$' && next == Some('(') => {
                            // A substitution inside quotes: still refused,
                            // but its closing parenthesis must be matched.
                            stack.push(Context::Arithmetic(0));
                            i += 1;
                        }
                        Context::Backticks if c == '`' => {
                            stack.pop();
                        }
                        Context::AnsiC if c == '\'' => {
                            stack.pop();
                        }
                        Context::Comment if c == '\n' => {
                            stack.pop();
                        }
                        Context::Arithmetic(depth) => match c {
                            '(' => {
                                *stack.last_mut().expect("never empty") =
                                    Context::Arithmetic(depth + 1)
                            }
                            ')' if depth == 0 => {
                                stack.pop();
                                if next == Some(')') {
                                    i += 1;
                                }
                            }
                            ')' => {
                                *stack.last_mut().expect("never empty") =
                                    Context::Arithmetic(depth - 1)
                            }
                            _ => {}
                        },
                        Context::OldArithmetic if c == ']' => {
                            stack.pop();
                        }
                        Context::Parameter(depth) => match c {
                            '{' => {
                                *stack.last_mut().expect("never empty") =
                                    Context::Parameter(depth + 1)
                            }
                            '}' if depth == 0 => {
                                stack.pop();
                            }
                            '}' => {
                                *stack.last_mut().expect("never empty") =
                                    Context::Parameter(depth - 1)
                            }
                            _ => {}
                        },
                        _ => {}
                    }
                    word_start = c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')');
                }
            }
        }
    }
    let mut never_options = Vec::new();
    for (name, _) in &uses {
        if !never_options.contains(name)
            && uses
                .iter()
                .filter(|(n, _)| n == name)
                .all(|(_, safe)| *safe)
        {
            never_options.push(name.clone());
        }
    }
    Ok(Placement { never_options })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placement(text: &str) -> Result<(), String> {
        check_placement(&Template::parse(text).unwrap()).map(drop)
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
            "echo $(cat {{x}})",
            "echo $((1 + 2)) {{x}}",
            "sh -c 'echo \"$1\"' _ {{x}}",
        ] {
            assert_eq!(placement(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn values_after_dashdash_or_inside_a_word_are_never_options() {
        let placed = |text: &str| {
            check_placement(&Template::parse(text).unwrap())
                .unwrap()
                .never_options
        };
        assert_eq!(placed("grep -n -- {{p}} {{f}}"), ["p", "f"]);
        assert_eq!(placed("git log --author={{who}} {{rev}}"), ["who"]);
        assert_eq!(placed("rm -- {{a}}; ls {{a}}"), Vec::<String>::new());
        assert_eq!(placed("echo $(ls -- {{a}}) {{b}}"), ["a"]);
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
            ("echo $(( {{x}} + 1 ))", "inside arithmetic"),
            ("(( {{x}} ))", "inside arithmetic"),
            ("echo $[ {{x}} ]", "inside arithmetic"),
            ("echo $(( $(echo {{x}}) ))", "inside arithmetic"),
            ("echo $'a' $'\\'' {{x}}'", "ANSI-C"),
            ("echo $'a' {{x}}", "ANSI-C"),
            ("echo ${v:-{{x}}}", "parameter expansion"),
            ("echo ${a[{{x}}]}", "parameter expansion"),
            ("{{x}} --help", "the command name"),
            ("A=1 {{x}}", "the command name"),
            ("echo hi; {{x}}", "the command name"),
            ("eval echo {{x}}", "evaluates"),
            ("let n={{x}}", "evaluates"),
            ("[[ {{x}} -eq 1 ]]", "evaluates"),
            ("declare n={{x}}", "evaluates"),
            ("cat <<<{{x}}", "after a here-document"),
        ] {
            let err = placement(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
