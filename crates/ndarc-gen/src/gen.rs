//! The streaming, deterministic archive generator.

use std::io::{self, Write};

use ndarc_format::catalogue::{content_header_digest, is_name, iso_time, schema_identity};
use ndarc_format::hash::row_content_digest;
use ndarc_format::{ContentHasher, FORMAT, MAX_PART_LINE, VERSION};
use ndarc_json::{Object, Value};

use crate::binary::{self, chunk_count, Binary, Delta, ObjectParams};
use crate::rng::{derive, derive_all, Rng};
use crate::rows::{LaterRows, RowMaker, Variant};
use crate::schema::{self, TableDef, TableKind, TEMPLATES};
use ndarc_format::pack::{ArchiveWriter, PartWriter, RowPacker};

/// The most rows per table [`generate`] accepts.
pub const MAX_ROWS: u64 = 1_000_000_000;

/// How many rows each table gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Exactly this many rows in every table (except the always-empty
    /// `empty_things`).
    Exactly(u64),
    /// A seed-chosen number in `lo..=hi` per table.
    Between(u64, u64),
}

/// A later export of the same archive: the next version of the data, for
/// diff tests and benchmarks.
///
/// Each row slot of the first export is, independently and by a generator
/// seeded with `seed`, removed with probability `removed`, otherwise changed
/// (one or more non-key cells) with probability `changed`; after each slot a
/// new row is added with probability `added`, with a key that sorts between
/// that slot's and the next one's, so rows stay in key order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Later {
    /// Seed of the changes (independent of the archive seed).
    pub seed: u64,
    /// Fraction of rows changed, 0 to 1.
    pub changed: f64,
    /// Rows added, as a fraction of the first export's rows, 0 to 1.
    pub added: f64,
    /// Fraction of rows removed, 0 to 1.
    pub removed: f64,
    /// Also change one object (and the first payload), remove one object
    /// (the fourth, when there are four) and add one.
    pub binary: bool,
}

impl Default for Later {
    fn default() -> Self {
        Later {
            seed: 1,
            changed: 0.05,
            added: 0.02,
            removed: 0.01,
            binary: true,
        }
    }
}

/// What to generate. `GenOptions::default()` exercises every feature of
/// the format (all ten table templates, an empty object, a multi-chunk
/// object, payloads `kv cache` before `kv`, an empty payload, migrations …)
/// with parts of 16 MiB, as the producer writes them.
#[derive(Debug, Clone, PartialEq)]
pub struct GenOptions {
    /// The seed: same seed and options, same bytes.
    pub seed: u64,
    /// Number of tables: the ten templates first (in a seed-chosen order, so
    /// fewer than ten gives a seed-chosen subset), then random tables.
    pub tables: usize,
    /// Exactly these tables instead of `tables` (duplicates ignored).
    pub kinds: Option<Vec<TableKind>>,
    /// Rows per table.
    pub rows: Rows,
    /// Number of bucket objects. The first generated is empty (size 0).
    pub objects: u64,
    /// Largest size of an ordinary object.
    pub object_bytes: u64,
    /// Make the second object span three parts (two full chunks and one
    /// byte), whatever `part_bytes` is.
    pub large_object: bool,
    /// Number of payloads: `kv`, `kv cache`, `sessions` (empty),
    /// `kv/archive`, `queue: dead letters`, `Ω-state`, then `payload-N`.
    pub payloads: u64,
    /// Largest size of a payload.
    pub payload_bytes: u64,
    /// The producer's `partBytes`: 1024 ..= 16 MiB.
    pub part_bytes: usize,
    /// List `_cf_KV`, `d1_migrations`, `sqlite_sequence` in
    /// `excludedTables`.
    pub excluded_tables: bool,
    /// Add the optional `migrations` member.
    pub migrations: bool,
    /// The `product` name.
    pub product: String,
    /// Generate the later export instead of the first one.
    pub later: Option<Later>,
    /// Write the rows of each table without rowid in an order shuffled by
    /// this seed instead of key order (a valid archive: such rows need not
    /// be in key order; rows with a rowid stay in rowid order), for diff
    /// benchmarks; `None` keeps key order. Costs 16 bytes a row of the
    /// table being written.
    pub shuffle_rows: Option<u64>,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            seed: 0,
            tables: TEMPLATES.len(),
            kinds: None,
            rows: Rows::Between(10, 100),
            objects: 6,
            object_bytes: 4096,
            large_object: true,
            payloads: 3,
            payload_bytes: 2048,
            part_bytes: MAX_PART_LINE,
            excluded_tables: true,
            migrations: true,
            product: "ndarc-testkit".to_string(),
            later: None,
            shuffle_rows: None,
        }
    }
}

