//! `diff --format sql` piped into the real `sqlite3` shell (as README
//! recommends): hostile archives make it run nothing but ndarc's own
//! statements, and the patch applied to an `unpack`ed BEFORE gives what
//! `unpack` gives of AFTER, REAL values bit for bit.
//!
//! These tests need the `sqlite3` command (`.ci/run` installs it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rusqlite::types::Value as Sql;

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndarc-patch-sqlite3-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ndarc(args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ndarc");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.unwrap_or_default()).expect("stdin");
    drop(input);
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `sqlite3 DB` in `dir` with `script` on its standard input, as
/// `ndarc diff --format sql … | sqlite3 DB` does.
fn sqlite3(dir: &Path, db: &str, script: &[u8]) -> (i32, String) {
    let mut child = match Command::new("sqlite3")
        .arg(db)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!(
            "these tests need the sqlite3 command ({e}); install it (apt-get install sqlite3)"
        ),
    };
    let mut input = child.stdin.take().expect("stdin");
    // The shell may stop early (an error): a broken pipe is its answer.
    let _ = input.write_all(script);
    drop(input);
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout),
    )
}

fn pack(dir: &Path, db: &str, archive: &str) {
    let (code, _, err) = ndarc(
        &[
            "pack",
            db,
            "-o",
            archive,
            "--product",
            "patch-test",
            "--exported-at",
            "2026-01-01T00:00:00.000Z",
        ],
        dir,
        None,
    );
    assert_eq!(code, 0, "pack {db}: {err}");
}

fn unpack(dir: &Path, archive: &str, db: &str) {
    let (code, _, err) = ndarc(&["unpack", archive, "-o", db], dir, None);
    assert_eq!(code, 0, "unpack {archive}: {err}");
}

