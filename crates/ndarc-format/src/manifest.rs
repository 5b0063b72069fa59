//! The manifest record and its rules (SPEC.md §4).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use ndarc_json::{cmp_utf16, Object, Value};

use crate::catalogue::{self, Affinity};
use crate::code::Code;
use crate::hash::Digest32;
use crate::report::{join, LineReport};

/// Identifiers a verifier accepts in `format` (SPEC.md §4.1).
#[derive(Debug, Clone)]
pub struct ManifestOptions {
    /// Accepted `format` identifiers (default: `rer-portability` only).
    pub formats: Vec<String>,
}

impl Default for ManifestOptions {
    fn default() -> Self {
        ManifestOptions {
            formats: vec![crate::FORMAT.to_string()],
        }
    }
}

/// How a generated column is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Generated {
    /// `generated: "virtual"`
    Virtual,
    /// `generated: "stored"`
    Stored,
}

/// A column of a table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Declared type (may be empty).
    #[serde(rename = "type")]
    pub decl_type: String,
    /// `NOT NULL`.
    pub notnull: bool,
    /// 0, or the 1-based position in the primary key.
    pub pk: u32,
    /// Set on generated columns, which rows never carry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated: Option<Generated>,
}

impl Column {
    /// The column's affinity.
    pub fn affinity(&self) -> Affinity {
        Affinity::of(&self.decl_type)
    }
}

/// A table of the manifest.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Table {
    /// Table name.
    pub name: String,
    /// The `CREATE TABLE` statement.
    pub sql: String,
    /// Columns in declaration order.
    pub columns: Vec<Column>,
    /// Foreign-key parents.
    pub dependencies: Vec<String>,
    /// `rowid`, `_rowid_` or `oid` for tables without a primary key.
    #[serde(rename = "rowidAlias")]
    pub rowid_alias: Option<String>,
    /// Number of row items.
    pub count: u64,
}

impl Table {
    /// Columns in primary-key order.
    pub fn primary_key(&self) -> Vec<&Column> {
        let mut pk: Vec<&Column> = self.columns.iter().filter(|c| c.pk > 0).collect();
        pk.sort_by_key(|c| c.pk);
        pk
    }
}

/// An object of a bucket.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ObjectEntry {
    /// Bucket binding name.
    pub bucket: String,
    /// Object key.
    pub key: String,
    /// Size in bytes.
    pub size: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
    /// `httpMetadata`, name order.
    #[serde(rename = "httpMetadata")]
    pub http_metadata: Vec<(String, String)>,
    /// `customMetadata`, name order.
    #[serde(rename = "customMetadata")]
    pub custom_metadata: Vec<(String, String)>,
}

/// An extra payload.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PayloadEntry {
    /// Payload name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
}

/// A manifest as read from its line. Fields a broken manifest lacks are
/// empty or zero; the findings say what was wrong.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Manifest {
    /// `format`.
    pub format: String,
    /// `version`.
    pub version: i64,
    /// `product`.
    pub product: String,
    /// `exportedAt`.
    #[serde(rename = "exportedAt")]
    pub exported_at: String,
    /// `sourceIdentity`.
    #[serde(rename = "sourceIdentity")]
    pub source_identity: String,
    /// `schema` as written.
    pub schema: String,
    /// Tables in manifest order.
    pub tables: Vec<Table>,
    /// Objects in manifest order.
    pub objects: Vec<ObjectEntry>,
    /// Payloads in manifest order.
    pub payloads: Vec<PayloadEntry>,
    /// `excludedTables`.
    #[serde(rename = "excludedTables")]
    pub excluded_tables: Vec<String>,
    /// `excludedColumns`: table → columns, in the order written.
    #[serde(rename = "excludedColumns")]
    pub excluded_columns: Vec<(String, Vec<String>)>,
    /// `requiredConfiguration`.
    #[serde(rename = "requiredConfiguration")]
    pub required_configuration: Vec<String>,
    /// `partCount`.
    #[serde(rename = "partCount")]
    pub part_count: u64,
    /// `epoch`.
    pub epoch: u64,
    /// `journal`, as its entries (`None` when the member is missing).
    #[serde(skip)]
    pub journal: Option<Carried>,
    /// `migrations`, as its entries (`None` when the member is absent).
    #[serde(skip)]
    pub migrations: Option<Carried>,
    /// Digest of the canonical content header (first term of `contentHash`).
    #[serde(skip)]
    pub header_digest: Digest32,
}

impl Manifest {
    /// The excluded columns of `table`.
    pub fn excluded_columns_of(&self, table: &str) -> &[String] {
        self.excluded_columns
            .iter()
            .find(|(t, _)| t == table)
            .map_or(&[], |(_, c)| c.as_slice())
    }

    /// Total bytes of objects and of payloads.
    pub fn binary_bytes(&self) -> (u64, u64) {
        (
            self.objects
                .iter()
                .map(|o| o.size)
                .fold(0u64, u64::saturating_add),
            self.payloads
                .iter()
                .map(|p| p.size)
                .fold(0u64, u64::saturating_add),
        )
    }
}

/// A value the format carries without interpreting it (`journal`,
/// `migrations`; SPEC.md §4.2), read as a list of entries where it has that
/// form, for the lineage rules (SPEC.md §4.6). Each entry is kept as its
/// canonical JSON text, so two entries are equal when their texts are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Carried {
    /// A list of entries: an array (`member` `None`), `null` (no entries),
    /// or an object whose one array member is `member`.
    Entries {
        /// The object member holding the entries, if the value is an object.
        member: Option<String>,
        /// Each entry's canonical JSON text.
        entries: Vec<String>,
    },
    /// Any other value, as its canonical JSON text.
    Opaque(String),
}

impl Carried {
    /// The JSON pointer, below the member's own, of entry `i` (or of the
    /// list when `i` is `None`).
    pub fn entry_pointer(&self, top: &str, i: Option<usize>) -> String {
        let mut tokens = vec![top.to_string()];
        if let Carried::Entries {
            member: Some(m), ..
        } = self
        {
            tokens.push(m.clone());
        }
        if let Some(i) = i {
            tokens.push(i.to_string());
        }
        crate::finding::pointer(tokens)
    }