impl GenOptions {
    /// Small options for tests: default features, few rows, 4 KiB parts.
    pub fn small(seed: u64) -> GenOptions {
        GenOptions {
            seed,
            rows: Rows::Between(3, 30),
            objects: 5,
            object_bytes: 3000,
            payload_bytes: 1500,
            part_bytes: 4096,
            ..GenOptions::default()
        }
    }

    /// The same options for the later export `later`.
    pub fn with_later(&self, later: Later) -> GenOptions {
        GenOptions {
            later: Some(later),
            ..self.clone()
        }
    }

    fn check(&self) -> io::Result<()> {
        let bad = |m: String| Err(io::Error::new(io::ErrorKind::InvalidInput, m));
        if !ndarc_format::pack::PART_BYTES.contains(&self.part_bytes) {
            return bad(format!(
                "part_bytes must be 1024 ..= {MAX_PART_LINE}, not {}",
                self.part_bytes
            ));
        }
        let most = match self.rows {
            Rows::Exactly(n) => n,
            Rows::Between(lo, hi) if lo > hi => return bad(format!("rows: {lo} > {hi}")),
            Rows::Between(_, hi) => hi,
        };
        if most > MAX_ROWS {
            // Text keys have fixed-width numbers; beyond this they would
            // outgrow their width and leave key order.
            return bad(format!("at most {MAX_ROWS} rows per table, not {most}"));
        }
        if !is_name(&self.product) {
            return bad("product must be a name (1 to 512 characters, no C0 controls)".into());
        }
        if let Some(l) = self.later {
            for (what, f) in [
                ("changed", l.changed),
                ("added", l.added),
                ("removed", l.removed),
            ] {
                if !(0.0..=1.0).contains(&f) {
                    return bad(format!("later.{what} must be in 0..=1, not {f}"));
                }
            }
        }
        Ok(())
    }
}

/// Rows of one table in a generated archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSummary {
    /// The table name.
    pub name: String,
    /// Its `count`.
    pub rows: u64,
    /// Rows whose key is in the first export and whose row differs (later
    /// export only).
    pub changed: u64,
    /// Rows whose key is not in the first export (later export only).
    pub added: u64,
    /// Keys of the first export missing here (later export only).
    pub removed: u64,
}

impl TableSummary {
    /// No rows yet of table `name`.
    fn empty(name: &str) -> TableSummary {
        TableSummary {
            name: name.to_string(),
            rows: 0,
            changed: 0,
            added: 0,
            removed: 0,
        }
    }
}

/// Changes of objects or payloads between the first and a later export, by
/// the keys `diff.mjs` uses: canonical JSON `["bucket","key"]` for objects,
/// `["name"]` for payloads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BinaryDelta {
    /// Keys only in the later export.
    pub added: Vec<String>,
    /// Keys only in the first export.
    pub removed: Vec<String>,
    /// Keys in both whose manifest entries differ.
    pub changed: Vec<String>,
}

impl From<Delta> for BinaryDelta {
    fn from(d: Delta) -> Self {
        BinaryDelta {
            added: d.added,
            removed: d.removed,
            changed: d.changed,
        }
    }
}

