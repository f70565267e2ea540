//! `read_file`: numbered lines of a text file, streamed, within a character
//! budget; images as image output; binary files described, not dumped.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use super::blocking::Stop;
use base64::Engine as _;
use toolsmith::{ToolContext, ToolError, ToolOutput, tool};

use super::FsLimits;
use super::sniff::{Kind, SNIFF_BYTES, classify, human_size};
use super::state::{Digesting, FileState, Lines, Seen, Version};
use crate::sandbox::{Access, Workspace};

/// Read a file in the workspace.
///
/// Text comes back as numbered lines, `LINE|CONTENT`, from `offset` on; a
/// note at the end says how to read further when the output stops early.
/// Images come back as images; other binary files are described by type.
/// Lines you already read from an unchanged file may come back as a short
/// note saying so; repeat the call to get the text anyway. Prefer this over
/// `cat`, `head` or `sed` in a shell.
#[tool(read_only, idempotent, category = filesystem_read)]
pub async fn read_file(
    ctx: &ToolContext,
    /// Path of the file, relative to the workspace root.
    #[arg(min_length = 1)]
    path: String,
    /// First line to return, 1-based.
    #[arg(default = 1, minimum = 1)]
    offset: u64,
    /// How many lines to return at most (default 2000).
    #[arg(minimum = 1)]
    limit: Option<u64>,
    /// Last line to return, 1-based and inclusive: another way to say
    /// `limit` (`offset=40, end_line=60` reads lines 40 to 60).
    #[arg(minimum = 1)]
    end_line: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    super::blocking::run(ctx, move |ctx, stop| {
        read_file_blocking(ctx, stop, path, offset, limit, end_line)
    })
    .await?
}

/// The body of [`read_file`], on a blocking thread.
fn read_file_blocking(
    ctx: &ToolContext,
    _stop: &Stop,
    path: String,
    offset: u64,
    limit: Option<u64>,
    end_line: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    let workspace = Workspace::of(ctx)?;
    let limits = FsLimits::of(ctx);
    let state = FileState::of(ctx);
    // The sandbox refuses FIFOs, devices and the kernel's made-up files
    // (`/proc`, `/sys`) by what they are; only a directory gets here that
    // is not a regular file.
    let opened = workspace.locate(&path, Access::Read)?.open_file()?;
    let metadata = opened
        .file
        .metadata()
        .map_err(|e| ToolError::failed(format!("cannot read `{path}`: {e}")))?;
    if metadata.is_dir() {
        return Err(ToolError::failed(format!(
            "`{path}` is a directory; use list_dir to see what it holds"
        )));
    }
    let size = metadata.len();
    // With a session state, every byte read is hashed: the version of the
    // file the model now knows.
    let file = Digesting::new(opened.file, state.map(FileState::digest));
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader
        .fill_buf()
        .map_err(|e| ToolError::failed(format!("cannot read `{path}`: {e}")))?;
    let (output, lines) = match classify(&head[..head.len().min(SNIFF_BYTES)]) {
        Kind::Image(mime) => (read_image(&path, &mut reader, mime, size, &limits)?, None),
        Kind::Binary(what) => (
            ToolOutput::text(format!(
                "`{path}` is a binary file ({what}, {}); read_file shows only text and images.",
                human_size(size)
            )),
            None,
        ),
        Kind::Text => {
            let limit = match (limit, end_line) {
                (_, Some(end)) if end < offset => {
                    return Err(ToolError::failed(format!(
                        "end_line {end} is before offset {offset}; give end_line >= offset"
                    )));
                }
                (Some(limit), Some(end)) => limit.min(end - offset + 1),
                (None, Some(end)) => end - offset + 1,
                (Some(limit), None) => limit,
                (None, None) => limits.default_read_lines,
            };
            let shown = read_text(&path, &mut reader, offset, limit, size, &limits)
                .map_err(|e| ToolError::failed(format!("cannot read `{path}`: {e}")))??;
            (ToolOutput::text(shown.text), shown.lines)
        }
    };
    let Some(state) = state else {
        return Ok(output);
    };
    let digest = finish_digest(&mut reader, limits.max_edit_bytes);
    let version = Version::read(&metadata, digest);
    match (state.saw(&opened.path, version, lines), lines) {
        (Seen::Unchanged, Some(lines)) => Ok(ToolOutput::text(format!(
            "Lines {}-{} of `{path}` are unchanged since your last read_file of them: the text you have is current. (Call read_file again with the same arguments to get it anyway.)",
            lines.first, lines.last
        ))),
        _ => Ok(output),
    }
}