    /// The value `v` as parsed (a whole tree).
    fn of_value(v: &Value<'_>) -> Carried {
        match v {
            Value::Null => Carried::Entries {
                member: None,
                entries: Vec::new(),
            },
            Value::Array(items) => Carried::Entries {
                member: None,
                entries: items.iter().map(ndarc_json::to_canonical_string).collect(),
            },
            Value::Object(o) => {
                let arrays: Vec<(&str, &[Value<'_>])> = o
                    .iter()
                    .filter_map(|(k, v)| v.as_array().map(|a| (k, a)))
                    .collect();
                match arrays.as_slice() {
                    [(name, items)] => Carried::Entries {
                        member: Some(name.to_string()),
                        entries: items.iter().map(ndarc_json::to_canonical_string).collect(),
                    },
                    _ => Carried::Opaque(ndarc_json::to_canonical_string(v)),
                }
            }
            other => Carried::Opaque(ndarc_json::to_canonical_string(other)),
        }
    }

    /// The container `raw` (valid JSON text) of a manifest read lazily.
    fn of_raw(raw: &str) -> Carried {
        let canonical = |text: &str| {
            let mut buf = Vec::new();
            let _ = ndarc_json::canonicalize(text.as_bytes(), &mut buf);
            String::from_utf8(buf).unwrap_or_default()
        };
        if raw.starts_with('[') {
            return Carried::Entries {
                member: None,
                entries: raw_elements(raw).map(canonical).collect(),
            };
        }
        let arrays: Vec<(Cow<'_, str>, &str)> = raw_members(raw)
            .filter(|(_, v)| v.starts_with('['))
            .map(|(n, v)| (unquote(n), v))
            .collect();
        match arrays.as_slice() {
            [(name, items)] => Carried::Entries {
                member: Some(name.to_string()),
                entries: raw_elements(items).map(canonical).collect(),
            },
            _ => Carried::Opaque(canonical(raw)),
        }
    }

    /// The member `name` of the manifest `obj`, read lazily or not.
    fn read(obj: &Object<'_>, lazy: &Lazy<'_>, name: &str) -> Option<Carried> {
        match lazy.members.get(name) {
            Some(raw) => Some(Carried::of_raw(raw)),
            None => obj.get(name).map(Carried::of_value),
        }
    }
}

const MANIFEST_REQUIRED: [&str; 16] = [
    "kind",
    "format",
    "version",
    "product",
    "exportedAt",
    "sourceIdentity",
    "schema",
    "tables",
    "objects",
    "payloads",
    "excludedTables",
    "excludedColumns",
    "requiredConfiguration",
    "partCount",
    "epoch",
    "journal",
];

/// Outcome of reading a manifest.
pub enum ManifestOutcome {
    /// Read; findings (if any) are in the report. Verification can go on.
    Read(Box<Manifest>),
    /// The manifest cannot be interpreted (not a manifest, unknown format
    /// or version): verification stops here.
    Fatal,
}

/// Checks the manifest record `value` (the parsed first line) and returns it
/// typed. Every rule of SPEC.md §4 is checked here, in one place.
pub fn check_manifest(
    value: &Value<'_>,
    r: &mut LineReport<'_>,
    options: &ManifestOptions,
) -> ManifestOutcome {
    check(value, &Lazy::default(), r, options)
}

/// [`check_manifest`] on the manifest line's bytes, which
/// [`ndarc_json::validate_with`] found to be JSON (`canonical`: and in
/// canonical form), with the same findings. The tree of the whole line,
/// many times its size, is never built: the lists of the top-level object
/// are parsed an element at a time, checked, and dropped, so the memory
/// is the line plus the typed manifest.
pub fn check_manifest_line(
    line: &[u8],
    canonical: bool,
    r: &mut LineReport<'_>,
    options: &ManifestOptions,
) -> ManifestOutcome {
    let Ok(text) = std::str::from_utf8(line) else {
        // Not reached after validate_with; a plain refusal all the same.
        r.add(
            Code::ManifestMissing,
            "",
            "the first line is not UTF-8 text",
        );
        return ManifestOutcome::Fatal;
    };
    let (value, lazy) = Lazy::read(text, canonical);
    check(&value, &lazy, r, options)
}

/// The containers (arrays and objects) of the manifest line's top-level
/// object as raw text, for a line read without its tree; empty when the
/// whole tree was parsed. In the shallow value [`Lazy::read`] returns they
/// stand as empty containers of the same type.
#[derive(Default)]
struct Lazy<'a> {
    members: HashMap<Cow<'a, str>, &'a str>,
    /// The line is canonical: a member's text is its canonical form.
    canonical: bool,
}

/// The offset of the first non-whitespace byte at or after `i`.
fn ws(t: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = t.get(i) {
        i += 1;
    }
    i
}

/// A value as it stands in the shallow manifest: containers empty.
fn shallow(raw: &str) -> Value<'_> {
    match raw.as_bytes().first() {
        Some(b'[') => Value::Array(Vec::new()),
        Some(b'{') => Value::Object(Object::new()),
        _ => ndarc_json::parse(raw.as_bytes()).unwrap_or(Value::Null),
    }
}

/// The elements of the array `raw` (valid JSON), as text.
fn raw_elements(raw: &str) -> impl Iterator<Item = &str> {
    let t = raw.as_bytes();
    let mut i = 1;
    std::iter::from_fn(move || {
        i = ws(t, i);
        if matches!(t.get(i), None | Some(b']')) {
            return None;
        }
        let start = i;
        let end = ndarc_json::skip_value(t, start)?;
        i = ws(t, end);
        if t.get(i) == Some(&b',') {
            i += 1;
        }
        Some(&raw[start..end])
    })
}

/// The members of the object `raw` (valid JSON): name text (quoted) and
/// value text.
fn raw_members(raw: &str) -> impl Iterator<Item = (&str, &str)> {
    let t = raw.as_bytes();
    let mut i = 1;
    std::iter::from_fn(move || {
        i = ws(t, i);
        if t.get(i) != Some(&b'"') {
            return None;
        }
        let name_end = ndarc_json::skip_string(t, i)?;
        let name = &raw[i..name_end];
        let start = ws(t, ws(t, name_end) + 1);
        let end = ndarc_json::skip_value(t, start)?;
        i = ws(t, end);
        if t.get(i) == Some(&b',') {
            i += 1;
        }
        Some((name, &raw[start..end]))
    })
}

/// A JSON string's text (quoted) as its value.
fn unquote(raw: &str) -> Cow<'_, str> {
    match ndarc_json::parse(raw.as_bytes()) {
        Ok(Value::String(s)) => s,
        _ => Cow::Borrowed(""),
    }
}

