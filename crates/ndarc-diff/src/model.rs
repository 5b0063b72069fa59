//! The result of a diff.

use ndarc_format::manifest::{Column, ObjectEntry, PayloadEntry};
use ndarc_json::OwnedValue;

/// Which input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The first input (`A`, the earlier export).
    Before,
    /// The second input (`B`, the later export).
    After,
}

impl Side {
    /// `before` or `after`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Before => "before",
            Side::After => "after",
        }
    }
}

/// The difference between two archives.
///
/// The members `equal`, `product`, `schema_changed`, `tables` (names and
/// `added`/`removed`/`changed` keys), `objects`, `payloads` and
/// `configuration_changed` are those of the producer's `diffArchives`; the
/// rest is detail. Ignored tables and columns are left out everywhere
/// except [`Diff::ignored`].
#[derive(Debug, Clone, Default)]
pub struct Diff {
    /// The two `contentHash`es are equal (the same data, whatever the part
    /// sizes, export times, epochs or journals).
    pub equal: bool,
    /// The product of the first archive.
    pub product: String,
    /// Some table not ignored was added or removed or its `sql` changed (the
    /// `schema` identities differ, less what ignoring explains).
    pub schema_changed: bool,
    /// Tables with added, removed or changed rows, by name (UTF-16 order).
    pub tables: Vec<TableDiff>,
    /// Table-level schema changes.
    pub schema: SchemaDiff,
    /// Bucket objects by (bucket, key).
    pub objects: EntryDiff<ObjectEntry>,
    /// Payloads by name.
    pub payloads: EntryDiff<PayloadEntry>,
    /// `requiredConfiguration` differs (as canonical JSON, order included).
    pub configuration_changed: bool,
    /// `requiredConfiguration` names added and removed.
    pub configuration: NameChanges,
    /// `excludedTables` names added and removed.
    pub excluded_tables: NameChanges,
    /// `excludedColumns` changes, per table.
    pub excluded_columns: Vec<ExcludedColumnsChange>,
    /// About each input.
    pub before: ArchiveInfo,
    /// About each input.
    pub after: ArchiveInfo,
    /// Both inputs were verified while read (false with `no_verify`).
    pub verified: bool,
    /// Changed rows carry no cell detail.
    pub keys_only: bool,
    /// What was left out.
    pub ignored: Ignored,
    /// The `contentHash`es differ but nothing else was found: the same
    /// rows in another order (counts as a difference unless something is
    /// ignored).
    pub order_only: bool,
    /// The row counts of the tables compared (not ignored), as the
    /// manifests give them, in name order: what percentages of rows
    /// removed are taken of.
    pub counts: Vec<TableCount>,
    /// The outcome of a gate ([`crate::gate::Gate::check`]), when one was
    /// given: every format writes it.
    pub gate: Option<GateResult>,
}

/// A compared table's row counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableCount {
    /// The table name.
    pub name: String,
    /// Its `count` in the first archive (`None`: not there).
    pub before: Option<u64>,
    /// Its `count` in the second archive (`None`: not there).
    pub after: Option<u64>,
}

impl Diff {
    /// Whether anything not ignored differs: what decides exit status 1.
    pub fn has_differences(&self) -> bool {
        !self.tables.is_empty()
            || self.schema.has_changes()
            || self.schema_changed
            || self.objects.has_changes()
            || self.payloads.has_changes()
            || self.configuration_changed
            || !self.configuration.is_empty()
            || !self.excluded_tables.is_empty()
            || !self.excluded_columns.is_empty()
            || self.before.product != self.after.product
            || (self.order_only && self.ignored.is_empty())
    }

    /// Rows added, removed and changed over all tables.
    pub fn row_totals(&self) -> (u64, u64, u64) {
        self.tables.iter().fold((0, 0, 0), |(a, r, c), t| {
            (
                a + t.added.len() as u64,
                r + t.removed.len() as u64,
                c + t.changed.len() as u64,
            )
        })
    }
}

