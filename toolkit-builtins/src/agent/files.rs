//! Small file and naming helpers shared by the agent tools.

use std::hash::{BuildHasher, RandomState};
use std::path::Path;

/// Write through a temporary file and a rename, so a process that stops
/// midway never leaves half a file (no `fsync`: a power cut may).
///
/// The temporary file has a random name and is made new (`O_EXCL`): a link
/// or file planted where it goes (the folder may be a workspace a command
/// can write to) is never written through. The rename replaces `path`
/// itself, a link there included, never what a link points to.
pub(crate) fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let (temp, mut file) = loop {
        let temp = path.with_file_name(format!(".{name}.{}.tmp", fresh_id(|_| false)));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
        {
            Ok(file) => break (temp, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(contents.as_bytes())
        .and_then(|()| std::fs::rename(&temp, path));
    written.inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

/// The text of the regular file at `path`, read up to `max` bytes; `None`
/// when there is no file. A link, FIFO or device there is refused, never
/// followed, waited on or read without end.
pub(crate) fn read_regular_file(path: &Path, max: u64) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} MiB", max >> 20),
        ));
    }
    Ok(Some(text))
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
