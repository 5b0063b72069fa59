//! The plan of a database (tables, columns, keys, rows) and writing it
//! to a file.

use std::fmt::Write as _;
use std::path::Path;

use rusqlite::types::{ToSql, ToSqlOutput, Value, ValueRef};
use rusqlite::Connection;

use crate::quote;
use crate::Error;

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

fn sql_err(what: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> Error {
    let what = what.into();
    move |source| Error::Sqlite { what, source }
}

impl DbSpec {
    /// Writes the database to `path`, replacing any file there. Foreign
    /// keys are not enforced (a child may name a missing parent row).
    pub fn write(&self, path: &Path) -> Result<(), Error> {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(Error::Replace {
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
    pub(super) fn without_table(&self, ti: usize) -> DbSpec {
        let mut s = self.clone();
        s.tables.remove(ti);
        s
    }

    /// Without rows `range` of table `ti`.
    pub(super) fn without_rows(&self, ti: usize, range: std::ops::Range<usize>) -> DbSpec {
        let mut s = self.clone();
        s.tables[ti].rows.drain(range);
        s
    }

    /// Without column `ci` of table `ti`, or `None` when it is in the
    /// primary key or the table's only column.
    pub(super) fn without_column(&self, ti: usize, ci: usize) -> Option<DbSpec> {
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
