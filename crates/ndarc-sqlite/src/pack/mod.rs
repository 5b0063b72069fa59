//! `pack`: a SQLite database to an archive, as the reference producer
//! (`catalogue.mjs`, `copies.mjs`, `export.mjs`) writes it. SPEC.md
//! "Databases and archives" is the normative text.
//!
//! The database is opened read-only and read in one transaction (one
//! consistent snapshot), twice: the first pass checks every refusal and
//! measures the parts (the manifest, written first, carries the counts and
//! `partCount`); the second writes. Memory holds one part, whatever the size
//! of the database.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ndarc_format::catalogue::{
    cmp_payload_names, content_header_digest, has_copy_rowid, is_iso_timestamp, is_name, iso_time,
    matches_exclusion, projected_columns_len, rowid_alias, schema_identity, ROWID_ALIASES,
    TRANSFER_SQL_LIMIT, TRANSFER_SQL_RESERVE,
};
use ndarc_format::hash::{hex, row_content_pieces};
use ndarc_format::pack::{chunk_cap, chunk_part, push_base64, PartWriter, RowPacker};
use ndarc_format::{Affinity, ArchiveHasher, ContentHasher, FORMAT, MAX_PART_LINE, VERSION};
use ndarc_json::{cmp_utf16, number, write_string, Object, Value};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use sha2::{Digest, Sha256};

use crate::quote;

pub use ndarc_format::catalogue::DEFAULT_EXCLUDED_TABLES;

/// What to pack and the manifest's header members.
#[derive(Debug, Clone)]
pub struct PackOptions {
    /// `product`; `None`: the database file's stem (or `database` when the
    /// stem is not a name).
    pub product: Option<String>,
    /// `exportedAt` (`YYYY-MM-DDTHH:MM:SS.sssZ`); `None`: now.
    pub exported_at: Option<String>,
    /// `epoch` (default 0).
    pub epoch: u64,
    /// `sourceIdentity` (default `local`).
    pub source_identity: String,
    /// `requiredConfiguration`, in the order given.
    pub required_configuration: Vec<String>,
    /// Exclusion patterns added to [`DEFAULT_EXCLUDED_TABLES`].
    pub exclude_tables: Vec<String>,
    /// Tables archived even when a pattern excludes them (exact names).
    pub include_tables: Vec<String>,
    /// The producer's `derivedTables`: excluded, with their shadow tables
    /// (`NAME_…`), e.g. full-text indexes rebuilt after an import.
    pub derived_tables: Vec<String>,
    /// Secret columns `(table, column)`: left out of rows and listed in
    /// `excludedColumns`.
    pub secret_columns: Vec<(String, String)>,
    /// Every regular file under this directory becomes an object of
    /// [`PackOptions::bucket`], its key the relative path with `/`.
    pub objects_dir: Option<PathBuf>,
    /// The bucket of the objects of `objects_dir`.
    pub bucket: Option<String>,
    /// Payloads `(name, file)`.
    pub payloads: Vec<(String, PathBuf)>,
    /// The producer's `partBytes`, 1024 ..= 16 MiB (default 16 MiB).
    pub part_bytes: usize,
    /// How long to wait for a writer's lock before giving up
    /// (`database_locked`); default 1 s.
    pub busy_timeout: Duration,
}

impl Default for PackOptions {
    fn default() -> Self {
        PackOptions {
            product: None,
            exported_at: None,
            epoch: 0,
            source_identity: "local".to_string(),
            required_configuration: Vec::new(),
            exclude_tables: Vec::new(),
            include_tables: Vec::new(),
            derived_tables: Vec::new(),
            secret_columns: Vec::new(),
            objects_dir: None,
            bucket: None,
            payloads: Vec::new(),
            part_bytes: MAX_PART_LINE,
            busy_timeout: Duration::from_secs(1),
        }
    }
}

/// What [`pack`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackSummary {
    /// Bytes written.
    pub bytes: u64,
    /// Part lines written.
    pub part_count: u64,
    /// The closing line's `contentHash`.
    pub content_hash: String,
    /// The closing line's `archiveHash`.
    pub archive_hash: String,
    /// The manifest's `schema`.
    pub schema: String,
    /// Archived tables with their row counts, in manifest order.
    pub tables: Vec<(String, u64)>,
    /// Excluded tables, in manifest order.
    pub excluded_tables: Vec<String>,
    /// Number of objects.
    pub objects: usize,
    /// Number of payloads.
    pub payloads: usize,
}

/// Why a database cannot be archived: the producer's refusal, with its
/// stable code and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The producer's code (`row_type`, `unsafe_integer`, `virtual_table` …).
    pub code: &'static str,
    /// The table concerned.
    pub table: Option<String>,
    /// The column concerned.
    pub column: Option<String>,
    /// The rowid of the row concerned, when it has one.
    pub rowid: Option<i64>,
    /// A one-line message naming the table, column and row.
    pub message: String,
}

/// Why [`pack`] did not write an archive.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The database cannot be archived (exit 1): the producer refuses it.
    #[error("{}: {}", .0.code, .0.message)]
    Refused(Refusal),
    /// The database, an object or a payload cannot be read (exit 2): not a
    /// database, corrupt, locked by a writer, an I/O error, or a file that
    /// changed while it was packed.
    #[error("{code}: {message}")]
    Unreadable {
        /// `not_a_database`, `database_corrupt`, `database_locked`,
        /// `database_unreadable`, `object_unreadable` or `object_changed`.
        code: &'static str,
        /// One line.
        message: String,
    },
    /// The options are invalid (exit 2).
    #[error("invalid_options: {0}")]
    Options(String),
    /// Writing the archive failed (exit 2).
    #[error("output_failed: cannot write the archive: {0}")]
    Output(#[source] io::Error),
}

