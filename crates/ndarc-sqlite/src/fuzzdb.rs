//! Seeded, deterministic random SQLite databases for fuzz-testing producers.
//!
//! A database is first drawn as a [`DbSpec`] (tables, columns, keys, foreign
//! keys, rows) and then written with [`DbSpec::write`]. Keeping the plan,
//! not only the file, is what lets a failing database be shrunk
//! ([`shrink`]): drop tables, then rows, then columns, while it still fails.
//!
//! [`generate`] draws a database a conforming producer must archive. It
//! covers every affinity and a spread of declared types (`FLOATING POINT` is
//! INTEGER, `STRING` is NUMBER), single-column and composite keys, `INTEGER
//! PRIMARY KEY` aliases, WITHOUT ROWID tables, rowid tables whose columns
//! shadow `rowid`/`_rowid_` (not all three), generated columns (virtual and
//! stored), foreign keys (also naming the parent in another ASCII case),
//! NULLs, unicode and astral text, NUL and control characters, empty strings
//! and blobs, integers at ±2^53 and ±2^63 where the affinity keeps them as
//! numbers, floats (−0.0, subnormals, 1e21, the largest double), long text,
//! empty tables, and tables whose names the producer's defaults exclude
//! (holding rows that would be refused if they were archived).
//!
//! [`must_refuse`] adds one defect ([`Refusal`]) to such a database; each
//! defect has the code the seed's producer refuses it with
//! ([`Refusal::code`]).

use std::fmt::Write as _;
use std::path::Path;

use ndarc_format::Affinity;
use ndarc_gen::{derive, Rng};
use rusqlite::types::{ToSql, ToSqlOutput, Value, ValueRef};
use rusqlite::Connection;

/// A value to store, as its SQLite storage class before the column's
/// affinity converts it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// NULL.
    Null,
    /// A 64-bit integer.
    Int(i64),
    /// A double (finite).
    Real(f64),
    /// Text (may hold NUL and any character).
    Text(String),
    /// A blob (may be empty).
    Blob(Vec<u8>),
}

impl ToSql for Cell {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Cell::Null => ToSqlOutput::Owned(Value::Null),
            Cell::Int(i) => ToSqlOutput::Owned(Value::Integer(*i)),
            Cell::Real(x) => ToSqlOutput::Owned(Value::Real(*x)),
            Cell::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Cell::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

/// A generated column's expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The expression, without the parentheses.
    pub expr: String,
    /// STORED rather than VIRTUAL.
    pub stored: bool,
}

/// One column of a planned table.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The name.
    pub name: String,
    /// The declared type, possibly empty.
    pub decl: String,
    /// Declared NOT NULL.
    pub not_null: bool,
    /// Generated, with its expression.
    pub generated: Option<Generated>,
}

/// A foreign key, as a table constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKey {
    /// The child's columns.
    pub columns: Vec<String>,
    /// The parent table as written (maybe in another ASCII case than its
    /// real name).
    pub parent: String,
}

/// One row: its rowid (rowid tables) and a cell per column (generated
/// columns' cells are ignored).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The rowid to insert, when the table has a free rowid alias.
    pub rowid: Option<i64>,
    /// The cells, one per column of the table.
    pub cells: Vec<Cell>,
}

/// A planned table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The name.
    pub name: String,
    /// The columns, in order (empty for a virtual table).
    pub columns: Vec<Column>,
    /// The primary key's column names in key order (empty: no primary key).
    pub pk: Vec<String>,
    /// Declare a single-column key inline (`id INTEGER PRIMARY KEY`, the
    /// rowid alias when the type is `INTEGER`).
    pub inline_pk: bool,
    /// WITHOUT ROWID.
    pub without_rowid: bool,
    /// Foreign keys.
    pub foreign_keys: Vec<ForeignKey>,
    /// The rows.
    pub rows: Vec<Row>,
    /// `Some(module args)` for a virtual table (`fts5(body)`).
    pub virtual_using: Option<String>,
    /// Write the statement's keywords in lower case.
    pub lower_keywords: bool,
    /// The author's own `CREATE TABLE` statement (`fuzz-producer
    /// --schema`), written as it is instead of one made from the plan; its
    /// columns are then not shrunk away.
    pub sql: Option<String>,
}

/// Quotes an identifier for SQL (the producer's `quote`).
pub use crate::quote;

impl Table {
    /// The `CREATE TABLE` (or `CREATE VIRTUAL TABLE`) statement.
    pub(crate) fn create_sql(&self) -> String {
        if let Some(sql) = &self.sql {
            return sql.clone();
        }
        let kw = |s: &str| {
            if self.lower_keywords {
                s.to_ascii_lowercase()
            } else {
                s.to_string()
            }
        };
        if let Some(using) = &self.virtual_using {
            return format!(
                "{} {} {} {using}",
                kw("CREATE VIRTUAL TABLE"),
                quote(&self.name),
                kw("USING")
            );
        }
        let mut s = format!("{} {}(", kw("CREATE TABLE"), quote(&self.name));
        let mut parts = Vec::new();
        for c in &self.columns {
            let mut d = quote(&c.name);
            if !c.decl.is_empty() {
                d.push(' ');
                d.push_str(&c.decl);
            }
            if self.inline_pk && self.pk.len() == 1 && self.pk[0] == c.name {
                d.push(' ');
                d.push_str(&kw("PRIMARY KEY"));
            }
            if c.not_null {
                d.push(' ');
                d.push_str(&kw("NOT NULL"));
            }
            if let Some(g) = &c.generated {
                let _ = write!(
                    d,
                    " {} ({}) {}",
                    kw("GENERATED ALWAYS AS"),
                    g.expr,
                    kw(if g.stored { "STORED" } else { "VIRTUAL" })
                );
            }
            parts.push(d);
        }
        if !self.pk.is_empty() && !self.inline_pk {
            let cols: Vec<String> = self.pk.iter().map(|c| quote(c)).collect();
            parts.push(format!("{}({})", kw("PRIMARY KEY"), cols.join(", ")));
        }
        for fk in &self.foreign_keys {
            let cols: Vec<String> = fk.columns.iter().map(|c| quote(c)).collect();
            parts.push(format!(
                "{}({}) {} {}",
                kw("FOREIGN KEY"),
                cols.join(", "),
                kw("REFERENCES"),
                quote(&fk.parent)
            ));
        }
        s.push_str(&parts.join(", "));
        s.push(')');
        if self.without_rowid {
            s.push(' ');
            s.push_str(&kw("WITHOUT ROWID"));
        }
        s
    }

