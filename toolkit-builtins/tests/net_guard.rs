//! The network guard at the address check: no connection is made here.
#![cfg(feature = "net")]

use std::net::{IpAddr, SocketAddr};

use toolsmith_builtins::net::{AddressKind, NetError, NetPolicy, classify_ip};
use url::Url;

fn kind(ip: &str) -> AddressKind {
    classify_ip(ip.parse::<IpAddr>().unwrap())
}

#[test]
fn every_special_range_is_classified() {
    let table = [
        ("0.0.0.0", AddressKind::Unspecified),
        ("0.1.2.3", AddressKind::Unspecified),
        ("10.1.2.3", AddressKind::Private),
        ("100.64.0.1", AddressKind::CarrierGradeNat),
        ("100.127.255.254", AddressKind::CarrierGradeNat),
        ("100.128.0.1", AddressKind::Public),
        ("127.0.0.1", AddressKind::Loopback),
        ("127.255.0.9", AddressKind::Loopback),
        ("169.254.169.254", AddressKind::LinkLocal),
        ("172.16.0.1", AddressKind::Private),
        ("172.31.255.255", AddressKind::Private),
        ("172.32.0.1", AddressKind::Public),
        ("192.0.0.8", AddressKind::Reserved),
        ("192.0.2.1", AddressKind::Documentation),
        ("192.168.1.1", AddressKind::Private),
        ("198.18.0.1", AddressKind::Reserved),
        ("198.51.100.7", AddressKind::Documentation),
        ("203.0.113.9", AddressKind::Documentation),
        ("224.0.0.1", AddressKind::Multicast),
        ("239.255.255.250", AddressKind::Multicast),
        ("240.0.0.1", AddressKind::Reserved),
        ("255.255.255.255", AddressKind::Broadcast),
        ("8.8.8.8", AddressKind::Public),
        ("::", AddressKind::Unspecified),
        ("::1", AddressKind::Loopback),
        ("::ffff:127.0.0.1", AddressKind::Ipv4Mapped),
        ("::ffff:8.8.8.8", AddressKind::Ipv4Mapped),
        ("::127.0.0.1", AddressKind::Ipv4Mapped),
        ("64:ff9b::a9fe:a9fe", AddressKind::LinkLocal),
        ("64:ff9b::808:808", AddressKind::Public),
        ("2002:7f00:1::", AddressKind::Loopback),
        ("2001::1", AddressKind::Reserved),
        ("2001:db8::1", AddressKind::Documentation),
        ("fc00::1", AddressKind::Private),
        ("fd12:3456::1", AddressKind::Private),
        ("fe80::1", AddressKind::LinkLocal),
        ("fec0::1", AddressKind::Private),
        ("ff02::1", AddressKind::Multicast),
        ("2606:4700::1111", AddressKind::Public),
        ("4000::1", AddressKind::Reserved),
    ];
    for (ip, expected) in table {
        assert_eq!(kind(ip), expected, "{ip}");
    }
}

async fn check(policy: &NetPolicy, url: &str) -> Result<Vec<SocketAddr>, NetError> {
    policy.check_url(&Url::parse(url).unwrap()).await
}

