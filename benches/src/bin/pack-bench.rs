//! `pack` and `unpack` throughput on SQLite databases of several row
//! shapes, beside SQLite's own tools.
//!
//! ```sh
//! cargo build --release -p ndarc -p ndarc-benches
//! target/release/pack-bench [--shape mixed|narrow|chinook|all] [--mib 1024] [--rows 400000] [--runs 3] [--dir target/bench-data] [--ndarc PATH]
//! ```
//!
//! `--ndarc PATH` times another build of `ndarc` (an older one, to
//! compare) instead of the one beside this binary.
//!
//! The databases (generated deterministically, once; reused while the
//! file exists):
//! - `mixed` (the default): about `--mib` MiB, 10 tables with every
//!   affinity, integer, composite and text primary keys, a WITHOUT ROWID
//!   table, rowid tables, long text and blobs;
//! - `narrow`: `ndarc gen --shape narrow --rows N/8` restored by
//!   `ndarc unpack` (eight tables of 4 to 7 short columns, `--rows` rows
//!   in all);
//! - `chinook`: the Chinook sample schema (artists, albums, tracks,
//!   customers, invoices, invoice lines, playlists) with `--rows`
//!   invoice lines and the other tables in proportion; dates are TEXT
//!   columns (the original's DATETIME text is refused by `pack`).
//!
//! For each, best (least CPU) of `--runs`, the commands alternated run by
//! run, each under `/usr/bin/time -v` when it exists (CPU = user +
//! system, the steadier figure on a shared machine; peak RSS):
//! - `ndarc pack DB -o ARCHIVE` beside `sqlite3 DB .dump > /dev/null`;
//! - `ndarc unpack ARCHIVE -o NEW` (verification included) beside
//!   `sqlite3 NEW2 '.read DUMP'` (the dump made once, untimed) and beside
//!   a plain loop of prepared INSERTs in one transaction through rusqlite
//!   (`journal_mode = OFF`, `synchronous = OFF`, foreign keys off, as
//!   `unpack` sets them),
//!   run in a child process with every row already in memory, so that
//!   its time is SQLite's inserting alone; and beside SQLite copying the
//!   rows itself from the database (`INSERT INTO t SELECT * FROM src.t
//!   WHERE 1`, same pragmas, no binding): the floor of any restore
//!   through SQL on the host.

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

