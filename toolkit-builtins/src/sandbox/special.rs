//! Special files (FIFOs, sockets, devices) are never read by accident.
//!
//! Opening a FIFO for reading waits for a writer, forever if none comes;
//! reading a device may never end or may have effects. So every open for
//! reading is refused by type first (`fstat` of an `O_PATH` descriptor, or
//! the type the directory listing gave), and the open itself uses
//! `O_NONBLOCK` so a file swapped for a FIFO between the check and the open
//! cannot block it either; the type is checked again on the opened
//! descriptor, and `O_NONBLOCK` is cleared before anyone reads.

use std::io;
use std::os::fd::AsFd;

use rustix::fs::{FileType, OFlags};

/// The flags every open for reading adds.
pub const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// What a special file is, for messages; `None` for regular files,
/// directories and symlinks.
pub fn special_kind(file_type: FileType) -> Option<&'static str> {
    match file_type {
        FileType::Fifo => Some("a named pipe (FIFO)"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice | FileType::BlockDevice => Some("a device file"),
        FileType::Unknown => Some("not a regular file"),
        FileType::RegularFile | FileType::Directory | FileType::Symlink => None,
    }
}

/// The type of the open file `fd`.
pub fn type_of(fd: impl AsFd) -> io::Result<FileType> {
    Ok(FileType::from_raw_mode(rustix::fs::fstat(fd)?.st_mode))
}

/// After an open with [`READ_FLAGS`]: refuse a special file (swapped in
/// since it was checked), then clear `O_NONBLOCK` so reads block as usual.
/// Returns the file's type.
pub fn settle(fd: impl AsFd) -> Result<FileType, Refused> {
    let file_type = type_of(&fd).map_err(Refused::Io)?;
    if let Some(what) = special_kind(file_type) {
        return Err(Refused::Special(what));
    }
    rustix::fs::fcntl_setfl(&fd, OFlags::empty()).map_err(|e| Refused::Io(e.into()))?;
    Ok(file_type)
}

/// Why a file was not opened for reading.
#[derive(Debug)]
pub enum Refused {
    /// It is a FIFO, socket or device (named for messages).
    Special(&'static str),
    /// The operating system refused.
    Io(io::Error),
}

impl From<Refused> for io::Error {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Special(what) => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("it is {what}; only regular files are read"),
            ),
            Refused::Io(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::Mode;

    #[test]
    fn a_fifo_opens_without_waiting_and_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // With O_NONBLOCK the open returns at once though no writer exists.
        let fd = rustix::fs::open(&fifo, READ_FLAGS, Mode::empty()).unwrap();
        assert!(matches!(settle(&fd), Err(Refused::Special(_))));
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let fd = rustix::fs::open(&file, READ_FLAGS, Mode::empty()).unwrap();
        assert_eq!(settle(&fd).unwrap(), FileType::RegularFile);
        let flags = rustix::fs::fcntl_getfl(&fd).unwrap();
        assert!(!flags.contains(OFlags::NONBLOCK));
    }
}
