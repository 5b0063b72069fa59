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
//! - the unmodified archive restores, with the manifest's row counts.
#![no_main]

use std::path::Path;

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use ndarc_fuzz::{archive, edit};
use ndarc_sqlite::unpack::{unpack, UnpackOptions};
use ndarc_verify::{verify_bytes, Options};

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
});
