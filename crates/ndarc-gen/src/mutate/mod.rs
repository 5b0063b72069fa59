//! Mutants: a valid archive with exactly one rule of SPEC.md broken.
//!
//! A [`Mutation`] is one way to break one rule (one finding [`Code`]); it
//! picks its target — the table, row, column, binary, part or line — from
//! the archive's own content with a seeded [`Rng`], edits the records, and
//! re-seals what is derived from them ([`reseal_with`]: counts, `schema`,
//! `partCount`, both hashes), switching off only what must stay broken. So
//! the mutant breaks that one rule and, as far as the format allows, no
//! other: where one fault necessarily brings another (a part line that does
//! not parse loses its chunk, so the binary is also missing), the
//! [`Mutant`] lists the second code in `also`; where the format leaves a
//! consequence open, in `allow` — as the sidecars of `testdata/invalid`.
//!
//! - [`mutate`]: a mutant for one code (a seed-chosen mutation of that code
//!   among those the archive allows);
//! - [`mutate_random`]: a mutant for a seed-chosen code;
//! - [`mutations`]: every mutation, by code; [`Mutation::apply`] runs one.
//!
//! Every code a file can show has at least one mutation (all of
//! [`Code::ALL`] except [`PUSH_ONLY`]); most apply to any archive (they add
//! the table, object or payload they need when the archive has none), a
//! few need rows of a certain kind (a NOT NULL column, a primary-key table
//! with two rows …) and say [`NotApplicable`] otherwise.
//!
//! The same archive, code and seed give the same mutant, byte for byte.
//!
//! ```
//! use ndarc_format::Code;
//! let (archive, _) = ndarc_gen::generate_vec(&ndarc_gen::GenOptions::small(3)).unwrap();
//! let m = ndarc_gen::mutate(&archive, Code::RowNotNull, 7).unwrap();
//! assert_eq!(m.code, Code::RowNotNull);
//! assert!(m.line > 1);
//! assert_eq!(m.bytes, ndarc_gen::mutate(&archive, Code::RowNotNull, 7).unwrap().bytes);
//! ```

use std::borrow::Cow;
use std::fmt;

use ndarc_format::catalogue::{
    cmp_payload_names, decode_base64, encode_base64, rowid_alias, schema_identity, Affinity,
    ROWID_ALIASES,
};
use ndarc_format::hash::{hex, sha256};
use ndarc_format::{ArchiveHasher, Code};
use ndarc_json::{cmp_utf16, Object, Value};

use crate::error::lines;
use crate::reseal::{reseal_with, ResealOptions};
use crate::rng::{derive, Rng};

type V = Value<'static>;
type Obj = Object<'static>;
type R<T> = Result<T, String>;

/// Codes that only the push API (parts arriving one by one) can produce;
/// no file shows them, so no mutation makes them.
pub const PUSH_ONLY: [Code; 2] = [Code::PartConflict, Code::PartMissing];

/// The bytes a mutation adds to make a part line longer than the default
/// limit of 16 MiB (12 MiB of data are 16 MiB of base64).
const OVERSIZE_BYTES: usize = 12 * 1024 * 1024;

// ------------------------------------------------------------------ API

/// One way to break one rule.
#[derive(Clone, Copy)]
pub struct Mutation {
    /// The code of the rule it breaks: the code of the first finding a
    /// verifier must report.
    pub code: Code,
    /// A stable name, `<code>` or `<code>-<variant>` (as the files of
    /// `testdata/invalid`).
    pub name: &'static str,
    /// What it does, for a person.
    pub description: &'static str,
    apply: Apply,
}

type Apply = fn(&mut Model, &mut Rng) -> R<Edit>;

impl fmt::Debug for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutation")
            .field("code", &self.code)
            .field("name", &self.name)
            .field("description", &self.description)
            .finish()
    }
}

impl Mutation {
    /// Applies this mutation to `archive` (a valid archive's bytes), its
    /// targets chosen by `seed`.
    pub fn apply(&self, archive: &[u8], seed: u64) -> Result<Mutant, NotApplicable> {
        let not = |reason: String| NotApplicable {
            code: Some(self.code),
            mutation: Some(self.name),
            reason,
        };
        let mut model = Model::parse(archive).map_err(not)?;
        let mut rng = Rng::new(derive(seed, name_seed(self.name)));
        let edit = (self.apply)(&mut model, &mut rng).map_err(not)?;
        let (bytes, line, what, also, allow) = render(model, edit).map_err(not)?;
        Ok(Mutant {
            bytes,
            code: self.code,
            line,
            mutation: self.name,
            description: what,
            also,
            allow,
        })
    }
}

/// A mutated archive and what a verifier must report on it.
#[derive(Clone, PartialEq, Eq)]
pub struct Mutant {
    /// The archive's bytes.
    pub bytes: Vec<u8>,
    /// The code of the one rule broken.
    pub code: Code,
    /// The 1-based line of the first finding of `code` (lines counted as
    /// LF-separated lines of the file, empty ones included; for
    /// `closing_missing` the line where the closing should have been).
    pub line: u64,
    /// The [`Mutation`] that made it.
    pub mutation: &'static str,
    /// What was changed, naming the table, row, column or binary.
    pub description: String,
    /// Codes that necessarily accompany `code` (a verifier must report them
    /// too), e.g. `binary_missing` when the line of a binary's only chunk
    /// does not parse.
    pub also: Vec<Code>,
    /// Codes a verifier may also report, where the format leaves the
    /// consequence open.
    pub allow: Vec<Code>,
}

impl fmt::Debug for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutant")
            .field("code", &self.code)
            .field("line", &self.line)
            .field("mutation", &self.mutation)
            .field("description", &self.description)
            .field("also", &self.also)
            .field("allow", &self.allow)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// No mutant could be made: the archive lacks what the rule needs (no
/// primary-key table with two rows …), does not parse, or the code is one
/// no file can show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotApplicable {
    /// The code asked for, when there was one.
    pub code: Option<Code>,
    /// The mutation that was tried last, when there was one.
    pub mutation: Option<&'static str>,
    /// Why not.
    pub reason: String,
}

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(c) => write!(f, "{c}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for NotApplicable {}

/// Every mutation, in SPEC.md order of their codes.
pub fn mutations() -> &'static [Mutation] {
    MUTATIONS
}

/// The mutations of `code`.
pub fn mutations_of(code: Code) -> impl Iterator<Item = &'static Mutation> {
    MUTATIONS.iter().filter(move |m| m.code == code)
}

/// The mutation called `name`.
pub fn mutation(name: &str) -> Option<&'static Mutation> {
    MUTATIONS.iter().find(|m| m.name == name)
}

/// Every code a file can show: [`Code::ALL`] without [`PUSH_ONLY`].
pub fn file_codes() -> Vec<Code> {
    Code::ALL
        .iter()
        .copied()
        .filter(|c| !PUSH_ONLY.contains(c))
        .collect()
}

