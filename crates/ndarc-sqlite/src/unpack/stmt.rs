//! A restore's prepared INSERT, bound through SQLite's C API.
//!
//! rusqlite copies every text it binds (`SQLITE_TRANSIENT`: an allocation
//! and a copy per cell, which SQLite then copies again into the record)
//! and decodes each bind's result through its connection. A restore binds
//! text straight from the verified line, which outlives the execution, so
//! here it is bound in place (`SQLITE_STATIC`). rusqlite does not hand out
//! a statement's handle, so this type owns one.
//!
//! Values made for the execution (a decoded blob, an unescaped string)
//! are handed over as buffers ([`Binder::blob_owned`]): held until the
//! execution ends, bound in place too, then kept for the next execution's
//! values. Copied by SQLite, each such value was a fresh allocation once
//! the bindings were cleared, and a blob of more than 128 KiB fresh pages
//! from the kernel (the blob-heavy restore's page faults doubled).
//!
//! Soundness rests on one rule: a binding lives only inside
//! [`Statement::execute`], which clears every binding before it returns
//! (also if the binding closure panics) and before it lets go of the
//! buffers it holds, so SQLite never holds a pointer past the data's
//! lifetime.

#![allow(unsafe_code)]

use std::ffi::{c_int, CStr};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use rusqlite::types::Value;
use rusqlite::{ffi, Connection};

/// A prepared statement of one SQL statement on a connection.
pub(super) struct Statement<'c> {
    stmt: NonNull<ffi::sqlite3_stmt>,
    db: *mut ffi::sqlite3,
    /// Buffers of values bound by the running execution.
    held: Vec<Vec<u8>>,
    /// Buffers for the next values, emptied, their memory kept.
    spare: Vec<Vec<u8>>,
    _conn: PhantomData<&'c Connection>,
}

/// The values of one execution of a [`Statement`]; text bound with
/// [`Binder::text`] borrows data that outlives the execution (`'s`).
pub(super) struct Binder<'s, 'b> {
    stmt: NonNull<ffi::sqlite3_stmt>,
    db: *mut ffi::sqlite3,
    held: &'b mut Vec<Vec<u8>>,
    spare: &'b mut Vec<Vec<u8>>,
    _data: PhantomData<&'s [u8]>,
}

/// SQLite's error for result code `rc` on `db`, as rusqlite reports it.
fn error(db: *mut ffi::sqlite3, rc: c_int) -> rusqlite::Error {
    // SAFETY: `db` is an open connection (borrowed by the statement);
    // `sqlite3_errmsg` returns a NUL-terminated string it owns, copied
    // here before any other call on the connection.
    let msg = unsafe {
        let p = ffi::sqlite3_errmsg(db);
        (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
    };
    rusqlite::Error::SqliteFailure(ffi::Error::new(rc), msg)
}

/// A one-based parameter index as SQLite takes it (an index beyond
/// `c_int` is out of range, which SQLite reports).
fn index(i: usize) -> c_int {
    c_int::try_from(i).unwrap_or(c_int::MAX)
}

impl<'c> Statement<'c> {
    /// Prepares `sql`, which must be one statement (as rusqlite's
    /// `prepare` requires).
    pub(super) fn prepare(conn: &'c Connection, sql: &str) -> rusqlite::Result<Self> {
        let len = c_int::try_from(sql.len()).map_err(|_| {
            rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), None)
        })?;
        // SAFETY: the handle of an open connection, used only while the
        // statement borrows the connection.
        let db = unsafe { conn.handle() };
        let mut stmt = ptr::null_mut();
        let mut tail = ptr::null();
        // SAFETY: `sql` is valid for `len` bytes; SQLite writes the new
        // statement (or null) and a pointer into `sql` to the outputs.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(
                db,
                sql.as_ptr().cast(),
                len,
                ffi::SQLITE_PREPARE_PERSISTENT,
                &mut stmt,
                &mut tail,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(error(db, rc));
        }
        let Some(stmt) = NonNull::new(stmt) else {
            // Only whitespace or comments.
            return Err(rusqlite::Error::InvalidQuery);
        };
        let st = Statement {
            stmt,
            db,
            held: Vec::new(),
            spare: Vec::new(),
            _conn: PhantomData,
        };
        let used = (tail as usize).saturating_sub(sql.as_ptr() as usize);
        if !sql.get(used..).unwrap_or("").trim().is_empty() {
            return Err(rusqlite::Error::MultipleStatement);
        }
        Ok(st)
    }

    /// Runs the statement once, with the values `bind` binds (a parameter
    /// it leaves unbound is NULL); it must return no rows. Every binding
    /// is cleared before this returns.
    pub(super) fn execute<'s>(
        &mut self,
        bind: impl FnOnce(&mut Binder<'s, '_>) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<()> {
        let (p, db) = (self.stmt.as_ptr(), self.db);
        let mut b = Binder {
            stmt: self.stmt,
            db,
            held: &mut self.held,
            spare: &mut self.spare,
            _data: PhantomData,
        };
        bind(&mut b)?;
        // SAFETY: a live statement; its values stay valid until `b` is
        // dropped at the end of this function, which clears the bindings
        // before it lets go of the buffers it holds.
        let (r, rr) = unsafe { (ffi::sqlite3_step(p), ffi::sqlite3_reset(p)) };
        match r {
            ffi::SQLITE_DONE if rr == ffi::SQLITE_OK => Ok(()),
            ffi::SQLITE_DONE => Err(error(db, rr)),
            ffi::SQLITE_ROW => Err(rusqlite::Error::ExecuteReturnedResults),
            _ => Err(error(db, r)),
        }
    }
}