/// What [`generate`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Bytes written.
    pub bytes: u64,
    /// Lines written (manifest, parts, closing).
    pub lines: u64,
    /// `partCount`.
    pub part_count: u64,
    /// The closing `contentHash`.
    pub content_hash: String,
    /// The closing `archiveHash`.
    pub archive_hash: String,
    /// Every table in manifest order.
    pub tables: Vec<TableSummary>,
    /// Object changes (empty unless a later export with `binary`).
    pub objects: BinaryDelta,
    /// Payload changes (empty unless a later export with `binary`).
    pub payloads: BinaryDelta,
}

/// One table with its first-export row count.
struct Planned {
    def: TableDef,
    base_rows: u64,
}

/// A row slot's fate in a later export.
#[derive(Clone, Copy)]
struct SlotPlan {
    keep: Option<Variant>,
    add_after: bool,
}

fn slot_plan(later: Option<Later>, t: &TableDef, slot: u64) -> SlotPlan {
    let Some(l) = later else {
        return SlotPlan {
            keep: Some(Variant::Base),
            add_after: false,
        };
    };
    let mut rng = Rng::new(derive_all(l.seed, &[t.salt, slot, 0x51]));
    let u = rng.unit();
    let keep = if u < l.removed {
        None
    } else if u < l.removed + l.changed {
        Some(Variant::Changed)
    } else {
        Some(Variant::Base)
    };
    SlotPlan {
        keep,
        add_after: rng.unit() < l.added,
    }
}

/// Walks a table's rows in archive order, handing each item to `sink`.
fn walk(
    t: &Planned,
    later: Option<Later>,
    maker: &mut RowMaker,
    buf: &mut Vec<u8>,
    mut sink: impl FnMut(&[u8], &crate::rows::Made) -> io::Result<()>,
) -> io::Result<TableSummary> {
    let mut s = TableSummary::empty(&t.def.name);
    for slot in 0..t.base_rows {
        let plan = slot_plan(later, &t.def, slot);
        let mut versions: [Option<Variant>; 2] = [plan.keep, None];
        if plan.add_after {
            versions[1] = Some(Variant::Added);
        }
        if plan.keep.is_none() {
            s.removed += 1;
        }
        for v in versions.into_iter().flatten() {
            emit(&mut s, t, (slot, v), maker, buf, &mut sink)?;
        }
    }
    Ok(s)
}

/// Makes the item of row `slot` as `variant`, with the next row index,
/// counts it in `s` and hands it to `sink`.
fn emit(
    s: &mut TableSummary,
    t: &Planned,
    (slot, variant): (u64, Variant),
    maker: &mut RowMaker,
    buf: &mut Vec<u8>,
    sink: &mut impl FnMut(&[u8], &crate::rows::Made) -> io::Result<()>,
) -> io::Result<()> {
    let made = maker.item(&t.def, slot, variant, s.rows, buf)?;
    match variant {
        Variant::Changed if made.changed => s.changed += 1,
        Variant::Added => s.added += 1,
        _ => {}
    }
    sink(buf, &made)?;
    s.rows += 1;
    Ok(())
}

/// [`walk`], or with `opts.shuffle_rows` (for a table whose rows carry
/// no rowid) the same rows in an order drawn from that seed and the table's name (so both walks of
/// [`generate`] give the same order), each item made with the row index
/// of its new place (indexes run 0, 1, 2 … in archive order). Holds 16
/// bytes a row of the table.
fn walk_shuffled(
    t: &Planned,
    opts: &GenOptions,
    maker: &mut RowMaker,
    buf: &mut Vec<u8>,
    mut sink: impl FnMut(&[u8], &crate::rows::Made) -> io::Result<()>,
) -> io::Result<TableSummary> {
    // Rows that carry a rowid must come in rowid order (`rowid_order`).
    let Some(seed) = opts.shuffle_rows.filter(|_| t.def.rowid_alias.is_none()) else {
        return walk(t, opts.later, maker, buf, sink);
    };
    let mut s = TableSummary::empty(&t.def.name);
    let mut rows: Vec<(u64, Variant)> = Vec::new();
    for slot in 0..t.base_rows {
        let plan = slot_plan(opts.later, &t.def, slot);
        match plan.keep {
            Some(v) => rows.push((slot, v)),
            None => s.removed += 1,
        }
        if plan.add_after {
            rows.push((slot, Variant::Added));
        }
    }
    let mut rng = Rng::new(derive(seed, name_hash(&t.def.name)));
    for i in (1..rows.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        rows.swap(i, j);
    }
    for (slot, v) in rows {
        emit(&mut s, t, (slot, v), maker, buf, &mut sink)?;
    }
    Ok(s)
}

