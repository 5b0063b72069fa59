//! A SQLite database wherever an archive is read (`verify`, `diff`,
//! `inspect`, the Python package).
//!
//! A database is recognised by its header (the 16 bytes `SQLite format 3`
//! and NUL), not by its name, and packed on a thread of its own by
//! [`crate::pack::pack_to_temp`], in one pass, into an unnamed temporary
//! file that the verifier or the diff then reads as it would read standard
//! input. No named file is written, and nothing is left behind.
//!
//! One pass into a file rather than two passes streamed through a pipe:
//! the manifest, which comes first, holds the number of parts, which only
//! the encoding of every row tells; streamed, every row was read and
//! encoded twice (the first pass nearly half the time of diffing two
//! databases). The reader waits for the file; the pack runs meanwhile on
//! another core, beside the other input's.

use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use crate::pack::{pack_to_temp, PackOptions, Packed};
use crate::Error;

/// Whether `path` names a SQLite database (judged by its header; a file
/// that cannot be read is not one).
pub fn is_database(path: &Path) -> bool {
    crate::is_sqlite_file(path).unwrap_or(false)
}

/// The header an on-the-fly pack gets: `product` and
/// `requiredConfiguration` (the members of the header that enter the
/// `contentHash`), and what is archived (the exclusions), taken from the
/// archive it is compared with when there is one, so that the two compare
/// like with like.
#[derive(Debug, Clone)]
pub struct Header {
    /// `product`.
    pub product: String,
    /// `requiredConfiguration`.
    pub required_configuration: Vec<String>,
    /// Tables to exclude besides the defaults (patterns, as
    /// `--exclude-table`): the archive's `excludedTables`, and the user's.
    pub exclude_tables: Vec<String>,
    /// Tables archived whatever excludes them (`--include-table`).
    pub include_tables: Vec<String>,
    /// Secret columns the user names (`--secret-column`): refused as
    /// `pack` refuses them when the database cannot leave them out.
    pub secret_columns: Vec<(String, String)>,
    /// The archive's `excludedColumns`: left out where the database can
    /// (see [`PackOptions::recorded_secret_columns`]).
    pub recorded_secret_columns: Vec<(String, String)>,
}

impl Header {
    /// The header of a database packed on its own: its file name as the
    /// product.
    pub fn for_database(path: &Path) -> Header {
        let product = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty() && s.len() <= 512 && !s.chars().any(char::is_control))
            .unwrap_or_else(|| "database".to_string());
        Header {
            product,
            required_configuration: Vec::new(),
            exclude_tables: Vec::new(),
            include_tables: Vec::new(),
            secret_columns: Vec::new(),
            recorded_secret_columns: Vec::new(),
        }
    }

    /// The header of the archive at `path` (its manifest line), with its
    /// recorded exclusions (`excludedTables`, `excludedColumns`), so that a
    /// database packed under it compares like with like; `None` when it is
    /// not a readable archive file.
    pub fn of_archive(path: &Path) -> Option<Header> {
        if is_database(path) {
            return None;
        }
        let input = ndarc_verify::lines::Input::File(std::fs::File::open(path).ok()?);
        let mut src = ndarc_verify::lines::LineSource::new(&input).ok()?;
        let line = src
            .next_line(ndarc_format::MAX_MANIFEST_LINE, false)
            .ok()??;
        if line.too_long.is_some() {
            return None;
        }
        // Read as written (`manifest::Written`), not through the typed
        // manifest (`ndarc_verify::read_manifest`): the header is taken from any
        // manifest line, even one verification refuses (the diff reports
        // that): it is `None` when `product` or `requiredConfiguration` is
        // missing, and keeps a product the manifest rules refuse, where the
        // typed manifest leaves both empty and cannot tell them apart.
        let v = ndarc_json::parse(&line.bytes).ok()?;
        let w = ndarc_format::manifest::Written::new(&v);
        let owned = |l: Vec<&str>| l.into_iter().map(str::to_string).collect::<Vec<_>>();
        Some(Header {
            exclude_tables: owned(w.excluded_tables()),
            include_tables: Vec::new(),
            secret_columns: Vec::new(),
            recorded_secret_columns: w
                .excluded_columns()
                .into_iter()
                .map(|(t, c)| (t.to_string(), c.to_string()))
                .collect(),
            product: w.product()?.to_string(),
            required_configuration: owned(w.required_configuration()?),
        })
    }
}

