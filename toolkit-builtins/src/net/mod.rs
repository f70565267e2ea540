//! The network guard shared by `web_fetch`, `http_request` and any other
//! tool that connects somewhere a model names: [`NetPolicy`] checks a URL
//! at the addresses it resolves to, and [`classify_ip`] says what kind of
//! address an IP is. See [`crate::guards`] for what it stops and what not.

mod classify;
mod policy;
mod resolve;

use std::net::SocketAddr;

pub use classify::{AddressKind, classify_ip};
pub use policy::NetPolicy;
pub use resolve::{Resolve, SystemResolver};
/// The URL type [`NetPolicy::check_url`] takes, re-exported so callers use
/// the same version.
pub use url::{self, Url};

/// Why a destination was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// Only http and https are fetched.
    #[error("only http and https URLs are allowed, not `{0}`")]
    Scheme(String),
    /// The URL has no host.
    #[error("the URL has no host")]
    NoHost,
    /// The URL cannot be used.
    #[error("`{0}` is not a usable URL")]
    InvalidUrl(String),
    /// The host name did not resolve.
    #[error("cannot resolve `{host}`: {message}")]
    Resolve {
        /// The host name.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// The host name resolved to nothing.
    #[error("`{0}` resolves to no address")]
    NoAddress(String),
    /// The host leads to an address that is not public and not allowed.
    #[error("`{host}` leads to {addr}, a {kind} address; only public addresses may be reached")]
    Blocked {
        /// The host as the URL names it.
        host: String,
        /// The address it leads to.
        addr: SocketAddr,
        /// What kind of address that is.
        kind: AddressKind,
    },
    /// An allow-list entry is not `host[:port]`.
    #[error("`{0}` is not a valid allow entry; write host, host:port or [ipv6]:port")]
    BadAllowEntry(String),
}