/// About one input.
#[derive(Debug, Clone, Default)]
pub struct ArchiveInfo {
    /// The name given for the input (a path, `-`, or a label).
    pub name: String,
    /// `product`.
    pub product: String,
    /// `exportedAt`.
    pub exported_at: String,
    /// `sourceIdentity`.
    pub source_identity: String,
    /// `schema`.
    pub schema: String,
    /// The closing `contentHash`.
    pub content_hash: String,
    /// The closing `archiveHash`.
    pub archive_hash: String,
    /// `partCount`.
    pub part_count: u64,
    /// Rows over all tables.
    pub rows: u64,
    /// Warnings the verification found (0 without verification).
    pub warnings: u64,
}

/// Row differences of one table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableDiff {
    /// The table name.
    pub name: String,
    /// Keys of rows only in the second archive, in its archive order.
    pub added: Vec<String>,
    /// Keys of rows only in the first archive, in its archive order.
    pub removed: Vec<String>,
    /// The contents (`row` objects) of the first added rows, in the order
    /// of [`TableDiff::added`]: as many as
    /// [`Options::row_contents`](crate::Options::row_contents) asked for.
    pub added_rows: Vec<OwnedValue>,
    /// The contents of the first removed rows, in the order of
    /// [`TableDiff::removed`].
    pub removed_rows: Vec<OwnedValue>,
    /// Rows in both that differ, in the first archive's order: as in
    /// `diffArchives`, every row in both is changed when the rows' columns
    /// differ (a column added, removed or renamed), whatever their cells.
    pub changed: Vec<RowChange>,
    /// Set when the rows' columns differ or some are ignored: the columns
    /// of one side only, renamed, and ignored.
    pub scope: Option<ColumnScope>,
    /// Rows were out of key order on a side, so they were matched through
    /// an index instead of a merge.
    pub unordered: bool,
}

impl TableDiff {
    /// Whether the table has any row difference.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// Whether the rows' columns differ between the archives (a column
    /// added, removed or renamed, ignored columns aside): what makes every
    /// row in both archives changed.
    pub fn columns_differ(&self) -> bool {
        self.scope.as_ref().is_some_and(ColumnScope::differs)
    }

    /// Changed rows whose compared cells are equal: changed only by the
    /// columns.
    pub fn columns_only(&self) -> usize {
        self.changed.iter().filter(|c| c.columns_only).count()
    }

    /// Why rows changed by their columns, for people: `column weight
    /// removed, column mass renamed to kg` (empty when the columns are
    /// the same).
    pub fn columns_reason(&self) -> String {
        let Some(sc) = &self.scope else {
            return String::new();
        };
        let mut bits: Vec<String> = Vec::new();
        bits.extend(sc.only_after.iter().map(|c| format!("column {c} added")));
        bits.extend(sc.only_before.iter().map(|c| format!("column {c} removed")));
        bits.extend(
            sc.renamed
                .iter()
                .map(|(a, b)| format!("column {a} renamed to {b}")),
        );
        bits.join(", ")
    }
}

/// Columns left out of a table's row comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnScope {
    /// Columns rows carry only in the first archive.
    pub only_before: Vec<String>,
    /// Columns rows carry only in the second archive.
    pub only_after: Vec<String>,
    /// Columns matched by an ignore pattern.
    pub ignored: Vec<String>,
    /// Columns renamed, `(name before, name after)`: a column of one
    /// archive only whose position and definition (type, `notnull`, `pk`,
    /// `generated`) equal those of a column of the other archive only.
    /// Their cells are compared with each other; they are in neither
    /// `only_before` nor `only_after`.
    pub renamed: Vec<(String, String)>,
}

impl ColumnScope {
    /// Whether the rows' columns differ (added, removed or renamed).
    pub fn differs(&self) -> bool {
        !self.only_before.is_empty() || !self.only_after.is_empty() || !self.renamed.is_empty()
    }
}

