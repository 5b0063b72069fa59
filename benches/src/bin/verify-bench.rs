//! Verification throughput on generated archives.
//!
//! ```sh
//! cargo run --release -p ndarc-benches --bin verify-bench -- [--mib 1024] [--kind rows|narrow|blobs|all] [--dir target/bench-data]
//! ```
//!
//! Generates (deterministically, once; reused while the file exists) a
//! row-heavy archive (the feature tour's ten tables: mixed affinities, some
//! long text), a narrow-row one (`gen --shape narrow`: eight tables of 4–7
//! columns, short mostly non-ASCII text, small integers, 1 MiB parts, as an
//! application export has them) and a blob-heavy one of about `--mib` MiB,
//! then reports, best of `--runs`:
//! - one-core SHA-256 (sha2) over the same bytes, the floor, and
//!   `openssl dgst -sha256` of the file where openssl is installed (the
//!   reference the issue targets are stated against);
//! - `verify_path` with one job and with every core: wall time and MB/s;
//! - `verify_bytes` of the file read into memory beforehand, likewise: the
//!   difference is the cost of reading the file (with `pread`, which a
//!   memory map would save, at the risk of SIGBUS);
//! - peak memory: VmHWM of this process (it includes pages of the memory map
//!   that were touched) and the anonymous-memory high water, for which it
//!   runs `ndarc verify` under `/usr/bin/time -v` when that exists.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ndarc_gen::{GenOptions, Rows};
use sha2::Digest;

struct Args {
    mib: u64,
    kinds: Vec<&'static str>,
    dir: PathBuf,
    runs: usize,
}

fn args() -> Args {
    let mut a = Args {
        mib: 1024,
        kinds: vec!["rows", "narrow", "blobs"],
        dir: PathBuf::from("target/bench-data"),
        runs: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_default();
        match k.as_str() {
            "--mib" => a.mib = v.parse().expect("--mib N"),
            "--dir" => a.dir = PathBuf::from(v),
            "--runs" => a.runs = v.parse().expect("--runs N"),
            "--kind" => {
                a.kinds = match v.as_str() {
                    "rows" => vec!["rows"],
                    "narrow" => vec!["narrow"],
                    "blobs" => vec!["blobs"],
                    _ => vec!["rows", "narrow", "blobs"],
                }
            }
            "--help" | "-h" => {
                println!("usage: verify-bench [--mib N] [--kind rows|narrow|blobs|all] [--dir DIR] [--runs N]");
                std::process::exit(0);
            }
            other => {
                eprintln!("verify-bench: unknown option {other} (see --help)");
                std::process::exit(2);
            }
        }
    }
    a
}

fn options(kind: &str, mib: u64) -> GenOptions {
    let bytes = mib << 20;
    match kind {
        // ~330 bytes per row over ten tables of mixed affinities.
        "rows" => GenOptions {
            seed: 1,
            rows: Rows::Exactly(bytes / 10 / 330),
            objects: 4,
            object_bytes: 1 << 16,
            ..GenOptions::default()
        },
        // ~155 bytes per row over eight narrow tables, 1 MiB parts.
        "narrow" => GenOptions {
            seed: 3,
            kinds: Some(ndarc_gen::NARROW.to_vec()),
            rows: Rows::Exactly(bytes / 8 / 155),
            objects: 4,
            object_bytes: 1 << 16,
            part_bytes: 1 << 20,
            ..GenOptions::default()
        },
        _ => GenOptions {
            seed: 2,
            rows: Rows::Exactly(100),
            objects: (bytes / (4 << 20)).max(4),
            object_bytes: 4 << 20,
            ..GenOptions::default()
        },
    }
}

fn ensure(path: &Path, opts: &GenOptions) {
    if path.exists() {
        return;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let t = Instant::now();
    let tmp = path.with_extension("partial");
    let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp).unwrap());
    let s = ndarc_gen::generate(opts, &mut f).expect("generate");
    drop(f);
    std::fs::rename(&tmp, path).unwrap();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "generated {} ({} bytes, {} parts) in {secs:.1}s ({:.0} MB/s)",
        path.display(),
        s.bytes,
        s.part_count,
        s.bytes as f64 / secs / 1e6
    );
}

fn vm(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .map(|l| l[field.len()..].trim().to_string())
        .unwrap_or_default()
}

fn best<F: FnMut()>(runs: usize, mut f: F) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Best wall time of `openssl dgst -sha256 FILE`, when openssl runs.
fn openssl_seconds(path: &Path, runs: usize) -> Option<f64> {
    let ok = std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return None;
    }
    let mut fine = true;
    let t = best(runs, || {
        fine &= std::process::Command::new("openssl")
            .args(["dgst", "-sha256"])
            .arg(path)
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    });
    fine.then_some(t)
}

fn main() {
    let a = args();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!(
        "machine: {cpu}, {cores} cores; SHA-256 kernel: {}",
        ndarc_sha::kernel()
    );
    for kind in &a.kinds {
        let path = a.dir.join(format!("{kind}-{}mib.ndjson", a.mib));
        ensure(&path, &options(kind, a.mib));
        let data = std::fs::read(&path).unwrap();
        let mb = data.len() as f64 / 1e6;
        let sha = best(a.runs, || {
            std::hint::black_box(sha2::Sha256::digest(&data));
        });
        drop(data);
        println!(
            "{kind}: {:.0} MB; one-core SHA-256 floor: {:.0} MB/s",
            mb,
            mb / sha
        );
        if let Some(t) = openssl_seconds(&path, a.runs) {
            println!(
                "{kind}: openssl dgst -sha256 (one core, whole process): {t:.2}s, {:.0} MB/s",
                mb / t
            );
        }
        for jobs in [1, 0] {
            let opts = ndarc_verify::Options {
                jobs,
                ..Default::default()
            };
            let mut valid = true;
            let t = best(a.runs, || {
                let r = ndarc_verify::verify_path(&path, &opts).expect("verify");
                valid &= r.is_valid(true);
                if !r.findings.is_empty() {
                    eprintln!("{:?}", &r.findings[..r.findings.len().min(3)]);
                }
            });
            println!(
                "{kind}: verify jobs={}: {t:.2}s, {:.0} MB/s{}",
                if jobs == 0 { cores } else { jobs },
                mb / t,
                if valid { "" } else { " (INVALID!)" }
            );
        }
        // The same bytes already in memory (`verify_bytes`): no read and
        // no copy, as a memory map of a cached file gave before files were
        // read with `pread` (a map kills the process with SIGBUS when the
        // file shrinks). The difference is the cost of reading safely.
        let data = std::fs::read(&path).unwrap();
        for jobs in [1, 0] {
            let opts = ndarc_verify::Options {
                jobs,
                ..Default::default()
            };
            let t = best(a.runs, || {
                let r = ndarc_verify::verify_bytes(&data, &opts);
                assert!(r.is_valid(true), "{:?}", r.findings.first());
            });
            println!(
                "{kind}: verify_bytes (in memory) jobs={}: {t:.2}s, {:.0} MB/s",
                if jobs == 0 { cores } else { jobs },
                mb / t
            );
        }
        drop(data);
        println!(
            "{kind}: VmHWM {} (includes the copy held in memory)",
            vm("VmHWM:")
        );
    }
}