/// Builds a Chinook-like database: `lines` invoice lines and the other
/// tables in proportion (as in Chinook: about 7 lines per invoice, 4
/// invoices per customer, 13 tracks per album).
fn chinook(path: &Path, lines: u64) -> rusqlite::Result<()> {
    use rusqlite::params;
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut conn = rusqlite::Connection::open(&tmp)?;
    conn.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
CREATE TABLE Artist(ArtistId INTEGER NOT NULL PRIMARY KEY, Name NVARCHAR(120));
CREATE TABLE Album(AlbumId INTEGER NOT NULL PRIMARY KEY, Title NVARCHAR(160) NOT NULL, ArtistId INTEGER NOT NULL REFERENCES Artist(ArtistId));
CREATE TABLE Genre(GenreId INTEGER NOT NULL PRIMARY KEY, Name NVARCHAR(120));
CREATE TABLE MediaType(MediaTypeId INTEGER NOT NULL PRIMARY KEY, Name NVARCHAR(120));
CREATE TABLE Track(TrackId INTEGER NOT NULL PRIMARY KEY, Name NVARCHAR(200) NOT NULL, AlbumId INTEGER REFERENCES Album(AlbumId), MediaTypeId INTEGER NOT NULL REFERENCES MediaType(MediaTypeId), GenreId INTEGER REFERENCES Genre(GenreId), Composer NVARCHAR(220), Milliseconds INTEGER NOT NULL, Bytes INTEGER, UnitPrice NUMERIC(10,2) NOT NULL);
CREATE TABLE Customer(CustomerId INTEGER NOT NULL PRIMARY KEY, FirstName NVARCHAR(40) NOT NULL, LastName NVARCHAR(20) NOT NULL, Company NVARCHAR(80), Address NVARCHAR(70), City NVARCHAR(40), State NVARCHAR(40), Country NVARCHAR(40), PostalCode NVARCHAR(10), Phone NVARCHAR(24), Fax NVARCHAR(24), Email NVARCHAR(60) NOT NULL, SupportRepId INTEGER);
CREATE TABLE Invoice(InvoiceId INTEGER NOT NULL PRIMARY KEY, CustomerId INTEGER NOT NULL REFERENCES Customer(CustomerId), InvoiceDate TEXT NOT NULL, BillingAddress NVARCHAR(70), BillingCity NVARCHAR(40), BillingState NVARCHAR(40), BillingCountry NVARCHAR(40), BillingPostalCode NVARCHAR(10), Total NUMERIC(10,2) NOT NULL);
CREATE TABLE InvoiceLine(InvoiceLineId INTEGER NOT NULL PRIMARY KEY, InvoiceId INTEGER NOT NULL REFERENCES Invoice(InvoiceId), TrackId INTEGER NOT NULL REFERENCES Track(TrackId), UnitPrice NUMERIC(10,2) NOT NULL, Quantity INTEGER NOT NULL);
CREATE TABLE Playlist(PlaylistId INTEGER NOT NULL PRIMARY KEY, Name NVARCHAR(120));
CREATE TABLE PlaylistTrack(PlaylistId INTEGER NOT NULL REFERENCES Playlist(PlaylistId), TrackId INTEGER NOT NULL REFERENCES Track(TrackId), PRIMARY KEY(PlaylistId, TrackId)) WITHOUT ROWID;",
    )?;
    let mut rng = Rng::new(7);
    let invoices = (lines / 7).max(1) as i64;
    let customers = (invoices / 4).max(1);
    let tracks = (lines / 2).max(1) as i64;
    let albums = (tracks / 13).max(1);
    let artists = (albums / 2).max(1);
    let tx = conn.transaction()?;
    for (t, n) in [("Genre", 25i64), ("MediaType", 5), ("Playlist", 18)] {
        for i in 1..=n {
            tx.prepare_cached(&format!("INSERT INTO {t} VALUES(?1, ?2)"))?
                .execute(params![i, words(&mut rng, 1, 2)])?;
        }
    }
    for i in 1..=artists {
        tx.prepare_cached("INSERT INTO Artist VALUES(?1, ?2)")?
            .execute(params![i, words(&mut rng, 1, 3)])?;
    }
    for i in 1..=albums {
        tx.prepare_cached("INSERT INTO Album VALUES(?1, ?2, ?3)")?
            .execute(params![i, words(&mut rng, 1, 4), 1 + (i - 1) % artists])?;
    }
    for i in 1..=tracks {
        tx.prepare_cached("INSERT INTO Track VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)")?
            .execute(params![
                i,
                words(&mut rng, 1, 5),
                1 + (i - 1) / 13 % albums,
                rng.range_i64(1, 5),
                rng.range_i64(1, 25),
                rng.one_in(3).then(|| words(&mut rng, 2, 4)),
                rng.range_i64(60_000, 600_000),
                rng.range_i64(1_000_000, 20_000_000),
                if rng.one_in(10) { 1.99 } else { 0.99 },
            ])?;
    }
    for i in 1..=customers {
        tx.prepare_cached(
            "INSERT INTO Customer VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
        )?
        .execute(params![
            i,
            words(&mut rng, 1, 0),
            words(&mut rng, 1, 0),
            rng.one_in(4).then(|| words(&mut rng, 2, 2)),
            format!(
                "{} {} Street",
                rng.range_i64(1, 9999),
                words(&mut rng, 1, 1)
            ),
            words(&mut rng, 1, 1),
            rng.one_in(2).then_some("CA"),
            rng.pick(&["USA", "Canada", "Brazil", "France", "Germany", "India"]),
            format!("{:05}", rng.range_i64(0, 99_999)),
            format!(
                "+1 ({}) 555-{:04}",
                rng.range_i64(200, 999),
                rng.range_i64(0, 9999)
            ),
            rng.one_in(5)
                .then(|| format!("+1 555-{:04}", rng.range_i64(0, 9999))),
            format!("customer{i}@example.com"),
            rng.range_i64(3, 5),
        ])?;
    }
    for i in 1..=invoices {
        tx.prepare_cached("INSERT INTO Invoice VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)")?
            .execute(params![
                i,
                1 + (i - 1) % customers,
                format!(
                    "20{:02}-{:02}-{:02} 00:00:00",
                    9 + i % 5,
                    1 + i % 12,
                    1 + i % 28
                ),
                format!(
                    "{} {} Street",
                    rng.range_i64(1, 9999),
                    words(&mut rng, 1, 1)
                ),
                words(&mut rng, 1, 1),
                rng.one_in(2).then_some("CA"),
                rng.pick(&["USA", "Canada", "Brazil", "France", "Germany", "India"]),
                format!("{:05}", rng.range_i64(0, 99_999)),
                (rng.range_i64(99, 2500) as f64) / 100.0,
            ])?;
    }
    for i in 1..=lines as i64 {
        tx.prepare_cached("INSERT INTO InvoiceLine VALUES(?1,?2,?3,?4,?5)")?
            .execute(params![
                i,
                1 + (i - 1) / 7 % invoices,
                rng.range_i64(1, tracks),
                if rng.one_in(10) { 1.99 } else { 0.99 },
                1,
            ])?;
    }
    for p in 1..=18i64 {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..(tracks / 6).max(1) {
            seen.insert(rng.range_i64(1, tracks));
        }
        for t in seen {
            tx.prepare_cached("INSERT INTO PlaylistTrack VALUES(?1, ?2)")?
                .execute(params![p, t])?;
        }
    }
    tx.commit()?;
    drop(conn);
    std::fs::rename(&tmp, path).expect("rename");
    eprintln!("generated {} ({lines} invoice lines)", path.display());
    Ok(())
}

