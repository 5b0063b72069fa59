//! The row-part fast path (ndarc-format's `fast` module) accepts only lines
//! the full check finds faultless, and gives the identical summary: on
//! generated archives, on every corpus file, on every mutation, and on every
//! single-byte edit of some row parts.

use std::path::Path;

use ndarc_format::hash::sha256;
use ndarc_format::part::{check_line_fast, check_line_full, check_line_spans, Body, RowSpans};
use ndarc_format::{LineRef, Plan};
use ndarc_testkit::{generate_vec, GenOptions, Rows};

/// The plan a verifier derives from a manifest line, if it can (through
/// the one manifest intake).
fn plan_of(manifest: &[u8]) -> Option<Plan> {
    let at = LineRef {
        line: 1,
        offset: 0,
        bytes: manifest,
    };
    let read = ndarc_verify::read_manifest(at, &Default::default());
    read.manifest.map(Plan::new)
}

/// Compares the two paths on one line; true when the fast path took it.
fn same(plan: &Plan, line: u64, bytes: &[u8]) -> bool {
    let at = LineRef {
        line,
        offset: 1000,
        bytes,
    };
    let digest = sha256(bytes);
    let full = check_line_full(plan, at, digest);
    // With spans asked for: the same summary, and spans only when fast.
    let mut spans = RowSpans::default();
    let with_spans = check_line_spans(plan, at, &mut spans);
    assert_eq!(with_spans, full);
    if check_line_fast(plan, at, Some(digest)).is_none() {
        assert_eq!(spans, RowSpans::default(), "spans of a line not taken fast");
    }
    // Given the line's digest (the push API) or computing it with the
    // rows' digests (the file verifier): the same summary.
    let Some(fast) = check_line_fast(plan, at, Some(digest)) else {
        assert!(check_line_fast(plan, at, None).is_none());
        return false;
    };
    let hashing = check_line_fast(plan, at, None).expect("fast with the digest, not without");
    assert_eq!(fast, hashing);
    check_spans(plan, bytes, &fast);
    assert!(
        full.findings.is_empty(),
        "line {line}: the fast path accepted a line with findings {:#?}\n{}",
        full.findings,
        String::from_utf8_lossy(bytes)
    );
    assert_eq!(
        fast,
        full,
        "line {line}: summaries differ\n{}",
        String::from_utf8_lossy(bytes)
    );
    true
}

/// The spans `check_line_spans` records for an accepted line locate exactly
/// the rows, rowids and cells the line holds.
fn check_spans(plan: &Plan, bytes: &[u8], fast: &ndarc_format::LineSummary) {
    let at = LineRef {
        line: 2,
        offset: 0,
        bytes,
    };
    let mut spans = RowSpans::default();
    check_line_spans(plan, at, &mut spans);
    let Body::Rows(part) = &fast.body else {
        panic!("fast path accepted a line that is not a row part");
    };
    assert_eq!(spans.table, Some(part.table));
    assert_eq!(spans.ordered, part.ordered);
    let tp = &plan.tables[part.table];
    let items = ndarc_json::parse(bytes).expect("accepted line parses");
    let items = items
        .get("items")
        .and_then(|v| v.as_array())
        .expect("items");
    assert_eq!(spans.rows.len(), items.len());
    assert_eq!(spans.cells.len(), items.len() * tp.columns.len());
    assert_eq!(
        spans.rowids.len(),
        if tp.has_rowid { items.len() } else { 0 }
    );
    let text = |(a, b): (u32, u32)| &bytes[a as usize..b as usize];
    for (i, item) in items.iter().enumerate() {
        let row = item.get("row").expect("row");
        assert_eq!(text(spans.rows[i]), ndarc_json::to_canonical_vec(row));
        for (c, col) in tp.columns.iter().enumerate() {
            let cell = row.get(&col.name).expect("cell");
            let span = spans.cells[i * tp.columns.len() + c];
            assert_eq!(
                text(span),
                ndarc_json::to_canonical_vec(cell),
                "row {i} {}",
                col.name
            );
        }
        if tp.has_rowid {
            let (id, span) = spans.rowids[i];
            let rowid = item.get("rowid").and_then(|v| v.as_f64()).expect("rowid");
            assert_eq!(id as f64, rowid);
            assert_eq!(
                text(span),
                ndarc_json::to_canonical_vec(item.get("rowid").unwrap())
            );
        }
    }
}

