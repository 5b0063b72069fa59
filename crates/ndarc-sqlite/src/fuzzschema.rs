//! Random databases from a producer author's own schema (`fuzz-producer
//! --schema app.sql`): their tables, declared types, collations, CHECK
//! constraints, defaults, generated columns and foreign keys, with random
//! rows that satisfy them.
//!
//! The schema runs once on an in-memory database; each table's statement
//! is then taken as SQLite stored it, with its columns, primary key and
//! foreign keys as SQLite reports them. Rows are drawn as
//! [`crate::fuzzdb`] draws them (every storage class a column of the
//! affinity can hold, NULLs, unicode, edge numbers), foreign-key columns
//! mostly from the parent's rows, and each row is kept only when SQLite
//! accepts it into a copy of the schema with foreign keys enforced: SQLite
//! itself judges the CHECK, NOT NULL, UNIQUE and foreign-key constraints.
//! The result is a [`FuzzDb`], written and shrunk like a built-in one (the
//! author's statements are kept whole: only tables and rows are shrunk).
//!
//! Virtual tables, views, indexes and triggers of the schema are left out:
//! a producer archives tables.

use std::collections::BTreeMap;

use ndarc_format::Affinity;
use ndarc_gen::{derive, Rng};
use rusqlite::types::ToSql;
use rusqlite::Connection;

use crate::fuzzdb::{
    cell, key_cell, Cell, Column, DbSpec, ForeignKey, FuzzDb, FuzzOptions, Generated, Row, Table,
};
use crate::Error;

/// A foreign key as SQLite reports it.
#[derive(Debug, Clone)]
struct Fk {
    /// The child's columns.
    from: Vec<String>,
    /// The parent table.
    parent: String,
    /// The parent's columns (its primary key when the key names none).
    to: Vec<String>,
}

/// One table of the schema.
#[derive(Debug, Clone)]
struct SchemaTable {
    name: String,
    sql: String,
    columns: Vec<Column>,
    pk: Vec<String>,
    without_rowid: bool,
    fks: Vec<Fk>,
}

/// An author's schema, ready to draw databases from.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The schema's SQL, run on each checking connection.
    sql: String,
    /// Tables, parents before their children where the keys allow.
    tables: Vec<SchemaTable>,
}

fn refused(e: rusqlite::Error) -> Error {
    Error::Schema(e.to_string())
}

/// A connection holding `sql`, attaching and loading nothing.
fn open(sql: &str) -> Result<Connection, Error> {
    let conn = Connection::open_in_memory().map_err(refused)?;
    conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0)
        .map_err(refused)?;
    conn.execute_batch(sql).map_err(refused)?;
    Ok(conn)
}

impl Schema {
    /// Reads a schema: runs `sql` on an in-memory database and takes each
    /// table SQLite created, as SQLite reports it.
    pub fn parse(sql: &str) -> Result<Schema, Error> {
        let conn = open(sql)?;
        let mut st = conn
            .prepare(
                "SELECT name, sql FROM main.sqlite_schema WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
            )
            .map_err(refused)?;
        let named: Vec<(String, String)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get::<_, Option<String>>(1)?)))
            .map_err(refused)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(refused)?
            .into_iter()
            .filter_map(|(n, s)| Some((n, s?)))
            .collect();
        let mut tables = Vec::new();
        for (name, sql) in named {
            if is_virtual(&sql) {
                continue;
            }
            tables.push(read_table(&conn, name, sql)?);
        }
        if tables.is_empty() {
            return Err(Error::NoTables);
        }
        // A foreign key that names no parent column names its primary key.
        let pks: Vec<(String, Vec<String>)> = tables
            .iter()
            .map(|t| (t.name.to_ascii_lowercase(), t.pk.clone()))
            .collect();
        for t in &mut tables {
            for fk in &mut t.fks {
                if fk.to.is_empty() {
                    let parent = fk.parent.to_ascii_lowercase();
                    if let Some((_, pk)) = pks.iter().find(|(n, _)| *n == parent) {
                        fk.to = pk.clone();
                    }
                }
            }
        }
        Ok(Schema {
            sql: sql.to_string(),
            tables: parents_first(tables),
        })
    }

    /// The names of the schema's tables, in the order rows are drawn.
    pub fn table_names(&self) -> Vec<&str> {
        self.tables.iter().map(|t| t.name.as_str()).collect()
    }

    /// Draws a database of the schema: up to `opts.max_rows` rows a table
    /// that SQLite accepts under every constraint.
    pub fn generate(&self, seed: u64, opts: &FuzzOptions) -> FuzzDb {
        let mut r = Rng::new(derive(seed, 0x7363));
        let mut spec = DbSpec::default();
        // A checking copy; a schema that ran once runs again.
        let Ok(conn) = open(&self.sql) else {
            return FuzzDb {
                seed,
                spec,
                refusal: None,
            };
        };
        let _ = conn.execute_batch("PRAGMA foreign_keys = ON");
        // The cells kept so far, per table, for foreign keys to draw from.
        let mut kept: BTreeMap<String, (Vec<String>, Vec<Vec<Cell>>)> = BTreeMap::new();
        for t in &self.tables {
            let table = Table {
                name: t.name.clone(),
                columns: t.columns.clone(),
                pk: t.pk.clone(),
                inline_pk: false,
                without_rowid: t.without_rowid,
                foreign_keys: t
                    .fks
                    .iter()
                    .map(|f| ForeignKey {
                        columns: f.from.clone(),
                        parent: f.parent.clone(),
                    })
                    .collect(),
                rows: Vec::new(),
                virtual_using: None,
                lower_keywords: false,
                sql: Some(t.sql.clone()),
            };
            let rows = draw_rows(&conn, t, &table, &kept, &mut r, opts.max_rows);
            let names = t.columns.iter().map(|c| c.name.clone()).collect();
            kept.insert(
                t.name.to_ascii_lowercase(),
                (names, rows.iter().map(|row| row.cells.clone()).collect()),
            );
            spec.tables.push(Table { rows, ..table });
        }
        FuzzDb {
            seed,
            spec,
            refusal: None,
        }
    }
}