/// What is done on a pack's thread once its pack is done, before its
/// archive is handed to the reader (see [`on_packed`]).
static PACKED: OnceLock<fn()> = OnceLock::new();

/// Sets what is done on a pack's thread once its pack is done and its
/// buffers freed, before the archive is handed to the reader: the `ndarc`
/// binary hands its allocator's freed memory back to the system there, so
/// that the buffers the pack freed moments before are not still resident
/// while the reading allocates its own (`verify DB` of 1.2 M rows peaked
/// at 34-36 MiB, against 29-31 MiB, once the reading began as the pack
/// ended). Set once; nothing is done where it is not set.
pub fn on_packed(f: fn()) {
    let _ = PACKED.set(f);
}

/// The archive of the database at `path`, packed on the fly into memory
/// under `header` (usually [`Header::for_database`]), for the commands that
/// hold their input in memory (`mutate`, `fuzz-consumer --base`): at most
/// `limit` bytes, else `Err(None)` (reading stops there). `Err(Some(why))`
/// when it could not be packed.
pub fn pack_to_vec(path: &Path, header: &Header, limit: usize) -> Result<Vec<u8>, Option<String>> {
    let mut packing = PackStream::spawn(path, header);
    let mut buf = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let read = packing.reader().map(|r| r.take(cap).read_to_end(&mut buf));
    if let Err(why) = packing.finish() {
        return Err(Some(why.to_string()));
    }
    match read {
        Some(Ok(_)) if buf.len() > limit => Err(None),
        Some(Ok(_)) => Ok(buf),
        Some(Err(e)) => Err(Some(format!("cannot read the packed archive: {e}"))),
        None => Err(Some("the packer gave no archive".to_string())),
    }
}

/// A database being packed: read the archive from [`PackStream::reader`],
/// then [`PackStream::finish`] says whether it was all there.
pub struct PackStream {
    reader: Option<PackedReader>,
    /// The reader saw the end of the archive, or that there is none.
    ended: Arc<AtomicBool>,
    /// Set when the reader goes away: the packer stops.
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Result<(), Error>>,
}

impl PackStream {
    /// Starts packing `db` on a thread.
    pub fn spawn(db: &Path, header: &Header) -> PackStream {
        let (tx, rx) = sync_channel(1);
        let db = db.to_path_buf();
        let opts = pack_options(header);
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let (packed, _) = pack_to_temp(&db, &opts, &stopping)?;
            // The pack's buffers are freed; the reading begins now.
            if let Some(f) = PACKED.get() {
                f();
            }
            // A reader that went away takes no file.
            let _ = tx.send(packed);
            Ok(())
        });
        let ended = Arc::new(AtomicBool::new(false));
        PackStream {
            reader: Some(PackedReader {
                rx,
                file: None,
                ended: Arc::clone(&ended),
                stop: Arc::clone(&stop),
            }),
            ended,
            stop,
            handle,
        }
    }

    /// The archive, as a stream (once).
    pub fn reader(&mut self) -> Option<PackedReader> {
        self.reader.take()
    }

    /// Waits for the packer: `Err` when the database could not be packed
    /// (the reader then saw no archive), printed `CODE: message` (or
    /// [`Error::Handoff`], [`Error::PackerStopped`]). When the reader
    /// stopped before the end (the other input of a diff failed), the
    /// packer was told to stop, and its stopping is not a refusal.
    pub fn finish(mut self) -> Result<(), Error> {
        // A reader still held is dropped, which stops the packer.
        drop(self.reader.take());
        self.stop.store(true, Ordering::Release);
        let r = self
            .handle
            .join()
            .unwrap_or_else(|_| Err(Error::PackerStopped));
        if r.is_err() && !self.ended.load(Ordering::Acquire) {
            return Ok(());
        }
        r
    }
}

fn pack_options(h: &Header) -> PackOptions {
    PackOptions {
        product: Some(h.product.clone()),
        required_configuration: h.required_configuration.clone(),
        exclude_tables: h.exclude_tables.clone(),
        include_tables: h.include_tables.clone(),
        secret_columns: h.secret_columns.clone(),
        recorded_secret_columns: h.recorded_secret_columns.clone(),
        ..PackOptions::default()
    }
}

