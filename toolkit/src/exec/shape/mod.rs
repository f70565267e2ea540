//! Shaping tool results for the model: step 8 of the path of one call.
//!
//! A result goes into the model's context as it is, so it must never be empty
//! (some providers reject an empty tool message, and a model reads nothing
//! into silence) and never so large that it crowds out the conversation.
//! [`shape_output`] makes one result fit; [`compact`] and
//! [`compact_history`] later clear old bulky results from the history as the
//! conversation grows.
//!
//! What was done is recorded in the output's metadata under the keys in
//! [`meta`], for the host only; the model sees a marker or a reference in the
//! text itself.

mod compact;
mod config;
mod count;
pub mod meta;
mod openai;
mod persist;
mod structured;
mod truncate;

use std::path::Path;

use crate::ToolOutput;

pub use compact::{CompactConfig, ToolResultMessage, compact};
pub use config::ShapeConfig;
pub use openai::compact_history;
#[cfg(feature = "mcp")]
pub(crate) use structured::as_text as structured_text;

use count::{count_chars, quantity};
use truncate::truncate;

/// Make one tool result fit for the model's context.
///
/// In order:
/// - empty or blank `content` is filled: with the structured result's JSON
///   if there is one (binary payloads in it, long base64 strings and `data:`
///   URLs, replaced by a note of their type and size) and no images, else
///   with a note that the tool returned images, or nothing (or failed
///   without a message), so the model never reads an empty result;
/// - `content` longer than [`max_chars`](ShapeConfig::max_chars) is saved in
///   full to [`persist_dir`](ShapeConfig::persist_dir), when one is set, and
///   replaced by its start and a reference the model can follow with
///   `read_file`; without a directory, or when saving fails, it is cut to
///   its head and tail with a marker saying how much was removed;
/// - `display` longer than [`max_display_chars`](ShapeConfig::max_display_chars)
///   is cut the same way;
/// - `structured` longer than [`max_structured_chars`](ShapeConfig::max_structured_chars)
///   is dropped.
///
/// `workspace` resolves a relative `persist_dir` and is what the reference
/// is shown relative to. Files are written with `std::fs`; the write happens
/// only for results over the limit, but an async caller handling many large
/// results may prefer to call this from `spawn_blocking`.
///
/// ```
/// use toolsmith::ToolOutput;
/// use toolsmith::exec::shape::{ShapeConfig, meta, shape_output};
///
/// let config = ShapeConfig::default().max_chars(1_000);
///
/// let empty = shape_output(ToolOutput::text(""), "grep", "call_1", &config, None);
/// assert_eq!(empty.content, "(grep returned no output)");
///
/// let long = ToolOutput::text("a line of output\n".repeat(1_000));
/// let shaped = shape_output(long, "exec", "call_2", &config, None);
/// assert!(shaped.content.chars().count() <= 1_000);
/// assert!(shaped.content.contains("lines) removed ...]"));
/// assert_eq!(shaped.metadata.read(&meta::TRUNCATED).unwrap().original_chars, 17_000);
/// ```
pub fn shape_output(
    mut output: ToolOutput,
    tool_name: &str,
    call_id: &str,
    config: &ShapeConfig,
    workspace: Option<&Path>,
) -> ToolOutput {
    shape_in_place(&mut output, tool_name, call_id, config, workspace);
    output
}

/// [`shape_output`] on an output where it lies.
#[inline]
pub(crate) fn shape_in_place(
    output: &mut ToolOutput,
    tool_name: &str,
    call_id: &str,
    config: &ShapeConfig,
    workspace: Option<&Path>,
) {
    if !fits_as_it_is(output, config) {
        reshape(output, tool_name, call_id, config, workspace);
    }
}

/// [`shape_in_place`] for a call in `ctx`: its id and workspace are looked
/// up only when the output has to change.
#[inline]
pub(crate) fn shape_for_call(
    output: &mut ToolOutput,
    tool_name: &str,
    config: &ShapeConfig,
    ctx: &crate::ToolContext,
) {
    if !fits_as_it_is(output, config) {
        let call_id = ctx.call_id().unwrap_or_default();
        reshape(output, tool_name, call_id, config, ctx.workspace());
    }
}

fn reshape(
    output: &mut ToolOutput,
    tool_name: &str,
    call_id: &str,
    config: &ShapeConfig,
    workspace: Option<&Path>,
) {
    if output.content.trim().is_empty() {
        fill_empty(output, tool_name);
    }
    fit_content(output, tool_name, call_id, config, workspace);
    fit_display(output, config);
    fit_structured(output, config);
}

