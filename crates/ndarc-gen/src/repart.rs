//! Re-packing an archive into parts of another size.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use ndarc_format::catalogue::{content_header_digest, decode_base64_into, decoded_len};
use ndarc_format::hash::sha256;
use ndarc_format::pack::chunk_part;
use ndarc_format::{ArchiveHasher, ContentHasher, MAX_PART_LINE};
use ndarc_json::{Object, Value};

use crate::binary::{chunk_cap, chunk_count};
use crate::error::{lines, parse_line, Error};
use crate::gen::{BinaryDelta, Summary, TableSummary};
use crate::pack::{PartWriter, RowPacker};

/// Identity of a binary entry: `Some((bucket, key))` for an object, or the
/// payload name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Object(String, String),
    Payload(String),
}

impl Entry {
    fn cap(&self, part_bytes: usize) -> u64 {
        match self {
            Entry::Object(b, k) => chunk_cap(part_bytes, Some(b), Some(k), None),
            Entry::Payload(n) => chunk_cap(part_bytes, None, None, Some(n)),
        }
    }
}

/// One item of the input, as repartitioning sees it.
enum Item<'v, 'a> {
    Row(&'v Object<'a>),
    Chunk {
        entry: Entry,
        offset: u64,
        data: &'v str,
    },
}

fn classify<'v, 'a>(item: &'v Value<'a>, line: u64) -> Result<Item<'v, 'a>, Error> {
    let bad = |m: &str| Error::archive(line, m.to_string());
    let o = item
        .as_object()
        .ok_or_else(|| bad("an item is not an object"))?;
    let s = |name: &str| o.get(name).and_then(Value::as_str);
    match s("kind") {
        Some("row") => Ok(Item::Row(o)),
        Some(kind @ ("object" | "payload")) => {
            let entry = if kind == "object" {
                Entry::Object(
                    s("bucket")
                        .ok_or_else(|| bad("an object item has no bucket"))?
                        .to_string(),
                    s("key")
                        .ok_or_else(|| bad("an object item has no key"))?
                        .to_string(),
                )
            } else {
                Entry::Payload(
                    s("name")
                        .ok_or_else(|| bad("a payload item has no name"))?
                        .to_string(),
                )
            };
            let offset = o
                .get("offset")
                .and_then(Value::as_safe_integer)
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| bad("a chunk has no valid offset"))?;
            let data = s("data").ok_or_else(|| bad("a chunk has no data"))?;
            Ok(Item::Chunk {
                entry,
                offset,
                data,
            })
        }
        _ => Err(bad("an item has an unknown kind")),
    }
}

/// Where the archive's lines come from; read once per pass.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    Slice(&'a [u8]),
    File(&'a Path),
}

impl Source<'_> {
    /// Calls `f` with each line (0-based number, bytes without LF).
    fn each_line(&self, mut f: impl FnMut(usize, &[u8]) -> Result<(), Error>) -> Result<(), Error> {
        match self {
            Source::Slice(input) => {
                let (raw, _) = lines(input);
                for (n, l) in raw.into_iter().enumerate() {
                    f(n, l)?;
                }
            }
            Source::File(path) => {
                let file = File::open(path)?;
                let mut r = BufReader::with_capacity(1 << 20, file);
                let mut buf = Vec::new();
                let mut n = 0;
                loop {
                    buf.clear();
                    if r.read_until(b'\n', &mut buf)? == 0 {
                        break;
                    }
                    if buf.last() == Some(&b'\n') {
                        buf.pop();
                    }
                    f(n, &buf)?;
                    n += 1;
                }
            }
        }
        Ok(())
    }
}

/// Calls `f` for every item of the part lines, in order: every line after
/// the first except the closing line.
/// `first` gets the first line. Returns whether the last line was a
/// closing line.
fn for_each_item(
    src: Source<'_>,
    mut first: impl FnMut(&[u8]) -> Result<(), Error>,
    mut f: impl FnMut(Item<'_, '_>, u64) -> Result<(), Error>,
) -> Result<bool, Error> {
    let mut closed = false;
    src.each_line(|n, raw| {
        if n == 0 {
            return first(raw);
        }
        let line = n as u64 + 1;
        if closed {
            return Err(Error::archive(line, "a line after the closing line"));
        }
        let v = parse_line(raw, n)?;
        if v.get("kind").and_then(Value::as_str) == Some("closing") {
            closed = true;
            return Ok(());
        }
        let items = v
            .get("items")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::archive(line, "a part line has no items"))?;
        for item in items {
            f(classify(item, line)?, line)?;
        }
        Ok(())
    })?;
    Ok(closed)
}