/// A mutant of `archive` (a valid archive's bytes) that breaks the rule of
/// `code`. The mutations of that code are tried in a seed-chosen order and
/// the first that applies is used; its targets are chosen by `seed` too.
pub fn mutate(archive: &[u8], code: Code, seed: u64) -> Result<Mutant, NotApplicable> {
    let mut candidates: Vec<&Mutation> = mutations_of(code).collect();
    if candidates.is_empty() {
        return Err(NotApplicable {
            code: Some(code),
            mutation: None,
            reason: if PUSH_ONLY.contains(&code) {
                "only the push API reports this code; no file shows it".to_string()
            } else {
                "no mutation makes this code".to_string()
            },
        });
    }
    let mut rng = Rng::new(derive(seed, code as u64));
    shuffle(&mut candidates, &mut rng);
    let mut last = None;
    for m in candidates {
        match m.apply(archive, rng.next_u64()) {
            Ok(mutant) => return Ok(mutant),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or(NotApplicable {
        code: Some(code),
        mutation: None,
        reason: "no mutation applies".to_string(),
    }))
}

/// A mutant of `archive` for a seed-chosen code of [`file_codes`] (the next
/// one in a seed-chosen order when a code does not apply).
pub fn mutate_random(archive: &[u8], seed: u64) -> Result<Mutant, NotApplicable> {
    let mut codes = file_codes();
    let mut rng = Rng::new(derive(seed, 0x6d75_7461_6e74));
    shuffle(&mut codes, &mut rng);
    let mut last = None;
    for code in codes {
        match mutate(archive, code, rng.next_u64()) {
            Ok(m) => return Ok(m),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or(NotApplicable {
        code: None,
        mutation: None,
        reason: "no mutation applies".to_string(),
    }))
}

fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

fn name_seed(name: &str) -> u64 {
    // FNV-1a: a stable per-mutation stream.
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

// --------------------------------------------------------------- model

/// An archive as records: the manifest, the part lines, the closing.
#[derive(Debug, Clone)]
struct Model {
    manifest: Obj,
    parts: Vec<V>,
    closing: Obj,
}

fn obj_mut(v: &mut V) -> Option<&mut Obj> {
    match v {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

fn arr_mut<'a>(o: &'a mut Obj, k: &str) -> Option<&'a mut Vec<V>> {
    match o.get_mut(k)? {
        Value::Array(a) => Some(a),
        _ => None,
    }
}

fn arr<'a>(o: &'a Obj, k: &str) -> &'a [V] {
    o.get(k).and_then(Value::as_array).unwrap_or(&[])
}

fn str_at<'a>(v: &'a V, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn int_at(v: &V, k: &str) -> Option<i64> {
    v.get(k).and_then(Value::as_safe_integer)
}

fn s(x: impl Into<String>) -> V {
    Value::String(Cow::Owned(x.into()))
}

fn n(x: i64) -> V {
    Value::from(x)
}

fn obj(members: Vec<(&'static str, V)>) -> V {
    let mut o = Object::new();
    for (k, v) in members {
        o.insert(k, v);
    }
    Value::Object(o)
}

trait Need<T> {
    fn need(self, what: &str) -> R<T>;
}

impl<T> Need<T> for Option<T> {
    fn need(self, what: &str) -> R<T> {
        self.ok_or_else(|| what.to_string())
    }
}

fn pick<T: Clone>(v: &[T], rng: &mut Rng, what: &str) -> R<T> {
    if v.is_empty() {
        return Err(what.to_string());
    }
    Ok(v[rng.below(v.len() as u64) as usize].clone())
}

/// A column, as the manifest and `excludedColumns` describe it.
#[derive(Debug, Clone)]
struct Col {
    idx: usize,
    name: String,
    ty: String,
    notnull: bool,
    pk: i64,
    generated: bool,
    excluded: bool,
}

impl Col {
    fn writable(&self) -> bool {
        !self.generated && !self.excluded
    }
    fn affinity(&self) -> Affinity {
        Affinity::of(&self.ty)
    }
}

/// A table with where its rows are: `(part, item)` in archive order.
#[derive(Debug, Clone)]
struct Tab {
    idx: usize,
    name: String,
    cols: Vec<Col>,
    alias: Option<String>,
    deps: Vec<String>,
    rows: Vec<(usize, usize)>,
}

impl Tab {
    fn has_pk(&self) -> bool {
        self.cols.iter().any(|c| c.pk > 0)
    }
    fn pk_cols(&self) -> Vec<&Col> {
        let mut v: Vec<&Col> = self.cols.iter().filter(|c| c.pk > 0).collect();
        v.sort_by_key(|c| c.pk);
        v
    }
    /// Writable columns outside the primary key: safe to change without
    /// touching row keys.
    fn plain_cols(&self) -> Vec<&Col> {
        self.cols
            .iter()
            .filter(|c| c.writable() && c.pk == 0)
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinKind {
    Object,
    Payload,
}

impl BinKind {
    fn member(self) -> &'static str {
        match self {
            BinKind::Object => "objects",
            BinKind::Payload => "payloads",
        }
    }
    fn word(self) -> &'static str {
        match self {
            BinKind::Object => "object",
            BinKind::Payload => "payload",
        }
    }
}

/// An object or payload with the parts that hold its chunks.
#[derive(Debug, Clone)]
struct Bin {
    kind: BinKind,
    idx: usize,
    label: String,
    size: i64,
    parts: Vec<usize>,
}

impl Model {
    fn parse(input: &[u8]) -> R<Model> {
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
        Ok(Model {
            manifest,
            parts: it.collect(),
            closing,
        })
    }

    fn tables_mut(&mut self) -> R<&mut Vec<V>> {
        arr_mut(&mut self.manifest, "tables").need("the manifest has no tables list")
    }

    fn table_mut(&mut self, t: usize) -> R<&mut Obj> {
        self.tables_mut()?
            .get_mut(t)
            .and_then(obj_mut)
            .need("no such table")
    }

    fn columns_mut(&mut self, t: usize) -> R<&mut Vec<V>> {
        arr_mut(self.table_mut(t)?, "columns").need("the table has no columns list")
    }

    fn column_mut(&mut self, t: usize, c: usize) -> R<&mut Obj> {
        self.columns_mut(t)?
            .get_mut(c)
            .and_then(obj_mut)
            .need("no such column")
    }

    fn items_mut(&mut self, p: usize) -> R<&mut Vec<V>> {
        let part = self
            .parts
            .get_mut(p)
            .and_then(obj_mut)
            .need("no such part")?;
        arr_mut(part, "items").need("the part has no items")
    }

    fn item_mut(&mut self, p: usize, i: usize) -> R<&mut Obj> {
        self.items_mut(p)?
            .get_mut(i)
            .and_then(obj_mut)
            .need("no such item")
    }

    fn item(&self, p: usize, i: usize) -> Option<&V> {
        self.parts.get(p)?.get("items")?.as_array()?.get(i)
    }

    fn row_mut(&mut self, at: (usize, usize)) -> R<&mut Obj> {
        let item = self.item_mut(at.0, at.1)?;
        item.get_mut("row")
            .and_then(obj_mut)
            .need("the item has no row")
    }

    fn entries_mut(&mut self, kind: BinKind) -> R<&mut Vec<V>> {
        arr_mut(&mut self.manifest, kind.member()).need("the manifest has no binaries list")
    }

    fn entry_mut(&mut self, kind: BinKind, i: usize) -> R<&mut Obj> {
        self.entries_mut(kind)?
            .get_mut(i)
            .and_then(obj_mut)
            .need("no such binary")
    }

    fn excluded_columns(&self) -> Vec<(String, Vec<String>)> {
        match self.manifest.get("excludedColumns") {
            Some(Value::Object(o)) => o
                .iter()
                .map(|(t, cols)| {
                    let cols = cols
                        .as_array()
                        .unwrap_or(&[])
                        .iter()
                        .filter_map(|c| c.as_str().map(str::to_string))
                        .collect();
                    (t.to_string(), cols)
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn names(&self, member: &str) -> Vec<String> {
        arr(&self.manifest, member)
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    }

    fn tabs(&self) -> Vec<Tab> {
        let excluded = self.excluded_columns();
        let mut tabs: Vec<Tab> = arr(&self.manifest, "tables")
            .iter()
            .enumerate()
            .map(|(idx, t)| {
                let name = str_at(t, "name").unwrap_or_default().to_string();
                let ex: &[String] = excluded
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, c)| c.as_slice())
                    .unwrap_or(&[]);
                let cols = t
                    .get("columns")
                    .and_then(Value::as_array)
                    .unwrap_or(&[])
                    .iter()
                    .enumerate()
                    .map(|(ci, c)| {
                        let cname = str_at(c, "name").unwrap_or_default().to_string();
                        Col {
                            idx: ci,
                            excluded: ex.contains(&cname),
                            name: cname,
                            ty: str_at(c, "type").unwrap_or_default().to_string(),
                            notnull: int_at(c, "notnull") == Some(1),
                            pk: int_at(c, "pk").unwrap_or(0),
                            generated: c.get("generated").is_some(),
                        }
                    })
                    .collect();
                Tab {
                    idx,
                    name,
                    cols,
                    alias: str_at(t, "rowidAlias").map(str::to_string),
                    deps: t
                        .get("dependencies")
                        .and_then(Value::as_array)
                        .unwrap_or(&[])
                        .iter()
                        .filter_map(|d| d.as_str().map(str::to_string))
                        .collect(),
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

    fn bins(&self) -> Vec<Bin> {
        let mut out = Vec::new();
        for kind in [BinKind::Object, BinKind::Payload] {
            for (idx, e) in arr(&self.manifest, kind.member()).iter().enumerate() {
                let label = match kind {
                    BinKind::Object => format!(
                        "{}/{}",
                        str_at(e, "bucket").unwrap_or_default(),
                        str_at(e, "key").unwrap_or_default()
                    ),
                    BinKind::Payload => str_at(e, "name").unwrap_or_default().to_string(),
                };
                let parts = self
                    .parts
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| {
                        let items = p.get("items").and_then(Value::as_array).unwrap_or(&[]);
                        items.len() == 1 && chunk_of(&items[0], kind, e)
                    })
                    .map(|(i, _)| i)
                    .collect();
                out.push(Bin {
                    kind,
                    idx,
                    label,
                    size: int_at(e, "size").unwrap_or(0),
                    parts,
                });
            }
        }
        out
    }

    /// The bytes of a binary, from its chunks.
    fn bin_bytes(&self, b: &Bin) -> Vec<u8> {
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
    fn renumber(&mut self) {
        for (i, p) in self.parts.iter_mut().enumerate() {
            if let Value::Object(o) = p {
                if o.get("kind").and_then(Value::as_str) == Some("part") {
                    o.insert("index", n(i as i64));
                }
            }
        }
    }

    fn insert_part(&mut self, at: usize, items: Vec<V>) -> usize {
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

    fn part_kind(&self, p: usize) -> Option<&str> {
        self.item(p, 0).and_then(|i| str_at(i, "kind"))
    }

    /// Where the next object's parts go: before the first payload part.
    fn object_insert_point(&self) -> usize {
        (0..self.parts.len())
            .find(|&p| self.part_kind(p) == Some("payload"))
            .unwrap_or(self.parts.len())
    }

    /// Where rows of a table that sorts last would go: after the last rows
    /// part.
    fn rows_end(&self) -> usize {
        (0..self.parts.len())
            .rev()
            .find(|&p| self.part_kind(p) == Some("row"))
            .map_or(0, |p| p + 1)
    }

    fn all_table_names(&self) -> Vec<String> {
        let mut v: Vec<String> = arr(&self.manifest, "tables")
            .iter()
            .filter_map(|t| str_at(t, "name").map(str::to_string))
            .collect();
        v.extend(self.names("excludedTables"));
        v
    }

    /// `base`, or `base_2`, `base_3` … : a table name no table or excluded
    /// table has, ignoring ASCII case.
    fn fresh_table_name(&self, base: &str) -> String {
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
    fn add_table(&mut self, name: &str, columns: Vec<V>, sql: String) -> R<usize> {
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
        let tables = self.tables_mut()?;
        let at = tables
            .iter()
            .position(|t| cmp_utf16(str_at(t, "name").unwrap_or_default(), name).is_gt())
            .unwrap_or(tables.len());
        tables.insert(at, table);
        Ok(at)
    }

    /// Adds a one-column table without rows (`x TEXT`); returns its index.
    fn add_plain_table(&mut self, base: &str) -> R<usize> {
        let name = self.fresh_table_name(base);
        let sql = format!("CREATE TABLE \"{name}\" (x TEXT)");
        self.add_table(&name, vec![col("x", "TEXT", 0, 0)], sql)
    }

    /// Adds a payload whose name sorts after every other (producer order)
    /// with `data` in one chunk, in a part at the end; returns its index.
    fn add_last_payload(&mut self, data: &[u8]) -> R<usize> {
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
        Ok(idx)
    }

    /// Adds an object whose bucket sorts after every other, with `data` in
    /// one chunk, its part after the last object part; returns its index.
    fn add_last_object(&mut self, key: &str, data: &[u8]) -> R<usize> {
        let buckets: Vec<String> = arr(&self.manifest, "objects")
            .iter()
            .filter_map(|o| str_at(o, "bucket").map(str::to_string))
            .collect();
        let bucket = match buckets.iter().max_by(|a, b| cmp_utf16(a, b)) {
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
        Ok(idx)
    }

    /// Binaries with at least one byte; adds a payload when there is none.
    fn nonempty_bins(&mut self, rng: &mut Rng) -> R<Vec<Bin>> {
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
    fn some_bin(&mut self, rng: &mut Rng) -> R<Bin> {
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
    fn some_object(&mut self, rng: &mut Rng) -> R<usize> {
        let k = arr(&self.manifest, "objects").len();
        if k > 0 {
            return Ok(rng.below(k as u64) as usize);
        }
        let data = some_bytes(rng, 1, 40);
        self.add_last_object("ndarc-mutant.bin", &data)
    }

    /// Some table, or a new empty one.
    fn some_table(&mut self, rng: &mut Rng) -> R<Tab> {
        let tabs = self.tabs();
        if !tabs.is_empty() {
            return pick(&tabs, rng, "no table");
        }
        let t = self.add_plain_table("ndarc_mutant")?;
        self.tabs().into_iter().nth(t).need("no table")
    }

    /// Sets each table's `count` to its rows in parts that hold rows of that
    /// table only (what a verifier counts when a part mixes tables).
    fn count_rows_by_part(&mut self) -> R<()> {
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

fn chunk_of(item: &V, kind: BinKind, entry: &V) -> bool {
    match kind {
        BinKind::Object => {
            str_at(item, "kind") == Some("object")
                && str_at(item, "bucket") == str_at(entry, "bucket")
                && str_at(item, "key") == str_at(entry, "key")
        }
        BinKind::Payload => {
            str_at(item, "kind") == Some("payload") && str_at(item, "name") == str_at(entry, "name")
        }
    }
}

fn col(name: &str, ty: &str, notnull: i64, pk: i64) -> V {
    obj(vec![
        ("name", s(name)),
        ("type", s(ty)),
        ("notnull", n(notnull)),
        ("pk", n(pk)),
    ])
}

/// `lo` to `lo + span - 1` random bytes.
fn some_bytes(rng: &mut Rng, lo: usize, span: u64) -> Vec<u8> {
    let len = lo + rng.below(span) as usize;
    random_bytes(rng, len)
}

fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// `name` with the case of its ASCII letters swapped; `None` when it has
/// none.
fn flip_case(name: &str) -> Option<String> {
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
fn fresh_col_name(t: &Tab, base: &str) -> String {
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

fn sorted_utf16(v: &mut [String]) {
    v.sort_by(|a, b| cmp_utf16(a, b));
}

fn strings(v: &[String]) -> V {
    Value::Array(v.iter().map(|x| s(x.clone())).collect())
}

// ----------------------------------------------------------------- edits

/// Where the expected finding is, resolved after the edit.
#[derive(Debug, Clone, Copy)]
enum At {
    Manifest,
    Part(usize),
    Closing,
    /// An explicit line number of the final file.
    Line(u64),
}

type LinesEdit = Box<dyn FnOnce(&mut Vec<Vec<u8>>) -> R<()>>;
type BytesEdit = Box<dyn FnOnce(&mut Vec<u8>) -> R<()>>;

/// What a mutation did, and how to finish the file.
struct Edit {
    at: At,
    what: String,
    seal: ResealOptions,
    also: Vec<Code>,
    allow: Vec<Code>,
    /// Byte edits of the manifest and part lines after sealing; archiveHash
    /// is then recomputed over the lines as edited.
    lines: Option<LinesEdit>,
    /// A byte edit of the closing line (after archiveHash).
    closing: Option<BytesEdit>,
    /// An edit of the whole file, last.
    frame: Option<BytesEdit>,
    /// The archive whose rows a verifier hashes into contentHash, when it
    /// is not the mutant's own (rows it cannot place — of an unknown table,
    /// in another table's part — are left out, as the verifier does).
    content: Option<Box<Model>>,
}

impl Edit {
    fn new(at: At, what: impl Into<String>) -> Edit {
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
    fn content_of(mut self, m: Model) -> Edit {
        self.content = Some(Box::new(m));
        self
    }
    fn seal(mut self, f: impl FnOnce(&mut ResealOptions)) -> Edit {
        f(&mut self.seal);
        self
    }
    fn also(mut self, codes: &[Code]) -> Edit {
        self.also.extend_from_slice(codes);
        self
    }
    fn allow(mut self, codes: &[Code]) -> Edit {
        self.allow.extend_from_slice(codes);
        self
    }
    /// Edits line `k` (0-based: 0 is the manifest) after sealing.
    fn line(mut self, k: usize, f: impl FnOnce(&[u8]) -> R<Vec<u8>> + 'static) -> Edit {
        self.lines = Some(Box::new(move |ls: &mut Vec<Vec<u8>>| {
            let l = ls.get_mut(k).need("no such line")?;
            *l = f(l)?;
            Ok(())
        }));
        self
    }
    fn closing_bytes(mut self, f: impl FnOnce(&mut Vec<u8>) -> R<()> + 'static) -> Edit {
        self.closing = Some(Box::new(f));
        self
    }
    /// Edits the closing record (after both hashes are computed).
    fn closing_value(self, f: impl FnOnce(&mut Obj) + 'static) -> Edit {
        self.closing_bytes(move |l| {
            let mut v = ndarc_json::parse(l)
                .map_err(|e| e.to_string())?
                .into_owned();
            f(obj_mut(&mut v).need("the closing is not an object")?);
            *l = ndarc_json::to_canonical_vec(&v);
            Ok(())
        })
    }
    fn frame(mut self, f: impl FnOnce(&mut Vec<u8>) -> R<()> + 'static) -> Edit {
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

fn render(model: Model, edit: Edit) -> R<Rendered> {
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
fn line_start(text: &[u8], k: usize) -> usize {
    if k == 0 {
        return 0;
    }
    memchr_nth(text, k).map_or(text.len(), |i| i + 1)
}

fn memchr_nth(text: &[u8], k: usize) -> Option<usize> {
    text.iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(k - 1)
        .map(|(i, _)| i)
}

// ------------------------------------------------ byte edits of a line

/// The span of the first member's value when it is a number
/// (`{"epoch":769,` / `{"index":3,`).
fn first_number(line: &[u8]) -> R<(usize, usize)> {
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
fn string_value(line: &[u8], member: &str) -> R<usize> {
    let pat = format!("\"{member}\":\"");
    let pat = pat.as_bytes();
    line.windows(pat.len())
        .position(|w| w == pat)
        .map(|i| i + pat.len())
        .need("no such string member")
}

fn splice(line: &[u8], at: usize, remove: usize, insert: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + insert.len());
    out.extend_from_slice(&line[..at]);
    out.extend_from_slice(insert);
    out.extend_from_slice(&line[(at + remove).min(line.len())..]);
    out
}

// ------------------------------------------- JSON-level: target lines

/// A line for a JSON-level fault: the manifest (verification stops there,
/// so it is the only finding) or the part of a binary held in one chunk
/// (whose chunk is then lost: `binary_missing` too). Returns the 0-based
/// line, where to expect the finding, the string member to edit, the
/// codes that come along, and a label.
fn json_target(m: &Model, rng: &mut Rng) -> (usize, At, &'static str, Vec<Code>, String) {
    let mut candidates: Vec<(usize, String)> = vec![(0, "the manifest".to_string())];
    for b in m.bins() {
        if b.parts.len() == 1 {
            candidates.push((
                b.parts[0] + 1,
                format!("the part of {} {:?}", b.kind.word(), b.label),
            ));
        }
    }
    let (k, label) = candidates[rng.below(candidates.len() as u64) as usize].clone();
    if k == 0 {
        (0, At::Manifest, "sourceIdentity", Vec::new(), label)
    } else {
        (k, At::Part(k - 1), "data", vec![Code::BinaryMissing], label)
    }
}

fn json_edit(
    m: &Model,
    rng: &mut Rng,
    what: &str,
    f: impl FnOnce(&[u8], &'static str) -> R<Vec<u8>> + 'static,
) -> R<Edit> {
    let (k, at, member, also, label) = json_target(m, rng);
    Ok(Edit::new(at, format!("{what} in {label} (line {})", k + 1))
        .also(&also)
        .line(k, move |l| f(l, member)))
}

fn json_syntax_comma(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "a trailing comma before the last }", |l, _| {
        let last = l.len().checked_sub(1).need("empty line")?;
        Ok(splice(l, last, 0, b","))
    })
}

fn json_syntax_nan(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "NaN for the first number", |l, _| {
        let (a, b) = first_number(l)?;
        Ok(splice(l, a, b - a, b"NaN"))
    })
}

fn json_syntax_leading_zero(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "a leading zero on the first number", |l, _| {
        let (a, _) = first_number(l)?;
        let at = if l[a] == b'-' { a + 1 } else { a };
        Ok(splice(l, at, 0, b"0"))
    })
}

fn json_syntax_control(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "a raw U+0001 inside a string", |l, member| {
        Ok(splice(l, string_value(l, member)?, 0, b"\x01"))
    })
}

fn json_syntax_truncated(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "the last } cut off", |l, _| {
        Ok(l[..l.len().saturating_sub(1)].to_vec())
    })
}

fn json_invalid_utf8(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (bytes, what): (&'static [u8], &str) = match rng.below(3) {
        0 => (b"\xff", "a byte FF (never UTF-8)"),
        1 => (b"\xc0\xaf", "an overlong encoding C0 AF of /"),
        _ => (
            b"\xed\xa0\x80",
            "a UTF-8-encoded surrogate ED A0 80 (CESU-8)",
        ),
    };
    json_edit(
        m,
        rng,
        &format!("{what} inside a string"),
        move |l, member| Ok(splice(l, string_value(l, member)?, 0, bytes)),
    )
}

fn json_bom(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "a byte-order mark at the start", |l, _| {
        Ok(splice(l, 0, 0, b"\xef\xbb\xbf"))
    })
}

fn json_duplicate_member(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(
        m,
        rng,
        "the first member written twice with the same value (last-wins parsers see nothing)",
        |l, _| {
            let (_, end) = first_number(l)?;
            let mut dup = b",".to_vec();
            dup.extend_from_slice(&l[1..end]);
            Ok(splice(l, end, 0, &dup))
        },
    )
}

fn json_lone_surrogate(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (esc, what): (&'static [u8], &str) = match rng.below(3) {
        0 => (b"\\ud800", "a lone high surrogate \\ud800"),
        1 => (b"\\udc00", "a lone low surrogate \\udc00"),
        _ => (b"\\udc00\\ud800", "a reversed pair \\udc00\\ud800"),
    };
    json_edit(
        m,
        rng,
        &format!("{what} inside a string"),
        move |l, member| Ok(splice(l, string_value(l, member)?, 0, esc)),
    )
}

fn json_number_range(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let lit: &'static [u8] = if rng.one_in(2) { b"1e400" } else { b"-1e400" };
    let what = format!(
        "{} (beyond a double) for the first number",
        String::from_utf8_lossy(lit)
    );
    json_edit(m, rng, &what, move |l, _| {
        let (a, b) = first_number(l)?;
        Ok(splice(l, a, b - a, lit))
    })
}

fn json_depth(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(
        m,
        rng,
        "the first number inside 64 nested arrays (depth 65 with the record)",
        |l, _| {
            let (a, b) = first_number(l)?;
            let mut v = vec![b'['; 64];
            v.extend_from_slice(&l[a..b]);
            v.extend(std::iter::repeat(b']').take(64));
            Ok(splice(l, a, b - a, &v))
        },
    )
}

// -------------------------------------------------------------- framing

/// A line of the archive, 0-based, among manifest, parts and closing.
fn any_line(m: &Model, rng: &mut Rng) -> usize {
    rng.below(m.parts.len() as u64 + 2) as usize
}

fn describe_line(m: &Model, k: usize) -> String {
    if k == 0 {
        "the manifest (line 1)".to_string()
    } else if k == m.parts.len() + 1 {
        format!("the closing (line {})", k + 1)
    } else {
        format!("part {} (line {})", k - 1, k + 1)
    }
}

/// Edits line `k` (any line, the closing included) after sealing.
fn edit_any_line(
    e: Edit,
    m: &Model,
    k: usize,
    f: impl FnOnce(&[u8]) -> R<Vec<u8>> + 'static,
) -> Edit {
    if k == m.parts.len() + 1 {
        e.closing_bytes(move |l| {
            *l = f(l)?;
            Ok(())
        })
    } else {
        e.line(k, f)
    }
}

fn not_canonical_space(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = any_line(m, rng);
    let e = Edit::new(
        At::Line(k as u64 + 1),
        format!(
            "a space after the first colon of {}; archiveHash covers it as written",
            describe_line(m, k)
        ),
    );
    Ok(edit_any_line(e, m, k, |l| {
        let colon = l.iter().position(|&b| b == b':').need("no colon")?;
        Ok(splice(l, colon + 1, 0, b" "))
    }))
}

fn not_canonical_number(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = rng.below(m.parts.len() as u64 + 1) as usize;
    let e = Edit::new(
        At::Line(k as u64 + 1),
        format!(
            "the first number of {} written with .0",
            describe_line(m, k)
        ),
    );
    Ok(e.line(k, |l| {
        let (_, b) = first_number(l)?;
        Ok(splice(l, b, 0, b".0"))
    }))
}

fn not_canonical_escape(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = any_line(m, rng);
    let e = Edit::new(
        At::Line(k as u64 + 1),
        format!(
            "the first letter of the kind of {} escaped as \\u00XX",
            describe_line(m, k)
        ),
    );
    Ok(edit_any_line(e, m, k, |l| {
        let at = string_value(l, "kind")?;
        let c = *l.get(at).need("empty kind")?;
        Ok(splice(l, at, 1, format!("\\u{:04x}", c).as_bytes()))
    }))
}

fn empty_line(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let total = m.parts.len() + 2;
    let k = rng.below(total as u64 + 1) as usize;
    let what = if k == total {
        "an empty line after the closing".to_string()
    } else {
        format!("an empty line before {}", describe_line(m, k))
    };
    Ok(Edit::new(At::Line(k as u64 + 1), what).frame(move |text| {
        let at = line_start(text, k);
        text.insert(at, b'\n');
        Ok(())
    }))
}

fn carriage_return_closing(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let _ = m;
    Ok(
        Edit::new(At::Closing, "the closing line ends with CR LF").closing_bytes(|l| {
            l.push(b'\r');
            Ok(())
        }),
    )
}

fn carriage_return_line(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = rng.below(m.parts.len() as u64 + 1) as usize;
    Ok(Edit::new(
        At::Line(k as u64 + 1),
        format!(
            "{} ends with CR LF; archiveHash covers the CR (SPEC §7.1: the bytes as they are)",
            describe_line(m, k)
        ),
    )
    .line(k, |l| {
        let mut l = l.to_vec();
        l.push(b'\r');
        Ok(l)
    }))
}

fn missing_final_newline(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let _ = m;
    Ok(
        Edit::new(At::Closing, "the LF after the closing line removed").frame(|text| {
            text.pop();
            Ok(())
        }),
    )
}

fn missing_final_newline_truncated(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let k = m.parts.len() + 1;
    Ok(Edit::new(
        At::Closing,
        "a download cut in the middle of the closing line",
    )
    .also(&[Code::JsonSyntax, Code::ClosingMissing])
    .allow(&[Code::PartCountMismatch])
    .frame(move |text| {
        let start = line_start(text, k);
        let len = text.len() - start;
        text.truncate(start + len / 2);
        Ok(())
    }))
}

fn line_too_long(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let seed = rng.next_u64();
    // Cheap, deterministic, incompressible enough: a repeated random block.
    let block = random_bytes(&mut Rng::new(seed), 4096);
    let data: Vec<u8> = block.iter().copied().cycle().take(OVERSIZE_BYTES).collect();
    let idx = m.add_last_payload(&data)?;
    let name = str_at(&arr(&m.manifest, "payloads")[idx], "name")
        .unwrap_or_default()
        .to_string();
    let p = m.parts.len() - 1;
    Ok(Edit::new(
        At::Part(p),
        format!(
            "a new payload {name:?} of {OVERSIZE_BYTES} bytes in one chunk: its part line is over 16 MiB"
        ),
    )
    .also(&[Code::BinaryMissing]))
}

fn trailing_data(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let closing_line = m.parts.len() as u64 + 2;
    let variant = rng.below(if m.parts.is_empty() { 2 } else { 3 });
    let (what, copy): (String, Option<usize>) = match variant {
        0 => ("the closing line repeated after itself".to_string(), None),
        1 => (
            "a line that is not JSON after the closing".to_string(),
            None,
        ),
        _ => {
            let p = rng.below(m.parts.len() as u64) as usize;
            (format!("part {p} repeated after the closing"), Some(p + 1))
        }
    };
    let mut e = Edit::new(At::Line(closing_line + 1), what);
    if variant == 1 {
        e = e.allow(&[Code::JsonSyntax]);
    }
    Ok(e.frame(move |text| {
        let line: Vec<u8> = match (variant, copy) {
            (1, _) => b"garbage after the end".to_vec(),
            (_, Some(k)) => {
                let a = line_start(text, k);
                let b = line_start(text, k + 1);
                text[a..b.saturating_sub(1)].to_vec()
            }
            _ => {
                let a = line_start(text, closing_line as usize - 1);
                text[a..text.len() - 1].to_vec()
            }
        };
        text.extend_from_slice(&line);
        text.push(b'\n');
        Ok(())
    }))
}

fn manifest_missing(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let _ = m;
    match rng.below(3) {
        0 => Ok(
            Edit::new(At::Line(1), "the manifest line removed").frame(|text| {
                let at = line_start(text, 1);
                text.drain(..at);
                Ok(())
            }),
        ),
        1 => Ok(Edit::new(At::Line(1), "an empty file").frame(|text| {
            text.clear();
            Ok(())
        })),
        _ => Ok(
            Edit::new(At::Line(1), "the manifest line replaced by []").frame(|text| {
                let at = line_start(text, 1);
                text.splice(..at, b"[]\n".iter().copied());
                Ok(())
            }),
        ),
    }
}

fn closing_missing(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let k = m.parts.len() + 1;
    Ok(Edit::new(
        At::Closing,
        format!(
            "the closing line removed (the file ends after line {}); the finding is at line {}",
            k,
            k + 1
        ),
    )
    .frame(move |text| {
        let at = line_start(text, k);
        text.truncate(at);
        Ok(())
    }))
}

// -------------------------------------------------------------- records

fn record_kind(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let end = m.parts.len();
    match rng.below(3) {
        0 => {
            m.parts.push(obj(vec![("kind", s("note"))]));
            Ok(Edit::new(
                At::Part(end),
                "an extra line {\"kind\":\"note\"} before the closing (partCount counts it)",
            ))
        }
        1 => {
            let p = m.insert_part(end, vec![obj(vec![("kind", s("blob")), ("data", s(""))])]);
            Ok(Edit::new(
                At::Part(p),
                "a new last part whose item's kind is \"blob\"",
            ))
        }
        _ => {
            let again = Value::Object(m.manifest.clone());
            m.parts.push(again);
            Ok(Edit::new(
                At::Part(end),
                "the manifest again as the last part line (partCount counts it)",
            ))
        }
    }
}

fn unknown_member(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let bins = m.bins();
    let mut targets = vec!["manifest", "closing"];
    if !tabs.is_empty() {
        targets.extend(["table", "column"]);
    }
    if tabs.iter().any(|t| !t.rows.is_empty()) {
        targets.push("row");
    }
    if !arr(&m.manifest, "objects").is_empty() {
        targets.push("object");
    }
    if !arr(&m.manifest, "payloads").is_empty() {
        targets.push("payload");
    }
    if !m.parts.is_empty() {
        targets.push("part");
    }
    if bins.iter().any(|b| !b.parts.is_empty()) {
        targets.push("chunk");
    }
    match pick(&targets, rng, "nothing to add a member to")? {
        "manifest" => {
            m.manifest.insert("comment", s("exported by hand"));
            Ok(Edit::new(
                At::Manifest,
                "the manifest has a member \"comment\"",
            ))
        }
        "closing" => Ok(
            Edit::new(At::Closing, "the closing has a member \"receipt\": null")
                .closing_value(|c| c.insert("receipt", Value::Null)),
        ),
        "table" => {
            let t = pick(&tabs, rng, "no table")?;
            m.table_mut(t.idx)?
                .insert("without_rowid", Value::Bool(false));
            Ok(Edit::new(
                At::Manifest,
                format!("table {:?} has a member \"without_rowid\"", t.name),
            ))
        }
        "column" => {
            let t = pick(&tabs, rng, "no table")?;
            let c = pick(&t.cols, rng, "no column")?;
            m.column_mut(t.idx, c.idx)?.insert("collation", s("NOCASE"));
            Ok(Edit::new(
                At::Manifest,
                format!("column {}.{} has a member \"collation\"", t.name, c.name),
            ))
        }
        "row" => {
            let with_rows: Vec<Tab> = tabs.into_iter().filter(|t| !t.rows.is_empty()).collect();
            let t = pick(&with_rows, rng, "no rows")?;
            let at = pick(&t.rows, rng, "no rows")?;
            m.item_mut(at.0, at.1)?
                .insert("deleted", Value::Bool(false));
            Ok(Edit::new(
                At::Part(at.0),
                format!(
                    "a row item of {:?} (part {}) has a member \"deleted\"",
                    t.name, at.0
                ),
            ))
        }
        "object" => {
            let k = rng.below(arr(&m.manifest, "objects").len() as u64) as usize;
            m.entry_mut(BinKind::Object, k)?
                .insert("etag", s("\"abc\""));
            Ok(Edit::new(
                At::Manifest,
                format!("object entry {k} has a member \"etag\""),
            ))
        }
        "payload" => {
            let k = rng.below(arr(&m.manifest, "payloads").len() as u64) as usize;
            m.entry_mut(BinKind::Payload, k)?.insert("type", s("json"));
            Ok(Edit::new(
                At::Manifest,
                format!("payload entry {k} has a member \"type\""),
            ))
        }
        "part" => {
            let p = rng.below(m.parts.len() as u64) as usize;
            obj_mut(&mut m.parts[p])
                .need("not an object")?
                .insert("note", s("hand-edited"));
            Ok(Edit::new(
                At::Part(p),
                format!("part {p} has a member \"note\""),
            ))
        }
        _ => {
            let with: Vec<Bin> = bins.into_iter().filter(|b| !b.parts.is_empty()).collect();
            let b = pick(&with, rng, "no chunk")?;
            let p = pick(&b.parts, rng, "no chunk")?;
            m.item_mut(p, 0)?.insert("size", n(b.size));
            Ok(Edit::new(
                At::Part(p),
                format!(
                    "a chunk of {} {:?} (part {p}) has a member \"size\"",
                    b.kind.word(),
                    b.label
                ),
            ))
        }
    }
}

fn missing_member(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut targets = vec!["manifest", "closing"];
    if !tabs.is_empty() {
        targets.push("table");
    }
    if tabs.iter().any(|t| t.alias.is_some() && !t.rows.is_empty()) {
        targets.push("rowid");
    }
    if tabs.iter().any(|t| !t.rows.is_empty()) {
        targets.push("row-index");
    }
    if !arr(&m.manifest, "objects").is_empty() {
        targets.push("object");
    }
    if !m.parts.is_empty() {
        targets.push("part-index");
    }
    if m.bins().iter().any(|b| b.parts.len() == 1) {
        targets.push("chunk-data");
    }
    match pick(&targets, rng, "nothing to remove")? {
        "manifest" => {
            let member = pick(
                &["journal", "epoch", "sourceIdentity", "exportedAt"],
                rng,
                "",
            )?;
            m.manifest.remove(member);
            Ok(Edit::new(
                At::Manifest,
                format!("the manifest without {member:?}"),
            ))
        }
        "closing" => Ok(
            Edit::new(At::Closing, "the closing without \"contentHash\"").closing_value(|c| {
                c.remove("contentHash");
            }),
        ),
        "table" => {
            let t = pick(&tabs, rng, "no table")?;
            m.table_mut(t.idx)?.remove("dependencies");
            Ok(Edit::new(
                At::Manifest,
                format!("table {:?} without \"dependencies\"", t.name),
            ))
        }
        "rowid" => {
            let ts: Vec<Tab> = tabs
                .into_iter()
                .filter(|t| t.alias.is_some() && !t.rows.is_empty())
                .collect();
            let t = pick(&ts, rng, "no rowid rows")?;
            let k = rng.below(t.rows.len() as u64) as usize;
            let at = t.rows[k];
            m.item_mut(at.0, at.1)?.remove("rowid");
            Ok(Edit::new(
                At::Part(at.0),
                format!("row {k} of rowid table {:?} without its rowid", t.name),
            ))
        }
        "row-index" => {
            let ts: Vec<Tab> = tabs.into_iter().filter(|t| !t.rows.is_empty()).collect();
            let t = pick(&ts, rng, "no rows")?;
            let k = rng.below(t.rows.len() as u64) as usize;
            let at = t.rows[k];
            m.item_mut(at.0, at.1)?.remove("index");
            Ok(Edit::new(
                At::Part(at.0),
                format!("row {k} of {:?} without its index", t.name),
            )
            .allow(&[Code::RowIndex]))
        }
        "object" => {
            let k = rng.below(arr(&m.manifest, "objects").len() as u64) as usize;
            m.entry_mut(BinKind::Object, k)?.remove("customMetadata");
            Ok(Edit::new(
                At::Manifest,
                format!("object entry {k} without \"customMetadata\""),
            ))
        }
        "part-index" => {
            let p = rng.below(m.parts.len() as u64) as usize;
            obj_mut(&mut m.parts[p])
                .need("not an object")?
                .remove("index");
            Ok(
                Edit::new(At::Part(p), format!("part {p} without its index"))
                    .allow(&[Code::PartIndex]),
            )
        }
        _ => {
            let bs: Vec<Bin> = m
                .bins()
                .into_iter()
                .filter(|b| b.parts.len() == 1)
                .collect();
            let b = pick(&bs, rng, "no chunk")?;
            m.item_mut(b.parts[0], 0)?.remove("data");
            // A chunk without data carries no bytes: the binary is then
            // incomplete, unless it is empty anyway.
            let also: &[Code] = if b.size > 0 {
                &[Code::BinaryMissing]
            } else {
                &[]
            };
            Ok(Edit::new(
                At::Part(b.parts[0]),
                format!(
                    "the only chunk of {} {:?} without \"data\"",
                    b.kind.word(),
                    b.label
                ),
            )
            .also(also))
        }
    }
}

fn member_type(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut targets = vec![
        "product",
        "excludedTables",
        "configuration",
        "closing",
        "items",
    ];
    if !tabs.is_empty() {
        targets.push("sql");
    }
    // Only where the alias is null: a rowid table whose alias is unreadable
    // loses its rows' rowids too.
    let keyed: Vec<Tab> = tabs.iter().filter(|t| t.alias.is_none()).cloned().collect();
    if !keyed.is_empty() {
        targets.push("rowidAlias");
    }
    match pick(&targets, rng, "")? {
        "product" => {
            m.manifest.insert("product", n(5));
            Ok(Edit::new(At::Manifest, "product is the number 5"))
        }
        "excludedTables" => {
            let first = m
                .names("excludedTables")
                .first()
                .cloned()
                .unwrap_or_else(|| "sessions".to_string());
            m.manifest.insert("excludedTables", s(first));
            Ok(Edit::new(
                At::Manifest,
                "excludedTables is a string, not an array",
            ))
        }
        "configuration" => {
            let list = arr_mut(&mut m.manifest, "requiredConfiguration").need("no list")?;
            if list.is_empty() {
                list.push(n(7));
            } else {
                list[0] = n(7);
            }
            Ok(Edit::new(
                At::Manifest,
                "requiredConfiguration[0] is the number 7",
            ))
        }
        "closing" => Ok(
            Edit::new(At::Closing, "the closing archiveHash is the number 0")
                .closing_value(|c| c.insert("archiveHash", n(0))),
        ),
        "items" => {
            let end = m.parts.len();
            m.parts.push(obj(vec![
                ("kind", s("part")),
                ("index", n(end as i64)),
                ("items", Value::Object(Object::new())),
            ]));
            Ok(Edit::new(
                At::Part(end),
                "a new last part whose items is an object",
            ))
        }
        "sql" => {
            let t = pick(&tabs, rng, "no table")?;
            m.table_mut(t.idx)?.insert("sql", Value::Null);
            Ok(
                Edit::new(At::Manifest, format!("table {:?} has sql null", t.name))
                    .also(&[Code::InvalidTableSql]),
            )
        }
        _ => {
            let t = pick(&keyed, rng, "no table")?;
            m.table_mut(t.idx)?.insert("rowidAlias", Value::Bool(false));
            Ok(Edit::new(
                At::Manifest,
                format!("table {:?} has rowidAlias false", t.name),
            ))
        }
    }
}

fn unsupported_format(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let f = pick(
        &["rer-portability-3", "rer-portability-v2", "other-format"],
        rng,
        "",
    )?;
    m.manifest.insert("format", s(f));
    Ok(Edit::new(At::Manifest, format!("format is {f:?}")))
}

fn unsupported_version(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (v, what) = match rng.below(3) {
        0 => (n(3), "3"),
        1 => (n(1), "1"),
        _ => (s("2"), "the string \"2\""),
    };
    m.manifest.insert("version", v);
    Ok(Edit::new(At::Manifest, format!("version is {what}")))
}

fn invalid_name(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut targets = vec!["product", "sourceIdentity", "configuration"];
    // A table name with LF at its end keeps its place in name order; its
    // rows, dependencies and exclusions are renamed with it.
    let renamable: Vec<Tab> = tabs.clone();
    if !renamable.is_empty() {
        targets.push("table");
    }
    match pick(&targets, rng, "")? {
        "product" => {
            m.manifest.insert("product", s(""));
            Ok(Edit::new(At::Manifest, "product is the empty string"))
        }
        "sourceIdentity" => {
            let old = str_at(&Value::Object(m.manifest.clone()), "sourceIdentity")
                .unwrap_or("src")
                .to_string();
            m.manifest.insert("sourceIdentity", s(format!("{old}\t1")));
            Ok(Edit::new(
                At::Manifest,
                "sourceIdentity holds a TAB (a C0 control character)",
            ))
        }
        "configuration" => {
            let long = "\u{1F600}".repeat(257);
            let list = arr_mut(&mut m.manifest, "requiredConfiguration").need("no list")?;
            if list.is_empty() {
                list.push(s(long));
            } else {
                list[0] = s(long);
            }
            Ok(Edit::new(
                At::Manifest,
                "requiredConfiguration[0] is 257 astral characters: 514 UTF-16 code units (the limit is 512)",
            ))
        }
        _ => {
            let t = pick(&renamable, rng, "no table")?;
            let new = format!("{}\n", t.name);
            m.table_mut(t.idx)?.insert("name", s(new.clone()));
            for &(p, i) in &t.rows {
                m.item_mut(p, i)?.insert("table", s(new.clone()));
            }
            for other in &tabs {
                if other.deps.contains(&t.name) {
                    let deps: Vec<String> = other
                        .deps
                        .iter()
                        .map(|d| if *d == t.name { new.clone() } else { d.clone() })
                        .collect();
                    m.table_mut(other.idx)?
                        .insert("dependencies", strings(&deps));
                }
            }
            if let Some(Value::Object(ex)) = m.manifest.get_mut("excludedColumns") {
                if let Some(v) = ex.remove(&t.name) {
                    ex.insert(new.clone(), v);
                }
            }
            Ok(Edit::new(
                At::Manifest,
                format!(
                    "table {:?} renamed with an LF at the end (its rows too)",
                    t.name
                ),
            ))
        }
    }
}

fn invalid_exported_at(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let v = pick(
        &[
            "2023-02-29T00:00:00.000Z",
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.678+00:00",
            "2026-01-02 03:04:05.678Z",
            "2026-13-02T03:04:05.678Z",
        ],
        rng,
        "",
    )?;
    m.manifest.insert("exportedAt", s(v));
    Ok(Edit::new(At::Manifest, format!("exportedAt is {v:?}")))
}

fn invalid_integer(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    match rng.below(4) {
        0 => {
            m.manifest.insert("epoch", n(-1));
            Ok(Edit::new(At::Manifest, "epoch is -1"))
        }
        1 => {
            m.manifest.insert("epoch", Value::Number(1.5));
            Ok(Edit::new(At::Manifest, "epoch is 1.5"))
        }
        2 => {
            m.manifest
                .insert("epoch", Value::Number(9_007_199_254_740_992.0));
            Ok(Edit::new(
                At::Manifest,
                "epoch is 2^53 (not a safe integer)",
            ))
        }
        _ => {
            let k = m.parts.len() as f64 + 0.5;
            Ok(
                Edit::new(At::Closing, format!("the closing partCount is {k}"))
                    .closing_value(move |c| c.insert("partCount", Value::Number(k))),
            )
        }
    }
}

fn schema_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tables = arr(&m.manifest, "tables").to_vec();
    let (value, what) = if !tables.is_empty() && rng.one_in(2) {
        // The schema of the tables before the last one was added.
        let pairs: Vec<(String, String)> = tables[..tables.len() - 1]
            .iter()
            .map(|t| {
                (
                    str_at(t, "name").unwrap_or_default().to_string(),
                    str_at(t, "sql").unwrap_or_default().to_string(),
                )
            })
            .collect();
        (
            schema_identity(pairs.iter().map(|(a, b)| (a.as_str(), b.as_str()))),
            "schema is that of the tables without the last one (stale)",
        )
    } else {
        (
            hex(&sha256(&rng.next_u64().to_le_bytes())),
            "schema is another SHA-256",
        )
    };
    m.manifest.insert("schema", s(value));
    Ok(Edit::new(At::Manifest, what).seal(|o| o.schema = false))
}

/// Moves the rows parts so that rows follow the manifest's table order
/// again, then renumbers.
fn regroup_rows(m: &mut Model) {
    let order: Vec<String> = arr(&m.manifest, "tables")
        .iter()
        .filter_map(|t| str_at(t, "name").map(str::to_string))
        .collect();
    let start = (0..m.parts.len()).find(|&p| m.part_kind(p) == Some("row"));
    let Some(start) = start else {
        return;
    };
    let end = m.rows_end();
    let mut rows: Vec<V> = m.parts.drain(start..end).collect();
    rows.sort_by_key(|p| {
        let t = p
            .get("items")
            .and_then(Value::as_array)
            .and_then(|i| i.first())
            .and_then(|i| str_at(i, "table"))
            .unwrap_or_default();
        order.iter().position(|o| o == t).unwrap_or(usize::MAX)
    });
    for (k, p) in rows.into_iter().enumerate() {
        m.parts.insert(start + k, p);
    }
    m.renumber();
}

fn table_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    while m.tabs().len() < 2 {
        m.add_plain_table("ndarc_mutant")?;
    }
    let tabs = m.tabs();
    let k = 1 + rng.below(tabs.len() as u64 - 1) as usize;
    m.tables_mut()?.swap(k - 1, k);
    regroup_rows(m);
    Ok(Edit::new(
        At::Manifest,
        format!(
            "tables {:?} and {:?} swapped (rows follow the manifest's order)",
            tabs[k - 1].name,
            tabs[k].name
        ),
    ))
}

fn table_order_case(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let flippable: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| flip_case(&t.name).is_some())
        .collect();
    let t = if flippable.is_empty() {
        let i = m.add_plain_table("ndarc_mutant")?;
        m.tabs().into_iter().nth(i).need("no table")?
    } else {
        pick(&flippable, rng, "no table")?
    };
    let other = flip_case(&t.name).need("no ASCII letter")?;
    let sql = format!("CREATE TABLE \"{other}\" (x TEXT)");
    m.add_table(&other, vec![col("x", "TEXT", 0, 0)], sql)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "a table {other:?} without rows, at its place in name order, and {:?}: names equal ignoring ASCII case",
            t.name
        ),
    ))
}

fn invalid_table_sql(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let name = t.name.replace('"', "\"\"");
    let cols: Vec<String> = t.cols.iter().map(|c| c.name.replace('"', "\"\"")).collect();
    let cols = if cols.is_empty() {
        "x".to_string()
    } else {
        cols.iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (sql, what) = match rng.below(3) {
        0 => (
            format!("CREATE VIRTUAL TABLE \"{name}\" USING fts5({cols})"),
            "a virtual table",
        ),
        1 => (format!("CREATE VIEW \"{name}\" AS SELECT 1"), "a view"),
        _ => (
            format!("CREATE TEMP TABLE \"{name}\" ({cols})"),
            "a CREATE TEMP TABLE statement",
        ),
    };
    m.table_mut(t.idx)?.insert("sql", s(sql));
    Ok(Edit::new(
        At::Manifest,
        format!("the sql of table {:?} is {what}", t.name),
    ))
}

fn empty_columns(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let name = m.fresh_table_name("ndarc_no_columns");
    m.add_table(&name, Vec::new(), format!("CREATE TABLE \"{name}\" ()"))?;
    Ok(Edit::new(
        At::Manifest,
        format!("a new table {name:?} without rows and with no columns"),
    ))
}

/// A table with rows (or any table) and a writable column outside the
/// primary key whose name has an ASCII letter; adds a table when none has.
fn duplicate_column(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut choices: Vec<(Tab, Col)> = Vec::new();
    for t in &tabs {
        for c in t.plain_cols() {
            if flip_case(&c.name).is_some() {
                choices.push((t.clone(), c.clone()));
            }
        }
    }
    let (t, c) = if choices.is_empty() {
        let i = m.add_plain_table("ndarc_mutant")?;
        let t = m.tabs().into_iter().nth(i).need("no table")?;
        let c = t.cols[0].clone();
        (t, c)
    } else {
        pick(&choices, rng, "no column")?
    };
    let other = flip_case(&c.name).need("no ASCII letter")?;
    m.columns_mut(t.idx)?
        .push(col(&other, &c.ty, i64::from(c.notnull), 0));
    for &at in &t.rows {
        let row = m.row_mut(at)?;
        let v = row.get(&c.name).cloned().unwrap_or(Value::Null);
        row.insert(other.clone(), v);
    }
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} gets a second column {other:?} beside {:?} (names are case-insensitive); rows carry both",
            t.name, c.name
        ),
    ))
}

fn reserved_column(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let name = fresh_col_name(&t, "rer_portability_note");
    m.columns_mut(t.idx)?.push(col(&name, "TEXT", 0, 0));
    for &at in &t.rows {
        m.row_mut(at)?.insert(name.clone(), Value::Null);
    }
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} gets a column {name:?} (reserved prefix); its rows hold null",
            t.name
        ),
    ))
}

fn invalid_notnull(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    // A column no row holds null in, so any reading of the bad value
    // leaves the rows valid.
    let tabs = m.tabs();
    let mut choices = Vec::new();
    for t in &tabs {
        for c in &t.cols {
            let has_null = c.writable()
                && t.rows.iter().any(|&(p, i)| {
                    m.item(p, i)
                        .and_then(|it| it.get("row"))
                        .and_then(|r| r.get(&c.name))
                        .map_or(true, Value::is_null)
                });
            if !has_null {
                choices.push((t.clone(), c.clone()));
            }
        }
    }
    let (t, c) = if choices.is_empty() {
        let i = m.add_plain_table("ndarc_mutant")?;
        let t = m.tabs().into_iter().nth(i).need("no table")?;
        let c = t.cols[0].clone();
        (t, c)
    } else {
        pick(&choices, rng, "no column")?
    };
    let (v, what) = match rng.below(3) {
        0 => (n(2), "2"),
        1 => (n(-1), "-1"),
        _ => (Value::Bool(c.notnull), "a boolean"),
    };
    m.column_mut(t.idx, c.idx)?.insert("notnull", v);
    Ok(Edit::new(
        At::Manifest,
        format!("notnull of column {}.{} is {what}", t.name, c.name),
    ))
}

fn pk_table(m: &mut Model, rng: &mut Rng) -> R<Tab> {
    let tabs: Vec<Tab> = m.tabs().into_iter().filter(Tab::has_pk).collect();
    if !tabs.is_empty() {
        return pick(&tabs, rng, "no table");
    }
    let name = m.fresh_table_name("ndarc_keyed");
    let sql = format!("CREATE TABLE \"{name}\" (id INTEGER PRIMARY KEY, x TEXT)");
    let i = m.add_table(
        &name,
        vec![col("id", "INTEGER", 0, 1), col("x", "TEXT", 0, 0)],
        sql,
    )?;
    m.tabs().into_iter().nth(i).need("no table")
}

fn invalid_pk(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pk_table(m, rng)?;
    let pks = t.pk_cols();
    let k = pks.len() as i64;
    let last = pks.last().need("no key")?;
    let (ci, v, what) = if rng.one_in(2) || t.plain_cols().is_empty() {
        (
            last.idx,
            n(k + 1),
            format!(
                "column {}.{} at key position {} (positions must be 1..{k})",
                t.name,
                last.name,
                k + 1
            ),
        )
    } else {
        let c = pick(&t.plain_cols(), rng, "no column")?.clone();
        (
            c.idx,
            Value::Number(0.5),
            format!("column {}.{} has pk 0.5", t.name, c.name),
        )
    };
    m.column_mut(t.idx, ci)?.insert("pk", v);
    Ok(Edit::new(At::Manifest, what))
}

fn generated_primary_key(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pk_table(m, rng)?;
    let k = t.pk_cols().len() as i64;
    let name = fresh_col_name(&t, "ndarc_slug");
    let mut c = col(&name, "TEXT", 0, k + 1);
    obj_mut(&mut c)
        .need("")?
        .insert("generated", s(pick(&["virtual", "stored"], rng, "")?));
    m.columns_mut(t.idx)?.push(c);
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} gets a generated column {name:?} at key position {} (rows do not carry it)",
            t.name,
            k + 1
        ),
    ))
}

