//! Small, valid generated archives for the structure-aware targets.
//!
//! Generation is deterministic (ndarc-gen's SplitMix64), so an input
//! that picks (shape, seed) reproduces the same archive on every run. Each
//! archive is generated and verified once per process and cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use arbitrary::Unstructured;
use ndarc_gen::{generate_vec, GenOptions, Rows, Summary};

/// Seeds per shape: few, so that every cached archive is hit often and the
/// fuzzer's edits, not the choice of archive, make the inputs differ.
pub const SEEDS: u8 = 4;

/// What the archive looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// `GenOptions::small(seed)`: all ten table templates, 4 KiB parts,
    /// ~65 KB, ~25 parts.
    Small,
    /// Three tables, a few rows, 1 KiB parts, two objects (one empty, one
    /// spanning three parts) and two payloads: ~6 KB, so edits are dense
    /// and executions fast.
    Tiny,
}

impl Shape {
    /// The generator options of this shape for `seed`.
    pub fn options(self, seed: u64) -> GenOptions {
        match self {
            Shape::Small => GenOptions::small(seed),
            Shape::Tiny => GenOptions {
                tables: 3,
                rows: Rows::Between(1, 6),
                objects: 2,
                object_bytes: 300,
                payloads: 2,
                payload_bytes: 200,
                part_bytes: 1024,
                ..GenOptions::small(seed)
            },
        }
    }
}

/// A generated archive and what the file verifier said about it.
#[derive(Debug)]
pub struct Archive {
    /// The options it was generated from.
    pub options: GenOptions,
    /// The archive bytes.
    pub bytes: Vec<u8>,
    /// The generator's summary.
    pub summary: Summary,
    /// Each line's (start, end) in `bytes`, without its LF: the manifest,
    /// the parts, the closing.
    pub lines: Vec<(usize, usize)>,
    /// `ndarc_verify::verify_bytes` of `bytes` (must be valid).
    pub report: ndarc_verify::Report,
}

impl Archive {
    /// Line `i` (0 = manifest) without its LF.
    pub fn line(&self, i: usize) -> &[u8] {
        let (s, e) = self.lines[i];
        &self.bytes[s..e]
    }

    /// The manifest line.
    pub fn manifest(&self) -> &[u8] {
        self.line(0)
    }

    /// Number of part lines.
    pub fn part_count(&self) -> usize {
        self.lines.len() - 2
    }

    /// Part line `i` (0-based part index).
    pub fn part(&self, i: usize) -> &[u8] {
        self.line(i + 1)
    }

    /// The closing line.
    pub fn closing(&self) -> &[u8] {
        self.line(self.lines.len() - 1)
    }
}

/// Generates (or returns the cached) archive of `shape` and `seed`, and
/// checks once that the generator's output verifies valid with the
/// generator's hashes.
pub fn get(shape: Shape, seed: u64) -> Arc<Archive> {
    static CACHE: OnceLock<Mutex<HashMap<(Shape, u64), Arc<Archive>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(a) = cache.lock().unwrap().get(&(shape, seed)) {
        return a.clone();
    }
    let a = Arc::new(make(shape.options(seed)));
    cache
        .lock()
        .unwrap()
        .entry((shape, seed))
        .or_insert(a)
        .clone()
}

/// Generates an archive from `options` and verifies it (it must be valid).
pub fn make(options: GenOptions) -> Archive {
    let (bytes, summary) = generate_vec(&options).expect("ndarc-gen generation failed");
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            lines.push((start, i));
            start = i + 1;
        }
    }
    assert_eq!(start, bytes.len(), "generated archive does not end with LF");
    assert!(lines.len() >= 2);
    let report = ndarc_verify::verify_bytes(
        &bytes,
        &ndarc_verify::Options {
            jobs: 1,
            ..Default::default()
        },
    );
    assert!(
        report.is_valid(false),
        "generated archive {options:?} does not verify: {:#?}",
        report.findings
    );
    assert_eq!(report.content_hash.as_deref(), Some(&*summary.content_hash));
    assert_eq!(report.archive_hash.as_deref(), Some(&*summary.archive_hash));
    Archive {
        options,
        bytes,
        summary,
        lines,
        report,
    }
}

/// Picks a shape and a seed from the input (one byte).
pub fn pick(u: &mut Unstructured<'_>) -> Arc<Archive> {
    let b = u.arbitrary::<u8>().unwrap_or(0);
    let shape = if b & 0x80 == 0 {
        Shape::Tiny
    } else {
        Shape::Small
    };
    get(shape, u64::from(b % SEEDS))
}
