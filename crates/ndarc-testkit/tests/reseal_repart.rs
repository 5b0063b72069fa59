mod common;

use common::{check, lines, verifies};
use ndarc_json::{Object, Value};
use ndarc_testkit::{
    generate_vec, repartition, reseal, reseal_with, GenOptions, ResealOptions, Rows,
};

fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

fn owned_lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    lines(bytes).into_iter().map(<[u8]>::to_vec).collect()
}

/// Two small tables whose rows fit in one part each: `legacy_rows` (in
/// part 0) and `tags`.
fn two_tables(seed: u64) -> GenOptions {
    GenOptions {
        kinds: Some(vec![
            ndarc_testkit::TableKind::LegacyRows,
            ndarc_testkit::TableKind::Tags,
        ]),
        rows: Rows::Exactly(8),
        ..GenOptions::small(seed)
    }
}

/// Sets the `rowid` (TEXT) cell of the first row item of `legacy_rows`.
fn edit_a_cell(bytes: &[u8]) -> Vec<u8> {
    let mut ls = owned_lines(bytes);
    let line = ls[1].clone();
    let mut part = ndarc_json::parse(&line).unwrap().into_owned();
    let Value::Object(p) = &mut part else {
        panic!()
    };
    let Some(Value::Array(items)) = p.get_mut("items") else {
        panic!()
    };
    let Some(Value::Object(item)) = items.first_mut() else {
        panic!()
    };
    assert_eq!(item.get("kind").unwrap().as_str(), Some("row"));
    let Some(Value::Object(row)) = item.get_mut("row") else {
        panic!()
    };
    assert!(row.contains_key("rowid"));
    row.insert("rowid", Value::from("edited by hand ✍"));
    ls[1] = ndarc_json::to_canonical_vec(&part);
    join(&ls)
}

#[test]
fn reseal_of_a_valid_archive_is_the_identity() {
    for seed in 0..5 {
        let (bytes, _) = generate_vec(&GenOptions::small(seed)).unwrap();
        assert_eq!(reseal(&bytes).unwrap(), bytes);
        let opts = ResealOptions {
            canonical: false,
            ..ResealOptions::default()
        };
        assert_eq!(reseal_with(&bytes, opts).unwrap(), bytes);
    }
}

#[test]
fn reseal_after_editing_a_cell_recomputes_the_content_hash() {
    let o = two_tables(8);
    let (bytes, s) = generate_vec(&o).unwrap();
    let edited = edit_a_cell(&bytes);
    let resealed = reseal(&edited).unwrap();
    let c = check(&resealed, o.part_bytes);
    assert_ne!(c.content_hash, s.content_hash);
    verifies(&resealed);
}

#[test]
fn reseal_makes_lines_canonical_and_fixes_counts_schema_part_count() {
    let o = two_tables(21);
    let (bytes, _) = generate_vec(&o).unwrap();
    let mut ls = owned_lines(&bytes);
    // Drop the last row of the first table, pretty-print the manifest,
    // change a table's SQL and pretty-print a part.
    let mut part = ndarc_json::parse(&ls[1]).unwrap().into_owned();
    let Value::Object(p) = &mut part else {
        panic!()
    };
    let Some(Value::Array(items)) = p.get_mut("items") else {
        panic!()
    };
    items.pop();
    ls[1] = ndarc_json::to_canonical_vec(&part);
    ls[2].splice(1..1, *b" ");
    let mut m = ndarc_json::parse(&ls[0]).unwrap().into_owned();
    let Value::Object(mo) = &mut m else { panic!() };
    let Some(Value::Array(tables)) = mo.get_mut("tables") else {
        panic!()
    };
    let Some(Value::Object(t0)) = tables.first_mut() else {
        panic!()
    };
    let sql = t0
        .get("sql")
        .unwrap()
        .as_str()
        .unwrap()
        .replace("CREATE TABLE", "CREATE  TABLE");
    t0.insert("sql", Value::from(sql));
    let mut text = ndarc_json::to_canonical_vec(&m);
    text.splice(1..1, b" ".iter().copied());
    ls[0] = text;
    let resealed = reseal(&join(&ls)).unwrap();
    let c = check(&resealed, o.part_bytes);
    assert_eq!(c.rows["legacy_rows"].len(), 7);
    verifies(&resealed);
}

#[test]
fn reseal_does_not_renumber_indexes() {
    let o = two_tables(23);
    let (bytes, _) = generate_vec(&o).unwrap();
    let mut ls = owned_lines(&bytes);
    ls.remove(1);
    let resealed = reseal(&join(&ls)).unwrap();
    let report = ndarc_verify::verify_bytes(&resealed, &Default::default());
    assert!(!report.is_valid(false));
}

