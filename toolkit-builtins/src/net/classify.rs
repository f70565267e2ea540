//! What kind of address an IP is, by the IANA special-purpose registries.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kind of an IP address. Only [`AddressKind::Public`] is reachable by
/// default; every other kind points into a host, a private network or
/// nowhere useful, and is where server-side request forgery aims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressKind {
    /// A globally routable unicast address.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, `fc00::/7`, `fec0::/10`.
    Private,
    /// `169.254/16` (cloud metadata lives here), `fe80::/10`.
    LinkLocal,
    /// `100.64/10`, shared address space behind carrier-grade NAT.
    CarrierGradeNat,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`.
    Documentation,
    /// `::ffff:0:0/96` and `::/96`: IPv4 written as IPv6, which some stacks
    /// route to the IPv4 address (so `::ffff:127.0.0.1` is loopback).
    Ipv4Mapped,
    /// Benchmarking, protocol assignments, `240/4` and other reserved ranges.
    Reserved,
}

impl AddressKind {
    /// Whether an address of this kind may be reached without an allow entry.
    pub fn is_public(self) -> bool {
        self == Self::Public
    }

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::CarrierGradeNat => "carrier-grade NAT",
            Self::Multicast => "multicast",
            Self::Unspecified => "unspecified",
            Self::Broadcast => "broadcast",
            Self::Documentation => "documentation",
            Self::Ipv4Mapped => "IPv4-mapped IPv6",
            Self::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddressKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Classify `ip`.
///
/// ```
/// use std::net::IpAddr;
/// use toolsmith_builtins::net::{AddressKind, classify_ip};
///
/// let kind = |s: &str| classify_ip(s.parse::<IpAddr>().unwrap());
/// assert_eq!(kind("93.184.216.34"), AddressKind::Public);
/// assert_eq!(kind("169.254.169.254"), AddressKind::LinkLocal);
/// assert_eq!(kind("::ffff:127.0.0.1"), AddressKind::Ipv4Mapped);
/// ```
pub fn classify_ip(ip: IpAddr) -> AddressKind {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressKind {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) => AddressKind::Unspecified,
        (10, _, _) => AddressKind::Private,
        (100, 64..=127, _) => AddressKind::CarrierGradeNat,
        (127, _, _) => AddressKind::Loopback,
        (169, 254, _) => AddressKind::LinkLocal,
        (172, 16..=31, _) => AddressKind::Private,
        (192, 0, 0) => AddressKind::Reserved,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressKind::Documentation,
        (192, 88, 99) => AddressKind::Reserved,
        (192, 168, _) => AddressKind::Private,
        (198, 18..=19, _) => AddressKind::Reserved,
        (224..=239, _, _) => AddressKind::Multicast,
        _ if ip == Ipv4Addr::BROADCAST => AddressKind::Broadcast,
        (240..=255, _, _) => AddressKind::Reserved,
        _ => AddressKind::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressKind {
    let segments = ip.segments();
    if ip.is_unspecified() {
        return AddressKind::Unspecified;
    }
    if ip.is_loopback() {
        return AddressKind::Loopback;
    }
    match segments {
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (the old "compatible" form).
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0, 0, _, _] => AddressKind::Ipv4Mapped,
        // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address
        // a gateway will reach: judge them by it.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => embedded(hi, lo),
        [0x2002, hi, lo, ..] => embedded(hi, lo),
        [0x2001, 0xdb8, ..] => AddressKind::Documentation,
        // Teredo tunnels and the rest of 2001::/23 (protocol assignments).
        [0x2001, 0..=0x1ff, ..] => AddressKind::Reserved,
        [first, ..] if first & 0xfe00 == 0xfc00 => AddressKind::Private,
        [first, ..] if first & 0xffc0 == 0xfe80 => AddressKind::LinkLocal,
        [first, ..] if first & 0xffc0 == 0xfec0 => AddressKind::Private,
        [first, ..] if first & 0xff00 == 0xff00 => AddressKind::Multicast,
        // Global unicast is 2000::/3; everything else is unassigned.
        [first, ..] if first & 0xe000 == 0x2000 => AddressKind::Public,
        _ => AddressKind::Reserved,
    }
}

fn embedded(hi: u16, lo: u16) -> AddressKind {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    classify_v4(Ipv4Addr::new(a, b, c, d))
}
