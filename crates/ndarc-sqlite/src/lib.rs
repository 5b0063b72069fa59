//! The SQLite bridge of the portability archive.
//!
//! D1 is SQLite, and an archive is an export of a SQLite database. This crate
//! reads and writes SQLite files through rusqlite (with the bundled SQLite, so
//! no system library is needed):
//!
//! - `pack`: a database to an archive, as the reference producer writes it;
//! - `unpack`: an archive to a database, as the producer's import restores it;
//! - `fuzzdb`: seeded random databases for fuzz-testing third-party producers.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod fuzzdb;
pub mod patch;
