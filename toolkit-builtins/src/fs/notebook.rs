//! `notebook_edit`: replace, insert or delete one cell of a Jupyter
//! notebook, keeping it a valid nbformat 4 document.

use std::time::{SystemTime, UNIX_EPOCH};

use super::blocking::Stop;
use toolsmith::schemars::JsonSchema;
use toolsmith::serde::Deserialize;
use toolsmith::serde_json::{self, Map, Value, json};
use toolsmith::{ToolContext, ToolError, ToolOutput, tool};

use super::state::FileState;
use super::write::{Previous, read_previous};
use super::{FsLimits, diff};
use crate::sandbox::{Access, Workspace};

/// The kind of a notebook cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", rename_all = "snake_case")]
#[schemars(crate = "toolsmith::schemars")]
pub enum CellType {
    /// Code the kernel runs.
    Code,
    /// Markdown text.
    Markdown,
    /// Raw text passed through unchanged.
    Raw,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
            CellType::Raw => "raw",
        }
    }
}

/// What to do to the cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", rename_all = "snake_case")]
#[schemars(crate = "toolsmith::schemars")]
pub enum EditMode {
    /// Replace the cell's source (and type, if given).
    Replace,
    /// Insert a new cell at `cell_index`, or after the cell `cell_id`.
    Insert,
    /// Delete the cell.
    Delete,
}

/// Edit a Jupyter notebook (`.ipynb`): replace, insert or delete one cell.
///
/// Name the cell by `cell_index` (0-based) or by `cell_id`. Replacing a code
/// cell clears its outputs. The notebook stays valid JSON in nbformat 4.
/// Read the notebook first.
#[tool(destructive, exclusive, category = filesystem_write, risk = medium)]
pub async fn notebook_edit(
    ctx: &ToolContext,
    /// Path of the notebook, relative to the workspace root.
    #[arg(min_length = 1)]
    path: String,
    /// replace (default), insert or delete.
    #[arg(default = EditMode::Replace)]
    edit_mode: EditMode,
    /// The cell, 0-based. For insert: where the new cell goes (the cell
    /// count appends).
    cell_index: Option<usize>,
    /// The cell, by its `id`. For insert: the new cell goes after it.
    cell_id: Option<String>,
    /// The new source of the cell (for replace and insert).
    new_source: Option<String>,
    /// The cell's type: needed for insert (default code), optional for replace.
    cell_type: Option<CellType>,
) -> Result<ToolOutput, ToolError> {
    super::blocking::run(ctx, move |ctx, stop| {
        notebook_edit_blocking(
            ctx, stop, path, edit_mode, cell_index, cell_id, new_source, cell_type,
        )
    })
    .await?
}

