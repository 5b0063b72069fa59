//! Part, item and closing rules that need only one line (SPEC.md §5–§6).
//!
//! [`check_line`] runs on any thread: it parses one line after the
//! manifest, checks every rule that the line alone decides, and returns a
//! compact [`LineSummary`] for the sequential [`crate::Assembler`], which
//! checks the rules that span lines. The streaming verifier and the push API
//! both use exactly this pair.

use std::fmt::Write as _;

use ndarc_json::{cmp_utf16, Object, ParseOptions, Value};

pub use crate::fast::RowSpans;

use crate::catalogue::{self, Affinity};
use crate::code::Code;
use crate::finding::Finding;
use crate::hash::{self, sha256, Digest32};
use crate::key::{key_digest, key_text, KeyPart, RowKey};
use crate::manifest::{Index, Manifest};
use crate::report::{join, LineRef, LineReport};

/// A row column as rows carry it: writable and not excluded.
#[derive(Debug, Clone)]
pub struct RowColumn {
    /// Column name.
    pub name: String,
    /// The name as a canonical JSON string (quotes included), as a
    /// canonical row writes it.
    pub name_json: Vec<u8>,
    /// Affinity of its declared type.
    pub affinity: Affinity,
    /// NOT NULL.
    pub notnull: bool,
}

/// What rows of one table must look like, derived once from the manifest.
#[derive(Debug, Clone)]
pub struct TablePlan {
    /// The table name as a canonical JSON string (quotes included), for the
    /// content digest.
    pub name_json: Vec<u8>,
    /// Columns a row carries, sorted in name (UTF-16) order.
    pub columns: Vec<RowColumn>,
    /// Positions in `columns` of the primary-key columns, in `pk` order.
    pub pk: Vec<usize>,
    /// Whether rows carry `rowid`.
    pub has_rowid: bool,
}

/// Everything the line rules need from the manifest.
#[derive(Debug)]
pub struct Plan {
    /// The manifest.
    pub manifest: Manifest,
    /// Lookups by name.
    pub index: Index,
    /// Per table, in manifest order.
    pub tables: Vec<TablePlan>,
    /// Findings kept per line at most.
    pub max_findings_per_line: usize,
    /// JSON parse options.
    pub json: ParseOptions,
}

impl Plan {
    /// Derives the plan from a checked manifest.
    pub fn new(manifest: Manifest) -> Plan {
        let tables = manifest
            .tables
            .iter()
            .map(|t| {
                let excluded = manifest.excluded_columns_of(&t.name);
                let mut columns: Vec<RowColumn> = t
                    .columns
                    .iter()
                    .filter(|c| c.generated.is_none() && !excluded.contains(&c.name))
                    .map(|c| RowColumn {
                        name: c.name.clone(),
                        name_json: {
                            let mut j = Vec::new();
                            ndarc_json::write_string(&c.name, &mut j);
                            j
                        },
                        affinity: c.affinity(),
                        notnull: c.notnull,
                    })
                    .collect();
                columns.sort_by(|a, b| cmp_utf16(&a.name, &b.name));
                let pk = t
                    .primary_key()
                    .iter()
                    .filter_map(|pc| columns.iter().position(|c| c.name == pc.name))
                    .collect();
                let mut name_json = Vec::new();
                ndarc_json::write_string(&t.name, &mut name_json);
                TablePlan {
                    name_json,
                    columns,
                    pk,
                    has_rowid: t.rowid_alias.is_some(),
                }
            })
            .collect();
        Plan {
            index: Index::new(&manifest),
            manifest,
            tables,
            max_findings_per_line: 100,
            json: ParseOptions::default(),
        }
    }
}

/// What one line after the manifest holds, reduced to what the sequential
/// rules need.
#[derive(Debug)]
pub struct LineSummary {
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line in the file.
    pub offset: u64,
    /// SHA-256 of the line's bytes (a term of `archiveHash`).
    pub digest: Digest32,
    /// Offsets in the line of the values that cross-line findings name.
    pub anchors: Anchors,
    /// What the line is.
    pub body: Body,
    /// Findings of the line rules.
    pub findings: Vec<Finding>,
    /// Errors not kept because of the per-line limit.
    pub dropped: u64,
    /// Warnings not kept because of the per-line limit.
    pub dropped_warnings: u64,
}

