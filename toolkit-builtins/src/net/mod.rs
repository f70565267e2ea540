//! The network guard shared by `web_fetch`, `http_request` and any other
//! tool that connects somewhere a model names: [`NetPolicy`] checks a URL
//! by its host name and at the addresses it resolves to, [`classify_name`]
//! says whether a name is local by itself, and [`classify_ip`] what kind of
//! address an IP is. See [`crate::guards`] for what it stops and what not.

mod classify;
mod names;
mod policy;
mod resolve;

use std::net::SocketAddr;

pub use classify::{AddressKind, classify_ip};
pub use names::{LocalName, classify_name};
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
    /// The host name is local by its name alone (`localhost`, `*.local`,
    /// `*.internal`, one label, …) and the allow list does not name it:
    /// refused before any lookup.
    #[error(
        "`{host}` leads to {} by its name alone, a {} name; it is refused without a lookup: only public addresses may be reached, or hosts the allow list names",
        kind.place(),
        kind.name()
    )]
    LocalName {
        /// The host as the URL names it.
        host: String,
        /// Why the name is local.
        kind: LocalName,
    },
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
