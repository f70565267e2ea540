//! A server too busy to take a message says so: `503 Service Unavailable`
//! with `Retry-After`, before it has read the message (an MCP server of
//! ours does, for a client past its part of the connections, in a burst
//! of calls). Without a retry, every such answer failed the call and
//! dropped the link, with its session. A message answered so is sent
//! again after the wait the server asks for, a few times at most, and only
//! when that wait is short: a server that asks for longer, or says nothing
//! of when, is answered with the error at once.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

/// Tries of one message in all: the first and three more.
const TRIES: usize = 4;

/// The longest wait a server may ask for and still be waited for.
const LONGEST_WAIT: Duration = Duration::from_secs(5);

/// The shortest wait, whatever the server says (`Retry-After: 0`).
const SHORTEST_WAIT: Duration = Duration::from_millis(100);

/// An HTTP client whose messages a busy server's `503` sends again.
#[derive(Clone)]
pub(crate) struct RetryWhenBusy<C> {
    inner: C,
}

impl<C> RetryWhenBusy<C> {
    pub(crate) fn new(inner: C) -> Self {
        Self { inner }
    }
}

/// How long to wait before sending again a message answered with `error`,
/// or `None` if it is not sent again: a `503` with a `Retry-After` of
/// seconds up to [`LONGEST_WAIT`]. A little of the wait is spread by the
/// try, so that the calls of one burst do not all come back at once.
fn wait_before_retry<E: std::error::Error + Send + Sync + 'static>(
    error: &StreamableHttpError<E>,
    tried: usize,
) -> Option<Duration> {
    let StreamableHttpError::HttpStatus(status) = error else {
        return None;
    };
    if status.status != 503 {
        return None;
    }
    let seconds: u64 = status.retry_after.as_deref()?.trim().parse().ok()?;
    let asked = Duration::from_secs(seconds);
    if asked > LONGEST_WAIT {
        return None;
    }
    let spread = Duration::from_millis(37 * tried as u64 + u64::from(jitter()));
    Some(asked.max(SHORTEST_WAIT) + spread)
}

/// What `send` gave, sent again while a busy server asks for a short wait,
/// [`TRIES`] times in all at most.
async fn sent_again_when_busy<T, E, F, Sent>(mut send: F) -> Result<T, StreamableHttpError<E>>
where
    E: std::error::Error + Send + Sync + 'static,
    F: FnMut() -> Sent,
    Sent: Future<Output = Result<T, StreamableHttpError<E>>>,
{
    let mut tried = 1;
    loop {
        match send().await {
            Err(error) if tried < TRIES => match wait_before_retry(&error, tried) {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return Err(error),
            },
            sent => return sent,
        }
        tried += 1;
    }
}

/// A few milliseconds that differ from one call to the next.
fn jitter() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    (nanos % 200) as u16
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for RetryWhenBusy<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        sent_again_when_busy(|| {
            self.inner.post_message(
                Arc::clone(&uri),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        sent_again_when_busy(|| {
            self.inner.post_message_with_max_sse_event_size(
                Arc::clone(&uri),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use rmcp::transport::streamable_http_client::HttpStatusError;

    use super::*;

    fn answered(status: u16, retry_after: Option<&str>) -> StreamableHttpError<std::io::Error> {
        StreamableHttpError::HttpStatus(HttpStatusError::new(
            status,
            retry_after.map(str::to_owned),
        ))
    }

    #[test]
    fn only_a_503_asking_a_short_wait_is_sent_again() {
        let wait = wait_before_retry(&answered(503, Some("1")), 1).unwrap();
        assert!(wait >= Duration::from_secs(1) && wait < Duration::from_secs(2));
        assert!(wait_before_retry(&answered(503, Some("0")), 1).unwrap() >= SHORTEST_WAIT);
        for refused in [
            answered(503, None),
            answered(503, Some("10")),
            answered(503, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
            answered(503, Some("-1")),
            answered(503, Some("99999999999999999999999")),
            answered(500, Some("1")),
            answered(429, Some("1")),
            StreamableHttpError::UnexpectedEndOfStream,
        ] {
            assert!(wait_before_retry(&refused, 1).is_none(), "{refused}");
        }
    }
}