/// Offsets, within a line, of the values that the sequential rules may
/// report on (0 when absent), located once by the parallel stage so that
/// every finding's offset matches its pointer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anchors {
    /// `/index` of a part.
    pub index: u32,
    /// `/items/0`.
    pub item: u32,
    /// `/items/0/index` of a row item.
    pub item_index: u32,
    /// `/items/0/row` of a row item.
    pub item_row: u32,
    /// `/items/0/rowid` of a row item.
    pub item_rowid: u32,
    /// `/items/0/offset` of a chunk.
    pub item_offset: u32,
    /// `/items/0/data` of a chunk.
    pub item_data: u32,
    /// `/partCount` of the closing.
    pub part_count: u32,
    /// `/contentHash` of the closing.
    pub content_hash: u32,
    /// `/archiveHash` of the closing.
    pub archive_hash: u32,
}

impl Anchors {
    fn locate(bytes: &[u8], body: &Body) -> Anchors {
        let at = |p: &str| {
            ndarc_json::locate(bytes, p)
                .and_then(|o| u32::try_from(o).ok())
                .unwrap_or(0)
        };
        match body {
            Body::Closing(_) => Anchors {
                part_count: at("/partCount"),
                content_hash: at("/contentHash"),
                archive_hash: at("/archiveHash"),
                ..Anchors::default()
            },
            Body::Rows(_) => Anchors {
                index: at("/index"),
                item: at("/items/0"),
                item_index: at("/items/0/index"),
                item_row: at("/items/0/row"),
                item_rowid: at("/items/0/rowid"),
                ..Anchors::default()
            },
            Body::Binary(_) => Anchors {
                index: at("/index"),
                item: at("/items/0"),
                item_offset: at("/items/0/offset"),
                item_data: at("/items/0/data"),
                ..Anchors::default()
            },
            Body::BadPart { .. } => Anchors {
                index: at("/index"),
                ..Anchors::default()
            },
            Body::Unreadable => Anchors::default(),
        }
    }

    /// The offset of the value `pointer` names, for the pointers above.
    pub fn of(&self, pointer: &str) -> u32 {
        match pointer {
            "/index" => self.index,
            "/items/0" => self.item,
            "/items/0/index" => self.item_index,
            "/items/0/row" => self.item_row,
            "/items/0/rowid" => self.item_rowid,
            "/items/0/offset" => self.item_offset,
            "/items/0/data" => self.item_data,
            "/partCount" => self.part_count,
            "/contentHash" => self.content_hash,
            "/archiveHash" => self.archive_hash,
            _ => 0,
        }
    }
}

/// The kinds of line after the manifest.
#[derive(Debug)]
pub enum Body {
    /// A part with row items of one table.
    Rows(Box<RowsPart>),
    /// A part with one object or payload chunk.
    Binary(BinaryPart),
    /// A part whose items could not be classified (empty, mixed, unknown
    /// names …; already reported).
    BadPart {
        /// The part's `index`, if readable.
        index: Option<u64>,
    },
    /// The closing record.
    Closing(Closing),
    /// Not JSON, or not a record this position allows (already reported).
    Unreadable,
}

/// A part of row items.
#[derive(Debug)]
pub struct RowsPart {
    /// The part's `index`.
    pub index: Option<u64>,
    /// The table's position in the manifest.
    pub table: usize,
    /// Number of row items.
    pub rows: u64,
    /// `index` of the first and last row items.
    pub first_index: Option<u64>,
    /// See `first_index`.
    pub last_index: Option<u64>,
    /// Key of the first and last rows.
    pub first_key: Option<RowKey>,
    /// See `first_key`.
    pub last_key: Option<RowKey>,
    /// Whether keys rose strictly within the part.
    pub ordered: bool,
    /// Content digests of the rows, in order (terms of `contentHash`).
    pub row_digests: Vec<Digest32>,
}

impl RowsPart {
    /// A part of `table` with no rows yet.
    pub fn new(index: Option<u64>, table: usize) -> RowsPart {
        RowsPart {
            index,
            table,
            rows: 0,
            first_index: None,
            last_index: None,
            first_key: None,
            last_key: None,
            ordered: true,
            row_digests: Vec::new(),
        }
    }
}

/// Which binary list an item belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BinaryKind {
    /// A bucket object.
    Object,
    /// An extra payload.
    Payload,
}

impl BinaryKind {
    /// `object` or `payload`.
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryKind::Object => "object",
            BinaryKind::Payload => "payload",
        }
    }
}

/// A part holding one chunk of an object or payload.
#[derive(Debug)]
pub struct BinaryPart {
    /// The part's `index`.
    pub index: Option<u64>,
    /// Object or payload.
    pub kind: BinaryKind,
    /// Position in the manifest's list.
    pub entry: usize,
    /// The chunk's `offset`.
    pub offset: Option<u64>,
    /// Decoded length.
    pub len: u64,
    /// The chunk's bytes, or their digest when the chunk is the whole
    /// object (hashed here, in parallel).
    pub data: Chunk,
}

