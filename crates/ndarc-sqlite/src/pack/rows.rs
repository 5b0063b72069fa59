//! Encoding cells and row items as the producer does, with the row-level
//! refusals (`unsafe_integer`, `row_type`, `row_not_null`; SPEC.md §13.4),
//! and the refusals found row by row (`row_part_too_large`,
//! `duplicate_row_key`).

use ndarc_format::pack::{push_base64, RowPacker};
use ndarc_format::Affinity;
use ndarc_json::{number, write_string, write_string_bytes};
use rusqlite::types::ValueRef;

use super::refuse::{refuse, sql_error};
use super::table::Table;
use crate::Error;

/// A row as the table's SELECT reads it: column 0 the rowid (or NULL),
/// column `k + 1` cell `k`. Either SQLite's row or a copy of it passed to
/// another thread ([`super::batch`]).
pub(super) trait RowCells {
    /// Column `i` of the SELECT.
    fn cell(&self, i: usize) -> Result<ValueRef<'_>, Error>;
}

impl RowCells for rusqlite::Row<'_> {
    fn cell(&self, i: usize) -> Result<ValueRef<'_>, Error> {
        self.get_ref(i).map_err(sql_error)
    }
}

/// Where a row is, for messages.
pub(super) fn place(rowid: Option<i64>, index: u64) -> String {
    match rowid {
        Some(r) => format!("at rowid {r}"),
        None => format!("in row {index} of the table's key order"),
    }
}

fn describe(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "null".to_string(),
        ValueRef::Integer(i) => format!("the integer {i}"),
        ValueRef::Real(f) => format!("the real {f}"),
        ValueRef::Text(b) => {
            let s = String::from_utf8_lossy(b);
            let short: String = s.chars().take(40).collect();
            if short.len() < s.len() {
                format!("the text {short:?}…")
            } else {
                format!("the text {short:?}")
            }
        }
        ValueRef::Blob(b) => format!("a blob of {} bytes", b.len()),
    }
}

/// The integer the producer reads from an INTEGER-affinity cell through
/// `CAST(… AS TEXT)`: `/^-?\d+$/` and a safe integer, or `None`.
fn integer_cell(v: ValueRef<'_>) -> Option<f64> {
    match v {
        ValueRef::Integer(i) => {
            let f = i as f64;
            (i.unsigned_abs() < (1u64 << 53)).then_some(f)
        }
        // SQLite writes a REAL cast to text with a '.' or an exponent.
        ValueRef::Real(_) | ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => {
            let digits = b.strip_prefix(b"-").unwrap_or(b);
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let s = std::str::from_utf8(b).ok()?;
            let f: f64 = s.parse().ok()?;
            ndarc_json::safe_integer(f).map(|_| f)
        }
    }
}

/// The length of `s` as [`write_string`] writes it, quotes included.
///
/// Most text needs no escape: 64 bytes at a time are tested for one with
/// a loop the compiler turns into vector compares, and only a block that
/// has one is counted byte by byte (a byte-by-byte count of all text was
/// 12 % of packing blob-heavy rows).
fn string_len(s: &[u8]) -> usize {
    fn escaped(b: u8) -> usize {
        match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 1,
            0..=0x1F => 5,
            _ => 0,
        }
    }
    let mut extra = 0;
    let mut blocks = s.chunks_exact(64);
    for block in &mut blocks {
        let any = block
            .iter()
            .fold(false, |a, &b| a | (b < 0x20) | (b == b'"') | (b == b'\\'));
        if any {
            extra += block.iter().map(|&b| escaped(b)).sum::<usize>();
        }
    }
    extra += blocks
        .remainder()
        .iter()
        .map(|&b| escaped(b))
        .sum::<usize>();
    2 + s.len() + extra
}

/// The length of `{"blob":"BASE64"}` for `n` bytes.
fn blob_len(n: usize) -> usize {
    br#"{"blob":""#.len() + n.div_ceil(3) * 4 + br#""}"#.len()
}

/// An encoded row item: the byte ranges of the row object and of the rowid
/// text within the buffer, and the item's length.
pub(super) struct Encoded {
    pub(super) row: std::ops::Range<usize>,
    pub(super) rowid: std::ops::Range<usize>,
    pub(super) len: usize,
}

