//! `pack`: valid archives from databases, and every refusal.

mod common;

use common::*;

#[test]
fn packs_a_small_database_into_a_valid_archive() {
    let (_d, p) = db("
        CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, score REAL);
        CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES USERS(id));
        INSERT INTO users VALUES(7,'Ada',x'89504e47',1.5),(3,'Bob',NULL,-0.0);
        INSERT INTO notes(rowid, body, user_id) VALUES(5,NULL,NULL),(1,'first',7);
        CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO t VALUES(1);
        CREATE TABLE _cf_KV(k, v);
    ");
    let (bytes, s) = pack_vec(&p, &opts()).unwrap();
    let r = assert_valid(&bytes);
    assert_eq!(r.content_hash.as_deref(), Some(s.content_hash.as_str()));
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        lines[0].contains(r#""excludedTables":["_cf_KV","sqlite_sequence"]"#),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(r#""dependencies":["users"]"#),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        r#"{"index":0,"items":[{"index":0,"kind":"row","row":{"body":"first","user_id":7},"rowid":1,"table":"notes"},{"index":1,"kind":"row","row":{"body":null,"user_id":null},"rowid":5,"table":"notes"}],"kind":"part"}"#
    );
    assert_eq!(
        lines[3],
        r#"{"index":2,"items":[{"index":0,"kind":"row","row":{"avatar":null,"id":3,"name":"Bob","score":0},"table":"users"},{"index":1,"kind":"row","row":{"avatar":{"blob":"iVBORw=="},"id":7,"name":"Ada","score":1.5},"table":"users"}],"kind":"part"}"#
    );
    assert_eq!(
        s.tables,
        vec![
            ("notes".to_string(), 2),
            ("t".to_string(), 1),
            ("users".to_string(), 2)
        ]
    );
}

fn code_of(sql: &str, o: &ndarc_sqlite::PackOptions) -> (&'static str, String) {
    let (code, message, refusal) = refusal(sql, o);
    assert!(refusal, "{code} is not a refusal: {message}");
    (code, message)
}

#[test]
fn refuses_virtual_and_shadow_tables() {
    let sql = "CREATE VIRTUAL TABLE docs USING fts5(body); CREATE TABLE t(a);";
    let (code, m) = code_of(sql, &opts());
    assert_eq!(code, "virtual_table");
    assert!(m.contains("table docs is a virtual table"), "{m}");
    // Excluding the virtual table leaves its shadow tables, still refused.
    let mut o = opts();
    o.exclude_tables = vec!["docs".into()];
    let (code, m) = code_of(sql, &o);
    assert_eq!(code, "virtual_table");
    assert!(m.contains("docs_config is a shadow table"), "{m}");
    // As a derived table, it goes with its shadow tables.
    let mut o = opts();
    o.derived_tables = vec!["docs".into()];
    let (_d, p) = db(sql);
    let (bytes, s) = pack_vec(&p, &o).unwrap();
    assert_valid(&bytes);
    assert_eq!(s.tables, vec![("t".to_string(), 0)]);
    assert!(s.excluded_tables.contains(&"docs_data".to_string()));
}

#[test]
fn refuses_a_table_too_wide_for_the_transfer_sql() {
    let cols: Vec<String> = (0..950)
        .map(|i| format!("c{i:04}_{}", "x".repeat(95)))
        .collect();
    let sql = format!("CREATE TABLE wide({});", cols.join(","));
    let (code, m) = code_of(&sql, &opts());
    assert_eq!(code, "transfer_sql_limit");
    assert!(m.contains("table wide is too wide"), "{m}");
    // 900 such columns fit.
    let sql = format!("CREATE TABLE wide({});", cols[..900].join(","));
    let (_d, p) = db(&sql);
    assert!(pack_vec(&p, &opts()).is_ok());
}

