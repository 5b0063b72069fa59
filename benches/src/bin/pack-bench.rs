//! `pack` and `unpack` throughput on a generated SQLite database, beside
//! `sqlite3 DB .dump`.
//!
//! ```sh
//! cargo build --release -p ndarc -p ndarc-benches
//! target/release/pack-bench [--mib 1024] [--dir target/bench-data]
//! ```
//!
//! Generates (deterministically, once; reused while the file exists) a
//! database of about `--mib` MiB: 10 tables with every affinity, integer,
//! composite and text primary keys, a WITHOUT ROWID table, rowid tables,
//! long text and blobs. Then runs, once each, under `/usr/bin/time -v` when
//! it exists (for peak memory):
//! - `ndarc pack DB -o ARCHIVE`: wall time, archive MB/s, peak RSS;
//! - `sqlite3 DB .dump > /dev/null` (when `sqlite3` is installed): wall time,
//!   and pack's time as a ratio of it;
//! - `ndarc unpack ARCHIVE -o DB2`: wall time, archive MB/s, peak RSS.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use ndarc_gen::Rng;

const WORDS: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
    "kilo", "lima", "mike", "november", "oscar", "papa",
];

fn words(rng: &mut Rng, lo: u64, span: u64) -> String {
    let n = lo + rng.below(span + 1);
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(rng.pick(&WORDS));
    }
    s
}

