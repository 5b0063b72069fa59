//! `--integrity` (SPEC.md §11): the rows against the foreign keys of the
//! tables' own `sql`. The one place of this rule in ndarc-verify; the file
//! pipeline and the push API drive it.
//!
//! - [`Integrity::new`], where the manifest is read: SQLite reads each
//!   table's foreign keys ([`ndarc_sql::integrity::foreign_keys`]); a
//!   parent key SQLite refuses is `foreign_key_mismatch`.
//! - [`Integrity::scan`], on any thread, beside the line check: the
//!   16-byte digests of a line's parent keys and references, as SQLite
//!   compares them ([`ndarc_sql::integrity::parent_digest`]).
//! - [`Checker`], fed in archive order (or, by the push API, as parts are
//!   accepted): keeps the parent keys, one digest each, and checks each
//!   reference once every row of its parent table is in; a line whose
//!   parents are not all in yet is read again at the end. A reference
//!   with no parent row is `foreign_key_violation`.
//!
//! Memory is the parent keys': 16 bytes each in a hash set (about 18 to
//! 37 with the set's spare room), and 24 bytes per line read again.
//! References are never kept.

use std::collections::HashSet;
use std::sync::Arc;

use ndarc_format::part::RowSpans;
use ndarc_format::{Code, Collector, Finding, LineRef, LineReport, Manifest, Plan};
use ndarc_json::pointer_token as token;
use ndarc_json::Value as Json;
use ndarc_sql::integrity::{child_digest, foreign_keys, parent_digest, Schema, Value};

/// What each table takes part in.
#[derive(Debug, Default, Clone)]
struct Roles {
    /// Parent keys it holds: (key, its columns).
    parents: Vec<(usize, Vec<String>)>,
    /// Foreign keys it makes: (foreign key, its columns).
    children: Vec<(usize, Vec<String>)>,
}

/// The foreign keys of one archive (see the module documentation).
#[derive(Debug)]
pub struct Integrity {
    schema: Schema,
    roles: Vec<Roles>,
}

/// A digest of a key's values.
type Digest16 = [u8; 16];

/// A reference of one row: its foreign key, digest, item and `index`.
#[derive(Debug)]
struct Reference {
    fk: usize,
    digest: Digest16,
    item: usize,
    index: u64,
}

/// The keys of one line's rows.
#[derive(Debug, Default)]
pub struct Keys {
    table: usize,
    rows: u64,
    parents: Vec<(usize, Digest16)>,
    children: Vec<Reference>,
}

impl Keys {
    /// Bytes held, about.
    pub fn held_bytes(&self) -> usize {
        self.parents.len() * 24 + self.children.len() * 48
    }
}

/// A row's cell as SQLite holds it after an import: `None` for a cell the
/// line check refuses anyway (it is reported there).
fn cell(v: &Json<'_>) -> Option<Value> {
    Some(match v {
        Json::Null => Value::Null,
        Json::Number(n) => match ndarc_json::safe_integer(*n) {
            Some(i) => Value::Integer(i),
            None => Value::Real(*n),
        },
        Json::String(s) => Value::Text(s.to_string()),
        Json::Object(o) if o.len() == 1 => Value::Blob(ndarc_format::catalogue::decode_base64(
            o.get("blob")?.as_str()?,
        )?),
        _ => return None,
    })
}

/// A cell as a finding shows it.
fn show(v: &Json<'_>) -> String {
    let text = match v {
        Json::String(s) => format!("{s:?}"),
        Json::Number(n) => match ndarc_json::safe_integer(*n) {
            Some(i) => i.to_string(),
            None => n.to_string(),
        },
        Json::Object(_) => "a blob".to_string(),
        other => other.type_name().to_string(),
    };
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(80).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The items of a row part line, parsed.
fn items<'l>(plan: &Plan, bytes: &'l [u8]) -> Option<ndarc_json::Parsed<'l>> {
    ndarc_json::parse_with(bytes, plan.json).ok()
}

