//! Row keys and their order (SPEC.md §5.3), defined once.
//!
//! A key value is read into a [`KeyCell`], a view that borrows what it
//! can: from a parsed value ([`KeyCell::of`]) or from a cell's canonical
//! JSON text ([`KeyCell::of_json`]). [`KeyCell::cmp_sqlite`] is the one
//! SQLite BINARY comparison; [`cmp_cells`] extends it to composite keys.
//! [`RowKey::text`] is the key text that `diff` matches rows on, and
//! [`key_digest`] its 128-bit digest, used both by the duplicate re-scan of
//! a table out of key order and by the diff's hash join. The fast and the
//! full line checks, the assembler and the diff all order keys here.

use std::borrow::Cow;
use std::cmp::Ordering;

use ndarc_json::Value;

use crate::code::Code;
use crate::hash::sha256;

/// One value of a row key, compared as SQLite's BINARY collation orders
/// values: NULL < numbers < text (by UTF-8 bytes) < blobs (by bytes).
/// `-0` and `0` are one value, as in SQLite (and in canonical JSON, which
/// writes both as `0`).
#[derive(Debug, Clone, PartialEq)]
pub enum KeyCell<'a> {
    /// NULL (also what an array or a non-blob object reads as).
    Null,
    /// An INTEGER or REAL value (a boolean reads as 0 or 1).
    Number(f64),
    /// A TEXT value: its UTF-8 bytes, escapes decoded.
    Text(Cow<'a, [u8]>),
    /// A BLOB value: its decoded bytes (or, when its base64 is invalid,
    /// which is reported elsewhere, the base64 text's bytes).
    Blob(Cow<'a, [u8]>),
}

impl<'a> KeyCell<'a> {
    /// The key value of a row cell (`{"blob": …}` decoded).
    pub fn of(v: &'a Value<'_>) -> KeyCell<'a> {
        match v {
            Value::Null | Value::Array(_) => KeyCell::Null,
            Value::Number(n) => KeyCell::Number(*n),
            Value::Bool(b) => KeyCell::Number(f64::from(u8::from(*b))),
            Value::String(s) => KeyCell::Text(Cow::Borrowed(s.as_bytes())),
            Value::Object(o) => match o.get("blob").and_then(Value::as_str) {
                Some(b64) => KeyCell::blob(b64),
                None => KeyCell::Null,
            },
        }
    }

    /// The key value of a cell given as its JSON text (canonical, as in a
    /// verified line), without allocating for numbers and unescaped text.
    /// Reads as [`KeyCell::of`] reads the parsed text.
    pub fn of_json(text: &'a [u8]) -> KeyCell<'a> {
        match text.first() {
            Some(b'"') => {
                let inner = text.get(1..text.len() - 1).unwrap_or_default();
                if !inner.contains(&b'\\') {
                    return KeyCell::Text(Cow::Borrowed(inner));
                }
                match ndarc_json::parse(text) {
                    Ok(Value::String(s)) => KeyCell::Text(Cow::Owned(s.into_owned().into_bytes())),
                    _ => KeyCell::Text(Cow::Borrowed(inner)),
                }
            }
            Some(b'{') => match ndarc_json::parse(text) {
                Ok(v) => match v.get("blob").and_then(Value::as_str) {
                    Some(b64) => KeyCell::blob(b64).into_owned(),
                    None => KeyCell::Null,
                },
                Err(_) => KeyCell::Null,
            },
            Some(b't') => KeyCell::Number(1.0),
            Some(b'f') => KeyCell::Number(0.0),
            Some(b'n' | b'[') | None => KeyCell::Null,
            Some(_) => std::str::from_utf8(text)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .map_or(KeyCell::Null, KeyCell::Number),
        }
    }

    /// A blob from its base64 text.
    pub fn blob(b64: &str) -> KeyCell<'static> {
        KeyCell::Blob(Cow::Owned(
            crate::catalogue::decode_base64(b64).unwrap_or_else(|| b64.as_bytes().to_vec()),
        ))
    }

    /// A copy that borrows nothing.
    pub fn into_owned(self) -> KeyCell<'static> {
        match self {
            KeyCell::Null => KeyCell::Null,
            KeyCell::Number(n) => KeyCell::Number(n),
            KeyCell::Text(t) => KeyCell::Text(Cow::Owned(t.into_owned())),
            KeyCell::Blob(b) => KeyCell::Blob(Cow::Owned(b.into_owned())),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            KeyCell::Null => 0,
            KeyCell::Number(_) => 1,
            KeyCell::Text(_) => 2,
            KeyCell::Blob(_) => 3,
        }
    }

    /// SQLite BINARY order.
    pub fn cmp_sqlite(&self, other: &KeyCell<'_>) -> Ordering {
        match (self, other) {
            // Never NaN: JSON has none.
            (KeyCell::Number(a), KeyCell::Number(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
            (KeyCell::Text(a), KeyCell::Text(b)) | (KeyCell::Blob(a), KeyCell::Blob(b)) => {
                a.as_ref().cmp(b.as_ref())
            }
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }

    /// Appends the value's canonical JSON text.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            KeyCell::Null => out.extend_from_slice(b"null"),
            KeyCell::Number(n) => out.extend_from_slice(ndarc_json::number::format(*n).as_bytes()),
            KeyCell::Text(t) => ndarc_json::write_string(&String::from_utf8_lossy(t), out),
            KeyCell::Blob(b) => {
                out.extend_from_slice(br#"{"blob":""#);
                out.extend_from_slice(crate::catalogue::encode_base64(b).as_bytes());
                out.extend_from_slice(br#""}"#);
            }
        }
    }
}

/// SQLite order of two composite keys: value by value, then the shorter
/// first.
pub(crate) fn cmp_cells(a: &[KeyCell<'_>], b: &[KeyCell<'_>]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = x.cmp_sqlite(y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// A row key: the primary-key values in `pk` order, or the rowid.
#[derive(Debug, Clone, PartialEq)]
pub enum RowKey {
    /// Primary-key values.
    Primary(Vec<KeyCell<'static>>),
    /// A rowid.
    Rowid(i64),
}

impl RowKey {
    /// SQLite order of two keys of the same table.
    pub fn cmp_sqlite(&self, other: &RowKey) -> Ordering {
        match (self, other) {
            (RowKey::Rowid(a), RowKey::Rowid(b)) => a.cmp(b),
            (RowKey::Primary(a), RowKey::Primary(b)) => cmp_cells(a, b),
            (RowKey::Rowid(_), RowKey::Primary(_)) => Ordering::Less,
            (RowKey::Primary(_), RowKey::Rowid(_)) => Ordering::Greater,
        }
    }

    /// The key text, as `diff` shows and matches it: the canonical JSON of
    /// the primary-key values in `pk` order (`[1,"a"]`), or the rowid
    /// (`7`).
    pub fn text(&self) -> String {
        let mut out = Vec::new();
        self.write_text(&mut out);
        String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }

    /// Appends the key text to `out`.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        match self {
            RowKey::Rowid(id) => out.extend_from_slice(id.to_string().as_bytes()),
            RowKey::Primary(cells) => {
                out.push(b'[');
                for (i, c) in cells.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    c.write_json(out);
                }
                out.push(b']');
            }
        }
    }
}

/// The 128-bit digest of a key's text (the first half of its SHA-256): what
/// duplicate detection in a table out of key order, and the diff's hash
/// join, hold instead of the key.
pub fn key_digest(text: &[u8]) -> u128 {
    let d = sha256(text);
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    u128::from_le_bytes(b)
}

/// How a key compares with the previous key of its table, as a finding:
/// equal keys are `duplicate_row_key`; a rowid that does not rise is
/// `rowid_order` (an error); a primary key that falls is `row_key_order` (a
/// warning, given only while `ordered` is still true, since it is reported
/// once per table). Clears `ordered` when the key falls. Returns the
/// finding's code, the member of the row item it concerns and the message.
pub(crate) fn key_step(
    prev: &RowKey,
    key: &RowKey,
    rowid: bool,
    table: &str,
    ordered: &mut bool,
) -> Option<(Code, &'static str, String)> {
    match prev.cmp_sqlite(key) {
        Ordering::Less => None,
        Ordering::Equal => Some((
            Code::DuplicateRowKey,
            if rowid { "rowid" } else { "row" },
            format!(
                "row key {} of table {table:?} repeats the previous row's",
                key.text()
            ),
        )),
        Ordering::Greater => {
            let was = std::mem::replace(ordered, false);
            if rowid {
                Some((
                    Code::RowidOrder,
                    "rowid",
                    format!(
                        "rowid {} of table {table:?} is not greater than the previous {}",
                        key.text(),
                        prev.text()
                    ),
                ))
            } else if was {
                Some((
                    Code::RowKeyOrder,
                    "row",
                    format!("row key {} of table {table:?} sorts before the previous {}; rows are normally in key order", key.text(), prev.text()),
                ))
            } else {
                None
            }
        }
    }
}

/// The keys of one part line: each row's key text and digest, item
/// position and offset in the line.
#[derive(Debug, Default, Clone)]
pub struct PartKeys {
    /// The key texts, one after another.
    text: Vec<u8>,
    keys: Vec<Entry>,
    /// The table has rowids (keys are then at `rowid`, not `row`).
    pub(crate) rowid: bool,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    digest: u128,
    item: u32,
    offset: u32,
    /// End of the key's text in `PartKeys::text` (it starts where the
    /// previous one ends).
    end: u32,
}

/// One key of a [`PartKeys`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartKey<'a> {
    /// [`key_digest`] of the text.
    pub digest: u128,
    /// The item's position in the part.
    pub item: usize,
    /// Offset in the line of the item's `row` (or `rowid`).
    pub offset: u32,
    /// The key text (`[1,"a"]`, or a rowid).
    pub text: &'a str,
}

impl PartKeys {
    /// No keys yet, for a table with rowids or without.
    pub(crate) fn new(rowid: bool) -> PartKeys {
        PartKeys {
            rowid,
            ..PartKeys::default()
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys, in item order.
    pub fn iter(&self) -> impl Iterator<Item = PartKey<'_>> + '_ {
        let mut start = 0usize;
        self.keys.iter().map(move |e| {
            let end = e.end as usize;
            let text = std::str::from_utf8(&self.text[start..end]).unwrap_or_default();
            start = end;
            PartKey {
                digest: e.digest,
                item: e.item as usize,
                offset: e.offset,
                text,
            }
        })
    }

    /// Keeps the first `n` keys.
    pub(crate) fn truncate(&mut self, n: usize) {
        self.keys.truncate(n);
        let end = self.keys.last().map_or(0, |e| e.end as usize);
        self.text.truncate(end);
    }

    /// Adds the key of item `item` at `offset`, its text written by
    /// `write`.
    pub(crate) fn push_key(&mut self, item: usize, offset: u32, write: impl FnOnce(&mut Vec<u8>)) {
        let start = self.text.len();
        write(&mut self.text);
        let (Ok(item), Ok(end)) = (u32::try_from(item), u32::try_from(self.text.len())) else {
            self.text.truncate(start);
            return;
        };
        self.keys.push(Entry {
            digest: key_digest(&self.text[start..]),
            item,
            offset,
            end,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> KeyCell<'static> {
        KeyCell::Text(Cow::Owned(s.as_bytes().to_vec()))
    }

    #[test]
    fn sqlite_binary_order() {
        let n = KeyCell::Number;
        let b = |v: &[u8]| KeyCell::Blob(Cow::Owned(v.to_vec()));
        assert_eq!(KeyCell::Null.cmp_sqlite(&n(-1e300)), Ordering::Less);
        assert_eq!(n(1e300).cmp_sqlite(&t("")), Ordering::Less);
        assert_eq!(t("\u{FFFF}").cmp_sqlite(&b(&[])), Ordering::Less);
        assert_eq!(t("a").cmp_sqlite(&t("B")), Ordering::Greater);
        // Text by UTF-8 bytes, not UTF-16: U+FB33 < U+1F600 in UTF-8.
        assert_eq!(t("\u{FB33}").cmp_sqlite(&t("\u{1F600}")), Ordering::Less);
        assert_eq!(b(&[1, 2]).cmp_sqlite(&b(&[1, 2, 0])), Ordering::Less);
        // One number semantics: -0 is 0, for a value and for a key.
        assert_eq!(n(-0.0).cmp_sqlite(&n(0.0)), Ordering::Equal);
        let k = RowKey::Primary;
        assert_eq!(
            k(vec![n(1.0), t("b")]).cmp_sqlite(&k(vec![n(1.0), t("a")])),
            Ordering::Greater
        );
        assert_eq!(
            k(vec![n(0.0)]).cmp_sqlite(&k(vec![n(-0.0)])),
            Ordering::Equal
        );
        assert_eq!(
            k(vec![n(0.0)]).cmp_sqlite(&k(vec![n(0.0), KeyCell::Null])),
            Ordering::Less
        );
        assert_eq!(
            RowKey::Rowid(3).cmp_sqlite(&RowKey::Rowid(4)),
            Ordering::Less
        );
    }

    /// A cell read from its text and from its parsed value is the same
    /// key value, and the key text is the canonical text.
    #[test]
    fn text_and_value_agree() {
        let texts: [&[u8]; 14] = [
            b"null",
            b"-5",
            b"0",
            b"1.5",
            b"1e+21",
            b"true",
            b"\"\"",
            b"\"A\"",
            b"\"a\\\"b\"",
            b"\"\\u0001\"",
            b"\"\xc3\xa9\"",
            b"\"\xef\xac\xb3\"",
            b"{\"blob\":\"\"}",
            b"{\"blob\":\"AQI=\"}",
        ];
        for a in texts {
            let va = ndarc_json::parse(a).unwrap();
            assert_eq!(KeyCell::of_json(a), KeyCell::of(&va));
            let key = RowKey::Primary(vec![KeyCell::of_json(a).into_owned()]);
            let canon = ndarc_json::to_canonical_vec(&Value::Array(vec![va.clone()]));
            if a != b"true" {
                assert_eq!(
                    key.text().as_bytes(),
                    canon,
                    "{}",
                    String::from_utf8_lossy(a)
                );
            }
            for b in texts {
                let vb = ndarc_json::parse(b).unwrap();
                assert_eq!(
                    KeyCell::of_json(a).cmp_sqlite(&KeyCell::of_json(b)),
                    KeyCell::of(&va).cmp_sqlite(&KeyCell::of(&vb)),
                );
            }
        }
        assert_eq!(KeyCell::of_json(b"-0"), KeyCell::Number(-0.0));
        assert_eq!(RowKey::Rowid(-7).text(), "-7");
        assert_eq!(
            key_digest(b"[1]"),
            key_digest(
                RowKey::Primary(vec![KeyCell::Number(1.0)])
                    .text()
                    .as_bytes()
            )
        );
    }

    #[test]
    fn steps() {
        let k = |x: f64| RowKey::Primary(vec![KeyCell::Number(x)]);
        let mut ordered = true;
        assert_eq!(key_step(&k(1.0), &k(2.0), false, "t", &mut ordered), None);
        let (code, member, _) = key_step(&k(2.0), &k(2.0), false, "t", &mut ordered).unwrap();
        assert_eq!((code, member), (Code::DuplicateRowKey, "row"));
        let (code, _, msg) = key_step(&k(2.0), &k(1.0), false, "t", &mut ordered).unwrap();
        assert_eq!(code, Code::RowKeyOrder);
        assert!(msg.starts_with("row key [1] of table \"t\" sorts before the previous [2]"));
        assert!(!ordered);
        // Once per table: a second descent says nothing.
        assert_eq!(key_step(&k(2.0), &k(1.0), false, "t", &mut ordered), None);
        let (code, member, _) = key_step(
            &RowKey::Rowid(2),
            &RowKey::Rowid(1),
            true,
            "t",
            &mut ordered,
        )
        .unwrap();
        assert_eq!((code, member), (Code::RowidOrder, "rowid"));
    }
}