fn invalid_generated(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut choices = Vec::new();
    for t in &tabs {
        for c in t.plain_cols() {
            choices.push((t.clone(), c.clone()));
        }
    }
    let (t, c) = if choices.is_empty() {
        let i = m.add_plain_table("ndarc_mutant")?;
        let t = m.tabs().into_iter().nth(i).need("no table")?;
        let c = t.cols[0].clone();
        (t, c)
    } else {
        pick(&choices, rng, "no column")?
    };
    let g = pick(&["always", "VIRTUAL", "hidden", ""], rng, "")?;
    m.column_mut(t.idx, c.idx)?.insert("generated", s(g));
    Ok(Edit::new(
        At::Manifest,
        format!(
            "column {}.{} has generated {g:?} (rows still carry it)",
            t.name, c.name
        ),
    ))
}

fn dependency_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let mut deps = t.deps.clone();
    let what = match deps.len() {
        0 => {
            deps = vec![t.name.clone(), t.name.clone()];
            "itself twice".to_string()
        }
        1 => {
            deps.push(deps[0].clone());
            format!("{:?} twice", deps[0])
        }
        _ => {
            deps.reverse();
            "its dependencies in reverse order".to_string()
        }
    };
    m.table_mut(t.idx)?.insert("dependencies", strings(&deps));
    Ok(Edit::new(
        At::Manifest,
        format!("table {:?} lists {what}", t.name),
    ))
}

