//! Reading an archive's content through the one door,
//! [`ndarc_verify::read_path`]: rows of one table (on a reader thread that
//! hands batches over a bounded channel) and the bytes of one object or
//! payload. Pure Rust, without Python.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use ndarc_format::part::BinaryKind;
use ndarc_format::{LineRef, Plan};
use ndarc_verify::{Accepted, Options, ReadError, Reader, Report};

use crate::cells::{columns, ArrowBatch, Cell, Column, RowBatch};

/// Why a read gave no report.
#[derive(Debug)]
pub enum Stop {
    /// The consumer went away (Python dropped the iterator).
    Cancelled,
    /// What was asked for is not in the archive.
    Missing(String),
    /// The input could not be read.
    Io(String),
    /// A verified line held what a reader cannot take (a bug).
    Bad(String),
}

impl<E: Into<Stop>> From<ReadError<E>> for Stop {
    fn from(e: ReadError<E>) -> Stop {
        match e {
            ReadError::Verify(e) => Stop::Io(e.to_string()),
            ReadError::Reader(e) => e.into(),
        }
    }
}

/// What a table read hands over.
#[derive(Debug)]
pub enum Batch {
    /// Rows, for dicts.
    Rows(RowBatch),
    /// Columns, for Arrow.
    Arrow(ArrowBatch),
}

impl Batch {
    fn rows(&self) -> usize {
        match self {
            Batch::Rows(b) => b.rows,
            Batch::Arrow(b) => b.rows,
        }
    }

    fn full(&self) -> bool {
        match self {
            Batch::Rows(b) => b.full(),
            Batch::Arrow(b) => b.full(),
        }
    }
}

/// Batches in flight between the reader thread and Python.
const IN_FLIGHT: usize = 2;

/// The table being read and where its rows go.
struct TableReader {
    name: String,
    arrow: bool,
    table: Option<usize>,
    cols: Vec<Column>,
    width: usize,
    batch: Option<Batch>,
    tx: SyncSender<Batch>,
    cancel: Arc<AtomicBool>,
    /// The plan's columns, sent first so that the consumer knows them even
    /// for a table without rows.
    columns_tx: Option<SyncSender<Vec<Column>>>,
}

/// The index in `plan` of the table `name`: exactly, else ignoring ASCII
/// case (SQLite's names are case-insensitive).
pub fn find_table(plan: &Plan, name: &str) -> Option<usize> {
    let tables = &plan.manifest.tables;
    tables.iter().position(|t| t.name == name).or_else(|| {
        tables
            .iter()
            .position(|t| t.name.eq_ignore_ascii_case(name))
    })
}

impl TableReader {
    fn fresh(&self) -> Batch {
        if self.arrow {
            Batch::Arrow(ArrowBatch::new(&self.cols))
        } else {
            Batch::Rows(RowBatch::default())
        }
    }

    fn flush(&mut self) -> Result<(), Stop> {
        match self.batch.take() {
            Some(b) if b.rows() > 0 => self.tx.send(b).map_err(|_| Stop::Cancelled),
            _ => Ok(()),
        }
    }

    fn rows(&mut self, part: &Accepted<'_>, t: usize) -> Result<(), Stop> {
        let bytes = part.line.bytes;
        let spans = part.spans;
        let mut batch = self.batch.take().unwrap_or_else(|| self.fresh());
        let r = if spans.table == Some(t) {
            let cells = |r: usize, pos: usize| -> Result<&[u8], String> {
                let (a, b) = spans
                    .cells
                    .get(r * self.width + pos)
                    .copied()
                    .ok_or("a row without its cells")?;
                bytes
                    .get(a as usize..b as usize)
                    .ok_or_else(|| "a cell outside its line".to_string())
            };
            let rowid = |r: usize| spans.rowids.get(r).map_or(0, |x| x.0);
            add_rows(&mut batch, &self.cols, spans.rows.len(), cells, rowid)
        } else {
            // A row part the fast path did not read (it has a warning):
            // read in full, each cell written canonical again.
            let v = ndarc_json::parse(bytes).map_err(|e| Stop::Bad(e.to_string()))?;
            let items = v
                .get("items")
                .and_then(ndarc_json::Value::as_array)
                .map_or(&[][..], |a| a);
            let texts: Vec<Vec<Vec<u8>>> = items
                .iter()
                .map(|item| {
                    self.cols
                        .iter()
                        .map(|c| match c.plan_pos {
                            None => Vec::new(),
                            Some(_) => item
                                .get("row")
                                .and_then(|row| row.get(&c.name))
                                .map_or_else(|| b"null".to_vec(), ndarc_json::to_canonical_vec),
                        })
                        .collect()
                })
                .collect();
            let rowid = |r: usize| {
                items
                    .get(r)
                    .and_then(|i| i.get("rowid"))
                    .and_then(ndarc_json::Value::as_f64)
                    .map_or(0, |x| x as i64)
            };
            let cells = |r: usize, k: usize| -> Result<&[u8], String> {
                texts
                    .get(r)
                    .and_then(|row| row.get(k))
                    .map(Vec::as_slice)
                    .ok_or_else(|| "a row without its cells".to_string())
            };
            // `cells` is indexed by output column here, not plan position.
            let by_output: Vec<Column> = self
                .cols
                .iter()
                .enumerate()
                .map(|(k, c)| Column {
                    plan_pos: c.plan_pos.map(|_| k),
                    ..c.clone()
                })
                .collect();
            add_rows(&mut batch, &by_output, items.len(), cells, rowid)
        };
        r.map_err(Stop::Bad)?;
        if batch.full() {
            self.tx.send(batch).map_err(|_| Stop::Cancelled)?;
        } else {
            self.batch = Some(batch);
        }
        Ok(())
    }
}

