//! Small file and naming helpers shared by the agent tools.

use std::hash::{BuildHasher, RandomState};
use std::path::Path;

/// Write through a temporary file and a rename, so a crash never leaves half a file.
pub(crate) fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, contents)?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

/// A fresh random id of 8 hex digits that `taken` does not hold.
pub(crate) fn fresh_id(taken: impl Fn(&str) -> bool) -> String {
    loop {
        // `RandomState` is seeded randomly per instance: a source of
        // randomness that needs no extra dependency.
        let id = format!("{:08x}", RandomState::new().hash_one(0u8) as u32);
        if !taken(&id) {
            return id;
        }
    }
}
