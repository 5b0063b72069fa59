//! Row-, cell-, schema- and object-level diff of two portability archives.
//!
//! [`diff`] reads both archives at once, each on its own thread through
//! bounded buffers, verifying every line as it is read (the push verifier
//! of `ndarc-verify`, plus the framing rules) unless
//! [`Options::no_verify`]. Rows are matched by row key — the canonical JSON
//! of the primary-key values in `pk` order (`[1,"a"]`), or the rowid (`7`),
//! exactly as the producer's `diffArchives` keys them:
//!
//! - when a table's rows are in key order on both sides (the normal case)
//!   the row diff is a streaming merge join holding a few parts, never a
//!   whole table;
//! - otherwise the rest of that table goes through an index per side of
//!   (key hash, row digest, line offset), and only the rows that changed,
//!   or are left over, are re-read by offset.
//!
//! Verified lines are canonical JSON, so cells are compared as bytes and
//! parsed only when they differ. The result, a [`Diff`], has the members of
//! `diffArchives`' result plus cell-level and schema detail; [`render`]
//! writes it for people (`human`, `markdown`, `stat`) and for tools
//! (`json`).
//!
//! ```
//! use ndarc_diff::{diff, Options, Source};
//! let a = ndarc_verify::doc_example_archive();
//! let d = diff(Source::Bytes(a), Source::Bytes(a), &Options::default())?;
//! assert!(d.equal && !d.has_differences());
//! # Ok::<(), ndarc_diff::Error>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod gate;
mod glob;
mod key;
mod manifest;
mod model;
pub mod render;
mod rows;
mod scan;
mod side;
mod sink;
mod source;

use ndarc_format::Finding;
use ndarc_json::cmp_utf16;

use glob::ColumnGlob;
pub use glob::Glob;
pub use model::{
    object_key, payload_key, ArchiveInfo, CellChange, ColumnChange, ColumnScope, Diff, EntryDiff,
    ExcludedColumnsChange, Ignored, NameChanges, RowChange, SchemaDiff, Side, SqlDiff, TableCount,
    TableDiff, TableInfo, TableSchemaChange,
};
pub use sink::{RowSink, Wanted};
pub use source::Source;

/// Options of a diff.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Tables to leave out, as globs (`audit_*`; `*` and `?`, ASCII case
    /// ignored): their rows, schema and exclusions.
    pub ignore_tables: Vec<String>,
    /// When not empty, the only tables compared, as globs: every other
    /// table is left out as [`Options::ignore_tables`] leaves it out.
    pub tables: Vec<String>,
    /// Bucket objects to leave out, as globs over `bucket/key`.
    pub ignore_objects: Vec<String>,
    /// Payloads to leave out, as globs over their names.
    pub ignore_payloads: Vec<String>,
    /// Row keys chosen per table, `(table, columns)` (as daff's `--ids`):
    /// rows of the table are matched by the canonical JSON of those
    /// cells (`["a",1]`) in place of the rowid or primary key. The rows
    /// go through the index (they need not be in that order); a key
    /// that is not unique on a side is an error.
    pub keys: Vec<(String, Vec<String>)>,
    /// Columns to leave out, as `TABLE.COLUMN` globs (`*.updated_at`):
    /// their cells and their schema changes.
    pub ignore_columns: Vec<String>,
    /// Changed rows without cell detail.
    pub keys_only: bool,
    /// Contents (`row` objects) kept per table of added rows and of removed
    /// rows, the first in archive order: `0` keeps none (the default),
    /// `usize::MAX` all. They are held in memory.
    pub row_contents: usize,
    /// Do not verify the inputs (faster; the result says so). Lines that
    /// are not canonical are still canonicalized before comparing.
    pub no_verify: bool,
    /// Diff archives of different products instead of refusing.
    pub allow_product_mismatch: bool,
    /// Verification limits and identifiers (`max_errors`, `max_line`,
    /// `max_manifest_line`, `formats`); `jobs` and `progress` are not used.
    pub verify: ndarc_verify::Options,
}