    /// The statement that inserts a row: its written columns (not the
    /// generated ones) and, for a table whose rows carry their own rowid,
    /// the rowid alias it is written through (last). Returns the SQL, the
    /// written columns' indexes and the alias.
    pub(crate) fn insert_sql(&self) -> (String, Vec<usize>, Option<&'static str>) {
        let writable: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.columns[i].generated.is_none())
            .collect();
        let alias = if self.has_rowids() {
            self.free_rowid_alias()
        } else {
            None
        };
        let mut names: Vec<String> = writable
            .iter()
            .map(|&i| quote(&self.columns[i].name))
            .collect();
        if let Some(a) = alias {
            names.push(a.to_string());
        }
        let insert = format!(
            "INSERT INTO {}({}) VALUES({})",
            quote(&self.name),
            names.join(","),
            vec!["?"; names.len()].join(",")
        );
        (insert, writable, alias)
    }

    /// The first of `rowid`, `_rowid_`, `oid` that no column shadows.
    pub(crate) fn free_rowid_alias(&self) -> Option<&'static str> {
        ["rowid", "_rowid_", "oid"]
            .into_iter()
            .find(|a| !self.columns.iter().any(|c| c.name.eq_ignore_ascii_case(a)))
    }

    /// Whether rows carry a rowid of their own (a rowid table without a
    /// primary key).
    pub(crate) fn has_rowids(&self) -> bool {
        self.pk.is_empty() && !self.without_rowid && self.virtual_using.is_none()
    }
}

/// A planned database.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DbSpec {
    /// The tables, created in this order.
    pub tables: Vec<Table>,
}

/// Why a database could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FuzzDbError {
    /// SQLite refused a statement (a plan that shrinking made impossible,
    /// such as a generated column whose input was dropped).
    #[error("{what}: {source}")]
    Sqlite {
        /// The statement or step.
        what: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The file could not be replaced.
    #[error("cannot replace {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

fn sql_err(what: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> FuzzDbError {
    let what = what.into();
    move |source| FuzzDbError::Sqlite { what, source }
}

impl DbSpec {
    /// Writes the database to `path`, replacing any file there. Foreign
    /// keys are not enforced (a child may name a missing parent row).
    pub fn write(&self, path: &Path) -> Result<(), FuzzDbError> {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(FuzzDbError::Io {
                    path: path.display().to_string(),
                    source,
                })
            }
        }
        let mut conn = Connection::open(path).map_err(sql_err("open"))?;
        conn.execute_batch(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA foreign_keys=OFF;",
        )
        .map_err(sql_err("pragmas"))?;
        let tx = conn.transaction().map_err(sql_err("begin"))?;
        for t in &self.tables {
            let create = t.create_sql();
            tx.execute_batch(&create).map_err(sql_err(create.clone()))?;
            if t.virtual_using.is_some() || t.rows.is_empty() {
                continue;
            }
            let (insert, writable, alias) = t.insert_sql();
            let mut stmt = tx.prepare(&insert).map_err(sql_err(insert.clone()))?;
            for row in &t.rows {
                let mut vals: Vec<&dyn ToSql> = Vec::with_capacity(writable.len() + 1);
                for &i in &writable {
                    vals.push(row.cells.get(i).unwrap_or(&Cell::Null));
                }
                let rowid;
                if alias.is_some() {
                    rowid = row.rowid;
                    vals.push(&rowid);
                }
                stmt.execute(vals.as_slice())
                    .map_err(sql_err(format!("insert into {}", t.name)))?;
            }
        }
        // A database without tables would stay an empty file, which is not
        // a SQLite database to anyone reading its header.
        tx.execute_batch("PRAGMA user_version = 1")
            .map_err(sql_err("user_version"))?;
        tx.commit().map_err(sql_err("commit"))?;
        Ok(())
    }

    /// Rows in all tables.
    pub fn row_count(&self) -> usize {
        self.tables.iter().map(|t| t.rows.len()).sum()
    }

    /// A one-line description: tables, rows, columns.
    pub fn describe(&self) -> String {
        let cols: usize = self.tables.iter().map(|t| t.columns.len()).sum();
        format!(
            "{} tables, {} rows, {} columns",
            self.tables.len(),
            self.row_count(),
            cols
        )
    }

    /// Without table `ti`.
    fn without_table(&self, ti: usize) -> DbSpec {
        let mut s = self.clone();
        s.tables.remove(ti);
        s
    }

    /// Without rows `range` of table `ti`.
    fn without_rows(&self, ti: usize, range: std::ops::Range<usize>) -> DbSpec {
        let mut s = self.clone();
        s.tables[ti].rows.drain(range);
        s
    }

    /// Without column `ci` of table `ti`, or `None` when it is in the
    /// primary key or the table's only column.
    fn without_column(&self, ti: usize, ci: usize) -> Option<DbSpec> {
        let t = &self.tables[ti];
        let name = &t.columns[ci].name;
        if t.pk.contains(name)
            || t.columns.len() <= 1
            || t.virtual_using.is_some()
            || t.sql.is_some()
        {
            return None;
        }
        let mut s = self.clone();
        let t = &mut s.tables[ti];
        let name = t.columns.remove(ci).name;
        t.foreign_keys.retain(|fk| !fk.columns.contains(&name));
        for r in &mut t.rows {
            r.cells.remove(ci);
        }
        Some(s)
    }
}

