//! The restore: fed by the verification session, it creates the tables,
//! inserts the rows and writes objects and payloads, all provisional until
//! committed.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ndarc_format::manifest::Manifest;
use ndarc_format::part::{BinaryKind, RowSpans};
use ndarc_format::{Affinity, LineRef, Plan};
use ndarc_json::Value;
use ndarc_verify::{Accepted, Reader};
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;

use crate::metadata::{sidecar_bytes, ObjectMetadata, SIDECAR_DIR};
use crate::quote;

use super::cells::{bind_cell, cell};
use super::error::{sqlite_err, unholdable, write_err};
use super::files::{make_dirs, place, safe_segments, temp_sibling, Written};
use super::schema::{check_created, creation_order};
use super::stmt::{Binder, Statement};
use super::UnpackOptions;
use crate::Error;

/// The insert statements of one table: cells are bound in the plan's
/// column order, the rowid last.
pub(super) struct Insert {
    /// One row.
    sql: String,
    /// [`Insert::batch`] rows in one statement (`VALUES (…), (…), …`), if
    /// more than one row fits SQLite's limit on parameters.
    batch_sql: Option<String>,
    /// Rows inserted by `batch_sql`.
    batch: usize,
    affinities: Vec<Affinity>,
    /// Column names in the plan's order (for rows read without spans).
    names: Vec<String>,
    rowid: bool,
}

/// Rows inserted by one statement on the fast path. A statement per row
/// opened its table's cursor, halted, released it and was reset for each
/// row (with rows already bound, 10 % of the inserting thread restoring
/// Chinook-like rows, which is `unpack`'s bottleneck); one execution for
/// many rows pays that once. 16 rows gained less, 256 lost some (cache).
const BATCH_ROWS: usize = 64;

/// The statement of one table being inserted into: for one row, and for
/// [`Insert::batch`] rows.
pub(super) struct Current<'c> {
    table: usize,
    one: Statement<'c>,
    many: Option<Statement<'c>>,
}

/// The insert statements of table `t`, a batch binding at most
/// `max_params` parameters (the connection's `SQLITE_LIMIT_VARIABLE_NUMBER`).
fn insert_of(plan: &Plan, t: usize, max_params: usize) -> Insert {
    let tp = &plan.tables[t];
    let table = &plan.manifest.tables[t];
    let mut names: Vec<String> = tp.columns.iter().map(|c| quote(&c.name)).collect();
    if let Some(a) = &table.rowid_alias {
        names.push(quote(a));
    }
    let values = |rows: usize| -> String {
        let marks = |r: usize| -> String {
            let m: Vec<String> = (1..=names.len())
                .map(|n| format!("?{}", r * names.len() + n))
                .collect();
            format!("({})", m.join(","))
        };
        let rows: Vec<String> = (0..rows).map(marks).collect();
        format!(
            "INSERT INTO main.{}({}) VALUES{}",
            quote(&table.name),
            names.join(","),
            rows.join(",")
        )
    };
    let (sql, batch) = if names.is_empty() {
        let sql = format!("INSERT INTO main.{} DEFAULT VALUES", quote(&table.name));
        (sql, 1)
    } else {
        (values(1), BATCH_ROWS.min(max_params / names.len()).max(1))
    };
    Insert {
        sql,
        batch_sql: (batch > 1).then(|| values(batch)),
        batch,
        affinities: tp.columns.iter().map(|c| c.affinity).collect(),
        names: tp.columns.iter().map(|c| c.name.clone()).collect(),
        rowid: table.rowid_alias.is_some(),
    }
}

/// A sidecar to write: its path segments, bytes, and what it is.
type Sidecar = (Vec<String>, Vec<u8>, String);

/// The metadata sidecar of each bucket some object of which has metadata
/// (see [`crate::metadata`]): its path segments under the objects
/// directory (`metadata/BUCKET.json`), its bytes, and what it is.
fn sidecars(manifest: &Manifest) -> Result<Vec<Sidecar>, Error> {
    let mut buckets: BTreeMap<&str, Vec<(&str, ObjectMetadata)>> = BTreeMap::new();
    for o in &manifest.objects {
        let m = ObjectMetadata {
            http: o.http_metadata.clone(),
            custom: o.custom_metadata.clone(),
        };
        buckets.entry(&o.bucket).or_default().push((&o.key, m));
    }
    let mut out = Vec::new();
    for (bucket, objects) in buckets {
        let Some(bytes) = sidecar_bytes(objects.iter().map(|(k, m)| (*k, m))) else {
            continue;
        };
        let mut segs = vec![SIDECAR_DIR.to_string()];
        segs.extend(
            safe_segments(bucket)
                .map_err(|m| unholdable("unsafe_path", format!("bucket {m}")))?
                .into_iter()
                .map(str::to_string),
        );
        if let Some(last) = segs.last_mut() {
            last.push_str(".json");
        }
        out.push((segs, bytes, format!("the metadata of bucket {bucket:?}")));
    }
    Ok(out)
}

