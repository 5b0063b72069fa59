//! Mutations of SPEC.md §4.4: the manifest's objects and payloads (order,
//! `sha256`, metadata).

use ndarc_format::Code;
use ndarc_json::Value;

use crate::rng::Rng;

use super::edit::{arr, n, pick, s, some_bytes, At, Bin, BinKind, Edit, Model, Need, R, V};
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
