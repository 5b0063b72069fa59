//! Row keys as spans of a line: order, equality and text, through the one
//! key order and key digest of `ndarc_format::key`.

use std::cmp::Ordering;

use ndarc_format::key::KeyCell;

use crate::scan::{slice, Span};

/// A row key in some buffer: the rowid, or the primary-key cells.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyRef<'p> {
    /// The buffer the spans point into.
    pub(crate) bytes: &'p [u8],
    /// The rowid and its text, for rowid tables.
    pub(crate) rowid: Option<(i64, Span)>,
    /// Spans of the primary-key cells, in `pk` order.
    pub(crate) pk: &'p [Span],
}

impl KeyRef<'_> {
    /// Whether the two keys have the same text (the key `diffArchives`
    /// matches rows by).
    pub(crate) fn same(&self, other: &KeyRef<'_>) -> bool {
        match (self.rowid, other.rowid) {
            (Some((a, _)), Some((b, _))) => a == b,
            (None, None) => {
                self.pk.len() == other.pk.len()
                    && self
                        .pk
                        .iter()
                        .zip(other.pk)
                        .all(|(a, b)| slice(self.bytes, *a) == slice(other.bytes, *b))
            }
            _ => false,
        }
    }

    /// A total order: rowids by value, before primary keys; primary keys
    /// in SQLite BINARY order component by component
    /// ([`KeyCell::cmp_sqlite`]), ties broken by text.
    pub(crate) fn cmp(&self, other: &KeyRef<'_>) -> Ordering {
        match (self.rowid, other.rowid) {
            (Some((a, _)), Some((b, _))) => a.cmp(&b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => {
                for (a, b) in self.pk.iter().zip(other.pk) {
                    let (ta, tb) = (slice(self.bytes, *a), slice(other.bytes, *b));
                    if ta == tb {
                        continue;
                    }
                    let o = KeyCell::of_json(ta)
                        .cmp_sqlite(&KeyCell::of_json(tb))
                        .then_with(|| ta.cmp(tb));
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                self.pk.len().cmp(&other.pk.len())
            }
        }
    }

    /// The key text: the canonical JSON of the primary-key values in `pk`
    /// order (`[1,"a"]`), or the rowid (`7`).
    pub(crate) fn text(&self) -> String {
        let mut out = Vec::new();
        self.write_text(&mut out);
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// [`ndarc_format::key::key_digest`] of the key text: the same digest
    /// the verifier's duplicate re-scan uses.
    pub(crate) fn digest(&self) -> u128 {
        let mut text = Vec::new();
        self.write_text(&mut text);
        ndarc_format::key::key_digest(&text)
    }

    /// Appends the key text to `out`.
    pub(crate) fn write_text(&self, out: &mut Vec<u8>) {
        if let Some((id, span)) = self.rowid {
            let t = slice(self.bytes, span);
            if t.is_empty() {
                out.extend_from_slice(id.to_string().as_bytes());
            } else {
                out.extend_from_slice(t);
            }
            return;
        }
        out.push(b'[');
        for (i, s) in self.pk.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let t = slice(self.bytes, *s);
            out.extend_from_slice(if t.is_empty() { b"null" } else { t });
        }
        out.push(b']');
    }

    /// A copy that owns its bytes.
    pub(crate) fn to_owned_key(self) -> OwnedKey {
        let mut bytes = Vec::new();
        let mut pk = Vec::with_capacity(self.pk.len());
        for s in self.pk {
            let start = bytes.len() as u32;
            bytes.extend_from_slice(slice(self.bytes, *s));
            pk.push((start, bytes.len() as u32));
        }
        let rowid = self.rowid.map(|(id, s)| {
            let start = bytes.len() as u32;
            bytes.extend_from_slice(slice(self.bytes, s));
            (id, (start, bytes.len() as u32))
        });
        OwnedKey { bytes, rowid, pk }
    }
}

/// A row key that owns its bytes (the last key of a part, kept to check
/// order across part boundaries).
#[derive(Debug, Clone, Default)]
pub(crate) struct OwnedKey {
    bytes: Vec<u8>,
    rowid: Option<(i64, Span)>,
    pk: Vec<Span>,
}

impl OwnedKey {
    /// The key as a [`KeyRef`].
    pub(crate) fn as_ref(&self) -> KeyRef<'_> {
        KeyRef {
            bytes: &self.bytes,
            rowid: self.rowid,
            pk: &self.pk,
        }
    }
}

/// A 128-bit digest of a row's compared cells (the first half of the
/// SHA-256 of their length-prefixed texts): rows are equal on those cells
/// when their digests are.
pub(crate) fn digest128(parts: &[&[u8]]) -> u128 {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    let d = h.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    u128::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        let b = br#"1"a"2"b"#;
        let k1 = KeyRef {
            bytes: b,
            rowid: None,
            pk: &[(0, 1), (1, 4)],
        };
        let k2 = KeyRef {
            bytes: b,
            rowid: None,
            pk: &[(4, 5), (5, 8)],
        };
        assert_eq!(k1.text(), r#"[1,"a"]"#);
        assert_eq!(k1.cmp(&k2), Ordering::Less);
        assert!(!k1.same(&k2));
        let o = k2.to_owned_key();
        assert!(o.as_ref().same(&k2));
        assert_eq!(o.as_ref().cmp(&k2), Ordering::Equal);
        let r = KeyRef {
            bytes: b"17",
            rowid: Some((17, (0, 2))),
            pk: &[],
        };
        assert_eq!(r.text(), "17");
        assert_eq!(r.digest(), ndarc_format::key::key_digest(b"17"));
        assert_eq!(k1.digest(), ndarc_format::key::key_digest(br#"[1,"a"]"#));
        assert_eq!(r.cmp(&k1), Ordering::Less);
    }
}