/// Every row of every table of `db`, sorted, as SQLite holds the values
/// (storage class and, for REALs, bits).
fn contents(db: &Path) -> Vec<(String, Vec<Vec<String>>)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut names: Vec<String> = c
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names.retain(|n| !n.starts_with("sqlite_"));
    names
        .into_iter()
        .map(|n| {
            let mut st = c
                .prepare(&format!("SELECT * FROM \"{n}\" ORDER BY rowid"))
                .unwrap();
            let cols = st.column_count();
            let mut rows: Vec<Vec<String>> = st
                .query_map([], |r| {
                    Ok((0..cols)
                        .map(|i| match r.get::<_, Sql>(i).unwrap() {
                            Sql::Real(f) => format!("real {:016x} ({f:e})", f.to_bits()),
                            Sql::Integer(i) => format!("integer {i}"),
                            Sql::Text(t) => format!("text {t:?}"),
                            Sql::Blob(b) => format!("blob {b:?}"),
                            Sql::Null => "null".to_string(),
                        })
                        .collect())
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            rows.sort();
            (n, rows)
        })
        .collect()
}

/// Doubles that stress the patch's REAL literals: edges, then random bit
/// patterns and short decimals.
fn doubles(n: usize) -> Vec<f64> {
    let mut v = vec![
        5e-324,
        -5e-324,
        2.225_073_858_507_201e-308,
        2.2250738585072014e-308,
        f64::MAX,
        -f64::MAX,
        9_007_199_254_740_991.0,
        9_007_199_254_740_992.0,
        -9_007_199_254_740_992.0,
        9_007_199_254_740_994.0,
        -0.0,
        0.1,
        1.0 / 3.0,
        1e21,
        -1e21,
        66_651_525_643_534_064.0,
        9_223_372_036_854_775_808.0,
        9_223_372_036_854_774_784.0,
        -9_223_372_036_854_775_808.0,
        1e300,
        123_456_789_012_345.6,
        0.000_123_456_789_012_345,
        4.35,
        2.5,
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    while v.len() < n {
        let r = next();
        let f = match r % 4 {
            // Any bit pattern.
            0 | 1 => f64::from_bits(next()),
            // Magnitudes people store: prices, measures.
            2 => (next() % 10_000_000) as f64 / 100.0,
            _ => (next() % 1_000_000_000_000) as f64 / 1e6 * if r & 8 == 0 { 1.0 } else { -1.0 },
        };
        if f.is_finite() {
            v.push(f);
        }
    }
    v
}

#[test]
fn reals_survive_the_sqlite3_shell_bit_for_bit() {
    let d = temp("reals");
    let schema = "CREATE TABLE t(id INTEGER PRIMARY KEY, r REAL, n NUMERIC, u, i INTEGER);";
    let values = doubles(20_000);
    {
        let a = rusqlite::Connection::open(d.join("a.db")).unwrap();
        a.execute_batch(schema).unwrap();
        // Rows 1..=50 are there before: the patch updates them.
        for (id, v) in values.iter().take(50).enumerate() {
            a.execute(
                "INSERT INTO t VALUES(?1, ?2, ?2, ?2, ?3)",
                rusqlite::params![id as i64 + 1, v * 0.5 + 1.0, id as i64],
            )
            .unwrap();
        }
        let b = rusqlite::Connection::open(d.join("b.db")).unwrap();
        b.execute_batch(schema).unwrap();
        // A new table: its rows are inserted after its CREATE.
        b.execute_batch("CREATE TABLE fresh(x REAL, y NUMERIC, z);")
            .unwrap();
        let tx = b.unchecked_transaction().unwrap();
        let ints = [0i64, 1, -1, 9_007_199_254_740_991, -9_007_199_254_740_991];
        for (id, v) in values.iter().enumerate() {
            tx.execute(
                "INSERT INTO t VALUES(?1, ?2, ?2, ?2, ?3)",
                rusqlite::params![id as i64 + 1, v, ints[id % ints.len()]],
            )
            .unwrap();
            if id.is_multiple_of(4) {
                tx.execute("INSERT INTO fresh VALUES(?1, ?1, ?1)", [v])
                    .unwrap();
            }
        }
        tx.commit().unwrap();
    }
    pack(&d, "a.db", "a.ndjson");
    pack(&d, "b.db", "b.ndjson");
    let (code, patch, err) = ndarc(
        &["diff", "--format", "sql", "a.ndjson", "b.ndjson"],
        &d,
        None,
    );
    assert_eq!(code, 1, "{err}");
    unpack(&d, "a.ndjson", "c.db");
    unpack(&d, "b.ndjson", "expected.db");
    let (code, out) = sqlite3(&d, "c.db", &patch);
    assert_eq!((code, out.as_str()), (0, ""), "the shell ran the patch");
    let (got, want) = (contents(&d.join("c.db")), contents(&d.join("expected.db")));
    assert_eq!(got.len(), want.len());
    for ((tg, rg), (tw, rw)) in got.iter().zip(&want) {
        assert_eq!(tg, tw);
        assert_eq!(rg.len(), rw.len(), "rows of {tg}");
        for (i, (a, b)) in rg.iter().zip(rw).enumerate() {
            assert_eq!(a, b, "table {tg}, row {i}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Replaces the `sql` of AFTER's table `table` and reseals the archive.
fn with_sql(dir: &Path, archive: &str, table: &str, sql: &str, out: &str) {
    let text = std::fs::read_to_string(dir.join(archive)).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut m: serde_json::Value = serde_json::from_str(first).unwrap();
    for t in m["tables"].as_array_mut().unwrap() {
        if t["name"] == table {
            t["sql"] = sql.into();
        }
    }
    let edited = format!("{m}\n{rest}");
    std::fs::write(dir.join("edited.ndjson"), edited).unwrap();
    let (code, _, err) = ndarc(
        &["canon", "--reseal", "edited.ndjson", "-o", out, "--force"],
        dir,
        None,
    );
    assert_eq!(code, 0, "reseal: {err}");
}

#[test]
fn hostile_sql_writes_no_patch_and_runs_nothing() {
    let d = temp("sql");
    {
        let a = rusqlite::Connection::open(d.join("a.db")).unwrap();
        a.execute_batch("CREATE TABLE t(a); INSERT INTO t VALUES(1);")
            .unwrap();
        let b = rusqlite::Connection::open(d.join("b.db")).unwrap();
        b.execute_batch(
            "CREATE TABLE t(a); INSERT INTO t VALUES(1); CREATE TABLE t2(a); INSERT INTO t2 VALUES(2);",
        )
        .unwrap();
    }
    pack(&d, "a.db", "a.ndjson");
    pack(&d, "b.db", "b.ndjson");
    unpack(&d, "a.ndjson", "c.db");
    for (i, sql) in [
        "CREATE TABLE t2(a);\n.shell touch F\n-- ",
        "CREATE TABLE t2(a DEFAULT (1\n/\n.shell touch F\n))",
        "CREATE TABLE t2(a\ngo\n.shell touch F\n)",
        "-- x\n.shell touch F\nCREATE TABLE t2(a)",
        "CREATE TABLE t2(a, b DEFAULT ';')",
    ]
    .into_iter()
    .enumerate()
    {
        let after = format!("b{i}.ndjson");
        with_sql(&d, "b.ndjson", "t2", sql, &after);
        let (code, patch, err) = ndarc(&["diff", "--format", "sql", "a.ndjson", &after], &d, None);
        assert_eq!(code, 2, "{sql:?}: {err}");
        assert!(patch.is_empty(), "{sql:?}: nothing is written");
        assert!(!err.is_empty());
        // Whatever came out, the shell runs nothing of it outside the
        // database.
        sqlite3(&d, "c.db", &patch);
        assert!(!d.join("F").exists(), "{sql:?}: the shell ran a command");
    }
    // Without verification no patch is written at all.
    let (code, patch, err) = ndarc(
        &[
            "diff",
            "--no-verify",
            "--format",
            "sql",
            "a.ndjson",
            "b.ndjson",
        ],
        &d,
        None,
    );
    assert_eq!((code, patch.is_empty()), (2, true), "{err}");
    assert!(err.contains("--no-verify"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn hostile_text_stays_data() {
    let d = temp("text");
    let cells = [
        "x');\n.shell touch F\n--",
        "\n.shell touch F\n",
        "a\r\n.shell touch F\r\n",
        "/\n.shell touch F",
        "go\n.system touch F\n",
        "-- \n.shell touch F",
        "it's\r",
        "\u{2028}\u{0085}\t\u{b}",
    ];
    {
        let a = rusqlite::Connection::open(d.join("a.db")).unwrap();
        a.execute_batch(
            "CREATE TABLE t(k TEXT PRIMARY KEY, v); INSERT INTO t VALUES('k0', 'old');",
        )
        .unwrap();
        let b = rusqlite::Connection::open(d.join("b.db")).unwrap();
        b.execute_batch("CREATE TABLE t(k TEXT PRIMARY KEY, v);")
            .unwrap();
        b.execute("INSERT INTO t VALUES('k0', ?1)", [cells[0]])
            .unwrap();
        for (i, c) in cells.iter().enumerate() {
            // As keys and as values: the WHERE of an UPDATE and INSERTs.
            b.execute("INSERT INTO t VALUES(?1, ?1)", [format!("{c}{i}")])
                .unwrap();
        }
    }
    pack(&d, "a.db", "a.ndjson");
    pack(&d, "b.db", "b.ndjson");
    unpack(&d, "a.ndjson", "c.db");
    unpack(&d, "b.ndjson", "expected.db");
    // AFTER from standard input: read once, as a file is.
    let b = std::fs::read(d.join("b.ndjson")).unwrap();
    let (code, patch, err) = ndarc(&["diff", "--format", "sql", "a.ndjson", "-"], &d, Some(&b));
    assert_eq!(code, 1, "{err}");
    // Every line ndarc writes is a whole statement or a comment.
    for line in String::from_utf8(patch.clone()).unwrap().lines() {
        assert!(
            line.starts_with("-- ") || line.ends_with(';'),
            "a line that is not a whole statement: {line:?}"
        );
    }
    let (code, out) = sqlite3(&d, "c.db", &patch);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(!d.join("F").exists(), "the shell ran a command");
    assert_eq!(contents(&d.join("c.db")), contents(&d.join("expected.db")));
    let _ = std::fs::remove_dir_all(&d);
}
