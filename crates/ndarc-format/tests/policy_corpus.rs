//! The policy corpus (`testdata/policy/invalid`): each file is a policy the
//! seed producer's `policy()` refuses, named after the code it refuses it
//! with (`CODE.json`, or `CODE-what.json` for another case of one code).

use std::path::PathBuf;

use ndarc_format::{Policy, PolicyError};

#[test]
fn every_invalid_policy_is_refused_with_the_code_it_is_named_after() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/policy/invalid");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("testdata/policy/invalid") {
        let path = entry.expect("a directory entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 name");
        let want = stem.split('-').next().unwrap_or(stem);
        let bytes = std::fs::read(&path).expect("a policy file");
        match Policy::from_json(&bytes) {
            Err(PolicyError::Invalid { code, .. }) => {
                assert_eq!(code, want, "{}", path.display());
            }
            other => panic!("{}: expected {want}, got {other:?}", path.display()),
        }
        seen += 1;
    }
    // Every code the producer's policy() refuses with has a file.
    assert!(seen >= 13, "only {seen} policies in {}", dir.display());
}
