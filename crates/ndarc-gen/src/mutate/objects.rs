//! Mutations of SPEC.md §4.4: the manifest's objects and payloads (order,
//! `sha256`, metadata).

use ndarc_format::Code;
use ndarc_json::Value;

use crate::rng::Rng;

use super::edit::{arr, n, pick, s, some_bytes, At, Bin, BinKind, Edit, Model, Need, R, V};
use super::fixture::{self as fx, build, case, Fixture, Recs, CLOSING, GREET, KV, KVC, M};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        ObjectOrder,
        "object_order",
        "two objects swapped (with their chunks) or one listed twice",
        object_order
    ),
    mutation!(
        PayloadOrder,
        "payload_order",
        "two payloads swapped (with their chunks) or one listed twice",
        payload_order
    ),
    mutation!(
        InvalidSha256,
        "invalid_sha256",
        "a sha256 or closing hash not 64 lowercase hex digits",
        invalid_sha256
    ),
    mutation!(
        InvalidMetadata,
        "invalid_metadata",
        "httpMetadata or customMetadata not an object of strings",
        invalid_metadata
    ),
];

/// The parts of a binary as one group, for moving them together.
fn swap_groups(m: &mut Model, a: &[usize], b: &[usize]) -> R<()> {
    // a's parts come right before b's: rebuild that stretch as b then a.
    let start = *a.first().need("no parts")?;
    let end = *b.last().need("no parts")? + 1;
    if a.last().map(|x| x + 1) != b.first().copied() {
        return Err("the two binaries are not next to each other".to_string());
    }
    let stretch: Vec<V> = m.parts.drain(start..end).collect();
    let (first, second) = stretch.split_at(a.len());
    let mut new: Vec<V> = second.to_vec();
    new.extend_from_slice(first);
    for (k, p) in new.into_iter().enumerate() {
        m.parts.insert(start + k, p);
    }
    m.renumber();
    Ok(())
}

fn binary_order(m: &mut Model, rng: &mut Rng, kind: BinKind) -> R<Edit> {
    let count = |m: &Model| m.bins().into_iter().filter(|b| b.kind == kind).count();
    while count(m) < 2 {
        let data = some_bytes(rng, 1, 20);
        match kind {
            BinKind::Object => {
                let key = format!("ndarc-{}.bin", count(m));
                m.add_last_object(&key, &data)?;
            }
            BinKind::Payload => {
                m.add_last_payload(&data)?;
            }
        }
    }
    let bins: Vec<Bin> = m.bins().into_iter().filter(|b| b.kind == kind).collect();
    let code = match kind {
        BinKind::Object => Code::ObjectOrder,
        BinKind::Payload => Code::PayloadOrder,
    };
    if rng.one_in(3) {
        // The same entry twice, and its chunks twice.
        let b = pick(&bins, rng, "no binary")?;
        let entry = arr(&m.manifest, kind.member())[b.idx].clone();
        m.entries_mut(kind)?.insert(b.idx + 1, entry);
        let copies: Vec<V> = b.parts.iter().map(|&p| m.parts[p].clone()).collect();
        let after = *b.parts.last().need("no parts")? + 1;
        for (k, p) in copies.into_iter().enumerate() {
            m.parts.insert(after + k, p);
        }
        m.renumber();
        let _ = code;
        return Ok(Edit::new(
            At::Manifest,
            format!(
                "{} {:?} listed twice (and its chunks twice)",
                kind.word(),
                b.label
            ),
        )
        .allow(&[Code::ItemOrder, Code::BinaryMissing]));
    }
    let k = 1 + rng.below(bins.len() as u64 - 1) as usize;
    let (a, b) = (&bins[k - 1], &bins[k]);
    swap_groups(m, &a.parts, &b.parts)?;
    m.entries_mut(kind)?.swap(k - 1, k);
    Ok(Edit::new(
        At::Manifest,
        format!(
            "{}s {:?} and {:?} swapped (their chunks too)",
            kind.word(),
            a.label,
            b.label
        ),
    ))
}

fn object_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    binary_order(m, rng, BinKind::Object)
}

fn payload_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    binary_order(m, rng, BinKind::Payload)
}

fn invalid_sha256(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    if rng.one_in(3) {
        return Ok(
            Edit::new(At::Closing, "the closing contentHash cut to 63 hex digits")
                .also(&[Code::ContentHashMismatch])
                .closing_value(|c| {
                    let h = c
                        .get("contentHash")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    c.insert("contentHash", s(h.get(..63).unwrap_or("").to_string()));
                }),
        );
    }
    let b = m.some_bin(rng)?;
    let entry = m.entry_mut(b.kind, b.idx)?;
    let old = entry
        .get("sha256")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let upper = old.to_ascii_uppercase();
    let (new, what) = if upper != old && rng.one_in(2) {
        (upper, "in uppercase hex")
    } else {
        (format!("sha256:{old}"), "with a \"sha256:\" prefix")
    };
    entry.insert("sha256", s(new));
    Ok(Edit::new(
        At::Manifest,
        format!(
            "the sha256 of {} {:?} written {what}: it does not match the bytes either",
            b.kind.word(),
            b.label
        ),
    )
    .also(&[Code::Sha256Mismatch]))
}