fn row_table<'v>(row: &'v Object<'_>, line: u64) -> Result<&'v str, Error> {
    row.get("table")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::archive(line, "a row item has no table"))
}

/// Re-packs a valid archive's rows, objects and payloads into parts of
/// `part_bytes` (1024 ..= 16 MiB) with the producer's packing rule, and
/// writes the result to `out`.
///
/// Rows, chunks' bytes and every manifest member except `partCount` are
/// unchanged, so `contentHash` stays the same (it is recomputed from the
/// rows, and equals the input's for a valid input); `partCount` and
/// `archiveHash` change. Two passes over `input` (a slice or a memory map):
/// the first counts the new parts, which the manifest line carries first;
/// memory stays bounded by one part and the manifest.
///
/// Errors: a line that does not parse, a missing manifest or closing line,
/// items of unknown shape, a row item too large for the new part size
/// (`row_part_too_large`), or an error of `out`.
pub fn repartition(
    input: &[u8],
    part_bytes: usize,
    out: &mut impl Write,
) -> Result<Summary, Error> {
    repartition_from(Source::Slice(input), part_bytes, out)
}

/// [`repartition`] of the archive in the file at `path`, read twice with
/// bounded memory (one line at a time) instead of mapped.
pub fn repartition_file(
    path: &Path,
    part_bytes: usize,
    out: &mut impl Write,
) -> Result<Summary, Error> {
    repartition_from(Source::File(path), part_bytes, out)
}

