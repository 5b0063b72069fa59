//! The manifest record and its rules (SPEC.md §4).

use std::borrow::Cow;
use std::collections::HashMap;

use ndarc_json::{Object, Value};

use crate::catalogue::{self, Affinity};
use crate::code::Code;
use crate::hash::Digest32;
use crate::report::LineReport;

mod lazy;
mod objects;
mod tables;
mod written;

use lazy::{raw_elements, raw_members, unquote, Lazy, List};
use objects::{check_objects, check_payloads};
pub use tables::is_create_table;
use tables::{check_dependencies, check_excluded_columns, check_excluded_tables, check_tables};
pub use written::{carried_member, Written, WrittenObject, WrittenTable};

/// Identifiers a verifier accepts in `format` (SPEC.md §4.1).
#[derive(Debug, Clone)]
pub struct ManifestOptions {
    /// Accepted `format` identifiers (default: `rer-portability` only).
    pub formats: Vec<String>,
    /// Accept whatever `format` string the manifest names (for a tool
    /// that edits archives of any format, such as `mutate`; which formats
    /// a verifier reads is its own option).
    pub any_format: bool,
}

impl Default for ManifestOptions {
    fn default() -> Self {
        ManifestOptions {
            formats: vec![crate::FORMAT.to_string()],
            any_format: false,
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
    /// The entries as canonical JSON texts: an opaque value is one entry.
    pub fn entries(&self) -> Vec<&str> {
        match self {
            Carried::Entries { entries, .. } => entries.iter().map(String::as_str).collect(),
            Carried::Opaque(text) => vec![text.as_str()],
        }
    }

    /// The object member that holds the entries, if the value is an object.
    pub fn member(&self) -> Option<&str> {
        match self {
            Carried::Entries { member, .. } => member.as_deref(),
            Carried::Opaque(_) => None,
        }
    }

    /// The JSON pointer, below the member's own, of entry `i` (or of the
    /// list when `i` is `None`).
    pub(crate) fn entry_pointer(&self, top: &str, i: Option<usize>) -> String {
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
/// typed. Every rule of SPEC.md §4 is checked here, in one place. The one
/// intake is [`check_manifest_line`]; this is the same check on a parsed
/// tree, public only for the tests that hold the line's lazy reading to it.
#[doc(hidden)]
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

fn check<'a>(
    value: &Value<'a>,
    lazy: &Lazy<'a>,
    r: &mut LineReport<'_>,
    options: &ManifestOptions,
) -> ManifestOutcome {
    let Some((obj, format, version)) = check_identity(value, r, options) else {
        return ManifestOutcome::Fatal;
    };
    r.members(obj, "", &MANIFEST_REQUIRED, &["migrations"], "the manifest");
    let mut m = Manifest {
        format,
        version,
        ..Manifest::default()
    };
    check_header(obj, lazy, r, &mut m);

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
        m.required_configuration =
            check_required_configuration(lazy.list("requiredConfiguration", list), r);
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

/// The manifest's identity: an object of kind "manifest", in a format and
/// version this verifier reads. `None` when it is not (the finding is in
/// the report): nothing else can be interpreted.
fn check_identity<'v, 'a>(
    value: &'v Value<'a>,
    r: &mut LineReport<'_>,
    options: &ManifestOptions,
) -> Option<(&'v Object<'a>, String, i64)> {
    let Some(obj) = value.as_object() else {
        r.add(
            Code::ManifestMissing,
            "",
            format!(
                "the first line must be the manifest object, not {}",
                value.type_name()
            ),
        );
        return None;
    };
    match obj.get("kind").and_then(Value::as_str) {
        Some("manifest") => {}
        Some(other) => {
            r.add(
                Code::ManifestMissing,
                "/kind",
                format!("the first line must be the manifest, but its kind is {other:?}"),
            );
            return None;
        }
        None => {
            r.add(
                Code::ManifestMissing,
                "",
                "the first line must be the manifest: an object with \"kind\": \"manifest\"",
            );
            return None;
        }
    }
    // Format and version first: under another format nothing else means
    // what this verifier thinks.
    let format = match obj.get("format") {
        Some(Value::String(s))
            if options.any_format || options.formats.iter().any(|f| f == s.as_ref()) =>
        {
            s.to_string()
        }
        Some(Value::String(s)) => {
            r.add(
                Code::UnsupportedFormat,
                "/format",
                format!(
                    "format {s:?} is not one this verifier reads (expected {:?}); pass --accept-format to read it as a portability archive",
                    options.formats.first().map_or(crate::FORMAT, String::as_str)
                ),
            );
            return None;
        }
        _ => {
            r.add(
                Code::UnsupportedFormat,
                "/format",
                "the manifest must name its format as a string, e.g. \"rer-portability\"",
            );
            return None;
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
            return None;
        }
        None => {
            r.add(
                Code::UnsupportedVersion,
                "/version",
                format!("the manifest must give \"version\": {}", crate::VERSION),
            );
            return None;
        }
    };

    Some((obj, format, version))
}

/// The manifest's scalar members and the records it carries for lineage
/// (`journal`, `migrations`), into `m`.
fn check_header(obj: &Object<'_>, lazy: &Lazy<'_>, r: &mut LineReport<'_>, m: &mut Manifest) {
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
}

/// `requiredConfiguration`: names, each listed once.
fn check_required_configuration(list: List<'_, '_>, r: &mut LineReport<'_>) -> Vec<String> {
    let mut names = Vec::with_capacity(list.len());
    // The first position of each name's hash: the names themselves are
    // kept once, in the manifest. Where two names share a hash (a 64-bit
    // keyed hash: practically never), the earlier names are compared.
    let state = std::hash::RandomState::new();
    let mut first: HashMap<u64, usize> = HashMap::with_capacity(list.len());
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
    names
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
