//! The metadata keys [`shape_output`](super::shape_output) writes, for hosts
//! that log or act on them. Metadata never reaches the model.

/// `{"original_chars": n, "kept_chars": n}`: `content` was cut to fit.
pub const TRUNCATED: &str = "truncated";

/// `{"path": "/abs/path", "shown_path": "rel/path", "chars": n, "lines": n,
/// "preview_chars": n}`: the full `content` was saved to a file and replaced
/// by a preview and a reference to it.
pub const PERSISTED: &str = "persisted";

/// `{"error": "..."}`: saving failed, so `content` was truncated instead
/// (and [`TRUNCATED`] is set too).
pub const PERSIST_FAILED: &str = "persist_failed";

/// `true`: the tool returned no text, and `content` now says so.
pub const EMPTY_RESULT: &str = "empty_result";

/// `{"original_chars": n, "kept_chars": n}`: `display` was cut to fit.
pub const DISPLAY_TRUNCATED: &str = "display_truncated";

/// `{"limit": n}`: `structured` was longer than `n` characters of JSON and
/// was removed; `content` still carries the result as text.
pub const STRUCTURED_DROPPED: &str = "structured_dropped";

/// `[{"path", "from", "to"}, ...]`: the lenient casts the runner applied to
/// the arguments (absent when none were needed).
pub const CASTS: &str = "casts";

/// Whole milliseconds the tool ran, measured by the runner.
pub const DURATION_MS: &str = "duration_ms";
