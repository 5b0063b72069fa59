//! `pack`: a SQLite database to an archive, as the reference producer
//! (`catalogue.mjs`, `copies.mjs`, `export.mjs`) writes it. SPEC.md
//! "Databases and archives" is the normative text.
//!
//! The database is opened read-only and read in one transaction (one
//! consistent snapshot), twice: the first pass checks every refusal and
//! measures the parts (the manifest, written first, carries the counts and
//! `partCount`); the second writes. Memory holds one part, whatever the size
//! of the database.
//!
//! By job: `catalogue.rs` reads the schema (SPEC.md §13.2, §13.3);
//! `devdata.rs` turns the producer's export-time drops of development data
//! into row filters and rewritten cells (§13.4, "Development data");
//! `rows.rs` encodes cells and row items (§13.4);
//! `objects.rs` finds, hashes and chunks objects and payloads (§13.5);
//! `manifest.rs` checks the options and writes the header; `refuse.rs` holds
//! the errors and refusals; `batch.rs` copies rows out of SQLite for the
//! second thread; this file is the two-pass driver.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::time::Duration;

use ndarc_format::catalogue::{content_header_digest, schema_identity};
use ndarc_format::hash::row_content_pieces;
use ndarc_format::pack::{ArchiveWriter, PartWriter, RowPacker};
use ndarc_format::{ContentHasher, MAX_PART_LINE};
use ndarc_json::Value;
use rusqlite::{Connection, OpenFlags};

mod batch;
mod catalogue;
mod devdata;
mod lines;
mod manifest;
mod objects;
mod refs;
mod refuse;
mod rows;
mod table;

use crate::Error;
use batch::Batch;
use catalogue::catalogue;
use lines::{line_alone, write_lines, LineOut, Lines, ReturnLines, SendLines, Spool, Writer};
use manifest::{check_options, manifest};
use objects::{binaries, cap, unreadable, write_binary, Binary};
use refuse::out_err;
use rows::{admit, duplicate_key, encode_row};

pub use crate::error::Refusal;
pub use refs::ObjectReferences;
pub(crate) use refuse::sql_error;

pub use ndarc_format::catalogue::DEFAULT_EXCLUDED_TABLES;

/// What to pack and the manifest's header members.
#[derive(Debug, Clone)]
pub struct PackOptions {
    /// `product`; `None`: the database file's stem (or `database` when the
    /// stem is not a name).
    pub product: Option<String>,
    /// `exportedAt` (`YYYY-MM-DDTHH:MM:SS.sssZ`); `None`: now.
    pub exported_at: Option<String>,
    /// `epoch` (default 0).
    pub epoch: u64,
    /// `sourceIdentity` (default `local`).
    pub source_identity: String,
    /// `requiredConfiguration`, in the order given.
    pub required_configuration: Vec<String>,
    /// Exclusion patterns added to [`DEFAULT_EXCLUDED_TABLES`].
    pub exclude_tables: Vec<String>,
    /// Tables archived even when a pattern excludes them (exact names).
    pub include_tables: Vec<String>,
    /// The producer's `derivedTables`: excluded, with their shadow tables
    /// (`NAME_…`), e.g. full-text indexes rebuilt after an import.
    pub derived_tables: Vec<String>,
    /// Secret columns `(table, column)`: left out of rows and listed in
    /// `excludedColumns`.
    pub secret_columns: Vec<(String, String)>,
    /// Secret columns another archive records (its `excludedColumns`), for
    /// a database compared with it: left out like `secret_columns` where
    /// the database has the column and it can be left out (an archived
    /// table's nullable column, not in the key, not generated), and
    /// ignored elsewhere, where the comparison then shows the difference.
    pub recorded_secret_columns: Vec<(String, String)>,
    /// Every regular file under this directory becomes an object of
    /// [`PackOptions::bucket`], its key the relative path with `/`.
    pub objects_dir: Option<PathBuf>,
    /// The bucket of the objects of `objects_dir`.
    pub bucket: Option<String>,
    /// More buckets, each with its directory and optional prefix (the
    /// producer's `buckets` map; `objects_dir` + `bucket` is one more).
    pub buckets: Vec<BucketDir>,
    /// Metadata sidecars `(bucket, file)`: the `httpMetadata` and
    /// `customMetadata` of the bucket's objects (see [`crate::metadata`]);
    /// a bucket without one has `{}` for both. One per bucket packed; a
    /// key that is not an object of the bucket is an option error.
    pub bucket_metadata: Vec<(String, PathBuf)>,
    /// Files under `objects_dir` that are not objects, as (device, inode):
    /// the archive being written there (its temporary file, or standard
    /// output redirected there), which would otherwise be read while it
    /// grows. Matched by identity, never by name (Unix; ignored
    /// elsewhere).
    pub skip_files: Vec<(u64, u64)>,
    /// Payloads `(name, file)`.
    pub payloads: Vec<(String, PathBuf)>,
    /// Buckets whose objects must be exactly the distinct non-null values
    /// of a column (the producer's `objectReferences`): refused with
    /// `object_references`, `reference_column_missing` or
    /// `reference_column_excluded` otherwise.
    pub object_references: Vec<ObjectReferences>,
    /// The producer's `partBytes`, 1024 ..= 16 MiB (default 16 MiB).
    pub part_bytes: usize,
    /// How long to wait for a writer's lock before giving up
    /// (`database_locked`); default 1 s.
    pub busy_timeout: Duration,
}