/// A changed row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowChange {
    /// The row key text (`[1,"a"]`, or the rowid `7`).
    pub key: String,
    /// The cells that differ, then the non-null cells of the columns only
    /// one archive's rows carry (a column added or removed, see
    /// [`CellChange::only`]), in column (name) order; empty with
    /// `keys_only`. A renamed column's cells are named by its name in the
    /// second archive.
    pub cells: Vec<CellChange>,
    /// The row changed only because the table's columns did (see
    /// [`TableDiff::columns_differ`]) and has no cell to show: the compared
    /// cells are all equal and the columns of one side only hold null.
    pub columns_only: bool,
}

/// A changed cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellChange {
    /// The column name.
    pub column: String,
    /// The value in the first archive.
    pub before: OwnedValue,
    /// The value in the second archive.
    pub after: OwnedValue,
    /// The column is in one archive only, this one: `Some(After)` for a
    /// column added (`after` is the row's value, `before` null: no such
    /// column), `Some(Before)` for a column removed (`before` is the
    /// value, `after` null); `None` for a cell of a column both carry.
    pub only: Option<Side>,
}

/// Table-level schema changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchemaDiff {
    /// Tables only in the second archive.
    pub tables_added: Vec<TableInfo>,
    /// Tables only in the first archive.
    pub tables_removed: Vec<TableInfo>,
    /// Tables in both whose definition changed.
    pub tables_changed: Vec<TableSchemaChange>,
}

impl SchemaDiff {
    /// Whether any table was added, removed or changed.
    pub fn has_changes(&self) -> bool {
        !self.tables_added.is_empty()
            || !self.tables_removed.is_empty()
            || !self.tables_changed.is_empty()
    }
}

/// A table added or removed.
#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    /// Its name.
    pub name: String,
    /// Its `sql`.
    pub sql: String,
    /// Its columns.
    pub columns: Vec<Column>,
    /// Its row count.
    pub count: u64,
}

/// How a table's definition changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableSchemaChange {
    /// The table name.
    pub name: String,
    /// Columns only in the second archive.
    pub columns_added: Vec<Column>,
    /// Columns only in the first archive.
    pub columns_removed: Vec<Column>,
    /// Columns in both whose type, `notnull`, `pk` or `generated` changed.
    pub columns_changed: Vec<ColumnChange>,
    /// Columns renamed, `(before, after)`: at the same position with the
    /// same definition under another name (see
    /// [`ColumnScope::renamed`]); in neither `columns_added` nor
    /// `columns_removed`.
    pub columns_renamed: Vec<(Column, Column)>,
    /// Dependencies added and removed.
    pub dependencies: NameChanges,
    /// `rowidAlias` before and after, when it changed.
    pub rowid_alias: Option<(Option<String>, Option<String>)>,
    /// The `sql` line diff, when it changed.
    pub sql: Option<SqlDiff>,
    /// The row key changed (other primary-key columns, or rowid ↔ primary
    /// key): rows are still matched by key text, as `diffArchives` does.
    pub key_changed: bool,
}

impl TableSchemaChange {
    /// Whether anything changed.
    pub fn is_empty(&self) -> bool {
        self.columns_added.is_empty()
            && self.columns_removed.is_empty()
            && self.columns_changed.is_empty()
            && self.columns_renamed.is_empty()
            && self.dependencies.is_empty()
            && self.rowid_alias.is_none()
            && self.sql.is_none()
    }
}

/// A column in both archives with another definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnChange {
    /// The column name.
    pub name: String,
    /// Its definition in the first archive.
    pub before: Column,
    /// Its definition in the second archive.
    pub after: Column,
}

/// The `sql` of a table in both archives and their line diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlDiff {
    /// The statement in the first archive.
    pub before: String,
    /// The statement in the second archive.
    pub after: String,
    /// Lines: `(' ' | '-' | '+', text)`.
    pub lines: Vec<(char, String)>,
}

/// Names added and removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameChanges {
    /// Names only in the second archive.
    pub added: Vec<String>,
    /// Names only in the first archive.
    pub removed: Vec<String>,
}