impl<'a> Lazy<'a> {
    /// The shallow top-level value of `text` (valid JSON) and its
    /// containers' text.
    fn read(text: &'a str, canonical: bool) -> (Value<'a>, Lazy<'a>) {
        let start = ws(text.as_bytes(), 0);
        let end = ws_back(text.as_bytes());
        let raw = &text[start..end.max(start)];
        let mut lazy = Lazy {
            members: HashMap::new(),
            canonical,
        };
        if !raw.starts_with('{') {
            return (shallow(raw), lazy);
        }
        let mut obj = Object::new();
        for (name, v) in raw_members(raw) {
            let name = unquote(name);
            if v.starts_with(['[', '{']) {
                lazy.members.insert(name.clone(), v);
            }
            obj.insert(name, shallow(v));
        }
        (Value::Object(obj), lazy)
    }

    /// The list `name`: its text when held here, else `parsed`.
    fn list<'v>(&self, name: &str, parsed: &'v [Value<'a>]) -> List<'v, 'a> {
        match self.members.get(name) {
            Some(raw) => List::Raw(raw),
            None => List::Parsed(parsed),
        }
    }

    /// The object `name`: its text when held here, else `parsed`.
    fn object<'v>(&self, name: &str, parsed: &'v Object<'a>) -> Members<'v, 'a> {
        match self.members.get(name) {
            Some(raw) => Members::Raw(raw),
            None => Members::Parsed(parsed),
        }
    }

    /// The content header digest (SPEC.md §7.2) of the shallow manifest.
    fn header_digest(&self, obj: &Object<'_>) -> Digest32 {
        if self.members.is_empty() {
            return catalogue::content_header_digest(obj);
        }
        catalogue::content_header_digest_by(|name, out| {
            if let Some(raw) = self.members.get(name) {
                if self.canonical {
                    out(raw.as_bytes());
                } else {
                    canonical_raw(raw, out);
                }
                true
            } else if let Some(v) = obj.get(name) {
                out(&ndarc_json::to_canonical_vec(v));
                true
            } else {
                false
            }
        })
    }
}