fn invalid_metadata(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = m.some_object(rng)?;
    let e = m.entry_mut(BinKind::Object, k)?;
    let what = match rng.below(3) {
        0 => {
            let mut http = e
                .get("httpMetadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            http.insert("contentLength", n(13));
            e.insert("httpMetadata", Value::Object(http));
            "httpMetadata.contentLength is a number"
        }
        1 => {
            e.insert("customMetadata", Value::Array(Vec::new()));
            "customMetadata is an array"
        }
        _ => {
            let mut custom = e
                .get("customMetadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            custom.insert("owner", Value::Null);
            e.insert("customMetadata", Value::Object(custom));
            "customMetadata.owner is null"
        }
    };
    Ok(Edit::new(At::Manifest, format!("object entry {k}: {what}")))
}

// ------------------------------------------------------------- fixtures

/// An object of bucket `files` with one byte, its entry and its part.
fn one_byte_object(key: &str, byte: u8) -> R<(V, V)> {
    let data = [byte];
    let key = ndarc_json::to_canonical_string(&Value::from(key));
    let entry = format!(
        r#"{{"bucket":"files","key":{key},"size":1,"sha256":"{}","httpMetadata":{{}},"customMetadata":{{}}}}"#,
        ndarc_format::hash::hex(&ndarc_format::hash::sha256(&data))
    );
    let item = format!(
        r#"[{{"kind":"object","bucket":"files","key":{key},"offset":0,"data":"{}"}}]"#,
        ndarc_format::catalogue::encode_base64(&data)
    );
    Ok((fx::j(&entry)?, fx::part(fx::j(&item)?)))
}

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    let reverse = |list: &'static str| {
        move |r: &mut Recs| {
            if let Value::Array(a) = r.at(M, list)? {
                a.reverse();
            }
            Ok(())
        }
    };
    // Entry `i` of `list` copied to `at`, and the part of line `k` to line `to`.
    let twice = |list: &'static str, i: usize, at: usize, k: usize, to: usize| {
        move |r: &mut Recs| {
            let e = r.at(M, &format!("{list}/{i}"))?.clone();
            match r.at(M, list)? {
                Value::Array(a) => a.insert(at, e),
                _ => return Err("not a list".into()),
            }
            let p = r.line(k)?.clone();
            r.insert_part(to, p)
        }
    };
    let digest = |list: &'static str, f: fn(&str) -> String| {
        move |r: &mut Recs| {
            let p = format!("{list}/sha256");
            let d = f(r.at(M, &p)?.as_str().need("no sha256")?);
            r.set(M, &p, Value::from(d))
        }
    };
    build(vec![
        c("object_order", 1, "/objects/1")
            .with(reverse("/objects"))
            .with(|r| {
                r.parts[GREET - 1..KVC - 1].rotate_left(1);
                r.renumber();
                Ok(())
            }),
        c("object_order-utf16", 1, "/objects/3")
            .note("keys in code-point order: U+FB01 before U+1F600 (UTF-16 order puts U+1F600 first)")
            .with(|r| {
                for (i, (key, byte)) in [("\u{fb01}", b'1'), ("\u{1F600}", b'2')].into_iter().enumerate() {
                    let (entry, part) = one_byte_object(key, byte)?;
                    r.set(M, "/objects/-", entry)?;
                    r.insert_part(KVC + i, part)?;
                }
                Ok(())
            }),
        c("object_order-duplicate", 1, "/objects/1")
            .note("greeting.txt listed twice (and its chunk twice)")
            .allow(&["item_order", "binary_missing"])
            .with(twice("/objects", 0, 1, GREET, GREET + 1)),
        c("payload_order", 1, "/payloads/1")
            .note("payloads in plain name order (kv, kv cache); the producer's order is kv cache, kv")
            .with(reverse("/payloads"))
            .with(|r| {
                r.parts.swap(KVC - 1, KV - 1);
                r.renumber();
                Ok(())
            }),
        c("payload_order-duplicate", 1, "/payloads/2")
            .allow(&["item_order", "binary_missing"])
            .with(twice("/payloads", 1, 2, KV, KV + 1)),
        c("invalid_sha256", 1, "/objects/0/sha256")
            .also(&["sha256_mismatch"])
            .note("the right digest in uppercase hex: not the lowercase digest, so it does not match either")
            .with(digest("/objects/0", |d| d.to_uppercase())),
        c("invalid_sha256-closing", CLOSING, "/contentHash")
            .also(&["content_hash_mismatch"])
            .closing_member("contentHash", |c, _| {
                let h = c.get("contentHash").and_then(Value::as_str).need("no contentHash")?;
                Ok(Value::from(h[..63].to_string()))
            }),
        c("invalid_sha256-payload", 1, "/payloads/1/sha256")
            .also(&["sha256_mismatch"])
            .with(digest("/payloads/1", |d| format!("sha256:{d}"))),
        c("invalid_metadata", 1, "/objects/0/httpMetadata/contentLength").put("13"),
        c("invalid_metadata-array", 1, "/objects/1/customMetadata").put("[]"),
    ])
}
