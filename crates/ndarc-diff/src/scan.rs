//! Spans in a JSON line: what the row diff needs from a part line, found
//! without building a value tree.
//!
//! Verified lines are canonical (RFC 8785), so the bytes of a cell value are
//! its canonical JSON text and two cells are equal exactly when their bytes
//! are. The scanner is still total on any input: malformed text gives an
//! error, never a panic.

/// A byte range `start..end` in a line.
pub(crate) type Span = (u32, u32);

/// The empty span, used for a cell a row lacks.
pub(crate) const MISSING: Span = (0, 0);

/// Malformed JSON where a span was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScanError {
    pub(crate) at: usize,
    pub(crate) what: &'static str,
}

type Result<T> = std::result::Result<T, ScanError>;

fn err<T>(at: usize, what: &'static str) -> Result<T> {
    Err(ScanError { at, what })
}

fn to_u32(n: usize, at: usize) -> Result<u32> {
    u32::try_from(n).or_else(|_| err(at, "line too long to index"))
}

/// The bytes of `s` in `b` (empty when out of range).
pub(crate) fn slice(b: &[u8], s: Span) -> &[u8] {
    b.get(s.0 as usize..s.1 as usize).unwrap_or(&[])
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Index just past the string starting at `i` (which holds `"`).
fn skip_string(b: &[u8], i: usize) -> Result<usize> {
    ndarc_json::skip_string(b, i).map_or_else(|| err(i, "unterminated string"), Ok)
}

/// Index just past the value starting at `i` (`ndarc_json::skip_value`,
/// the one value skipper).
pub(crate) fn skip_value(b: &[u8], i: usize) -> Result<usize> {
    ndarc_json::skip_value(b, i).map_or_else(|| err(i, "value expected or unterminated"), Ok)
}

/// Calls `f(name, value)` for each member of the object at `i` (names with
/// their quotes); returns the index past the object.
pub(crate) fn members(
    b: &[u8],
    i: usize,
    mut f: impl FnMut(Span, Span) -> Result<()>,
) -> Result<usize> {
    members_raw(b, i, |name, at| {
        let end = skip_value(b, at)?;
        f(name, (to_u32(at, at)?, to_u32(end, at)?))?;
        Ok(end)
    })
}

/// Calls `f(name, value_start)` for each member of the object at `i`; `f`
/// reads the value and returns the index past it.
fn members_raw(
    b: &[u8],
    i: usize,
    mut f: impl FnMut(Span, usize) -> Result<usize>,
) -> Result<usize> {
    let mut j = ws(b, i);
    if b.get(j) != Some(&b'{') {
        return err(j, "object expected");
    }
    j = ws(b, j + 1);
    if b.get(j) == Some(&b'}') {
        return Ok(j + 1);
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return err(j, "member name expected");
        }
        let name_end = skip_string(b, j)?;
        let name = (to_u32(j, j)?, to_u32(name_end, j)?);
        j = ws(b, name_end);
        if b.get(j) != Some(&b':') {
            return err(j, "':' expected");
        }
        j = ws(b, j + 1);
        let end = f(name, j)?;
        if end <= j {
            return err(j, "value expected");
        }
        j = ws(b, end);
        match b.get(j) {
            Some(b',') => j = ws(b, j + 1),
            Some(b'}') => return Ok(j + 1),
            _ => return err(j, "',' or '}' expected"),
        }
    }
}

/// Calls `f(element_start)` for each element of the array at `i`; `f`
/// reads the element and returns the index past it.
fn elements_raw(b: &[u8], i: usize, mut f: impl FnMut(usize) -> Result<usize>) -> Result<usize> {
    let mut j = ws(b, i);
    if b.get(j) != Some(&b'[') {
        return err(j, "array expected");
    }
    j = ws(b, j + 1);
    if b.get(j) == Some(&b']') {
        return Ok(j + 1);
    }
    loop {
        let end = f(j)?;
        if end <= j {
            return err(j, "value expected");
        }
        j = ws(b, end);
        match b.get(j) {
            Some(b',') => j = ws(b, j + 1),
            Some(b']') => return Ok(j + 1),
            _ => return err(j, "',' or ']' expected"),
        }
    }
}

/// The spans of one row item of a part line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ItemSpans {
    /// The `row` object.
    pub(crate) row: Span,
    /// The `rowid` number, when present.
    pub(crate) rowid: Option<Span>,
    /// The `table` string (quotes included).
    pub(crate) table: Span,
    /// The row's members: a range of [`RowsScan::cells`].
    pub(crate) cells: (u32, u32),
}

/// The row items of a part line.
#[derive(Debug, Default)]
pub(crate) struct RowsScan {
    /// The items.
    pub(crate) items: Vec<ItemSpans>,
    /// Every row's members, `(name, value)`, row after row.
    pub(crate) cells: Vec<(Span, Span)>,
}

