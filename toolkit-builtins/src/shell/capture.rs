//! Bounded capture of an output stream: the head and the tail are kept, the
//! middle is counted and dropped, so a command printing a gigabyte costs no
//! more memory than one printing a page.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

/// What was kept of one output stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    head_cap: usize,
    tail_cap: usize,
}

impl Captured {
    /// An empty capture keeping at most `cap` bytes, half head and half tail.
    pub fn with_cap(cap: usize) -> Self {
        let head_cap = cap / 2;
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            head_cap,
            tail_cap: cap - head_cap,
        }
    }

    /// Take in the next bytes of the stream.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    /// How many bytes the stream carried in all.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// How many bytes are held: never more than the cap.
    pub fn kept_bytes(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Whether bytes were dropped from the middle.
    pub fn is_truncated(&self) -> bool {
        self.total > self.kept_bytes() as u64
    }

    /// The kept text (invalid UTF-8 replaced), with a marker where the
    /// middle was dropped.
    pub fn text(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let (front, back) = self.tail.as_slices();
        let tail: Vec<u8> = [front, back].concat();
        let tail = String::from_utf8_lossy(&tail);
        if self.is_truncated() {
            let omitted = self.total - self.kept_bytes() as u64;
            format!("{head}\n… [{omitted} bytes omitted] …\n{tail}")
        } else {
            format!("{head}{tail}")
        }
    }
}

/// Read `stream` to its end into a capture of `cap` bytes.
pub(crate) async fn capture(mut stream: impl AsyncRead + Unpin, cap: usize) -> Captured {
    let mut captured = Captured::with_cap(cap);
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return captured,
            Ok(n) => captured.push(&buffer[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut c = Captured::with_cap(10);
        c.push(b"abc");
        c.push(b"de");
        assert_eq!(c.text(), "abcde");
        assert!(!c.is_truncated());
    }

    #[test]
    fn long_output_keeps_head_and_tail_with_a_marker() {
        let mut c = Captured::with_cap(6);
        for chunk in [&b"abcd"[..], b"efgh", b"ij", b"klmnop"] {
            c.push(chunk);
        }
        assert_eq!(c.total_bytes(), 16);
        assert_eq!(c.kept_bytes(), 6);
        assert_eq!(c.text(), "abc\n… [10 bytes omitted] …\nnop");
    }

    #[test]
    fn the_tail_follows_small_pushes() {
        let mut c = Captured::with_cap(4);
        for b in b"0123456789" {
            c.push(&[*b]);
        }
        assert_eq!(c.text(), "01\n… [6 bytes omitted] …\n89");
    }
}
