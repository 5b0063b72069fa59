//! The database being restored: its defensive connection, and its tables
//! created from the manifest's `sql` in dependency order.

use std::path::Path;

use ndarc_format::manifest::{Generated, Table};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::{Connection, OpenFlags};

use super::error::unholdable;
use crate::Error;

/// Tables in the order to create them: each after the tables it depends on
/// (within the archive), otherwise in manifest order; a cycle is broken at
/// its first table in manifest order.
pub(super) fn creation_order(tables: &[Table]) -> Vec<usize> {
    let mut done = vec![false; tables.len()];
    let mut order = Vec::with_capacity(tables.len());
    let idx = |name: &str| {
        tables
            .iter()
            .position(|t| t.name.eq_ignore_ascii_case(name))
    };
    while order.len() < tables.len() {
        let ready = (0..tables.len()).find(|&i| {
            !done[i]
                && tables[i]
                    .dependencies
                    .iter()
                    .filter_map(|d| idx(d))
                    .all(|j| j == i || done[j])
        });
        let next = ready.unwrap_or_else(|| (0..tables.len()).find(|&i| !done[i]).unwrap_or(0));
        done[next] = true;
        order.push(next);
    }
    order
}

/// Checks that the table SQLite created from `sql` is the table the
/// manifest describes.
pub(super) fn check_created(conn: &Connection, t: &Table) -> Result<(), Error> {
    let mismatch = |what: String| {
        unholdable(
            "table_sql_mismatch",
            format!(
                "table {}: its sql does not create the table the manifest describes ({what})",
                t.name
            ),
        )
    };
    let exists: bool = conn
        .query_row(
            "SELECT count(*) FROM main.sqlite_schema WHERE type = 'table' AND name = ?1",
            [&t.name],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .unwrap_or(false);
    if !exists {
        return Err(mismatch("no table of that name".to_string()));
    }
    let mut st = conn
        .prepare("SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1, 'main')")
        .map_err(|e| mismatch(e.to_string()))?;
    let cols: Vec<(String, String, i64, i64, i64)> = st
        .query_map([&t.name], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| mismatch(e.to_string()))?;
    if cols.len() != t.columns.len() {
        return Err(mismatch(format!(
            "{} columns, not {}",
            cols.len(),
            t.columns.len()
        )));
    }
    for (c, (name, decl, notnull, pk, hidden)) in t.columns.iter().zip(&cols) {
        let generated = match hidden {
            2 => Some(Generated::Virtual),
            3 => Some(Generated::Stored),
            _ => None,
        };
        if c.name != *name
            // SQLite reports the six STRICT type names (int, text …)
            // upper-cased, whatever case the sql declares them in.
            || !c.decl_type.eq_ignore_ascii_case(decl)
            || i64::from(c.notnull) != *notnull
            || i64::from(c.pk) != *pk
            || c.generated != generated
        {
            return Err(mismatch(format!("column {name:?}")));
        }
    }
    Ok(())
}

/// Opens the database being restored (an existing file), defensively: an archive's `sql` runs
/// on this connection, so it can attach no database
/// (`SQLITE_LIMIT_ATTACHED` 0), load no extension, fire no trigger and
/// create no view, trusts nothing in the schema (`trusted_schema` off),
/// cannot corrupt the file through `writable_schema` (defensive mode),
/// [`restore_authorizer`] allows only what a restore does (installed
/// by the caller once its own pragmas have run).
pub fn defensive(path: &Path) -> rusqlite::Result<Connection> {
    use rusqlite::config::DbConfig as C;
    use rusqlite::limits::Limit;
    // The file exists (created with its mode beforehand): opened without
    // SQLITE_OPEN_CREATE, so that a file removed meanwhile (by a signal's
    // cleanup) is not made again, and without SQLITE_OPEN_URI, so that a
    // path beginning with `file:` is a path.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
    for (flag, on) in [
        (C::SQLITE_DBCONFIG_DEFENSIVE, true),
        (C::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false),
        (C::SQLITE_DBCONFIG_ENABLE_TRIGGER, false),
        (C::SQLITE_DBCONFIG_ENABLE_VIEW, false),
        (C::SQLITE_DBCONFIG_ENABLE_FKEY, false),
    ] {
        conn.set_db_config(flag, on)?;
    }
    Ok(conn)
}

/// What a restore may do, and nothing else: create tables in `main`, write
/// their rows and the schema table, read (CHECK constraints and defaults),
/// call SQLite's built-in functions, and run its own transaction. Refused:
/// ATTACH and DETACH, temporary objects, triggers, views, indexes other
/// than those of a table's UNIQUE and PRIMARY KEY constraints, virtual
/// tables, every DROP and ALTER, pragmas, `load_extension`.
pub fn restore_authorizer(ctx: AuthContext<'_>) -> Authorization {
    let main = |db: Option<&str>| db.is_none_or(|d| d == "main");
    let allowed = match ctx.action {
        AuthAction::CreateTable { .. } => main(ctx.database_name),
        // The indexes of UNIQUE and PRIMARY KEY constraints, which SQLite
        // creates with the table; no other.
        AuthAction::CreateIndex { index_name, .. } => {
            main(ctx.database_name) && index_name.starts_with("sqlite_autoindex_")
        }
        AuthAction::Insert { .. } | AuthAction::Update { .. } | AuthAction::Read { .. } => {
            main(ctx.database_name)
        }
        AuthAction::Select | AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } => true,
        // Read-only: the restore compares the created table with the
        // manifest's columns.
        AuthAction::Pragma { pragma_name, .. } => pragma_name.eq_ignore_ascii_case("table_xinfo"),
        AuthAction::Function { function_name } => {
            !function_name.eq_ignore_ascii_case("load_extension")
        }
        _ => false,
    };
    if allowed {
        Authorization::Allow
    } else {
        Authorization::Deny
    }
}