/// Read the rest of the file through the hashing reader, so the hash
/// covers all of it: `(length, hash)`, or `None` past `cap` bytes (a file
/// too large to edit is told apart by its metadata instead) or on an error.
fn finish_digest(reader: &mut BufReader<Digesting<File>>, cap: u64) -> Option<(u64, u64)> {
    loop {
        let digest = reader.get_ref().digest.as_ref()?;
        if digest.len() > cap {
            return None;
        }
        // Bytes the buffer holds were hashed when they were read into it.
        let buffered = reader.fill_buf().ok()?.len();
        if buffered == 0 {
            return Some(reader.get_ref().digest.as_ref()?.result());
        }
        reader.consume(buffered);
    }
}

fn read_image(
    path: &str,
    reader: &mut impl BufRead,
    mime: &str,
    size: u64,
    limits: &FsLimits,
) -> Result<ToolOutput, ToolError> {
    if size > limits.max_image_bytes {
        return Err(ToolError::failed(format!(
            "`{path}` is an image ({mime}) of {}, more than the {} read_file returns",
            human_size(size),
            human_size(limits.max_image_bytes)
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // Read at most the cap even if the file grew since it was measured.
    reader
        .take(limits.max_image_bytes)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read `{path}`: {e}")))?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(
        ToolOutput::text(format!("Image `{path}` ({mime}, {}).", human_size(size)))
            .with_image(encoded, mime),
    )
}

/// What [`read_text`] shows.
struct Shown {
    text: String,
    /// The lines shown; `None` for an empty file.
    lines: Option<Lines>,
}

/// The numbered lines `offset..offset+limit` of a text file, within the
/// character budget, plus a note on how to continue.
fn read_text(
    path: &str,
    mut reader: impl BufRead,
    offset: u64,
    limit: u64,
    size: u64,
    limits: &FsLimits,
) -> io::Result<Result<Shown, ToolError>> {
    if size == 0 && reader.fill_buf()?.is_empty() {
        return Ok(Ok(Shown {
            text: format!("(`{path}` is empty)"),
            lines: None,
        }));
    }
    let skipped = skip_lines(&mut reader, offset - 1)?;
    let mut out = String::new();
    let mut line = Vec::new();
    let mut shown = 0u64;
    let mut capped = false;
    let line_cap = limits.max_line_chars;
    while shown < limit {
        line.clear();
        let Some(full_len) = next_line(&mut reader, &mut line, line_cap * 4)? else {
            break;
        };
        let number = offset + shown;
        let text = String::from_utf8_lossy(&line);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        let entry = numbered(number, text, full_len, line_cap);
        if !out.is_empty() && out.len() + entry.len() > limits.max_read_chars {
            capped = true;
            // The line was consumed; the note points back at it.
            break;
        }
        out.push_str(&entry);
        shown += 1;
        if out.len() >= limits.max_read_chars {
            capped = true;
            break;
        }
    }
    if shown == 0 {
        return Ok(Err(ToolError::failed(format!(
            "offset {offset} is past the end of `{path}`, which has {skipped} lines"
        ))));
    }
    let last = offset + shown - 1;
    let more = capped || !reader.fill_buf()?.is_empty();
    if more {
        let total = if size <= limits.count_lines_up_to_bytes {
            let rest = count_lines(&mut reader)?;
            // `capped` left one consumed but unshown line behind.
            format!(" of {}", last + rest + u64::from(capped))
        } else {
            format!(" of a {} file", human_size(size))
        };
        let why = if capped {
            format!("output capped at {} characters; ", limits.max_read_chars)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "({why}showing lines {offset}-{last}{total}; call read_file with offset={} to continue)\n",
            last + 1
        ));
    }
    Ok(Ok(Shown {
        text: out,
        lines: Some(Lines {
            first: offset,
            last,
        }),
    }))
}

/// `NUMBER|TEXT\n`, cutting a line longer than `cap` characters.
fn numbered(number: u64, text: &str, full_len: usize, cap: usize) -> String {
    match text.char_indices().nth(cap) {
        Some((cut, _)) => format!(
            "{number}|{}… [line cut: {} bytes in all]\n",
            &text[..cut],
            full_len
        ),
        None if full_len > text.len() + 2 => {
            format!("{number}|{text}… [line cut: {full_len} bytes in all]\n")
        }
        None => format!("{number}|{text}\n"),
    }
}

/// Skip `n` lines without keeping them; returns how many were skipped
/// (fewer at the end of the file, where a last line without a newline
/// counts). Memory stays at the reader's buffer.
fn skip_lines(reader: &mut impl BufRead, n: u64) -> io::Result<u64> {
    let mut left = n;
    let mut partial = false;
    while left > 0 {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(n - left + u64::from(partial));
        }
        let mut consumed = buf.len();
        for index in memchr::memchr_iter(b'\n', buf) {
            left -= 1;
            if left == 0 {
                consumed = index + 1;
                break;
            }
        }
        partial = buf[..consumed].last() != Some(&b'\n');
        reader.consume(consumed);
    }
    Ok(n)
}

/// Count the lines left (a last line without a newline counts).
fn count_lines(reader: &mut impl BufRead) -> io::Result<u64> {
    let mut lines = 0;
    let mut last = b'\n';
    loop {
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else { break };
        lines += bytecount(buf);
        last = end;
        let len = buf.len();
        reader.consume(len);
    }
    Ok(lines + u64::from(last != b'\n'))
}

fn bytecount(buf: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', buf).count() as u64
}

/// Read one line into `line`, keeping at most `keep` bytes of it; returns
/// the line's full length in bytes, or `None` at the end of the file.
fn next_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    keep: usize,
) -> io::Result<Option<usize>> {
    let mut total = 0usize;
    let mut any = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(any.then_some(total));
        }
        any = true;
        let (chunk, consumed, done) = match memchr::memchr(b'\n', buf) {
            Some(end) => (&buf[..end], end + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        total += chunk.len();
        reader.consume(consumed);
        if done {
            return Ok(Some(total));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, offset: u64, limit: u64, limits: &FsLimits) -> String {
        read_text(
            "f",
            text.as_bytes(),
            offset,
            limit,
            text.len() as u64,
            limits,
        )
        .unwrap()
        .unwrap()
        .text
    }

    #[test]
    fn the_continuation_note_counts_the_line_the_cap_stopped_at() {
        let limits = FsLimits {
            max_read_chars: 16,
            ..FsLimits::default()
        };
        let out = lines("aaaa\nbbbb\ncccc\ndddd\n", 1, 10, &limits);
        assert_eq!(
            out,
            "1|aaaa\n2|bbbb\n(output capped at 16 characters; showing lines 1-2 of 4; call read_file with offset=3 to continue)\n"
        );
        let out = lines("aaaa\nbbbb\ncccc\ndddd", 2, 2, &FsLimits::default());
        assert_eq!(
            out,
            "2|bbbb\n3|cccc\n(showing lines 2-3 of 4; call read_file with offset=4 to continue)\n"
        );
    }

    #[test]
    fn skipping_counts_newlines_only() {
        let mut reader: &[u8] = b"a\nb\nc";
        assert_eq!(skip_lines(&mut reader, 5).unwrap(), 3);
        let mut reader: &[u8] = b"a\nb\n";
        assert_eq!(skip_lines(&mut reader, 5).unwrap(), 2);
        let mut reader: &[u8] = b"a\nb\nc";
        assert_eq!(count_lines(&mut reader).unwrap(), 3);
    }
}
