//! The SQL patch property: a database holding the first archive's content,
//! with the patch of `diff(a, b)` applied, packs to the second archive's
//! content.

use std::path::{Path, PathBuf};

use ndarc_sqlite::fuzzdb::{generate, variant, FuzzOptions, EXCLUDED_NAMES};
use ndarc_sqlite::pack::{pack, PackOptions};

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndarc-patch-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn packed(db: &Path) -> Vec<u8> {
    let opts = PackOptions {
        product: Some("patch-test".to_string()),
        exported_at: Some("2026-01-01T00:00:00.000Z".to_string()),
        ..PackOptions::default()
    };
    let mut out = Vec::new();
    pack(db, &opts, &mut out).unwrap_or_else(|e| panic!("{}: {e}", db.display()));
    out
}

fn content_hash(archive: &[u8]) -> String {
    let last = archive
        .strip_suffix(b"\n")
        .unwrap()
        .rsplit(|&b| b == b'\n')
        .next()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(last).unwrap();
    v["contentHash"].as_str().unwrap().to_string()
}

fn patch_of(a: &[u8], b: &[u8]) -> String {
    let d = ndarc_diff::diff(
        ndarc_diff::Source::Bytes(a),
        ndarc_diff::Source::Bytes(b),
        &ndarc_diff::Options::default(),
    )
    .unwrap();
    let mut sql = Vec::new();
    ndarc_sqlite::patch::write_patch(&d, b, &mut sql).unwrap();
    String::from_utf8(sql).unwrap()
}

#[test]
fn the_patch_turns_a_into_b() {
    let o = FuzzOptions::default();
    let d = dir();
    let mut changed = 0;
    for seed in 0..60 {
        let a = generate(seed, &o).spec;
        let b = variant(&a, seed, &o);
        let (pa, pb) = (
            d.join(format!("{seed}-a.db")),
            d.join(format!("{seed}-b.db")),
        );
        a.write(&pa).unwrap();
        b.write(&pb).unwrap();
        let (xa, xb) = (packed(&pa), packed(&pb));
        let sql = patch_of(&xa, &xb);
        let conn = rusqlite::Connection::open(&pa).unwrap();
        conn.execute_batch(&sql)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{sql}"));
        drop(conn);
        let xc = packed(&pa);
        assert_eq!(content_hash(&xc), content_hash(&xb), "seed {seed}:\n{sql}");
        if content_hash(&xa) != content_hash(&xb) {
            changed += 1;
        }
        let _ = std::fs::remove_file(&pa);
        let _ = std::fs::remove_file(&pb);
    }
    assert!(changed > 40, "{changed}");
}

#[test]
fn the_patch_turns_unpack_of_a_into_b() {
    let o = FuzzOptions::default();
    let d = dir();
    for seed in 100..130 {
        let a = generate(seed, &o).spec;
        // unpack of an archive without tables writes an empty file, which
        // pack does not take for a database (reported to pack/unpack);
        // `the_patch_turns_a_into_b` covers those.
        if a.tables
            .iter()
            .all(|t| EXCLUDED_NAMES.contains(&t.name.as_str()))
        {
            continue;
        }
        let b = variant(&a, seed, &o);
        let (pa, pb) = (
            d.join(format!("{seed}-a.db")),
            d.join(format!("{seed}-b.db")),
        );
        a.write(&pa).unwrap();
        b.write(&pb).unwrap();
        let (xa, xb) = (packed(&pa), packed(&pb));
        let archive = d.join(format!("{seed}-a.ndjson"));
        std::fs::write(&archive, &xa).unwrap();
        let restored = d.join(format!("{seed}-c.db"));
        let _ = std::fs::remove_file(&restored);
        ndarc_sqlite::unpack(&archive, &restored, &Default::default())
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let sql = patch_of(&xa, &xb);
        let conn = rusqlite::Connection::open(&restored).unwrap();
        conn.execute_batch(&sql)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{sql}"));
        drop(conn);
        let xc = packed(&restored);
        // The restored database has no excluded tables to list; everything
        // else must be b's.
        let left = ndarc_diff::diff(
            ndarc_diff::Source::Bytes(&xc),
            ndarc_diff::Source::Bytes(&xb),
            &ndarc_diff::Options::default(),
        )
        .unwrap();
        assert!(
            left.tables.is_empty() && !left.schema.has_changes() && !left.schema_changed,
            "seed {seed}: {:?}\n{sql}",
            left.tables
        );
        for f in [pa, pb, archive, restored] {
            let _ = std::fs::remove_file(f);
        }
    }
}