impl PackError {
    /// The stable code: a refusal's code, or `not_a_database`,
    /// `database_corrupt`, `database_locked`, `database_unreadable`,
    /// `object_unreadable`, `object_changed`, `invalid_options`,
    /// `output_failed`.
    pub fn code(&self) -> &'static str {
        match self {
            PackError::Refused(r) => r.code,
            PackError::Unreadable { code, .. } => code,
            PackError::Options(_) => "invalid_options",
            PackError::Output(_) => "output_failed",
        }
    }

    /// Whether the database cannot be archived (a refusal, exit 1) rather
    /// than not read, or the run not made (exit 2).
    pub fn is_refusal(&self) -> bool {
        matches!(self, PackError::Refused(_))
    }

    /// 1 for a refusal, 2 otherwise.
    pub fn exit_code(&self) -> u8 {
        if self.is_refusal() {
            1
        } else {
            2
        }
    }

    /// The message without the code.
    pub fn message(&self) -> String {
        match self {
            PackError::Refused(r) => r.message.clone(),
            PackError::Unreadable { message, .. } => message.clone(),
            PackError::Options(m) => m.clone(),
            PackError::Output(e) => format!("cannot write the archive: {e}"),
        }
    }

    /// The refusal, when this is one.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            PackError::Refused(r) => Some(r),
            _ => None,
        }
    }
}

fn refuse(
    code: &'static str,
    table: &str,
    column: Option<&str>,
    rowid: Option<i64>,
    message: String,
) -> PackError {
    PackError::Refused(Refusal {
        code,
        table: Some(table.to_string()),
        column: column.map(str::to_string),
        rowid,
        message,
    })
}

/// Maps a SQLite error to "cannot be read".
pub(crate) fn sql_error(e: rusqlite::Error) -> PackError {
    use rusqlite::ErrorCode as C;
    let code = match e.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => "database_locked",
        Some(C::DatabaseCorrupt) => "database_corrupt",
        Some(C::NotADatabase) => "not_a_database",
        _ => "database_unreadable",
    };
    let message = match code {
        "database_locked" => format!("the database is locked by a writer ({e})"),
        "database_corrupt" => format!("the database file is corrupt ({e})"),
        "not_a_database" => format!("not a SQLite database ({e})"),
        _ => format!("cannot read the database: {e}"),
    };
    PackError::Unreadable { code, message }
}

fn out_err(e: io::Error) -> PackError {
    PackError::Output(e)
}

// ---------------------------------------------------------------- catalogue

#[derive(Debug, Clone)]
struct Column {
    name: String,
    decl: String,
    notnull: bool,
    pk: u32,
    generated: Option<&'static str>,
    affinity: Affinity,
}

#[derive(Debug, Clone)]
struct Table {
    name: String,
    sql: String,
    columns: Vec<Column>,
    dependencies: Vec<String>,
    rowid_alias: Option<&'static str>,
    without_rowid: bool,
    /// Indexes into `columns` of the archived cells (writable, not secret),
    /// in table order: the SELECT reads them in this order after the rowid.
    cells: Vec<usize>,
    /// Positions in `cells`, in the name order of the row object.
    sorted: Vec<usize>,
    /// Positions in `cells` of the primary-key columns, in `pk` order.
    key_cells: Vec<usize>,
    /// `"name":` of each entry of `cells`, canonical.
    labels: Vec<Vec<u8>>,
    /// The canonical JSON string of the table name.
    name_json: Vec<u8>,
    /// `SELECT rowid-or-NULL, cells… FROM t ORDER BY …`.
    select: String,
    count: u64,
}

struct Catalogue {
    tables: Vec<Table>,
    excluded: Vec<String>,
}

struct SchemaObject {
    name: String,
    sql: String,
    kind: String,
}