/// A hash of a table name (FNV-1a), to draw its shuffle.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The journal: three entries before the first export (`first_ms`); a
/// later export's journal is the first one's entries, unchanged, and one
/// more, so that it can follow the first (SPEC.md §4.6). Only `head` is
/// drawn anew.
fn journal(seed: u64, later: Option<Later>, first_ms: u64, exported_ms: u64) -> Value<'static> {
    let mut rng = Rng::new(derive(seed, 0x10A7));
    let n = 3 + later.map_or(0, |_| 1);
    let ops = ["migrate", "import", "erase", "export"];
    let entries = (0..n)
        .map(|i| {
            let at = if i < 3 {
                first_ms - (3 - i) as u64 * 3_600_000
            } else {
                exported_ms - 3_600_000
            };
            let mut e = Object::new();
            e.insert("seq", Value::from(i as i64 + 1));
            e.insert("op", Value::from(ops[i % ops.len()]));
            e.insert("at", Value::from(iso_time(at)));
            e.insert("ratio", Value::from(rng.below(1000) as f64 / 7.0));
            e.insert("note", Value::from("ünï \"quoted\" \\ \u{2028} 😀"));
            e.insert("tags", Value::Array(vec![Value::Null, Value::Bool(true)]));
            Value::Object(e)
        })
        .collect();
    let mut o = Object::new();
    o.insert("head", Value::from(format!("{:016x}", rng.next_u64())));
    o.insert("entries", Value::Array(entries));
    Value::Object(o)
}

fn migrations() -> Value<'static> {
    let list = ["0001_init.sql", "0002_orders.sql", "0003_unicode_名前.sql"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut o = Object::new();
            o.insert("id", Value::from(i as i64 + 1));
            o.insert("name", Value::from(*name));
            Value::Object(o)
        })
        .collect();
    Value::Array(list)
}

/// Writes one object or payload chunk part.
fn binary_part(b: &Binary, offset: u64, len: u64, buf: &mut Vec<u8>, part: &mut PartWriter) {
    buf.resize(len as usize, 0);
    binary::fill(b.seed, b.text, offset, buf);
    let object = b
        .object
        .as_ref()
        .map(|(bucket, key)| (bucket.as_str(), key.as_str()));
    let name = b.name.as_deref().unwrap_or("");
    ndarc_format::pack::chunk_part(part, object, name, offset, buf);
}

