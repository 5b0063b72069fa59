//! Mutations of SPEC.md §5.4: object and payload items (chunk offsets, empty
//! chunks), and the bytes they add up to (missing, size, `sha256`).

use ndarc_format::catalogue::{decode_base64, encode_base64};
use ndarc_format::hash::{hex, sha256};
use ndarc_format::Code;
use ndarc_json::Value;

use crate::rng::Rng;

use super::edit::{
    int_at, n, obj_mut, pick, s, some_bytes, str_at, At, Bin, Edit, Model, Need, R, V,
};
use super::fixture::{self as fx, build, case, Fixture, Recs, GREET, LOGO0, LOGO1, M};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        ChunkOffset,
        "chunk_offset",
        "a chunk offset one too far",
        chunk_offset
    ),
    mutation!(
        ChunkSize,
        "chunk_size",
        "a binary cut again into chunks of unequal sizes (a warning)",
        chunk_size
    ),
    mutation!(
        EmptyChunk,
        "empty_chunk",
        "an empty chunk inside or after a binary",
        empty_chunk
    ),
    mutation!(
        BinaryMissing,
        "binary_missing",
        "a binary's chunks, or its last chunk, removed",
        binary_missing
    ),
    mutation!(
        SizeMismatch,
        "size_mismatch",
        "a binary's size less than its bytes",
        size_mismatch
    ),
    mutation!(
        Sha256Mismatch,
        "sha256_mismatch",
        "a binary's bytes or sha256 changed",
        sha256_mismatch
    ),
];

fn chunk_offset(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let bins = m.nonempty_bins(rng)?;
    let b = pick(&bins, rng, "no binary has bytes")?;
    let j = rng.below(b.parts.len() as u64) as usize;
    let p = b.parts[j];
    let item = m.item_mut(p, 0)?;
    let off = item
        .get("offset")
        .and_then(Value::as_safe_integer)
        .unwrap_or(0);
    item.insert("offset", n(off + 1));
    Ok(Edit::new(
        At::Part(p),
        format!(
            "chunk {j} of {} {:?} says offset {} where {off} is expected",
            b.kind.word(),
            b.label,
            off + 1
        ),
    )
    .allow(&[Code::SizeMismatch]))
}

fn empty_chunk(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    // Between two chunks: a binary of two or more chunks, or one of two or
    // more bytes cut in two.
    let mut bins: Vec<Bin> = m
        .bins()
        .into_iter()
        .filter(|b| b.size >= 2 && !b.parts.is_empty())
        .collect();
    if bins.is_empty() {
        let data = some_bytes(rng, 2, 30);
        m.add_last_payload(&data)?;
        bins = m
            .bins()
            .into_iter()
            .filter(|b| b.size >= 2 && !b.parts.is_empty())
            .collect();
    }
    let b = pick(&bins, rng, "no binary has two bytes")?;
    let template = m.item(b.parts[0], 0).cloned().need("no chunk")?;
    let chunk = |offset: i64, data: &[u8]| -> R<V> {
        let mut item = template.clone();
        let o = obj_mut(&mut item).need("not an object")?;
        o.insert("offset", n(offset));
        o.insert("data", s(encode_base64(data)));
        Ok(item)
    };
    let (at, off, what) = if b.parts.len() >= 2 {
        let j = rng.below(b.parts.len() as u64 - 1) as usize;
        let next = m.item(b.parts[j + 1], 0).cloned().need("no chunk")?;
        let off = int_at(&next, "offset").unwrap_or(0);
        (
            b.parts[j] + 1,
            off,
            format!("between chunks {j} and {}", j + 1),
        )
    } else {
        let bytes = m.bin_bytes(&b);
        if bytes.len() < 2 {
            return Err("the binary's chunk holds fewer bytes than its size".to_string());
        }
        // The first chunk the larger, as the producer cuts (no chunk_size).
        let half = bytes.len().div_ceil(2);
        let k = half + rng.below((bytes.len() - half) as u64) as usize;
        let p = b.parts[0];
        *m.item_mut(p, 0)? = match chunk(0, &bytes[..k])? {
            Value::Object(o) => o,
            _ => return Err("not an object".to_string()),
        };
        m.insert_part(p + 1, vec![chunk(k as i64, &bytes[k..])?]);
        (
            p + 1,
            k as i64,
            format!("cut in two chunks at byte {k}, and"),
        )
    };
    let p = m.insert_part(at, vec![chunk(off, b"")?]);
    Ok(Edit::new(
        At::Part(p),
        format!(
            "{} {:?} {what} an empty chunk (offset {off}, data \"\") in part {p}",
            b.kind.word(),
            b.label
        ),
    ))
}

