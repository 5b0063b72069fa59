//! The portability archive: record types, every format rule, finding codes
//! and the hash constructions. `SPEC.md` is the normative text.
//!
//! Verification is two halves that both the streaming verifier and the push
//! API use:
//! - [`check_manifest`] reads the first line into a [`Manifest`], and
//!   [`part::check_line`] checks any later line on its own (in parallel),
//!   returning a compact [`part::LineSummary`];
//! - the [`Assembler`] takes the summaries in archive order and checks the
//!   rules that span lines: part indexes, item order, row index continuity,
//!   counts, key order across parts, chunk offsets, object sizes and
//!   SHA-256, `partCount` and both hashes.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod assemble;
pub mod catalogue;
pub mod code;
pub mod finding;
pub mod hash;
pub mod key;
pub mod manifest;
pub mod part;
pub mod report;

pub use assemble::{rescan_duplicates, Assembler, Collector, Outcome};
pub use catalogue::Affinity;
pub use code::{Code, Severity};
pub use finding::{pointer, Finding};
pub use hash::{ArchiveHasher, ContentHasher, Digest32};
pub use manifest::{check_manifest, Manifest, ManifestOptions, ManifestOutcome};
pub use part::{check_line, LineSummary, Plan};
pub use report::{LineRef, LineReport};

/// The `format` identifier of the portability archive.
pub const FORMAT: &str = "rer-portability";
/// The `version` this crate reads and writes.
pub const VERSION: i64 = 2;
/// Default limit of a part line (and the closing line), without its LF.
pub const MAX_PART_LINE: usize = 16 * 1024 * 1024;
/// Default limit of the manifest line, without its LF.
pub const MAX_MANIFEST_LINE: usize = 256 * 1024 * 1024;
