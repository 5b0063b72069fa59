//! Restores archives that verify: a small generated archive (shape and seed
//! from the input, cached) with up to 4 edits from the input, then, as the
//! input says, re-sealed (`ndarc_gen::reseal`: schema identity, counts and
//! both hashes recomputed), so that hostile edits to names, keys, `sql` and
//! cells reach `unpack` inside an archive that verifies.
//!
//! - `unpack` never panics;
//! - an archive that does not verify writes nothing at all;
//! - whatever the archive, nothing changes outside the output directory: a
//!   file beside it is untouched, and every path that exists afterwards
//!   (but the archive and that file) is under the output directory;
//! - the unmodified archive restores, with the manifest's row counts;
//! - the SQL patch from the unmodified archive (BEFORE) to the restored one
//!   (AFTER), applied to BEFORE restored, gives AFTER's tables and rows.
#![no_main]

use std::path::Path;

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use ndarc_fuzz::{archive, edit};
use ndarc_sqlite::unpack::{unpack, UnpackOptions};
use ndarc_verify::{verify_bytes, Options};

/// Each table of the database at `db` (but SQLite's own) with its rows,
/// sorted, each value spelled with its storage class (REALs by their bits).
fn contents(db: &Path) -> Vec<(String, Vec<Vec<String>>)> {
    use rusqlite::types::Value as Sql;
    let c = rusqlite::Connection::open(db).expect("open a restored database");
    let mut names: Vec<String> = c
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("the tables");
    names.retain(|n: &String| !n.starts_with("sqlite_"));
    names
        .into_iter()
        .map(|n| {
            let q = format!("SELECT * FROM \"{}\"", n.replace('"', "\"\""));
            let mut st = c.prepare(&q).expect("select the rows");
            let cols = st.column_count();
            let mut rows: Vec<Vec<String>> = st
                .query_map([], |r| {
                    (0..cols)
                        .map(|i| {
                            Ok(match r.get::<_, Sql>(i)? {
                                Sql::Real(f) => format!("real {:016x}", f.to_bits()),
                                Sql::Integer(i) => format!("integer {i}"),
                                Sql::Text(t) => format!("text {t:?}"),
                                Sql::Blob(b) => format!("blob {b:?}"),
                                Sql::Null => "null".to_string(),
                            })
                        })
                        .collect()
                })
                .and_then(|rows| rows.collect())
                .expect("the rows");
            rows.sort();
            (n, rows)
        })
        .collect()
}

/// The patch from `before` to `after` (both valid), applied to `before`
/// restored at `db`, gives the contents of `after` restored at `expected`.
fn patch_gives_after(before: &[u8], after: &[u8], db: &Path, expected: &Path) {
    let opts = ndarc_diff::Options {
        allow_product_mismatch: true,
        ..ndarc_diff::Options::default()
    };
    let d = ndarc_diff::diff_labeled(
        ("before", ndarc_diff::Source::Bytes(before)),
        ("after", ndarc_diff::Source::Bytes(after)),
        &opts,
    )
    .expect("two valid archives diff");
    let mut patch = Vec::new();
    ndarc_sqlite::patch::write_patch(&d, after, &mut patch).expect("the patch of two valid archives");
    let restored = UnpackOptions {
        jobs: 1,
        ..UnpackOptions::default()
    };
    let archive = db.with_extension("ndjson");
    std::fs::write(&archive, before).expect("write BEFORE");
    unpack(&archive, db, &restored).expect("BEFORE restores");
    let sql = String::from_utf8(patch).expect("a patch is UTF-8");
    let c = rusqlite::Connection::open(db).expect("open BEFORE restored");
    c.execute_batch(&sql)
        .unwrap_or_else(|e| panic!("the patch does not apply: {e}\n{sql}"));
    drop(c);
    assert_eq!(contents(db), contents(expected), "BEFORE + patch is not AFTER:\n{sql}");
}

/// Every path under `dir`, not following links.
fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        out.push(p.clone());
        if is_dir {
            walk(&p, out);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let a = archive::pick(&mut u);
    let edits = edit::read_edits(&mut u, 4);
    let reseal = u.arbitrary::<bool>().unwrap_or(true);
    let mut bytes = edit::edited(&a.bytes, &edits);
    if reseal {
        if let Ok(sealed) = ndarc_gen::reseal(&bytes) {
            bytes = sealed;
        }
    }
    let valid = verify_bytes(&bytes, &Options::default()).is_valid(false);

    let root = tempfile::tempdir().expect("a temporary directory");
    let archive_path = root.path().join("in.ndjson");
    std::fs::write(&archive_path, &bytes).expect("write the archive");
    let beside = root.path().join("beside.txt");
    std::fs::write(&beside, b"keep").expect("write the file beside");
    let out = root.path().join("out");
    std::fs::create_dir(&out).expect("the output directory");
    let opts = UnpackOptions {
        objects_dir: Some(out.join("files")),
        jobs: 1,
        ..UnpackOptions::default()
    };
    let result = unpack(&archive_path, &out.join("db.sqlite"), &opts);
    let restored = result.is_ok();

    assert_eq!(std::fs::read(&beside).ok().as_deref(), Some(&b"keep"[..]));
    let mut paths = Vec::new();
    walk(root.path(), &mut paths);
    for p in &paths {
        assert!(
            p.starts_with(&out) || *p == archive_path || *p == beside,
            "{} was written outside the output directory",
            p.display()
        );
    }
    if !valid {
        assert!(result.is_err(), "an invalid archive restored");
    }
    if result.is_err() {
        let mut left = Vec::new();
        walk(&out, &mut left);
        assert!(left.is_empty(), "a failed restore left {left:?}");
    }
    if bytes == a.bytes {
        let summary = result.unwrap_or_else(|e| panic!("the generated archive: {e}"));
        let counts: u64 = summary.tables.iter().map(|t| t.1).sum();
        let claimed: u64 = ndarc_verify::verify_bytes(&bytes, &Options::default())
            .manifest
            .map_or(0, |m| m.tables.iter().map(|t| t.count).sum());
        assert_eq!(counts, claimed);
    }
    if valid && restored && bytes != a.bytes {
        let before = root.path().join("before");
        std::fs::create_dir(&before).expect("BEFORE's directory");
        patch_gives_after(&a.bytes, &bytes, &before.join("db.sqlite"), &out.join("db.sqlite"));
    }
});
