//! Test tools for the portability archive: the proptest strategies for
//! small generated archives ([`arb_options`], [`arb_later`]), over
//! `ndarc-gen`.
//!
//! Everything of `ndarc-gen` — the generator, the mutator ([`mod@mutate`]),
//! [`reseal`], [`repartition`], the corpus and the seeded [`Rng`] — is
//! re-exported here, so that tests name one crate. Code that ships (the
//! `ndarc` binary) depends on `ndarc-gen` directly, and never links
//! proptest.
//!
//! ```
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//! let mut runner = TestRunner::deterministic();
//! let opts = ndarc_testkit::arb_options().new_tree(&mut runner).unwrap().current();
//! let (bytes, summary) = ndarc_testkit::generate_vec(&opts).unwrap();
//! assert_eq!(summary.bytes as usize, bytes.len());
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod strategy;

pub use ndarc_gen::*;
pub use strategy::{arb_later, arb_options};