/// The body of [`notebook_edit`], on a blocking thread.
#[allow(clippy::too_many_arguments)]
fn notebook_edit_blocking(
    ctx: &ToolContext,
    _stop: &Stop,
    path: String,
    edit_mode: EditMode,
    cell_index: Option<usize>,
    cell_id: Option<String>,
    new_source: Option<String>,
    cell_type: Option<CellType>,
) -> Result<ToolOutput, ToolError> {
    let workspace = Workspace::of(ctx)?;
    let limits = FsLimits::of(ctx);
    let state = FileState::of(ctx);
    let target = workspace.locate(&path, Access::Write)?;
    let prior = read_previous(&target, limits.max_edit_bytes, state)?;
    // Cells are named by index: one read of a changed notebook would
    // point at another cell than the model means.
    prior.check_read(state, &path)?;
    let text = match prior.previous {
        Previous::Text(text) => text,
        Previous::Missing => {
            return Err(ToolError::failed(format!("`{path}` does not exist")));
        }
        Previous::Opaque(what) => {
            return Err(ToolError::failed(format!(
                "`{path}` is {what}, not a notebook"
            )));
        }
    };
    let values = json_values(&text);
    if values > MAX_NOTEBOOK_VALUES {
        return Err(ToolError::failed(format!(
            "`{path}` holds over {MAX_NOTEBOOK_VALUES} JSON values ({values}); \
             too many to load to edit one cell"
        )));
    }
    let mut notebook: Value = serde_json::from_str(&text)
        .map_err(|e| ToolError::failed(format!("`{path}` is not valid notebook JSON: {e}")))?;
    let wants_ids = notebook["nbformat"].as_u64() == Some(4)
        && notebook["nbformat_minor"].as_u64().unwrap_or(0) >= 5;
    if notebook["nbformat"].as_u64().is_none_or(|v| v < 4) {
        return Err(ToolError::failed(format!(
            "`{path}` is not an nbformat 4 notebook; only nbformat 4 can be edited"
        )));
    }
    let Some(cells) = notebook.get_mut("cells").and_then(Value::as_array_mut) else {
        return Err(ToolError::failed(format!(
            "`{path}` has no `cells` list; it is not a valid notebook"
        )));
    };
    let count = cells.len();
    let by_id = |id: &str, cells: &[Value]| -> Result<usize, ToolError> {
        cells
            .iter()
            .position(|c| c["id"].as_str() == Some(id))
            .ok_or_else(|| ToolError::failed(format!("no cell in `{path}` has id `{id}`")))
    };
    let (summary, old_source, new_source_text) = match edit_mode {
        EditMode::Replace | EditMode::Delete => {
            let index = match (cell_index, cell_id.as_deref()) {
                (Some(i), _) if i < count => i,
                (Some(i), _) => {
                    return Err(ToolError::failed(format!(
                        "cell_index {i} is out of range: `{path}` has {count} cells (0-{})",
                        count.saturating_sub(1)
                    )));
                }
                (None, Some(id)) => by_id(id, cells)?,
                (None, None) => {
                    return Err(ToolError::failed(
                        "name the cell with cell_index (0-based) or cell_id",
                    ));
                }
            };
            let old = source_of(&cells[index]);
            if edit_mode == EditMode::Delete {
                cells.remove(index);
                (format!("Deleted cell {index}"), old, String::new())
            } else {
                let source = new_source
                    .ok_or_else(|| ToolError::failed("new_source is required to replace a cell"))?;
                let cell = cells[index]
                    .as_object_mut()
                    .ok_or_else(|| ToolError::failed(format!("cell {index} is not an object")))?;
                let kind = cell_type.map_or_else(
                    || {
                        cell.get("cell_type")
                            .and_then(Value::as_str)
                            .unwrap_or("code")
                            .to_owned()
                    },
                    |t| t.as_str().to_owned(),
                );
                set_cell(cell, &kind, &source);
                (format!("Replaced cell {index} ({kind})"), old, source)
            }
        }
        EditMode::Insert => {
            let index = match (cell_index, cell_id.as_deref()) {
                (Some(i), _) if i <= count => i,
                (Some(i), _) => {
                    return Err(ToolError::failed(format!(
                        "cell_index {i} is out of range for insert: `{path}` has {count} cells, so use 0-{count}"
                    )));
                }
                (None, Some(id)) => by_id(id, cells)? + 1,
                (None, None) => count,
            };
            let source = new_source
                .ok_or_else(|| ToolError::failed("new_source is required to insert a cell"))?;
            let kind = cell_type.unwrap_or(CellType::Code).as_str();
            let mut cell = Map::new();
            if wants_ids || cells.iter().any(|c| c.get("id").is_some()) {
                cell.insert("id".into(), Value::String(fresh_id(cells)));
            }
            set_cell(&mut cell, kind, &source);
            cells.insert(index, Value::Object(cell));
            (
                format!("Inserted a {kind} cell at index {index}"),
                String::new(),
                source,
            )
        }
    };
    let total = notebook["cells"].as_array().map_or(0, Vec::len);
    // Indented, a value nested 100 deep takes 100 bytes a line: a notebook
    // of 2 MB could be written back as 100 MB. What is written is held to
    // what is read, so the notebook can be edited again.
    let mut capped = Capped {
        bytes: Vec::new(),
        max: limits.max_edit_bytes.saturating_sub(1),
    };
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut capped, formatter);
    if let Err(e) = toolsmith::serde::Serialize::serialize(&notebook, &mut serializer) {
        return Err(if e.is_io() {
            ToolError::failed(format!(
                "the edited `{path}` would be larger than {}, the most a notebook may be to be edited; nothing was written",
                super::sniff::human_size(limits.max_edit_bytes)
            ))
        } else {
            ToolError::internal(format!("cannot write the notebook: {e}"))
        });
    }
    let mut bytes = capped.bytes;
    bytes.push(b'\n');
    let written = target.write_atomic(&bytes)?;
    if let Some(state) = state {
        state.wrote(&written, state.version_of(&bytes));
    }
    Ok(
        ToolOutput::text(format!("{summary} in `{path}`; it now has {total} cells."))
            .with_display(diff::unified(&path, Some(&old_source), &new_source_text)),
    )
}

/// The most JSON values (strings, numbers, lists, objects, keys) a notebook
/// may hold to be edited. Each is loaded as a node of about 100 bytes, so a
/// file of tiny values (`0,0,0,...`, `{"a":0},...`) takes 40 to 60 times
/// its size in memory: about a gigabyte for one of the default 16 MiB,
/// more where the host raised `max_edit_bytes`. Real notebooks hold far
/// fewer: their bulk is long strings (sources, outputs, images).
const MAX_NOTEBOOK_VALUES: usize = 1_000_000;

/// About how many values the JSON `text` holds, counted without loading
/// it: every `{`, `[`, `,` and `:` outside strings opens or follows one.
fn json_values(text: &str) -> usize {
    let mut count = 0;
    let mut in_string = false;
    let mut escaped = false;
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'{' | b'[' | b',' | b':' => count += 1,
                _ => {}
            }
        }
    }
    count
}

/// A buffer that refuses to grow past `max` bytes.
struct Capped {
    bytes: Vec<u8>,
    max: u64,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if (self.bytes.len() + buf.len()) as u64 > self.max {
            return Err(std::io::Error::other("past the size limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Set a cell's type and source, with the fields its type requires.
fn set_cell(cell: &mut Map<String, Value>, kind: &str, source: &str) {
    cell.insert("cell_type".into(), Value::String(kind.to_owned()));
    cell.entry("metadata").or_insert_with(|| json!({}));
    cell.insert("source".into(), source_lines(source));
    if kind == "code" {
        // The old outputs belong to the old source.
        cell.insert("execution_count".into(), Value::Null);
        cell.insert("outputs".into(), json!([]));
    } else {
        cell.remove("execution_count");
        cell.remove("outputs");
    }
}

/// Source as nbformat stores it: lines, each keeping its newline.
fn source_lines(source: &str) -> Value {
    Value::Array(
        source
            .split_inclusive('\n')
            .map(|line| Value::String(line.to_owned()))
            .collect(),
    )
}

/// A cell's source as one string (nbformat allows a string or a list).
fn source_of(cell: &Value) -> String {
    match &cell["source"] {
        Value::String(s) => s.clone(),
        Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// An id no cell in `cells` has (nbformat 4.5: 1-64 of `[a-zA-Z0-9-_]`).
fn fresh_id(cells: &[Value]) -> String {
    let mut seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    loop {
        // splitmix64: spreads the clock's bits over the whole id.
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let id = format!("{:08x}", (z ^ (z >> 31)) as u32);
        if !cells.iter().any(|c| c["id"].as_str() == Some(&id)) {
            return id;
        }
    }
}