fn catalogue(conn: &Connection, opts: &PackOptions) -> Result<Catalogue, PackError> {
    let mut objects: Vec<SchemaObject> = Vec::new();
    {
        let mut st = conn
            .prepare("SELECT name, sql, type FROM main.sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
            .map_err(sql_error)?;
        let mut rows = st.query([]).map_err(sql_error)?;
        while let Some(r) = rows.next().map_err(sql_error)? {
            objects.push(SchemaObject {
                name: text(r.get_ref(0).map_err(sql_error)?),
                sql: text(r.get_ref(1).map_err(sql_error)?),
                kind: text(r.get_ref(2).map_err(sql_error)?),
            });
        }
    }
    // PRAGMA table_list: `shadow` tables, and which are WITHOUT ROWID.
    let mut kinds: Vec<(String, String, bool)> = Vec::new();
    {
        let mut st = conn
            .prepare("SELECT name, type, wr FROM pragma_table_list WHERE schema = 'main'")
            .map_err(sql_error)?;
        let mut rows = st.query([]).map_err(sql_error)?;
        while let Some(r) = rows.next().map_err(sql_error)? {
            let name = text(r.get_ref(0).map_err(sql_error)?);
            let kind = text(r.get_ref(1).map_err(sql_error)?);
            let wr: i64 = r.get(2).map_err(sql_error)?;
            kinds.push((name, kind, wr != 0));
        }
    }
    let kind_of = |name: &str| kinds.iter().find(|k| k.0 == name);
    let patterns: Vec<&str> = DEFAULT_EXCLUDED_TABLES
        .iter()
        .copied()
        .chain(opts.exclude_tables.iter().map(String::as_str))
        .collect();
    let is_excluded = |o: &SchemaObject| {
        o.kind == "table"
            && !opts.include_tables.contains(&o.name)
            && (patterns.iter().any(|p| matches_exclusion(&o.name, p))
                || opts.derived_tables.iter().any(|p| {
                    o.name == *p
                        || (kind_of(&o.name).is_some_and(|k| k.1 == "shadow")
                            && o.name.starts_with(&format!("{p}_")))
                }))
    };
    let mut excluded: Vec<String> = objects
        .iter()
        .filter(|o| is_excluded(o))
        .map(|o| o.name.clone())
        .collect();
    excluded.sort_by(|a, b| cmp_utf16(a, b));
    let mut entries: Vec<&SchemaObject> = objects
        .iter()
        .filter(|o| o.kind == "table" && !excluded.contains(&o.name))
        .collect();
    entries.sort_by(|a, b| cmp_utf16(&a.name, &b.name));

    let mut tables = Vec::new();
    for entry in entries {
        let name = &entry.name;
        let virtual_sql = {
            let words: Vec<&str> = entry.sql.split_whitespace().take(3).collect();
            words.len() == 3
                && words[0].eq_ignore_ascii_case("create")
                && words[1].eq_ignore_ascii_case("virtual")
                && words[2].eq_ignore_ascii_case("table")
        };
        let shadow = kind_of(name).is_some_and(|k| k.1 == "shadow");
        if virtual_sql || shadow {
            let what = if virtual_sql {
                "is a virtual table"
            } else {
                "is a shadow table of a virtual table"
            };
            return Err(refuse(
                "virtual_table",
                name,
                None,
                None,
                format!("table {name} {what}; exclude it (--exclude-table) to pack the rest"),
            ));
        }
        let mut columns = Vec::new();
        {
            let mut st = conn
                .prepare("SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1, 'main')")
                .map_err(sql_error)?;
            let mut rows = st.query([name]).map_err(sql_error)?;
            while let Some(r) = rows.next().map_err(sql_error)? {
                let cname = text(r.get_ref(0).map_err(sql_error)?);
                let decl = text(r.get_ref(1).map_err(sql_error)?);
                let notnull: i64 = r.get(2).map_err(sql_error)?;
                let pk: i64 = r.get(3).map_err(sql_error)?;
                let hidden: i64 = r.get(4).map_err(sql_error)?;
                let generated = match hidden {
                    0 => None,
                    2 => Some("virtual"),
                    3 => Some("stored"),
                    _ => {
                        return Err(refuse(
                            "unsupported_column",
                            name,
                            Some(&cname),
                            None,
                            format!("column {name}.{cname} is hidden (hidden = {hidden}); only ordinary and generated columns can be archived"),
                        ))
                    }
                };
                if cname.starts_with("rer_portability_") {
                    return Err(refuse(
                        "unsupported_column",
                        name,
                        Some(&cname),
                        None,
                        format!("column {name}.{cname} uses the reserved prefix rer_portability_"),
                    ));
                }
                columns.push(Column {
                    affinity: Affinity::of(&decl),
                    name: cname,
                    decl,
                    notnull: notnull != 0,
                    pk: u32::try_from(pk).unwrap_or(0),
                    generated,
                });
            }
        }
        if !is_name(name) {
            return Err(refuse(
                "invalid_name",
                name,
                None,
                None,
                format!("table name {name:?} is not a name (1 to 512 UTF-16 units, no control characters)"),
            ));
        }
        if let Some(c) = columns.iter().find(|c| !is_name(&c.name)) {
            return Err(refuse(
                "invalid_name",
                name,
                Some(&c.name),
                None,
                format!("column name {:?} of table {name} is not a name (1 to 512 UTF-16 units, no control characters)", c.name),
            ));
        }
        // Both the base cells and the encoded read must fit the SQL limit.
        let len = projected_columns_len(
            columns
                .iter()
                .map(|c| (c.name.as_str(), c.decl.as_str(), c.generated.is_some())),
        );
        if len + TRANSFER_SQL_RESERVE > TRANSFER_SQL_LIMIT {
            return Err(refuse(
                "transfer_sql_limit",
                name,
                None,
                None,
                format!(
                    "table {name} is too wide: its column list takes {len} bytes of SQL, more than {} (the producer's statement limit less {TRANSFER_SQL_RESERVE})",
                    TRANSFER_SQL_LIMIT - TRANSFER_SQL_RESERVE
                ),
            ));
        }
        let mut dependencies: Vec<String> = Vec::new();
        {
            let mut st = conn
                .prepare("SELECT \"table\" FROM pragma_foreign_key_list(?1, 'main')")
                .map_err(sql_error)?;
            let mut rows = st.query([name]).map_err(sql_error)?;
            while let Some(r) = rows.next().map_err(sql_error)? {
                let parent = text(r.get_ref(0).map_err(sql_error)?);
                let parent = objects
                    .iter()
                    .find(|o| o.kind == "table" && o.name.eq_ignore_ascii_case(&parent))
                    .map_or(parent, |o| o.name.clone());
                if !dependencies.contains(&parent) {
                    dependencies.push(parent);
                }
            }
        }
        dependencies.sort_by(|a, b| cmp_utf16(a, b));
        if let Some(parent) = dependencies.iter().find(|p| excluded.contains(p)) {
            return Err(refuse(
                "excluded_foreign_key",
                name,
                None,
                None,
                format!("table {name} has a foreign key to {parent}, which is excluded; include {parent} (--include-table) or exclude {name} too"),
            ));
        }
        let any_pk = columns.iter().any(|c| c.pk > 0);
        let names = columns.iter().map(|c| c.name.as_str());
        let Ok(alias) = rowid_alias(names.clone(), any_pk) else {
            return Err(refuse(
                "unsupported_rowid",
                name,
                None,
                None,
                format!("table {name} has no primary key and its columns shadow rowid, _rowid_ and oid, so its rowids cannot be read"),
            ));
        };
        if !has_copy_rowid(names) {
            return Err(refuse(
                "unsupported_copy_rowid",
                name,
                None,
                None,
                format!("the columns of table {name} shadow rowid, _rowid_ and oid; the producer's snapshot copy needs one of them"),
            ));
        }
        let without_rowid = kind_of(name).is_some_and(|k| k.2);
        tables.push(Table {
            name: name.clone(),
            sql: entry.sql.clone(),
            columns,
            dependencies,
            rowid_alias: alias,
            without_rowid,
            cells: Vec::new(),
            sorted: Vec::new(),
            key_cells: Vec::new(),
            labels: Vec::new(),
            name_json: Vec::new(),
            select: String::new(),
            count: 0,
        });
    }

    // Secret columns, then included tables, as catalogue.mjs checks them.
    for (table, column) in &opts.secret_columns {
        let Some(t) = tables.iter().find(|t| t.name == *table) else {
            return Err(refuse(
                "secret_table_missing",
                table,
                Some(column),
                None,
                format!(
                    "secret column {table}.{column}: the database has no archived table {table}"
                ),
            ));
        };
        match t.columns.iter().find(|c| c.name == *column) {
            Some(c) if !c.notnull && c.pk == 0 && c.generated.is_none() => {}
            Some(_) => {
                return Err(refuse(
                    "invalid_secret_column",
                    table,
                    Some(column),
                    None,
                    format!("secret column {table}.{column} is NOT NULL, in the primary key or generated, so it cannot be left out"),
                ))
            }
            None => {
                return Err(refuse(
                    "invalid_secret_column",
                    table,
                    Some(column),
                    None,
                    format!("secret column {table}.{column}: table {table} has no column {column}"),
                ))
            }
        }
    }
    for table in &opts.include_tables {
        if !tables.iter().any(|t| t.name == *table) {
            return Err(refuse(
                "policy_table_missing",
                table,
                None,
                None,
                format!("--include-table {table}: the database has no such table"),
            ));
        }
    }
    for t in &mut tables {
        prepare_table(t, opts);
    }
    Ok(Catalogue { tables, excluded })
}

fn text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    }
}

