//! `ndarc diff` throughput and memory on two generated exports.
//!
//! ```sh
//! cargo run --release -p ndarc-benches --bin diff-bench -- [--rows 5000000] [--shape mixed|narrow] [--dir target/bench-data] [--runs 3]
//! ```
//!
//! Generates (deterministically, once; reused while the files exist) a first
//! export of about `--rows` rows over eight tables of mixed key kinds (or,
//! with `--shape narrow`, the eight narrow tables of `gen --shape narrow`
//! in 1 MiB parts: about 780 MB for 5 M rows) and a
//! "later export" of it (ndarc-gen `Later`): 1 % of rows changed, 0.2 %
//! added, 0.2 % removed, one object and a payload changed. With the default
//! 5 M rows each file is about 1 GiB.
//!
//! Then, best of `--runs` (and the median wall), each in a fresh child
//! process so that its peak memory is the diff's alone, it runs
//! `ndarc_diff::diff` on the two files verified (the default) and with
//! `no_verify`, and reports wall time,
//! MB/s over both inputs, and peak resident memory (VmHWM from
//! /proc/self/status: inputs are read through bounded buffers, not mapped,
//! so this is the diff's own memory).
//!
//! With `--sqldiff` (build `ndarc` first: `cargo build --release -p ndarc
//! -p ndarc-benches`), it instead restores both archives as databases
//! (`ndarc unpack`, once, reused) and times, alternating the commands run
//! by run, under `/usr/bin/time -v` (wall, CPU = user + system, peak RSS):
//! `sqldiff a.db b.db` (Debian: `apt-get install sqlite3-tools`; its rows
//! are skipped when it is missing) and `sqldiff --primarykey a.db b.db`
//! (rows matched by primary key, as ndarc matches them, rather than by
//! rowid), `ndarc diff A B --format sql` on the
//! archives, `ndarc diff a.db b.db --format sql` on the databases (each
//! packed on the fly), and `ndarc diff -q A B`; best of `--runs` each (and
//! each one's median wall), with ratios to sqldiff. `--ndarc PATH` times
//! another build of `ndarc` (an older one, to compare) instead of the one
//! beside this binary.
//!
//! With `--shuffle`, the second export's rows (of its tables without
//! rowid: five of the eight narrow tables, rowid tables must stay in
//! rowid order) come in a shuffled order (`gen --shuffle-rows 1`), so
//! that the diff matches them through its index instead of the merge.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ndarc_gen::{GenOptions, Later, Rows, TableKind};

/// The command line, for `--help` and usage errors.
const USAGE: &str = "usage: diff-bench [--rows N] [--shape mixed|narrow] [--dir DIR] [--runs N] \
                     [--sqldiff] [--shuffle] [--ndarc PATH]";

struct Args {
    rows: u64,
    narrow: bool,
    dir: PathBuf,
    runs: usize,
    measure: Option<(PathBuf, PathBuf, bool)>,
    sqldiff: bool,
    shuffle: bool,
    ndarc: Option<PathBuf>,
}

