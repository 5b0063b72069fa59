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

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod binary;
mod corpus;
mod error;
mod gen;
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
    generate, generate_vec, BinaryDelta, GenOptions, Later, Rows, Summary, TableSummary,
};
pub use pack::{RowPacker, PART_OVERHEAD};
pub use repart::{repartition, repartition_file};
pub use reseal::{reseal, reseal_with, ResealOptions};
pub use rng::{derive, mix, Rng};
pub use schema::{TableKind, TEMPLATES};
pub use strategy::{arb_later, arb_options};
