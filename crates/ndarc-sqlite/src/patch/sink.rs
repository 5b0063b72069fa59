//! [`Patch`]: the diff's row sink, which spools the added rows and then
//! writes the patch.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};

use ndarc_diff::{Diff, RowSink, Wanted};
use ndarc_format::Manifest;

use super::literal::literal;
use super::safety::{check_name, comment_text, unsafe_sql};
use super::tables::{insert, parents_first, table_defs, where_key, TableDef};
use crate::quote as ident;
use crate::Error;

/// A patch in the making: the [`RowSink`] of the diff it is written from.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ndarc_diff::{diff_labeled_with_sink, Options, Source};
/// let mut patch = ndarc_sqlite::patch::Patch::new()?;
/// let d = diff_labeled_with_sink(
///     ("a.ndjson", Source::Path("a.ndjson".as_ref())),
///     ("b.ndjson", Source::Path("b.ndjson".as_ref())),
///     &Options::default(),
///     Some(&mut patch),
/// )?;
/// patch.finish(&d, &mut std::io::stdout().lock())?;
/// # Ok(()) }
/// ```
pub struct Patch {
    /// The second archive's tables.
    pub(super) defs: HashMap<String, TableDef>,
    /// Tables created (new or rebuilt): all their rows are inserted.
    pub(super) full: HashSet<String>,
    /// `INSERT`s, table by table, in an unnamed temporary file.
    spool: BufWriter<File>,
    /// Bytes written to the spool.
    len: u64,
    /// Per table, the spool's ranges holding its `INSERT`s.
    segments: Vec<(String, u64, u64)>,
    /// The table whose rows come, and where they start in the spool.
    current: Option<(String, u64)>,
}

impl std::fmt::Debug for Patch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Patch")
            .field("tables", &self.defs.len())
            .field("spooled", &self.len)
            .finish()
    }
}

impl Patch {
    /// A patch with its spool (an unnamed temporary file).
    pub fn new() -> io::Result<Patch> {
        Ok(Patch {
            defs: HashMap::new(),
            full: HashSet::new(),
            spool: BufWriter::with_capacity(1 << 16, tempfile::tempfile()?),
            len: 0,
            segments: Vec::new(),
            current: None,
        })
    }

    /// Ends the rows of the current table.
    pub(super) fn close_table(&mut self) {
        if let Some((name, start)) = self.current.take() {
            if self.len > start {
                self.segments.push((name, start, self.len));
            }
        }
    }