fn prepare_table(t: &mut Table, opts: &PackOptions) {
    let secrets: Vec<&str> = opts
        .secret_columns
        .iter()
        .filter(|(tn, _)| *tn == t.name)
        .map(|(_, c)| c.as_str())
        .collect();
    t.cells = (0..t.columns.len())
        .filter(|&i| {
            let c = &t.columns[i];
            c.generated.is_none() && !secrets.contains(&c.name.as_str())
        })
        .collect();
    let mut sorted: Vec<usize> = (0..t.cells.len()).collect();
    sorted.sort_by(|&a, &b| cmp_utf16(&t.columns[t.cells[a]].name, &t.columns[t.cells[b]].name));
    t.sorted = sorted;
    let mut keys: Vec<(u32, usize)> = t
        .cells
        .iter()
        .enumerate()
        .filter(|(_, &ci)| t.columns[ci].pk > 0)
        .map(|(k, &ci)| (t.columns[ci].pk, k))
        .collect();
    keys.sort_unstable();
    t.key_cells = keys.into_iter().map(|(_, k)| k).collect();
    t.labels = t
        .cells
        .iter()
        .map(|&i| {
            let mut l = Vec::new();
            write_string(&t.columns[i].name, &mut l);
            l.push(b':');
            l
        })
        .collect();
    t.name_json.clear();
    write_string(&t.name, &mut t.name_json);
    // The rowid read: the table's alias, or for a rowid table with a primary
    // key the first free alias (for messages and ties), or none.
    let copy_alias = ROWID_ALIASES
        .iter()
        .find(|a| !t.columns.iter().any(|c| c.name.eq_ignore_ascii_case(a)));
    let rowid_expr = match (t.rowid_alias, t.without_rowid, copy_alias) {
        (Some(a), _, _) => quote(a),
        (None, false, Some(a)) => quote(a),
        _ => "NULL".to_string(),
    };
    let mut select = format!("SELECT {rowid_expr}");
    for &i in &t.cells {
        select.push(',');
        select.push_str(&quote(&t.columns[i].name));
    }
    select.push_str(" FROM main.");
    select.push_str(&quote(&t.name));
    select.push_str(" ORDER BY ");
    let mut keys: Vec<&Column> = t.columns.iter().filter(|c| c.pk > 0).collect();
    keys.sort_by_key(|c| c.pk);
    if keys.is_empty() {
        select.push_str(&rowid_expr);
    } else {
        // Primary-key order is SQLite's BINARY order of the key values (the
        // producer sorts a snapshot copy, which has no declared collation),
        // ties by rowid.
        let mut terms: Vec<String> = keys
            .iter()
            .map(|c| format!("{} COLLATE BINARY", quote(&c.name)))
            .collect();
        if rowid_expr != "NULL" {
            terms.push(rowid_expr.clone());
        }
        select.push_str(&terms.join(","));
    }
    t.select = select;
}

// ---------------------------------------------------------------- rows

/// Where a row is, for messages.
fn place(rowid: Option<i64>, index: u64) -> String {
    match rowid {
        Some(r) => format!("at rowid {r}"),
        None => format!("in row {index} of the table's key order"),
    }
}

fn describe(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "null".to_string(),
        ValueRef::Integer(i) => format!("the integer {i}"),
        ValueRef::Real(f) => format!("the real {f}"),
        ValueRef::Text(b) => {
            let s = String::from_utf8_lossy(b);
            let short: String = s.chars().take(40).collect();
            if short.len() < s.len() {
                format!("the text {short:?}…")
            } else {
                format!("the text {short:?}")
            }
        }
        ValueRef::Blob(b) => format!("a blob of {} bytes", b.len()),
    }
}

/// The integer the producer reads from an INTEGER-affinity cell through
/// `CAST(… AS TEXT)`: `/^-?\d+$/` and a safe integer, or `None`.
fn integer_cell(v: ValueRef<'_>) -> Option<f64> {
    match v {
        ValueRef::Integer(i) => {
            let f = i as f64;
            (i.unsigned_abs() < (1u64 << 53)).then_some(f)
        }
        // SQLite writes a REAL cast to text with a '.' or an exponent.
        ValueRef::Real(_) | ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => {
            let digits = b.strip_prefix(b"-").unwrap_or(b);
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let s = std::str::from_utf8(b).ok()?;
            let f: f64 = s.parse().ok()?;
            ndarc_json::safe_integer(f).map(|_| f)
        }
    }
}

/// The length of `s` as [`write_string`] writes it, quotes included.
fn string_len(s: &[u8]) -> usize {
    2 + s.len()
        + s.iter()
            .map(|&b| match b {
                b'"' | b'\\' | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 1,
                0..=0x1F => 5,
                _ => 0,
            })
            .sum::<usize>()
}

/// The length of `{"blob":"BASE64"}` for `n` bytes.
fn blob_len(n: usize) -> usize {
    br#"{"blob":""#.len() + n.div_ceil(3) * 4 + br#""}"#.len()
}

/// An encoded row item: the byte ranges of the row object and of the rowid
/// text within the buffer, and the item's length.
struct Encoded {
    row: std::ops::Range<usize>,
    rowid: std::ops::Range<usize>,
    len: usize,
}

