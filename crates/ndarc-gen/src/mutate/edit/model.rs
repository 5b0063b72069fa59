//! An archive as records ([`Model`]): the manifest, the part lines and the
//! closing as JSON values (so that a mutation can write what no valid
//! archive holds), with the typed manifest of ndarc-format's intake; read
//! from a file, written back as text, and edited through its accessors.

use ndarc_format::{
    check_manifest_line, LineRef, LineReport, Manifest, ManifestOptions, ManifestOutcome,
};
use ndarc_json::{cmp_utf16, Value};

use super::values::{arr_mut, n, obj, obj_mut, s, str_at, Need, Obj, R, V};
use crate::error::lines;

/// An archive as records: the manifest, the part lines, the closing (what
/// the mutations edit), and the typed manifest (where they find targets).
#[derive(Debug, Clone)]
pub(in crate::mutate) struct Model {
    pub(in crate::mutate) manifest: Obj,
    /// `manifest` typed, by ndarc-format's intake: where the mutations find
    /// their targets. Read from the manifest line, and again after a helper
    /// adds a table or binary (`refresh`).
    pub(super) typed: Manifest,
    pub(in crate::mutate) parts: Vec<V>,
    pub(in crate::mutate) closing: Obj,
}

/// The typed manifest of `line` (a manifest line's bytes),
/// by ndarc-format's intake; its findings do not matter here (a
/// mutation may be half done), only whether it can be read at all. The
/// archive's own `format` identifier is accepted: which ones a verifier
/// reads is its option, not the mutator's.
fn intake(line: &[u8]) -> R<Manifest> {
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
        formats: Vec::new(),
        any_format: true,
    };
    match check_manifest_line(line, canonical, &mut report, &options) {
        ManifestOutcome::Read(m) => Ok(*m),
        ManifestOutcome::Fatal => Err("the manifest cannot be read".to_string()),
    }
}

impl Model {
    pub(in crate::mutate) fn parse(input: &[u8]) -> R<Model> {
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
        let typed = intake(raw[0])?;
        Ok(Model {
            manifest,
            typed,
            parts: it.collect(),
            closing,
        })
    }
    /// Reads the typed manifest again from `manifest`, after a table or
    /// binary was added.
    pub(super) fn refresh(&mut self) -> R<()> {
        let line = ndarc_json::to_canonical_vec(&Value::Object(self.manifest.clone()));
        self.typed = intake(&line)?;
        Ok(())
    }
    /// The typed manifest (as of the last addition of a table or binary).
    pub(in crate::mutate) fn typed(&self) -> &Manifest {
        &self.typed
    }
    pub(in crate::mutate) fn tables_mut(&mut self) -> R<&mut Vec<V>> {
        arr_mut(&mut self.manifest, "tables").need("the manifest has no tables list")
    }
    pub(in crate::mutate) fn table_mut(&mut self, t: usize) -> R<&mut Obj> {
        self.tables_mut()?
            .get_mut(t)
            .and_then(obj_mut)
            .need("no such table")
    }
    pub(in crate::mutate) fn columns_mut(&mut self, t: usize) -> R<&mut Vec<V>> {
        arr_mut(self.table_mut(t)?, "columns").need("the table has no columns list")
    }
    pub(in crate::mutate) fn column_mut(&mut self, t: usize, c: usize) -> R<&mut Obj> {
        self.columns_mut(t)?
            .get_mut(c)
            .and_then(obj_mut)
            .need("no such column")
    }
    pub(in crate::mutate) fn items_mut(&mut self, p: usize) -> R<&mut Vec<V>> {
        let part = self
            .parts
            .get_mut(p)
            .and_then(obj_mut)
            .need("no such part")?;
        arr_mut(part, "items").need("the part has no items")
    }
    pub(in crate::mutate) fn item_mut(&mut self, p: usize, i: usize) -> R<&mut Obj> {
        self.items_mut(p)?
            .get_mut(i)
            .and_then(obj_mut)
            .need("no such item")
    }
    pub(in crate::mutate) fn item(&self, p: usize, i: usize) -> Option<&V> {
        self.parts.get(p)?.get("items")?.as_array()?.get(i)
    }
    /// Swaps the member `k` of the items at `a` and `b`.
    pub(in crate::mutate) fn swap_member(
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
    pub(in crate::mutate) fn row_mut(&mut self, at: (usize, usize)) -> R<&mut Obj> {
        let item = self.item_mut(at.0, at.1)?;
        item.get_mut("row")
            .and_then(obj_mut)
            .need("the item has no row")
    }
    /// Sets each part's `index` to its position (records that are not parts
    /// are left alone).
    pub(in crate::mutate) fn renumber(&mut self) {
        for (i, p) in self.parts.iter_mut().enumerate() {
            if let Value::Object(o) = p {
                if o.get("kind").and_then(Value::as_str) == Some("part") {
                    o.insert("index", n(i as i64));
                }
            }
        }
    }
    pub(in crate::mutate) fn insert_part(&mut self, at: usize, items: Vec<V>) -> usize {
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
    pub(in crate::mutate) fn part_kind(&self, p: usize) -> Option<&str> {
        self.item(p, 0).and_then(|i| str_at(i, "kind"))
    }
    /// Where the next object's parts go: before the first payload part.
    pub(super) fn object_insert_point(&self) -> usize {
        (0..self.parts.len())
            .find(|&p| self.part_kind(p) == Some("payload"))
            .unwrap_or(self.parts.len())
    }
    /// Where the rows of a new table `name` go: rows come table by table in
    /// name order, so before the first rows part of a table that sorts
    /// after it.
    pub(in crate::mutate) fn rows_at(&self, name: &str) -> usize {
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
    pub(in crate::mutate) fn rows_end(&self) -> usize {
        (0..self.parts.len())
            .rev()
            .find(|&p| self.part_kind(p) == Some("row"))
            .map_or(0, |p| p + 1)
    }

    /// The archive as text: each record canonical, on its own line.
    pub(super) fn to_text(&self) -> Vec<u8> {
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
