//! `ndarc unpack` of hostile archives (issue 22 §2): an archive restores
//! nothing but its own tables, rows, objects and payloads inside the output
//! it was given, runs nothing, and an archive that does not verify changes
//! nothing at all. The archive is read once, through the verification
//! session.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn ndarc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("ndarc runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn example() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/valid/example.ndjson"
    ))
    .unwrap()
}

const NOTES_SQL: &str = "CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))";

/// The example archive after `edit`, resealed (schema identity and hashes
/// recomputed, so that only the edit can be wrong).
fn edited(dir: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let bytes = ndarc_gen::reseal(edit(example()).as_bytes()).expect("reseal");
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Every path under `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.display().to_string());
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A database `path` with one table `users` of one row.
fn other_database(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES(1, 'keep');")
        .unwrap();
}

fn users_of(path: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut st = c.prepare("SELECT name FROM users").unwrap();
    let rows = st.query_map([], |r| r.get::<_, String>(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

/// Unpacks `archive` into DIR/x.db with objects under DIR/files, and
/// asserts it is refused (exit 1) with nothing left in DIR.
fn refused(dir: &Path, archive: &Path) -> String {
    let before = entries(dir);
    let o = ndarc(&[
        "unpack",
        s(archive),
        "-o",
        s(&dir.join("x.db")),
        "--objects-dir",
        s(&dir.join("files")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(entries(dir), before, "nothing left behind");
    stderr(&o)
}

#[test]
fn a_second_statement_in_sql_attaches_and_drops_nothing() {
    let d = tempfile::tempdir().unwrap();
    let other = d.path().join("other.db");
    other_database(&other);
    for tail in [
        format!("; ATTACH '{}' AS v; DROP TABLE v.users", s(&other)),
        format!("; ATTACH '{}' AS v; DELETE FROM v.users", s(&other)),
        "; CREATE TRIGGER t AFTER INSERT ON notes BEGIN UPDATE notes SET body = 'pwned'; END"
            .to_string(),
        format!(
            "; ATTACH '{}' AS w; CREATE TABLE w.x(p); INSERT INTO w.x VALUES('<?php ?>')",
            s(&d.path().join("x.php"))
        ),
    ] {
        let a = edited(d.path(), "hostile.ndjson", |t| {
            t.replace(NOTES_SQL, &format!("{NOTES_SQL}{tail}"))
        });
        let e = refused(d.path(), &a);
        assert!(
            e.contains("table_sql") || e.contains("invalid_archive"),
            "{tail}: {e}"
        );
        assert_eq!(users_of(&other), ["keep"], "{tail}");
        assert!(!d.path().join("x.php").exists(), "{tail}");
        std::fs::remove_file(&a).unwrap();
    }
}

#[test]
fn a_table_created_elsewhere_than_main_is_refused() {
    let d = tempfile::tempdir().unwrap();
    for sql in [
        "CREATE TEMP TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))",
        "CREATE TABLE notes AS SELECT 'a' AS body, 1 AS user_id",
    ] {
        let a = edited(d.path(), "hostile.ndjson", |t| t.replace(NOTES_SQL, sql));
        let e = refused(d.path(), &a);
        assert!(
            e.contains("table_sql") || e.contains("invalid_archive"),
            "{sql}: {e}"
        );
        std::fs::remove_file(&a).unwrap();
    }
}

#[test]
fn an_archive_truncated_at_a_line_boundary_writes_nothing_and_names_its_first_error() {
    let d = tempfile::tempdir().unwrap();
    let text = example();
    // Up to the end of the second part: two parts and the closing missing.
    let cut = text.match_indices('\n').nth(2).unwrap().0 + 1;
    let a = d.path().join("cut.ndjson");
    std::fs::write(&a, &text[..cut]).unwrap();
    let e = refused(d.path(), &a);
    let v = ndarc(&["verify", "--format", "json", s(&a)]);
    let json: serde_json::Value = serde_json::from_slice(&v.stdout).unwrap();
    let errors = json["errors"]
        .as_u64()
        .or(json["files"][0]["errors"].as_u64());
    let errors = errors.unwrap_or_else(|| panic!("{json}"));
    let word = if errors == 1 { "error" } else { "errors" };
    assert!(e.contains(&format!("({errors} {word},")), "{e}");
    assert!(e.contains("first error: line "), "{e}");
}

#[test]
fn two_objects_that_map_to_one_path_are_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("base.ndjson");
    let o = ndarc(&[
        "gen",
        "--tables",
        "1",
        "--rows",
        "1",
        "--objects",
        "2",
        "--object-bytes",
        "1K",
        "-o",
        s(&base),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&base).unwrap();
    std::fs::remove_file(&base).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let keys: Vec<String> = manifest["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys.len(), 2);
    // The first object becomes bucket `files`, key `x/y`; the second
    // bucket `files/x`, key `y`: both DIR/objects/files/x/y.
    let rename = |o: &mut serde_json::Value| {
        if o["key"] == keys[0].as_str() {
            o["bucket"] = "files".into();
            o["key"] = "x/y".into();
        } else if o["key"] == keys[1].as_str() {
            o["bucket"] = "files/x".into();
            o["key"] = "y".into();
        }
    };
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["kind"] == "manifest" {
            v["objects"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .for_each(rename);
        } else if v["kind"] == "part" {
            for item in v["items"].as_array_mut().unwrap() {
                if item["kind"] == "object" {
                    rename(item);
                }
            }
        }
        lines.push(v.to_string());
    }
    let bytes = ndarc_gen::reseal((lines.join("\n") + "\n").as_bytes()).expect("reseal");
    let a = d.path().join("collide.ndjson");
    std::fs::write(&a, bytes).unwrap();
    let v = ndarc(&["verify", s(&a)]);
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
    let e = refused(d.path(), &a);
    assert!(e.contains("path_collision"), "{e}");
}

#[test]
fn force_over_a_database_leaves_none_of_its_log() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("x.db");
    // An old database whose last rows are only in its WAL.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
         CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB);
         INSERT INTO users VALUES (99, 'old', NULL);",
    )
    .unwrap();
    let wal = d.path().join("x.db-wal");
    assert!(wal.exists());
    // Keep the WAL: copy it aside before the connection checkpoints it on
    // close, and put it back.
    let saved = std::fs::read(&wal).unwrap();
    drop(c);
    std::fs::write(&wal, saved).unwrap();
    let a = d.path().join("example.ndjson");
    std::fs::write(&a, example()).unwrap();
    let o = ndarc(&["unpack", s(&a), "-o", s(&db), "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!wal.exists(), "the old WAL is gone");
    let c = rusqlite::Connection::open(&db).unwrap();
    let names: Vec<String> = c
        .prepare("SELECT name FROM users ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(names, ["Ada"], "the restored rows, not the old log's");
}

#[test]
fn standard_input_is_read_once_and_restored() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("x.db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .args(["unpack", "-", "-o", s(&db)])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(example().as_bytes()).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
}

#[cfg(unix)]
#[test]
fn sigterm_removes_the_temporary_files() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("big.ndjson");
    let o = ndarc(&["gen", "--rows", "400000", "--tables", "4", "-o", s(&a)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let db = out.join("x.db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .args(["unpack", s(&a), "-o", s(&db), "-j1"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the temporary database to appear, then stop the command.
    let started = std::time::Instant::now();
    while entries(&out).is_empty() {
        assert!(
            started.elapsed().as_secs() < 60,
            "no temporary file appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(0), "stopped before the end");
    assert_eq!(entries(&out), Vec::<String>::new(), "nothing left behind");
}
