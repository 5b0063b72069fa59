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

/// Appends one line of assembly to `$s` (a `String`, which cannot fail).
macro_rules! emit {
    ($s:expr, $($arg:tt)*) => {
        writeln!($s, $($arg)*).expect("writing to a String")
    };
}

/// The lanes' working variables a..h start in these registers.
const STATE: [u32; 8] = [16, 17, 18, 19, 20, 21, 22, 23];

/// `dst = rotr(x, r0) ^ rotr(x, r1) ^ op(x, r2)`, where `op` is a rotate
/// (`vprord`: the rounds' S0 and S1) or a shift (`vpsrld`: the schedule's
/// s0 and s1), through the scratch registers `t1` and `t2`. `dst` may be
/// `x` itself.
fn three_way(
    s: &mut String,
    dst: &str,
    x: &str,
    [r0, r1, r2]: [u32; 3],
    op: &str,
    t1: &str,
    t2: &str,
) {
    emit!(s, "vprord {t1}, {x}, {r0}");
    emit!(s, "vprord {t2}, {x}, {r1}");
    emit!(s, "{op} {dst}, {x}, {r2}");
    emit!(s, "vpternlogd {dst}, {t1}, {t2}, 0x96");
}

/// One step of the lanes (64 rounds from the schedule at `{w}`, added into
/// the state at `{st}`) with `q` of the line's four-round steps (`4 * q`
/// line blocks from `{lp}`) beside each lane round.
fn kernel(q: usize) -> String {
    let mut s = String::new();
    let z = |r: u32| format!("ymm{r}");
    // The lanes' state from memory.
    for (j, r) in STATE.iter().enumerate() {
        emit!(s, "vmovdqa32 {}, ymmword ptr [{{st}} + {}]", z(*r), 32 * j);
    }
    let mut reg = STATE; // reg[0] holds a, reg[7] holds h
    for t in 0..64usize {
        // The line's quads for this round.
        for j in 0..q {
            let qi = t * q + j;
            line_quad(&mut s, qi / 16, qi % 16);
        }
        // The schedule word for this round, into ymm28:
        // w[t-16] + s0(w[t-15]) + w[t-7] + s1(w[t-2]).
        let wop = if t >= 16 {
            let m = |i: usize| format!("ymmword ptr [{{w}} + {}]", 32 * i);
            emit!(s, "vmovdqa32 ymm28, {}", m(t - 15));
            three_way(
                &mut s,
                "ymm28",
                "ymm28",
                [7, 18, 3],
                "vpsrld",
                "ymm29",
                "ymm30",
            );
            emit!(s, "vmovdqa32 ymm31, {}", m(t - 2));
            three_way(
                &mut s,
                "ymm31",
                "ymm31",
                [17, 19, 10],
                "vpsrld",
                "ymm29",
                "ymm30",
            );
            emit!(s, "vpaddd ymm28, ymm28, ymm31");
            emit!(s, "vpaddd ymm28, ymm28, {}", m(t - 16));
            emit!(s, "vpaddd ymm28, ymm28, {}", m(t - 7));
            if t < 62 {
                // Read again two rounds on (as w[t-2]) and later.
                emit!(s, "vmovdqa32 {}, ymm28", m(t));
            }
            "ymm28".to_string()
        } else {
            format!("ymmword ptr [{{w}} + {}]", 32 * t)
        };
        let [a, b, c, d, e, f, g, h] = reg.map(z);
        // T1 = h + S1(e) + Ch(e, f, g) + K[t] + W[t], in ymm24.
        three_way(&mut s, "ymm24", &e, [6, 11, 25], "vprord", "ymm25", "ymm26");
        emit!(s, "vmovdqa32 ymm25, {e}");
        emit!(s, "vpternlogd ymm25, {f}, {g}, 0xCA");
        emit!(s, "vpaddd ymm24, ymm24, ymm25");
        emit!(s, "vpaddd ymm24, ymm24, {h}");
        emit!(s, "vpaddd ymm24, ymm24, {wop}");
        emit!(
            s,
            "vpaddd ymm24, ymm24, dword ptr [{{k}} + {}]{{{{1to8}}}}",
            4 * t
        );
        // d += T1.
        emit!(s, "vpaddd {d}, {d}, ymm24");
        // h = T1 + S0(a) + Maj(a, b, c): the new a.
        three_way(&mut s, "ymm25", &a, [2, 13, 22], "vprord", "ymm26", "ymm27");
        emit!(s, "vmovdqa32 ymm26, {a}");
        emit!(s, "vpternlogd ymm26, {b}, {c}, 0xE8");
        emit!(s, "vpaddd ymm25, ymm25, ymm26");
        emit!(s, "vpaddd {h}, ymm24, ymm25");
        reg.rotate_right(1);
    }
    // After 64 rounds the names are back where they started.
    for (j, r) in STATE.iter().enumerate() {
        emit!(
            s,
            "vpaddd {0}, {0}, ymmword ptr [{{st}} + {1}]",
            z(*r),
            32 * j
        );
        emit!(s, "vmovdqa32 ymmword ptr [{{st}} + {}], {}", 32 * j, z(*r));
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
        emit!(s, "vmovdqa {{sa}}, {{la}}");
        emit!(s, "vmovdqa {{sc}}, {{lc}}");
        for i in 0..4 {
            emit!(
                s,
                "vmovdqu {}, xmmword ptr [{{lp}} + {}]",
                w(i),
                64 * block + 16 * i
            );
            emit!(s, "vpshufb {0}, {0}, {{mask}}", w(i));
        }
    }
    if quad >= 4 {
        // w[q] = msg2(msg1(w[q-4], w[q-3]) + alignr(w[q-1], w[q-2], 4), w[q-1]),
        // into the register of w[q-5].
        let (dst, v0, v1, v2, v3) = (w(quad), w(quad + 1), w(quad + 2), w(quad + 3), w(quad + 4));
        emit!(s, "vmovdqa {dst}, {v0}");
        emit!(s, "sha256msg1 {dst}, {v1}");
        emit!(s, "vpalignr {{lt}}, {v3}, {v2}, 4");
        emit!(s, "vpaddd {dst}, {dst}, {{lt}}");
        emit!(s, "sha256msg2 {dst}, {v3}");
    }
    emit!(
        s,
        "vpaddd xmm0, {}, xmmword ptr [{{k}} + {}]",
        w(quad),
        16 * quad
    );
    emit!(s, "sha256rnds2 {{lc}}, {{la}}");
    emit!(s, "vpshufd xmm0, xmm0, 0x0E");
    emit!(s, "sha256rnds2 {{la}}, {{lc}}");
    if quad == 15 {
        emit!(s, "vpaddd {{la}}, {{la}}, {{sa}}");
        emit!(s, "vpaddd {{lc}}, {{lc}}, {{sc}}");
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