/// Encodes one row item into `buf` (cleared first), checking it as
/// `encodedRow`, `validateRow` and `nextItems` do. With `measure`, text and
/// blob cells are only measured, not written (the first pass needs the
/// item's length alone), so `buf` is not the item.
fn encode_row(
    t: &Table,
    row: &rusqlite::Row<'_>,
    index: u64,
    buf: &mut Vec<u8>,
    measure: bool,
) -> Result<Encoded, PackError> {
    let mut unwritten = 0usize;
    let rowid = match row.get_ref(0).map_err(sql_error)? {
        ValueRef::Integer(i) => Some(i),
        _ => None,
    };
    let cell = |k: usize| row.get_ref(k + 1).map_err(sql_error);
    // encodedRow: INTEGER cells first, in table order.
    for (k, &ci) in t.cells.iter().enumerate() {
        let c = &t.columns[ci];
        if c.affinity != Affinity::Integer {
            continue;
        }
        let v = cell(k)?;
        if !matches!(v, ValueRef::Null) && integer_cell(v).is_none() {
            return Err(refuse(
                "unsafe_integer",
                &t.name,
                Some(&c.name),
                rowid,
                format!(
                    "column {}.{} ({}, INTEGER affinity) holds {} {}, which is not a safe integer (|n| ≤ 2^53−1)",
                    t.name, c.name, c.decl, describe(v), place(rowid, index)
                ),
            ));
        }
    }
    // validateRow, in table order.
    for (k, &ci) in t.cells.iter().enumerate() {
        let c = &t.columns[ci];
        let v = cell(k)?;
        let bad = |why: &str| {
            refuse(
                "row_type",
                &t.name,
                Some(&c.name),
                rowid,
                format!(
                    "column {}.{} ({}, {} affinity) holds {} {}: {why}",
                    t.name,
                    c.name,
                    if c.decl.is_empty() {
                        "no type"
                    } else {
                        &c.decl
                    },
                    c.affinity.name(),
                    describe(v),
                    place(rowid, index)
                ),
            )
        };
        match v {
            ValueRef::Null if c.notnull => {
                return Err(refuse(
                    "row_not_null",
                    &t.name,
                    Some(&c.name),
                    rowid,
                    format!(
                        "column {}.{} is NOT NULL but holds null {}",
                        t.name,
                        c.name,
                        place(rowid, index)
                    ),
                ));
            }
            ValueRef::Blob(_)
                if c.affinity != Affinity::Integer && c.affinity != Affinity::Blob =>
            {
                return Err(bad("a blob fits only a BLOB column"));
            }
            ValueRef::Real(f) if !f.is_finite() => {
                return Err(bad("infinity has no JSON form"));
            }
            ValueRef::Text(_) if c.affinity == Affinity::Number => {
                return Err(bad(
                    "a NUMBER-affinity column (REAL, NUMERIC, DATETIME, BOOLEAN …) holds numbers only; text such as a date is refused",
                ));
            }
            ValueRef::Integer(_) | ValueRef::Real(_) if c.affinity == Affinity::Text => {
                return Err(bad("a TEXT column holds strings only"));
            }
            _ => {}
        }
    }
    if let Some(r) = rowid.filter(|_| t.rowid_alias.is_some()) {
        if r.unsigned_abs() > (1u64 << 53) - 1 {
            return Err(refuse(
                "unsafe_integer",
                &t.name,
                None,
                Some(r),
                format!(
                    "table {} has rowid {r}, which is not a safe integer (|n| ≤ 2^53−1)",
                    t.name
                ),
            ));
        }
    }
    // The canonical item: {"index","kind","row","rowid"?,"table"}.
    buf.clear();
    buf.extend_from_slice(b"{\"index\":");
    number::write(index as f64, buf);
    buf.extend_from_slice(b",\"kind\":\"row\",\"row\":");
    let row_start = buf.len();
    buf.push(b'{');
    for (n, &k) in t.sorted.iter().enumerate() {
        if n > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(&t.labels[k]);
        let c = &t.columns[t.cells[k]];
        let v = cell(k)?;
        match v {
            ValueRef::Null => buf.extend_from_slice(b"null"),
            _ if c.affinity == Affinity::Integer => {
                number::write(integer_cell(v).unwrap_or(0.0), buf);
            }
            ValueRef::Integer(i) => number::write(i as f64, buf),
            ValueRef::Real(f) => number::write(f, buf),
            ValueRef::Text(b) => match std::str::from_utf8(b) {
                Ok(_) if measure => unwritten += string_len(b),
                Ok(s) => write_string(s, buf),
                Err(_) => write_string(&String::from_utf8_lossy(b), buf),
            },
            ValueRef::Blob(b) if measure => unwritten += blob_len(b.len()),
            ValueRef::Blob(b) => {
                buf.extend_from_slice(b"{\"blob\":\"");
                push_base64(b, buf);
                buf.extend_from_slice(b"\"}");
            }
        }
    }
    buf.push(b'}');
    let row_end = buf.len();
    let mut rowid_range = row_end..row_end;
    if t.rowid_alias.is_some() {
        buf.extend_from_slice(b",\"rowid\":");
        let s = buf.len();
        number::write(rowid.unwrap_or(0) as f64, buf);
        rowid_range = s..buf.len();
    }
    buf.extend_from_slice(b",\"table\":");
    buf.extend_from_slice(&t.name_json);
    buf.push(b'}');
    Ok(Encoded {
        row: row_start..row_end,
        rowid: rowid_range,
        len: buf.len() + unwritten,
    })
}

// ---------------------------------------------------------------- binaries

struct Binary {
    /// `(bucket, key)` for an object; `None` for a payload.
    object: Option<(String, String)>,
    name: String,
    path: PathBuf,
    size: u64,
    sha256: [u8; 32],
}

fn unreadable(code: &'static str, what: &Path, e: &io::Error) -> PackError {
    PackError::Unreadable {
        code,
        message: format!("cannot read {}: {e}", what.display()),
    }
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) -> Result<(), PackError> {
    let rd = std::fs::read_dir(dir).map_err(|e| unreadable("object_unreadable", dir, &e))?;
    for entry in rd {
        let entry = entry.map_err(|e| unreadable("object_unreadable", dir, &e))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            return Err(PackError::Unreadable {
                code: "object_unreadable",
                message: format!(
                    "{}: the file name is not UTF-8, so it cannot be an object key",
                    path.display()
                ),
            });
        };
        let ft = entry
            .file_type()
            .map_err(|e| unreadable("object_unreadable", &path, &e))?;
        let key = format!("{prefix}{name}");
        if ft.is_dir() {
            walk(&path, &format!("{key}/"), out)?;
        } else if ft.is_file() {
            out.push((key, path));
        } else {
            return Err(PackError::Unreadable {
                code: "object_unreadable",
                message: format!(
                    "{}: not a regular file or directory (symbolic links are not followed)",
                    path.display()
                ),
            });
        }
    }
    Ok(())
}

fn hash_file(path: &Path) -> Result<(u64, [u8; 32]), PackError> {
    let mut f = File::open(path).map_err(|e| unreadable("object_unreadable", path, &e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable("object_unreadable", path, &e)),
        };
        h.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, h.finalize().into()))
}

