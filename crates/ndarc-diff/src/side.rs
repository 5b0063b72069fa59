//! One input, read on its own thread: lines through a bounded buffer, each
//! verified as it is read (the push verifier of `ndarc-verify`, fed in
//! archive order, plus the framing rules) and reduced to the spans the row
//! diff needs, sent on a bounded channel. Memory: a few parts.

use std::collections::HashMap;
use std::sync::Arc;

use ndarc_format::hash::Digest32;
use ndarc_format::manifest::Manifest;
use ndarc_format::part::{check_line_spans, Body};
use ndarc_format::{check_line, Code, Collector, Finding, LineRef, Plan, RowColumn};
use ndarc_verify::{read_manifest, RowSpans, Session};

use crate::key::{KeyRef, OwnedKey};
use crate::model::Side;
use crate::scan::{self, PartScan, Span, MISSING};
use crate::source::{Input, LineSource};
use crate::{Error, Options};

/// What rows of one table carry, on one side: borrowed from the side's
/// [`Plan`], with the key chosen for it, if any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SideTable<'p> {
    /// Row columns (writable, not excluded) in name (UTF-16) order, with
    /// their names as canonical JSON strings.
    pub(crate) columns: &'p [RowColumn],
    /// Positions in `columns` of the primary key, in `pk` order.
    pub(crate) pk: &'p [usize],
    /// Rows carry `rowid`.
    pub(crate) has_rowid: bool,
    /// The key was chosen (`Options::keys`), not the table's own: rows
    /// need not be in its order, and need not be unique by it.
    pub(crate) chosen_key: bool,
}

/// The row tables of one side: its plan (which holds the manifest, the one
/// typed form of it a side keeps) and the keys chosen for some tables.
#[derive(Debug, Clone)]
pub(crate) struct SideTables {
    /// The plan of the side's manifest, shared with its verifier.
    pub(crate) plan: Arc<Plan>,
    /// Keys chosen per table position: positions in the table's row
    /// columns.
    chosen: HashMap<usize, Vec<usize>>,
    /// A chosen column that rows of its table do not carry.
    pub(crate) error: Option<String>,
}

impl SideTables {
    /// The tables of `plan`, with the keys chosen in `keys` (`(table,
    /// columns)`, names compared ignoring ASCII case).
    pub(crate) fn new(plan: Arc<Plan>, keys: &[(String, Vec<String>)]) -> SideTables {
        let mut chosen = HashMap::new();
        let mut error = None;
        if !keys.is_empty() {
            for (i, (t, mt)) in plan.tables.iter().zip(&plan.manifest.tables).enumerate() {
                let Some((_, cols)) = keys.iter().find(|(n, _)| n.eq_ignore_ascii_case(&mt.name))
                else {
                    continue;
                };
                let pk = cols
                    .iter()
                    .map(|c| {
                        t.columns
                            .iter()
                            .position(|rc| rc.name.eq_ignore_ascii_case(c))
                            .ok_or_else(|| {
                                format!(
                                    "--key {}: rows of table {} have no column {c:?}",
                                    mt.name, mt.name
                                )
                            })
                    })
                    .collect::<Result<Vec<usize>, String>>();
                match pk {
                    Ok(pk) if !pk.is_empty() => {
                        chosen.insert(i, pk);
                    }
                    Ok(_) => {}
                    Err(e) => {
                        error.get_or_insert(e);
                    }
                }
            }
        }
        SideTables {
            plan,
            chosen,
            error,
        }
    }

    /// The manifest.
    pub(crate) fn manifest(&self) -> &Manifest {
        &self.plan.manifest
    }

    /// Table `t` (a position in the manifest's tables).
    pub(crate) fn get(&self, t: usize) -> Option<SideTable<'_>> {
        let p = self.plan.tables.get(t)?;
        let chosen = self.chosen.get(&t);
        Some(SideTable {
            columns: &p.columns,
            pk: chosen.map_or(&p.pk, |c| c),
            has_rowid: p.has_rowid,
            chosen_key: chosen.is_some(),
        })
    }
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
    /// The SHA-256 of the line as read, when the side verified it (the
    /// verifier's term of `archiveHash`): what a line read again by offset
    /// is checked against, without hashing the line a second time.
    pub(crate) digest: Option<Digest32>,
}

