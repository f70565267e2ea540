//! What kind of bytes a file holds, from its first few kilobytes.
//!
//! One rule decides whether data is binary for every file and search tool:
//! it holds a NUL byte ([`BINARY_BYTE`]), as git and ripgrep decide. `grep`
//! hands that byte to its searcher, which stops at it; `glob` and
//! `read_file` look for it in the first [`SNIFF_BYTES`] of a file.

/// What the start of a file says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text (UTF-8 or close enough to show).
    Text,
    /// An image a model can be shown, with its media type.
    Image(&'static str),
    /// Some other binary format, with a name for it.
    Binary(&'static str),
}

/// Magic numbers of the formats worth naming. Images first: they are the
/// ones `read_file` returns rather than describes.
const MAGIC: &[(&[u8], Kind)] = &[
    (b"\x89PNG\r\n\x1a\n", Kind::Image("image/png")),
    (b"\xff\xd8\xff", Kind::Image("image/jpeg")),
    (b"GIF87a", Kind::Image("image/gif")),
    (b"GIF89a", Kind::Image("image/gif")),
    (b"%PDF-", Kind::Binary("PDF document")),
    (
        b"PK\x03\x04",
        Kind::Binary("ZIP archive (also docx/xlsx/jar)"),
    ),
    (b"\x1f\x8b", Kind::Binary("gzip archive")),
    (b"\x7fELF", Kind::Binary("ELF executable or library")),
    (b"\xfd7zXZ\x00", Kind::Binary("xz archive")),
    (b"BZh", Kind::Binary("bzip2 archive")),
    (b"\x28\xb5\x2f\xfd", Kind::Binary("zstd archive")),
    (b"7z\xbc\xaf\x27\x1c", Kind::Binary("7-Zip archive")),
    (b"SQLite format 3\x00", Kind::Binary("SQLite database")),
    (b"\x00asm", Kind::Binary("WebAssembly module")),
    (
        b"\xca\xfe\xba\xbe",
        Kind::Binary("Java class or Mach-O binary"),
    ),
    (b"\xcf\xfa\xed\xfe", Kind::Binary("Mach-O binary")),
    (b"MZ", Kind::Binary("Windows executable")),
    (b"OggS", Kind::Binary("Ogg media")),
    (b"ID3", Kind::Binary("MP3 audio")),
    (b"fLaC", Kind::Binary("FLAC audio")),
    (b"\x1aE\xdf\xa3", Kind::Binary("Matroska/WebM video")),
    (b"wOFF", Kind::Binary("WOFF font")),
    (b"wOF2", Kind::Binary("WOFF2 font")),
];

/// The byte that marks data as binary wherever it appears.
pub const BINARY_BYTE: u8 = 0;

/// How much of the start of a file the tools read to tell what it holds:
/// as much as git looks at, and enough for every magic number here.
pub const SNIFF_BYTES: usize = 8192;

/// Whether `data` is binary: it holds a [`BINARY_BYTE`]. The one test the
/// file and search tools share, so `glob` leaves out what `grep` skips.
///
/// ```
/// use toolsmith_builtins::fs::sniff::is_binary;
///
/// assert!(is_binary(b"PK\x03\x04\0\0"));
/// assert!(!is_binary("héllo\n".as_bytes()));
/// ```
pub fn is_binary(data: &[u8]) -> bool {
    memchr::memchr(BINARY_BYTE, data).is_some()
}

/// Classify a file by its first bytes ([`SNIFF_BYTES`] is enough).
pub fn classify(head: &[u8]) -> Kind {
    if head.len() >= 12 && &head[..4] == b"RIFF" {
        match &head[8..12] {
            b"WEBP" => return Kind::Image("image/webp"),
            b"WAVE" => return Kind::Binary("WAV audio"),
            b"AVI " => return Kind::Binary("AVI video"),
            _ => {}
        }
    }
    if head.len() >= 12 && &head[4..8] == b"ftyp" {
        return Kind::Binary("MP4/MOV media");
    }
    for (magic, kind) in MAGIC {
        if head.starts_with(magic) {
            return *kind;
        }
    }
    if is_binary(head) {
        return Kind::Binary("binary data");
    }
    Kind::Text
}

/// A size for people and models: `912 B`, `12.3 KB`, `2.0 GB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_apart() {
        assert_eq!(classify(b"\x89PNG\r\n\x1a\n...."), Kind::Image("image/png"));
        assert_eq!(classify(b"RIFF\0\0\0\0WEBPVP8 "), Kind::Image("image/webp"));
        assert_eq!(
            classify(b"\x7fELF\x02\x01"),
            Kind::Binary("ELF executable or library")
        );
        assert_eq!(classify(b"abc\0def"), Kind::Binary("binary data"));
        assert_eq!(classify("héllo\n".as_bytes()), Kind::Text);
        assert_eq!(classify(b""), Kind::Text);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_size(912), "912 B");
        assert_eq!(human_size(12_595), "12.3 KB");
        assert_eq!(human_size(2 * 1024 * 1024 * 1024), "2.0 GB");
    }
}
