//! Atomic replacement of one file in a directory held open by handle.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// The permission bits a replacement keeps: read, write and execute for
/// owner, group and others. Never set-user-ID, set-group-ID or sticky: the
/// new bytes are the model's, and a set-ID bit would make them a program
/// that runs as the file's owner (the tool's own user).
const KEPT_MODE_BITS: u32 = 0o777;

/// Write `contents` to a fresh temporary file in `dir`, then rename it over
/// `name`. The new file keeps the permission bits of the one it replaces
/// ([`KEPT_MODE_BITS`]).
pub fn replace(dir: BorrowedFd<'_>, name: &OsStr, contents: &[u8]) -> io::Result<()> {
    // The mode of the file being replaced; a new file gets 0666 less the umask.
    let kept = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile => {
            Some(Mode::from_raw_mode(stat.st_mode) & Mode::from_raw_mode(KEPT_MODE_BITS))
        }
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        _ => None,
    };
    let temp = temp_name();
    let fd = rustix::fs::openat(
        dir,
        temp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        kept.unwrap_or(Mode::from_raw_mode(0o666)),
    )?;
    let result = (|| {
        let mut file = File::from(fd);
        file.write_all(contents)?;
        if let Some(mode) = kept {
            // The umask narrowed the mode at creation; put the old one back.
            rustix::fs::fchmod(&file, mode)?;
        }
        file.sync_all()?;
        rustix::fs::renameat(dir, temp.as_str(), dir, name)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp.as_str(), AtFlags::empty());
    }
    result
}

/// A name no other writer in this process (or another) is using.
fn temp_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        ".toolsmith-{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
