//! What the mutations edit, and how an edit becomes a file: an archive as
//! records ([`Model`]: the manifest, the part lines and the closing, as JSON
//! values, so that a mutation can write what no valid archive holds), the
//! typed manifest of ndarc-format's intake, through which the mutations
//! find their targets ([`Tab`], [`Col`], [`Bin`]: its tables, columns and
//! binaries with their indexes in the JSON and the parts that hold their
//! rows or chunks), the helpers that build values, and [`Edit`]: what a
//! mutation changed, the reseal that follows, byte edits after sealing and
//! the line of the expected finding.

use std::borrow::Cow;
use std::ops::Deref;
use std::ptr;

use ndarc_format::catalogue::{
    cmp_payload_names, decode_base64, encode_base64, rowid_alias, ROWID_ALIASES,
};
use ndarc_format::framing::RawLines;
use ndarc_format::hash::{hex, sha256};
use ndarc_format::manifest::{Column, Table};
use ndarc_format::{
    check_manifest_line, ArchiveHasher, Code, LineRef, LineReport, Manifest, ManifestOptions,
    ManifestOutcome,
};
use ndarc_json::{cmp_utf16, Object, Value};

use crate::error::lines;
use crate::reseal::{reseal_with, ResealOptions};
use crate::rng::Rng;

pub(super) type V = Value<'static>;
pub(super) type Obj = Object<'static>;
pub(super) type R<T> = Result<T, String>;

// --------------------------------------------------------------- model

/// An archive as records: the manifest, the part lines, the closing (what
/// the mutations edit), and the typed manifest (where they find targets).
#[derive(Debug, Clone)]
pub(super) struct Model {
    pub(super) manifest: Obj,
    /// `manifest` typed, by ndarc-format's intake: where the mutations find
    /// their targets. Read from the manifest line, and again after a helper
    /// adds a table or binary (`refresh`).
    typed: Manifest,
    pub(super) parts: Vec<V>,
    pub(super) closing: Obj,
}

pub(super) fn obj_mut(v: &mut V) -> Option<&mut Obj> {
    match v {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

pub(super) fn arr_mut<'a>(o: &'a mut Obj, k: &str) -> Option<&'a mut Vec<V>> {
    match o.get_mut(k)? {
        Value::Array(a) => Some(a),
        _ => None,
    }
}

pub(super) fn arr<'a>(o: &'a Obj, k: &str) -> &'a [V] {
    o.get(k).and_then(Value::as_array).unwrap_or(&[])
}

pub(super) fn str_at<'a>(v: &'a V, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

pub(super) fn int_at(v: &V, k: &str) -> Option<i64> {
    v.get(k).and_then(Value::as_safe_integer)
}

pub(super) fn s(x: impl Into<String>) -> V {
    Value::String(Cow::Owned(x.into()))
}

pub(super) fn n(x: i64) -> V {
    Value::from(x)
}

