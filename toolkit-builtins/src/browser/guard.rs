//! Whether the browser may request a URL: the one decision every navigation,
//! redirect and sub-request goes through.
//!
//! Only `http` and `https` are allowed, and only to public addresses, unless
//! the host or the `host:port` is on the configured allow list.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::Url;

/// Why a URL was refused, in words a model can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused `{url}`: {reason}")]
pub struct Refusal {
    /// The URL as requested.
    pub url: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The addresses the browser may reach beyond the public internet.
#[derive(Debug, Clone, Default)]
pub(crate) struct UrlGuard {
    /// `host` (any port) or `host:port` entries, lower-case.
    allow: Vec<(String, Option<u16>)>,
}

impl UrlGuard {
    pub(crate) fn new<S: AsRef<str>>(allow: impl IntoIterator<Item = S>) -> Self {
        let allow = allow
            .into_iter()
            .map(|entry| parse_allow_entry(entry.as_ref()))
            .collect();
        Self { allow }
    }

    /// Checks one URL; resolves its host so a name that points at a private
    /// address is refused like the address itself.
    pub(crate) async fn check(&self, url: &str) -> Result<(), Refusal> {
        let refuse = |reason: String| Refusal {
            url: url.to_owned(),
            reason,
        };
        let parsed = Url::parse(url).map_err(|e| refuse(format!("not a valid URL ({e})")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(refuse(format!(
                "the `{}` scheme is not allowed; use an http or https URL",
                parsed.scheme()
            )));
        }
        let host = match parsed.host_str() {
            Some(host) => host.trim_start_matches('[').trim_end_matches(']'),
            None => return Err(refuse("the URL has no host".into())),
        };
        let port = parsed.port_or_known_default().unwrap_or(80);
        if self.allows(host, port) {
            return Ok(());
        }
        let addresses: Vec<SocketAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((host, port))
                .await
                .map_err(|e| refuse(format!("cannot resolve `{host}`: {e}")))?
                .collect(),
        };
        if addresses.is_empty() {
            return Err(refuse(format!("`{host}` has no address")));
        }
        match addresses.iter().find(|a| !is_public(a.ip())) {
            Some(private) => Err(refuse(format!(
                "{private} is not a public address (add `{host}:{port}` to the allow list to reach it)"
            ))),
            None => Ok(()),
        }
    }

    fn allows(&self, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        self.allow
            .iter()
            .any(|(h, p)| *h == host && p.is_none_or(|p| p == port))
    }
}

fn parse_allow_entry(entry: &str) -> (String, Option<u16>) {
    let entry = entry.trim().to_ascii_lowercase();
    // `[::1]:8080`, `::1`, `host:8080`, `host`.
    if let Some(rest) = entry.strip_prefix('[')
        && let Some((host, tail)) = rest.split_once(']')
    {
        let port = tail.strip_prefix(':').and_then(|p| p.parse().ok());
        return (host.to_owned(), port);
    }
    match entry.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host.to_owned(), Some(port)),
            Err(_) => (entry.clone(), None),
        },
        _ => (entry.clone(), None),
    }
}

/// Whether an address is on the public internet: not loopback, private,
/// link-local, shared, documentation, benchmarking, multicast or reserved.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first == 0x2001 && ip.segments()[1] == 0x0db8) // documentation
        || (first == 0x0064 && ip.segments()[1] == 0xff9b)) // NAT64, may reach private IPv4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} must not be public");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[tokio::test]
    async fn the_allow_list_opens_a_host_and_port_and_nothing_else() {
        let guard = UrlGuard::new(["127.0.0.1:8080", "[::1]:9000", "internal.test"]);
        assert!(guard.check("http://127.0.0.1:8080/x").await.is_ok());
        assert!(guard.check("http://[::1]:9000/").await.is_ok());
        assert!(guard.check("http://internal.test:1234/").await.is_ok());
        let refused = guard.check("http://127.0.0.1:8081/").await.unwrap_err();
        assert!(refused.reason.contains("127.0.0.1:8081"), "{refused}");
        assert!(guard.check("http://10.0.0.1/").await.is_err());
        assert!(guard.check("http://[fe80::1]/").await.is_err());
        assert!(guard.check("http://localhost:8080/").await.is_err());
    }

    #[tokio::test]
    async fn only_http_and_https_are_allowed() {
        let guard = UrlGuard::new(["127.0.0.1"]);
        for url in [
            "file:///etc/passwd",
            "ftp://127.0.0.1/",
            "javascript:alert(1)",
        ] {
            let refused = guard.check(url).await.unwrap_err();
            assert!(refused.reason.contains("scheme"), "{refused}");
        }
        assert!(guard.check("not a url").await.is_err());
    }
}
