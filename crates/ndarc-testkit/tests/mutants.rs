//! Mutants against the verifier: every mutant of a generated archive gives
//! its code at its line, every code it says comes along (`also`), and no
//! other finding, error or warning, outside what it allows (`allow`) and
//! the verifier's known gaps below. Mutants are deterministic.

use std::collections::BTreeSet;
use std::path::Path;

use ndarc_format::Code;
use ndarc_testkit::mutate::{
    file_codes, mutation, mutations, Mutant, INTEGRITY_ONLY, LINEAGE_ONLY, POLICY_ONLY, PUSH_ONLY,
};
use ndarc_testkit::{arb_options, corpus_valid, generate_vec, mutate, mutate_random, GenOptions};
use ndarc_verify::{verify_bytes, Options};
use proptest::prelude::*;

fn options() -> Options {
    Options {
        jobs: 1,
        max_errors: 10_000,
        ..Options::default()
    }
}

/// Where the verifier is known to fall short of the rule a mutation
/// breaks. Each entry: the mutation, whether the verifier may miss the
/// mutant's code altogether, and extra codes it may give. Keep it empty in a
/// healthy tree.
const KNOWN_GAPS: &[(&str, bool, &[Code])] = &[];

/// Judges one mutant: `Ok` when the verifier reports what it must.
fn judge(m: &Mutant) -> Result<(), String> {
    let r = verify_bytes(&m.bytes, &options());
    let found: Vec<String> = r
        .findings
        .iter()
        .map(|f| format!("{}@{}", f.code, f.line))
        .collect();
    let ctx = || format!("{m:?}\n  findings: {}", found.join(" "));
    let gap = KNOWN_GAPS.iter().find(|(name, _, _)| *name == m.mutation);
    let may_miss = gap.is_some_and(|g| g.1);
    if !r
        .findings
        .iter()
        .any(|f| f.code == m.code && f.line == m.line)
        && !may_miss
    {
        return Err(format!("{} not at line {}: {}", m.code, m.line, ctx()));
    }
    for c in &m.also {
        if !r.findings.iter().any(|f| f.code == *c) && !may_miss {
            return Err(format!("missing the accompanying {c}: {}", ctx()));
        }
    }
    let expected: BTreeSet<Code> = std::iter::once(m.code)
        .chain(m.also.iter().copied())
        .chain(m.allow.iter().copied())
        .chain(gap.map_or(&[][..], |g| g.2).iter().copied())
        .collect();
    let extra: BTreeSet<Code> = r
        .findings
        .iter()
        .filter(|f| !expected.contains(&f.code))
        .map(|f| f.code)
        .collect();
    if !extra.is_empty() {
        return Err(format!("unexpected {extra:?}: {}", ctx()));
    }
    Ok(())
}

fn small(seed: u64) -> Vec<u8> {
    generate_vec(&GenOptions::small(seed)).unwrap().0
}

/// Codes whose mutants are cheap (all but the 17 MB `line_too_long`).
fn cheap_codes() -> Vec<Code> {
    file_codes()
        .into_iter()
        .filter(|c| *c != Code::LineTooLong)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any generated archive × every code: a mutant exists, the verifier
    /// reports its code at its line (and nothing it should not), and the
    /// same seed gives the same bytes.
    #[test]
    fn every_code_on_generated_archives(o in arb_options(), seed in any::<u64>()) {
        let (archive, _) = generate_vec(&o).unwrap();
        for code in cheap_codes() {
            let m = mutate(&archive, code, seed)
                .map_err(|e| TestCaseError::fail(format!("{code}: not applicable: {e}")))?;
            prop_assert_eq!(m.code, code);
            prop_assert_ne!(&m.bytes, &archive);
            if let Err(e) = judge(&m) {
                return Err(TestCaseError::fail(e));
            }
            let again = mutate(&archive, code, seed).unwrap();
            prop_assert_eq!(&again, &m, "{} is not deterministic", code);
        }
    }

    /// Any generated archive × every mutation (every variant of every code).
    #[test]
    fn every_mutation_on_generated_archives(o in arb_options(), seed in any::<u64>()) {
        let (archive, _) = generate_vec(&o).unwrap();
        for mt in mutations().iter().filter(|m| m.code != Code::LineTooLong) {
            let m = mt.apply(&archive, seed)
                .map_err(|e| TestCaseError::fail(format!("{}: not applicable: {e}", mt.name)))?;
            prop_assert_eq!(m.mutation, mt.name);
            if let Err(e) = judge(&m) {
                return Err(TestCaseError::fail(e));
            }
        }
    }

    /// `mutate_random` is deterministic and its mutant verifies as it says.
    #[test]
    fn random_mutants(o in arb_options(), seed in any::<u64>()) {
        let (archive, _) = generate_vec(&o).unwrap();
        let m = mutate_random(&archive, seed).unwrap();
        prop_assert_eq!(&mutate_random(&archive, seed).unwrap(), &m);
        if m.code != Code::LineTooLong {
            if let Err(e) = judge(&m) {
                return Err(TestCaseError::fail(e));
            }
        }
    }
}