pub(super) fn obj(members: Vec<(&'static str, V)>) -> V {
    let mut o = Object::new();
    for (k, v) in members {
        o.insert(k, v);
    }
    Value::Object(o)
}

pub(super) trait Need<T> {
    fn need(self, what: &str) -> R<T>;
}

impl<T> Need<T> for Option<T> {
    fn need(self, what: &str) -> R<T> {
        self.ok_or_else(|| what.to_string())
    }
}

pub(super) fn pick<T: Clone>(v: &[T], rng: &mut Rng, what: &str) -> R<T> {
    if v.is_empty() {
        return Err(what.to_string());
    }
    Ok(v[rng.below(v.len() as u64) as usize].clone())
}

/// A column of a [`Tab`]: the typed column (its derivations, such as
/// [`Column::affinity`], are ndarc-format's), its index in the table's
/// `columns` and whether `excludedColumns` lists it.
#[derive(Debug, Clone)]
pub(super) struct Col {
    pub(super) idx: usize,
    pub(super) column: Column,
    pub(super) excluded: bool,
}

impl Deref for Col {
    type Target = Column;
    fn deref(&self) -> &Column {
        &self.column
    }
}

impl Col {
    pub(super) fn writable(&self) -> bool {
        self.generated.is_none() && !self.excluded
    }
}

/// A table of the typed manifest, with its index in `tables` (of the
/// typed manifest and of the JSON alike), its columns as [`Col`]s and where
/// its rows are: `(part, item)` in archive order.
#[derive(Debug, Clone)]
pub(super) struct Tab {
    pub(super) idx: usize,
    pub(super) table: Table,
    pub(super) cols: Vec<Col>,
    pub(super) rows: Vec<(usize, usize)>,
}

impl Deref for Tab {
    type Target = Table;
    fn deref(&self) -> &Table {
        &self.table
    }
}

impl Tab {
    pub(super) fn has_pk(&self) -> bool {
        self.cols.iter().any(|c| c.pk > 0)
    }
    /// The primary key's columns in key order ([`Table::primary_key`]).
    pub(super) fn pk_cols(&self) -> Vec<&Col> {
        self.table
            .primary_key()
            .into_iter()
            .filter_map(|k| {
                let i = self.table.columns.iter().position(|c| ptr::eq(c, k))?;
                self.cols.get(i)
            })
            .collect()
    }
    /// Writable columns outside the primary key: safe to change without
    /// touching row keys.
    pub(super) fn plain_cols(&self) -> Vec<&Col> {
        self.cols
            .iter()
            .filter(|c| c.writable() && c.pk == 0)
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinKind {
    Object,
    Payload,
}

impl BinKind {
    pub(super) fn member(self) -> &'static str {
        match self {
            BinKind::Object => "objects",
            BinKind::Payload => "payloads",
        }
    }
    pub(super) fn word(self) -> &'static str {
        match self {
            BinKind::Object => "object",
            BinKind::Payload => "payload",
        }
    }
}

/// An object or payload of the typed manifest: which list and where in it,
/// its name for messages, its size, and the parts that hold its chunks.
#[derive(Debug, Clone)]
pub(super) struct Bin {
    pub(super) kind: BinKind,
    pub(super) idx: usize,
    pub(super) label: String,
    pub(super) size: i64,
    pub(super) parts: Vec<usize>,
}

/// The typed manifest of `line` (a manifest line's bytes, `manifest` its
/// value), by ndarc-format's intake; its findings do not matter here (a
/// mutation may be half done), only whether it can be read at all. The
/// archive's own `format` identifier is accepted: which ones a verifier
/// reads is its option, not the mutator's.
fn intake(line: &[u8], manifest: &Obj) -> R<Manifest> {
    let canonical = ndarc_json::validate_with(line, Default::default())
        .map_err(|e| format!("the manifest is not JSON: {}", e.message()))?
        .is_none();
    let at = LineRef {
        line: 1,
        offset: 0,
        bytes: line,
    };
    let mut report = LineReport::new(at, 1);
    let options = ManifestOptions {
        formats: manifest
            .get("format")
            .and_then(Value::as_str)
            .map(str::to_string)
            .into_iter()
            .collect(),
    };
    match check_manifest_line(line, canonical, &mut report, &options) {
        ManifestOutcome::Read(m) => Ok(*m),
        ManifestOutcome::Fatal => Err("the manifest cannot be read".to_string()),
    }
}

impl Model {
    pub(super) fn parse(input: &[u8]) -> R<Model> {
        let (raw, _) = lines(input);
        if raw.len() < 2 {
            return Err("the archive has no manifest and closing line".to_string());
        }
        let mut values = Vec::with_capacity(raw.len());
        for (i, l) in raw.iter().enumerate() {
            let v = ndarc_json::parse(l)
                .map_err(|e| format!("line {}: not JSON: {e}", i + 1))?
                .into_owned();
            values.push(v);
        }
        let closing = match values.pop() {
            Some(Value::Object(o)) if o.get("kind").and_then(Value::as_str) == Some("closing") => o,
            _ => return Err("the last line is not a closing record".to_string()),
        };
        let mut it = values.into_iter();
        let manifest = match it.next() {
            Some(Value::Object(o)) if o.get("kind").and_then(Value::as_str) == Some("manifest") => {
                o
            }
            _ => return Err("the first line is not a manifest".to_string()),
        };
        let typed = intake(raw[0], &manifest)?;
        Ok(Model {
            manifest,
            typed,
            parts: it.collect(),
            closing,
        })
    }

    /// Reads the typed manifest again from `manifest`, after a table or
    /// binary was added.
    fn refresh(&mut self) -> R<()> {
        let line = ndarc_json::to_canonical_vec(&Value::Object(self.manifest.clone()));
        self.typed = intake(&line, &self.manifest)?;
        Ok(())
    }

    /// The typed manifest (as of the last addition of a table or binary).
    pub(super) fn typed(&self) -> &Manifest {
        &self.typed
    }

    pub(super) fn tables_mut(&mut self) -> R<&mut Vec<V>> {
        arr_mut(&mut self.manifest, "tables").need("the manifest has no tables list")
    }

    pub(super) fn table_mut(&mut self, t: usize) -> R<&mut Obj> {
        self.tables_mut()?
            .get_mut(t)
            .and_then(obj_mut)
            .need("no such table")
    }

    pub(super) fn columns_mut(&mut self, t: usize) -> R<&mut Vec<V>> {
        arr_mut(self.table_mut(t)?, "columns").need("the table has no columns list")
    }

    pub(super) fn column_mut(&mut self, t: usize, c: usize) -> R<&mut Obj> {
        self.columns_mut(t)?
            .get_mut(c)
            .and_then(obj_mut)
            .need("no such column")
    }

    pub(super) fn items_mut(&mut self, p: usize) -> R<&mut Vec<V>> {
        let part = self
            .parts
            .get_mut(p)
            .and_then(obj_mut)
            .need("no such part")?;
        arr_mut(part, "items").need("the part has no items")
    }

    pub(super) fn item_mut(&mut self, p: usize, i: usize) -> R<&mut Obj> {
        self.items_mut(p)?
            .get_mut(i)
            .and_then(obj_mut)
            .need("no such item")
    }

    pub(super) fn item(&self, p: usize, i: usize) -> Option<&V> {
        self.parts.get(p)?.get("items")?.as_array()?.get(i)
    }

    /// Swaps the member `k` of the items at `a` and `b`.
    pub(super) fn swap_member(
        &mut self,
        a: (usize, usize),
        b: (usize, usize),
        k: &'static str,
    ) -> R<()> {
        let get = |m: &Model, at: (usize, usize)| {
            m.item(at.0, at.1).and_then(|i| i.get(k)).cloned().need("")
        };
        let (va, vb) = (get(self, a)?, get(self, b)?);
        self.item_mut(a.0, a.1)?.insert(k, vb);
        self.item_mut(b.0, b.1)?.insert(k, va);
        Ok(())
    }

    pub(super) fn row_mut(&mut self, at: (usize, usize)) -> R<&mut Obj> {
        let item = self.item_mut(at.0, at.1)?;
        item.get_mut("row")
            .and_then(obj_mut)
            .need("the item has no row")
    }

    pub(super) fn entries_mut(&mut self, kind: BinKind) -> R<&mut Vec<V>> {
        arr_mut(&mut self.manifest, kind.member()).need("the manifest has no binaries list")
    }

    pub(super) fn entry_mut(&mut self, kind: BinKind, i: usize) -> R<&mut Obj> {
        self.entries_mut(kind)?
            .get_mut(i)
            .and_then(obj_mut)
            .need("no such binary")
    }

    pub(super) fn tabs(&self) -> Vec<Tab> {
        let mut tabs: Vec<Tab> = self
            .typed
            .tables
            .iter()
            .enumerate()
            .map(|(idx, t)| {
                let ex = self.typed.excluded_columns_of(&t.name);
                let cols = t
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(ci, c)| Col {
                        idx: ci,
                        excluded: ex.contains(&c.name),
                        column: c.clone(),
                    })
                    .collect();
                Tab {
                    idx,
                    table: t.clone(),
                    cols,
                    rows: Vec::new(),
                }
            })
            .collect();
        for (p, part) in self.parts.iter().enumerate() {
            let items = part.get("items").and_then(Value::as_array).unwrap_or(&[]);
            for (i, item) in items.iter().enumerate() {
                if str_at(item, "kind") != Some("row") {
                    continue;
                }
                let Some(t) = str_at(item, "table") else {
                    continue;
                };
                if let Some(tab) = tabs.iter_mut().find(|x| x.name == t) {
                    tab.rows.push((p, i));
                }
            }
        }
        tabs
    }

    pub(super) fn bins(&self) -> Vec<Bin> {
        let objects = self.typed.objects.iter().map(|o| {
            (
                BinKind::Object,
                format!("{}/{}", o.bucket, o.key),
                o.size,
                Chunk::Object(&o.bucket, &o.key),
            )
        });
        let payloads = self.typed.payloads.iter().map(|p| {
            (
                BinKind::Payload,
                p.name.clone(),
                p.size,
                Chunk::Payload(&p.name),
            )
        });
        let mut out = Vec::new();
        let mut next = [0, 0];
        for (kind, label, size, chunk) in objects.chain(payloads) {
            let idx = &mut next[kind as usize];
            let parts = self
                .parts
                .iter()
                .enumerate()
                .filter(|(_, p)| {
                    let items = p.get("items").and_then(Value::as_array).unwrap_or(&[]);
                    items.len() == 1 && chunk.holds(&items[0])
                })
                .map(|(i, _)| i)
                .collect();
            out.push(Bin {
                kind,
                idx: *idx,
                label,
                size: i64::try_from(size).unwrap_or(i64::MAX),
                parts,
            });
            *idx += 1;
        }
        out
    }

    /// The bytes of a binary, from its chunks.
    pub(super) fn bin_bytes(&self, b: &Bin) -> Vec<u8> {
        let mut out = Vec::new();
        for &p in &b.parts {
            if let Some(d) = self.item(p, 0).and_then(|i| str_at(i, "data")) {
                out.extend(decode_base64(d).unwrap_or_default());
            }
        }
        out
    }

    /// Sets each part's `index` to its position (records that are not parts
    /// are left alone).
    pub(super) fn renumber(&mut self) {
        for (i, p) in self.parts.iter_mut().enumerate() {
            if let Value::Object(o) = p {
                if o.get("kind").and_then(Value::as_str) == Some("part") {
                    o.insert("index", n(i as i64));
                }
            }
        }
    }

    pub(super) fn insert_part(&mut self, at: usize, items: Vec<V>) -> usize {
        let at = at.min(self.parts.len());
        self.parts.insert(
            at,
            obj(vec![
                ("kind", s("part")),
                ("index", n(0)),
                ("items", Value::Array(items)),
            ]),
        );
        self.renumber();
        at
    }

    pub(super) fn part_kind(&self, p: usize) -> Option<&str> {
        self.item(p, 0).and_then(|i| str_at(i, "kind"))
    }

    /// Where the next object's parts go: before the first payload part.
    fn object_insert_point(&self) -> usize {
        (0..self.parts.len())
            .find(|&p| self.part_kind(p) == Some("payload"))
            .unwrap_or(self.parts.len())
    }

    /// Where the rows of a new table `name` go: rows come table by table in
    /// name order, so before the first rows part of a table that sorts
    /// after it.
    pub(super) fn rows_at(&self, name: &str) -> usize {
        (0..self.parts.len())
            .find(|&p| {
                self.part_kind(p) == Some("row")
                    && self
                        .item(p, 0)
                        .and_then(|i| str_at(i, "table"))
                        .is_some_and(|t| cmp_utf16(t, name).is_gt())
            })
            .unwrap_or_else(|| self.rows_end())
    }

    /// Where rows of a table that sorts last would go: after the last rows
    /// part.
    pub(super) fn rows_end(&self) -> usize {
        (0..self.parts.len())
            .rev()
            .find(|&p| self.part_kind(p) == Some("row"))
            .map_or(0, |p| p + 1)
    }

    /// The names of the tables and of the excluded tables.
    pub(super) fn all_table_names(&self) -> Vec<String> {
        let t = &self.typed;
        t.tables
            .iter()
            .map(|t| t.name.clone())
            .chain(t.excluded_tables.iter().cloned())
            .collect()
    }

    /// `base`, or `base_2`, `base_3` … : a table name no table or excluded
    /// table has, ignoring ASCII case.
    pub(super) fn fresh_table_name(&self, base: &str) -> String {
        let taken = self.all_table_names();
        let mut k = 1;
        loop {
            let name = if k == 1 {
                base.to_string()
            } else {
                format!("{base}_{k}")
            };
            if !taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) {
                return name;
            }
            k += 1;
        }
    }

    /// Adds a table without rows at its place in name order; returns its
    /// index.
    pub(super) fn add_table(&mut self, name: &str, columns: Vec<V>, sql: String) -> R<usize> {
        let names: Vec<&str> = columns.iter().filter_map(|c| str_at(c, "name")).collect();
        let any_pk = columns.iter().any(|c| int_at(c, "pk").unwrap_or(0) > 0);
        let alias = match rowid_alias(names.iter().copied(), any_pk) {
            Ok(Some(a)) => s(a),
            _ => Value::Null,
        };
        let table = obj(vec![
            ("name", s(name)),
            ("sql", s(sql)),
            ("columns", Value::Array(columns)),
            ("dependencies", Value::Array(Vec::new())),
            ("rowidAlias", alias),
            ("count", n(0)),
        ]);
        let at = self
            .typed
            .tables
            .iter()
            .position(|t| cmp_utf16(&t.name, name).is_gt())
            .unwrap_or(self.typed.tables.len());
        let tables = self.tables_mut()?;
        tables.insert(at.min(tables.len()), table);
        self.refresh()?;
        Ok(at)
    }

    /// Adds a one-column table without rows (`x TEXT`); returns its index.
    pub(super) fn add_plain_table(&mut self, base: &str) -> R<usize> {
        let name = self.fresh_table_name(base);
        let sql = format!("CREATE TABLE \"{name}\" (x TEXT)");
        self.add_table(&name, vec![col("x", "TEXT", 0, 0)], sql)
    }

    /// Adds a payload whose name sorts after every other (producer order)
    /// with `data` in one chunk, in a part at the end; returns its index.
    pub(super) fn add_last_payload(&mut self, data: &[u8]) -> R<usize> {
        let names = self
            .bins()
            .into_iter()
            .filter(|b| b.kind == BinKind::Payload)
            .map(|b| b.label)
            .collect::<Vec<_>>();
        // `last + "~"` sorts after `last` and after everything before it:
        // "~" is above the "," that the producer's sort key puts after a
        // name.
        let name = match names.iter().max_by(|a, b| cmp_payload_names(a, b)) {
            Some(last) => format!("{last}~"),
            None => "ndarc-mutant".to_string(),
        };
        let entry = obj(vec![
            ("name", s(name.clone())),
            ("size", n(data.len() as i64)),
            ("sha256", s(hex(&sha256(data)))),
        ]);
        let list = self.entries_mut(BinKind::Payload)?;
        list.push(entry);
        let idx = list.len() - 1;
        let item = obj(vec![
            ("kind", s("payload")),
            ("name", s(name)),
            ("offset", n(0)),
            ("data", s(encode_base64(data))),
        ]);
        let end = self.parts.len();
        self.insert_part(end, vec![item]);
        self.refresh()?;
        Ok(idx)
    }

    /// Adds an object whose bucket sorts after every other, with `data` in
    /// one chunk, its part after the last object part; returns its index.
    pub(super) fn add_last_object(&mut self, key: &str, data: &[u8]) -> R<usize> {
        let buckets = self.typed.objects.iter().map(|o| &o.bucket);
        let bucket = match buckets.max_by(|a, b| cmp_utf16(a, b)) {
            Some(last) => format!("{last}~"),
            None => "ndarc-mutant".to_string(),
        };
        let entry = obj(vec![
            ("bucket", s(bucket.clone())),
            ("key", s(key)),
            ("size", n(data.len() as i64)),
            ("sha256", s(hex(&sha256(data)))),
            (
                "httpMetadata",
                obj(vec![("contentType", s("application/octet-stream"))]),
            ),
            ("customMetadata", Value::Object(Object::new())),
        ]);
        let list = self.entries_mut(BinKind::Object)?;
        list.push(entry);
        let idx = list.len() - 1;
        let item = obj(vec![
            ("kind", s("object")),
            ("bucket", s(bucket)),
            ("key", s(key)),
            ("offset", n(0)),
            ("data", s(encode_base64(data))),
        ]);
        let at = self.object_insert_point();
        self.insert_part(at, vec![item]);
        self.refresh()?;
        Ok(idx)
    }

    /// Binaries with at least one byte; adds a payload when there is none.
    pub(super) fn nonempty_bins(&mut self, rng: &mut Rng) -> R<Vec<Bin>> {
        let v: Vec<Bin> = self
            .bins()
            .into_iter()
            .filter(|b| b.size > 0 && !b.parts.is_empty())
            .collect();
        if !v.is_empty() {
            return Ok(v);
        }
        let data = some_bytes(rng, 3, 40);
        self.add_last_payload(&data)?;
        Ok(self
            .bins()
            .into_iter()
            .filter(|b| b.size > 0 && !b.parts.is_empty())
            .collect())
    }

    /// Some binary; adds a payload when there is none.
    pub(super) fn some_bin(&mut self, rng: &mut Rng) -> R<Bin> {
        let all: Vec<Bin> = self
            .bins()
            .into_iter()
            .filter(|b| !b.parts.is_empty())
            .collect();
        if !all.is_empty() {
            return pick(&all, rng, "no binary");
        }
        let data = some_bytes(rng, 1, 40);
        let idx = self.add_last_payload(&data)?;
        self.bins()
            .into_iter()
            .find(|b| b.kind == BinKind::Payload && b.idx == idx)
            .need("no binary")
    }

    /// The index of some object; adds one when there is none.
    pub(super) fn some_object(&mut self, rng: &mut Rng) -> R<usize> {
        let k = self.typed.objects.len();
        if k > 0 {
            return Ok(rng.below(k as u64) as usize);
        }
        let data = some_bytes(rng, 1, 40);
        self.add_last_object("ndarc-mutant.bin", &data)
    }

    /// Some table, or a new empty one.
    pub(super) fn some_table(&mut self, rng: &mut Rng) -> R<Tab> {
        let tabs = self.tabs();
        self.table_or_new(&tabs, rng, "ndarc_mutant")
    }

    /// The table at `idx`.
    pub(super) fn tab(&self, idx: usize) -> R<Tab> {
        self.tabs().into_iter().nth(idx).need("no table")
    }

    /// One of `tables`, or a new empty table (named after `base`) when
    /// there is none.
    pub(super) fn table_or_new(&mut self, tables: &[Tab], rng: &mut Rng, base: &str) -> R<Tab> {
        if !tables.is_empty() {
            return pick(tables, rng, "no table");
        }
        let i = self.add_plain_table(base)?;
        self.tab(i)
    }

    /// One of `columns`, or the column of a new empty table when there is
    /// none.
    pub(super) fn column_or_new(&mut self, columns: &[(Tab, Col)], rng: &mut Rng) -> R<(Tab, Col)> {
        if !columns.is_empty() {
            return pick(columns, rng, "no column");
        }
        let i = self.add_plain_table("ndarc_mutant")?;
        let t = self.tab(i)?;
        let c = t.cols.first().cloned().need("no column")?;
        Ok((t, c))
    }

    /// Sets each table's `count` to its rows in parts that hold rows of that
    /// table only (what a verifier counts when a part mixes tables).
    pub(super) fn count_rows_by_part(&mut self) -> R<()> {
        let tabs = self.tabs();
        for t in &tabs {
            let k = t
                .rows
                .iter()
                .filter(|&&(p, _)| {
                    self.item(p, 0).and_then(|i| str_at(i, "table")) == Some(t.name.as_str())
                })
                .count();
            self.table_mut(t.idx)?.insert("count", n(k as i64));
        }
        Ok(())
    }
}

