//! The restored database file, written behind the inserting thread.
//!
//! A restore is bound by its inserting thread (the verification's threads
//! leave part of the other core idle), and about a fifth of that thread's
//! time was SQLite writing pages out of its cache: one `pwrite` of 4 KiB
//! each time the cache is full, and with it the kernel's copy into a page
//! it allocates. Here the restore's database file belongs to a small VFS,
//! [`NAME`], that copies each page SQLite writes into a batch and hands the
//! batch to a thread of its own, which writes it (contiguous pages in one
//! call). Every other call on the file (a read, its size, a truncation, a
//! sync, the close) first waits until every queued write is in the file, so
//! SQLite sees the file it would see without the thread. At most
//! [`QUEUED`] batches of [`BATCH`] bytes wait: the memory is bounded, and
//! the inserting thread waits when the writer falls behind.
//!
//! A write that fails is kept and returned by the next write or wait (a
//! full disk as `SQLITE_FULL`, anything else as `SQLITE_IOERR_WRITE`);
//! [`flush`], after the commit, returns it too, since SQLite ignores what a
//! close returns. The file is the restore's own temporary sibling, which
//! nobody else opens before it is renamed into place, so its locks are
//! SQLite's "unix-none" locks: none. Every other file (temporary files, a
//! journal) is the default VFS's, untouched.
//!
//! No crate provides a write-behind VFS over rusqlite's SQLite (the VFS
//! crates implement a whole VFS on their own bindings); this module is the
//! SQLite side of one file, its I/O `std`'s. It is the crate's second
//! `unsafe` module: SQLite calls its functions with the pointers its VFS
//! contract promises (a file of [`NAME`]'s `szOsFile` bytes, buffers of the
//! length given), and nothing else calls them.

#![allow(unsafe_code)]

use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_void, CStr, OsStr};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;

use rusqlite::{ffi, Connection};

/// The VFS's name, for `Connection::open_with_flags_and_vfs`.
pub(super) const NAME: &str = "ndarc-restore";
const NAME_C: &CStr = c"ndarc-restore";

/// Bytes of pages a batch gathers before it is handed to the writer.
const BATCH: usize = 256 << 10;
/// Batches that may wait for the writer.
const QUEUED: usize = 4;
/// The file-control opcode of [`flush`] (an application's own: SQLite's
/// opcodes are small numbers; the bytes spell "ndbh").
const FLUSH: c_int = 0x6e64_6268;

/// Registers [`NAME`] (once; it stays registered for the process).
pub(super) fn register() -> rusqlite::Result<()> {
    static DONE: OnceLock<c_int> = OnceLock::new();
    let rc = *DONE.get_or_init(|| {
        // SAFETY: `sqlite3_vfs_find(NULL)` returns the default VFS, which
        // lives as long as the process. The new VFS is leaked (SQLite keeps
        // the pointer while registered), a copy of the default's with its
        // own name, file size and `xOpen`, so that every other method sees
        // the `pAppData` and `mxPathname` it expects.
        unsafe {
            let rc = ffi::sqlite3_initialize();
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            let base = ffi::sqlite3_vfs_find(std::ptr::null());
            if base.is_null() {
                return ffi::SQLITE_ERROR;
            }
            let mut vfs = std::ptr::read(base);
            vfs.zName = NAME_C.as_ptr();
            vfs.pNext = std::ptr::null_mut();
            vfs.szOsFile = vfs.szOsFile.max(std::mem::size_of::<OwnFile>() as c_int);
            vfs.xOpen = Some(x_open);
            let _ = BASE.set(Base(base));
            ffi::sqlite3_vfs_register(Box::into_raw(Box::new(vfs)), 0)
        }
    });
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(rc),
            Some("could not register the restore's VFS".into()),
        ))
    }
}

