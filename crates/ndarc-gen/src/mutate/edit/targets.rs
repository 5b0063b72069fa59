//! Where the mutations find their targets, through the typed manifest:
//! tables ([`Tab`]) and their columns ([`Col`]), objects and payloads
//! ([`Bin`]), with their indexes in the JSON and the parts that hold their
//! rows or chunks; and the helpers that add a table or binary when an
//! archive has none to edit.

use std::ops::Deref;
use std::ptr;

use ndarc_format::catalogue::{
    cmp_payload_names, decode_base64, encode_base64, rowid_alias, ROWID_ALIASES,
};
use ndarc_format::hash::{hex, sha256};
use ndarc_format::manifest::{Column, Table};
use ndarc_json::{cmp_utf16, Object, Value};
use ndarc_sql::quote_ident;

use super::model::Model;
use super::values::{
    arr_mut, col, int_at, n, obj, obj_mut, pick, s, some_bytes, str_at, Need, Obj, R, V,
};
use crate::rng::Rng;

/// A column of a [`Tab`]: the typed column (its derivations, such as
/// [`Column::affinity`], are ndarc-format's), its index in the table's
/// `columns` and whether `excludedColumns` lists it.
#[derive(Debug, Clone)]
pub(in crate::mutate) struct Col {
    pub(in crate::mutate) idx: usize,
    pub(in crate::mutate) column: Column,
    pub(in crate::mutate) excluded: bool,
}

impl Deref for Col {
    type Target = Column;
    fn deref(&self) -> &Column {
        &self.column
    }
}

impl Col {
    pub(in crate::mutate) fn writable(&self) -> bool {
        self.generated.is_none() && !self.excluded
    }
}

/// A table of the typed manifest, with its index in `tables` (of the
/// typed manifest and of the JSON alike), its columns as [`Col`]s and where
/// its rows are: `(part, item)` in archive order.
#[derive(Debug, Clone)]
pub(in crate::mutate) struct Tab {
    pub(in crate::mutate) idx: usize,
    pub(in crate::mutate) table: Table,
    pub(in crate::mutate) cols: Vec<Col>,
    pub(in crate::mutate) rows: Vec<(usize, usize)>,
}

impl Deref for Tab {
    type Target = Table;
    fn deref(&self) -> &Table {
        &self.table
    }
}

impl Tab {
    pub(in crate::mutate) fn has_pk(&self) -> bool {
        self.cols.iter().any(|c| c.pk > 0)
    }
    /// The primary key's columns in key order ([`Table::primary_key`]).
    pub(in crate::mutate) fn pk_cols(&self) -> Vec<&Col> {
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
    pub(in crate::mutate) fn plain_cols(&self) -> Vec<&Col> {
        self.cols
            .iter()
            .filter(|c| c.writable() && c.pk == 0)
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::mutate) enum BinKind {
    Object,
    Payload,
}

impl BinKind {
    pub(in crate::mutate) fn member(self) -> &'static str {
        match self {
            BinKind::Object => "objects",
            BinKind::Payload => "payloads",
        }
    }
    pub(in crate::mutate) fn word(self) -> &'static str {
        match self {
            BinKind::Object => "object",
            BinKind::Payload => "payload",
        }
    }
}

/// An object or payload of the typed manifest: which list and where in it,
/// its name for messages, its size, and the parts that hold its chunks.
#[derive(Debug, Clone)]
pub(in crate::mutate) struct Bin {
    pub(in crate::mutate) kind: BinKind,
    pub(in crate::mutate) idx: usize,
    pub(in crate::mutate) label: String,
    pub(in crate::mutate) size: i64,
    pub(in crate::mutate) parts: Vec<usize>,
}