/// A binary, as its chunks name it.
#[derive(Clone, Copy)]
enum Chunk<'a> {
    Object(&'a str, &'a str),
    Payload(&'a str),
}

impl Chunk<'_> {
    /// Whether `item` is a chunk of this binary.
    fn holds(self, item: &V) -> bool {
        match self {
            Chunk::Object(bucket, key) => {
                str_at(item, "kind") == Some("object")
                    && str_at(item, "bucket") == Some(bucket)
                    && str_at(item, "key") == Some(key)
            }
            Chunk::Payload(name) => {
                str_at(item, "kind") == Some("payload") && str_at(item, "name") == Some(name)
            }
        }
    }
}

pub(super) fn col(name: &str, ty: &str, notnull: i64, pk: i64) -> V {
    obj(vec![
        ("name", s(name)),
        ("type", s(ty)),
        ("notnull", n(notnull)),
        ("pk", n(pk)),
    ])
}

/// `lo` to `lo + span - 1` random bytes.
pub(super) fn some_bytes(rng: &mut Rng, lo: usize, span: u64) -> Vec<u8> {
    let len = lo + rng.below(span) as usize;
    random_bytes(rng, len)
}

pub(super) fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// `name` with the case of its ASCII letters swapped; `None` when it has
/// none.
pub(super) fn flip_case(name: &str) -> Option<String> {
    if !name.bytes().any(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    Some(
        name.chars()
            .map(|c| {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect(),
    )
}

/// A column name the table does not have (ignoring ASCII case).
pub(super) fn fresh_col_name(t: &Tab, base: &str) -> String {
    let mut k = 1;
    loop {
        let name = if k == 1 {
            base.to_string()
        } else {
            format!("{base}_{k}")
        };
        if !t.cols.iter().any(|c| c.name.eq_ignore_ascii_case(&name))
            && !ROWID_ALIASES.iter().any(|a| a.eq_ignore_ascii_case(&name))
        {
            return name;
        }
        k += 1;
    }
}

pub(super) fn sorted_utf16(v: &mut [String]) {
    v.sort_by(|a, b| cmp_utf16(a, b));
}

pub(super) fn strings(v: &[String]) -> V {
    Value::Array(v.iter().map(|x| s(x.clone())).collect())
}

// ----------------------------------------------------------------- edits

/// Where the expected finding is, resolved after the edit.
#[derive(Debug, Clone, Copy)]
pub(super) enum At {
    Manifest,
    Part(usize),
    Closing,
    /// An explicit line number of the final file.
    Line(u64),
}

type LinesEdit = Box<dyn FnOnce(&mut Vec<Vec<u8>>) -> R<()>>;
type BytesEdit = Box<dyn FnOnce(&mut Vec<u8>) -> R<()>>;

/// What a mutation did, and how to finish the file.
pub(super) struct Edit {
    pub(super) at: At,
    what: String,
    pub(super) seal: ResealOptions,
    pub(super) also: Vec<Code>,
    pub(super) allow: Vec<Code>,
    /// Byte edits of the manifest and part lines after sealing; archiveHash
    /// is then recomputed over the lines as edited.
    pub(super) lines: Option<LinesEdit>,
    /// A byte edit of the closing line (after archiveHash).
    pub(super) closing: Option<BytesEdit>,
    /// An edit of the whole file, last.
    pub(super) frame: Option<BytesEdit>,
    /// The archive whose rows a verifier hashes into contentHash, when it
    /// is not the mutant's own (rows it cannot place — of an unknown table,
    /// in another table's part — are left out, as the verifier does).
    content: Option<Box<Model>>,
}

impl Edit {
    pub(super) fn new(at: At, what: impl Into<String>) -> Edit {
        Edit {
            at,
            what: what.into(),
            seal: ResealOptions::default(),
            also: Vec::new(),
            allow: Vec::new(),
            lines: None,
            closing: None,
            frame: None,
            content: None,
        }
    }
    pub(super) fn content_of(mut self, m: Model) -> Edit {
        self.content = Some(Box::new(m));
        self
    }
    pub(super) fn seal(mut self, f: impl FnOnce(&mut ResealOptions)) -> Edit {
        f(&mut self.seal);
        self
    }
    pub(super) fn also(mut self, codes: &[Code]) -> Edit {
        self.also.extend_from_slice(codes);
        self
    }
    pub(super) fn allow(mut self, codes: &[Code]) -> Edit {
        self.allow.extend_from_slice(codes);
        self
    }
    /// Edits line `k` (0-based: 0 is the manifest) after sealing.
    pub(super) fn line(mut self, k: usize, f: impl FnOnce(&[u8]) -> R<Vec<u8>> + 'static) -> Edit {
        self.lines = Some(Box::new(move |ls: &mut Vec<Vec<u8>>| {
            let l = ls.get_mut(k).need("no such line")?;
            *l = f(l)?;
            Ok(())
        }));
        self
    }
    pub(super) fn closing_bytes(mut self, f: impl FnOnce(&mut Vec<u8>) -> R<()> + 'static) -> Edit {
        self.closing = Some(Box::new(f));
        self
    }
    /// Edits the closing record (after both hashes are computed).
    pub(super) fn closing_value(self, f: impl FnOnce(&mut Obj) + 'static) -> Edit {
        self.closing_bytes(move |l| {
            let mut v = ndarc_json::parse(l)
                .map_err(|e| e.to_string())?
                .into_owned();
            f(obj_mut(&mut v).need("the closing is not an object")?);
            *l = ndarc_json::to_canonical_vec(&v);
            Ok(())
        })
    }
    pub(super) fn frame(mut self, f: impl FnOnce(&mut Vec<u8>) -> R<()> + 'static) -> Edit {
        self.frame = Some(Box::new(f));
        self
    }
}

type Rendered = (Vec<u8>, u64, String, Vec<Code>, Vec<Code>);

impl Model {
    fn to_text(&self) -> Vec<u8> {
        let mut text = Vec::new();
        let mut push = |v: &V| {
            text.extend(ndarc_json::to_canonical_vec(v));
            text.push(b'\n');
        };
        push(&Value::Object(self.manifest.clone()));
        for p in &self.parts {
            push(p);
        }
        push(&Value::Object(self.closing.clone()));
        text
    }
}

fn closing_member(sealed: &[u8], member: &str) -> R<String> {
    let (raw, _) = lines(sealed);
    let last = raw.last().need("no closing line")?;
    let v = ndarc_json::parse(last).map_err(|e| e.to_string())?;
    str_at(&v.into_owned(), member)
        .map(str::to_string)
        .need("no such member in the closing")
}

fn set_closing_member(line: &mut Vec<u8>, member: &'static str, value: String) -> R<()> {
    let mut closing = ndarc_json::parse(line)
        .map_err(|e| e.to_string())?
        .into_owned();
    obj_mut(&mut closing)
        .need("the closing is not an object")?
        .insert(member, s(value));
    *line = ndarc_json::to_canonical_vec(&closing);
    Ok(())
}

pub(super) fn render(model: Model, edit: Edit) -> R<Rendered> {
    let part_count = model.parts.len();
    let sealed =
        reseal_with(&model.to_text(), edit.seal).map_err(|e| format!("cannot seal: {e}"))?;
    let (raw, _) = lines(&sealed);
    let mut ls: Vec<Vec<u8>> = raw.iter().map(|l| l.to_vec()).collect();
    if let Some(cm) = edit.content {
        let other = reseal_with(&cm.to_text(), ResealOptions::default())
            .map_err(|e| format!("cannot seal: {e}"))?;
        let hash = closing_member(&other, "contentHash")?;
        set_closing_member(ls.last_mut().need("no closing line")?, "contentHash", hash)?;
    }
    if let Some(f) = edit.lines {
        let last = ls.pop().need("no closing line")?;
        f(&mut ls)?;
        let mut h = ArchiveHasher::new();
        for l in &ls {
            h.add_line(l);
        }
        let mut last = last;
        set_closing_member(&mut last, "archiveHash", h.finish())?;
        ls.push(last);
    }
    if let Some(f) = edit.closing {
        f(ls.last_mut().need("no closing line")?)?;
    }
    let mut out = Vec::with_capacity(sealed.len() + 64);
    for l in &ls {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    if let Some(f) = edit.frame {
        f(&mut out)?;
    }
    let line = match edit.at {
        At::Manifest => 1,
        At::Part(p) => p as u64 + 2,
        At::Closing => part_count as u64 + 2,
        At::Line(l) => l,
    };
    Ok((out, line, edit.what, edit.also, edit.allow))
}

/// Byte offset of the start of line `k` (0-based) of `text`; `text.len()`
/// when there are not that many lines.
pub(super) fn line_start(text: &[u8], k: usize) -> usize {
    if k == 0 {
        return 0;
    }
    memchr_nth(text, k).map_or(text.len(), |i| i + 1)
}

/// The offset of the `k`th LF (1-based): the end of the `k`th raw line.
fn memchr_nth(text: &[u8], k: usize) -> Option<usize> {
    RawLines::new(text)
        .nth(k - 1)
        .filter(|l| l.has_lf)
        .map(|l| l.offset + l.bytes.len())
}

// ------------------------------------------------ byte edits of a line

/// The span of the first member's value when it is a number
/// (`{"epoch":769,` / `{"index":3,`).
pub(super) fn first_number(line: &[u8]) -> R<(usize, usize)> {
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .need("no member in the line")?;
    let start = colon + 1;
    let end = line[start..]
        .iter()
        .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .map_or(line.len(), |k| start + k);
    if end == start {
        return Err("the first member is not a number".to_string());
    }
    Ok((start, end))
}

/// The offset just after the opening quote of the string value of
/// `"member":"`.
pub(super) fn string_value(line: &[u8], member: &str) -> R<usize> {
    let pat = format!("\"{member}\":\"");
    let pat = pat.as_bytes();
    line.windows(pat.len())
        .position(|w| w == pat)
        .map(|i| i + pat.len())
        .need("no such string member")
}

pub(super) fn splice(line: &[u8], at: usize, remove: usize, insert: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + insert.len());
    out.extend_from_slice(&line[..at]);
    out.extend_from_slice(insert);
    out.extend_from_slice(&line[(at + remove).min(line.len())..]);
    out
}