fn args() -> Args {
    let mut a = Args {
        rows: 5_000_000,
        narrow: false,
        dir: PathBuf::from("target/bench-data"),
        runs: 3,
        measure: None,
        sqldiff: false,
        shuffle: false,
        ndarc: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        match k.as_str() {
            "--rows" => a.rows = it.next().and_then(|v| v.parse().ok()).expect("--rows N"),
            "--dir" => a.dir = PathBuf::from(it.next().expect("--dir DIR")),
            "--shape" => {
                a.narrow = match it.next().as_deref() {
                    Some("narrow") => true,
                    Some("mixed") => false,
                    _ => {
                        eprintln!("diff-bench: --shape takes mixed or narrow\n{USAGE}");
                        std::process::exit(2);
                    }
                }
            }
            "--sqldiff" => a.sqldiff = true,
            "--shuffle" => a.shuffle = true,
            "--ndarc" => a.ndarc = Some(PathBuf::from(it.next().expect("--ndarc PATH"))),
            "--runs" => a.runs = it.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            // Internal: one measured diff in this (child) process.
            "--measure" => {
                let x = PathBuf::from(it.next().expect("--measure A B verify|no-verify"));
                let y = PathBuf::from(it.next().expect("--measure A B verify|no-verify"));
                let v = it.next().expect("--measure A B verify|no-verify") == "verify";
                a.measure = Some((x, y, v));
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => {
                eprintln!("diff-bench: unknown option {other}\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    a
}

const KINDS: [TableKind; 8] = [
    TableKind::Orders,
    TableKind::Events,
    TableKind::LegacyRows,
    TableKind::ShadowedRowid,
    TableKind::Tags,
    TableKind::KvStore,
    TableKind::Audit,
    TableKind::Unicode,
];

fn options(rows: u64, narrow: bool) -> GenOptions {
    if narrow {
        return GenOptions {
            seed: 13,
            kinds: Some(ndarc_gen::NARROW.to_vec()),
            tables: ndarc_gen::NARROW.len(),
            rows: Rows::Exactly((rows / ndarc_gen::NARROW.len() as u64).max(1)),
            objects: 6,
            object_bytes: 1 << 16,
            payloads: 2,
            payload_bytes: 4096,
            part_bytes: 1 << 20,
            ..GenOptions::default()
        };
    }
    GenOptions {
        seed: 11,
        kinds: Some(KINDS.to_vec()),
        tables: KINDS.len(),
        rows: Rows::Exactly((rows / KINDS.len() as u64).max(1)),
        objects: 6,
        object_bytes: 1 << 16,
        payloads: 2,
        payload_bytes: 4096,
        ..GenOptions::default()
    }
}

fn later() -> Later {
    Later {
        seed: 5,
        changed: 0.01,
        added: 0.002,
        removed: 0.002,
        binary: true,
    }
}

fn ensure(path: &Path, opts: &GenOptions) {
    if path.exists() {
        return;
    }
    std::fs::create_dir_all(path.parent().expect("a directory")).expect("create the directory");
    let t = Instant::now();
    let tmp = path.with_extension("partial");
    let file = std::fs::File::create(&tmp).expect("create");
    let mut f = std::io::BufWriter::with_capacity(1 << 20, file);
    let s = ndarc_gen::generate(opts, &mut f).expect("generate");
    drop(f);
    std::fs::rename(&tmp, path).expect("rename");
    let rows: u64 = s.tables.iter().map(|t| t.rows).sum();
    eprintln!(
        "generated {} ({} rows, {:.0} MiB) in {:.1} s",
        path.display(),
        rows,
        s.bytes as f64 / (1 << 20) as f64,
        t.elapsed().as_secs_f64()
    );
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

fn measure(a: &Path, b: &Path, verify: bool) {
    let opts = ndarc_diff::Options {
        no_verify: !verify,
        ..ndarc_diff::Options::default()
    };
    let t = Instant::now();
    let d = ndarc_diff::diff(
        ndarc_diff::Source::Path(a),
        ndarc_diff::Source::Path(b),
        &opts,
    )
    .expect("diff");
    let secs = t.elapsed().as_secs_f64();
    let (added, removed, changed) = d.row_totals();
    // One line for the parent: seconds, KiB, counts.
    println!(
        "{secs} {} {added} {removed} {changed} {} {}",
        vm_hwm_kib(),
        d.objects.changed.len(),
        d.payloads.changed.len()
    );
}

/// Runs `args` under `/usr/bin/time -v` (when present), its standard
/// output thrown away, accepting exit codes 0 and 1 (differences found):
/// wall seconds, CPU seconds (user + system; 0 when unknown) and peak RSS
/// in KiB (0 when unknown).
fn timed(args: &[String]) -> (f64, f64, u64) {
    let mut all: Vec<String> = Vec::new();
    if Path::new("/usr/bin/time").exists() {
        all.push("/usr/bin/time".into());
        all.push("-v".into());
    }
    all.extend(args.iter().cloned());
    let start = Instant::now();
    let out = Command::new(&all[0])
        .args(&all[1..])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run");
    let secs = start.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?} failed: {err}"
    );
    let field = |name: &str| -> Option<f64> {
        err.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    let cpu = field("User time (seconds): ").unwrap_or(0.0)
        + field("System time (seconds): ").unwrap_or(0.0);
    let rss = field("Maximum resident set size (kbytes): ").unwrap_or(0.0) as u64;
    (secs, cpu, rss)
}

/// `--sqldiff`: sqldiff on the restored databases beside `ndarc diff` on
/// the archives and on the databases.
fn against_sqldiff(a: &Path, b: &Path, runs: usize, ndarc: Option<&Path>) {
    let ndarc = ndarc.map_or_else(
        || {
            std::env::current_exe()
                .expect("exe")
                .with_file_name("ndarc")
        },
        Path::to_path_buf,
    );
    assert!(
        ndarc.exists(),
        "build it first: cargo build --release -p ndarc"
    );
    let s = |p: &Path| p.display().to_string();
    let (da, db) = (a.with_extension("db"), b.with_extension("db"));
    for (archive, db) in [(a, &da), (b, &db)] {
        if !db.exists() {
            let t = Instant::now();
            timed(&[s(&ndarc), "unpack".into(), s(archive), "-o".into(), s(db)]);
            eprintln!(
                "restored {} in {:.1} s",
                db.display(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    let db_bytes = std::fs::metadata(&da).map_or(0, |m| m.len())
        + std::fs::metadata(&db).map_or(0, |m| m.len());
    println!(
        "databases: {} + {} ({:.0} MiB together)",
        da.display(),
        db.display(),
        db_bytes as f64 / (1 << 20) as f64
    );
    let have_sqldiff = Command::new("sqldiff")
        .arg("--help")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok();
    if !have_sqldiff {
        println!(
            "sqldiff: not installed (Debian: apt-get install sqlite3-tools); its rows are skipped"
        );
    }
    let n = s(&ndarc);
    let mut cases: Vec<(&str, Vec<String>)> = Vec::new();
    if have_sqldiff {
        cases.push(("sqldiff a.db b.db", vec!["sqldiff".into(), s(&da), s(&db)]));
        // sqldiff matches the rows of a rowid table by rowid unless asked
        // to use the PRIMARY KEY, as ndarc (and the archive) always does:
        // the like-for-like anchor, slower or faster with the shape.
        cases.push((
            "sqldiff --primarykey a.db b.db",
            vec!["sqldiff".into(), "--primarykey".into(), s(&da), s(&db)],
        ));
    }
    cases.push((
        "ndarc diff A B --format sql",
        vec![
            n.clone(),
            "diff".into(),
            s(a),
            s(b),
            "--format".into(),
            "sql".into(),
        ],
    ));
    cases.push((
        "ndarc diff a.db b.db --format sql",
        vec![
            n.clone(),
            "diff".into(),
            s(&da),
            s(&db),
            "--format".into(),
            "sql".into(),
        ],
    ));
    cases.push((
        "ndarc diff -q A B",
        vec![n, "diff".into(), "-q".into(), s(a), s(b)],
    ));
    // Every run of each, the commands alternated run by run; the best (by
    // CPU) of each, and its median wall (a shared VM's noise moves the
    // best run less than it moves the median, so both are shown).
    let mut all: Vec<Vec<(f64, f64, u64)>> = vec![Vec::new(); cases.len()];
    for _ in 0..runs.max(1) {
        for (i, (_, cmd)) in cases.iter().enumerate() {
            all[i].push(timed(cmd));
        }
    }
    let best: Vec<Option<(f64, f64, u64)>> = all
        .iter()
        .map(|r| r.iter().copied().min_by(|x, y| x.1.total_cmp(&y.1)))
        .collect();
    let medians: Vec<f64> = all
        .iter()
        .map(|r| median(r.iter().map(|x| x.0).collect()))
        .collect();
    let base = have_sqldiff.then(|| best[0]).flatten();
    let base_median = have_sqldiff.then(|| medians[0]);
    println!(
        "{:<36} {:>8} {:>8} {:>10} {:>10} {:>9} {:>13}",
        "command (best CPU of runs)",
        "wall s",
        "CPU s",
        "CPU ratio",
        "wall ratio",
        "peak RSS",
        "median wall"
    );
    for (((label, _), r), m) in cases.iter().zip(&best).zip(&medians) {
        let Some((wall, cpu, kib)) = r else { continue };
        let (rc, rw) = base.map_or((String::from("-"), String::from("-")), |(w0, c0, _)| {
            (
                format!("{:.2}x", cpu / c0.max(1e-9)),
                format!("{:.2}x", wall / w0.max(1e-9)),
            )
        });
        let rm = base_median.map_or(String::new(), |m0| format!(" ({:.2}x)", m / m0.max(1e-9)));
        println!(
            "{label:<36} {wall:>8.2} {cpu:>8.2} {rc:>10} {rw:>10} {:>5.0} MiB {m:>6.2} s{rm}",
            *kib as f64 / 1024.0
        );
    }
}

/// The median of `v` (the mean of the middle two of an even count; 0 when
/// empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn main() {
    let args = args();
    if let Some((a, b, verify)) = &args.measure {
        measure(a, b, *verify);
        return;
    }
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        .unwrap_or_default();
    println!("machine: {cpu}; SHA-256 kernel: {}", ndarc_sha::kernel());
    let base = options(args.rows, args.narrow);
    let shape = if args.narrow { "narrow-" } else { "" };
    let a = args.dir.join(format!("diff-{shape}{}-a.ndjson", args.rows));
    let order = if args.shuffle { "-shuffled" } else { "" };
    let b = args
        .dir
        .join(format!("diff-{shape}{}-b{order}.ndjson", args.rows));
    ensure(&a, &base);
    ensure(
        &b,
        &GenOptions {
            shuffle_rows: args.shuffle.then_some(1),
            ..base.with_later(later())
        },
    );
    let bytes = std::fs::metadata(&a).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(&b).map(|m| m.len()).unwrap_or(0);
    let exe = std::env::current_exe().expect("current exe");
    println!(
        "inputs: {} + {} ({:.0} MiB together), {} core(s)",
        a.display(),
        b.display(),
        bytes as f64 / (1 << 20) as f64,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    if args.sqldiff {
        against_sqldiff(&a, &b, args.runs, args.ndarc.as_deref());
        return;
    }
    for verify in [true, false] {
        let mut best: Option<(f64, u64, String)> = None;
        let mut walls = Vec::new();
        for _ in 0..args.runs.max(1) {
            let out = Command::new(&exe)
                .arg("--measure")
                .arg(&a)
                .arg(&b)
                .arg(if verify { "verify" } else { "no-verify" })
                .output()
                .expect("run the measuring child");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let f: Vec<&str> = line.split(' ').collect();
            let secs: f64 = f[0].parse().expect("seconds");
            let kib: u64 = f[1].parse().expect("KiB");
            let counts = format!(
                "rows +{} -{} ~{}, objects ~{}, payloads ~{}",
                f[2], f[3], f[4], f[5], f[6]
            );
            walls.push(secs);
            if best.as_ref().is_none_or(|x| secs < x.0) {
                best = Some((secs, kib, counts));
            }
        }
        if let Some((secs, kib, counts)) = best {
            println!(
                "diff {:<10} {:>6.2} s  {:>7.0} MB/s  peak RSS (VmHWM) {:>5.0} MiB  median {:.2} s  [{counts}]",
                if verify { "verified" } else { "no-verify" },
                secs,
                bytes as f64 / 1e6 / secs,
                kib as f64 / 1024.0,
                median(walls)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
