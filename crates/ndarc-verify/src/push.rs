//! The push API: verify parts as they arrive, in any order.

use std::collections::{BTreeMap, HashMap};

use ndarc_format::part::Body;
use ndarc_format::{check_line, Code, Collector, Digest32, Finding, LineRef, LineSummary};

use crate::session::{read_manifest, Session};
use crate::{Options, Report};

/// What [`PushVerifier::add_part`] decided.
#[derive(Debug, Clone, PartialEq)]
pub enum PushOutcome {
    /// The part is accepted; any warnings are listed.
    Accepted(Vec<Finding>),
    /// The same bytes were already accepted at this index (a retry): nothing
    /// changes.
    Duplicate,
    /// The part is refused (errors listed) and not recorded: the sender may
    /// send corrected bytes for the same index.
    Rejected(Vec<Finding>),
}

/// Verifies an archive that arrives as a manifest, then parts one by one in
/// any order and with retries, then the closing: what a server's import
/// endpoint receives.
///
/// Findings of a part carry `line` = index + 2 (its line in the archive)
/// and offsets relative to the part's bytes. Parts are summarised as they
/// arrive (the work is the same as for a file line) and folded into the
/// sequential rules as soon as every earlier part is there, so memory holds
/// only the summaries of parts that arrived ahead of a gap.
///
/// ```
/// # let archive = ndarc_verify::doc_example_archive();
/// let lines: Vec<&[u8]> = archive.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
/// let mut v = ndarc_verify::PushVerifier::new(lines[0], &Default::default()).unwrap();
/// let parts = &lines[1..lines.len() - 1];
/// for (i, part) in parts.iter().enumerate().rev() {
///     assert!(matches!(v.add_part(i as u64, part), ndarc_verify::PushOutcome::Accepted(_)));
/// }
/// let report = v.finish(lines[lines.len() - 1], |i| parts.get(i as usize).map(|p| p.to_vec()));
/// assert!(report.is_valid(false), "{:?}", report.findings);
/// ```
pub struct PushVerifier {
    session: Session,
    max_line: usize,
    accepted: HashMap<u64, Digest32>,
    waiting: BTreeMap<u64, LineSummary>,
    next: u64,
    bytes: u64,
}

impl PushVerifier {
    /// Starts from the manifest's bytes (without LF). Errs with the findings
    /// when the manifest is unusable (not JSON, not a manifest, unknown
    /// format or version) — or has any error, since a server should not
    /// stage an import against a broken manifest.
    pub fn new(manifest: &[u8], options: &Options) -> Result<PushVerifier, Vec<Finding>> {
        let at = LineRef {
            line: 1,
            offset: 0,
            bytes: manifest,
        };
        let read = read_manifest(at, options);
        if read.manifest.is_none() || read.has_errors() {
            return Err(read.findings);
        }
        let c = Collector::new(options.max_errors.max(1));
        match Session::from_read(read, at, None, options, c) {
            Ok(session) => Ok(PushVerifier {
                session,
                max_line: options.max_line,
                accepted: HashMap::new(),
                waiting: BTreeMap::new(),
                next: 0,
                bytes: manifest.len() as u64 + 1,
            }),
            Err(r) => Err(r.findings.kept),
        }
    }

    /// The manifest.
    pub fn manifest(&self) -> &ndarc_format::Manifest {
        self.session.manifest()
    }