impl Drop for Statement<'_> {
    fn drop(&mut self) {
        // SAFETY: the statement is live and finalized once.
        unsafe {
            ffi::sqlite3_finalize(self.stmt.as_ptr());
        }
    }
}

impl Drop for Binder<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: the statement outlives its binder; after this SQLite
        // holds no pointer to borrowed data or to the held buffers.
        unsafe {
            ffi::sqlite3_clear_bindings(self.stmt.as_ptr());
        }
        for mut v in self.held.drain(..) {
            v.clear();
            self.spare.push(v);
        }
    }
}

impl<'s> Binder<'s, '_> {
    fn check(&self, rc: c_int) -> rusqlite::Result<()> {
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(error(self.db, rc))
        }
    }

    /// Binds NULL to parameter `i` (one-based).
    pub(super) fn null(&mut self, i: usize) -> rusqlite::Result<()> {
        // SAFETY: a live statement; SQLite checks the index.
        self.check(unsafe { ffi::sqlite3_bind_null(self.stmt.as_ptr(), index(i)) })
    }

    /// Binds an INTEGER.
    pub(super) fn int(&mut self, i: usize, v: i64) -> rusqlite::Result<()> {
        // SAFETY: as `null`.
        self.check(unsafe { ffi::sqlite3_bind_int64(self.stmt.as_ptr(), index(i), v) })
    }

    /// Binds a REAL.
    pub(super) fn real(&mut self, i: usize, v: f64) -> rusqlite::Result<()> {
        // SAFETY: as `null`.
        self.check(unsafe { ffi::sqlite3_bind_double(self.stmt.as_ptr(), index(i), v) })
    }

    /// Binds UTF-8 text in place: SQLite reads it during the execution and
    /// keeps no pointer to it after (see [`Statement::execute`]).
    pub(super) fn text(&mut self, i: usize, s: &'s [u8]) -> rusqlite::Result<()> {
        // SAFETY: `'s` covers the execution, whose end clears the binding.
        let rc = unsafe { self.bind_text_static(i, s) };
        self.check(rc)
    }

    /// Binds `s` as text, in place.
    ///
    /// # Safety
    ///
    /// `s` must stay valid until the bindings are cleared.
    unsafe fn bind_text_static(&mut self, i: usize, s: &[u8]) -> c_int {
        // An empty text still needs a non-null pointer (or it is NULL).
        let p = if s.is_empty() {
            b"".as_ptr()
        } else {
            s.as_ptr()
        };
        // SAFETY: `p` is valid for `s.len()` bytes for as long as the
        // caller promises.
        unsafe {
            ffi::sqlite3_bind_text64(
                self.stmt.as_ptr(),
                index(i),
                p.cast(),
                s.len() as u64,
                ffi::SQLITE_STATIC(),
                ffi::SQLITE_UTF8 as u8,
            )
        }
    }

    /// An empty buffer for a value made for this execution (with the
    /// memory of an earlier execution's value, when there is one).
    pub(super) fn buffer(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_default()
    }

    /// Binds the BLOB `v`, made for this execution, in place: held until
    /// the execution ends (an empty one as a zero-length BLOB, as rusqlite
    /// binds it).
    pub(super) fn blob_owned(&mut self, i: usize, v: Vec<u8>) -> rusqlite::Result<()> {
        let p = self.stmt.as_ptr();
        if v.is_empty() {
            self.spare.push(v);
            // SAFETY: a live statement; no pointer is bound.
            return self.check(unsafe { ffi::sqlite3_bind_zeroblob64(p, index(i), 0) });
        }
        // SAFETY: `v`'s heap memory does not move when `v` moves into
        // `held`, which keeps it until the bindings are cleared.
        let rc = unsafe {
            ffi::sqlite3_bind_blob64(
                p,
                index(i),
                v.as_ptr().cast(),
                v.len() as u64,
                ffi::SQLITE_STATIC(),
            )
        };
        self.held.push(v);
        self.check(rc)
    }

    /// Binds the UTF-8 text `v`, made for this execution, in place (see
    /// [`Binder::blob_owned`]).
    pub(super) fn text_owned(&mut self, i: usize, v: Vec<u8>) -> rusqlite::Result<()> {
        // SAFETY: as `blob_owned`.
        let rc = unsafe { self.bind_text_static(i, &v) };
        self.held.push(v);
        self.check(rc)
    }

    /// A buffer holding a copy of `s` (see [`Binder::buffer`]).
    fn copy_of(&mut self, s: &[u8]) -> Vec<u8> {
        let mut buf = self.buffer();
        buf.extend_from_slice(s);
        buf
    }

    /// Binds a copy of the UTF-8 text `s`, held until the execution ends.
    pub(super) fn text_copied(&mut self, i: usize, s: &[u8]) -> rusqlite::Result<()> {
        let buf = self.copy_of(s);
        self.text_owned(i, buf)
    }

    /// Binds `v` (its text or blob copied into a held buffer).
    pub(super) fn value(&mut self, i: usize, v: &Value) -> rusqlite::Result<()> {
        match v {
            Value::Null => self.null(i),
            Value::Integer(n) => self.int(i, *n),
            Value::Real(r) => self.real(i, *r),
            Value::Text(s) => self.text_copied(i, s.as_bytes()),
            Value::Blob(b) => {
                let buf = self.copy_of(b);
                self.blob_owned(i, buf)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t(a TEXT NOT NULL, b)")
            .unwrap();
        conn
    }

    fn rows(conn: &Connection) -> Vec<(String, Value)> {
        let mut st = conn.prepare("SELECT a, b FROM t ORDER BY rowid").unwrap();
        let got = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)));
        got.unwrap().map(Result::unwrap).collect()
    }

    /// One statement only, as rusqlite's `prepare` (the restore's SQL is
    /// built, but a second statement is never run).
    #[test]
    fn one_statement_is_prepared() {
        let conn = table();
        let two = Statement::prepare(&conn, "INSERT INTO t VALUES('x', 1); DROP TABLE t");
        assert!(matches!(two, Err(rusqlite::Error::MultipleStatement)));
        let none = Statement::prepare(&conn, "  -- nothing\n");
        assert!(matches!(none, Err(rusqlite::Error::InvalidQuery)));
        let bad = Statement::prepare(&conn, "INSERT INTO nowhere VALUES(1)");
        let Err(rusqlite::Error::SqliteFailure(e, Some(msg))) = bad else {
            panic!("{bad:?}", bad = bad.map(drop));
        };
        assert_eq!(e.code, rusqlite::ErrorCode::Unknown);
        assert_eq!(msg, "no such table: nowhere");
        assert!(Statement::prepare(&conn, "INSERT INTO t VALUES(?1, ?2);  ").is_ok());
    }

    /// Text bound in place is stored as it was when the statement ran;
    /// the bindings end with the execution (a parameter not bound again is
    /// NULL), and SQLite's errors come as rusqlite reports them.
    #[test]
    fn bindings_last_one_execution() {
        let conn = table();
        let mut st = Statement::prepare(&conn, "INSERT INTO t VALUES(?1, ?2)").unwrap();
        let mut line = b"first".to_vec();
        st.execute(|b| {
            b.text(1, &line)?;
            let mut v = b.buffer();
            v.extend_from_slice(b"\x00\x01");
            b.blob_owned(2, v)
        })
        .unwrap();
        line.copy_from_slice(b"xxxxx");
        st.execute(|b| b.text(1, b"")).unwrap();
        st.execute(|b| {
            b.value(1, &Value::Text("ünï".into()))?;
            b.value(2, &Value::Real(0.5))
        })
        .unwrap();
        st.execute(|b| {
            b.text(1, b"n")?;
            b.int(2, -7)
        })
        .unwrap();
        let err = st.execute(|b| b.null(1)).unwrap_err();
        let rusqlite::Error::SqliteFailure(e, Some(msg)) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(e.extended_code, ffi::SQLITE_CONSTRAINT_NOTNULL);
        assert_eq!(msg, "NOT NULL constraint failed: t.a");
        assert!(st.execute(|b| b.int(3, 1)).is_err(), "no third parameter");
        assert_eq!(
            rows(&conn),
            [
                ("first".to_string(), Value::Blob(vec![0, 1])),
                (String::new(), Value::Null),
                ("ünï".to_string(), Value::Real(0.5)),
                ("n".to_string(), Value::Integer(-7)),
            ]
        );
    }

    /// A buffer handed over is kept, emptied, for the next execution's
    /// values, and what was bound from it was stored whole.
    #[test]
    fn held_buffers_are_kept_for_the_next_execution() {
        let conn = table();
        let mut st = Statement::prepare(&conn, "INSERT INTO t VALUES(?1, ?2)").unwrap();
        st.execute(|b| {
            let mut v = b.buffer();
            v.extend_from_slice(&[7u8; 300_000]);
            b.text(1, b"big")?;
            b.blob_owned(2, v)
        })
        .unwrap();
        st.execute(|b| {
            let v = b.buffer();
            assert!(v.is_empty() && v.capacity() >= 300_000);
            b.text(1, b"empty")?;
            b.blob_owned(2, v)
        })
        .unwrap();
        let got = rows(&conn);
        assert_eq!(got[0], ("big".to_string(), Value::Blob(vec![7; 300_000])));
        assert_eq!(got[1], ("empty".to_string(), Value::Blob(Vec::new())));
    }
}
