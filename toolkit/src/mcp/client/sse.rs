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
    /// The stream ended or broke before the server named its endpoint.
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
            let body = response.text().await.unwrap_or_default();
            return Err(SseError::Status {
                status: status.as_u16(),
                body: body.chars().take(200).collect(),
            });
        }
        let mut events = SseStream::from_bytes_stream(response.bytes_stream());
        let endpoint = loop {
            match events.next().await {
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
                let Some(Ok(event)) = event else { break };
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
                .body(body)
                .send()
                .await?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                let body = response.text().await.unwrap_or_default();
                Err(SseError::Status {
                    status: status.as_u16(),
                    body: body.chars().take(200).collect(),
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
