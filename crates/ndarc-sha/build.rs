//! Writes the eight-lane SHA-256 kernels (`mb_q0.s` .. `mb_q4.s` in
//! OUT_DIR), included by `src/mb.rs` as `asm!` templates.
//!
//! Why generated, and why assembly: the kernel interleaves eight message
//! lanes (AVX-512VL on 256-bit registers) with a line's SHA-256 on the SHA
//! extensions, up to four of the line's four-round steps beside each lane
//! round, so that the SHA extensions' latency hides in the lanes' work. The SHA
//! instructions exist only in the legacy SSE encoding, which, on the Intel
//! host measured, ran about forty times slower while the upper halves of
//! ymm0-ymm15 held data; the lanes therefore use only ymm16-ymm31, which
//! the compiler cannot be told to keep to. Sixty-four rounds with rotating
//! register names and a schedule placed among them are written out here
//! rather than by hand.

use std::fmt::Write;

/// The lanes' working variables a..h start in these registers.
const STATE: [u32; 8] = [16, 17, 18, 19, 20, 21, 22, 23];

/// One step of the lanes (64 rounds from the schedule at `{w}`, added into
/// the state at `{st}`) with `q` of the line's four-round steps (`4 * q`
/// line blocks from `{lp}`) beside each lane round.
fn kernel(q: usize) -> String {
    let mut s = String::new();
    let z = |r: u32| format!("ymm{r}");
    // The lanes' state from memory.
    for (j, r) in STATE.iter().enumerate() {
        writeln!(s, "vmovdqa32 {}, ymmword ptr [{{st}} + {}]", z(*r), 32 * j).unwrap();
    }
    let mut reg = STATE; // reg[0] holds a, reg[7] holds h
    for t in 0..64usize {
        // The line's quads for this round.
        for j in 0..q {
            let qi = t * q + j;
            line_quad(&mut s, qi / 16, qi % 16);
        }
        // The schedule word for this round, into ymm28.
        let wop = if t >= 16 {
            let m = |i: usize| format!("ymmword ptr [{{w}} + {}]", 32 * i);
            writeln!(s, "vmovdqa32 ymm28, {}", m(t - 15)).unwrap();
            writeln!(s, "vprord ymm29, ymm28, 7").unwrap();
            writeln!(s, "vprord ymm30, ymm28, 18").unwrap();
            writeln!(s, "vpsrld ymm28, ymm28, 3").unwrap();
            writeln!(s, "vpternlogd ymm28, ymm29, ymm30, 0x96").unwrap();
            writeln!(s, "vmovdqa32 ymm31, {}", m(t - 2)).unwrap();
            writeln!(s, "vprord ymm29, ymm31, 17").unwrap();
            writeln!(s, "vprord ymm30, ymm31, 19").unwrap();
            writeln!(s, "vpsrld ymm31, ymm31, 10").unwrap();
            writeln!(s, "vpternlogd ymm31, ymm29, ymm30, 0x96").unwrap();
            writeln!(s, "vpaddd ymm28, ymm28, ymm31").unwrap();
            writeln!(s, "vpaddd ymm28, ymm28, {}", m(t - 16)).unwrap();
            writeln!(s, "vpaddd ymm28, ymm28, {}", m(t - 7)).unwrap();
            if t < 62 {
                // Read again two rounds on (as w[t-2]) and later.
                writeln!(s, "vmovdqa32 {}, ymm28", m(t)).unwrap();
            }
            "ymm28".to_string()
        } else {
            format!("ymmword ptr [{{w}} + {}]", 32 * t)
        };
        let [a, b, c, d, e, f, g, h] = reg.map(z);
        // T1 = h + S1(e) + Ch(e, f, g) + K[t] + W[t], in ymm24.
        writeln!(s, "vprord ymm24, {e}, 6").unwrap();
        writeln!(s, "vprord ymm25, {e}, 11").unwrap();
        writeln!(s, "vprord ymm26, {e}, 25").unwrap();
        writeln!(s, "vpternlogd ymm24, ymm25, ymm26, 0x96").unwrap();
        writeln!(s, "vmovdqa32 ymm25, {e}").unwrap();
        writeln!(s, "vpternlogd ymm25, {f}, {g}, 0xCA").unwrap();
        writeln!(s, "vpaddd ymm24, ymm24, ymm25").unwrap();
        writeln!(s, "vpaddd ymm24, ymm24, {h}").unwrap();
        writeln!(s, "vpaddd ymm24, ymm24, {wop}").unwrap();
        writeln!(
            s,
            "vpaddd ymm24, ymm24, dword ptr [{{k}} + {}]{{{{1to8}}}}",
            4 * t
        )
        .unwrap();
        // d += T1.
        writeln!(s, "vpaddd {d}, {d}, ymm24").unwrap();
        // h = T1 + S0(a) + Maj(a, b, c): the new a.
        writeln!(s, "vprord ymm25, {a}, 2").unwrap();
        writeln!(s, "vprord ymm26, {a}, 13").unwrap();
        writeln!(s, "vprord ymm27, {a}, 22").unwrap();
        writeln!(s, "vpternlogd ymm25, ymm26, ymm27, 0x96").unwrap();
        writeln!(s, "vmovdqa32 ymm26, {a}").unwrap();
        writeln!(s, "vpternlogd ymm26, {b}, {c}, 0xE8").unwrap();
        writeln!(s, "vpaddd ymm25, ymm25, ymm26").unwrap();
        writeln!(s, "vpaddd {h}, ymm24, ymm25").unwrap();
        reg.rotate_right(1);
    }
    // After 64 rounds the names are back where they started.
    for (j, r) in STATE.iter().enumerate() {
        writeln!(
            s,
            "vpaddd {0}, {0}, ymmword ptr [{{st}} + {1}]",
            z(*r),
            32 * j
        )
        .unwrap();
        writeln!(s, "vmovdqa32 ymmword ptr [{{st}} + {}], {}", 32 * j, z(*r)).unwrap();
    }
    s
}