/// The offset just past the last non-whitespace byte of `t`.
fn ws_back(t: &[u8]) -> usize {
    let mut end = t.len();
    while end > 0 && matches!(t[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
        end -= 1;
    }
    end
}

/// Writes the canonical form of the container `raw` (valid JSON, not
/// canonical) to `out` an element or member at a time.
fn canonical_raw(raw: &str, out: &mut dyn FnMut(&[u8])) {
    let mut buf = Vec::new();
    let piece = |buf: &mut Vec<u8>, text: &str| {
        buf.clear();
        let _ = ndarc_json::canonicalize(text.as_bytes(), buf);
    };
    if raw.starts_with('[') {
        out(b"[");
        for (i, e) in raw_elements(raw).enumerate() {
            if i > 0 {
                out(b",");
            }
            piece(&mut buf, e);
            out(&buf);
        }
        out(b"]");
    } else {
        let mut members: Vec<(Cow<'_, str>, &str)> =
            raw_members(raw).map(|(n, v)| (unquote(n), v)).collect();
        members.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
        out(b"{");
        for (i, (name, v)) in members.iter().enumerate() {
            buf.clear();
            if i > 0 {
                buf.push(b',');
            }
            ndarc_json::write_string(name, &mut buf);
            buf.push(b':');
            out(&buf);
            piece(&mut buf, v);
            out(&buf);
        }
        out(b"}");
    }
}

/// A list member of the manifest: elements of a parsed tree, or of raw
/// text parsed one at a time.
#[derive(Clone, Copy)]
enum List<'v, 'a> {
    Parsed(&'v [Value<'a>]),
    Raw(&'a str),
}

impl<'a> List<'_, 'a> {
    fn len(self) -> usize {
        match self {
            List::Parsed(l) => l.len(),
            List::Raw(raw) => raw_elements(raw).count(),
        }
    }

    /// Calls `f` with each element and its position.
    fn for_each(self, mut f: impl FnMut(usize, &Value<'a>)) {
        match self {
            List::Parsed(l) => l.iter().enumerate().for_each(|(i, v)| f(i, v)),
            List::Raw(raw) => {
                for (i, e) in raw_elements(raw).enumerate() {
                    // The line was validated: every element parses.
                    if let Ok(v) = ndarc_json::parse(e.as_bytes()) {
                        f(i, &v);
                    }
                }
            }
        }
    }
}

/// An object member of the manifest, parsed or raw (as [`List`]).
#[derive(Clone, Copy)]
enum Members<'v, 'a> {
    Parsed(&'v Object<'a>),
    Raw(&'a str),
}

impl<'a> Members<'_, 'a> {
    fn is_empty(self) -> bool {
        match self {
            Members::Parsed(o) => o.is_empty(),
            Members::Raw(raw) => raw_members(raw).next().is_none(),
        }
    }

    /// Calls `f` with each member's name and value.
    fn for_each(self, mut f: impl FnMut(&str, &Value<'a>)) {
        match self {
            Members::Parsed(o) => o.iter().for_each(|(n, v)| f(n, v)),
            Members::Raw(raw) => {
                for (n, v) in raw_members(raw) {
                    if let Ok(v) = ndarc_json::parse(v.as_bytes()) {
                        f(&unquote(n), &v);
                    }
                }
            }
        }
    }
}

fn check<'a>(
    value: &Value<'a>,
    lazy: &Lazy<'a>,
    r: &mut LineReport<'_>,
    options: &ManifestOptions,
) -> ManifestOutcome {
    let Some(obj) = value.as_object() else {
        r.add(
            Code::ManifestMissing,
            "",
            format!(
                "the first line must be the manifest object, not {}",
                value.type_name()
            ),
        );
        return ManifestOutcome::Fatal;
    };
    match obj.get("kind").and_then(Value::as_str) {
        Some("manifest") => {}
        Some(other) => {
            r.add(
                Code::ManifestMissing,
                "/kind",
                format!("the first line must be the manifest, but its kind is {other:?}"),
            );
            return ManifestOutcome::Fatal;
        }
        None => {
            r.add(
                Code::ManifestMissing,
                "",
                "the first line must be the manifest: an object with \"kind\": \"manifest\"",
            );
            return ManifestOutcome::Fatal;
        }
    }
    // Format and version first: under another format nothing else means
    // what this verifier thinks.
    let format = match obj.get("format") {
        Some(Value::String(s)) if options.formats.iter().any(|f| f == s.as_ref()) => s.to_string(),
        Some(Value::String(s)) => {
            r.add(
                Code::UnsupportedFormat,
                "/format",
                format!(
                    "format {s:?} is not one this verifier reads (expected {:?}); pass --accept-format to read it as a portability archive",
                    options.formats.first().map_or(crate::FORMAT, String::as_str)
                ),
            );
            return ManifestOutcome::Fatal;
        }
        _ => {
            r.add(
                Code::UnsupportedFormat,
                "/format",
                "the manifest must name its format as a string, e.g. \"rer-portability\"",
            );
            return ManifestOutcome::Fatal;
        }
    };
    let version = match obj.get("version").and_then(Value::as_f64) {
        Some(v) if v == crate::VERSION as f64 => crate::VERSION,
        Some(v) => {
            r.add(
                Code::UnsupportedVersion,
                "/version",
                format!(
                    "version {} is not supported; this verifier reads version {}",
                    ndarc_json::number::format(v),
                    crate::VERSION
                ),
            );
            return ManifestOutcome::Fatal;
        }
        None => {
            r.add(
                Code::UnsupportedVersion,
                "/version",
                format!("the manifest must give \"version\": {}", crate::VERSION),
            );
            return ManifestOutcome::Fatal;
        }
    };

    r.members(obj, "", &MANIFEST_REQUIRED, &["migrations"], "the manifest");
    let mut m = Manifest {
        format,
        version,
        ..Manifest::default()
    };
    if let Some(s) = r.name(obj, "", "product") {
        m.product = s.to_string();
    }
    if let Some(s) = r.name(obj, "", "sourceIdentity") {
        m.source_identity = s.to_string();
    }
    if let Some(s) = r.str(obj, "", "exportedAt") {
        if !catalogue::is_iso_timestamp(s) {
            r.add(
                Code::InvalidExportedAt,
                "/exportedAt",
                format!("exportedAt {s:?} is not a real instant in the form YYYY-MM-DDTHH:MM:SS.sssZ (Date.prototype.toISOString)"),
            );
        }
        m.exported_at = s.to_string();
    }
    if let Some(s) = r.str(obj, "", "schema") {
        m.schema = s.to_string();
    }
    if let Some(n) = r.count(obj, "", "partCount") {
        m.part_count = n;
    }
    if let Some(n) = r.count(obj, "", "epoch") {
        m.epoch = n;
    }
    m.journal = Carried::read(obj, lazy, "journal");
    m.migrations = Carried::read(obj, lazy, "migrations");

    // The schema identity is recomputed over the tables as written, while
    // they are checked.
    let mut identity = None;
    if let Some(tables) = r.array(obj, "", "tables") {
        let (t, id) = check_tables(lazy.list("tables", tables), r);
        m.tables = t;
        identity = id;
    }
    if let Some(expected) = identity {
        if obj.get("schema").and_then(Value::as_str).is_some() && expected != m.schema {
            r.add(
                Code::SchemaMismatch,
                "/schema",
                format!("schema is {:?} but SHA-256 of the tables' canonical [{{name, sql}}] is {expected:?}", m.schema),
            );
        }
    }
    if let Some(excluded) = r.array(obj, "", "excludedTables") {
        m.excluded_tables =
            check_excluded_tables(lazy.list("excludedTables", excluded), &m.tables, r);
    }
    check_dependencies(&m, r);
    if let Some(cols) = r.object(obj, "", "excludedColumns") {
        m.excluded_columns =
            check_excluded_columns(lazy.object("excludedColumns", cols), &m.tables, r);
    }
    if let Some(list) = r.array(obj, "", "requiredConfiguration") {
        let list = lazy.list("requiredConfiguration", list);
        m.required_configuration.reserve_exact(list.len());
        // The first position of each name's hash: the names themselves are
        // kept once, in the manifest. Where two names share a hash (a 64-bit
        // keyed hash: practically never), the earlier names are compared.
        let state = std::hash::RandomState::new();
        let mut first: HashMap<u64, usize> = HashMap::with_capacity(list.len());
        let names = &mut m.required_configuration;
        list.for_each(|i, v| {
            let p = format!("/requiredConfiguration/{i}");
            match v.as_str() {
                Some(s) => {
                    r.check_name(s, &p, "configuration name");
                    let listed = match first.entry(std::hash::BuildHasher::hash_one(&state, s)) {
                        std::collections::hash_map::Entry::Vacant(e) => {
                            e.insert(names.len());
                            false
                        }
                        std::collections::hash_map::Entry::Occupied(e) => {
                            names[*e.get()] == s || names.iter().any(|n| n == s)
                        }
                    };
                    if listed {
                        r.add(
                            Code::DuplicateConfiguration,
                            &p,
                            format!("configuration name {s:?} is listed twice"),
                        );
                    }
                    names.push(s.to_string());
                }
                None => r.add(
                    Code::MemberType,
                    &p,
                    format!("configuration names are strings, not {}", v.type_name()),
                ),
            }
        });
    }
    if let Some(objects) = r.array(obj, "", "objects") {
        m.objects = check_objects(lazy.list("objects", objects), r);
    }
    if let Some(payloads) = r.array(obj, "", "payloads") {
        m.payloads = check_payloads(lazy.list("payloads", payloads), r);
    }
    m.header_digest = lazy.header_digest(obj);
    ManifestOutcome::Read(Box::new(m))
}

const TABLE_MEMBERS: [&str; 6] = [
    "columns",
    "count",
    "dependencies",
    "name",
    "rowidAlias",
    "sql",
];
const COLUMN_MEMBERS: [&str; 4] = ["name", "notnull", "pk", "type"];

/// The tables, and the schema identity of their names and SQL as written
/// when every table has both as strings.
fn check_tables(list: List<'_, '_>, r: &mut LineReport<'_>) -> (Vec<Table>, Option<String>) {
    let n = list.len();
    let mut tables: Vec<Table> = Vec::with_capacity(n);
    let mut identity = Some(catalogue::SchemaIdentity::new());
    // Position of the first table of each name, ignoring ASCII case.
    let mut by_folded: HashMap<String, usize> = HashMap::with_capacity(n);
    list.for_each(|i, v| {
        match (
            &mut identity,
            v.get("name").and_then(Value::as_str),
            v.get("sql").and_then(Value::as_str),
        ) {
            (Some(id), Some(name), Some(sql)) => id.push(name, sql),
            _ => identity = None,
        }
        let p = format!("/tables/{i}");
        let Some(o) = v.as_object() else {
            r.add(
                Code::MemberType,
                &p,
                format!("a table is an object, not {}", v.type_name()),
            );
            return;
        };
        r.members(o, &p, &TABLE_MEMBERS, &[], "a table");
        let name = r.name(o, &p, "name").unwrap_or_default().to_string();
        // Names equal ignoring ASCII case need not be neighbours in UTF-16
        // order (`USERS` … `orders` … `users`), so every earlier name counts.
        let folded = name.to_ascii_lowercase();
        if let Some(same) = by_folded.get(&folded).map(|&at| &tables[at]) {
            r.add(
                Code::TableOrder,
                &join(&p, "name"),
                format!(
                    "table {name:?} repeats {:?}: SQLite table names are case-insensitive",
                    same.name
                ),
            );
        } else if let Some(prev) = tables.last() {
            if cmp_utf16(&prev.name, &name) != Ordering::Less {
                r.add(
                    Code::TableOrder,
                    &join(&p, "name"),
                    format!(
                        "table {name:?} comes after {:?}; tables are sorted by name",
                        prev.name
                    ),
                );
            }
        }
        let sql = r.str(o, &p, "sql").unwrap_or_default().to_string();
        if o.contains_key("sql") && !is_create_table(&sql) {
            r.add(
                Code::InvalidTableSql,
                &join(&p, "sql"),
                format!("the sql of table {name:?} must be a CREATE TABLE statement (not a virtual table)"),
            );
        }
        let columns = r
            .array(o, &p, "columns")
            .map(|cols| check_columns(cols, &p, &name, r))
            .unwrap_or_default();
        let mut dependencies = Vec::new();
        if let Some(deps) = r.array(o, &p, "dependencies") {
            for (j, d) in deps.iter().enumerate() {
                let dp = format!("{p}/dependencies/{j}");
                match d.as_str() {
                    Some(s) => {
                        r.check_name(s, &dp, "dependency");
                        if let Some(prev) = dependencies.last() {
                            let prev: &String = prev;
                            if cmp_utf16(prev, s) != Ordering::Less {
                                r.add(
                                    Code::DependencyOrder,
                                    &dp,
                                    format!("dependencies of {name:?} must be sorted and unique; {s:?} comes after {prev:?}"),
                                );
                            }
                        }
                        dependencies.push(s.to_string());
                    }
                    None => r.add(
                        Code::MemberType,
                        &dp,
                        "dependencies are table names (strings)",
                    ),
                }
            }
        }
        let count = r.count(o, &p, "count").unwrap_or(0);
        let rowid_alias = match o.get("rowidAlias") {
            None => None,
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.to_string()),
            Some(other) => {
                r.add(
                    Code::MemberType,
                    &join(&p, "rowidAlias"),
                    format!("rowidAlias is null or a string, not {}", other.type_name()),
                );
                None
            }
        };
        if o.contains_key("rowidAlias") && !columns.is_empty() {
            let any_pk = columns.iter().any(|c| c.pk > 0);
            let expected = catalogue::rowid_alias(columns.iter().map(|c| c.name.as_str()), any_pk);
            match expected {
                Ok(e) if e == rowid_alias.as_deref() => {}
                Ok(e) => r.add(
                    Code::RowidAliasMismatch,
                    &join(&p, "rowidAlias"),
                    format!(
                        "rowidAlias of {name:?} is {} but its columns imply {}",
                        show_alias(rowid_alias.as_deref()),
                        show_alias(e)
                    ),
                ),
                Err(()) => r.add(
                    Code::RowidAliasMismatch,
                    &join(&p, "rowidAlias"),
                    format!("table {name:?} has no primary key and its columns shadow rowid, _rowid_ and oid, so its rows cannot be addressed"),
                ),
            }
        }
        check_importable(&name, &columns, count, &p, r);
        by_folded.entry(folded).or_insert(tables.len());
        tables.push(Table {
            name,
            sql,
            columns,
            dependencies,
            rowid_alias,
            count,
        });
    });
    (tables, identity.map(catalogue::SchemaIdentity::finish))
}

/// What the producer's catalogue and its import refuse about a table that
/// the format alone would allow (SPEC.md §4.3, "Importable tables").
fn check_importable(name: &str, columns: &[Column], count: u64, p: &str, r: &mut LineReport<'_>) {
    if let Some(prefix) = catalogue::reserved_table_prefix(name) {
        r.add(
            Code::ReservedTable,
            &join(p, "name"),
            format!("table {name:?} starts with {prefix:?}, a prefix SQLite or D1 reserves: no import can create it"),
        );
    } else if let Some(pattern) = catalogue::default_exclusion(name) {
        r.add(
            Code::DefaultExcludedTable,
            &join(p, "name"),
            format!("table {name:?} matches the producer's default exclusion {pattern:?}: a producer archives it only when told to include it"),
        );
    }
    if name == "oa_dev_credentials" && count > 0 {
        r.add(
            Code::DevData,
            &join(p, "count"),
            format!("table {name:?} holds {count} development credentials: the import refuses development data (refuseDevData)"),
        );
    }
    if columns.is_empty() {
        return;
    }
    if columns.iter().any(|c| c.pk > 0)
        && !catalogue::has_copy_rowid(columns.iter().map(|c| c.name.as_str()))
    {
        r.add(
            Code::UnsupportedCopyRowid,
            &join(p, "columns"),
            format!("table {name:?} has columns named rowid, _rowid_ and oid: the import addresses its copy through one of them (copyRowid), so it cannot be restored"),
        );
    }
    let projected = catalogue::projected_columns_len(
        columns
            .iter()
            .map(|c| (c.name.as_str(), c.decl_type.as_str(), c.generated.is_some())),
    );
    if projected + catalogue::TRANSFER_SQL_RESERVE > catalogue::TRANSFER_SQL_LIMIT {
        r.add(
            Code::TransferSqlLimit,
            &join(p, "columns"),
            format!(
                "the columns of table {name:?} take {projected} bytes in the producer's copy statements; with {} bytes for names and joins that exceeds D1's limit of {} bytes per statement",
                catalogue::TRANSFER_SQL_RESERVE,
                catalogue::TRANSFER_SQL_LIMIT
            ),
        );
    }
}

fn show_alias(a: Option<&str>) -> String {
    a.map_or("null".to_string(), |s| format!("{s:?}"))
}

/// `CREATE TABLE` in any case with any whitespace, and not `CREATE VIRTUAL
/// TABLE` (which the first test already excludes): the lexical rule of a
/// table's `sql` (`invalid_table_sql`). What passes it is then judged by
/// SQLite's parser (`table_sql`, in ndarc-verify's manifest intake).
pub fn is_create_table(sql: &str) -> bool {
    let mut words = sql.split_ascii_whitespace();
    let table = |w: &str| {
        // Compared as bytes: the word may hold multi-byte characters. After
        // `TABLE` comes a byte SQLite does not read as part of an
        // identifier (letters, digits, `_`, `$` and every non-ASCII byte).
        let b = w.as_bytes();
        b.len() >= 5
            && b[..5].eq_ignore_ascii_case(b"TABLE")
            && b.get(5).is_none_or(|&c| {
                !(c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80)
            })
    };
    matches!(words.next(), Some(w) if w.eq_ignore_ascii_case("CREATE"))
        && words.next().is_some_and(table)
}

fn check_columns(list: &[Value<'_>], tp: &str, table: &str, r: &mut LineReport<'_>) -> Vec<Column> {
    if list.is_empty() {
        r.add(
            Code::EmptyColumns,
            &join(tp, "columns"),
            format!("table {table:?} has no columns"),
        );
    }
    let mut cols: Vec<Column> = Vec::with_capacity(list.len());
    // Names so far, ignoring ASCII case.
    let mut folded: HashSet<String> = HashSet::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let p = format!("{tp}/columns/{i}");
        let Some(o) = v.as_object() else {
            r.add(
                Code::MemberType,
                &p,
                format!("a column is an object, not {}", v.type_name()),
            );
            continue;
        };
        r.members(o, &p, &COLUMN_MEMBERS, &["generated"], "a column");
        let name = r.name(o, &p, "name").unwrap_or_default().to_string();
        if !folded.insert(name.to_ascii_lowercase()) {
            r.add(
                Code::DuplicateColumn,
                &join(&p, "name"),
                format!(
                    "table {table:?} has two columns named {name:?} (names are case-insensitive)"
                ),
            );
        }
        if name.starts_with("rer_portability_") {
            r.add(
                Code::ReservedColumn,
                &join(&p, "name"),
                format!("column {name:?} of {table:?} uses the reserved prefix rer_portability_"),
            );
        }
        let decl_type = r.str(o, &p, "type").unwrap_or_default().to_string();
        let notnull = match o.get("notnull") {
            Some(Value::Number(n)) if *n == 0.0 || *n == 1.0 => *n == 1.0,
            Some(v) => {
                r.add(
                    Code::InvalidNotnull,
                    &join(&p, "notnull"),
                    format!(
                        "notnull of {table:?}.{name:?} must be 0 or 1, not {}",
                        show(v)
                    ),
                );
                false
            }
            None => false,
        };
        let pk = match o.get("pk") {
            Some(Value::Number(n)) => {
                match ndarc_json::safe_integer(*n) {
                    Some(k) if (0..=i64::from(u32::MAX)).contains(&k) => k as u32,
                    _ => {
                        r.add(
                        Code::InvalidPk,
                        &join(&p, "pk"),
                        format!("pk of {table:?}.{name:?} must be 0 or a 1-based key position, not {}", show(&Value::Number(*n))),
                    );
                        0
                    }
                }
            }
            Some(v) => {
                r.add(
                    Code::MemberType,
                    &join(&p, "pk"),
                    format!("pk must be a number, not {}", v.type_name()),
                );
                0
            }
            None => 0,
        };
        let generated = match o.get("generated") {
            None => None,
            Some(Value::String(s)) if s == "virtual" => Some(Generated::Virtual),
            Some(Value::String(s)) if s == "stored" => Some(Generated::Stored),
            Some(v) => {
                r.add(
                    Code::InvalidGenerated,
                    &join(&p, "generated"),
                    format!("generated of {table:?}.{name:?} must be \"virtual\" or \"stored\" (or absent), not {}", show(v)),
                );
                None
            }
        };
        if generated.is_some() && pk > 0 {
            r.add(
                Code::GeneratedPrimaryKey,
                &join(&p, "pk"),
                format!("generated column {table:?}.{name:?} cannot be in the primary key"),
            );
        }
        cols.push(Column {
            name,
            decl_type,
            notnull,
            pk,
            generated,
        });
    }
    // Key positions are exactly 1..k.
    let mut positions: Vec<u32> = cols.iter().map(|c| c.pk).filter(|&k| k > 0).collect();
    positions.sort_unstable();
    if positions
        .iter()
        .enumerate()
        .any(|(i, &k)| k as usize != i + 1)
    {
        r.add(
            Code::InvalidPk,
            &join(tp, "columns"),
            format!(
                "primary-key positions of {table:?} are {positions:?}; they must be exactly 1..{}",
                positions.len()
            ),
        );
    }
    cols
}

fn show(v: &Value<'_>) -> String {
    String::from_utf8_lossy(&ndarc_json::to_canonical_vec(v)).into_owned()
}

fn check_excluded_tables(
    list: List<'_, '_>,
    tables: &[Table],
    r: &mut LineReport<'_>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let archived = folded_names(tables.iter().map(|t| t.name.as_str()));
    list.for_each(|i, v| {
        let p = format!("/excludedTables/{i}");
        let Some(s) = v.as_str() else {
            r.add(Code::MemberType, &p, "excluded tables are names (strings)");
            return;
        };
        r.check_name(s, &p, "excluded table");
        if let Some(prev) = out.last() {
            if cmp_utf16(prev, s) != Ordering::Less {
                r.add(
                    Code::ExcludedTableOrder,
                    &p,
                    format!("excludedTables must be sorted and unique; {s:?} comes after {prev:?}"),
                );
            }
        }
        if archived.contains(&s.to_ascii_lowercase()) {
            r.add(
                Code::ExcludedTablePresent,
                &p,
                format!("table {s:?} is both excluded and archived"),
            );
        }
        out.push(s.to_string());
    });
    out
}

/// The names folded to ASCII lower case, for lookups ignoring ASCII case.
fn folded_names<'n>(names: impl Iterator<Item = &'n str>) -> HashSet<String> {
    names.map(str::to_ascii_lowercase).collect()
}

