//! A SQLite database wherever `verify` and `diff` read an archive (packed
//! on the fly), and `diff --format sql`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ndarc_sqlite::fuzzdb::{generate, must_refuse, variant, FuzzOptions, Refusal};

const NDARC: &str = env!("CARGO_BIN_EXE_ndarc");

fn ndarc(args: &[&str]) -> Output {
    Command::new(NDARC)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("ndarc runs")
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndarc-dbinput-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The first seed from `from` whose database has rows in archived tables,
/// and whose next version differs.
fn rich(from: u64) -> u64 {
    let o = FuzzOptions::default();
    (from..)
        .find(|&seed| {
            let a = generate(seed, &o).spec;
            a.tables.len() >= 3 && a.row_count() > 10 && variant(&a, seed, &o) != a
        })
        .unwrap()
}

/// A database with rows in several tables.
fn database(d: &Path, name: &str, from: u64) -> PathBuf {
    let p = d.join(name);
    generate(rich(from), &FuzzOptions::default())
        .spec
        .write(&p)
        .unwrap();
    p
}

#[test]
fn verify_packs_a_database_on_the_fly() {
    let d = dir("verify");
    let db = database(&d, "shop.sqlite3", 4);
    let o = ndarc(&["verify", s(&db)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("valid"), "{}", text(&o.stdout));
    // Recognised by its header, not its name: an archive called .db is
    // verified as an archive.
    let archive = d.join("export.db");
    let p = ndarc(&["pack", s(&db), "-o", s(&archive)]);
    assert_eq!(p.status.code(), Some(0), "{}", text(&p.stderr));
    assert_eq!(ndarc(&["verify", s(&archive)]).status.code(), Some(0));
    // Nothing but the inputs is left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["export.db", "shop.sqlite3"]);
}

#[test]
fn verify_reports_a_database_pack_refuses() {
    let d = dir("refused");
    let p = d.join("bad.db");
    must_refuse(1, &FuzzOptions::default(), Refusal::DatetimeText)
        .spec
        .write(&p)
        .unwrap();
    let o = ndarc(&["verify", s(&p)]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("bad.db: row_type:"), "{err}");
}

#[test]
fn diff_takes_a_database_on_either_side() {
    let d = dir("diff");
    let o = FuzzOptions::default();
    let seed = rich(4);
    let a = generate(seed, &o).spec;
    let b = variant(&a, seed, &o);
    let (da, db) = (d.join("a.db"), d.join("b.db"));
    a.write(&da).unwrap();
    b.write(&db).unwrap();
    let xa = d.join("a.ndjson");
    // A product of its own: the database side takes the archive's header.
    let p = ndarc(&["pack", s(&da), "--product", "shop", "-o", s(&xa)]);
    assert_eq!(p.status.code(), Some(0), "{}", text(&p.stderr));
    let same = ndarc(&["diff", s(&xa), s(&da)]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}{}",
        text(&same.stdout),
        text(&same.stderr)
    );
    let other = ndarc(&["diff", s(&xa), s(&db)]);
    assert_eq!(other.status.code(), Some(1), "{}", text(&other.stderr));
    assert!(
        text(&other.stdout).contains("table "),
        "{}",
        text(&other.stdout)
    );
    let both = ndarc(&["diff", s(&da), s(&db), "--format", "json"]);
    assert_eq!(both.status.code(), Some(1), "{}", text(&both.stderr));
}

/// Issue 24 §6: a database diffed against an archive is packed with the
/// archive's recorded exclusions (`excludedColumns`, `excludedTables`), so
/// an archive with a secret column diffs equal to the database it came
/// from; `--secret-column`, `--exclude-table` and `--include-table` apply
/// to a database side.
#[test]
fn a_database_is_diffed_under_the_archives_exclusions() {
    let d = dir("exclusions");
    let db = d.join("app.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, api_secret TEXT);
         INSERT INTO users VALUES (1, 'ada', 's1'), (2, 'bob', NULL), (3, 'cy', 's3');
         CREATE TABLE audit(id INTEGER PRIMARY KEY, what TEXT);
         INSERT INTO audit VALUES (1, 'login');",
    )
    .unwrap();
    drop(conn);
    let x = d.join("app.ndjson");
    let p = ndarc(&[
        "pack",
        s(&db),
        "-o",
        s(&x),
        "--secret-column",
        "users.api_secret",
        "--exclude-table",
        "audit",
    ]);
    assert_eq!(p.status.code(), Some(0), "{}", text(&p.stderr));
    // Both ways round: no differences.
    for (a, b) in [(&x, &db), (&db, &x)] {
        let r = ndarc(&["diff", s(a), s(b)]);
        assert_eq!(
            r.status.code(),
            Some(0),
            "diff {} {}: {}{}",
            s(a),
            s(b),
            text(&r.stdout),
            text(&r.stderr)
        );
    }
    // A change of a secret value is not a difference; of another cell, it is.
    let changed = d.join("changed.db");
    std::fs::copy(&db, &changed).unwrap();
    let conn = rusqlite::Connection::open(&changed).unwrap();
    conn.execute_batch(
        "UPDATE users SET api_secret = 'rotated' WHERE id = 1;
         INSERT INTO audit VALUES (2, 'logout');",
    )
    .unwrap();
    drop(conn);
    let r = ndarc(&["diff", s(&x), s(&changed)]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stdout));
    let conn = rusqlite::Connection::open(&changed).unwrap();
    conn.execute("UPDATE users SET name = 'Ada' WHERE id = 1", [])
        .unwrap();
    drop(conn);
    let r = ndarc(&["diff", "--format", "json", s(&x), s(&changed)]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let tables = v["tables"].to_string();
    assert!(tables.contains("\"users\""), "{v:#}");
    assert!(
        !tables.contains("api_secret") && !tables.contains("audit"),
        "{v:#}"
    );
    // Two databases: the flags say what to leave out, on both sides.
    let r = ndarc(&["diff", s(&db), s(&changed)]);
    assert_eq!(r.status.code(), Some(1));
    assert!(
        text(&r.stdout).contains("api_secret"),
        "{}",
        text(&r.stdout)
    );
    let conn = rusqlite::Connection::open(&changed).unwrap();
    conn.execute("UPDATE users SET name = 'ada' WHERE id = 1", [])
        .unwrap();
    drop(conn);
    let r = ndarc(&[
        "diff",
        s(&db),
        s(&changed),
        "--secret-column",
        "users.api_secret",
        "--exclude-table",
        "audit",
    ]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}{}",
        text(&r.stdout),
        text(&r.stderr)
    );
    // --include-table archives a table the archive side excluded: then it
    // is on one side only.
    let r = ndarc(&["diff", s(&x), s(&changed), "--include-table", "audit"]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r.stderr));
    assert!(text(&r.stdout).contains("audit"), "{}", text(&r.stdout));
    // Between two archives the flags mean nothing: a usage error.
    let r = ndarc(&["diff", s(&x), s(&x), "--secret-column", "users.name"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r.stderr));
    assert!(text(&r.stderr).contains("database"), "{}", text(&r.stderr));
}

