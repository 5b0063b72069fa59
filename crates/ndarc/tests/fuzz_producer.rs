//! `ndarc fuzz-producer` end to end: `ndarc pack` agrees with itself, and
//! deliberately faulty producers (small shell scripts the tests write) are
//! caught and their databases shrunk.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const NDARC: &str = env!("CARGO_BIN_EXE_ndarc");

fn fuzz(args: &[&str]) -> Output {
    Command::new(NDARC)
        .arg("fuzz-producer")
        .args(args)
        .env("NO_COLOR", "1")
        .env("NDARC", NDARC)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("ndarc runs")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "ndarc-fuzz-producer-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes a producer script; the command runs it with `sh` (no shell
/// parses the command line itself).
fn script(dir: &Path, body: &str) -> String {
    let p = dir.join("producer.sh");
    std::fs::write(&p, format!("set -e\n{body}\n")).unwrap();
    format!("sh '{}' {{db}} {{archive}}", p.display())
}

fn summary(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn problems<'a>(v: &'a Value, kind: &str) -> Vec<&'a Value> {
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == kind)
        .collect()
}

/// "T tables, R rows, C columns" → (T, R, C).
fn sizes(s: &Value) -> (u64, u64, u64) {
    let n: Vec<u64> = s
        .as_str()
        .unwrap()
        .split(", ")
        .map(|w| w.split(' ').next().unwrap().parse().unwrap())
        .collect();
    (n[0], n[1], n[2])
}

#[test]
fn ndarc_pack_agrees_with_itself() {
    let exec = format!("'{NDARC}' pack {{db}} -o {{archive}}");
    let o = fuzz(&[
        "--exec", &exec, "--runs", "60", "--seed", "3", "--format", "json",
    ]);
    let v = summary(&o);
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    assert_eq!(v["agreed"], 60);
    assert_eq!(v["disagreements"], 0);
    assert_eq!(v["mustRefuse"], 15);
    assert_eq!(v["archivable"], 45);
    // Every planned refusal is the one pack gives.
    assert_eq!(
        v["plannedRefusalMismatches"].as_array().unwrap().len(),
        0,
        "{v:#}"
    );
    let codes = v["refusalCodes"].as_object().unwrap();
    for code in [
        "row_type",
        "unsafe_integer",
        "virtual_table",
        "transfer_sql_limit",
        "excluded_foreign_key",
        "unsupported_rowid",
        "unsupported_copy_rowid",
    ] {
        assert!(codes.contains_key(code), "{code} in {codes:?}");
    }
}

