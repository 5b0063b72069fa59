//! One input, read on its own thread: lines through a bounded buffer, each
//! verified as it is read (the push verifier of `ndarc-verify`, fed in
//! archive order, plus the framing rules) and reduced to the spans the row
//! diff needs, sent on a bounded channel. Memory: a few parts.

use std::collections::HashMap;

use ndarc_format::manifest::Manifest;
use ndarc_format::{Code, Finding, LineRef, LineReport, ManifestOptions, ManifestOutcome, Plan};
use ndarc_verify::{PushOutcome, PushVerifier, RowSpans};

use crate::key::{KeyRef, OwnedKey};
use crate::model::Side;
use crate::scan::{self, PartScan, Span, MISSING};
use crate::source::{Input, LineInfo, LineReader};
use crate::{Error, Options};

/// What rows of one table carry, on one side.
#[derive(Debug, Clone)]
pub(crate) struct SideTable {
    /// Row columns (writable, not excluded) in name (UTF-16) order: name
    /// and its canonical JSON string.
    pub(crate) columns: Vec<(String, Vec<u8>)>,
    /// Positions in `columns` of the primary key, in `pk` order.
    pub(crate) pk: Vec<usize>,
    /// Rows carry `rowid`.
    pub(crate) has_rowid: bool,
}

/// The row tables of a manifest.
pub(crate) fn side_tables(m: &Manifest) -> Vec<SideTable> {
    let plan = Plan::new(m.clone());
    plan.tables
        .iter()
        .map(|t| SideTable {
            columns: t
                .columns
                .iter()
                .map(|c| {
                    let mut j = Vec::new();
                    ndarc_json::write_string(&c.name, &mut j);
                    (c.name.clone(), j)
                })
                .collect(),
            pk: t.pk.clone(),
            has_rowid: t.has_rowid,
        })
        .collect()
}

/// One row item.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowRec {
    /// The `row` object.
    pub(crate) row: Span,
    /// The rowid and its text.
    pub(crate) rowid: Option<(i64, Span)>,
    /// Position among the part's items.
    pub(crate) item: u32,
}

/// The row items of one part line.
#[derive(Debug)]
pub(crate) struct PartRows {
    /// The table (index into the side's manifest tables).
    pub(crate) table: usize,
    /// Byte offset of the line.
    pub(crate) offset: u64,
    /// The line (canonical).
    pub(crate) bytes: Vec<u8>,
    /// The rows.
    pub(crate) rows: Vec<RowRec>,
    /// Cell spans, `rows.len() × columns`, in the table's column order
    /// ([`MISSING`] for a cell a row lacks).
    pub(crate) cells: Vec<Span>,
    /// Primary-key cell spans, `rows.len() × pk`.
    pub(crate) keys: Vec<Span>,
    /// Rows are in strictly increasing key order, within the part and after
    /// the previous part of the same table.
    pub(crate) ordered: bool,
}

impl PartRows {
    /// The key of row `i`.
    pub(crate) fn key(&self, i: usize, pk: usize) -> KeyRef<'_> {
        KeyRef {
            bytes: &self.bytes,
            rowid: self.rows[i].rowid,
            pk: self.keys.get(i * pk..(i + 1) * pk).unwrap_or(&[]),
        }
    }

    /// The cells of row `i`.
    pub(crate) fn cells(&self, i: usize, n: usize) -> &[Span] {
        self.cells.get(i * n..(i + 1) * n).unwrap_or(&[])
    }
}

/// How a side ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct SideEnd {
    pub(crate) content_hash: String,
    pub(crate) archive_hash: String,
    pub(crate) warnings: u64,
}

/// What a side sends.
#[derive(Debug)]
pub(crate) enum Event {
    Manifest(Box<Manifest>),
    Rows(PartRows),
    End(SideEnd),
    Failed(Box<Error>),
}

struct Ctx<'o> {
    side: Side,
    name: String,
    opts: &'o Options,
}

impl Ctx<'_> {
    fn invalid(&self, mut findings: Vec<Finding>, errors: u64) -> Error {
        findings.sort_by_key(|f| (f.line, f.offset));
        Error::Invalid {
            side: self.side,
            name: self.name.clone(),
            errors: errors.max(findings.iter().filter(|f| f.is_error()).count() as u64),
            findings,
        }
    }

    fn malformed(&self, line: u64, message: impl Into<String>) -> Error {
        Error::Malformed {
            side: self.side,
            name: self.name.clone(),
            line,
            message: message.into(),
        }
    }
}

