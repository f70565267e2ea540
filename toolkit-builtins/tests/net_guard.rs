//! The network guard at the address check: no connection is made here.
#![cfg(feature = "net")]

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use toolsmith_builtins::net::{
    AddressKind, LocalName, NetError, NetPolicy, Resolve, classify_ip, classify_name,
};
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
    ] {
        assert!(
            matches!(check(&policy, url).await, Err(NetError::Blocked { .. })),
            "{url}"
        );
    }
    // A local name on a port its entry does not name stays closed, by name.
    assert!(matches!(
        check(&policy, "http://localhost:9001/").await,
        Err(NetError::LocalName { .. })
    ));
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

/// A resolver that records every name it is asked for and answers with a
/// public address, so a refusal can only come from the name itself.
#[derive(Clone, Default)]
struct RecordingDns {
    asked: Arc<Mutex<Vec<String>>>,
}

impl RecordingDns {
    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

#[toolsmith::async_trait]
impl Resolve for RecordingDns {
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        self.asked.lock().unwrap().push(host.to_owned());
        Ok(vec![SocketAddr::from(([93, 184, 216, 34], port))])
    }
}

#[test]
fn names_local_by_themselves_are_classified() {
    let table = [
        ("localhost", Some(LocalName::Loopback)),
        ("LocalHost.", Some(LocalName::Loopback)),
        ("app.localhost", Some(LocalName::Loopback)),
        ("printer.local", Some(LocalName::MulticastDns)),
        ("db.internal", Some(LocalName::PrivateNetwork)),
        ("metadata.google.internal", Some(LocalName::PrivateNetwork)),
        ("wiki.intranet", Some(LocalName::PrivateNetwork)),
        ("nas.lan", Some(LocalName::PrivateNetwork)),
        ("router.home.arpa", Some(LocalName::PrivateNetwork)),
        ("host.localdomain", Some(LocalName::PrivateNetwork)),
        ("intranet", Some(LocalName::SingleLabel)),
        ("router", Some(LocalName::SingleLabel)),
        ("example.com", None),
        ("localhost.example.com", None),
        ("internal.example.org", None),
        ("mylocal", Some(LocalName::SingleLabel)),
        ("my-local.com", None),
    ];
    for (name, expected) in table {
        assert_eq!(classify_name(name), expected, "{name}");
    }
}

#[tokio::test]
async fn local_names_are_refused_before_any_lookup() {
    let dns = RecordingDns::default();
    let policy = NetPolicy::new().with_resolver(dns.clone());
    let refused = [
        ("http://localhost/", LocalName::Loopback),
        ("http://LOCALHOST:8080/", LocalName::Loopback),
        ("http://localhost./", LocalName::Loopback),
        ("http://api.localhost/", LocalName::Loopback),
        ("http://printer.local/", LocalName::MulticastDns),
        ("https://db.internal/", LocalName::PrivateNetwork),
        (
            "http://metadata.google.internal/computeMetadata/v1/",
            LocalName::PrivateNetwork,
        ),
        ("http://nas.home.arpa/", LocalName::PrivateNetwork),
        ("http://intranet/", LocalName::SingleLabel),
        ("http://wiki:8080/page", LocalName::SingleLabel),
        // The URL parser folds these spellings into the names above.
        ("http://%6c%6fcalhost/", LocalName::Loopback),
        (
            "http://\u{ff4c}\u{ff4f}\u{ff43}\u{ff41}\u{ff4c}\u{ff48}\u{ff4f}\u{ff53}\u{ff54}/",
            LocalName::Loopback,
        ),
    ];
    for (url, expected) in refused {
        match check(&policy, url).await {
            Err(NetError::LocalName { kind, .. }) => assert_eq!(kind, expected, "{url}"),
            other => panic!("{url} should be refused as a {expected} name, got {other:?}"),
        }
    }
    assert_eq!(
        dns.asked(),
        Vec::<String>::new(),
        "a local name was looked up"
    );
    // A public name goes to the resolver as before.
    assert!(check(&policy, "http://example.com/").await.is_ok());
    assert_eq!(dns.asked(), ["example.com"]);
}

#[tokio::test]
async fn the_allow_list_opens_a_local_name_by_name_only() {
    let dns = RecordingDns::default();
    let policy = NetPolicy::new()
        .allow("intranet:8080")
        .unwrap()
        .allow("93.184.216.34")
        .unwrap()
        .with_resolver(dns.clone());
    // Named with its port: looked up, and its address allowed by the entry.
    assert_eq!(
        check(&policy, "http://intranet:8080/").await.unwrap(),
        ["93.184.216.34:8080".parse::<SocketAddr>().unwrap()]
    );
    assert_eq!(dns.asked(), ["intranet"]);
    // Another port, or an entry for its address only, does not open a name.
    for url in ["http://intranet:9090/", "http://wiki.internal/"] {
        assert!(
            matches!(check(&policy, url).await, Err(NetError::LocalName { .. })),
            "{url}"
        );
    }
    assert_eq!(dns.asked(), ["intranet"]);
}

#[tokio::test]
async fn a_local_name_refusal_says_why() {
    let err = check(&NetPolicy::new(), "http://localhost:3000/")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`localhost` leads to this machine by its name alone, a loopback name; it is refused without a lookup: only public addresses may be reached, or hosts the allow list names"
    );
    let err = check(&NetPolicy::new(), "http://printer.local/")
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "`printer.local` leads to a device on the local network by its name alone, a multicast DNS name;"
        ),
        "{err}"
    );
}
