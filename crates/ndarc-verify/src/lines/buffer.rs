//! The bytes of a line, and the pool of buffers they are read or copied
//! into.

use std::ops::Deref;
use std::sync::{Arc, Mutex};

/// The bytes of a line: borrowed from a slice, a range of a file's read
/// block, or copied out of a stream's read buffer into a pooled buffer.
/// Cloning shares the bytes.
#[derive(Clone)]
pub struct LineBytes<'a>(pub(super) Repr<'a>);

#[derive(Clone)]
pub(super) enum Repr<'a> {
    Borrowed(&'a [u8]),
    Owned(Arc<Pooled>),
    Shared {
        block: Arc<Pooled>,
        start: usize,
        end: usize,
    },
}

impl Deref for LineBytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Borrowed(b) => b,
            Repr::Owned(v) => &v.buf,
            Repr::Shared { block, start, end } => &block.buf[*start..*end],
        }
    }
}

impl LineBytes<'_> {
    /// The first `len` bytes (no more than there are).
    pub(super) fn truncated(self, len: usize) -> Self {
        LineBytes(match self.0 {
            Repr::Borrowed(b) => Repr::Borrowed(&b[..len.min(b.len())]),
            Repr::Owned(mut v) => match Arc::get_mut(&mut v) {
                Some(p) => {
                    p.buf.truncate(len);
                    Repr::Owned(v)
                }
                None => Repr::Owned(Arc::new(v.pool.copy(&v.buf[..len.min(v.buf.len())]))),
            },
            Repr::Shared { block, start, end } => Repr::Shared {
                block,
                start,
                end: end.min(start.saturating_add(len)),
            },
        })
    }
}

/// Capacity the pool keeps at most: the largest window of lines in flight
/// of a verification (SPEC.md §11). Blocks come back from lines that were
/// in flight together, so the pool never holds more than was in use at
/// once, and keeps every block a verification needs again.
pub(super) const POOL_BYTES: usize = 64 << 20;

/// Line buffers given back by dropped lines.
#[derive(Default)]
pub(super) struct Pool {
    pub(super) free: Mutex<(Vec<Vec<u8>>, usize)>,
    /// Buffers allocated, rather than reused (for the tests).
    pub(super) fresh: std::sync::atomic::AtomicUsize,
}

impl Pool {
    /// A free buffer of at least `len` bytes of capacity, if there is one.
    fn reuse(&self, len: usize) -> Option<Vec<u8>> {
        let mut g = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let (list, held) = &mut *g;
        let i = list.iter().rposition(|b| b.capacity() >= len)?;
        let b = list.swap_remove(i);
        *held -= b.capacity();
        Some(b)
    }

    /// Frees the free buffers of less than `len` bytes. A
    /// file's blocks only grow (a line longer than a block grows it, and
    /// the blocks after it keep that size): smaller blocks left in the pool
    /// would never be used again, yet fill it, so that the larger blocks
    /// coming back could not be kept (a 16 MiB part's blocks were then
    /// allocated and freed for every line, beside 32 MiB of idle 8 MiB
    /// blocks).
    fn evict_below(&self, len: usize) {
        let mut g = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let (list, held) = &mut *g;
        list.retain(|b| {
            let keep = b.capacity() >= len;
            if !keep {
                *held -= b.capacity();
            }
            keep
        });
    }

    /// A buffer holding a copy of `bytes`: a free one large enough when
    /// there is one.
    pub(super) fn copy(self: &Arc<Self>, bytes: &[u8]) -> Pooled {
        let mut buf = self.reuse(bytes.len()).unwrap_or_default();
        buf.clear();
        if buf.capacity() < bytes.len() {
            buf.reserve_exact(size_class(bytes.len()));
        }
        buf.extend_from_slice(bytes);
        Pooled {
            buf,
            pool: Arc::clone(self),
        }
    }

    /// A read block of at least `len` bytes (all of a reused buffer's
    /// capacity), beginning with a copy of `head`.
    pub(super) fn block(self: &Arc<Self>, len: usize, head: &[u8]) -> Pooled {
        let len = len.max(head.len());
        let reused = self.reuse(len);
        if reused.is_none() {
            self.evict_below(len);
        }
        let mut buf = match reused {
            Some(b) => b,
            None => {
                self.fresh
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Vec::with_capacity(size_class(len))
            }
        };
        // Zeroes only what was never written: a block comes back whole.
        buf.resize(buf.capacity(), 0);
        buf[..head.len()].copy_from_slice(head);
        Pooled {
            buf,
            pool: Arc::clone(self),
        }
    }
}

/// The capacity a new buffer for a line of `len` bytes gets: `len` rounded
/// up to an eighth of the power of two below it. Lines of an archive are of
/// similar sizes; allocated exactly, a buffer fits no longer line, so the
/// pool filled with buffers it could not reuse while new ones were
/// allocated. Rounded, at most 1/8 is unused.
pub(super) fn size_class(len: usize) -> usize {
    let step = (len.max(64).next_power_of_two() / 16).max(8);
    len.div_ceil(step).saturating_mul(step)
}

/// A line buffer or read block that returns to its pool when dropped.
pub(super) struct Pooled {
    pub(super) buf: Vec<u8>,
    pub(super) pool: Arc<Pool>,
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        let cap = buf.capacity();
        if cap == 0 {
            return;
        }
        let mut g = self.pool.free.lock().unwrap_or_else(|e| e.into_inner());
        let (list, held) = &mut *g;
        if *held + cap <= POOL_BYTES {
            *held += cap;
            list.push(buf);
        }
    }
}

impl std::fmt::Debug for LineBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LineBytes({} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_round_up_by_at_most_an_eighth() {
        for len in (0..5000).chain([157_603, 1 << 20, (16 << 20) + 1]) {
            let c = size_class(len);
            assert!(c >= len, "{len}");
            assert!(c - len <= len / 8 + 8, "{len} -> {c}");
        }
        // Lines of similar size share a class.
        assert_eq!(size_class(157_603), size_class(160_000));
    }
}
