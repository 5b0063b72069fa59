//! Rows copied out of SQLite in batches, so that another thread can encode
//! and hash them while this one reads on (pack's second pass; see
//! `write_rows` in `mod.rs`).

use rusqlite::types::ValueRef;

use super::refuse::sql_error;
use super::rows::RowCells;
use crate::Error;

/// A cell copied out of SQLite: text and blobs as ranges of
/// [`Batch::bytes`].
#[derive(Debug, Clone, Copy)]
enum Raw {
    Null,
    Integer(i64),
    Real(f64),
    Text(usize, usize),
    Blob(usize, usize),
}

/// Rows of one table, each `width` columns as its SELECT reads them.
#[derive(Debug, Default)]
pub(super) struct Batch {
    width: usize,
    cells: Vec<Raw>,
    bytes: Vec<u8>,
}

/// A batch is handed on when it holds this many bytes of text and blobs
/// or [`BATCH_ROWS`] rows: small enough to keep a few in flight, large
/// enough that handing one on costs nothing beside its rows.
pub(super) const BATCH_BYTES: usize = 1 << 20;
/// See [`BATCH_BYTES`].
pub(super) const BATCH_ROWS: usize = 4096;

impl Batch {
    /// Empties the batch for rows of `width` columns, keeping its memory.
    pub(super) fn reset(&mut self, width: usize) {
        self.width = width;
        self.cells.clear();
        self.bytes.clear();
    }

    /// Rows held.
    pub(super) fn rows(&self) -> usize {
        self.cells.len().checked_div(self.width).unwrap_or(0)
    }

    /// Whether the batch should be handed on.
    pub(super) fn full(&self) -> bool {
        self.bytes.len() >= BATCH_BYTES || self.rows() >= BATCH_ROWS
    }

    /// Copies one SQLite row in.
    pub(super) fn push(&mut self, row: &rusqlite::Row<'_>) -> Result<(), Error> {
        for i in 0..self.width {
            let raw = match row.get_ref(i).map_err(sql_error)? {
                ValueRef::Null => Raw::Null,
                ValueRef::Integer(v) => Raw::Integer(v),
                ValueRef::Real(v) => Raw::Real(v),
                ValueRef::Text(b) => {
                    let s = self.bytes.len();
                    self.bytes.extend_from_slice(b);
                    Raw::Text(s, b.len())
                }
                ValueRef::Blob(b) => {
                    let s = self.bytes.len();
                    self.bytes.extend_from_slice(b);
                    Raw::Blob(s, b.len())
                }
            };
            self.cells.push(raw);
        }
        Ok(())
    }

    /// Row `r` (< [`Batch::rows`]).
    pub(super) fn row(&self, r: usize) -> BatchRow<'_> {
        BatchRow {
            cells: &self.cells[r * self.width..(r + 1) * self.width],
            bytes: &self.bytes,
        }
    }
}

/// One row of a [`Batch`].
pub(super) struct BatchRow<'a> {
    cells: &'a [Raw],
    bytes: &'a [u8],
}

impl RowCells for BatchRow<'_> {
    fn cell(&self, i: usize) -> Result<ValueRef<'_>, Error> {
        Ok(match self.cells.get(i) {
            None | Some(Raw::Null) => ValueRef::Null,
            Some(Raw::Integer(v)) => ValueRef::Integer(*v),
            Some(Raw::Real(v)) => ValueRef::Real(*v),
            Some(Raw::Text(s, n)) => ValueRef::Text(&self.bytes[*s..*s + *n]),
            Some(Raw::Blob(s, n)) => ValueRef::Blob(&self.bytes[*s..*s + *n]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_as_sqlite_gave_them() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut st = conn
            .prepare("SELECT 1, NULL, 2.5, 'tëxt', x'00ff', '' UNION ALL SELECT -7, 'a', 0.0, NULL, x'', 'b'")
            .unwrap();
        let mut rows = st.query([]).unwrap();
        let mut b = Batch::default();
        b.reset(6);
        while let Some(r) = rows.next().unwrap() {
            b.push(r).unwrap();
        }
        assert_eq!(b.rows(), 2);
        let got: Vec<Vec<String>> = (0..2)
            .map(|r| {
                let row = b.row(r);
                (0..6)
                    .map(|i| match row.cell(i).unwrap() {
                        ValueRef::Null => "Null".to_string(),
                        ValueRef::Integer(v) => format!("Integer({v})"),
                        ValueRef::Real(v) => format!("Real({v:?})"),
                        ValueRef::Text(t) => format!("Text({:?})", String::from_utf8_lossy(t)),
                        ValueRef::Blob(b) => format!("Blob({b:?})"),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            got[0],
            [
                "Integer(1)",
                "Null",
                "Real(2.5)",
                "Text(\"tëxt\")",
                "Blob([0, 255])",
                "Text(\"\")"
            ]
        );
        assert_eq!(
            got[1],
            [
                "Integer(-7)",
                "Text(\"a\")",
                "Real(0.0)",
                "Null",
                "Blob([])",
                "Text(\"b\")"
            ]
        );
        b.reset(6);
        assert_eq!(b.rows(), 0);
    }
}