/// Internal (`--insert-loop SRC DST`): copies every row of SRC into a new
/// database DST with SRC's tables, through one prepared INSERT per table
/// inside one transaction (every row read into memory first, so this is
/// SQLite's inserting alone), then SQLite's own copy of the rows; prints
/// the seconds each took.
fn insert_loop(src: &Path, dst: &Path) -> rusqlite::Result<()> {
    use rusqlite::types::Value;
    let from = rusqlite::Connection::open(src)?;
    let tables: Vec<(String, String)> = from
        .prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut data: Vec<(String, usize, Vec<Value>)> = Vec::new();
    for (name, _) in &tables {
        let mut st = from.prepare(&format!("SELECT * FROM \"{}\"", name.replace('"', "\"\"")))?;
        let width = st.column_count();
        let mut cells = Vec::new();
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            for i in 0..width {
                cells.push(r.get::<_, Value>(i)?);
            }
        }
        data.push((name.clone(), width, cells));
    }
    drop(from);
    let _ = std::fs::remove_file(dst);
    let mut to = rusqlite::Connection::open(dst)?;
    to.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF;",
    )?;
    let t = Instant::now();
    let tx = to.transaction()?;
    for ((_, sql), (name, width, cells)) in tables.iter().zip(&data) {
        tx.execute_batch(sql)?;
        let marks = vec!["?"; *width].join(",");
        let mut st = tx.prepare(&format!(
            "INSERT INTO \"{}\" VALUES({marks})",
            name.replace('"', "\"\"")
        ))?;
        for row in cells.chunks(*width) {
            st.execute(rusqlite::params_from_iter(row.iter()))?;
        }
    }
    tx.commit()?;
    drop(to);
    let inserts = t.elapsed().as_secs_f64();
    // SQLite's own copy of the same rows into a second new database: no
    // binding and no parsing, the floor of any restore through SQL on this
    // host (`WHERE 1` keeps SQLite from copying the pages whole, its
    // transfer optimisation).
    let copy = dst.with_extension("copy.db");
    let _ = std::fs::remove_file(&copy);
    let to = rusqlite::Connection::open(&copy)?;
    to.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF;",
    )?;
    for (_, sql) in &tables {
        to.execute_batch(sql)?;
    }
    to.execute("ATTACH ?1 AS src", [src.to_string_lossy()])?;
    let t = Instant::now();
    to.execute_batch("BEGIN")?;
    for (name, _) in &tables {
        let q = name.replace('"', "\"\"");
        to.execute_batch(&format!(
            "INSERT INTO main.\"{q}\" SELECT * FROM src.\"{q}\" WHERE 1"
        ))?;
    }
    to.execute_batch("COMMIT")?;
    drop(to);
    let copied = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&copy);
    println!("{inserts} {copied}");
    Ok(())
}

/// Best (least CPU) of each command's runs: (wall, CPU, peak KiB).
type Best = Option<(f64, f64, u64)>;