fn add_dependency(m: &mut Model, t: &Tab, dep: &str) -> R<()> {
    let mut deps = t.deps.clone();
    if !deps.iter().any(|d| d == dep) {
        deps.push(dep.to_string());
    }
    sorted_utf16(&mut deps);
    m.table_mut(t.idx)?.insert("dependencies", strings(&deps));
    Ok(())
}

fn excluded_foreign_key(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let mut excluded = m.names("excludedTables");
    let name = if excluded.is_empty() {
        let name = m.fresh_table_name("sessions");
        excluded.push(name.clone());
        m.manifest.insert("excludedTables", strings(&excluded));
        name
    } else {
        pick(&excluded, rng, "")?
    };
    let (dep, how) = match flip_case(&name) {
        Some(f) if rng.one_in(2) => (f, " (in another ASCII case)"),
        _ => (name.clone(), ""),
    };
    add_dependency(m, &t, &dep)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} depends on the excluded table {name:?}{how}",
            t.name
        ),
    ))
}

fn missing_dependency(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let ghost = m.fresh_table_name("accounts");
    add_dependency(m, &t, &ghost)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} depends on {ghost:?}, which the archive does not hold (a warning)",
            t.name
        ),
    ))
}

/// A primary-key table gets columns shadowing every rowid alias still free
/// (nullable TEXT, null in every row).
fn unsupported_copy_rowid(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pk_table(m, rng)?;
    let mut added = Vec::new();
    for alias in ROWID_ALIASES {
        if t.cols.iter().any(|c| c.name.eq_ignore_ascii_case(alias)) {
            continue;
        }
        let name = match flip_case(alias) {
            Some(f) if rng.one_in(2) => f,
            _ => alias.to_string(),
        };
        m.columns_mut(t.idx)?.push(col(&name, "TEXT", 0, 0));
        for &at in &t.rows {
            m.row_mut(at)?.insert(name.clone(), Value::Null);
        }
        added.push(name);
    }
    Ok(Edit::new(
        At::Manifest,
        format!(
            "primary-key table {:?} gets columns {added:?}, so no rowid alias is free for the import's copy",
            t.name
        ),
    ))
}

