//! The policy's `objectReferences` (SPEC.md §15): a bucket's objects are
//! exactly the distinct non-null values of `TABLE.COLUMN`, as the
//! producer's `checkReferences` (`export.mjs`) requires. The one place of
//! this rule in ndarc-verify; the file pipeline and the push API drive it.
//!
//! - [`Refs::new`], where the manifest is read: resolves each bucket's
//!   table and column (`reference_column_missing`,
//!   `reference_column_excluded`) and indexes the bucket's objects by key.
//! - [`Refs::scan`], on any thread, beside the line check (through
//!   [`crate::rules`]): each row of a
//!   referenced table whose value is not a key of the bucket is an
//!   `object_references` finding of that line; the objects it does
//!   reference are returned.
//! - [`Seen`], in archive order: a bit per manifest object, set from what
//!   the scans return; [`Refs::finish`] reports each object of a
//!   referenced bucket that no row referenced.
//!
//! Memory is the manifest's: the keys are the manifest's own, each
//! referenced object costs an index and an offset, and [`Seen`] a bit per
//! object. Rows are never kept.

use ndarc_format::{Code, Collector, Finding, LineRef, LineReport, Manifest, Plan, Policy};
use ndarc_json::pointer_token as token;
use ndarc_json::Value;

/// One bucket's `objectReferences`, resolved against the manifest.
#[derive(Debug)]
struct Rule {
    /// The bucket's binding.
    bucket: String,
    /// The table's position in the manifest.
    table: usize,
    /// The key column.
    column: String,
    /// The bucket's objects (positions in `manifest.objects`), sorted by
    /// key bytes.
    by_key: Vec<u32>,
    /// The bucket's objects in manifest order, with the offset (in the
    /// file) of each one's `key`, for the findings of objects no row
    /// references.
    objects: Vec<(u32, u64)>,
}

/// The policy's `objectReferences` for one archive (see the module
/// documentation).
#[derive(Debug)]
pub struct Refs {
    rules: Vec<Rule>,
    /// The manifest's line number.
    line: u64,
    /// `manifest.objects.len()`, the size of a [`Seen`].
    objects: usize,
}

/// The objects referenced so far: a bit per manifest object.
#[derive(Debug, Default)]
pub struct Seen(Vec<u64>);

impl Seen {
    /// Marks the objects `hits` (positions in `manifest.objects`).
    pub fn mark(&mut self, hits: &[u32]) {
        for &i in hits {
            let (w, b) = ((i / 64) as usize, i % 64);
            if let Some(word) = self.0.get_mut(w) {
                *word |= 1 << b;
            }
        }
    }

