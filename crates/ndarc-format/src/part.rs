//! Part, item and closing rules that need only one line (SPEC.md §5–§6):
//! the full check, and [`check_line`], which offers a line to the fast path
//! first.
//!
//! [`check_line`] runs on any thread: it checks every rule that the line
//! alone decides and returns a compact [`LineSummary`] for the sequential
//! [`crate::Assembler`], which checks the rules that span lines. The
//! streaming verifier and the push API both use exactly this pair.

use std::fmt::Write as _;

use ndarc_json::{cmp_utf16, Object, Value};

pub use crate::key::{PartKey, PartKeys};
pub use crate::plan::{Plan, RowColumn, TablePlan};
pub use crate::rescan::part_keys;
pub use crate::summary::{
    Anchors, BinaryKind, BinaryPart, Body, Chunk, Closing, Descent, LineSummary, RowSpans, RowsPart,
};

use crate::catalogue;
use crate::cell::{self, CellValue, Fault};
use crate::code::Code;
use crate::hash::{self, sha256, Digest32};
use crate::key::{key_step, KeyCell, RowKey};
use crate::pack::MAX_PART_ROWS;
use crate::report::{join, LineRef, LineReport};

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

/// [`check_line`] without the fast path: parses the line into values
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
    /// The SHA-256 of the bytes that base64 `text` decodes to, or `None`
    /// when it is not canonical base64: decoded and hashed a piece at a
    /// time, beside the line (see [`catalogue::decode_base64_pieces`]).
    fn whole_base64(&mut self, text: &str) -> Option<Digest32> {
        let mut data = ndarc_sha::Stream::new();
        let mut line = ndarc_sha::Stream::new();
        let with_line = self.digest.is_none();
        // The whole blocks of the line, fed as the data's are.
        let blocks = &self.line[..self.line.len() / 64 * 64];
        let mut last: Vec<u8> = Vec::new();
        let ok = catalogue::decode_base64_pieces(text, |piece| {
            let whole = piece.len() / 64 * 64;
            let done = line.len() as usize;
            let n = if with_line {
                (blocks.len() - done).min(whole)
            } else {
                0
            };
            ndarc_sha::update_pair(
                &mut data,
                &piece[..whole],
                &mut line,
                &blocks[done..done + n],
            );
            // Only the last piece has a partial block.
            last.clear();
            last.extend_from_slice(&piece[whole..]);
        });
        if !ok {
            return None;
        }
        if with_line {
            let done = line.len() as usize;
            self.digest = Some(line.finish(&self.line[done..]));
        }
        Some(data.finish(&last))
    }

    /// The SHA-256 computation over the whole 64-byte blocks of `bytes` (a
    /// binary's first piece), with the line's own hash computed beside it
    /// when it is still to be.
    fn piece_head(&mut self, bytes: &[u8]) -> ndarc_sha::Stream {
        let mut data = ndarc_sha::Stream::new();
        let whole = &bytes[..bytes.len() / 64 * 64];
        if self.digest.is_none() {
            let mut line = ndarc_sha::Stream::new();
            let blocks = self.line.len() / 64 * 64;
            ndarc_sha::update_pair(&mut data, whole, &mut line, &self.line[..blocks]);
            self.digest = Some(line.finish(&self.line[blocks..]));
        } else {
            data.update(whole);
        }
        data
    }

    fn finish(self) -> Digest32 {
        self.digest.unwrap_or_else(|| sha256(self.line))
    }
}

const INVALID_CHUNK_BASE64: &str =
    "chunk data is not canonical base64 (standard alphabet, padded, no whitespace, unused bits zero)";

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
                r.add_not_canonical(nc, "the line");
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
        Some("closing") => {
            let closing = check_closing(obj, r);
            if let Some(policy) = &plan.policy {
                policy.check_closing(v, r);
            }
            Body::Closing(closing)
        }
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
        check_item_members(o, tp, tname, &p, r);
        part.rows += 1;
        if part.rows == MAX_PART_ROWS as u64 + 1 {
            r.add(
                Code::PartRowCount,
                &p,
                format!("the part holds {} rows; the producer packs at most {MAX_PART_ROWS} rows a part (nextItems in export.mjs)", items.len()),
            );
        }
        step_index(&mut part, &mut prev_index, o, tname, &p, r);
        let rowid_number = o.get("rowid").and_then(Value::as_f64);
        let rowid = item_rowid(o, tp, tname, &p, r);
        let row = item_row(o, &p, r);
        step_key(&mut part, tp, rowid, row, tname, &p, r);
        match row {
            Some(row) => {
                let digest = check_row(tp, tname, row, rowid_number, canonical, &mut canon, &p, r);
                part.row_digests.push(digest);
            }
            None => part.row_digests.push([0; 32]),
        }
    }
    Body::Rows(Box::new(part))
}

