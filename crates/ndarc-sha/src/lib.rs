//! Two SHA-256 computations interleaved, for the verifier's hot path.
//!
//! A row part's bytes are hashed twice: the whole line (a term of
//! `archiveHash`) and each row's content message (terms of `contentHash`).
//! On x86-64 with the SHA extensions one SHA-256 stream is bound by the
//! latency of `sha256rnds2`, not its throughput, so two independent streams
//! interleaved instruction by instruction run in little more time than one.
//! No maintained crate offers a multi-stream SHA-256 (sha2, ring and
//! aws-lc hash one message at a time), hence this crate; its one-stream
//! core follows sha2's x86 backend (MIT/Apache-2.0), and every result is
//! tested against sha2.
#![warn(missing_docs)]

#[cfg(target_arch = "x86_64")]
mod ni;

/// A SHA-256 digest.
pub type Digest32 = [u8; 32];

const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// Appends `parts`, concatenated, to `buf` as one SHA-256 message padded to
/// whole 64-byte blocks; returns the number of blocks appended.
pub fn push_message(buf: &mut Vec<u8>, parts: &[&[u8]]) -> u32 {
    let start = buf.len();
    for p in parts {
        buf.extend_from_slice(p);
    }
    pad_message(buf, start)
}

/// Pads the bytes of `buf` from `start` on, as they are, into one SHA-256
/// message of whole 64-byte blocks (for a message already in a buffer, such
/// as decoded base64, without copying it); returns the number of blocks.
///
/// # Panics
/// If `start` is past the end of `buf`.
pub fn pad_message(buf: &mut Vec<u8>, start: usize) -> u32 {
    let len = (buf.len() - start) as u64;
    // 0x80, zeros up to 8 bytes short of a whole block, the bit length.
    let used = buf.len() - start + 1;
    let padded = (used + 8).div_ceil(64) * 64;
    buf.push(0x80);
    buf.resize(start + padded - 8, 0);
    buf.extend_from_slice(&(len * 8).to_be_bytes());
    ((buf.len() - start) / 64) as u32
}

/// Whether the interleaved implementation runs on this machine (x86-64
/// with the SHA extensions); elsewhere [`digest_pair`] hashes one message
/// at a time with sha2.
pub fn interleaved() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        ni::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// SHA-256 of `long`, and of each message in `messages` (padded messages
/// made by [`push_message`], `blocks[i]` blocks each), the digests of the
/// latter appended to `out` in order.
///
/// # Panics
/// If `blocks` does not describe `messages` (their sum times 64 must be its
/// length).
pub fn digest_pair(
    long: &[u8],
    messages: &[u8],
    blocks: &[u32],
    out: &mut Vec<Digest32>,
) -> Digest32 {
    let whole = long.len() / 64 * 64;
    let mut s = Stream::new();
    update_with_messages(&mut s, &long[..whole], messages, blocks, out);
    s.finish(&long[whole..])
}

/// A SHA-256 computation fed its message a piece at a time, in whole
/// 64-byte blocks, so that a long message (a line, a decoded binary) can be
/// hashed beside other work without being held whole or read twice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    state: [u32; 8],
    /// Bytes compressed so far.
    len: u64,
}

impl Default for Stream {
    fn default() -> Self {
        Self::new()
    }
}

impl Stream {
    /// A computation at the start of its message.
    pub fn new() -> Self {
        Self { state: H0, len: 0 }
    }

    /// Bytes fed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was fed yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Feeds whole blocks.
    ///
    /// # Panics
    /// If `blocks` is not a multiple of 64 bytes long.
    pub fn update(&mut self, blocks: &[u8]) {
        update_pair(self, blocks, &mut Stream::new(), &[]);
    }

    /// The digest of the message: what was fed, then `rest` (any length).
    pub fn finish(mut self, rest: &[u8]) -> Digest32 {
        let whole = rest.len() / 64 * 64;
        self.update(&rest[..whole]);
        let total = self.len + (rest.len() - whole) as u64;
        let (t, n) = tail(&rest[whole..], total);
        self.update(&t[..n * 64]);
        to_bytes(&self.state)
    }
}

/// Feeds whole blocks `a` to `sa` and `b` to `sb`, the two computations
/// interleaved for as many blocks as both have.
///
/// # Panics
/// If `a` or `b` is not a multiple of 64 bytes long.
pub fn update_pair(sa: &mut Stream, a: &[u8], sb: &mut Stream, b: &[u8]) {
    assert!(
        a.len().is_multiple_of(64) && b.len().is_multiple_of(64),
        "not whole blocks"
    );
    sa.len += a.len() as u64;
    sb.len += b.len() as u64;
    #[cfg(target_arch = "x86_64")]
    if ni::pair(&mut sa.state, a, &mut sb.state, b).is_some() {
        return;
    }
    compress(&mut sa.state, a);
    compress(&mut sb.state, b);
}