/// An object or payload being written to its temporary sibling.
pub(super) struct Sink {
    file: io::BufWriter<File>,
    tmp: PathBuf,
    dest: PathBuf,
}

/// The restore, fed by the verification session (see
/// [`ndarc_verify::read`]): everything it writes is provisional (an open
/// transaction, temporary files) until [`Restore::commit`].
pub(super) struct Restore<'c> {
    pub(super) conn: &'c Connection,
    pub(super) db: &'c Path,
    pub(super) opts: &'c UnpackOptions,
    pub(super) plan: Option<Arc<Plan>>,
    pub(super) inserts: Vec<Insert>,
    pub(super) current: Option<Current<'c>>,
    pub(super) counts: Vec<u64>,
    /// Destination of each object, then of each payload (manifest order).
    pub(super) dests: Vec<PathBuf>,
    pub(super) open: Option<Sink>,
    /// Temporary files complete, with their destinations.
    pub(super) done: Vec<(PathBuf, PathBuf)>,
    pub(super) written: Written,
    pub(super) params: Vec<SqlValue>,
    pub(super) chunk: Vec<u8>,
    pub(super) objects: usize,
    pub(super) payloads: usize,
}

impl<'c> Restore<'c> {
    fn plan(&self) -> Result<&Arc<Plan>, Error> {
        self.plan
            .as_ref()
            .ok_or_else(|| Error::Invalid("the archive has no manifest".into()))
    }

    /// Checks every path first, so that a key that would escape, or two
    /// entries that map to one file, write nothing.
    fn paths(&mut self, manifest: &Manifest) -> Result<(), Error> {
        let Some(base) = &self.opts.objects_dir else {
            return Ok(());
        };
        let mut files: BTreeMap<Vec<String>, String> = BTreeMap::new();
        let mut entries = Vec::with_capacity(manifest.objects.len() + manifest.payloads.len());
        for o in &manifest.objects {
            let mut segs = vec!["objects".to_string()];
            segs.extend(
                safe_segments(&o.bucket)
                    .map_err(|m| unholdable("unsafe_path", format!("bucket {m}")))?
                    .into_iter()
                    .map(str::to_string),
            );
            segs.extend(
                safe_segments(&o.key)
                    .map_err(|m| unholdable("unsafe_path", format!("object key {m}")))?
                    .into_iter()
                    .map(str::to_string),
            );
            entries.push((segs, format!("object {:?} of bucket {:?}", o.key, o.bucket)));
        }
        for p in &manifest.payloads {
            let mut segs = vec!["payloads".to_string()];
            segs.extend(
                safe_segments(&p.name)
                    .map_err(|m| unholdable("unsafe_path", format!("payload name {m}")))?
                    .into_iter()
                    .map(str::to_string),
            );
            entries.push((segs, format!("payload {:?}", p.name)));
        }
        let binaries = entries.len();
        let sidecars = sidecars(manifest)?;
        entries.extend(
            sidecars
                .iter()
                .map(|(segs, _, what)| (segs.clone(), what.clone())),
        );
        for (segs, what) in &entries {
            if let Some(other) = files.insert(segs.clone(), what.clone()) {
                return Err(unholdable(
                    "path_collision",
                    format!(
                        "{other} and {what} would both be written to {}",
                        base.join(segs.join("/")).display()
                    ),
                ));
            }
        }
        // A file that is also a directory of another: `B/x` and `B/x/y`.
        let mut prev: Option<&Vec<String>> = None;
        for segs in files.keys() {
            if let Some(p) = prev {
                if segs.len() > p.len() && segs.starts_with(p) {
                    return Err(unholdable(
                        "path_collision",
                        format!(
                            "{} and {} cannot both be written: {} would be a file and a directory",
                            files[p],
                            files[segs],
                            base.join(p.join("/")).display()
                        ),
                    ));
                }
            }
            prev = Some(segs);
        }
        if !entries.is_empty() {
            make_dirs(base, self.opts.mode, &mut self.written)?;
        }
        for (segs, _) in entries {
            let refs: Vec<&str> = segs.iter().map(String::as_str).collect();
            let dest = place(base, &refs, self.opts.mode, &mut self.written)?;
            if fs::symlink_metadata(&dest).is_ok() && !self.opts.force {
                return Err(Error::Exists(dest));
            }
            self.dests.push(dest);
        }
        // The sidecars are known from the manifest: written now, as
        // temporary files committed with the objects.
        let dests = self.dests.split_off(binaries);
        for (dest, (_, bytes, _)) in dests.into_iter().zip(sidecars) {
            let tmp = temp_sibling(&dest);
            let exists = fs::symlink_metadata(&dest).is_ok();
            let mut file = self
                .written
                .temp(&tmp, self.opts, exists.then_some(dest.as_path()))
                .map_err(|e| write_err(&tmp, e))?;
            file.write_all(&bytes)
                .and_then(|()| file.sync_all())
                .map_err(|e| write_err(&dest, e))?;
            self.done.push((tmp, dest));
        }
        Ok(())
    }

