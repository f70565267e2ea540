//! [`FsLimits`]: how much the file and search tools return at most.

/// Caps for the file and search tools, read from the context's state
/// (`ToolContext::with_state(FsLimits { .. })`); the defaults apply when
/// there is none.
///
/// ```
/// use toolsmith_builtins::fs::FsLimits;
///
/// let limits = FsLimits { max_read_chars: 20_000, ..FsLimits::default() };
/// assert_eq!(limits.max_read_chars, 20_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsLimits {
    /// Characters `read_file` returns at most in one call.
    pub max_read_chars: usize,
    /// Lines `read_file` returns when the call gives no `limit`.
    pub default_read_lines: u64,
    /// Characters of one line shown before it is cut.
    pub max_line_chars: usize,
    /// Bytes of an image `read_file` returns as image output.
    pub max_image_bytes: u64,
    /// Bytes of a file `edit_file` and `notebook_edit` load to change it.
    pub max_edit_bytes: u64,
    /// Files up to this size get an exact line count in `read_file`'s note.
    pub count_lines_up_to_bytes: u64,
    /// Entries `list_dir` returns when the call gives no `max_entries`.
    pub default_list_entries: usize,
    /// Characters `glob` and `list_dir` return at most in one call.
    pub max_listing_chars: usize,
    /// Paths `glob` returns when the call gives no `max_results`.
    pub default_glob_results: usize,
    /// Results `grep` returns when the call gives no `head_limit`.
    pub default_grep_results: usize,
    /// Characters `grep` returns at most in one call.
    pub max_grep_chars: usize,
    /// Bytes of one file a multiline `grep` reads (it holds the whole file);
    /// a larger file is left out, and the output says so.
    pub max_multiline_bytes: usize,
    /// Bytes a line-by-line `grep` holds for one line and its context; a
    /// file with a longer line is left out, and the output says so.
    pub max_search_line_bytes: usize,
}

impl Default for FsLimits {
    fn default() -> Self {
        Self {
            max_read_chars: 128_000,
            default_read_lines: 2_000,
            max_line_chars: 2_000,
            max_image_bytes: 10 * 1024 * 1024,
            max_edit_bytes: 16 * 1024 * 1024,
            count_lines_up_to_bytes: 64 * 1024 * 1024,
            default_list_entries: 500,
            max_listing_chars: 64_000,
            default_glob_results: 200,
            default_grep_results: 250,
            max_grep_chars: 64_000,
            max_multiline_bytes: 64 * 1024 * 1024,
            max_search_line_bytes: 16 * 1024 * 1024,
        }
    }
}

impl FsLimits {
    /// The limits in `ctx`'s state, or the defaults.
    pub fn of(ctx: &toolsmith::ToolContext) -> FsLimits {
        ctx.state::<FsLimits>().cloned().unwrap_or_default()
    }
}