#[test]
fn equal_archives_give_an_empty_transaction() {
    let o = FuzzOptions::default();
    let p = dir().join("same.db");
    generate(1, &o).spec.write(&p).unwrap();
    let x = packed(&p);
    let sql = patch_of(&x, &x);
    let body: Vec<&str> = sql.lines().filter(|l| !l.starts_with("--")).collect();
    assert_eq!(
        body,
        [
            "PRAGMA foreign_keys = OFF;",
            "BEGIN TRANSACTION;",
            "COMMIT;"
        ]
    );
}

fn patch_ignoring(a: &[u8], b: &[u8], tables: &[&str], columns: &[&str]) -> String {
    let opts = ndarc_diff::Options {
        ignore_tables: tables.iter().map(|t| t.to_string()).collect(),
        ignore_columns: columns.iter().map(|c| c.to_string()).collect(),
        ..ndarc_diff::Options::default()
    };
    let d = ndarc_diff::diff(
        ndarc_diff::Source::Bytes(a),
        ndarc_diff::Source::Bytes(b),
        &opts,
    )
    .unwrap();
    let mut sql = Vec::new();
    ndarc_sqlite::patch::write_patch(&d, b, &mut sql).unwrap();
    String::from_utf8(sql).unwrap()
}

#[test]
fn ignored_tables_and_columns_yield_no_statements() {
    let d = dir();
    let (pa, pb) = (d.join("ignore-a.db"), d.join("ignore-b.db"));
    for p in [&pa, &pb] {
        let _ = std::fs::remove_file(p);
    }
    let a = rusqlite::Connection::open(&pa).unwrap();
    a.execute_batch(
        "CREATE TABLE keep(k TEXT PRIMARY KEY, v TEXT, stamp INTEGER);
         INSERT INTO keep VALUES ('a', 'x', 10), ('b', 'y', 20), ('c', 'z', 30);
         CREATE TABLE skip(k TEXT PRIMARY KEY, v TEXT);
         INSERT INTO skip VALUES ('a', 'x');
         CREATE TABLE skip_old(k TEXT PRIMARY KEY);
         INSERT INTO skip_old VALUES ('a');",
    )
    .unwrap();
    drop(a);
    let b = rusqlite::Connection::open(&pb).unwrap();
    b.execute_batch(
        // keep: a's stamp changes (ignored), b's v changes, c is removed.
        // skip: rebuilt with another column and other rows; skip_old
        // removed, skip_new added.
        "CREATE TABLE keep(k TEXT PRIMARY KEY, v TEXT, stamp INTEGER);
         INSERT INTO keep VALUES ('a', 'x', 11), ('b', 'Y', 20);
         CREATE TABLE skip(k TEXT PRIMARY KEY, v TEXT, w INTEGER);
         INSERT INTO skip VALUES ('b', 'q', 1);
         CREATE TABLE skip_new(k TEXT PRIMARY KEY);
         INSERT INTO skip_new VALUES ('n');",
    )
    .unwrap();
    drop(b);
    let (xa, xb) = (packed(&pa), packed(&pb));

    // Without ignoring, every table and the column are patched.
    let all = patch_of(&xa, &xb);
    for word in ["\"skip\"", "\"skip_old\"", "\"skip_new\"", "\"stamp\" = 11"] {
        assert!(all.contains(word), "{word}:\n{all}");
    }

    let sql = patch_ignoring(&xa, &xb, &["skip*"], &["keep.stamp"]);
    let body: Vec<&str> = sql.lines().filter(|l| !l.starts_with("--")).collect();
    assert_eq!(
        body,
        [
            "PRAGMA foreign_keys = OFF;",
            "BEGIN TRANSACTION;",
            "DELETE FROM \"keep\" WHERE \"k\" IS 'c';",
            "UPDATE \"keep\" SET \"v\" = 'Y' WHERE \"k\" IS 'b';",
            "COMMIT;"
        ],
        "{sql}"
    );
    // Applied, it leaves the ignored table and column as they were.
    let conn = rusqlite::Connection::open(&pa).unwrap();
    conn.execute_batch(&sql).unwrap();
    let keep: Vec<(String, String, i64)> = conn
        .prepare("SELECT k, v, stamp FROM keep ORDER BY k")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        keep,
        [("a".into(), "x".into(), 10), ("b".into(), "Y".into(), 20)]
    );
    let skip: i64 = conn
        .query_row("SELECT count(*) FROM skip WHERE k = 'a'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(skip, 1);
    drop(conn);
    for p in [pa, pb] {
        let _ = std::fs::remove_file(p);
    }
}

