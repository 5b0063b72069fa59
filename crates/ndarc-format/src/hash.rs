//! The two hash constructions of the closing line (SPEC.md §7).
//!
//! Both are a SHA-256 over a list of 32-byte SHA-256 digests, so every term
//! can be computed in parallel (or as parts arrive) and the outer hash is a
//! cheap sequential pass.

use sha2::{Digest, Sha256};

/// A 32-byte SHA-256 digest.
pub type Digest32 = [u8; 32];

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> Digest32 {
    Sha256::digest(bytes).into()
}

/// Lowercase hex of a digest.
pub fn hex(d: &Digest32) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(64);
    for b in d {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

/// Whether `s` is 64 lowercase hex digits.
pub(crate) fn is_hex_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Builds `archiveHash = hex(D(D(manifest line) ‖ D(part 0) ‖ …))` from the
/// line digests, fed in archive order.
#[derive(Clone, Default)]
pub struct ArchiveHasher {
    outer: Sha256,
}

impl ArchiveHasher {
    /// A hasher with no terms yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the digest of the next line (manifest first, then parts in index
    /// order), each line's bytes without its LF.
    pub(crate) fn add_line_digest(&mut self, d: &Digest32) {
        self.outer.update(d);
    }

    /// Adds a line by its bytes.
    pub fn add_line(&mut self, line: &[u8]) {
        self.add_line_digest(&sha256(line));
    }

    /// The hex digest.
    pub fn finish(self) -> String {
        hex(&self.outer.finalize().into())
    }
}

/// Builds `contentHash = hex(D(D(canon(header)) ‖ D(canon(r₀)) ‖ …))`.
///
/// The first term is the digest of the canonical header (see
/// [`crate::catalogue::content_header_digest`]); then one term per row item, in archive order,
/// the digest of the canonical `{row, rowid?, table}` (see
/// [`row_content_digest`]).
#[derive(Clone, Default)]
pub struct ContentHasher {
    outer: Sha256,
}

impl ContentHasher {
    /// Starts with the digest of the canonical header.
    pub fn new(header_digest: &Digest32) -> Self {
        let mut outer = Sha256::new();
        outer.update(header_digest);
        ContentHasher { outer }
    }

    /// Adds the digest of the next row.
    pub fn add_row_digest(&mut self, d: &Digest32) {
        self.outer.update(d);
    }

    /// Adds the digests of the next rows, in order (one call: SHA-256 then
    /// runs over whole blocks instead of two digests at a time).
    pub fn add_row_digests(&mut self, ds: &[Digest32]) {
        self.outer.update(ds.as_flattened());
    }

    /// The hex digest.
    pub fn finish(self) -> String {
        hex(&self.outer.finalize().into())
    }
}

/// The content digest of one row: SHA-256 of the canonical JSON of
/// `{"row":ROW,"rowid":N,"table":NAME}` (without `rowid` for tables that have
/// none), where `row_canonical` is the canonical text of the row object and
/// `table_canonical` the canonical JSON string of the table name (quotes
/// included).
///
/// The pieces are fed to SHA-256 directly: a verifier that has checked the
/// row item's line is canonical slices them out of the line without
/// re-serializing.
pub fn row_content_digest(
    row_canonical: &[u8],
    rowid: Option<i64>,
    table_canonical: &[u8],
) -> Digest32 {
    row_content_digest_number(row_canonical, rowid.map(|r| r as f64), table_canonical)
}

/// [`row_content_digest`] with the rowid as the JSON number the item
/// carries, safe or not, so a row whose rowid breaks a rule still adds the
/// term its canonical form gives.
pub(crate) fn row_content_digest_number(
    row_canonical: &[u8],
    rowid: Option<f64>,
    table_canonical: &[u8],
) -> Digest32 {
    let mut id = Vec::with_capacity(24);
    if let Some(n) = rowid {
        ndarc_json::number::write(n, &mut id);
    }
    let mut h = Sha256::new();
    let rowid_text = rowid.is_some().then_some(&id[..]);
    for piece in row_content_pieces(row_canonical, rowid_text, table_canonical) {
        h.update(piece);
    }
    h.finalize().into()
}

/// The pieces of a row's content message, `{"row":ROW,"rowid":N,"table":T}`
/// (the `rowid` member only when `rowid_text` is given), in order; empty
/// pieces stand for what is absent. The one definition of the message,
/// for [`row_content_digest_number`] and for the verifier's fast path,
/// which pads the same pieces for its interleaved hashing.
pub fn row_content_pieces<'a>(
    row_canonical: &'a [u8],
    rowid_text: Option<&'a [u8]>,
    table_canonical: &'a [u8],
) -> [&'a [u8]; 7] {
    [
        b"{\"row\":",
        row_canonical,
        if rowid_text.is_some() {
            b",\"rowid\":"
        } else {
            b""
        },
        rowid_text.unwrap_or_default(),
        b",\"table\":",
        table_canonical,
        b"}",
    ]
}

/// The row content message of a canonical row item whose text from its
/// `"row"` member to its closing brace is `item_tail`
/// (`"row":ROW[,"rowid":N],"table":T}`): `{` and then that text, as two
/// pieces. Canonical member order puts `row`, `rowid` and `table` last in
/// an item, in that order, and writes them as [`row_content_pieces`] does,
/// so the message is the item's own text but for its first byte. The fast
/// path hashes it from the line in one copy, not seven pieces.
pub(crate) fn row_content_in_item(item_tail: &[u8]) -> [&[u8]; 2] {
    [b"{", item_tail]
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarc_json::{parse, to_canonical_vec};

    #[test]
    fn row_content_is_the_tail_of_a_canonical_item() {
        for (item, rowid) in [
            (
                &br#"{"index":3,"kind":"row","row":{"a":1,"b":"x"},"rowid":7,"table":"t"}"#[..],
                Some(&b"7"[..]),
            ),
            (br#"{"index":0,"kind":"row","row":{},"table":"q\"x"}"#, None),
        ] {
            let v = parse(item).unwrap();
            assert_eq!(to_canonical_vec(&v), item, "the item is canonical");
            let at = item.windows(6).position(|w| w == br#""row":"#).unwrap();
            let row_end = at + 6 + item[at + 6..].iter().position(|&b| b == b'}').unwrap() + 1;
            let table = &item[item.len()
                - 1
                - item[..item.len() - 1]
                    .iter()
                    .rev()
                    .position(|&b| b == b':')
                    .unwrap()..item.len() - 1];
            let whole: Vec<u8> = row_content_pieces(&item[at + 6..row_end], rowid, table).concat();
            assert_eq!(row_content_in_item(&item[at..]).concat(), whole);
        }
    }

    #[test]
    fn row_digest_matches_canonical_serialization() {
        let v = parse(br#"{"table":"t","rowid":7,"row":{"b":"x","a":1}}"#).unwrap();
        let expected = sha256(&to_canonical_vec(&v));
        let got = row_content_digest(br#"{"a":1,"b":"x"}"#, Some(7), br#""t""#);
        assert_eq!(got, expected);
        let v = parse(br#"{"table":"t","row":{}}"#).unwrap();
        assert_eq!(
            row_content_digest(b"{}", None, br#""t""#),
            sha256(&to_canonical_vec(&v))
        );
    }

    #[test]
    fn hex_of_empty_sha() {
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(is_hex_digest(&hex(&sha256(b"x"))));
        assert!(!is_hex_digest("E3B0"));
    }
}