/// What a part line holds, as far as the row diff cares.
#[derive(Debug)]
pub(crate) enum PartScan {
    /// Row items.
    Rows(RowsScan),
    /// An object or payload chunk (or no items).
    Other,
}

/// Scans a part line in one pass: its items' `row`, `rowid` and `table`
/// spans and the members of each row.
pub(crate) fn scan_part(b: &[u8]) -> Result<PartScan> {
    let mut scan = RowsScan::default();
    let mut other = false;
    let mut saw_items = false;
    let end = members_raw(b, 0, |name, at| {
        if slice(b, name) != b"\"items\"" {
            return skip_value(b, at);
        }
        saw_items = true;
        elements_raw(b, at, |at| {
            let mut kind = None;
            let mut row = None;
            let mut rowid = None;
            let mut table = None;
            let first = scan.cells.len();
            let end = members_raw(b, at, |name, at| {
                let name = slice(b, name);
                if name == b"\"row\"" {
                    let end = members(b, at, |n, v| {
                        scan.cells.push((n, v));
                        Ok(())
                    })?;
                    row = Some((to_u32(at, at)?, to_u32(end, at)?));
                    return Ok(end);
                }
                let end = skip_value(b, at)?;
                let span = (to_u32(at, at)?, to_u32(end, at)?);
                match name {
                    b"\"kind\"" => kind = Some(span),
                    b"\"rowid\"" => rowid = Some(span),
                    b"\"table\"" => table = Some(span),
                    _ => {}
                }
                Ok(end)
            })?;
            match kind.map(|k| slice(b, k)) {
                Some(b"\"row\"") => match (row, table) {
                    (Some(row), Some(table)) => {
                        let cells = (to_u32(first, at)?, to_u32(scan.cells.len(), at)?);
                        scan.items.push(ItemSpans {
                            row,
                            rowid,
                            table,
                            cells,
                        });
                    }
                    _ => return err(at, "a row item without row or table"),
                },
                _ => {
                    scan.cells.truncate(first);
                    other = true;
                }
            }
            Ok(end)
        })
    })?;
    if ws(b, end) != b.len() {
        return err(end, "text after the record");
    }
    if !saw_items {
        return err(0, "a part without items");
    }
    match (scan.items.is_empty(), other) {
        (false, true) => err(0, "a part mixing row items with other items"),
        (false, false) => Ok(PartScan::Rows(scan)),
        (true, _) => Ok(PartScan::Other),
    }
}

/// Parses a rowid's canonical text.
pub(crate) fn rowid_of(text: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(text).ok()?;
    s.parse::<i64>()
        .ok()
        .or_else(|| s.parse::<f64>().ok().and_then(ndarc_json::safe_integer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_a_rows_part() {
        let line = br#"{"index":0,"items":[{"index":0,"kind":"row","row":{"a":"x\"}","b":[1,{"c":2}]},"rowid":5,"table":"t"},{"index":1,"kind":"row","row":{},"table":"t"}],"kind":"part"}"#;
        let PartScan::Rows(scan) = scan_part(line).unwrap() else {
            panic!("rows expected")
        };
        let items = &scan.items;
        assert_eq!(items[0].cells, (0, 2));
        assert_eq!(items[1].cells, (2, 2));
        assert_eq!(items.len(), 2);
        assert_eq!(
            slice(line, items[0].row),
            br#"{"a":"x\"}","b":[1,{"c":2}]}"#
        );
        assert_eq!(slice(line, items[0].rowid.unwrap()), b"5");
        assert_eq!(slice(line, items[1].table), b"\"t\"");
        assert!(items[1].rowid.is_none());
        let mut cells = Vec::new();
        members(line, items[0].row.0 as usize, |n, v| {
            cells.push((slice(line, n).to_vec(), slice(line, v).to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(cells[1], (b"\"b\"".to_vec(), b"[1,{\"c\":2}]".to_vec()));
    }

    #[test]
    fn binary_parts_and_garbage() {
        let line = br#"{"index":2,"items":[{"bucket":"f","data":"","key":"k","kind":"object","offset":0}],"kind":"part"}"#;
        assert!(matches!(scan_part(line), Ok(PartScan::Other)));
        for bad in [
            &b""[..],
            b"{",
            b"{\"items\":[{\"kind\":\"row\"",
            b"{\"items\":[}",
            b"[]",
            b"{\"items\":[]} x",
            b"{\"a\":\"\\",
        ] {
            assert!(
                scan_part(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn rowids() {
        assert_eq!(rowid_of(b"-7"), Some(-7));
        assert_eq!(rowid_of(b"1e+21"), None);
        assert_eq!(rowid_of(b"x"), None);
    }
}
