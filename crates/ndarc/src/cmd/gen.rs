//! `ndarc gen`: generate a deterministic test archive (ndarc-gen).

use std::str::FromStr;

use ndarc_gen::{generate, BinaryDelta, GenOptions, Later, Rows, Summary};
use ndarc_json::{Object, Value};

use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{parse_size, PartBytes};
use crate::io::{OutputArgs, ARCHIVE_MODE};
use crate::Context;

const EXAMPLES: &str = "\
Examples:
  A small archive with every feature of the format, to standard output:
    ndarc gen --rows 5 --part-bytes 4KiB

  About 1 GB of rows for a benchmark (parts of 16 MiB as the producer writes):
    ndarc gen --tables 10 --rows 400000 -o big.ndjson

  About 1 GB of narrow rows, as an application export has them, in 1 MiB parts:
    ndarc gen --shape narrow --rows 640000 --part-bytes 1M -o narrow.ndjson

  The next export of the same data (5% changed, 2% added, 1% removed):
    ndarc gen --seed 7 -o before.ndjson
    ndarc gen --seed 7 --later 1 --changed 0.05 --added 0.02 --removed 0.01 -o after.ndjson

  Print what was written (hashes, counts, the exact diff) as JSON on standard error:
    ndarc gen --seed 3 --later 9 --summary -o after.ndjson

The same seed and options give the same bytes, on every platform and version.

Exit status: 0 written, 2 could not run (usage, I/O, an existing output without --force).";

/// Rows per table: `N` or `LO..HI`.
#[derive(Debug, Clone, Copy)]
pub struct RowsArg(pub Rows);

impl FromStr for RowsArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let num = |t: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("expected N or LO..HI (rows per table), got {s:?}"))
        };
        match s.split_once("..") {
            Some((lo, hi)) => {
                let (lo, hi) = (num(lo)?, num(hi.trim_start_matches('='))?);
                if lo > hi {
                    return Err(format!("{lo} is above {hi}"));
                }
                Ok(RowsArg(Rows::Between(lo, hi)))
            }
            None => Ok(RowsArg(Rows::Exactly(num(s)?))),
        }
    }
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("expected a fraction from 0 to 1, got {s:?}")),
    }
}

/// The table shape of `--shape`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// Every feature of the format (the default).
    Features,
    /// Narrow rows of a typical application export.
    Narrow,
}

/// Arguments of `ndarc gen`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Generate a deterministic test archive (same seed and options, same bytes)",
    long_about = "Generate a valid portability archive from a seed, streaming, with memory that \
does not grow with the output.

The default run exercises every feature of the format: all ten table templates (every \
affinity, composite and single primary keys, rowid tables with `rowid`, `_rowid_` and `oid` \
aliases, generated and excluded columns, dependencies, an empty table, unicode and escapes, \
long text), an empty object, an object spanning three parts, payloads `kv cache` and `kv`, \
migrations and a journal. With --later it writes the next export of the same data instead: \
some rows changed, added and removed (and with objects, one object changed, added and \
removed), for diff tests.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Number of tables: the ten templates first (fewer gives a seed-chosen
    /// subset), then tables with a random schema.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub tables: usize,
    /// The tables' shape: `features` (the ten templates that exercise every
    /// feature of the format, then random tables; see --tables) or
    /// `narrow` (eight tables of 4 to 7 columns with short, mostly
    /// non-ASCII text, small and negative integers, reals and NULLs, as
    /// an application export has them; --tables is ignored).
    #[arg(long, value_enum, default_value_t = Shape::Features)]
    pub shape: Shape,
    /// Rows per table: N, or LO..HI for a seed-chosen number per table.
    #[arg(long, default_value = "10..100", value_name = "N|LO..HI")]
    pub rows: RowsArg,
    /// Number of bucket objects (the first is empty).
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub objects: u64,
    /// Largest size of an ordinary object (K, M, G suffixes).
    #[arg(long, default_value = "4KiB", value_name = "SIZE", value_parser = parse_size)]
    pub object_bytes: usize,
    /// Do not make the second object span three parts.
    #[arg(long)]
    pub no_large_object: bool,
    /// Number of payloads (`kv`, `kv cache`, `sessions`, …).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub payloads: u64,
    /// Largest size of a payload.
    #[arg(long, default_value = "2KiB", value_name = "SIZE", value_parser = parse_size)]
    pub payload_bytes: usize,
    /// `--part-bytes`: the producer's part size.
    #[command(flatten)]
    pub part_bytes: PartBytes,
    /// The `product` name.
    #[arg(long, default_value = "ndarc-testkit")]
    pub product: String,
    /// Leave out the optional `migrations` member.
    #[arg(long)]
    pub no_migrations: bool,
    /// Leave `excludedTables` empty.
    #[arg(long)]
    pub no_excluded_tables: bool,
    /// Write the later export of the same archive, its changes drawn from SEED.
    #[arg(long, value_name = "SEED")]
    pub later: Option<u64>,
    /// With --later: fraction of rows changed.
    #[arg(long, default_value = "0.05", value_name = "F", value_parser = fraction)]
    pub changed: f64,
    /// With --later: rows added, as a fraction of the first export's.
    #[arg(long, default_value = "0.02", value_name = "F", value_parser = fraction)]
    pub added: f64,
    /// With --later: fraction of rows removed.
    #[arg(long, default_value = "0.01", value_name = "F", value_parser = fraction)]
    pub removed: f64,
    /// With --later: leave objects and payloads as they were.
    #[arg(long)]
    pub rows_only: bool,
    /// Write the rows of each table without rowid in an order shuffled by
    /// SEED instead of key order (still a valid archive, with key-order
    /// warnings; rowid tables stay in rowid order), for diff benchmarks of
    /// rows out of order.
    #[arg(long, value_name = "SEED")]
    pub shuffle_rows: Option<u64>,
    /// Print a JSON summary (bytes, partCount, hashes, rows per table and,
    /// with --later, the exact changes) on standard error.
    #[arg(long)]
    pub summary: bool,
    /// `-o FILE` and `--force`.
    #[command(flatten)]
    pub output: OutputArgs,
}

