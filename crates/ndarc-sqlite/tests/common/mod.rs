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

/// Packs `db`, returning the archive bytes. Every pack of the tests also
/// checks that the one pass of `pack_to_temp` (a database read where an
/// archive is) makes the same archive, byte for byte, or the same refusal.
pub fn pack_vec(db: &Path, opts: &PackOptions) -> Result<(Vec<u8>, PackSummary), Error> {
    let mut out = Vec::new();
    let two = pack(db, opts, &mut out);
    let mut same = opts.clone();
    if same.exported_at.is_none() {
        // The `exportedAt` the two passes took ("now").
        same.exported_at = out
            .split(|&b| b == b'\n')
            .next()
            .and_then(|m| ndarc_json::parse(m).ok())
            .and_then(|m| {
                m.get("exportedAt")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            });
    }
    let one = ndarc_sqlite::pack_to_temp(db, &same, &std::sync::atomic::AtomicBool::new(false));
    match (&two, one) {
        (Ok(s), Ok((mut p, s1))) => {
            // The archive begins where the file says, and ends the file.
            let len = p.file.metadata().expect("the temporary file").len();
            assert_eq!(len, p.start + s1.bytes, "the archive ends the file");
            p.rewind().expect("seek the temporary file");
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut p.file, &mut bytes).expect("read the temporary file");
            assert!(
                bytes == out,
                "one pass:\n{}\ntwo passes:\n{}",
                String::from_utf8_lossy(&bytes),
                String::from_utf8_lossy(&out)
            );
            assert_eq!(&s1, s);
        }
        (Err(e), Err(e1)) => assert_eq!(e1.to_string(), e.to_string()),
        (two, one) => panic!("two passes: {two:?}\none pass: {:?}", one.map(|(_, s)| s)),
    }
    two.map(|s| (out, s))
}

/// Packs `db` in parts of `part_bytes` (checking the archive is valid) into
/// `a.ndjson` of a scratch directory; returns the directory and the path.
pub fn packed_file(db: &Path, part_bytes: usize) -> (tempfile::TempDir, PathBuf) {
    let mut o = opts();
    o.part_bytes = part_bytes;
    let (bytes, _) = pack_vec(db, &o).unwrap();
    assert_valid(&bytes);
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a.ndjson");
    std::fs::write(&a, &bytes).expect("write the archive");
    (dir, a)
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
            // The one pass refuses it alike.
            let stop = std::sync::atomic::AtomicBool::new(false);
            match ndarc_sqlite::pack_to_temp(&p, opts, &stop) {
                Ok((_, s)) => panic!("one pass packed {s:?}, two passes refused: {e}"),
                Err(e1) => assert_eq!(e1.to_string(), e.to_string()),
            }
            (e.code(), e.to_string(), e.is_refusal())
        }
    }
}