impl Default for PackOptions {
    fn default() -> Self {
        PackOptions {
            product: None,
            exported_at: None,
            epoch: 0,
            source_identity: "local".to_string(),
            required_configuration: Vec::new(),
            exclude_tables: Vec::new(),
            include_tables: Vec::new(),
            derived_tables: Vec::new(),
            secret_columns: Vec::new(),
            recorded_secret_columns: Vec::new(),
            objects_dir: None,
            bucket: None,
            buckets: Vec::new(),
            bucket_metadata: Vec::new(),
            skip_files: Vec::new(),
            payloads: Vec::new(),
            object_references: Vec::new(),
            part_bytes: MAX_PART_LINE,
            busy_timeout: Duration::from_secs(1),
        }
    }
}

/// One bucket of [`PackOptions::buckets`]: every regular file under `dir`
/// whose key (the path relative to `dir`, with `/`) starts with `prefix`
/// becomes an object of `bucket`, as the producer lists a bucket under its
/// prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketDir {
    /// The bucket's binding name.
    pub bucket: String,
    /// The directory holding the bucket's objects.
    pub dir: PathBuf,
    /// Only keys starting with this are objects (the producer's
    /// `prefix`); `None` takes every file.
    pub prefix: Option<String>,
}

/// What [`pack`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackSummary {
    /// Bytes written.
    pub bytes: u64,
    /// Part lines written.
    pub part_count: u64,
    /// The closing line's `contentHash`.
    pub content_hash: String,
    /// The closing line's `archiveHash`.
    pub archive_hash: String,
    /// The manifest's `schema`.
    pub schema: String,
    /// Archived tables with their row counts, in manifest order.
    pub tables: Vec<(String, u64)>,
    /// Excluded tables, in manifest order.
    pub excluded_tables: Vec<String>,
    /// Number of objects.
    pub objects: usize,
    /// Number of payloads.
    pub payloads: usize,
}

/// Opens `db` read-only, for one consistent read.
pub(crate) fn open_read_only(db: &Path, busy: Duration) -> Result<Connection, Error> {
    match crate::is_sqlite_file(db) {
        Ok(true) => {}
        Ok(false) => {
            return Err(Error::Unreadable {
                code: "not_a_database",
                message: "not a SQLite database (the file does not start with the SQLite header)"
                    .to_string(),
            })
        }
        Err(e) => return Err(unreadable("database_unreadable", db, &e)),
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_error)?;
    conn.busy_timeout(busy).map_err(sql_error)?;
    Ok(conn)
}

