//! The hash join's indexes: a waiting row as 40 bytes (its key hash, the
//! digest of its compared cells, its line's number and its item), and the
//! numbering of the part lines those rows are on.

use std::collections::HashMap;

/// A key hash or a row digest (128 bits) as two words: aligned to 8
/// bytes, so that an index slot (key hash and [`Entry`]) is 40 bytes,
/// where a `u128` would align it to 16 and pad it to 48.
pub(super) type Wide = [u64; 2];

/// `x` as two words.
#[inline]
pub(super) fn wide(x: u128) -> Wide {
    [x as u64, (x >> 64) as u64]
}

/// A row key's hash, as an index holds it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct KeyHash(pub(super) Wide);

impl std::hash::Hash for KeyHash {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Already a digest: one word of it is as good an input as two,
        // and half the work for the map's own (keyed) hasher.
        state.write_u64(self.0[0] ^ self.0[1]);
    }
}

/// A side's index: a waiting row by its key hash.
pub(super) type Index = HashMap<KeyHash, Entry>;

/// A row waiting in an index for its match: the digest of its compared
/// cells, and where it is (its line's number in the side's [`Lines`] and
/// its item): 24 bytes.
#[derive(Clone, Copy)]
pub(super) struct Entry {
    pub(super) digest: Wide,
    pub(super) line: u32,
    pub(super) item: u32,
}

/// The offsets of the part lines of a side's table that rows in the
/// index are on, numbered in archive order (rows enter in archive order,
/// so a line is numbered when its first row enters): an [`Entry`] holds a
/// 4-byte number instead of an 8-byte offset.
#[derive(Default)]
pub(super) struct Lines(Vec<u64>);

impl Lines {
    /// The number of the line at `offset` (at or after the last one).
    #[inline]
    pub(super) fn number(&mut self, offset: u64) -> u32 {
        if self.0.last() != Some(&offset) {
            self.0.push(offset);
        }
        u32::try_from(self.0.len() - 1).unwrap_or(u32::MAX)
    }

    /// The offset of line `n`.
    #[inline]
    pub(super) fn offset(&self, n: u32) -> u64 {
        self.0.get(n as usize).copied().unwrap_or(u64::MAX)
    }
}

/// Gives back an index's memory once most of its entries were matched
/// (an index only shrinks when rows are matched): a quarter full, it is
/// made half full, so the shrinking costs a constant per entry.
pub(super) fn trim(index: &mut Index) {
    if index.capacity() > 1 << 12 && index.len() < index.capacity() / 4 {
        index.shrink_to(index.len() * 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_in_order_and_give_back_their_offsets() {
        let mut l = Lines::default();
        assert_eq!(l.number(40), 0);
        assert_eq!(l.number(40), 0);
        assert_eq!(l.number(900), 1);
        assert_eq!((l.offset(0), l.offset(1), l.offset(7)), (40, 900, u64::MAX));
        assert_eq!(std::mem::size_of::<(KeyHash, Entry)>(), 40);
    }
}
