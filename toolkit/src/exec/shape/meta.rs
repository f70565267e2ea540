//! The metadata keys [`shape_output`](super::shape_output), the
//! [`Pipeline`](crate::pipeline::Pipeline) and the
//! [`Runner`](crate::exec::Runner) write, for hosts that log or act on them.
//! Metadata never reaches the model.
//!
//! Each key names the type of its value: read one with
//! [`Metadata::read`](crate::Metadata::read). The JSON under a key is its
//! value's fields, as a host reading the metadata as JSON sees them.
//!
//! ```
//! use toolsmith::ToolOutput;
//! use toolsmith::exec::shape::{ShapeConfig, meta, shape_output};
//!
//! let long = ToolOutput::text("x".repeat(1_000));
//! let shaped = shape_output(long, "exec", "call_1", &ShapeConfig::default().max_chars(300), None);
//! let cut = shaped.metadata.read(&meta::TRUNCATED).unwrap();
//! assert_eq!(cut.original_chars, 1_000);
//! assert_eq!(shaped.metadata[meta::TRUNCATED.name()]["original_chars"], 1_000);
//! ```

use serde::{Deserialize, Serialize};

use crate::args::Cast;
use crate::output::MetaKey;

/// `"truncated"`: `content` was cut to fit.
pub const TRUNCATED: MetaKey<Truncated> = MetaKey::new("truncated");

/// `"persisted"`: the full `content` was saved to a file and replaced by a
/// preview and a reference to it.
pub const PERSISTED: MetaKey<Persisted> = MetaKey::new("persisted");

/// `"persist_failed"`: saving failed, so `content` was truncated instead
/// (and [`TRUNCATED`] is set too).
pub const PERSIST_FAILED: MetaKey<PersistFailed> = MetaKey::new("persist_failed");

/// `"empty_result"`, always `true`: the tool returned no text, and `content`
/// now says so.
pub const EMPTY_RESULT: MetaKey<bool> = MetaKey::new("empty_result");

/// `"display_truncated"`: `display` was cut to fit.
pub const DISPLAY_TRUNCATED: MetaKey<Truncated> = MetaKey::new("display_truncated");

/// `"structured_dropped"`: `structured` was too long and was removed;
/// `content` still carries the result as text.
pub const STRUCTURED_DROPPED: MetaKey<StructuredDropped> = MetaKey::new("structured_dropped");

/// `"casts"`: the lenient casts the runner applied to the arguments, each
/// `{"path", "from", "to"}` (absent when none were needed).
pub const CASTS: MetaKey<Vec<Cast>> = MetaKey::new("casts");

/// `"duration_ms"`: whole milliseconds the tool ran, measured by the runner.
pub const DURATION_MS: MetaKey<u64> = MetaKey::new("duration_ms");

/// `"error_kind"`: on a result that reports a failure of the call (not one
/// the tool itself wrote as an error result), what kind of failure, as
/// [`ErrorKind`](crate::ErrorKind) names it. Written on every path a call takes.
pub const ERROR_KIND: MetaKey<crate::ErrorKind> = MetaKey::new("error_kind");

/// `"attempts"`: how many times the tool ran for this call, when
/// [`Retry`](crate::pipeline::Retry) ran it more than once.
pub const ATTEMPTS: MetaKey<u32> = MetaKey::new("attempts");

/// `"cache_hit"`, always `true`: the result was answered by
/// [`Cache`](crate::pipeline::Cache) from an earlier call, and the tool did
/// not run.
pub const CACHE_HIT: MetaKey<bool> = MetaKey::new("cache_hit");

/// `"masked_error"`: the text of a failure before
/// [`Mask`](crate::pipeline::Mask) replaced what the model reads.
pub const MASKED_ERROR: MetaKey<String> = MetaKey::new("masked_error");

/// A text cut to fit its limit (under [`TRUNCATED`] and [`DISPLAY_TRUNCATED`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Truncated {
    /// Characters before the cut.
    pub original_chars: usize,
    /// Characters of the original kept, from its head and tail together.
    pub kept_chars: usize,
}

/// Where a result too long for the context was saved (under [`PERSISTED`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Persisted {
    /// The file, as it was written (`Path::display`, so a path that is not
    /// UTF-8 is shown lossily).
    pub path: String,
    /// The path the model was shown: relative to the workspace when the file
    /// is inside it.
    pub shown_path: String,
    /// Characters of the full result.
    pub chars: usize,
    /// Lines of the full result.
    pub lines: usize,
    /// Characters of its start shown before the reference.
    pub preview_chars: usize,
}

/// Why a result too long for the context could not be saved (under
/// [`PERSIST_FAILED`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PersistFailed {
    /// What went wrong, in words.
    pub error: String,
}

/// Structured content removed for its size (under [`STRUCTURED_DROPPED`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StructuredDropped {
    /// The limit it was over, in characters of compact JSON.
    pub limit: usize,
}