/// Bytes of one chunk.
#[derive(Debug)]
pub enum Chunk {
    /// The chunk is the whole binary; this is the SHA-256 of its bytes.
    Whole(Digest32),
    /// Part of a binary: the decoded bytes, hashed in order by the
    /// assembler.
    Piece(Vec<u8>),
    /// The data was not valid base64 (reported).
    Invalid,
}

/// The closing record.
#[derive(Debug, Clone, Default)]
pub struct Closing {
    /// `partCount`.
    pub part_count: Option<u64>,
    /// `contentHash`.
    pub content_hash: Option<String>,
    /// `archiveHash`.
    pub archive_hash: Option<String>,
}

/// Checks one line after the manifest (a part or the closing).
pub fn check_line(plan: &Plan, at: LineRef<'_>) -> LineSummary {
    // Most lines are canonical row parts without a fault: the fast path
    // proves that without building values, hashing the line together with
    // its rows; anything else is read in full.
    if let Some(summary) = crate::fast::rows(plan, at, None, None) {
        return summary;
    }
    full(plan, at, None)
}

/// [`check_line`] that also says where the rows and cells are when the
/// line is a canonical, faultless row part (`spans.table` is then `Some`):
/// for a reader of rows after verification, which need not scan again.
pub fn check_line_spans(plan: &Plan, at: LineRef<'_>, spans: &mut RowSpans) -> LineSummary {
    if let Some(summary) = crate::fast::rows(plan, at, None, Some(spans)) {
        return summary;
    }
    full(plan, at, None)
}

/// [`check_line`] for a caller that has already hashed the line's bytes
/// (the push API, which hashes a part first to recognise a retry).
pub fn check_line_hashed(plan: &Plan, at: LineRef<'_>, digest: Digest32) -> LineSummary {
    if let Some(summary) = crate::fast::rows(plan, at, Some(digest), None) {
        return summary;
    }
    check_line_full(plan, at, digest)
}

/// The fast path alone: the summary of a canonical, faultless row part, or
/// `None` when the line must be read in full; `digest` is the line's
/// SHA-256 if the caller has it (otherwise computed). Public for the tests
/// and the fuzz target that hold it to [`check_line_full`].
#[doc(hidden)]
pub fn check_line_fast(
    plan: &Plan,
    at: LineRef<'_>,
    digest: Option<Digest32>,
) -> Option<LineSummary> {
    crate::fast::rows(plan, at, digest, None)
}

/// [`check_line_hashed`] without the fast path: parses the line into values
/// and applies every rule. Public so that tests and fuzzing can hold the
/// fast path to the same result.
#[doc(hidden)]
pub fn check_line_full(plan: &Plan, at: LineRef<'_>, digest: Digest32) -> LineSummary {
    full(plan, at, Some(digest))
}

/// The line's SHA-256, given or computed: when the line holds a whole
/// object or payload, together with the digest of its decoded bytes.
struct LineHash<'a> {
    line: &'a [u8],
    digest: Option<Digest32>,
}

impl LineHash<'_> {
    /// The SHA-256 of a whole binary's bytes `data` (which this may pad
    /// in place, so the caller drops them after).
    fn whole(&mut self, data: &mut Vec<u8>) -> Digest32 {
        if self.digest.is_some() {
            return sha256(data);
        }
        let n = ndarc_sha::pad_message(data, 0);
        let mut out = Vec::with_capacity(1);
        self.digest = Some(ndarc_sha::digest_pair(self.line, data, &[n], &mut out));
        out.pop().unwrap_or_default()
    }

    fn finish(self) -> Digest32 {
        self.digest.unwrap_or_else(|| sha256(self.line))
    }
}

fn full(plan: &Plan, at: LineRef<'_>, digest: Option<Digest32>) -> LineSummary {
    let mut hash = LineHash {
        line: at.bytes,
        digest,
    };
    let mut r = LineReport::new(at, plan.max_findings_per_line);
    let body = match ndarc_json::parse_with(at.bytes, plan.json) {
        Err(e) => {
            r.add_at(
                Code::from(e.kind()),
                e.offset(),
                "",
                e.message().to_string(),
            );
            Body::Unreadable
        }
        Ok(parsed) => {
            if let Some(nc) = parsed.non_canonical_at {
                r.add_at(
                    Code::NotCanonical,
                    nc,
                    "",
                    "the line is valid JSON but not its canonical (RFC 8785) form; `ndarc canon` rewrites it",
                );
            }
            let canonical = parsed.non_canonical_at.is_none().then_some(at.bytes);
            check_record(plan, &parsed.value, canonical, &mut r, &mut hash)
        }
    };
    let anchors = Anchors::locate(at.bytes, &body);
    let dropped_warnings = r.dropped_warnings;
    let (findings, dropped) = r.into_findings();
    LineSummary {
        line: at.line,
        offset: at.offset,
        digest: hash.finish(),
        anchors,
        body,
        findings,
        dropped,
        dropped_warnings,
    }
}