/// Whether nothing needs doing, told from lengths alone: the usual short
/// text result. A byte length within a limit of characters is within it,
/// as a character is at least one byte.
#[inline]
fn fits_as_it_is(output: &ToolOutput, config: &ShapeConfig) -> bool {
    let text = output.content.as_bytes();
    text.len() <= config.content_limit()
        && text.first().is_some_and(|b| !b.is_ascii_whitespace())
        && output.display.is_none()
        && output.structured.is_none()
}

fn fill_empty(output: &mut ToolOutput, tool_name: &str) {
    // MCP asks servers to mirror structured results as text; do it for them,
    // with any binary payload in it left out. A result with images is
    // mirrored by them: they go to the model as images, and the note below
    // says so (their bytes are what such structured content mostly holds).
    if let Some(value) = output.structured.as_deref()
        && output.images.is_empty()
    {
        output.content = structured::as_text(value);
        return;
    }
    let tool = if tool_name.is_empty() {
        "the tool"
    } else {
        tool_name
    };
    output.content = if output.is_error {
        format!("({tool} failed without a message)")
    } else if !output.images.is_empty() {
        let images = quantity(output.images.len(), "image");
        format!("({tool} returned {images} and no text)")
    } else {
        format!("({tool} returned no output)")
    };
    output.metadata.write(&meta::EMPTY_RESULT, &true);
}

fn fit_content(
    output: &mut ToolOutput,
    tool_name: &str,
    call_id: &str,
    config: &ShapeConfig,
    workspace: Option<&Path>,
) {
    let limit = config.content_limit();
    let original_chars = count_chars(&output.content);
    if original_chars <= limit {
        return;
    }
    if let Some(dir) = &config.persist_dir {
        let saved =
            persist::save(&output.content, dir, tool_name, call_id, workspace).and_then(|saved| {
                persist::preview_with_reference(&output.content, original_chars, saved, config)
            });
        match saved {
            Ok(replacement) => {
                output.content = replacement.text;
                output.metadata.write(&meta::PERSISTED, &replacement.facts);
                return;
            }
            Err(error) => {
                tracing::warn!(
                    tool = tool_name,
                    call_id,
                    %error,
                    "could not save a large tool result; truncating it instead"
                );
                let facts = meta::PersistFailed {
                    error: error.to_string(),
                };
                output.metadata.write(&meta::PERSIST_FAILED, &facts);
            }
        }
    }
    let cut = truncate(&output.content, original_chars, limit, config.head_fraction);
    output.content = cut.text;
    let facts = meta::Truncated {
        original_chars,
        kept_chars: cut.kept_chars,
    };
    output.metadata.write(&meta::TRUNCATED, &facts);
}

fn fit_display(output: &mut ToolOutput, config: &ShapeConfig) {
    let Some(display) = &mut output.display else {
        return;
    };
    let limit = config.display_limit();
    let original_chars = count_chars(display);
    if original_chars <= limit {
        return;
    }
    let cut = truncate(display, original_chars, limit, config.head_fraction);
    *display = cut.text;
    let facts = meta::Truncated {
        original_chars,
        kept_chars: cut.kept_chars,
    };
    output.metadata.write(&meta::DISPLAY_TRUNCATED, &facts);
}

