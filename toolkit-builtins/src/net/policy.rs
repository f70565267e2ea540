//! `NetPolicy`: which hosts a network tool may reach, checked at the
//! addresses it will actually connect to.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use url::{Host, Url};

use super::{AddressKind, NetError, Resolve, SystemResolver, classify_ip, classify_name};

/// One allow entry: a host, and a port or any port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AllowEntry {
    host: AllowHost,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum AllowHost {
    Ip(IpAddr),
    Domain(String),
}

/// The network guard: which destinations a tool may connect to.
///
/// By default only public addresses are reachable: loopback, private,
/// link-local, carrier-grade NAT, multicast, unspecified, broadcast,
/// documentation, reserved and IPv4-mapped IPv6 addresses are refused,
/// whatever name or spelling leads to them. Host names that are local by
/// their name alone (`localhost`, `*.localhost`, `*.local`, `*.internal`
/// and the other suffixes of [`LocalName`](super::LocalName), names of one
/// label such as `intranet`) are refused before any lookup. An explicit
/// allow list of `host[:port]` entries opens particular destinations (an
/// internal API, or a test server on loopback); a local name is opened
/// only by an entry that names it.
///
/// [`check_url`](Self::check_url) resolves a URL's host once and returns the
/// addresses it checked; connect to those, never to a fresh lookup of the
/// name, so that DNS cannot answer differently the second time. Names are
/// looked up with the system's resolver unless
/// [`with_resolver`](Self::with_resolver) names another.
///
/// ```
/// use toolsmith_builtins::net::NetPolicy;
///
/// # async fn demo() -> Result<(), toolsmith_builtins::net::NetError> {
/// let policy = NetPolicy::new().allow("127.0.0.1:8080")?;
/// let url = url::Url::parse("http://127.0.0.1:8080/health").unwrap();
/// let addrs = policy.check_url(&url).await?;
/// assert_eq!(addrs, ["127.0.0.1:8080".parse().unwrap()]);
///
/// let other_port = url::Url::parse("http://127.0.0.1:9090/").unwrap();
/// assert!(policy.check_url(&other_port).await.is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct NetPolicy {
    allow: Vec<AllowEntry>,
    /// `None`: the system's resolver.
    resolver: Option<Arc<dyn Resolve>>,
}

impl fmt::Debug for NetPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetPolicy")
            .field("allow", &self.allow)
            .field("custom_resolver", &self.resolver.is_some())
            .finish()
    }
}

/// Two policies are equal when they allow the same entries and resolve
/// through the same resolver (the same instance, or both the system's).
impl PartialEq for NetPolicy {
    fn eq(&self, other: &Self) -> bool {
        let same_resolver = match (&self.resolver, &other.resolver) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        self.allow == other.allow && same_resolver
    }
}

impl Eq for NetPolicy {}

impl NetPolicy {
    /// Public addresses only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also allow `entry`: `host`, `host:port`, `1.2.3.4:port` or
    /// `[::1]:port`. A domain entry matches the URL's host name; an IP entry
    /// matches the address connected to.
    pub fn allow(mut self, entry: &str) -> Result<Self, NetError> {
        self.allow.push(parse_entry(entry)?);
        Ok(self)
    }

    /// Look host names up with `resolver` instead of the system's resolver.
    /// Every address it answers is checked like any other.
    pub fn with_resolver(mut self, resolver: impl Resolve) -> Self {
        self.resolver = Some(Arc::new(resolver));
        self
    }

    /// Whether a domain entry of the allow list names `name` on `port`.
    fn allows_name(&self, name: &str, port: u16) -> bool {
        let name = name.trim_end_matches('.');
        self.allow.iter().any(|entry| {
            entry.port.is_none_or(|p| p == port)
                && matches!(&entry.host, AllowHost::Domain(allowed) if allowed.eq_ignore_ascii_case(name))
        })
    }