fn check_record(
    plan: &Plan,
    v: &Value<'_>,
    canonical: Option<&[u8]>,
    r: &mut LineReport<'_>,
    hash: &mut LineHash<'_>,
) -> Body {
    let Some(obj) = v.as_object() else {
        r.add(
            Code::RecordKind,
            "",
            format!(
                "a part or closing record is an object, not {}",
                v.type_name()
            ),
        );
        return Body::Unreadable;
    };
    match obj.get("kind").and_then(Value::as_str) {
        Some("part") => check_part(plan, obj, canonical, r, hash),
        Some("closing") => Body::Closing(check_closing(obj, r)),
        Some(k) => {
            r.add(
                Code::RecordKind,
                "/kind",
                format!("after the manifest only \"part\" and \"closing\" records may follow, not {k:?}"),
            );
            Body::Unreadable
        }
        None => {
            r.add(
                Code::RecordKind,
                "",
                "the record has no string \"kind\"; expected \"part\" or \"closing\"",
            );
            Body::Unreadable
        }
    }
}

fn check_closing(obj: &Object<'_>, r: &mut LineReport<'_>) -> Closing {
    r.members(
        obj,
        "",
        &["archiveHash", "contentHash", "kind", "partCount"],
        &[],
        "the closing",
    );
    let hash = |r: &mut LineReport<'_>, name: &str| {
        let s = r.str(obj, "", name)?;
        if !hash::is_hex_digest(s) {
            r.add(
                Code::InvalidSha256,
                &join("", name),
                format!("{name} {s:?} is not 64 lowercase hex digits"),
            );
        }
        Some(s.to_string())
    };
    Closing {
        part_count: r.count(obj, "", "partCount"),
        content_hash: hash(r, "contentHash"),
        archive_hash: hash(r, "archiveHash"),
    }
}

fn check_part(
    plan: &Plan,
    obj: &Object<'_>,
    canonical: Option<&[u8]>,
    r: &mut LineReport<'_>,
    hash: &mut LineHash<'_>,
) -> Body {
    r.members(obj, "", &["index", "items", "kind"], &[], "a part");
    let index = r.count(obj, "", "index");
    let Some(items) = r.array(obj, "", "items") else {
        return Body::BadPart { index };
    };
    if items.is_empty() {
        r.add(
            Code::EmptyPart,
            "/items",
            "a part must hold at least one item",
        );
        return Body::BadPart { index };
    }
    let kind_of = |v: &Value<'_>| v.get("kind").and_then(Value::as_str).map(str::to_owned);
    match kind_of(&items[0]).as_deref() {
        Some("row") => check_rows(plan, index, items, canonical, r),
        Some(k @ ("object" | "payload")) => {
            if items.len() > 1 {
                r.add(
                    Code::MixedPart,
                    "/items/1",
                    format!(
                        "a part holding a{} {k} chunk holds exactly one item, not {}",
                        if k == "object" { "n" } else { "" },
                        items.len()
                    ),
                );
            }
            let kind = if k == "object" {
                BinaryKind::Object
            } else {
                BinaryKind::Payload
            };
            check_binary(plan, index, kind, &items[0], r, hash)
        }
        Some(k) => {
            r.add(
                Code::RecordKind,
                "/items/0/kind",
                format!("an item's kind is \"row\", \"object\" or \"payload\", not {k:?}"),
            );
            Body::BadPart { index }
        }
        None => {
            r.add(
                Code::RecordKind,
                "/items/0",
                "an item is an object with \"kind\": \"row\", \"object\" or \"payload\"",
            );
            Body::BadPart { index }
        }
    }
}