/// Shrinks a failing database: drops tables, then rows (halves, then one
/// by one), then columns, keeping each smaller plan for which `fails` still
/// holds, until no single step keeps it failing or `budget` attempts are
/// spent. `fails` is not called on the starting plan.
pub fn shrink(
    spec: &DbSpec,
    budget: usize,
    mut fails: impl FnMut(&DbSpec) -> bool,
) -> (DbSpec, usize) {
    let mut cur = spec.clone();
    let mut tries = 0usize;
    let mut attempt = |cand: DbSpec, cur: &mut DbSpec, tries: &mut usize| -> bool {
        if *tries >= budget {
            return false;
        }
        *tries += 1;
        if fails(&cand) {
            *cur = cand;
            true
        } else {
            false
        }
    };
    loop {
        let before = (cur.tables.len(), cur.row_count(), column_count(&cur));
        // Tables.
        let mut ti = cur.tables.len();
        while ti > 0 {
            ti -= 1;
            if ti < cur.tables.len() {
                let cand = cur.without_table(ti);
                attempt(cand, &mut cur, &mut tries);
            }
        }
        // Rows: halves first, then single rows.
        for ti in 0..cur.tables.len() {
            let mut chunk = cur.tables[ti].rows.len().div_ceil(2).max(1);
            loop {
                let mut start = 0;
                while start < cur.tables[ti].rows.len() {
                    let end = (start + chunk).min(cur.tables[ti].rows.len());
                    let cand = cur.without_rows(ti, start..end);
                    if !attempt(cand, &mut cur, &mut tries) {
                        start = end;
                    }
                }
                if chunk == 1 {
                    break;
                }
                chunk = chunk.div_ceil(2);
            }
        }
        // Columns.
        for ti in 0..cur.tables.len() {
            let mut ci = cur.tables[ti].columns.len();
            while ci > 0 {
                ci -= 1;
                if ci < cur.tables[ti].columns.len() {
                    if let Some(cand) = cur.without_column(ti, ci) {
                        attempt(cand, &mut cur, &mut tries);
                    }
                }
            }
        }
        let after = (cur.tables.len(), cur.row_count(), column_count(&cur));
        if after == before || tries >= budget {
            return (cur, tries);
        }
    }
}

fn column_count(s: &DbSpec) -> usize {
    s.tables.iter().map(|t| t.columns.len()).sum()
}

// ------------------------------------------------------------ generation

/// Sizes of generated databases.
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// At most this many archived tables (besides excluded ones).
    pub max_tables: usize,
    /// At most this many rows a table.
    pub max_rows: usize,
    /// Draw one long text (16–64 KiB) in about one database of this many
    /// (0: never).
    pub long_text_one_in: u64,
}

impl Default for FuzzOptions {
    fn default() -> FuzzOptions {
        FuzzOptions {
            max_tables: 5,
            max_rows: 12,
            long_text_one_in: 8,
        }
    }
}

/// A defect that makes a conforming producer refuse a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Text that is not a number in a DATETIME (NUMBER) column.
    DatetimeText,
    /// An INTEGER cell beyond ±(2^53 − 1).
    UnsafeInteger,
    /// A virtual (FTS5) table.
    VirtualTable,
    /// A table whose projected column SQL passes D1's 100,000-byte limit.
    TooWide,
    /// A foreign key to a table the defaults exclude.
    ExcludedForeignKey,
    /// A table without a primary key whose columns shadow `rowid`,
    /// `_rowid_` and `oid`.
    RowidShadowed,
    /// A primary-key table whose columns shadow `rowid`, `_rowid_` and
    /// `oid` (the producer's copies cannot address its rows).
    CopyRowidShadowed,
}

impl Refusal {
    /// Every defect.
    pub const ALL: [Refusal; 7] = [
        Refusal::DatetimeText,
        Refusal::UnsafeInteger,
        Refusal::VirtualTable,
        Refusal::TooWide,
        Refusal::ExcludedForeignKey,
        Refusal::RowidShadowed,
        Refusal::CopyRowidShadowed,
    ];

    /// The code the seed's producer refuses it with (`catalogue.mjs`,
    /// `copies.mjs`).
    pub fn code(self) -> &'static str {
        match self {
            Refusal::DatetimeText => "row_type",
            Refusal::UnsafeInteger => "unsafe_integer",
            Refusal::VirtualTable => "virtual_table",
            Refusal::TooWide => "transfer_sql_limit",
            Refusal::ExcludedForeignKey => "excluded_foreign_key",
            Refusal::RowidShadowed => "unsupported_rowid",
            Refusal::CopyRowidShadowed => "unsupported_copy_rowid",
        }
    }

    /// A snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::DatetimeText => "datetime_text",
            Refusal::UnsafeInteger => "unsafe_integer",
            Refusal::VirtualTable => "virtual_table",
            Refusal::TooWide => "too_wide",
            Refusal::ExcludedForeignKey => "excluded_foreign_key",
            Refusal::RowidShadowed => "rowid_shadowed",
            Refusal::CopyRowidShadowed => "copy_rowid_shadowed",
        }
    }
}

/// A generated database and what a producer must do with it.
#[derive(Debug, Clone)]
pub struct FuzzDb {
    /// The seed it was drawn from.
    pub seed: u64,
    /// The plan.
    pub spec: DbSpec,
    /// `Some` when the producer must refuse it.
    pub refusal: Option<Refusal>,
}

const INT_TYPES: &[&str] = &[
    "INTEGER",
    "INT",
    "integer",
    "BIGINT",
    "TINYINT",
    "UNSIGNED BIG INT",
    "INT8",
    "MediumInt",
    "FLOATING POINT",
];
const TEXT_TYPES: &[&str] = &[
    "TEXT",
    "text",
    "VARCHAR(255)",
    "NCHAR(55)",
    "CLOB",
    "CHARACTER(20)",
    "NATIVE CHARACTER(70)",
    "VARYING CHARACTER(255)",
];
const BLOB_TYPES: &[&str] = &["BLOB", "", "blob"];
const NUMBER_TYPES: &[&str] = &[
    "REAL",
    "DOUBLE",
    "DOUBLE PRECISION",
    "FLOAT",
    "NUMERIC",
    "DECIMAL(10,5)",
    "BOOLEAN",
    "DATE",
    "DATETIME",
    "STRING",
    "real",
];

