mod common;

use common::{check, verifies};
use ndarc_testkit::{arb_options, corpus_valid, generate_vec, repartition, reseal};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every generated archive is valid, canonical, within its part size,
    /// with hashes that recompute; reseal is the identity on it and
    /// repartitioning keeps its content.
    #[test]
    fn generated_archives_are_valid(o in arb_options(), new_parts in 1024usize..=9000) {
        let (bytes, s) = generate_vec(&o).unwrap();
        let c = check(&bytes, o.part_bytes);
        prop_assert_eq!(&c.content_hash, &s.content_hash);
        prop_assert_eq!(c.part_count as u64, s.part_count);
        verifies(&bytes);
        prop_assert_eq!(reseal(&bytes).unwrap(), bytes.clone());
        let (again, _) = generate_vec(&o).unwrap();
        prop_assert_eq!(&again, &bytes);
        let mut out = Vec::new();
        match repartition(&bytes, new_parts, &mut out) {
            Ok(r) => {
                prop_assert_eq!(&r.content_hash, &s.content_hash);
                check(&out, new_parts);
            }
            // Rows generated for larger parts may not fit smaller ones.
            Err(e) => prop_assert!(new_parts < o.part_bytes && e.to_string().contains("row_part_too_large")),
        }
    }
}

#[test]
fn corpus_is_small_valid_and_named() {
    let corpus = corpus_valid();
    assert!(corpus.len() >= 15);
    let mut names = std::collections::BTreeSet::new();
    for (name, bytes) in &corpus {
        assert!(names.insert(name.clone()), "{name} twice");
        assert!(name.ends_with(".ndjson"));
        assert!(bytes.len() < 40_000, "{name} has {} bytes", bytes.len());
        verifies(bytes);
        check(bytes, 16 * 1024 * 1024);
    }
}
