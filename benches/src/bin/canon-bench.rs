//! `canon-bench`: single-thread throughput of ndarc-json's canonical JSON.
//!
//! Generates about `--mb` megabytes (10^6 bytes) of realistic NDJSON in
//! memory, deterministically (a fixed-seed generator): archive row records
//! with strings (ASCII, accented, CJK, emoji, escapes and control
//! characters), integers, floats, booleans, nulls, arrays and nested
//! objects. Then measures, best of `--runs` (default 3):
//!
//! - (a) `check_canonical` over the canonical lines;
//! - (b) `canonicalize` over the canonical lines (the copy path);
//! - (c) `canonicalize` over the same records written non-canonically
//!   (members shuffled, whitespace after `:` and `,`, some needless
//!   escapes): the rewrite path;
//! - (d) for reference, `parse` (building the value tree) over the
//!   canonical lines.
//!
//! ```text
//! cargo run --release -p ndarc-benches --bin canon-bench -- [--mb 100] [--runs 3] [--emit DIR]
//! ```
//!
//! `--emit DIR` also writes the two corpora as `DIR/canonical.ndjson` and
//! `DIR/noncanonical.ndjson`, e.g. to time `ndarc canon` on them.

use std::borrow::Cow;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ndarc_json::{canonicalize, check_canonical, parse, to_canonical_vec, Object, Value};

/// splitmix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const FIRST: &[&str] = &[
    "Ada",
    "Grace",
    "Linus",
    "Zoë",
    "José",
    "Björk",
    "Émilie",
    "Søren",
    "李",
    "王芳",
    "Олег",
    "Αθηνά",
    "Nguyễn",
    "محمد",
    "Ólafur",
    "Chloé",
];
const LAST: &[&str] = &[
    "Lovelace",
    "Hopper",
    "Torvalds",
    "Müller",
    "O'Brien",
    "García",
    "Dvořák",
    "Kowalczyk",
    "Ångström",
    "田中",
    "Смирнов",
    "Núñez",
];
const WORDS: &[&str] = &[
    "invoice",
    "shipped",
    "pending",
    "refund",
    "the",
    "quick",
    "brown",
    "fox",
    "café",
    "naïve",
    "résumé",
    "über",
    "straße",
    "日本語",
    "テスト",
    "🙂",
    "🚀",
    "data",
    "export",
    "line",
];
const TABLES: &[&str] = &["users", "orders", "order_items", "events", "audit_log"];

fn sentence(rng: &mut Rng, max_words: u64) -> String {
    let n = 1 + rng.below(max_words);
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(rng.pick(WORDS));
    }
    // Now and then the characters that need escapes.
    match rng.below(20) {
        0 => s.push_str(" \"quoted\""),
        1 => s.push_str("\nsecond line\ttabbed"),
        2 => s.push_str(" C:\\path\\to"),
        3 => s.push('\u{1}'),
        _ => {}
    }
    s
}

fn float(rng: &mut Rng) -> f64 {
    match rng.below(4) {
        0 => (rng.below(1_000_000) as f64) / 100.0,
        1 => (rng.next() >> 11) as f64 / (1u64 << 53) as f64,
        2 => (rng.below(10_000) as f64) * 10f64.powi(rng.below(40) as i32 - 20),
        _ => -((rng.below(100_000) as f64) / 1000.0),
    }
}

fn s(v: impl Into<String>) -> Value<'static> {
    Value::String(Cow::Owned(v.into()))
}

fn n(v: f64) -> Value<'static> {
    Value::Number(v)
}