    /// Creates the tables, each from its `sql` as one prepared statement.
    fn create(&mut self, plan: &Plan) -> Result<(), Error> {
        let db = self.db;
        for i in creation_order(&plan.manifest.tables) {
            let t = &plan.manifest.tables[i];
            let rejected = |e: rusqlite::Error| {
                sqlite_err(db, e, |e| {
                    unholdable(
                        "table_sql_rejected",
                        format!("table {}: SQLite rejects its sql: {e}", t.name),
                    )
                })
            };
            // `prepare` refuses a second statement; the authorizer refuses
            // anything but a table in `main`.
            let mut st = self.conn.prepare(&t.sql).map_err(rejected)?;
            st.raw_execute().map_err(rejected)?;
            drop(st);
            check_created(self.conn, t)?;
        }
        Ok(())
    }

    fn rows<'a>(&mut self, part: &'a Accepted<'_>, table: usize) -> Result<(), Error> {
        let plan = self.plan()?.clone();
        if self.current.as_ref().map(|c| c.table) != Some(table) {
            self.current = None;
            let name = &plan.manifest.tables[table].name;
            let (conn, db) = (self.conn, self.db);
            let prepare = |sql: &str| {
                Statement::prepare(conn, sql).map_err(|e| {
                    sqlite_err(db, e, |e| {
                        unholdable("row_rejected", format!("table {name}: {e}"))
                    })
                })
            };
            let ins = &self.inserts[table];
            let one = prepare(&ins.sql)?;
            // The batch is only faster: rows go one at a time if SQLite
            // will not take it (the one-row statement then says why a row
            // is refused).
            let many = ins
                .batch_sql
                .as_deref()
                .and_then(|sql| Statement::prepare(conn, sql).ok());
            self.current = Some(Current { table, one, many });
        }
        let ins = &self.inserts[table];
        let first = part.rows().and_then(|r| r.first_index).unwrap_or(0);
        let bytes = part.line.bytes;
        let spans = part.spans;
        let mut n = 0u64;
        if spans.table == Some(table) {
            // Each cell bound straight from its text in the line (a string
            // in place): no value tree, no owned value per cell.
            let width = ins.affinities.len();
            let per_row = width + usize::from(ins.rowid);
            let Some(cur) = self.current.as_mut() else {
                return Ok(());
            };
            // Binds row `r` of the part as row `k` of the statement's VALUES.
            let bind = |st: &mut Binder<'a, '_>, k: usize, r: usize| {
                bind_row(st, (bytes, spans), ins, (k * per_row, r))
            };
            let rows = spans.rows.len();
            let mut r = 0;
            if let Some(many) = cur.many.as_mut() {
                while rows - r >= ins.batch {
                    let done = many.execute(|b| (0..ins.batch).try_for_each(|k| bind(b, k, r + k)));
                    if let Err(e) = done {
                        let inserted = self.counts[table] + r as u64;
                        let at = (first + r as u64, inserted, ins.batch);
                        return Err(batch_rejected(
                            self.conn,
                            (self.db, &plan),
                            table,
                            at,
                            e,
                            |k| cur.one.execute(|b| bind(b, 0, r + k)),
                        ));
                    }
                    r += ins.batch;
                }
            }
            for r in r..rows {
                let done = cur.one.execute(|b| bind(b, 0, r));
                done.map_err(|e| rejected(self.db, &plan, table, first + r as u64, e))?;
            }
            n = rows as u64;
        } else {
            // A row part the fast path did not read (a warning on it):
            // read in full.
            let v = ndarc_json::parse(bytes)
                .map_err(|e| Error::Invalid(format!("line {}: {e}", part.line.line)))?;
            let items = v
                .get("items")
                .and_then(Value::as_array)
                .map_or(&[][..], |a| a);
            for (r, item) in items.iter().enumerate() {
                self.params.clear();
                let row = item.get("row");
                for (name, aff) in ins.names.iter().zip(&ins.affinities) {
                    let v = row.and_then(|x| x.get(name)).unwrap_or(&Value::Null);
                    self.params.push(cell(v, *aff));
                }
                if ins.rowid {
                    let id = item.get("rowid").and_then(Value::as_f64).unwrap_or(0.0);
                    self.params.push(SqlValue::Integer(id as i64));
                }
                n += 1;
                exec(
                    &mut self.current,
                    &self.params,
                    (self.db, &plan),
                    table,
                    first + r as u64,
                )?;
            }
        }
        self.counts[table] += n;
        Ok(())
    }

    fn binary(&mut self, part: &Accepted<'_>) -> Result<(), Error> {
        let Some(b) = part.binary() else {
            return Ok(());
        };
        if self.opts.objects_dir.is_none() {
            return Ok(());
        }
        let plan = self.plan()?.clone();
        let slot = match b.kind {
            BinaryKind::Object => b.entry,
            BinaryKind::Payload => plan.manifest.objects.len() + b.entry,
        };
        if b.offset == Some(0) {
            self.finish_open()?;
            let Some(dest) = self.dests.get(slot).cloned() else {
                return Ok(());
            };
            let tmp = temp_sibling(&dest);
            let exists = fs::symlink_metadata(&dest).is_ok();
            let file = self
                .written
                .temp(&tmp, self.opts, exists.then_some(dest.as_path()))
                .map_err(|e| write_err(&tmp, e))?;
            self.open = Some(Sink {
                file: io::BufWriter::with_capacity(1 << 20, file),
                tmp,
                dest,
            });
            match b.kind {
                BinaryKind::Object => self.objects += 1,
                BinaryKind::Payload => self.payloads += 1,
            }
        }
        let Some(sink) = self.open.as_mut() else {
            return Ok(());
        };
        let mut chunk = std::mem::take(&mut self.chunk);
        let data = part.chunk(&mut chunk).unwrap_or(&[]);
        let r = sink
            .file
            .write_all(data)
            .map_err(|e| write_err(&sink.dest, e));
        self.chunk = chunk;
        r
    }

    /// Closes the file being written (synced), keeping it as a temporary.
    pub(super) fn finish_open(&mut self) -> Result<(), Error> {
        if let Some(sink) = self.open.take() {
            let file = sink
                .file
                .into_inner()
                .map_err(|e| write_err(&sink.dest, e.error()))?;
            file.sync_all().map_err(|e| write_err(&sink.dest, e))?;
            self.done.push((sink.tmp, sink.dest));
        }
        Ok(())
    }
}

