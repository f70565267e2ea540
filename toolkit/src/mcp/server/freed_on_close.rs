//! A connection's slots, freed as the server closes it.
//!
//! A connection holds one of the server's connections and one of its
//! client's ([`ClientConnections`](super::connections::ClientConnections))
//! until it ends. Given back when its task ends, they would still be held
//! when the client reads the end of its answer (the server's close), and
//! a client that then opens its next connection at once could be refused
//! the one it had just finished with. Here they are given back as the
//! server starts to close the connection, before the client can see it
//! closed; a connection its client closes gives them back as its task
//! ends.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// `S`, holding `slots` until it is shut down for writing or dropped.
pub(super) struct FreedOnClose<S, T> {
    inner: S,
    slots: Option<T>,
}

impl<S, T> FreedOnClose<S, T> {
    pub(super) fn new(inner: S, slots: T) -> Self {
        Self {
            inner,
            slots: Some(slots),
        }
    }
}

impl<S: AsyncWrite + Unpin, T: Unpin> AsyncWrite for FreedOnClose<S, T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Everything of the answer is written and flushed: what is left
        // is the close, which the client sees as the answer's end.
        self.slots = None;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + Unpin, T: Unpin> AsyncRead for FreedOnClose<S, T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}