impl PartRows {
    /// The key of row `i`.
    pub(crate) fn key(&self, i: usize, pk: usize) -> KeyRef<'_> {
        KeyRef {
            bytes: &self.bytes,
            // A key chosen for a rowid table replaces the rowid.
            rowid: if pk == 0 { self.rows[i].rowid } else { None },
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
    Manifest(Box<SideTables>),
    Rows(PartRows),
    End(SideEnd),
    Failed(Box<Error>),
}

struct Ctx<'o> {
    side: Side,
    name: String,
    opts: &'o Options,
    /// Held by a side reading its manifest or re-scanning for duplicate
    /// keys: the two sides do these one after the other, so that only one
    /// manifest line and its half-built forms (a manifest near its limit
    /// needs several times its line while it is read, and much less after),
    /// or one re-scan's keys, are in memory at a time.
    turn: &'o std::sync::Mutex<()>,
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

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            side: self.side,
            name: self.name.clone(),
            source,
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

/// Where a line is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineInfo {
    /// 1-based line number.
    pub(crate) number: u64,
    /// Byte offset of its first byte.
    pub(crate) offset: u64,
}

impl ndarc_verify::chan::Weight for Event {
    /// Bytes an event holds, roughly, for the channel's budget.
    fn weight(&self) -> usize {
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
    lines: Option<LineSource<'_>>,
    side: Side,
    name: &str,
    opts: &Options,
    turn: &std::sync::Mutex<()>,
    tx: ndarc_verify::chan::Sender<Event>,
) {
    let ctx = Ctx {
        side,
        name: name.to_string(),
        opts,
        turn,
    };
    let lines = match lines {
        Some(l) => Ok(l),
        None => LineSource::new(input),
    };
    let result = match lines {
        Ok(mut lines) => read(&mut lines, input, &ctx, &tx),
        Err(source) => Err(Error::Io {
            side: ctx.side,
            name: ctx.name.clone(),
            source,
        }),
    };
    let event = match result {
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
    lines: &mut LineSource<'_>,
    input: &Input<'_>,
    ctx: &Ctx<'_>,
    tx: &ndarc_verify::chan::Sender<Event>,
) -> Result<Option<SideEnd>, Error> {
    let verify = !ctx.opts.no_verify;
    let vopts = &ctx.opts.verify;
    let (plan, mut session) = manifest_of(lines, ctx)?;
    let tables = SideTables::new(plan, &ctx.opts.keys);
    // Tables by their names' JSON text, for the lines whose rows are
    // scanned here: lines read without verification, and verified lines
    // the fast path did not read (no spans), such as rows of
    // `oa_sessions` or `oa_credentials` with a `kind` column, whose cells
    // the full check reads for `dev_data`.
    let by_name: HashMap<&[u8], usize> = tables
        .plan
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name_json.as_slice(), i))
        .collect();
    let part_count = tables.manifest().part_count;
    if tx.send(Event::Manifest(Box::new(tables.clone()))).is_err() {
        return Ok(None);
    }

    // Parts read so far (memory does not grow with their number).
    let mut parts = 0u64;
    let mut last_key: Option<(usize, OwnedKey)> = None;
    // Where the verifier found the rows of the current part (verified mode).
    let mut spans = RowSpans::default();
    loop {
        let Some(line) = lines
            .next_line(vopts.max_line, false)
            .map_err(|e| ctx.io(e))?
        else {
            return Err(ended_early(session, parts, lines, input, ctx));
        };
        let info = LineInfo {
            number: line.number,
            offset: line.offset,
        };
        check_framing(&line, verify, ctx)?;
        let mut closing = parts >= part_count;
        let mut digest = None;
        if let Some(s) = session.as_mut() {
            // The session checks every line in file order, as `verify` does.
            spans.clear();
            let summary = check_line_spans(s.plan(), line.at(), &mut spans);
            if summary.findings.iter().any(Finding::is_error) || summary.dropped > 0 {
                let kept = summary.findings.iter().filter(|f| f.is_error()).count() as u64;
                return Err(ctx.invalid(summary.findings, summary.dropped + kept));
            }
            closing = matches!(summary.body, Body::Closing(_));
            digest = Some(summary.digest);
            s.feed(summary);
        }
        if closing {
            return ended(session, &line, part_count, lines, input, ctx).map(Some);
        }
        parts += 1;
        let owned = line.bytes.to_vec();
        let part = if spans.table.is_some() {
            rows_from_spans(owned, &info, &spans, &tables, &mut last_key)
        } else {
            // Not canonicalized here: cells and keys are compared by
            // value where their bytes differ (see `Pair`).
            rows_of(owned, &info, &tables, &by_name, &mut last_key, ctx)?
        };
        if let Some(mut part) = part {
            part.digest = digest;
            if tx.send(Event::Rows(part)).is_err() {
                return Ok(None);
            }
        }
    }
}