#[test]
fn diff_format_sql_is_a_patch_from_before_to_after() {
    let d = dir("sql");
    let o = FuzzOptions::default();
    for seed in [rich(0), rich(100), rich(200), rich(300)] {
        let a = generate(seed, &o).spec;
        let b = variant(&a, seed, &o);
        let (da, db) = (d.join(format!("{seed}a.db")), d.join(format!("{seed}b.db")));
        a.write(&da).unwrap();
        b.write(&db).unwrap();
        let (xa, xb) = (
            d.join(format!("{seed}a.ndjson")),
            d.join(format!("{seed}b.ndjson")),
        );
        for (db, x) in [(&da, &xa), (&db, &xb)] {
            let p = ndarc(&["pack", s(db), "--product", "p", "-o", s(x)]);
            assert_eq!(p.status.code(), Some(0), "{}", text(&p.stderr));
        }
        let patch = ndarc(&["diff", "--format", "sql", s(&xa), s(&xb)]);
        assert_eq!(patch.status.code(), Some(1), "{}", text(&patch.stderr));
        let sql = text(&patch.stdout);
        assert!(
            sql.contains("BEGIN TRANSACTION;") && sql.ends_with("COMMIT;\n"),
            "{sql}"
        );
        // unpack(a) with the patch applied holds b's rows.
        let restored = d.join(format!("{seed}c.db"));
        let u = ndarc(&["unpack", s(&xa), "-o", s(&restored)]);
        assert_eq!(u.status.code(), Some(0), "{}", text(&u.stderr));
        let conn = rusqlite::Connection::open(&restored).unwrap();
        conn.execute_batch(&sql).unwrap();
        drop(conn);
        let left = ndarc(&["diff", s(&restored), s(&xb), "--format", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&left.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&left.stderr)));
        assert_eq!(
            v["tables"],
            serde_json::json!([]),
            "seed {seed}: {v:#}\n{sql}"
        );
        assert_eq!(v["schemaChanged"], false, "seed {seed}: {v:#}");
    }
}