/// Waits until every page written to `conn`'s main database is in its
/// file, and returns the first write that failed, if any. A connection
/// whose file is not [`NAME`]'s has nothing to wait for.
pub(super) fn flush(conn: &Connection) -> rusqlite::Result<()> {
    // SAFETY: the handle is the open connection's, used on its thread;
    // FLUSH's argument is unused.
    let rc = unsafe {
        ffi::sqlite3_file_control(conn.handle(), c"main".as_ptr(), FLUSH, std::ptr::null_mut())
    };
    match rc {
        ffi::SQLITE_OK | ffi::SQLITE_NOTFOUND => Ok(()),
        rc => Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(rc),
            Some("writing the database file failed".into()),
        )),
    }
}

/// The default VFS, which opens every file but the main database.
struct Base(*mut ffi::sqlite3_vfs);
// SAFETY: a pointer to SQLite's process-wide default VFS, only read.
unsafe impl Send for Base {}
unsafe impl Sync for Base {}
static BASE: OnceLock<Base> = OnceLock::new();

/// What SQLite holds of a main database file opened by [`NAME`]: its
/// `sqlite3_file` header first, as the VFS contract lays it out.
#[repr(C)]
struct OwnFile {
    base: ffi::sqlite3_file,
    behind: *mut Behind,
}

/// The queue between the inserting thread and the writer.
#[derive(Default)]
struct Queue {
    batches: VecDeque<Batch>,
    /// Whether the writer holds a batch.
    writing: bool,
    /// The first write that failed.
    error: Option<io::Error>,
    /// Written batches, emptied, their memory kept.
    free: Vec<Batch>,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// A batch was queued, or the file closed.
    work: Condvar,
    /// A batch was written.
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A poisoned lock means the writer panicked; its queue is still
        // consistent (each change is one statement).
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Pages to write: `bytes` holds the runs of `runs` one after another.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    /// `(offset in the file, length)` of each run of contiguous pages.
    runs: Vec<(u64, usize)>,
}

impl Batch {
    fn push(&mut self, data: &[u8], offset: u64) {
        match self.runs.last_mut() {
            Some((at, len)) if *at + *len as u64 == offset => *len += data.len(),
            _ => self.runs.push((offset, data.len())),
        }
        self.bytes.extend_from_slice(data);
    }

    fn write(&self, file: &File) -> io::Result<()> {
        let mut from = 0;
        for &(offset, len) in &self.runs {
            file.write_all_at(&self.bytes[from..from + len], offset)?;
            from += len;
        }
        Ok(())
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.runs.clear();
    }
}

/// The main database file: the inserting thread's side.
struct Behind {
    file: Arc<File>,
    shared: Arc<Shared>,
    /// The batch being gathered.
    batch: Batch,
    writer: Option<JoinHandle<()>>,
}

impl Behind {
    fn open(file: File) -> io::Result<Behind> {
        let file = Arc::new(file);
        let shared = Arc::new(Shared::default());
        let writer = {
            let (file, shared) = (Arc::clone(&file), Arc::clone(&shared));
            std::thread::Builder::new()
                .name("ndarc-write".into())
                .spawn(move || write_behind(&file, &shared))?
        };
        Ok(Behind {
            file,
            shared,
            batch: Batch::default(),
            writer: Some(writer),
        })
    }

    fn write(&mut self, data: &[u8], offset: u64) -> c_int {
        self.batch.push(data, offset);
        if self.batch.bytes.len() >= BATCH {
            self.hand_over()
        } else {
            ffi::SQLITE_OK
        }
    }

    /// Queues the batch being gathered, waiting while [`QUEUED`] wait.
    fn hand_over(&mut self) -> c_int {
        let mut q = self.shared.lock();
        while q.batches.len() >= QUEUED && q.error.is_none() {
            q = self.shared.done.wait(q).unwrap_or_else(|p| p.into_inner());
        }
        if let Some(e) = &q.error {
            return write_code(e);
        }
        if self.batch.runs.is_empty() {
            return ffi::SQLITE_OK;
        }
        let next = q.free.pop().unwrap_or_default();
        q.batches
            .push_back(std::mem::replace(&mut self.batch, next));
        drop(q);
        self.shared.work.notify_one();
        ffi::SQLITE_OK
    }