    /// Adds the part with `index` (its bytes, without LF). Idempotent for
    /// identical bytes; different bytes at an accepted index are a
    /// `part_conflict`.
    pub fn add_part(&mut self, index: u64, bytes: &[u8]) -> PushOutcome {
        let line = index.saturating_add(2);
        if let Some(prev) = self.accepted.get(&index) {
            return if *prev == ndarc_format::hash::sha256(bytes) {
                PushOutcome::Duplicate
            } else {
                PushOutcome::Rejected(vec![Finding::new(
                    Code::PartConflict,
                    line,
                    0,
                    "",
                    format!("part {index} was already accepted with other bytes; a retry must send the same bytes"),
                )])
            };
        }
        if index >= self.session.manifest().part_count {
            return PushOutcome::Rejected(vec![Finding::new(
                Code::PartIndex,
                line,
                0,
                "/index",
                format!(
                    "part {index} is out of range: the manifest announces {} parts",
                    self.session.manifest().part_count
                ),
            )]);
        }
        if bytes.len() > self.max_line {
            return PushOutcome::Rejected(vec![Finding::new(
                Code::LineTooLong,
                line,
                0,
                "",
                format!(
                    "part {index} is {} bytes, over the limit of {}",
                    bytes.len(),
                    self.max_line
                ),
            )]);
        }
        // The line's digest comes with the check (a row part's is computed
        // together with its rows').
        let at = LineRef {
            line,
            offset: 0,
            bytes,
        };
        let plan = self.session.plan();
        let mut s = check_line(plan, at);
        let scanned = match self.session.rules() {
            Some(rules) => rules.scan(plan, at, &mut s, None),
            None => Default::default(),
        };
        let digest = s.digest;
        let claimed = match &s.body {
            Body::Rows(r) => r.index,
            Body::Binary(b) => b.index,
            Body::BadPart { index } => *index,
            Body::Closing(_) | Body::Unreadable => None,
        };
        if matches!(s.body, Body::Closing(_)) {
            s.findings.push(Finding::new(
                Code::RecordKind,
                line,
                0,
                "/kind",
                "a closing record was sent as a part",
            ));
        } else if claimed != Some(index) {
            s.findings.push(Finding::new(
                Code::PartIndex,
                line,
                u64::from(s.anchors.index),
                "/index",
                format!(
                    "the part was sent as index {index} but its index member says {}",
                    claimed.map_or("nothing".into(), |c| c.to_string())
                ),
            ));
        }
        if s.findings.iter().any(Finding::is_error) || s.dropped > 0 {
            return PushOutcome::Rejected(s.findings);
        }
        let warnings = s.findings.clone();
        // Which objects the rows reference, and their keys, do not depend
        // on the order parts arrive in: recorded as the part is accepted.
        self.session.scanned(scanned, at);
        self.accepted.insert(index, digest);
        self.bytes += bytes.len() as u64 + 1;
        self.waiting.insert(index, s);
        while let Some(s) = self.waiting.remove(&self.next) {
            self.session.feed(s);
            self.next += 1;
        }
        PushOutcome::Accepted(warnings)
    }

    /// Parts still missing below `partCount`.
    pub fn missing(&self) -> Vec<u64> {
        (0..self.session.manifest().part_count)
            .filter(|i| !self.accepted.contains_key(i))
            .take(1000)
            .collect()
    }

    /// Ends with the closing's bytes. `reread` gives back an accepted
    /// part's bytes by index; it is called only for tables whose rows were
    /// out of key order, to look for duplicate keys across parts.
    pub fn finish(
        mut self,
        closing: &[u8],
        mut reread: impl FnMut(u64) -> Option<Vec<u8>>,
    ) -> Report {
        let missing = self.missing();
        for &i in &missing {
            self.session.push(Finding::new(
                Code::PartMissing,
                i + 2,
                0,
                "",
                format!("part {i} never arrived"),
            ));
        }
        if !missing.is_empty() {
            self.session.rows_incomplete();
        }
        let waiting = std::mem::take(&mut self.waiting);
        for (_, s) in waiting {
            self.session.feed(s);
        }
        let line = self.session.manifest().part_count.saturating_add(2);
        let s = check_line(
            self.session.plan(),
            LineRef {
                line,
                offset: 0,
                bytes: closing,
            },
        );
        if !matches!(s.body, Body::Closing(_)) {
            self.session.push(Finding::new(
                Code::RecordKind,
                line,
                0,
                "/kind",
                "the closing bytes are not a closing record",
            ));
        } else {
            self.session.feed(s);
        }
        self.bytes += closing.len() as u64 + 1;
        let mut report = self.session.finish((line, 0), false, &mut |line, _| {
            let index = line - 2;
            match reread(index) {
                Some(bytes) => Ok((bytes, 0)),
                None => Err(Finding::new(
                    Code::PartMissing,
                    line,
                    0,
                    "",
                    format!("part {index} could not be re-read to look for duplicate keys"),
                )),
            }
        });
        report.stopped = !missing.is_empty();
        report.bytes = self.bytes;
        report.lines = report
            .manifest
            .as_ref()
            .map_or(0, |m| m.part_count.saturating_add(2));
        report
    }
}
