//! `ndarc pack`: the reference producer from the command line, on the
//! Chinook sample database (testdata/sqlite) and on refusals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ndarc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("ndarc runs")
}

fn chinook() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/sqlite/chinook.db"
    )
    .to_string()
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The committed contentHash of Chinook packed without the tables whose
/// dates are text.
const CHINOOK_CONTENT_HASH: &str =
    "75dc9d61e70895a9d100a3175e9d66ff9999a24f2c0ecef5a926276a1c1ae04e";

const CHINOOK_ARGS: [&str; 12] = [
    "--exclude-table",
    "Employee",
    "--exclude-table",
    "Customer",
    "--exclude-table",
    "Invoice",
    "--exclude-table",
    "InvoiceLine",
    "--product",
    "chinook",
    "--exported-at",
    "2026-01-01T00:00:00.000Z",
];

#[test]
fn chinook_is_refused_whole_with_the_column_and_rowid_and_leaves_no_file() {
    let d = scratch();
    let out = d.path().join("c.ndjson");
    let o = ndarc(&["pack", &chinook(), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).lines().next().unwrap_or_default(),
        format!("{}: row_type: column Employee.BirthDate (DATETIME, NUMBER affinity) holds the text \"1962-02-18 00:00:00\" at rowid 1: a NUMBER-affinity column (REAL, NUMERIC, DATETIME, BOOLEAN …) holds numbers only; text such as a date is refused; to pack it, store numbers there (a date as Unix time) or declare the column TEXT, or leave the column out (--secret-column Employee.BirthDate)", chinook())
    );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "no file, no temporary"
    );
    // Excluding Employee alone leaves a foreign key to it.
    let o = ndarc(&[
        "pack",
        &chinook(),
        "-o",
        s(&out),
        "--exclude-table",
        "Employee",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(": excluded_foreign_key: table Customer has a foreign key to Employee, which is excluded; include Employee (--include-table Employee) or exclude Customer too (--exclude-table Customer)"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

/// A refusal says how to pack the rest: following the last flag each
/// message suggests packs the real Chinook database (its dates are text in
/// DATETIME columns) in a few steps.
#[test]
fn following_the_refusals_advice_packs_chinook() {
    let d = scratch();
    let out = d.path().join("c.ndjson");
    let mut flags: Vec<String> = Vec::new();
    for _ in 0..10 {
        let mut args = vec!["pack".to_string(), chinook(), "-o".into(), s(&out).into()];
        args.extend(flags.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = ndarc(&args);
        if o.status.code() == Some(0) {
            break;
        }
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let err = stderr(&o);
        let at = err
            .rfind("(--")
            .unwrap_or_else(|| panic!("no advice in {err}"));
        let advice = &err[at + 1..err[at..].find(')').map_or(err.len(), |e| at + e)];
        let (flag, value) = advice.split_once(' ').expect("a flag and its value");
        flags.extend([flag.to_string(), value.to_string()]);
    }
    assert!(out.exists(), "still refused after {flags:?}");
    assert_eq!(
        flags.join(" "),
        "--secret-column Employee.BirthDate --secret-column Employee.HireDate \
         --exclude-table Invoice --exclude-table InvoiceLine"
    );
}

#[test]
fn chinook_packs_verifies_and_round_trips() {
    let d = scratch();
    let a = d.path().join("chinook.ndjson");
    let mut args = vec!["pack", chinook().leak() as &str, "-o", s(&a), "--summary"];
    args.extend(CHINOOK_ARGS);
    let o = ndarc(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("\"contentHash\":\"{CHINOOK_CONTENT_HASH}\"")),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(r#"{"count":3503,"name":"Track"}"#),
        "{}",
        stderr(&o)
    );
    let o = ndarc(&["verify", "--strict", s(&a)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains(CHINOOK_CONTENT_HASH));
    // Unpack, pack again: the same archive, byte for byte.
    let db = d.path().join("back.db");
    let o = ndarc(&["unpack", s(&a), "-o", s(&db)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = d.path().join("again.ndjson");
    let o = ndarc(&[
        "pack",
        s(&db),
        "-o",
        s(&b),
        "--product",
        "chinook",
        "--exported-at",
        "2026-01-01T00:00:00.000Z",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The excluded tables are not in the restored database, so only
    // excludedTables differs: compare with diff, which compares content.
    let o = ndarc(&["diff", "--format", "json", s(&a), s(&b)]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("diff json");
    assert_eq!(v["tables"], serde_json::json!([]), "rows differ: {v}");
    assert_eq!(v["schemaChanged"], serde_json::json!(false), "{v}");
    assert_eq!(
        v["excludedTables"]["removed"],
        serde_json::json!(["Customer", "Employee", "Invoice", "InvoiceLine"])
    );
}

#[test]
fn an_existing_output_is_kept_without_force() {
    let d = scratch();
    let out = d.path().join("x.ndjson");
    std::fs::write(&out, b"keep").unwrap();
    let mut args = vec!["pack", chinook().leak() as &str, "-o", s(&out)];
    args.extend(CHINOOK_ARGS);
    let o = ndarc(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    args.push("--force");
    assert_eq!(ndarc(&args).status.code(), Some(0));
    assert_ne!(std::fs::read(&out).unwrap(), b"keep");
}

#[test]
fn files_that_are_not_databases_cannot_be_read() {
    let d = scratch();
    let archive = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/valid/example.ndjson"
    ));
    let out = d.path().join("x.ndjson");
    let o = ndarc(&["pack", s(&archive), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains(": not_a_database: "), "{e}");
    let corrupt = d.path().join("corrupt.db");
    let mut bytes = std::fs::read(chinook()).unwrap();
    for b in &mut bytes[4096..4096 * 8] {
        *b = 0x5A;
    }
    std::fs::write(&corrupt, &bytes).unwrap();
    let mut args = vec!["pack", s(&corrupt), "-o", s(&out)];
    args.extend(CHINOOK_ARGS);
    let o = ndarc(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(": database_corrupt: "),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn usage_errors_exit_2() {
    let o = ndarc(&["pack", &chinook(), "--secret-column", "nodot"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected TABLE.COLUMN"),
        "{}",
        stderr(&o)
    );
    let o = ndarc(&["pack", &chinook(), "--exported-at", "yesterday"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid_options"), "{}", stderr(&o));
}

/// `testdata/sqlite/refuse/NAME.sql`: a SQL script that builds a database
/// `pack` refuses, its header comments saying how (`-- expect: CODE`, and
/// optionally `-- args: ARGS…` and `-- exit: N`, 1 by default).
struct Fixture {
    name: String,
    sql: String,
    expect: String,
    args: Vec<String>,
    exit: i32,
}

fn refusal_fixtures() -> Vec<Fixture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/sqlite/refuse");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("testdata/sqlite/refuse") {
        let p = e.expect("entry").path();
        if p.extension().and_then(|x| x.to_str()) != Some("sql") {
            continue;
        }
        let name = p
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("name")
            .to_string();
        let sql = std::fs::read_to_string(&p).expect("read fixture");
        let mut f = Fixture {
            name,
            sql: sql.clone(),
            expect: String::new(),
            args: Vec::new(),
            exit: 1,
        };
        for line in sql.lines().take_while(|l| l.starts_with("--")) {
            let header = line.trim_start_matches("--").trim();
            if let Some(code) = header.strip_prefix("expect:") {
                f.expect = code.trim().to_string();
            } else if let Some(args) = header.strip_prefix("args:") {
                f.args = args.split_whitespace().map(str::to_string).collect();
            } else if let Some(exit) = header.strip_prefix("exit:") {
                f.exit = exit.trim().parse().expect("exit status");
            }
        }
        assert!(!f.expect.is_empty(), "{}: no -- expect: line", p.display());
        out.push(f);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[test]
fn every_refusal_fixture_is_refused_with_its_code() {
    let fixtures = refusal_fixtures();
    let d = scratch();
    for f in &fixtures {
        assert!(
            f.name == f.expect || f.name.starts_with(&format!("{}-", f.expect)),
            "{}: named after its code {}",
            f.name,
            f.expect
        );
        let db = d.path().join(format!("{}.db", f.name));
        let conn = rusqlite::Connection::open(&db).expect("create database");
        conn.execute_batch(&f.sql)
            .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        drop(conn);
        let out = d.path().join(format!("{}.ndjson", f.name));
        let mut args = vec!["pack", s(&db), "-o", s(&out)];
        args.extend(f.args.iter().map(String::as_str));
        let o = ndarc(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(f.exit), "{}: {e}", f.name);
        assert_eq!(e.lines().count(), 1, "{}: one line: {e}", f.name);
        let want = format!("{}: {}: ", s(&db), f.expect);
        assert!(e.contains(&want), "{}: expected {want:?} in {e}", f.name);
        assert!(!out.exists(), "{}: no archive written", f.name);
    }
    // One fixture for every refusal of SPEC.md §13.6 (exit 1).
    let spec = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../SPEC.md"))
        .expect("SPEC.md");
    let section = spec
        .split("### 13.6")
        .nth(1)
        .and_then(|s| s.split("### 13.7").next())
        .expect("SPEC.md §13.6");
    let refusals: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains("` | 1 |"))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    assert_eq!(refusals.len(), 18, "{refusals:?}");
    for code in refusals {
        assert!(
            fixtures.iter().any(|f| f.expect == code),
            "no testdata/sqlite/refuse fixture for {code}"
        );
    }
}

/// Operator-auth tables with development data (`dropDevData` in the seed's
/// `dev-data.mjs`): dev sessions and credentials, a token minted by a dev
/// credential, the dev-credential records, and dev personas.
const DEV_DATA: &str = "
CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
INSERT INTO notes VALUES (1, 'kept');
CREATE TABLE oa_sessions(id TEXT PRIMARY KEY, kind TEXT, operator TEXT);
INSERT INTO oa_sessions VALUES ('s1','live','a'),('s2','dev','b'),('s3',NULL,'c'),('s4','Dev','d');
CREATE TABLE oa_credentials(id TEXT PRIMARY KEY, kind TEXT COLLATE NOCASE);
INSERT INTO oa_credentials VALUES ('c1','dev'),('c2','password'),('c3','DEV');
CREATE TABLE oa_tokens(id TEXT PRIMARY KEY, scope TEXT);
INSERT INTO oa_tokens VALUES ('t1','read'),('t2','write'),('t3','admin');
CREATE TABLE oa_dev_credentials(id TEXT, credential TEXT, persona TEXT);
INSERT INTO oa_dev_credentials VALUES ('t2','oa_tokens','x@dev.localhost'),('c9','oa_credentials','y@dev.localhost');
CREATE TABLE oa_operators(email TEXT PRIMARY KEY, status TEXT, version INTEGER);
INSERT INTO oa_operators VALUES ('ann@example.com','active',3),('Bob@DEV.localhost','active',1),
  ('cy@dev.localhost','inactive',5),('di@dev.localhost',NULL,2),('ed@dev.localhost.example','active',7);
";

/// The seed's own statements, run on a database whose columns have no
/// collation (as the seed's snapshot copies have none): what its export
/// leaves in the tables.
const SEED_DROPS: &str = "
DELETE FROM oa_sessions WHERE kind='dev';
DELETE FROM oa_credentials WHERE kind='dev' COLLATE BINARY;
DELETE FROM oa_tokens WHERE id IN (SELECT id FROM oa_dev_credentials WHERE credential='oa_tokens');
DELETE FROM oa_dev_credentials WHERE 1;
UPDATE oa_operators SET status='inactive',version=version+1 WHERE lower(email) LIKE '%@dev.localhost' AND status!='inactive';
";

const OA_TABLES: [&str; 5] = [
    "oa_credentials",
    "oa_dev_credentials",
    "oa_operators",
    "oa_sessions",
    "oa_tokens",
];

fn pack_with_oa(db: &Path, out: &Path) -> Output {
    let mut args = vec![
        "pack",
        s(db),
        "-o",
        s(out),
        "--exported-at",
        "2026-01-01T00:00:00.000Z",
        "--product",
        "app",
    ];
    for t in OA_TABLES {
        args.extend(["--include-table", t]);
    }
    ndarc(&args)
}

/// The row items of `table` in an archive, as `(row, rowid)` JSON text.
fn rows_of(archive: &Path, table: &str) -> Vec<String> {
    let text = std::fs::read_to_string(archive).expect("archive");
    let mut rows = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        for item in v["items"].as_array().into_iter().flatten() {
            if item["kind"] == "row" && item["table"] == table {
                rows.push(item["row"].to_string());
            }
        }
    }
    rows
}

#[test]
fn pack_drops_dev_data_as_the_seed_export_does() {
    let d = scratch();
    let db = d.path().join("app.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(DEV_DATA).unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();
    let out = d.path().join("app.ndjson");
    let o = pack_with_oa(&db, &out);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database is not written"
    );

    // The import would accept it: no dev_data (only default_excluded_table
    // warnings for the included oa_ tables).
    let v = ndarc(&["verify", "--format", "json", s(&out)]);
    let report = String::from_utf8_lossy(&v.stdout);
    assert_eq!(v.status.code(), Some(0), "{report}");
    assert!(!report.contains("dev_data"), "{report}");

    assert_eq!(
        rows_of(&out, "oa_sessions"),
        [
            r#"{"id":"s1","kind":"live","operator":"a"}"#,
            r#"{"id":"s3","kind":null,"operator":"c"}"#,
            r#"{"id":"s4","kind":"Dev","operator":"d"}"#,
        ]
    );
    // The seed compares its copy, which has no collation: "DEV" stays.
    assert_eq!(
        rows_of(&out, "oa_credentials"),
        [
            r#"{"id":"c2","kind":"password"}"#,
            r#"{"id":"c3","kind":"DEV"}"#
        ]
    );
    assert_eq!(
        rows_of(&out, "oa_tokens"),
        [
            r#"{"id":"t1","scope":"read"}"#,
            r#"{"id":"t3","scope":"admin"}"#
        ]
    );
    assert!(rows_of(&out, "oa_dev_credentials").is_empty());
    assert_eq!(
        rows_of(&out, "oa_operators"),
        [
            r#"{"email":"Bob@DEV.localhost","status":"inactive","version":2}"#,
            r#"{"email":"ann@example.com","status":"active","version":3}"#,
            r#"{"email":"cy@dev.localhost","status":"inactive","version":5}"#,
            r#"{"email":"di@dev.localhost","status":null,"version":2}"#,
            r#"{"email":"ed@dev.localhost.example","status":"active","version":7}"#,
        ]
    );
    let manifest: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let counts: Vec<(String, u64)> = manifest["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            ("notes".to_string(), 1),
            ("oa_credentials".to_string(), 2),
            ("oa_dev_credentials".to_string(), 0),
            ("oa_operators".to_string(), 5),
            ("oa_sessions".to_string(), 3),
            ("oa_tokens".to_string(), 2),
        ]
    );

    // The same content as packing a database on which the seed's statements
    // ran (with the collation its copies have).
    let applied = d.path().join("applied.db");
    std::fs::write(&applied, &before).unwrap();
    let conn = rusqlite::Connection::open(&applied).unwrap();
    conn.execute_batch(SEED_DROPS).unwrap();
    drop(conn);
    let out2 = d.path().join("applied.ndjson");
    let o = pack_with_oa(&applied, &out2);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let closing = |p: &Path| {
        let t = std::fs::read_to_string(p).unwrap();
        let v: serde_json::Value = serde_json::from_str(t.lines().last().unwrap()).unwrap();
        v["contentHash"].as_str().unwrap().to_string()
    };
    assert_eq!(closing(&out), closing(&out2));
}

/// Without operator-auth's columns (`kind`, `id`, `credential`, `email`,
/// `status`, `version`), a table that merely shares the name is left alone,
/// as `dropDevData`'s shape check does; and the drops need the table
/// archived.
#[test]
fn dev_data_drops_need_operator_auth_shapes() {
    let d = scratch();
    let db = d.path().join("app.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE oa_sessions(id TEXT PRIMARY KEY, type TEXT);
         INSERT INTO oa_sessions VALUES ('s1','dev');
         CREATE TABLE oa_operators(email TEXT PRIMARY KEY, status TEXT);
         INSERT INTO oa_operators VALUES ('a@dev.localhost','active');",
    )
    .unwrap();
    drop(conn);
    let out = d.path().join("app.ndjson");
    let o = ndarc(&[
        "pack",
        s(&db),
        "-o",
        s(&out),
        "--include-table",
        "oa_sessions",
        "--include-table",
        "oa_operators",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        rows_of(&out, "oa_sessions"),
        [r#"{"id":"s1","type":"dev"}"#]
    );
    assert_eq!(
        rows_of(&out, "oa_operators"),
        [r#"{"email":"a@dev.localhost","status":"active"}"#]
    );
}

/// Issue 22 §4 item 3: `diff` of a valid archive holding `oa_sessions` and
/// `oa_credentials` rows with a `kind` column (which the verifier's fast
/// path leaves to the full check, so no row spans) works: it used to exit 2
/// with "rows of table \"oa_sessions\" that the manifest does not list".
#[test]
fn diff_of_an_archive_with_dev_kind_tables_works() {
    let d = scratch();
    let db = d.path().join("app.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(DEV_DATA).unwrap();
    drop(conn);
    let out = d.path().join("app.ndjson");
    let o = pack_with_oa(&db, &out);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!rows_of(&out, "oa_sessions").is_empty());
    let o = ndarc(&["diff", s(&out), s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A change in such a table is seen.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("UPDATE oa_sessions SET operator='z' WHERE id='s1';")
        .unwrap();
    drop(conn);
    let later = d.path().join("later.ndjson");
    let o = pack_with_oa(&db, &later);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = ndarc(&["diff", s(&out), s(&later)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("oa_sessions"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// A successful pack says what it wrote in one line on standard error;
/// `--quiet` leaves it out, `--summary` gives it as JSON instead.
#[test]
fn a_pack_says_what_it_wrote_unless_quiet() {
    let d = scratch();
    let a = d.path().join("chinook.ndjson");
    let mut args = vec!["pack", chinook().leak() as &str, "-o", s(&a)];
    args.extend(CHINOOK_ARGS);
    let o = ndarc(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let len = std::fs::metadata(&a).expect("the archive").len();
    let line = stderr(&o);
    assert!(
        line.starts_with(&format!(
            "packed {} into {}: 7 tables (12888 rows), ",
            chinook(),
            a.display()
        )),
        "{line}"
    );
    assert!(
        line.ends_with(&format!(
            "rows), 0 objects, 0 payloads; 18 parts, {len} bytes\n"
        )),
        "{line}"
    );
    assert_eq!(line.lines().count(), 1, "{line}");

    std::fs::remove_file(&a).expect("remove");
    args.push("-q");
    let o = ndarc(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(a.exists());
}
