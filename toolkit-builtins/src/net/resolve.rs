//! How a [`NetPolicy`](super::NetPolicy) turns a host name into addresses.

use std::io;
use std::net::SocketAddr;

use toolsmith::async_trait;

/// A name lookup for the network guard.
///
/// The guard resolves a host once, through this, checks every address it
/// gets, and the tool then connects only to those addresses: whatever a
/// resolver answers, nothing reaches an address the guard has not seen. The
/// default is the system's resolver; a host may plug in its own (a DNS over
/// HTTPS client, a fixed table for an internal service).
///
/// ```
/// use std::net::SocketAddr;
/// use toolsmith_builtins::net::{NetPolicy, Resolve};
///
/// /// Every name is the one internal service.
/// struct Internal;
///
/// #[toolsmith::async_trait]
/// impl Resolve for Internal {
///     async fn resolve(&self, _host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
///         Ok(vec![SocketAddr::from(([10, 0, 0, 7], port))])
///     }
/// }
///
/// # async fn demo() {
/// let policy = NetPolicy::new().with_resolver(Internal);
/// let url = url::Url::parse("http://api.example.com/").unwrap();
/// // 10.0.0.7 is private, and the allow list does not open it.
/// assert!(policy.check_url(&url).await.is_err());
/// # }
/// ```
#[async_trait]
pub trait Resolve: Send + Sync + 'static {
    /// The addresses `host` (a domain name, never an IP literal, never a
    /// name local by itself that the allow list does not name) has on `port`.
    ///
    /// Only the IP of each answer counts: the guard checks, and the tool
    /// connects to, each IP on `port` (the URL's), whatever port is answered.
    /// A lookup that never ends is cut short by the calling tool's timeout.
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>>;
}

/// The system's resolver, through tokio (getaddrinfo on a blocking thread).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        Ok(tokio::net::lookup_host((host, port)).await?.collect())
    }
}