/// Rounds `4 * quad` to `4 * quad + 3` of line block `block` (at
/// `{lp} + 64 * block`), as `ni.rs`'s `rounds64` does them: the state in
/// `{la}` (ABEF) and `{lc}` (CDGH), five schedule words in rotation in
/// `{l0}`..`{l4}`, the state before the block in `{sa}`, `{sc}`.
fn line_quad(s: &mut String, block: usize, quad: usize) {
    let w = |i: usize| format!("{{l{}}}", i % 5);
    if quad == 0 {
        writeln!(s, "vmovdqa {{sa}}, {{la}}").unwrap();
        writeln!(s, "vmovdqa {{sc}}, {{lc}}").unwrap();
        for i in 0..4 {
            writeln!(
                s,
                "vmovdqu {}, xmmword ptr [{{lp}} + {}]",
                w(i),
                64 * block + 16 * i
            )
            .unwrap();
            writeln!(s, "vpshufb {0}, {0}, {{mask}}", w(i)).unwrap();
        }
    }
    if quad >= 4 {
        // w[q] = msg2(msg1(w[q-4], w[q-3]) + alignr(w[q-1], w[q-2], 4), w[q-1]),
        // into the register of w[q-5].
        let (dst, v0, v1, v2, v3) = (w(quad), w(quad + 1), w(quad + 2), w(quad + 3), w(quad + 4));
        writeln!(s, "vmovdqa {dst}, {v0}").unwrap();
        writeln!(s, "sha256msg1 {dst}, {v1}").unwrap();
        writeln!(s, "vpalignr {{lt}}, {v3}, {v2}, 4").unwrap();
        writeln!(s, "vpaddd {dst}, {dst}, {{lt}}").unwrap();
        writeln!(s, "sha256msg2 {dst}, {v3}").unwrap();
    }
    writeln!(
        s,
        "vpaddd xmm0, {}, xmmword ptr [{{k}} + {}]",
        w(quad),
        16 * quad
    )
    .unwrap();
    writeln!(s, "sha256rnds2 {{lc}}, {{la}}").unwrap();
    writeln!(s, "vpshufd xmm0, xmm0, 0x0E").unwrap();
    writeln!(s, "sha256rnds2 {{la}}, {{lc}}").unwrap();
    if quad == 15 {
        writeln!(s, "vpaddd {{la}}, {{la}}, {{sa}}").unwrap();
        writeln!(s, "vpaddd {{lc}}, {{lc}}, {{sc}}").unwrap();
    }
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for q in 0..=4 {
        let path = std::path::Path::new(&out).join(format!("mb_q{q}.s"));
        std::fs::write(&path, kernel(q)).expect("OUT_DIR is writable");
    }
}