/// The side's manifest, read from its first line: its plan, and the
/// session that verifies the side (`None` when not verifying). The side
/// keeps one typed form of its manifest: the plan, shared with the session
/// (or built from the manifest, moved, when not verifying).
fn manifest_of(
    lines: &mut LineSource<'_>,
    ctx: &Ctx<'_>,
) -> Result<(Arc<Plan>, Option<Session>), Error> {
    let vopts = &ctx.opts.verify;
    // A line over its limit ends the diff, so it is never skipped: an
    // endless input stops at the first limit.
    let _turn = ctx
        .turn
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(first) = lines
        .next_line(vopts.max_manifest_line, false)
        .map_err(|e| ctx.io(e))?
    else {
        let mut found = lines.take_pending();
        found.push(ndarc_verify::lines::manifest_missing());
        return Err(ctx.invalid(found, 1));
    };
    if ctx.opts.no_verify {
        return unverified_manifest(first, ctx);
    }
    let mut found = first.framing.clone();
    if first.too_long.is_some() {
        found.push(first.too_long_finding(vopts.max_manifest_line, "manifest"));
    }
    if !found.is_empty() {
        return Err(ctx.invalid(found, 0));
    }
    let at = first.at();
    let read = read_manifest(at, vopts);
    if read.manifest.is_none() || read.has_errors() {
        let kept = read.findings.iter().filter(|f| f.is_error()).count() as u64;
        return Err(ctx.invalid(read.findings, read.dropped + kept));
    }
    let c = Collector::new(vopts.max_errors.max(1));
    let started = Session::from_read(read, at, first.raw_digest, vopts, c);
    // The line is no longer needed once the plan is made.
    drop(first);
    match started {
        // The side keeps the plan: the report needs no copy of it.
        Ok(s) => Ok((Arc::clone(s.plan()), Some(s.without_manifest_in_report()))),
        Err(r) => Err(ctx.invalid(r.findings.kept, r.findings.errors)),
    }
}

/// The plan of a manifest line read without verification.
fn unverified_manifest(
    first: ndarc_verify::lines::Line<'_>,
    ctx: &Ctx<'_>,
) -> Result<(Arc<Plan>, Option<Session>), Error> {
    if first.too_long.is_some() {
        return Err(ctx.malformed(1, "the manifest line is over the limit"));
    }
    let canon = canonical_line(&first.bytes, 1, ctx)?;
    drop(first);
    let at = LineRef {
        line: 1,
        offset: 0,
        bytes: &canon,
    };
    let read = read_manifest(at, &ctx.opts.verify);
    match read.manifest {
        Some(m) => {
            drop(canon);
            Ok((Arc::new(Plan::new(m)), None))
        }
        None => {
            let why = read
                .findings
                .iter()
                .find(|f| f.is_error())
                .map_or("not a manifest".to_string(), |f| f.message.clone());
            Err(ctx.malformed(1, why))
        }
    }
}

/// A part or closing line's framing findings and length, as an error.
fn check_framing(
    line: &ndarc_verify::lines::Line<'_>,
    verify: bool,
    ctx: &Ctx<'_>,
) -> Result<(), Error> {
    let max_line = ctx.opts.verify.max_line;
    if verify {
        let mut found = line.framing.clone();
        if line.too_long.is_some() {
            found.push(line.too_long_finding(max_line, "part"));
        }
        if !found.is_empty() {
            return Err(ctx.invalid(found, 0));
        }
    } else if line.too_long.is_some() {
        return Err(ctx.malformed(line.number, "the line is over the limit"));
    }
    Ok(())
}

/// The input ended before its closing line, after `parts` parts: the
/// session reports what is missing, as `verify` does.
fn ended_early(
    session: Option<Session>,
    parts: u64,
    lines: &mut LineSource<'_>,
    input: &Input<'_>,
    ctx: &Ctx<'_>,
) -> Error {
    let at = parts + 2;
    let Some(mut s) = session else {
        return ctx.malformed(at, "the input ends without a closing line");
    };
    for f in lines.take_pending() {
        s.push(f);
    }
    let eof = (lines.lines() + 1, lines.position());
    let report = finish(s, eof, input, ctx);
    ctx.invalid(report.findings, report.errors)
}