    /// Waits until every page written is in the file.
    fn wait(&mut self) -> c_int {
        let rc = self.hand_over();
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let mut q = self.shared.lock();
        while !q.batches.is_empty() || q.writing {
            q = self.shared.done.wait(q).unwrap_or_else(|p| p.into_inner());
        }
        q.error.as_ref().map_or(ffi::SQLITE_OK, write_code)
    }

    /// Writes what is queued, stops the writer.
    fn close(mut self) -> c_int {
        let rc = self.wait();
        self.shared.lock().closed = true;
        self.shared.work.notify_one();
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
        rc
    }
}

impl Drop for Behind {
    fn drop(&mut self) {
        // Only reached without `close` if SQLite never closed the file:
        // the writer is told to stop, and finishes what is queued.
        if let Some(w) = self.writer.take() {
            self.shared.lock().closed = true;
            self.shared.work.notify_one();
            let _ = w.join();
        }
    }
}

/// The writer thread: writes each batch queued, in order, until closed.
/// After a failed write it writes nothing more (the restore fails).
fn write_behind(file: &File, shared: &Shared) {
    loop {
        let batch = {
            let mut q = shared.lock();
            loop {
                if let Some(b) = q.batches.pop_front() {
                    q.writing = true;
                    break b;
                }
                if q.closed {
                    return;
                }
                q = shared.work.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        let failed = shared.lock().error.is_some();
        let result = if failed { Ok(()) } else { batch.write(file) };
        let mut batch = batch;
        batch.clear();
        let mut q = shared.lock();
        if let Err(e) = result {
            q.error.get_or_insert(e);
        }
        q.writing = false;
        if q.free.len() < QUEUED {
            q.free.push(batch);
        }
        drop(q);
        shared.done.notify_all();
    }
}

/// SQLite's code for a failed write.
fn write_code(e: &io::Error) -> c_int {
    if e.kind() == io::ErrorKind::StorageFull {
        ffi::SQLITE_FULL
    } else {
        ffi::SQLITE_IOERR_WRITE
    }
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_lock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// The file's [`Behind`].
///
/// # Safety
/// `f` is a file [`x_open`] opened as a main database and not yet closed.
unsafe fn behind<'a>(f: *mut ffi::sqlite3_file) -> &'a mut Behind {
    // SAFETY: by the caller's promise, `f` is an `OwnFile` whose `behind`
    // is the live box `x_open` made; SQLite calls one method at a time.
    unsafe { &mut *(*f.cast::<OwnFile>()).behind }
}

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(base) = BASE.get() else {
        return ffi::SQLITE_ERROR;
    };
    // SAFETY: the default VFS opens into the same memory, which is at
    // least its `szOsFile` long.
    let by_default = || unsafe {
        match (*base.0).xOpen {
            Some(open) => open(base.0, name, file, flags, out_flags),
            None => ffi::SQLITE_ERROR,
        }
    };
    if flags & ffi::SQLITE_OPEN_MAIN_DB == 0 || name.is_null() {
        return by_default();
    }
    // SAFETY: SQLite passes the file's name, NUL-terminated.
    let path = Path::new(OsStr::from_bytes(
        unsafe { CStr::from_ptr(name) }.to_bytes(),
    ));
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(flags & ffi::SQLITE_OPEN_READWRITE != 0);
    if flags & ffi::SQLITE_OPEN_CREATE != 0 {
        if flags & ffi::SQLITE_OPEN_EXCLUSIVE != 0 {
            options.create_new(true);
        } else {
            options.create(true);
        }
    }
    let opened = match options.open(path) {
        // A process started with standard descriptors closed: the file
        // would be one of them, and a message to standard error would go
        // into the database. SQLite's own VFS opens it elsewhere.
        Ok(f) if f.as_raw_fd() <= 2 => {
            drop(f);
            return by_default();
        }
        opened => opened.and_then(Behind::open),
    };
    // SAFETY: `file` points to `szOsFile` bytes for SQLite's file, at
    // least an `OwnFile`; on failure `pMethods` must be NULL.
    unsafe {
        match opened {
            Ok(b) => {
                file.cast::<OwnFile>().write(OwnFile {
                    base: ffi::sqlite3_file { pMethods: &METHODS },
                    behind: Box::into_raw(Box::new(b)),
                });
                if !out_flags.is_null() {
                    *out_flags = flags;
                }
                ffi::SQLITE_OK
            }
            Err(_) => {
                (*file).pMethods = std::ptr::null();
                ffi::SQLITE_CANTOPEN
            }
        }
    }
}

unsafe extern "C" fn x_close(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes a file once; the box is taken back once.
    let b = unsafe {
        let own = f.cast::<OwnFile>();
        let b = Box::from_raw((*own).behind);
        (*own).behind = std::ptr::null_mut();
        b
    };
    b.close()
}

unsafe extern "C" fn x_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: an open file; SQLite's buffer has `amount` bytes.
    let (b, buf) = unsafe {
        (
            behind(f),
            std::slice::from_raw_parts_mut(buf.cast::<u8>(), amount.max(0) as usize),
        )
    };
    let rc = b.wait();
    if rc != ffi::SQLITE_OK {
        return rc;
    }
    let mut read = 0;
    while read < buf.len() {
        match b
            .file
            .read_at(&mut buf[read..], offset as u64 + read as u64)
        {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return ffi::SQLITE_IOERR_READ,
        }
    }
    if read < buf.len() {
        // SQLite's contract: a short read fills the rest with zeros.
        buf[read..].fill(0);
        return ffi::SQLITE_IOERR_SHORT_READ;
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: an open file; SQLite's buffer has `amount` bytes, copied
    // into the batch before this returns.
    let (b, data) = unsafe {
        (
            behind(f),
            std::slice::from_raw_parts(buf.cast::<u8>(), amount.max(0) as usize),
        )
    };
    b.write(data, offset as u64)
}

unsafe extern "C" fn x_truncate(f: *mut ffi::sqlite3_file, size: i64) -> c_int {
    // SAFETY: an open file.
    let b = unsafe { behind(f) };
    match b.wait() {
        ffi::SQLITE_OK => match b.file.set_len(size.max(0) as u64) {
            Ok(()) => ffi::SQLITE_OK,
            Err(_) => ffi::SQLITE_IOERR_TRUNCATE,
        },
        rc => rc,
    }
}

unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: an open file.
    let b = unsafe { behind(f) };
    match b.wait() {
        ffi::SQLITE_OK => {
            let synced = if flags & ffi::SQLITE_SYNC_DATAONLY != 0 {
                b.file.sync_data()
            } else {
                b.file.sync_all()
            };
            match synced {
                Ok(()) => ffi::SQLITE_OK,
                Err(_) => ffi::SQLITE_IOERR_FSYNC,
            }
        }
        rc => rc,
    }
}

unsafe extern "C" fn x_file_size(f: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    // SAFETY: an open file; `size` is SQLite's out-parameter.
    let b = unsafe { behind(f) };
    match b.wait() {
        ffi::SQLITE_OK => match b.file.metadata() {
            Ok(m) => {
                // SAFETY: as above.
                unsafe { *size = m.len() as i64 };
                ffi::SQLITE_OK
            }
            Err(_) => ffi::SQLITE_IOERR_FSTAT,
        },
        rc => rc,
    }
}

/// Locks and unlocks: none (the file is the restore's own, see the
/// module's documentation), as SQLite's "unix-none" VFS.
unsafe extern "C" fn x_lock(_f: *mut ffi::sqlite3_file, _level: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_check_reserved_lock(_f: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: SQLite's out-parameter.
    unsafe { *out = 0 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_file_control(
    f: *mut ffi::sqlite3_file,
    op: c_int,
    _arg: *mut c_void,
) -> c_int {
    if op == FLUSH {
        // SAFETY: an open file.
        unsafe { behind(f) }.wait()
    } else {
        ffi::SQLITE_NOTFOUND
    }
}

/// The unix VFS's sector size (`SQLITE_DEFAULT_SECTOR_SIZE`).
unsafe extern "C" fn x_sector_size(_f: *mut ffi::sqlite3_file) -> c_int {
    4096
}

/// What the unix VFS tells of a regular file on Linux (SQLite's default
/// `powersafe_overwrite`).
unsafe extern "C" fn x_device_characteristics(_f: *mut ffi::sqlite3_file) -> c_int {
    ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::OpenFlags;

    fn fill(conn: &Connection) {
        conn.execute_batch(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = 16;
             BEGIN;
             CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, UNIQUE (v));
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
             INSERT INTO t SELECT i, printf('%08d-value', (i * 7919) % 20000) FROM n;
             UPDATE t SET v = v || '!' WHERE id % 3 = 0;
             DELETE FROM t WHERE id % 5 = 0;
             COMMIT;",
        )
        .expect("fill");
    }

    #[test]
    fn a_database_written_behind_is_the_database_written_directly() {
        register().expect("register");
        let dir = tempfile::tempdir().expect("tempdir");
        let (direct, behind) = (dir.path().join("direct.db"), dir.path().join("behind.db"));
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        let conn = Connection::open_with_flags(&direct, flags).expect("open");
        fill(&conn);
        conn.close().expect("close");
        let conn = Connection::open_with_flags_and_vfs(&behind, flags, NAME).expect("open");
        fill(&conn);
        // The pages were spilled (a cache of 16 pages), read back (the
        // UPDATE and DELETE) and written again.
        flush(&conn).expect("flush");
        let pages: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .expect("page_count");
        assert!(pages > 100, "{pages}");
        conn.close().expect("close");
        assert_eq!(
            std::fs::read(&direct).expect("read"),
            std::fs::read(&behind).expect("read")
        );
        let conn = Connection::open(&behind).expect("reopen");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("check");
        assert_eq!(ok, "ok");
    }

    #[test]
    fn a_failed_write_is_returned_by_the_next_wait_and_every_write_after() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("ro");
        std::fs::write(&p, b"").expect("create");
        // Opened read-only: the writer's `pwrite` fails (EBADF).
        let mut b = Behind::open(File::open(&p).expect("open")).expect("behind");
        assert_eq!(b.write(&[1; 4096], 0), ffi::SQLITE_OK);
        assert_eq!(b.wait(), ffi::SQLITE_IOERR_WRITE);
        let mut rc = ffi::SQLITE_OK;
        for i in 0..(BATCH / 4096) as u64 {
            rc = b.write(&[2; 4096], i * 4096);
        }
        assert_eq!(rc, ffi::SQLITE_IOERR_WRITE);
        assert_eq!(b.close(), ffi::SQLITE_IOERR_WRITE);
        assert_eq!(std::fs::metadata(&p).expect("meta").len(), 0);
    }

    #[test]
    fn contiguous_pages_make_one_run_and_a_gap_another() {
        let mut batch = Batch::default();
        batch.push(&[1; 4], 8);
        batch.push(&[2; 4], 12);
        batch.push(&[3; 4], 0);
        assert_eq!(batch.runs, vec![(8, 8), (0, 4)]);
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        let f = File::create(&p).expect("create");
        batch.write(&f).expect("write");
        assert_eq!(
            std::fs::read(&p).expect("read"),
            [3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
        );
    }

    #[test]
    fn a_connection_of_another_vfs_has_nothing_to_flush() {
        let conn = Connection::open_in_memory().expect("open");
        flush(&conn).expect("nothing to wait for");
    }
}