/// A new table without rows whose INTEGER columns have 500-character names
/// (3 UTF-8 bytes each): the producer's projection exceeds D1's limit.
fn transfer_sql_limit(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let name = m.fresh_table_name("ndarc_wide");
    // 400 to 500 UTF-16 units (names hold at most 512), 1,000 to 1,200 bytes.
    let (unit, times) =
        [("\u{20ac}", 400), ("\u{00e9}", 500), ("\u{4e2d}", 400)][rng.below(3) as usize];
    let stem = unit.repeat(times);
    let columns: Vec<V> = (0..50)
        .map(|i| col(&format!("{stem}{i:03}"), "INTEGER", 0, 0))
        .collect();
    let sql = format!("CREATE TABLE \"{name}\" (\"{stem}000\" INTEGER, …)");
    m.add_table(&name, columns, sql)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "a new table {name:?} with 50 INTEGER columns whose names take over 1,000 bytes each"
        ),
    ))
}

/// A new table without rows named as SQLite or D1 reserves.
fn reserved_table(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let base = ["sqlite_stat1", "_cf_KV", "SQLITE_ndarc", "_CF_ndarc"][rng.below(4) as usize];
    let i = m.add_plain_table(base)?;
    let name = m.tabs().into_iter().nth(i).need("no table")?.name;
    Ok(Edit::new(
        At::Manifest,
        format!("a new table {name:?}, a name no import can create"),
    ))
}

/// A new table without rows that the producer's defaults exclude.
fn default_excluded_table(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    // Prefix patterns only: a fresh name (`_2` appended) still matches them.
    let base = [
        "oa_sessions",
        "oc_cache",
        "rer_portability_state",
        "OA_Tokens",
    ][rng.below(4) as usize];
    let i = m.add_plain_table(base)?;
    let name = m.tabs().into_iter().nth(i).need("no table")?.name;
    Ok(Edit::new(
        At::Manifest,
        format!("a new table {name:?}, which the producer excludes by default (a warning)"),
    ))
}

/// A new table `oa_dev_credentials` with one row, in a part of its own at
/// its place in table order.
fn dev_data(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let name = "oa_dev_credentials";
    if m.all_table_names()
        .iter()
        .any(|t| t.eq_ignore_ascii_case(name))
    {
        return Err(format!("the archive already names {name}"));
    }
    m.add_table(
        name,
        vec![col("x", "TEXT", 0, 0)],
        format!("CREATE TABLE {name} (x TEXT)"),
    )?;
    // Rows come table by table in name order: before the first rows part of
    // a table that sorts after this one.
    let at = (0..m.parts.len())
        .find(|&p| {
            m.part_kind(p) == Some("row")
                && m.item(p, 0)
                    .and_then(|i| str_at(i, "table"))
                    .is_some_and(|t| cmp_utf16(t, name).is_gt())
        })
        .unwrap_or_else(|| m.rows_end());
    let item = obj(vec![
        ("kind", s("row")),
        ("table", s(name)),
        ("index", n(0)),
        ("row", obj(vec![("x", s("dev"))])),
        ("rowid", n(1)),
    ]);
    m.insert_part(at, vec![item]);
    Ok(Edit::new(
        At::Manifest,
        format!("a new table {name:?} with one development credential"),
    )
    .also(&[Code::DefaultExcludedTable]))
}

fn rowid_alias_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| t.alias.is_some() && !t.has_pk())
        .collect();
    let t = if tabs.is_empty() {
        let i = m.add_plain_table("ndarc_rowid")?;
        m.tabs().into_iter().nth(i).need("no table")?
    } else {
        pick(&tabs, rng, "no table")?
    };
    let right = t.alias.clone().unwrap_or_default();
    if rng.one_in(2) {
        // A new column shadows the alias: the alias must move on.
        let shadow = flip_case(&right).unwrap_or_else(|| right.clone());
        m.columns_mut(t.idx)?.push(col(&shadow, "TEXT", 0, 0));
        for &at in &t.rows {
            m.row_mut(at)?.insert(shadow.clone(), Value::Null);
        }
        let still = rowid_alias(
            t.cols
                .iter()
                .map(|c| c.name.as_str())
                .chain(std::iter::once(shadow.as_str())),
            false,
        );
        let want = match still {
            Ok(Some(a)) => format!("{a:?}"),
            _ => "none (all three shadowed)".to_string(),
        };
        return Ok(Edit::new(
            At::Manifest,
            format!(
                "table {:?} gets a column {shadow:?} that shadows its rowidAlias {right:?} (the alias should be {want})",
                t.name
            ),
        ));
    }
    let wrong = ROWID_ALIASES
        .iter()
        .find(|a| **a != right)
        .copied()
        .unwrap_or("rowid");
    m.table_mut(t.idx)?.insert("rowidAlias", s(wrong));
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} says rowidAlias {wrong:?} where its columns imply {right:?}",
            t.name
        ),
    ))
}

/// The parts of a binary as one group, for moving them together.
fn swap_groups(m: &mut Model, a: &[usize], b: &[usize]) -> R<()> {
    // a's parts come right before b's: rebuild that stretch as b then a.
    let start = *a.first().need("no parts")?;
    let end = *b.last().need("no parts")? + 1;
    if a.last().map(|x| x + 1) != b.first().copied() {
        return Err("the two binaries are not next to each other".to_string());
    }
    let stretch: Vec<V> = m.parts.drain(start..end).collect();
    let (first, second) = stretch.split_at(a.len());
    let mut new: Vec<V> = second.to_vec();
    new.extend_from_slice(first);
    for (k, p) in new.into_iter().enumerate() {
        m.parts.insert(start + k, p);
    }
    m.renumber();
    Ok(())
}

fn binary_order(m: &mut Model, rng: &mut Rng, kind: BinKind) -> R<Edit> {
    let count = |m: &Model| m.bins().into_iter().filter(|b| b.kind == kind).count();
    while count(m) < 2 {
        let data = some_bytes(rng, 1, 20);
        match kind {
            BinKind::Object => {
                let key = format!("ndarc-{}.bin", count(m));
                m.add_last_object(&key, &data)?;
            }
            BinKind::Payload => {
                m.add_last_payload(&data)?;
            }
        }
    }
    let bins: Vec<Bin> = m.bins().into_iter().filter(|b| b.kind == kind).collect();
    let code = match kind {
        BinKind::Object => Code::ObjectOrder,
        BinKind::Payload => Code::PayloadOrder,
    };
    if rng.one_in(3) {
        // The same entry twice, and its chunks twice.
        let b = pick(&bins, rng, "no binary")?;
        let entry = arr(&m.manifest, kind.member())[b.idx].clone();
        m.entries_mut(kind)?.insert(b.idx + 1, entry);
        let copies: Vec<V> = b.parts.iter().map(|&p| m.parts[p].clone()).collect();
        let after = *b.parts.last().need("no parts")? + 1;
        for (k, p) in copies.into_iter().enumerate() {
            m.parts.insert(after + k, p);
        }
        m.renumber();
        let _ = code;
        return Ok(Edit::new(
            At::Manifest,
            format!(
                "{} {:?} listed twice (and its chunks twice)",
                kind.word(),
                b.label
            ),
        )
        .allow(&[Code::ItemOrder, Code::BinaryMissing]));
    }
    let k = 1 + rng.below(bins.len() as u64 - 1) as usize;
    let (a, b) = (&bins[k - 1], &bins[k]);
    swap_groups(m, &a.parts, &b.parts)?;
    m.entries_mut(kind)?.swap(k - 1, k);
    Ok(Edit::new(
        At::Manifest,
        format!(
            "{}s {:?} and {:?} swapped (their chunks too)",
            kind.word(),
            a.label,
            b.label
        ),
    ))
}

fn object_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    binary_order(m, rng, BinKind::Object)
}

fn payload_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    binary_order(m, rng, BinKind::Payload)
}

fn invalid_sha256(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    if rng.one_in(3) {
        return Ok(
            Edit::new(At::Closing, "the closing contentHash cut to 63 hex digits")
                .also(&[Code::ContentHashMismatch])
                .closing_value(|c| {
                    let h = c
                        .get("contentHash")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    c.insert("contentHash", s(h.get(..63).unwrap_or("").to_string()));
                }),
        );
    }
    let b = m.some_bin(rng)?;
    let entry = m.entry_mut(b.kind, b.idx)?;
    let old = entry
        .get("sha256")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let upper = old.to_ascii_uppercase();
    let (new, what) = if upper != old && rng.one_in(2) {
        (upper, "in uppercase hex")
    } else {
        (format!("sha256:{old}"), "with a \"sha256:\" prefix")
    };
    entry.insert("sha256", s(new));
    Ok(Edit::new(
        At::Manifest,
        format!(
            "the sha256 of {} {:?} written {what}: it does not match the bytes either",
            b.kind.word(),
            b.label
        ),
    )
    .also(&[Code::Sha256Mismatch]))
}

fn invalid_metadata(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = m.some_object(rng)?;
    let e = m.entry_mut(BinKind::Object, k)?;
    let what = match rng.below(3) {
        0 => {
            let mut http = e
                .get("httpMetadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            http.insert("contentLength", n(13));
            e.insert("httpMetadata", Value::Object(http));
            "httpMetadata.contentLength is a number"
        }
        1 => {
            e.insert("customMetadata", Value::Array(Vec::new()));
            "customMetadata is an array"
        }
        _ => {
            let mut custom = e
                .get("customMetadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            custom.insert("owner", Value::Null);
            e.insert("customMetadata", Value::Object(custom));
            "customMetadata.owner is null"
        }
    };
    Ok(Edit::new(At::Manifest, format!("object entry {k}: {what}")))
}

fn excluded_table_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let mut ex = m.names("excludedTables");
    let what = match ex.len() {
        0 => {
            let a = m.fresh_table_name("ndarc_excluded_a");
            let b = m.fresh_table_name("ndarc_excluded_b");
            ex = vec![b, a];
            "two excluded tables in reverse name order".to_string()
        }
        1 => {
            ex.push(ex[0].clone());
            format!("{:?} excluded twice", ex[0])
        }
        len => {
            let k = 1 + rng.below(len as u64 - 1) as usize;
            ex.swap(k - 1, k);
            format!("excluded tables {:?} and {:?} swapped", ex[k], ex[k - 1])
        }
    };
    m.manifest.insert("excludedTables", strings(&ex));
    Ok(Edit::new(At::Manifest, what))
}

fn excluded_table_present(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    // A table no other table depends on, so that excluding it breaks no
    // foreign key.
    let free: Vec<Tab> = tabs
        .iter()
        .filter(|t| {
            !tabs
                .iter()
                .any(|o| o.deps.iter().any(|d| d.eq_ignore_ascii_case(&t.name)))
        })
        .cloned()
        .collect();
    let t = if free.is_empty() {
        let i = m.add_plain_table("ndarc_mutant")?;
        m.tabs().into_iter().nth(i).need("no table")?
    } else {
        pick(&free, rng, "no table")?
    };
    let (name, how) = match flip_case(&t.name) {
        Some(f) if rng.one_in(2) => (f, " in another ASCII case"),
        _ => (t.name.clone(), ""),
    };
    let mut ex = m.names("excludedTables");
    ex.push(name.clone());
    sorted_utf16(&mut ex);
    m.manifest.insert("excludedTables", strings(&ex));
    Ok(Edit::new(
        At::Manifest,
        format!("table {:?} is also listed in excludedTables{how}", t.name),
    ))
}

fn excluded_columns_mut(m: &mut Model) -> R<&mut Obj> {
    if !matches!(m.manifest.get("excludedColumns"), Some(Value::Object(_))) {
        m.manifest
            .insert("excludedColumns", Value::Object(Object::new()));
    }
    match m.manifest.get_mut("excludedColumns") {
        Some(Value::Object(o)) => Ok(o),
        _ => Err("no excludedColumns".to_string()),
    }
}

fn exclude(m: &mut Model, table: &str, column: &str, times: usize) -> R<()> {
    let ex = excluded_columns_mut(m)?;
    let mut list: Vec<V> = ex
        .get(table)
        .and_then(Value::as_array)
        .map(<[V]>::to_vec)
        .unwrap_or_default();
    for _ in 0..times {
        list.push(s(column));
    }
    ex.insert(table.to_string(), Value::Array(list));
    Ok(())
}

fn remove_cell(m: &mut Model, t: &Tab, column: &str) -> R<()> {
    for &at in &t.rows {
        m.row_mut(at)?.remove(column);
    }
    Ok(())
}

fn excluded_column_unknown(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    if tabs.is_empty() || rng.one_in(2) {
        let ghost = m.fresh_table_name("ghosts");
        exclude(m, &ghost, "x", 1)?;
        return Ok(Edit::new(
            At::Manifest,
            format!("excludedColumns names a table {ghost:?} the manifest lacks"),
        ));
    }
    let t = pick(&tabs, rng, "no table")?;
    let c = fresh_col_name(&t, "title");
    exclude(m, &t.name, &c, 1)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "excludedColumns names a column {c:?} that table {:?} lacks",
            t.name
        ),
    ))
}

fn excluded_column_required(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut notnull = Vec::new();
    let mut generated = Vec::new();
    let mut keys = Vec::new();
    for t in &tabs {
        for c in &t.cols {
            if c.excluded {
                continue;
            }
            if c.generated {
                generated.push((t.clone(), c.clone()));
            } else if c.pk > 0 {
                keys.push((t.clone(), c.clone()));
            } else if c.notnull {
                notnull.push((t.clone(), c.clone()));
            }
        }
    }
    let mut kinds = Vec::new();
    if !notnull.is_empty() {
        kinds.push(0);
    }
    if !generated.is_empty() {
        kinds.push(1);
    }
    if !keys.is_empty() {
        kinds.push(2);
    }
    if kinds.is_empty() {
        kinds.push(3);
    }
    match pick(&kinds, rng, "")? {
        0 => {
            let (t, c) = pick(&notnull, rng, "")?;
            exclude(m, &t.name, &c.name, 1)?;
            remove_cell(m, &t, &c.name)?;
            Ok(Edit::new(
                At::Manifest,
                format!(
                    "the NOT NULL column {}.{} is excluded (rows leave it out)",
                    t.name, c.name
                ),
            ))
        }
        1 => {
            let (t, c) = pick(&generated, rng, "")?;
            exclude(m, &t.name, &c.name, 1)?;
            Ok(Edit::new(
                At::Manifest,
                format!("the generated column {}.{} is excluded", t.name, c.name),
            ))
        }
        2 => {
            let (t, c) = pick(&keys, rng, "")?;
            exclude(m, &t.name, &c.name, 1)?;
            remove_cell(m, &t, &c.name)?;
            Ok(Edit::new(
                At::Manifest,
                format!(
                    "the primary-key column {}.{} is excluded (rows leave it out, so row keys collapse)",
                    t.name, c.name
                ),
            )
            .allow(&[Code::DuplicateRowKey, Code::RowKeyOrder]))
        }
        _ => {
            let t = m.some_table(rng)?;
            let name = fresh_col_name(&t, "ndarc_generated");
            let mut c = col(&name, "TEXT", 0, 0);
            obj_mut(&mut c).need("")?.insert("generated", s("virtual"));
            m.columns_mut(t.idx)?.push(c);
            exclude(m, &t.name, &name, 1)?;
            Ok(Edit::new(
                At::Manifest,
                format!(
                    "table {:?} gets a generated column {name:?}, and it is excluded",
                    t.name
                ),
            ))
        }
    }
}