/// Encodes one row item into `buf` (cleared first), checking it as
/// `encodedRow`, `validateRow` and `nextItems` do. With `measure`, text and
/// blob cells are only measured, not written (the first pass needs the
/// item's length alone), so `buf` is not the item.
pub(super) fn encode_row<R: RowCells + ?Sized>(
    t: &Table,
    row: &R,
    index: u64,
    buf: &mut Vec<u8>,
    measure: bool,
) -> Result<Encoded, Error> {
    let rowid = match row.cell(0)? {
        ValueRef::Integer(i) => Some(i),
        _ => None,
    };
    check_integers(t, row, rowid, index)?;
    check_types(t, row, rowid, index)?;
    check_rowid(t, rowid)?;
    // The canonical item: {"index","kind","row","rowid"?,"table"}.
    buf.clear();
    buf.extend_from_slice(b"{\"index\":");
    number::write(index as f64, buf);
    buf.extend_from_slice(b",\"kind\":\"row\",\"row\":");
    let row_start = buf.len();
    let mode = if measure { Mode::Measure } else { Mode::Whole };
    let mut unwritten = write_row(t, row, buf, mode)?;
    // Text written whole is checked as UTF-8 once for the row (see
    // `Mode::Whole`); a row with text that is not is written again, each
    // such cell as the producer reads it (U+FFFD for each bad sequence).
    if !measure && simdutf8::basic::from_utf8(&buf[row_start..]).is_err() {
        buf.truncate(row_start);
        unwritten = write_row(t, row, buf, Mode::Cells)?;
    }
    let row_end = buf.len();
    let mut rowid_range = row_end..row_end;
    if t.rowid_alias.is_some() {
        buf.extend_from_slice(b",\"rowid\":");
        let s = buf.len();
        number::write(rowid.unwrap_or(0) as f64, buf);
        rowid_range = s..buf.len();
    }
    buf.extend_from_slice(b",\"table\":");
    buf.extend_from_slice(&t.name_json);
    buf.push(b'}');
    Ok(Encoded {
        row: row_start..row_end,
        rowid: rowid_range,
        len: buf.len() + unwritten,
    })
}

/// `encodedRow`: INTEGER cells first, in table order, each a safe integer.
#[inline]
fn check_integers<R: RowCells + ?Sized>(
    t: &Table,
    row: &R,
    rowid: Option<i64>,
    index: u64,
) -> Result<(), Error> {
    for (k, &ci) in t.cells.iter().enumerate() {
        let c = &t.columns[ci];
        if c.affinity != Affinity::Integer {
            continue;
        }
        let v = row.cell(k + 1)?;
        if !matches!(v, ValueRef::Null) && integer_cell(v).is_none() {
            return Err(refuse(
                "unsafe_integer",
                &t.name,
                Some(&c.name),
                rowid,
                format!(
                    "column {}.{} ({}, INTEGER affinity) holds {} {}, which is not a safe integer (|n| ≤ 2^53−1)",
                    t.name, c.name, c.decl, describe(v), place(rowid, index)
                ),
            ));
        }
    }
    Ok(())
}