/// Packs the SQLite database `db` into an archive written to `out`, as the
/// reference producer does (SPEC.md "Databases and archives").
///
/// Nothing is written to `out` unless the whole database can be archived:
/// every refusal is found by the first pass, before the manifest is written.
/// The database is opened read-only and never written.
///
/// Errors: [`Error::Refused`] when the producer refuses the database
/// (exit 1), otherwise the database or a file cannot be read, the options
/// are invalid, or `out` fails (exit 2).
pub fn pack(db: &Path, opts: &PackOptions, out: &mut dyn Write) -> Result<PackSummary, Error> {
    in_snapshot(db, opts, |conn, product, exported_at, opts| {
        pack_in(conn, product, exported_at, opts, out)
    })
}

/// Packs the SQLite database `db` as [`pack()`] does, in one pass instead
/// of two, into an unnamed temporary file (in the temporary directory):
/// for a database read where an archive is (`verify`, `diff`, `inspect` of
/// a database; [`crate::stream`]), where the second read of every row was
/// nearly half the time.
///
/// The rows' counts are SQLite's (`count(*)` on the same snapshot, checked
/// against the rows read), so the `contentHash` is made as the rows are
/// encoded. The part lines are written, with their digests, after room
/// for the manifest (its line with `partCount` 0, and 20 digits more), and
/// the manifest, once `partCount` is known, just before them: the archive
/// begins [`Packed::start`] bytes into the file, and no line is written
/// twice (the part lines were once spooled to a second file and copied
/// after the manifest: a quarter of the CPU of diffing two databases went
/// to the kernel's writes). The same archive as [`pack()`] writes, byte
/// for byte, and the same refusals. When `stop` is set (the reader went
/// away), the pass stops with [`Error::Handoff`].
pub fn pack_to_temp(
    db: &Path,
    opts: &PackOptions,
    stop: &AtomicBool,
) -> Result<(Packed, PackSummary), Error> {
    in_snapshot(db, opts, |conn, product, exported_at, opts| {
        pack_once(conn, product, exported_at, opts, stop)
    })
}

/// A database packed by [`pack_to_temp`]: an unnamed temporary file whose
/// archive begins `start` bytes in (the bytes before it are a hole, or
/// zeros, never read). Read it with `ndarc_verify::lines::Input::FileFrom`,
/// `ndarc_verify::verify_file` or `ndarc_diff::Source::File`, which take
/// the start, or [`Packed::rewind`] it for a reader that reads from the
/// file's position.
#[derive(Debug)]
pub struct Packed {
    /// The temporary file.
    pub file: std::fs::File,
    /// Where the archive begins in it.
    pub start: u64,
}

impl Packed {
    /// Seeks the file to the archive's first byte, for a reader that reads
    /// the file from its position (a stream).
    pub fn rewind(&mut self) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        self.file.seek(SeekFrom::Start(self.start)).map(drop)
    }
}

/// The digits the manifest's `partCount` may take beyond the one digit of
/// the `0` its room is measured with (a part count is at most 21 digits
/// before ECMAScript writes it with an exponent).
const PART_COUNT_DIGITS: u64 = 20;

/// Opens `db` read-only and runs `f` in one snapshot of it, with the
/// product and `exportedAt` checked and the recorded secret columns the
/// database can leave out adopted.
fn in_snapshot<T>(
    db: &Path,
    opts: &PackOptions,
    f: impl FnOnce(&Connection, &str, &str, &PackOptions) -> Result<T, Error>,
) -> Result<T, Error> {
    let (product, exported_at) = check_options(db, opts)?;
    let conn = open_read_only(db, opts.busy_timeout)?;
    // One snapshot: a deferred transaction whose first read takes it.
    conn.execute_batch("BEGIN").map_err(sql_error)?;
    conn.query_row("SELECT count(*) FROM main.sqlite_schema", [], |_| Ok(()))
        .map_err(sql_error)?;
    let adopted;
    let opts = if opts.recorded_secret_columns.is_empty() {
        opts
    } else {
        adopted = adopt_recorded(&conn, opts)?;
        &adopted
    };
    let result = f(&conn, &product, &exported_at, opts);
    let _ = conn.execute_batch("COMMIT");
    result
}