fn excluded_column_duplicate(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let listed: Vec<(String, String)> = m
        .excluded_columns()
        .into_iter()
        .flat_map(|(t, cs)| cs.into_iter().map(move |c| (t.clone(), c)))
        .collect();
    if !listed.is_empty() && rng.one_in(2) {
        let (t, c) = pick(&listed, rng, "")?;
        exclude(m, &t, &c, 1)?;
        return Ok(Edit::new(
            At::Manifest,
            format!("the excluded column {t}.{c} listed a second time"),
        ));
    }
    let tabs = m.tabs();
    let mut choices = Vec::new();
    for t in &tabs {
        for c in t.plain_cols() {
            if !c.notnull {
                choices.push((t.clone(), c.clone()));
            }
        }
    }
    let (t, c) = if choices.is_empty() {
        let i = m.add_plain_table("ndarc_mutant")?;
        let t = m.tabs().into_iter().nth(i).need("no table")?;
        let c = t.cols[0].clone();
        (t, c)
    } else {
        pick(&choices, rng, "")?
    };
    exclude(m, &t.name, &c.name, 2)?;
    remove_cell(m, &t, &c.name)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "column {}.{} excluded twice (rows leave it out)",
            t.name, c.name
        ),
    ))
}

fn duplicate_configuration(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let mut list = m.names("requiredConfiguration");
    let name = if list.is_empty() {
        list.push("NDARC_KEY".to_string());
        "NDARC_KEY".to_string()
    } else {
        pick(&list, rng, "")?
    };
    let at = rng.below(list.len() as u64 + 1) as usize;
    list.insert(at, name.clone());
    m.manifest.insert("requiredConfiguration", strings(&list));
    Ok(Edit::new(
        At::Manifest,
        format!("requiredConfiguration lists {name:?} twice"),
    ))
}

// ---------------------------------------------------------------- parts

fn ensure_parts(m: &mut Model, rng: &mut Rng, k: usize) -> R<()> {
    while m.parts.len() < k {
        let data = some_bytes(rng, 1, 20);
        m.add_last_payload(&data)?;
    }
    Ok(())
}

fn set_index(m: &mut Model, p: usize, v: i64) -> R<()> {
    obj_mut(m.parts.get_mut(p).need("no part")?)
        .need("not an object")?
        .insert("index", n(v));
    Ok(())
}

fn part_index(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    ensure_parts(m, rng, 1)?;
    let last = m.parts.len() - 1;
    let variant = if m.parts.len() >= 2 {
        rng.below(3)
    } else {
        rng.below(2)
    };
    match variant {
        0 => {
            set_index(m, last, last as i64 + 1)?;
            Ok(Edit::new(
                At::Part(last),
                format!(
                    "the last part says index {} where {last} is expected",
                    last + 1
                ),
            ))
        }
        1 => {
            for p in 0..m.parts.len() {
                set_index(m, p, p as i64 + 1)?;
            }
            Ok(Edit::new(At::Part(0), "parts numbered from 1"))
        }
        _ => {
            let p = 1 + rng.below(m.parts.len() as u64 - 1) as usize;
            set_index(m, p, p as i64 - 1)?;
            Ok(Edit::new(
                At::Part(p),
                format!("parts {} and {p} both say index {}", p - 1, p - 1),
            ))
        }
    }
}

fn empty_part(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let at = rng.below(m.parts.len() as u64 + 1) as usize;
    let p = m.insert_part(at, Vec::new());
    Ok(Edit::new(
        At::Part(p),
        format!("an empty part inserted as part {p}"),
    ))
}

fn mixed_part(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| !t.rows.is_empty())
        .collect();
    let bins: Vec<Bin> = m
        .bins()
        .into_iter()
        .filter(|b| !b.parts.is_empty())
        .collect();
    let mut kinds = Vec::new();
    if tabs.len() >= 2 {
        kinds.push(0);
    }
    if bins.len() >= 2 {
        kinds.push(1);
    }
    if !tabs.is_empty() && !bins.is_empty() {
        kinds.push(2);
    }
    if kinds.is_empty() {
        // Two binaries will do.
        let data = some_bytes(rng, 1, 20);
        m.add_last_payload(&data)?;
        let data = some_bytes(rng, 1, 20);
        m.add_last_payload(&data)?;
        return mixed_part(m, rng);
    }
    let (host, guest, what) = match pick(&kinds, rng, "")? {
        0 => {
            let k = 1 + rng.below(tabs.len() as u64 - 1) as usize;
            let (a, b) = if rng.one_in(2) {
                (&tabs[k - 1], &tabs[k])
            } else {
                (&tabs[k], &tabs[k - 1])
            };
            let host = pick(&a.rows, rng, "")?.0;
            let guest = pick(&b.rows, rng, "")?;
            (
                host,
                guest,
                format!(
                    "a copy of a row of {:?} inside part {host} (rows of {:?}); the original stays in its part",
                    b.name, a.name
                ),
            )
        }
        1 => {
            let k = 1 + rng.below(bins.len() as u64 - 1) as usize;
            let (a, b) = (&bins[k - 1], &bins[k]);
            let host = pick(&a.parts, rng, "")?;
            let guest = (pick(&b.parts, rng, "")?, 0);
            (
                host,
                guest,
                format!(
                    "a copy of a chunk of {} {:?} inside part {host} ({} {:?}); the original stays in its part",
                    b.kind.word(),
                    b.label,
                    a.kind.word(),
                    a.label
                ),
            )
        }
        _ => {
            let t = pick(&tabs, rng, "")?;
            let b = pick(&bins, rng, "")?;
            let host = pick(&t.rows, rng, "")?.0;
            let guest = (pick(&b.parts, rng, "")?, 0);
            (
                host,
                guest,
                format!(
                    "a copy of a chunk of {} {:?} inside part {host} (rows of {:?}); the original stays in its part",
                    b.kind.word(),
                    b.label,
                    t.name
                ),
            )
        }
    };
    let before = m.clone();
    let copy = m.item(guest.0, guest.1).cloned().need("no item")?;
    m.items_mut(host)?.push(copy);
    m.count_rows_by_part()?;
    Ok(Edit::new(At::Part(host), what)
        .seal(|o| o.counts = false)
        .content_of(before))
}

/// Groups of parts in archive order: the parts of one table's rows, of one
/// binary.
fn groups(m: &Model) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for p in 0..m.parts.len() {
        let key = match m.item(p, 0) {
            Some(i) => match str_at(i, "kind") {
                Some("row") => format!("rows of {:?}", str_at(i, "table").unwrap_or_default()),
                Some("object") => format!(
                    "object {:?}",
                    format!(
                        "{}/{}",
                        str_at(i, "bucket").unwrap_or_default(),
                        str_at(i, "key").unwrap_or_default()
                    )
                ),
                Some("payload") => {
                    format!("payload {:?}", str_at(i, "name").unwrap_or_default())
                }
                _ => format!("part {p}"),
            },
            None => format!("part {p}"),
        };
        match out.last_mut() {
            Some((k, v)) if *k == key => v.push(p),
            _ => out.push((key, vec![p])),
        }
    }
    out
}

fn item_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    ensure_parts(m, rng, 1)?;
    if groups(m).len() < 2 {
        let data = some_bytes(rng, 1, 20);
        m.add_last_payload(&data)?;
    }
    let gs = groups(m);
    let k = 1 + rng.below(gs.len() as u64 - 1) as usize;
    // The last part of group k-1 and the first of group k trade places:
    // the first is then out of order.
    let a = *gs[k - 1].1.last().need("")?;
    let b = gs[k].1[0];
    m.parts.swap(a, b);
    m.renumber();
    Ok(Edit::new(
        At::Part(b),
        format!(
            "the first part of the {} moved before the last part of the {} (parts {a} and {b} swapped)",
            gs[k].0, gs[k - 1].0
        ),
    )
    .allow(&[Code::RowCount, Code::BinaryMissing, Code::RowIndex]))
}

fn unknown_table(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| !t.rows.is_empty())
        .collect();
    let (item, name) = match tabs
        .iter()
        .filter(|t| flip_case(&t.name).is_some())
        .cloned()
        .collect::<Vec<_>>()
    {
        v if !v.is_empty() && rng.one_in(2) => {
            let t = pick(&v, rng, "")?;
            let at = *t.rows.last().need("")?;
            let mut item = m.item(at.0, at.1).cloned().need("")?;
            let name = flip_case(&t.name).need("")?;
            obj_mut(&mut item)
                .need("")?
                .insert("table", s(name.clone()));
            (item, name)
        }
        _ => {
            let name = m.fresh_table_name("ghosts");
            (
                obj(vec![
                    ("kind", s("row")),
                    ("table", s(name.clone())),
                    ("index", n(0)),
                    ("row", obj(vec![("x", n(1))])),
                ]),
                name,
            )
        }
    };
    let before = m.clone();
    let at = m.parts.len();
    let p = m.insert_part(at, vec![item]);
    Ok(Edit::new(
        At::Part(p),
        format!("a new last part with a row of table {name:?}, which the manifest does not list"),
    )
    .content_of(before))
}

fn unknown_binary(m: &mut Model, rng: &mut Rng, kind: BinKind) -> R<Edit> {
    let data = some_bytes(rng, 1, 20);
    let (item, label) = match kind {
        BinKind::Object => (
            obj(vec![
                ("kind", s("object")),
                ("bucket", s("files")),
                ("key", s("ghost.txt")),
                ("offset", n(0)),
                ("data", s(encode_base64(&data))),
            ]),
            "files/ghost.txt",
        ),
        BinKind::Payload => (
            obj(vec![
                ("kind", s("payload")),
                ("name", s("ghost-payload")),
                ("offset", n(0)),
                ("data", s(encode_base64(&data))),
            ]),
            "ghost-payload",
        ),
    };
    let at = m.parts.len();
    let p = m.insert_part(at, vec![item]);
    Ok(Edit::new(
        At::Part(p),
        format!(
            "a new last part with a chunk of {} {label:?}, which the manifest does not list",
            kind.word()
        ),
    ))
}

fn unknown_object(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    unknown_binary(m, rng, BinKind::Object)
}

fn unknown_payload(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    unknown_binary(m, rng, BinKind::Payload)
}

/// Adds a table with three rows — a primary-key table `ndarc_rows (id
/// INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER, data BLOB, r REAL)`
/// or a rowid table `ndarc_log` without `id` — at its place in name order,
/// its rows part among the others in manifest order.
fn add_rows_table(m: &mut Model, rowid: bool) -> R<()> {
    let name = m.fresh_table_name(if rowid { "ndarc_log" } else { "ndarc_rows" });
    let (cols, sql) = if rowid {
        (
            vec![
                col("msg", "TEXT", 1, 0),
                col("n", "INTEGER", 0, 0),
                col("data", "BLOB", 0, 0),
                col("r", "REAL", 0, 0),
            ],
            format!("CREATE TABLE \"{name}\" (msg TEXT NOT NULL, n INTEGER, data BLOB, r REAL)"),
        )
    } else {
        (
            vec![
                col("id", "INTEGER", 0, 1),
                col("name", "TEXT", 1, 0),
                col("n", "INTEGER", 0, 0),
                col("data", "BLOB", 0, 0),
                col("r", "REAL", 0, 0),
            ],
            format!(
                "CREATE TABLE \"{name}\" (id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER, data BLOB, r REAL)"
            ),
        )
    };
    let t = m.add_table(&name, cols, sql)?;
    let earlier: Vec<String> = m.tabs().into_iter().take(t).map(|x| x.name).collect();
    let at = (0..m.parts.len())
        .rev()
        .find(|&p| {
            m.part_kind(p) == Some("row")
                && m.item(p, 0)
                    .and_then(|i| str_at(i, "table"))
                    .is_some_and(|x| earlier.iter().any(|e| e == x))
        })
        .map_or(0, |p| p + 1);
    let items = (0..3i64)
        .map(|i| {
            let mut row = Object::new();
            if !rowid {
                row.insert("id", n(i + 1));
            }
            row.insert(if rowid { "msg" } else { "name" }, s(format!("row {i}")));
            row.insert("n", n(10 * i));
            row.insert(
                "data",
                obj(vec![(
                    "blob",
                    s(encode_base64(format!("blob {i}").as_bytes())),
                )]),
            );
            row.insert("r", Value::Number(1.5 + i as f64));
            let mut item = Object::new();
            item.insert("kind", s("row"));
            item.insert("table", s(name.clone()));
            item.insert("index", n(i));
            item.insert("row", Value::Object(row));
            if rowid {
                item.insert("rowid", n(10 * (i + 1)));
            }
            Value::Object(item)
        })
        .collect();
    m.insert_part(at, items);
    Ok(())
}

/// Runs `f`; when the archive has no rows it can use, adds a table with
/// rows (a rowid table when `rowid`) and runs it again.
fn or_rows_table(
    m: &mut Model,
    rng: &mut Rng,
    rowid: bool,
    f: fn(&mut Model, &mut Rng) -> R<Edit>,
) -> R<Edit> {
    let saved = m.clone();
    match f(m, rng) {
        Ok(e) => Ok(e),
        Err(_) => {
            *m = saved;
            add_rows_table(m, rowid)?;
            f(m, rng)
        }
    }
}

fn tables_with_rows(m: &Model, at_least: usize) -> Vec<Tab> {
    m.tabs()
        .into_iter()
        .filter(|t| t.rows.len() >= at_least)
        .collect()
}

fn row_index(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_index_in)
}

fn row_index_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pick(&tables_with_rows(m, 1), rng, "no table has rows")?;
    let k = rng.below(t.rows.len() as u64) as usize;
    for (j, &(p, i)) in t.rows.iter().enumerate().skip(k) {
        m.item_mut(p, i)?.insert("index", n(j as i64 + 1));
    }
    Ok(Edit::new(
        At::Part(t.rows[k].0),
        format!(
            "the rows of {:?} skip index {k} (from row {k} on, each index is one more)",
            t.name
        ),
    ))
}

fn row_count(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let k = t.rows.len() as i64;
    if k > 0 && rng.one_in(2) {
        m.table_mut(t.idx)?.insert("count", n(k - 1));
        let last = t.rows.last().need("")?.0;
        return Ok(Edit::new(
            At::Part(last),
            format!(
                "table {:?} has count {} but {k} rows: reported where the rows exceed the count",
                t.name,
                k - 1
            ),
        )
        .seal(|o| o.counts = false));
    }
    m.table_mut(t.idx)?.insert("count", n(k + 1));
    Ok(Edit::new(
        At::Manifest,
        format!("table {:?} has count {} but {k} rows", t.name, k + 1),
    )
    .seal(|o| o.counts = false))
}

fn row_columns(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_columns_in)
}

fn row_columns_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pick(&tables_with_rows(m, 1), rng, "no table has rows")?;
    let at = pick(&t.rows, rng, "")?;
    let plain: Vec<String> = t.plain_cols().iter().map(|c| c.name.clone()).collect();
    let excluded: Vec<String> = t
        .cols
        .iter()
        .filter(|c| c.excluded && !c.generated)
        .map(|c| c.name.clone())
        .collect();
    let generated: Vec<String> = t
        .cols
        .iter()
        .filter(|c| c.generated)
        .map(|c| c.name.clone())
        .collect();
    let mut kinds = vec![0];
    if !plain.is_empty() {
        kinds.push(1);
    }
    if !excluded.is_empty() {
        kinds.push(2);
    }
    if !generated.is_empty() {
        kinds.push(3);
    }
    let row = m.row_mut(at)?;
    let what = match pick(&kinds, rng, "")? {
        0 => {
            let name = fresh_col_name(&t, "ghost");
            row.insert(name.clone(), Value::Null);
            format!("a column {name:?} the table does not have")
        }
        1 => {
            let c = pick(&plain, rng, "")?;
            row.remove(&c);
            format!("column {c:?} left out")
        }
        2 => {
            let c = pick(&excluded, rng, "")?;
            row.insert(c.clone(), Value::Null);
            format!("the excluded column {c:?}")
        }
        _ => {
            let c = pick(&generated, rng, "")?;
            row.insert(c.clone(), Value::Null);
            format!("the generated column {c:?}")
        }
    };
    Ok(Edit::new(
        At::Part(at.0),
        format!("a row of {:?} (part {}) has {what}", t.name, at.0),
    ))
}

