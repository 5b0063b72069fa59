//! The SQLite bridge of the portability archive.
//!
//! D1 is SQLite, and an archive is an export of a SQLite database. This crate
//! reads and writes SQLite files through rusqlite (with the bundled SQLite, so
//! no system library is needed):
//!
//! - [`pack()`]: a database to an archive, as the reference producer writes
//!   it (SPEC.md "Databases and archives");
//! - [`unpack()`]: an archive to a database, as the producer's import
//!   restores it;
//! - [`fuzzdb`]: seeded random databases for fuzz-testing third-party
//!   producers;
//! - [`patch`]: the SQL patch of a diff, as `sqldiff` writes one;
//! - [`stream`]: a database packed on the fly wherever an archive is read.
//!
//! ```no_run
//! use ndarc_sqlite::pack::{pack, PackOptions};
//! let mut opts = PackOptions::default();
//! opts.product = Some("shop".into());
//! opts.exported_at = Some("2026-01-02T03:04:05.678Z".into());
//! let mut out = Vec::new();
//! match pack(std::path::Path::new("shop.db"), &opts, &mut out) {
//!     Ok(summary) => println!("{}", summary.content_hash),
//!     Err(e) => eprintln!("shop.db: {}: {} (exit {})", e.code(), e.message(), e.exit_code()),
//! }
//! ```

// Unsafe code only in `unpack::stmt` (SQLite's C API), where it allows it.
#![deny(unsafe_code)]
#![warn(missing_docs)]

use std::io::{self, Read};
use std::path::Path;

mod error;
pub mod fuzzdb;
pub mod fuzzschema;
pub mod metadata;
pub mod pack;
pub mod patch;
pub mod stream;
pub mod unpack;

pub use error::{Error, Refusal};
pub use pack::{pack, pack_to_temp, BucketDir, ObjectReferences, PackOptions, PackSummary, Packed};
pub use unpack::{unpack, unpack_reader, UnpackOptions, UnpackSummary};

/// SQLite's column affinity (the five kinds; ndarc's
/// [`ndarc_format::catalogue::Affinity`] merges REAL and NUMERIC), by
/// SQLite's rules on the declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqliteAffinity {
    /// `INT` in the declared type.
    Integer,
    /// `CHAR`, `CLOB` or `TEXT`.
    Text,
    /// No type, or `BLOB`.
    Blob,
    /// `REAL`, `FLOA` or `DOUB`.
    Real,
    /// Anything else (`NUMERIC`, `DATETIME`, `BOOLEAN` …).
    Numeric,
}

/// The affinity SQLite gives a column of declared type `decl`.
pub fn sqlite_affinity(decl: &str) -> SqliteAffinity {
    let t = decl.to_ascii_uppercase();
    if t.contains("INT") {
        SqliteAffinity::Integer
    } else if ["CHAR", "CLOB", "TEXT"].iter().any(|w| t.contains(w)) {
        SqliteAffinity::Text
    } else if t.is_empty() || t.contains("BLOB") {
        SqliteAffinity::Blob
    } else if ["REAL", "FLOA", "DOUB"].iter().any(|w| t.contains(w)) {
        SqliteAffinity::Real
    } else {
        SqliteAffinity::Numeric
    }
}

/// The 16 bytes every SQLite 3 database file starts with.
pub(crate) const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Whether the file at `path` is a SQLite database, by its 16-byte header
/// (not by its name). A file shorter than 16 bytes is not one.
pub fn is_sqlite_file(path: &Path) -> io::Result<bool> {
    // Only a regular file can be a database; reading the header of a pipe
    // would consume what the archive reader needs (and opening a FIFO
    // blocks until its writer comes).
    if !std::fs::metadata(path)?.is_file() {
        return Ok(false);
    }
    let mut f = std::fs::File::open(path)?;
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => return Ok(false),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(&head == SQLITE_HEADER)
}

/// `name` as an SQL identifier: in double quotes, inner quotes doubled (the
/// producer's `quote`). The one implementation is
/// [`ndarc_sql::quote_ident`]; this name stays for the many callers here.
pub use ndarc_sql::quote_ident as quote;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_identifiers() {
        assert_eq!(quote("a"), "\"a\"");
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn recognises_sqlite_by_header() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.txt");
        std::fs::write(&p, b"SQLite format 3\0rest").unwrap();
        assert!(is_sqlite_file(&p).unwrap());
        std::fs::write(&p, b"SQLite format 3").unwrap();
        assert!(!is_sqlite_file(&p).unwrap());
        std::fs::write(&p, b"{\"kind\":\"manifest\"}\n").unwrap();
        assert!(!is_sqlite_file(&p).unwrap());
        assert!(is_sqlite_file(&dir.path().join("missing")).is_err());
    }

    /// The bundled SQLite is built as `.cargo/config.toml` asks: without
    /// memory statistics (a global mutex on every allocation).
    #[test]
    fn the_bundled_sqlite_keeps_no_memory_statistics() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let options: Vec<String> = conn
            .prepare("SELECT compile_options FROM pragma_compile_options")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "{options:?}"
        );
    }
}
