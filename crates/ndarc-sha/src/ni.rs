//! The SHA extensions (x86-64): one stream, and two streams interleaved.
//!
//! The functions here are `#[target_feature]` functions but not `unsafe`:
//! their one precondition is the CPU's, which the compiler checks at each
//! call from code with the same features, and which the two entry points
//! ([`with_messages`], [`pair`]) check at run time with [`available`]. The
//! unaligned loads and stores stay in `unsafe` blocks, each with its reason.

use std::arch::x86_64::*;

use crate::{Digest32, H0};

/// Whether this CPU has the SHA extensions (and SSSE3 and SSE4.1, which the
/// code also uses). std caches the detection.
pub(crate) fn available() -> bool {
    is_x86_feature_detected!("sha")
        && is_x86_feature_detected!("sse2")
        && is_x86_feature_detected!("ssse3")
        && is_x86_feature_detected!("sse4.1")
}

/// The round constants, four per 128-bit load.
pub(crate) static K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn schedule(v0: __m128i, v1: __m128i, v2: __m128i, v3: __m128i) -> __m128i {
    let t1 = _mm_sha256msg1_epu32(v0, v1);
    let t2 = _mm_alignr_epi8(v3, v2, 4);
    let t3 = _mm_add_epi32(t1, t2);
    _mm_sha256msg2_epu32(t3, v3)
}

macro_rules! rounds4 {
    ($abef:ident, $cdgh:ident, $rest:expr, $i:expr) => {{
        // SAFETY: K has 64 entries; $i < 16.
        let kv = unsafe { _mm_loadu_si128(K.as_ptr().add(4 * $i).cast::<__m128i>()) };
        let t1 = _mm_add_epi32($rest, kv);
        $cdgh = _mm_sha256rnds2_epu32($cdgh, $abef, t1);
        let t2 = _mm_shuffle_epi32(t1, 0x0E);
        $abef = _mm_sha256rnds2_epu32($abef, $cdgh, t2);
    }};
}

/// The 64 rounds of one block for each listed state, step by step across
/// the states (so two states' instructions interleave): the state
/// `(abef, cdgh)` and its five schedule words `w0`–`w4`, the first four
/// loaded with the block. The last schedule words are not read again.
macro_rules! rounds64 {
    ($(($abef:ident, $cdgh:ident, $w0:ident, $w1:ident, $w2:ident, $w3:ident, $w4:ident)),+) => {{
        $(rounds4!($abef, $cdgh, $w0, 0);)+
        $(rounds4!($abef, $cdgh, $w1, 1);)+
        $(rounds4!($abef, $cdgh, $w2, 2);)+
        $(rounds4!($abef, $cdgh, $w3, 3);)+
        $($w4 = schedule($w0, $w1, $w2, $w3); rounds4!($abef, $cdgh, $w4, 4);)+
        $($w0 = schedule($w1, $w2, $w3, $w4); rounds4!($abef, $cdgh, $w0, 5);)+
        $($w1 = schedule($w2, $w3, $w4, $w0); rounds4!($abef, $cdgh, $w1, 6);)+
        $($w2 = schedule($w3, $w4, $w0, $w1); rounds4!($abef, $cdgh, $w2, 7);)+
        $($w3 = schedule($w4, $w0, $w1, $w2); rounds4!($abef, $cdgh, $w3, 8);)+
        $($w4 = schedule($w0, $w1, $w2, $w3); rounds4!($abef, $cdgh, $w4, 9);)+
        $($w0 = schedule($w1, $w2, $w3, $w4); rounds4!($abef, $cdgh, $w0, 10);)+
        $($w1 = schedule($w2, $w3, $w4, $w0); rounds4!($abef, $cdgh, $w1, 11);)+
        $($w2 = schedule($w3, $w4, $w0, $w1); rounds4!($abef, $cdgh, $w2, 12);)+
        $($w3 = schedule($w4, $w0, $w1, $w2); rounds4!($abef, $cdgh, $w3, 13);)+
        $($w4 = schedule($w0, $w1, $w2, $w3); rounds4!($abef, $cdgh, $w4, 14);)+
        $($w0 = schedule($w1, $w2, $w3, $w4); rounds4!($abef, $cdgh, $w0, 15);)+
        $(let _ = (&mut $w1, &mut $w2, &mut $w3, &mut $w4);)+
    }};
}

