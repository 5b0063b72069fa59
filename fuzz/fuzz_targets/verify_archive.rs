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
//! Known divergence, reported, skipped here unless `NDARC_FUZZ_STRICT=1`:
//! when the data ends, without LF, in a line over the limit,
//! `verify_bytes` reports `missing_final_newline` and `line_too_long`,
//! `verify_reader` (which skips such a line unread) only `line_too_long`
//! (`fuzz/regressions/verify_archive/overlong-last-line-without-lf`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarc_fuzz::known::strict;
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
    if strict() || !overlong_line_divergence(data, tight.max_line.min(tight.max_manifest_line)) {
        report::assert_same(&t, &ts, "verify_bytes vs verify_reader, tight limits");
    }
});

/// The data ends, without LF, in a line longer than `limit` (not counting
/// a final CR): where the two readers are known to differ (see the top of
/// this file).
fn overlong_line_divergence(data: &[u8], limit: usize) -> bool {
    let last = data.rsplit(|&b| b == b'\n').next().unwrap_or(&[]);
    !data.ends_with(b"\n") && last.len() - usize::from(last.last() == Some(&b'\r')) > limit
}
