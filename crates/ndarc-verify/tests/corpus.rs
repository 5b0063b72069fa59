//! The conformance corpus (`testdata/valid`, written by
//! `scripts/make-corpus.py`, and `testdata/invalid`, written by `ndarc-gen`'s
//! `corpus` example; see `testdata/README.md`).
//!
//! - Every valid archive verifies with no finding at all, through
//!   `verify_bytes`, `verify_reader` and the push API, and still does with
//!   the line limits lowered to its own longest lines.
//! - Every invalid archive gives its sidecar's code at its sidecar's line
//!   (and pointer and offset where given), every code of `also`, and no code
//!   outside `code` + `also` + `allow` (floods of consequences fail).
//! - `verify_reader` gives exactly the findings of `verify_bytes`.
//! - Every invalid archive without a framing fault, pushed line by line
//!   through the push API, is refused (warning fixtures accepted), with its
//!   code.
//! - Every `Code` is covered by a fixture or a push-API test here, and so is
//!   every code SPEC.md's tables name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ndarc_verify::{
    verify_bytes, verify_reader, Code, Finding, Options, PushOutcome, PushVerifier, Report,
    Severity,
};
use serde_json::Value;

/// Fixtures on which the verifier is known not to give what the rule says
/// (the sidecar states what it SHOULD give). Each entry is the fixture name
/// and what the verifier does instead. The corpus test tolerates exactly
/// these — and fails when one starts passing, so the entry is removed when
/// the verifier is fixed. Keep this list empty in a healthy tree.
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// The KNOWN_GAPS entry (not a fixture) for `verify_reader` disagreeing
/// with `verify_bytes` on the valid archives under lowered line limits.
const VALID_READER_LIMITS: &str = "valid:reader-limits";

/// Codes only the push API can produce, covered by the tests below.
const PUSH_ONLY: &[&str] = &["part_conflict", "part_missing"];