/// `validateRow`, in table order: NOT NULL, and each cell's storage class
/// against its column's affinity.
#[inline]
fn check_types<R: RowCells + ?Sized>(
    t: &Table,
    row: &R,
    rowid: Option<i64>,
    index: u64,
) -> Result<(), Error> {
    for (k, &ci) in t.cells.iter().enumerate() {
        let c = &t.columns[ci];
        let v = row.cell(k + 1)?;
        // What the refusal says to do: change the data or the declared
        // type, or leave the column out when the producer allows it (a
        // nullable, stored column outside the primary key), else the table.
        let leave_out = || {
            if !c.notnull && c.pk == 0 && c.generated.is_none() {
                format!(
                    "or leave the column out (--secret-column {}.{})",
                    t.name, c.name
                )
            } else {
                format!("or leave the table out (--exclude-table {})", t.name)
            }
        };
        let bad = |why: &str, fix: &str| {
            refuse(
                "row_type",
                &t.name,
                Some(&c.name),
                rowid,
                format!(
                    "column {}.{} ({}, {} affinity) holds {} {}: {why}; to pack it, {fix}, {}",
                    t.name,
                    c.name,
                    if c.decl.is_empty() {
                        "no type"
                    } else {
                        &c.decl
                    },
                    c.affinity.name(),
                    describe(v),
                    place(rowid, index),
                    leave_out()
                ),
            )
        };
        match v {
            ValueRef::Null if c.notnull => {
                return Err(refuse(
                    "row_not_null",
                    &t.name,
                    Some(&c.name),
                    rowid,
                    format!(
                        "column {}.{} is NOT NULL but holds null {}",
                        t.name,
                        c.name,
                        place(rowid, index)
                    ),
                ));
            }
            ValueRef::Blob(_)
                if c.affinity != Affinity::Integer && c.affinity != Affinity::Blob =>
            {
                return Err(bad(
                    "a blob fits only a BLOB column",
                    "declare the column BLOB",
                ));
            }
            ValueRef::Real(f) if !f.is_finite() => {
                return Err(bad(
                    "infinity has no JSON form",
                    "store a finite number or null",
                ));
            }
            ValueRef::Text(_) if c.affinity == Affinity::Number => {
                return Err(bad(
                    "a NUMBER-affinity column (REAL, NUMERIC, DATETIME, BOOLEAN …) holds numbers only; text such as a date is refused",
                    "store numbers there (a date as Unix time) or declare the column TEXT",
                ));
            }
            ValueRef::Integer(_) | ValueRef::Real(_) if c.affinity == Affinity::Text => {
                return Err(bad(
                    "a TEXT column holds strings only",
                    "store the value as text",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A rowid the item carries (the table has a free alias) must be a safe
/// integer.
#[inline]
fn check_rowid(t: &Table, rowid: Option<i64>) -> Result<(), Error> {
    if let Some(r) = rowid.filter(|_| t.rowid_alias.is_some()) {
        if r.unsigned_abs() > (1u64 << 53) - 1 {
            return Err(refuse(
                "unsafe_integer",
                &t.name,
                None,
                Some(r),
                format!(
                    "table {} has rowid {r}, which is not a safe integer (|n| ≤ 2^53−1)",
                    t.name
                ),
            ));
        }
    }
    Ok(())
}

/// How [`write_row`] treats text and blob cells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Measured, not written (the first pass).
    Measure,
    /// Written, text unchecked: the caller checks the whole row as UTF-8
    /// at once ([`ndarc_json::write_string_bytes`]), which for short cells
    /// is several times faster than a check per cell (`std`'s, which
    /// simdutf8 also uses below 64 bytes, was 4 % of diffing two
    /// databases of short non-ASCII cells).
    Whole,
    /// Written, each text cell checked and, when it is not UTF-8, written
    /// as the producer reads it.
    Cells,
}

/// Writes the row object (its members in sorted order) into `buf`; in
/// [`Mode::Measure`], text and blob cells are only measured. Returns the
/// bytes measured but not written.
#[inline]
fn write_row<R: RowCells + ?Sized>(
    t: &Table,
    row: &R,
    buf: &mut Vec<u8>,
    mode: Mode,
) -> Result<usize, Error> {
    let mut unwritten = 0usize;
    buf.push(b'{');
    for (n, &k) in t.sorted.iter().enumerate() {
        if n > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(&t.labels[k]);
        let c = &t.columns[t.cells[k]];
        unwritten += write_cell(c.affinity, row.cell(k + 1)?, buf, mode);
    }
    buf.push(b'}');
    Ok(unwritten)
}

/// Writes one cell's JSON value into `buf` (an INTEGER-affinity cell as
/// the producer reads it); in [`Mode::Measure`], a text or blob cell is
/// only measured. Returns the bytes measured but not written.
#[inline]
fn write_cell(affinity: Affinity, v: ValueRef<'_>, buf: &mut Vec<u8>, mode: Mode) -> usize {
    let measure = mode == Mode::Measure;
    match v {
        ValueRef::Null => buf.extend_from_slice(b"null"),
        _ if affinity == Affinity::Integer => {
            number::write(integer_cell(v).unwrap_or(0.0), buf);
        }
        ValueRef::Integer(i) => number::write(i as f64, buf),
        ValueRef::Real(f) => number::write(f, buf),
        ValueRef::Text(b) if mode == Mode::Whole => write_string_bytes(b, buf),
        ValueRef::Text(b) => match simdutf8::basic::from_utf8(b) {
            Ok(_) if measure => return string_len(b),
            Ok(s) => write_string(s, buf),
            Err(_) => write_string(&String::from_utf8_lossy(b), buf),
        },
        ValueRef::Blob(b) if measure => return blob_len(b.len()),
        ValueRef::Blob(b) => {
            buf.extend_from_slice(b"{\"blob\":\"");
            push_base64(b, buf);
            buf.extend_from_slice(b"\"}");
        }
    }
    0
}

/// The packing rule for one row item; `row_part_too_large` when it fits no
/// part. Returns whether the item starts a new part.
pub(super) fn admit<R: RowCells + ?Sized>(
    t: &Table,
    packer: &mut RowPacker,
    len: usize,
    index: u64,
    r: &R,
    parts: &mut u64,
    part_bytes: usize,
) -> Result<bool, Error> {
    match packer.admit(len) {
        Ok(start) => {
            *parts += u64::from(start);
            Ok(start)
        }
        Err(_) => {
            let rowid = match r.cell(0) {
                Ok(ValueRef::Integer(i)) => Some(i),
                _ => None,
            };
            Err(refuse(
                "row_part_too_large",
                &t.name,
                None,
                rowid,
                format!(
                    "the row {} of table {} is {} bytes as an item, too large for a part of {} bytes",
                    place(rowid, index),
                    t.name,
                    len,
                    part_bytes
                ),
            ))
        }
    }
}

/// A repeated primary key (possible only with NULLs in a rowid table's
/// non-integer primary key) would be an invalid archive.
pub(super) fn duplicate_key<R: RowCells + ?Sized>(
    t: &Table,
    r: &R,
    index: u64,
    last: &mut Option<Vec<u8>>,
) -> Result<(), Error> {
    if t.rowid_alias.is_some() {
        return Ok(());
    }
    let mut key = Vec::new();
    for &k in &t.key_cells {
        match r.cell(k + 1)? {
            ValueRef::Null => key.push(0),
            ValueRef::Integer(i) => {
                key.push(1);
                key.extend_from_slice(&(i as f64).to_bits().to_be_bytes());
            }
            ValueRef::Real(f) => {
                key.push(1);
                key.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            ValueRef::Text(b) => {
                key.push(2);
                key.extend_from_slice(&(b.len() as u64).to_be_bytes());
                key.extend_from_slice(b);
            }
            ValueRef::Blob(b) => {
                key.push(3);
                key.extend_from_slice(&(b.len() as u64).to_be_bytes());
                key.extend_from_slice(b);
            }
        }
    }
    if last.as_deref() == Some(&key[..]) {
        let rowid = match r.cell(0) {
            Ok(ValueRef::Integer(i)) => Some(i),
            _ => None,
        };
        return Err(refuse(
            "duplicate_row_key",
            &t.name,
            None,
            rowid,
            format!(
                "table {} repeats a primary key {} (NULL in a primary key of a rowid table); rows are matched by key, so keys must be unique",
                t.name,
                place(rowid, index)
            ),
        ));
    }
    *last = Some(key);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_lengths_are_the_written_lengths() {
        let all: Vec<u8> = (0u8..=0x7F).chain("é😀\u{2028}".bytes()).collect();
        for s in [&b""[..], b"plain", b"\"\\", &all] {
            let mut out = Vec::new();
            write_string(std::str::from_utf8(s).unwrap(), &mut out);
            assert_eq!(string_len(s), out.len(), "{s:?}");
        }
        // An escape in every position of whole 64-byte blocks and of the
        // remainder.
        for at in 0..200 {
            for esc in [b'"', b'\\', 0x0A, 0x01] {
                let mut s = vec![b'a'; 200];
                s[at] = esc;
                let mut out = Vec::new();
                write_string(std::str::from_utf8(&s).unwrap(), &mut out);
                assert_eq!(string_len(&s), out.len(), "{at} {esc}");
            }
        }
        for n in 0..10 {
            let mut out = b"{\"blob\":\"".to_vec();
            push_base64(&vec![0xAB; n], &mut out);
            out.extend_from_slice(b"\"}");
            assert_eq!(blob_len(n), out.len(), "{n}");
        }
    }
}