fn check_dependencies(m: &Manifest, r: &mut LineReport<'_>) {
    if m.tables.iter().all(|t| t.dependencies.is_empty()) {
        return;
    }
    let excluded = folded_names(m.excluded_tables.iter().map(String::as_str));
    let archived = folded_names(m.tables.iter().map(|t| t.name.as_str()));
    for (i, t) in m.tables.iter().enumerate() {
        for (j, d) in t.dependencies.iter().enumerate() {
            let p = format!("/tables/{i}/dependencies/{j}");
            let d_folded = d.to_ascii_lowercase();
            if excluded.contains(&d_folded) {
                r.add(
                    Code::ExcludedForeignKey,
                    &p,
                    format!("table {:?} references {d:?}, which is excluded: its rows could not be restored", t.name),
                );
            } else if !archived.contains(&d_folded) {
                r.add(
                    Code::MissingDependency,
                    &p,
                    format!(
                        "table {:?} references {d:?}, which the archive does not hold",
                        t.name
                    ),
                );
            }
        }
    }
}

fn check_excluded_columns(
    cols: Members<'_, '_>,
    tables: &[Table],
    r: &mut LineReport<'_>,
) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    // The first table of each name, as a search in manifest order finds.
    let mut by_name: HashMap<&str, &Table> = HashMap::new();
    if !cols.is_empty() {
        for t in tables {
            by_name.entry(t.name.as_str()).or_insert(t);
        }
    }
    cols.for_each(|table, v| {
        let p = join("/excludedColumns", table);
        let t = by_name.get(table).copied();
        if t.is_none() {
            r.add(
                Code::ExcludedColumnUnknown,
                &p,
                format!("excludedColumns names table {table:?}, which the manifest does not list"),
            );
        }
        let Some(list) = v.as_array() else {
            r.add(
                Code::MemberType,
                &p,
                "excluded columns of a table are an array of names",
            );
            return;
        };
        let mut names: Vec<String> = Vec::new();
        let mut listed: HashSet<&str> = HashSet::new();
        // The first column of each name, as a search in order finds.
        let mut columns: HashMap<&str, &Column> = HashMap::new();
        if let Some(t) = t {
            for col in &t.columns {
                columns.entry(col.name.as_str()).or_insert(col);
            }
        }
        for (i, c) in list.iter().enumerate() {
            let cp = format!("{p}/{i}");
            let Some(c) = c.as_str() else {
                r.add(
                    Code::MemberType,
                    &cp,
                    "excluded columns are names (strings)",
                );
                continue;
            };
            if !listed.insert(c) {
                r.add(
                    Code::ExcludedColumnDuplicate,
                    &cp,
                    format!("column {table:?}.{c:?} is excluded twice"),
                );
            }
            if t.is_some() {
                match columns.get(c).copied() {
                    None => r.add(
                        Code::ExcludedColumnUnknown,
                        &cp,
                        format!("excluded column {c:?} does not exist in table {table:?}"),
                    ),
                    Some(col) if col.notnull || col.pk > 0 || col.generated.is_some() => r.add(
                        Code::ExcludedColumnRequired,
                        &cp,
                        format!(
                            "column {table:?}.{c:?} cannot be excluded: it is {}",
                            if col.notnull {
                                "NOT NULL"
                            } else if col.pk > 0 {
                                "in the primary key"
                            } else {
                                "generated"
                            }
                        ),
                    ),
                    Some(_) => {}
                }
            }
            names.push(c.to_string());
        }
        out.push((table.to_string(), names));
    });
    out
}

