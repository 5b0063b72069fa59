//! Cells of verified rows as Python gets them: the values a restored
//! database holds (`ndarc unpack`, then SQLite's column affinity), decoded
//! from the cell's canonical JSON text, into row batches (for `rows()`) or
//! columnar batches (for Arrow). Pure Rust, without Python.

use std::borrow::Cow;

use ndarc_format::catalogue::decode_base64_into;
use ndarc_format::{Affinity, Plan};
use ndarc_sqlite::unpack::{restored_number, RestoredNumber};
use ndarc_sqlite::{sqlite_affinity, SqliteAffinity};

/// Rows or data bytes past which a batch is handed over: large enough that
/// the per-batch cost in Python (one RecordBatch, or one hand-over) is
/// small, small enough to bound memory.
pub const BATCH_ROWS: usize = 65_536;
/// See [`BATCH_ROWS`].
pub const BATCH_BYTES: usize = 16 << 20;

/// The Arrow type of a column, from its affinity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// INTEGER affinity (and the rowid): `int64`.
    Int64,
    /// NUMBER affinity: `float64` (archive numbers are doubles, so no
    /// value is rounded).
    Float64,
    /// TEXT affinity: `large_string`.
    Text,
    /// BLOB affinity: `large_binary` (text as its UTF-8 bytes, a number as
    /// its canonical JSON text).
    Binary,
}

impl Kind {
    /// The pyarrow type name.
    pub fn arrow_name(self) -> &'static str {
        match self {
            Kind::Int64 => "int64",
            Kind::Float64 => "float64",
            Kind::Text => "large_string",
            Kind::Binary => "large_binary",
        }
    }

    fn of(a: Affinity) -> Kind {
        match a {
            Affinity::Integer => Kind::Int64,
            Affinity::Number => Kind::Float64,
            Affinity::Text => Kind::Text,
            Affinity::Blob => Kind::Binary,
        }
    }
}

/// A column as the reader gives it.
#[derive(Debug, Clone)]
pub struct Column {
    /// Its name (the rowid alias for the rowid).
    pub name: String,
    /// Position among the plan's row columns (`None`: the rowid).
    pub plan_pos: Option<usize>,
    /// The archive's affinity.
    pub affinity: Affinity,
    /// SQLite's affinity of the declared type.
    pub sqlite: SqliteAffinity,
    /// The Arrow type.
    pub kind: Kind,
}

/// The columns of table `t` as rows are given: the rowid first (under its
/// alias) for a rowid table, then the columns rows carry (not generated,
/// not excluded) in the table's order.
pub fn columns(plan: &Plan, t: usize) -> Vec<Column> {
    let table = &plan.manifest.tables[t];
    let tp = &plan.tables[t];
    let mut out = Vec::with_capacity(tp.columns.len() + 1);
    if let Some(alias) = &table.rowid_alias {
        out.push(Column {
            name: alias.clone(),
            plan_pos: None,
            affinity: Affinity::Integer,
            sqlite: SqliteAffinity::Integer,
            kind: Kind::Int64,
        });
    }
    for c in &table.columns {
        if let Some(pos) = tp.columns.iter().position(|p| p.name == c.name) {
            let affinity = tp.columns[pos].affinity;
            out.push(Column {
                name: c.name.clone(),
                plan_pos: Some(pos),
                affinity,
                sqlite: sqlite_affinity(&c.decl_type),
                kind: Kind::of(affinity),
            });
        }
    }
    out
}

/// One cell, decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    /// NULL.
    Null,
    /// An INTEGER.
    Int(i64),
    /// A REAL.
    Real(f64),
    /// TEXT.
    Text(Cow<'a, str>),
    /// A BLOB.
    Blob(Vec<u8>),
}

/// The cell whose canonical JSON text is `text`, in column `col`, as a
/// restore leaves it. Errs on text a verified row cannot hold.
pub fn decode<'a>(text: &'a [u8], col: &Column) -> Result<Cell<'a>, String> {
    match text.first() {
        None => Err("an empty cell".into()),
        Some(b'n') if text == b"null" => Ok(Cell::Null),
        Some(b'"') => string(text).map(Cell::Text),
        Some(b'{') => blob(text).map(Cell::Blob),
        Some(_) => {
            let n = number(text)?;
            Ok(match restored_number(n, col.affinity, col.sqlite) {
                RestoredNumber::Integer(i) => Cell::Int(i),
                RestoredNumber::Real(r) => Cell::Real(r),
            })
        }
    }
}

fn bad(text: &[u8]) -> String {
    let shown = String::from_utf8_lossy(&text[..text.len().min(40)]).into_owned();
    format!("a cell that is not a verified value: {shown}")
}