/// A column name the table does not have (ignoring ASCII case).
pub(in crate::mutate) fn fresh_col_name(t: &Tab, base: &str) -> String {
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

impl Model {
    pub(in crate::mutate) fn entries_mut(&mut self, kind: BinKind) -> R<&mut Vec<V>> {
        arr_mut(&mut self.manifest, kind.member()).need("the manifest has no binaries list")
    }
    pub(in crate::mutate) fn entry_mut(&mut self, kind: BinKind, i: usize) -> R<&mut Obj> {
        self.entries_mut(kind)?
            .get_mut(i)
            .and_then(obj_mut)
            .need("no such binary")
    }
    pub(in crate::mutate) fn tabs(&self) -> Vec<Tab> {
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
    pub(in crate::mutate) fn bins(&self) -> Vec<Bin> {
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
    pub(in crate::mutate) fn bin_bytes(&self, b: &Bin) -> Vec<u8> {
        let mut out = Vec::new();
        for &p in &b.parts {
            if let Some(d) = self.item(p, 0).and_then(|i| str_at(i, "data")) {
                out.extend(decode_base64(d).unwrap_or_default());
            }
        }
        out
    }
    /// Binaries with at least one byte; adds a payload when there is none.
    pub(in crate::mutate) fn nonempty_bins(&mut self, rng: &mut Rng) -> R<Vec<Bin>> {
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
    pub(in crate::mutate) fn some_bin(&mut self, rng: &mut Rng) -> R<Bin> {
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
    pub(in crate::mutate) fn some_object(&mut self, rng: &mut Rng) -> R<usize> {
        let k = self.typed.objects.len();
        if k > 0 {
            return Ok(rng.below(k as u64) as usize);
        }
        let data = some_bytes(rng, 1, 40);
        self.add_last_object("ndarc-mutant.bin", &data)
    }
    /// Some table, or a new empty one.
    pub(in crate::mutate) fn some_table(&mut self, rng: &mut Rng) -> R<Tab> {
        let tabs = self.tabs();
        self.table_or_new(&tabs, rng, "ndarc_mutant")
    }
    /// The table at `idx`.
    pub(in crate::mutate) fn tab(&self, idx: usize) -> R<Tab> {
        self.tabs().into_iter().nth(idx).need("no table")
    }
    /// One of `tables`, or a new empty table (named after `base`) when
    /// there is none.
    pub(in crate::mutate) fn table_or_new(
        &mut self,
        tables: &[Tab],
        rng: &mut Rng,
        base: &str,
    ) -> R<Tab> {
        if !tables.is_empty() {
            return pick(tables, rng, "no table");
        }
        let i = self.add_plain_table(base)?;
        self.tab(i)
    }
    /// One of `columns`, or the column of a new empty table when there is
    /// none.
    pub(in crate::mutate) fn column_or_new(
        &mut self,
        columns: &[(Tab, Col)],
        rng: &mut Rng,
    ) -> R<(Tab, Col)> {
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
    pub(in crate::mutate) fn count_rows_by_part(&mut self) -> R<()> {
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

    /// The names of the tables and of the excluded tables.
    pub(in crate::mutate) fn all_table_names(&self) -> Vec<String> {
        let t = &self.typed;
        t.tables
            .iter()
            .map(|t| t.name.clone())
            .chain(t.excluded_tables.iter().cloned())
            .collect()
    }
    /// `base`, or `base_2`, `base_3` … : a table name no table or excluded
    /// table has, ignoring ASCII case.
    pub(in crate::mutate) fn fresh_table_name(&self, base: &str) -> String {
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
    pub(in crate::mutate) fn add_table(
        &mut self,
        name: &str,
        columns: Vec<V>,
        sql: String,
    ) -> R<usize> {
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
    pub(in crate::mutate) fn add_plain_table(&mut self, base: &str) -> R<usize> {
        let name = self.fresh_table_name(base);
        let sql = format!("CREATE TABLE {} (x TEXT)", quote_ident(&name));
        self.add_table(&name, vec![col("x", "TEXT", 0, 0)], sql)
    }
    /// Adds a payload whose name sorts after every other (producer order)
    /// with `data` in one chunk, in a part at the end; returns its index.
    pub(in crate::mutate) fn add_last_payload(&mut self, data: &[u8]) -> R<usize> {
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
    pub(in crate::mutate) fn add_last_object(&mut self, key: &str, data: &[u8]) -> R<usize> {
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
}
