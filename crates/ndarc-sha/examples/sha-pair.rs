//! Throughput of `digest_pair` against sha2 hashing the same messages one
//! at a time: `cargo run --release -p ndarc-sha --example sha-pair`.
use sha2::Digest;
use std::time::Instant;

fn main() {
    // A 330 KB "line" and rows of ~300 bytes covering 85% of it.
    let line: Vec<u8> = (0..330_000u32).map(|i| (i * 31 % 251) as u8).collect();
    let rows: Vec<&[u8]> = line[..280_000].chunks(300).collect();
    let mut buf = Vec::new();
    let blocks: Vec<u32> = rows
        .iter()
        .map(|r| ndarc_sha::push_message(&mut buf, &[r]))
        .collect();
    let n = 600;
    let mut out = Vec::new();
    let t = Instant::now();
    for _ in 0..n {
        out.clear();
        std::hint::black_box(ndarc_sha::digest_pair(&line, &buf, &blocks, &mut out));
    }
    let pair = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for _ in 0..n {
        out.clear();
        std::hint::black_box(<[u8; 32]>::from(sha2::Sha256::digest(&line)));
        for r in &rows {
            out.push(sha2::Sha256::digest(r).into());
        }
    }
    let single = t.elapsed().as_secs_f64();
    let mb = (line.len() + 280_000) as f64 * n as f64 / 1e6;
    println!(
        "interleaved: {}  pair {:.0} MB/s, sha2 one at a time {:.0} MB/s",
        ndarc_sha::interleaved(),
        mb / pair,
        mb / single
    );
}
