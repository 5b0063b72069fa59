//! Row keys and their order (SPEC.md §5.3).

use std::cmp::Ordering;

use ndarc_json::Value;

use crate::hash::sha256;

/// One component of a row key, compared as SQLite's BINARY collation orders
/// values: NULL < numbers < text (by UTF-8 bytes) < blobs (by bytes).
#[derive(Debug, Clone, PartialEq)]
pub enum KeyPart {
    /// NULL.
    Null,
    /// An INTEGER or REAL value.
    Number(f64),
    /// A TEXT value.
    Text(String),
    /// A BLOB value (decoded bytes).
    Blob(Vec<u8>),
}

impl KeyPart {
    /// The key part of a row cell (`{"blob": …}` decoded; an invalid blob
    /// compares as its base64 text bytes, which is reported elsewhere).
    pub fn of(v: &Value<'_>) -> KeyPart {
        match v {
            Value::Null => KeyPart::Null,
            Value::Number(n) => KeyPart::Number(*n),
            Value::String(s) => KeyPart::Text(s.to_string()),
            Value::Object(o) => match o.get("blob").and_then(Value::as_str) {
                Some(b64) => KeyPart::Blob(
                    crate::catalogue::decode_base64(b64).unwrap_or_else(|| b64.as_bytes().to_vec()),
                ),
                None => KeyPart::Null,
            },
            Value::Bool(b) => KeyPart::Number(f64::from(u8::from(*b))),
            Value::Array(_) => KeyPart::Null,
        }
    }

    fn rank(&self) -> u8 {
        match self {
            KeyPart::Null => 0,
            KeyPart::Number(_) => 1,
            KeyPart::Text(_) => 2,
            KeyPart::Blob(_) => 3,
        }
    }

    /// SQLite BINARY order.
    pub fn cmp_sqlite(&self, other: &KeyPart) -> Ordering {
        match (self, other) {
            (KeyPart::Number(a), KeyPart::Number(b)) => a.total_cmp(b).then(Ordering::Equal),
            (KeyPart::Text(a), KeyPart::Text(b)) => a.as_bytes().cmp(b.as_bytes()),
            (KeyPart::Blob(a), KeyPart::Blob(b)) => a.cmp(b),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

/// A row key: the primary-key values in `pk` order, or the rowid.
#[derive(Debug, Clone, PartialEq)]
pub enum RowKey {
    /// Primary-key values.
    Primary(Vec<KeyPart>),
    /// A rowid.
    Rowid(i64),
}

impl RowKey {
    /// SQLite order of two keys of the same table.
    pub fn cmp_sqlite(&self, other: &RowKey) -> Ordering {
        match (self, other) {
            (RowKey::Rowid(a), RowKey::Rowid(b)) => a.cmp(b),
            (RowKey::Primary(a), RowKey::Primary(b)) => {
                for (x, y) in a.iter().zip(b) {
                    let o = cmp_number_zero(x, y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            (RowKey::Rowid(_), RowKey::Primary(_)) => Ordering::Less,
            (RowKey::Primary(_), RowKey::Rowid(_)) => Ordering::Greater,
        }
    }
}

/// Two key parts in SQLite order, -0 and 0 being one value (the
/// comparison [`RowKey::cmp_sqlite`] makes part by part).
pub(crate) fn cmp_number_zero(a: &KeyPart, b: &KeyPart) -> Ordering {
    match (a, b) {
        (KeyPart::Number(x), KeyPart::Number(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        _ => a.cmp_sqlite(b),
    }
}

/// The row key as text, as `diff` shows and matches it: the canonical JSON
/// of the primary-key values in `pk` order (`[1,"a"]`), or the rowid (`7`).
pub fn key_text(values: &[&Value<'_>]) -> String {
    let arr = Value::Array(values.iter().map(|v| (*v).clone()).collect());
    ndarc_json::to_canonical_string(&arr)
}

/// A 128-bit digest of a key's text, for duplicate detection in tables whose
/// rows are not in key order.
pub fn key_digest(text: &[u8]) -> u128 {
    let d = sha256(text);
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    u128::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_binary_order() {
        let n = |x: f64| KeyPart::Number(x);
        let t = |s: &str| KeyPart::Text(s.into());
        let b = |v: &[u8]| KeyPart::Blob(v.to_vec());
        assert_eq!(KeyPart::Null.cmp_sqlite(&n(-1e300)), Ordering::Less);
        assert_eq!(n(1e300).cmp_sqlite(&t("")), Ordering::Less);
        assert_eq!(t("\u{FFFF}").cmp_sqlite(&b(&[])), Ordering::Less);
        assert_eq!(t("a").cmp_sqlite(&t("B")), Ordering::Greater);
        // Text by UTF-8 bytes, not UTF-16: U+FB33 < U+1F600 in UTF-8.
        assert_eq!(t("\u{FB33}").cmp_sqlite(&t("\u{1F600}")), Ordering::Less);
        assert_eq!(b(&[1, 2]).cmp_sqlite(&b(&[1, 2, 0])), Ordering::Less);
        let k = |v: Vec<KeyPart>| RowKey::Primary(v);
        assert_eq!(
            k(vec![n(1.0), t("b")]).cmp_sqlite(&k(vec![n(1.0), t("a")])),
            Ordering::Greater
        );
        assert_eq!(
            k(vec![n(0.0)]).cmp_sqlite(&k(vec![n(-0.0)])),
            Ordering::Equal
        );
        assert_eq!(
            RowKey::Rowid(3).cmp_sqlite(&RowKey::Rowid(4)),
            Ordering::Less
        );
    }
}