impl Integrity {
    /// Reads the foreign keys of `m`, reporting to `lr` each one SQLite
    /// refuses (`foreign_key_mismatch`, at the child's `sql`). `Err` when
    /// SQLite cannot open its database.
    pub fn new(m: &Manifest, lr: &mut LineReport<'_>) -> Result<Integrity, String> {
        let schema = foreign_keys(m).map_err(|e| e.to_string())?;
        for u in schema.unchecked.iter().filter(|u| u.mismatch) {
            lr.add(
                Code::ForeignKeyMismatch,
                &format!("/tables/{}/sql", u.child),
                format!(
                    "the foreign key {} cannot be checked, and a database with foreign_keys=ON refuses every change to table {}: {}",
                    u.key, m.tables[u.child].name, u.why
                ),
            );
        }
        let mut roles = vec![Roles::default(); m.tables.len()];
        for (k, key) in schema.keys.iter().enumerate() {
            roles[key.table].parents.push((k, key.columns.clone()));
        }
        for (f, fk) in schema.foreign_keys.iter().enumerate() {
            roles[fk.child].children.push((f, fk.columns.clone()));
        }
        Ok(Integrity { schema, roles })
    }

    /// Whether the rows of table `t` are read.
    pub fn reads(&self, t: usize) -> bool {
        self.roles
            .get(t)
            .is_some_and(|r| !r.parents.is_empty() || !r.children.is_empty())
    }

    /// The keys of the rows `items` of table `t`.
    pub fn scan(&self, t: usize, table: &str, items: &[Json<'_>]) -> Keys {
        let mut keys = Keys {
            table: t,
            ..Keys::default()
        };
        let Some(roles) = self.roles.get(t) else {
            return keys;
        };
        let values = |row: &Json<'_>, cols: &[String]| -> Option<Vec<Value>> {
            cols.iter().map(|c| row.get(c).and_then(cell)).collect()
        };
        for (i, item) in items.iter().enumerate() {
            if item.get("table").and_then(Json::as_str) != Some(table) {
                continue;
            }
            keys.rows += 1;
            let Some(row) = item.get("row") else { continue };
            let index = item
                .get("index")
                .and_then(Json::as_safe_integer)
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(0);
            let at = (i, index);
            self.add_row(&mut keys, &roles.parents, &roles.children, at, |cols| {
                values(row, cols)
            });
        }
        keys
    }

    /// Adds one row's parent keys and references to `keys`: `parents` and
    /// `children` name each key's columns (by name, or by position in the
    /// line's spans), `value` reads them; `(item, index)` place the row.
    fn add_row<C>(
        &self,
        keys: &mut Keys,
        parents: &[(usize, C)],
        children: &[(usize, C)],
        (item, index): (usize, u64),
        value: impl Fn(&C) -> Option<Vec<Value>>,
    ) {
        for (k, cols) in parents {
            let key = &self.schema.keys[*k];
            if let Some(d) = value(cols).and_then(|v| parent_digest(key, &v)) {
                keys.parents.push((*k, d));
            }
        }
        for (f, cols) in children {
            let key = &self.schema.keys[self.schema.foreign_keys[*f].key];
            if let Some(d) = value(cols).and_then(|v| child_digest(key, &v)) {
                keys.children.push(Reference {
                    fk: *f,
                    digest: d,
                    item,
                    index,
                });
            }
        }
    }
}

impl Integrity {
    /// [`scan`](Self::scan) of a line the fast path accepted, from its
    /// `spans` (rows in item order, their `index` from `first` on): each
    /// cell a key needs is read from its own text, the line is not parsed.
    pub fn scan_spans(
        &self,
        plan: &Plan,
        t: usize,
        at: LineRef<'_>,
        spans: &RowSpans,
        first: u64,
    ) -> Keys {
        let mut keys = Keys {
            table: t,
            rows: spans.rows.len() as u64,
            ..Keys::default()
        };
        let (Some(roles), Some(tp)) = (self.roles.get(t), plan.tables.get(t)) else {
            return keys;
        };
        let n = tp.columns.len();
        let at_cols = |cols: &[String]| -> Option<Vec<usize>> {
            cols.iter()
                .map(|c| tp.columns.iter().position(|x| x.name == *c))
                .collect()
        };
        let parents: Vec<(usize, Vec<usize>)> = roles
            .parents
            .iter()
            .filter_map(|(k, cols)| Some((*k, at_cols(cols)?)))
            .collect();
        let children: Vec<(usize, Vec<usize>)> = roles
            .children
            .iter()
            .filter_map(|(f, cols)| Some((*f, at_cols(cols)?)))
            .collect();
        let value = |r: usize, c: usize| -> Option<Value> {
            let &(a, b) = spans.cells.get(r * n + c)?;
            let text = at.bytes.get(a as usize..b as usize)?;
            cell(&ndarc_json::parse(text).ok()?)
        };
        let values = |r: usize, cols: &[usize]| -> Option<Vec<Value>> {
            cols.iter().map(|&c| value(r, c)).collect()
        };
        for r in 0..spans.rows.len() {
            let at = (r, first + r as u64);
            self.add_row(&mut keys, &parents, &children, at, |cols| values(r, cols));
        }
        keys
    }
}