const OBJECT_MEMBERS: [&str; 6] = [
    "bucket",
    "customMetadata",
    "httpMetadata",
    "key",
    "sha256",
    "size",
];

fn check_objects(list: List<'_, '_>, r: &mut LineReport<'_>) -> Vec<ObjectEntry> {
    let mut out: Vec<ObjectEntry> = Vec::with_capacity(list.len());
    list.for_each(|i, v| {
        let p = format!("/objects/{i}");
        let Some(o) = v.as_object() else {
            r.add(
                Code::MemberType,
                &p,
                format!("an object entry is a JSON object, not {}", v.type_name()),
            );
            return;
        };
        r.members(o, &p, &OBJECT_MEMBERS, &[], "an object entry");
        let bucket = r.name(o, &p, "bucket").unwrap_or_default().to_string();
        let key = r.str(o, &p, "key").unwrap_or_default().to_string();
        if let Some(prev) = out.last() {
            match catalogue::cmp_objects((&prev.bucket, &prev.key), (&bucket, &key)) {
                Ordering::Less => {}
                Ordering::Equal => r.add(
                    Code::ObjectOrder,
                    &p,
                    format!("object {bucket:?}/{key:?} is listed twice"),
                ),
                Ordering::Greater => r.add(
                    Code::ObjectOrder,
                    &p,
                    format!("object {bucket:?}/{key:?} comes after {:?}/{:?}; objects are sorted by bucket, then key", prev.bucket, prev.key),
                ),
            }
        }
        let size = r.count(o, &p, "size").unwrap_or(0);
        let sha256 = check_sha(o, &p, r);
        let http_metadata = metadata(o, &p, "httpMetadata", r);
        let custom_metadata = metadata(o, &p, "customMetadata", r);
        out.push(ObjectEntry {
            bucket,
            key,
            size,
            sha256,
            http_metadata,
            custom_metadata,
        });
    });
    out
}

