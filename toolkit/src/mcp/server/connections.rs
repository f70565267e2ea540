//! The connections one client holds at once.
//!
//! An HTTP/1 connection carries one request at a time, and holds its
//! descriptor and task while a request waits for its permit or an event
//! stream stays open. Without a bound per client, one address could open
//! every connection the server serves ([`HttpOptions::max_connections`])
//! and leave every other client in the listen queue. A client past its part
//! is answered `503 Service Unavailable` with `Retry-After` on a connection
//! that holds none of the server's, then closed; at most [`REFUSING`] such
//! answers are written at once, and a connection past them is closed
//! unanswered, so a flood of refused connections costs a bounded number of
//! tasks and descriptors.
//!
//! [`HttpOptions::max_connections`]: super::HttpOptions::max_connections

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use super::peer::Peer;

/// Refusals written at once; a connection refused past them is closed at
/// once, unanswered.
pub(super) const REFUSING: usize = 16;

/// How long a refused connection may take to send its request's head and
/// read the answer; then it is closed.
const REFUSAL_DEADLINE: Duration = Duration::from_secs(2);

/// How long a client refused a connection is told to wait: a connection
/// frees when one of the client's own requests ends.
const RETRY_AFTER: &str = "1";

/// The connections each client holds, and the most one may.
#[derive(Clone)]
pub(super) struct ClientConnections {
    inner: Arc<Inner>,
}

struct Inner {
    part: usize,
    held: Mutex<HashMap<Peer, usize>>,
    refusing: Arc<Semaphore>,
}

/// One connection of a client, counted until it is dropped.
pub(super) struct Held {
    inner: Arc<Inner>,
    peer: Peer,
}

impl ClientConnections {
    /// One client holds at most `part` connections at once (at least 1).
    pub(super) fn new(part: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                part: part.max(1),
                held: Mutex::new(HashMap::new()),
                refusing: Arc::new(Semaphore::new(REFUSING)),
            }),
        }
    }

    /// A connection for `peer`, unless it holds its part already.
    pub(super) fn take(&self, peer: Peer) -> Option<Held> {
        let mut held = self
            .inner
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let count = held.entry(peer).or_insert(0);
        if *count >= self.inner.part {
            return None;
        }
        *count += 1;
        Some(Held {
            inner: Arc::clone(&self.inner),
            peer,
        })
    }

    /// Answer `stream`, a connection refused, with 503 and close it; or
    /// close it at once when [`REFUSING`] are being answered already.
    pub(super) fn refuse(&self, stream: TcpStream) {
        let Ok(permit) = Arc::clone(&self.inner.refusing).try_acquire_owned() else {
            return;
        };
        tokio::spawn(async move {
            let _permit = permit;
            let refused = hyper::service::service_fn(|_request| async {
                Ok::<_, std::convert::Infallible>(too_many_connections())
            });
            let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
            builder
                .http1()
                .keep_alive(false)
                .timer(TokioTimer::new())
                .header_read_timeout(REFUSAL_DEADLINE);
            let connection = builder.serve_connection(TokioIo::new(stream), refused);
            let _ = tokio::time::timeout(REFUSAL_DEADLINE, connection).await;
        });
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self
            .inner
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.peer);
            }
        }
    }
}

/// `503 Service Unavailable`: the client holds as many connections as it
/// may; it retries once one of them is free.
fn too_many_connections() -> super::http::Response {
    let text =
        "this client holds as many connections as it may: retry when one of its requests has ended";
    let mut response = hyper::Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::RETRY_AFTER,
        hyper::header::HeaderValue::from_static(RETRY_AFTER),
    );
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_holds_its_part_and_gets_one_back_when_a_connection_ends() {
        let connections = ClientConnections::new(2);
        let one = Peer::of("127.0.0.1".parse().unwrap());
        let other = Peer::of("127.0.0.2".parse().unwrap());
        let first = connections.take(one).unwrap();
        let _second = connections.take(one).unwrap();
        assert!(connections.take(one).is_none());
        assert!(
            connections.take(other).is_some(),
            "another client has its own part"
        );
        drop(first);
        assert!(connections.take(one).is_some());
    }

    #[test]
    fn a_client_with_no_connection_is_forgotten() {
        let connections = ClientConnections::new(1);
        let peer = Peer::of("127.0.0.1".parse().unwrap());
        drop(connections.take(peer));
        let held = connections.inner.held.lock().unwrap();
        assert!(held.is_empty());
    }
}