fn is_virtual(sql: &str) -> bool {
    let words: Vec<String> = sql
        .split_ascii_whitespace()
        .take(2)
        .map(str::to_ascii_uppercase)
        .collect();
    words == ["CREATE", "VIRTUAL"]
}

fn read_table(conn: &Connection, name: String, sql: String) -> Result<SchemaTable, Error> {
    let mut st = conn
        .prepare("SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1)")
        .map_err(refused)?;
    let mut pk: Vec<(i64, String)> = Vec::new();
    let mut columns = Vec::new();
    let rows = st
        .query_map([&name], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                r.get::<_, i64>(2)? != 0,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })
        .map_err(refused)?;
    for row in rows {
        let (cname, decl, not_null, pk_pos, hidden) = row.map_err(refused)?;
        if pk_pos > 0 {
            pk.push((pk_pos, cname.clone()));
        }
        columns.push(Column {
            name: cname,
            decl,
            not_null,
            // The expression stays in the author's statement; the plan
            // only needs to know not to write the column.
            generated: matches!(hidden, 2 | 3).then(|| Generated {
                expr: String::new(),
                stored: hidden == 3,
            }),
        });
    }
    pk.sort();
    let without_rowid: bool = conn
        .query_row(
            "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1",
            [&name],
            |r| r.get::<_, i64>(0),
        )
        .map(|wr| wr != 0)
        .map_err(refused)?;
    let mut st = conn
        .prepare("SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq")
        .map_err(refused)?;
    let mut fks: BTreeMap<i64, Fk> = BTreeMap::new();
    let rows = st
        .query_map([&name], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })
        .map_err(refused)?;
    for row in rows {
        let (id, parent, from, to) = row.map_err(refused)?;
        let fk = fks.entry(id).or_insert_with(|| Fk {
            from: Vec::new(),
            parent,
            to: Vec::new(),
        });
        fk.from.push(from);
        if let Some(to) = to {
            fk.to.push(to);
        }
    }
    Ok(SchemaTable {
        name,
        sql,
        columns,
        pk: pk.into_iter().map(|(_, c)| c).collect(),
        without_rowid,
        fks: fks.into_values().collect(),
    })
}

/// Tables ordered so that a parent comes before its children where the
/// foreign keys allow (a cycle keeps the schema's order).
fn parents_first(mut rest: Vec<SchemaTable>) -> Vec<SchemaTable> {
    let mut out: Vec<SchemaTable> = Vec::with_capacity(rest.len());
    while !rest.is_empty() {
        let ready = rest.iter().position(|t| {
            t.fks.iter().all(|f| {
                f.parent.eq_ignore_ascii_case(&t.name)
                    || !rest.iter().any(|p| p.name.eq_ignore_ascii_case(&f.parent))
            })
        });
        out.push(rest.remove(ready.unwrap_or(0)));
    }
    out
}

/// Rows SQLite accepts into `t` on `conn`: up to `max_rows`, from at most
/// four draws a row.
fn draw_rows(
    conn: &Connection,
    t: &SchemaTable,
    table: &Table,
    kept: &BTreeMap<String, (Vec<String>, Vec<Vec<Cell>>)>,
    r: &mut Rng,
    max_rows: usize,
) -> Vec<Row> {
    let target = r.below(max_rows as u64 + 1) as usize;
    // The statement DbSpec::write uses, so that the rows kept are the
    // rows it writes.
    let (insert, writable, alias) = table.insert_sql();
    let Ok(mut stmt) = conn.prepare(&insert) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    let mut next_rowid = 1i64;
    for attempt in 0..target * 4 {
        if rows.len() >= target {
            break;
        }
        let cells = draw_cells(t, kept, r, attempt);
        let rowid = alias.map(|_| {
            next_rowid += 1 + r.below(3) as i64;
            next_rowid
        });
        let mut vals: Vec<&dyn ToSql> = writable.iter().map(|&i| &cells[i] as &dyn ToSql).collect();
        if alias.is_some() {
            vals.push(&rowid);
        }
        if stmt.execute(vals.as_slice()).is_ok() {
            rows.push(Row { rowid, cells });
        }
    }
    rows
}

