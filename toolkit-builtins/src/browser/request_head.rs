//! A request head as the page's proxy takes it: read within a time and size
//! bound, and parsed strictly enough that what the proxy checked is what
//! the server gets.
//!
//! The proxy relays one request per client connection, so it must know
//! where that request ends: only a `Content-Length` body is relayed.
//! Anything a server could read differently from the proxy (a
//! `Transfer-Encoding` next to a length, two lengths, a header continued
//! on the next line) is refused rather than interpreted.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The most a request head may take.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// How long a client may take to send a whole request head: one that sends
/// it a byte at a time is cut off here.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// A request line and its headers, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestHead {
    pub(crate) method: String,
    pub(crate) target: String,
    pub(crate) version: String,
    pub(crate) headers: Vec<(String, String)>,
}

/// Why a request head is not relayed, as a status and a reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed {
    pub(crate) status: &'static str,
    pub(crate) reason: &'static str,
}

const fn bad(reason: &'static str) -> Malformed {
    Malformed {
        status: "400 Bad Request",
        reason,
    }
}

impl RequestHead {
    /// Parses the text before the blank line.
    pub(crate) fn parse(raw: &[u8]) -> Result<Self, Malformed> {
        let text = std::str::from_utf8(raw).map_err(|_| bad("the request head is not text"))?;
        let mut lines = text.split("\r\n");
        let mut parts = lines.next().unwrap_or_default().split(' ');
        let (Some(method), Some(target), Some(version), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("the request line is not `METHOD TARGET VERSION`"));
        };
        if method.is_empty() || target.is_empty() || !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
            return Err(bad("the request line is not `METHOD TARGET HTTP/1.x`"));
        }
        let mut headers = Vec::new();
        for line in lines {
            if line.starts_with([' ', '\t']) {
                // A folded line joins the header before it for one reader
                // and starts a new one for another.
                return Err(bad("a header continues on a folded line"));
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err(bad("a header line has no `:`"));
            };
            if name.is_empty() || name.contains([' ', '\t']) || line.contains(['\r', '\n']) {
                return Err(bad("a header name is malformed"));
            }
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
        Ok(Self {
            method: method.to_owned(),
            target: target.to_owned(),
            version: version.to_owned(),
            headers,
        })
    }

    /// Every value of the header `name`.
    fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The length of the body that follows: 0 without `Content-Length`.
    /// A `Transfer-Encoding` is refused: its end is not where the proxy
    /// could stop relaying, and next to a length it is how requests are
    /// smuggled past a proxy.
    pub(crate) fn body_length(&self) -> Result<u64, Malformed> {
        if self.values("transfer-encoding").next().is_some() {
            return Err(Malformed {
                status: "411 Length Required",
                reason: "a request body with a Transfer-Encoding is not relayed; send a Content-Length",
            });
        }
        let mut length = None;
        for value in self.values("content-length") {
            if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("the Content-Length is not a number"));
            }
            let n: u64 = value
                .parse()
                .map_err(|_| bad("the Content-Length is too large"))?;
            if length.is_some_and(|seen| seen != n) {
                return Err(bad("the request has two different Content-Lengths"));
            }
            length = Some(n);
        }
        Ok(length.unwrap_or(0))
    }
}

/// The request head's bytes (without the blank line), and whatever came
/// after it; cut off past [`MAX_HEAD`] bytes or [`HEAD_TIMEOUT`].
pub(crate) async fn read_head(
    client: &mut (impl AsyncRead + Unpin),
) -> io::Result<(Vec<u8>, Vec<u8>)> {
    tokio::time::timeout(HEAD_TIMEOUT, read_unbounded_in_time(client))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "the request head took too long"))?
}

async fn read_unbounded_in_time(
    client: &mut (impl AsyncRead + Unpin),
) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let mut searched: usize = 0;
    loop {
        // Only the new bytes (and the three before them) can complete the
        // blank line: a head sent a byte at a time costs linear work.
        if let Some(end) = buf[searched.saturating_sub(3)..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|at| at + searched.saturating_sub(3))
        {
            let rest = buf.split_off(end + 4);
            buf.truncate(end);
            return Ok((buf, rest));
        }
        searched = buf.len();
        if buf.len() > MAX_HEAD {
            return Err(io::Error::other("the request head is too large"));
        }
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(head: &str) -> Result<RequestHead, Malformed> {
        RequestHead::parse(head.as_bytes())
    }

    #[test]
    fn ambiguous_heads_are_refused_by_class() {
        let refused = [
            // Folded header.
            "GET http://a/ HTTP/1.1\r\nHost: a\r\nX: 1\r\n Host: b",
            "GET http://a/ HTTP/1.1\r\nHost: a\r\n\tX: 1",
            // Request line.
            "GET http://a/ HTTP/1.1 extra",
            "GET  http://a/ HTTP/1.1",
            "GET http://a/",
            "GET http://a/ HTTP/2.0",
            // Header lines.
            "GET http://a/ HTTP/1.1\r\nno colon",
            "GET http://a/ HTTP/1.1\r\nHost : a",
            "GET http://a/ HTTP/1.1\r\n: empty name",
            "GET http://a/ HTTP/1.1\r\nX: a\rb",
        ];
        for head in refused {
            assert!(parse(head).is_err(), "accepted {head:?}");
        }
        assert!(RequestHead::parse(b"GET http://a/ HTTP/1.1\r\nX: \xff").is_err());

        let lengths = [
            ("Content-Length: 5\r\nTransfer-Encoding: chunked", false),
            ("Transfer-Encoding: chunked", false),
            ("Transfer-Encoding: identity", false),
            ("Content-Length: 5\r\nContent-Length: 6", false),
            ("Content-Length: -1", false),
            ("Content-Length: +5", false),
            ("Content-Length: 5 5", false),
            ("Content-Length: 99999999999999999999999", false),
            ("Content-Length: 5\r\nContent-Length: 5", true),
            ("Content-Length: 0", true),
        ];
        for (headers, ok) in lengths {
            let head = parse(&format!("POST http://a/ HTTP/1.1\r\n{headers}")).unwrap();
            assert_eq!(head.body_length().is_ok(), ok, "{headers}");
        }
        let head = parse("GET http://a/x HTTP/1.1\r\nHost:a\r\nAccept: */*").unwrap();
        assert_eq!(head.target, "http://a/x");
        assert_eq!(head.headers[1], ("Accept".into(), "*/*".into()));
        assert_eq!(head.body_length(), Ok(0));
    }
}