/// Binds row `r` of a part (its line's `bytes` and `spans`) from
/// parameter `at + 1` on: its cells in the plan's order, then its rowid.
fn bind_row<'s>(
    st: &mut Binder<'s, '_>,
    (bytes, spans): (&'s [u8], &RowSpans),
    ins: &Insert,
    (at, r): (usize, usize),
) -> rusqlite::Result<()> {
    let width = ins.affinities.len();
    for (c, aff) in ins.affinities.iter().enumerate() {
        let (a, b) = spans.cells.get(r * width + c).copied().unwrap_or((0, 0));
        let text = bytes.get(a as usize..b as usize).unwrap_or(b"null");
        bind_cell(st, at + c + 1, text, *aff)?;
    }
    if ins.rowid {
        let id = spans.rowids.get(r).map_or(0, |x| x.0);
        st.int(at + width + 1, id)?;
    }
    Ok(())
}

/// Inserts one row with `params`.
fn exec(
    current: &mut Option<Current<'_>>,
    params: &[SqlValue],
    (db, plan): (&Path, &Plan),
    table: usize,
    index: u64,
) -> Result<(), Error> {
    let Some(Current { one: st, .. }) = current.as_mut() else {
        return Ok(());
    };
    st.execute(|b| {
        params
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| b.value(i + 1, v))
    })
    .map_err(|e| rejected(db, plan, table, index, e))
}