/// Why a diff could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input could not be read.
    #[error("{name}: {source}")]
    Io {
        /// Which input.
        side: Side,
        /// Its name.
        name: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An input is not a valid archive.
    #[error("{name}: not a valid archive ({errors} error{s}){first}", s = if *errors == 1 { "" } else { "s" }, first = findings.first().map_or(String::new(), |f| format!("; first at line {}, byte {}: {}: {}", f.line, f.offset, f.code, f.message)))]
    Invalid {
        /// Which input.
        side: Side,
        /// Its name.
        name: String,
        /// The first findings (errors and warnings), in file order.
        findings: Vec<Finding>,
        /// How many errors were found before reading stopped.
        errors: u64,
    },
    /// An input read without verification cannot be read as an archive.
    #[error("{name}:{line}: {message}")]
    Malformed {
        /// Which input.
        side: Side,
        /// Its name.
        name: String,
        /// The 1-based line (0 when unknown).
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The archives are of different products.
    #[error("the archives describe different products ({before:?} and {after:?}); pass --allow-product-mismatch to diff them anyway")]
    ProductMismatch {
        /// The first archive's product.
        before: String,
        /// The second archive's product.
        after: String,
    },
    /// A gate file (`--gate`) was refused: the member (a JSON pointer, `""`
    /// for the whole file) and what is wrong with it.
    #[error("{}{message}", if pointer.is_empty() { String::new() } else { format!("{pointer}: ") })]
    Gate {
        /// The member, as a JSON pointer (RFC 6901).
        pointer: String,
        /// What is wrong.
        message: String,
    },
    /// An ignore pattern is not usable.
    #[error(
        "--ignore-column {pattern:?}: expected TABLE.COLUMN (globs allowed, e.g. \"*.updated_at\")"
    )]
    Pattern {
        /// The pattern.
        pattern: String,
    },
    /// A chosen key names a column the table's rows do not carry, or
    /// names a table twice.
    #[error("{0}")]
    Key(String),
    /// A `--table` pattern matches no table of either archive (a typo would
    /// otherwise read as "no differences").
    #[error("--table {pattern:?} matches no table of either archive (they have: {tables})")]
    NoSuchTable {
        /// The pattern.
        pattern: String,
        /// The tables of both archives, some of them.
        tables: String,
    },
    /// A chosen key is not unique among a table's rows on one side.
    #[error("{name}: --key {table}: two rows of table {table} have the key {key}; choose columns that identify a row")]
    KeyNotUnique {
        /// Which input.
        side: Side,
        /// Its name.
        name: String,
        /// The table.
        table: String,
        /// The key text.
        key: String,
    },
    /// A worker thread could not start.
    #[error("could not start a reader thread: {0}")]
    Thread(std::io::Error),
    /// A [`RowSink`] could not take a row.
    #[error("{0}")]
    Sink(std::io::Error),
}

/// The compiled ignore patterns.
#[derive(Debug, Clone, Default)]
pub(crate) struct Matcher {
    tables: Vec<Glob>,
    only_tables: Vec<Glob>,
    columns: Vec<ColumnGlob>,
    objects: Vec<Glob>,
    payloads: Vec<Glob>,
}

impl Matcher {
    fn new(o: &Options) -> Result<Matcher, Error> {
        let globs = |l: &[String]| l.iter().map(|p| Glob::new(p)).collect();
        Ok(Matcher {
            tables: globs(&o.ignore_tables),
            only_tables: globs(&o.tables),
            objects: globs(&o.ignore_objects),
            payloads: globs(&o.ignore_payloads),
            columns: o
                .ignore_columns
                .iter()
                .map(|p| ColumnGlob::new(p).ok_or_else(|| Error::Pattern { pattern: p.clone() }))
                .collect::<Result<_, _>>()?,
        })
    }

    /// A table matched by an ignore pattern, or by none of the include
    /// patterns when there are some.
    pub(crate) fn table_ignored(&self, table: &str) -> bool {
        self.tables.iter().any(|g| g.matches(table))
            || (!self.only_tables.is_empty() && !self.only_tables.iter().any(|g| g.matches(table)))
    }