/// A column added that one row fills and a column removed: the patch
/// sets the added column's value (`'555'`), drops the removed one, and
/// turns A into B (issue 24).
#[test]
fn the_patch_sets_an_added_columns_values() {
    let d = dir();
    let (pa, pb) = (d.join("phone-a.db"), d.join("phone-b.db"));
    for p in [&pa, &pb] {
        let _ = std::fs::remove_file(p);
    }
    let a = rusqlite::Connection::open(&pa).unwrap();
    a.execute_batch(
        "CREATE TABLE people(id INTEGER PRIMARY KEY, fax INTEGER, name TEXT);
         INSERT INTO people VALUES (1, NULL, 'Ada'), (2, 123, 'Bob'), (3, NULL, 'Cy');",
    )
    .unwrap();
    drop(a);
    let b = rusqlite::Connection::open(&pb).unwrap();
    b.execute_batch(
        "CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, phone TEXT);
         INSERT INTO people VALUES (1, 'Ada', NULL), (2, 'Bob', '555'), (3, 'Cy', NULL);",
    )
    .unwrap();
    drop(b);
    let (xa, xb) = (packed(&pa), packed(&pb));
    let d = ndarc_diff::diff(
        ndarc_diff::Source::Bytes(&xa),
        ndarc_diff::Source::Bytes(&xb),
        &ndarc_diff::Options::default(),
    )
    .unwrap();
    let cells: Vec<_> = d.tables[0].changed.iter().flat_map(|c| &c.cells).collect();
    assert_eq!(cells.len(), 2, "{cells:?}");
    assert_eq!(
        (cells[0].column.as_str(), cells[0].only),
        ("fax", Some(ndarc_diff::Side::Before))
    );
    assert_eq!(
        (cells[1].column.as_str(), cells[1].only),
        ("phone", Some(ndarc_diff::Side::After))
    );
    let sql = patch_of(&xa, &xb);
    assert!(
        sql.contains("INSERT INTO \"people\"(\"id\",\"name\",\"phone\") VALUES(2,'Bob','555');"),
        "{sql}"
    );
    assert!(!sql.contains("\"fax\" ="), "{sql}");
    let conn = rusqlite::Connection::open(&pa).unwrap();
    conn.execute_batch(&sql)
        .unwrap_or_else(|e| panic!("{e}\n{sql}"));
    let phones: Vec<(i64, Option<String>)> = conn
        .prepare("SELECT id, phone FROM people ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(phones, [(1, None), (2, Some("555".into())), (3, None)]);
    drop(conn);
    assert_eq!(content_hash(&packed(&pa)), content_hash(&xb));
    for p in [pa, pb] {
        let _ = std::fs::remove_file(p);
    }
}

/// The patch a [`Patch`](ndarc_sqlite::patch::Patch) writes as the sink of
/// the diff (AFTER read once) is the patch `write_patch` writes from the
/// diff and AFTER read again.
#[test]
fn the_streamed_patch_is_the_patch() {
    let o = FuzzOptions::default();
    let d = dir();
    for seed in 200..240 {
        let a = generate(seed, &o).spec;
        let b = variant(&a, seed, &o);
        let (pa, pb) = (
            d.join(format!("{seed}-s-a.db")),
            d.join(format!("{seed}-s-b.db")),
        );
        a.write(&pa).unwrap();
        b.write(&pb).unwrap();
        let (xa, xb) = (packed(&pa), packed(&pb));
        let mut patch = ndarc_sqlite::patch::Patch::new().unwrap();
        let diff = ndarc_diff::diff_labeled_with_sink(
            ("before", ndarc_diff::Source::Bytes(&xa)),
            ("after", ndarc_diff::Source::Bytes(&xb)),
            &ndarc_diff::Options::default(),
            Some(&mut patch),
        )
        .unwrap();
        let mut streamed = Vec::new();
        patch.finish(&diff, &mut streamed).unwrap();
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            patch_of(&xa, &xb),
            "seed {seed}"
        );
        // And without verification there is no patch.
        let unverified = ndarc_diff::diff(
            ndarc_diff::Source::Bytes(&xa),
            ndarc_diff::Source::Bytes(&xb),
            &ndarc_diff::Options {
                no_verify: true,
                ..ndarc_diff::Options::default()
            },
        )
        .unwrap();
        let mut out = Vec::new();
        assert!(matches!(
            ndarc_sqlite::patch::write_patch(&unverified, &xb, &mut out),
            Err(ndarc_sqlite::Error::Unverified)
        ));
        assert!(out.is_empty());
        let _ = std::fs::remove_file(&pa);
        let _ = std::fs::remove_file(&pb);
    }
}