fn binaries(opts: &PackOptions) -> Result<(Vec<Binary>, Vec<Binary>), PackError> {
    let mut objects = Vec::new();
    match (&opts.objects_dir, &opts.bucket) {
        (Some(dir), Some(bucket)) => {
            if !is_name(bucket) {
                return Err(PackError::Options(format!(
                    "--bucket {bucket:?} is not a name"
                )));
            }
            let mut files = Vec::new();
            walk(dir, "", &mut files)?;
            files.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
            for (key, path) in files {
                let (size, sha256) = hash_file(&path)?;
                objects.push(Binary {
                    object: Some((bucket.clone(), key)),
                    name: String::new(),
                    path,
                    size,
                    sha256,
                });
            }
        }
        (None, None) => {}
        _ => {
            return Err(PackError::Options(
                "--objects-dir and --bucket go together".to_string(),
            ))
        }
    }
    let mut payloads = Vec::new();
    for (name, path) in &opts.payloads {
        if !is_name(name) {
            return Err(PackError::Options(format!(
                "payload name {name:?} is not a name"
            )));
        }
        if opts.payloads.iter().filter(|(n, _)| n == name).count() > 1 {
            return Err(PackError::Options(format!(
                "payload {name:?} is given twice"
            )));
        }
        let (size, sha256) = hash_file(path)?;
        payloads.push(Binary {
            object: None,
            name: name.clone(),
            path: path.clone(),
            size,
            sha256,
        });
    }
    payloads.sort_by(|a, b| cmp_payload_names(&a.name, &b.name));
    Ok((objects, payloads))
}

// ---------------------------------------------------------------- manifest

fn check_options(db: &Path, opts: &PackOptions) -> Result<(String, String), PackError> {
    if !(1024..=MAX_PART_LINE).contains(&opts.part_bytes) {
        return Err(PackError::Options(format!(
            "part size must be 1024 to {MAX_PART_LINE} bytes, not {}",
            opts.part_bytes
        )));
    }
    let product = match &opts.product {
        Some(p) => p.clone(),
        None => db
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| is_name(s))
            .unwrap_or("database")
            .to_string(),
    };
    for (what, v) in [
        ("product", &product),
        ("source identity", &opts.source_identity),
    ] {
        if !is_name(v) {
            return Err(PackError::Options(format!(
                "the {what} {v:?} is not a name"
            )));
        }
    }
    let exported_at = match &opts.exported_at {
        Some(t) if is_iso_timestamp(t) => t.clone(),
        Some(t) => {
            return Err(PackError::Options(format!(
                "exportedAt {t:?} is not of the form YYYY-MM-DDTHH:MM:SS.sssZ"
            )))
        }
        None => {
            let ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            iso_time(ms)
        }
    };
    if opts.epoch > (1u64 << 53) - 1 {
        return Err(PackError::Options(format!(
            "epoch {} is not a safe integer",
            opts.epoch
        )));
    }
    for (i, c) in opts.required_configuration.iter().enumerate() {
        if !is_name(c) {
            return Err(PackError::Options(format!(
                "required configuration {c:?} is not a name"
            )));
        }
        if opts.required_configuration[..i].contains(c) {
            return Err(PackError::Options(format!(
                "required configuration {c:?} is given twice"
            )));
        }
    }
    for (i, sc) in opts.secret_columns.iter().enumerate() {
        if opts.secret_columns[..i].contains(sc) {
            return Err(PackError::Options(format!(
                "secret column {}.{} is given twice",
                sc.0, sc.1
            )));
        }
    }
    Ok((product, exported_at))
}

fn str_array(items: impl Iterator<Item = String>) -> Value<'static> {
    Value::Array(items.map(Value::from).collect())
}

fn manifest(
    product: &str,
    exported_at: &str,
    opts: &PackOptions,
    cat: &Catalogue,
    objects: &[Binary],
    payloads: &[Binary],
    part_count: u64,
) -> Object<'static> {
    let tables: Vec<Value<'static>> = cat
        .tables
        .iter()
        .map(|t| {
            let columns = t
                .columns
                .iter()
                .map(|c| {
                    let mut o = Object::new();
                    o.insert("name", Value::from(c.name.clone()));
                    o.insert("type", Value::from(c.decl.clone()));
                    o.insert("notnull", Value::from(i64::from(c.notnull)));
                    o.insert("pk", Value::from(i64::from(c.pk)));
                    if let Some(g) = c.generated {
                        o.insert("generated", Value::from(g));
                    }
                    Value::Object(o)
                })
                .collect();
            let mut o = Object::new();
            o.insert("name", Value::from(t.name.clone()));
            o.insert("sql", Value::from(t.sql.clone()));
            o.insert("columns", Value::Array(columns));
            o.insert("dependencies", str_array(t.dependencies.iter().cloned()));
            o.insert("rowidAlias", t.rowid_alias.map_or(Value::Null, Value::from));
            o.insert("count", Value::from(t.count as i64));
            Value::Object(o)
        })
        .collect();
    let objects: Vec<Value<'static>> = objects
        .iter()
        .map(|b| {
            let (bucket, key) = b.object.clone().unwrap_or_default();
            let mut o = Object::new();
            o.insert("bucket", Value::from(bucket));
            o.insert("key", Value::from(key));
            o.insert("size", Value::from(b.size as i64));
            o.insert("sha256", Value::from(hex(&b.sha256)));
            o.insert("httpMetadata", Value::Object(Object::new()));
            o.insert("customMetadata", Value::Object(Object::new()));
            Value::Object(o)
        })
        .collect();
    let payloads: Vec<Value<'static>> = payloads
        .iter()
        .map(|b| {
            let mut o = Object::new();
            o.insert("name", Value::from(b.name.clone()));
            o.insert("size", Value::from(b.size as i64));
            o.insert("sha256", Value::from(hex(&b.sha256)));
            Value::Object(o)
        })
        .collect();
    let mut excluded_columns = Object::new();
    for (table, column) in &opts.secret_columns {
        match excluded_columns.get_mut(table) {
            Some(Value::Array(list)) => list.push(Value::from(column.clone())),
            _ => excluded_columns.insert(
                table.clone(),
                Value::Array(vec![Value::from(column.clone())]),
            ),
        }
    }
    let mut m = Object::new();
    m.insert("kind", Value::from("manifest"));
    m.insert("format", Value::from(FORMAT));
    m.insert("version", Value::from(VERSION));
    m.insert("product", Value::from(product.to_string()));
    m.insert("exportedAt", Value::from(exported_at.to_string()));
    m.insert("sourceIdentity", Value::from(opts.source_identity.clone()));
    m.insert(
        "schema",
        Value::from(schema_identity(
            cat.tables.iter().map(|t| (t.name.as_str(), t.sql.as_str())),
        )),
    );
    m.insert("tables", Value::Array(tables));
    m.insert("objects", Value::Array(objects));
    m.insert("payloads", Value::Array(payloads));
    m.insert("excludedTables", str_array(cat.excluded.iter().cloned()));
    m.insert("excludedColumns", Value::Object(excluded_columns));
    m.insert(
        "requiredConfiguration",
        str_array(opts.required_configuration.iter().cloned()),
    );
    m.insert("partCount", Value::from(part_count as i64));
    m.insert("epoch", Value::from(opts.epoch as i64));
    m.insert("journal", Value::Array(Vec::new()));
    m
}

