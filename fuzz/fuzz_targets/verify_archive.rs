//! Arbitrary bytes as an archive file.
//!
//! - `verify_bytes` never panics, under the default options and under
//!   tight ones (two kept findings; lines over 128 bytes, manifests over
//!   512, so the limit paths run on small inputs);
//! - the report's invariants hold (`ndarc_fuzz::report::check`);
//! - the streaming reader (`verify_reader`, bounded buffers, a spool file)
//!   reports exactly what the in-memory verifier reports, under both sets
//!   of options.
//!
//! Reproducers of the divergences found so far (all fixed) are in
//! `fuzz/regressions/verify_archive/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarc_fuzz::report;
use ndarc_verify::{verify_bytes, verify_reader, Options};

fuzz_target!(|data: &[u8]| {
    let default = Options {
        jobs: 1,
        ..Options::default()
    };
    let r = verify_bytes(data, &default);
    report::check(&r, data.len(), &default);

    let streamed = verify_reader(data, &default).expect("reading a slice cannot fail");
    report::check(&streamed, data.len(), &default);
    report::assert_same(&r, &streamed, "verify_bytes vs verify_reader");

    // Tight limits, fixed so that minimizing an input keeps them.
    let tight = Options {
        jobs: 1,
        max_errors: 2,
        max_line: 128,
        max_manifest_line: 512,
        ..Options::default()
    };
    let t = verify_bytes(data, &tight);
    report::check(&t, data.len(), &tight);
    if r.errors > 0 {
        assert!(t.errors > 0, "tight limits made an invalid archive valid");
    }
    let ts = verify_reader(data, &tight).expect("reading a slice cannot fail");
    report::check(&ts, data.len(), &tight);
    report::assert_same(&t, &ts, "verify_bytes vs verify_reader, tight limits");
});
