//! Work that must stay linear in its input (issue 11, items 3 and 5), and
//! `row_key_order` once per table (item 10), on generated inputs.
//!
//! Complexity is asserted as a scaling ratio: the work on an input four
//! times larger must take well under the sixteen times a quadratic
//! algorithm needs (the best of a few runs, so that a busy machine does not
//! decide). Before the fixes, the largest inputs here took minutes.

use std::sync::Arc;
use std::time::Duration;

use ndarc_format::part::{check_line_fast, check_line_full};
use ndarc_format::{
    check_line, check_manifest, part_keys, Assembler, Code, Collector, LineRef, LineReport,
    ManifestOptions, ManifestOutcome, Plan,
};

/// A manifest with `tables` tables (each depending on the one before,
/// listing one excluded column of its own) and `config` configuration
/// names, of which every tenth repeats: every check over those lists runs.
fn manifest(tables: usize, config: usize) -> String {
    let mut s = String::from(r#"{"epoch":0,"excludedColumns":{"#);
    for i in 0..tables {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(r#""t{i:07}":["note"]"#));
    }
    s.push_str(r#"},"excludedTables":["x"],"exportedAt":"2025-01-01T00:00:00.000Z","format":"rer-portability","journal":null,"kind":"manifest","objects":[],"partCount":0,"payloads":[],"product":"p","requiredConfiguration":["#);
    for i in 0..config {
        if i > 0 {
            s.push(',');
        }
        let n = if i % 10 == 9 { i - 1 } else { i };
        s.push_str(&format!(r#""CONFIG_NAME_{n:09}""#));
    }
    s.push_str(r#"],"schema":"0","sourceIdentity":"s","tables":["#);
    for i in 0..tables {
        if i > 0 {
            s.push(',');
        }
        let dep = if i > 0 {
            format!(r#""t{:07}""#, i - 1)
        } else {
            String::new()
        };
        s.push_str(&format!(
            r#"{{"columns":[{{"name":"id","notnull":0,"pk":1,"type":"INTEGER"}},{{"name":"note","notnull":0,"pk":0,"type":"TEXT"}}],"count":0,"dependencies":[{dep}],"name":"t{i:07}","rowidAlias":null,"sql":"CREATE TABLE t{i:07}(id INTEGER PRIMARY KEY, note TEXT)"}}"#
        ));
    }
    s.push_str(r#"],"version":2}"#);
    s
}

/// Reads a manifest line into a plan, with its findings.
fn plan_of(line: &str, max: usize) -> (Plan, Vec<ndarc_format::Finding>) {
    let value = ndarc_json::parse(line.as_bytes()).expect("JSON");
    let at = LineRef {
        line: 1,
        offset: 0,
        bytes: line.as_bytes(),
    };
    let mut r = LineReport::new(at, max);
    let ManifestOutcome::Read(m) = check_manifest(&value, &mut r, &ManifestOptions::default())
    else {
        panic!("not a manifest")
    };
    let (findings, _) = r.into_findings();
    (Plan::new(*m), findings)
}

/// The best of three runs of `f`.
fn best_of_3(mut f: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let t = cpu_now();
            f();
            cpu_now().saturating_sub(t)
        })
        .min()
        .unwrap_or_default()
}

/// The CPU time this thread has used: unlike the wall clock, it does not
/// grow while other processes (CI's other tests, other builds) have the
/// cores, so the ratios below measure the algorithm, not the machine's load.
#[cfg(unix)]
fn cpu_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(not(unix))]
fn cpu_now() -> Duration {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// Asserts that `large` (the work on a 4× input) takes far less than the
/// 16 times `small` takes that a quadratic algorithm needs: under 9 times,
/// the best of three runs of each. A busy machine can spoil one round, so
/// up to three rounds are measured; a quadratic algorithm fails them all.
fn assert_linear(what: &str, mut small: impl FnMut(), mut large: impl FnMut()) {
    let mut ratios = Vec::new();
    for _ in 0..3 {
        let (s, l) = (best_of_3(&mut small), best_of_3(&mut large));
        let ratio = l.as_secs_f64() / s.as_secs_f64().max(1e-6);
        if ratio < 9.0 {
            return;
        }
        ratios.push(format!("{ratio:.1}× ({s:?} → {l:?})"));
    }
    panic!(
        "{what}: 4× the input took, in three rounds, {}",
        ratios.join(", ")
    );
}

#[test]
fn manifest_checks_are_linear() {
    // 10,000 and 40,000 tables (8 MB); 0.1 and 0.4 MB of configuration
    // names. Quadratic, the larger took about 10 s.
    let small = manifest(10_000, 5_000);
    let large = manifest(40_000, 20_000);
    // Every finding located: duplicate configuration names and schema.
    assert_linear(
        "manifest check",
        || {
            let (plan, findings) = plan_of(&small, usize::MAX);
            assert_eq!(plan.tables.len(), 10_000);
            assert_eq!(
                findings
                    .iter()
                    .filter(|f| f.code == Code::DuplicateConfiguration)
                    .count(),
                500
            );
        },
        || {
            let (plan, findings) = plan_of(&large, usize::MAX);
            assert_eq!(plan.tables.len(), 40_000);
            // The excluded column is left out of the rows, by a lookup.
            assert_eq!(plan.tables[39_999].columns.len(), 1);
            assert_eq!(plan.tables[39_999].pk, [0]);
            let dup: Vec<_> = findings
                .iter()
                .filter(|f| f.code == Code::DuplicateConfiguration)
                .collect();
            assert_eq!(dup.len(), 2_000);
            // Positions are the values' own.
            let last = dup[1_999];
            assert_eq!(last.pointer, "/requiredConfiguration/19999");
            assert!(large[last.offset as usize..].starts_with("\"CONFIG_NAME_000019998\""));
            assert!(!findings.iter().any(|f| f.code == Code::MissingDependency));
        },
    );
}

/// A manifest of one table `t` with a text primary key, and `parts` parts.
fn one_table(parts: usize, rows: usize) -> Plan {
    let line = format!(
        r#"{{"epoch":0,"excludedColumns":{{}},"excludedTables":[],"exportedAt":"2025-01-01T00:00:00.000Z","format":"rer-portability","journal":null,"kind":"manifest","objects":[],"partCount":{parts},"payloads":[],"product":"p","requiredConfiguration":[],"schema":"0","sourceIdentity":"s","tables":[{{"columns":[{{"name":"k","notnull":1,"pk":1,"type":"TEXT"}},{{"name":"v","notnull":0,"pk":0,"type":"INTEGER"}}],"count":{rows},"dependencies":[],"name":"t","rowidAlias":null,"sql":"CREATE TABLE t(k TEXT PRIMARY KEY, v INTEGER)"}}],"version":2}}"#
    );
    plan_of(&line, 100).0
}

/// A canonical part line `index` of table `t` with the keys `keys`, rows
/// numbered from `first`.
fn part(index: usize, first: usize, keys: &[usize]) -> String {
    let items: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            format!(
                r#"{{"index":{},"kind":"row","row":{{"k":"key-{k:08}","v":{k}}},"table":"t"}}"#,
                first + i
            )
        })
        .collect();
    format!(
        r#"{{"index":{index},"items":[{}],"kind":"part"}}"#,
        items.join(",")
    )
}

/// Keys 0..n in a shuffled order (a fixed permutation).
fn shuffled(n: usize) -> Vec<usize> {
    let mut keys: Vec<usize> = (0..n).collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        keys.swap(i, (state % (i as u64 + 1)) as usize);
    }
    keys
}

#[test]
fn part_keys_are_read_in_one_pass() {
    let plan = one_table(1, 0);
    // Canonical lines (the scanner) and lines with a space (one parse):
    // quadratic, the larger non-canonical line took minutes.
    for canonical in [true, false] {
        let line = |n: usize| {
            let l = part(0, 0, &shuffled(n));
            if canonical {
                l
            } else {
                l.replacen(",\"items\"", ", \"items\"", 1)
            }
        };
        let (small, large) = (line(20_000), line(80_000));
        assert_linear(
            if canonical {
                "keys, scanned"
            } else {
                "keys, parsed"
            },
            || {
                assert_eq!(part_keys(&plan, 0, small.as_bytes()).len(), 20_000);
            },
            || {
                let keys = part_keys(&plan, 0, large.as_bytes());
                assert_eq!(keys.len(), 80_000);
                let k = keys.iter().nth(79_999).unwrap();
                assert_eq!(k.item, 79_999);
                assert!(large[k.offset as usize..].starts_with("{\"k\":\"key-"));
                assert_eq!(k.text, format!("[\"key-{:08}\"]", shuffled(80_000)[79_999]));
                assert_eq!(k.digest, ndarc_format::key::key_digest(k.text.as_bytes()));
            },
        );
    }
}

/// Feeds the lines to an assembler after the manifest and re-scans what it
/// asks for: the findings.
fn verify(plan: Plan, lines: &[String]) -> Vec<ndarc_format::Finding> {
    let plan = Arc::new(plan);
    let mut asm = Assembler::new(plan.clone(), b"{}", 0, Collector::new(usize::MAX));
    let mut offset = 3u64;
    let mut positions = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let at = LineRef {
            line: i as u64 + 2,
            offset,
            bytes: l.as_bytes(),
        };
        positions.push(offset);
        asm.feed(check_line(&plan, at));
        offset += l.len() as u64 + 1;
    }
    let (outcome, mut c) = asm.finish((lines.len() as u64 + 2, offset));
    for (t, parts, _) in &outcome.rescan {
        // Each run is `count` consecutive lines from `line`.
        let (plan, positions) = (&plan, &positions);
        let keys = parts.iter().flat_map(|run| {
            (0..run.count).map(move |k| {
                let line = run.line + k;
                let i = (line - 2) as usize;
                (line, positions[i], part_keys(plan, *t, lines[i].as_bytes()))
            })
        });
        ndarc_format::rescan_duplicates("t", keys, &mut c);
    }
    c.kept
}

#[test]
fn row_key_order_is_reported_once_per_table() {
    // 20 parts of 50 shuffled rows each, one key repeated far apart.
    let mut keys = shuffled(1_000);
    keys[900] = keys[10];
    let lines: Vec<String> = keys
        .chunks(50)
        .enumerate()
        .map(|(i, k)| part(i, i * 50, k))
        .collect();
    let found = verify(one_table(20, 1_000), &lines);
    let order: Vec<_> = found
        .iter()
        .filter(|f| f.code == Code::RowKeyOrder)
        .collect();
    assert_eq!(order.len(), 1, "{order:#?}");
    // At the first descent, with its position in the file.
    assert_eq!(order[0].line, 2);
    let first_fall = keys.windows(2).position(|w| w[1] < w[0]).unwrap() + 1;
    assert_eq!(order[0].pointer, format!("/items/{first_fall}/row"));
    assert!(lines[0][order[0].offset as usize - 3..].starts_with("{\"k\":"));
    // The repeat is found by the re-scan, at its own position.
    let dup: Vec<_> = found
        .iter()
        .filter(|f| f.code == Code::DuplicateRowKey)
        .collect();
    assert_eq!(dup.len(), 1, "{dup:#?}");
    assert_eq!((dup[0].line, dup[0].pointer.as_str()), (20, "/items/0/row"));
    assert!(dup[0].message.contains("already used on line 2 (item 10)"));
    // Contents hashed: the closing is missing, nothing else.
    let other: Vec<_> = found
        .iter()
        .filter(|f| !matches!(f.code, Code::RowKeyOrder | Code::DuplicateRowKey))
        .map(|f| f.code)
        .collect();
    assert_eq!(other, [Code::ClosingMissing]);
}

#[test]
fn a_part_out_of_key_order_takes_the_fast_path() {
    let plan = one_table(1, 5);
    let line = part(0, 0, &[3, 1, 4, 0, 2]);
    let at = LineRef {
        line: 2,
        offset: 0,
        bytes: line.as_bytes(),
    };
    let digest = ndarc_format::hash::sha256(line.as_bytes());
    let fast = check_line_fast(&plan, at, Some(digest)).expect("accepted: a warning only");
    assert_eq!(fast, check_line_full(&plan, at, digest));
    let ndarc_format::part::Body::Rows(rows) = &fast.body else {
        panic!("rows expected")
    };
    assert!(!rows.ordered);
    let d = rows.descent.as_ref().unwrap();
    assert_eq!(d.pointer, "/items/1/row");
    assert!(d.message.starts_with(
        r#"row key ["key-00000001"] of table "t" sorts before the previous ["key-00000003"]"#
    ));
    assert!(fast.findings.is_empty());
    // A repeated key is an error the fast path leaves to the full check.
    let line = part(0, 0, &[3, 1, 1, 0, 2]);
    let at = LineRef {
        line: 2,
        offset: 0,
        bytes: line.as_bytes(),
    };
    assert!(check_line_fast(&plan, at, None).is_none());
    let full = check_line_full(&plan, at, ndarc_format::hash::sha256(line.as_bytes()));
    assert_eq!(
        full.findings.iter().map(|f| f.code).collect::<Vec<_>>(),
        [Code::DuplicateRowKey]
    );
}
