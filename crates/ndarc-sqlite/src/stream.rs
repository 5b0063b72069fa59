//! A SQLite database wherever an archive is read (`verify`, `diff`,
//! `inspect`, the Python package).
//!
//! A database is recognised by its header (the 16 bytes `SQLite format 3`
//! and NUL), not by its name, and packed on the fly by [`crate::pack()`]
//! on a thread of its own, into a bounded in-memory pipe that the verifier
//! or the diff reads as it would read standard input. No archive file is
//! written.
//!
//! The pipe is a channel of chunks, not `std::io::pipe`: this is library
//! code (the Python package embeds it), and a reader that stops early
//! (the other input of a diff failed) would make the packer's next write
//! raise SIGPIPE in a host that has not ignored it, killing the host. A
//! channel also takes no file descriptors and no system call per chunk.

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::pack::{pack, PackOptions};
use crate::Error;

/// Chunks of archive in flight between the packer and the reader: with
/// 256 KiB chunks, at most about 1 MiB is held.
const CHUNK: usize = 256 * 1024;
const IN_FLIGHT: usize = 4;

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

/// The archive of the database at `path`, packed on the fly into memory,
/// for the commands that hold their input in memory (`mutate`,
/// `fuzz-consumer --base`): at most `limit` bytes, else `Err(None)`
/// (reading stops there). `Err(Some(why))` when it could not be packed.
pub fn pack_to_vec(path: &Path, limit: usize) -> Result<Vec<u8>, Option<String>> {
    let mut packing = PackStream::spawn(path, &Header::for_database(path));
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
    reader: Option<ChanReader>,
    /// The reader saw the end of the stream.
    ended: Arc<AtomicBool>,
    handle: JoinHandle<Result<(), Error>>,
}

impl PackStream {
    /// Starts packing `db` on a thread.
    pub fn spawn(db: &Path, header: &Header) -> PackStream {
        let (tx, rx) = sync_channel(IN_FLIGHT);
        // Read chunks go back to the packer to be filled again: a fresh
        // chunk each time was fresh pages zeroed by the kernel each time.
        let (back_tx, back_rx) = sync_channel(IN_FLIGHT);
        let db = db.to_path_buf();
        let opts = pack_options(header);
        let handle = std::thread::spawn(move || {
            let mut w = ChanWriter {
                tx,
                back: back_rx,
                buf: Vec::with_capacity(CHUNK),
            };
            pack(&db, &opts, &mut w)?;
            w.flush().map_err(Error::Handoff)
        });
        let ended = Arc::new(AtomicBool::new(false));
        PackStream {
            reader: Some(ChanReader {
                rx,
                back: back_tx,
                cur: Vec::new(),
                pos: 0,
                ended: Arc::clone(&ended),
            }),
            ended,
            handle,
        }
    }

    /// The archive, as a stream (once).
    pub fn reader(&mut self) -> Option<ChanReader> {
        self.reader.take()
    }

    /// Waits for the packer: `Err` when the database could not be packed
    /// (the reader then saw a truncated archive), printed `CODE: message`
    /// (or [`Error::Handoff`], [`Error::PackerStopped`]). When the reader stopped
    /// before the end (the other input failed), the packer's broken pipe
    /// is not a refusal.
    pub fn finish(mut self) -> Result<(), Error> {
        // A reader still held would keep the packer waiting.
        drop(self.reader.take());
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

/// The writing end of the pipe.
struct ChanWriter {
    tx: SyncSender<Vec<u8>>,
    /// Chunks the reader has read, to be filled again.
    back: Receiver<Vec<u8>>,
    buf: Vec<u8>,
}

impl Write for ChanWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = match self.back.try_recv() {
            Ok(mut used) => {
                used.clear();
                used
            }
            Err(_) => Vec::with_capacity(CHUNK),
        };
        let chunk = std::mem::replace(&mut self.buf, next);
        self.tx
            .send(chunk)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the reader stopped"))
    }
}

/// The reading end of the pipe: the archive as `pack` writes it.
pub struct ChanReader {
    rx: Receiver<Vec<u8>>,
    /// Where read chunks go back to the writer (when it has room for them).
    back: SyncSender<Vec<u8>>,
    cur: Vec<u8>,
    pos: usize,
    ended: Arc<AtomicBool>,
}

impl Read for ChanReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.cur.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    let used = std::mem::replace(&mut self.cur, chunk);
                    // A chunk grown for a long line (up to 16 MiB) is freed,
                    // not kept: four of them would be 64 MiB held.
                    if used.capacity() > 0 && used.capacity() <= 2 * CHUNK {
                        let _ = self.back.try_send(used);
                    }
                    self.pos = 0;
                }
                Err(_) => {
                    self.ended.store(true, Ordering::Release);
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.cur.len() - self.pos);
        out[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the writer writes is what the reader reads, and a chunk read
    /// goes back to the writer to be filled again (the same buffer).
    #[test]
    fn chunks_read_are_filled_again() {
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let (back_tx, back_rx) = sync_channel(IN_FLIGHT);
        let ended = Arc::new(AtomicBool::new(false));
        let mut r = ChanReader {
            rx,
            back: back_tx,
            cur: Vec::new(),
            pos: 0,
            ended: Arc::clone(&ended),
        };
        let mut w = ChanWriter {
            tx,
            back: back_rx,
            buf: Vec::with_capacity(CHUNK),
        };
        let data: Vec<u8> = (0..CHUNK * 3 + 17).map(|i| (i % 251) as u8).collect();
        let first = w.buf.as_ptr();
        w.write_all(&data[..CHUNK]).unwrap();
        w.write_all(&data[CHUNK..2 * CHUNK]).unwrap();
        // Reading into the second chunk gives the first back.
        let mut got = vec![0u8; CHUNK + 1];
        r.read_exact(&mut got).unwrap();
        let returned = w.back.try_recv().expect("the first chunk came back");
        assert_eq!(returned.as_ptr(), first);
        // Held until here, the buffer cannot be a fresh one at its address.
        r.back.try_send(returned).unwrap();
        assert_eq!(w.buf.len(), 0);
        w.write_all(&data[2 * CHUNK..]).unwrap();
        w.flush().unwrap();
        assert_eq!(w.buf.as_ptr(), first, "the first chunk's buffer again");
        drop(w);
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, data);
        assert!(ended.load(Ordering::Acquire));
    }
}