/// Codes only `verify --later` gives, between two archives (SPEC.md §4.6),
/// covered by `lineage_codes_come_from_two_manifests` below (and by the
/// CLI tests of `crates/ndarc/tests/lineage.rs`).
const LINEAGE_ONLY: &[&str] = &[
    "lineage_source_identity_mismatch",
    "lineage_epoch_backwards",
    "lineage_journal_rewritten",
    "lineage_migrations_rewritten",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(name, path)` of the `.ndjson` files of `testdata/<dir>`, by name.
fn fixtures(dir: &str) -> Vec<(String, PathBuf)> {
    let d = root().join("testdata").join(dir);
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no fixtures in {}", d.display());
    out
}

#[derive(Debug)]
struct Sidecar {
    code: String,
    line: u64,
    offset: Option<u64>,
    pointer: Option<String>,
    also: Vec<String>,
    allow: Vec<String>,
    options: Options,
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().expect("a list of strings").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn sidecar(path: &Path) -> Sidecar {
    let p = path.with_extension("json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut options = Options {
        jobs: 2,
        ..Options::default()
    };
    if let Some(o) = v.get("options") {
        if let Some(n) = o.get("max_line").and_then(Value::as_u64) {
            options.max_line = n as usize;
        }
        if let Some(n) = o.get("max_manifest_line").and_then(Value::as_u64) {
            options.max_manifest_line = n as usize;
        }
        if o.get("formats").is_some() {
            options.formats = strings(o, "formats");
        }
        if let Some(policy) = o.get("policy") {
            let policy = ndarc_format::Policy::from_json(policy.to_string().as_bytes())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            options.policy = Some(std::sync::Arc::new(policy));
        }
        if let Some(on) = o.get("integrity").and_then(Value::as_bool) {
            options.integrity = on;
        }
    }
    Sidecar {
        code: v["code"].as_str().expect("code").to_string(),
        line: v["line"].as_u64().expect("line"),
        offset: v.get("offset").and_then(Value::as_u64),
        pointer: v.get("pointer").and_then(Value::as_str).map(str::to_string),
        also: strings(&v, "also"),
        allow: strings(&v, "allow"),
        options,
    }
}

fn options() -> Options {
    Options {
        jobs: 2,
        ..Options::default()
    }
}

fn show(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            format!(
                "\n    {}:{} {} {:?}: {}",
                f.line, f.offset, f.code, f.pointer, f.message
            )
        })
        .collect()
}

type Key = (String, u64, u64, String);

fn keys(r: &Report) -> Vec<Key> {
    r.findings
        .iter()
        .map(|f| {
            (
                f.code.as_str().to_string(),
                f.line,
                f.offset,
                f.pointer.clone(),
            )
        })
        .collect()
}

/// Positions are within the file: a line from 1 to one past the last, an
/// offset up to the file's length.
fn positions_in_range(r: &Report, data: &[u8]) -> Vec<String> {
    let lines = data.split(|&b| b == b'\n').count() as u64;
    r.findings
        .iter()
        .filter(|f| f.line == 0 || f.line > lines + 1 || f.offset > data.len() as u64)
        .map(|f| {
            format!(
                "{} at line {} offset {} is outside the file ({} lines, {} bytes)",
                f.code,
                f.line,
                f.offset,
                lines,
                data.len()
            )
        })
        .collect()
}

/// verify_reader must agree with verify_bytes finding for finding.
fn reader_agrees(data: &[u8], options: &Options, by_bytes: &Report) -> Option<String> {
    let by_reader = verify_reader(data, options).expect("verify_reader runs");
    let (a, b) = (keys(by_bytes), keys(&by_reader));
    if a == b && by_bytes.errors == by_reader.errors && by_bytes.warnings == by_reader.warnings {
        return None;
    }
    Some(format!(
        "verify_reader disagrees with verify_bytes:\n  bytes:  {}\n  reader: {}",
        show(&by_bytes.findings),
        show(&by_reader.findings)
    ))
}

/// The problems of one invalid fixture (empty when it behaves as its
/// sidecar says).
fn check_invalid(data: &[u8], s: &Sidecar) -> (Vec<String>, Report) {
    let r = verify_bytes(data, &s.options);
    let mut problems = Vec::new();
    let Some(code) = Code::from_name(&s.code) else {
        problems.push(format!("sidecar code {:?} is not a Code", s.code));
        return (problems, r);
    };
    let of_code: Vec<&Finding> = r.findings.iter().filter(|f| f.code == code).collect();
    let at_line: Vec<&&Finding> = of_code.iter().filter(|f| f.line == s.line).collect();
    if of_code.is_empty() {
        problems.push(format!("no {} finding", s.code));
    } else if at_line.is_empty() {
        problems.push(format!(
            "{} reported at line(s) {:?}, expected line {}",
            s.code,
            of_code.iter().map(|f| f.line).collect::<Vec<_>>(),
            s.line
        ));
    } else {
        if let Some(p) = &s.pointer {
            if !at_line.iter().any(|f| &f.pointer == p) {
                problems.push(format!(
                    "{} at line {} has pointer(s) {:?}, expected {p:?}",
                    s.code,
                    s.line,
                    at_line.iter().map(|f| &f.pointer).collect::<Vec<_>>()
                ));
            }
        }
        if let Some(o) = s.offset {
            let matching: Vec<&&&Finding> = at_line
                .iter()
                .filter(|f| s.pointer.as_ref().is_none_or(|p| &f.pointer == p))
                .collect();
            if !matching.is_empty() && !matching.iter().any(|f| f.offset == o) {
                problems.push(format!(
                    "{} at line {} has offset(s) {:?}, expected {o}",
                    s.code,
                    s.line,
                    matching.iter().map(|f| f.offset).collect::<Vec<_>>()
                ));
            }
        }
    }
    match code.severity() {
        Severity::Error if r.errors == 0 => problems.push("no errors counted".into()),
        Severity::Warning if r.errors > 0 || r.warnings == 0 => problems.push(format!(
            "a warning fixture must give only warnings: {} errors, {} warnings",
            r.errors, r.warnings
        )),
        _ => {}
    }
    let found: BTreeSet<&str> = r.findings.iter().map(|f| f.code.as_str()).collect();
    for a in &s.also {
        if !found.contains(a.as_str()) {
            problems.push(format!("no {a} finding (listed in also)"));
        }
    }
    let expected: BTreeSet<&str> = std::iter::once(s.code.as_str())
        .chain(s.also.iter().map(String::as_str))
        .chain(s.allow.iter().map(String::as_str))
        .collect();
    let extra: Vec<&&str> = found.difference(&expected).collect();
    if !extra.is_empty() {
        problems.push(format!("unexpected codes {extra:?}"));
    }
    problems.extend(positions_in_range(&r, data));
    if let Some(p) = reader_agrees(data, &s.options, &r) {
        problems.push(p);
    }
    (problems, r)
}

#[test]
fn invalid_archives_give_their_code_at_their_line() {
    let mut failures = Vec::new();
    let mut gaps_seen = BTreeMap::new();
    for (name, path) in fixtures("invalid") {
        let data = std::fs::read(&path).unwrap();
        let s = sidecar(&path);
        let (problems, r) = check_invalid(&data, &s);
        let gap = KNOWN_GAPS.iter().find(|(n, _)| *n == name);
        match (gap, problems.is_empty()) {
            (None, true) => {}
            (None, false) => failures.push(format!(
                "{name}: {}\n  findings:{}",
                problems.join("\n  "),
                show(&r.findings)
            )),
            (Some(_), true) => failures.push(format!(
                "{name}: now behaves as its sidecar says; remove it from KNOWN_GAPS"
            )),
            (Some((_, why)), false) => {
                gaps_seen.insert(name.clone(), why);
                eprintln!(
                    "known gap {name} ({why}): {}{}",
                    problems.join("; "),
                    show(&r.findings)
                );
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} invalid fixture(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// An archive that begins part-way into a file (a database packed to a
/// temporary file writes its manifest last, just before its parts) is
/// verified from there as the file of it alone is: every fixture, valid
/// and invalid, behind bytes that hold LFs and a line of JSON, gives the
/// same findings at the same lines and offsets (the archive's), the same
/// counts and the same hashes.
#[test]
fn an_archive_part_way_into_a_file_verifies_as_the_file_of_it_does() {
    use std::io::Write;
    let junk = b"{\"kind\":\"closing\"}\n\nnot an archive\r\n";
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, path) in fixtures("valid").into_iter().chain(fixtures("invalid")) {
        let data = std::fs::read(&path).unwrap();
        let alone = ndarc_verify::verify_path(&path, &options()).expect("verify_path runs");
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(junk).unwrap();
        f.write_all(&data).unwrap();
        let within = ndarc_verify::verify_file(f, junk.len() as u64, &name, &options())
            .expect("verify_file runs");
        checked += 1;
        if keys(&alone) != keys(&within)
            || (alone.errors, alone.warnings, alone.lines, alone.bytes)
                != (within.errors, within.warnings, within.lines, within.bytes)
            || (&alone.content_hash, &alone.archive_hash)
                != (&within.content_hash, &within.archive_hash)
        {
            failures.push(format!(
                "{name}:\n  alone:  {}\n  within: {}",
                show(&alone.findings),
                show(&within.findings)
            ));
        }
    }
    assert!(checked > 100, "only {checked} fixtures");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn known_gaps_name_fixtures() {
    let names: BTreeSet<String> = fixtures("invalid").into_iter().map(|(n, _)| n).collect();
    for (n, why) in KNOWN_GAPS {
        assert!(
            names.contains(*n) || *n == VALID_READER_LIMITS,
            "KNOWN_GAPS names {n:?}, which is not a fixture"
        );
        assert!(!why.is_empty());
    }
}

#[test]
fn valid_archives_verify_cleanly_every_way() {
    let mut failures = Vec::new();
    // verify_reader against verify_bytes with lowered line limits.
    let mut reader_limits = Vec::new();
    for (name, path) in fixtures("valid") {
        let data = std::fs::read(&path).unwrap();
        let r = verify_bytes(&data, &options());
        if !r.findings.is_empty() || r.errors > 0 || r.warnings > 0 {
            failures.push(format!("{name}: {}", show(&r.findings)));
            continue;
        }
        if r.closing_hashes.as_ref().map(|h| &h.0) != r.content_hash.as_ref()
            || r.closing_hashes.as_ref().map(|h| &h.1) != r.archive_hash.as_ref()
        {
            failures.push(format!(
                "{name}: recomputed hashes differ from the closing's"
            ));
        }
        if r.receipt().is_none() {
            failures.push(format!("{name}: no receipt"));
        }
        if let Some(p) = reader_agrees(&data, &options(), &r) {
            failures.push(format!("{name}: {p}"));
        }
        // The limits are inclusive: lowered to the file's own longest lines
        // it still verifies; one byte lower, the longest line is refused.
        let lines: Vec<&[u8]> = data
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let longest = lines[1..].iter().map(|l| l.len()).max().unwrap_or(0);
        let tight = Options {
            max_line: longest,
            max_manifest_line: lines[0].len(),
            ..options()
        };
        let t = verify_bytes(&data, &tight);
        if !t.findings.is_empty() {
            failures.push(format!(
                "{name}: with limits at its longest lines: {}",
                show(&t.findings)
            ));
        }
        if let Some(p) = reader_agrees(&data, &tight, &t) {
            reader_limits.push(format!("{name} (limits at its longest lines): {p}"));
        }
        for over in [
            Options {
                max_line: longest - 1,
                ..tight.clone()
            },
            Options {
                max_manifest_line: lines[0].len() - 1,
                ..tight.clone()
            },
        ] {
            let o = verify_bytes(&data, &over);
            if !o.codes().contains(&Code::LineTooLong) {
                failures.push(format!(
                    "{name}: limits {}/{} one byte below its lines: no line_too_long: {}",
                    over.max_manifest_line,
                    over.max_line,
                    show(&o.findings)
                ));
            }
            if let Some(p) = reader_agrees(&data, &over, &o) {
                reader_limits.push(format!(
                    "{name} (limits {}/{}): {p}",
                    over.max_manifest_line, over.max_line
                ));
            }
        }
        // Pushed in reverse order, with a retry of every part.
        let parts = &lines[1..lines.len() - 1];
        match PushVerifier::new(lines[0], &options()) {
            Err(f) => failures.push(format!("{name}: push refuses the manifest: {}", show(&f))),
            Ok(mut v) => {
                for (i, part) in parts.iter().enumerate().rev() {
                    match v.add_part(i as u64, part) {
                        PushOutcome::Accepted(w) if w.is_empty() => {}
                        other => failures.push(format!("{name}: push part {i}: {other:?}")),
                    }
                    if v.add_part(i as u64, part) != PushOutcome::Duplicate {
                        failures.push(format!("{name}: a retry of part {i} is not a duplicate"));
                    }
                }
                let p = v.finish(lines[lines.len() - 1], |i| {
                    parts.get(i as usize).map(|p| p.to_vec())
                });
                if !p.findings.is_empty()
                    || p.content_hash != r.content_hash
                    || p.archive_hash != r.archive_hash
                {
                    failures.push(format!("{name}: pushed: {}", show(&p.findings)));
                }
            }
        }
    }
    match (
        KNOWN_GAPS.iter().find(|(n, _)| *n == VALID_READER_LIMITS),
        reader_limits.is_empty(),
    ) {
        (None, _) => failures.extend(reader_limits),
        (Some(_), true) => failures.push(format!(
            "verify_reader now agrees under lowered limits; remove {VALID_READER_LIMITS} from KNOWN_GAPS"
        )),
        (Some((_, why)), false) => eprintln!(
            "known gap {VALID_READER_LIMITS} ({why}): {} disagreement(s)",
            reader_limits.len()
        ),
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn example_lines() -> Vec<Vec<u8>> {
    let data = std::fs::read(root().join("testdata/valid/example.ndjson")).unwrap();
    data.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// `part_conflict`: other bytes for an index already accepted are refused;
/// the same bytes are a harmless retry, and the archive still verifies.
#[test]
fn push_part_conflict() {
    let lines = example_lines();
    let parts = &lines[1..lines.len() - 1];
    let mut v = PushVerifier::new(&lines[0], &options()).unwrap();
    assert!(matches!(v.add_part(0, &parts[0]), PushOutcome::Accepted(_)));
    assert_eq!(v.add_part(0, &parts[0]), PushOutcome::Duplicate);
    // The bytes of part 0 with one byte changed (still a valid part 0 on its
    // own: the body "first" becomes "First").
    let mut other = parts[0].clone();
    let at = other.windows(7).position(|w| w == b"\"first\"").unwrap();
    other[at + 1] = b'F';
    match v.add_part(0, &other) {
        PushOutcome::Rejected(f) => {
            assert_eq!(f.len(), 1, "{}", show(&f));
            assert_eq!(f[0].code, Code::PartConflict);
            assert_eq!(f[0].code.as_str(), "part_conflict");
            assert_eq!(f[0].line, 2);
        }
        other => panic!("a conflicting part was not rejected: {other:?}"),
    }
    for (i, p) in parts.iter().enumerate().skip(1) {
        assert!(matches!(v.add_part(i as u64, p), PushOutcome::Accepted(_)));
    }
    let r = v.finish(&lines[lines.len() - 1], |i| parts.get(i as usize).cloned());
    assert!(r.is_valid(true), "{}", show(&r.findings));
}

/// `part_missing`: a part that never arrived is reported at its line.
#[test]
fn push_part_missing() {
    let lines = example_lines();
    let parts = &lines[1..lines.len() - 1];
    let mut v = PushVerifier::new(&lines[0], &options()).unwrap();
    for (i, p) in parts.iter().enumerate() {
        if i != 1 {
            assert!(matches!(v.add_part(i as u64, p), PushOutcome::Accepted(_)));
        }
    }
    assert_eq!(v.missing(), vec![1]);
    let r = v.finish(&lines[lines.len() - 1], |i| parts.get(i as usize).cloned());
    assert!(r.errors > 0);
    let missing: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.code == Code::PartMissing)
        .collect();
    assert_eq!(missing.len(), 1, "{}", show(&r.findings));
    assert_eq!(missing[0].code.as_str(), "part_missing");
    assert_eq!(missing[0].line, 3);
}

/// The push API refuses a part index beyond `partCount` and a part whose
/// `index` member disagrees with the index it was sent as.
#[test]
fn push_part_index() {
    let lines = example_lines();
    let parts = &lines[1..lines.len() - 1];
    let mut v = PushVerifier::new(&lines[0], &options()).unwrap();
    match v.add_part(99, &parts[0]) {
        PushOutcome::Rejected(f) => assert_eq!(f[0].code, Code::PartIndex, "{}", show(&f)),
        other => panic!("{other:?}"),
    }
    match v.add_part(1, &parts[0]) {
        PushOutcome::Rejected(f) => {
            assert!(f.iter().any(|f| f.code == Code::PartIndex), "{}", show(&f))
        }
        other => panic!("{other:?}"),
    }
}

/// Primary codes of the invalid fixtures.
fn covered() -> BTreeSet<String> {
    let mut c: BTreeSet<String> = fixtures("invalid")
        .iter()
        .map(|(_, p)| sidecar(p).code)
        .collect();
    c.extend(PUSH_ONLY.iter().map(|s| s.to_string()));
    c.extend(LINEAGE_ONLY.iter().map(|s| s.to_string()));
    c
}

/// The lineage codes: the example's manifest as read by the verifier (A,
/// given a journal and migrations) and a B that breaks every rule.
#[test]
fn lineage_codes_come_from_two_manifests() {
    use ndarc_format::Carried;
    let data = std::fs::read(root().join("testdata/valid/example.ndjson")).unwrap();
    let report = verify_bytes(&data, &Options::default());
    assert_eq!(report.errors, 0);
    let mut a = report.manifest.clone().expect("the example's manifest");
    // The example's journal is `[]` and it has no migrations.
    let empty = Carried::Entries {
        member: None,
        entries: Vec::new(),
    };
    assert_eq!(a.journal.as_ref(), Some(&empty));
    assert_eq!(a.migrations, None);
    let one = Carried::Entries {
        member: None,
        entries: vec!["1".to_string()],
    };
    a.journal = Some(one.clone());
    a.migrations = Some(one);
    let mut b = a.clone();
    b.source_identity.push('x');
    b.epoch = a.epoch - 1;
    b.journal = Some(empty);
    b.migrations = None;
    let codes: Vec<&str> = ndarc_format::check_lineage(&a, &b)
        .iter()
        .map(|f| f.code.as_str())
        .collect();
    assert_eq!(codes, LINEAGE_ONLY);
}

#[test]
fn every_code_is_covered() {
    let covered = covered();
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !covered.contains(*c))
        .collect();
    assert!(missing.is_empty(), "codes without a fixture: {missing:?}");
    // Every code a sidecar names exists, and fixture names follow it.
    for (name, path) in fixtures("invalid") {
        let s = sidecar(&path);
        for c in std::iter::once(&s.code).chain(&s.also).chain(&s.allow) {
            assert!(Code::from_name(c).is_some(), "{name}: {c:?} is not a code");
        }
        assert!(
            name == s.code || name.starts_with(&format!("{}-", s.code)),
            "{name}: a fixture is named <code> or <code>-<variant> (code {})",
            s.code
        );
    }
    for c in PUSH_ONLY {
        assert!(Code::from_name(c).is_some());
    }
}

/// Every backticked snake_case code in SPEC.md's tables that names a `Code`
/// is covered. A missing SPEC.md, or one whose tables name no code, fails.
#[test]
fn spec_codes_are_covered() {
    let path = root().join("SPEC.md");
    let spec = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} cannot be read: {e}", path.display()));
    spec_codes_covered(&spec);
}

#[test]
#[should_panic(expected = "finding codes, not the full list")]
fn a_spec_without_codes_fails() {
    spec_codes_covered("# no tables here\n| a | b |\n");
}

fn spec_codes_covered(spec: &str) {
    let mut named = BTreeSet::new();
    for line in spec.lines().filter(|l| l.trim_start().starts_with('|')) {
        for (i, tok) in line.split('`').enumerate() {
            if i % 2 == 1
                && !tok.is_empty()
                && tok
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                && Code::from_name(tok).is_some()
            {
                named.insert(tok.to_string());
            }
        }
    }
    assert!(
        named.len() >= 40,
        "SPEC.md's tables name {} finding codes, not the full list",
        named.len()
    );
    let covered = covered();
    let missing: Vec<&String> = named.iter().filter(|c| !covered.contains(*c)).collect();
    assert!(
        missing.is_empty(),
        "SPEC.md names codes without a fixture: {missing:?}"
    );
}

