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
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// The call no longer waits (it answered, was cancelled, or went away):
    /// a stream that ends from now on is not waited for.
    over: AtomicBool,
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
            over: AtomicBool::new(false),
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
        // Forgotten however the wait ends, even when the call is cancelled
        // or dropped mid-wait: the map never outlives the calls in it.
        let _forget = Forget(self);
        let _ = tokio::time::timeout(RESUME_WAIT, self.0.resumed.cancelled()).await;
    }

    /// The stream has ended with its first event sent: wait for the
    /// client under that event's id.
    fn ended(&self) {
        let mut waiting = self.0.resumptions.lock();
        // A stream ending after the call stopped waiting (its body was
        // held up longer than the wait): nobody would ever remove it.
        if self.0.over.load(Ordering::SeqCst) {
            return;
        }
        match self.0.request.get() {
            Some(request) => {
                let key = (self.0.session.clone(), *request);
                waiting.insert(key, self.clone());
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

/// Ends a call's wait: the call is over, its stream is waited for no more.
struct Forget<'a>(&'a StreamRelease);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        let release = &self.0.0;
        let mut waiting = release.resumptions.lock();
        release.over.store(true, Ordering::SeqCst);
        if let Some(request) = release.request.get() {
            waiting.remove(&(release.session.clone(), *request));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn release_of_post(resumptions: &Resumptions) -> StreamRelease {
        let release = StreamRelease::new("s".to_owned(), resumptions.clone());
        release.first_event(&Frame::data(Bytes::from_static(b"id: 0/7\nretry: 10\n\n")));
        release.release();
        release
    }

    fn waiting(resumptions: &Resumptions) -> usize {
        resumptions.lock().len()
    }

    /// A call cancelled (or dropped) while its result is held leaves no
    /// entry behind.
    #[tokio::test]
    async fn a_wait_dropped_midway_forgets_its_stream() {
        let resumptions = Resumptions::default();
        let release = release_of_post(&resumptions);
        release.ended();
        assert_eq!(waiting(&resumptions), 1);
        let wait = release.until_resumed();
        let dropped = tokio::time::timeout(Duration::from_millis(50), wait).await;
        assert!(dropped.is_err(), "the client never came back");
        assert_eq!(waiting(&resumptions), 0);
    }

    /// A stream whose body ends only after the wait is over is not waited
    /// for: nothing would remove it.
    #[tokio::test]
    async fn a_stream_ending_after_the_wait_is_not_kept() {
        let resumptions = Resumptions::default();
        let release = release_of_post(&resumptions);
        let waited = tokio::time::timeout(Duration::from_millis(50), release.until_resumed());
        assert!(waited.await.is_err(), "the stream had not ended yet");
        release.ended();
        assert_eq!(waiting(&resumptions), 0);
    }

    /// The client came back: the wait ends and the entry is gone.
    #[tokio::test]
    async fn a_resumption_ends_the_wait() {
        let resumptions = Resumptions::default();
        let release = release_of_post(&resumptions);
        release.ended();
        for forged in ["", "0", "x/y", "0/8", "0/-7", &"9".repeat(10_000)] {
            resumptions.came_back("s", forged);
            assert_eq!(waiting(&resumptions), 1, "{forged:.20}");
        }
        resumptions.came_back("other", "0/7");
        assert_eq!(waiting(&resumptions), 1);
        resumptions.came_back("s", "3/7");
        tokio::time::timeout(Duration::from_secs(10), release.until_resumed())
            .await
            .expect("resumed");
        assert_eq!(waiting(&resumptions), 0);
    }
}