fn check_rows(
    plan: &Plan,
    index: Option<u64>,
    items: &[Value<'_>],
    canonical: Option<&[u8]>,
    r: &mut LineReport<'_>,
) -> Body {
    let table_name = items[0].get("table").and_then(Value::as_str);
    let Some(table) = table_name.and_then(|n| plan.index.tables.get(n).copied()) else {
        match table_name {
            Some(n) => r.add(
                Code::UnknownTable,
                "/items/0/table",
                format!("rows of table {n:?}, which the manifest does not list"),
            ),
            None => r.add(
                Code::MissingMember,
                "/items/0",
                "a row item names its \"table\" (a string)",
            ),
        }
        return Body::BadPart { index };
    };
    let tp = &plan.tables[table];
    let tname = &plan.manifest.tables[table].name;
    let mut part = RowsPart::new(index, table);
    part.row_digests.reserve(items.len());
    let mut canon = Vec::with_capacity(256);
    let mut p = String::with_capacity(16);
    let mut prev_index: Option<u64> = None;
    let mut mixed_reported = false;
    for (i, item) in items.iter().enumerate() {
        // The item's pointer, written into a buffer reused across rows.
        p.clear();
        let _ = write!(p, "/items/{i}");
        let Some(o) = item.as_object() else {
            r.add(
                Code::RecordKind,
                &p,
                format!("an item is an object, not {}", item.type_name()),
            );
            continue;
        };
        if o.get("kind").and_then(Value::as_str) != Some("row")
            || o.get("table").and_then(Value::as_str) != Some(tname)
        {
            if !mixed_reported {
                r.add(
                    Code::MixedPart,
                    &p,
                    format!("a part holds rows of one table ({tname:?}) and nothing else"),
                );
                mixed_reported = true;
            }
            continue;
        }
        let required: &[&str] = if tp.has_rowid {
            &["index", "kind", "row", "rowid", "table"]
        } else {
            &["index", "kind", "row", "table"]
        };
        if !tp.has_rowid && o.contains_key("rowid") {
            r.add(
                Code::UnknownMember,
                &join(&p, "rowid"),
                format!("rows of {tname:?} carry no rowid: the table has a primary key (its rowidAlias is null)"),
            );
        }
        let shape = o.iter().filter(|(k, _)| *k != "rowid" || tp.has_rowid);
        for (k, _) in shape {
            if !required.contains(&k) {
                r.add(
                    Code::UnknownMember,
                    &join(&p, k),
                    format!("a row item has an unknown member {k:?}"),
                );
            }
        }
        for k in required {
            if !o.contains_key(k) {
                r.add(
                    Code::MissingMember,
                    &p,
                    if *k == "rowid" {
                        format!(
                            "rows of {tname:?} must carry \"rowid\": the table has no primary key"
                        )
                    } else {
                        format!("a row item lacks the member {k:?}")
                    },
                );
            }
        }
        part.rows += 1;
        // index: consecutive within the part; the assembler links parts.
        let idx = r.count(o, &p, "index");
        if let Some(idx) = idx {
            if part.first_index.is_none() {
                part.first_index = Some(idx);
            }
            if let Some(prev) = prev_index {
                if idx != prev + 1 {
                    r.add(
                        Code::RowIndex,
                        &join(&p, "index"),
                        format!("row index {idx} follows {prev} in table {tname:?}; indexes run 0, 1, 2 … without gaps"),
                    );
                }
            }
            prev_index = Some(idx);
            part.last_index = Some(idx);
        } else if let Some(prev) = prev_index {
            prev_index = Some(prev + 1);
        }
        let rowid_number = o.get("rowid").and_then(Value::as_f64);
        let rowid = if tp.has_rowid {
            match o.get("rowid") {
                Some(Value::Number(n)) => match ndarc_json::safe_integer(*n) {
                    Some(id) => Some(id),
                    None => {
                        r.add(
                            Code::UnsafeInteger,
                            &join(&p, "rowid"),
                            format!(
                                "rowid {} of {tname:?} is not a safe integer",
                                ndarc_json::number::format(*n)
                            ),
                        );
                        None
                    }
                },
                Some(v) => {
                    r.add(
                        Code::UnsafeInteger,
                        &join(&p, "rowid"),
                        format!(
                            "rowid of {tname:?} must be a safe integer, not {}",
                            v.type_name()
                        ),
                    );
                    None
                }
                None => None,
            }
        } else {
            None
        };
        let row = match o.get("row") {
            Some(Value::Object(row)) => Some(row),
            Some(v) => {
                r.add(
                    Code::RowColumns,
                    &join(&p, "row"),
                    format!("a row is an object of column values, not {}", v.type_name()),
                );
                None
            }
            None => None,
        };
        // Key, order and duplicates within the part.
        let key = if tp.has_rowid {
            rowid.map(RowKey::Rowid)
        } else {
            row.and_then(|row| {
                let parts: Option<Vec<KeyPart>> = tp
                    .pk
                    .iter()
                    .map(|&c| row.get(&tp.columns[c].name).map(KeyPart::of))
                    .collect();
                parts.map(RowKey::Primary)
            })
        };
        if let Some(key) = key {
            if let Some(prev) = &part.last_key {
                if let Some((code, member, msg)) =
                    key_step(prev, &key, tp.has_rowid, tname, &mut part.ordered)
                {
                    r.add(code, &join(&p, member), msg);
                }
            }
            if part.first_key.is_none() {
                part.first_key = Some(key.clone());
            }
            part.last_key = Some(key);
        }
        if let Some(row) = row {
            check_cells(tp, tname, row, &p, r);
            // A canonical line holds each row's canonical form: hash it in
            // place instead of writing it again.
            let row_bytes: &[u8] = match (canonical, row.span()) {
                (Some(text), Some(span)) if span.end <= text.len() => &text[span],
                _ => {
                    canon.clear();
                    ndarc_json::write_canonical_object(row, &mut canon);
                    &canon
                }
            };
            // The rowid as written, safe or not, where the item has one: an
            // unsafe rowid is reported once, not again as a hash mismatch.
            part.row_digests.push(hash::row_content_digest_number(
                row_bytes,
                rowid_number,
                &tp.name_json,
            ));
        } else {
            part.row_digests.push([0; 32]);
        }
    }
    Body::Rows(Box::new(part))
}

/// Compares consecutive keys of one table. Equal keys are
/// `duplicate_row_key`; a rowid that does not rise is `rowid_order` (an
/// error); a primary key that falls is `row_key_order` (a warning, reported
/// only while `ordered` is still true, since declared collations are
/// unknown). Clears `ordered` when the key falls. Returns the finding's code,
/// the member of the row item it concerns and the message.
pub fn key_step(
    prev: &RowKey,
    key: &RowKey,
    rowid: bool,
    table: &str,
    ordered: &mut bool,
) -> Option<(Code, &'static str, String)> {
    match prev.cmp_sqlite(key) {
        std::cmp::Ordering::Less => None,
        std::cmp::Ordering::Equal => Some((
            Code::DuplicateRowKey,
            if rowid { "rowid" } else { "row" },
            format!(
                "row key {} of table {table:?} repeats the previous row's",
                show_key(key)
            ),
        )),
        std::cmp::Ordering::Greater => {
            let was = std::mem::replace(ordered, false);
            if rowid {
                Some((
                    Code::RowidOrder,
                    "rowid",
                    format!(
                        "rowid {} of table {table:?} is not greater than the previous {}",
                        show_key(key),
                        show_key(prev)
                    ),
                ))
            } else if was {
                Some((
                    Code::RowKeyOrder,
                    "row",
                    format!("row key {} of table {table:?} sorts before the previous {}; rows are normally in key order", show_key(key), show_key(prev)),
                ))
            } else {
                None
            }
        }
    }
}

/// A row key as text for messages (the diff's row-key text).
pub fn show_key(k: &RowKey) -> String {
    match k {
        RowKey::Rowid(id) => id.to_string(),
        RowKey::Primary(parts) => {
            let vals: Vec<Value<'_>> = parts
                .iter()
                .map(|p| match p {
                    KeyPart::Null => Value::Null,
                    KeyPart::Number(n) => Value::Number(*n),
                    KeyPart::Text(s) => Value::from(s.as_str()),
                    KeyPart::Blob(b) => {
                        let mut o = Object::new();
                        o.insert("blob", Value::from(catalogue::encode_base64(b)));
                        Value::Object(o)
                    }
                })
                .collect();
            let refs: Vec<&Value<'_>> = vals.iter().collect();
            key_text(&refs)
        }
    }
}

/// The digest used to find duplicate keys in tables out of key order.
pub fn row_key_digest(k: &RowKey) -> u128 {
    key_digest(show_key(k).as_bytes())
}

/// Checks a row's columns and cells; `item` is the row item's pointer.
fn check_cells(tp: &TablePlan, table: &str, row: &Object<'_>, item: &str, r: &mut LineReport<'_>) {
    let row_ptr = || join(item, "row");
    // Pair each column with its value. Members and columns are both in name
    // order when the line is canonical, so the next column usually matches;
    // otherwise a binary search finds it.
    let mut values: Vec<Option<&Value<'_>>> = vec![None; tp.columns.len()];
    let mut extra: Vec<&str> = Vec::new();
    let mut next = 0usize;
    for (k, v) in row.iter() {
        let at = match tp.columns.get(next) {
            Some(c) if c.name == k => Some(next),
            _ => tp.columns.binary_search_by(|c| cmp_utf16(&c.name, k)).ok(),
        };
        match at {
            Some(i) => {
                values[i] = Some(v);
                next = i + 1;
            }
            None => extra.push(k),
        }
    }
    let missing: Vec<&str> = tp
        .columns
        .iter()
        .zip(&values)
        .filter(|(_, v)| v.is_none())
        .map(|(c, _)| c.name.as_str())
        .collect();
    if !missing.is_empty() || !extra.is_empty() {
        let mut msg =
            format!("row of table {table:?} must have exactly its writable, non-excluded columns;");
        if !missing.is_empty() {
            msg.push_str(&format!(" missing {missing:?}"));
        }
        if !extra.is_empty() {
            msg.push_str(&format!(
                "{} unexpected {extra:?} (generated and excluded columns are never in rows)",
                if missing.is_empty() { "" } else { ";" }
            ));
        }
        r.add(Code::RowColumns, &row_ptr(), msg);
    }
    for (c, v) in tp.columns.iter().zip(values) {
        let Some(v) = v else { continue };
        let cp = || join(&row_ptr(), &c.name);
        let label = || format!("{table}.{}", c.name);
        if v.is_null() {
            if c.notnull {
                r.add(
                    Code::RowNotNull,
                    &cp(),
                    format!("column {} is NOT NULL but holds null", label()),
                );
            }
            continue;
        }
        if c.affinity == Affinity::Integer {
            match v {
                Value::Number(n) if ndarc_json::safe_integer(*n).is_some() => {}
                Value::Number(_) | Value::String(_) | Value::Object(_) => {
                    if blob_shape(v) == Some(false) {
                        r.add(Code::RowType, &cp(), format!("column {} holds an object that is not {{\"blob\": base64}}", label()));
                    } else {
                        r.add(
                            Code::UnsafeInteger,
                            &cp(),
                            format!(
                                "column {} has INTEGER affinity (its declared type contains INT) and must hold a safe integer (|n| ≤ 2^53−1), not {}",
                                label(),
                                describe(v)
                            ),
                        );
                    }
                }
                _ => r.add(Code::RowType, &cp(), format!("column {} holds {}; cells are null, numbers, strings or {{\"blob\": base64}}", label(), describe(v))),
            }
            continue;
        }
        match v {
            Value::Object(o) => {
                if blob_shape(v) != Some(true) {
                    r.add(Code::RowType, &cp(), format!("column {} holds an object that is not {{\"blob\": base64}}", label()));
                    continue;
                }
                let b64 = o.get("blob").and_then(Value::as_str).unwrap_or_default();
                if catalogue::decode_base64(b64).is_none() {
                    r.add(
                        Code::InvalidBase64,
                        &join(&cp(), "blob"),
                        format!("blob of column {} is not canonical base64 (standard alphabet, padded, unused bits zero)", label()),
                    );
                }
                if c.affinity != Affinity::Blob {
                    r.add(
                        Code::RowType,
                        &cp(),
                        format!("column {} has {} affinity; blobs belong only in BLOB columns", label(), c.affinity.name()),
                    );
                }
            }
            Value::String(_) | Value::Number(_) => match c.affinity {
                Affinity::Number if !matches!(v, Value::Number(_)) => r.add(
                    Code::RowType,
                    &cp(),
                    format!(
                        "column {} has NUMBER affinity (its declared type contains no INT, CHAR, CLOB, TEXT or BLOB — e.g. DATETIME, REAL, NUMERIC) and must hold a number, not text",
                        label()
                    ),
                ),
                Affinity::Text if !matches!(v, Value::String(_)) => r.add(
                    Code::RowType,
                    &cp(),
                    format!("column {} has TEXT affinity and must hold a string, not a number", label()),
                ),
                _ => {}
            },
            _ => r.add(
                Code::RowType,
                &cp(),
                format!("column {} holds {}; cells are null, numbers, strings or {{\"blob\": base64}}", label(), describe(v)),
            ),
        }
    }
}

/// `Some(true)` for `{"blob": string}`, `Some(false)` for another object,
/// `None` for a non-object.
fn blob_shape(v: &Value<'_>) -> Option<bool> {
    let o = v.as_object()?;
    Some(o.len() == 1 && o.get("blob").is_some_and(|b| b.as_str().is_some()))
}

fn describe(v: &Value<'_>) -> String {
    match v {
        Value::Number(n) => format!("the number {}", ndarc_json::number::format(*n)),
        Value::String(s) if s.chars().count() > 40 => {
            format!("the text {:?}…", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("the text {s:?}"),
        Value::Object(_) if blob_shape(v) == Some(true) => "a blob".to_string(),
        other => format!(
            "a{} {}",
            if matches!(other, Value::Array(_) | Value::Object(_)) {
                "n"
            } else {
                ""
            },
            other.type_name()
        ),
    }
}

fn check_binary(
    plan: &Plan,
    index: Option<u64>,
    kind: BinaryKind,
    item: &Value<'_>,
    r: &mut LineReport<'_>,
    hash: &mut LineHash<'_>,
) -> Body {
    let p = "/items/0";
    let Some(o) = item.as_object() else {
        return Body::BadPart { index };
    };
    let entry = match kind {
        BinaryKind::Object => {
            r.members(
                o,
                p,
                &["bucket", "data", "key", "kind", "offset"],
                &[],
                "an object item",
            );
            let bucket = r.str(o, p, "bucket");
            let key = r.str(o, p, "key");
            let (Some(bucket), Some(key)) = (bucket, key) else {
                return Body::BadPart { index };
            };
            match plan
                .index
                .objects
                .get(&(bucket.to_string(), key.to_string()))
            {
                Some(&e) => e,
                None => {
                    r.add(
                        Code::UnknownObject,
                        p,
                        format!(
                            "object {bucket:?}/{key:?} is not listed in the manifest's objects"
                        ),
                    );
                    return Body::BadPart { index };
                }
            }
        }
        BinaryKind::Payload => {
            r.members(
                o,
                p,
                &["data", "kind", "name", "offset"],
                &[],
                "a payload item",
            );
            let Some(name) = r.str(o, p, "name") else {
                return Body::BadPart { index };
            };
            match plan.index.payloads.get(name) {
                Some(&e) => e,
                None => {
                    r.add(
                        Code::UnknownPayload,
                        p,
                        format!("payload {name:?} is not listed in the manifest's payloads"),
                    );
                    return Body::BadPart { index };
                }
            }
        }
    };
    let size = match kind {
        BinaryKind::Object => plan.manifest.objects[entry].size,
        BinaryKind::Payload => plan.manifest.payloads[entry].size,
    };
    let offset = r.count(o, p, "offset");
    let data = match r.str(o, p, "data") {
        None => Chunk::Invalid,
        Some(b64) => {
            // Room for SHA-256 padding, added in place for a whole binary.
            let mut bytes = Vec::with_capacity(catalogue::decoded_len(b64) + 72);
            if !catalogue::decode_base64_into(b64, &mut bytes) {
                r.add(
                    Code::InvalidBase64,
                    &join(p, "data"),
                    "chunk data is not canonical base64 (standard alphabet, padded, no whitespace, unused bits zero)",
                );
                Chunk::Invalid
            } else {
                if bytes.is_empty() && !(size == 0 && offset == Some(0)) {
                    r.add(
                        Code::EmptyChunk,
                        &join(p, "data"),
                        format!("a chunk carries at least one byte; only an empty {} is one chunk with data \"\"", kind.as_str()),
                    );
                }
                if offset == Some(0) && bytes.len() as u64 == size {
                    Chunk::Whole(hash.whole(&mut bytes))
                } else {
                    Chunk::Piece(bytes)
                }
            }
        }
    };
    let len = match &data {
        Chunk::Piece(b) => b.len() as u64,
        Chunk::Whole(_) => size,
        // The bytes the text would decode to, so that the next chunk's
        // offset is judged against the right running total.
        Chunk::Invalid => o
            .get("data")
            .and_then(Value::as_str)
            .map_or(0, |s| catalogue::decoded_len_lenient(s) as u64),
    };
    Body::Binary(BinaryPart {
        index,
        kind,
        entry,
        offset,
        len,
        data,
    })
}

/// The row keys of a part line of table `table`, each with its item
/// position and the item's offset in the line: what the duplicate re-scan of
/// a table out of key order needs. Lines that do not parse give nothing
/// (they were reported on the first pass).
pub fn part_keys(plan: &Plan, table: usize, bytes: &[u8]) -> Vec<(RowKey, usize, u32)> {
    let Ok(v) = ndarc_json::parse_with(bytes, plan.json) else {
        return Vec::new();
    };
    let tp = &plan.tables[table];
    let Some(items) = v.value.get("items").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = if tp.has_rowid {
            item.get("rowid")
                .and_then(Value::as_safe_integer)
                .map(RowKey::Rowid)
        } else {
            item.get("row").and_then(|row| {
                tp.pk
                    .iter()
                    .map(|&c| row.get(&tp.columns[c].name).map(KeyPart::of))
                    .collect::<Option<Vec<_>>>()
                    .map(RowKey::Primary)
            })
        };
        if let Some(k) = key {
            let member = if tp.has_rowid { "rowid" } else { "row" };
            let rel = ndarc_json::locate(bytes, &format!("/items/{i}/{member}")).unwrap_or(0);
            out.push((k, i, u32::try_from(rel).unwrap_or(0)));
        }
    }
    out
}