    /// Whether the allow list opens `ip` reached as `host` on `port`.
    fn allows(&self, host: &Host<&str>, ip: IpAddr, port: u16) -> bool {
        self.allow.iter().any(|entry| {
            entry.port.is_none_or(|p| p == port)
                && match (&entry.host, host) {
                    (AllowHost::Ip(allowed), _) => *allowed == ip,
                    (AllowHost::Domain(allowed), Host::Domain(name)) => {
                        allowed.eq_ignore_ascii_case(name.trim_end_matches('.'))
                    }
                    (AllowHost::Domain(_), _) => false,
                }
        })
    }

    /// Check one address reached as `host`: allowed, or public.
    pub fn check_addr(&self, host: &Host<&str>, addr: SocketAddr) -> Result<(), NetError> {
        if self.allows(host, addr.ip(), addr.port()) {
            return Ok(());
        }
        match classify_ip(addr.ip()) {
            AddressKind::Public => Ok(()),
            kind => Err(NetError::Blocked {
                host: host.to_string(),
                addr,
                kind,
            }),
        }
    }

    /// Check `url`: http or https, a host that is not local by its name
    /// alone (unless allowed by name; no lookup happens for one that is),
    /// and every address the host resolves to allowed or public. Returns
    /// the checked addresses to connect to.
    pub async fn check_url(&self, url: &Url) -> Result<Vec<SocketAddr>, NetError> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(NetError::Scheme(scheme.to_string()));
        }
        let host = url.host().ok_or(NetError::NoHost)?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| NetError::InvalidUrl(url.to_string()))?;
        let addrs: Vec<SocketAddr> = match &host {
            Host::Ipv4(ip) => vec![SocketAddr::new(IpAddr::V4(*ip), port)],
            Host::Ipv6(ip) => vec![SocketAddr::new(IpAddr::V6(*ip), port)],
            Host::Domain(name) => {
                if let Some(kind) = classify_name(name)
                    && !self.allows_name(name, port)
                {
                    return Err(NetError::LocalName {
                        host: name.to_string(),
                        kind,
                    });
                }
                let looked_up = match &self.resolver {
                    Some(resolver) => resolver.resolve(name, port).await,
                    None => SystemResolver.resolve(name, port).await,
                };
                let mut found = looked_up.map_err(|e| NetError::Resolve {
                    host: name.to_string(),
                    message: e.to_string(),
                })?;
                // The connection goes to the URL's port whatever port a
                // resolver answers with, so that is the port checked.
                for addr in &mut found {
                    addr.set_port(port);
                }
                found.dedup();
                found
            }
        };
        if addrs.is_empty() {
            return Err(NetError::NoAddress(host.to_string()));
        }
        // One refused address refuses the host: a name that resolves to a
        // public and a private address is a rebinding attempt, not a choice.
        for addr in &addrs {
            self.check_addr(&host, *addr)?;
        }
        Ok(addrs)
    }
}

fn parse_entry(entry: &str) -> Result<AllowEntry, NetError> {
    let bad = || NetError::BadAllowEntry(entry.to_string());
    let trimmed = entry.trim();
    if trimmed.is_empty() || trimmed.contains('/') || trimmed.contains('@') {
        return Err(bad());
    }
    // Parse through the URL parser so an entry is spelled exactly the way
    // the URLs it must match are normalized.
    let url = Url::parse(&format!("http://{trimmed}/")).map_err(|_| bad())?;
    let explicit_port = url.port().or_else(|| {
        // `Url` drops the scheme's default port; an entry that names :80
        // still means only port 80.
        trimmed
            .rsplit_once(':')
            .filter(|(_, p)| *p == "80")
            .map(|_| 80)
    });
    let host = match url.host().ok_or_else(bad)? {
        Host::Ipv4(ip) => AllowHost::Ip(IpAddr::V4(ip)),
        Host::Ipv6(ip) => AllowHost::Ip(IpAddr::V6(ip)),
        Host::Domain(name) => AllowHost::Domain(name.trim_end_matches('.').to_ascii_lowercase()),
    };
    Ok(AllowEntry {
        host,
        port: explicit_port,
    })
}
