//! The connections one client holds at once.
//!
//! An HTTP/1 connection carries one request at a time, and holds its
//! descriptor and task while a request waits for its permit or an event
//! stream stays open. Without a bound per client, one address could open
//! every connection the server serves ([`HttpOptions::max_connections`])
//! and leave every other client in the listen queue. A hard part per
//! client would refuse a lone client's burst, or one address's several
//! sessions each with its stream, while the server has room. So a client
//! holding its part ([`HttpOptions::max_connections_per_client`]) takes
//! another only while a quarter of the server's connections stay free: it
//! may use what is spare, never that last quarter, which is kept for the
//! other clients.
//!
//! A connection refused is answered `503 Service Unavailable` with
//! `Retry-After` on a connection that holds none of the server's, then
//! closed; at most [`REFUSING`] such answers are written at once, and
//! [`REFUSING_PER_CLIENT`] to one client, and a connection past them is
//! closed unanswered, so a flood of refused connections costs a bounded
//! number of tasks and descriptors, and one client's flood cannot take
//! the answers another client is owed.
//!
//! [`HttpOptions::max_connections`]: super::HttpOptions::max_connections
//! [`HttpOptions::max_connections_per_client`]: super::HttpOptions::max_connections_per_client

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use super::peer::Peer;

/// Refusals written at once; a connection refused past them is closed at
/// once, unanswered.
pub(super) const REFUSING: usize = 64;

/// Refusals written at once to one client: half of them, so that a
/// client's burst is told to come back, and its flood leaves the other
/// half to the others.
pub(super) const REFUSING_PER_CLIENT: usize = REFUSING / 2;

/// How long a refused connection may take to send its request's head and
/// read the answer; then it is closed.
const REFUSAL_DEADLINE: Duration = Duration::from_secs(2);

/// The most of a refused request's body read before the answer; a larger
/// one is cut off, its connection reset.
const REFUSED_BODY: usize = 64 * 1024;

/// How long a client refused a connection is told to wait: a connection
/// frees when one of the client's own requests ends.
const RETRY_AFTER: &str = "1";

/// The connections each client holds, and the rule for one past its part.
#[derive(Clone)]
pub(super) struct ClientConnections {
    inner: Arc<Inner>,
}

struct Inner {
    /// What a client may hold whatever the others do.
    part: usize,
    /// The server's connections a client past its part leaves free.
    reserve: usize,
    /// Connections held, and refusals being answered, by client.
    counts: Mutex<HashMap<Peer, Counts>>,
    refusing: Arc<Semaphore>,
}

#[derive(Default)]
struct Counts {
    held: usize,
    refusing: usize,
}

/// One connection of a client, counted until it is dropped.
pub(super) struct Held {
    inner: Arc<Inner>,
    peer: Peer,
}

/// One refusal being answered to a client, counted until it is dropped.
struct Refusing {
    inner: Arc<Inner>,
    peer: Peer,
}

impl ClientConnections {
    /// A client holds `part` connections at once (at least 1), and more
    /// only while a quarter of the server's `max` stay free.
    pub(super) fn new(part: usize, max: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                part: part.max(1),
                // A quarter, and at least one when there is more than one.
                reserve: if max > 1 { (max / 4).max(1) } else { 0 },
                counts: Mutex::new(HashMap::new()),
                refusing: Arc::new(Semaphore::new(REFUSING)),
            }),
        }
    }

    /// A connection for `peer`, which the server has accepted with `free`
    /// of its connections left: granted under its part, or past it while
    /// the reserve stays free.
    pub(super) fn take(&self, peer: Peer, free: usize) -> Option<Held> {
        let mut counts = self.inner.lock();
        let count = counts.entry(peer).or_default();
        if count.held >= self.inner.part && free < self.inner.reserve {
            return None;
        }
        count.held += 1;
        Some(Held {
            inner: Arc::clone(&self.inner),
            peer,
        })
    }

    /// Answer `stream`, a connection refused, with 503 and close it; or
    /// close it at once when [`REFUSING`] are being answered already.
    pub(super) fn refuse(&self, stream: TcpStream, peer: Peer) {
        let refusing = {
            let mut counts = self.inner.lock();
            let count = counts.entry(peer).or_default();
            if count.refusing >= REFUSING_PER_CLIENT {
                return;
            }
            count.refusing += 1;
            Refusing {
                inner: Arc::clone(&self.inner),
                peer,
            }
        };
        let Ok(permit) = Arc::clone(&self.inner.refusing).try_acquire_owned() else {
            return;
        };
        tokio::spawn(async move {
            let _permit = permit;
            let _refusing = refusing;
            let refused = hyper::service::service_fn(|request: hyper::Request<Incoming>| async {
                // The body read first (a little of it at most): closed with
                // a body unread, the connection would be reset, and the
                // client lose the answer.
                let _ = Limited::new(request.into_body(), REFUSED_BODY)
                    .collect()
                    .await;
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

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Peer, Counts>> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One fewer of `peer`'s connections or refusals; a client with none
    /// is forgotten.
    fn release(&self, peer: Peer, which: impl FnOnce(&mut Counts)) {
        let mut counts = self.lock();
        if let Some(count) = counts.get_mut(&peer) {
            which(count);
            if count.held == 0 && count.refusing == 0 {
                counts.remove(&peer);
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.inner.release(self.peer, |count| count.held -= 1);
    }
}

impl Drop for Refusing {
    fn drop(&mut self) {
        self.inner.release(self.peer, |count| count.refusing -= 1);
    }
}

/// `503 Service Unavailable`: the client holds as many connections as it
/// may; it retries once one of them is free.
fn too_many_connections() -> super::http::Response {
    super::http::busy(
        "this client holds as many connections as it may: retry when one of its requests has ended"
            .into(),
        RETRY_AFTER,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(address: &str) -> Peer {
        Peer::of(address.parse().unwrap())
    }

    #[test]
    fn past_its_part_a_client_takes_only_what_leaves_the_reserve_free() {
        // 8 connections: a part of 4, a reserve of 2.
        let connections = ClientConnections::new(4, 8);
        let one = peer("127.0.0.1");
        let mut held: Vec<Held> = (0..4)
            .map(|taken| connections.take(one, 8 - taken - 1).unwrap())
            .collect();
        // Past its part, while 2 stay free.
        held.push(connections.take(one, 3).unwrap());
        held.push(connections.take(one, 2).unwrap());
        // 1 would stay free: less than the reserve, kept for the others.
        assert!(connections.take(one, 1).is_none());
        let other = peer("127.0.0.2");
        assert!(
            connections.take(other, 1).is_some(),
            "another client under its part takes the reserve"
        );
        held.truncate(3);
        assert!(connections.take(one, 1).is_some(), "back under its part");
    }

    #[test]
    fn a_client_with_no_connection_is_forgotten() {
        let connections = ClientConnections::new(1, 4);
        let one = peer("127.0.0.1");
        let held = connections.take(one, 3).unwrap();
        assert!(connections.take(one, 0).is_none());
        drop(held);
        assert!(connections.inner.lock().is_empty());
    }
}
