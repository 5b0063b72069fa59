//! The rules that read a line's rows beyond the line check, each opt-in:
//! the policy's `objectReferences` ([`crate::refs`]) and `--integrity`'s
//! foreign keys ([`crate::integrity`]). A line they read is parsed once,
//! on the thread that checked it, for both.

use std::sync::Arc;

use ndarc_format::part::Body;
use ndarc_format::part::RowSpans;
use ndarc_format::{LineRef, LineReport, LineSummary, Plan};
use ndarc_json::Value;

use crate::integrity::{Integrity, Keys};
use crate::refs::Refs;

/// The row rules of one verification.
#[derive(Debug, Default)]
pub struct RowRules {
    /// The policy's `objectReferences`.
    pub refs: Option<Refs>,
    /// `--integrity`'s foreign keys.
    pub integrity: Option<Arc<Integrity>>,
}

/// What the row rules took from one line, for the session to record in
/// archive order.
#[derive(Debug, Default)]
pub struct Scanned {
    /// The objects the rows reference (positions in `manifest.objects`).
    pub hits: Vec<u32>,
    /// The rows' keys, for the foreign keys.
    pub keys: Option<Keys>,
}

impl Scanned {
    /// Bytes held, about.
    pub fn held_bytes(&self) -> usize {
        self.hits.len() * 4 + self.keys.as_ref().map_or(0, Keys::held_bytes)
    }
}

impl RowRules {
    /// Whether any rule is on.
    pub fn is_empty(&self) -> bool {
        self.refs.is_none() && self.integrity.is_none()
    }

    /// Whether a line's spans save the rules a parse (the foreign keys
    /// read their cells from them).
    pub fn wants_spans(&self) -> bool {
        self.integrity.is_some()
    }

    /// Reads the rows of the line `at`, whose summary is `s`: findings go
    /// into `s`. Lines that are not parts of a table some rule reads are
    /// not parsed; nor is a line whose `spans` (when the fast path accepted
    /// it) are all the foreign keys need.
    pub fn scan(
        &self,
        plan: &Plan,
        at: LineRef<'_>,
        s: &mut LineSummary,
        spans: Option<&RowSpans>,
    ) -> Scanned {
        let Body::Rows(rows) = &s.body else {
            return Scanned::default();
        };
        let t = rows.table;
        let refs = self.refs.as_ref().filter(|r| r.reads(t));
        let integrity = self.integrity.as_ref().filter(|i| i.reads(t));
        if refs.is_none() && integrity.is_none() {
            return Scanned::default();
        }
        if let (None, Some(i), Some(spans)) = (refs, integrity, spans) {
            if spans.table == Some(t) {
                let first = rows.first_index.unwrap_or(0);
                return Scanned {
                    hits: Vec::new(),
                    keys: Some(i.scan_spans(plan, t, at, spans, first)),
                };
            }
        }
        let Ok(v) = ndarc_json::parse_with(at.bytes, plan.json) else {
            // Not JSON: already reported by the line check.
            return Scanned::default();
        };
        let items = v
            .value
            .get("items")
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        let room = plan.max_findings_per_line.saturating_sub(s.findings.len());
        // Past the line's limit, findings are counted, not kept.
        let mut lr = LineReport::new(at, room);
        let hits = refs.map_or_else(Vec::new, |r| r.scan(plan, t, items, &mut lr));
        s.dropped += lr.dropped;
        let (findings, _) = lr.into_findings();
        s.findings.extend(findings);
        let keys = integrity.map(|i| i.scan(t, &plan.manifest.tables[t].name, items));
        Scanned { hits, keys }
    }
}
