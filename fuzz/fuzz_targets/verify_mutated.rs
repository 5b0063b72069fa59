//! Structure-aware: a small valid generated archive (shape and seed from
//! the first input byte, cached) with up to 8 edits from the input applied
//! (bit flips, bytes, tokens, deletions, truncation, dropped, duplicated or
//! swapped lines).
//!
//! - `verify_bytes` never panics (one or two worker threads, 1 or 100 kept
//!   findings, as the input says);
//! - the unmodified archive verifies valid, with the generator's hashes;
//! - a modified archive is invalid: `archiveHash` binds every byte of the
//!   manifest and part lines, and the closing line has exactly one
//!   canonical spelling, so any change must produce at least one error.
//!
//! `NDARC_FUZZ_DUMP=FILE` writes the edited archive of each input run to
//! FILE (useful with a single reproducer).
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use ndarc_fuzz::{archive, edit, report};
use ndarc_verify::{verify_bytes, Options};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let a = archive::pick(&mut u);
    let knobs = u.arbitrary::<u8>().unwrap_or(0);
    let options = Options {
        jobs: 1 + usize::from(knobs & 1),
        max_errors: if knobs & 2 != 0 { 1 } else { 100 },
        ..Options::default()
    };
    let edits = edit::read_edits(&mut u, 8);
    let bytes = edit::edited(&a.bytes, &edits);
    if let Some(path) = std::env::var_os("NDARC_FUZZ_DUMP") {
        // Write the edited archive, e.g. to turn a recipe into a plain
        // `verify_archive` reproducer.
        std::fs::write(path, &bytes).expect("NDARC_FUZZ_DUMP: cannot write");
    }

    let r = verify_bytes(&bytes, &options);
    report::check(&r, bytes.len(), &options);
    if bytes == a.bytes {
        assert!(
            r.is_valid(false),
            "the unmodified archive is invalid: {:#?}",
            r.findings
        );
        assert_eq!(r.content_hash.as_deref(), Some(&*a.summary.content_hash));
        assert_eq!(r.archive_hash.as_deref(), Some(&*a.summary.archive_hash));
    } else {
        assert!(
            r.errors > 0,
            "edits {edits:?} gave {} bytes (of {}) that verify valid",
            bytes.len(),
            a.bytes.len()
        );
    }
});