const TABLE_NAMES: &[&str] = &[
    "users",
    "Orders",
    "line_items",
    "naïve café",
    "日本語",
    "x y",
    "quote\"d",
    "𝄞tab",
    "Ω",
    "a",
    "B",
    "tags",
    "events",
    "_private",
    "sqlite",
    "Ａ",
];
/// Names the producer's defaults exclude (`sqlite_%` cannot be created).
pub const EXCLUDED_NAMES: &[&str] = &[
    "_cf_KV",
    "d1_migrations",
    "OA_tokens",
    "oc_sessions",
    "rer_portability_state",
    "_RER_DEPLOY_MIGRATIONS",
    "rer_dependency_keys",
    "Oa_",
];
const COLUMN_NAMES: &[&str] = &[
    "name",
    "Value",
    "créé",
    "emoji😀",
    "with space",
    "quote\"col",
    "n",
    "ID2",
    "日付",
    "x",
    "body",
    "Ｚ",
    "\u{e000}",
    "𝄞",
];

const STRINGS: &[&str] = &[
    "",
    "a",
    "héllo wörld",
    "日本語のテキスト",
    "𝄞 music 😀 and 🏳️‍🌈",
    "quote \" and \\ backslash",
    "tab\tnew\nline\rcr",
    "nul\u{0}inside",
    "\u{1}\u{1f}\u{7f}",
    "\u{2028}\u{2029}",
    "\u{fffd}",
    "\u{e000}\u{ffff}\u{10000}\u{10ffff}",
    " leading and trailing ",
    "1e3",
    "-0",
    "null",
    "{\"blob\":\"AA==\"}",
];

const SAFE: i64 = (1 << 53) - 1;

fn floats(r: &mut Rng) -> f64 {
    const F: &[f64] = &[
        -0.0,
        0.0,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        2.225073858507201e-308,
        1e21,
        -1e21,
        9.999999999999999e20,
        1e-7,
        1e-6,
        0.1,
        1.5,
        -2.75,
        1.7976931348623157e308,
        -1.7976931348623157e308,
        123456789.123,
        9007199254740993.0,
    ];
    if r.one_in(3) {
        // A random finite double from its bits.
        loop {
            let x = f64::from_bits(r.next_u64());
            if x.is_finite() {
                return x;
            }
        }
    }
    r.pick(F)
}

fn ints(r: &mut Rng, big: bool) -> i64 {
    const I: &[i64] = &[0, 1, -1, 42, SAFE, -SAFE, 1 << 31, -(1 << 31), 1 << 32];
    const BIG: &[i64] = &[1 << 53, -(1 << 53), i64::MAX, i64::MIN, (1 << 53) + 1];
    if big && r.one_in(4) {
        return r.pick(BIG);
    }
    if r.one_in(2) {
        r.pick(I)
    } else {
        r.range_i64(-100_000, 100_000)
    }
}

fn text(r: &mut Rng) -> String {
    if r.one_in(2) {
        return r.pick(STRINGS).to_string();
    }
    let n = r.below(24);
    let mut s = String::new();
    for _ in 0..n {
        let c = match r.below(10) {
            0 => char::from_u32(0x80 + r.below(0x700) as u32),
            1 => char::from_u32(0x1F300 + r.below(0x300) as u32),
            2 => char::from_u32(0x4E00 + r.below(0x100) as u32),
            _ => char::from_u32(0x20 + r.below(0x5F) as u32),
        };
        s.push(c.unwrap_or('?'));
    }
    s
}

fn blob(r: &mut Rng) -> Vec<u8> {
    let n = if r.one_in(4) { 0 } else { r.below(40) };
    (0..n).map(|_| r.next_u64() as u8).collect()
}

/// A valid non-key cell for a column of affinity `a`.
pub(crate) fn cell(r: &mut Rng, a: Affinity, nullable: bool) -> Cell {
    if nullable && r.one_in(4) {
        return Cell::Null;
    }
    match a {
        Affinity::Integer => match r.below(8) {
            0 => Cell::Real(r.range_i64(-1000, 1000) as f64),
            1 => Cell::Text(r.range_i64(-1000, 1000).to_string()),
            _ => Cell::Int(ints(r, false)),
        },
        Affinity::Number => match r.below(6) {
            0 | 1 => Cell::Int(ints(r, true)),
            2 => Cell::Text(r.pick(&["12", "1e3", "-7.5", " 4 "]).to_string()),
            _ => Cell::Real(floats(r)),
        },
        Affinity::Text => match r.below(8) {
            0 => Cell::Int(ints(r, true)),
            1 => Cell::Real(floats(r)),
            _ => Cell::Text(text(r)),
        },
        Affinity::Blob => match r.below(5) {
            0 => Cell::Int(ints(r, true)),
            1 => Cell::Real(floats(r)),
            2 => Cell::Text(text(r)),
            _ => Cell::Blob(blob(r)),
        },
    }
}

/// A key cell: unique per `i` within the column (with the same affinity,
/// no two are equal to SQLite or as canonical JSON).
pub(crate) fn key_cell(r: &mut Rng, a: Affinity, i: usize, last: bool) -> Cell {
    let i = i as i64;
    if !last {
        // Leading key columns repeat, so the later ones order ties.
        let k = r.below(3) as i64;
        return match a {
            Affinity::Integer => Cell::Int(k - 1),
            Affinity::Number => Cell::Real(k as f64 + 0.25),
            Affinity::Text => Cell::Text(["", "b", "É"][k as usize].to_string()),
            Affinity::Blob => Cell::Blob(vec![k as u8; k as usize]),
        };
    }
    match a {
        Affinity::Integer => Cell::Int(if i % 5 == 4 { SAFE - i } else { i * 7 - 20 }),
        Affinity::Number => {
            if i % 2 == 0 {
                Cell::Int(i * 3)
            } else {
                Cell::Real(i as f64 * 3.0 + 0.5)
            }
        }
        Affinity::Text => Cell::Text(format!("{}{i}", r.pick(&["k", "Ä", "😀", "", "Z"]))),
        Affinity::Blob => match i % 3 {
            0 => Cell::Int(i),
            1 => Cell::Text(format!("t{i}")),
            _ => Cell::Blob(vec![(i >> 8) as u8, i as u8]),
        },
    }
}