/// A part line longer than `verify_reader`'s first read buffer (1 MiB) and
/// over the limit: the reader skips it without keeping it and reports what
/// `verify_bytes` reports.
#[test]
fn reader_skips_a_line_longer_than_its_buffer() {
    let lines = example_lines();
    let mut data = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if i == 3 {
            data.extend_from_slice(b"{\"pad\":\"");
            data.resize(data.len() + 3 * 1024 * 1024, b'x');
            data.extend_from_slice(b"\"}\n");
        } else {
            data.extend_from_slice(l);
            data.push(b'\n');
        }
    }
    let o = Options {
        max_line: 64 * 1024,
        ..options()
    };
    let r = verify_bytes(&data, &o);
    let long: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.code == Code::LineTooLong)
        .collect();
    assert_eq!(long.len(), 1, "{}", show(&r.findings));
    assert_eq!(long[0].line, 4);
    assert_eq!(r.lines, 6);
    if let Some(p) = reader_agrees(&data, &o, &r) {
        panic!("{p}");
    }
}

/// Codes of framing, which the push API cannot be sent (it receives lines
/// without their LF): fixtures of these codes are not pushed.
const FRAMING: &[&str] = &[
    "carriage_return",
    "empty_line",
    "missing_final_newline",
    "trailing_data",
    "manifest_missing",
    "closing_missing",
];