fn check_sha(o: &Object<'_>, p: &str, r: &mut LineReport<'_>) -> String {
    let s = r.str(o, p, "sha256").unwrap_or_default();
    if o.contains_key("sha256")
        && o.get("sha256").and_then(Value::as_str).is_some()
        && !crate::hash::is_hex_digest(s)
    {
        r.add(
            Code::InvalidSha256,
            &join(p, "sha256"),
            format!("sha256 {s:?} is not 64 lowercase hex digits"),
        );
    }
    s.to_string()
}

fn metadata(o: &Object<'_>, p: &str, name: &str, r: &mut LineReport<'_>) -> Vec<(String, String)> {
    let Some(v) = o.get(name) else {
        return Vec::new();
    };
    let mp = join(p, name);
    let Some(obj) = v.as_object() else {
        r.add(
            Code::InvalidMetadata,
            &mp,
            format!("{name} must be an object of strings, not {}", v.type_name()),
        );
        return Vec::new();
    };
    let mut out = Vec::with_capacity(obj.len());
    for (k, v) in obj.iter() {
        match v.as_str() {
            Some(s) => out.push((k.to_string(), s.to_string())),
            None => r.add(
                Code::InvalidMetadata,
                &join(&mp, k),
                format!("{name}.{k} must be a string, not {}", v.type_name()),
            ),
        }
    }
    out.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
    out
}

