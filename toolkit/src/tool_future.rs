//! [`ToolFuture`]: a tool's future, held in place when it is small.
//!
//! A registry calls its tools through `dyn Tool`, so a tool's future has a
//! type the registry cannot name, and the usual answer is a box: one
//! allocation and one free per call. Most tools' futures are small (the
//! arguments and a little state), and most calls finish on their first
//! poll, so the box is most of what it costs to hold them. A `ToolFuture`
//! keeps a future of up to [`ToolFuture::IN_PLACE`] bytes in a buffer of
//! its own, with the two functions that poll and drop it, and boxes only a
//! larger one.
//!
//! A future may move until it is first polled; after that it is pinned.
//! So the future is written into the buffer when the `ToolFuture` is made
//! (and moves with it until then), and it is polled only through
//! `Pin<&mut ToolFuture>`, which is `!Unpin`: from its first poll to its
//! drop, the buffer does not move.

use std::future::Future;
use std::marker::{PhantomData, PhantomPinned};
use std::mem::{MaybeUninit, align_of, size_of};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::error::ToolError;
use crate::output::ToolOutput;

/// What a tool's future gives.
type Output = Result<ToolOutput, ToolError>;

/// A boxed tool future, as [`Tool::call`](crate::Tool::call) returns it.
pub type BoxedToolFuture<'a> = Pin<Box<dyn Future<Output = Output> + Send + 'a>>;

/// A tool's future, as [`Tool::start`](crate::Tool::start) returns it: held
/// in place when it takes at most [`IN_PLACE`](Self::IN_PLACE) bytes,
/// boxed otherwise. It is `Send`, like the future it holds must be.
///
/// ```
/// use toolsmith::{ToolFuture, ToolOutput};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let name = String::from("Oslo");
/// let future = ToolFuture::new(async move { Ok(ToolOutput::from(name)) });
/// assert!(future.is_in_place());
/// assert_eq!(future.await.unwrap().content, "Oslo");
/// # });
/// ```
pub struct ToolFuture<'a> {
    held: Held<'a>,
    // In place, the future must not move once polled.
    _pinned: PhantomPinned,
}