// ---------------------------------------------------------------- pack

/// Opens `db` read-only, for one consistent read.
pub(crate) fn open_read_only(db: &Path, busy: Duration) -> Result<Connection, PackError> {
    match crate::is_sqlite_file(db) {
        Ok(true) => {}
        Ok(false) => {
            return Err(PackError::Unreadable {
                code: "not_a_database",
                message: "not a SQLite database (the file does not start with the SQLite header)"
                    .to_string(),
            })
        }
        Err(e) => return Err(unreadable("database_unreadable", db, &e)),
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_error)?;
    conn.busy_timeout(busy).map_err(sql_error)?;
    Ok(conn)
}

/// Packs the SQLite database `db` into an archive written to `out`, as the
/// reference producer does (SPEC.md "Databases and archives").
///
/// Nothing is written to `out` unless the whole database can be archived:
/// every refusal is found by the first pass, before the manifest is written.
/// The database is opened read-only and never written.
///
/// Errors: [`PackError::Refused`] when the producer refuses the database
/// (exit 1), otherwise the database or a file cannot be read, the options
/// are invalid, or `out` fails (exit 2).
pub fn pack(db: &Path, opts: &PackOptions, out: &mut dyn Write) -> Result<PackSummary, PackError> {
    let (product, exported_at) = check_options(db, opts)?;
    let conn = open_read_only(db, opts.busy_timeout)?;
    // One snapshot: a deferred transaction whose first read takes it.
    conn.execute_batch("BEGIN").map_err(sql_error)?;
    conn.query_row("SELECT count(*) FROM main.sqlite_schema", [], |_| Ok(()))
        .map_err(sql_error)?;
    let result = pack_in(&conn, &product, &exported_at, opts, out);
    let _ = conn.execute_batch("COMMIT");
    result
}

fn pack_in(
    conn: &Connection,
    product: &str,
    exported_at: &str,
    opts: &PackOptions,
    out: &mut dyn Write,
) -> Result<PackSummary, PackError> {
    let mut cat = catalogue(conn, opts)?;
    let (objects, payloads) = binaries(opts)?;
    let part_bytes = opts.part_bytes;

    // Pass 1: every refusal, the counts and the number of parts.
    let mut item = Vec::with_capacity(4096);
    let mut part_count = 0u64;
    for t in &mut cat.tables {
        let mut packer = RowPacker::new(part_bytes);
        let mut st = conn.prepare(&t.select).map_err(sql_error)?;
        let mut rows = st.query([]).map_err(sql_error)?;
        let mut index = 0u64;
        let mut last_key: Option<Vec<u8>> = None;
        while let Some(r) = rows.next().map_err(sql_error)? {
            let e = encode_row(t, r, index, &mut item, true)?;
            admit(t, &mut packer, e.len, index, r, &mut part_count, part_bytes)?;
            duplicate_key(t, r, index, &mut last_key)?;
            index += 1;
        }
        t.count = index;
    }
    for b in objects.iter().chain(&payloads) {
        part_count += ndarc_format::pack::chunk_count(b.size, cap(b, part_bytes));
    }

    // Pass 2: write.
    let m = manifest(
        product,
        exported_at,
        opts,
        &cat,
        &objects,
        &payloads,
        part_count,
    );
    let mut content = ContentHasher::new(&content_header_digest(&m));
    let mut archive = ArchiveHasher::new();
    let mut line = ndarc_json::to_canonical_vec(&Value::Object(m));
    archive.add_line(&line);
    line.push(b'\n');
    out.write_all(&line).map_err(out_err)?;
    let mut bytes = line.len() as u64;
    drop(line);
    let mut part = PartWriter::new(part_bytes);
    let mut digests: Vec<[u8; 32]> = Vec::with_capacity(1024);
    for t in &cat.tables {
        let mut packer = RowPacker::new(part_bytes);
        let mut st = conn.prepare(&t.select).map_err(sql_error)?;
        let mut rows = st.query([]).map_err(sql_error)?;
        let mut index = 0u64;
        while let Some(r) = rows.next().map_err(sql_error)? {
            let e = encode_row(t, r, index, &mut item, false)?;
            let mut ignored = 0;
            if admit(t, &mut packer, e.len, index, r, &mut ignored, part_bytes)? {
                content.add_row_digests(&digests);
                digests.clear();
                bytes += part.finish(&mut archive, out).map_err(out_err)?;
                part.begin();
            }
            part.push_item(&item);
            let rowid_text = t.rowid_alias.map(|_| &item[e.rowid.clone()]);
            let mut h = Sha256::new();
            for piece in row_content_pieces(&item[e.row], rowid_text, &t.name_json) {
                h.update(piece);
            }
            digests.push(h.finalize().into());
            index += 1;
        }
        if index != t.count {
            return Err(PackError::Unreadable {
                code: "database_unreadable",
                message: format!(
                    "table {} changed between the two reads of one transaction",
                    t.name
                ),
            });
        }
    }
    content.add_row_digests(&digests);
    bytes += part.finish(&mut archive, out).map_err(out_err)?;
    let mut chunk = Vec::new();
    for b in objects.iter().chain(&payloads) {
        bytes += write_binary(b, part_bytes, &mut part, &mut archive, out, &mut chunk)?;
    }
    if part.count() != part_count {
        return Err(PackError::Unreadable {
            code: "database_unreadable",
            message: format!("planned {part_count} parts but wrote {}", part.count()),
        });
    }
    let content_hash = content.finish();
    let archive_hash = archive.finish();
    let mut closing = ndarc_format::closing_line(part_count, &content_hash, &archive_hash);
    closing.push(b'\n');
    out.write_all(&closing).map_err(out_err)?;
    out.flush().map_err(out_err)?;
    bytes += closing.len() as u64;
    Ok(PackSummary {
        bytes,
        part_count,
        content_hash,
        archive_hash,
        schema: schema_identity(cat.tables.iter().map(|t| (t.name.as_str(), t.sql.as_str()))),
        tables: cat
            .tables
            .iter()
            .map(|t| (t.name.clone(), t.count))
            .collect(),
        excluded_tables: cat.excluded.clone(),
        objects: objects.len(),
        payloads: payloads.len(),
    })
}

