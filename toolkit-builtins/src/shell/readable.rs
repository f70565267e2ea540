//! The system paths a confined command may read and run from: what a shell
//! and ordinary programs need (binaries, libraries, locale, `/etc`), less
//! the host's secrets.
//!
//! Landlock grants access beneath a path and cannot take a subpath back, so
//! `/etc` is granted entry by entry, and the directories that hold a secret
//! (such as `/etc/ssh`) are granted entry by entry in turn.

use std::path::{Path, PathBuf};

/// Directories read whole.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/sys",
];

/// The devices read one by one: not `/dev` whole, which holds other
/// processes' shared memory (`/dev/shm`), disks and the host's terminals.
/// (`/dev/stdin` and the like lead through `/proc/self/fd`.)
const READABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Paths below `/etc` no command may read: password hashes, sudo rules,
/// the host's private keys. A `*` matches any part of one name.
const ETC_SECRETS: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "master.passwd",
    "security/opasswd",
    "ssh/ssh_host_*_key",
    "ssl/private",
    "krb5.keytab",
    "wireguard",
    "NetworkManager/system-connections",
    "netplan",
    "wpa_supplicant",
    "letsencrypt",
    "ipsec.secrets",
    "ipsec.d/private",
    "ppp/chap-secrets",
    "ppp/pap-secrets",
    "openvpn",
    "mysql/debian.cnf",
    "rancher",
    "kubernetes",
    "docker/key.json",
    "pki/tls/private",
    "credstore",
    "credstore.encrypted",
    "ssh/sshd_config.d",
];

/// Every path a confined command may read, in the order given above.
pub(crate) fn system_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = SYSTEM_DIRS
        .iter()
        .chain(READABLE_DEVICES)
        .map(PathBuf::from)
        .collect();
    let secrets: Vec<&str> = ETC_SECRETS.to_vec();
    grant_all_but(Path::new("/etc"), &secrets, &mut paths);
    paths
}

/// Add every entry of `dir` to `out` except the `secrets` (paths relative
/// to `dir`); a directory that holds a secret is walked in its turn.
fn grant_all_but(dir: &Path, secrets: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            // A name that is not UTF-8 cannot be a secret on the list.
            out.push(entry.path());
            continue;
        };
        if secrets
            .iter()
            .any(|s| !s.contains('/') && matches_name(s, name))
        {
            continue;
        }
        let below: Vec<&str> = secrets
            .iter()
            .filter_map(|s| s.split_once('/'))
            .filter(|(head, _)| matches_name(head, name))
            .map(|(_, rest)| rest)
            .collect();
        // Symlinks are not walked: granting one grants what it points to,
        // which `/etc` (root's) decides, not the command.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if below.is_empty() || !is_dir {
            out.push(entry.path());
        } else {
            grant_all_but(&entry.path(), &below, out);
        }
    }
}

/// Whether `name` matches `pattern`, where one `*` stands for any text.
fn matches_name(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((prefix, suffix)) => {
            name.len() >= prefix.len() + suffix.len()
                && name.starts_with(prefix)
                && name.ends_with(suffix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_matches_any_part_of_one_name() {
        assert!(matches_name("ssh_host_*_key", "ssh_host_ed25519_key"));
        assert!(!matches_name("ssh_host_*_key", "ssh_host_ed25519_key.pub"));
        assert!(matches_name("shadow", "shadow"));
        assert!(!matches_name("shadow", "shadow-"));
    }

    #[test]
    fn secrets_are_left_out_and_their_neighbours_kept() {
        let root = std::env::temp_dir().join(format!("readable-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("ssh")).unwrap();
        for file in [
            "passwd",
            "shadow",
            "ssh/ssh_host_rsa_key",
            "ssh/ssh_host_rsa_key.pub",
            "ssh/ssh_config",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        let mut granted = Vec::new();
        grant_all_but(&root, ETC_SECRETS, &mut granted);
        granted.sort();
        let expected: Vec<PathBuf> = ["passwd", "ssh/ssh_config", "ssh/ssh_host_rsa_key.pub"]
            .iter()
            .map(|p| root.join(p))
            .collect();
        assert_eq!(granted, expected);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
