//! The producer's export-time drops of local development data
//! (`dropDevData` in the seed's `dev-data.mjs`; SPEC.md §13.4, "Development data"), applied to
//! the read snapshot without writing to the database.
//!
//! The seed runs `DELETE` and `UPDATE` statements on its snapshot copies
//! (`CREATE TABLE … AS SELECT`, whose columns keep their affinity but lose
//! their collation). `pack` reads the live tables inside its one read
//! transaction instead, so each statement becomes a row filter (`WHERE`) or a
//! rewritten cell (`CASE`) in the table's SELECT, with `COLLATE BINARY` where
//! the seed compares a copy's column. The statements touch different tables
//! and the only cross-table read (`oa_tokens` reading `oa_dev_credentials`)
//! runs before that table is emptied, so evaluating each on the snapshot
//! gives what the seed's batch gives.

use super::table::{DevRule, Table};
use crate::{quote, sqlite_affinity, SqliteAffinity};

/// The dev personas (`PERSONAS` in `dev-data.mjs`).
const PERSONAS: &str = "lower(email) LIKE '%@dev.localhost'";

/// The value an `UPDATE` stores for the expression `v` in a column of
/// affinity `a`, as SQLite's `applyAffinity` converts it (`v` is numeric or
/// NULL: the result of `+`). INTEGER and NUMERIC keep an integral REAL
/// strictly inside the 64-bit range as an INTEGER
/// (`sqlite3VdbeIntegerAffinity`); REAL reads back as REAL; TEXT stores the
/// number's text.
fn stored(v: &str, a: SqliteAffinity) -> String {
    match a {
        SqliteAffinity::Text => format!("CAST({v} AS TEXT)"),
        SqliteAffinity::Real => format!("CAST({v} AS REAL)"),
        SqliteAffinity::Blob => v.to_string(),
        SqliteAffinity::Integer | SqliteAffinity::Numeric => format!(
            "CASE WHEN typeof({v})='real' AND {v}=CAST({v} AS INTEGER) \
             AND {v}>-9223372036854775808.0 AND {v}<9223372036854775807.0 \
             THEN CAST({v} AS INTEGER) ELSE {v} END"
        ),
    }
}

/// The rule of each archived table `dropDevData` changes, in the order of
/// `tables` (`None`: read as is). `minted_table` is whether the database has
/// a table named exactly `oa_dev_credentials`, archived or not: the seed
/// reads which tokens were minted by a dev credential from it.
pub(super) fn dev_rules(tables: &[Table], minted_table: bool) -> Vec<Option<DevRule>> {
    let has = |table: &str, names: &[&str]| {
        tables
            .iter()
            .find(|t| t.name == table)
            .is_some_and(|t| names.iter().all(|n| t.columns.iter().any(|c| c.name == *n)))
    };
    let archived = |table: &str| tables.iter().any(|t| t.name == table);
    tables
        .iter()
        .map(|t| {
            let drop = |condition: String| {
                Some(DevRule {
                    filter: Some(format!("({condition}) IS NOT 1")),
                    rewrite: Vec::new(),
                })
            };
            match t.name.as_str() {
                "oa_sessions" | "oa_credentials" if has(&t.name, &["kind"]) => {
                    drop("\"kind\"='dev' COLLATE BINARY".to_string())
                }
                "oa_tokens" if minted_table && has("oa_tokens", &["id"]) => {
                    // The seed reads the archived copy of oa_dev_credentials
                    // (no collation) when there is one, else the live table
                    // (its own). Names unquoted, as the seed resolves them.
                    let collate = if archived("oa_dev_credentials") {
                        " COLLATE BINARY"
                    } else {
                        ""
                    };
                    drop(format!(
                        "\"id\" COLLATE BINARY IN (SELECT id FROM main.oa_dev_credentials \
                         WHERE credential='oa_tokens'{collate})"
                    ))
                }
                "oa_dev_credentials" if has(&t.name, &["credential", "id"]) => {
                    drop("1".to_string())
                }
                "oa_operators" if has(&t.name, &["email", "status", "version"]) => {
                    let when = format!("{PERSONAS} AND \"status\"!='inactive' COLLATE BINARY");
                    let mut rewrite = Vec::new();
                    for (i, c) in t.columns.iter().enumerate() {
                        // Generated columns are not archived.
                        if c.generated.is_some() {
                            continue;
                        }
                        let q = quote(&c.name);
                        if c.name == "status" {
                            rewrite.push((
                                i,
                                format!("CASE WHEN {when} THEN 'inactive' ELSE {q} END"),
                            ));
                        } else if c.name == "version" {
                            let next = stored(&format!("({q}+1)"), sqlite_affinity(&c.decl));
                            rewrite.push((i, format!("CASE WHEN {when} THEN {next} ELSE {q} END")));
                        }
                    }
                    Some(DevRule {
                        filter: None,
                        rewrite,
                    })
                }
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinities_follow_sqlite_rules() {
        assert_eq!(sqlite_affinity("BIGINT"), SqliteAffinity::Integer);
        assert_eq!(sqlite_affinity("varchar(3)"), SqliteAffinity::Text);
        assert_eq!(sqlite_affinity(""), SqliteAffinity::Blob);
        assert_eq!(sqlite_affinity("DOUBLE PRECISION"), SqliteAffinity::Real);
        assert_eq!(sqlite_affinity("DATETIME"), SqliteAffinity::Numeric);
    }

    /// The rewritten `version` reads back what SQLite's UPDATE stores.
    #[test]
    fn stored_values_are_what_an_update_stores() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        for decl in ["INTEGER", "TEXT", "", "REAL", "NUMERIC"] {
            let a = sqlite_affinity(decl);
            conn.execute_batch(&format!(
                "DROP TABLE IF EXISTS t; CREATE TABLE t(v {decl}, w {decl});"
            ))
            .unwrap();
            for v in [
                "NULL",
                "1",
                "1.5",
                "2.0",
                "'7'",
                "'x'",
                "9223372036854775807",
                "-9223372036854775808",
                "1e300",
                "x'3132'",
            ] {
                conn.execute_batch(&format!("DELETE FROM t; INSERT INTO t VALUES({v}, {v});"))
                    .unwrap();
                let ours: (String, String) = conn
                    .query_row(
                        &format!(
                            "SELECT typeof(x), quote(x) FROM (SELECT {} AS x FROM t)",
                            stored("(v+1)", a)
                        ),
                        [],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .unwrap();
                conn.execute_batch("UPDATE t SET w=w+1").unwrap();
                let sqlites: (String, String) = conn
                    .query_row("SELECT typeof(w), quote(w) FROM t", [], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .unwrap();
                assert_eq!(ours, sqlites, "{decl} {v}");
            }
        }
    }
}
