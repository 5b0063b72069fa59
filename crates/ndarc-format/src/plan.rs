//! What the line rules need from a checked manifest, derived once: the
//! [`Plan`].

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use ndarc_json::{cmp_utf16, ParseOptions};

use crate::catalogue::Affinity;
use crate::manifest::{Index, Manifest};
use crate::policy::Policy;

/// A row column as rows carry it: writable and not excluded.
#[derive(Debug, Clone)]
pub struct RowColumn {
    /// Column name.
    pub name: String,
    /// The name as a canonical JSON string (quotes included), as a
    /// canonical row writes it.
    pub name_json: Vec<u8>,
    /// The member's opening as a canonical row writes it: `name_json`
    /// and a colon.
    pub(crate) member: Vec<u8>,
    /// Affinity of its declared type.
    pub affinity: Affinity,
    /// NOT NULL.
    pub notnull: bool,
    /// The scalar cells the column admits (derived from the cell rules).
    pub(crate) admits: crate::cell::Admits,
    /// Whether the column is in the table's primary key.
    pub(crate) in_key: bool,
}

/// What rows of one table must look like, derived once from the manifest.
#[derive(Debug, Clone)]
pub struct TablePlan {
    /// The table name as a canonical JSON string (quotes included), for the
    /// content digest.
    pub name_json: Vec<u8>,
    /// Columns a row carries, sorted in name (UTF-16) order.
    pub columns: Vec<RowColumn>,
    /// Positions in `columns` of the primary-key columns, in `pk` order.
    pub pk: Vec<usize>,
    /// Whether rows carry `rowid`.
    pub has_rowid: bool,
    /// For the import's development tables (`oa_sessions`, `oa_credentials`)
    /// whose rows carry a `kind` column: its position in `columns`. A row
    /// whose `kind` is `"dev"` is refused by the import (`refuseDevData`).
    pub dev_kind: Option<usize>,
}

/// Everything the line rules need from the manifest.
#[derive(Debug)]
pub struct Plan {
    /// The manifest.
    pub manifest: Manifest,
    /// Lookups by name.
    pub index: Index,
    /// Per table, in manifest order.
    pub tables: Vec<TablePlan>,
    /// Findings kept per line at most.
    pub max_findings_per_line: usize,
    /// JSON parse options.
    pub json: ParseOptions,
    /// The import policy the closing is also checked against (SPEC.md
    /// §15); the manifest's side is checked where the manifest is read.
    pub policy: Option<Arc<Policy>>,
    /// Buffers of decoded chunk pieces, given back once hashed.
    pub(crate) pieces: PieceBuffers,
}

/// A buffer for the decoded bytes of chunk pieces (a binary in several
/// chunks), which the line check fills and the assembler gives back once
/// it has hashed them in order. A piece is megabytes: allocated fresh for
/// each, its pages were zeroed by the kernel every time (a fifth of a
/// 2-job verification of 16 MB objects, and its wall time varied by a
/// third). One buffer is kept, so memory stays what the pieces in flight
/// need: a piece is decoded on one thread while the one before it is
/// hashed on another, and a second kept buffer saved little (16 MB
/// objects, 2 jobs: 0.64 s with one, 0.62 s with two) for a piece's worth
/// of memory more at the peak (12 MiB).
#[derive(Debug, Default)]
pub(crate) struct PieceBuffers(Mutex<Option<Vec<u8>>>);

impl PieceBuffers {
    /// An empty buffer, with room for `len` bytes if the kept one has it.
    pub(crate) fn take(&self, len: usize) -> Vec<u8> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match kept.take_if(|b| b.capacity() >= len) {
            Some(b) => b,
            // Rounded up to a sixteenth of the power of two above, so that
            // the buffer fits the next pieces, a few bytes longer or shorter.
            None => Vec::with_capacity(len.saturating_add(len.next_power_of_two() / 16)),
        }
    }

    /// Keeps `buf` for a later piece if it is larger than the one kept
    /// (it then fits more pieces).
    pub(crate) fn give(&self, mut buf: Vec<u8>) {
        buf.clear();
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept.as_ref().is_none_or(|k| k.capacity() < buf.capacity()) {
            *kept = Some(buf);
        }
    }
}

impl Plan {
    /// Derives the plan from a checked manifest.
    pub fn new(manifest: Manifest) -> Plan {
        // Lookups built once, so that deriving the plan is linear in the
        // manifest (the first entry of a table wins, as in
        // `Manifest::excluded_columns_of`).
        let mut excluded_by_table: HashMap<&str, HashSet<&str>> = HashMap::new();
        for (table, cols) in &manifest.excluded_columns {
            excluded_by_table
                .entry(table.as_str())
                .or_insert_with(|| cols.iter().map(String::as_str).collect());
        }
        let none = HashSet::new();
        let tables = manifest
            .tables
            .iter()
            .map(|t| {
                let excluded = excluded_by_table.get(t.name.as_str()).unwrap_or(&none);
                let mut columns: Vec<RowColumn> = t
                    .columns
                    .iter()
                    .filter(|c| c.generated.is_none() && !excluded.contains(c.name.as_str()))
                    .map(|c| {
                        let mut name_json = Vec::new();
                        ndarc_json::write_string(&c.name, &mut name_json);
                        let mut member = name_json.clone();
                        member.push(b':');
                        RowColumn {
                            name: c.name.clone(),
                            name_json,
                            member,
                            affinity: c.affinity(),
                            notnull: c.notnull,
                            admits: crate::cell::Admits::of(c.affinity(), c.notnull),
                            in_key: false,
                        }
                    })
                    .collect();
                columns.sort_by(|a, b| cmp_utf16(&a.name, &b.name));
                let mut position: HashMap<&str, usize> = HashMap::new();
                for (i, c) in columns.iter().enumerate() {
                    position.entry(c.name.as_str()).or_insert(i);
                }
                let pk: Vec<usize> = t
                    .primary_key()
                    .iter()
                    .filter_map(|pc| position.get(pc.name.as_str()).copied())
                    .collect();
                let mut name_json = Vec::new();
                ndarc_json::write_string(&t.name, &mut name_json);
                let dev_kind = crate::catalogue::DEV_KIND_TABLES
                    .contains(&t.name.as_str())
                    .then(|| position.get("kind").copied())
                    .flatten();
                drop(position);
                for &c in &pk {
                    columns[c].in_key = true;
                }
                TablePlan {
                    name_json,
                    columns,
                    pk,
                    has_rowid: t.rowid_alias.is_some(),
                    dev_kind,
                }
            })
            .collect();
        Plan {
            index: Index::new(&manifest),
            manifest,
            tables,
            max_findings_per_line: 100,
            json: ParseOptions::default(),
            policy: None,
            pieces: PieceBuffers::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PieceBuffers;

    #[test]
    fn a_piece_buffer_given_back_is_taken_again_and_one_is_kept() {
        let pieces = PieceBuffers::default();
        let mut a = pieces.take(1000);
        a.extend_from_slice(&[7; 1000]);
        let at = a.as_ptr();
        pieces.give(a);
        // Reused, emptied, for a piece that fits.
        let b = pieces.take(600);
        assert_eq!((b.as_ptr(), b.len()), (at, 0));
        // A longer piece gets a new buffer; the old one stays kept.
        let c = pieces.take(4000);
        assert!(c.capacity() >= 4000);
        pieces.give(b);
        pieces.give(c);
        // One is kept, the larger.
        let kept = pieces.0.lock().unwrap();
        assert!(kept.as_ref().is_some_and(|k| k.capacity() >= 4000));
    }
}
