//! `ndarc unpack`: restore an archive into a database, and refuse what
//! cannot be restored without leaving anything behind.

use std::path::Path;
use std::process::{Command, Output};

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

/// The example archive after `edit`, resealed (still valid).
fn edited(dir: &Path, edit: impl Fn(String) -> String) -> std::path::PathBuf {
    let bytes = ndarc_gen::reseal(edit(example()).as_bytes()).expect("reseal");
    let p = dir.join("edited.ndjson");
    std::fs::write(&p, bytes).unwrap();
    p
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = walk(dir);
    v.sort();
    v
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        out.push(p.display().to_string());
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        }
    }
    out
}

#[test]
fn restores_the_example_with_its_object_and_payload() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("example.ndjson");
    std::fs::write(&a, example()).unwrap();
    let db = d.path().join("x.db");
    let files = d.path().join("files");
    let o = ndarc(&["unpack", s(&a), "-o", s(&db), "--objects-dir", s(&files)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(files.join("objects/files/greeting.txt")).unwrap(),
        b"hello, world\n"
    );
    assert_eq!(std::fs::read(files.join("payloads/kv")).unwrap(), b"{}");
    let text = file_text(&db);
    assert!(
        text.contains("CREATE TABLE notes"),
        "the schema is in the file"
    );
    // Without --objects-dir the database alone is written, with a note.
    let db2 = d.path().join("y.db");
    let o = ndarc(&["unpack", s(&a), "-o", s(&db2)]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("2 objects and payloads not written"),
        "{}",
        stderr(&o)
    );
}

/// Table names in the database file, read without SQLite: its schema text.
fn file_text(db: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(db).unwrap()).into_owned()
}

#[test]
fn sql_that_sqlite_rejects_is_one_line_exit_1_and_no_output() {
    let d = tempfile::tempdir().unwrap();
    let a = edited(d.path(), |t| {
        t.replace(
            "CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))",
            "CREATE TABLE notes(body TEXT,, user_id INTEGER)",
        )
    });
    // Verification judges the sql with SQLite first (table_sql).
    let o = ndarc(&["verify", s(&a)]);
    assert_eq!(o.status.code(), Some(1), "the edited archive is invalid");
    assert!(String::from_utf8_lossy(&o.stdout).contains("table_sql"));
    let before = entries(d.path());
    let o = ndarc(&[
        "unpack",
        s(&a),
        "-o",
        s(&d.path().join("x.db")),
        "--objects-dir",
        s(&d.path().join("files")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains(": invalid_archive: ") && e.contains("table_sql"),
        "{e}"
    );
    assert_eq!(entries(d.path()), before, "nothing left behind");
}

#[test]
fn object_keys_cannot_escape_the_directory() {
    let d = tempfile::tempdir().unwrap();
    let a = edited(d.path(), |t| t.replace("greeting.txt", "../escape.txt"));
    let before = entries(d.path());
    let o = ndarc(&[
        "unpack",
        s(&a),
        "-o",
        s(&d.path().join("x.db")),
        "--objects-dir",
        s(&d.path().join("files")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("unsafe_path"), "{}", stderr(&o));
    assert_eq!(entries(d.path()), before);
    // A symbolic link already in the directory is not followed.
    let files = d.path().join("files");
    std::fs::create_dir_all(files.join("objects")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), files.join("objects/files")).unwrap();
    let a = edited(d.path(), |t| t);
    let o = ndarc(&[
        "unpack",
        s(&a),
        "-o",
        s(&d.path().join("x.db")),
        "--objects-dir",
        s(&files),
    ]);
    #[cfg(unix)]
    {
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("unsafe_path") && stderr(&o).contains("symbolic link"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        assert!(!d.path().join("x.db").exists());
    }
}

#[test]
fn an_invalid_archive_is_exit_1_and_an_existing_output_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("bad.ndjson");
    std::fs::write(&a, example().replace("\"first\"", "\"First\"")).unwrap();
    let db = d.path().join("x.db");
    let o = ndarc(&["unpack", s(&a), "-o", s(&db)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("invalid_archive"), "{}", stderr(&o));
    assert!(!db.exists());
    std::fs::write(&db, b"keep").unwrap();
    let good = d.path().join("good.ndjson");
    std::fs::write(&good, example()).unwrap();
    let o = ndarc(&["unpack", s(&good), "-o", s(&db)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("output_exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&db).unwrap(), b"keep");
    let o = ndarc(&["unpack", s(&good), "-o", s(&db), "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read(&db)
        .unwrap()
        .starts_with(b"SQLite format 3\0"));
}

/// Runs `ndarc ARGS` under `umask 022`.
#[cfg(unix)]
fn with_umask_022(args: &[&str]) -> Output {
    let mut script = String::from("umask 022; exec \"$0\"");
    for i in 1..=args.len() {
        script.push_str(&format!(" \"${i}\""));
    }
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_ndarc"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("ndarc runs")
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
#[test]
fn outputs_are_private_whatever_the_umask_unless_mode_says_otherwise() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("example.ndjson");
    std::fs::write(&a, example()).unwrap();
    let check = |sub: &str, extra: &[&str], file: u32, dir: u32| {
        let db = d.path().join(format!("{sub}.db"));
        // Two levels that do not exist yet: unpack makes both.
        let files = d.path().join(sub).join("files");
        let mut args = vec!["unpack", s(&a), "-o", s(&db), "--objects-dir", s(&files)];
        args.extend_from_slice(extra);
        let o = with_umask_022(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        for f in [
            db.clone(),
            files.join("objects/files/greeting.txt"),
            files.join("payloads/kv"),
        ] {
            assert_eq!(mode(&f), file, "{}: {:o}", f.display(), mode(&f));
        }
        for p in [
            d.path().join(sub),
            files.clone(),
            files.join("objects"),
            files.join("objects/files"),
            files.join("payloads"),
        ] {
            assert_eq!(mode(&p), dir, "{}: {:o}", p.display(), mode(&p));
        }
    };
    check("private", &[], 0o600, 0o700);
    check("shared", &["--mode", "640"], 0o640, 0o750);
    // A file replaced with --force keeps its mode.
    let db = d.path().join("private.db");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o604)).unwrap();
    }
    let o = with_umask_022(&["unpack", s(&a), "-o", s(&db), "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(mode(&db), 0o604);
}

#[test]
fn a_directory_as_output_says_to_name_a_file_not_to_force() {
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.ndjson");
    std::fs::write(&good, example()).unwrap();
    for force in [false, true] {
        let mut args = vec!["unpack", s(&good), "-o", s(d.path())];
        if force {
            args.push("--force");
        }
        let o = ndarc(&args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("output_exists"), "{e}");
        assert!(
            e.contains("is a directory; -o names the database file to write"),
            "{e}"
        );
        assert!(!e.contains("--force"), "{e}");
    }
    assert_eq!(entries(d.path()), [good.display().to_string()]);
}
