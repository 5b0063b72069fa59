//! The fixtures of `testdata/invalid` are, byte for byte, what the Rust
//! mutator writes, and it writes every one of them
//! (`scripts/make-corpus.py --check` checks them a second time, in Python).

use std::path::PathBuf;

fn testdata() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

#[test]
fn committed_fixtures_are_what_the_mutator_writes() {
    let base = std::fs::read(testdata().join("valid/base.ndjson")).unwrap();
    let fixtures = ndarc_gen::mutate::corpus_fixtures(&base).unwrap();
    let mut written: Vec<String> = fixtures
        .iter()
        .flat_map(|f| [format!("{}.ndjson", f.name), format!("{}.json", f.name)])
        .collect();
    written.sort();
    let before = written.len();
    written.dedup();
    assert_eq!(written.len(), before, "two fixtures of one name");
    let mut committed: Vec<String> = std::fs::read_dir(testdata().join("invalid"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    committed.sort();
    assert_eq!(
        written, committed,
        "the mutator writes exactly the committed files"
    );
    let mut stale = Vec::new();
    for f in &fixtures {
        for (ext, data) in [("ndjson", &f.archive), ("json", &f.sidecar)] {
            let path = testdata().join(format!("invalid/{}.{ext}", f.name));
            if std::fs::read(&path).ok().as_ref() != Some(data) {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "not what `cargo run -p ndarc-gen --example corpus -- --write testdata/invalid` writes: {stale:#?}"
    );
}

/// A base archive that is not one gives an error, not a panic.
#[test]
fn a_bad_base_is_an_error() {
    for bad in [&b""[..], b"{}", b"{}\n", b"{}\n{}\n{}\n"] {
        assert!(ndarc_gen::mutate::corpus_fixtures(bad).is_err(), "{bad:?}");
    }
}