impl Args {
    fn options(&self) -> GenOptions {
        GenOptions {
            seed: self.seed,
            tables: self.tables,
            kinds: match self.shape {
                Shape::Features => None,
                Shape::Narrow => Some(ndarc_gen::NARROW.to_vec()),
            },
            rows: self.rows.0,
            objects: self.objects,
            object_bytes: self.object_bytes as u64,
            large_object: !self.no_large_object,
            payloads: self.payloads,
            payload_bytes: self.payload_bytes as u64,
            part_bytes: self.part_bytes.part_bytes,
            excluded_tables: !self.no_excluded_tables,
            migrations: !self.no_migrations,
            product: self.product.clone(),
            later: self.later.map(|seed| Later {
                seed,
                changed: self.changed,
                added: self.added,
                removed: self.removed,
                binary: !self.rows_only,
            }),
            shuffle_rows: self.shuffle_rows,
        }
    }
}

fn delta(d: &BinaryDelta) -> Value<'static> {
    let list = |v: &[String]| Value::Array(v.iter().map(|s| Value::from(s.clone())).collect());
    let mut o = Object::new();
    o.insert("added", list(&d.added));
    o.insert("removed", list(&d.removed));
    o.insert("changed", list(&d.changed));
    Value::Object(o)
}

/// The summary as one JSON line.
pub(crate) fn summary_json(s: &Summary) -> Vec<u8> {
    let n = |x: u64| Value::from(x as i64);
    let mut o = Object::new();
    o.insert("bytes", n(s.bytes));
    o.insert("lines", n(s.lines));
    o.insert("partCount", n(s.part_count));
    o.insert("contentHash", Value::from(s.content_hash.clone()));
    o.insert("archiveHash", Value::from(s.archive_hash.clone()));
    let tables = s
        .tables
        .iter()
        .map(|t| {
            let mut to = Object::new();
            to.insert("name", Value::from(t.name.clone()));
            to.insert("rows", n(t.rows));
            to.insert("changed", n(t.changed));
            to.insert("added", n(t.added));
            to.insert("removed", n(t.removed));
            Value::Object(to)
        })
        .collect();
    o.insert("tables", Value::Array(tables));
    o.insert("objects", delta(&s.objects));
    o.insert("payloads", delta(&s.payloads));
    let mut line = ndarc_json::to_canonical_vec(&Value::Object(o));
    line.push(b'\n');
    line
}

/// Writes a `--summary` line to standard error; a failure is exit 2.
pub(crate) fn write_summary(line: &[u8]) -> Result<(), Failure> {
    use std::io::Write as _;
    std::io::stderr()
        .write_all(line)
        .map_err(|e| Failure::io("cannot write the summary to <stderr>", &e))
}

/// Runs `ndarc gen`.
pub fn run(args: Args, _ctx: &Context) -> CmdResult {
    let opts = args.options();
    let mut out = args.output.open(ARCHIVE_MODE)?;
    let name = out.name();
    let summary = generate(&opts, &mut out).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidInput {
            Failure::new(e.to_string())
        } else {
            Failure::io(format_args!("cannot write {name}"), &e)
        }
    })?;
    out.finish()?;
    if args.summary {
        write_summary(&summary_json(&summary))?;
    }
    Ok(Status::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_argument() {
        assert!(matches!(
            "12".parse::<RowsArg>(),
            Ok(RowsArg(Rows::Exactly(12)))
        ));
        assert!(matches!(
            "3..9".parse::<RowsArg>(),
            Ok(RowsArg(Rows::Between(3, 9)))
        ));
        assert!(matches!(
            "3..=9".parse::<RowsArg>(),
            Ok(RowsArg(Rows::Between(3, 9)))
        ));
        assert!("9..3".parse::<RowsArg>().is_err());
        assert!("x".parse::<RowsArg>().is_err());
        assert!(fraction("1.5").is_err());
        assert!(fraction("NaN").is_err());
        assert_eq!(fraction("0.25"), Ok(0.25));
    }
}
