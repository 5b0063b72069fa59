//! Mutations of SPEC.md §6 and §7: the closing's `partCount` and the two
//! hashes.

use ndarc_format::hash::{hex, sha256};
use ndarc_format::{ArchiveHasher, Code};

use ndarc_json::Value;

use crate::error::lines;
use crate::rng::Rng;

use super::edit::{n, obj_mut, s, At, Edit, Model, Need, R};
use super::fixture::{build, case, Fixture, Recs, CLOSING};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        PartCountMismatch,
        "part_count_mismatch",
        "the manifest or closing partCount off by one",
        part_count_mismatch
    ),
    mutation!(
        ContentHashMismatch,
        "content_hash_mismatch",
        "a wrong contentHash",
        content_hash_mismatch
    ),
    mutation!(
        ArchiveHashMismatch,
        "archive_hash_mismatch",
        "a wrong archiveHash",
        archive_hash_mismatch
    ),
];

fn part_count_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = m.parts.len() as i64;
    let wrong = if k > 0 && rng.one_in(2) { k - 1 } else { k + 1 };
    if rng.one_in(2) {
        m.manifest.insert("partCount", n(wrong));
        m.closing.insert("partCount", n(k));
        Ok(Edit::new(
            At::Manifest,
            format!("the manifest says {wrong} parts; there are {k} (the closing says {k})"),
        )
        .seal(|o| o.part_count = false))
    } else {
        m.manifest.insert("partCount", n(k));
        m.closing.insert("partCount", n(wrong));
        Ok(Edit::new(
            At::Closing,
            format!("the closing says {wrong} parts; there are {k} (the manifest says {k})"),
        )
        .seal(|o| o.part_count = false))
    }
}

fn content_hash_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let v = hex(&sha256(&rng.next_u64().to_le_bytes()));
    let _ = m;
    Ok(
        Edit::new(At::Closing, "contentHash is another SHA-256").closing_value(move |c| {
            c.insert("contentHash", s(v));
        }),
    )
}

fn archive_hash_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let _ = m;
    if rng.one_in(2) {
        // Computed over the lines with their LF.
        return Ok(Edit::new(
            At::Closing,
            "archiveHash computed over the lines with their LF",
        )
        .frame(|text| {
            let (raw, _) = lines(text);
            let mut h = ArchiveHasher::new();
            for l in &raw[..raw.len().saturating_sub(1)] {
                let mut with = l.to_vec();
                with.push(b'\n');
                h.add_line(&with);
            }
            let hash = h.finish();
            let last = raw.last().need("")?;
            let mut closing = ndarc_json::parse(last)
                .map_err(|e| e.to_string())?
                .into_owned();
            obj_mut(&mut closing)
                .need("")?
                .insert("archiveHash", s(hash));
            let at = text.len() - last.len() - 1;
            text.truncate(at);
            text.extend(ndarc_json::to_canonical_vec(&closing));
            text.push(b'\n');
            Ok(())
        }));
    }
    let v = hex(&sha256(&rng.next_u64().to_le_bytes()));
    Ok(
        Edit::new(At::Closing, "archiveHash is another SHA-256").closing_value(move |c| {
            c.insert("archiveHash", s(v));
        }),
    )
}

// ------------------------------------------------------------- fixtures

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    let other = || Value::from(hex(&sha256(b"other")));
    build(vec![
        c("part_count_mismatch", 1, "/partCount")
            .unsealed(|s| s.part_count = false)
            .note("the manifest says 8 parts; there are 7 (the closing says 7)")
            .put("8")
            .closing_member("partCount", |_, _| Ok(Value::from(7))),
        c("part_count_mismatch-closing", CLOSING, "/partCount").put("6"),
        c("content_hash_mismatch", CLOSING, "/contentHash")
            .closing_member("contentHash", move |_, _| Ok(other())),
        c("content_hash_mismatch-rowid", CLOSING, "/contentHash")
            .note("contentHash computed without the rowids of notes")
            .closing_member("contentHash", |_, r| {
                let mut r = r.clone();
                for p in ["/items/0/rowid", "/items/1/rowid", "/items/2/rowid"] {
                    r.del(1, p)?;
                }
                Ok(Value::from(r.content_hash()?))
            }),
        c("archive_hash_mismatch", CLOSING, "/archiveHash")
            .closing_member("archiveHash", move |_, _| Ok(other())),
        c("archive_hash_mismatch-with-lf", CLOSING, "/archiveHash")
            .note("archiveHash computed over lines with their LF")
            .closing_member("archiveHash", |_, r| {
                let mut digests = Vec::new();
                for l in r.lines() {
                    digests.extend_from_slice(&sha256(&[&l[..], b"\n"].concat()));
                }
                Ok(Value::from(hex(&sha256(&digests))))
            }),
    ])
}