#[test]
fn a_producer_breaking_one_rule_is_caught_and_shrunk() {
    let dir = tmp("mutate");
    let out = dir.join("out");
    // pack, then break one rule of the format in a row.
    let exec = script(
        &dir,
        "\"$NDARC\" pack \"$1\" -o \"$2.tmp\"\n\"$NDARC\" mutate --code row_type \"$2.tmp\" -o \"$2\" >/dev/null\nrm -f \"$2.tmp\"",
    );
    let o = fuzz(&[
        "--exec",
        &exec,
        "--runs",
        "12",
        "--seed",
        "5",
        "--outdir",
        out.to_str().unwrap(),
        "--json",
    ]);
    let v = summary(&o);
    assert_eq!(o.status.code(), Some(1), "{v:#}");
    // Every archivable database is caught (mutate breaks the rule in a
    // table of its own when the archive has no rows), and shrinks to the
    // empty database.
    let bad = problems(&v, "invalid_archive");
    assert_eq!(bad.len() as u64, v["archivable"].as_u64().unwrap(), "{v:#}");
    assert_eq!(v["agreed"], v["mustRefuse"]);
    for p in &bad {
        assert!(p["detail"].as_str().unwrap().contains("row_type"), "{p:#}");
        assert_eq!(sizes(&p["shrunk"]), (0, 0, 0), "{p:#}");
        let files = p["files"].as_array().unwrap();
        for f in files {
            assert!(out.join(f.as_str().unwrap()).is_file(), "{f}");
        }
        assert!(files.iter().any(|f| f.as_str().unwrap().ends_with(".db")));
    }
    let saved: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(saved, v);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_producer_dropping_null_cells_is_caught() {
    let dir = tmp("nulls");
    // Drops every null cell from the rows of part lines.
    let exec = script(
        &dir,
        "\"$NDARC\" pack \"$1\" -o \"$2.tmp\"\nsed -e '/^{\"index\"/ s/\"[^\"]*\":null,//g' -e '/^{\"index\"/ s/,\"[^\"]*\":null}/}/g' \"$2.tmp\" > \"$2\"\nrm -f \"$2.tmp\"",
    );
    let o = fuzz(&["--exec", &exec, "--runs", "12", "--seed", "2", "--json"]);
    let v = summary(&o);
    assert_eq!(o.status.code(), Some(1), "{v:#}");
    let bad = problems(&v, "invalid_archive");
    assert!(!bad.is_empty(), "{v:#}");
    for p in &bad {
        assert!(
            p["detail"].as_str().unwrap().contains("row_columns"),
            "{p:#}"
        );
        let (tables, rows, _) = sizes(&p["shrunk"]);
        assert_eq!((tables, rows), (1, 1), "{p:#}");
    }
    assert_eq!(v["disagreements"], bad.len());
}

#[test]
fn a_producer_that_archives_everything_is_caught_on_refusals() {
    let dir = tmp("lax");
    // Exit 0 even when pack refuses.
    let exec = script(&dir, "\"$NDARC\" pack \"$1\" -o \"$2\" 2>/dev/null || true");
    let o = fuzz(&["--exec", &exec, "--runs", "8", "--json"]);
    let v = summary(&o);
    assert_eq!(o.status.code(), Some(1), "{v:#}");
    let bad = problems(&v, "invalid_accepted");
    // Runs 3 and 7 must be refused.
    assert_eq!(bad.len(), 2, "{v:#}");
    assert_eq!(bad[0]["expectedRefusal"], "row_type");
    assert_eq!(bad[1]["expectedRefusal"], "unsafe_integer");
    assert_eq!(v["agreed"], 6);
}

#[test]
fn usage_errors_exit_2() {
    let o = fuzz(&["--exec", "'unterminated"]);
    assert_eq!(o.status.code(), Some(2));
    let o = fuzz(&["--exec", "x", "--json", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let o = fuzz(&[
        "--exec",
        "/nonexistent/producer {db} {archive}",
        "--runs",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_producers_header_and_part_sizes_are_its_own() {
    // Another product, time, epoch, source and configuration, other parts:
    // the same content.
    let exec = format!(
        "'{NDARC}' pack {{db}} -o {{archive}} --product other --exported-at 2001-02-03T04:05:06.789Z \
         --epoch 9 --source-identity src --required-configuration KEY --part-bytes 200K"
    );
    let o = fuzz(&["--exec", &exec, "--runs", "16", "--seed", "8", "--json"]);
    let v = summary(&o);
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    assert_eq!(v["agreed"], 16);
}

#[test]
fn a_producer_leaving_tables_out_is_a_content_mismatch() {
    let dir = tmp("exclude");
    let exec = script(&dir, "\"$NDARC\" pack \"$1\" --exclude-table '%' -o \"$2\"");
    let o = fuzz(&["--exec", &exec, "--runs", "8", "--seed", "4", "--json"]);
    let v = summary(&o);
    assert_eq!(o.status.code(), Some(1), "{v:#}");
    let bad = problems(&v, "content_mismatch");
    assert!(!bad.is_empty(), "{v:#}");
    for p in &bad {
        // One table is enough; its rows do not matter.
        let (tables, rows, _) = sizes(&p["shrunk"]);
        assert_eq!((tables, rows), (1, 0), "{p:#}");
        assert!(p["detail"].as_str().unwrap().contains("removed"), "{p:#}");
    }
}

#[test]
fn a_non_canonical_archive_is_reported_with_offset_pointer_and_rule() {
    let dir = tmp("canonical");
    // A space after the manifest's `"epoch":` (whitespace rule).
    let exec = script(
        &dir,
        "\"$NDARC\" pack \"$1\" -o \"$2.tmp\"\nsed -e '1 s/\"epoch\":/\"epoch\": /' \"$2.tmp\" > \"$2\"\nrm -f \"$2.tmp\"",
    );
    let o = fuzz(&["--exec", &exec, "--runs", "1", "--json"]);
    let v = summary(&o);
    assert_eq!(o.status.code(), Some(1), "{v:#}");
    let bad = problems(&v, "invalid_archive");
    assert_eq!(bad.len(), 1, "{v:#}");
    let detail = bad[0]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("line 1, byte 9: not_canonical: "),
        "{detail}"
    );
    assert!(
        detail.contains("whitespace: found `{\"epoch\": "),
        "{detail}"
    );
    assert!(detail.contains("(at /epoch)"), "{detail}");
    // The human report shows the same detail.
    let o = fuzz(&["--exec", &exec, "--runs", "1"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("line 1, byte 9: not_canonical"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The human report names every file it kept for a failure (the shrunk
/// database and both archives, as summary.json's `files`), and each is
/// there; nothing goes to standard error without a terminal.
#[test]
fn human_report_names_every_file_it_kept() {
    let dir = tmp("names");
    let out = dir.join("out");
    let exec = script(
        &dir,
        "\"$NDARC\" pack \"$1\" -o \"$2.tmp\"\n\"$NDARC\" mutate --code row_type \"$2.tmp\" -o \"$2\" >/dev/null\nrm -f \"$2.tmp\"",
    );
    let o = fuzz(&[
        "--exec",
        &exec,
        "--runs",
        "2",
        "--seed",
        "5",
        "--outdir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = String::from_utf8(o.stdout).unwrap();
    let lists: Vec<Vec<&str>> = t
        .lines()
        .filter_map(|l| l.strip_prefix("  files: "))
        .map(|l| l.split(", ").collect())
        .collect();
    assert_eq!(lists.len(), 2, "{t}");
    let saved: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    for (list, p) in lists.iter().zip(saved["problems"].as_array().unwrap()) {
        let want: Vec<String> = p["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| out.join(f.as_str().unwrap()).display().to_string())
            .collect();
        assert_eq!(list, &want, "{t}");
        assert_eq!(list.len(), 3, "{t}");
        for f in list {
            assert!(Path::new(f).is_file(), "{f}");
        }
        let stem = format!("{:04}-invalid_archive", p["run"].as_u64().unwrap());
        assert!(list[0].ends_with(&format!("{stem}.db")), "{t}");
        assert!(list[1].ends_with(&format!("{stem}.ndjson")), "{t}");
        assert!(list[2].ends_with(&format!("{stem}.expected.ndjson")), "{t}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without a terminal no progress line is drawn (standard error stays
/// empty, shrinking included); `--quiet` prints nothing but still writes
/// summary.json.
#[test]
fn no_progress_without_a_terminal_and_quiet_prints_nothing() {
    let dir = tmp("quiet");
    let exec = script(
        &dir,
        "\"$NDARC\" pack \"$1\" -o \"$2.tmp\"\n\"$NDARC\" mutate --code row_type \"$2.tmp\" -o \"$2\" >/dev/null\nrm -f \"$2.tmp\"",
    );
    let o = fuzz(&["--exec", &exec, "--runs", "2", "--seed", "5"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(
        t.starts_with("fuzz-producer: 2 databases (seed 5) fed to: "),
        "{t}"
    );
    assert!(!t.contains('\r') && !t.contains("shrinking"), "{t}");
    let quiet = dir.join("quiet");
    let q = fuzz(&[
        "--exec",
        &exec,
        "--runs",
        "2",
        "--seed",
        "5",
        "-q",
        "--outdir",
        quiet.to_str().unwrap(),
    ]);
    assert_eq!(q.status.code(), Some(1));
    assert!(q.stdout.is_empty() && q.stderr.is_empty());
    assert!(quiet.join("summary.json").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--schema`: every other run is a database of the author's own schema
/// (their CHECKs, collations, generated columns, foreign keys), its rows
/// accepted by SQLite under every constraint; `ndarc pack` agrees with
/// itself on them.
#[test]
fn the_authors_schema_is_fuzzed_beside_the_built_in_shapes() {
    let dir = tmp("schema");
    let schema = dir.join("app.sql");
    std::fs::write(
        &schema,
        "CREATE TABLE customers(id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE COLLATE NOCASE, \
           tier TEXT CHECK (tier IN ('free', 'pro')));\n\
         CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers, \
           qty INTEGER NOT NULL CHECK (qty BETWEEN 1 AND 99), \
           total REAL GENERATED ALWAYS AS (qty * 2.5) VIRTUAL);\n\
         CREATE INDEX orders_by_customer ON orders(customer_id);\n",
    )
    .unwrap();
    let seen = dir.join("seen");
    std::fs::create_dir_all(&seen).unwrap();
    let exec = script(
        &dir,
        &format!(
            "cp \"$1\" '{}'/\"$(basename \"$(dirname \"$1\")\")-$$.db\"\n\"$NDARC\" pack \"$1\" -o \"$2\"",
            seen.display()
        ),
    );
    let o = fuzz(&[
        "--exec",
        &exec,
        "--runs",
        "12",
        "--seed",
        "5",
        "--max-rows",
        "20",
        "--schema",
        schema.to_str().unwrap(),
        "--json",
    ]);
    let v = summary(&o);
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    assert_eq!(v["agreed"], 12, "{v:#}");
    // Six of the databases the producer saw were the author's.
    let mut theirs = 0;
    let mut orders = 0i64;
    for e in std::fs::read_dir(&seen).unwrap() {
        let c = rusqlite::Connection::open(e.unwrap().path()).unwrap();
        let sql: Option<String> = c
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE name = 'orders'",
                [],
                |r| r.get(0),
            )
            .ok();
        if sql.is_some_and(|s| s.contains("CHECK (qty BETWEEN 1 AND 99)")) {
            theirs += 1;
            orders += c
                .query_row("SELECT count(*) FROM orders", [], |r| r.get::<_, i64>(0))
                .unwrap();
            let bad: i64 = c
                .query_row(
                    "SELECT (SELECT count(*) FROM orders WHERE qty NOT BETWEEN 1 AND 99) \
                     + (SELECT count(*) FROM pragma_foreign_key_check)",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(bad, 0);
        }
    }
    assert_eq!(theirs, 6);
    assert!(orders > 0, "rows were drawn");

    // A schema SQLite refuses is a usage error, before any run.
    std::fs::write(&schema, "CREATE TABLE (").unwrap();
    let o = fuzz(&["--exec", &exec, "--schema", schema.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--schema") && err.contains("SQLite refused the schema"),
        "{err}"
    );
}
