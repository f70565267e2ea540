//! The older HTTP+SSE transport (protocol version 2024-11-05), as a client:
//! a GET opens an event stream whose first `endpoint` event names the URL to
//! POST messages to; the server's messages arrive as `message` events.
//!
//! The SDK no longer ships this transport, and servers still speak it.

use std::borrow::Cow;
use std::future::Future;

use futures_util::StreamExt;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::SseStream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Messages waiting to be read; a slow reader slows the stream, not memory.
const INBOX: usize = 64;

/// The longest event taken from the stream, as the streamable HTTP
/// transport has it: an event that never ends would otherwise grow in
/// memory for as long as the server sends.
const MAX_EVENT: usize = 16 << 20;

/// How long the server has to name its endpoint, however much else it
/// sends meanwhile (comments, other events: each costs parsing).
const ENDPOINT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How much of an error answer's body is read, for its start to be shown.
const ERROR_BODY_READ: usize = 4 << 10;

/// How long the body of an error answer to the event stream's request may
/// take to read; a POST's whole exchange is bounded by [`POST_TIMEOUT`].
const ERROR_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long one POSTed message may take, its answer's body included. The
/// server answers a POST at once (its reply comes on the event stream).
const POST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// What went wrong talking to an HTTP+SSE server.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// The HTTP request failed.
    #[error("HTTP: {0}")]
    Http(#[from] reqwest::Error),
    /// The server answered with an error status.
    #[error("the server answered {status}: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The start of the answer's body.
        body: String,
    },
    /// The stream ended or broke before the server named its endpoint, or
    /// it did not name one within [`ENDPOINT_TIMEOUT`].
    #[error("the event stream gave no `endpoint` event")]
    NoEndpoint,
    /// The endpoint the server named is not a valid URL.
    #[error("the endpoint `{0}` is not a valid URL")]
    BadEndpoint(String),
    /// The endpoint the server named is on another origin than its stream:
    /// messages are never sent anywhere but the server configured.
    #[error("the endpoint `{0}` is on another origin than the event stream")]
    ForeignEndpoint(String),
    /// A message could not be encoded.
    #[error("encoding a message: {0}")]
    Encode(#[from] serde_json::Error),
    /// An event of the stream grew past [`MAX_EVENT`] bytes.
    #[error("an event of the stream is longer than {MAX_EVENT} bytes")]
    EventTooLong,
}

/// Where the events of a byte stream end, to bound their length. An event
/// ends at an empty line; a line ends at CR, LF or CRLF.
#[derive(Debug, Default)]
struct EventEnds {
    /// Bytes since the last event ended.
    length: usize,
    /// Whether the last byte ended a line (so a line end now is an empty line).
    at_line_start: bool,
    /// Whether the last byte was a CR (so an LF now belongs to it).
    after_cr: bool,
}

impl EventEnds {
    /// Take `bytes`; fails once an event is longer than `max`.
    fn feed(&mut self, bytes: &[u8], max: usize) -> Result<(), SseError> {
        for &byte in bytes {
            let after_cr = std::mem::take(&mut self.after_cr);
            match byte {
                b'\n' if after_cr => {}
                b'\r' | b'\n' if self.at_line_start => self.length = 0,
                b'\r' | b'\n' => self.at_line_start = true,
                _ => self.at_line_start = false,
            }
            self.after_cr = byte == b'\r';
            self.length += 1;
            if self.length > max {
                return Err(SseError::EventTooLong);
            }
        }
        Ok(())
    }
}

/// The chunks of `bytes`, failing once an event is longer than `max`.
fn bounded<S, D>(bytes: S, max: usize) -> impl futures_util::Stream<Item = Result<D, SseError>>
where
    S: futures_util::Stream<Item = reqwest::Result<D>>,
    D: AsRef<[u8]>,
{
    let mut ends = EventEnds::default();
    bytes.map(move |chunk| {
        let chunk = chunk?;
        ends.feed(chunk.as_ref(), max)?;
        Ok(chunk)
    })
}

/// The start of an error answer's body, read no further than
/// [`ERROR_BODY_READ`] bytes: a body without end is not waited for.
async fn start_of_body(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_READ {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&body).chars().take(200).collect()
}

/// A client transport for the HTTP+SSE protocol.
pub struct SseClientTransport {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    inbox: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    stop: CancellationToken,
}