/// Checks that a row item has the members of a row of `tp` and no others;
/// `p` is its pointer.
#[inline]
fn check_item_members(
    o: &Object<'_>,
    tp: &TablePlan,
    tname: &str,
    p: &str,
    r: &mut LineReport<'_>,
) {
    let required: &[&str] = if tp.has_rowid {
        &["index", "kind", "row", "rowid", "table"]
    } else {
        &["index", "kind", "row", "table"]
    };
    if !tp.has_rowid && o.contains_key("rowid") {
        r.add(
            Code::UnknownMember,
            &join(p, "rowid"),
            format!("rows of {tname:?} carry no rowid: the table has a primary key (its rowidAlias is null)"),
        );
    }
    let shape = o.iter().filter(|(k, _)| *k != "rowid" || tp.has_rowid);
    for (k, _) in shape {
        if !required.contains(&k) {
            r.add(
                Code::UnknownMember,
                &join(p, k),
                format!("a row item has an unknown member {k:?}"),
            );
        }
    }
    for k in required {
        if !o.contains_key(k) {
            r.add(
                Code::MissingMember,
                p,
                if *k == "rowid" {
                    format!("rows of {tname:?} must carry \"rowid\": the table has no primary key")
                } else {
                    format!("a row item lacks the member {k:?}")
                },
            );
        }
    }
}

/// The item's `index`: consecutive within the part (the assembler links
/// parts); `prev_index` is the previous item's, or where it would be.
#[inline]
fn step_index(
    part: &mut RowsPart,
    prev_index: &mut Option<u64>,
    o: &Object<'_>,
    tname: &str,
    p: &str,
    r: &mut LineReport<'_>,
) {
    let idx = r.count(o, p, "index");
    if let Some(idx) = idx {
        if part.first_index.is_none() {
            part.first_index = Some(idx);
        }
        if let Some(prev) = *prev_index {
            if idx != prev + 1 {
                r.add(
                    Code::RowIndex,
                    &join(p, "index"),
                    format!("row index {idx} follows {prev} in table {tname:?}; indexes run 0, 1, 2 … without gaps"),
                );
            }
        }
        *prev_index = Some(idx);
        part.last_index = Some(idx);
    } else if let Some(prev) = *prev_index {
        *prev_index = Some(prev + 1);
    }
}

