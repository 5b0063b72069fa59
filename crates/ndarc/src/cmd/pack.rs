//! `ndarc pack`: a SQLite database to an archive, as the reference producer
//! writes it (ndarc-sqlite).

use std::path::PathBuf;

use ndarc_json::{Object, Value};
use ndarc_sqlite::pack::{pack, PackOptions, PackSummary};
use ndarc_sqlite::Error;

use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{DatabaseTables, PartBytes, Quiet};
use crate::io::{input_refused, is_stdio, is_under, refuse_input, Output, OutputArgs};
use crate::term;
use crate::Context;

const EXAMPLES: &str = "\
Examples:
  Pack a database, with a fixed export time for a reproducible archive:
    ndarc pack shop.db -o shop.ndjson --product shop --exported-at 2026-01-02T03:04:05.678Z

  Leave a secret column out, archive a table the defaults exclude, add a bucket and a payload:
    ndarc pack app.db -o app.ndjson --secret-column users.password_hash \\
      --include-table oa_settings --objects-dir ./uploads --bucket FILES --payload kv=kv.json

On success, one line on standard error says what was written (tables, rows, objects, payloads, \
parts, bytes): --quiet leaves it out, --summary gives it as JSON.

Exit status: 0 written; 1 the database cannot be archived (the producer refuses it:
DB: CODE: message, naming the table, column and rowid; no file is written); 2 could not run
(not a SQLite file, corrupt, locked by a writer, usage, I/O).";

/// Arguments of `ndarc pack`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Pack a SQLite database into an archive, as the reference producer does",
    long_about = "Pack a SQLite database into an archive, as the reference producer \
(catalogue.mjs, copies.mjs, export.mjs) does: tables minus the default exclusions (sqlite_%, \
_cf_%, d1_migrations, oa_%, oc_%, rer_portability_% …), columns from PRAGMA table_xinfo, \
foreign keys as dependencies, rows in primary-key or rowid order, blobs as {\"blob\": base64}.

The database is opened read-only and read in one transaction (one consistent snapshot), \
twice: the first pass checks every refusal (virtual tables, unsafe integers, text in a \
DATETIME column …), the second writes. Memory does not grow with the database. SPEC.md, \
\"Databases and archives\", says exactly how a database maps to an archive.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The SQLite database (recognised by its header, not its name).
    #[arg(value_name = "DB")]
    pub db: PathBuf,
    /// `product` (default: the database file's name without extension).
    #[arg(long, value_name = "NAME")]
    pub product: Option<String>,
    /// `exportedAt`, as YYYY-MM-DDTHH:MM:SS.sssZ (default: now).
    #[arg(long, value_name = "TIME")]
    pub exported_at: Option<String>,
    /// `epoch`.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub epoch: u64,
    /// `sourceIdentity`.
    #[arg(long, value_name = "NAME", default_value = "local")]
    pub source_identity: String,
    /// A name for `requiredConfiguration` (repeatable).
    #[arg(long, value_name = "NAME")]
    pub required_configuration: Vec<String>,
    /// `--exclude-table`, `--include-table` and `--secret-column`.
    #[command(flatten)]
    pub tables: DatabaseTables,
    /// Exclude TABLE and its virtual-table shadow tables TABLE_… (the
    /// producer's derivedTables; repeatable).
    #[arg(long, value_name = "TABLE")]
    pub derived_table: Vec<String>,
    /// Every regular file under DIR becomes an object of --bucket, its key
    /// the path relative to DIR with '/'. A symbolic link there is refused,
    /// never followed; the archive being written (-o inside DIR) is not an
    /// object.
    #[arg(long, value_name = "DIR", requires = "bucket")]
    pub objects_dir: Option<PathBuf>,
    /// The bucket of the --objects-dir objects.
    #[arg(long, value_name = "NAME", requires = "objects_dir")]
    pub bucket: Option<String>,
    /// A bucket NAME=DIR: every regular file under DIR becomes an object
    /// of bucket NAME, as with --objects-dir (repeatable: one per bucket).
    #[arg(long, value_name = "NAME=DIR")]
    pub bucket_dir: Vec<String>,
    /// NAME=PREFIX: only keys of bucket NAME starting with PREFIX are
    /// objects (the producer's bucket prefix; repeatable).
    #[arg(long, value_name = "NAME=PREFIX")]
    pub bucket_prefix: Vec<String>,
    /// NAME=FILE: the httpMetadata and customMetadata of bucket NAME's
    /// objects, from a JSON file mapping object key to {"httpMetadata":
    /// {...}, "customMetadata": {...}} (values strings); objects it does
    /// not name get {}. A key that is not an object of the bucket exits 2.
    /// unpack --objects-dir writes DIR/metadata/NAME.json in this shape
    /// (repeatable, once per bucket).
    #[arg(long, value_name = "NAME=FILE")]
    pub bucket_metadata: Vec<String>,
    /// BUCKET=TABLE.COLUMN: the objects of BUCKET are exactly the distinct
    /// non-null values of TABLE.COLUMN (the producer's objectReferences);
    /// a row referencing a key with no object, or an object no row
    /// references, is refused (object_references). Repeatable, once per
    /// bucket; the column is split at the first '.'.
    #[arg(long, value_name = "BUCKET=TABLE.COLUMN")]
    pub object_references: Vec<String>,
    /// A payload NAME=FILE (repeatable).
    #[arg(long, value_name = "NAME=FILE")]
    pub payload: Vec<String>,
    /// `--part-bytes`: the producer's partBytes.
    #[command(flatten)]
    pub part_bytes: PartBytes,
    /// Print a JSON summary (bytes, partCount, hashes, tables) on standard
    /// error, in place of the one-line summary.
    #[arg(long)]
    pub summary: bool,
    /// `--quiet`: no summary line.
    #[command(flatten)]
    pub quiet: Quiet,
    /// `-o FILE` and `--force`.
    #[command(flatten)]
    pub output: OutputArgs,
}

