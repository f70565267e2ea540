//! The name an open file was found at, as the kernel records it: every
//! symlink, `.` and `..` already resolved.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The absolute name the kernel holds for the open `file`, found at
/// `opened_as`. Fails when it has none (the file was deleted or is not
/// reachable from this process's root). Where the kernel cannot say
/// (outside Linux), `opened_as` with its links resolved now.
pub fn of(file: &File, opened_as: &Path) -> io::Result<PathBuf> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        let _ = opened_as;
        // The link of /proc/self/fd/N is the kernel's name for N, with
        // " (deleted)" appended once the file is gone, and not absolute
        // when it lies outside this process's root.
        let name = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
        let unusable =
            !name.is_absolute() || name.as_os_str().as_encoded_bytes().ends_with(b" (deleted)");
        if unusable {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "the file has no name any more",
            ));
        }
        Ok(name)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = file;
        opened_as.canonicalize()
    }
}