#[test]
fn refuses_tables_whose_rowid_cannot_be_read() {
    let (code, m) = code_of("CREATE TABLE t(ROWID, _rowid_, Oid);", &opts());
    assert_eq!(code, "unsupported_rowid");
    assert!(m.contains("table t"), "{m}");
    let (code, _) = code_of(
        "CREATE TABLE t(rowid INTEGER, _rowid_, oid, k TEXT PRIMARY KEY);",
        &opts(),
    );
    assert_eq!(code, "unsupported_copy_rowid");
    // One free alias is enough: rowidAlias is oid.
    let (_d, p) = db("CREATE TABLE t(rowid, _rowid_, x); INSERT INTO t(oid, rowid, _rowid_, x) VALUES(9, 'a', 'b', 'c');");
    let (bytes, _) = pack_vec(&p, &opts()).unwrap();
    assert_valid(&bytes);
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains(r#""rowidAlias":"oid""#), "{text}");
    assert!(text.contains(r#""rowid":9,"table":"t""#), "{text}");
}

#[test]
fn refuses_a_foreign_key_to_an_excluded_table() {
    // The default patterns exclude _cf_kv: a foreign key to it is refused.
    let (code, m) = code_of(
        "CREATE TABLE _cf_kv(id INTEGER PRIMARY KEY); CREATE TABLE t(a REFERENCES _CF_KV(id));",
        &opts(),
    );
    assert_eq!(code, "excluded_foreign_key");
    assert!(m.contains("table t has a foreign key to _cf_kv"), "{m}");
    // So does a user pattern; including the parent packs both.
    let sql =
        "CREATE TABLE parent(id INTEGER PRIMARY KEY); CREATE TABLE t(a REFERENCES PARENT(id));";
    let mut o = opts();
    o.exclude_tables = vec!["PAR%".into()];
    let (code, m) = code_of(sql, &o);
    assert_eq!(code, "excluded_foreign_key");
    assert!(m.contains("table t has a foreign key to parent"), "{m}");
    o.include_tables = vec!["parent".into()];
    let (_d, p) = db(sql);
    let (bytes, s) = pack_vec(&p, &o).unwrap();
    assert_valid(&bytes);
    assert_eq!(s.tables.len(), 2);
}

#[test]
fn refuses_unsafe_integers_naming_table_column_and_rowid() {
    let (code, m) = code_of(
        "CREATE TABLE t(n INTEGER, d DATETIME); INSERT INTO t(rowid, n, d) VALUES(1, 1, 2), (4, 9007199254740992, 'x');",
        &opts(),
    );
    // encodedRow checks INTEGER cells before validateRow checks the rest.
    assert_eq!(code, "unsafe_integer");
    assert!(
        m.contains("column t.n") && m.contains("9007199254740992") && m.contains("at rowid 4"),
        "{m}"
    );
    let (code, m) = code_of(
        "CREATE TABLE t(n INT); INSERT INTO t VALUES('12abc');",
        &opts(),
    );
    assert_eq!(code, "unsafe_integer");
    assert!(m.contains("\"12abc\""), "{m}");
    let (code, _) = code_of("CREATE TABLE t(n INT); INSERT INTO t VALUES(1.5);", &opts());
    assert_eq!(code, "unsafe_integer");
    let (code, m) = code_of(
        "CREATE TABLE t(a); INSERT INTO t(rowid, a) VALUES(9007199254740992, 1);",
        &opts(),
    );
    assert_eq!(code, "unsafe_integer");
    assert!(m.contains("rowid 9007199254740992"), "{m}");
    // The largest safe integers pack, in INTEGER columns and as rowids.
    let (_d, p) = db("CREATE TABLE t(n INTEGER); INSERT INTO t(rowid, n) VALUES(-9007199254740991, 9007199254740991);");
    let (bytes, _) = pack_vec(&p, &opts()).unwrap();
    assert_valid(&bytes);
}

#[test]
fn refuses_cells_whose_storage_class_does_not_fit_the_affinity() {
    let (code, m) = code_of(
        "CREATE TABLE events(at DATETIME); INSERT INTO events(rowid, at) VALUES(3, '2024-01-01');",
        &opts(),
    );
    assert_eq!(code, "row_type");
    assert!(
        m.contains("column events.at (DATETIME, NUMBER affinity)") && m.contains("at rowid 3"),
        "{m}"
    );
    let (code, _) = code_of(
        "CREATE TABLE t(s TEXT); INSERT INTO t VALUES(x'00');",
        &opts(),
    );
    assert_eq!(code, "row_type");
    let (code, m) = code_of(
        "CREATE TABLE t(r REAL); INSERT INTO t VALUES(1e999);",
        &opts(),
    );
    assert_eq!(code, "row_type");
    assert!(m.contains("infinity"), "{m}");
    // A WITHOUT ROWID table names the row by its position.
    let (code, m) = code_of(
        "CREATE TABLE t(k TEXT PRIMARY KEY, v NUMERIC) WITHOUT ROWID; INSERT INTO t VALUES('a', 1), ('b', 'text');",
        &opts(),
    );
    assert_eq!(code, "row_type");
    assert!(m.contains("in row 1 of the table's key order"), "{m}");
}

#[test]
fn refuses_missing_or_invalid_secret_columns_and_missing_includes() {
    let sql = "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, token TEXT);";
    let mut o = opts();
    o.secret_columns = vec![("accounts".into(), "token".into())];
    assert_eq!(code_of(sql, &o).0, "secret_table_missing");
    o.secret_columns = vec![("users".into(), "nope".into())];
    assert_eq!(code_of(sql, &o).0, "invalid_secret_column");
    o.secret_columns = vec![("users".into(), "name".into())];
    assert_eq!(code_of(sql, &o).0, "invalid_secret_column");
    o.secret_columns = vec![("users".into(), "id".into())];
    assert_eq!(code_of(sql, &o).0, "invalid_secret_column");
    let mut o = opts();
    o.include_tables = vec!["nothing".into()];
    assert_eq!(code_of(sql, &o).0, "policy_table_missing");
    // A valid secret column is left out of rows and listed.
    let (_d, p) = db(&format!(
        "{sql} INSERT INTO users VALUES(1, 'a', 'secret');"
    ));
    let mut o = opts();
    o.secret_columns = vec![("users".into(), "token".into())];
    let (bytes, _) = pack_vec(&p, &o).unwrap();
    assert_valid(&bytes);
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.contains(r#""excludedColumns":{"users":["token"]}"#),
        "{text}"
    );
    assert!(!text.contains("secret"), "{text}");
}

#[test]
fn refuses_reserved_columns_bad_names_large_rows_and_duplicate_keys() {
    assert_eq!(
        code_of("CREATE TABLE t(rer_portability_x);", &opts()).0,
        "unsupported_column"
    );
    assert_eq!(
        code_of("CREATE TABLE t(\"a\u{1}b\");", &opts()).0,
        "invalid_name"
    );
    let mut o = opts();
    o.part_bytes = 1024;
    let (code, m) = code_of(
        &format!(
            "CREATE TABLE t(s TEXT); INSERT INTO t VALUES('{}');",
            "x".repeat(900)
        ),
        &o,
    );
    assert_eq!(code, "row_part_too_large");
    assert!(m.contains("at rowid 1"), "{m}");
    let (code, _) = code_of(
        "CREATE TABLE t(k TEXT PRIMARY KEY, v); INSERT INTO t VALUES(NULL, 1), (NULL, 2);",
        &opts(),
    );
    assert_eq!(code, "duplicate_row_key");
}

#[test]
fn bad_databases_cannot_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.db");
    std::fs::write(&p, b"{\"kind\":\"manifest\"}\n").unwrap();
    let e = pack_vec(&p, &opts()).unwrap_err();
    assert_eq!((e.code(), e.exit_code()), ("not_a_database", 2));
    // A SQLite header over garbage.
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(0xA5u8, 8192));
    std::fs::write(&p, &bytes).unwrap();
    let e = pack_vec(&p, &opts()).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(
        matches!(e.code(), "database_corrupt" | "not_a_database"),
        "{e}"
    );
    // A valid database with a page overwritten.
    let (_d, good) = db("CREATE TABLE t(a TEXT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000) INSERT INTO t SELECT printf('%0100d', i) FROM n;");
    let mut bytes = std::fs::read(&good).unwrap();
    for b in &mut bytes[4096 * 3..4096 * 4] {
        *b = 0xFF;
    }
    std::fs::write(&p, &bytes).unwrap();
    let e = pack_vec(&p, &opts()).unwrap_err();
    assert_eq!((e.code(), e.exit_code()), ("database_corrupt", 2), "{e}");
    let e = pack_vec(&dir.path().join("missing.db"), &opts()).unwrap_err();
    assert_eq!((e.code(), e.exit_code()), ("database_unreadable", 2), "{e}");
}

#[test]
fn a_database_locked_by_a_writer_cannot_be_read() {
    let (_d, p) = db("CREATE TABLE t(a); INSERT INTO t VALUES(1);");
    let writer = rusqlite::Connection::open(&p).unwrap();
    writer
        .execute_batch("BEGIN EXCLUSIVE; INSERT INTO t VALUES(2);")
        .unwrap();
    let mut o = opts();
    o.busy_timeout = std::time::Duration::from_millis(50);
    let e = pack_vec(&p, &o).unwrap_err();
    assert_eq!((e.code(), e.exit_code()), ("database_locked", 2), "{e}");
    writer.execute_batch("ROLLBACK").unwrap();
    let (bytes, s) = pack_vec(&p, &o).unwrap();
    assert_valid(&bytes);
    assert_eq!(s.tables, vec![("t".to_string(), 1)]);
}

#[test]
fn pack_never_writes_the_database() {
    let (_d, p) = db("CREATE TABLE t(a); INSERT INTO t VALUES(1);");
    let before = std::fs::read(&p).unwrap();
    let (bytes, _) = pack_vec(&p, &opts()).unwrap();
    assert_valid(&bytes);
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

/// Text that is not UTF-8 is archived as the producer reads it: each bad
/// sequence becomes U+FFFD, beside good cells of the same row (short and
/// long, ASCII and not), and the archive is valid.
#[test]
fn text_that_is_not_utf8_is_read_as_the_producer_reads_it() {
    let long = "é".repeat(40);
    let (_d, p) = db(&format!(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT, c TEXT);
         INSERT INTO t VALUES
           (1, 'plain', 'ünïcode', '{long}'),
           (2, CAST(x'ff' AS TEXT), 'ünïcode', 'x' || CAST(x'e282' AS TEXT) || 'y'),
           (3, '{long}' || CAST(x'c3' AS TEXT), CAST(x'80' AS TEXT) || '{long}', 'ok');"
    ));
    let (bytes, _) = pack_vec(&p, &opts()).unwrap();
    assert_valid(&bytes);
    let text = String::from_utf8(bytes).expect("the archive is UTF-8");
    let part = ndarc_json::parse(text.lines().nth(1).unwrap().as_bytes()).unwrap();
    let items = part.get("items").and_then(|v| v.as_array()).unwrap();
    let cell = |i: usize, c: &str| {
        items[i]
            .get("row")
            .and_then(|r| r.get(c))
            .and_then(|v| v.as_str())
            .unwrap()
            .to_string()
    };
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert_eq!(cell(0, "a"), "plain");
    assert_eq!(cell(0, "c"), long);
    assert_eq!(cell(1, "a"), "\u{FFFD}");
    assert_eq!(cell(1, "b"), "ünïcode");
    assert_eq!(cell(1, "c"), lossy(b"x\xe2\x82y"));
    assert_eq!(cell(2, "a"), format!("{long}\u{FFFD}"));
    assert_eq!(cell(2, "b"), format!("\u{FFFD}{long}"));
    assert_eq!(cell(2, "c"), "ok");
}