/// `opts` with the recorded secret columns the database can leave out
/// added to its secret columns (see [`PackOptions::recorded_secret_columns`]),
/// judged on the same snapshot.
fn adopt_recorded(conn: &Connection, opts: &PackOptions) -> Result<PackOptions, Error> {
    let cat = catalogue(conn, opts)?;
    let mut adopted = PackOptions {
        recorded_secret_columns: Vec::new(),
        ..opts.clone()
    };
    for (t, c) in &opts.recorded_secret_columns {
        let fits = cat.tables.iter().any(|table| {
            table.name == *t
                && table.columns.iter().any(|col| {
                    col.name == *c && !col.notnull && col.pk == 0 && col.generated.is_none()
                })
        });
        if fits && !adopted.secret_columns.contains(&(t.clone(), c.clone())) {
            adopted.secret_columns.push((t.clone(), c.clone()));
        }
    }
    Ok(adopted)
}

fn pack_in(
    conn: &Connection,
    product: &str,
    exported_at: &str,
    opts: &PackOptions,
    out: &mut dyn Write,
) -> Result<PackSummary, Error> {
    let (mut cat, mut references, objects, payloads) = prepare(conn, opts)?;
    let part_bytes = opts.part_bytes;

    // Pass 1: every refusal, the counts and the number of parts.
    let tables = &cat.tables;
    let (counts, mut part_count) = pipeline(conn, tables, None, |rx, _, spare| {
        measure_rows(tables, part_bytes, rx, spare, &mut references)
    })?;
    refs::finish(&references, tables)?;
    for (t, n) in cat.tables.iter_mut().zip(counts) {
        t.count = n;
    }
    part_count += binary_parts(&objects, &payloads, part_bytes);

    // Pass 2: write.
    let m = manifest(
        product,
        exported_at,
        opts,
        &cat,
        &objects,
        &payloads,
        part_count,
    );
    let content = ContentHasher::new(&content_header_digest(&m));
    let mut archive = ArchiveWriter::begin(
        &ndarc_json::to_canonical_vec(&Value::Object(m)),
        part_count,
        out,
    )
    .map_err(out_err)?;
    let part = PartWriter::new(part_bytes);
    let mut written = LineOut {
        archive: &mut archive,
        out: &mut *out,
    };
    let (mut part, content) = write_rows(
        conn,
        &cat.tables,
        part_bytes,
        (part, content),
        &mut written,
        None,
    )?;
    archive.finish_part(&mut part, out).map_err(out_err)?;
    let bins = (&objects[..], &payloads[..]);
    seal(&cat, bins, part_bytes, (part, archive, content), out)
}

/// What both packs read before the rows: the catalogue, the reference
/// rules with their buckets' keys, the objects and the payloads.
type Prepared = (
    catalogue::Catalogue,
    Vec<refs::Rule>,
    Vec<Binary>,
    Vec<Binary>,
);

/// The parts the objects and payloads take.
fn binary_parts(objects: &[Binary], payloads: &[Binary], part_bytes: usize) -> u64 {
    objects
        .iter()
        .chain(payloads)
        .map(|b| ndarc_format::pack::chunk_count(b.size, cap(b, part_bytes)))
        .sum()
}

/// Reads what both packs need before the rows ([`Prepared`]).
fn prepare(conn: &Connection, opts: &PackOptions) -> Result<Prepared, Error> {
    let cat = catalogue(conn, opts)?;
    let mut references = refs::resolve(&cat, opts)?;
    let (objects, payloads) = binaries(opts)?;
    for r in &mut references {
        r.keys(&objects);
    }
    Ok((cat, references, objects, payloads))
}