/// Compares every line after the manifest; returns (fast, lines).
fn compare(archive: &[u8]) -> (usize, usize) {
    let mut lines = archive.split(|&b| b == b'\n');
    let Some(plan) = lines.next().and_then(plan_of) else {
        return (0, 0);
    };
    let (mut fast, mut n) = (0, 0);
    for (i, l) in lines.enumerate() {
        n += 1;
        fast += usize::from(same(&plan, i as u64 + 2, l));
    }
    (fast, n)
}

fn generated(seed: u64) -> Vec<u8> {
    let opts = GenOptions {
        rows: Rows::Between(20, 120),
        ..GenOptions::small(seed)
    };
    generate_vec(&opts).expect("generate").0
}

#[test]
fn generated_archives_take_the_fast_path_with_identical_summaries() {
    let (mut fast, mut lines) = (0, 0);
    for seed in 0..12 {
        let (f, n) = compare(&generated(seed));
        fast += f;
        lines += n;
    }
    // Row parts are most lines; binary parts and the closing are not fast.
    assert!(
        fast * 2 > lines,
        "{fast} of {lines} lines took the fast path"
    );
}

#[test]
fn corpus_files_agree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut files = 0;
    let mut fast = 0;
    for dir in ["valid", "invalid"] {
        for e in std::fs::read_dir(root.join(dir)).expect("testdata") {
            let path = e.expect("entry").path();
            if path.extension().and_then(|x| x.to_str()) != Some("ndjson") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("read");
            fast += compare(&bytes).0;
            files += 1;
        }
    }
    assert!(files > 200, "{files} corpus files");
    assert!(fast > 0);
}

#[test]
fn every_mutation_agrees() {
    let base = generated(3);
    let mut applied = 0;
    for m in ndarc_testkit::mutate::mutations() {
        for seed in 0..3 {
            if let Ok(mutant) = m.apply(&base, seed) {
                compare(&mutant.bytes);
                applied += 1;
            }
        }
    }
    assert!(applied > 100, "{applied} mutants");
}

#[test]
fn every_single_byte_edit_of_a_row_part_agrees() {
    let base = generated(5);
    let lines: Vec<&[u8]> = base.split(|&b| b == b'\n').collect();
    let plan = plan_of(lines[0]).expect("plan");
    // Row parts of a rowid table and of a primary-key table, and one with a
    // blob cell where there is one.
    let mut picked: Vec<(usize, &[u8])> = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(1) {
        let s = String::from_utf8_lossy(l);
        let rowid = s.contains("\"rowid\":");
        let blob = s.contains("{\"blob\":");
        if s.contains("\"kind\":\"row\"")
            && (picked.is_empty()
                || (blob
                    && !picked
                        .iter()
                        .any(|(_, p)| p.windows(8).any(|w| w == b"{\"blob\":")))
                || (!rowid
                    && picked
                        .iter()
                        .all(|(_, p)| p.windows(8).any(|w| w == b"\"rowid\":"))))
        {
            picked.push((i, l));
        }
        if picked.len() == 3 {
            break;
        }
    }
    assert!(picked.len() >= 2, "row parts found: {}", picked.len());
    let replacements = [b'0', b'9', b'"', b'\\', b'x', b' ', b'}', b',', 0x01, 0xFF];
    let mut edits = 0;
    for (i, l) in picked {
        assert!(same(&plan, i as u64 + 1, l), "line {} not fast", i + 1);
        let cap = l.len().min(1500);
        for pos in 0..cap {
            for &r in &replacements {
                if l[pos] == r {
                    continue;
                }
                let mut e = l.to_vec();
                e[pos] = r;
                same(&plan, i as u64 + 1, &e);
                edits += 1;
            }
            // Deletion and duplication of the byte.
            let mut d = l.to_vec();
            d.remove(pos);
            same(&plan, i as u64 + 1, &d);
            let mut d = l.to_vec();
            d.insert(pos, l[pos]);
            same(&plan, i as u64 + 1, &d);
        }
    }
    assert!(edits > 10_000, "{edits} edits");
}
