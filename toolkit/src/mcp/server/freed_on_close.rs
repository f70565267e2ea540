//! A connection's part of its client's connections, freed as the server
//! closes it.
//!
//! A connection holds one of the server's connections and one of its
//! client's ([`ClientConnections`](super::connections::ClientConnections))
//! until it ends. Given back when its task ends, its client's would still
//! be held when the client reads the end of its answer (the server's
//! close), and a client that then opens its next connection at once could
//! be refused the one it had just finished with. Here it is given back as
//! the server starts to close the connection, before the client can see
//! it closed; a connection its client closes gives it back as its task
//! ends. The server's is given back only once the socket is closed: given
//! back before, a connection accepted meanwhile would hold a descriptor
//! past the server's bound for as long as the close takes (a thread
//! descheduled there makes that long). A connection that comes in that
//! while waits for it in the listen queue; it is refused only if its
//! client, past its part, would take the reserve, which counts it free
//! only once it is.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// `S`, holding `kept` until it is dropped, after `S`, and `freed` until
/// it is shut down for writing or dropped.
pub(super) struct FreedOnClose<S, K, T> {
    // Fields drop in order: the socket is closed before `_kept` goes.
    inner: S,
    _kept: K,
    freed: Option<T>,
}

impl<S, K, T> FreedOnClose<S, K, T> {
    pub(super) fn new(inner: S, kept: K, freed: T) -> Self {
        Self {
            inner,
            _kept: kept,
            freed: Some(freed),
        }
    }
}

impl<S: AsyncWrite + Unpin, K: Unpin, T: Unpin> AsyncWrite for FreedOnClose<S, K, T> {
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
        self.freed = None;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + Unpin, K: Unpin, T: Unpin> AsyncRead for FreedOnClose<S, K, T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncWriteExt, DuplexStream};
    use tokio::sync::Semaphore;

    use super::*;

    /// A socket that notes, as it is closed, how many of the server's
    /// connections are free.
    struct Socket {
        stream: DuplexStream,
        server: Arc<Semaphore>,
        free_at_close: Arc<AtomicUsize>,
    }

    impl Drop for Socket {
        fn drop(&mut self) {
            self.free_at_close
                .store(self.server.available_permits(), Ordering::SeqCst);
        }
    }

    impl AsyncWrite for Socket {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.stream).poll_write(cx, buf)
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.stream).poll_flush(cx)
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.stream).poll_shutdown(cx)
        }
    }

    #[tokio::test]
    async fn the_clients_connection_is_freed_at_the_close_the_servers_once_the_socket_is_closed() {
        let server = Arc::new(Semaphore::new(1));
        let client = Arc::new(Semaphore::new(1));
        let free_at_close = Arc::new(AtomicUsize::new(usize::MAX));
        let (stream, _peer) = tokio::io::duplex(64);
        let socket = Socket {
            stream,
            server: Arc::clone(&server),
            free_at_close: Arc::clone(&free_at_close),
        };
        let mut connection = FreedOnClose::new(
            socket,
            Arc::clone(&server).try_acquire_owned().unwrap(),
            Arc::clone(&client).try_acquire_owned().unwrap(),
        );
        connection.write_all(b"the answer").await.unwrap();
        assert_eq!(client.available_permits(), 0, "held while answering");
        connection.shutdown().await.unwrap();
        assert_eq!(client.available_permits(), 1, "freed as the close starts");
        assert_eq!(
            server.available_permits(),
            0,
            "held while the socket is open"
        );
        drop(connection);
        assert_eq!(
            free_at_close.load(Ordering::SeqCst),
            0,
            "held until the socket is closed"
        );
        assert_eq!(server.available_permits(), 1, "freed once it is");
    }
}