/// The end of both packs, once the row parts are written: the objects'
/// and payloads' parts, the part count checked against the manifest's,
/// the closing line.
fn seal(
    cat: &catalogue::Catalogue,
    (objects, payloads): (&[Binary], &[Binary]),
    part_bytes: usize,
    (mut part, mut archive, content): (PartWriter, ArchiveWriter, ContentHasher),
    out: &mut dyn Write,
) -> Result<PackSummary, Error> {
    let part_count = archive.planned();
    let mut chunk = Vec::new();
    for b in objects.iter().chain(payloads) {
        write_binary(b, part_bytes, &mut part, &mut archive, out, &mut chunk)?;
    }
    if archive.parts() != part_count {
        // In two passes: the database changed between them in a way the
        // row counts did not show.
        return Err(Error::Unreadable {
            code: "database_unreadable",
            message: format!("planned {part_count} parts but wrote {}", archive.parts()),
        });
    }
    let content_hash = content.finish();
    let sealed = archive.close(&content_hash, out).map_err(out_err)?;
    Ok(PackSummary {
        bytes: sealed.bytes,
        part_count,
        content_hash,
        archive_hash: sealed.archive_hash,
        schema: schema_identity(cat.tables.iter().map(|t| (t.name.as_str(), t.sql.as_str()))),
        tables: cat
            .tables
            .iter()
            .map(|t| (t.name.clone(), t.count))
            .collect(),
        excluded_tables: cat.excluded.clone(),
        objects: objects.len(),
        payloads: payloads.len(),
    })
}

/// [`pack_to_temp`]'s one pass: [`pack_in`] with the counts taken from
/// SQLite first and the part lines written before the manifest, after
/// room for it.
fn pack_once(
    conn: &Connection,
    product: &str,
    exported_at: &str,
    opts: &PackOptions,
    stop: &AtomicBool,
) -> Result<(Packed, PackSummary), Error> {
    use std::io::{BufWriter, Seek, SeekFrom};
    let temp = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| {
            Error::Output(std::io::Error::new(e.kind(), format!("{what}: {e}")))
        }
    };
    let (mut cat, mut references, objects, payloads) = prepare(conn, opts)?;
    let part_bytes = opts.part_bytes;
    // The counts, as the manifest (and so the `contentHash`'s first term)
    // needs them before the rows; the pass checks each against the rows
    // it reads, in the same snapshot.
    for t in cat.tables.iter_mut() {
        let mut sql = format!("SELECT count(*) FROM main.{}", crate::quote(&t.name));
        if let Some(filter) = &t.dev.filter {
            sql.push_str(" WHERE ");
            sql.push_str(filter);
        }
        let n: i64 = conn.query_row(&sql, [], |r| r.get(0)).map_err(sql_error)?;
        t.count = u64::try_from(n).unwrap_or(0);
    }
    // The manifest with `partCount` 0, which the content header does not
    // hold: the one written last differs from it only in those digits.
    let header = manifest(product, exported_at, opts, &cat, &objects, &payloads, 0);
    let content = ContentHasher::new(&content_header_digest(&header));
    let room =
        ndarc_json::to_canonical_vec(&Value::Object(header)).len() as u64 + 1 + PART_COUNT_DIGITS;
    let mut file = tempfile::tempfile().map_err(temp("cannot create a temporary file"))?;
    file.seek(SeekFrom::Start(room))
        .map_err(temp("cannot write a temporary file"))?;
    let mut spool = Spool {
        file: BufWriter::with_capacity(1 << 20, file),
        digests: Vec::new(),
        bytes: 0,
        stop,
    };
    let part = PartWriter::new(part_bytes);
    let (mut part, content) = write_rows(
        conn,
        &cat.tables,
        part_bytes,
        (part, content),
        &mut spool,
        Some(&mut references),
    )?;
    let mut last = Vec::new();
    if part.hand_over(&mut last) {
        line_alone(&mut spool, &last)?;
    }
    drop(last);
    refs::finish(&references, &cat.tables)?;
    let mut part_count = spool.digests.len() as u64;
    part_count += binary_parts(&objects, &payloads, part_bytes);
    let m = manifest(
        product,
        exported_at,
        opts,
        &cat,
        &objects,
        &payloads,
        part_count,
    );
    let mut m = ndarc_json::to_canonical_vec(&Value::Object(m));
    let Spool {
        file: mut out,
        digests,
        bytes,
        ..
    } = spool;
    let archive = ArchiveWriter::after_parts(&m, part_count, &digests, bytes);
    drop(digests);
    // The binary parts and the closing follow the rows' parts.
    let summary = seal(
        &cat,
        (&objects, &payloads),
        part_bytes,
        (part, archive, content),
        &mut out,
    )?;
    let mut file = out
        .into_inner()
        .map_err(|e| temp("cannot write a temporary file")(e.into_error()))?;
    m.push(b'\n');
    let Some(start) = room.checked_sub(m.len() as u64) else {
        // `manifest` writes the same members whatever the part count.
        return Err(Error::Output(std::io::Error::other(format!(
            "the manifest line ({} bytes) outgrew the {room} bytes kept for it",
            m.len()
        ))));
    };
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.write_all(&m))
        .map_err(temp("cannot write a temporary file"))?;
    Ok((Packed { file, start }, summary))
}

