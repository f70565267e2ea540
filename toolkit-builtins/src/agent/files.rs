//! Small file and naming helpers shared by the agent tools.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};

/// A folder opened once: the files in it are read and replaced relative to
/// this handle, never by a path looked up again, so a link swapped in later
/// for the folder (or for one above it) leads no read or write elsewhere.
#[derive(Debug)]
pub(crate) struct Folder(OwnedFd);

impl Folder {
    /// Open the folder at `path` (the current one when empty), making it and
    /// those above it first when missing.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        let path = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        std::fs::create_dir_all(path)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Self(rustix::fs::open(path, flags, Mode::empty())?))
    }

    /// Replace the file `name` in this folder with `contents`, through a
    /// temporary file and a rename, so a process that stops midway never
    /// leaves half a file (no `fsync`: a power cut may).
    ///
    /// The temporary file has a random name and is made new (`O_EXCL`): a
    /// link or file planted where it goes (the folder may be one a command
    /// can write to) is never written through. The rename replaces `name`
    /// itself, a link there included, never what a link points to.
    pub(crate) fn write_atomically(&self, name: &OsStr, contents: &str) -> io::Result<()> {
        use std::io::Write;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
        let (temp, file) = loop {
            let mut temp = OsString::from(".");
            temp.push(name);
            temp.push(format!(".{}.tmp", fresh_id(|_| false)));
            match rustix::fs::openat(&self.0, &temp, flags, Mode::from_raw_mode(0o666)) {
                Ok(fd) => break (temp, File::from(fd)),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let written = (&file).write_all(contents.as_bytes()).and_then(|()| {
            rustix::fs::renameat(&self.0, &temp, &self.0, name).map_err(io::Error::from)
        });
        written.inspect_err(|_| {
            let _ = rustix::fs::unlinkat(&self.0, &temp, AtFlags::empty());
        })
    }

    /// The text of the regular file `name` in this folder, read up to `max`
    /// bytes; `None` when there is no file. A link, FIFO or device there is
    /// refused, never followed, waited on or read without end.
    pub(crate) fn read_regular_file(&self, name: &OsStr, max: u64) -> io::Result<Option<String>> {
        use std::io::Read;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let file = match rustix::fs::openat(&self.0, name, flags, Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let mut text = String::new();
        file.take(max + 1).read_to_string(&mut text)?;
        if text.len() as u64 > max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than {} MiB", max >> 20),
            ));
        }
        Ok(Some(text))
    }
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
