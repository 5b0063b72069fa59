//! Test tools for the portability archive.
//!
//! - [`generate`]: a streaming, deterministic archive generator whose
//!   default run exercises every feature of the format, and its "later
//!   export" ([`Later`]) for diff tests.
//! - [`reseal`] / [`reseal_with`]: recompute counts, schema, `partCount`
//!   and hashes of a hand-edited archive so that only the intended rule
//!   stays broken.
//! - [`repartition`]: re-pack an archive into parts of another size.
//! - [`arb_options`]: proptest strategy for small archives.
//! - [`corpus_valid`]: small, named example archives.
//! - [`mutate()`] / [`mutate_random`]: a valid archive with exactly one rule
//!   broken, and the finding a verifier must report ([`mod@mutate`]).
//!
//! Determinism: every row, cell, object byte and decision is a pure
//! function of the seed and its coordinates, drawn from a hand-written
//! SplitMix64 (see [`Rng`]), so the same seed and options give the same
//! bytes on every platform, forever — not subject to a `rand` upgrade.
//!
//! ```
//! let opts = ndarc_testkit::GenOptions::small(7);
//! let (bytes, summary) = ndarc_testkit::generate_vec(&opts).unwrap();
//! assert_eq!(summary.bytes as usize, bytes.len());
//! let mut out = Vec::new();
//! let r = ndarc_testkit::repartition(&bytes, 64 * 1024, &mut out).unwrap();
//! assert_eq!(r.content_hash, summary.content_hash);
//! assert_eq!(ndarc_testkit::reseal(&bytes).unwrap(), bytes);
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod binary;
mod corpus;
mod error;
mod gen;
// With the MSRV at 1.89, clippy asks for `Option::is_none_or` and
// `std::iter::repeat_n` (1.82) in mutate.rs, which is being split on another
// branch that takes the fix there. Remove this allow when it lands.
#[allow(clippy::unnecessary_map_or, clippy::manual_repeat_n)]
pub mod mutate;
mod pack;
mod repart;
mod reseal;
mod rng;
mod rows;
mod schema;
mod strategy;

pub use binary::{chunk_cap, chunk_count};
pub use corpus::{corpus_options, corpus_valid};
pub use error::Error;
pub use gen::{
    generate, generate_vec, BinaryDelta, GenOptions, Later, Rows, Summary, TableSummary, MAX_ROWS,
};
pub use mutate::{mutate, mutate_random, Mutant, Mutation, NotApplicable};
pub use pack::{RowPacker, PART_OVERHEAD};
pub use repart::{repartition, repartition_file};
pub use reseal::{reseal, reseal_with, ResealOptions};
pub use rng::{derive, mix, Rng};
pub use schema::{TableKind, NARROW, TEMPLATES};
pub use strategy::{arb_later, arb_options};
