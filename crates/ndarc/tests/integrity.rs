//! `ndarc verify --integrity` (issue 24 §5, SPEC.md §11): the rows against
//! the foreign keys of the tables' own `sql`, with exact codes, positions
//! and exit statuses, from a real database packed by `ndarc pack`.

mod common;

use common::{ndarc, s, testdata, Scratch};

/// A database whose orders break its foreign keys in two ways, and whose
/// other rows meet them only as SQLite compares (affinity, collation).
fn database(scratch: &Scratch) -> std::path::PathBuf {
    let path = scratch.0.join("app.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        // rusqlite's SQLite enforces foreign keys by default: the rows
        // below are written as an application without them writes them.
        "PRAGMA foreign_keys = OFF;
         CREATE TABLE customers(id INTEGER PRIMARY KEY, email TEXT COLLATE NOCASE UNIQUE);
         CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), email TEXT REFERENCES customers(email));
         INSERT INTO customers VALUES (1, 'a@x'), (2, 'B@x');
         INSERT INTO orders VALUES (10, 1, 'A@X'), (11, 12345, NULL), (12, '2', 'b@x'), (13, NULL, 'zz@x');",
    )
    .unwrap();
    path
}

#[test]
fn orphans_are_findings_with_positions_in_every_format() {
    let scratch = Scratch::new("integrity");
    let db = database(&scratch);
    let archive = scratch.0.join("app.ndjson");
    let run = ndarc(&["pack", s(&db), "-o", s(&archive), "-q"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The format alone allows the rows.
    assert_eq!(ndarc(&["verify", s(&archive), "-q"]).code, 0);
    let run = ndarc(&["verify", "--integrity", s(&archive), "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let found: Vec<(String, u64, String)> = doc["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "foreign_key_violation".to_string(),
                3,
                "/items/1/row/customer_id".to_string()
            ),
            (
                "foreign_key_violation".to_string(),
                3,
                "/items/3/row/email".to_string()
            ),
        ]
    );
    // The offset is the value's: the line's bytes there are the value.
    let bytes = std::fs::read(&archive).unwrap();
    let offset = doc["files"][0]["findings"][0]["offset"].as_u64().unwrap() as usize;
    assert!(
        bytes[offset..].starts_with(b"12345"),
        "{}",
        String::from_utf8_lossy(&bytes[offset..offset + 10])
    );
    let human = ndarc(&["verify", "--integrity", s(&archive)]);
    assert_eq!(human.code, 1);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("row 1 of table orders has customer_id = 12345, but table customers has no row with id = 12345"),
        "{text}"
    );
    let github = ndarc(&["verify", "--integrity", s(&archive), "--format", "github"]);
    assert_eq!(github.code, 1);
    assert_eq!(
        String::from_utf8_lossy(&github.stdout)
            .matches("foreign_key_violation")
            .count(),
        2
    );
}

#[test]
fn a_valid_archive_passes_and_a_mismatch_is_refused() {
    assert_eq!(
        ndarc(&[
            "verify",
            "--integrity",
            s(&testdata("valid/base.ndjson")),
            "-q"
        ])
        .code,
        0
    );
    let run = ndarc(&[
        "verify",
        "--integrity",
        s(&testdata("invalid/foreign_key_mismatch.ndjson")),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("foreign_key_mismatch"),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
}

/// A table that references itself has its lines read again after the pass
/// (its parent rows are complete only at its end), from a file or from
/// standard input alike.
#[test]
fn a_self_reference_is_checked_after_the_pass_from_a_file_or_stdin() {
    let scratch = Scratch::new("integrity-self");
    let db = scratch.0.join("staff.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF;
         CREATE TABLE employees(id INTEGER PRIMARY KEY, manager_id INTEGER REFERENCES employees(id));
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
         INSERT INTO employees SELECT i, CASE WHEN i = 1 THEN NULL WHEN i = 4321 THEN 99999 ELSE i / 2 + 2500 END FROM n;",
    )
    .unwrap();
    drop(conn);
    let archive = scratch.0.join("staff.ndjson");
    // Small parts: the rows of a manager come in a later line than many of
    // their reports'.
    let run = ndarc(&[
        "pack",
        s(&db),
        "-o",
        s(&archive),
        "--part-bytes",
        "4K",
        "-q",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bytes = std::fs::read(&archive).unwrap();
    for input in [s(&archive), "-"] {
        let run = common::ndarc_in(
            &scratch.0,
            &["verify", "--integrity", input, "--format", "json"],
            if input == "-" { &bytes } else { b"" },
        );
        assert_eq!(run.code, 1, "{input}: {}", run.stderr);
        let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        let findings = doc["files"][0]["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{input}: {findings:?}");
        assert_eq!(findings[0]["code"], "foreign_key_violation");
        let message = findings[0]["message"].as_str().unwrap();
        assert!(
            message.contains("row 4320 of table employees has manager_id = 99999"),
            "{message}"
        );
        let offset = findings[0]["offset"].as_u64().unwrap() as usize;
        assert!(bytes[offset..].starts_with(b"99999"), "{input}");
    }
}
