//! The rows a table's diff found: added and removed (by position and key,
//! with their contents while kept) and changed.

use ndarc_json::OwnedValue;

use super::pair::row_value;
use crate::model::RowChange;
use crate::side::PartRows;

/// A row's position: line offset and item.
pub(super) type Pos = (u64, u32);

/// A row added or removed: where, its key, and its contents when kept.
pub(super) type Keyed = (Pos, String, Option<OwnedValue>);

/// The rows found so far.
#[derive(Default)]
pub(super) struct Acc {
    pub(super) added: Vec<Keyed>,
    pub(super) removed: Vec<Keyed>,
    pub(super) changed: Vec<(Pos, RowChange)>,
    /// Contents kept per kind (added, removed).
    pub(super) contents: usize,
}

impl Acc {
    /// The contents of row `i` of `p` when `list` keeps more.
    #[inline]
    fn content(&self, list: &[Keyed], p: &PartRows, i: usize) -> Option<OwnedValue> {
        (list.len() < self.contents).then(|| row_value(p, i))
    }

    /// Records row `i` of `p` (its key `key`) as added.
    #[inline]
    pub(super) fn add(&mut self, p: &PartRows, i: usize, key: String) {
        let c = self.content(&self.added, p, i);
        self.added.push(((p.offset, p.rows[i].item), key, c));
    }

    /// Records row `i` of `p` (its key `key`) as removed.
    #[inline]
    pub(super) fn remove(&mut self, p: &PartRows, i: usize, key: String) {
        let c = self.content(&self.removed, p, i);
        self.removed.push(((p.offset, p.rows[i].item), key, c));
    }
}
