//! A full disk: every command that writes a file, when a write fails
//! (simulated with the file size limit, `ulimit -f`, under which a write
//! fails with EFBIG), exits 2 with a message naming the file and the
//! cause, leaves no temporary file behind and does not replace the file it
//! was to replace.
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_ndarc");

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `ndarc ARGS` in `dir` with files limited to `kib` KiB. With
/// `trap`, SIGXFSZ is ignored by the shell (and so by ndarc); without,
/// ndarc must cope with the default disposition itself.
fn limited(dir: &Path, kib: u64, trap: bool, args: &[&str]) -> Output {
    // `ulimit -f` counts 512-byte blocks in POSIX sh (dash), 1024 in bash;
    // ask for blocks of 512 and accept that bash allows twice as much.
    let mut script = format!(
        "{}ulimit -f {}; exec \"$0\"",
        if trap { "trap '' XFSZ; " } else { "" },
        kib * 2
    );
    for i in 1..=args.len() {
        script.push_str(&format!(" \"${i}\""));
    }
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run ndarc")
}

fn ndarc(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run ndarc")
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = walk(dir, dir);
    v.sort();
    v
}

fn walk(root: &Path, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        out.push(
            p.strip_prefix(root)
                .expect("under root")
                .display()
                .to_string(),
        );
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(root, &p));
        }
    }
    out
}

/// A database whose archive is about 1.5 MB: 3,000 rows of 500 characters.
fn big_database(path: &Path) {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
         INSERT INTO t SELECT i, printf('%0500d', i) FROM n;",
    )
    .expect("fill");
}

/// Runs `args` (whose output is `out` in `dir`) under a 64 KiB limit, with
/// and without SIGXFSZ ignored, over an existing `out` with `--force`, and
/// checks exit 2, the message, no temporary file, `out` untouched.
fn refuses_cleanly(dir: &Path, out: &str, args: &[&str]) {
    std::fs::write(dir.join(out), b"keep").expect("write");
    let before = entries(dir);
    for trap in [true, false] {
        let mut forced: Vec<&str> = args.to_vec();
        forced.push("--force");
        let o = limited(dir, 64, trap, &forced);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?} trap {trap}: {o:?}");
        assert_eq!(e.lines().count(), 1, "{args:?}: one line: {e}");
        // SQLite reports the database's failed write as a disk I/O
        // error, with ndarc's hint.
        let cause = e.to_lowercase();
        assert!(
            e.contains(out) && (cause.contains("file too large") || cause.contains("disk is full")),
            "{args:?}: the file and the cause: {e}"
        );
        assert_eq!(entries(dir), before, "{args:?} trap {trap}: nothing left");
        assert_eq!(std::fs::read(dir.join(out)).expect("read"), b"keep");
    }
    std::fs::remove_file(dir.join(out)).expect("remove");
}

#[test]
fn pack_and_unpack_on_a_full_disk_exit_2_and_leave_nothing() {
    let d = tempfile::tempdir().expect("tempdir");
    let dir = d.path();
    big_database(&dir.join("big.db"));
    let o = ndarc(dir, &["pack", "big.db", "-o", "big.ndjson"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        std::fs::metadata(dir.join("big.ndjson"))
            .expect("archive")
            .len()
            > 1 << 20
    );

    refuses_cleanly(dir, "out.ndjson", &["pack", "big.db", "-o", "out.ndjson"]);
    refuses_cleanly(dir, "out.db", &["unpack", "big.ndjson", "-o", "out.db"]);

    // An object larger than the limit: its file fails, the database and
    // the directories made for it are removed again.
    let objects = dir.join("objects-in");
    std::fs::create_dir(&objects).expect("mkdir");
    std::fs::write(objects.join("large.bin"), vec![7u8; 200 << 10]).expect("object");
    std::fs::write(dir.join("small.db"), b"").expect("db");
    let conn = rusqlite::Connection::open(dir.join("small.db")).expect("open");
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
        .expect("fill");
    drop(conn);
    let o = ndarc(
        dir,
        &[
            "pack",
            "small.db",
            "-o",
            "objects.ndjson",
            "--objects-dir",
            "objects-in",
            "--bucket",
            "B",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = entries(dir);
    let o = limited(
        dir,
        64,
        true,
        &[
            "unpack",
            "objects.ndjson",
            "-o",
            "restored.db",
            "--objects-dir",
            "files",
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        e.contains("output_failed") && e.contains("files/objects/B/large.bin"),
        "{e}"
    );
    assert_eq!(entries(dir), before, "nothing left");
}

#[test]
fn every_atomic_writer_on_a_full_disk_exits_2_and_leaves_nothing() {
    let d = tempfile::tempdir().expect("tempdir");
    let dir = d.path();
    let o = ndarc(dir, &["gen", "--rows", "3000", "-o", "in.ndjson"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::metadata(dir.join("in.ndjson")).expect("gen").len() > 256 << 10);
    refuses_cleanly(
        dir,
        "gen.ndjson",
        &["gen", "--rows", "3000", "-o", "gen.ndjson"],
    );
    refuses_cleanly(
        dir,
        "canon.ndjson",
        &["canon", "in.ndjson", "-o", "canon.ndjson"],
    );
    refuses_cleanly(
        dir,
        "repart.ndjson",
        &[
            "repart",
            "--part-bytes",
            "64K",
            "in.ndjson",
            "-o",
            "repart.ndjson",
        ],
    );
}