fn decl(r: &mut Rng, a: Affinity) -> String {
    match a {
        Affinity::Integer => r.pick(INT_TYPES),
        Affinity::Text => r.pick(TEXT_TYPES),
        Affinity::Blob => r.pick(BLOB_TYPES),
        Affinity::Number => r.pick(NUMBER_TYPES),
    }
    .to_string()
}

fn any_affinity(r: &mut Rng) -> Affinity {
    r.pick(&[
        Affinity::Integer,
        Affinity::Text,
        Affinity::Blob,
        Affinity::Number,
    ])
}

fn fresh(r: &mut Rng, pool: &[&str], taken: &[String], fallback: &str) -> String {
    for _ in 0..4 {
        let n = r.pick(pool);
        if !taken.iter().any(|t| t.eq_ignore_ascii_case(n)) {
            return n.to_string();
        }
    }
    let mut k = taken.len();
    loop {
        let n = format!("{fallback}{k}");
        if !taken.iter().any(|t| t.eq_ignore_ascii_case(&n)) {
            return n;
        }
        k += 1;
    }
}

fn swap_ascii_case(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Draws one archivable table.
fn table(
    r: &mut Rng,
    name: String,
    parents: &[(String, bool)],
    opts: &FuzzOptions,
    long_text: &mut bool,
) -> Table {
    let shape = r.below(6);
    // 0: rowid table without key; 1: INTEGER PRIMARY KEY; 2: single-column
    // key of any type; 3: composite key; 4, 5: WITHOUT ROWID.
    let mut columns: Vec<Column> = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    let mut pk: Vec<String> = Vec::new();
    let mut inline_pk = false;
    let without_rowid = shape >= 4;
    let key_cols = match shape {
        0 => 0,
        1 | 2 => 1,
        3 => 2 + r.below(2) as usize,
        _ => 1 + r.below(2) as usize,
    };
    for k in 0..key_cols {
        let a = if shape == 1 {
            Affinity::Integer
        } else {
            any_affinity(r)
        };
        let name = if k == 0 && r.one_in(2) {
            "id".to_string()
        } else {
            fresh(r, COLUMN_NAMES, &taken, "k")
        };
        let decl = if shape == 1 {
            r.pick(&["INTEGER", "integer"]).to_string()
        } else {
            decl(r, a)
        };
        taken.push(name.clone());
        pk.push(name.clone());
        columns.push(Column {
            name,
            decl,
            // Keys of rowid tables may hold NULL in SQLite; a repeated NULL
            // key would make the archive invalid, so keys are NOT NULL
            // (or the rowid alias).
            not_null: shape != 1,
            generated: None,
        });
    }
    if key_cols == 1 && !without_rowid && r.one_in(2) || shape == 1 {
        inline_pk = true;
    }
    // Shadowing columns on rowid tables (never all three).
    if shape == 0 || r.one_in(4) {
        let shadows = ["rowid", "_rowid_", "oid", "ROWID", "Oid"];
        for _ in 0..r.below(3) {
            let s = r.pick(&shadows);
            let shadowed = ["rowid", "_rowid_", "oid"]
                .iter()
                .filter(|a| taken.iter().any(|t| t.eq_ignore_ascii_case(a)))
                .count();
            if shadowed < 2 && !taken.iter().any(|t| t.eq_ignore_ascii_case(s)) {
                taken.push(s.to_string());
                columns.push(Column {
                    name: s.to_string(),
                    decl: decl(r, Affinity::Integer),
                    not_null: false,
                    generated: None,
                });
            }
        }
    }
    for _ in 0..1 + r.below(6) {
        let a = any_affinity(r);
        let name = fresh(r, COLUMN_NAMES, &taken, "c");
        taken.push(name.clone());
        columns.push(Column {
            name,
            decl: decl(r, a),
            not_null: r.one_in(5),
            generated: None,
        });
    }
    // Generated columns read an earlier column with functions that accept
    // any value.
    if r.one_in(3) {
        for _ in 0..1 + r.below(2) {
            let src = quote(&r.pick_ref(&columns).name);
            let expr = r
                .pick(&[
                    "typeof({})",
                    "length({})",
                    "coalesce(hex({}), 'none')",
                    "{} IS NULL",
                ])
                .replace("{}", &src);
            let name = fresh(r, &["g", "Gen", "derived"], &taken, "g");
            taken.push(name.clone());
            columns.push(Column {
                name,
                decl: r.pick(&["", "TEXT", "INTEGER", "ANY"]).to_string(),
                not_null: false,
                generated: Some(Generated {
                    expr,
                    stored: r.one_in(2),
                }),
            });
        }
    }
    // Foreign keys to earlier tables, sometimes in another ASCII case.
    let mut foreign_keys = Vec::new();
    if !parents.is_empty() && r.one_in(2) {
        let (parent, _) = r.pick_ref(parents).clone();
        let plain: Vec<&Column> = columns
            .iter()
            .filter(|c| c.generated.is_none() && !pk.contains(&c.name))
            .collect();
        if !plain.is_empty() {
            let col = r.pick_ref(&plain).name.clone();
            let written = if r.one_in(2) {
                swap_ascii_case(&parent)
            } else {
                parent.clone()
            };
            foreign_keys.push(ForeignKey {
                columns: vec![col],
                parent: written,
            });
        }
    }
    // Rows.
    let n = if r.one_in(6) {
        0
    } else {
        r.below(opts.max_rows as u64 + 1) as usize
    };
    let mut rows = Vec::with_capacity(n);
    let mut rowids: Vec<i64> = Vec::new();
    for i in 0..n {
        let mut cells = Vec::with_capacity(columns.len());
        for c in &columns {
            if c.generated.is_some() {
                cells.push(Cell::Null);
            } else if let Some(pos) = pk.iter().position(|p| *p == c.name) {
                cells.push(key_cell(r, Affinity::of(&c.decl), i, pos + 1 == pk.len()));
            } else {
                let mut v = cell(r, Affinity::of(&c.decl), !c.not_null);
                if *long_text && Affinity::of(&c.decl) == Affinity::Text {
                    *long_text = false;
                    let unit = r.pick(&["abc ", "é", "😀", "line\n"]);
                    let len = 16_384 + r.below(49_152) as usize;
                    v = Cell::Text(unit.repeat(len / unit.len() + 1));
                }
                cells.push(v);
            }
        }
        let rowid = loop {
            let id = match r.below(6) {
                0 => r.range_i64(-SAFE, SAFE),
                1 => r.pick(&[SAFE, -SAFE, 0, -1, 1]),
                _ => r.range_i64(1, 10_000),
            };
            if !rowids.contains(&id) {
                rowids.push(id);
                break id;
            }
        };
        rows.push(Row {
            rowid: Some(rowid),
            cells,
        });
    }
    Table {
        name,
        columns,
        pk,
        inline_pk,
        without_rowid,
        foreign_keys,
        rows,
        virtual_using: None,
        lower_keywords: r.one_in(4),
        sql: None,
    }
}

/// A table the producer's defaults exclude, holding rows it would refuse
/// if it archived them (text in a DATETIME column, an unsafe integer).
fn excluded_table(r: &mut Rng, taken: &[String]) -> Table {
    let name = fresh(r, EXCLUDED_NAMES, taken, "oa_t");
    let bad = r.one_in(2);
    Table {
        name,
        columns: vec![
            Column {
                name: "at".to_string(),
                decl: "DATETIME".to_string(),
                not_null: false,
                generated: None,
            },
            Column {
                name: "n".to_string(),
                decl: "INTEGER".to_string(),
                not_null: false,
                generated: None,
            },
        ],
        pk: Vec::new(),
        inline_pk: false,
        without_rowid: false,
        foreign_keys: Vec::new(),
        rows: vec![Row {
            rowid: Some(1),
            cells: if bad {
                vec![
                    Cell::Text("2024-05-06 07:08:09".into()),
                    Cell::Int(i64::MAX),
                ]
            } else {
                vec![Cell::Real(1.5), Cell::Int(3)]
            },
        }],
        virtual_using: None,
        lower_keywords: false,
        sql: None,
    }
}

/// Draws a database a conforming producer must archive.
pub fn generate(seed: u64, opts: &FuzzOptions) -> FuzzDb {
    let mut r = Rng::new(derive(seed, 0x6462));
    let mut spec = DbSpec::default();
    let mut taken: Vec<String> = Vec::new();
    let mut parents: Vec<(String, bool)> = Vec::new();
    let mut long_text = opts.long_text_one_in > 0 && r.one_in(opts.long_text_one_in);
    let n = r.below(opts.max_tables as u64 + 1) as usize;
    for _ in 0..n {
        let name = fresh(&mut r, TABLE_NAMES, &taken, "t");
        taken.push(name.clone());
        let t = table(&mut r, name, &parents, opts, &mut long_text);
        parents.push((t.name.clone(), t.pk.is_empty()));
        spec.tables.push(t);
    }
    for _ in 0..r.below(3) {
        let t = excluded_table(&mut r, &taken);
        taken.push(t.name.clone());
        spec.tables.push(t);
    }
    FuzzDb {
        seed,
        spec,
        refusal: None,
    }
}

/// Draws a database as [`generate`] does, then adds `defect`.
pub fn must_refuse(seed: u64, opts: &FuzzOptions, defect: Refusal) -> FuzzDb {
    let mut db = generate(seed, opts);
    let mut r = Rng::new(derive(seed, 0x7265));
    let taken: Vec<String> = db.spec.tables.iter().map(|t| t.name.clone()).collect();
    let name = fresh(&mut r, &["bad", "Refused", "zz_last", "A0"], &taken, "bad");
    let col = |name: &str, decl: &str| Column {
        name: name.to_string(),
        decl: decl.to_string(),
        not_null: false,
        generated: None,
    };
    let mut t = Table {
        name,
        columns: vec![col("id", "INTEGER"), col("v", "TEXT")],
        pk: Vec::new(),
        inline_pk: false,
        without_rowid: false,
        foreign_keys: Vec::new(),
        rows: Vec::new(),
        virtual_using: None,
        lower_keywords: false,
        sql: None,
    };
    let row = |cells: Vec<Cell>| Row {
        rowid: Some(1),
        cells,
    };
    match defect {
        Refusal::DatetimeText => {
            t.columns
                .push(col("at", r.pick(&["DATETIME", "datetime", "DATE"])));
            t.rows.push(row(vec![
                Cell::Int(1),
                Cell::Text("x".into()),
                Cell::Text(r.pick(&["2024-01-02 03:04:05", "yesterday", ""]).into()),
            ]));
        }
        Refusal::UnsafeInteger => {
            let v = r.pick(&[1i64 << 53, -(1 << 53), i64::MAX, i64::MIN]);
            t.rows.push(row(vec![Cell::Int(v), Cell::Text("x".into())]));
        }
        Refusal::VirtualTable => {
            t.columns.clear();
            t.virtual_using = Some("fts5(body)".to_string());
        }
        Refusal::TooWide => {
            // 250 columns of 400-byte names: about 101,250 bytes of
            // projected SQL, past 100,000 − 1024.
            t.columns = (0..250)
                .map(|i| col(&format!("w{i:03}_{}", "x".repeat(395)), "TEXT"))
                .collect();
            t.rows.push(row(vec![Cell::Null; 250]));
        }
        Refusal::ExcludedForeignKey => {
            let ex = match db
                .spec
                .tables
                .iter()
                .find(|t| EXCLUDED_NAMES.contains(&t.name.as_str()))
            {
                Some(x) => x.name.clone(),
                None => {
                    let x = excluded_table(&mut r, &taken);
                    let n = x.name.clone();
                    db.spec.tables.push(x);
                    n
                }
            };
            let written = if r.one_in(2) {
                swap_ascii_case(&ex)
            } else {
                ex
            };
            t.foreign_keys.push(ForeignKey {
                columns: vec!["id".to_string()],
                parent: written,
            });
            t.rows
                .push(row(vec![Cell::Int(1), Cell::Text("child".into())]));
        }
        Refusal::RowidShadowed | Refusal::CopyRowidShadowed => {
            t.columns = vec![
                col("ROWID", "INTEGER"),
                col("_rowid_", "TEXT"),
                col("oid", ""),
                col("v", "TEXT"),
            ];
            if defect == Refusal::CopyRowidShadowed {
                t.pk = vec!["v".to_string()];
                t.columns[3].not_null = true;
                t.without_rowid = r.one_in(2);
            }
            t.rows.push(Row {
                rowid: None,
                cells: vec![
                    Cell::Int(1),
                    Cell::Text("a".into()),
                    Cell::Blob(vec![1]),
                    Cell::Text("k".into()),
                ],
            });
        }
    }
    db.spec.tables.push(t);
    db.refusal = Some(defect);
    db
}

/// The next version of a database, as a later export would see it: rows
/// deleted, cells changed, rows added (new keys and rowids), now and then a
/// table dropped, a column added (a new `CREATE TABLE`) or a table added.
/// Excluded and virtual tables are left alone.
pub fn variant(spec: &DbSpec, seed: u64, opts: &FuzzOptions) -> DbSpec {
    let mut r = Rng::new(derive(seed, 0x7661));
    let mut out = spec.clone();
    // The author's own tables (`--schema`) are left alone too: a changed
    // cell could break their CHECK constraints.
    let archived = |t: &Table| {
        t.virtual_using.is_none() && t.sql.is_none() && !EXCLUDED_NAMES.contains(&t.name.as_str())
    };
    let mut long_text = false;
    for t in out.tables.iter_mut().filter(|t| archived(t)) {
        // Deletions.
        let mut i = 0;
        while i < t.rows.len() {
            if r.one_in(5) {
                t.rows.remove(i);
            } else {
                i += 1;
            }
        }
        // Changes outside the key.
        let editable: Vec<usize> = (0..t.columns.len())
            .filter(|&c| t.columns[c].generated.is_none() && !t.pk.contains(&t.columns[c].name))
            .collect();
        for row in &mut t.rows {
            if !editable.is_empty() && r.one_in(3) {
                let c = r.pick(&editable);
                let col = &t.columns[c];
                row.cells[c] = cell(&mut r, Affinity::of(&col.decl), !col.not_null);
            }
        }
        // Additions, with keys and rowids no row has.
        let base = spec
            .tables
            .iter()
            .find(|s| s.name == t.name)
            .map_or(0, |s| s.rows.len());
        let mut used: Vec<i64> = t.rows.iter().filter_map(|x| x.rowid).collect();
        for k in 0..r.below(3) as usize {
            let i = base + k;
            let cells = t
                .columns
                .iter()
                .map(|c| {
                    if c.generated.is_some() {
                        Cell::Null
                    } else if let Some(pos) = t.pk.iter().position(|p| *p == c.name) {
                        key_cell(&mut r, Affinity::of(&c.decl), i, pos + 1 == t.pk.len())
                    } else {
                        cell(&mut r, Affinity::of(&c.decl), !c.not_null)
                    }
                })
                .collect();
            let rowid = loop {
                let id = r.range_i64(10_001, 20_000);
                if !used.contains(&id) {
                    used.push(id);
                    break id;
                }
            };
            t.rows.push(Row {
                rowid: Some(rowid),
                cells,
            });
        }
        // Now and then a new nullable column at the end.
        if r.one_in(6) {
            let taken: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
            let name = fresh(&mut r, &["added", "New", "extra"], &taken, "added");
            let a = any_affinity(&mut r);
            t.columns.push(Column {
                name,
                decl: decl(&mut r, a),
                not_null: false,
                generated: None,
            });
            for row in &mut t.rows {
                let v = cell(&mut r, a, true);
                row.cells.push(v);
            }
        }
    }
    if r.one_in(4) {
        let idx: Vec<usize> = (0..out.tables.len())
            .filter(|&i| archived(&out.tables[i]))
            .collect();
        if !idx.is_empty() {
            out.tables.remove(r.pick(&idx));
        }
    }
    if r.one_in(4) {
        let taken: Vec<String> = out.tables.iter().map(|t| t.name.clone()).collect();
        let name = fresh(&mut r, TABLE_NAMES, &taken, "t");
        let t = table(&mut r, name, &[], opts, &mut long_text);
        out.tables.push(t);
    }
    out
}

/// The database of run `run` of a fuzzing session seeded `seed`: every
/// fourth run must be refused, the defects taken in turn.
pub fn for_run(seed: u64, run: u64, opts: &FuzzOptions) -> FuzzDb {
    let s = derive(seed, run);
    if run % 4 == 3 {
        let defect = Refusal::ALL[((run / 4) % Refusal::ALL.len() as u64) as usize];
        must_refuse(s, opts, defect)
    } else {
        generate(s, opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ndarc-fuzzdb-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    #[test]
    fn affinities_follow_the_seed() {
        assert_eq!(Affinity::of("FLOATING POINT"), Affinity::Integer);
        assert_eq!(Affinity::of("varchar(3)"), Affinity::Text);
        assert_eq!(Affinity::of(""), Affinity::Blob);
        assert_eq!(Affinity::of("DATETIME"), Affinity::Number);
        assert_eq!(Affinity::of("STRING"), Affinity::Number);
        assert_eq!(Affinity::of("REAL"), Affinity::Number);
    }

    #[test]
    fn generation_is_deterministic_and_writable() {
        let o = FuzzOptions::default();
        for run in 0..60 {
            let a = for_run(9, run, &o);
            let b = for_run(9, run, &o);
            assert_eq!(a.spec, b.spec);
            let p = tmp(&format!("g{run}.db"));
            a.spec
                .write(&p)
                .unwrap_or_else(|e| panic!("run {run}: {e}"));
            let conn = Connection::open(&p).unwrap();
            let n: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE type='table'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(n as usize >= a.spec.tables.len());
        }
    }

    #[test]
    fn the_runs_cover_the_features() {
        let o = FuzzOptions::default();
        let specs: Vec<FuzzDb> = (0..200).map(|run| for_run(1, run, &o)).collect();
        let tables = || specs.iter().flat_map(|d| d.spec.tables.iter());
        assert!(tables().any(|t| t.without_rowid));
        assert!(tables().any(|t| t.pk.len() >= 2));
        assert!(tables().any(|t| t.pk.len() == 1 && t.inline_pk));
        assert!(tables().any(|t| t.has_rowids() && t.free_rowid_alias() == Some("oid")));
        assert!(tables().any(|t| t
            .columns
            .iter()
            .any(|c| c.generated.as_ref().is_some_and(|g| g.stored))));
        assert!(tables().any(|t| t.foreign_keys.iter().any(|f| f.parent
            != f.parent.to_lowercase()
            && specs.iter().any(|d| d
                .spec
                .tables
                .iter()
                .any(|p| p.name != f.parent && p.name.eq_ignore_ascii_case(&f.parent))))));
        assert!(tables().any(|t| t.rows.is_empty() && t.virtual_using.is_none()));
        assert!(tables().any(|t| EXCLUDED_NAMES.contains(&t.name.as_str())));
        let cells = || tables().flat_map(|t| t.rows.iter().flat_map(|r| r.cells.iter()));
        assert!(cells().any(|c| *c == Cell::Blob(Vec::new())));
        assert!(cells().any(|c| *c == Cell::Text(String::new())));
        assert!(cells().any(|c| matches!(c, Cell::Real(x) if x.to_bits() == (-0.0f64).to_bits())));
        assert!(cells().any(|c| *c == Cell::Real(5e-324)));
        assert!(cells().any(|c| *c == Cell::Real(1e21)));
        assert!(cells().any(|c| *c == Cell::Int(i64::MAX)));
        assert!(cells().any(|c| *c == Cell::Int(-SAFE)));
        assert!(
            cells().any(|c| matches!(c, Cell::Text(s) if s.chars().any(|ch| ch as u32 > 0xffff)))
        );
        assert!(cells().any(|c| matches!(c, Cell::Text(s) if s.len() > 16_000)));
        let decls: Vec<&str> = tables()
            .flat_map(|t| t.columns.iter().map(|c| c.decl.as_str()))
            .collect();
        for d in INT_TYPES
            .iter()
            .chain(TEXT_TYPES)
            .chain(BLOB_TYPES)
            .chain(NUMBER_TYPES)
        {
            assert!(decls.contains(d), "{d}");
        }
        for defect in Refusal::ALL {
            assert!(
                specs.iter().any(|d| d.refusal == Some(defect)),
                "{defect:?}"
            );
        }
    }

    #[test]
    fn values_are_stored_with_the_classes_meant() {
        let p = tmp("classes.db");
        let db = must_refuse(3, &FuzzOptions::default(), Refusal::DatetimeText);
        db.spec.write(&p).unwrap();
        let conn = Connection::open(&p).unwrap();
        let t = db.spec.tables.last().unwrap();
        let ty: String = conn
            .query_row(
                &format!("SELECT typeof(at) FROM {}", quote(&t.name)),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(ty, "text");
    }

    #[test]
    fn too_wide_passes_the_limit_and_shadowing_covers_all_aliases() {
        let o = FuzzOptions::default();
        let w = must_refuse(1, &o, Refusal::TooWide);
        let t = w.spec.tables.last().unwrap();
        let projected: usize = t.columns.iter().map(|c| quote(&c.name).len() + 3).sum();
        assert!(projected + 1024 > 100_000, "{projected}");
        for d in [Refusal::RowidShadowed, Refusal::CopyRowidShadowed] {
            let db = must_refuse(1, &o, d);
            let t = db.spec.tables.last().unwrap();
            assert_eq!(t.free_rowid_alias(), None);
            assert_eq!(t.pk.is_empty(), d == Refusal::RowidShadowed);
            db.spec.write(&tmp("shadow.db")).unwrap();
        }
    }

    #[test]
    fn shrinking_keeps_the_failure_and_drops_the_rest() {
        let mut spec = generate(5, &FuzzOptions::default()).spec;
        // A needle: one table holding one marked row among nine.
        let col = |n: &str| Column {
            name: n.to_string(),
            decl: "TEXT".to_string(),
            not_null: false,
            generated: None,
        };
        spec.tables.push(Table {
            name: "needle".to_string(),
            columns: vec![col("a"), col("b"), col("c")],
            pk: Vec::new(),
            inline_pk: false,
            without_rowid: false,
            foreign_keys: Vec::new(),
            rows: (0..9)
                .map(|i| Row {
                    rowid: Some(i),
                    cells: vec![
                        Cell::Null,
                        Cell::Text(if i == 6 { "!" } else { "" }.into()),
                        Cell::Null,
                    ],
                })
                .collect(),
            virtual_using: None,
            lower_keywords: false,
            sql: None,
        });
        let fails = |s: &DbSpec| {
            s.tables.iter().any(|t| {
                t.name == "needle"
                    && t.rows
                        .iter()
                        .any(|r| r.cells.contains(&Cell::Text("!".into())))
            })
        };
        let (small, tries) = shrink(&spec, 1000, fails);
        assert!(fails(&small));
        assert_eq!(small.tables.len(), 1);
        assert_eq!(small.tables[0].rows.len(), 1);
        assert_eq!(small.tables[0].columns.len(), 1);
        assert!(tries > 0 && tries < 1000);
    }
}
