mod common;

use std::collections::BTreeSet;

use common::{check, verifies};
use ndarc_json::Value;
use ndarc_testkit::{generate, generate_vec, GenOptions, Later, Rows, TableKind};

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = generate_vec(&GenOptions::small(11)).unwrap();
    let b = generate_vec(&GenOptions::small(11)).unwrap();
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    let c = generate_vec(&GenOptions::small(12)).unwrap();
    assert_ne!(a.0, c.0);
    assert_ne!(a.1.content_hash, c.1.content_hash);
}

/// The bytes of a fixed seed never change: a change here breaks every
/// stored corpus and benchmark baseline, so it must be deliberate.
#[test]
fn golden_hash_of_a_fixed_seed() {
    let (bytes, s) = generate_vec(&GenOptions::small(42)).unwrap();
    let hex = common::hex(&common::sha(&bytes));
    assert_eq!(s.bytes as usize, bytes.len());
    assert_eq!(
        (hex.as_str(), s.content_hash.as_str()),
        (
            "7288f1bd7d895ec44102bdd0f5d57967be8993e6d2db29cf0525e0111d6f7ef3",
            "748ecb4ef2391e949ef6aa2bf98332efc9794d935384c9e97000a2d79c837827",
        ),
        "update only on purpose"
    );
}

#[test]
fn summary_matches_the_bytes() {
    for seed in 0..6 {
        let mut o = GenOptions::small(seed);
        o.part_bytes = 1024 + seed as usize * 777;
        let (bytes, s) = generate_vec(&o).unwrap();
        let c = check(&bytes, o.part_bytes);
        assert_eq!(s.bytes as usize, bytes.len());
        assert_eq!(s.lines as usize, c.part_count + 2);
        assert_eq!(s.part_count as usize, c.part_count);
        assert_eq!(s.content_hash, c.content_hash);
        assert_eq!(s.archive_hash, c.archive_hash);
        let tables = c.manifest.get("tables").and_then(Value::as_array).unwrap();
        assert_eq!(tables.len(), s.tables.len());
        for (t, ts) in tables.iter().zip(&s.tables) {
            assert_eq!(t.get("name").unwrap().as_str().unwrap(), ts.name);
            assert_eq!(
                t.get("count").unwrap().as_safe_integer().unwrap() as u64,
                ts.rows
            );
        }
        verifies(&bytes);
    }
}

#[test]
fn smallest_parts_still_fit_every_row() {
    for seed in 0..4 {
        let o = GenOptions {
            part_bytes: 1024,
            rows: Rows::Exactly(20),
            tables: 14,
            ..GenOptions::small(seed)
        };
        let (bytes, _) = generate_vec(&o).unwrap();
        check(&bytes, 1024);
        verifies(&bytes);
    }
}

#[test]
fn bad_options_are_errors_not_panics() {
    for o in [
        GenOptions {
            part_bytes: 1023,
            ..GenOptions::small(0)
        },
        GenOptions {
            part_bytes: 16 * 1024 * 1024 + 1,
            ..GenOptions::small(0)
        },
        GenOptions {
            rows: Rows::Between(5, 4),
            ..GenOptions::small(0)
        },
        GenOptions {
            rows: Rows::Exactly(ndarc_testkit::MAX_ROWS + 1),
            ..GenOptions::small(0)
        },
        GenOptions {
            product: String::new(),
            ..GenOptions::small(0)
        },
        GenOptions::small(0).with_later(Later {
            changed: f64::NAN,
            ..Later::default()
        }),
    ] {
        let mut out = Vec::new();
        let e = generate(&o, &mut out).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(out.is_empty());
    }
}