/// The four message words of a 64-byte block, byte-swapped.
macro_rules! load4 {
    ($block:expr, $mask:expr) => {{
        let block: &[u8] = &$block[..64];
        // SAFETY: 64 bytes are four 16-byte unaligned loads.
        unsafe {
            let p = block.as_ptr().cast::<__m128i>();
            (
                _mm_shuffle_epi8(_mm_loadu_si128(p), $mask),
                _mm_shuffle_epi8(_mm_loadu_si128(p.add(1)), $mask),
                _mm_shuffle_epi8(_mm_loadu_si128(p.add(2)), $mask),
                _mm_shuffle_epi8(_mm_loadu_si128(p.add(3)), $mask),
            )
        }
    }};
}

/// The state in the registers' (ABEF, CDGH) layout.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
pub(crate) fn load(state: &[u32; 8]) -> (__m128i, __m128i) {
    // SAFETY: 8 u32 are two 16-byte unaligned loads.
    let (dcba, efgh) = unsafe {
        let p = state.as_ptr().cast::<__m128i>();
        (_mm_loadu_si128(p), _mm_loadu_si128(p.add(1)))
    };
    let cdab = _mm_shuffle_epi32(dcba, 0xB1);
    let efgh = _mm_shuffle_epi32(efgh, 0x1B);
    (
        _mm_alignr_epi8(cdab, efgh, 8),
        _mm_blend_epi16(efgh, cdab, 0xF0),
    )
}

/// Compresses one 64-byte block into one state.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn block1(state: (&mut __m128i, &mut __m128i), block: &[u8], mask: __m128i) {
    let (mut abef, mut cdgh) = (*state.0, *state.1);
    let (mut w0, mut w1, mut w2, mut w3) = load4!(block, mask);
    let mut w4: __m128i;
    rounds64!((abef, cdgh, w0, w1, w2, w3, w4));
    *state.0 = _mm_add_epi32(abef, *state.0);
    *state.1 = _mm_add_epi32(cdgh, *state.1);
}

/// Compresses one block into each of two states, the two computations
/// interleaved so that each fills the other's latency.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn block2(
    a: (&mut __m128i, &mut __m128i),
    block_a: &[u8],
    b: (&mut __m128i, &mut __m128i),
    block_b: &[u8],
    mask: __m128i,
) {
    let (mut a_abef, mut a_cdgh, mut b_abef, mut b_cdgh) = (*a.0, *a.1, *b.0, *b.1);
    let (mut a_w0, mut a_w1, mut a_w2, mut a_w3) = load4!(block_a, mask);
    let (mut b_w0, mut b_w1, mut b_w2, mut b_w3) = load4!(block_b, mask);
    let (mut a_w4, mut b_w4): (__m128i, __m128i);
    rounds64!(
        (a_abef, a_cdgh, a_w0, a_w1, a_w2, a_w3, a_w4),
        (b_abef, b_cdgh, b_w0, b_w1, b_w2, b_w3, b_w4)
    );
    *a.0 = _mm_add_epi32(a_abef, *a.0);
    *a.1 = _mm_add_epi32(a_cdgh, *a.1);
    *b.0 = _mm_add_epi32(b_abef, *b.0);
    *b.1 = _mm_add_epi32(b_cdgh, *b.1);
}

/// The state in the order of [`H0`] from the registers' (ABEF, CDGH)
/// layout.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
pub(crate) fn store(abef: __m128i, cdgh: __m128i) -> [u32; 8] {
    let feba = _mm_shuffle_epi32(abef, 0x1B);
    let dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    let dcba = _mm_blend_epi16(feba, dchg, 0xF0);
    let hgef = _mm_alignr_epi8(dchg, feba, 8);
    let mut state = [0u32; 8];
    // SAFETY: 8 u32 are two 16-byte unaligned stores.
    unsafe {
        let p = state.as_mut_ptr().cast::<__m128i>();
        _mm_storeu_si128(p, dcba);
        _mm_storeu_si128(p.add(1), hgef);
    }
    state
}

/// The byte order of the message words.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
pub(crate) fn mask() -> __m128i {
    _mm_set_epi64x(
        0x0C0D_0E0F_0809_0A0Bu64 as i64,
        0x0405_0607_0001_0203u64 as i64,
    )
}

/// Whether the extensions' code may run ([`available`]); the tests count
/// the calls that take it.
fn enter() -> bool {
    if !available() {
        return false;
    }
    #[cfg(test)]
    crate::tests::INTERLEAVED.with(|n| n.set(n.get() + 1));
    true
}

/// See [`crate::update_with_messages`]: `None` when this CPU lacks the
/// extensions. The check is made here, so this safe function never runs
/// their instructions where they do not exist.
pub(crate) fn with_messages(
    state: &mut [u32; 8],
    long: &[u8],
    messages: &[u8],
    blocks: &[u32],
    out: &mut Vec<Digest32>,
) -> Option<()> {
    if !enter() {
        return None;
    }
    // SAFETY: `enter` found every feature the function enables.
    unsafe { with_messages_ni(state, long, messages, blocks, out) };
    Some(())
}

