//! The portability archive: record types, every format rule, finding codes
//! and the hash constructions. `SPEC.md` is the normative text.
//!
//! Verification is two halves that both the streaming verifier and the push
//! API use:
//! - [`check_manifest_line`] reads the first line into a [`Manifest`], and
//!   [`part::check_line`] checks any later line on its own (in parallel),
//!   returning a compact [`LineSummary`];
//! - the [`Assembler`] takes the summaries in archive order and checks the
//!   rules that span lines: part indexes, item order, row index continuity,
//!   counts, key order across parts, chunk offsets, object sizes and
//!   SHA-256, `partCount` and both hashes.
//!
//! Where each rule lives: the manifest in [`manifest`], a line's rules in
//! [`part`] (with the cell rules in `cell` and the row-part fast path in
//! `fast`, both private), the key order and key digest in [`key`], the
//! types a line is reduced to in [`summary`], the rules across lines in
//! [`assemble`], and duplicate keys of a table out of key order in
//! [`rescan`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub(crate) mod assemble;
pub mod catalogue;
mod cell;
mod code;
pub mod display;
mod fast;
mod finding;
pub mod framing;
pub mod hash;
pub mod key;
pub mod lineage;
pub mod manifest;
pub mod pack;
pub mod part;
mod plan;
mod policy;
mod report;
pub mod rescan;
pub mod summary;

pub use assemble::{Assembler, Collector, Outcome, PartRun};
pub use catalogue::Affinity;
pub use code::{Code, Harm, Severity};
pub use finding::{pointer, Finding};
pub use hash::{ArchiveHasher, ContentHasher, Digest32};
pub use key::PartKeys;
pub use lineage::check_lineage;
pub use manifest::{
    check_manifest, check_manifest_line, Carried, Manifest, ManifestOptions, ManifestOutcome,
};
pub use part::check_line;
pub use plan::{Plan, RowColumn, TablePlan};
pub use policy::{Bucket, ObjectReferences, Policy, PolicyError};
pub use report::{LineRef, LineReport};
pub use rescan::{part_keys, rescan_duplicates, rescan_duplicates_twice};
pub use summary::LineSummary;

/// The `format` identifier of the portability archive.
pub const FORMAT: &str = "rer-portability";
/// The `version` this crate reads and writes.
pub const VERSION: i64 = 2;
/// Default limit of a part line (and the closing line), without its LF.
pub const MAX_PART_LINE: usize = 16 * 1024 * 1024;
/// Default limit of the manifest line, without its LF.
pub const MAX_MANIFEST_LINE: usize = 256 * 1024 * 1024;

/// The canonical closing line (without LF) for `partCount` and the two
/// hashes, as producers write it.
pub fn closing_line(part_count: u64, content_hash: &str, archive_hash: &str) -> Vec<u8> {
    let mut closing = ndarc_json::Object::new();
    closing.insert("kind", ndarc_json::Value::from("closing"));
    closing.insert("partCount", ndarc_json::Value::from(part_count as f64));
    closing.insert("contentHash", ndarc_json::Value::from(content_hash));
    closing.insert("archiveHash", ndarc_json::Value::from(archive_hash));
    ndarc_json::to_canonical_vec(&ndarc_json::Value::Object(closing))
}

#[cfg(test)]
mod tests {
    #[test]
    fn closing_line_is_canonical() {
        let l = super::closing_line(4, "c", "a");
        assert_eq!(
            l,
            br#"{"archiveHash":"a","contentHash":"c","kind":"closing","partCount":4}"#
        );
    }
}