impl SseClientTransport {
    /// Open the event stream at `url` and wait for the endpoint to post to.
    pub async fn connect(client: reqwest::Client, url: &str) -> Result<Self, SseError> {
        let base = reqwest::Url::parse(url).map_err(|_| SseError::BadEndpoint(url.to_owned()))?;
        let response = client
            .get(base.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await?;
        let status = response.status();
        if !status.is_success() {
            let body = tokio::time::timeout(ERROR_BODY_TIMEOUT, start_of_body(response))
                .await
                .unwrap_or_default();
            return Err(SseError::Status {
                status: status.as_u16(),
                body,
            });
        }
        let mut events = SseStream::from_bytes_stream(bounded(response.bytes_stream(), MAX_EVENT));
        let endpoint_within = tokio::time::Instant::now() + ENDPOINT_TIMEOUT;
        let endpoint = loop {
            let event = tokio::time::timeout_at(endpoint_within, events.next())
                .await
                .map_err(|_| SseError::NoEndpoint)?;
            match event {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    let data = event.data.unwrap_or_default();
                    let data = data.trim();
                    let endpoint = base
                        .join(data)
                        .map_err(|_| SseError::BadEndpoint(data.to_owned()))?;
                    if endpoint.origin() != base.origin() {
                        return Err(SseError::ForeignEndpoint(endpoint.to_string()));
                    }
                    break endpoint;
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) if too_long(&e) => return Err(SseError::EventTooLong),
                Some(Err(_)) | None => return Err(SseError::NoEndpoint),
            }
        };
        let (tx, inbox) = mpsc::channel(INBOX);
        let stop = CancellationToken::new();
        let reading = stop.clone();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    () = reading.cancelled() => break,
                    event = events.next() => event,
                };
                let event = match event {
                    Some(Ok(event)) => event,
                    Some(Err(e)) => {
                        tracing::warn!("the event stream of an SSE server broke: {e}");
                        break;
                    }
                    None => break,
                };
                if !matches!(event.event.as_deref(), None | Some("message")) {
                    continue;
                }
                let data = event.data.unwrap_or_default();
                // A message that is not JSON-RPC is dropped, never fatal:
                // the session goes on with the next one.
                match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&data) {
                    Ok(message) => {
                        if tx.send(message).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!("dropping a malformed message from an SSE server: {e}")
                    }
                }
            }
        });
        Ok(Self {
            client,
            endpoint,
            inbox,
            stop,
        })
    }
}

/// Whether the stream broke on an event longer than [`MAX_EVENT`].
fn too_long(error: &sse_stream::Error) -> bool {
    matches!(error, sse_stream::Error::Body(e)
        if matches!(e.downcast_ref::<SseError>(), Some(SseError::EventTooLong)))
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseError;

    fn name() -> Cow<'static, str> {
        "HTTP+SSE".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = self.endpoint.clone();
        async move {
            let body = serde_json::to_vec(&item)?;
            let response = client
                .post(endpoint)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .timeout(POST_TIMEOUT)
                .body(body)
                .send()
                .await?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(SseError::Status {
                    status: status.as_u16(),
                    body: start_of_body(response).await,
                })
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.inbox.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stop.cancel();
        self.inbox.close();
        Ok(())
    }
}

impl Drop for SseClientTransport {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `stream` in pieces of `piece` bytes; the error, if any.
    fn fed(stream: &[u8], piece: usize, max: usize) -> Result<(), SseError> {
        let mut ends = EventEnds::default();
        stream
            .chunks(piece)
            .try_for_each(|chunk| ends.feed(chunk, max))
    }

    #[test]
    fn every_line_ending_ends_an_event_and_the_bound_is_per_event() {
        for end in ["\n\n", "\r\r", "\r\n\r\n", "\r\n\n", "\n\r\n"] {
            let event = format!("data: {}{end}", "x".repeat(10));
            let events = event.repeat(1000);
            for piece in [1, 3, 7, 1 << 20] {
                assert!(
                    fed(events.as_bytes(), piece, 24).is_ok(),
                    "{end:?} in pieces of {piece}"
                );
            }
        }
    }

    #[test]
    fn an_event_past_the_bound_fails_however_its_lines_end() {
        for line_end in ["\n", "\r", "\r\n"] {
            let lines = format!("data: xx{line_end}").repeat(100);
            for piece in [1, 5, 1 << 20] {
                assert!(
                    matches!(
                        fed(lines.as_bytes(), piece, 200),
                        Err(SseError::EventTooLong)
                    ),
                    "{line_end:?} in pieces of {piece}"
                );
            }
        }
        // A CR and then an LF in the next piece is one line end, not two.
        let mut ends = EventEnds::default();
        for _ in 0..100 {
            ends.feed(b"data: xx\r", 200).ok();
            if ends.feed(b"\n", 200).is_err() {
                return;
            }
        }
        panic!("CRLF split across pieces ended an event");
    }
}