/// The parent keys seen so far, and the references with no parent (see
/// the module documentation).
#[derive(Debug)]
pub struct Checker {
    integrity: Arc<Integrity>,
    /// Each parent key's digests.
    sets: Vec<HashSet<Digest16>>,
    /// Rows read per table.
    rows: Vec<u64>,
    /// Lines whose references wait for their parents: (line, offset,
    /// table).
    deferred: Vec<(u64, u64, usize)>,
    /// Findings kept, at most `max`, and how many more.
    found: Vec<Finding>,
    more: u64,
    max: usize,
}

impl Checker {
    /// A checker for the archive `integrity` was read from, keeping at
    /// most `max` findings.
    pub fn new(integrity: Arc<Integrity>, m: &Manifest, max: usize) -> Checker {
        Checker {
            sets: vec![HashSet::new(); integrity.schema.keys.len()],
            rows: vec![0; m.tables.len()],
            integrity,
            deferred: Vec::new(),
            found: Vec::new(),
            more: 0,
            max: max.max(1),
        }
    }

    /// Whether every row of table `t` is in (`m` says how many it has).
    fn complete(&self, m: &Manifest, t: usize) -> bool {
        self.rows.get(t).copied().unwrap_or(0) >= m.tables.get(t).map_or(0, |x| x.count)
    }

    /// Adds the keys of the line `at` (of the manifest `m`'s archive).
    pub fn add(&mut self, m: &Manifest, plan: &Plan, keys: Keys, at: LineRef<'_>) {
        if let Some(n) = self.rows.get_mut(keys.table) {
            *n += keys.rows;
        }
        for (k, d) in &keys.parents {
            self.sets[*k].insert(*d);
        }
        if keys.children.is_empty() {
            return;
        }
        let schema = &self.integrity.schema;
        let ready = keys
            .children
            .iter()
            .all(|r| self.complete(m, schema.foreign_keys[r.fk].parent));
        if ready {
            self.check(m, plan, &keys.children, at, None);
        } else {
            self.deferred.push((at.line, at.offset, keys.table));
        }
    }