    /// An object (`bucket/key`) matched by an ignore pattern.
    pub(crate) fn object_ignored(&self, o: &ndarc_format::manifest::ObjectEntry) -> bool {
        !self.objects.is_empty() && {
            let name = format!("{}/{}", o.bucket, o.key);
            self.objects.iter().any(|g| g.matches(&name))
        }
    }

    /// A payload matched by an ignore pattern.
    pub(crate) fn payload_ignored(&self, p: &ndarc_format::manifest::PayloadEntry) -> bool {
        self.payloads.iter().any(|g| g.matches(&p.name))
    }

    pub(crate) fn column_ignored(&self, table: &str, column: &str) -> bool {
        self.columns.iter().any(|g| g.matches(table, column))
    }

    /// Whether an ignored column of the table was added, removed or
    /// changed.
    pub(crate) fn ignored_columns_differ(
        &self,
        a: &ndarc_format::manifest::Table,
        b: &ndarc_format::manifest::Table,
    ) -> bool {
        let find = |t: &ndarc_format::manifest::Table, n: &str| {
            t.columns.iter().find(|c| c.name == n).cloned()
        };
        a.columns
            .iter()
            .chain(&b.columns)
            .filter(|c| self.column_ignored(&a.name, &c.name))
            .any(|c| find(a, &c.name) != find(b, &c.name))
    }
}

/// Diffs `before` against `after`, naming them by their paths (or
/// `before`/`after`).
pub fn diff(before: Source<'_>, after: Source<'_>, opts: &Options) -> Result<Diff, Error> {
    let label = |s: &Source<'_>, default: &str| match s {
        Source::Path(p) => p.display().to_string(),
        _ => default.to_string(),
    };
    let (la, lb) = (label(&before, "before"), label(&after, "after"));
    diff_labeled((&la, before), (&lb, after), opts)
}

type Opened<'a> = (source::Input<'a>, Option<source::LineSource<'a>>);

fn open<'a>(side: Side, (name, src): (&str, Source<'a>)) -> Result<Opened<'a>, Error> {
    source::open(src).map_err(|e| Error::Io {
        side,
        name: name.to_string(),
        source: e,
    })
}

/// Bytes of parts a reader may hold ahead of the merge: enough for both
/// readers to stay busy while the merge waits on one side (a table only one
/// side has, parts of other sizes), small enough to bound memory. When the
/// merge is the slower (rows out of key order go through the hash join),
/// both readers fill their budget: 24 MiB each was most of what such a
/// diff held beyond a diff in key order; 8 MiB took no measurable time
/// from the 1 GB pairs (narrow rows, 16 MiB blob parts; benches/README.md).
const AHEAD_BYTES: usize = 8 << 20;

