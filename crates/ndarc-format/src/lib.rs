//! The portability archive: record types, every format rule, finding codes
//! and the hash constructions. `SPEC.md` is the normative text; each rule
//! here names the SPEC section it implements.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod catalogue;
pub mod code;
pub mod finding;
pub mod hash;

pub use catalogue::Affinity;
pub use code::{Code, Severity};
pub use finding::{pointer, Finding};
pub use hash::{ArchiveHasher, ContentHasher, Digest32};

/// The `format` identifier of the portability archive.
pub const FORMAT: &str = "rer-portability";
/// The `version` this crate reads and writes.
pub const VERSION: i64 = 2;
/// Default limit of a part line (and the closing line), without its LF.
pub const MAX_PART_LINE: usize = 16 * 1024 * 1024;
/// Default limit of the manifest line, without its LF.
pub const MAX_MANIFEST_LINE: usize = 256 * 1024 * 1024;