/// A JSON string's value: borrowed when it has no escape.
fn string(text: &[u8]) -> Result<Cow<'_, str>, String> {
    let inner = text
        .get(1..text.len().saturating_sub(1))
        .filter(|_| text.len() >= 2 && text.ends_with(b"\""))
        .ok_or_else(|| bad(text))?;
    if memchr::memchr(b'\\', inner).is_none() {
        return simdutf8::basic::from_utf8(inner)
            .map(Cow::Borrowed)
            .map_err(|_| bad(text));
    }
    match ndarc_json::parse(text) {
        Ok(ndarc_json::Value::String(s)) => Ok(Cow::Owned(s.into_owned())),
        _ => Err(bad(text)),
    }
}

/// `{"blob":"BASE64"}` decoded (canonical: exactly that spelling).
fn blob(text: &[u8]) -> Result<Vec<u8>, String> {
    let b64 = text
        .strip_prefix(b"{\"blob\":\"")
        .and_then(|r| r.strip_suffix(b"\"}"))
        .and_then(|r| std::str::from_utf8(r).ok())
        .ok_or_else(|| bad(text))?;
    let mut out = Vec::with_capacity(b64.len() / 4 * 3);
    if decode_base64_into(b64, &mut out) {
        Ok(out)
    } else {
        Err(bad(text))
    }
}

/// A JSON number (canonical, so ECMAScript's spelling).
fn number(text: &[u8]) -> Result<f64, String> {
    // Most cells are small integers: read without the float parser.
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
        let v = digits
            .iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
        return Ok(if digits.len() == text.len() {
            v as f64
        } else {
            -(v as f64)
        });
    }
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|n| n.is_finite())
        .ok_or_else(|| bad(text))
}

/// Rows for Python dicts: cells row after row.
#[derive(Debug, Default)]
pub struct RowBatch {
    /// Cells, `width` a row.
    pub cells: Vec<Cell<'static>>,
    /// Rows held.
    pub rows: usize,
    /// Bytes of text and blobs held.
    pub bytes: usize,
}

impl RowBatch {
    /// Appends the cell whose canonical JSON text is `text`, of column
    /// `col`.
    pub fn push_text(&mut self, text: &[u8], col: &Column) -> Result<(), String> {
        let cell = match decode(text, col)? {
            Cell::Text(s) => {
                self.bytes += s.len();
                Cell::Text(Cow::Owned(s.into_owned()))
            }
            Cell::Blob(b) => {
                self.bytes += b.len();
                Cell::Blob(b)
            }
            Cell::Null => Cell::Null,
            Cell::Int(i) => Cell::Int(i),
            Cell::Real(r) => Cell::Real(r),
        };
        self.cells.push(cell);
        Ok(())
    }

    /// Whether the batch should be handed over (Python takes rows one by
    /// one, so smaller batches than Arrow's).
    pub fn full(&self) -> bool {
        self.rows >= BATCH_ROWS / 8 || self.bytes >= BATCH_BYTES
    }
}

/// One Arrow column being built: a validity bitmap, and values (fixed
/// width) or offsets and data (variable width).
#[derive(Debug)]
pub struct ArrowColumn {
    /// The type.
    pub kind: Kind,
    /// Validity bits, least significant first.
    pub validity: Vec<u8>,
    /// Nulls so far.
    pub nulls: usize,
    /// Values (8 bytes each, little-endian) or string/binary data.
    pub data: Vec<u8>,
    /// Offsets into `data` (i64, little-endian), for variable width.
    pub offsets: Vec<u8>,
    len: usize,
}

impl ArrowColumn {
    /// An empty column of `kind`.
    pub fn new(kind: Kind) -> ArrowColumn {
        let mut offsets = Vec::new();
        if matches!(kind, Kind::Text | Kind::Binary) {
            offsets.extend_from_slice(&0i64.to_le_bytes());
        }
        ArrowColumn {
            kind,
            validity: Vec::new(),
            nulls: 0,
            data: Vec::new(),
            offsets,
            len: 0,
        }
    }

    fn valid(&mut self, yes: bool) {
        if self.len.is_multiple_of(8) {
            self.validity.push(0);
        }
        if yes {
            if let Some(b) = self.validity.last_mut() {
                *b |= 1 << (self.len % 8);
            }
        } else {
            self.nulls += 1;
        }
        self.len += 1;
    }

    fn end_value(&mut self) {
        if matches!(self.kind, Kind::Text | Kind::Binary) {
            self.offsets
                .extend_from_slice(&(self.data.len() as i64).to_le_bytes());
        } else if self.data.len() < self.len * 8 {
            self.data.extend_from_slice(&[0; 8]);
        }
    }