/// Appends `n` rows to `batch`: `cell(row, pos)` gives a cell's text by the
/// column's `plan_pos`, `rowid(row)` the rowid.
fn add_rows<'a>(
    batch: &mut Batch,
    cols: &[Column],
    n: usize,
    cell: impl Fn(usize, usize) -> Result<&'a [u8], String>,
    rowid: impl Fn(usize) -> i64,
) -> Result<(), String> {
    for r in 0..n {
        for (k, c) in cols.iter().enumerate() {
            match (c.plan_pos, &mut *batch) {
                (None, Batch::Rows(b)) => b.cells.push(Cell::Int(rowid(r))),
                (None, Batch::Arrow(b)) => b.columns[k].push_i64(rowid(r)),
                (Some(pos), Batch::Rows(b)) => b.push_text(cell(r, pos)?, c)?,
                (Some(pos), Batch::Arrow(b)) => b.columns[k].push(cell(r, pos)?, c)?,
            }
        }
        match batch {
            Batch::Rows(b) => b.rows += 1,
            Batch::Arrow(b) => b.rows += 1,
        }
    }
    Ok(())
}

impl Reader for TableReader {
    type Error = Stop;

    fn start(&mut self, plan: &Arc<Plan>, _: LineRef<'_>) -> Result<(), Stop> {
        let t = find_table(plan, &self.name)
            .ok_or_else(|| Stop::Missing(format!("the archive has no table {:?}", self.name)))?;
        self.table = Some(t);
        self.cols = columns(plan, t);
        self.width = plan.tables[t].columns.len();
        if let Some(tx) = self.columns_tx.take() {
            // The consumer may have gone already; the next part says so.
            let _ = tx.send(self.cols.clone());
        }
        Ok(())
    }

    fn part(&mut self, part: Accepted<'_>) -> Result<(), Stop> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Stop::Cancelled);
        }
        match (part.rows(), self.table) {
            (Some(r), Some(t)) if r.table == t => self.rows(&part, t),
            // Rows come table by table: past the table, hand over the rest.
            _ => self.flush(),
        }
    }
}

/// A table read running on its own thread.
pub struct TableRead {
    /// The columns, once the manifest is read (nothing when it could not
    /// be).
    pub columns: Receiver<Vec<Column>>,
    /// Batches of rows.
    pub batches: Receiver<Batch>,
    /// The report, once the channel is closed.
    pub done: JoinHandle<Result<Report, Stop>>,
    /// Set to stop the read at its next line.
    pub cancel: Arc<AtomicBool>,
}

/// Starts reading the rows of table `name` of the archive at `path`.
pub fn read_table(
    path: PathBuf,
    name: String,
    arrow: bool,
    options: Options,
) -> std::io::Result<TableRead> {
    let (tx, batches) = sync_channel(IN_FLIGHT);
    let (ctx, columns) = sync_channel(1);
    let cancel = Arc::new(AtomicBool::new(false));
    let mut reader = TableReader {
        name,
        arrow,
        table: None,
        cols: Vec::new(),
        width: 0,
        batch: None,
        tx,
        cancel: Arc::clone(&cancel),
        columns_tx: Some(ctx),
    };
    let done = std::thread::Builder::new()
        .name("ndarc-py-read".into())
        .spawn(move || {
            let report = ndarc_verify::read_path(&path, &options, &mut reader)?;
            reader.flush()?;
            Ok(report)
        })?;
    Ok(TableRead {
        columns,
        batches,
        done,
        cancel,
    })
}

