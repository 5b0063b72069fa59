//! The fixtures of `testdata/invalid` that the Rust mutator owns are, byte
//! for byte, the committed files (`scripts/make-corpus.py --check` checks
//! them a second time, in Python).

use std::path::PathBuf;

fn testdata() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

#[test]
fn committed_fixtures_are_what_the_mutator_writes() {
    let base = std::fs::read(testdata().join("valid/base.ndjson")).unwrap();
    let fixtures = ndarc_gen::mutate::corpus_fixtures(&base).unwrap();
    assert_eq!(fixtures.len(), 242);
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
