//! Special files (FIFOs, sockets, devices, the kernel's made-up files) are
//! never read by accident. Every refusal of a file by what it is, rather
//! than by where it is, is written here.
//!
//! Opening a FIFO for reading waits for a writer, forever if none comes;
//! reading a device may never end or may have effects; a file of `/proc`,
//! `/sys` or the tracing file system is made up by the kernel as it is read
//! (`/proc/kmsg` and `trace_pipe` block, a size of 0 says nothing). So every
//! open for reading is refused by type and file system first (`fstat` and
//! `fstatfs` of an `O_PATH` descriptor, or the type the directory listing
//! gave), and the open itself uses `O_NONBLOCK` so a file swapped for a FIFO
//! between the check and the open cannot block it either; both are checked
//! again on the opened descriptor, and `O_NONBLOCK` is cleared before anyone
//! reads. The decision is the kernel's answer about the open descriptor,
//! never the spelling of a path: `/dev/./zero`, `//proc/self/status` or a
//! workspace rooted at `/` are all judged by what they open.

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

/// The kernel's pseudo file systems, by the magic number `fstatfs` reports
/// (`linux/magic.h`), with what a model reads of a file on one.
#[cfg(any(target_os = "linux", target_os = "android"))]
const MADE_UP: &[(u32, &str)] = &[
    (
        0x9fa0,
        "a file of /proc, made up by the kernel as it is read",
    ),
    (
        0x6265_6572,
        "a file of /sys, made up by the kernel as it is read",
    ),
    (0x6462_6720, "a file of the kernel's debug file system"),
    (0x7472_6163, "a file of the kernel's tracing file system"),
    (0x7363_6673, "a file of the kernel's security file system"),
    (0x0027_e0eb, "a file of the kernel's cgroup file system"),
    (0x6367_7270, "a file of the kernel's cgroup file system"),
    (
        0x6265_6570,
        "a file of the kernel's configuration file system",
    ),
    (0x1cd1, "a terminal device"),
    (0xcafe_4a11, "a file of the kernel's BPF file system"),
    (0xde5e_81e4, "a file of the firmware's variables"),
    (0x6165_676c, "a file of the kernel's crash store"),
    (0x6573_5543, "a file of the kernel's FUSE controls"),
    (0xf97c_ff8c, "a file of the kernel's SELinux file system"),
    (0x4249_4e4d, "a file of the kernel's binary-format registry"),
    // Message queues read as a line of made-up statistics; the RPC pipes
    // of NFS block a reader until the kernel writes.
    (
        0x1980_0202,
        "a file of the kernel's message-queue file system",
    ),
    (0x6759_6969, "a file of the kernel's RPC pipe file system"),
    (0x6e66_7364, "a file of the kernel's NFS server controls"),
    (0x6e73_6673, "a file of the kernel's namespace file system"),
    (0x4341_5d53, "a file of the kernel's Smack file system"),
    (0x5a3c_69f0, "a file of the kernel's AppArmor file system"),
    (0xabba_1974, "a file of the kernel's Xen file system"),
    (0x9fa1, "a file of the firmware's device tree"),
    (0x9fa2, "a file of the kernel's USB device file system"),
    (0x6c6f_6f70, "a file of the kernel's binder file system"),
    // Reached only through magic links (refused on the way), but a
    // descriptor of one is never a file to read either.
    (0x5049_5045, "a pipe of the kernel's pipe file system"),
    (0x534f_434b, "a socket of the kernel's socket file system"),
    (0x0904_1934, "a file of the kernel's anonymous inodes"),
    (0x444d_4142, "a file of the kernel's DMA buffers"),
    (0x5345_434d, "a file of the kernel's secret memory"),
];

/// What the file system of `fd` is, when it is one of the kernel's made-up
/// ones; `None` for a file system that stores files.
pub fn made_up_kind(fd: impl AsFd) -> io::Result<Option<&'static str>> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // `f_type` is a signed word whose width differs by target; the
        // magic numbers are 32-bit, so compare the low 32 bits.
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        let magic = rustix::fs::fstatfs(fd)?.f_type as u32;
        Ok(MADE_UP
            .iter()
            .find(|(known, _)| *known == magic)
            .map(|(_, what)| *what))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = fd;
        Ok(None)
    }
}

/// Why the file open as `fd` (an `O_PATH` descriptor will do) must not be
/// read, if it must not: its type, then its file system. Directories pass:
/// callers say what to do with one.
pub fn refusal_of(fd: impl AsFd) -> Result<FileType, Refused> {
    let file_type = type_of(&fd).map_err(Refused::Io)?;
    if let Some(what) = special_kind(file_type) {
        return Err(Refused::Special(what));
    }
    if let Some(what) = made_up_kind(&fd).map_err(Refused::Io)? {
        return Err(Refused::Special(what));
    }
    Ok(file_type)
}

/// After an open with [`READ_FLAGS`]: refuse a special file (swapped in
/// since it was checked, see [`refusal_of`]), then clear `O_NONBLOCK` so
/// reads block as usual. Returns the file's type.
pub fn settle(fd: impl AsFd) -> Result<FileType, Refused> {
    let file_type = refusal_of(&fd)?;
    rustix::fs::fcntl_setfl(&fd, OFlags::empty()).map_err(|e| Refused::Io(e.into()))?;
    Ok(file_type)
}

/// Why a file was not opened for reading.
#[derive(Debug)]
pub enum Refused {
    /// It is a FIFO, socket, device or made-up file (named for messages).
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

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernels_made_up_files_are_refused_by_their_file_system() {
        for path in [
            "/proc/self/status",
            "/proc/version",
            "/sys/kernel/uevent_seqnum",
        ] {
            if !std::path::Path::new(path).exists() {
                continue;
            }
            let probe = rustix::fs::open(path, OFlags::PATH, Mode::empty()).unwrap();
            // Regular files by type: only the file system tells them apart.
            assert_eq!(type_of(&probe).unwrap(), FileType::RegularFile);
            assert!(
                matches!(refusal_of(&probe), Err(Refused::Special(_))),
                "{path}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let probe = rustix::fs::open(&file, OFlags::PATH, Mode::empty()).unwrap();
        assert_eq!(refusal_of(&probe).unwrap(), FileType::RegularFile);
    }
}