#[test]
fn every_mutation_on_the_valid_corpus() {
    let mut failures = Vec::new();
    for (name, archive) in corpus_valid() {
        for mt in mutations().iter().filter(|m| m.code != Code::LineTooLong) {
            for seed in 0..4 {
                match mt.apply(&archive, seed) {
                    Ok(m) => {
                        if let Err(e) = judge(&m) {
                            failures.push(format!("{name} seed {seed}: {e}"));
                        }
                    }
                    Err(e) => failures.push(format!("{name}: {}: {e}", mt.name)),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn line_too_long_is_over_the_default_limit() {
    let archive = small(5);
    let m = mutate(&archive, Code::LineTooLong, 1).unwrap();
    let longest = m.bytes.split(|&b| b == b'\n').map(<[u8]>::len).max();
    assert!(longest > Some(16 * 1024 * 1024));
    judge(&m).unwrap();
}

#[test]
fn seeds_choose_targets() {
    let archive = small(9);
    for code in [
        Code::RowType,
        Code::RowNotNull,
        Code::JsonSyntax,
        Code::EmptyLine,
    ] {
        let distinct: BTreeSet<Vec<u8>> = (0..12)
            .map(|seed| mutate(&archive, code, seed).unwrap().bytes)
            .collect();
        assert!(
            distinct.len() >= 3,
            "{code}: {} distinct mutants",
            distinct.len()
        );
    }
}

#[test]
fn push_only_codes_are_not_applicable() {
    let archive = small(1);
    for code in PUSH_ONLY {
        let e = mutate(&archive, code, 0).unwrap_err();
        assert_eq!(e.code, Some(code));
        assert!(e.to_string().contains("push API"), "{e}");
    }
    for code in POLICY_ONLY {
        let e = mutate(&archive, code, 0).unwrap_err();
        assert!(e.to_string().contains("policy"), "{e}");
    }
    for code in INTEGRITY_ONLY {
        let e = mutate(&archive, code, 0).unwrap_err();
        assert!(e.to_string().contains("--integrity"), "{e}");
    }
    for code in LINEAGE_ONLY {
        let e = mutate(&archive, code, 0).unwrap_err();
        assert!(e.to_string().contains("--later"), "{e}");
    }
    assert_eq!(
        file_codes().len(),
        Code::ALL.len()
            - PUSH_ONLY.len()
            - POLICY_ONLY.len()
            - INTEGRITY_ONLY.len()
            - LINEAGE_ONLY.len()
    );
}

#[test]
fn not_an_archive_is_not_applicable() {
    for input in [&b""[..], b"\n", b"{\"kind\":\"part\"}\n", b"[1]\n[2]\n"] {
        let e = mutate(input, Code::RowType, 1).unwrap_err();
        assert!(!e.reason.is_empty());
        assert!(mutate_random(input, 1).is_err());
    }
}

/// The Python corpus (`testdata/invalid`, one file per rule) covers no code
/// the mutator lacks.
#[test]
fn mutations_cover_the_corpus_codes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/invalid");
    let mut corpus = BTreeSet::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let bytes = std::fs::read(&p).unwrap();
            let v = ndarc_json::parse(&bytes).unwrap();
            corpus.insert(v.get("code").and_then(|c| c.as_str()).unwrap().to_string());
        }
    }
    assert!(corpus.len() > 60, "{corpus:?}");
    for code in corpus {
        let c = Code::from_name(&code).unwrap();
        if POLICY_ONLY.contains(&c) || INTEGRITY_ONLY.contains(&c) {
            // The base archive checked against a policy, or its rows
            // against their foreign keys: nothing the format forbids.
            continue;
        }
        assert!(
            mutations().iter().any(|m| m.code == c),
            "no mutation for {code}"
        );
    }
    assert!(mutation("row_type").is_some());
    assert!(mutation("no_such").is_none());
}

/// Survey: every mutation × many generated archives, printing every
/// failure and failing if there is one (`--ignored --nocapture`, while
/// writing mutations).
#[test]
#[ignore]
fn survey() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut failures = 0;
    for k in 0..60 {
        let o = arb_options().new_tree(&mut runner).unwrap().current();
        let (archive, _) = generate_vec(&o).unwrap();
        for mt in mutations().iter().filter(|m| m.code != Code::LineTooLong) {
            for seed in 0..3 {
                match mt.apply(&archive, seed) {
                    Ok(m) => {
                        if let Err(e) = judge(&m) {
                            failures += 1;
                            println!("FAIL {} archive {k} seed {seed}: {e}\n", mt.name);
                        }
                    }
                    Err(e) => println!("n/a {} archive {k} seed {seed}: {e}", mt.name),
                }
            }
        }
    }
    println!("{failures} failures");
    assert_eq!(
        failures, 0,
        "mutations whose verdict was not the expected one"
    );
}

/// Mutating an invalid archive (a mutant) never panics: it gives another
/// mutant or says why not.
#[test]
fn mutating_mutants_never_panics() {
    let base = corpus_valid()
        .into_iter()
        .find(|(n, _)| n == "everything.ndjson")
        .unwrap()
        .1;
    for code in cheap_codes() {
        let first = mutate(&base, code, 3).unwrap();
        for (k, code2) in cheap_codes().into_iter().enumerate() {
            let _ = mutate(&first.bytes, code2, k as u64);
        }
        let _ = mutate_random(&first.bytes, 1);
    }
}

/// Records of the wrong shape (but JSON) never make a mutation panic.
#[test]
fn odd_records_never_panic() {
    let inputs: [&[u8]; 5] = [
        b"{\"kind\":\"manifest\"}\n{\"kind\":\"closing\"}\n",
        b"{\"kind\":\"manifest\",\"tables\":\"x\",\"objects\":5,\"payloads\":null}\n{\"kind\":\"part\",\"items\":7}\n{\"kind\":\"closing\"}\n",
        b"{\"kind\":\"manifest\",\"tables\":[1,{\"name\":3,\"columns\":[null,{}]}],\"excludedColumns\":[]}\n[]\n{\"kind\":\"closing\",\"partCount\":\"x\"}\n",
        b"{\"kind\":\"manifest\",\"tables\":[{\"name\":\"t\",\"columns\":[{\"name\":\"a\",\"pk\":1}]}],\"payloads\":[{\"name\":\"p\",\"size\":9}]}\n{\"kind\":\"part\",\"items\":[{\"kind\":\"row\",\"table\":\"t\",\"row\":5},{\"kind\":\"payload\",\"name\":\"p\",\"data\":\"\\u00e9\"}]}\n{\"kind\":\"part\",\"items\":[{\"kind\":\"payload\",\"name\":\"p\",\"data\":\"\\u00e9\\u00e9\"}]}\n{\"kind\":\"closing\"}\n",
        b"{\"kind\":\"manifest\",\"objects\":[{\"bucket\":\"b\",\"key\":\"k\",\"size\":-3}],\"requiredConfiguration\":{}}\n{\"kind\":\"part\",\"items\":[{\"kind\":\"object\",\"bucket\":\"b\",\"key\":\"k\",\"data\":7}]}\n{\"kind\":\"closing\"}\n",
    ];
    for input in inputs {
        for m in mutations().iter().filter(|m| m.code != Code::LineTooLong) {
            for seed in 0..8 {
                let _ = m.apply(input, seed);
            }
        }
    }
}
