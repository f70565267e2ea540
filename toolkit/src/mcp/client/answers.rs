//! A stdio server's output as the SDK reads it: every answer one it can
//! read.
//!
//! The SDK drops a line it cannot read (one over 16 MiB, or one serde cannot
//! parse: a number past a float's range, `1e400`, an answer of the wrong
//! shape) and logs it. A call whose answer that was would then wait out its
//! `toolTimeout` and fail as if the server had been silent; a server whose
//! tool list was such a line would be refused as one that did not list its
//! tools. Here, between the server's output and the SDK, each line is judged
//! first: one the SDK would drop that answers a request (it has an `id` and
//! no `method`) is replaced by an error answer to that request saying why,
//! so the call fails at once, for its reason. Every other line passes as it
//! came, for the SDK to handle as it does.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rmcp::RoleClient;
use rmcp::model::RequestId;
use rmcp::service::RxJsonRpcMessage;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The error code of an answer put in place of one the client could not
/// read. In JSON-RPC's range for implementations' own errors.
pub(crate) const UNREADABLE_ANSWER: i32 = -32098;

/// Why the answer to a request could not be read, if `error` is an error
/// answer put in place of one (see [`UNREADABLE_ANSWER`]).
pub(crate) fn unreadable(error: &rmcp::ServiceError) -> Option<&str> {
    match error {
        rmcp::ServiceError::McpError(e) if e.code.0 == UNREADABLE_ANSWER => Some(&e.message),
        _ => None,
    }
}

/// The longest line the SDK takes, its end included: a longer one is
/// judged here from its start and its end.
const MAX_LINE: usize = DEFAULT_MAX_LINE_LENGTH;

/// How much of the start of a line too long to keep is kept to find its
/// `id` in (most servers write it before the result).
const HEAD: usize = 64 << 10;

/// How much of the end of such a line is kept, for servers that write
/// the `id` after the result.
const TAIL: usize = 4 << 10;

/// The longest line the SDK is let take from [`ReadableAnswers`], which
/// passes none over [`MAX_LINE`] itself: an error answer put in place of a
/// line near that bound is longer than it by what it says (at most
/// [`MAX_SAID`]), and would be dropped at [`MAX_LINE`].
const MAX_PASSED: usize = MAX_LINE + (4 << 10);

/// The most said of why an answer could not be read.
const MAX_SAID: usize = 1 << 10;

/// The SDK's transport to a stdio server: its answers read from `read`
/// through [`ReadableAnswers`], its requests written to `write`.
pub(super) fn transport<R, W>(
    read: R,
    write: W,
) -> AsyncRwTransport<RoleClient, ReadableAnswers<R>, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    AsyncRwTransport::new_client(ReadableAnswers::new(read), write).with_max_line_length(MAX_PASSED)
}

/// `R`, a stdio server's output, with each answer the SDK could not read
/// replaced by an error answer to its request.
pub(super) struct ReadableAnswers<R> {
    inner: R,
    /// The line being gathered, up to [`MAX_LINE`] bytes.
    line: Vec<u8>,
    /// The line being gathered, once it is past [`MAX_LINE`].
    overlong: Option<Overlong>,
    /// Judged lines, ready to be read from `at` on.
    ready: Vec<u8>,
    at: usize,
    /// The server's output has ended.
    ended: bool,
}

impl<R> ReadableAnswers<R> {
    pub(super) fn new(inner: R) -> Self {
        Self {
            inner,
            line: Vec::new(),
            overlong: None,
            ready: Vec::new(),
            at: 0,
            ended: false,
        }
    }

    /// Take `bytes` from the server: each line they end is judged.
    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|&b| b == b'\n');
            let piece = &bytes[..end.map_or(bytes.len(), |at| at + 1)];
            self.gather(piece);
            if end.is_some() {
                self.line_ended();
            }
            bytes = &bytes[piece.len()..];
        }
    }

    fn gather(&mut self, piece: &[u8]) {
        if let Some(overlong) = &mut self.overlong {
            overlong.add(piece);
        } else if self.line.len() + piece.len() > MAX_LINE {
            let mut overlong = Overlong::starting(std::mem::take(&mut self.line));
            overlong.add(piece);
            self.overlong = Some(overlong);
        } else {
            self.line.extend_from_slice(piece);
        }
    }

    fn line_ended(&mut self) {
        if let Some(overlong) = self.overlong.take() {
            match overlong.answer() {
                Some(answer) => self.ready.extend_from_slice(&answer),
                None => tracing::warn!(
                    bytes = overlong.length,
                    "an MCP server sent a message over 16 MiB that answers no request; it is dropped"
                ),
            }
            return;
        }
        let line = std::mem::take(&mut self.line);
        match unreadable_answer(&line) {
            Some(answer) => self.ready.extend_from_slice(&answer),
            // Moved, not copied, when nothing waits before it.
            None if self.ready.len() == self.at => {
                self.ready = line;
                self.at = 0;
            }
            None => self.ready.extend_from_slice(&line),
        }
    }

    /// The output ended: a last line without its end is passed on as it
    /// is (the SDK drops such a line), one too long is dropped here.
    fn output_ended(&mut self) {
        self.ended = true;
        if self.overlong.take().is_none() {
            let line = std::mem::take(&mut self.line);
            self.ready.extend_from_slice(&line);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for ReadableAnswers<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.at < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.at);
                buf.put_slice(&this.ready[this.at..this.at + n]);
                this.at += n;
                if this.at == this.ready.len() {
                    this.ready.clear();
                    this.at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended || buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8 << 10];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            match read.filled() {
                [] => this.output_ended(),
                bytes => this.take(bytes),
            }
        }
    }
}