/// One row's cells: keys unique by `i`, foreign-key columns mostly a
/// parent row's values, the rest drawn by affinity.
fn draw_cells(
    t: &SchemaTable,
    kept: &BTreeMap<String, (Vec<String>, Vec<Vec<Cell>>)>,
    r: &mut Rng,
    i: usize,
) -> Vec<Cell> {
    let mut cells: Vec<Cell> = t
        .columns
        .iter()
        .map(|c| {
            let a = Affinity::of(&c.decl);
            if c.generated.is_some() {
                Cell::Null
            } else if let Some(pos) = t.pk.iter().position(|p| *p == c.name) {
                key_cell(r, a, i, pos + 1 == t.pk.len())
            } else {
                cell(r, a, !c.not_null)
            }
        })
        .collect();
    for fk in &t.fks {
        let Some((pnames, prows)) = kept.get(&fk.parent.to_ascii_lowercase()) else {
            continue;
        };
        if prows.is_empty() || r.one_in(5) {
            continue;
        }
        let prow = &prows[r.below(prows.len() as u64) as usize];
        for (k, from) in fk.from.iter().enumerate() {
            let source = fk
                .to
                .get(k)
                .and_then(|to| pnames.iter().position(|n| n.eq_ignore_ascii_case(to)));
            let child = t
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(from));
            if let (Some(src), Some(dst)) = (source, child) {
                cells[dst] = prow[src].clone();
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = "
        CREATE TABLE customers(
            id INTEGER PRIMARY KEY,
            email TEXT NOT NULL UNIQUE COLLATE NOCASE,
            tier TEXT CHECK (tier IN ('free', 'pro')),
            credit REAL DEFAULT 0 CHECK (credit >= 0)
        );
        CREATE TABLE orders(
            id INTEGER PRIMARY KEY,
            customer_id INTEGER NOT NULL REFERENCES customers,
            qty INTEGER NOT NULL CHECK (qty BETWEEN 1 AND 99),
            total REAL GENERATED ALWAYS AS (qty * 2.5) VIRTUAL
        );
        CREATE TABLE tags(name TEXT PRIMARY KEY, n INT) WITHOUT ROWID;
        CREATE INDEX orders_by_customer ON orders(customer_id);
        CREATE VIEW big AS SELECT * FROM orders WHERE qty > 50;
    ";

    /// The author's tables come out with their own statements, parents
    /// first, and every row drawn holds under the schema's constraints
    /// (checked by SQLite on the written file, foreign keys included).
    #[test]
    fn rows_satisfy_the_authors_constraints() {
        let schema = Schema::parse(SCHEMA).unwrap();
        assert_eq!(schema.table_names(), ["customers", "orders", "tags"]);
        let opts = FuzzOptions {
            max_rows: 30,
            ..FuzzOptions::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let mut orders = 0;
        for seed in 0..8 {
            let db = schema.generate(seed, &opts);
            assert!(db.spec.tables[1]
                .sql
                .as_deref()
                .unwrap()
                .contains("CHECK (qty BETWEEN 1 AND 99)"));
            orders += db.spec.tables[1].rows.len();
            let path = dir.path().join(format!("{seed}.db"));
            db.spec.write(&path).unwrap();
            let c = Connection::open(&path).unwrap();
            let bad: i64 = c
                .query_row(
                    "SELECT (SELECT count(*) FROM orders WHERE qty NOT BETWEEN 1 AND 99) \
                     + (SELECT count(*) FROM customers WHERE tier NOT IN ('free','pro')) \
                     + (SELECT count(*) FROM customers WHERE credit < 0) \
                     + (SELECT count(*) FROM pragma_foreign_key_check)",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(bad, 0, "seed {seed}");
        }
        assert!(orders > 0, "some orders were drawn");
    }

    #[test]
    fn schemas_that_cannot_be_used_say_why() {
        assert!(matches!(
            Schema::parse("CREATE TABLE ("),
            Err(Error::Schema(_))
        ));
        assert!(matches!(
            Schema::parse("CREATE TABLE t(a); CREATE VIEW v AS SELECT 1; DROP TABLE t"),
            Err(Error::NoTables)
        ));
        assert!(matches!(
            Schema::parse("ATTACH ':memory:' AS x"),
            Err(Error::Schema(_))
        ));
    }
}