enum Held<'a> {
    InPlace {
        buffer: Buffer,
        /// Polls the future and writes the answer at the place given, so
        /// it is made where its reader wants it, not copied there.
        poll: unsafe fn(*mut u8, &mut Context<'_>, *mut Poll<Output>),
        drop: unsafe fn(*mut u8),
        // The future borrows for `'a` and is `Send` but not `Sync`, like
        // the box it stands for.
        _future: PhantomData<BoxedToolFuture<'a>>,
    },
    Boxed(BoxedToolFuture<'a>),
}

/// The bytes a future is held in. Aligned for any future whose fields
/// are (pointers, integers, `u128`); a future that needs more is boxed.
///
/// `!Unpin` itself, not only through the `ToolFuture` around it: a future
/// that borrows from its own state holds pointers into these bytes, and a
/// `&mut` to an `Unpin` type would claim them as its own alone, which
/// Rust's aliasing rules forbid while those pointers live.
#[repr(C, align(16))]
struct Buffer(MaybeUninit<[u8; ToolFuture::IN_PLACE]>, PhantomPinned);

impl Buffer {
    /// Where the future starts, without going through a reference to the
    /// bytes (which would, again, claim them).
    fn start(&mut self) -> *mut u8 {
        std::ptr::from_mut(self).cast()
    }
}

impl<'a> ToolFuture<'a> {
    /// The largest future held in place, in bytes. A generated tool's
    /// future holds its arguments and the state of its body between
    /// awaits: a tool that answers without waiting fits (three arguments
    /// take 72 bytes); one that awaits I/O or a timer is mostly larger, and
    /// boxed, where the allocation is small beside the wait.
    pub const IN_PLACE: usize = 96;

    /// Hold `future`: in place if it fits, else in a box.
    #[inline]
    pub fn new<F>(future: F) -> Self
    where
        F: Future<Output = Output> + Send + 'a,
    {
        if size_of::<F>() > Self::IN_PLACE || align_of::<F>() > align_of::<Buffer>() {
            return Self::boxed(Box::pin(future));
        }
        let mut buffer = Buffer(MaybeUninit::uninit(), PhantomPinned);
        // SAFETY: the buffer is large and aligned enough for an `F` (checked
        // above; `repr(C)` puts the bytes first), and is not yet
        // initialized: writing does not drop anything.
        unsafe { buffer.start().cast::<F>().write(future) };
        Self {
            held: Held::InPlace {
                buffer,
                poll: poll_in_place::<F>,
                drop: drop_in_place::<F>,
                _future: PhantomData,
            },
            _pinned: PhantomPinned,
        }
    }

    /// Hold a future that is already boxed, as it is.
    #[inline]
    pub fn boxed(future: BoxedToolFuture<'a>) -> Self {
        Self {
            held: Held::Boxed(future),
            _pinned: PhantomPinned,
        }
    }

    /// Whether the future is held in place (no allocation).
    pub fn is_in_place(&self) -> bool {
        matches!(self.held, Held::InPlace { .. })
    }
}

/// Poll the `F` at `future`, its answer written at `out` (left as it was
/// if the poll panics).
///
/// # Safety
/// `future` points at a live `F` that does not move until it is dropped;
/// `out` is valid for writes.
unsafe fn poll_in_place<F: Future<Output = Output>>(
    future: *mut u8,
    cx: &mut Context<'_>,
    out: *mut Poll<Output>,
) {
    // SAFETY: the caller's promise; the buffer is pinned with its `ToolFuture`.
    unsafe { out.write(Pin::new_unchecked(&mut *future.cast::<F>()).poll(cx)) }
}

/// Drop the `F` at `future` where it is.
///
/// # Safety
/// `future` points at a live `F`, never used again.
unsafe fn drop_in_place<F>(future: *mut u8) {
    // SAFETY: the caller's promise.
    unsafe { std::ptr::drop_in_place(future.cast::<F>()) }
}

impl ToolFuture<'_> {
    /// [`poll`](Future::poll), the answer written at `out` (unless the
    /// tool's poll panics): a future held in place writes it there itself.
    /// A result copied out of the place a function just wrote it, in
    /// pieces, is read back before those writes reach the cache, which
    /// stalls the processor; written where it is read, it is not copied.
    #[inline]
    pub(crate) fn poll_into(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut MaybeUninit<Poll<Output>>,
    ) {
        // SAFETY: nothing is moved out of `self`; the future held in place
        // is polled where it is, pinned as `self` is.
        let this = unsafe { self.get_unchecked_mut() };
        match &mut this.held {
            // SAFETY: `poll` is the function for the type in `buffer`,
            // which holds a live future (it is dropped only with `self`);
            // `out` is a place to write.
            Held::InPlace { buffer, poll, .. } => unsafe {
                poll(buffer.start(), cx, out.as_mut_ptr())
            },
            Held::Boxed(future) => {
                out.write(future.as_mut().poll(cx));
            }
        }
    }
}

impl Future for ToolFuture<'_> {
    type Output = Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Output> {
        let mut out = MaybeUninit::uninit();
        self.poll_into(cx, &mut out);
        // SAFETY: `poll_into` wrote `out`: it returned, so the tool's poll
        // did not panic.
        unsafe { out.assume_init() }
    }
}

impl Drop for ToolFuture<'_> {
    /// Drop the future, a panic in its drop contained: a tool's future is
    /// dropped once the call has its answer (or was stopped by a timeout
    /// or a cancellation), and a value it holds that panics when dropped
    /// must not unwind into the host. (Dropping a tokio runtime on an async
    /// thread panics, for one.)
    fn drop(&mut self) {
        match &mut self.held {
            // SAFETY: `drop` is the function for the type in `buffer`, which
            // holds a live future, dropped here once, where it is (a panic
            // in it leaves it dropped as far as it got, never dropped again).
            Held::InPlace { buffer, drop, .. } => {
                crate::panics::contain(|| unsafe { drop(buffer.start()) });
            }
            Held::Boxed(future) => {
                // Swapped for a future of no size, which allocates nothing,
                // so the tool's is dropped here and not after.
                let future = std::mem::replace(future, Box::pin(std::future::pending()));
                crate::panics::contain(move || std::mem::drop(future));
            }
        }
    }
}

impl std::fmt::Debug for ToolFuture<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolFuture")
            .field("in_place", &self.is_in_place())
            .finish()
    }
}

impl<'a> From<BoxedToolFuture<'a>> for ToolFuture<'a> {
    fn from(future: BoxedToolFuture<'a>) -> Self {
        Self::boxed(future)
    }
}
