//! Bucket objects and payloads: descriptors drawn from the seed, bytes as a
//! pure function of (content seed, offset), and the producer's chunking.

use ndarc_format::catalogue::{cmp_objects, cmp_payload_names};
use ndarc_json::{Object, Value};
use sha2::{Digest, Sha256};

use crate::rng::{derive, derive_all, mix, Rng, GOLDEN};
use crate::rows::{UNICODE, WORDS};

/// One object or payload of a generated archive.
#[derive(Debug, Clone)]
pub(crate) struct Binary {
    /// `(bucket, key)` for an object.
    pub object: Option<(String, String)>,
    /// The name of a payload.
    pub name: Option<String>,
    pub size: u64,
    /// Seed of the bytes.
    pub seed: u64,
    /// Bytes from a printable alphabet rather than all 256 values.
    pub text: bool,
    pub http: Vec<(String, String)>,
    pub custom: Vec<(String, String)>,
    /// Filled by the planning pass.
    pub sha256: [u8; 32],
}

impl Binary {
    /// The key `diff.mjs` matches on: canonical `["bucket","key"]` or
    /// `["name"]`.
    pub(crate) fn diff_key(&self) -> String {
        let v = match (&self.object, &self.name) {
            (Some((b, k)), _) => {
                Value::Array(vec![Value::from(b.as_str()), Value::from(k.as_str())])
            }
            (None, Some(n)) => Value::Array(vec![Value::from(n.as_str())]),
            (None, None) => Value::Array(vec![]),
        };
        ndarc_json::to_canonical_string(&v)
    }

    /// The largest chunk a part of `part_bytes` carries for this entry.
    pub(crate) fn chunk_cap(&self, part_bytes: usize) -> u64 {
        let (b, k) = match &self.object {
            Some((b, k)) => (Some(b.as_str()), Some(k.as_str())),
            None => (None, None),
        };
        chunk_cap(part_bytes, b, k, self.name.as_deref())
    }
}

pub use ndarc_format::pack::{chunk_cap, chunk_count};

const TEXT_ALPHABET: &[u8; 64] =
    b"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n";

/// Fills `out` with the bytes at `offset..offset+out.len()` of the content
/// with seed `seed`: byte `p` is byte `p mod 8` (little-endian) of
/// `mix(seed + (p/8 + 1)·φ)`, mapped into a printable alphabet for text.
pub(crate) fn fill(seed: u64, text: bool, offset: u64, out: &mut [u8]) {
    let word =
        |k: u64| mix(seed.wrapping_add(k.wrapping_add(1).wrapping_mul(GOLDEN))).to_le_bytes();
    let mut p = offset;
    let mut i = 0;
    // Up to the next word boundary.
    while i < out.len() && !p.is_multiple_of(8) {
        out[i] = word(p / 8)[(p % 8) as usize];
        i += 1;
        p += 1;
    }
    let rest = &mut out[i..];
    let mut chunks = rest.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&word(p / 8));
        p += 8;
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let w = word(p / 8);
        tail.copy_from_slice(&w[..tail.len()]);
    }
    if text {
        for b in out.iter_mut() {
            *b = TEXT_ALPHABET[usize::from(*b & 63)];
        }
    }
}

/// SHA-256 of a whole entry's bytes, generated in blocks.
pub(crate) fn digest(b: &Binary) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0;
    while off < b.size {
        let n = (b.size - off).min(buf.len() as u64) as usize;
        fill(b.seed, b.text, off, &mut buf[..n]);
        h.update(&buf[..n]);
        off += n as u64;
    }
    h.finalize().into()
}

const BUCKETS: &[&str] = &["assets", "uploads", "Ünï bucket"];
const DIRS: &[&str] = &[
    "avatars",
    "docs/résumé",
    "emoji/😀",
    "a b/c \"quoted\"",
    "deep/nested/path/to",
];
const EXTS: &[&str] = &[".png", ".pdf", ".txt", ".json", ""];