#[test]
fn reseal_with_leaves_the_chosen_rule_broken() {
    let o = two_tables(22);
    let (bytes, _) = generate_vec(&o).unwrap();
    let edited = edit_a_cell(&bytes);
    // Hashes off: the closing line keeps the old hashes.
    let r = reseal_with(
        &edited,
        ResealOptions {
            hashes: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(lines(&r).last(), lines(&bytes).last());
    let report = ndarc_verify::verify_bytes(&r, &Default::default());
    assert!(!report.is_valid(false));

    // Counts off: a count stays as it was after a row is dropped.
    let mut ls = owned_lines(&bytes);
    let mut part = ndarc_json::parse(&ls[1]).unwrap().into_owned();
    let Value::Object(p) = &mut part else {
        panic!()
    };
    let Some(Value::Array(items)) = p.get_mut("items") else {
        panic!()
    };
    {
        assert!(items.len() > 1);
        items.pop();
        ls[1] = ndarc_json::to_canonical_vec(&part);
        let edited = join(&ls);
        let r = reseal_with(
            &edited,
            ResealOptions {
                counts: false,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(lines(&r)[0], lines(&bytes)[0]);
        let report = ndarc_verify::verify_bytes(&r, &Default::default());
        assert!(!report.is_valid(false));
        let fixed = reseal(&edited).unwrap();
        verifies(&fixed);
    }

    // Non-canonical lines stay as written when canonical is off.
    let mut ls = owned_lines(&bytes);
    ls[1].splice(1..1, b"  ".iter().copied());
    let r = reseal_with(
        &join(&ls),
        ResealOptions {
            canonical: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(lines(&r)[1], &ls[1][..]);
    let report = ndarc_verify::verify_bytes(&r, &Default::default());
    assert_eq!(
        report.errors,
        1,
        "only the non-canonical line: {:?}",
        report.codes()
    );
}

#[test]
fn reseal_errors_instead_of_panicking() {
    assert!(reseal(b"").is_err());
    assert!(reseal(b"{\"a\":1,\"a\":2}\n").is_err());
    assert!(reseal(b"[1]\n").is_err());
    assert!(reseal(b"{}\n\n{}\n").is_err());
    // A manifest alone is resealed (nothing to close).
    assert_eq!(reseal(b"{ }\n").unwrap(), b"{\"partCount\":0}\n");
}

fn manifest_without_part_count(bytes: &[u8]) -> Object<'static> {
    let mut m = match ndarc_json::parse(lines(bytes)[0]).unwrap().into_owned() {
        Value::Object(o) => o,
        _ => panic!(),
    };
    m.remove("partCount");
    m
}

#[test]
fn repartition_keeps_content_and_changes_only_part_count() {
    for seed in 0..4 {
        let o = GenOptions {
            rows: Rows::Between(10, 60),
            part_bytes: 1024,
            ..GenOptions::small(seed)
        };
        let (bytes, s) = generate_vec(&o).unwrap();
        for pb in [1024, 1500, 3333, 65536, 16 * 1024 * 1024] {
            let mut out = Vec::new();
            let r = repartition(&bytes, pb, &mut out).unwrap();
            let c = check(&out, pb);
            verifies(&out);
            assert_eq!(r.content_hash, s.content_hash);
            assert_eq!(c.content_hash, s.content_hash);
            assert_eq!(r.bytes as usize, out.len());
            assert_eq!(r.part_count as usize, c.part_count);
            assert_eq!(
                manifest_without_part_count(&out),
                manifest_without_part_count(&bytes)
            );
            if pb != o.part_bytes {
                assert_ne!(r.archive_hash, s.archive_hash);
            }
            // Back to the original size gives the original bytes.
            let mut back = Vec::new();
            repartition(&out, o.part_bytes, &mut back).unwrap();
            assert_eq!(back, bytes);
        }
    }
}

#[test]
fn repartition_file_reads_twice_and_agrees() {
    let o = GenOptions::small(17);
    let (bytes, _) = generate_vec(&o).unwrap();
    let path = std::env::temp_dir().join(format!(
        "ndarc-testkit-repart-{}.ndjson",
        std::process::id()
    ));
    std::fs::write(&path, &bytes).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let ra = repartition(&bytes, 9000, &mut a).unwrap();
    let rb = ndarc_testkit::repartition_file(&path, 9000, &mut b).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(a, b);
    assert_eq!(ra, rb);
    // No closing line, or a line after it: errors.
    let ls = owned_lines(&bytes);
    assert!(repartition(&join(&ls[..ls.len() - 1]), 2048, &mut Vec::new()).is_err());
    let mut extra = ls.clone();
    extra.push(ls[1].clone());
    assert!(repartition(&join(&extra), 2048, &mut Vec::new()).is_err());
}

#[test]
fn repartition_equals_generating_with_that_part_size() {
    // Rows small enough never to be compacted, so the content is the same
    // at any part size, and so are the bytes.
    let o = GenOptions {
        kinds: Some(vec![
            ndarc_testkit::TableKind::Tags,
            ndarc_testkit::TableKind::KvStore,
        ]),
        rows: Rows::Exactly(50),
        large_object: false,
        ..GenOptions::small(3)
    };
    let (bytes, _) = generate_vec(&o).unwrap();
    let o2 = GenOptions {
        part_bytes: 2000,
        ..o.clone()
    };
    let (direct, _) = generate_vec(&o2).unwrap();
    let mut out = Vec::new();
    repartition(&bytes, 2000, &mut out).unwrap();
    assert_eq!(out, direct);
}

#[test]
fn repartition_refuses_rows_too_large() {
    let o = GenOptions {
        part_bytes: 65536,
        kinds: Some(vec![ndarc_testkit::TableKind::Users]),
        rows: Rows::Exactly(20),
        ..GenOptions::small(1)
    };
    let (bytes, _) = generate_vec(&o).unwrap();
    let mut out = Vec::new();
    let e = repartition(&bytes, 1024, &mut out).unwrap_err();
    assert!(e.to_string().contains("row_part_too_large"), "{e}");
    assert!(repartition(&bytes, 100, &mut Vec::new()).is_err());
    assert!(repartition(b"", 4096, &mut Vec::new()).is_err());
    assert!(repartition(b"{}\n[\n{}\n", 4096, &mut Vec::new()).is_err());
}