/// Framing findings of a line (verified mode).
fn framing(info: &LineInfo, bytes: &[u8], limit: usize, out: &mut Vec<Finding>) {
    if let Some(len) = info.too_long {
        out.push(Finding::new(
            Code::LineTooLong,
            info.number,
            info.offset,
            "",
            format!("the line is {len} bytes, over the limit of {limit}"),
        ));
    } else if bytes.is_empty() {
        out.push(Finding::new(
            Code::EmptyLine,
            info.number,
            info.offset,
            "",
            "an empty line; every line is one record",
        ));
    }
    if info.cr {
        out.push(Finding::new(
            Code::CarriageReturn,
            info.number,
            info.offset + bytes.len() as u64,
            "",
            "the line ends with CR LF; records are separated by LF alone",
        ));
    }
    if !info.has_lf {
        out.push(Finding::new(
            Code::MissingFinalNewline,
            info.number,
            info.offset + bytes.len() as u64,
            "",
            "the input does not end with LF; every line, the closing included, ends with LF (truncated?)",
        ));
    }
}

impl Event {
    /// Bytes an event holds, roughly, for the channel's budget.
    pub(crate) fn weight(&self) -> usize {
        match self {
            Event::Rows(p) => {
                p.bytes.len()
                    + 8 * (p.cells.len() + p.keys.len())
                    + std::mem::size_of::<RowRec>() * p.rows.len()
            }
            _ => 1024,
        }
    }
}

/// Reads one input and sends its events; stops quietly when the receiver
/// is gone.
pub(crate) fn run(
    input: &Input<'_>,
    side: Side,
    name: &str,
    opts: &Options,
    tx: crate::chan::Sender,
) {
    let ctx = Ctx {
        side,
        name: name.to_string(),
        opts,
    };
    let event = match read(input, &ctx, &tx) {
        Ok(Some(end)) => Event::End(end),
        Ok(None) => return,
        Err(e) => Event::Failed(Box::new(e)),
    };
    let _ = tx.send(event);
}

/// Canonical bytes of a line read without verification.
pub(crate) fn canonical(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let describe =
        |e: ndarc_json::Error| format!("{}: {} at byte {}", e.code(), e.message(), e.offset());
    match ndarc_json::check_canonical(bytes) {
        Ok(None) => Ok(bytes.to_vec()),
        Ok(Some(_)) => {
            let mut out = Vec::with_capacity(bytes.len());
            ndarc_json::canonicalize(bytes, &mut out).map_err(describe)?;
            Ok(out)
        }
        Err(e) => Err(describe(e)),
    }
}

fn canonical_line(bytes: &[u8], number: u64, ctx: &Ctx<'_>) -> Result<Vec<u8>, Error> {
    canonical(bytes).map_err(|m| ctx.malformed(number, m))
}

