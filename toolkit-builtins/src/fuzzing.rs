//! Entry points for the fuzz targets in the repository's `fuzz/` directory.
//!
//! Not part of the API: hidden from the documentation, and free to change
//! or go away in any release. Each function reaches one crate-private step
//! that has no public entry of its own, and does nothing else.

/// `web_fetch`'s conversion of a body to readable text (HTML to Markdown,
/// JSON pretty-printed, text kept), for a response of `media_type`, at
/// most `max_chars` characters of it.
#[cfg(feature = "web")]
pub fn readable(media_type: &str, body: &[u8], max_chars: usize) -> String {
    crate::web::extract::readable(media_type, body, max_chars).text
}

/// What the guard's shell lexer makes of `command`: per simple command its
/// words, then each redirect as operator and target; and the source of
/// every substitution, which the guard lexes in turn.
#[cfg(all(feature = "shell", unix))]
pub fn shell_words(command: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let parsed = crate::shell::words::parse(command);
    let segments = parsed
        .segments
        .into_iter()
        .map(|segment| {
            let words = segment.words.into_iter().map(|w| w.text);
            let redirects = segment
                .redirects
                .into_iter()
                .map(|r| format!("{}{}", r.op, r.target.text));
            words.chain(redirects).collect()
        })
        .collect();
    (segments, parsed.substitutions)
}

/// The command line a command tool with the template `command` builds for
/// `args`, every placeholder declared as a string parameter; `None` when
/// loading refuses the template (a bad placeholder, or one placed where a
/// quoted value would not stay one word).
#[cfg(all(feature = "config", unix))]
pub fn command_line(
    command: &str,
    args: &serde_json::Value,
) -> Option<Result<String, toolsmith::ToolError>> {
    use crate::config::{Param, ParamType, Params};
    let template = crate::config::template::Template::parse(command).ok()?;
    let params = template
        .names()
        .into_iter()
        .map(|name| Param {
            name: name.to_owned(),
            kind: ParamType::String,
            description: None,
            required: false,
            default: None,
            allowed: None,
            allow_leading_dash: false,
        })
        .collect();
    let tool = crate::config::CommandTool::new(
        "fuzz".into(),
        "fuzz".into(),
        Params(params),
        template,
        None,
    )
    .ok()?;
    Some(tool.command_line(args))
}