/// How the side ends at its closing line `line`; nothing may follow it.
fn ended(
    session: Option<Session>,
    line: &ndarc_verify::lines::Line<'_>,
    part_count: u64,
    lines: &mut LineSource<'_>,
    input: &Input<'_>,
    ctx: &Ctx<'_>,
) -> Result<SideEnd, Error> {
    let closing_line = line.number;
    let next = lines
        .next_line(ctx.opts.verify.max_line, false)
        .map_err(|e| ctx.io(e))?;
    let Some(mut s) = session else {
        return unverified_end(line, closing_line, part_count, ctx);
    };
    if let Some(t) = next {
        // The session reports it (trailing_data), as `verify` does.
        for f in &t.framing {
            s.push(f.clone());
        }
        s.feed(check_line(s.plan(), t.at()));
    }
    for f in lines.take_pending() {
        s.push(f);
    }
    let eof = (lines.lines() + 1, lines.position());
    let report = finish(s, eof, input, ctx);
    if report.errors > 0 {
        return Err(ctx.invalid(report.findings, report.errors));
    }
    let (content_hash, archive_hash) = report.closing_hashes.unwrap_or_default();
    Ok(SideEnd {
        content_hash,
        archive_hash,
        warnings: report.warnings,
    })
}

/// How the side ends at a closing line read without verification: its
/// hashes as they are.
fn unverified_end(
    line: &ndarc_verify::lines::Line<'_>,
    closing_line: u64,
    part_count: u64,
    ctx: &Ctx<'_>,
) -> Result<SideEnd, Error> {
    let v = ndarc_json::parse(&line.bytes)
        .map_err(|e| ctx.malformed(closing_line, format!("closing line: {}", e.message())))?;
    let get = |n: &str| {
        v.get(n)
            .and_then(ndarc_json::Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    if v.get("kind").and_then(ndarc_json::Value::as_str) != Some("closing") {
        return Err(ctx.malformed(
            closing_line,
            format!("line {closing_line} should be the closing line after {part_count} parts"),
        ));
    }
    Ok(SideEnd {
        content_hash: get("contentHash"),
        archive_hash: get("archiveHash"),
        warnings: 0,
    })
}

/// Ends the side's verification. Its re-scan of tables out of key order
/// holds 20 bytes a row of such a table (SPEC.md §11): the sides take
/// turns, so that only one re-scan's keys are in memory at a time.
fn finish(s: Session, eof: (u64, u64), input: &Input<'_>, ctx: &Ctx<'_>) -> ndarc_verify::Report {
    let _turn = ctx
        .turn
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let vopts = &ctx.opts.verify;
    s.finish(eof, false, &mut |l, offset| reread(input, l, offset, vopts))
}

/// A part line read again for the duplicate-key re-scan.
fn reread(
    input: &Input<'_>,
    line: u64,
    offset: u64,
    vopts: &ndarc_verify::Options,
) -> Result<(Vec<u8>, u64), Finding> {
    input.line_at(offset, vopts.max_line).map_err(|e| {
        Finding::new(
            Code::PartMissing,
            line,
            offset,
            "",
            format!("the line could not be re-read to look for duplicate keys: {e}"),
        )
    })
}

/// A part line the verifier's fast path accepted, reduced to its rows'
/// spans from the spans that path recorded (no second scan). The fast path
/// says whether the rows rose strictly within the part, so only the step
/// from the previous part is compared.
fn rows_from_spans(
    bytes: Vec<u8>,
    info: &LineInfo,
    spans: &RowSpans,
    tables: &SideTables,
    last_key: &mut Option<(usize, OwnedKey)>,
) -> Option<PartRows> {
    let table = spans.table.unwrap_or_default();
    let t = tables.get(table)?;
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
        digest: None,
    };
    // The verifier's order is that of the table's own key.
    let within = if t.chosen_key {
        (1..part.rows.len()).all(|i| part.key(i - 1, k).cmp(&part.key(i, k)).is_lt())
    } else {
        spans.ordered
    };
    if let Some(last) = part.rows.len().checked_sub(1) {
        part.ordered = within
            && match last_key {
                Some((lt, lk)) if *lt == table => lk.as_ref().cmp(&part.key(0, k)).is_lt(),
                _ => true,
            };
        *last_key = Some((table, part.key(last, k).to_owned_key()));
    }
    Some(part)
}

/// Reduces a part line to its rows' spans; `None` for object and payload
/// parts.
fn rows_of(
    bytes: Vec<u8>,
    info: &LineInfo,
    tables: &SideTables,
    by_name: &HashMap<&[u8], usize>,
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
    let Some(t) = tables.get(table) else {
        return Ok(None);
    };
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
    t: SideTable<'_>,
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
    t: SideTable<'_>,
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
            let at = if t.columns.get(m).is_some_and(|c| c.name_json == name) {
                Some(m)
            } else {
                t.columns.iter().position(|c| c.name_json == name)
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
        digest: None,
    })
}
