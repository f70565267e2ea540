//! Who a request comes from, as far as an HTTP server can tell: the address
//! of its connection. A server's bounds that are a client's, not a
//! session's, are counted by it: a client cannot open sessions to get more.
//!
//! An IPv6 address counts by its /64 prefix: one host is commonly given a
//! whole /64, and could otherwise take a share for each of its addresses.
//! Every client behind one address (a proxy, a network's gateway) is one
//! client here; loopback addresses each count alone, so clients on one
//! machine are told apart only if they connect from different ones.

use std::net::{IpAddr, Ipv6Addr};

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
}