/// [`diff`] with the names errors and output use for the inputs.
pub fn diff_labeled(
    before: (&str, Source<'_>),
    after: (&str, Source<'_>),
    opts: &Options,
) -> Result<Diff, Error> {
    diff_labeled_with_sink(before, after, opts, None)
}

/// [`diff_labeled`], handing rows of the second archive to `sink` as they
/// are read (see [`RowSink`]): the second archive is read once. With a
/// sink, a line of the second archive read again by offset (rows out of
/// key order) must be the line first read (its digest is kept while its
/// table is diffed), or the diff is an error.
pub fn diff_labeled_with_sink(
    before: (&str, Source<'_>),
    after: (&str, Source<'_>),
    opts: &Options,
    sink: Option<&mut dyn RowSink>,
) -> Result<Diff, Error> {
    let mut taker = sink::Taker::new(sink);
    let matcher = Matcher::new(opts)?;
    let (na, nb) = (before.0.to_string(), after.0.to_string());
    let (ia, sa) = open(Side::Before, before)?;
    let (ib, sb) = open(Side::After, after)?;
    // Whose turn it is to read its manifest (see `side::run`).
    let turn = &std::sync::Mutex::new(());
    std::thread::scope(|s| {
        let (txa, rxa) = ndarc_verify::chan::channel(AHEAD_BYTES);
        let (txb, rxb) = ndarc_verify::chan::channel(AHEAD_BYTES);
        let (ia, ib, na2, nb2) = (&ia, &ib, &na, &nb);
        std::thread::Builder::new()
            .name("ndarc-diff-before".into())
            .spawn_scoped(s, move || {
                side::run(ia, sa, Side::Before, na2, opts, turn, txa)
            })
            .map_err(Error::Thread)?;
        std::thread::Builder::new()
            .name("ndarc-diff-after".into())
            .spawn_scoped(s, move || {
                side::run(ib, sb, Side::After, nb2, opts, turn, txb)
            })
            .map_err(Error::Thread)?;
        let max_line = opts.verify.max_line;
        let nv = opts.no_verify;
        let mut a = rows::Stream::new(rxa, Side::Before, &na, ia, nv, max_line);
        let mut b = rows::Stream::new(rxb, Side::After, &nb, ib, nv, max_line);
        if taker.is_some() {
            b.keep_line_digests();
        }
        // Dropping the streams on any return hangs up on the readers, which
        // then stop.
        merge(&mut a, &mut b, &na, &nb, &matcher, opts, &mut taker)
    })
}

fn merge(
    a: &mut rows::Stream<'_, '_>,
    b: &mut rows::Stream<'_, '_>,
    na: &str,
    nb: &str,
    matcher: &Matcher,
    opts: &Options,
    taker: &mut sink::Taker<'_>,
) -> Result<Diff, Error> {
    // Each side's manifest, as its reader holds it (one typed form per side).
    let ta = a.manifest()?;
    let tb = b.manifest()?;
    let (ma, mb) = (ta.manifest(), tb.manifest());
    if ma.product != mb.product && !opts.allow_product_mismatch {
        return Err(Error::ProductMismatch {
            before: ma.product.clone(),
            after: mb.product.clone(),
        });
    }
    let mut d = Diff {
        product: ma.product.clone(),
        verified: !opts.no_verify,
        keys_only: opts.keys_only,
        ignored: ignored(opts),
        ..Diff::default()
    };
    manifest::diff_manifests(ma, mb, matcher, &mut d);
    taker.start(mb, &d);

    if let Some(e) = ta.error.as_ref().or(tb.error.as_ref()) {
        return Err(Error::Key(e.clone()));
    }
    check_named_tables(ma, mb, opts)?;
    diff_tables(a, b, (&ta, &tb), matcher, opts, taker, &mut d)?;
    let ea = a.finish()?;
    let eb = b.finish()?;
    d.equal = !ea.content_hash.is_empty() && ea.content_hash == eb.content_hash;
    d.before = archive_info(ma, &ea, na);
    d.after = archive_info(mb, &eb, nb);
    d.order_only = !d.equal && !d.has_differences();
    Ok(d)
}

/// What the options leave out of the diff, as it reports them.
fn ignored(opts: &Options) -> Ignored {
    Ignored {
        table_patterns: opts.ignore_tables.clone(),
        only_table_patterns: opts.tables.clone(),
        column_patterns: opts.ignore_columns.clone(),
        object_patterns: opts.ignore_objects.clone(),
        payload_patterns: opts.ignore_payloads.clone(),
        keys: opts
            .keys
            .iter()
            .map(|(t, c)| format!("{t}={}", c.join(",")))
            .collect(),
        ..Ignored::default()
    }
}

/// The tables the options name (`tables` patterns, `keys`) are in either
/// archive, and each table's key is given once.
fn check_named_tables(
    ma: &ndarc_format::Manifest,
    mb: &ndarc_format::Manifest,
    opts: &Options,
) -> Result<(), Error> {
    if let Some(p) = opts.tables.iter().find(|p| {
        let g = Glob::new(p);
        !ma.tables
            .iter()
            .chain(&mb.tables)
            .any(|t| g.matches(&t.name))
    }) {
        let mut names: Vec<&str> = ma
            .tables
            .iter()
            .chain(&mb.tables)
            .map(|t| t.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let shown = names.len().min(10);
        let mut tables = names[..shown].join(", ");
        if names.len() > shown {
            tables.push_str(&format!(", … {} more", names.len() - shown));
        }
        if names.is_empty() {
            tables = "no tables".into();
        }
        return Err(Error::NoSuchTable {
            pattern: p.clone(),
            tables,
        });
    }
    if let Some(((t, _), _)) = opts.keys.iter().enumerate().find_map(|(i, k)| {
        opts.keys[..i]
            .iter()
            .find(|(t, _)| t.eq_ignore_ascii_case(&k.0))
            .map(|first| (k, first))
    }) {
        return Err(Error::Key(format!(
            "--key {t}: a second --key for table {t:?}; give its columns once (TABLE=COL,COL)"
        )));
    }
    if let Some((t, _)) = opts.keys.iter().find(|(t, _)| {
        !ma.tables
            .iter()
            .chain(&mb.tables)
            .any(|x| x.name.eq_ignore_ascii_case(t))
    }) {
        return Err(Error::Key(format!(
            "--key {t}: neither archive has a table {t:?}"
        )));
    }
    Ok(())
}

/// Diffs the rows of the tables of both sides, in name order, paired by
/// name, into `d`.
fn diff_tables(
    a: &mut rows::Stream<'_, '_>,
    b: &mut rows::Stream<'_, '_>,
    (ta, tb): (&side::SideTables, &side::SideTables),
    matcher: &Matcher,
    opts: &Options,
    taker: &mut sink::Taker<'_>,
    d: &mut Diff,
) -> Result<(), Error> {
    let (ma, mb) = (ta.manifest(), tb.manifest());
    let (mut i, mut j) = (0, 0);
    while i < ma.tables.len() || j < mb.tables.len() {
        let (x, y) = match (ma.tables.get(i), mb.tables.get(j)) {
            (Some(p), Some(q)) => match cmp_utf16(&p.name, &q.name) {
                std::cmp::Ordering::Equal => (Some(i), Some(j)),
                std::cmp::Ordering::Less => (Some(i), None),
                std::cmp::Ordering::Greater => (None, Some(j)),
            },
            (Some(_), None) => (Some(i), None),
            _ => (None, Some(j)),
        };
        i += usize::from(x.is_some());
        j += usize::from(y.is_some());
        let name = x.map_or_else(|| &mb.tables[j - 1].name, |x| &ma.tables[x].name);
        let renames: Vec<(String, String)> = match (x, y) {
            (Some(x), Some(y)) => manifest::renamed_columns(&ma.tables[x], &mb.tables[y], matcher)
                .into_iter()
                .map(|(p, q)| (p.name.clone(), q.name.clone()))
                .collect(),
            _ => Vec::new(),
        };
        let pair = (!matcher.table_ignored(name)).then(|| {
            rows::Pair::new(
                name,
                x.and_then(|x| Some((x, ta.get(x)?))),
                y.and_then(|y| Some((y, tb.get(y)?))),
                &renames,
                matcher,
                opts.keys_only,
                opts.no_verify,
            )
        });
        if pair.is_some() {
            d.counts.push(TableCount {
                name: name.clone(),
                before: x.map(|x| ma.tables[x].count),
                after: y.map(|y| mb.tables[y].count),
            });
        }
        // Rows of ignored tables are skipped, not taken.
        taker.table(name, y.filter(|_| pair.is_some()));
        let t = rows::diff_table(name, pair.as_ref(), x, y, a, b, opts.row_contents, taker)?;
        if !t.is_empty() {
            d.tables.push(t);
        }
    }
    Ok(())
}

/// What the diff tells of one archive: its manifest's facts and how it
/// ended.
fn archive_info(m: &ndarc_format::Manifest, e: &side::SideEnd, name: &str) -> ArchiveInfo {
    ArchiveInfo {
        name: name.to_string(),
        product: m.product.clone(),
        exported_at: m.exported_at.clone(),
        source_identity: m.source_identity.clone(),
        schema: m.schema.clone(),
        content_hash: e.content_hash.clone(),
        archive_hash: e.archive_hash.clone(),
        part_count: m.part_count,
        rows: m.tables.iter().map(|t| t.count).sum(),
        warnings: e.warnings,
    }
}
