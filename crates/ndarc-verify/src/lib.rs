//! Verification of portability archives.
//!
//! - [`verify_path`] reads a file with `pread` (never mapped: a file
//!   truncated under a mapping raises SIGBUS), splits it into lines with memchr,
//!   checks part lines in parallel on a rayon pool and runs the cheap
//!   sequential rules over compact per-line summaries as they come.
//! - [`verify_reader`] does the same over bounded read buffers, for stdin
//!   and pipes.
//! - [`PushVerifier`] is for servers that receive the manifest, then parts
//!   one by one in any order (with retries), then the closing hashes.
//!
//! All three use the same rules: [`ndarc_format::check_manifest`],
//! [`ndarc_format::check_line`] and [`ndarc_format::Assembler`].
//!
//! ```no_run
//! let report = ndarc_verify::verify_path("export.ndjson".as_ref(), &Default::default())?;
//! for f in &report.findings {
//!     eprintln!("{}:{}: {}: {}", f.line, f.offset, f.code, f.message);
//! }
//! assert!(report.is_valid(false));
//! # Ok::<(), ndarc_verify::Error>(())
//! ```

// The only unsafe code of the hot path (SIMD SHA-256) lives in ndarc-sha.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod chan;
mod integrity;
pub mod lines;
mod pipeline;
mod push;
pub mod read;
mod receipt;
mod refs;
mod rules;
mod session;

use std::time::Duration;

pub use ndarc_format::part::RowSpans;
pub use ndarc_format::{Code, Finding, Manifest, Severity};
pub use pipeline::{
    read_bytes, read_path, read_stream, verify_bytes, verify_file, verify_path, verify_reader,
};
pub use push::{PushOutcome, PushVerifier};
pub use read::{Accepted, ReadError, Reader};
pub use receipt::Receipt;
pub use session::{read_manifest, ManifestRead, Refused, Session};

/// A progress callback: (bytes done, total bytes when known).
pub type Progress = std::sync::Arc<dyn Fn(u64, Option<u64>) + Send + Sync>;

/// Options of a verification.
#[derive(Clone)]
pub struct Options {
    /// Findings kept at most (all are counted); verification stops once
    /// this many errors are found. Default 100.
    pub max_errors: usize,
    /// Threads that check part lines, the calling thread (which also reads
    /// them) among them: 0 means one per core, and 1 checks every line on
    /// the calling thread (one core in all).
    pub jobs: usize,
    /// Longest part or closing line, without LF (default 16 MiB).
    pub max_line: usize,
    /// Longest manifest line, without LF (default 256 MiB).
    pub max_manifest_line: usize,
    /// Accepted `format` identifiers.
    pub formats: Vec<String>,
    /// Called with (bytes done, total bytes if known) as work progresses.
    pub progress: Option<Progress>,
    /// An import policy to check the archive against (SPEC.md §15); each
    /// breach is an error finding `policy_*`.
    pub policy: Option<std::sync::Arc<ndarc_format::Policy>>,
    /// Also check the rows against the foreign keys of the tables' own
    /// `sql` (SPEC.md §11, `--integrity`): a reference with no parent row
    /// is `foreign_key_violation`, a foreign key SQLite refuses
    /// `foreign_key_mismatch`.
    pub integrity: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_errors: 100,
            jobs: 0,
            max_line: ndarc_format::MAX_PART_LINE,
            max_manifest_line: ndarc_format::MAX_MANIFEST_LINE,
            formats: vec![ndarc_format::FORMAT.to_string()],
            progress: None,
            policy: None,
            integrity: false,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("max_errors", &self.max_errors)
            .field("jobs", &self.jobs)
            .field("max_line", &self.max_line)
            .field("max_manifest_line", &self.max_manifest_line)
            .field("formats", &self.formats)
            .field("policy", &self.policy)
            .field("integrity", &self.integrity)
            .finish_non_exhaustive()
    }
}

/// A verification could not run (as opposed to finding the archive
/// invalid, which is a [`Report`] with findings).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the input failed.
    #[error("cannot read {path}: {}", describe(source))]
    Io {
        /// What was being read.
        path: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The input is a directory or another non-file.
    #[error("{0}: not a regular file")]
    NotAFile(String),
    /// The thread pool could not start.
    #[error("could not start worker threads: {0}")]
    Threads(String),
}

