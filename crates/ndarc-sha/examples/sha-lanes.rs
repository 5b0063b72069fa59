//! Throughput of a line hashed beside its row messages
//! (`update_with_messages`), the messages of narrow rows' sizes and the
//! line 0.885 times their padded length (as in `gen --shape narrow`):
//! `cargo run --release -p ndarc-sha --example sha-lanes`.
use sha2::Digest;
use std::time::Instant;

fn main() {
    // Messages of 60-220 bytes (2-4 blocks padded), 64 KiB of them (a
    // batch of the fast path).
    let data: Vec<u8> = (0..400_000u32).map(|i| (i * 31 % 251) as u8).collect();
    let mut buf = Vec::new();
    let mut blocks = Vec::new();
    let mut msgs = Vec::new();
    let mut at = 0usize;
    let mut k = 0usize;
    while at + 220 < data.len() && buf.len() < 64 << 10 {
        let n = 60 + (k * 37) % 160;
        blocks.push(ndarc_sha::push_message(&mut buf, &[&data[at..at + n]]));
        msgs.push(&data[at..at + n]);
        at += n;
        k += 1;
    }
    let line = &data[..(buf.len() as f64 * 0.885) as usize / 64 * 64];
    let mut out = Vec::new();
    let mut s = ndarc_sha::Stream::new();
    ndarc_sha::update_with_messages(&mut s, line, &buf, &blocks, &mut out);
    assert_eq!(s.finish(&[]), <[u8; 32]>::from(sha2::Sha256::digest(line)));
    let want: Vec<[u8; 32]> = msgs
        .iter()
        .map(|m| sha2::Sha256::digest(m).into())
        .collect();
    assert_eq!(out, want);
    let rounds = 3000;
    let mb = (buf.len() + line.len()) as f64 * rounds as f64 / 1e6;
    let t = Instant::now();
    for _ in 0..rounds {
        out.clear();
        let mut s = ndarc_sha::Stream::new();
        ndarc_sha::update_with_messages(&mut s, line, &buf, &blocks, &mut out);
        std::hint::black_box((&out, s));
    }
    let el = t.elapsed().as_secs_f64();
    println!(
        "{} messages, {} message blocks beside {} line blocks; vector lanes: {}; {:.0} MB/s",
        blocks.len(),
        buf.len() / 64,
        line.len() / 64,
        ndarc_sha::vector_lanes(),
        mb / el,
    );
}