/// The packing rule for one row item; `row_part_too_large` when it fits no
/// part. Returns whether the item starts a new part.
fn admit(
    t: &Table,
    packer: &mut RowPacker,
    len: usize,
    index: u64,
    r: &rusqlite::Row<'_>,
    parts: &mut u64,
    part_bytes: usize,
) -> Result<bool, PackError> {
    match packer.admit(len) {
        Ok(start) => {
            *parts += u64::from(start);
            Ok(start)
        }
        Err(_) => {
            let rowid = match r.get_ref(0) {
                Ok(ValueRef::Integer(i)) => Some(i),
                _ => None,
            };
            Err(refuse(
                "row_part_too_large",
                &t.name,
                None,
                rowid,
                format!(
                    "the row {} of table {} is {} bytes as an item, too large for a part of {} bytes",
                    place(rowid, index),
                    t.name,
                    len,
                    part_bytes
                ),
            ))
        }
    }
}

/// A repeated primary key (possible only with NULLs in a rowid table's
/// non-integer primary key) would be an invalid archive.
fn duplicate_key(
    t: &Table,
    r: &rusqlite::Row<'_>,
    index: u64,
    last: &mut Option<Vec<u8>>,
) -> Result<(), PackError> {
    if t.rowid_alias.is_some() {
        return Ok(());
    }
    let mut key = Vec::new();
    for &k in &t.key_cells {
        match r.get_ref(k + 1).map_err(sql_error)? {
            ValueRef::Null => key.push(0),
            ValueRef::Integer(i) => {
                key.push(1);
                key.extend_from_slice(&(i as f64).to_bits().to_be_bytes());
            }
            ValueRef::Real(f) => {
                key.push(1);
                key.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            ValueRef::Text(b) => {
                key.push(2);
                key.extend_from_slice(&(b.len() as u64).to_be_bytes());
                key.extend_from_slice(b);
            }
            ValueRef::Blob(b) => {
                key.push(3);
                key.extend_from_slice(&(b.len() as u64).to_be_bytes());
                key.extend_from_slice(b);
            }
        }
    }
    if last.as_deref() == Some(&key[..]) {
        let rowid = match r.get_ref(0) {
            Ok(ValueRef::Integer(i)) => Some(i),
            _ => None,
        };
        return Err(refuse(
            "duplicate_row_key",
            &t.name,
            None,
            rowid,
            format!(
                "table {} repeats a primary key {} (NULL in a primary key of a rowid table); rows are matched by key, so keys must be unique",
                t.name,
                place(rowid, index)
            ),
        ));
    }
    *last = Some(key);
    Ok(())
}

fn cap(b: &Binary, part_bytes: usize) -> u64 {
    match &b.object {
        Some((bucket, key)) => chunk_cap(part_bytes, Some(bucket), Some(key), None),
        None => chunk_cap(part_bytes, None, None, Some(&b.name)),
    }
}

fn write_binary(
    b: &Binary,
    part_bytes: usize,
    part: &mut PartWriter,
    archive: &mut ArchiveHasher,
    out: &mut dyn Write,
    chunk: &mut Vec<u8>,
) -> Result<u64, PackError> {
    let cap = usize::try_from(cap(b, part_bytes)).unwrap_or(usize::MAX);
    let changed = || PackError::Unreadable {
        code: "object_changed",
        message: format!("{} changed while it was packed", b.path.display()),
    };
    let mut f = File::open(&b.path).map_err(|e| unreadable("object_unreadable", &b.path, &e))?;
    let mut h = Sha256::new();
    let mut offset = 0u64;
    let mut bytes = 0u64;
    let object = b.object.as_ref().map(|(x, y)| (x.as_str(), y.as_str()));
    loop {
        chunk.clear();
        let want = cap.min(usize::try_from(b.size - offset.min(b.size)).unwrap_or(usize::MAX));
        chunk.resize(want, 0);
        let mut got = 0;
        while got < want {
            match f.read(&mut chunk[got..]) {
                Ok(0) => return Err(changed()),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(unreadable("object_unreadable", &b.path, &e)),
            }
        }
        if want == 0 && offset > 0 {
            break;
        }
        h.update(&chunk[..]);
        chunk_part(part, object, &b.name, offset, chunk);
        bytes += part.finish(archive, out).map_err(out_err)?;
        offset += want as u64;
        if offset >= b.size {
            break;
        }
    }
    let mut extra = [0u8; 1];
    let longer = matches!(f.read(&mut extra), Ok(n) if n > 0);
    let digest: [u8; 32] = h.finalize().into();
    if longer || digest != b.sha256 {
        return Err(changed());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_lengths_are_the_written_lengths() {
        let all: Vec<u8> = (0u8..=0x7F).chain("é😀\u{2028}".bytes()).collect();
        for s in [&b""[..], b"plain", b"\"\\", &all] {
            let mut out = Vec::new();
            write_string(std::str::from_utf8(s).unwrap(), &mut out);
            assert_eq!(string_len(s), out.len(), "{s:?}");
        }
        for n in 0..10 {
            let mut out = b"{\"blob\":\"".to_vec();
            push_base64(&vec![0xAB; n], &mut out);
            out.extend_from_slice(b"\"}");
            assert_eq!(blob_len(n), out.len(), "{n}");
        }
    }

    #[test]
    fn patterns_match_as_catalogue_mjs() {
        assert!(matches_exclusion("SQLITE_sequence", "sqlite_%"));
        assert!(matches_exclusion("_CF_kv", "_cf_%"));
        assert!(!matches_exclusion("x_cf_kv", "_cf_%"));
        assert!(matches_exclusion("D1_Migrations", "d1_migrations"));
        assert!(!matches_exclusion("d1_migrations2", "d1_migrations"));
        // Only a trailing % is special; `_` is a plain character.
        assert!(!matches_exclusion("oaX", "oa_%"));
        assert!(matches_exclusion("anything", "%"));
    }
}
