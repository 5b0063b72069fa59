//! SQL patches: the statements that turn the first archive's database into
//! the second's, as `sqldiff` writes them.
//!
//! A [`Patch`] is the [`RowSink`] of a diff (`ndarc_diff::diff_labeled_with_sink`):
//! it takes the second archive's added rows (all rows of new and rebuilt
//! tables) while the diff reads that archive, once, and spools their
//! `INSERT`s to an unnamed temporary file; [`Patch::finish`] then writes,
//! after `PRAGMA foreign_keys = OFF` and inside one transaction:
//!
//! 1. `DROP TABLE` for tables only in the first archive and for tables whose
//!    `sql` changed (SQLite's `ALTER TABLE` cannot reach every change a
//!    `CREATE TABLE` can make, and a table rebuilt from the second archive's
//!    `sql` holds exactly its definition);
//! 2. `DELETE` of removed rows, children before parents;
//! 3. `UPDATE` of the changed cells;
//! 4. `CREATE TABLE` for new and rebuilt tables, parents first;
//! 5. `INSERT` of added rows (all rows of new and rebuilt tables), parents
//!    first, with their rowids.
//!
//! Applied to a database that holds the first archive's content (`unpack`),
//! the result holds the second's. Rows are addressed by primary key, or by
//! rowid through the table's free alias.
//!
//! What the patch guarantees, for the `sqlite3` shell as for any SQLite:
//!
//! - it is written only from a verified diff ([`Error::Unverified`]
//!   otherwise) and only once the diff is over, so an invalid input writes
//!   nothing;
//! - every statement starts a line and ends with `;` and a newline; every
//!   line ndarc writes is one whole statement or a `--` comment of its own
//!   text. Cells never span lines: text with a line break is written as
//!   `replace('a~b','~',char(10))`, text with NUL as hex. The only text copied
//!   as it is, a new table's `sql`, is copied only when it starts with
//!   `CREATE`, holds no `;`, no control character but tab, CR and LF, and
//!   no line the shell would take for the end of a statement (`/`, `go`):
//!   so no line can be read by the shell as a dot-command
//!   ([`Error::UnsafeSql`] otherwise);
//! - numbers keep their storage class and bits: as `unpack` binds a cell,
//!   an integral number within ±2^53 is an integer literal, any other a
//!   REAL, written in its short decimal form only when SQLite's conversion
//!   of it gives the same double (checked by emulating both the long
//!   double and the double conversions SQLite 3.40 may use), otherwise as
//!   an exact expression over powers of two (`(m * 1.0 / 2^k …)`, or
//!   `CAST(n AS REAL)` for integers beyond 2^53).

//!
//! Its parts: `literal` (cells as SQL), `safety` (what may be copied into a
//! patch), `tables` (definitions, order, keys, `INSERT`s) and `sink` (the
//! [`Patch`] itself).

use std::collections::{HashMap, HashSet};
use std::io::Write;

use ndarc_diff::{Diff, RowSink, Wanted};
use ndarc_json::Value;

mod literal;
mod safety;
mod sink;
mod tables;

pub use literal::{exact_real, literal, number};
pub use sink::Patch;

use crate::Error;
use tables::key_of;

/// Writes the SQL patch from the first archive to the second, for a
/// second archive in memory: `d` is their diff (made with verification),
/// `after` the second archive, whose rows are read again here (a file is
/// better diffed with a [`Patch`] as its sink, which reads it once). See
/// [`Patch::finish`].
pub fn write_patch(d: &Diff, after: &[u8], out: &mut dyn Write) -> Result<(), Error> {
    if !d.verified {
        return Err(Error::Unverified);
    }
    let mut lines = after.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let bad = |line: u64, message: &str| Error::Archive {
        line,
        message: message.to_string(),
    };
    let first = lines.next().ok_or_else(|| bad(1, "empty"))?;
    let read = ndarc_verify::read_manifest(
        ndarc_format::LineRef {
            line: 1,
            offset: 0,
            bytes: first,
        },
        &ndarc_verify::Options::default(),
    );
    let manifest = read.manifest.ok_or_else(|| bad(1, "not a manifest"))?;
    let mut patch = Patch::new()?;
    patch.start(&manifest, d);
    let wanted: HashMap<&str, HashSet<&str>> = d
        .tables
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.added.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let mut current: Option<(String, Wanted)> = None;
    for (i, line) in lines.enumerate() {
        let n = i as u64 + 2;
        let rec = ndarc_json::parse(line).map_err(|e| bad(n, &e.to_string()))?;
        if rec.get("kind").and_then(Value::as_str) != Some("part") {
            continue;
        }
        let items = rec.get("items").and_then(Value::as_array).unwrap_or(&[]);
        for it in items {
            if it.get("kind").and_then(Value::as_str) != Some("row") {
                break;
            }
            let (Some(table), Some(row)) = (it.get("table").and_then(Value::as_str), it.get("row"))
            else {
                continue;
            };
            if current.as_ref().map(|(t, _)| t.as_str()) != Some(table) {
                // Tables the diff left out (ignored) are not announced.
                let known = patch.full.contains(table) || wanted.contains_key(table);
                let want = if known {
                    patch.table(table)
                } else {
                    patch.close_table();
                    Wanted::None
                };
                current = Some((table.to_string(), want));
            }
            let want = current.as_ref().map_or(Wanted::None, |(_, w)| *w);
            let rowid = it.get("rowid");
            let take = match want {
                Wanted::All => true,
                Wanted::Added => patch.defs.get(table).is_some_and(|def| {
                    key_of(def, row, rowid).is_some_and(|k| {
                        wanted
                            .get(table)
                            .is_some_and(|keys| keys.contains(k.as_str()))
                    })
                }),
                Wanted::None => false,
            };
            if take {
                let rowid = rowid.map(ndarc_json::to_canonical_vec);
                patch.row(&ndarc_json::to_canonical_vec(row), rowid.as_deref())?;
            }
        }
    }
    patch.finish(d, out)
}

#[cfg(test)]
mod tests;