/// Feeds whole blocks `long` to `s` and hashes each padded message of
/// `messages` (made by [`push_message`], `blocks[i]` blocks each), the two
/// interleaved; the messages' digests are appended to `out` in order.
///
/// # Panics
/// If `long` is not whole blocks, or `blocks` does not describe `messages`.
pub fn update_with_messages(
    s: &mut Stream,
    long: &[u8],
    messages: &[u8],
    blocks: &[u32],
    out: &mut Vec<Digest32>,
) {
    let total: u64 = blocks.iter().map(|&b| u64::from(b)).sum();
    assert_eq!(
        total * 64,
        messages.len() as u64,
        "blocks do not describe messages"
    );
    assert!(long.len().is_multiple_of(64), "not whole blocks");
    s.len += long.len() as u64;
    #[cfg(target_arch = "x86_64")]
    if ni::with_messages(&mut s.state, long, messages, blocks, out).is_some() {
        return;
    }
    with_messages_portable(&mut s.state, long, messages, blocks, out);
}

/// [`update_with_messages`] one stream at a time, with sha2.
fn with_messages_portable(
    state: &mut [u32; 8],
    long: &[u8],
    messages: &[u8],
    blocks: &[u32],
    out: &mut Vec<Digest32>,
) {
    let mut at = 0usize;
    for &b in blocks {
        let end = at + b as usize * 64;
        let mut m = H0;
        compress(&mut m, &messages[at..end]);
        out.push(to_bytes(&m));
        at = end;
    }
    compress(state, long);
}

/// One stream with sha2's compression function: where the SHA extensions
/// are missing, and the reference the tests hold the interleaved code to.
fn compress(state: &mut [u32; 8], blocks: &[u8]) {
    use sha2::digest::generic_array::GenericArray;
    for block in blocks.chunks_exact(64) {
        sha2::compress256(state, &[*GenericArray::from_slice(block)]);
    }
}

fn to_bytes(state: &[u32; 8]) -> Digest32 {
    let mut d = [0u8; 32];
    for (c, w) in d.chunks_exact_mut(4).zip(state) {
        c.copy_from_slice(&w.to_be_bytes());
    }
    d
}