/// A row of a table and one of its writable columns outside the key,
/// filtered by `want`.
fn pick_cell(
    m: &Model,
    rng: &mut Rng,
    want: impl Fn(&Col) -> bool,
) -> R<(Tab, Col, (usize, usize))> {
    let mut choices = Vec::new();
    for t in tables_with_rows(m, 1) {
        for c in t.plain_cols() {
            if want(c) {
                choices.push((t.clone(), c.clone()));
            }
        }
    }
    let (t, c) = pick(&choices, rng, "no row has such a column")?;
    let at = pick(&t.rows, rng, "")?;
    Ok((t, c, at))
}

fn set_cell(m: &mut Model, t: &Tab, c: &Col, at: (usize, usize), v: V, what: &str) -> R<Edit> {
    let k = t.rows.iter().position(|x| *x == at).unwrap_or(0);
    m.row_mut(at)?.insert(c.name.clone(), v);
    Ok(Edit::new(
        At::Part(at.0),
        format!(
            "row {k} of {:?} (part {}): {}.{} ({}) {what}",
            t.name,
            at.0,
            t.name,
            c.name,
            if c.ty.is_empty() { "no type" } else { &c.ty },
        ),
    ))
}

fn row_not_null(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_not_null_in)
}

fn row_not_null_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (t, c, at) = pick_cell(m, rng, |c| c.notnull)?;
    set_cell(m, &t, &c, at, Value::Null, "NOT NULL, holds null")
}

fn row_type(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_type_in)
}

fn row_type_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (t, c, at) = pick_cell(m, rng, |_| true)?;
    let (v, what) = match c.affinity() {
        Affinity::Text => match rng.below(3) {
            0 => (n(1), "holds a number"),
            1 => (
                obj(vec![("blob", s(encode_base64(b"text")))]),
                "holds a {blob}",
            ),
            _ => (Value::Bool(true), "holds true"),
        },
        Affinity::Number => match rng.below(2) {
            0 => (
                s("2024-01-01 10:00:00"),
                "holds text (NUMBER affinity: dates as text are refused)",
            ),
            _ => (s("1.5"), "holds the text \"1.5\""),
        },
        Affinity::Integer => match rng.below(2) {
            0 => (Value::Bool(true), "holds true"),
            _ => (Value::Array(vec![n(1)]), "holds an array"),
        },
        Affinity::Blob => match rng.below(3) {
            0 => (Value::Bool(false), "holds false"),
            1 => (Value::Array(vec![n(1)]), "holds an array"),
            _ => (
                obj(vec![("blob", s(encode_base64(b"png"))), ("type", s("png"))]),
                "holds an object that is not {blob}",
            ),
        },
    };
    set_cell(m, &t, &c, at, v, what)
}

fn unsafe_integer(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, true, unsafe_integer_in)
}

fn unsafe_integer_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let rowid_tabs: Vec<Tab> = tables_with_rows(m, 1)
        .into_iter()
        .filter(|t| t.alias.is_some())
        .collect();
    let cells = pick_cell(m, rng, |c| c.affinity() == Affinity::Integer);
    if cells.is_err() || (!rowid_tabs.is_empty() && rng.one_in(3)) {
        let t = pick(&rowid_tabs, rng, "no INTEGER cell and no rowid")?;
        let at = *t.rows.last().need("")?;
        m.item_mut(at.0, at.1)?
            .insert("rowid", Value::Number(9_007_199_254_740_994.0));
        return Ok(Edit::new(
            At::Part(at.0),
            format!(
                "the last row of {:?} has rowid 2^53+2 (still increasing, not safe)",
                t.name
            ),
        ));
    }
    let (t, c, at) = cells?;
    let (v, what) = match rng.below(5) {
        0 => (Value::Number(9_007_199_254_740_992.0), "holds 2^53"),
        1 => (Value::Number(-9_007_199_254_740_992.0), "holds -2^53"),
        2 => (Value::Number(7.5), "holds 7.5"),
        3 => (s("7"), "holds the text \"7\""),
        _ => (
            obj(vec![("blob", s(encode_base64(b"\x07")))]),
            "holds a {blob}",
        ),
    };
    set_cell(m, &t, &c, at, v, what)
}

fn invalid_base64(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let cell = pick_cell(m, rng, |c| c.affinity() == Affinity::Blob);
    let single: Vec<Bin> = m
        .bins()
        .into_iter()
        .filter(|b| b.parts.len() == 1 && b.size > 0)
        .collect();
    if let Ok((t, c, at)) = cell {
        if single.is_empty() || rng.one_in(2) {
            let (v, what) = match rng.below(3) {
                0 => ("QUI", "{blob} without padding (QUI)"),
                1 => ("QR==", "{blob} with unused bits set (QR==)"),
                _ => ("QU JD", "{blob} with a space (QU JD)"),
            };
            return set_cell(
                m,
                &t,
                &c,
                at,
                obj(vec![("blob", s(v))]),
                &format!("holds {what}"),
            );
        }
    }
    let b = if single.is_empty() {
        let data = some_bytes(rng, 1, 40);
        let idx = m.add_last_payload(&data)?;
        m.bins()
            .into_iter()
            .find(|b| b.kind == BinKind::Payload && b.idx == idx)
            .need("")?
    } else {
        pick(&single, rng, "")?
    };
    let p = b.parts[0];
    let item = m.item_mut(p, 0)?;
    let data = item
        .get("data")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mid = data.len() / 2 / 4 * 4;
    let bad = if rng.one_in(2) || !data.is_char_boundary(mid) {
        format!("{data}=")
    } else {
        format!("{}\n{}", &data[..mid], &data[mid..])
    };
    item.insert("data", s(bad));
    Ok(Edit::new(
        At::Part(p),
        format!(
            "the only chunk of {} {:?} is not canonical base64 (extra padding or an LF)",
            b.kind.word(),
            b.label
        ),
    )
    .allow(&[
        Code::BinaryMissing,
        Code::SizeMismatch,
        Code::Sha256Mismatch,
    ]))
}

fn rowid_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, true, rowid_order_in)
}

fn rowid_order_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let ts: Vec<Tab> = tables_with_rows(m, 2)
        .into_iter()
        .filter(|t| t.alias.is_some())
        .collect();
    let t = pick(&ts, rng, "no rowid table has two rows")?;
    let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
    let (a, b) = (t.rows[k - 1], t.rows[k]);
    let ra = m
        .item(a.0, a.1)
        .and_then(|i| i.get("rowid"))
        .cloned()
        .need("")?;
    let rb = m
        .item(b.0, b.1)
        .and_then(|i| i.get("rowid"))
        .cloned()
        .need("")?;
    m.item_mut(a.0, a.1)?.insert("rowid", rb);
    m.item_mut(b.0, b.1)?.insert("rowid", ra);
    Ok(Edit::new(
        At::Part(b.0),
        format!(
            "rows {} and {k} of {:?} trade rowids: row {k}'s is lower",
            k - 1,
            t.name
        ),
    ))
}

fn duplicate_row_key(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, duplicate_row_key_in)
}

fn duplicate_row_key_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let all = tables_with_rows(m, 2);
    let keyed: Vec<Tab> = all.iter().filter(|t| t.has_pk()).cloned().collect();
    let rowid: Vec<Tab> = all.iter().filter(|t| t.alias.is_some()).cloned().collect();
    if keyed.is_empty() || (!rowid.is_empty() && rng.one_in(3)) {
        let t = pick(&rowid, rng, "no table has two rows")?;
        let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
        let (a, b) = (t.rows[k - 1], t.rows[k]);
        let ra = m
            .item(a.0, a.1)
            .and_then(|i| i.get("rowid"))
            .cloned()
            .need("")?;
        m.item_mut(b.0, b.1)?.insert("rowid", ra);
        return Ok(Edit::new(
            At::Part(b.0),
            format!("row {k} of {:?} repeats the rowid of row {}", t.name, k - 1),
        )
        .allow(&[Code::RowidOrder]));
    }
    let t = pick(&keyed, rng, "")?;
    let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
    let (a, b) = (t.rows[k - 1], t.rows[k]);
    let keys: Vec<String> = t.pk_cols().iter().map(|c| c.name.clone()).collect();
    let src = m
        .item(a.0, a.1)
        .and_then(|i| i.get("row"))
        .cloned()
        .need("")?;
    let row = m.row_mut(b)?;
    for c in &keys {
        row.insert(c.clone(), src.get(c).cloned().unwrap_or(Value::Null));
    }
    Ok(Edit::new(
        At::Part(b.0),
        format!(
            "row {k} of {:?} repeats the key ({}) of row {}",
            t.name,
            keys.join(", "),
            k - 1
        ),
    ))
}

fn row_key_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_key_order_in)
}

fn row_key_order_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let ts: Vec<Tab> = tables_with_rows(m, 2)
        .into_iter()
        .filter(Tab::has_pk)
        .collect();
    let t = pick(&ts, rng, "no primary-key table has two rows")?;
    let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
    let (a, b) = (t.rows[k - 1], t.rows[k]);
    let ra = m
        .item(a.0, a.1)
        .and_then(|i| i.get("row"))
        .cloned()
        .need("")?;
    let rb = m
        .item(b.0, b.1)
        .and_then(|i| i.get("row"))
        .cloned()
        .need("")?;
    m.item_mut(a.0, a.1)?.insert("row", rb);
    m.item_mut(b.0, b.1)?.insert("row", ra);
    Ok(Edit::new(
        At::Part(b.0),
        format!(
            "rows {} and {k} of {:?} trade places: keys out of order (a warning)",
            k - 1,
            t.name
        ),
    ))
}

fn chunk_offset(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let bins = m.nonempty_bins(rng)?;
    let b = pick(&bins, rng, "no binary has bytes")?;
    let j = rng.below(b.parts.len() as u64) as usize;
    let p = b.parts[j];
    let item = m.item_mut(p, 0)?;
    let off = item
        .get("offset")
        .and_then(Value::as_safe_integer)
        .unwrap_or(0);
    item.insert("offset", n(off + 1));
    Ok(Edit::new(
        At::Part(p),
        format!(
            "chunk {j} of {} {:?} says offset {} where {off} is expected",
            b.kind.word(),
            b.label,
            off + 1
        ),
    )
    .allow(&[Code::SizeMismatch]))
}

fn empty_chunk(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    // Between two chunks: a binary of two or more chunks, or one of two or
    // more bytes cut in two.
    let mut bins: Vec<Bin> = m
        .bins()
        .into_iter()
        .filter(|b| b.size >= 2 && !b.parts.is_empty())
        .collect();
    if bins.is_empty() {
        let data = some_bytes(rng, 2, 30);
        m.add_last_payload(&data)?;
        bins = m
            .bins()
            .into_iter()
            .filter(|b| b.size >= 2 && !b.parts.is_empty())
            .collect();
    }
    let b = pick(&bins, rng, "no binary has two bytes")?;
    let template = m.item(b.parts[0], 0).cloned().need("no chunk")?;
    let chunk = |offset: i64, data: &[u8]| -> R<V> {
        let mut item = template.clone();
        let o = obj_mut(&mut item).need("not an object")?;
        o.insert("offset", n(offset));
        o.insert("data", s(encode_base64(data)));
        Ok(item)
    };
    let (at, off, what) = if b.parts.len() >= 2 {
        let j = rng.below(b.parts.len() as u64 - 1) as usize;
        let next = m.item(b.parts[j + 1], 0).cloned().need("no chunk")?;
        let off = int_at(&next, "offset").unwrap_or(0);
        (
            b.parts[j] + 1,
            off,
            format!("between chunks {j} and {}", j + 1),
        )
    } else {
        let bytes = m.bin_bytes(&b);
        if bytes.len() < 2 {
            return Err("the binary's chunk holds fewer bytes than its size".to_string());
        }
        let k = 1 + rng.below(bytes.len() as u64 - 1) as usize;
        let p = b.parts[0];
        *m.item_mut(p, 0)? = match chunk(0, &bytes[..k])? {
            Value::Object(o) => o,
            _ => return Err("not an object".to_string()),
        };
        m.insert_part(p + 1, vec![chunk(k as i64, &bytes[k..])?]);
        (
            p + 1,
            k as i64,
            format!("cut in two chunks at byte {k}, and"),
        )
    };
    let p = m.insert_part(at, vec![chunk(off, b"")?]);
    Ok(Edit::new(
        At::Part(p),
        format!(
            "{} {:?} {what} an empty chunk (offset {off}, data \"\") in part {p}",
            b.kind.word(),
            b.label
        ),
    ))
}

fn binary_missing(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let b = m.some_bin(rng)?;
    let what = if b.parts.len() >= 2 && rng.one_in(2) {
        let last = *b.parts.last().need("")?;
        m.parts.remove(last);
        format!(
            "the last chunk of {} {:?} removed (it stops short)",
            b.kind.word(),
            b.label
        )
    } else {
        for &p in b.parts.iter().rev() {
            m.parts.remove(p);
        }
        format!("every chunk of {} {:?} removed", b.kind.word(), b.label)
    };
    m.renumber();
    Ok(Edit::new(At::Manifest, what))
}

fn size_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    // The size falls inside the last chunk, so that the bytes pass it there
    // (earlier, the rest would be chunks of a finished binary).
    let last_len = |m: &Model, b: &Bin| -> i64 {
        b.parts
            .last()
            .and_then(|&p| m.item(p, 0))
            .and_then(|i| str_at(i, "data"))
            .and_then(decode_base64)
            .map_or(0, |d| d.len() as i64)
    };
    let fits = |m: &Model| -> Vec<Bin> {
        m.bins()
            .into_iter()
            .filter(|b| !b.parts.is_empty() && last_len(m, b) >= 2)
            .collect()
    };
    let mut bins = fits(m);
    if bins.is_empty() {
        let data = some_bytes(rng, 2, 30);
        m.add_last_payload(&data)?;
        bins = fits(m);
    }
    let b = pick(&bins, rng, "no binary has a last chunk of two bytes")?;
    let cut = 1 + rng.below((last_len(m, &b) - 1).min(4) as u64) as i64;
    m.entry_mut(b.kind, b.idx)?.insert("size", n(b.size - cut));
    let at = *b.parts.last().need("no chunk")?;
    Ok(Edit::new(
        At::Part(at),
        format!(
            "{} {:?} says size {} but its chunks hold {} bytes (sha256 is that of the bytes)",
            b.kind.word(),
            b.label,
            b.size - cut,
            b.size
        ),
    ))
}

fn sha256_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let b = m.some_bin(rng)?;
    let last = *b.parts.last().need("")?;
    if b.size > 0 && rng.one_in(2) {
        // Other bytes of the same length in one chunk.
        let j = rng.below(b.parts.len() as u64) as usize;
        let p = b.parts[j];
        let item = m.item_mut(p, 0)?;
        let mut bytes = item
            .get("data")
            .and_then(Value::as_str)
            .and_then(decode_base64)
            .unwrap_or_default();
        if bytes.is_empty() {
            return Err("an empty chunk".to_string());
        }
        let k = rng.below(bytes.len() as u64) as usize;
        bytes[k] ^= 1 + (rng.below(255) as u8);
        item.insert("data", s(encode_base64(&bytes)));
        return Ok(Edit::new(
            At::Part(last),
            format!(
                "byte {k} of chunk {j} of {} {:?} changed",
                b.kind.word(),
                b.label
            ),
        ));
    }
    let other = hex(&sha256(
        &m.bin_bytes(&b)
            .iter()
            .chain(b"!")
            .copied()
            .collect::<Vec<_>>(),
    ));
    m.entry_mut(b.kind, b.idx)?.insert("sha256", s(other));
    Ok(Edit::new(
        At::Part(last),
        format!(
            "the sha256 of {} {:?} is that of other bytes",
            b.kind.word(),
            b.label
        ),
    ))
}