fn blob(rng: &mut Rng, lo: u64, span: u64) -> Vec<u8> {
    let n = lo + rng.below(span + 1);
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

const SCHEMA: &str = "
CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email VARCHAR(255), score REAL, balance NUMERIC, created_at INTEGER NOT NULL, is_admin BOOLEAN NOT NULL, bio TEXT, avatar BLOB, settings);
CREATE TABLE orders(user_id INTEGER NOT NULL, seq INTEGER NOT NULL, amount REAL NOT NULL, status VARCHAR(16) NOT NULL, note TEXT, PRIMARY KEY(user_id, seq));
CREATE TABLE events(kind TEXT NOT NULL, user_id INTEGER, payload TEXT, at INTEGER NOT NULL, data BLOB, weight FLOAT);
CREATE TABLE kv(ns TEXT NOT NULL, k TEXT NOT NULL, v BLOB NOT NULL, expires INTEGER, PRIMARY KEY(ns, k)) WITHOUT ROWID;
CREATE TABLE tags(name TEXT PRIMARY KEY, color CHAR(7) NOT NULL, weight REAL, description NVARCHAR(200));
CREATE TABLE docs(id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE files(id INTEGER PRIMARY KEY, name TEXT NOT NULL, bytes BLOB NOT NULL);
CREATE TABLE metrics(ts INTEGER NOT NULL, host TEXT NOT NULL, cpu REAL, mem NUMERIC, ok BOOLEAN);
CREATE TABLE audit(id TEXT PRIMARY KEY, actor INTEGER, message TEXT NOT NULL, detail);
CREATE TABLE misc(a, b INT, c TEXT, d REAL, e BLOB);
";

/// Inserts one row into table `t` (0..10) with row number `i`.
fn insert(tx: &rusqlite::Transaction<'_>, t: usize, i: i64, rng: &mut Rng) -> rusqlite::Result<()> {
    use rusqlite::params;
    match t {
        0 => tx
            .prepare_cached("INSERT INTO users VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)")?
            .execute(params![
                i,
                words(rng, 2, 0),
                format!("user{i}@example.com"),
                rng.unit() * 100.0,
                rng.range_i64(-100_000, 100_000),
                1_600_000_000_000i64 + i * 1000,
                rng.below(2) as i64,
                rng.one_in(4).then(|| words(rng, 40, 400)),
                rng.one_in(8).then(|| blob(rng, 256, 4096)),
                if rng.one_in(2) {
                    rusqlite::types::Value::Text(words(rng, 3, 0))
                } else {
                    rusqlite::types::Value::Integer(i)
                },
            ])?,
        1 => tx
            .prepare_cached("INSERT INTO orders VALUES(?1,?2,?3,?4,?5)")?
            .execute(params![
                i / 16,
                i % 16,
                rng.unit() * 1000.0,
                rng.pick(&["new", "paid", "shipped"]),
                rng.one_in(3).then(|| words(rng, 10, 0)),
            ])?,
        2 => tx
            .prepare_cached("INSERT INTO events VALUES(?1,?2,?3,?4,?5,?6)")?
            .execute(params![
                rng.pick(&["click", "view", "buy"]),
                rng.range_i64(1, 1_000_000),
                format!("{{\"k\":{},\"v\":\"{}\"}}", i, words(rng, 5, 0)),
                i,
                rng.one_in(5).then(|| blob(rng, 64, 512)),
                rng.unit(),
            ])?,
        3 => tx
            .prepare_cached("INSERT INTO kv VALUES(?1,?2,?3,?4)")?
            .execute(params![
                format!("ns{}", i % 7),
                format!("key{i:012}"),
                blob(rng, 16, 256),
                rng.one_in(2).then_some(i),
            ])?,
        4 => tx
            .prepare_cached("INSERT INTO tags VALUES(?1,?2,?3,?4)")?
            .execute(params![
                format!("tag-{i:010}"),
                "#a0b0c0",
                rng.unit(),
                words(rng, 8, 0),
            ])?,
        5 => tx
            .prepare_cached("INSERT INTO docs VALUES(?1,?2,?3)")?
            .execute(params![i, words(rng, 6, 0), words(rng, 200, 1500),])?,
        6 => tx
            .prepare_cached("INSERT INTO files VALUES(?1,?2,?3)")?
            .execute(params![i, format!("file-{i}.bin"), blob(rng, 1024, 16384),])?,
        7 => tx
            .prepare_cached("INSERT INTO metrics VALUES(?1,?2,?3,?4,?5)")?
            .execute(params![
                i,
                format!("host{}", i % 50),
                rng.unit() * 100.0,
                rng.range_i64(0, 1 << 40),
                rng.below(2) as i64,
            ])?,
        8 => tx
            .prepare_cached("INSERT INTO audit VALUES(?1,?2,?3,?4)")?
            .execute(params![
                format!("ev-{i:012}"),
                rng.range_i64(1, 1000),
                words(rng, 12, 0),
                if rng.one_in(2) {
                    rusqlite::types::Value::Real(rng.unit())
                } else {
                    rusqlite::types::Value::Text(words(rng, 4, 0))
                },
            ])?,
        _ => tx
            .prepare_cached("INSERT INTO misc VALUES(?1,?2,?3,?4,?5)")?
            .execute(params![
                words(rng, 3, 0),
                i,
                words(rng, 20, 0),
                rng.unit() * 1e6,
                blob(rng, 0, 128),
            ])?,
    };
    Ok(())
}

fn generate(path: &Path, mib: u64) -> rusqlite::Result<()> {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut conn = rusqlite::Connection::open(&tmp)?;
    conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
    conn.execute_batch(SCHEMA)?;
    let target = mib << 20;
    let mut rng = Rng::new(42);
    let mut i = 0i64;
    loop {
        let tx = conn.transaction()?;
        for _ in 0..20_000 {
            insert(&tx, (i % 10) as usize, i / 10, &mut rng)?;
            i += 1;
        }
        tx.commit()?;
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        if (pages * size) as u64 >= target {
            break;
        }
    }
    drop(conn);
    std::fs::rename(&tmp, path).expect("rename");
    eprintln!("generated {} ({i} rows)", path.display());
    Ok(())
}

/// Runs `cmd` (under `/usr/bin/time -v` when present), returning wall
/// seconds, CPU seconds (user + system; 0 when unknown) and peak RSS in KiB
/// (0 when unknown). On a shared machine the CPU time is the steadier
/// figure.
fn timed(mut args: Vec<String>, stdout: Option<&Path>) -> (f64, f64, u64) {
    let time = Path::new("/usr/bin/time").exists();
    if time {
        args.insert(0, "-v".to_string());
        args.insert(0, "/usr/bin/time".to_string());
    }
    let mut cmd = Command::new(&args[0]);
    cmd.args(&args[1..]).stderr(Stdio::piped());
    match stdout {
        Some(p) => cmd.stdout(std::fs::File::create(p).expect("stdout file")),
        None => cmd.stdout(Stdio::null()),
    };
    let start = Instant::now();
    let out = cmd.output().expect("run");
    let secs = start.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {err}");
    let rss = err
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let field = |name: &str| -> f64 {
        err.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    };
    let cpu = field("User time (seconds): ") + field("System time (seconds): ");
    (secs, cpu, rss)
}

fn main() {
    let mut mib = 1024u64;
    let mut dir = PathBuf::from("target/bench-data");
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_default();
        match k.as_str() {
            "--mib" => mib = v.parse().expect("--mib N"),
            "--dir" => dir = PathBuf::from(v),
            _ => panic!("unknown option {k}"),
        }
    }
    std::fs::create_dir_all(&dir).expect("bench dir");
    let db = dir.join(format!("pack-bench-{mib}.db"));
    if !db.exists() {
        generate(&db, mib).expect("generate");
    }
    let ndarc = std::env::current_exe()
        .expect("exe")
        .with_file_name("ndarc");
    assert!(
        ndarc.exists(),
        "build it first: cargo build --release -p ndarc"
    );
    let archive = dir.join(format!("pack-bench-{mib}.ndjson"));
    let s = |p: &Path| p.display().to_string();
    let db_bytes = std::fs::metadata(&db).expect("db").len() as f64;
    let (pack_s, pack_cpu, pack_rss) = timed(
        vec![
            s(&ndarc),
            "pack".into(),
            s(&db),
            "-o".into(),
            s(&archive),
            "--force".into(),
            "--exported-at".into(),
            "2026-01-01T00:00:00.000Z".into(),
        ],
        None,
    );
    let bytes = std::fs::metadata(&archive).expect("archive").len() as f64;
    println!(
        "pack: database {:.0} MB, archive {:.0} MB in {pack_s:.2} s wall = {:.0} MB/s of archive; {pack_cpu:.2} s CPU = {:.0} MB/s; peak RSS {} MiB",
        db_bytes / 1e6,
        bytes / 1e6,
        bytes / 1e6 / pack_s,
        bytes / 1e6 / pack_cpu.max(1e-9),
        pack_rss / 1024
    );
    if Command::new("sqlite3").arg("-version").output().is_ok() {
        let (dump_s, dump_cpu, _) = timed(vec!["sqlite3".into(), s(&db), ".dump".into()], None);
        println!(
            "sqlite3 .dump: {dump_s:.2} s wall, {dump_cpu:.2} s CPU; pack / .dump = {:.2} (wall), {:.2} (CPU)",
            pack_s / dump_s,
            pack_cpu / dump_cpu.max(1e-9)
        );
    }
    let back = dir.join(format!("pack-bench-{mib}.unpacked.db"));
    let (unpack_s, unpack_cpu, unpack_rss) = timed(
        vec![
            s(&ndarc),
            "unpack".into(),
            s(&archive),
            "-o".into(),
            s(&back),
            "--force".into(),
        ],
        None,
    );
    println!(
        "unpack: {:.0} MB of archive in {unpack_s:.2} s wall = {:.0} MB/s; {unpack_cpu:.2} s CPU = {:.0} MB/s (verification included); peak RSS {} MiB",
        bytes / 1e6,
        bytes / 1e6 / unpack_s,
        bytes / 1e6 / unpack_cpu.max(1e-9),
        unpack_rss / 1024
    );
    let _ = std::fs::remove_file(&back);
}