/// Issue 22 §4 item 2: `inspect`, `repart`, `mutate` and `fuzz-consumer
/// --base` take a database wherever they take an archive (packed on the
/// fly, as `verify` does); they used to fail with `json_invalid_utf8`.
#[test]
fn every_archive_reader_takes_a_database() {
    let d = dir("readers");
    let db = database(&d, "shop.sqlite3", 4);
    let o = ndarc(&["inspect", s(&db)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("shop"), "{}", text(&o.stdout));

    let out = d.join("repart.ndjson");
    let o = ndarc(&["repart", "--part-bytes", "4K", s(&db), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(ndarc(&["verify", s(&out)]).status.code(), Some(0));

    let mutant = d.join("mutant.ndjson");
    let o = ndarc(&["mutate", s(&db), "--seed", "1", "-o", s(&mutant)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(ndarc(&["verify", s(&mutant)]).status.code(), Some(1));

    // A consumer that verifies: it accepts the base and refuses its mutants.
    let exec = format!("{NDARC} verify -q {{archive}}");
    let o = ndarc(&[
        "fuzz-consumer",
        "--exec",
        &exec,
        "--base",
        s(&db),
        "--runs",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// `inspect` of a database reads the ends of its packed archive by offset
/// (the manifest is written last, before the part lines): the size, part
/// count, tables and `contentHash` are those of the archive `pack` writes.
#[test]
fn inspect_of_a_database_shows_its_packed_archive() {
    let d = dir("inspect-packed");
    let db = database(&d, "shop.db", 300);
    let packed = d.join("shop.ndjson");
    let o = ndarc(&["pack", "--part-bytes", "4K", s(&db), "-o", s(&packed)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let shown = |path: &Path| {
        let o = ndarc(&["inspect", "--format", "json", s(path)]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let (a, b) = (shown(&db), shown(&packed));
    // Read where an archive is, the database is packed with the default
    // part size; the content is the same at any.
    let o = ndarc(&["pack", s(&db), "-o", s(&packed), "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let c = shown(&packed);
    for key in [
        "bytes",
        "partCount",
        "rows",
        "tables",
        "schema",
        "framingFindings",
    ] {
        assert_eq!(a[key], c[key], "{key}");
    }
    assert_eq!(a["closing"]["contentHash"], c["closing"]["contentHash"]);
    assert_eq!(a["closing"]["contentHash"], b["closing"]["contentHash"]);
    assert_eq!(a["closing"]["partCount"], c["partCount"]);
    assert_eq!(a["verified"], c["verified"]);
}

/// Issue 24's "done when": `unpack` A, patched by `diff A B --format sql`,
/// diffs equal to B with no options, when A and B have a secret column.
#[test]
fn an_unpacked_archive_patched_to_b_diffs_equal_to_b_with_secret_columns() {
    let d = dir("patch-secret");
    let make = |name: &str, sql: &str| {
        let db = d.join(format!("{name}.db"));
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, api_secret TEXT);",
        )
        .unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        let x = d.join(format!("{name}.ndjson"));
        let p = ndarc(&[
            "pack",
            s(&db),
            "-o",
            s(&x),
            "--secret-column",
            "users.api_secret",
            "--product",
            "app",
            "-q",
        ]);
        assert_eq!(p.status.code(), Some(0), "{}", text(&p.stderr));
        x
    };
    let a = make(
        "a",
        "INSERT INTO users VALUES (1, 'ada', 's1'), (2, 'bob', NULL), (3, 'cy', 's3');",
    );
    let b = make(
        "b",
        "INSERT INTO users VALUES (1, 'Ada', 'rotated'), (3, 'cy', 's3'), (4, 'dee', 's4');",
    );
    let restored = d.join("restored.db");
    let u = ndarc(&["unpack", s(&a), "-o", s(&restored)]);
    assert_eq!(u.status.code(), Some(0), "{}", text(&u.stderr));
    let patch = ndarc(&["diff", s(&a), s(&b), "--format", "sql"]);
    assert_eq!(patch.status.code(), Some(1), "{}", text(&patch.stderr));
    let conn = rusqlite::Connection::open(&restored).unwrap();
    conn.execute_batch(&text(&patch.stdout)).unwrap();
    drop(conn);
    let r = ndarc(&["diff", s(&restored), s(&b)]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}{}",
        text(&r.stdout),
        text(&r.stderr)
    );
    // Before the patch, the restore is A: it differs from B.
    let r = ndarc(&["diff", s(&a), s(&b), "-q"]);
    assert_eq!(r.status.code(), Some(1));
}

/// The real Chinook database: its dates are text in DATETIME columns,
/// which the producer refuses.
fn chinook() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/sqlite/chinook.db")
}

/// What packs Chinook (what its refusals advise: see tests/pack.rs).
const CHINOOK_FLAGS: [&str; 8] = [
    "--secret-column",
    "Employee.BirthDate",
    "--secret-column",
    "Employee.HireDate",
    "--exclude-table",
    "Invoice",
    "--exclude-table",
    "InvoiceLine",
];

/// Every command that reads a database where an archive is takes `pack`'s
/// table flags, so that the advice of a refusal (`--secret-column …`)
/// works wherever the refusal is shown; without a database input the
/// flags are a usage error.
#[test]
fn the_table_flags_work_wherever_a_database_is_read() {
    let d = dir("table-flags");
    let db = chinook();
    let out = d.join("out.ndjson");
    let with = |args: &[&str]| {
        let mut v: Vec<&str> = args.to_vec();
        v.extend(CHINOOK_FLAGS);
        ndarc(&v)
    };
    // Refused without the flags, with the advice.
    let o = ndarc(&["verify", s(&db)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("(--secret-column Employee.BirthDate)"),
        "{}",
        text(&o.stderr)
    );
    // Taken with them, by every reader.
    let o = with(&["verify", s(&db)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = with(&["inspect", s(&db), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let shown: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        shown["excludedColumns"]["Employee"],
        serde_json::json!(["BirthDate", "HireDate"]),
        "{shown}"
    );
    let o = with(&["repart", s(&db), "--part-bytes", "4K", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(ndarc(&["verify", s(&out)]).status.code(), Some(0));
    let mutant = d.join("mutant.ndjson");
    let o = with(&["mutate", s(&db), "--code", "row_type", "-o", s(&mutant)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(ndarc(&["verify", s(&mutant)]).status.code(), Some(1));
    let exec = format!("{NDARC} verify -q {{archive}}");
    let o = with(&[
        "fuzz-consumer",
        "--exec",
        &exec,
        "--base",
        s(&db),
        "--runs",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = with(&["diff", "-q", s(&db), s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Without a database input, a usage error.
    for args in [
        vec!["verify", s(&out)],
        vec!["inspect", s(&out)],
        vec!["repart", s(&out), "-o", "-"],
        vec!["mutate", s(&out)],
        vec!["diff", "-q", s(&out), s(&out)],
    ] {
        let o = ndarc(&[args.as_slice(), &["--secret-column", "Employee.BirthDate"]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains("no input is a database"),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
}
