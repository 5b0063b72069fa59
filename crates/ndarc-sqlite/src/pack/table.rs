//! A table as `pack` reads it: its columns, the cells it archives and how
//! its rows are read. Data only, below every other module of `pack`, so
//! that reading the schema (`catalogue`), the development-data drops
//! (`devdata`) and the row encoder (`rows`) share it without importing
//! each other.

use ndarc_format::Affinity;

/// How a table's read is changed: rows for which `filter` is not true are
/// dropped (`None`: none); `rewrite` gives SQL expressions replacing
/// columns (by index into `Table::columns`).
#[derive(Debug, Clone, Default)]
pub(super) struct DevRule {
    pub(super) filter: Option<String>,
    pub(super) rewrite: Vec<(usize, String)>,
}

/// A column as `PRAGMA table_xinfo` describes it.
#[derive(Debug, Clone)]
pub(super) struct Column {
    pub(super) name: String,
    pub(super) decl: String,
    pub(super) notnull: bool,
    pub(super) pk: u32,
    pub(super) generated: Option<&'static str>,
    pub(super) affinity: Affinity,
}

/// An archived table: its schema, and how its rows are read and written.
#[derive(Debug, Clone)]
pub(super) struct Table {
    pub(super) name: String,
    pub(super) sql: String,
    pub(super) columns: Vec<Column>,
    pub(super) dependencies: Vec<String>,
    pub(super) rowid_alias: Option<&'static str>,
    pub(super) without_rowid: bool,
    /// Indexes into `columns` of the archived cells (writable, not secret),
    /// in table order: the SELECT reads them in this order after the rowid.
    pub(super) cells: Vec<usize>,
    /// Positions in `cells`, in the name order of the row object.
    pub(super) sorted: Vec<usize>,
    /// Positions in `cells` of the primary-key columns, in `pk` order.
    pub(super) key_cells: Vec<usize>,
    /// `"name":` of each entry of `cells`, canonical.
    pub(super) labels: Vec<Vec<u8>>,
    /// The canonical JSON string of the table name.
    pub(super) name_json: Vec<u8>,
    /// The export-time drops of development data that apply to this table
    /// (`dropDevData`; empty for most tables).
    pub(super) dev: DevRule,
    /// `SELECT rowid-or-NULL, cells… FROM t [WHERE dev filter] ORDER BY …`.
    pub(super) select: String,
    pub(super) count: u64,
}