/// The padded final block(s) of a message of `total` bytes whose last
/// `rest` bytes (under 64) are not yet compressed: `rest`, 0x80, zeros
/// and the bit length; returns the buffer and how many of its blocks (1 or
/// 2) are used.
fn tail(rest: &[u8], total: u64) -> ([u8; 128], usize) {
    let mut t = [0u8; 128];
    t[..rest.len()].copy_from_slice(rest);
    t[rest.len()] = 0x80;
    let n = if rest.len() < 56 { 1 } else { 2 };
    t[n * 64 - 8..n * 64].copy_from_slice(&(total * 8).to_be_bytes());
    (t, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::Digest;

    thread_local! {
        /// Calls of the interleaved implementation on this thread.
        pub(crate) static INTERLEAVED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// On a CPU with the SHA extensions the interleaved path must be the
    /// one taken: a regression that silently fell back to the portable
    /// code would still give right digests, only slowly.
    #[test]
    fn interleaved_path_taken_where_supported() {
        #[cfg(target_arch = "x86_64")]
        let supported = std::arch::is_x86_feature_detected!("sha")
            && std::arch::is_x86_feature_detected!("ssse3")
            && std::arch::is_x86_feature_detected!("sse4.1");
        #[cfg(not(target_arch = "x86_64"))]
        let supported = false;
        assert_eq!(interleaved(), supported);
        let before = INTERLEAVED.with(std::cell::Cell::get);
        let mut buf = Vec::new();
        let b = push_message(&mut buf, &[b"row"]);
        let mut out = Vec::new();
        let d = digest_pair(b"line", &buf, &[b], &mut out);
        assert_eq!(d, <[u8; 32]>::from(sha2::Sha256::digest(b"line")));
        let taken = INTERLEAVED.with(std::cell::Cell::get) - before;
        assert_eq!(taken > 0, supported, "interleaved path taken {taken} times");
    }

    fn check(long: &[u8], msgs: &[Vec<u8>]) {
        let mut buf = Vec::new();
        let blocks: Vec<u32> = msgs
            .iter()
            .map(|m| push_message(&mut buf, &[&m[..]]))
            .collect();
        let mut out = Vec::new();
        let d = digest_pair(long, &buf, &blocks, &mut out);
        assert_eq!(d, <[u8; 32]>::from(sha2::Sha256::digest(long)));
        let want: Vec<Digest32> = msgs
            .iter()
            .map(|m| sha2::Sha256::digest(m).into())
            .collect();
        assert_eq!(out, want);
        // The portable code, which runs where the extensions are missing.
        let mut out2 = Vec::new();
        let whole = long.len() / 64 * 64;
        let mut st = H0;
        with_messages_portable(&mut st, &long[..whole], &buf, &blocks, &mut out2);
        let s = Stream {
            state: st,
            len: whole as u64,
        };
        assert_eq!(s.finish(&long[whole..]), d);
        assert_eq!(out2, want);
    }

    #[test]
    fn every_length_around_block_boundaries() {
        for n in 0..200usize {
            let long: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
            let msgs: Vec<Vec<u8>> = (0..n % 9)
                .map(|k| vec![k as u8; (n * 3 + k * 17) % 150])
                .collect();
            check(&long, &msgs);
        }
        check(b"", &[]);
        check(
            &[1; 5000],
            &[
                vec![2; 64],
                vec![],
                vec![3; 55],
                vec![4; 56],
                vec![5; 119],
                vec![6; 120],
            ],
        );
        // More message blocks than the long message has.
        check(b"abc", &[vec![9; 1000], vec![8; 3000]]);
    }

    #[test]
    fn a_message_padded_in_place() {
        for n in [0usize, 1, 55, 56, 63, 64, 65, 1000] {
            let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let mut buf = b"prefix".to_vec();
            buf.extend_from_slice(&data);
            let b = pad_message(&mut buf, 6);
            let mut out = Vec::new();
            digest_pair(b"x", &buf[6..], &[b], &mut out);
            assert_eq!(out[0], <[u8; 32]>::from(sha2::Sha256::digest(&data)), "{n}");
        }
    }

    #[test]
    fn message_parts_concatenate() {
        let mut buf = Vec::new();
        let b = push_message(&mut buf, &[b"{\"row\":", b"{}", b",\"table\":\"t\"}"]);
        let mut out = Vec::new();
        digest_pair(b"", &buf, &[b], &mut out);
        assert_eq!(
            out[0],
            <[u8; 32]>::from(sha2::Sha256::digest(b"{\"row\":{},\"table\":\"t\"}"))
        );
    }

    proptest! {
        #[test]
        fn matches_sha2(long in proptest::collection::vec(any::<u8>(), 0..2000),
                        msgs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..12)) {
            check(&long, &msgs);
        }

        /// A message fed in pieces of any whole-block sizes, alone or
        /// beside another, has sha2's digest.
        #[test]
        fn streams_in_pieces(a in proptest::collection::vec(any::<u8>(), 0..3000),
                             b in proptest::collection::vec(any::<u8>(), 0..3000),
                             cuts in proptest::collection::vec((0usize..20, 0usize..20), 0..8)) {
            let (mut sa, mut sb) = (Stream::new(), Stream::new());
            let (mut at_a, mut at_b) = (0usize, 0usize);
            for (ka, kb) in cuts {
                let na = (ka * 64).min((a.len() - at_a) / 64 * 64);
                let nb = (kb * 64).min((b.len() - at_b) / 64 * 64);
                update_pair(&mut sa, &a[at_a..at_a + na], &mut sb, &b[at_b..at_b + nb]);
                at_a += na;
                at_b += nb;
            }
            let mut single = Stream::new();
            single.update(&a[..at_a]);
            prop_assert_eq!(single.len(), at_a as u64);
            prop_assert_eq!(single.finish(&a[at_a..]), <[u8; 32]>::from(sha2::Sha256::digest(&a)));
            prop_assert_eq!(sa.finish(&a[at_a..]), <[u8; 32]>::from(sha2::Sha256::digest(&a)));
            prop_assert_eq!(sb.finish(&b[at_b..]), <[u8; 32]>::from(sha2::Sha256::digest(&b)));
        }

        /// A long message fed in batches, each beside some of the short
        /// messages, as the fast path does.
        #[test]
        fn long_message_in_batches_beside_messages(
            long in proptest::collection::vec(any::<u8>(), 0..3000),
            msgs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..12),
            per_batch in 1usize..5,
        ) {
            let mut s = Stream::new();
            let mut out = Vec::new();
            let mut at = 0usize;
            for batch in msgs.chunks(per_batch) {
                let mut buf = Vec::new();
                let blocks: Vec<u32> = batch.iter().map(|m| push_message(&mut buf, &[&m[..]])).collect();
                let n = (buf.len()).min((long.len() - at) / 64 * 64);
                update_with_messages(&mut s, &long[at..at + n], &buf, &blocks, &mut out);
                at += n;
            }
            prop_assert_eq!(s.finish(&long[at..]), <[u8; 32]>::from(sha2::Sha256::digest(&long)));
            let want: Vec<Digest32> = msgs.iter().map(|m| sha2::Sha256::digest(m).into()).collect();
            prop_assert_eq!(out, want);
        }
    }
}