fn repartition_from(
    src: Source<'_>,
    part_bytes: usize,
    out: &mut impl Write,
) -> Result<Summary, Error> {
    if !(1024..=MAX_PART_LINE).contains(&part_bytes) {
        return Err(Error::archive(
            0,
            format!("part_bytes must be 1024 ..= {MAX_PART_LINE}, not {part_bytes}"),
        ));
    }
    // Pass 1: count the new parts.
    let mut packer = RowPacker::new(part_bytes);
    let mut part_count = 0u64;
    let mut last_table: Option<String> = None;
    let mut current: Option<(Entry, u64)> = None;
    let mut item_buf = Vec::new();
    let mut manifest: Option<Object<'static>> = None;
    let first = |raw: &[u8]| match parse_line(raw, 0)? {
        Value::Object(o) => {
            manifest = Some(o.into_owned());
            Ok(())
        }
        _ => Err(Error::archive(1, "the manifest is not an object")),
    };
    let closed = for_each_item(src, first, |item, line| {
        match item {
            Item::Row(o) => {
                let table = row_table(o, line)?;
                if last_table.as_deref() != Some(table) {
                    packer.end_table();
                    last_table = Some(table.to_string());
                }
                item_buf.clear();
                ndarc_json::write_canonical(&Value::Object(o.clone()), &mut item_buf);
                if packer
                    .admit(item_buf.len())
                    .map_err(|e| Error::archive(line, e.to_string()))?
                {
                    part_count += 1;
                }
            }
            Item::Chunk {
                entry,
                offset,
                data,
            } => {
                let len = decoded_len(data) as u64;
                match &mut current {
                    Some((e, total)) if *e == entry && offset != 0 => *total += len,
                    _ => {
                        if let Some((e, total)) = current.take() {
                            part_count += chunk_count(total, e.cap(part_bytes));
                        }
                        current = Some((entry, len));
                    }
                }
            }
        }
        Ok(())
    })?;
    if let Some((e, total)) = current.take() {
        part_count += chunk_count(total, e.cap(part_bytes));
    }
    let Some(mut manifest) = manifest else {
        return Err(Error::archive(0, "the archive is empty"));
    };
    if !closed {
        return Err(Error::archive(0, "the archive has no closing line"));
    }

    // Pass 2: write.
    manifest.insert("partCount", Value::from(part_count as i64));
    let mut content = ContentHasher::new(&content_header_digest(&manifest));
    let mut archive = ArchiveHasher::new();
    let mut bytes = 0u64;
    let mut line = ndarc_json::to_canonical_vec(&Value::Object(manifest.clone()));
    archive.add_line(&line);
    line.push(b'\n');
    out.write_all(&line)?;
    bytes += line.len() as u64;

    let mut part = PartWriter::new(part_bytes);
    let mut packer = RowPacker::new(part_bytes);
    let mut last_table: Option<String> = None;
    let mut tables: Vec<TableSummary> = Vec::new();
    // The entry being re-chunked: identity, next output offset, bytes not
    // yet written, whether any chunk was written.
    let mut pending: Option<(Entry, u64, Vec<u8>)> = None;
    let mut decoded = Vec::new();
    // One chunk per part, written by the producer's rule
    // (ndarc_format::pack::chunk_part).
    let emit = |entry: &Entry, offset: u64, data: &[u8], part: &mut PartWriter| match entry {
        Entry::Object(b, k) => chunk_part(part, Some((b, k)), "", offset, data),
        Entry::Payload(n) => chunk_part(part, None, n, offset, data),
    };
    // Writes the full chunks of the pending entry, and the rest when `end`.
    let drain = |pending: &mut Option<(Entry, u64, Vec<u8>)>,
                 end: bool,
                 part: &mut PartWriter,
                 archive: &mut ArchiveHasher,
                 out: &mut dyn Write|
     -> Result<u64, Error> {
        let Some((entry, offset, buf)) = pending.as_mut() else {
            return Ok(0);
        };
        let cap = entry.cap(part_bytes) as usize;
        let mut written = 0u64;
        let mut start = 0;
        while buf.len() - start >= cap {
            emit(entry, *offset, &buf[start..start + cap], part);
            written += part.finish(archive, &mut *out)?;
            *offset += cap as u64;
            start += cap;
        }
        buf.drain(..start);
        if end {
            if !buf.is_empty() || *offset == 0 {
                emit(entry, *offset, buf, part);
                written += part.finish(archive, &mut *out)?;
            }
            *pending = None;
        }
        Ok(written)
    };
    let out: &mut dyn Write = out;
    for_each_item(
        src,
        |_| Ok(()),
        |item, line| {
            match item {
                Item::Row(o) => {
                    let table = row_table(o, line)?;
                    if last_table.as_deref() != Some(table) {
                        packer.end_table();
                        last_table = Some(table.to_string());
                        tables.push(TableSummary {
                            name: table.to_string(),
                            rows: 0,
                            changed: 0,
                            added: 0,
                            removed: 0,
                        });
                    }
                    if let Some(t) = tables.last_mut() {
                        t.rows += 1;
                    }
                    item_buf.clear();
                    let item = Value::Object(o.clone());
                    ndarc_json::write_canonical(&item, &mut item_buf);
                    if packer
                        .admit(item_buf.len())
                        .map_err(|e| Error::archive(line, e.to_string()))?
                    {
                        bytes += part.finish(&mut archive, &mut *out)?;
                        part.begin();
                    }
                    part.push_item(&item_buf);
                    let mut r = Object::new();
                    for member in ["row", "rowid", "table"] {
                        if let Some(v) = o.get(member) {
                            r.insert(member, v.clone());
                        }
                    }
                    content
                        .add_row_digest(&sha256(&ndarc_json::to_canonical_vec(&Value::Object(r))));
                }
                Item::Chunk {
                    entry,
                    offset,
                    data,
                } => {
                    bytes += part.finish(&mut archive, &mut *out)?;
                    let same = matches!(&pending, Some((e, _, _)) if *e == entry) && offset != 0;
                    if !same {
                        bytes += drain(&mut pending, true, &mut part, &mut archive, &mut *out)?;
                        pending = Some((entry, 0, Vec::new()));
                    }
                    decoded.clear();
                    if !decode_base64_into(data, &mut decoded) {
                        return Err(Error::archive(
                            line,
                            "a chunk's data is not canonical base64",
                        ));
                    }
                    if let Some((_, _, buf)) = pending.as_mut() {
                        buf.extend_from_slice(&decoded);
                    }
                    bytes += drain(&mut pending, false, &mut part, &mut archive, &mut *out)?;
                }
            }
            Ok(())
        },
    )?;
    bytes += part.finish(&mut archive, &mut *out)?;
    bytes += drain(&mut pending, true, &mut part, &mut archive, &mut *out)?;
    if part.count() != part_count {
        return Err(Error::archive(
            0,
            format!("planned {part_count} parts but wrote {}", part.count()),
        ));
    }

    let content_hash = content.finish();
    let archive_hash = archive.finish();
    let mut line = ndarc_format::closing_line(part_count, &content_hash, &archive_hash);
    line.push(b'\n');
    out.write_all(&line)?;
    bytes += line.len() as u64;

    // Tables without rows are in the manifest only.
    let mut summaries = Vec::new();
    if let Some(list) = manifest.get("tables").and_then(Value::as_array) {
        for t in list {
            let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
            let rows = tables.iter().find(|s| s.name == name).map_or(0, |s| s.rows);
            summaries.push(TableSummary {
                name: name.to_string(),
                rows,
                changed: 0,
                added: 0,
                removed: 0,
            });
        }
    }
    Ok(Summary {
        bytes,
        lines: part_count + 2,
        part_count,
        content_hash,
        archive_hash,
        tables: summaries,
        objects: BinaryDelta::default(),
        payloads: BinaryDelta::default(),
    })
}