fn fit_structured(output: &mut ToolOutput, config: &ShapeConfig) {
    let limit = config.structured_limit();
    if output
        .structured
        .as_ref()
        .is_some_and(|value| structured::json_exceeds(value, limit))
    {
        output.structured = None;
        let facts = meta::StructuredDropped { limit };
        output.metadata.write(&meta::STRUCTURED_DROPPED, &facts);
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use serde_json::json;

    use super::persist::tests::TempDir;
    use super::*;

    fn shape(output: ToolOutput, config: &ShapeConfig, workspace: Option<&Path>) -> ToolOutput {
        shape_output(output, "read_file", "call_1", config, workspace)
    }

    #[test]
    fn an_empty_result_says_the_tool_returned_nothing() {
        let config = ShapeConfig::default();
        for blank in ["", "  \n\t "] {
            let out = shape(ToolOutput::text(blank), &config, None);
            assert_eq!(out.content, "(read_file returned no output)");
            assert_eq!(out.metadata[meta::EMPTY_RESULT.name()], json!(true));
            assert_eq!(out.metadata.read(&meta::EMPTY_RESULT), Some(true));
        }
    }

    #[test]
    fn an_empty_error_says_the_tool_failed_without_a_message() {
        let out = shape(ToolOutput::error(""), &ShapeConfig::default(), None);
        assert_eq!(out.content, "(read_file failed without a message)");
        assert!(out.is_error);
    }

    #[test]
    fn an_empty_result_with_images_says_so() {
        let out = shape(
            ToolOutput::text("").with_image("aGk=", "image/png"),
            &ShapeConfig::default(),
            None,
        );
        assert_eq!(out.content, "(read_file returned 1 image and no text)");
    }

    #[test]
    fn an_empty_result_with_structured_content_reads_as_its_json() {
        let mut output = ToolOutput::text("");
        output.structured = Some(Box::new(json!({"ok": true})));
        let out = shape(output, &ShapeConfig::default(), None);
        assert_eq!(out.content, r#"{"ok":true}"#);
        assert!(!out.metadata.contains_key(meta::EMPTY_RESULT.name()));
    }

    #[test]
    fn structured_content_never_puts_binary_payloads_into_the_text() {
        // As server-filesystem's `read_media_file` answers: the image, and
        // structured content that mirrors it, bytes and all.
        let png = "iVBORw0KGgo".repeat(20_000);
        let block = json!({"type": "image", "data": png, "mimeType": "image/png"});
        let mut output = ToolOutput::text("").with_image(png.clone(), "image/png");
        output.structured = Some(Box::new(json!({"content": [block]})));
        let out = shape(output, &ShapeConfig::default(), None);
        assert_eq!(out.content, "(read_file returned 1 image and no text)");
        assert_eq!(out.images.len(), 1);
        assert_eq!(out.metadata.read(&meta::EMPTY_RESULT), Some(true));
        // Without an image beside it, a payload is named, not shown.
        let mut output = ToolOutput::text("");
        output.structured = Some(Box::new(json!({"thumbnail": png, "mimeType": "image/png"})));
        let out = shape(output, &ShapeConfig::default(), None);
        assert_eq!(
            out.content,
            r#"{"thumbnail":"[image/png data, 165000 bytes, not shown]","mimeType":"image/png"}"#
        );
    }

    #[test]
    fn a_result_of_exactly_the_limit_is_not_truncated() {
        let text = "漢".repeat(16_000);
        let out = shape(
            ToolOutput::text(text.clone()),
            &ShapeConfig::default(),
            None,
        );
        assert_eq!(out.content, text);
        assert!(out.metadata.is_empty());
    }

    #[test]
    fn a_long_result_is_truncated_within_the_limit_and_says_so() {
        let unit = "aé漢🙂\n";
        let text = unit.repeat(10 * 1024 * 1024 / unit.len());
        let total = count_chars(&text);
        let out = shape(
            ToolOutput::text(text.clone()),
            &ShapeConfig::default(),
            None,
        );
        let kept = out.metadata[meta::TRUNCATED.name()]["kept_chars"]
            .as_u64()
            .unwrap() as usize;
        assert_eq!(
            out.metadata[meta::TRUNCATED.name()]["original_chars"],
            json!(total)
        );
        assert!(count_chars(&out.content) <= 16_000);
        let removed = format!("[... {} characters (", count::thousands(total - kept));
        assert!(out.content.contains(&removed), "{removed}");
        let (head, tail) = out.content.split_once(&removed).unwrap();
        assert!(text.starts_with(head.trim_end_matches("\n\n")));
        assert!(text.ends_with(tail.split_once("]\n\n").unwrap().1));
    }

    #[test]
    fn a_long_result_is_saved_in_full_and_referenced() {
        let ws = TempDir::new("shape-persist");
        let text = "0123456789\n".repeat(5_000);
        let config = ShapeConfig::default().persist_dir(".tool-results");
        let out = shape(ToolOutput::text(text.clone()), &config, Some(&ws.0));

        let saved = ws.0.join(".tool-results/read_file-call_1.txt");
        assert_eq!(fs::read_to_string(&saved).unwrap(), text);
        assert!(count_chars(&out.content) <= 16_000);
        assert!(out.content.starts_with("0123456789\n0123456789\n"));
        assert!(out.content.ends_with(
            "[Showing the start only. Full result (55,000 characters, 5,000 lines) saved to \
             .tool-results/read_file-call_1.txt; use read_file with offset and limit to read it]"
        ));
        let facts = &out.metadata[meta::PERSISTED.name()];
        assert_eq!(facts["path"], json!(saved.display().to_string()));
        assert_eq!(
            facts["shown_path"],
            json!(".tool-results/read_file-call_1.txt")
        );
        assert_eq!(facts["chars"], json!(55_000));
        let persisted = out.metadata.read(&meta::PERSISTED).unwrap();
        assert_eq!((persisted.chars, persisted.lines), (55_000, 5_000));
        assert!(!out.metadata.contains_key(meta::TRUNCATED.name()));
    }

    #[test]
    fn a_failed_save_falls_back_to_truncation() {
        let ws = TempDir::new("shape-fail");
        // A file where the directory should be: creating it must fail.
        fs::write(ws.0.join("blocked"), "").unwrap();
        let config = ShapeConfig::default().persist_dir("blocked/results");
        let out = shape(ToolOutput::text("x\n".repeat(20_000)), &config, Some(&ws.0));

        assert!(count_chars(&out.content) <= 16_000);
        assert!(out.content.contains("lines) removed ...]"));
        assert!(out.metadata.contains_key(meta::TRUNCATED.name()));
        let error = out.metadata[meta::PERSIST_FAILED.name()]["error"]
            .as_str()
            .unwrap();
        assert!(error.contains("blocked"), "{error}");
        let failed = out.metadata.read(&meta::PERSIST_FAILED).unwrap();
        assert_eq!(failed.error, error);
    }

    #[test]
    fn a_relative_persist_dir_without_workspace_falls_back_to_truncation() {
        let config = ShapeConfig::default().persist_dir(".tool-results");
        let out = shape(ToolOutput::text("x".repeat(20_000)), &config, None);
        assert!(out.metadata.contains_key(meta::PERSIST_FAILED.name()));
        assert!(out.metadata.contains_key(meta::TRUNCATED.name()));
    }

    #[test]
    fn display_text_is_cut_only_past_its_own_larger_limit() {
        let config = ShapeConfig::default().max_display_chars(50_000);
        let display = "d".repeat(50_000);
        let out = shape(
            ToolOutput::text("short").with_display(display.clone()),
            &config,
            None,
        );
        assert_eq!(out.display.as_deref(), Some(display.as_str()));

        let out = shape(
            ToolOutput::text("short").with_display("d".repeat(50_001)),
            &config,
            None,
        );
        assert!(count_chars(out.display.as_deref().unwrap()) <= 50_000);
        assert_eq!(out.content, "short");
        assert!(out.metadata.contains_key(meta::DISPLAY_TRUNCATED.name()));
    }

    #[test]
    fn huge_structured_content_is_dropped_and_small_is_kept() {
        let big = ToolOutput::from_json(json!({"rows": vec!["row"; 10_000]}));
        let out = shape(big, &ShapeConfig::default(), None);
        assert!(out.structured.is_none());
        assert_eq!(
            out.metadata[meta::STRUCTURED_DROPPED.name()]["limit"],
            json!(16_000)
        );
        let dropped = out.metadata.read(&meta::STRUCTURED_DROPPED).unwrap();
        assert_eq!(dropped.limit, 16_000);
        assert!(out.metadata.contains_key(meta::TRUNCATED.name()));

        let small = ToolOutput::from_json(json!({"rows": ["row"]}));
        let out = shape(small, &ShapeConfig::default(), None);
        assert_eq!(out.structured.as_deref(), Some(&json!({"rows": ["row"]})));
    }

    #[test]
    fn odd_configs_never_panic_or_empty_the_result() {
        let dir = TempDir::new("shape-odd");
        let configs = [
            ShapeConfig::default()
                .max_chars(0)
                .persist_dir(&dir.0)
                .persist_preview_chars(usize::MAX),
            ShapeConfig::default().max_chars(0),
            ShapeConfig::default()
                .max_chars(0)
                .persist_dir("/nonexistent/\0/x"),
            ShapeConfig::default()
                .head_fraction(f64::NAN)
                .max_display_chars(0),
        ];
        for config in &configs {
            for text in ["", "🙂", &"🙂\n".repeat(10_000)] {
                let out = shape_output(ToolOutput::text(text), "", "", config, None);
                assert!(!out.content.trim().is_empty());
                assert!(count_chars(&out.content) <= config.content_limit());
            }
        }
    }
}