/// Generates an archive into `out` and returns what it wrote.
///
/// Two passes over the same pure functions of the seed: the first plans
/// the packing (to learn `partCount` and every table's `count`) and hashes
/// the objects and payloads (the manifest, which comes first, carries their
/// `sha256`); the second writes. Memory is bounded by one part and the
/// manifest, whatever the output size.
///
/// Errors: invalid options (`InvalidInput`) and errors of `out`.
pub fn generate(opts: &GenOptions, out: &mut impl Write) -> io::Result<Summary> {
    opts.check()?;
    let seed = opts.seed;
    let tables = planned_tables(opts);
    let binary_later = opts.later.filter(|l| l.binary).map(|l| l.seed);
    let object_params = ObjectParams {
        count: opts.objects,
        max_bytes: opts.object_bytes,
        large: opts.large_object,
        part_bytes: opts.part_bytes,
    };
    let (mut objects, object_delta) = binary::objects(seed, &object_params, binary_later);
    let (mut payloads, payload_delta) =
        binary::payloads(seed, opts.payloads, opts.payload_bytes, binary_later);

    // Pass 1: plan.
    let mut buf = Vec::new();
    let (mut part_count, summaries) = plan_rows(&tables, opts, &mut buf)?;
    for b in objects.iter_mut().chain(payloads.iter_mut()) {
        b.sha256 = binary::digest(b);
        part_count += chunk_count(b.size, b.chunk_cap(opts.part_bytes));
    }
    let m = manifest(opts, &tables, &summaries, (&objects, &payloads), part_count);

    // Pass 2: write.
    let mut content = ContentHasher::new(&content_header_digest(&m));
    let mut archive = ArchiveWriter::begin(
        &ndarc_json::to_canonical_vec(&Value::Object(m)),
        part_count,
        out,
    )?;
    let mut part = PartWriter::new(opts.part_bytes);
    write_rows(
        &tables,
        opts,
        &mut buf,
        &mut part,
        &mut archive,
        &mut content,
        out,
    )?;
    for b in objects.iter().chain(payloads.iter()) {
        let cap = b.chunk_cap(opts.part_bytes);
        let mut offset = 0;
        loop {
            let len = (b.size - offset).min(cap);
            binary_part(b, offset, len, &mut buf, &mut part);
            archive.finish_part(&mut part, out)?;
            offset += len;
            if offset >= b.size {
                break;
            }
        }
    }
    let content_hash = content.finish();
    let sealed = archive.close(&content_hash, out)?;

    Ok(Summary {
        bytes: sealed.bytes,
        lines: part_count + 2,
        part_count,
        content_hash,
        archive_hash: sealed.archive_hash,
        tables: summaries,
        objects: object_delta.into(),
        payloads: payload_delta.into(),
    })
}

/// The tables to generate, with the rows each has before a later export's
/// changes.
fn planned_tables(opts: &GenOptions) -> Vec<Planned> {
    let seed = opts.seed;
    let kinds = schema::choose(seed, opts.tables, opts.kinds.as_deref());
    schema::build(seed, &kinds)
        .into_iter()
        .map(|def| {
            let base_rows = if def.always_empty {
                0
            } else {
                match opts.rows {
                    Rows::Exactly(n) => n,
                    Rows::Between(lo, hi) => {
                        Rng::new(derive_all(seed, &[def.salt, 0xC0A7])).range(lo, hi)
                    }
                }
            };
            Planned { def, base_rows }
        })
        .collect()
}

/// The row maker of both passes (the same rows each time).
fn row_maker(opts: &GenOptions) -> RowMaker {
    RowMaker::new(
        opts.seed,
        opts.later.map(|l| LaterRows { seed: l.seed }),
        opts.part_bytes,
    )
}

/// Pass 1 over the rows: the number of row parts and what each table holds.
fn plan_rows(
    tables: &[Planned],
    opts: &GenOptions,
    buf: &mut Vec<u8>,
) -> io::Result<(u64, Vec<TableSummary>)> {
    let mut maker = row_maker(opts);
    let mut packer = RowPacker::new(opts.part_bytes);
    let mut part_count = 0u64;
    let mut summaries = Vec::with_capacity(tables.len());
    for t in tables {
        packer.end_table();
        let s = walk_shuffled(t, opts, &mut maker, buf, |item, _| {
            if packer.admit(item.len())? {
                part_count += 1;
            }
            Ok(())
        })?;
        summaries.push(s);
    }
    Ok((part_count, summaries))
}