    /// Checks the references `refs` of the line `at`; `parsed` is the
    /// line's parse when the caller has it.
    fn check(
        &mut self,
        m: &Manifest,
        plan: &Plan,
        refs: &[Reference],
        at: LineRef<'_>,
        parsed: Option<&[Json<'_>]>,
    ) {
        let schema = &self.integrity.schema;
        let orphans: Vec<&Reference> = refs
            .iter()
            .filter(|r| !self.sets[schema.foreign_keys[r.fk].key].contains(&r.digest))
            .collect();
        if orphans.is_empty() {
            return;
        }
        // The line is parsed again only to show an orphan's values.
        let own;
        let items = match parsed {
            Some(items) => items,
            None => {
                own = items(plan, at.bytes);
                own.as_ref()
                    .and_then(|p| p.value.get("items"))
                    .and_then(Json::as_array)
                    .unwrap_or(&[])
            }
        };
        let mut locator = ndarc_json::Locator::new(at.bytes);
        for r in orphans {
            if self.found.len() >= self.max {
                self.more += 1;
                continue;
            }
            let fk = &schema.foreign_keys[r.fk];
            let (child, parent) = (&m.tables[fk.child].name, &m.tables[fk.parent].name);
            let row = items.get(r.item).and_then(|i| i.get("row"));
            let pairs = |cols: &[String]| {
                cols.iter()
                    .zip(&fk.columns)
                    .map(|(c, own)| {
                        let v = row.and_then(|row| row.get(own)).map_or("?".into(), show);
                        format!("{c} = {v}")
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let pointer = format!("/items/{}/row/{}", r.item, token(&fk.columns[0]));
            let rel = locator.locate(&pointer).unwrap_or(0);
            self.found.push(Finding::new(
                Code::ForeignKeyViolation,
                at.line,
                at.offset + rel as u64,
                pointer,
                format!(
                    "row {} of table {child} has {}, but table {parent} has no row with {} (foreign key {child}({}) REFERENCES {parent}({})): a database with foreign_keys=ON refuses it; add the {parent} row, correct the value, or set it to null",
                    r.index,
                    pairs(&fk.columns),
                    pairs(&fk.parent_columns),
                    fk.columns.join(", "),
                    fk.parent_columns.join(", "),
                ),
            ));
        }
    }

    /// Ends, once every row was read: reads the deferred lines again
    /// (`reread(line, offset)` gives a line's bytes) and checks their
    /// references, then reports every `foreign_key_violation` to `c`, in
    /// archive order. `Err` when a line cannot be read again.
    pub fn finish(
        mut self,
        m: &Manifest,
        plan: &Plan,
        c: &mut Collector,
        reread: &mut dyn FnMut(u64, u64) -> Result<(Vec<u8>, u64), Finding>,
    ) -> Result<(), String> {
        for (line, offset, t) in std::mem::take(&mut self.deferred) {
            let (bytes, _) = reread(line, offset).map_err(|f| f.message)?;
            let at = LineRef {
                line,
                offset,
                bytes: &bytes,
            };
            let Some(parsed) = items(plan, &bytes) else {
                continue;
            };
            let list = parsed
                .value
                .get("items")
                .and_then(Json::as_array)
                .unwrap_or(&[]);
            let keys = self.integrity.clone().scan(t, &m.tables[t].name, list);
            self.check(m, plan, &keys.children, at, Some(list));
        }
        self.found.sort_by_key(|f| (f.line, f.offset));
        for f in self.found {
            c.push(f);
        }
        c.dropped(self.more);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Keys;
    use crate::{verify_bytes, Code, Options, PushOutcome, PushVerifier};

    const BASE: &[u8] = include_bytes!("../../../testdata/valid/base.ndjson");
    const BOTH: &[u8] =
        include_bytes!("../../../testdata/invalid/foreign_key_violation-both.ndjson");

    fn options(max_errors: usize, jobs: usize) -> Options {
        Options {
            max_errors,
            jobs,
            integrity: true,
            ..Options::default()
        }
    }

    fn found(r: &crate::Report) -> Vec<(Code, u64, String)> {
        r.findings
            .iter()
            .map(|f| (f.code, f.line, f.pointer.clone()))
            .collect()
    }

    #[test]
    fn orphans_in_file_order_whatever_the_jobs() {
        let want = vec![
            (
                Code::ForeignKeyViolation,
                2,
                "/items/0/row/user_id".to_string(),
            ),
            (
                Code::ForeignKeyViolation,
                2,
                "/items/2/row/user_id".to_string(),
            ),
        ];
        for jobs in [1, 2] {
            let r = verify_bytes(BOTH, &options(100, jobs));
            assert_eq!(found(&r), want, "jobs {jobs}");
            assert!(r.unchecked.is_none());
            assert!(
                r.findings[0].message.contains("user_id = 4"),
                "{}",
                r.findings[0].message
            );
            // Without --integrity the archive is valid.
            let plain = verify_bytes(
                BOTH,
                &Options {
                    jobs,
                    ..Options::default()
                },
            );
            assert!(plain.is_valid(true), "{:?}", plain.findings);
        }
        let r = verify_bytes(BASE, &options(100, 2));
        assert!(r.is_valid(true), "{:?}", r.findings);
    }

    /// A line's keys are the same read from its spans as from its parse.
    #[test]
    fn spans_and_parse_give_the_same_keys() {
        use ndarc_format::part::{check_line_spans, Body, RowSpans};
        use ndarc_format::{LineRef, Plan};
        let text = std::str::from_utf8(BOTH).unwrap();
        let lines: Vec<&[u8]> = text.lines().map(str::as_bytes).collect();
        let read = crate::read_manifest(
            LineRef {
                line: 1,
                offset: 0,
                bytes: lines[0],
            },
            &options(100, 1),
        );
        let integrity = read.rules.integrity.clone().unwrap();
        let plan = Plan::new(read.manifest.unwrap());
        let mut compared = 0;
        for (k, bytes) in lines.iter().enumerate().skip(1) {
            let at = LineRef {
                line: k as u64 + 1,
                offset: 0,
                bytes,
            };
            let mut spans = RowSpans::default();
            let s = check_line_spans(&plan, at, &mut spans);
            let Body::Rows(rows) = &s.body else { continue };
            assert_eq!(spans.table, Some(rows.table), "line {}", k + 1);
            let a = integrity.scan_spans(&plan, rows.table, at, &spans, rows.first_index.unwrap());
            let v = ndarc_json::parse(bytes).unwrap();
            let items = v.get("items").and_then(|i| i.as_array()).unwrap();
            let b = integrity.scan(rows.table, &plan.manifest.tables[rows.table].name, items);
            assert_eq!((a.table, a.rows, &a.parents), (b.table, b.rows, &b.parents));
            let refs = |k: &Keys| -> Vec<(usize, [u8; 16], usize, u64)> {
                k.children
                    .iter()
                    .map(|r| (r.fk, r.digest, r.item, r.index))
                    .collect()
            };
            assert_eq!(refs(&a), refs(&b));
            compared += a.parents.len() + a.children.len();
        }
        // users' two keys, notes' three references (one null).
        assert_eq!(compared, 4);
    }

    #[test]
    fn past_the_error_limit_orphans_are_counted() {
        let r = verify_bytes(BOTH, &options(1, 1));
        assert_eq!(found(&r).len(), 1);
        assert_eq!(r.errors, 2);
    }

    #[test]
    fn the_push_api_checks_parts_in_any_order() {
        let text = std::str::from_utf8(BOTH).unwrap();
        let lines: Vec<&[u8]> = text.lines().map(str::as_bytes).collect();
        let parts = &lines[1..lines.len() - 1];
        let mut v = PushVerifier::new(lines[0], &options(100, 1)).unwrap();
        // The users part (the parents) after the notes part: accepted, the
        // orphans known only at the end.
        for (i, p) in parts.iter().enumerate().rev() {
            assert!(
                matches!(v.add_part(i as u64, p), PushOutcome::Accepted(_)),
                "part {i}"
            );
        }
        let r = v.finish(lines[lines.len() - 1], |_| None);
        assert_eq!(
            found(&r),
            [
                (
                    Code::ForeignKeyViolation,
                    2,
                    "/items/0/row/user_id".to_string()
                ),
                (
                    Code::ForeignKeyViolation,
                    2,
                    "/items/2/row/user_id".to_string()
                ),
            ]
        );
        // A part never arrived: no row is called an orphan.
        let mut v = PushVerifier::new(lines[0], &options(100, 1)).unwrap();
        for (i, p) in parts.iter().enumerate().skip(2) {
            assert!(matches!(v.add_part(i as u64, p), PushOutcome::Accepted(_)));
        }
        assert!(matches!(v.add_part(0, parts[0]), PushOutcome::Accepted(_)));
        let r = v.finish(lines[lines.len() - 1], |_| None);
        assert!(r.codes().contains(&Code::PartMissing), "{:?}", r.codes());
        assert!(
            !r.codes().contains(&Code::ForeignKeyViolation),
            "{:?}",
            r.codes()
        );
    }

    #[test]
    fn a_manifest_with_errors_leaves_the_rows_unchecked() {
        // Its tables' sql is never run, even in a private database.
        let bad: &[u8] = include_bytes!("../../../testdata/invalid/table_sql.ndjson");
        let r = verify_bytes(bad, &options(100, 1));
        assert!(r.codes().contains(&Code::TableSql), "{:?}", r.codes());
        assert!(
            r.unchecked
                .as_deref()
                .is_some_and(|u| u.contains("manifest has errors")),
            "{:?}",
            r.unchecked
        );
        assert!(!r.codes().contains(&Code::ForeignKeyViolation));
    }
}
