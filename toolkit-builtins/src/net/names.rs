//! Host names that are local by their name alone: they lead to this
//! machine or into a private network whatever DNS would answer, so the
//! guard refuses them before any lookup.

use std::fmt;

/// Why a host name is local by its name alone.
///
/// Refusing these before a lookup matters beyond the addresses they would
/// resolve to: the lookup itself goes to local resolvers (multicast DNS on
/// the link, the search domains of the host's network) and tells whoever
/// listens which internal names a model asked for, and a name such as
/// `intranet` can resolve to a public address on one network and a private
/// one on the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalName {
    /// `localhost` and `*.localhost`: always loopback (RFC 6761).
    Loopback,
    /// `*.local`: multicast DNS, a device on the local link (RFC 6762).
    MulticastDns,
    /// A suffix kept for private networks, never delegated in public DNS:
    /// `.internal`, `.intranet`, `.lan`, `.home.arpa`, `.localdomain`,
    /// `.corp`, `.home`, `.private`.
    PrivateNetwork,
    /// A name of one label (`intranet`, `router`, `wiki`): the resolver
    /// completes it with the local network's search domains.
    SingleLabel,
}

/// Suffixes of private networks (without the leading dot).
const PRIVATE_SUFFIXES: &[&str] = &[
    "internal",
    "intranet",
    "lan",
    "home.arpa",
    "localdomain",
    "corp",
    "home",
    "private",
];

impl LocalName {
    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Loopback => "loopback",
            Self::MulticastDns => "multicast DNS",
            Self::PrivateNetwork => "private-network",
            Self::SingleLabel => "single-label",
        }
    }

    /// Where a name of this kind leads, for messages.
    pub fn place(self) -> &'static str {
        match self {
            Self::Loopback => "this machine",
            Self::MulticastDns => "a device on the local network",
            Self::PrivateNetwork => "a private network",
            Self::SingleLabel => "the local network",
        }
    }
}

impl fmt::Display for LocalName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether `host` (a domain name, never an IP literal) is local by its
/// name alone, and why. Case and trailing dots do not matter.
///
/// ```
/// use toolsmith_builtins::net::{LocalName, classify_name};
///
/// assert_eq!(classify_name("localhost"), Some(LocalName::Loopback));
/// assert_eq!(classify_name("app.localhost."), Some(LocalName::Loopback));
/// assert_eq!(classify_name("printer.local"), Some(LocalName::MulticastDns));
/// assert_eq!(classify_name("db.Internal"), Some(LocalName::PrivateNetwork));
/// assert_eq!(classify_name("intranet"), Some(LocalName::SingleLabel));
/// assert_eq!(classify_name("example.com"), None);
/// ```
pub fn classify_name(host: &str) -> Option<LocalName> {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    let is = |suffix: &str| {
        name == suffix
            || name
                .strip_suffix(suffix)
                .is_some_and(|rest| rest.ends_with('.'))
    };
    if is("localhost") {
        return Some(LocalName::Loopback);
    }
    // Before the suffixes: `intranet` alone is a name of one label.
    if !name.contains('.') {
        return Some(LocalName::SingleLabel);
    }
    if is("local") {
        return Some(LocalName::MulticastDns);
    }
    if PRIVATE_SUFFIXES.iter().any(|suffix| is(suffix)) {
        return Some(LocalName::PrivateNetwork);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_match_whole_labels_only() {
        assert_eq!(classify_name("notlocalhost.com"), None);
        assert_eq!(classify_name("local.example.com"), None);
        assert_eq!(classify_name("mylan.example"), None);
        assert_eq!(classify_name("x.lan"), Some(LocalName::PrivateNetwork));
        assert_eq!(
            classify_name("router.home.arpa"),
            Some(LocalName::PrivateNetwork)
        );
        assert_eq!(classify_name("LOCALHOST"), Some(LocalName::Loopback));
        assert_eq!(classify_name("wiki."), Some(LocalName::SingleLabel));
        assert_eq!(classify_name(""), Some(LocalName::SingleLabel));
    }
}