fn object(seed: u64, i: u64, opts: &ObjectParams) -> Binary {
    let mut rng = Rng::new(derive_all(seed, &[0x0B1EC7, i]));
    let bucket = rng.pick(BUCKETS).to_string();
    let ext = rng.pick(EXTS);
    let key = format!("{}/{i:05}-{}{ext}", rng.pick(DIRS), rng.pick(WORDS));
    let text = matches!(ext, ".txt" | ".json");
    let mut http = Vec::new();
    let content_type = match ext {
        ".png" => "image/png",
        ".pdf" => "application/pdf",
        ".txt" => "text/plain; charset=utf-8",
        ".json" => "application/json",
        _ => "application/octet-stream",
    };
    if !rng.one_in(5) {
        http.push(("contentType".to_string(), content_type.to_string()));
    }
    if rng.one_in(3) {
        http.push((
            "cacheControl".to_string(),
            "public, max-age=3600".to_string(),
        ));
    }
    if rng.one_in(4) {
        http.push((
            "contentDisposition".to_string(),
            format!("attachment; filename=\"{i}{ext}\""),
        ));
    }
    if rng.one_in(6) {
        http.push(("contentLanguage".to_string(), "fr-CA".to_string()));
    }
    let mut custom = Vec::new();
    if rng.one_in(2) {
        custom.push(("owner".to_string(), format!("user-{}", rng.below(1000))));
    }
    if rng.one_in(3) {
        custom.push(("note".to_string(), rng.pick(UNICODE).to_string()));
    }
    let mut b = Binary {
        object: Some((bucket, key)),
        name: None,
        size: 0,
        seed: derive(rng.next_u64(), 0xC0),
        text,
        http,
        custom,
        sha256: [0; 32],
    };
    b.size = if i == 0 {
        0
    } else if i == 1 && opts.large {
        2 * b.chunk_cap(opts.part_bytes) + 1
    } else if opts.max_bytes == 0 {
        0
    } else {
        rng.range(1, opts.max_bytes)
    };
    b
}

/// What object generation needs from the options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ObjectParams {
    pub count: u64,
    pub max_bytes: u64,
    pub large: bool,
    pub part_bytes: usize,
}

/// The changes a later export makes to the binaries, as `diff.mjs` keys.
#[derive(Debug, Clone, Default)]
pub(crate) struct Delta {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

/// The archive's objects in manifest order, and the later export's delta.
pub(crate) fn objects(seed: u64, p: &ObjectParams, later: Option<u64>) -> (Vec<Binary>, Delta) {
    let mut list: Vec<Binary> = (0..p.count).map(|i| object(seed, i, p)).collect();
    let mut delta = Delta::default();
    if let Some(ls) = later {
        if p.count > 0 {
            let at = (p.count - 1).min(2) as usize;
            let b = &mut list[at];
            b.seed = derive(b.seed, ls);
            if b.size == 0 {
                b.size = 5;
            }
            b.custom.push(("revision".to_string(), "2".to_string()));
            delta.changed.push(b.diff_key());
        }
        if p.count > 3 {
            delta.removed.push(list[3].diff_key());
            list.remove(3);
        }
        let mut added = object(derive(seed, ls), p.count, p);
        if let Some((_, key)) = &mut added.object {
            key.push_str(".new");
        }
        delta.added.push(added.diff_key());
        list.push(added);
    }
    list.sort_by(|a, b| {
        let (ab, ak) = a
            .object
            .as_ref()
            .map_or(("", ""), |(b, k)| (b.as_str(), k.as_str()));
        let (bb, bk) = b
            .object
            .as_ref()
            .map_or(("", ""), |(b, k)| (b.as_str(), k.as_str()));
        cmp_objects((ab, ak), (bb, bk))
    });
    (list, delta)
}

const PAYLOAD_NAMES: &[&str] = &[
    "kv",
    "kv cache",
    "sessions",
    "kv/archive",
    "queue: dead letters",
    "Ω-state",
];

/// The archive's payloads in manifest (producer) order, and the later
/// export's delta.
pub(crate) fn payloads(
    seed: u64,
    count: u64,
    max_bytes: u64,
    later: Option<u64>,
) -> (Vec<Binary>, Delta) {
    let mut list = Vec::new();
    for i in 0..count {
        let mut rng = Rng::new(derive_all(seed, &[0x9A710AD, i]));
        let name = PAYLOAD_NAMES
            .get(i as usize)
            .map_or_else(|| format!("payload-{i}"), |n| n.to_string());
        let size = if i == 2 || max_bytes == 0 {
            0
        } else {
            rng.range(1, max_bytes)
        };
        list.push(Binary {
            object: None,
            name: Some(name),
            size,
            seed: derive(rng.next_u64(), 0xC1),
            text: i == 0,
            http: Vec::new(),
            custom: Vec::new(),
            sha256: [0; 32],
        });
    }
    let mut delta = Delta::default();
    if let (Some(ls), Some(first)) = (later, list.first_mut()) {
        if first.size == 0 {
            first.size = 3;
        }
        first.seed = changed_seed(first, ls);
        delta.changed.push(first.diff_key());
    }
    list.sort_by(|a, b| {
        cmp_payload_names(
            a.name.as_deref().unwrap_or(""),
            b.name.as_deref().unwrap_or(""),
        )
    });
    (list, delta)
}

/// A seed derived from `b`'s and `later` whose content differs from `b`'s:
/// a short payload (one text byte has a few dozen spellings) can otherwise
/// come out the same, and the delta would list a change the diff cannot see.
/// The leading bytes differing is enough; they are compared, not hashed.
fn changed_seed(b: &Binary, later: u64) -> u64 {
    let n = b.size.min(8) as usize;
    let (mut old, mut new) = ([0u8; 8], [0u8; 8]);
    fill(b.seed, b.text, 0, &mut old[..n]);
    let mut seed = derive(b.seed, later);
    for round in 1u64.. {
        fill(seed, b.text, 0, &mut new[..n]);
        if old[..n] != new[..n] {
            break;
        }
        seed = derive(seed, later.wrapping_add(round));
    }
    seed
}

fn string_map(pairs: &[(String, String)]) -> Value<'static> {
    let mut o = Object::new();
    for (k, v) in pairs {
        o.insert(k.clone(), Value::from(v.clone()));
    }
    Value::Object(o)
}