fn describe(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(at) => s[..at].to_lowercase(),
        None => s,
    }
}

/// What a verification found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Findings kept (at most `max_errors`), in file order within each
    /// stage.
    pub findings: Vec<Finding>,
    /// Errors found, kept or not.
    pub errors: u64,
    /// Warnings found, kept or not.
    pub warnings: u64,
    /// Verification stopped early: too many errors, or framing broken
    /// beyond recovery.
    pub stopped: bool,
    /// The manifest, when it could be read.
    pub manifest: Option<Manifest>,
    /// `contentHash` and `archiveHash` as the closing line gives them.
    pub closing_hashes: Option<(String, String)>,
    /// Recomputed `contentHash`.
    pub content_hash: Option<String>,
    /// Recomputed `archiveHash`.
    pub archive_hash: Option<String>,
    /// Bytes read.
    pub bytes: u64,
    /// Lines read.
    pub lines: u64,
    /// Part lines read.
    pub parts: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// The import policy the archive was checked against, if any.
    pub policy: Option<std::sync::Arc<ndarc_format::Policy>>,
    /// Why the rows could not be checked against the foreign keys when
    /// [`Options::integrity`] asked for it (SQLite could not open or write
    /// its temporary database, or the manifest has errors): the report is
    /// then not a verdict on them.
    pub unchecked: Option<String>,
}

impl Report {
    /// Valid: no errors (and, when `strict`, no warnings either).
    pub fn is_valid(&self, strict: bool) -> bool {
        self.errors == 0 && (!strict || self.warnings == 0)
    }

    /// The receipt of a valid archive (`None` when it is invalid).
    pub fn receipt(&self) -> Option<Receipt> {
        if self.errors > 0 {
            return None;
        }
        Receipt::new(self)
    }

    /// Findings of `code`, for tests and tools.
    pub fn codes(&self) -> Vec<Code> {
        self.findings.iter().map(|f| f.code).collect()
    }
}

/// The worked example archive of SPEC.md §8 (`testdata/valid/example.ndjson`),
/// for documentation examples.
#[doc(hidden)]
pub fn doc_example_archive() -> &'static [u8] {
    include_bytes!("../../../testdata/valid/example.ndjson")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verify(data: &[u8]) -> Report {
        verify_bytes(data, &Options::default())
    }

    #[test]
    fn example_is_valid() {
        let r = verify(doc_example_archive());
        assert!(r.is_valid(true), "{:#?}", r.findings);
        assert_eq!(r.parts, 4);
        assert_eq!(
            r.content_hash,
            r.closing_hashes.as_ref().map(|h| h.0.clone())
        );
        let receipt = r.receipt().unwrap();
        let text = String::from_utf8(receipt.to_canonical_line()).unwrap();
        assert!(text.contains("\"contentHash\":\"6d5f3006"), "{text}");
    }

    #[test]
    fn stdin_path_agrees() {
        let r = verify_reader(doc_example_archive(), &Options::default()).unwrap();
        assert!(r.is_valid(true), "{:#?}", r.findings);
        assert_eq!(r.bytes, doc_example_archive().len() as u64);
    }

    #[test]
    fn truncation_and_flips_give_findings() {
        let a = doc_example_archive();
        let r = verify(&a[..a.len() - 1]);
        assert!(
            r.codes().contains(&Code::MissingFinalNewline),
            "{:?}",
            r.codes()
        );
        let cut = a.iter().rposition(|&b| b == b'\n').unwrap();
        let prev = a[..cut].iter().rposition(|&b| b == b'\n').unwrap();
        let r = verify(&a[..prev + 1]);
        assert_eq!(r.codes(), vec![Code::ClosingMissing]);
        let r = verify(b"");
        assert_eq!(r.codes(), vec![Code::ManifestMissing]);
        // A flip of every byte, one at a time: findings, never a panic.
        for i in (0..a.len()).step_by(7) {
            let mut b = a.to_vec();
            b[i] ^= 0x20;
            let r = verify(&b);
            assert!(r.errors > 0 || b == a, "flip at {i} not detected");
        }
    }
}