    fn has(&self, i: u32) -> bool {
        self.0
            .get((i / 64) as usize)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

impl Refs {
    /// Resolves the policy's `objectReferences` against the manifest `m`
    /// read from the line `at`, reporting to `lr` a reference the archive
    /// cannot satisfy (`reference_column_missing`,
    /// `reference_column_excluded`). `None` when no bucket of the policy
    /// has `objectReferences`.
    pub fn new(
        m: &Manifest,
        policy: &Policy,
        at: LineRef<'_>,
        lr: &mut LineReport<'_>,
    ) -> Option<Refs> {
        let buckets = policy.buckets.as_ref()?;
        let mut rules = Vec::new();
        let mut any = false;
        for (bucket, b) in buckets {
            let Some(r) = &b.object_references else {
                continue;
            };
            any = true;
            let (t, c) = (&r.table, &r.key_column);
            let what = format!("bucket {bucket:?}: objectReferences {t}.{c}");
            let Some(ti) = m.tables.iter().position(|x| x.name == *t) else {
                match m.excluded_tables.iter().position(|x| x == t) {
                    Some(k) => lr.add(
                        Code::ReferenceColumnExcluded,
                        &format!("/excludedTables/{k}"),
                        format!("{what}: table {t} is excluded from the archive, so its rows cannot be checked; the producer refuses this configuration"),
                    ),
                    None => lr.add(
                        Code::ReferenceColumnMissing,
                        "/tables",
                        format!("{what}: the archive has no table {t}; the producer refuses this configuration"),
                    ),
                }
                continue;
            };
            let table = &m.tables[ti];
            if let Some(k) = m.excluded_columns_of(t).iter().position(|x| x == c) {
                lr.add(
                    Code::ReferenceColumnExcluded,
                    &format!("/excludedColumns/{}/{k}", token(t)),
                    format!("{what}: column {t}.{c} is an excluded (secret) column, so the rows do not carry it; the producer refuses this configuration"),
                );
                continue;
            }
            match table.columns.iter().position(|x| x.name == *c) {
                None => lr.add(
                    Code::ReferenceColumnMissing,
                    &format!("/tables/{ti}/columns"),
                    format!("{what}: table {t} has no column {c}; the producer refuses this configuration"),
                ),
                Some(j) if table.columns[j].generated.is_some() => lr.add(
                    Code::ReferenceColumnExcluded,
                    &format!("/tables/{ti}/columns/{j}/generated"),
                    format!("{what}: column {t}.{c} is generated, so the rows do not carry it"),
                ),
                Some(_) => {
                    let mut locator = ndarc_json::Locator::new(at.bytes);
                    let objects: Vec<(u32, u64)> = m
                        .objects
                        .iter()
                        .enumerate()
                        .filter(|(_, o)| o.bucket == *bucket)
                        .map(|(i, _)| {
                            let rel = locator
                                .locate(&format!("/objects/{i}/key"))
                                .unwrap_or(0);
                            (i as u32, at.offset + rel as u64)
                        })
                        .collect();
                    let mut by_key: Vec<u32> = objects.iter().map(|o| o.0).collect();
                    by_key.sort_by(|&a, &b| {
                        m.objects[a as usize]
                            .key
                            .as_bytes()
                            .cmp(m.objects[b as usize].key.as_bytes())
                    });
                    rules.push(Rule {
                        bucket: bucket.clone(),
                        table: ti,
                        column: c.clone(),
                        by_key,
                        objects,
                    });
                }
            }
        }
        any.then_some(Refs {
            rules,
            line: at.line,
            objects: m.objects.len(),
        })
    }

    /// A [`Seen`] with no object marked.
    pub fn seen(&self) -> Seen {
        Seen(vec![0; self.objects.div_ceil(64)])
    }

    /// Whether the rows of table `t` are read.
    pub fn reads(&self, t: usize) -> bool {
        self.rules.iter().any(|r| r.table == t)
    }

    /// Checks the rows `items` of table `t` (a line's, reported to `lr`):
    /// a value of a referenced column that is not a key of the bucket is
    /// an `object_references` finding. Returns the objects the rows
    /// reference (positions in `manifest.objects`), for [`Seen`].
    pub fn scan(
        &self,
        plan: &Plan,
        t: usize,
        items: &[Value<'_>],
        lr: &mut LineReport<'_>,
    ) -> Vec<u32> {
        let rules: Vec<&Rule> = self.rules.iter().filter(|r| r.table == t).collect();
        let m = &plan.manifest;
        let table = &m.tables[t].name;
        let mut hits = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if item.get("table").and_then(Value::as_str) != Some(table.as_str()) {
                continue;
            }
            let Some(row) = item.get("row") else {
                continue;
            };
            for r in &rules {
                let Some(cell) = row.get(&r.column) else {
                    continue;
                };
                let pointer = || format!("/items/{i}/row/{}", token(&r.column));
                let what = || {
                    format!(
                        "row {} of table {table} references",
                        item.get("index")
                            .and_then(Value::as_safe_integer)
                            .map_or_else(|| format!("item {i}"), |n| n.to_string())
                    )
                };
                match cell {
                    Value::Null => {}
                    Value::String(key) => {
                        let found = r.by_key.binary_search_by(|&o| {
                            m.objects[o as usize].key.as_bytes().cmp(key.as_bytes())
                        });
                        match found {
                            Ok(k) => hits.push(r.by_key[k]),
                            Err(_) => lr.add(
                                Code::ObjectReferences,
                                &pointer(),
                                format!(
                                    "{} {key:?} in {}, but bucket {:?} has no object of that key: its objects are exactly the distinct non-null values of {table}.{} (the policy's objectReferences); add the object or correct the row",
                                    what(), r.column, r.bucket, r.column
                                ),
                            ),
                        }
                    }
                    other => lr.add(
                        Code::ObjectReferences,
                        &pointer(),
                        format!(
                            "{} {} in {}, but object keys are text: no object of bucket {:?} can be it (the policy's objectReferences: {table}.{})",
                            what(),
                            other.type_name(),
                            r.column,
                            r.bucket,
                            r.column
                        ),
                    ),
                }
            }
        }
        hits
    }

    /// The objects of referenced buckets that no row referenced
    /// (`object_references`, at their `key` in the manifest), once every
    /// row was read.
    pub fn finish(&self, m: &Manifest, seen: &Seen, c: &mut Collector) {
        for r in &self.rules {
            let table = &m.tables[r.table].name;
            for &(i, offset) in &r.objects {
                if seen.has(i) {
                    continue;
                }
                c.push(Finding::new(
                    Code::ObjectReferences,
                    self.line,
                    offset,
                    format!("/objects/{i}/key"),
                    format!(
                        "object {:?} of bucket {:?} is referenced by no row of {table}.{}: the bucket's objects are exactly the distinct non-null values of that column (the policy's objectReferences); drop the object or reference it",
                        m.objects[i as usize].key, r.bucket, r.column
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{verify_bytes, Code, Options, PushOutcome, PushVerifier};

    const BASE: &[u8] = include_bytes!("../../../testdata/valid/base.ndjson");

    /// The base archive's notes.body ("first", null, "ctl…") against bucket
    /// files (greeting.txt, logo.bin): two rows reference no object, and no
    /// object is referenced.
    fn options(max_errors: usize, jobs: usize) -> Options {
        let policy = ndarc_format::Policy::from_json(
            br#"{"buckets":{"files":{"objectReferences":{"table":"notes","keyColumn":"body"}}}}"#,
        )
        .unwrap();
        Options {
            max_errors,
            jobs,
            policy: Some(Arc::new(policy)),
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
    fn both_directions_in_file_order_whatever_the_jobs() {
        let want = vec![
            (Code::ObjectReferences, 2, "/items/0/row/body".to_string()),
            (Code::ObjectReferences, 2, "/items/2/row/body".to_string()),
            (Code::ObjectReferences, 1, "/objects/0/key".to_string()),
            (Code::ObjectReferences, 1, "/objects/1/key".to_string()),
        ];
        for jobs in [1, 2] {
            let r = verify_bytes(BASE, &options(100, jobs));
            assert_eq!(found(&r), want, "jobs {jobs}");
            assert_eq!(r.errors, 4);
        }
    }

    #[test]
    fn a_stopped_verification_does_not_guess_unreferenced_objects() {
        // One error kept: the line's second is counted, and reading stops,
        // so no object is reported unreferenced.
        let r = verify_bytes(BASE, &options(1, 1));
        assert_eq!(
            found(&r),
            [(Code::ObjectReferences, 2, "/items/0/row/body".to_string())]
        );
        assert_eq!(r.errors, 2);
        assert!(r.stopped);
    }

    #[test]
    fn the_push_api_checks_both_directions() {
        let text = std::str::from_utf8(BASE).unwrap();
        let lines: Vec<&[u8]> = text.lines().map(str::as_bytes).collect();
        let mut v = PushVerifier::new(lines[0], &options(100, 1)).unwrap();
        let parts = &lines[1..lines.len() - 1];
        // The notes part references missing objects: refused.
        let PushOutcome::Rejected(f) = v.add_part(0, parts[0]) else {
            panic!("accepted");
        };
        assert_eq!(f.len(), 2);
        assert!(f.iter().all(|f| f.code == Code::ObjectReferences));
        for (i, p) in parts.iter().enumerate().skip(1) {
            assert!(matches!(v.add_part(i as u64, p), PushOutcome::Accepted(_)));
        }
        // A part never arrived: no object is reported unreferenced.
        let r = v.finish(lines[lines.len() - 1], |_| None);
        assert!(r.codes().contains(&Code::PartMissing), "{:?}", r.codes());
        assert!(
            !r.codes().contains(&Code::ObjectReferences),
            "{:?}",
            r.codes()
        );
        // Every part arrives (last first), and one object is referenced by
        // no row: reported at the end, at its key.
        let unreferenced: &[u8] =
            include_bytes!("../../../testdata/invalid/object_references-unreferenced.ndjson");
        let text = std::str::from_utf8(unreferenced).unwrap();
        let lines: Vec<&[u8]> = text.lines().map(str::as_bytes).collect();
        let mut v = PushVerifier::new(lines[0], &options(100, 1)).unwrap();
        let parts = &lines[1..lines.len() - 1];
        for (i, p) in parts.iter().enumerate().rev() {
            assert!(matches!(v.add_part(i as u64, p), PushOutcome::Accepted(_)));
        }
        let r = v.finish(lines[lines.len() - 1], |_| None);
        assert_eq!(
            found(&r),
            [(Code::ObjectReferences, 1, "/objects/1/key".to_string())]
        );
    }
}