#[tokio::test]
async fn non_public_destinations_are_refused_in_any_spelling() {
    let policy = NetPolicy::new();
    let refused = [
        ("http://127.0.0.1/", AddressKind::Loopback),
        ("http://2130706433/", AddressKind::Loopback),
        ("http://0177.0.0.1/", AddressKind::Loopback),
        ("http://0x7f.0.0.1/", AddressKind::Loopback),
        ("http://0x7f000001/", AddressKind::Loopback),
        ("http://127.1/", AddressKind::Loopback),
        ("http://017700000001/", AddressKind::Loopback),
        ("http://localhost:8080/", AddressKind::Loopback),
        ("http://LOCALHOST/", AddressKind::Loopback),
        ("http://[::1]/", AddressKind::Loopback),
        ("http://[::ffff:127.0.0.1]/", AddressKind::Ipv4Mapped),
        ("http://[::ffff:7f00:1]/", AddressKind::Ipv4Mapped),
        (
            "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
            AddressKind::Ipv4Mapped,
        ),
        ("http://0/", AddressKind::Unspecified),
        ("http://0.0.0.0:22/", AddressKind::Unspecified),
        ("http://[::]/", AddressKind::Unspecified),
        (
            "http://169.254.169.254/latest/meta-data/",
            AddressKind::LinkLocal,
        ),
        ("http://0xa9.0xfe.0xa9.0xfe/", AddressKind::LinkLocal),
        ("http://2852039166/", AddressKind::LinkLocal),
        ("https://10.0.0.1/", AddressKind::Private),
        ("http://192.168.0.1/", AddressKind::Private),
        ("http://172.20.1.1/", AddressKind::Private),
        ("http://100.100.100.200/", AddressKind::CarrierGradeNat),
        ("http://224.0.0.251/", AddressKind::Multicast),
        ("http://[fe80::1]/", AddressKind::LinkLocal),
        ("http://[fd00::1]/", AddressKind::Private),
        ("http://[ff02::1]/", AddressKind::Multicast),
        ("http://255.255.255.255/", AddressKind::Broadcast),
    ];
    for (url, expected) in refused {
        match check(&policy, url).await {
            Err(NetError::Blocked { kind, .. }) => assert_eq!(kind, expected, "{url}"),
            other => panic!("{url} should be refused as {expected:?}, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn only_http_and_https_are_allowed() {
    let policy = NetPolicy::new().allow("127.0.0.1").unwrap();
    for url in [
        "file:///etc/passwd",
        "ftp://127.0.0.1/",
        "gopher://127.0.0.1:70/",
        "data:text/plain,hi",
    ] {
        assert!(
            matches!(check(&policy, url).await, Err(NetError::Scheme(_))),
            "{url}"
        );
    }
}

#[tokio::test]
async fn public_addresses_pass_and_come_back_checked() {
    let addrs = check(&NetPolicy::new(), "https://93.184.216.34/x")
        .await
        .unwrap();
    assert_eq!(addrs, ["93.184.216.34:443".parse::<SocketAddr>().unwrap()]);
    let addrs = check(&NetPolicy::new(), "http://[2606:4700::1111]:8080/")
        .await
        .unwrap();
    assert_eq!(
        addrs,
        ["[2606:4700::1111]:8080".parse::<SocketAddr>().unwrap()]
    );
}

#[tokio::test]
async fn the_allow_list_opens_exactly_its_entries() {
    let policy = NetPolicy::new()
        .allow("127.0.0.1:8080")
        .unwrap()
        .allow("localhost:9000")
        .unwrap()
        .allow("[::1]:7000")
        .unwrap();
    assert_eq!(
        check(&policy, "http://127.0.0.1:8080/a").await.unwrap(),
        ["127.0.0.1:8080".parse::<SocketAddr>().unwrap()]
    );
    // The same address in another spelling is the same destination.
    assert!(check(&policy, "http://2130706433:8080/").await.is_ok());
    assert!(check(&policy, "http://[::1]:7000/").await.is_ok());
    // Other ports and other addresses stay closed.
    for url in [
        "http://127.0.0.1:8081/",
        "http://127.0.0.1/",
        "http://127.0.0.2:8080/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]:8080/",
        "http://localhost:9001/",
    ] {
        assert!(
            matches!(check(&policy, url).await, Err(NetError::Blocked { .. })),
            "{url}"
        );
    }
    // A domain entry matches the name, wherever it resolves.
    let by_name = check(&policy, "http://localhost:9000/").await.unwrap();
    assert!(
        by_name
            .iter()
            .all(|a| a.ip().is_loopback() && a.port() == 9000)
    );
    // An entry without a port opens every port of that host.
    let any_port = NetPolicy::new().allow("127.0.0.1").unwrap();
    assert!(check(&any_port, "http://127.0.0.1:1234/").await.is_ok());
    assert!(check(&any_port, "http://127.0.0.1/").await.is_ok());
}

#[test]
fn allow_entries_must_be_host_and_port() {
    for bad in [
        "",
        "http://x/",
        "a/b",
        "user@host",
        "[::1",
        "host:99999",
        "ho st",
    ] {
        assert!(
            matches!(NetPolicy::new().allow(bad), Err(NetError::BadAllowEntry(_))),
            "{bad:?}"
        );
    }
}

#[tokio::test]
async fn errors_read_well() {
    let err = check(&NetPolicy::new(), "http://2130706433/")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`127.0.0.1` leads to 127.0.0.1:80, a loopback address; only public addresses may be reached"
    );
    let err = check(&NetPolicy::new(), "file:///etc/passwd")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "only http and https URLs are allowed, not `file`"
    );
}