/// The part writer and the `contentHash`, handed to the encoding thread
/// and back.
type Sealing = (PartWriter, ContentHasher);

/// A message to the encoding thread: rows of table `.0`, or the end of
/// table `.0`.
enum ToEncoder {
    Rows(usize, Batch),
    End(usize),
}

/// Batches in flight between the reading and the encoding thread (each at
/// most about [`batch::BATCH_BYTES`]).
const IN_FLIGHT: usize = 4;

/// Pass 2's rows: row items, parts and hashes (row digests for
/// `contentHash`, lines for `archiveHash`) made on the second thread of
/// [`pipeline`]. Returns the part writer with the last part still open.
fn write_rows(
    conn: &Connection,
    tables: &[catalogue::Table],
    part_bytes: usize,
    sealing: Sealing,
    out: &mut dyn Lines,
    one_pass: Option<&mut [refs::Rule]>,
) -> Result<Sealing, Error> {
    pipeline(conn, tables, Some(out), |rx, lines, spare| {
        encode_rows(tables, part_bytes, sealing, rx, lines, spare, one_pass)
    })
}

/// Reads every table's rows on this thread (the connection stays here)
/// and hands them in batches to `work` on a second thread, which may send
/// back finished part lines; this thread seals and writes them to `out`,
/// in order (pass 1 sends none, and has no `out`).
/// The two threads overlap SQLite's reads and the writes with the encoding
/// and hashing; the bytes are those one thread would write. When both
/// fail, `work`'s error wins: it is about an earlier row than this
/// thread's read, which runs ahead.
fn pipeline<T, F>(
    conn: &Connection,
    tables: &[catalogue::Table],
    out: Option<&mut dyn Lines>,
    work: F,
) -> Result<T, Error>
where
    T: Send,
    F: FnOnce(&Receiver<ToEncoder>, SendLines<'_>, &Sender<Batch>) -> Result<T, Error> + Send,
{
    let (tx, rx) = sync_channel::<ToEncoder>(IN_FLIGHT);
    // Unbounded, so that neither thread can block the other: lines wait
    // only while this thread reads or waits to hand on a batch, and the
    // batches in flight are bounded.
    let (line_tx, line_rx) = channel::<Vec<u8>>();
    let (spare_tx, spare_rx) = channel::<Batch>();
    let (used_tx, used_rx) = channel::<Vec<u8>>();
    // How many buffers wait in `used`.
    let spare_lines = AtomicUsize::new(0);
    let spare_lines = &spare_lines;
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("ndarc-pack-encode".to_string())
            .spawn_scoped(s, move || {
                work(&rx, (&line_tx, &used_rx, spare_lines), &spare_tx)
            })
            .map_err(|e| {
                Error::Output(std::io::Error::other(format!("cannot start a thread: {e}")))
            })?;
        let lines = (&line_rx, &used_tx, spare_lines);
        let mut out = Writer { out, waiting: None };
        let mut read = read_rows(conn, tables, tx, lines, &spare_rx, &mut out);
        // The worker ends when the rows do (or on its error); the lines
        // it finished meanwhile are written first.
        if read.is_ok() {
            for line in line_rx.iter() {
                if let Err(e) = out.line(line, &mut drop) {
                    read = Err(e);
                    break;
                }
            }
        }
        if read.is_ok() {
            read = out.flush();
        }
        drop(line_rx);
        let done = worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        read.map(|()| done)
    })
}