/// The archive of a [`PackStream`]: blocks until the packer is done, then
/// reads its temporary file; empty when the database could not be packed
/// ([`PackStream::finish`] says why).
pub struct PackedReader {
    rx: Receiver<Packed>,
    /// The packed file, once received (rewound to the archive's start).
    file: Option<Packed>,
    ended: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Read for PackedReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.file.is_none() {
            match self.rx.recv() {
                Ok(mut p) => {
                    p.rewind()?;
                    self.file = Some(p);
                }
                Err(_) => {
                    self.ended.store(true, Ordering::Release);
                    return Ok(0);
                }
            }
        }
        let n = match &mut self.file {
            Some(p) => p.file.read(out)?,
            None => 0,
        };
        if n == 0 && !out.is_empty() {
            self.ended.store(true, Ordering::Release);
        }
        Ok(n)
    }
}

impl PackedReader {
    /// Waits for the packer and returns the archive's temporary file and
    /// where the archive begins in it, for a reader that reads by offset
    /// (`verify`, the diff); `None` when the database could not be packed
    /// ([`PackStream::finish`] says why).
    pub fn into_file(mut self) -> Option<Packed> {
        let file = match self.file.take() {
            Some(p) => Some(p),
            None => self.rx.recv().ok(),
        };
        if file.is_none() {
            self.ended.store(true, Ordering::Release);
        }
        file
    }
}

impl Drop for PackedReader {
    fn drop(&mut self) {
        // Read to its end or not, the packer has nothing more to do.
        self.stop.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database(dir: &Path) -> std::path::PathBuf {
        let db = dir.join("shop.db");
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
             INSERT INTO items SELECT i, 'item ' || i FROM n;",
        )
        .unwrap();
        db
    }

    /// The archive read from a pack stream is the one `pack` writes, byte
    /// for byte (one pass against two), and the packer's end is clean.
    #[test]
    fn a_streamed_database_is_the_packed_archive() {
        let dir = tempfile::tempdir().unwrap();
        let db = database(dir.path());
        let header = Header::for_database(&db);
        let mut opts = pack_options(&header);
        opts.exported_at = Some("2026-12-05T00:00:00.000Z".to_string());
        opts.part_bytes = 4096;
        let mut packed = Vec::new();
        crate::pack::pack(&db, &opts, &mut packed).unwrap();
        let (mut p, summary) = pack_to_temp(&db, &opts, &AtomicBool::new(false)).unwrap();
        // Written after room for the manifest, which ends where they begin:
        // the bytes before the archive are never written.
        assert!(p.start > 0, "{}", p.start);
        let mut all = Vec::new();
        std::io::Seek::rewind(&mut p.file).unwrap();
        p.file.read_to_end(&mut all).unwrap();
        assert_eq!(all.len() as u64, p.start + summary.bytes);
        assert!(all[..p.start as usize].iter().all(|&b| b == 0));
        assert_eq!(&all[p.start as usize..], &packed[..]);
        p.rewind().unwrap();
        let mut once = Vec::new();
        p.file.read_to_end(&mut once).unwrap();
        assert_eq!(once, packed);
        assert!(summary.part_count > 10, "{}", summary.part_count);
        assert_eq!(summary.bytes, packed.len() as u64);

        let mut stream = PackStream::spawn(&db, &header);
        let mut got = Vec::new();
        stream.reader().unwrap().read_to_end(&mut got).unwrap();
        stream.finish().unwrap();
        // A whole archive: the manifest's parts, and the closing line.
        let text = String::from_utf8(got).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let manifest = ndarc_json::parse(lines[0].as_bytes()).unwrap();
        let parts = manifest.get("partCount").and_then(|v| v.as_f64()).unwrap();
        assert_eq!(lines.len() as f64, parts + 2.0);
        assert!(
            lines[lines.len() - 1].contains("\"kind\":\"closing\""),
            "{}",
            lines[lines.len() - 1]
        );
    }

    /// A database that cannot be packed gives the reader no archive, and
    /// `finish` says why; a reader dropped unread stops the packer without
    /// an error.
    #[test]
    fn a_refused_database_gives_no_archive() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("not.db");
        std::fs::write(&db, b"SQLite format 3\0 but not a database").unwrap();
        let mut stream = PackStream::spawn(&db, &Header::for_database(&db));
        let mut got = Vec::new();
        stream.reader().unwrap().read_to_end(&mut got).unwrap();
        assert!(got.is_empty());
        assert!(stream.finish().is_err());

        let db = database(dir.path());
        let mut stream = PackStream::spawn(&db, &Header::for_database(&db));
        drop(stream.reader());
        stream.finish().unwrap();
    }
}