/// A binary of three bytes or more cut again into chunks of 1, 2 and the
/// rest: the second chunk differs in size from the first (a warning).
fn chunk_size(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let fits = |b: &Bin| b.size >= 3 && !b.parts.is_empty();
    let mut bins: Vec<Bin> = m.bins().into_iter().filter(fits).collect();
    if bins.is_empty() {
        let data = some_bytes(rng, 3, 30);
        m.add_last_payload(&data)?;
        bins = m.bins().into_iter().filter(fits).collect();
    }
    let b = pick(&bins, rng, "no binary has three bytes")?;
    let bytes = m.bin_bytes(&b);
    if bytes.len() as i64 != b.size {
        return Err("the binary's chunks do not hold its size".to_string());
    }
    let template = m.item(b.parts[0], 0).cloned().need("no chunk")?;
    let chunk = |offset: usize, data: &[u8]| -> R<V> {
        let mut item = template.clone();
        let o = obj_mut(&mut item).need("not an object")?;
        o.insert("offset", n(offset as i64));
        o.insert("data", s(encode_base64(data)));
        Ok(item)
    };
    let len = bytes.len();
    let cuts: Vec<(usize, usize)> = if len == 3 {
        vec![(0, 1), (1, 3)]
    } else {
        vec![(0, 1), (1, 3), (3, len)]
    };
    let first = b.parts[0];
    for &p in b.parts.iter().rev() {
        m.parts.remove(p);
    }
    for (k, &(a, e)) in cuts.iter().enumerate() {
        m.insert_part(first + k, vec![chunk(a, &bytes[a..e])?]);
    }
    m.renumber();
    Ok(Edit::new(
        At::Part(first + 1),
        format!(
            "{} {:?} cut again into chunks of {} bytes: the producer cuts equal chunks (a warning)",
            b.kind.word(),
            b.label,
            cuts.iter()
                .map(|(a, e)| (e - a).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

fn binary_missing(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let b = m.some_bin(rng)?;
    let what = if b.parts.len() >= 2 && rng.one_in(2) {
        let last = *b.parts.last().need("")?;
        m.parts.remove(last);
        format!(
            "the last chunk of {} {:?} removed (it stops short)",
            b.kind.word(),
            b.label
        )
    } else {
        for &p in b.parts.iter().rev() {
            m.parts.remove(p);
        }
        format!("every chunk of {} {:?} removed", b.kind.word(), b.label)
    };
    m.renumber();
    Ok(Edit::new(At::Manifest, what))
}

fn size_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    // The size falls inside the last chunk, so that the bytes pass it there
    // (earlier, the rest would be chunks of a finished binary).
    let last_len = |m: &Model, b: &Bin| -> i64 {
        b.parts
            .last()
            .and_then(|&p| m.item(p, 0))
            .and_then(|i| str_at(i, "data"))
            .and_then(decode_base64)
            .map_or(0, |d| d.len() as i64)
    };
    let fits = |m: &Model| -> Vec<Bin> {
        m.bins()
            .into_iter()
            .filter(|b| !b.parts.is_empty() && last_len(m, b) >= 2)
            .collect()
    };
    let mut bins = fits(m);
    if bins.is_empty() {
        let data = some_bytes(rng, 2, 30);
        m.add_last_payload(&data)?;
        bins = fits(m);
    }
    let b = pick(&bins, rng, "no binary has a last chunk of two bytes")?;
    let cut = 1 + rng.below((last_len(m, &b) - 1).min(4) as u64) as i64;
    m.entry_mut(b.kind, b.idx)?.insert("size", n(b.size - cut));
    let at = *b.parts.last().need("no chunk")?;
    Ok(Edit::new(
        At::Part(at),
        format!(
            "{} {:?} says size {} but its chunks hold {} bytes (sha256 is that of the bytes)",
            b.kind.word(),
            b.label,
            b.size - cut,
            b.size
        ),
    ))
}

fn sha256_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let b = m.some_bin(rng)?;
    let last = *b.parts.last().need("")?;
    if b.size > 0 && rng.one_in(2) {
        // Other bytes of the same length in one chunk.
        let j = rng.below(b.parts.len() as u64) as usize;
        let p = b.parts[j];
        let item = m.item_mut(p, 0)?;
        let mut bytes = item
            .get("data")
            .and_then(Value::as_str)
            .and_then(decode_base64)
            .unwrap_or_default();
        if bytes.is_empty() {
            return Err("an empty chunk".to_string());
        }
        let k = rng.below(bytes.len() as u64) as usize;
        bytes[k] ^= 1 + (rng.below(255) as u8);
        item.insert("data", s(encode_base64(&bytes)));
        return Ok(Edit::new(
            At::Part(last),
            format!(
                "byte {k} of chunk {j} of {} {:?} changed",
                b.kind.word(),
                b.label
            ),
        ));
    }
    let other = hex(&sha256(
        &m.bin_bytes(&b)
            .iter()
            .chain(b"!")
            .copied()
            .collect::<Vec<_>>(),
    ));
    m.entry_mut(b.kind, b.idx)?.insert("sha256", s(other));
    Ok(Edit::new(
        At::Part(last),
        format!(
            "the sha256 of {} {:?} is that of other bytes",
            b.kind.word(),
            b.label
        ),
    ))
}

// ------------------------------------------------------------- fixtures

/// An empty object `a/empty` first in the manifest (its one chunk, empty,
/// is the part of line `GREET`, before `greeting.txt`'s).
fn empty_object(r: &mut Recs) -> R<()> {
    let entry = format!(
        r#"{{"bucket":"a","key":"empty","size":0,"sha256":"{}","httpMetadata":{{}},"customMetadata":{{}}}}"#,
        hex(&sha256(b""))
    );
    match r.at(M, "/objects")? {
        Value::Array(a) => a.insert(0, fx::j(&entry)?),
        _ => return Err("no objects".into()),
    }
    let item = r#"[{"kind":"object","bucket":"a","key":"empty","offset":0,"data":""}]"#;
    r.insert_part(GREET, fx::part(fx::j(item)?))
}

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    let sha = |b: &[u8]| format!("\"{}\"", hex(&sha256(b)));
    build(vec![
        c("chunk_offset", 6, "/items/0/offset")
            .note("the second chunk of logo.bin says offset 5 where 4 is expected; the bytes themselves are complete and hash to sha256")
            .put("5"),
        c("chunk_offset-first", 4, "/items/0/offset")
            .note("a whole object in one chunk at offset 1")
            .put("1"),
        c("empty_chunk", 6, "/items/0/data")
            .note("logo.bin in three chunks, the middle one empty (offset 4, data \"\")")
            .with(|r| {
                let item = r#"[{"kind":"object","bucket":"files","key":"logo.bin","offset":4,"data":""}]"#;
                r.insert_part(LOGO1, fx::part(fx::j(item)?))
            }),
        c("chunk_size", 6, "/items/0/data")
            .note("logo.bin in chunks of 2, 4 and 2 bytes: the producer cuts every chunk but the last to one size")
            .with(|r| r.rechunk(LOGO0, 2, &[2, 4, 2])),
        c("chunk_size-last", 6, "/items/0/data")
            .note("logo.bin in chunks of 3 and 5 bytes: the last chunk is larger than the first")
            .with(|r| r.rechunk(LOGO0, 2, &[3, 5])),
        c("empty_chunk-payload", 8, "/items/0/data")
            .note("the payload kv cache in chunks of 1, 0 and 1 bytes")
            .with(|r| r.rechunk(fx::KVC, 1, &[1, 0, 1])),
        c("binary_missing", 1, "/objects/0")
            .note("greeting.txt has no chunks")
            .with(|r| r.drop_part(GREET).map(drop)),
        c("binary_missing-last-chunk", 1, "/objects/1")
            .note("logo.bin stops after its first chunk")
            .with(|r| r.drop_part(LOGO1).map(drop)),
        c("binary_missing-payload", 1, "/payloads/1")
            .note("the last payload has no chunk")
            .with(|r| r.drop_part(fx::KV).map(drop)),
        c("binary_missing-empty-object", 1, "/objects/0")
            .note("an empty object still has one chunk (offset 0, data \"\")")
            .with(empty_object)
            .with(|r| r.drop_part(GREET).map(drop)),
        c("size_mismatch", 4, "/items/0/data")
            .note("greeting.txt's chunk holds 13 bytes but its size says 12 (sha256 is that of the 13 bytes)")
            .set(M, "/objects/0/size", "12"),
        c("size_mismatch-chunks", 6, "/items/0/data")
            .note("logo.bin's two chunks hold 8 bytes but its size says 6: reported at the chunk that goes past it")
            .set(M, "/objects/1/size", "6"),
        c("sha256_mismatch", 4, "/items/0/data").set(M, "/objects/0/sha256", &sha(b"hello, world!\n")),
        c("sha256_mismatch-chunks", 6, "/items/0/data")
            .note("logo.bin's second chunk has other bytes")
            .put(&format!("\"{}\"", encode_base64(b"\xfc\xfd\xfe\x00"))),
        c("sha256_mismatch-empty", 4, "/items/0/data")
            .note("an empty object whose sha256 is not that of no bytes")
            .with(empty_object)
            .set(M, "/objects/0/sha256", &sha(b"x")),
    ])
}