/// Collects the bytes of one object or payload.
struct BinaryReader {
    kind: BinaryKind,
    /// `(bucket, key)` of an object, `(name, "")` of a payload.
    names: (String, String),
    entry: Option<usize>,
    bytes: Vec<u8>,
    chunk: Vec<u8>,
}

impl Reader for BinaryReader {
    type Error = Stop;

    fn start(&mut self, plan: &Arc<Plan>, _: LineRef<'_>) -> Result<(), Stop> {
        let m = &plan.manifest;
        let (a, b) = (&self.names.0, &self.names.1);
        self.entry = match self.kind {
            BinaryKind::Object => m.objects.iter().position(|o| &o.bucket == a && &o.key == b),
            BinaryKind::Payload => m.payloads.iter().position(|p| &p.name == a),
        };
        match self.entry {
            Some(_) => Ok(()),
            None => Err(Stop::Missing(match self.kind {
                BinaryKind::Object => format!("the archive has no object {b:?} in bucket {a:?}"),
                BinaryKind::Payload => format!("the archive has no payload {a:?}"),
            })),
        }
    }

    fn part(&mut self, part: Accepted<'_>) -> Result<(), Stop> {
        let Some(b) = part.binary() else {
            return Ok(());
        };
        if b.kind != self.kind || Some(b.entry) != self.entry {
            return Ok(());
        }
        let mut chunk = std::mem::take(&mut self.chunk);
        let decoded = match part.chunk(&mut chunk) {
            Some(d) => {
                self.bytes.extend_from_slice(d);
                true
            }
            None => false,
        };
        self.chunk = chunk;
        if decoded {
            Ok(())
        } else {
            Err(Stop::Bad("a chunk that cannot be decoded".into()))
        }
    }
}

/// The bytes of an object (`kind` Object, `names` bucket and key) or a
/// payload (`names` its name and ""), and the report of the archive they
/// were read from (the bytes count only when it is valid).
pub fn read_binary(
    path: &std::path::Path,
    kind: BinaryKind,
    names: (String, String),
    options: &Options,
) -> Result<(Vec<u8>, Report), Stop> {
    let mut r = BinaryReader {
        kind,
        names,
        entry: None,
        bytes: Vec::new(),
        chunk: Vec::new(),
    };
    let report = ndarc_verify::read_path(path, options, &mut r)?;
    Ok((r.bytes, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/valid/base.ndjson")
    }

    #[test]
    fn rows_of_a_table_are_read_and_the_report_follows() {
        let read = read_table(example(), "users".into(), false, Options::default()).unwrap();
        let cols = read.columns.recv().unwrap();
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names[0], "id");
        let mut rows = 0;
        while let Ok(Batch::Rows(b)) = read.batches.recv() {
            assert_eq!(b.cells.len(), b.rows * cols.len());
            rows += b.rows;
        }
        assert_eq!(rows, 2);
        let report = read.done.join().unwrap().unwrap();
        assert!(report.is_valid(false));
    }

    #[test]
    fn an_unknown_table_or_object_is_missing() {
        let read = read_table(example(), "nope".into(), true, Options::default()).unwrap();
        assert!(read.batches.recv().is_err());
        assert!(matches!(read.done.join().unwrap(), Err(Stop::Missing(_))));
        let r = read_binary(
            &example(),
            BinaryKind::Payload,
            ("nope".into(), String::new()),
            &Options::default(),
        );
        assert!(matches!(r, Err(Stop::Missing(_))));
        let (bytes, report) = read_binary(
            &example(),
            BinaryKind::Object,
            ("files".into(), "logo.bin".into()),
            &Options::default(),
        )
        .unwrap();
        assert!(report.is_valid(false));
        assert_eq!(bytes.len(), 8);
    }

    #[test]
    fn dropping_the_consumer_stops_the_read() {
        let read = read_table(example(), "notes".into(), false, Options::default()).unwrap();
        read.cancel.store(true, Ordering::Relaxed);
        drop(read.batches);
        assert!(matches!(read.done.join().unwrap(), Err(Stop::Cancelled)));
    }
}