/// `Ok(None)` when the receiver hung up.
fn read(
    input: &Input<'_>,
    ctx: &Ctx<'_>,
    tx: &crate::chan::Sender,
) -> Result<Option<SideEnd>, Error> {
    let verify = !ctx.opts.no_verify;
    let vopts = &ctx.opts.verify;
    let io = |source| Error::Io {
        side: ctx.side,
        name: ctx.name.clone(),
        source,
    };
    let mut lines = LineReader::new(input);
    let mut found = Vec::new();
    let Some((info, bytes)) = lines.next_line(vopts.max_manifest_line).map_err(io)? else {
        return Err(ctx.invalid(
            vec![Finding::new(
                Code::ManifestMissing,
                1,
                0,
                "",
                "the input is empty; an archive starts with its manifest line",
            )],
            1,
        ));
    };
    let (manifest, mut verifier) = if verify {
        framing(&info, bytes, vopts.max_manifest_line, &mut found);
        if !found.is_empty() {
            return Err(ctx.invalid(found, 0));
        }
        match PushVerifier::new(bytes, vopts) {
            Ok(v) => (v.manifest().clone(), Some(v)),
            Err(f) => return Err(ctx.invalid(f, 0)),
        }
    } else {
        if info.too_long.is_some() {
            return Err(ctx.malformed(1, "the manifest line is over the limit"));
        }
        let canon = canonical_line(bytes, 1, ctx)?;
        let parsed =
            ndarc_json::parse(&canon).map_err(|e| ctx.malformed(1, e.message().to_string()))?;
        let at = LineRef {
            line: 1,
            offset: 0,
            bytes: &canon,
        };
        let mut r = LineReport::new(at, 10);
        match ndarc_format::check_manifest(
            &parsed,
            &mut r,
            &ManifestOptions {
                formats: vopts.formats.clone(),
            },
        ) {
            ManifestOutcome::Read(m) => (*m, None),
            ManifestOutcome::Fatal => {
                let (f, _) = r.into_findings();
                let why = f
                    .first()
                    .map_or("not a manifest".to_string(), |f| f.message.clone());
                return Err(ctx.malformed(1, why));
            }
        }
    };
    let tables = side_tables(&manifest);
    let by_name: HashMap<Vec<u8>, usize> = manifest
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut j = Vec::new();
            ndarc_json::write_string(&t.name, &mut j);
            (j, i)
        })
        .collect();
    let part_count = manifest.part_count;
    if tx.send(Event::Manifest(Box::new(manifest))).is_err() {
        return Ok(None);
    }

    let mut part_offsets: Vec<u64> = Vec::new();
    let mut last_key: Option<(usize, OwnedKey)> = None;
    // Where the verifier found the rows of the current part (verified mode).
    let mut spans = RowSpans::default();
    loop {
        let Some((info, bytes)) = lines.next_line(vopts.max_line).map_err(io)? else {
            let line = part_offsets.len() as u64 + 2;
            return Err(if verify {
                ctx.invalid(
                    vec![Finding::new(
                        Code::ClosingMissing,
                        line,
                        0,
                        "",
                        format!("the input ends after {} of {part_count} parts, without a closing line (truncated?)", part_offsets.len()),
                    )],
                    1,
                )
            } else {
                ctx.malformed(line, "the input ends without a closing line")
            });
        };
        if verify {
            framing(&info, bytes, vopts.max_line, &mut found);
            if !found.is_empty() {
                return Err(ctx.invalid(found, 0));
            }
        } else if info.too_long.is_some() {
            return Err(ctx.malformed(info.number, "the line is over the limit"));
        } else if bytes.is_empty() {
            continue;
        }
        let index = part_offsets.len() as u64;
        if index < part_count {
            let owned = if let Some(v) = verifier.as_mut() {
                match v.add_part_spans(index, bytes, &mut spans) {
                    PushOutcome::Accepted(_) | PushOutcome::Duplicate => bytes.to_vec(),
                    PushOutcome::Rejected(f) => {
                        let f = f
                            .into_iter()
                            .map(|mut f| {
                                f.offset += info.offset;
                                f
                            })
                            .collect();
                        return Err(ctx.invalid(f, 0));
                    }
                }
            } else {
                // Not canonicalized here: cells and keys are compared by
                // value where their bytes differ (see `Pair`).
                bytes.to_vec()
            };
            part_offsets.push(info.offset);
            let part = if spans.table.is_some() {
                Some(rows_from_spans(
                    owned,
                    &info,
                    &spans,
                    &tables,
                    &mut last_key,
                ))
            } else {
                rows_of(owned, &info, &tables, &by_name, &mut last_key, ctx)?
            };
            if let Some(part) = part {
                if tx.send(Event::Rows(part)).is_err() {
                    return Ok(None);
                }
            }
            continue;
        }
        // The closing line.
        let closing_offset = info.offset;
        let closing_line = info.number;
        let end = if let Some(v) = verifier.take() {
            let report = v.finish(bytes, |i| {
                let off = *part_offsets.get(usize::try_from(i).ok()?)?;
                input.line_at(off, vopts.max_line).ok()
            });
            if report.errors > 0 {
                let f = report
                    .findings
                    .into_iter()
                    .map(|mut f| {
                        let base = match f.line {
                            0 | 1 => 0,
                            l if l == closing_line => closing_offset,
                            l => usize::try_from(l - 2)
                                .ok()
                                .and_then(|i| part_offsets.get(i).copied())
                                .unwrap_or(0),
                        };
                        f.offset += base;
                        f
                    })
                    .collect();
                return Err(ctx.invalid(f, report.errors));
            }
            let (content_hash, archive_hash) = report.closing_hashes.unwrap_or_default();
            SideEnd {
                content_hash,
                archive_hash,
                warnings: report.warnings,
            }
        } else {
            let v = ndarc_json::parse(bytes).map_err(|e| {
                ctx.malformed(closing_line, format!("closing line: {}", e.message()))
            })?;
            let get = |n: &str| {
                v.get(n)
                    .and_then(ndarc_json::Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            if v.get("kind").and_then(ndarc_json::Value::as_str) != Some("closing") {
                return Err(ctx.malformed(
                    closing_line,
                    format!(
                        "line {closing_line} should be the closing line after {part_count} parts"
                    ),
                ));
            }
            SideEnd {
                content_hash: get("contentHash"),
                archive_hash: get("archiveHash"),
                warnings: 0,
            }
        };
        // Nothing may follow.
        if let Some((info, _)) = lines.next_line(vopts.max_line).map_err(io)? {
            if verify {
                return Err(ctx.invalid(
                    vec![Finding::new(
                        Code::TrailingData,
                        info.number,
                        info.offset,
                        "",
                        "bytes after the closing line",
                    )],
                    1,
                ));
            }
        }
        return Ok(Some(end));
    }
}

/// A part line the verifier's fast path accepted, reduced to its rows'
/// spans from the spans that path recorded (no second scan). The fast path
/// says whether the rows rose strictly within the part, so only the step
/// from the previous part is compared.
fn rows_from_spans(
    bytes: Vec<u8>,
    info: &LineInfo,
    spans: &RowSpans,
    tables: &[SideTable],
    last_key: &mut Option<(usize, OwnedKey)>,
) -> PartRows {
    let table = spans.table.unwrap_or_default();
    let t = &tables[table];
    let k = t.pk.len();
    let n = t.columns.len();
    let rows: Vec<RowRec> = spans
        .rows
        .iter()
        .enumerate()
        .map(|(i, &row)| RowRec {
            row,
            rowid: spans.rowids.get(i).copied(),
            item: u32::try_from(i).unwrap_or(u32::MAX),
        })
        .collect();
    let mut keys = Vec::with_capacity(rows.len() * k);
    for i in 0..rows.len() {
        let row_cells = spans.cells.get(i * n..(i + 1) * n).unwrap_or(&[]);
        keys.extend(
            t.pk.iter()
                .map(|&p| row_cells.get(p).copied().unwrap_or(MISSING)),
        );
    }
    let mut part = PartRows {
        table,
        offset: info.offset,
        bytes,
        rows,
        cells: spans.cells.clone(),
        keys,
        ordered: true,
    };
    if let Some(last) = part.rows.len().checked_sub(1) {
        part.ordered = spans.ordered
            && match last_key {
                Some((lt, lk)) if *lt == table => lk.as_ref().cmp(&part.key(0, k)).is_lt(),
                _ => true,
            };
        *last_key = Some((table, part.key(last, k).to_owned_key()));
    }
    part
}

/// Reduces a part line to its rows' spans; `None` for object and payload
/// parts.
fn rows_of(
    bytes: Vec<u8>,
    info: &LineInfo,
    tables: &[SideTable],
    by_name: &HashMap<Vec<u8>, usize>,
    last_key: &mut Option<(usize, OwnedKey)>,
    ctx: &Ctx<'_>,
) -> Result<Option<PartRows>, Error> {
    let bad =
        |e: scan::ScanError| ctx.malformed(info.number, format!("{} at byte {}", e.what, e.at));
    let scanned = match scan::scan_part(&bytes).map_err(bad)? {
        PartScan::Other => return Ok(None),
        PartScan::Rows(scanned) => scanned,
    };
    let Some(first) = scanned.items.first() else {
        return Ok(None);
    };
    let tname = scan::slice(&bytes, first.table);
    let Some(&table) = by_name.get(tname) else {
        return Err(ctx.malformed(
            info.number,
            format!(
                "rows of table {} that the manifest does not list",
                String::from_utf8_lossy(tname)
            ),
        ));
    };
    let t = &tables[table];
    let mut part = extract(bytes, &scanned, table, t, info.offset, ctx.opts.no_verify)
        .map_err(|m| ctx.malformed(info.number, m))?;
    let k = t.pk.len();
    let mut ordered = match last_key {
        Some((lt, lk)) if *lt == table => lk.as_ref().cmp(&part.key(0, k)).is_lt(),
        _ => true,
    };
    for i in 1..part.rows.len() {
        if !ordered {
            break;
        }
        ordered = part.key(i - 1, k).cmp(&part.key(i, k)).is_lt();
    }
    part.ordered = ordered;
    if let Some(last) = part.rows.len().checked_sub(1) {
        *last_key = Some((table, part.key(last, k).to_owned_key()));
    }
    Ok(Some(part))
}

/// Scans a part line of table `table` again (a re-read by offset).
pub(crate) fn rescan(
    bytes: Vec<u8>,
    table: usize,
    t: &SideTable,
    offset: u64,
    lax: bool,
) -> Result<PartRows, String> {
    match scan::scan_part(&bytes) {
        Ok(PartScan::Rows(scanned)) => extract(bytes, &scanned, table, t, offset, lax),
        Ok(PartScan::Other) => Err("the line re-read holds no rows".into()),
        Err(e) => Err(format!("{} at byte {}", e.what, e.at)),
    }
}

/// Whether a cell's text is surely canonical JSON: an unescaped string, a
/// short integer, a literal.
pub(crate) fn surely_canonical(text: &[u8]) -> bool {
    match text {
        [b'"', inner @ .., b'"'] => !inner.iter().any(|&c| c == b'\\' || c < 0x20),
        b"null" | b"true" | b"false" | b"0" => true,
        [b'-', digits @ ..] | digits => {
            matches!(digits.first(), Some(b'1'..=b'9'))
                && digits.len() <= 15
                && digits.iter().all(u8::is_ascii_digit)
        }
    }
}

/// The canonical text of a cell (its own bytes when it does not parse).
pub(crate) fn canonical_cell(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if surely_canonical(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    match ndarc_json::parse(text) {
        Ok(v) => std::borrow::Cow::Owned(ndarc_json::to_canonical_vec(&v)),
        Err(_) => std::borrow::Cow::Borrowed(text),
    }
}

/// Makes the span's text canonical, appending the canonical text to the
/// buffer (after the line) when it is not.
fn canonical_span(bytes: &mut Vec<u8>, span: &mut Span) {
    let text = scan::slice(bytes, *span);
    if surely_canonical(text) {
        return;
    }
    if let std::borrow::Cow::Owned(c) = canonical_cell(text) {
        let start = bytes.len();
        bytes.extend_from_slice(&c);
        if let (Ok(a), Ok(b)) = (u32::try_from(start), u32::try_from(bytes.len())) {
            *span = (a, b);
        }
    }
}

fn extract(
    mut bytes: Vec<u8>,
    scanned: &scan::RowsScan,
    table: usize,
    t: &SideTable,
    offset: u64,
    lax: bool,
) -> Result<PartRows, String> {
    let items = &scanned.items;
    let n = t.columns.len();
    let k = t.pk.len();
    let tname = items
        .first()
        .map_or(&[][..], |i| scan::slice(&bytes, i.table));
    let mut rows = Vec::with_capacity(items.len());
    let mut cells = vec![MISSING; items.len() * n];
    let mut keys = Vec::with_capacity(items.len() * k);
    for (i, it) in items.iter().enumerate() {
        if scan::slice(&bytes, it.table) != tname {
            return Err("a part with rows of two tables".into());
        }
        let row_cells = &mut cells[i * n..(i + 1) * n];
        let members = scanned
            .cells
            .get(it.cells.0 as usize..it.cells.1 as usize)
            .unwrap_or(&[]);
        for (m, &(name, value)) in members.iter().enumerate() {
            let name = scan::slice(&bytes, name);
            // Canonical rows list exactly the columns, in this order.
            let at = if t.columns.get(m).is_some_and(|c| c.1 == name) {
                Some(m)
            } else {
                t.columns.iter().position(|c| c.1 == name)
            };
            if let Some(at) = at {
                row_cells[at] = value;
            }
        }
        keys.extend(t.pk.iter().map(|&p| row_cells[p]));
        let rowid = if t.has_rowid {
            let span = it.rowid.ok_or("a row item without rowid")?;
            let id = scan::rowid_of(scan::slice(&bytes, span))
                .ok_or("a rowid that is not a safe integer")?;
            Some((id, span))
        } else {
            None
        };
        rows.push(RowRec {
            row: it.row,
            rowid,
            item: u32::try_from(i).unwrap_or(u32::MAX),
        });
    }
    if lax {
        // Lines read without verification may not be canonical: keys are
        // matched and shown by text, so make theirs canonical.
        for k in &mut keys {
            canonical_span(&mut bytes, k);
        }
        for r in &mut rows {
            if let Some((_, span)) = &mut r.rowid {
                canonical_span(&mut bytes, span);
            }
        }
    }
    Ok(PartRows {
        table,
        offset,
        bytes,
        rows,
        cells,
        keys,
        ordered: true,
    })
}