/// Pass 1 on the second thread of [`pipeline`]: every row-level refusal,
/// each table's row count, and the number of row parts; the rows of
/// referenced tables checked against their buckets (`refs`).
fn measure_rows(
    tables: &[catalogue::Table],
    part_bytes: usize,
    rx: &Receiver<ToEncoder>,
    spare: &Sender<Batch>,
    references: &mut [refs::Rule],
) -> Result<(Vec<u64>, u64), Error> {
    let mut item = Vec::with_capacity(4096);
    let mut counts = vec![0u64; tables.len()];
    let mut part_count = 0u64;
    let mut packer = RowPacker::new(part_bytes);
    let mut index = 0u64;
    let mut last_key: Option<Vec<u8>> = None;
    for msg in rx.iter() {
        match msg {
            ToEncoder::Rows(ti, batch) => {
                let t = &tables[ti];
                for r in 0..batch.rows() {
                    let row = batch.row(r);
                    let e = encode_row(t, &row, index, &mut item, true)?;
                    admit(
                        t,
                        &mut packer,
                        e.len,
                        index,
                        &row,
                        &mut part_count,
                        part_bytes,
                    )?;
                    duplicate_key(t, &row, index, &mut last_key)?;
                    refs::check_row(references, tables, ti, &row, index)?;
                    index += 1;
                }
                let _ = spare.send(batch);
            }
            ToEncoder::End(ti) => {
                counts[ti] = index;
                packer = RowPacker::new(part_bytes);
                index = 0;
                last_key = None;
            }
        }
    }
    Ok((counts, part_count))
}

/// The reading side of [`write_rows`]. Stops early, with `Ok`, when the
/// encoder has stopped (its error is the one reported).
fn read_rows(
    conn: &Connection,
    tables: &[catalogue::Table],
    tx: SyncSender<ToEncoder>,
    lines: ReturnLines<'_>,
    spare: &Receiver<Batch>,
    out: &mut Writer<'_>,
) -> Result<(), Error> {
    let fresh = |width: usize| {
        let mut b = spare.try_recv().unwrap_or_default();
        b.reset(width);
        b
    };
    for (ti, t) in tables.iter().enumerate() {
        let width = t.cells.len() + 1;
        let mut st = conn.prepare(&t.select).map_err(sql_error)?;
        let mut rows = st.query([]).map_err(sql_error)?;
        let mut batch = fresh(width);
        while let Some(r) = rows.next().map_err(sql_error)? {
            batch.push(r)?;
            if batch.full() {
                if tx.send(ToEncoder::Rows(ti, batch)).is_err() {
                    return Ok(());
                }
                write_lines(lines, out)?;
                batch = fresh(width);
            }
        }
        if batch.rows() > 0 && tx.send(ToEncoder::Rows(ti, batch)).is_err() {
            return Ok(());
        }
        if tx.send(ToEncoder::End(ti)).is_err() {
            return Ok(());
        }
        write_lines(lines, out)?;
    }
    Ok(())
}

