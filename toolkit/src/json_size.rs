//! The length of a value as compact JSON, counted without writing it out:
//! what bounds a server's listings, a tool's metadata and examples, and
//! the copies a schema's references would make, each measured before it
//! is kept or copied.

/// How many bytes `value` takes as compact JSON.
pub(crate) fn json_size(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // A JSON value always serializes; a type that fails part way is
    // counted as far as it went.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