/// See [`crate::update_pair`]: `None` when this CPU lacks the extensions
/// (checked here, as in [`with_messages`]).
pub(crate) fn pair(
    a: &mut [u32; 8],
    a_blocks: &[u8],
    b: &mut [u32; 8],
    b_blocks: &[u8],
) -> Option<()> {
    if !enter() {
        return None;
    }
    // SAFETY: `enter` found every feature the function enables.
    unsafe { pair_ni(a, a_blocks, b, b_blocks) };
    Some(())
}

/// Each message is hashed beside the long stream while that has blocks;
/// the messages after that, two at a time (one message's blocks beside
/// the next one's), so that no message block runs alone but where two
/// messages differ in length. Row messages have more blocks than the line
/// they come from (a 130-byte item is 2 blocks of the line, its message
/// about 2.9 with padding), so a batch ends with messages only; hashed
/// one at a time, they took an eighth of the hashing time at half speed.
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn with_messages_ni(
    state: &mut [u32; 8],
    long: &[u8],
    messages: &[u8],
    blocks: &[u32],
    out: &mut Vec<Digest32>,
) {
    let mask = mask();
    let mut long_blocks = long.chunks_exact(64);
    let (mut a_abef, mut a_cdgh) = load(state);
    // The messages' bytes not yet hashed, and their block counts.
    let mut rest = messages;
    let mut counts = blocks;
    // Beside the long stream.
    while let Some((&n, more)) = counts.split_first() {
        if long_blocks.len() == 0 {
            break;
        }
        counts = more;
        let (this, after) = rest.split_at(rest.len().min(n as usize * 64));
        rest = after;
        let (mut b_abef, mut b_cdgh) = load(&H0);
        for mb in this.chunks_exact(64) {
            match long_blocks.next() {
                Some(lb) => block2(
                    (&mut a_abef, &mut a_cdgh),
                    lb,
                    (&mut b_abef, &mut b_cdgh),
                    mb,
                    mask,
                ),
                None => block1((&mut b_abef, &mut b_cdgh), mb, mask),
            }
        }
        out.push(crate::to_bytes(&store(b_abef, b_cdgh)));
    }
    // Two messages at a time.
    while let Some((&n, more)) = counts.split_first() {
        let (this, after) = rest.split_at(rest.len().min(n as usize * 64));
        let (next, m) = match more.split_first() {
            Some((&m, more)) => {
                counts = more;
                (Some(()), m)
            }
            None => {
                counts = more;
                (None, 0)
            }
        };
        let (that, after) = after.split_at(after.len().min(m as usize * 64));
        rest = after;
        let (mut b_abef, mut b_cdgh) = load(&H0);
        let (mut c_abef, mut c_cdgh) = load(&H0);
        let mut those = that.chunks_exact(64);
        for mb in this.chunks_exact(64) {
            match those.next() {
                Some(mc) => block2(
                    (&mut b_abef, &mut b_cdgh),
                    mb,
                    (&mut c_abef, &mut c_cdgh),
                    mc,
                    mask,
                ),
                None => block1((&mut b_abef, &mut b_cdgh), mb, mask),
            }
        }
        for mc in those {
            block1((&mut c_abef, &mut c_cdgh), mc, mask);
        }
        out.push(crate::to_bytes(&store(b_abef, b_cdgh)));
        if next.is_some() {
            out.push(crate::to_bytes(&store(c_abef, c_cdgh)));
        }
    }
    for lb in long_blocks {
        block1((&mut a_abef, &mut a_cdgh), lb, mask);
    }
    *state = store(a_abef, a_cdgh);
}

#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn pair_ni(a: &mut [u32; 8], a_blocks: &[u8], b: &mut [u32; 8], b_blocks: &[u8]) {
    let mask = mask();
    let (mut a_abef, mut a_cdgh) = load(a);
    let (mut b_abef, mut b_cdgh) = load(b);
    let mut ai = a_blocks.chunks_exact(64);
    let mut bi = b_blocks.chunks_exact(64);
    loop {
        match (ai.next(), bi.next()) {
            (Some(x), Some(y)) => block2(
                (&mut a_abef, &mut a_cdgh),
                x,
                (&mut b_abef, &mut b_cdgh),
                y,
                mask,
            ),
            (Some(x), None) => block1((&mut a_abef, &mut a_cdgh), x, mask),
            (None, Some(y)) => block1((&mut b_abef, &mut b_cdgh), y, mask),
            (None, None) => break,
        }
    }
    *a = store(a_abef, a_cdgh);
    *b = store(b_abef, b_cdgh);
}
