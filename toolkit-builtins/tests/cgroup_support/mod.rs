//! The control groups a test's commands or browser run in, seen from the
//! host's side: found by the name the library gives them
//! (`toolsmith-<pid>-<n>`), under this process's own group in each
//! hierarchy.
#![cfg(target_os = "linux")]
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The directories this process's groups are made in: its own group in
/// each hierarchy, v1 (`/sys/fs/cgroup/<controller>/<path>`) or unified
/// (`/sys/fs/cgroup/<path>`).
fn group_parents() -> Vec<PathBuf> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    membership
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let path = path.trim_start_matches('/');
            let base = PathBuf::from("/sys/fs/cgroup");
            Some(match controllers {
                "" => base.join(path),
                "pids" | "memory" => base.join(controllers).join(path),
                _ => return None,
            })
        })
        .collect()
}

/// The groups this process made and still has.
pub fn our_groups() -> Vec<PathBuf> {
    let prefix = format!("toolsmith-{}-", std::process::id());
    group_parents()
        .iter()
        .filter_map(|parent| std::fs::read_dir(parent).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .map(|entry| entry.path())
        .collect()
}

/// A number read from a group's file, or from its `key N` line.
pub fn group_number(group: &Path, file: &str, key: Option<&str>) -> Option<u64> {
    let text = std::fs::read_to_string(group.join(file)).ok()?;
    match key {
        None => text.trim().parse().ok(),
        Some(key) => text.lines().find_map(|line| {
            let (name, n) = line.split_once(' ')?;
            (name == key).then(|| n.trim().parse().ok())?
        }),
    }
}

/// Whether this process can make a group under its own in the v1 `pids`
/// hierarchy: where it can, a missing wall is a failure, not a skip.
pub fn host_can_make_groups() -> bool {
    let Ok(membership) = std::fs::read_to_string("/proc/self/cgroup") else {
        return false;
    };
    let Some(own) = membership
        .lines()
        .find_map(|l| l.split_once(":pids:").map(|(_, p)| p.to_owned()))
    else {
        return false;
    };
    let probe = Path::new("/sys/fs/cgroup/pids")
        .join(own.trim_start_matches('/'))
        .join(format!("probe-{}", std::process::id()));
    let made = std::fs::create_dir(&probe).is_ok();
    let _ = std::fs::remove_dir(&probe);
    made
}
