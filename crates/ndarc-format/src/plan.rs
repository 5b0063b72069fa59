//! What the line rules need from a checked manifest, derived once: the
//! [`Plan`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

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
        }
    }
}