/// The manifest, from the plan of pass 1.
fn manifest(
    opts: &GenOptions,
    tables: &[Planned],
    summaries: &[TableSummary],
    (objects, payloads): (&[Binary], &[Binary]),
    part_count: u64,
) -> Object<'static> {
    let seed = opts.seed;
    let mut rng = Rng::new(derive(seed, 0x3A41F));
    let first_ms = 1_577_836_800_000 + rng.below(189_216_000_000);
    let mut exported_ms = first_ms;
    let mut epoch = rng.below(1000);
    if let Some(l) = opts.later {
        exported_ms += 86_400_000 + Rng::new(l.seed).below(1_000_000_000);
        epoch += 1;
    }
    let mut m = Object::new();
    m.insert("kind", Value::from("manifest"));
    m.insert("format", Value::from(FORMAT));
    m.insert("version", Value::from(VERSION));
    m.insert("product", Value::from(opts.product.clone()));
    m.insert("exportedAt", Value::from(iso_time(exported_ms)));
    m.insert(
        "sourceIdentity",
        Value::from(format!("src-{:016x}", derive(seed, 0x1D))),
    );
    m.insert(
        "schema",
        Value::from(schema_identity(
            tables
                .iter()
                .map(|t| (t.def.name.as_str(), t.def.sql.as_str())),
        )),
    );
    m.insert(
        "tables",
        Value::Array(
            tables
                .iter()
                .zip(summaries)
                .map(|(t, s)| schema::table_value(&t.def, s.rows))
                .collect(),
        ),
    );
    m.insert(
        "objects",
        Value::Array(objects.iter().map(binary::manifest_value).collect()),
    );
    m.insert(
        "payloads",
        Value::Array(payloads.iter().map(binary::manifest_value).collect()),
    );
    exclusions(opts, tables, &mut m);
    m.insert(
        "requiredConfiguration",
        Value::Array(
            ["MAIL_FROM", "AUTH_SECRET", "R2_PUBLIC_URL"]
                .iter()
                .map(|s| Value::from(*s))
                .collect(),
        ),
    );
    m.insert("partCount", Value::from(part_count as i64));
    m.insert("epoch", Value::from(epoch as i64));
    m.insert("journal", journal(seed, opts.later, first_ms, exported_ms));
    if opts.migrations {
        m.insert("migrations", migrations());
    }
    m
}

/// The manifest's `excludedTables` and `excludedColumns`.
fn exclusions(opts: &GenOptions, tables: &[Planned], m: &mut Object<'static>) {
    let excluded: Vec<Value<'static>> = if opts.excluded_tables {
        ["_cf_KV", "d1_migrations", "sqlite_sequence"]
            .iter()
            .map(|s| Value::from(*s))
            .collect()
    } else {
        Vec::new()
    };
    m.insert("excludedTables", Value::Array(excluded));
    let mut excluded_columns = Object::new();
    for t in tables {
        if !t.def.excluded_names.is_empty() {
            excluded_columns.insert(
                t.def.name.clone(),
                Value::Array(
                    t.def
                        .excluded_names
                        .iter()
                        .map(|n| Value::from(n.clone()))
                        .collect(),
                ),
            );
        }
    }
    m.insert("excludedColumns", Value::Object(excluded_columns));
}

/// Pass 2 over the rows: writes the row parts (the last one too), each
/// row into the content hash.
fn write_rows<W: Write>(
    tables: &[Planned],
    opts: &GenOptions,
    buf: &mut Vec<u8>,
    part: &mut PartWriter,
    archive: &mut ArchiveWriter,
    content: &mut ContentHasher,
    out: &mut W,
) -> io::Result<()> {
    let mut packer = RowPacker::new(opts.part_bytes);
    let mut maker = row_maker(opts);
    for t in tables {
        packer.end_table();
        walk_shuffled(t, opts, &mut maker, buf, |item, made| {
            if packer.admit(item.len())? {
                archive.finish_part(part, out)?;
                part.begin();
            }
            part.push_item(item);
            content.add_row_digest(&row_content_digest(
                &item[made.row.clone()],
                made.rowid,
                &t.def.name_json,
            ));
            Ok(())
        })?;
    }
    archive.finish_part(part, out)?;
    Ok(())
}

/// [`generate`] into a vector.
pub fn generate_vec(opts: &GenOptions) -> io::Result<(Vec<u8>, Summary)> {
    let mut out = Vec::new();
    let s = generate(opts, &mut out)?;
    Ok((out, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_577_836_800_000), "2020-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(iso_time(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
