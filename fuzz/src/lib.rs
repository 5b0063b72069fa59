//! Shared helpers of the ndarc fuzz targets (`fuzz_targets/*.rs`).
//!
//! - [`archive`]: small generated archives, cached per (shape, seed), with
//!   their lines and the file verifier's verdict.
//! - [`edit`]: byte- and line-level edits chosen by the fuzzer.
//! - [`json`]: an `Arbitrary` JSON value, order-insensitive equality and
//!   "re-spelled" renderings (whitespace, member order, escapes, number
//!   forms) of a value.
//! - [`report`]: invariants every verification report must satisfy.
//! - [`known`]: known bugs awaiting a fix, skipped unless
//!   `NDARC_FUZZ_STRICT=1`.

pub mod archive;
pub mod edit;
pub mod json;
pub mod known;
pub mod report;