    /// Writes the patch: `d` is the diff this patch took the rows of
    /// (verified, and over: the second archive is valid). Ignored tables
    /// and columns are left out of the patch as they are out of the diff
    /// (whose `--ignore-table`/`--ignore-column` options made `d`): no
    /// statement names an ignored table, no `UPDATE` sets an ignored
    /// column and a `sql` change that only ignored columns explain
    /// rebuilds nothing; a row inserted is inserted whole, ignored columns
    /// included, since it had no value before.
    ///
    /// Nothing is written when the patch cannot be written whole
    /// (an unverified diff, a `sql` or a name that is not safe to write).
    pub fn finish(mut self, d: &Diff, out: &mut dyn Write) -> Result<(), Error> {
        if !d.verified {
            return Err(Error::Unverified);
        }
        self.close_table();
        let defs = &self.defs;
        let rebuilt: Vec<String> = d
            .schema
            .tables_changed
            .iter()
            .filter(|t| t.sql.is_some() || t.rowid_alias.is_some() || t.key_changed)
            .map(|t| t.name.clone())
            .collect();
        let created: Vec<String> = d
            .schema
            .tables_added
            .iter()
            .map(|t| t.name.clone())
            .chain(rebuilt.iter().cloned())
            .collect();
        let dropped: Vec<String> = d
            .schema
            .tables_removed
            .iter()
            .map(|t| t.name.clone())
            .chain(rebuilt.iter().cloned())
            .collect();
        let full: HashSet<&str> = created.iter().map(String::as_str).collect();
        // Everything that could make the patch unsafe is checked before a
        // byte is written.
        for t in created.iter().chain(&dropped) {
            check_name(t)?;
        }
        for t in &created {
            if let Some(def) = defs.get(t) {
                if let Some(reason) = unsafe_sql(&def.sql) {
                    return Err(Error::UnsafeSql {
                        table: t.clone(),
                        reason,
                    });
                }
            }
        }
        for t in &d.tables {
            check_name(&t.name)?;
            if let Some(def) = defs.get(&t.name) {
                for c in def.pk.iter() {
                    check_name(c)?;
                }
            }
            for ch in &t.changed {
                for c in &ch.cells {
                    check_name(&c.column)?;
                }
            }
        }

        writeln!(
            out,
            "-- ndarc diff --format sql: from {} to {}",
            comment_text(&d.before.name),
            comment_text(&d.after.name)
        )?;
        // Foreign keys are checked by the database the patch is applied to, not
        // row by row while it runs (archives need not satisfy them, and a
        // rebuilt parent is dropped before its rows come back); the pragma
        // has no effect inside a transaction, so it comes first.
        writeln!(out, "PRAGMA foreign_keys = OFF;")?;
        writeln!(out, "BEGIN TRANSACTION;")?;
        // Children before parents when dropping and deleting.
        let all_before: Vec<String> = d.tables.iter().map(|t| t.name.clone()).collect();
        for t in parents_first(&dropped, defs).iter().rev() {
            writeln!(out, "DROP TABLE IF EXISTS {};", ident(t))?;
        }
        let changed_tables = parents_first(&all_before, defs);
        for name in changed_tables.iter().rev() {
            if full.contains(name.as_str()) {
                continue;
            }
            let (Some(t), Some(def)) = (d.tables.iter().find(|t| &t.name == name), defs.get(name))
            else {
                continue;
            };
            for key in &t.removed {
                if let Some(w) = where_key(def, key) {
                    writeln!(out, "DELETE FROM {} WHERE {w};", ident(name))?;
                }
            }
        }
        for name in &changed_tables {
            if full.contains(name.as_str()) {
                continue;
            }
            let (Some(t), Some(def)) = (d.tables.iter().find(|t| &t.name == name), defs.get(name))
            else {
                continue;
            };
            for ch in &t.changed {
                // A removed column's cell has nothing to set (a table whose
                // columns changed is rebuilt whole anyway).
                let set: Vec<String> = ch
                    .cells
                    .iter()
                    .filter(|c| c.only != Some(ndarc_diff::Side::Before))
                    .map(|c| format!("{} = {}", ident(&c.column), literal(&c.after)))
                    .collect();
                if set.is_empty() {
                    continue;
                }
                let Some(w) = where_key(def, &ch.key) else {
                    continue;
                };
                writeln!(
                    out,
                    "UPDATE {} SET {} WHERE {w};",
                    ident(name),
                    set.join(", ")
                )?;
            }
        }
        for t in parents_first(&created, defs) {
            if let Some(def) = defs.get(&t) {
                writeln!(out, "{};", def.sql)?;
            }
        }
        // Added rows, table by table in the order the diff gave them,
        // written parents first.
        self.spool.flush()?;
        let mut file = self.spool.into_inner().map_err(|e| e.into_error())?;
        let names: Vec<String> = self.segments.iter().map(|(n, _, _)| n.clone()).collect();
        let mut buf = vec![0u8; 1 << 16];
        for t in parents_first(&names, defs) {
            for (_, start, end) in self.segments.iter().filter(|(n, _, _)| *n == t) {
                file.seek(SeekFrom::Start(*start))?;
                let mut left = end - start;
                while left > 0 {
                    let n = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
                    file.read_exact(&mut buf[..n])?;
                    out.write_all(&buf[..n])?;
                    left -= n as u64;
                }
            }
        }
        writeln!(out, "COMMIT;")?;
        Ok(())
    }
}

impl RowSink for Patch {
    fn start(&mut self, after: &Manifest, d: &Diff) {
        self.defs = table_defs(after);
        self.full = d
            .schema
            .tables_added
            .iter()
            .map(|t| t.name.clone())
            .chain(
                d.schema
                    .tables_changed
                    .iter()
                    .filter(|t| t.sql.is_some() || t.rowid_alias.is_some() || t.key_changed)
                    .map(|t| t.name.clone()),
            )
            .collect();
    }

    fn table(&mut self, name: &str) -> Wanted {
        self.close_table();
        if !self.defs.contains_key(name) {
            return Wanted::None;
        }
        self.current = Some((name.to_string(), self.len));
        if self.full.contains(name) {
            Wanted::All
        } else {
            Wanted::Added
        }
    }

    fn row(&mut self, row: &[u8], rowid: Option<&[u8]>) -> io::Result<()> {
        let bad = |e: ndarc_json::Error| io::Error::new(io::ErrorKind::InvalidData, e.to_string());
        let Some((name, _)) = &self.current else {
            return Ok(());
        };
        let Some(def) = self.defs.get(name) else {
            return Ok(());
        };
        let row = ndarc_json::parse(row).map_err(bad)?;
        let rowid = rowid.map(ndarc_json::parse).transpose().map_err(bad)?;
        if let Some(o) = row.as_object() {
            for (c, _) in o.iter() {
                check_name(c).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            }
        }
        let sql = insert(name, def, &row, rowid.as_ref());
        self.spool.write_all(sql.as_bytes())?;
        self.len += sql.len() as u64;
        Ok(())
    }

    fn restart(&mut self) -> io::Result<()> {
        let Some((_, start)) = &self.current else {
            return Ok(());
        };
        let start = *start;
        self.spool.flush()?;
        let f = self.spool.get_mut();
        f.set_len(start)?;
        f.seek(SeekFrom::Start(start))?;
        self.len = start;
        Ok(())
    }
}