fn part_count_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = m.parts.len() as i64;
    let wrong = if k > 0 && rng.one_in(2) { k - 1 } else { k + 1 };
    if rng.one_in(2) {
        m.manifest.insert("partCount", n(wrong));
        m.closing.insert("partCount", n(k));
        Ok(Edit::new(
            At::Manifest,
            format!("the manifest says {wrong} parts; there are {k} (the closing says {k})"),
        )
        .seal(|o| o.part_count = false))
    } else {
        m.manifest.insert("partCount", n(k));
        m.closing.insert("partCount", n(wrong));
        Ok(Edit::new(
            At::Closing,
            format!("the closing says {wrong} parts; there are {k} (the manifest says {k})"),
        )
        .seal(|o| o.part_count = false))
    }
}

fn content_hash_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let v = hex(&sha256(&rng.next_u64().to_le_bytes()));
    let _ = m;
    Ok(
        Edit::new(At::Closing, "contentHash is another SHA-256").closing_value(move |c| {
            c.insert("contentHash", s(v));
        }),
    )
}

fn archive_hash_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let _ = m;
    if rng.one_in(2) {
        // Computed over the lines with their LF.
        return Ok(Edit::new(
            At::Closing,
            "archiveHash computed over the lines with their LF",
        )
        .frame(|text| {
            let (raw, _) = lines(text);
            let mut h = ArchiveHasher::new();
            for l in &raw[..raw.len().saturating_sub(1)] {
                let mut with = l.to_vec();
                with.push(b'\n');
                h.add_line(&with);
            }
            let hash = h.finish();
            let last = raw.last().need("")?;
            let mut closing = ndarc_json::parse(last)
                .map_err(|e| e.to_string())?
                .into_owned();
            obj_mut(&mut closing)
                .need("")?
                .insert("archiveHash", s(hash));
            let at = text.len() - last.len() - 1;
            text.truncate(at);
            text.extend(ndarc_json::to_canonical_vec(&closing));
            text.push(b'\n');
            Ok(())
        }));
    }
    let v = hex(&sha256(&rng.next_u64().to_le_bytes()));
    Ok(
        Edit::new(At::Closing, "archiveHash is another SHA-256").closing_value(move |c| {
            c.insert("archiveHash", s(v));
        }),
    )
}

// -------------------------------------------------------------- registry

macro_rules! mutation {
    ($code:ident, $name:literal, $desc:literal, $f:path) => {
        Mutation {
            code: Code::$code,
            name: $name,
            description: $desc,
            apply: $f,
        }
    };
}

static MUTATIONS: &[Mutation] = &[
    mutation!(
        JsonSyntax,
        "json_syntax-trailing-comma",
        "a comma before the last } of the manifest or of a binary's part line",
        json_syntax_comma
    ),
    mutation!(
        JsonSyntax,
        "json_syntax-nan",
        "NaN for the first number of a line",
        json_syntax_nan
    ),
    mutation!(
        JsonSyntax,
        "json_syntax-leading-zero",
        "a leading zero on the first number of a line",
        json_syntax_leading_zero
    ),
    mutation!(
        JsonSyntax,
        "json_syntax-control-in-string",
        "a raw control character inside a string",
        json_syntax_control
    ),
    mutation!(
        JsonSyntax,
        "json_syntax-truncated",
        "a line without its last }",
        json_syntax_truncated
    ),
    mutation!(
        JsonInvalidUtf8,
        "json_invalid_utf8",
        "bytes that are not UTF-8 inside a string (FF, an overlong form, an encoded surrogate)",
        json_invalid_utf8
    ),
    mutation!(
        JsonBom,
        "json_bom",
        "a byte-order mark before a line",
        json_bom
    ),
    mutation!(
        JsonDuplicateMember,
        "json_duplicate_member",
        "a line's first member written twice",
        json_duplicate_member
    ),
    mutation!(
        JsonLoneSurrogate,
        "json_lone_surrogate",
        "an escaped lone surrogate inside a string",
        json_lone_surrogate
    ),
    mutation!(
        JsonNumberRange,
        "json_number_range",
        "1e400 for a line's first number",
        json_number_range
    ),
    mutation!(
        JsonDepth,
        "json_depth",
        "a number inside 64 nested arrays (depth 65)",
        json_depth
    ),
    mutation!(
        NotCanonical,
        "not_canonical-space",
        "a space after a colon of any line",
        not_canonical_space
    ),
    mutation!(
        NotCanonical,
        "not_canonical-number",
        "a number written as N.0",
        not_canonical_number
    ),
    mutation!(
        NotCanonical,
        "not_canonical-escape",
        "a letter escaped as \\u00XX",
        not_canonical_escape
    ),
    mutation!(
        EmptyLine,
        "empty_line",
        "an empty line between two lines, before the first or after the last",
        empty_line
    ),
    mutation!(
        CarriageReturn,
        "carriage_return-closing",
        "the closing line ends with CR LF",
        carriage_return_closing
    ),
    mutation!(
        CarriageReturn,
        "carriage_return",
        "a manifest or part line ends with CR LF (archiveHash over the bytes with the CR)",
        carriage_return_line
    ),
    mutation!(
        MissingFinalNewline,
        "missing_final_newline",
        "the last LF removed",
        missing_final_newline
    ),
    mutation!(
        MissingFinalNewline,
        "missing_final_newline-truncated",
        "the file cut in the middle of the closing line",
        missing_final_newline_truncated
    ),
    mutation!(
        LineTooLong,
        "line_too_long",
        "a new payload whose part line is over the default 16 MiB limit (a 17 MB mutant)",
        line_too_long
    ),
    mutation!(
        TrailingData,
        "trailing_data",
        "a line after the closing line",
        trailing_data
    ),
    mutation!(
        ManifestMissing,
        "manifest_missing",
        "no manifest line: removed, replaced by [], or an empty file",
        manifest_missing
    ),
    mutation!(
        ClosingMissing,
        "closing_missing",
        "the closing line removed",
        closing_missing
    ),
    mutation!(
        RecordKind,
        "record_kind",
        "a record or item whose kind is not one its place allows",
        record_kind
    ),
    mutation!(
        UnknownMember,
        "unknown_member",
        "a member the format does not define, in any kind of record",
        unknown_member
    ),
    mutation!(
        MissingMember,
        "missing_member",
        "a required member removed",
        missing_member
    ),
    mutation!(
        MemberType,
        "member_type",
        "a member of the wrong JSON type",
        member_type
    ),
    mutation!(
        UnsupportedFormat,
        "unsupported_format",
        "another format identifier",
        unsupported_format
    ),
    mutation!(
        UnsupportedVersion,
        "unsupported_version",
        "another version",
        unsupported_version
    ),
    mutation!(
        InvalidName,
        "invalid_name",
        "an empty, too long or control-character name",
        invalid_name
    ),
    mutation!(
        InvalidExportedAt,
        "invalid_exported_at",
        "exportedAt not a real toISOString timestamp",
        invalid_exported_at
    ),
    mutation!(
        InvalidInteger,
        "invalid_integer",
        "epoch or the closing partCount not a safe integer >= 0",
        invalid_integer
    ),
    mutation!(
        SchemaMismatch,
        "schema_mismatch",
        "schema not the identity of the tables",
        schema_mismatch
    ),
    mutation!(
        TableOrder,
        "table_order",
        "two neighbouring tables swapped (with their rows)",
        table_order
    ),
    mutation!(
        TableOrder,
        "table_order-case",
        "a second table whose name equals another's ignoring ASCII case (both in name order)",
        table_order_case
    ),
    mutation!(
        InvalidTableSql,
        "invalid_table_sql",
        "a table's sql a view, a virtual table or a temp table",
        invalid_table_sql
    ),
    mutation!(
        EmptyColumns,
        "empty_columns",
        "a new table with no columns",
        empty_columns
    ),
    mutation!(
        DuplicateColumn,
        "duplicate_column",
        "a second column whose name differs only in case",
        duplicate_column
    ),
    mutation!(
        ReservedColumn,
        "reserved_column",
        "a column named rer_portability_…",
        reserved_column
    ),
    mutation!(
        InvalidNotnull,
        "invalid_notnull",
        "notnull neither 0 nor 1",
        invalid_notnull
    ),
    mutation!(
        InvalidPk,
        "invalid_pk",
        "primary-key positions not exactly 1..k",
        invalid_pk
    ),
    mutation!(
        GeneratedPrimaryKey,
        "generated_primary_key",
        "a generated column in the primary key",
        generated_primary_key
    ),
    mutation!(
        InvalidGenerated,
        "invalid_generated",
        "generated neither virtual nor stored",
        invalid_generated
    ),
    mutation!(
        DependencyOrder,
        "dependency_order",
        "dependencies unsorted or repeated",
        dependency_order
    ),
    mutation!(
        ExcludedForeignKey,
        "excluded_foreign_key",
        "a dependency on an excluded table",
        excluded_foreign_key
    ),
    mutation!(
        MissingDependency,
        "missing_dependency",
        "a dependency on a table the archive lacks (a warning)",
        missing_dependency
    ),
    mutation!(
        RowidAliasMismatch,
        "rowid_alias_mismatch",
        "a rowidAlias the columns do not imply",
        rowid_alias_mismatch
    ),
    mutation!(
        UnsupportedCopyRowid,
        "unsupported_copy_rowid",
        "a primary-key table whose columns shadow rowid, _rowid_ and oid",
        unsupported_copy_rowid
    ),
    mutation!(
        TransferSqlLimit,
        "transfer_sql_limit",
        "a table whose column projection exceeds D1's SQL statement limit",
        transfer_sql_limit
    ),
    mutation!(
        ReservedTable,
        "reserved_table",
        "a table named sqlite_… or _cf_…",
        reserved_table
    ),
    mutation!(
        DefaultExcludedTable,
        "default_excluded_table",
        "a table the producer excludes by default (a warning)",
        default_excluded_table
    ),
    mutation!(
        DevData,
        "dev_data",
        "a table oa_dev_credentials with a row",
        dev_data
    ),
    mutation!(
        ObjectOrder,
        "object_order",
        "two objects swapped (with their chunks) or one listed twice",
        object_order
    ),
    mutation!(
        PayloadOrder,
        "payload_order",
        "two payloads swapped (with their chunks) or one listed twice",
        payload_order
    ),
    mutation!(
        InvalidSha256,
        "invalid_sha256",
        "a sha256 or closing hash not 64 lowercase hex digits",
        invalid_sha256
    ),
    mutation!(
        InvalidMetadata,
        "invalid_metadata",
        "httpMetadata or customMetadata not an object of strings",
        invalid_metadata
    ),
    mutation!(
        ExcludedTableOrder,
        "excluded_table_order",
        "excludedTables unsorted or repeated",
        excluded_table_order
    ),
    mutation!(
        ExcludedTablePresent,
        "excluded_table_present",
        "an archived table also excluded",
        excluded_table_present
    ),
    mutation!(
        ExcludedColumnUnknown,
        "excluded_column_unknown",
        "an excluded column of an unknown table or column",
        excluded_column_unknown
    ),
    mutation!(
        ExcludedColumnRequired,
        "excluded_column_required",
        "a NOT NULL, key or generated column excluded",
        excluded_column_required
    ),
    mutation!(
        ExcludedColumnDuplicate,
        "excluded_column_duplicate",
        "an excluded column listed twice",
        excluded_column_duplicate
    ),
    mutation!(
        DuplicateConfiguration,
        "duplicate_configuration",
        "requiredConfiguration repeats a name",
        duplicate_configuration
    ),
    mutation!(
        PartIndex,
        "part_index",
        "a part index out of sequence",
        part_index
    ),
    mutation!(EmptyPart, "empty_part", "a part with no items", empty_part),
    mutation!(
        MixedPart,
        "mixed_part",
        "a part holding another table's row or another binary's chunk",
        mixed_part
    ),
    mutation!(
        ItemOrder,
        "item_order",
        "two neighbouring parts of different tables or binaries swapped",
        item_order
    ),
    mutation!(
        UnknownTable,
        "unknown_table",
        "a row of a table the manifest lacks",
        unknown_table
    ),
    mutation!(
        UnknownObject,
        "unknown_object",
        "a chunk of an object the manifest lacks",
        unknown_object
    ),
    mutation!(
        UnknownPayload,
        "unknown_payload",
        "a chunk of a payload the manifest lacks",
        unknown_payload
    ),
    mutation!(
        RowIndex,
        "row_index",
        "a gap in a table's row indexes",
        row_index
    ),
    mutation!(
        RowCount,
        "row_count",
        "a table's count one more or one less than its rows",
        row_count
    ),
    mutation!(
        RowColumns,
        "row_columns",
        "a row with a missing, unknown, excluded or generated column",
        row_columns
    ),
    mutation!(
        RowNotNull,
        "row_not_null",
        "null in a NOT NULL column",
        row_not_null
    ),
    mutation!(
        RowType,
        "row_type",
        "a cell whose type does not fit its column's affinity",
        row_type
    ),
    mutation!(
        UnsafeInteger,
        "unsafe_integer",
        "an INTEGER cell or rowid that is not a safe integer",
        unsafe_integer
    ),
    mutation!(
        InvalidBase64,
        "invalid_base64",
        "a blob cell or chunk that is not canonical base64",
        invalid_base64
    ),
    mutation!(
        RowidOrder,
        "rowid_order",
        "two rows trade rowids",
        rowid_order
    ),
    mutation!(
        DuplicateRowKey,
        "duplicate_row_key",
        "a row repeats the key of the row before",
        duplicate_row_key
    ),
    mutation!(
        RowKeyOrder,
        "row_key_order",
        "two rows of a primary-key table trade places (a warning)",
        row_key_order
    ),
    mutation!(
        ChunkOffset,
        "chunk_offset",
        "a chunk offset one too far",
        chunk_offset
    ),
    mutation!(
        EmptyChunk,
        "empty_chunk",
        "an empty chunk inside or after a binary",
        empty_chunk
    ),
    mutation!(
        BinaryMissing,
        "binary_missing",
        "a binary's chunks, or its last chunk, removed",
        binary_missing
    ),
    mutation!(
        SizeMismatch,
        "size_mismatch",
        "a binary's size less than its bytes",
        size_mismatch
    ),
    mutation!(
        Sha256Mismatch,
        "sha256_mismatch",
        "a binary's bytes or sha256 changed",
        sha256_mismatch
    ),
    mutation!(
        PartCountMismatch,
        "part_count_mismatch",
        "the manifest or closing partCount off by one",
        part_count_mismatch
    ),
    mutation!(
        ContentHashMismatch,
        "content_hash_mismatch",
        "a wrong contentHash",
        content_hash_mismatch
    ),
    mutation!(
        ArchiveHashMismatch,
        "archive_hash_mismatch",
        "a wrong archiveHash",
        archive_hash_mismatch
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_code_has_a_mutation_and_names_are_unique() {
        for code in file_codes() {
            assert!(mutations_of(code).next().is_some(), "{code}");
        }
        for c in PUSH_ONLY {
            assert!(mutations_of(c).next().is_none());
        }
        let mut names: Vec<&str> = MUTATIONS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MUTATIONS.len());
        for m in MUTATIONS {
            assert!(
                m.name == m.code.as_str() || m.name.starts_with(&format!("{}-", m.code)),
                "{}",
                m.name
            );
        }
    }

    #[test]
    fn bad_input_is_not_applicable() {
        for input in [&b""[..], b"{}\n", b"not json\n", b"[1]\n[2]\n"] {
            assert!(mutate(input, Code::RowType, 1).is_err());
            assert!(mutate_random(input, 1).is_err());
        }
        let e = mutate(b"", Code::PartMissing, 1).unwrap_err();
        assert!(e.reason.contains("push API"), "{e}");
    }
}