/// A default run (16 MiB parts, every template) shows every feature.
#[test]
fn default_run_exercises_every_feature() {
    let o = GenOptions {
        rows: Rows::Between(20, 40),
        ..GenOptions::default()
    };
    let (bytes, _) = generate_vec(&o).unwrap();
    let c = check(&bytes, o.part_bytes);
    verifies(&bytes);
    let m = &c.manifest;
    let tables = m.get("tables").and_then(Value::as_array).unwrap();
    let aliases: BTreeSet<String> = tables
        .iter()
        .map(|t| ndarc_json::to_canonical_string(t.get("rowidAlias").unwrap()))
        .collect();
    assert_eq!(
        aliases,
        ["null", "\"rowid\"", "\"_rowid_\"", "\"oid\""]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    let mut affinities = BTreeSet::new();
    let mut generated = BTreeSet::new();
    let mut composite = false;
    let mut single = false;
    let mut empty_type = false;
    let mut empty_table = false;
    for t in tables {
        let cols = t.get("columns").unwrap().as_array().unwrap();
        for c in cols {
            let ty = c.get("type").unwrap().as_str().unwrap();
            empty_type |= ty.is_empty();
            affinities.insert(ndarc_format::Affinity::of(ty).name());
            if let Some(g) = c.get("generated") {
                generated.insert(g.as_str().unwrap().to_string());
            }
        }
        let pks = cols
            .iter()
            .filter(|c| c.get("pk").unwrap().as_f64().unwrap() > 0.0)
            .count();
        composite |= pks > 1;
        single |= pks == 1;
        empty_table |= t.get("count").unwrap().as_f64() == Some(0.0);
        let deps = t.get("dependencies").unwrap().as_array().unwrap();
        for d in deps {
            assert!(tables.iter().any(|t| t.get("name") == Some(d)));
        }
    }
    assert_eq!(affinities.len(), 4);
    assert_eq!(generated.len(), 2);
    assert!(composite && single && empty_type && empty_table);
    assert!(!m
        .get("excludedColumns")
        .unwrap()
        .as_object()
        .unwrap()
        .is_empty());
    assert!(!m
        .get("excludedTables")
        .unwrap()
        .as_array()
        .unwrap()
        .is_empty());
    assert!(m.contains_key("migrations"));
    let payloads: Vec<&str> = m
        .get("payloads")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.get("name").unwrap().as_str().unwrap())
        .collect();
    assert_eq!(payloads, ["kv cache", "kv", "sessions"]);
    let objects = m.get("objects").unwrap().as_array().unwrap();
    assert!(objects
        .iter()
        .any(|o| o.get("size").unwrap().as_f64() == Some(0.0)));
    assert!(objects
        .iter()
        .any(|o| o.get("size").unwrap().as_f64().unwrap() > 16.0 * 1024.0 * 1024.0));
    // Cells: blobs, nulls, astral, combining, RTL, C0 escapes, U+2028, long.
    let text = String::from_utf8(bytes.clone()).unwrap();
    for needle in [
        "{\"blob\":\"",
        ":null",
        "😀",
        "e\u{301}",
        "שלום",
        "\\u0000",
        "\\\"",
        "\\\\",
        "\u{2028}",
    ] {
        assert!(text.contains(needle), "no {needle:?} in a default run");
    }
    let long = c
        .rows
        .values()
        .flat_map(|t| t.values())
        .any(|row| row.len() > 2000);
    assert!(long, "no row of several KB");
}

#[test]
fn chosen_kinds_only() {
    let o = GenOptions {
        kinds: Some(vec![TableKind::Tags, TableKind::Random(3), TableKind::Tags]),
        ..GenOptions::small(3)
    };
    let (bytes, s) = generate_vec(&o).unwrap();
    check(&bytes, o.part_bytes);
    verifies(&bytes);
    assert_eq!(s.tables.len(), 2);
    assert_eq!(s.tables[1].name, "tags");
}

