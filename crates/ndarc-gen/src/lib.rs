//! Deterministic archive generator, mutator, resealer and repartitioner
//! for the portability archive: what `ndarc gen`, `mutate`, `repart`,
//! `canon --reseal` and `fuzz-consumer` need, without proptest (its
//! strategies are in `ndarc-testkit`, which re-exports this crate).
//!
//! - [`generate`]: a streaming, deterministic archive generator whose
//!   default run exercises every feature of the format, and its "later
//!   export" ([`Later`]) for diff tests.
//! - [`reseal`] / [`reseal_with`]: recompute counts, schema, `partCount`
//!   and hashes of a hand-edited archive so that only the intended rule
//!   stays broken.
//! - [`repartition`]: re-pack an archive into parts of another size.
//! - [`corpus_valid`]: small, named example archives.
//! - [`mutate()`] / [`mutate_random`]: a valid archive with exactly one rule
//!   broken, and the finding a verifier must report ([`mod@mutate`]);
//!   [`mutate::corpus_fixtures`]: the fixtures of `testdata/invalid` this
//!   crate writes (example `corpus`).
//!
//! Determinism: every row, cell, object byte and decision is a pure
//! function of the seed and its coordinates, drawn from a hand-written
//! SplitMix64 (see [`Rng`]), so the same seed and options give the same
//! bytes on every platform, forever — not subject to a `rand` upgrade.
//!
//! ```
//! let opts = ndarc_gen::GenOptions::small(7);
//! let (bytes, summary) = ndarc_gen::generate_vec(&opts).unwrap();
//! assert_eq!(summary.bytes as usize, bytes.len());
//! let mut out = Vec::new();
//! let r = ndarc_gen::repartition(&bytes, 64 * 1024, &mut out).unwrap();
//! assert_eq!(r.content_hash, summary.content_hash);
//! assert_eq!(ndarc_gen::reseal(&bytes).unwrap(), bytes);
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod binary;
mod corpus;
mod error;
mod gen;
pub mod mutate;
mod repart;
mod reseal;
mod rng;
mod rows;
mod schema;

pub use binary::{chunk_cap, chunk_count};
pub use corpus::{corpus_options, corpus_valid};
pub use error::Error;
pub use gen::{
    generate, generate_vec, BinaryDelta, GenOptions, Later, Rows, Summary, TableSummary, MAX_ROWS,
};
pub use mutate::{mutate, mutate_random, Mutant, Mutation, NotApplicable};
pub use repart::{repart_path, repart_stream, repartition, repartition_file};
pub use reseal::{reseal, reseal_with, ResealOptions};
pub use rng::{derive, mix, Rng};
pub use schema::{TableKind, NARROW, TEMPLATES};