/// The item's `rowid`, where its table has rowids and it is a safe
/// integer.
#[inline]
fn item_rowid(
    o: &Object<'_>,
    tp: &TablePlan,
    tname: &str,
    p: &str,
    r: &mut LineReport<'_>,
) -> Option<i64> {
    if tp.has_rowid {
        match o.get("rowid") {
            Some(Value::Number(n)) => match ndarc_json::safe_integer(*n) {
                Some(id) => Some(id),
                None => {
                    r.add(
                        Code::UnsafeInteger,
                        &join(p, "rowid"),
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
                    &join(p, "rowid"),
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
    }
}

/// The item's `row`, where it is an object.
#[inline]
fn item_row<'o, 'a>(o: &'o Object<'a>, p: &str, r: &mut LineReport<'_>) -> Option<&'o Object<'a>> {
    match o.get("row") {
        Some(Value::Object(row)) => Some(row),
        Some(v) => {
            r.add(
                Code::RowColumns,
                &join(p, "row"),
                format!("a row is an object of column values, not {}", v.type_name()),
            );
            None
        }
        None => None,
    }
}

/// The row's key (its rowid, or its primary-key cells), and its step from
/// the previous row's: order and duplicates within the part.
#[inline]
fn step_key(
    part: &mut RowsPart,
    tp: &TablePlan,
    rowid: Option<i64>,
    row: Option<&Object<'_>>,
    tname: &str,
    p: &str,
    r: &mut LineReport<'_>,
) {
    // Key, order and duplicates within the part.
    let key = if tp.has_rowid {
        rowid.map(RowKey::Rowid)
    } else {
        row.and_then(|row| {
            let parts: Option<Vec<KeyCell<'static>>> = tp
                .pk
                .iter()
                .map(|&c| {
                    row.get(&tp.columns[c].name)
                        .map(|v| KeyCell::of(v).into_owned())
                })
                .collect();
            parts.map(RowKey::Primary)
        })
    };
    if let Some(key) = key {
        if let Some(prev) = &part.last_key {
            match key_step(prev, &key, tp.has_rowid, tname, &mut part.ordered) {
                // Reported by the assembler, once per table.
                Some((Code::RowKeyOrder, member, message)) => {
                    let pointer = join(p, member);
                    let offset = ndarc_json::locate(r.at().bytes, &pointer)
                        .and_then(|o| u32::try_from(o).ok())
                        .unwrap_or(0);
                    part.descent = Some(Descent {
                        pointer,
                        offset,
                        message,
                    });
                }
                Some((code, member, msg)) => r.add(code, &join(p, member), msg),
                None => {}
            }
        }
        if part.first_key.is_none() {
            part.first_key = Some(key.clone());
        }
        part.last_key = Some(key);
    }
}

/// Checks the row's cells and `dev_data`; returns its content digest.
#[allow(clippy::too_many_arguments)]
#[inline]
fn check_row(
    tp: &TablePlan,
    tname: &str,
    row: &Object<'_>,
    rowid_number: Option<f64>,
    canonical: Option<&[u8]>,
    canon: &mut Vec<u8>,
    p: &str,
    r: &mut LineReport<'_>,
) -> Digest32 {
    check_cells(tp, tname, row, p, r);
    if let Some(c) = tp.dev_kind {
        let kind = &tp.columns[c].name;
        if row.get(kind).and_then(Value::as_str) == Some("dev") {
            r.add(
                Code::DevData,
                &join(&join(p, "row"), kind),
                format!("a row of {tname:?} whose kind is \"dev\": the import refuses development sessions and credentials (refuseDevData)"),
            );
        }
    }
    // A canonical line holds each row's canonical form: hash it in place
    // instead of writing it again.
    let row_bytes: &[u8] = match (canonical, row.span()) {
        (Some(text), Some(span)) if span.end <= text.len() => &text[span],
        _ => {
            canon.clear();
            ndarc_json::write_canonical_object(row, canon);
            canon
        }
    };
    // The rowid as written, safe or not, where the item has one: an unsafe
    // rowid is reported once, not again as a hash mismatch.
    hash::row_content_digest_number(row_bytes, rowid_number, &tp.name_json)
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
    let mut scratch = Vec::new();
    for (c, v) in tp.columns.iter().zip(values) {
        let Some(v) = v else { continue };
        let value = match v {
            Value::Null => CellValue::Null,
            Value::Number(n) => CellValue::Number {
                safe_integer: ndarc_json::safe_integer(*n).is_some(),
            },
            Value::String(_) => CellValue::Text,
            Value::Object(o) => match blob_shape(v) {
                Some(true) => {
                    CellValue::Blob(o.get("blob").and_then(Value::as_str).unwrap_or_default())
                }
                _ => CellValue::Object,
            },
            Value::Bool(_) | Value::Array(_) => CellValue::Other,
        };
        for fault in cell::faults(c.affinity, c.notnull, value, &mut scratch).iter() {
            let cp = join(&row_ptr(), &c.name);
            let label = format!("{table}.{}", c.name);
            let (pointer, message) = match fault {
                Fault::NotNull => (cp, format!("column {label} is NOT NULL but holds null")),
                Fault::NotABlob => (cp, format!("column {label} holds an object that is not {{\"blob\": base64}}")),
                Fault::UnsafeInteger => (cp, format!(
                    "column {label} has INTEGER affinity (its declared type contains INT) and must hold a safe integer (|n| ≤ 2^53−1), not {}",
                    describe(v)
                )),
                Fault::Kind => (cp, format!("column {label} holds {}; cells are null, numbers, strings or {{\"blob\": base64}}", describe(v))),
                Fault::NeedsNumber => (cp, format!(
                    "column {label} has NUMBER affinity (its declared type contains no INT, CHAR, CLOB, TEXT or BLOB — e.g. DATETIME, REAL, NUMERIC) and must hold a number, not text"
                )),
                Fault::NeedsText => (cp, format!("column {label} has TEXT affinity and must hold a string, not a number")),
                Fault::InvalidBase64 => (join(&cp, "blob"), format!("blob of column {label} is not canonical base64 (standard alphabet, padded, unused bits zero)")),
                Fault::BlobOutsideBlob => (cp, format!("column {label} has {} affinity; blobs belong only in BLOB columns", c.affinity.name())),
            };
            r.add(fault.code(), &pointer, message);
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
        // A whole binary in one chunk: hashed as it is decoded.
        Some(b64) if offset == Some(0) && catalogue::decoded_len(b64) as u64 == size => {
            match hash.whole_base64(b64) {
                Some(d) => Chunk::Whole(d),
                None => {
                    r.add(Code::InvalidBase64, &join(p, "data"), INVALID_CHUNK_BASE64);
                    Chunk::Invalid
                }
            }
        }
        Some(b64) => {
            let mut bytes = plan.pieces.take(catalogue::decoded_len(b64));
            if !catalogue::decode_base64_into(b64, &mut bytes) {
                r.add(Code::InvalidBase64, &join(p, "data"), INVALID_CHUNK_BASE64);
                Chunk::Invalid
            } else {
                if bytes.is_empty() && !(size == 0 && offset == Some(0)) {
                    r.add(
                        Code::EmptyChunk,
                        &join(p, "data"),
                        format!("a chunk carries at least one byte; only an empty {} is one chunk with data \"\"", kind.as_str()),
                    );
                }
                // A whole binary was hashed above: this is a piece. The
                // first one's blocks are hashed here, beside the line, so
                // that the in-order hashing left to the assembler (one
                // thread) is the rest of the binary.
                let head = (offset == Some(0)).then(|| hash.piece_head(&bytes));
                Chunk::Piece { bytes, head }
            }
        }
    };
    let len = match &data {
        Chunk::Piece { bytes, .. } => bytes.len() as u64,
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