/// A line past [`MAX_LINE`]: its start and its end, where its `id` is
/// looked for, and its length.
struct Overlong {
    head: Vec<u8>,
    tail: Vec<u8>,
    length: usize,
}

impl Overlong {
    fn starting(mut line: Vec<u8>) -> Self {
        let length = line.len();
        // The end of what was gathered is the line's end so far: the rest
        // may be no more than its newline (a line of exactly 16 MiB read
        // in pieces that divide it), and its `id` may be in there.
        let tail = line[length.saturating_sub(TAIL)..].to_vec();
        line.truncate(HEAD);
        Self {
            head: line,
            tail,
            length,
        }
    }

    fn add(&mut self, piece: &[u8]) {
        self.length = self.length.saturating_add(piece.len());
        let room = HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&piece[..room.min(piece.len())]);
        self.tail.extend_from_slice(piece);
        if self.tail.len() > 2 * TAIL {
            self.tail.drain(..self.tail.len() - TAIL);
        }
    }

    /// The error answer to the request this line answered, if its start
    /// or its end says which request that was.
    fn answer(&self) -> Option<Vec<u8>> {
        let keys = Keys::of(&self.head);
        if keys.method {
            return None;
        }
        let id = keys.id.or_else(|| id_near_end(&self.tail))?;
        Some(error_answer(
            &id,
            &format!(
                "its answer was {} bytes, more than the 16 MiB a message may take",
                // Without the line's end.
                self.length.saturating_sub(1)
            ),
        ))
    }
}

/// An error answer to put in place of `line`, if the SDK could not read it
/// and it answers a request.
fn unreadable_answer(line: &[u8]) -> Option<Vec<u8>> {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let Err(error) = serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text) else {
        return None;
    };
    let keys = Keys::of(text);
    if keys.method {
        return None;
    }
    // A message not JSON before its `id` (a result with `Infinity` in it,
    // written before the `id` as some SDKs write it): looked for at its
    // end, as in a line too long to read. Not in a line that is no
    // message, or one read whole (a log line naming an `id` inside).
    let id = keys.id.or_else(|| {
        keys.cut
            .then(|| id_near_end(&text[text.len().saturating_sub(TAIL)..]))
            .flatten()
    })?;
    Some(error_answer(
        &id,
        &format!("its answer could not be read: {error}"),
    ))
}

/// What the top level of a message says, as far as it could be read: its
/// `id`, and whether it names a `method`. Values are skipped without being
/// made (a number past a float's range is skipped as any other).
#[derive(Default)]
struct Keys {
    id: Option<RequestId>,
    method: bool,
    /// An object was begun and stopped being JSON before its end.
    cut: bool,
}

impl Keys {
    fn of(text: &[u8]) -> Self {
        let mut keys = Self::default();
        // Read until the text ends or stops being JSON: what was read by
        // then is what there is to know.
        let _ = serde_json::Deserializer::from_slice(text).deserialize_map(KeysVisitor(&mut keys));
        keys
    }
}

struct KeysVisitor<'k>(&'k mut Keys);

impl<'de> Visitor<'de> for KeysVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.cut = true;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => self.0.id = map.next_value::<Option<RequestId>>()?,
                "method" => {
                    self.0.method = true;
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        self.0.cut = false;
        Ok(())
    }
}

/// The `id` of a message from its last bytes, for servers that write it
/// after the result: the last `"id":` there that is a key, not text in a
/// string (whose quotes would be escaped), and the value after it.
fn id_near_end(tail: &[u8]) -> Option<RequestId> {
    const KEY: &[u8] = b"\"id\"";
    let mut end = tail.len();
    while let Some(at) = tail[..end].windows(KEY.len()).rposition(|w| w == KEY) {
        end = at;
        let escapes = tail[..at].iter().rev().take_while(|&&b| b == b'\\').count();
        if escapes % 2 == 1 {
            continue;
        }
        let rest = tail[at + KEY.len()..].trim_ascii_start();
        let Some(value) = rest.strip_prefix(b":") else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_slice(value).into_iter::<RequestId>();
        if let Some(Ok(id)) = values.next() {
            return Some(id);
        }
    }
    None
}

/// A JSON-RPC error answer to `id`, as a line.
fn error_answer(id: &RequestId, message: &str) -> Vec<u8> {
    // Cut, so the answer is never much longer than the line it stands for.
    let mut end = message.len().min(MAX_SAID);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let message = &message[..end];
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": UNREADABLE_ANSWER, "message": message},
    });
    let mut line = serde_json::to_vec(&answer).unwrap_or_default();
    line.push(b'\n');
    line
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
