//! Structure-aware: a small valid generated archive delivered to
//! `PushVerifier` the way a server's import endpoint receives it: the
//! manifest, then parts in an order the input chooses, with retries,
//! parts sent under the wrong index, out-of-range indexes and corrupted
//! bytes, then (as the input says) every missing part, then the closing.
//!
//! - nothing panics;
//! - `add_part` answers as specified: the original part at an index not
//!   yet accepted is `Accepted` (under the original manifest); the same
//!   bytes again are `Duplicate`; other bytes at an accepted index are
//!   `Rejected` (`part_conflict`); another part's bytes or an out-of-range
//!   index are `Rejected`;
//! - when every part arrived uncorrupted (in any order, with retries) the
//!   report matches the file verifier: valid, same `contentHash`,
//!   `archiveHash`, closing hashes, part count and warnings;
//! - when any accepted part, the manifest or the closing differs from the
//!   original, or a part is missing, the report has errors.
#![no_main]

use std::collections::HashMap;

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use ndarc_fuzz::{archive, edit, report};
use ndarc_verify::{Code, Options, PushOutcome, PushVerifier};

fn codes(o: &PushOutcome) -> Vec<Code> {
    match o {
        PushOutcome::Accepted(f) | PushOutcome::Rejected(f) => f.iter().map(|f| f.code).collect(),
        PushOutcome::Duplicate => Vec::new(),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let a = archive::pick(&mut u);
    let n = a.part_count();
    let options = Options {
        jobs: 1,
        ..Options::default()
    };
    let flags = u.arbitrary::<u8>().unwrap_or(0);

    // The manifest, corrupted now and then.
    let manifest = if flags & 0x0F == 0x0F {
        edit::edited(a.manifest(), &edit::read_edits(&mut u, 2))
    } else {
        a.manifest().to_vec()
    };
    let manifest_original = manifest == a.manifest();
    let mut v = match PushVerifier::new(&manifest, &options) {
        Ok(v) => v,
        Err(findings) => {
            assert!(
                !manifest_original,
                "the original manifest was refused: {findings:#?}"
            );
            assert!(
                findings.iter().any(|f| f.is_error()),
                "refused without an error"
            );
            return;
        }
    };

    // What the verifier accepted, by index.
    let mut accepted: HashMap<u64, Vec<u8>> = HashMap::new();
    let send =
        |v: &mut PushVerifier, index: u64, bytes: Vec<u8>, accepted: &mut HashMap<u64, Vec<u8>>| {
            let outcome = v.add_part(index, &bytes);
            let original = usize::try_from(index)
                .ok()
                .filter(|&i| i < n)
                .map(|i| a.part(i));
            match accepted.get(&index) {
                Some(prev) if *prev == bytes => {
                    assert_eq!(outcome, PushOutcome::Duplicate, "a retry of part {index}")
                }
                Some(_) => {
                    assert!(
                        matches!(outcome, PushOutcome::Rejected(_))
                            && codes(&outcome).contains(&Code::PartConflict),
                        "other bytes at accepted part {index}: {outcome:?}"
                    )
                }
                None => match original {
                    None => assert!(
                        matches!(outcome, PushOutcome::Rejected(_)),
                        "out-of-range part {index} (of {n}): {outcome:?}"
                    ),
                    // (Under an edited manifest that was still accepted, an
                    // original part may break its rules: no claim.)
                    Some(orig) if orig == bytes.as_slice() => assert!(
                        !manifest_original || matches!(outcome, PushOutcome::Accepted(_)),
                        "the original part {index} was not accepted: {outcome:?}"
                    ),
                    Some(_) => {
                        // Another part's bytes cannot be accepted here: its
                        // index member names another index.
                        if let Some(j) = (0..n).find(|&j| a.part(j) == bytes.as_slice()) {
                            assert!(
                                matches!(outcome, PushOutcome::Rejected(_)),
                                "part {j} accepted as part {index}: {outcome:?}"
                            );
                        }
                    }
                },
            }
            if matches!(outcome, PushOutcome::Accepted(_)) {
                accepted.insert(index, bytes);
            }
        };

    let mut steps = 0;
    while !u.is_empty() && steps < 4 * n + 8 {
        steps += 1;
        let op = u.arbitrary::<u8>().unwrap_or(0);
        let i = u.choose_index(n).unwrap_or(0);
        match op % 8 {
            // Deliver part i (most often).
            0..=3 => send(&mut v, i as u64, a.part(i).to_vec(), &mut accepted),
            // Retry something already accepted.
            4 => {
                if let Some((&k, b)) = accepted.iter().nth(i % accepted.len().max(1)) {
                    let b = b.clone();
                    send(&mut v, k, b, &mut accepted);
                }
            }
            // Corrupted bytes for part i.
            5 => {
                let bytes = edit::edited(a.part(i), &edit::read_edits(&mut u, 3));
                send(&mut v, i as u64, bytes, &mut accepted);
            }
            // Part i's bytes under another index.
            6 => {
                let j = u.choose_index(n).unwrap_or(0);
                send(&mut v, j as u64, a.part(i).to_vec(), &mut accepted);
            }
            // An index out of range.
            _ => {
                let k = match op >> 3 & 3 {
                    0 => n as u64,
                    1 => n as u64 + u64::from(u.arbitrary::<u8>().unwrap_or(0)),
                    2 => u64::MAX,
                    _ => u64::MAX - 1,
                };
                send(&mut v, k, a.part(i).to_vec(), &mut accepted);
            }
        }
    }

    // Deliver every missing part (unless the input says to leave gaps), in
    // descending order: the worst case for the reorder buffer.
    if flags & 0x10 == 0 {
        for i in (0..n).rev() {
            if !accepted.contains_key(&(i as u64)) {
                send(&mut v, i as u64, a.part(i).to_vec(), &mut accepted);
            }
        }
    }

    let closing = if flags & 0xE0 == 0xE0 {
        edit::edited(a.closing(), &edit::read_edits(&mut u, 2))
    } else {
        a.closing().to_vec()
    };
    let parts_original =
        (0..n).all(|i| accepted.get(&(i as u64)).map(Vec::as_slice) == Some(a.part(i)));
    let complete = (0..n).all(|i| accepted.contains_key(&(i as u64)));
    let closing_original = closing == a.closing();

    let stored = accepted.clone();
    let r = v.finish(&closing, |i| stored.get(&i).cloned());
    report::check(&r, usize::MAX, &options);
    if manifest_original && parts_original && closing_original {
        let f = &a.report;
        assert!(
            r.is_valid(false),
            "all parts delivered, yet invalid: {:#?}",
            r.findings
        );
        assert_eq!(
            r.content_hash, f.content_hash,
            "contentHash differs from the file verifier's"
        );
        assert_eq!(
            r.archive_hash, f.archive_hash,
            "archiveHash differs from the file verifier's"
        );
        assert_eq!(r.closing_hashes, f.closing_hashes);
        assert_eq!(r.parts, f.parts);
        assert_eq!(
            r.warnings, f.warnings,
            "warnings: {:#?} vs {:#?}",
            r.findings, f.findings
        );
    } else {
        assert!(
            r.errors > 0,
            "manifest original {manifest_original}, parts original {parts_original} (complete {complete}), closing original {closing_original}, yet valid"
        );
    }
});