impl NameChanges {
    /// Neither added nor removed names.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

/// `excludedColumns` of one table changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExcludedColumnsChange {
    /// The table.
    pub table: String,
    /// Columns excluded only in the second archive.
    pub added: Vec<String>,
    /// Columns excluded only in the first archive.
    pub removed: Vec<String>,
}

/// Objects or payloads added, removed and changed.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryDiff<T> {
    /// Entries only in the second archive, in its manifest order.
    pub added: Vec<T>,
    /// Entries only in the first archive, in its manifest order.
    pub removed: Vec<T>,
    /// Entries in both that differ, `(before, after)`, in the first
    /// archive's order.
    pub changed: Vec<(T, T)>,
}

impl<T> Default for EntryDiff<T> {
    fn default() -> Self {
        EntryDiff {
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
        }
    }
}

impl<T> EntryDiff<T> {
    /// Whether anything was added, removed or changed.
    pub fn has_changes(&self) -> bool {
        !self.added.is_empty() || !self.removed.is_empty() || !self.changed.is_empty()
    }
}

/// What the ignore options left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ignored {
    /// The table patterns given.
    pub table_patterns: Vec<String>,
    /// The include patterns given (`--table`): tables matching none are
    /// left out.
    pub only_table_patterns: Vec<String>,
    /// The `TABLE.COLUMN` patterns given.
    pub column_patterns: Vec<String>,
    /// The object (`bucket/key`) patterns given.
    pub object_patterns: Vec<String>,
    /// The payload patterns given.
    pub payload_patterns: Vec<String>,
    /// Tables (of either archive) that a table pattern matched.
    pub tables: Vec<String>,
    /// Columns (`table.column`, of either archive) that a column pattern
    /// matched.
    pub columns: Vec<String>,
    /// Objects (`bucket/key`, of either archive) that an object pattern
    /// matched.
    pub objects: Vec<String>,
    /// Payloads (of either archive) that a payload pattern matched.
    pub payloads: Vec<String>,
    /// Keys chosen, `TABLE=COL,COL`: the rowids (or primary keys) they
    /// replace are not compared.
    pub keys: Vec<String>,
}

impl Ignored {
    /// No ignore pattern was given.
    pub fn is_empty(&self) -> bool {
        self.table_patterns.is_empty()
            && self.only_table_patterns.is_empty()
            && self.column_patterns.is_empty()
            && self.object_patterns.is_empty()
            && self.payload_patterns.is_empty()
            && self.keys.is_empty()
    }
}

/// The key text `diffArchives` gives an object: canonical JSON of
/// `[bucket, key]`.
pub fn object_key(o: &ObjectEntry) -> String {
    let v = ndarc_json::Value::Array(vec![
        ndarc_json::Value::from(o.bucket.as_str()),
        ndarc_json::Value::from(o.key.as_str()),
    ]);
    ndarc_json::to_canonical_string(&v)
}

/// The key text `diffArchives` gives a payload: canonical JSON of `[name]`.
pub fn payload_key(p: &PayloadEntry) -> String {
    let v = ndarc_json::Value::Array(vec![ndarc_json::Value::from(p.name.as_str())]);
    ndarc_json::to_canonical_string(&v)
}

/// A rule the diff broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The stable code (SPEC.md §16): `gate_removed_rows`,
    /// `gate_dropped_table`, `gate_dropped_column`, `gate_new_column`,
    /// `gate_object_bytes` or `gate_configuration`.
    pub code: &'static str,
    /// The rule, as the JSON pointer of its member in the gate file
    /// (`/tables/*/maxRemovedPercent`).
    pub rule: String,
    /// What broke it, for people.
    pub message: String,
}

/// The outcome of a gate (`crate::gate::Gate::check`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateResult {
    /// The rules checked, as JSON pointers, in file order.
    pub rules: Vec<String>,
    /// The rules broken, in the order of [`GateResult::rules`] (a rule
    /// may be broken several times: once per table, column or name).
    pub broken: Vec<Broken>,
}

impl GateResult {
    /// No rule was broken.
    pub fn passed(&self) -> bool {
        self.broken.is_empty()
    }
}