fn check_payloads(list: List<'_, '_>, r: &mut LineReport<'_>) -> Vec<PayloadEntry> {
    let mut out: Vec<PayloadEntry> = Vec::with_capacity(list.len());
    list.for_each(|i, v| {
        let p = format!("/payloads/{i}");
        let Some(o) = v.as_object() else {
            r.add(
                Code::MemberType,
                &p,
                format!("a payload entry is an object, not {}", v.type_name()),
            );
            return;
        };
        r.members(o, &p, &["name", "sha256", "size"], &[], "a payload entry");
        let name = r.name(o, &p, "name").unwrap_or_default().to_string();
        if let Some(prev) = out.last() {
            if prev.name == name {
                r.add(
                    Code::PayloadOrder,
                    &p,
                    format!("payload {name:?} is listed twice"),
                );
            } else if catalogue::cmp_payload_names(&prev.name, &name) != Ordering::Less {
                r.add(
                    Code::PayloadOrder,
                    &p,
                    format!("payload {name:?} comes after {:?}; payloads are in the producer's order (name + \",[object Object]\" by UTF-16)", prev.name),
                );
            }
        }
        let size = r.count(o, &p, "size").unwrap_or(0);
        let sha256 = check_sha(o, &p, r);
        out.push(PayloadEntry { name, size, sha256 });
    });
    out
}

/// Fast lookups derived from a manifest.
#[derive(Debug, Default)]
pub struct Index {
    /// Table position by exact name.
    pub tables: HashMap<String, usize>,
    /// Object position by (bucket, key).
    pub objects: HashMap<(String, String), usize>,
    /// Payload position by name.
    pub payloads: HashMap<String, usize>,
}

impl Index {
    /// Builds the lookups (first occurrence wins where a broken manifest
    /// repeats a name).
    pub fn new(m: &Manifest) -> Index {
        let mut ix = Index::default();
        for (i, t) in m.tables.iter().enumerate() {
            ix.tables.entry(t.name.clone()).or_insert(i);
        }
        for (i, o) in m.objects.iter().enumerate() {
            ix.objects
                .entry((o.bucket.clone(), o.key.clone()))
                .or_insert(i);
        }
        for (i, p) in m.payloads.iter().enumerate() {
            ix.payloads.entry(p.name.clone()).or_insert(i);
        }
        ix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_table_detection() {
        assert!(is_create_table("CREATE TABLE t(a)"));
        assert!(is_create_table("create\n\ttable \"t\" (a)"));
        // Only the leading keywords are checked, not the rest of the SQL.
        assert!(is_create_table("CREATE TABLE(a)"));
        assert!(!is_create_table("CREATE VIRTUAL TABLE t USING fts5(a)"));
        assert!(!is_create_table("CREATE TABLES t(a)"));
        assert!(!is_create_table("CREATE INDEX i ON t(a)"));
        assert!(!is_create_table(""));
        // Found by fuzzing: byte 5 inside a multi-byte character.
        assert!(!is_create_table("CREATE TABL\u{e9} t(a)"));
        assert!(!is_create_table("CREATE TAB\u{1F600}LE t(a)"));
        assert!(!is_create_table("CREATE TABLE\u{e9}t(a)"));
        assert!(!is_create_table("CREATE TABLE_x(a)"));
    }
}