impl Args {
    /// The library options these arguments give.
    pub fn options(&self) -> Result<PackOptions, Failure> {
        let secret_columns = self.tables.secret_columns()?;
        let payloads = name_files("--payload", &self.payload)?;
        let mut buckets = Vec::new();
        for b in &self.bucket_dir {
            match b.split_once('=') {
                Some((name, dir)) if !name.is_empty() && !dir.is_empty() => {
                    buckets.push(ndarc_sqlite::BucketDir {
                        bucket: name.to_string(),
                        dir: PathBuf::from(dir),
                        prefix: None,
                    })
                }
                _ => {
                    return Err(Failure::new(format!(
                        "--bucket-dir {b:?}: expected NAME=DIR"
                    )))
                }
            }
        }
        for p in &self.bucket_prefix {
            let Some((name, prefix)) = p.split_once('=') else {
                return Err(Failure::new(format!(
                    "--bucket-prefix {p:?}: expected NAME=PREFIX"
                )));
            };
            match buckets.iter_mut().find(|b| b.bucket == name) {
                Some(b) if b.prefix.is_none() => b.prefix = Some(prefix.to_string()),
                Some(_) => {
                    return Err(Failure::new(format!(
                        "--bucket-prefix: bucket {name:?} has two prefixes"
                    )))
                }
                None => {
                    return Err(Failure::new(format!(
                        "--bucket-prefix {p:?}: no --bucket-dir {name}=DIR"
                    )))
                }
            }
        }
        let bucket_metadata = name_files("--bucket-metadata", &self.bucket_metadata)?;
        let object_references = self
            .object_references
            .iter()
            .map(|s| {
                let parsed = s.split_once('=').and_then(|(b, tc)| {
                    let (t, c) = tc.split_once('.')?;
                    (!b.is_empty() && !t.is_empty() && !c.is_empty()).then(|| {
                        ndarc_sqlite::ObjectReferences {
                            bucket: b.to_string(),
                            table: t.to_string(),
                            column: c.to_string(),
                        }
                    })
                });
                parsed.ok_or_else(|| {
                    Failure::new(format!(
                        "--object-references {s:?}: expected BUCKET=TABLE.COLUMN"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PackOptions {
            product: self.product.clone(),
            exported_at: self.exported_at.clone(),
            epoch: self.epoch,
            source_identity: self.source_identity.clone(),
            required_configuration: self.required_configuration.clone(),
            exclude_tables: self.tables.exclude_table.clone(),
            include_tables: self.tables.include_table.clone(),
            derived_tables: self.derived_table.clone(),
            secret_columns,
            objects_dir: self.objects_dir.clone(),
            bucket: self.bucket.clone(),
            buckets,
            bucket_metadata,
            payloads,
            object_references,
            part_bytes: self.part_bytes.part_bytes,
            ..PackOptions::default()
        })
    }
}

/// The `NAME=FILE` values of `flag`, neither part empty.
fn name_files(flag: &str, values: &[String]) -> Result<Vec<(String, PathBuf)>, Failure> {
    values
        .iter()
        .map(|s| match s.split_once('=') {
            Some((n, f)) if !n.is_empty() && !f.is_empty() => Ok((n.to_string(), PathBuf::from(f))),
            _ => Err(Failure::new(format!("{flag} {s:?}: expected NAME=FILE"))),
        })
        .collect()
}

/// The `--summary` line.
pub(crate) fn summary_json(s: &PackSummary) -> Vec<u8> {
    let n = |x: u64| Value::from(x as i64);
    let mut o = Object::new();
    o.insert("bytes", n(s.bytes));
    o.insert("partCount", n(s.part_count));
    o.insert("contentHash", Value::from(s.content_hash.clone()));
    o.insert("archiveHash", Value::from(s.archive_hash.clone()));
    o.insert("schema", Value::from(s.schema.clone()));
    let tables = s
        .tables
        .iter()
        .map(|(name, count)| {
            let mut t = Object::new();
            t.insert("name", Value::from(name.clone()));
            t.insert("count", n(*count));
            Value::Object(t)
        })
        .collect();
    o.insert("tables", Value::Array(tables));
    o.insert(
        "excludedTables",
        Value::Array(
            s.excluded_tables
                .iter()
                .map(|t| Value::from(t.clone()))
                .collect(),
        ),
    );
    o.insert("objects", n(s.objects as u64));
    o.insert("payloads", n(s.payloads as u64));
    let mut line = ndarc_json::to_canonical_vec(&Value::Object(o));
    line.push(b'\n');
    line
}

/// The one-line summary: `packed DB into FILE: 3 tables (1204 rows),
/// 2 objects, 1 payload; 42 parts, 1234567 bytes`.
pub(crate) fn summary_line(db: &str, dest: &str, s: &PackSummary) -> String {
    use crate::cmd::verify::plural;
    let rows: u64 = s.tables.iter().map(|(_, n)| *n).sum();
    format!(
        "packed {db} into {dest}: {} ({}), {}, {}; {}, {}",
        plural(s.tables.len() as u64, "table"),
        plural(rows, "row"),
        plural(s.objects as u64, "object"),
        plural(s.payloads as u64, "payload"),
        plural(s.part_count, "part"),
        plural(s.bytes, "byte"),
    )
}

/// Refuses an output that is one of the inputs, even with `--force`: the
/// database, a `--payload` or `--bucket-metadata` file, or an existing file under
/// `--objects-dir` (all of which are read).
fn refuse_inputs(args: &Args, opts: &PackOptions) -> Result<(), Failure> {
    let Some(dest) = args.output.output.as_deref().filter(|p| !is_stdio(p)) else {
        return Ok(());
    };
    let mut inputs = vec![args.db.as_path()];
    inputs.extend(opts.payloads.iter().map(|(_, p)| p.as_path()));
    inputs.extend(opts.bucket_metadata.iter().map(|(_, p)| p.as_path()));
    refuse_input(dest, &inputs)?;
    for dir in opts
        .objects_dir
        .iter()
        .chain(opts.buckets.iter().map(|b| &b.dir))
    {
        if std::fs::symlink_metadata(dest).is_ok() && is_under(dest, dir) {
            return Err(input_refused(dest));
        }
    }
    Ok(())
}

/// The (device, inode) of the file the archive is being written to: the
/// temporary file of `-o`, or standard output when it is a regular file
/// (`> FILE`), so that a walk of `--objects-dir` skips it.
fn output_identity(out: &Output) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = match out {
            Output::File(f) => std::fs::metadata(f.temp_path()?).ok()?,
            Output::Stdout(_) => {
                use std::os::fd::AsFd;
                let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
                std::fs::File::from(fd).metadata().ok()?
            }
        };
        meta.is_file().then(|| (meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = out;
        None
    }
}

/// Runs `ndarc pack`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    let opts = args.options()?;
    if args.db.is_dir() {
        return Err(Failure::new(format!(
            "cannot open {}: is a directory",
            args.db.display()
        )));
    }
    refuse_inputs(&args, &opts)?;
    let mut out = args.output.open(crate::io::ARCHIVE_MODE)?;
    let mut opts = opts;
    if opts.objects_dir.is_some() || !opts.buckets.is_empty() {
        opts.skip_files = output_identity(&out).into_iter().collect();
    }
    let db = args.db.display().to_string();
    match pack(&args.db, &opts, &mut out) {
        Ok(summary) => {
            let dest = out.name();
            out.finish()?;
            use std::io::Write as _;
            if args.summary {
                let _ = std::io::stderr().write_all(&summary_json(&summary));
            } else if !args.quiet.quiet {
                let line = summary_line(&db, &dest, &summary);
                let _ = writeln!(std::io::stderr(), "{}", term::one_line(&line));
            }
            Ok(Status::Success)
        }
        Err(Error::Output(e)) => Err(Failure::io(format!("cannot write {}", out.name()), &e)),
        Err(e) if e.is_refusal() => {
            // The temporary output is removed when `out` is dropped.
            term::file_diagnostic(ctx.colour, &db, e.code(), &e.message());
            Ok(Status::Findings)
        }
        Err(e) => Err(Failure::new(format!(
            "{db}: {}: {}",
            e.code(),
            term::one_line(&e.message())
        ))),
    }
}