fn object(members: Vec<(&str, Value<'static>)>) -> Value<'static> {
    Value::Object(Object::from_members(
        members
            .into_iter()
            .map(|(k, v)| (Cow::Owned(k.to_string()), v))
            .collect(),
    ))
}

/// One row record as the archive holds them.
fn record(rng: &mut Rng, index: u64) -> Value<'static> {
    let first = rng.pick(FIRST);
    let last = rng.pick(LAST);
    let tags: Vec<Value<'static>> = (0..rng.below(5)).map(|_| s(rng.pick(WORDS))).collect();
    let mut row = vec![
        ("id", n(index as f64 + 1.0)),
        ("name", s(format!("{first} {last}"))),
        (
            "email",
            s(format!(
                "{}.{}@example.com",
                first.to_lowercase(),
                rng.below(10_000)
            )),
        ),
        ("score", n(float(rng))),
        (
            "balance_cents",
            n(rng.below(1 << 40) as f64 - (1u64 << 39) as f64),
        ),
        ("active", Value::Bool(rng.chance(70))),
        (
            "created_at",
            s(format!(
                "2024-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                1 + rng.below(12),
                1 + rng.below(28),
                rng.below(24),
                rng.below(60),
                rng.below(60),
                rng.below(1000)
            )),
        ),
        (
            "note",
            if rng.chance(30) {
                Value::Null
            } else {
                s(sentence(rng, 12))
            },
        ),
        ("tags", Value::Array(tags)),
    ];
    if rng.chance(50) {
        row.push((
            "address",
            object(vec![
                (
                    "street",
                    s(format!("{} {}", 1 + rng.below(999), rng.pick(LAST))),
                ),
                (
                    "city",
                    s(rng.pick(&["Zürich", "São Paulo", "Kraków", "東京", "Reykjavík"])),
                ),
                (
                    "geo",
                    object(vec![
                        ("lat", n(float(rng) - 45.0)),
                        ("lon", n(float(rng) * 3.0)),
                    ]),
                ),
            ]),
        ));
    }
    if rng.chance(25) {
        row.push((
            "blob",
            object(vec![(
                "blob",
                s("SGVsbG8sIFdvcmxkIQ==".repeat(1 + rng.below(4) as usize)),
            )]),
        ));
    }
    let mut rec = vec![
        ("kind", s("row")),
        ("table", s(rng.pick(TABLES))),
        ("index", n(index as f64)),
        ("row", object(row)),
    ];
    if rng.chance(50) {
        rec.push(("rowid", n(index as f64 + 1.0)));
    }
    object(rec)
}

/// Writes `v` non-canonically: members shuffled, a space after `:` and `,`,
/// `/` escaped, some characters as `\u` escapes, integers as `N.0`.
fn messy(v: &Value<'_>, rng: &mut Rng, out: &mut Vec<u8>) {
    match v {
        Value::Number(x) if x.fract() == 0.0 && x.abs() < 1e15 && rng.chance(20) => {
            out.extend_from_slice(format!("{x:.1}").as_bytes());
        }
        Value::String(text) => {
            out.push(b'"');
            for c in text.chars() {
                match c {
                    '"' => out.extend_from_slice(b"\\\""),
                    '\\' => out.extend_from_slice(b"\\\\"),
                    '/' => out.extend_from_slice(b"\\/"),
                    c if (c as u32) < 0x20 || (!c.is_ascii() && rng.chance(10)) => {
                        let mut units = [0u16; 2];
                        for u in c.encode_utf16(&mut units) {
                            out.extend_from_slice(format!("\\u{u:04X}").as_bytes());
                        }
                    }
                    c => {
                        let mut b = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                    }
                }
            }
            out.push(b'"');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                messy(item, rng, out);
            }
            out.push(b']');
        }
        Value::Object(o) => {
            let mut members: Vec<(&str, &Value<'_>)> = o.iter().collect();
            for i in (1..members.len()).rev() {
                members.swap(i, rng.below(i as u64 + 1) as usize);
            }
            out.push(b'{');
            for (i, (name, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                messy(&Value::String(Cow::Borrowed(name)), rng, out);
                out.extend_from_slice(b": ");
                messy(item, rng, out);
            }
            out.push(b'}');
        }
        other => out.extend_from_slice(&to_canonical_vec(other)),
    }
}

/// NDJSON text and the line boundaries (LF not included).
struct Corpus {
    text: Vec<u8>,
    lines: Vec<(usize, usize)>,
}

impl Corpus {
    fn new() -> Self {
        Corpus {
            text: Vec::new(),
            lines: Vec::new(),
        }
    }

    fn push(&mut self, line: &[u8]) {
        let start = self.text.len();
        self.text.extend_from_slice(line);
        self.lines.push((start, self.text.len()));
        self.text.push(b'\n');
    }

    fn lines(&self) -> impl Iterator<Item = &[u8]> {
        self.lines.iter().map(|&(a, b)| &self.text[a..b])
    }
}

fn generate(target_bytes: usize) -> (Corpus, Corpus) {
    let mut rng = Rng(0x6e64_6172_6320_3031);
    let mut canonical = Corpus::new();
    let mut noncanonical = Corpus::new();
    let mut buf = Vec::new();
    let mut index = 0;
    while canonical.text.len() < target_bytes {
        let rec = record(&mut rng, index);
        canonical.push(&to_canonical_vec(&rec));
        buf.clear();
        messy(&rec, &mut rng, &mut buf);
        noncanonical.push(&buf);
        index += 1;
    }
    (canonical, noncanonical)
}

/// Runs `f` `runs` times; the best time.
fn best_of(runs: usize, mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut result = 0;
    for _ in 0..runs {
        let t = Instant::now();
        result = black_box(f());
        best = best.min(t.elapsed());
    }
    (best, result)
}

fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: canon-bench [--mb N] [--runs N] [--emit DIR]\n  \
         (N MB = N * 10^6 bytes; default --mb 100 --runs 3)"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut mb = 100usize;
    let mut runs = 3usize;
    let mut emit: Option<std::path::PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let target = match a.as_str() {
            "--emit" => match args.next() {
                Some(dir) => {
                    emit = Some(dir.into());
                    continue;
                }
                None => return usage(),
            },
            "--mb" => &mut mb,
            "--runs" => &mut runs,
            "-h" | "--help" => {
                usage();
                return ExitCode::SUCCESS;
            }
            _ => return usage(),
        };
        match args.next().and_then(|v| v.parse().ok()) {
            Some(v) if v > 0 => *target = v,
            _ => return usage(),
        }
    }

    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("canon-bench: single thread, best of {runs}");
    println!(
        "machine: {} ({nproc} CPUs available); SHA-256 kernel: {}",
        cpu_model(),
        ndarc_sha::kernel()
    );

    let t = Instant::now();
    let (canonical, noncanonical) = generate(mb * 1_000_000);
    let lines = canonical.lines.len();
    let canon_bytes = canonical.text.len();
    let messy_bytes = noncanonical.text.len();
    println!(
        "data: {lines} records; canonical {:.1} MB (avg {} B/line), non-canonical {:.1} MB; generated in {:.1?}",
        canon_bytes as f64 / 1e6,
        canon_bytes / lines.max(1),
        messy_bytes as f64 / 1e6,
        t.elapsed()
    );

    // Sanity, untimed: the canonical lines are canonical, the others are
    // not and canonicalize to them.
    let mut out = Vec::new();
    for (c, m) in canonical.lines().zip(noncanonical.lines()) {
        let ok = check_canonical(c) == Ok(None) && {
            out.clear();
            canonicalize(m, &mut out) == Ok(false) && out == c
        };
        if !ok {
            eprintln!("canon-bench: generated data failed its sanity check");
            return ExitCode::FAILURE;
        }
    }

    if let Some(dir) = &emit {
        for (name, corpus) in [
            ("canonical.ndjson", &canonical),
            ("noncanonical.ndjson", &noncanonical),
        ] {
            let path = dir.join(name);
            if let Err(e) = std::fs::write(&path, &corpus.text) {
                eprintln!("canon-bench: cannot write {}: {e}", path.display());
                return ExitCode::from(2);
            }
            println!("wrote {}", path.display());
        }
    }

    let (d, n) = best_of(runs, || {
        canonical
            .lines()
            .filter(|l| check_canonical(l) == Ok(None))
            .count()
    });
    assert_eq!(n, lines);
    println!(
        "(a) check_canonical, canonical lines:          {:8.1} MB/s  ({:.3} s for {:.1} MB)",
        mb_per_s(canon_bytes, d),
        d.as_secs_f64(),
        canon_bytes as f64 / 1e6
    );

    let (d, n) = best_of(runs, || {
        let mut out = Vec::with_capacity(1 << 16);
        let mut copied = 0;
        for l in canonical.lines() {
            out.clear();
            if canonicalize(l, &mut out) == Ok(true) {
                copied += 1;
            }
            black_box(&out);
        }
        copied
    });
    assert_eq!(n, lines);
    println!(
        "(b) canonicalize, canonical lines (copy):      {:8.1} MB/s  ({:.3} s)",
        mb_per_s(canon_bytes, d),
        d.as_secs_f64()
    );

    let (d, n) = best_of(runs, || {
        let mut out = Vec::with_capacity(1 << 16);
        let mut rewritten = 0;
        for l in noncanonical.lines() {
            out.clear();
            if canonicalize(l, &mut out) == Ok(false) {
                rewritten += 1;
            }
            black_box(&out);
        }
        rewritten
    });
    assert_eq!(n, lines);
    println!(
        "(c) canonicalize, non-canonical lines (rewrite): {:6.1} MB/s  ({:.3} s for {:.1} MB of input)",
        mb_per_s(messy_bytes, d),
        d.as_secs_f64(),
        messy_bytes as f64 / 1e6
    );

    let (d, n) = best_of(runs, || {
        canonical.lines().filter(|l| parse(l).is_ok()).count()
    });
    assert_eq!(n, lines);
    println!(
        "(d) for reference: parse (value tree), canonical lines: {:.1} MB/s",
        mb_per_s(canon_bytes, d)
    );
    ExitCode::SUCCESS
}