fn keep_best(best: &mut Best, r: (f64, f64, u64)) {
    if best.is_none_or(|b| r.1 < b.1) {
        *best = Some(r);
    }
}

/// Runs the comparisons on `db`.
fn compare(ndarc: &Path, db: &Path, runs: usize, have_sqlite3: bool) {
    let s = |p: &Path| p.display().to_string();
    let archive = db.with_extension("ndjson");
    let back = db.with_extension("unpacked.db");
    let loaded = db.with_extension("loaded.db");
    let looped = db.with_extension("looped.db");
    let dump = db.with_extension("dump.sql");
    if have_sqlite3 && !dump.exists() {
        timed(vec!["sqlite3".into(), s(db), ".dump".into()], Some(&dump));
    }
    let exe = std::env::current_exe().expect("exe");
    let (mut pack, mut dumped, mut unpack, mut load, mut inserts) = (None, None, None, None, None);
    let (mut insert_wall, mut copy_wall) = (f64::MAX, f64::MAX);
    for _ in 0..runs.max(1) {
        keep_best(
            &mut pack,
            timed(
                vec![
                    s(ndarc),
                    "pack".into(),
                    s(db),
                    "-o".into(),
                    s(&archive),
                    "--force".into(),
                    "--exported-at".into(),
                    "2026-01-01T00:00:00.000Z".into(),
                ],
                None,
            ),
        );
        if have_sqlite3 {
            keep_best(
                &mut dumped,
                timed(vec!["sqlite3".into(), s(db), ".dump".into()], None),
            );
        }
        keep_best(
            &mut unpack,
            timed(
                vec![
                    s(ndarc),
                    "unpack".into(),
                    s(&archive),
                    "-o".into(),
                    s(&back),
                    "--force".into(),
                ],
                None,
            ),
        );
        if have_sqlite3 {
            let _ = std::fs::remove_file(&loaded);
            keep_best(
                &mut load,
                timed(
                    vec!["sqlite3".into(), s(&loaded), format!(".read {}", s(&dump))],
                    None,
                ),
            );
        }
        let out_file = db.with_extension("loop.out");
        keep_best(
            &mut inserts,
            timed(
                vec![s(&exe), "--insert-loop".into(), s(db), s(&looped)],
                Some(&out_file),
            ),
        );
        let out = std::fs::read_to_string(&out_file).unwrap_or_default();
        let mut walls = out.split_whitespace().map(|w| w.parse::<f64>().ok());
        if let Some(Some(w)) = walls.next() {
            insert_wall = insert_wall.min(w);
        }
        if let Some(Some(w)) = walls.next() {
            copy_wall = copy_wall.min(w);
        }
    }
    let db_mb = std::fs::metadata(db).map_or(0.0, |m| m.len() as f64 / 1e6);
    let mb = std::fs::metadata(&archive).map_or(0.0, |m| m.len() as f64 / 1e6);
    let rows: i64 = {
        let c = rusqlite::Connection::open(db).expect("open");
        let names: Vec<String> = c
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            )
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
            .unwrap_or_default();
        names
            .iter()
            .map(|n| {
                c.query_row(
                    &format!("SELECT count(*) FROM \"{}\"", n.replace('"', "\"\"")),
                    [],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap_or(0)
            })
            .sum()
    };
    println!(
        "{}: database {db_mb:.0} MB, {rows} rows; archive {mb:.0} MB",
        db.display()
    );
    let line = |what: &str, r: Best, base: Best| {
        let Some((wall, cpu, kib)) = r else {
            println!("  {what:<44} (not run)");
            return;
        };
        let ratio = base.map_or(String::new(), |(_, c0, _)| {
            format!("  {:.2}x the CPU of the first", cpu / c0.max(1e-9))
        });
        println!(
            "  {what:<44} {wall:>7.2} s wall {cpu:>7.2} s CPU  {:>6.0} MB/s of archive (CPU)  peak RSS {:>4} MiB{ratio}",
            mb / cpu.max(1e-9),
            kib / 1024
        );
    };
    line("sqlite3 DB .dump > /dev/null", dumped, None);
    line("ndarc pack DB -o ARCHIVE", pack, dumped);
    line("sqlite3 NEW '.read DUMP'", load, None);
    line("ndarc unpack ARCHIVE -o NEW", unpack, load);
    line("rusqlite INSERT loop (child, whole)", inserts, load);
    if insert_wall < f64::MAX {
        println!(
            "  rusqlite INSERT loop, inserts alone: {insert_wall:.2} s wall = {:.0} MB/s of archive",
            mb / insert_wall
        );
    }
    if copy_wall < f64::MAX {
        println!(
            "  SQLite INSERT … SELECT from DB (its floor): {copy_wall:.2} s wall = {:.0} MB/s of archive",
            mb / copy_wall
        );
    }
    for p in [&back, &loaded, &looped] {
        let _ = std::fs::remove_file(p);
    }
}