/// The encoding side of [`write_rows`]: row items, parts and hashes, as
/// one thread would make them. In one pass (`one_pass`: the reference
/// rules), it also checks what the first pass checks ([`measure_rows`]),
/// in the same order, so that the first refusal is the same.
fn encode_rows(
    tables: &[catalogue::Table],
    part_bytes: usize,
    (mut part, mut content): Sealing,
    rx: &Receiver<ToEncoder>,
    (lines, used, spare_lines): SendLines<'_>,
    spare: &Sender<Batch>,
    mut one_pass: Option<&mut [refs::Rule]>,
) -> Result<Sealing, Error> {
    let mut last_key: Option<Vec<u8>> = None;
    let mut item = Vec::with_capacity(4096);
    let mut digests: Vec<[u8; 32]> = Vec::with_capacity(1024);
    let mut messages = RowMessages::default();
    let mut packer = RowPacker::new(part_bytes);
    let mut index = 0u64;
    for msg in rx.iter() {
        match msg {
            ToEncoder::Rows(ti, batch) => {
                let t = &tables[ti];
                for r in 0..batch.rows() {
                    let row = batch.row(r);
                    let e = encode_row(t, &row, index, &mut item, false)?;
                    let mut ignored = 0;
                    let starts =
                        admit(t, &mut packer, e.len, index, &row, &mut ignored, part_bytes)?;
                    if let Some(references) = one_pass.as_deref_mut() {
                        duplicate_key(t, &row, index, &mut last_key)?;
                        refs::check_row(references, tables, ti, &row, index)?;
                    }
                    if starts {
                        messages.hash(&mut digests);
                        content.add_row_digests(&digests);
                        digests.clear();
                        let mut line = match used.try_recv() {
                            Ok(l) => {
                                spare_lines.fetch_sub(1, Ordering::Relaxed);
                                l
                            }
                            Err(_) => Vec::new(),
                        };
                        if part.hand_over(&mut line) && lines.send(line).is_err() {
                            // The writing thread stopped on its own error,
                            // which is the one reported.
                            return Ok((part, content));
                        }
                        part.begin();
                    }
                    part.push_item(&item);
                    let rowid_text = t.rowid_alias.map(|_| &item[e.rowid.clone()]);
                    messages.push(&row_content_pieces(&item[e.row], rowid_text, &t.name_json));
                    if messages.full() {
                        messages.hash(&mut digests);
                    }
                    index += 1;
                }
                let _ = spare.send(batch);
            }
            ToEncoder::End(ti) => {
                let t = &tables[ti];
                if index != t.count {
                    return Err(Error::Unreadable {
                        code: "database_unreadable",
                        message: format!(
                            "table {} changed between the two reads of one transaction",
                            t.name
                        ),
                    });
                }
                packer = RowPacker::new(part_bytes);
                index = 0;
                last_key = None;
            }
        }
    }
    messages.hash(&mut digests);
    content.add_row_digests(&digests);
    Ok((part, content))
}

/// Row content messages waiting to be hashed, padded as SHA-256 messages:
/// hashed several at a time by `ndarc-sha` (eight in vector lanes, or two
/// interleaved), as the verifier hashes them, rather than one by one.
#[derive(Default)]
struct RowMessages {
    bytes: Vec<u8>,
    blocks: Vec<u32>,
}

impl RowMessages {
    /// Bytes of messages gathered before they are hashed: a few hundred
    /// rows, whatever the part size.
    const BYTES: usize = 64 << 10;

    /// Adds the message made of `pieces`.
    fn push(&mut self, pieces: &[&[u8]]) {
        self.blocks
            .push(ndarc_sha::push_message(&mut self.bytes, pieces));
    }

    /// Whether the messages should be hashed now.
    fn full(&self) -> bool {
        self.bytes.len() >= Self::BYTES
    }

    /// Appends the messages' digests to `out`, in order, and empties.
    fn hash(&mut self, out: &mut Vec<[u8; 32]>) {
        if self.blocks.is_empty() {
            return;
        }
        let mut unused = ndarc_sha::Stream::new();
        ndarc_sha::update_with_messages(&mut unused, &[], &self.bytes, &self.blocks, out);
        self.bytes.clear();
        self.blocks.clear();
    }
}