/// The manifest entry of an object or payload.
pub(crate) fn manifest_value(b: &Binary) -> Value<'static> {
    let mut o = Object::new();
    if let Some((bucket, key)) = &b.object {
        o.insert("bucket", Value::from(bucket.clone()));
        o.insert("key", Value::from(key.clone()));
    }
    if let Some(name) = &b.name {
        o.insert("name", Value::from(name.clone()));
    }
    o.insert("size", Value::from(b.size as i64));
    o.insert("sha256", Value::from(ndarc_format::hash::hex(&b.sha256)));
    if b.object.is_some() {
        o.insert("httpMetadata", string_map(&b.http));
        o.insert("customMetadata", string_map(&b.custom));
    }
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_position_addressed() {
        let mut whole = vec![0u8; 100];
        fill(42, false, 0, &mut whole);
        for start in 0..20 {
            for len in [0, 1, 7, 8, 9, 33] {
                let mut part = vec![0u8; len];
                fill(42, false, start as u64, &mut part);
                assert_eq!(part, whole[start..start + len]);
            }
        }
        let mut t = vec![0u8; 50];
        fill(42, true, 3, &mut t);
        assert!(t.iter().all(|b| TEXT_ALPHABET.contains(b)));
    }

    #[test]
    fn chunk_cap_follows_the_producer() {
        // {"bucket":null,"key":null,"name":"kv"} is 38 bytes.
        assert_eq!(
            chunk_cap(1024, None, None, Some("kv")),
            (1024 - 200 - 38) * 3 / 4
        );
        assert_eq!(chunk_cap(1024, Some("b"), Some(&"k".repeat(2000)), None), 1);
        assert_eq!(chunk_count(0, 10), 1);
        assert_eq!(chunk_count(10, 10), 1);
        assert_eq!(chunk_count(11, 10), 2);
    }

    #[test]
    fn a_changed_payload_always_differs() {
        // One text byte: before the check, about one seed in forty gave the
        // later export the same byte (and a delta the diff could not see).
        for seed in 0..2000 {
            let (a, _) = payloads(seed, 1, 1, None);
            let (b, delta) = payloads(seed, 1, 1, Some(seed ^ 0xABCD));
            assert_eq!(delta.changed, vec![a[0].diff_key()]);
            assert_ne!(digest(&a[0]), digest(&b[0]), "seed {seed}");
        }
    }
}
