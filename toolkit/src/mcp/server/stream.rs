//! A POST's event stream that the call it answers may end early.
//!
//! A long call holds its HTTP connection open until its result. Protocol
//! 2025-11-25 lets a server end that stream mid-call instead (SEP-1699): the
//! stream has already carried an event id and a `retry` field, so the client
//! comes back with `GET` and `Last-Event-ID`, and the session replays what
//! was sent after that id from its cache. A tool asks for it through
//! [`ClientSession::close_stream`](super::ClientSession::close_stream).
//!
//! The stream is ended here, between two events, never inside one: the
//! session goes on sending into it as if the client had gone away, which it
//! tolerates by design (it keeps the events for a resumption). It keeps
//! them only while the call runs, though: once the result is sent, the
//! call's events are forgotten. So the result of a call whose stream was
//! ended is held back until the client has come back for it (or has had
//! [`RESUME_WAIT`] to do so), and it is never sent into the void.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Bytes, Frame};
use hyper::http::request::Parts;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// How long the result of a call whose stream was ended waits for the
/// client to come back: many times the `retry` delay the stream told it.
pub(crate) const RESUME_WAIT: Duration = Duration::from_secs(30);

/// The streams ended early that no client has come back for yet, by
/// session and by the session's number for the POST (the second part of
/// its event ids, `index/request`).
#[derive(Clone, Default)]
pub(crate) struct Resumptions(Arc<Mutex<HashMap<(String, u64), StreamRelease>>>);

impl Resumptions {
    /// A `GET` of `session` came back with `Last-Event-ID: last_event_id`
    /// and its stream is set up: the call it resumes may send its result.
    pub(crate) fn came_back(&self, session: &str, last_event_id: &str) {
        let Some(request) = request_of(last_event_id) else {
            return;
        };
        let found = self.lock().remove(&(session.to_owned(), request));
        if let Some(release) = found {
            release.0.resumed.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u64), StreamRelease>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The POST number in an event id `index/request`.
fn request_of(event_id: &str) -> Option<u64> {
    event_id.trim().split_once('/')?.1.parse().ok()
}

/// Put in a POST request's extensions: how its call ends its event stream
/// and learns that the client came back.
#[derive(Clone)]
pub(crate) struct StreamRelease(Arc<Release>);

struct Release {
    /// The session the POST belongs to.
    session: String,
    resumptions: Resumptions,
    /// The session's number for the POST, read from its first event's id.
    request: OnceLock<u64>,
    released: CancellationToken,
    resumed: CancellationToken,
}

impl StreamRelease {
    /// For a POST of `session`.
    pub(crate) fn new(session: String, resumptions: Resumptions) -> Self {
        Self(Arc::new(Release {
            session,
            resumptions,
            request: OnceLock::new(),
            released: CancellationToken::new(),
            resumed: CancellationToken::new(),
        }))
    }

    /// End the stream after the events already sent (at least its first,
    /// which carries the id the client resumes from).
    pub(crate) fn release(&self) {
        self.0.released.cancel();
    }

    /// Once the stream was ended: wait until the client has come back for
    /// the rest, or `RESUME_WAIT` has passed. At once otherwise.
    pub(crate) async fn until_resumed(&self) {
        if !self.0.released.is_cancelled() {
            return;
        }
        let _ = tokio::time::timeout(RESUME_WAIT, self.0.resumed.cancelled()).await;
        if let Some(request) = self.0.request.get() {
            let key = (self.0.session.clone(), *request);
            self.0.resumptions.lock().remove(&key);
        }
    }

    /// The stream has ended with its first event sent: wait for the
    /// client under that event's id.
    fn ended(&self) {
        match self.0.request.get() {
            Some(request) => {
                let key = (self.0.session.clone(), *request);
                self.0.resumptions.lock().insert(key, self.clone());
            }
            // No id to come back with: nothing to wait for.
            None => self.0.resumed.cancel(),
        }
    }

    /// Learn the POST's number from its first event.
    fn first_event(&self, frame: &Frame<Bytes>) {
        let id = frame.data_ref().and_then(|data| {
            let text = std::str::from_utf8(data).ok()?;
            text.lines().find_map(|line| line.strip_prefix("id:"))
        });
        if let Some(request) = id.and_then(request_of) {
            let _ = self.0.request.set(request);
        }
    }
}

/// The release of the POST request `context` came on, if any.
pub(crate) fn release_of(context: &RequestContext<RoleServer>) -> Option<StreamRelease> {
    let parts = context.extensions.get::<Parts>()?;
    parts.extensions.get::<StreamRelease>().cloned()
}

type Inner = BoxBody<Bytes, std::convert::Infallible>;

/// `response` with a body that ends once `release` is released, if it is
/// an event stream; any other response as it is.
pub(crate) fn releasable(
    response: hyper::Response<Inner>,
    release: StreamRelease,
) -> hyper::Response<Inner> {
    let is_stream = response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_stream {
        // Answered whole: nothing can be ended, nothing to wait for.
        release.0.resumed.cancel();
        return response;
    }
    let released = release.0.released.clone().cancelled_owned();
    response.map(|inner| {
        Releasable {
            inner,
            // Only ever reached through `&mut`: the lock is never taken; it
            // makes the future `Sync`, as a response body must be.
            released: Mutex::new(Box::pin(released)),
            release,
            sent_any: false,
        }
        .boxed()
    })
}

/// An event stream that ends, between two events, once released.
struct Releasable {
    inner: Inner,
    released: Mutex<Pin<Box<WaitForCancellationFutureOwned>>>,
    release: StreamRelease,
    /// Whether an event went out: the first carries the id to resume from,
    /// so the stream is never ended before it.
    sent_any: bool,
}

impl Body for Releasable {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.sent_any {
            let released = this.released.get_mut().unwrap_or_else(|e| e.into_inner());
            if released.as_mut().poll(cx).is_ready() {
                this.release.ended();
                return Poll::Ready(None);
            }
        }
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && !this.sent_any
        {
            this.sent_any = true;
            this.release.first_event(frame);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}