#[test]
fn later_export_reports_the_exact_diff() {
    for seed in 0..4 {
        let first = GenOptions {
            rows: Rows::Between(30, 80),
            ..GenOptions::small(seed)
        };
        let later = first.with_later(Later {
            seed: 99 + seed,
            changed: 0.2,
            added: 0.1,
            removed: 0.1,
            binary: true,
        });
        let (a, _) = generate_vec(&first).unwrap();
        let (b, s) = generate_vec(&later).unwrap();
        verifies(&b);
        let ca = check(&a, first.part_bytes);
        let cb = check(&b, first.part_bytes);
        assert_ne!(ca.content_hash, cb.content_hash);
        let (mut changed, mut added, mut removed) = (0, 0, 0);
        for t in &s.tables {
            let empty = Default::default();
            let left = ca.rows.get(&t.name).unwrap_or(&empty);
            let right = cb.rows.get(&t.name).unwrap_or(&empty);
            let r = left.keys().filter(|k| !right.contains_key(*k)).count() as u64;
            let a = right.keys().filter(|k| !left.contains_key(*k)).count() as u64;
            let c = left
                .iter()
                .filter(|(k, v)| right.get(*k).is_some_and(|w| w != *v))
                .count() as u64;
            assert_eq!(
                (t.changed, t.added, t.removed),
                (c, a, r),
                "table {}",
                t.name
            );
            changed += c;
            added += a;
            removed += r;
        }
        assert!(changed > 0 && added > 0 && removed > 0);
        // Objects: by (bucket, key) as diff.mjs.
        let key = |o: &Value<'_>| {
            ndarc_json::to_canonical_string(&Value::Array(vec![
                o.get("bucket").unwrap().clone(),
                o.get("key").unwrap().clone(),
            ]))
        };
        let la = ca.manifest.get("objects").unwrap().as_array().unwrap();
        let lb = cb.manifest.get("objects").unwrap().as_array().unwrap();
        let added_o: Vec<String> = lb
            .iter()
            .map(key)
            .filter(|k| !la.iter().any(|o| key(o) == *k))
            .collect();
        let removed_o: Vec<String> = la
            .iter()
            .map(key)
            .filter(|k| !lb.iter().any(|o| key(o) == *k))
            .collect();
        let changed_o: Vec<String> = la
            .iter()
            .filter(|o| lb.iter().any(|p| key(p) == key(o) && p != *o))
            .map(key)
            .collect();
        assert_eq!(added_o, s.objects.added);
        assert_eq!(removed_o, s.objects.removed);
        assert_eq!(changed_o, s.objects.changed);
        assert_eq!(s.payloads.changed, ["[\"kv\"]"]);
    }
}

#[test]
fn later_export_of_nothing_changes_nothing() {
    let first = GenOptions::small(5);
    let same = first.with_later(Later {
        seed: 1,
        changed: 0.0,
        added: 0.0,
        removed: 0.0,
        binary: false,
    });
    let (_, a) = generate_vec(&first).unwrap();
    let (_, b) = generate_vec(&same).unwrap();
    assert_eq!(a.content_hash, b.content_hash);
    assert_ne!(
        a.archive_hash, b.archive_hash,
        "exportedAt, epoch and journal move on"
    );
}

/// `gen --shape narrow`: eight tables of 4 to 7 written columns, short text
/// of 5 to 40 bytes with much non-ASCII, small and negative integers.
#[test]
fn narrow_shape_is_narrow() {
    let o = GenOptions {
        kinds: Some(ndarc_testkit::NARROW.to_vec()),
        rows: Rows::Exactly(300),
        part_bytes: 16 * 1024,
        ..GenOptions::small(5)
    };
    let (bytes, s) = generate_vec(&o).unwrap();
    let c = check(&bytes, o.part_bytes);
    verifies(&bytes);
    assert_eq!(s.tables.len(), 8);
    let (mut texts, mut non_ascii, mut negative) = (0usize, 0usize, 0usize);
    for rows in c.rows.values() {
        assert_eq!(rows.len(), 300);
        for row in rows.values() {
            let v = ndarc_json::parse(row.as_bytes()).unwrap();
            let cells = v.as_object().unwrap();
            assert!((4..=7).contains(&cells.len()), "{row}");
            for (_, cell) in cells.iter() {
                if let Some(t) = cell.as_str() {
                    if t.starts_with('#') || t.len() <= 7 && !t.contains(' ') {
                        continue; // colours, codes, enums
                    }
                    texts += 1;
                    assert!((5..=40).contains(&t.len()), "{t:?}");
                    non_ascii += usize::from(!t.is_ascii());
                }
                if cell.as_safe_integer().is_some_and(|n| n < 0) {
                    negative += 1;
                }
            }
        }
    }
    assert!(texts > 1000, "{texts} text cells");
    assert!(
        non_ascii * 3 > texts,
        "{non_ascii} of {texts} text cells are non-ASCII"
    );
    assert!(negative > 300, "{negative} negative integers");
}