/// The error of a batch of `rows` rows of `table` from row `index` (the
/// table holding `inserted` rows before it) that SQLite rejected: the row
/// it rejects, named as a statement per row would name it. The bundled
/// SQLite rolls the failed statement back; without a rollback journal
/// that is not promised (SQLite 3.40's shell keeps the rows before the
/// rejected one), so the rows the table holds say where to resume, and
/// from there each row is inserted `alone` until one is rejected. The
/// database is thrown away either way.
fn batch_rejected(
    conn: &Connection,
    (db, plan): (&Path, &Plan),
    table: usize,
    (index, inserted, rows): (u64, u64, usize),
    e: rusqlite::Error,
    mut alone: impl FnMut(usize) -> rusqlite::Result<()>,
) -> Error {
    let from = rows_in(conn, &plan.manifest.tables[table].name)
        .and_then(|c| c.checked_sub(inserted))
        .filter(|&k| k < rows as u64);
    if let Some(from) = from {
        for k in from as usize..rows {
            if let Err(e) = alone(k) {
                return rejected(db, plan, table, index + k as u64, e);
            }
        }
    }
    sqlite_err(db, e, |e| {
        unholdable(
            "row_rejected",
            format!(
                "table {}, one of rows {index} to {}: SQLite rejects it: {e}",
                plan.manifest.tables[table].name,
                index + rows as u64 - 1
            ),
        )
    })
}

/// The rows of `table` now in the database, or `None` if SQLite cannot
/// count them.
fn rows_in(conn: &Connection, table: &str) -> Option<u64> {
    conn.query_row(
        &format!("SELECT count(*) FROM main.{}", quote(table)),
        [],
        |r| r.get::<_, i64>(0),
    )
    .ok()
    .and_then(|n| u64::try_from(n).ok())
}

/// SQLite's error on row `index` of `table`.
fn rejected(db: &Path, plan: &Plan, table: usize, index: u64, e: rusqlite::Error) -> Error {
    sqlite_err(db, e, |e| {
        unholdable(
            "row_rejected",
            format!(
                "table {}, row {index}: SQLite rejects it: {e}",
                plan.manifest.tables[table].name
            ),
        )
    })
}

impl Reader for Restore<'_> {
    type Error = Error;

    fn start(&mut self, plan: &Arc<Plan>, _: LineRef<'_>) -> Result<(), Error> {
        self.plan = Some(plan.clone());
        self.paths(&plan.manifest)?;
        self.create(plan)?;
        let max_params = self
            .conn
            .limit(rusqlite::limits::Limit::SQLITE_LIMIT_VARIABLE_NUMBER)
            .map_or(999, |n| usize::try_from(n).unwrap_or(999));
        self.inserts = (0..plan.tables.len())
            .map(|t| insert_of(plan, t, max_params))
            .collect();
        self.counts = vec![0; plan.tables.len()];
        Ok(())
    }

    fn part(&mut self, part: Accepted<'_>) -> Result<(), Error> {
        match part.rows() {
            Some(r) => self.rows(&part, r.table),
            None => self.binary(&part),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::limits::Limit;

    /// A batch binds no more parameters than the connection allows, and
    /// SQLite prepares it under that limit; with room for fewer than two
    /// rows there is no batch.
    #[test]
    fn a_batch_keeps_to_the_parameter_limit() {
        let bytes = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/valid/base.ndjson"),
        )
        .unwrap();
        let report = ndarc_verify::verify_bytes(&bytes, &ndarc_verify::Options::default());
        let plan = Plan::new(report.manifest.unwrap());
        assert!(!plan.tables.is_empty());
        for t in 0..plan.tables.len() {
            let one = insert_of(&plan, t, 1 << 20);
            let per_row = one.names.len() + usize::from(one.rowid);
            for limit in [per_row, per_row * 2 - 1, per_row * 2, 999, 32_766] {
                let ins = insert_of(&plan, t, limit);
                assert!(ins.batch >= 1 && ins.batch <= BATCH_ROWS);
                match &ins.batch_sql {
                    None => assert!(ins.batch == 1 && limit < per_row * 2, "{limit}"),
                    Some(sql) => {
                        assert!(
                            ins.batch * per_row <= limit,
                            "{} rows of {per_row}",
                            ins.batch
                        );
                        let conn = Connection::open_in_memory().unwrap();
                        for table in &plan.manifest.tables {
                            conn.execute_batch(&table.sql).unwrap();
                        }
                        conn.set_limit(Limit::SQLITE_LIMIT_VARIABLE_NUMBER, limit as i32)
                            .unwrap();
                        let st = conn.prepare(sql).unwrap();
                        assert_eq!(st.parameter_count(), ins.batch * per_row);
                    }
                }
            }
        }
    }
}