    /// Appends the cell whose canonical JSON text is `text`.
    pub fn push(&mut self, text: &[u8], col: &Column) -> Result<(), String> {
        if text == b"null" {
            self.valid(false);
            self.end_value();
            return Ok(());
        }
        match self.kind {
            Kind::Int64 => match decode(text, col)? {
                Cell::Int(i) => self.data.extend_from_slice(&i.to_le_bytes()),
                _ => return Err(bad(text)),
            },
            Kind::Float64 => match decode(text, col)? {
                Cell::Int(i) => self.data.extend_from_slice(&(i as f64).to_le_bytes()),
                Cell::Real(r) => self.data.extend_from_slice(&r.to_le_bytes()),
                _ => return Err(bad(text)),
            },
            Kind::Text => match string(text) {
                Ok(s) => self.data.extend_from_slice(s.as_bytes()),
                Err(e) => return Err(e),
            },
            Kind::Binary => match decode(text, col)? {
                Cell::Blob(b) => self.data.extend_from_slice(&b),
                Cell::Text(s) => self.data.extend_from_slice(s.as_bytes()),
                // A number in a BLOB column: its canonical JSON text.
                Cell::Int(_) | Cell::Real(_) => self.data.extend_from_slice(text),
                Cell::Null => return Err(bad(text)),
            },
        }
        self.valid(true);
        self.end_value();
        Ok(())
    }

    /// Appends an integer (the rowid).
    pub fn push_i64(&mut self, v: i64) {
        self.data.extend_from_slice(&v.to_le_bytes());
        self.valid(true);
    }
}

/// Columns of Arrow arrays being built.
#[derive(Debug)]
pub struct ArrowBatch {
    /// One per [`columns`] entry.
    pub columns: Vec<ArrowColumn>,
    /// Rows held.
    pub rows: usize,
}

impl ArrowBatch {
    /// An empty batch of `cols`.
    pub fn new(cols: &[Column]) -> ArrowBatch {
        ArrowBatch {
            columns: cols.iter().map(|c| ArrowColumn::new(c.kind)).collect(),
            rows: 0,
        }
    }

    /// Whether the batch should be handed over.
    pub fn full(&self) -> bool {
        self.rows >= BATCH_ROWS
            || self.columns.iter().map(|c| c.data.len()).sum::<usize>() >= BATCH_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(affinity: Affinity, decl: &str) -> Column {
        Column {
            name: "c".into(),
            plan_pos: Some(0),
            affinity,
            sqlite: sqlite_affinity(decl),
            kind: Kind::of(affinity),
        }
    }

    #[test]
    fn cells_decode_as_a_restore_leaves_them() {
        let int = col(Affinity::Integer, "INTEGER");
        let real = col(Affinity::Number, "REAL");
        let numeric = col(Affinity::Number, "NUMERIC");
        let any = col(Affinity::Blob, "");
        let text = col(Affinity::Text, "TEXT");
        assert_eq!(decode(b"null", &int), Ok(Cell::Null));
        assert_eq!(decode(b"-42", &int), Ok(Cell::Int(-42)));
        assert_eq!(decode(b"5", &real), Ok(Cell::Real(5.0)));
        assert_eq!(decode(b"5", &numeric), Ok(Cell::Int(5)));
        assert_eq!(decode(b"1e+21", &numeric), Ok(Cell::Real(1e21)));
        assert_eq!(decode(b"1.5", &any), Ok(Cell::Real(1.5)));
        assert_eq!(
            decode(br#""a\"\u00e9""#, &text),
            Ok(Cell::Text("a\"é".into()))
        );
        assert_eq!(decode(br#""plain""#, &any), Ok(Cell::Text("plain".into())));
        assert_eq!(
            decode(br#"{"blob":"AAEC"}"#, &any),
            Ok(Cell::Blob(vec![0, 1, 2]))
        );
        assert!(decode(br#"{"blob":"A"}"#, &any).is_err());
        assert!(decode(b"tru", &any).is_err());
        assert!(decode(b"", &any).is_err());
        assert!(decode(b"\"unterminated", &text).is_err());
    }

    #[test]
    fn arrow_columns_hold_values_nulls_and_offsets() {
        let int = col(Affinity::Integer, "INT");
        let mut c = ArrowColumn::new(Kind::Int64);
        for t in [&b"1"[..], b"null", b"-3"] {
            c.push(t, &int).unwrap();
        }
        assert_eq!(c.nulls, 1);
        assert_eq!(c.validity, vec![0b101]);
        assert_eq!(c.data.len(), 24);
        assert_eq!(&c.data[16..], &(-3i64).to_le_bytes());
        let any = col(Affinity::Blob, "");
        let mut b = ArrowColumn::new(Kind::Binary);
        for t in [&br#"{"blob":"AAEC"}"#[..], b"\"hi\"", b"1.5", b"null"] {
            b.push(t, &any).unwrap();
        }
        assert_eq!(b.data, b"\x00\x01\x02hi1.5");
        let offs: Vec<i64> = b
            .offsets
            .chunks(8)
            .map(|x| i64::from_le_bytes(x.try_into().unwrap()))
            .collect();
        assert_eq!(offs, vec![0, 3, 5, 8, 8]);
        // A text in an INTEGER column is refused, not guessed at.
        assert!(c.push(b"\"x\"", &int).is_err());
    }
}
