//! Who a request comes from, as far as an HTTP server can tell: the address
//! of its connection. A server's bounds that are a client's, not a
//! session's, are counted by it: a client cannot open sessions to get more.
//!
//! An IPv6 address counts by its /64 prefix: one host is commonly given a
//! whole /64, and could otherwise take a share for each of its addresses.
//! Every client behind one address (a proxy, a network's gateway) is one
//! client here; loopback addresses each count alone, so clients on one
//! machine are told apart only if they connect from different ones.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};

/// A client, by the address its connection comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Peer(IpAddr);

impl Peer {
    /// The client connecting from `address`.
    pub(crate) fn of(address: IpAddr) -> Self {
        let address = match address {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    IpAddr::V6(Ipv6Addr::from(prefix))
                }
            },
            v4 => v4,
        };
        Self(address)
    }
}

/// The connections each client holds, at most `max` of them: past those, a
/// client's next connection is refused at once, so one client cannot hold
/// every connection the server serves while others wait to be accepted.
#[derive(Clone)]
pub(crate) struct PeerConnections {
    max: usize,
    held: Arc<Mutex<HashMap<Peer, usize>>>,
}

/// One connection of a client, counted until it is dropped.
pub(crate) struct PeerConnection {
    peer: Peer,
    held: Arc<Mutex<HashMap<Peer, usize>>>,
}

impl PeerConnections {
    /// At most `max` connections (at least 1) for each client.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            held: Arc::default(),
        }
    }

    /// One more connection of `peer`, if it holds fewer than the most.
    pub(crate) fn take(&self, peer: Peer) -> Option<PeerConnection> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let count = held.entry(peer).or_default();
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(PeerConnection {
            peer,
            held: Arc::clone(&self.held),
        })
    }
}

impl Drop for PeerConnection {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = held.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(address: &str) -> Peer {
        Peer::of(address.parse().unwrap())
    }

    #[test]
    fn an_ipv6_client_is_its_64_prefix_and_a_mapped_ipv4_one_its_address() {
        assert_eq!(peer("2001:db8:1:2::1"), peer("2001:db8:1:2:ffff::9"));
        assert_ne!(peer("2001:db8:1:2::1"), peer("2001:db8:1:3::1"));
        assert_eq!(peer("::ffff:192.0.2.7"), peer("192.0.2.7"));
        assert_ne!(peer("127.0.0.1"), peer("127.0.0.2"));
    }

    #[test]
    fn a_client_past_its_connections_is_refused_until_one_goes() {
        let connections = PeerConnections::new(2);
        let first = connections.take(peer("192.0.2.1")).unwrap();
        let _second = connections.take(peer("192.0.2.1")).unwrap();
        assert!(connections.take(peer("192.0.2.1")).is_none());
        assert!(connections.take(peer("192.0.2.2")).is_some());
        drop(first);
        assert!(connections.take(peer("192.0.2.1")).is_some());
    }
}
