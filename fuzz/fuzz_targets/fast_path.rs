//! Structure-aware: one line of a small generated archive (the archive from
//! the first input byte, the line from the second), with up to 4 edits from
//! the input applied to that line alone, checked against the archive's
//! manifest; or, when the third byte says so, the rest of the input as the
//! line.
//!
//! The row-part fast path (`check_line_fast`) and the full check
//! (`check_line_full`) must agree: whenever the fast path accepts a line,
//! the full check finds nothing and returns the identical summary.
#![no_main]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use ndarc_format::hash::sha256;
use ndarc_format::part::{check_line_fast, check_line_full, check_line_spans, RowSpans};
use ndarc_format::{LineRef, Plan};
use ndarc_fuzz::{archive, edit};

/// The plan of a (valid, generated) manifest, cached by its bytes.
fn plan(manifest: &[u8]) -> Arc<Plan> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<u8>, Arc<Plan>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().unwrap().get(manifest) {
        return p.clone();
    }
    let at = LineRef {
        line: 1,
        offset: 0,
        bytes: manifest,
    };
    let Some(m) = ndarc_verify::read_manifest(at, &Default::default()).manifest else {
        panic!("generated manifest not read");
    };
    let p = Arc::new(Plan::new(m));
    cache.lock().unwrap().insert(manifest.to_vec(), p.clone());
    p
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let a = archive::pick(&mut u);
    let pick = usize::from(u.arbitrary::<u8>().unwrap_or(0));
    let raw = u.arbitrary::<u8>().unwrap_or(0) & 0x0F == 0x0F;
    let plan = plan(a.manifest());
    let line = if raw {
        u.take_rest().to_vec()
    } else {
        let i = 1 + pick % (a.lines.len() - 1);
        let edits = edit::read_edits(&mut u, 4);
        edit::edited(a.line(i), &edits)
    };
    let at = LineRef {
        line: 2,
        offset: 0,
        bytes: &line,
    };
    let digest = sha256(&line);
    let full = check_line_full(&plan, at, digest);
    let hashing = check_line_fast(&plan, at, None);
    // Asking for spans changes nothing, and gives spans only when fast.
    let mut spans = RowSpans::default();
    let with_spans = check_line_spans(&plan, at, &mut spans);
    assert_eq!(with_spans, full);
    assert_eq!(spans.table.is_some(), hashing.is_some());
    for &(a, b) in spans.rows.iter().chain(&spans.cells) {
        assert!(
            a < b && b as usize <= line.len(),
            "span {a}..{b} of {}",
            line.len()
        );
    }
    assert_eq!(hashing, check_line_fast(&plan, at, Some(digest)));
    if let Some(fast) = hashing {
        assert!(
            full.findings.is_empty(),
            "the fast path accepted a line with findings {:#?}\n{}",
            full.findings,
            String::from_utf8_lossy(&line)
        );
        assert_eq!(
            fast,
            full,
            "summaries differ for\n{}",
            String::from_utf8_lossy(&line)
        );
    }
});