/// The command line, for `--help` and usage errors.
const USAGE: &str = "usage: pack-bench [--shape mixed|narrow|chinook|all] [--mib N] [--rows N] \
                     [--runs N] [--dir DIR] [--ndarc PATH]\n       pack-bench --insert-loop SRC DST";

fn main() {
    let mut mib = 1024u64;
    let mut rows = 400_000u64;
    let mut runs = 3usize;
    let mut shape = String::from("mixed");
    let mut dir = PathBuf::from("target/bench-data");
    let mut ndarc_at: Option<PathBuf> = None;
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_default();
        match k.as_str() {
            "--mib" => mib = v.parse().expect("--mib N"),
            "--rows" => rows = v.parse().expect("--rows N"),
            "--runs" => runs = v.parse().expect("--runs N"),
            "--shape" => shape = v,
            "--dir" => dir = PathBuf::from(v),
            "--ndarc" => ndarc_at = Some(PathBuf::from(v)),
            "--insert-loop" => {
                let dst = it.next().expect("--insert-loop SRC DST");
                insert_loop(Path::new(&v), Path::new(&dst)).expect("insert loop");
                return;
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return;
            }
            _ => {
                eprintln!("pack-bench: unknown option {k}\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    if !["mixed", "narrow", "chinook", "all"].contains(&shape.as_str()) {
        eprintln!("pack-bench: --shape takes mixed, narrow, chinook or all, not {shape}");
        std::process::exit(2);
    }
    std::fs::create_dir_all(&dir).expect("bench dir");
    let ndarc = ndarc_at.unwrap_or_else(|| {
        std::env::current_exe()
            .expect("exe")
            .with_file_name("ndarc")
    });
    assert!(
        ndarc.exists(),
        "build it first: cargo build --release -p ndarc"
    );
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        .unwrap_or_default();
    let have_sqlite3 = Command::new("sqlite3").arg("-version").output().is_ok();
    println!(
        "machine: {cpu}, {} core(s); SHA-256 kernel: {}; sqlite3: {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        ndarc_sha::kernel(),
        if have_sqlite3 {
            "found"
        } else {
            "not installed (its columns are skipped)"
        }
    );
    let shapes: Vec<&str> = match shape.as_str() {
        "all" => vec!["mixed", "narrow", "chinook"],
        one => vec![one],
    };
    for sh in shapes {
        let db = match sh {
            "mixed" => {
                let db = dir.join(format!("pack-bench-{mib}.db"));
                if !db.exists() {
                    generate(&db, mib).expect("generate");
                }
                db
            }
            "narrow" => {
                let db = dir.join(format!("pack-bench-narrow-{rows}.db"));
                if !db.exists() {
                    let archive = dir.join(format!("pack-bench-narrow-{rows}.gen.ndjson"));
                    let s = |p: &Path| p.display().to_string();
                    timed(
                        vec![
                            s(&ndarc),
                            "gen".into(),
                            "--shape".into(),
                            "narrow".into(),
                            "--rows".into(),
                            (rows / 8).max(1).to_string(),
                            "--part-bytes".into(),
                            "1M".into(),
                            "-o".into(),
                            s(&archive),
                            "--force".into(),
                        ],
                        None,
                    );
                    timed(
                        vec![s(&ndarc), "unpack".into(), s(&archive), "-o".into(), s(&db)],
                        None,
                    );
                    let _ = std::fs::remove_file(&archive);
                }
                db
            }
            "chinook" => {
                let db = dir.join(format!("pack-bench-chinook-{rows}.db"));
                if !db.exists() {
                    chinook(&db, rows).expect("chinook");
                }
                db
            }
            other => unreachable!("--shape {other} was checked"),
        };
        compare(&ndarc, &db, runs, have_sqlite3);
    }
}