/// Every invalid fixture pushed through the push API, line by line in
/// order: an error fixture is refused (manifest, part or report), a warning
/// fixture is accepted with no error, and the sidecar's code (or one of
/// its `also`, when a part is refused before the rule spanning parts can
/// see it) is among what the push API reports.
#[test]
fn invalid_archives_are_refused_by_the_push_api() {
    let mut failures = Vec::new();
    let mut pushed = 0;
    for (name, path) in fixtures("invalid") {
        let data = std::fs::read(&path).unwrap();
        let s = sidecar(&path);
        if FRAMING.contains(&s.code.as_str())
            || FRAMING.iter().any(|c| s.also.iter().any(|a| a == c))
        {
            continue;
        }
        let Some(code) = Code::from_name(&s.code) else {
            continue;
        };
        let body = data.strip_suffix(b"\n").unwrap_or(&data);
        let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
        if lines.len() < 2 || lines.iter().any(|l| l.is_empty() || l.contains(&b'\r')) {
            continue;
        }
        pushed += 1;
        let mut found: Vec<Finding> = Vec::new();
        let mut errors = false;
        match PushVerifier::new(lines[0], &s.options) {
            Err(f) => {
                errors = f.iter().any(Finding::is_error);
                found.extend(f);
            }
            Ok(mut v) => {
                let parts = &lines[1..lines.len() - 1];
                for (i, part) in parts.iter().enumerate() {
                    match v.add_part(i as u64, part) {
                        PushOutcome::Accepted(w) => found.extend(w),
                        PushOutcome::Duplicate => {}
                        PushOutcome::Rejected(f) => {
                            errors = true;
                            found.extend(f);
                        }
                    }
                }
                let r = v.finish(lines[lines.len() - 1], |i| {
                    parts.get(i as usize).map(|p| p.to_vec())
                });
                errors |= r.errors > 0;
                found.extend(r.findings);
            }
        }
        let codes: BTreeSet<Code> = found.iter().map(|f| f.code).collect();
        let problem = match code.severity() {
            Severity::Error if !errors => Some("accepted"),
            Severity::Warning if errors => Some("refused a warning fixture"),
            _ if !codes.contains(&code)
                && !s
                    .also
                    .iter()
                    .any(|a| Code::from_name(a).is_some_and(|c| codes.contains(&c))) =>
            {
                Some("does not report the code")
            }
            _ => None,
        };
        if let Some(p) = problem {
            failures.push(format!("{name}: push {p}:{}", show(&found)));
        }
    }
    assert!(pushed > 150, "only {pushed} fixtures pushed");
    assert!(
        failures.is_empty(),
        "{} fixture(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
