//! Helpers shared by the tests: databases from SQL, pack to bytes, verify.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ndarc_sqlite::pack::{pack, PackOptions, PackSummary};
use ndarc_sqlite::Error;

/// A scratch directory with a database made from `sql`.
pub fn db(sql: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("test.db");
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute_batch(sql).expect("schema");
    drop(conn);
    (dir, path)
}

/// Options with a fixed `exportedAt`, for determinism.
pub fn opts() -> PackOptions {
    PackOptions {
        product: Some("test".into()),
        exported_at: Some("2026-01-02T03:04:05.678Z".into()),
        ..PackOptions::default()
    }
}

/// Packs `db`, returning the archive bytes.
pub fn pack_vec(db: &Path, opts: &PackOptions) -> Result<(Vec<u8>, PackSummary), Error> {
    let mut out = Vec::new();
    let s = pack(db, opts, &mut out)?;
    Ok((out, s))
}

/// Verifies `bytes`, panicking with the findings when invalid.
pub fn assert_valid(bytes: &[u8]) -> ndarc_verify::Report {
    let r = ndarc_verify::verify_bytes(bytes, &ndarc_verify::Options::default());
    assert!(
        r.is_valid(true),
        "invalid archive: {:#?}\n{}",
        r.findings,
        String::from_utf8_lossy(bytes)
    );
    r
}

/// The refusal code of packing `sql`'s database with `opts`; panics when
/// it packs.
pub fn refusal(sql: &str, opts: &PackOptions) -> (&'static str, String, bool) {
    let (_d, p) = db(sql);
    let mut out = Vec::new();
    match pack(&p, opts, &mut out) {
        Ok(_) => panic!("packed, expected a refusal"),
        Err(e) => {
            assert!(out.is_empty(), "wrote {} bytes before refusing", out.len());
            (e.code(), e.to_string(), e.is_refusal())
        }
    }
}
