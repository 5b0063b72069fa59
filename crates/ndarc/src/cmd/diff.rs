//! `ndarc diff`: row-, cell-, schema- and object-level differences between
//! two archives, for people and for CI.

use std::path::{Path, PathBuf};

use ndarc_diff::render::{self, RenderOptions};
use ndarc_diff::{Error, Source};

use crate::dbinput::{self, Header, PackStream, PackedReader};
use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{
    verify_options, AcceptFormat, DatabaseTables, Limits, MaxErrors, PackTables, Quiet,
};
use crate::io::{is_stdio, refuse_input, AtomicFile, FileMode, OutputArgs};
use crate::term::{self, diagnostic, Location};
use crate::Context;

/// Output formats of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// For people: per table a summary line, then the changes.
    #[default]
    Human,
    /// One JSON document (a superset of the producer's `diffArchives`
    /// result).
    Json,
    /// A summary table and `<details>` sections, for CI job summaries and
    /// pull-request comments.
    Markdown,
    /// GitHub Actions annotations: `::error` for each broken --gate rule,
    /// `::warning` for each table with row changes, schema change,
    /// objects, payloads and configuration, and a closing `::notice` with
    /// the summary (`%`, CR and LF escaped as GitHub requires).
    Github,
    /// An SQL patch, as sqldiff writes one: applied to a database holding
    /// BEFORE (`ndarc unpack`), it gives AFTER's content. Both inputs are
    /// always verified (not with --no-verify), the patch is written only
    /// once AFTER proved valid, holds only ndarc's own statements (no line
    /// the sqlite3 shell could take for a dot-command) and gives REAL
    /// values bit for bit.
    Sql,
}

const EXAMPLES: &str = "\
Examples:
  What changed between two exports:
    ndarc diff monday.ndjson tuesday.ndjson

  In CI: fail the job on differences, keep a summary for the run page:
    ndarc diff --format markdown expected.ndjson actual.ndjson >> \"$GITHUB_STEP_SUMMARY\"

  One run, several outputs: people's text on stdout, a summary and JSON in files:
    ndarc diff a.ndjson b.ndjson --also markdown=summary.md --also json=diff.json

  Fail only on what matters (rows removed, tables or columns dropped, ...):
    ndarc diff --gate gate.json expected.ndjson actual.ndjson

  Ignore noise: audit tables and every updated_at column:
    ndarc diff --ignore-table 'audit_*' --ignore-column '*.updated_at' a.ndjson b.ndjson

  Only some tables; leave out thumbnails and a cache payload:
    ndarc diff --table 'users' --table 'orders*' a.ndjson b.ndjson
    ndarc diff --ignore-object 'thumbs/*' --ignore-payload 'kv cache' a.ndjson b.ndjson

  Match the rows of a rowid table by some columns (as daff --ids):
    ndarc diff --key tags=label a.ndjson b.ndjson

  Added and removed rows with their contents:
    ndarc diff --full-rows a.ndjson b.ndjson

  Counts per table and column, in any format; keys without cell detail;
  machine-readable:
    ndarc diff --stat a.ndjson b.ndjson
    ndarc diff --stat --format json a.ndjson b.ndjson
    ndarc diff --keys-only --format json a.ndjson b.ndjson > diff.json

  One side from standard input:
    curl -s https://example.invalid/export | ndarc diff saved.ndjson -

Rows are matched by row key: the primary-key values in pk order as canonical
JSON (`[1,\"a\"]`), or the rowid (`7`), or the --key columns. As in the
producer's diffArchives, a column added, removed or renamed changes every row
in both archives; the output says why (`3 changed (column weight removed)`)
and lists only the rows whose other cells changed too. Both inputs are verified while read
(every rule of `ndarc verify`); an invalid input is an error (exit 2) unless
--no-verify. Archives of different products are refused unless
--allow-product-mismatch.

Exit status (as diff(1)): 0 no differences (outside what is ignored or
filtered out by --table, --ignore-*), 1 differences, 2 could not run
(usage, I/O, an invalid input, different products, a --key that is not
unique or names a table twice, a --table pattern that matches no table).
With --gate FILE: 0 when every rule of the gate holds (differences or not),
1 when one is broken, 2 when FILE is not a valid gate.";

/// Arguments of `ndarc diff`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Show row-, cell-, schema- and object-level differences between two archives",
    long_about = "Show the differences between two archives: rows added, removed and changed \
(with the changed cells), schema changes (tables, columns, dependencies, SQL), bucket objects \
and payloads, exclusions and required configuration. Both archives are read at once, each \
verified as it is read, with memory bounded by a few parts whatever their size.",
    after_help = EXAMPLES
)]
// --force also replaces the --also files: it needs -o or --also.
#[command(group(clap::ArgGroup::new("files").args(["output", "also"]).multiple(true)))]
#[command(mut_arg("force", |a| a.requires(clap::builder::Resettable::<clap::Id>::Reset).requires("files")))]
pub struct Args {
    /// The first (earlier) archive, or a SQLite database (packed on the
    /// fly); `-` reads standard input.
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,

    /// The second (later) archive, or a SQLite database; `-` reads
    /// standard input.
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,

    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,

    /// Also write the diff in FORMAT to FILE, from the same run (both
    /// archives read and verified once): e.g. `--also markdown=summary.md
    /// --also json=diff.json`. FILE is written atomically, and an existing
    /// FILE is refused unless --force. --stat and the other options apply
    /// to every output; at most one output is sql. Repeatable.
    #[arg(long, value_name = "FORMAT=FILE", value_parser = parse_also)]
    pub also: Vec<(Format, PathBuf)>,

    /// Gate the exit status on the rules in FILE (JSON; see docs/gates.md
    /// in the repository): 0 when every rule holds, differences or not, 1
    /// when one is broken, 2 when FILE is not a valid gate (an unknown
    /// member is an error naming it). Every format writes the outcome and
    /// each broken rule.
    #[arg(long, value_name = "FILE")]
    pub gate: Option<PathBuf>,

    /// Counts only (like `git diff --stat`): per table, per column (changed
    /// cells), objects and payloads (with bytes). Works with every
    /// --format: json writes {equal, product, differences, stat}, markdown
    /// a table, sql the counts as `--` comments.
    #[arg(long)]
    pub stat: bool,

    /// Leave out tables matching PATTERN (`*` and `?`, ASCII case ignored);
    /// repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub ignore_table: Vec<String>,

    /// Compare only the tables matching PATTERN (globs as --ignore-table),
    /// leaving out every other table as --ignore-table does; repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub table: Vec<String>,

    /// Leave out columns matching TABLE.COLUMN (globs, e.g. `*.updated_at`);
    /// repeatable.
    #[arg(long, value_name = "TABLE.COLUMN")]
    pub ignore_column: Vec<String>,

    /// Leave out bucket objects whose `BUCKET/KEY` matches PATTERN (globs,
    /// e.g. `thumbnails/*`); repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub ignore_object: Vec<String>,

    /// Leave out payloads whose name matches PATTERN (globs); repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub ignore_payload: Vec<String>,

    /// Match the rows of TABLE by the columns COL,COL (as daff's --ids),
    /// in place of its rowid (or primary key): for a rowid table whose
    /// rowids differ between exports. The columns must identify a row on
    /// each side (exit 2 otherwise). Not with --format sql. Repeatable.
    #[arg(long, value_name = "TABLE=COL,COL", value_parser = parse_key)]
    pub key: Vec<(String, Vec<String>)>,

    /// Rows shown per table and kind (added, removed, changed) in human and
    /// markdown output, then "… and N more"; the added and removed rows
    /// shown are written with their contents.
    #[arg(long, value_name = "N")]
    pub max_rows: Option<usize>,

    /// Markdown output at most BYTES long (K, M suffixes; at least 2K; 0:
    /// no cap). The default, 1000K, keeps it under GitHub's 1 MiB limit of
    /// a job summary. The heading and the counts are always complete; row
    /// and section detail stops before the piece that would not fit, and
    /// a last line says what was cut and how to see it (--format json, or
    /// --max-markdown-bytes 0).
    #[arg(long, value_name = "BYTES", default_value = "1000K",
          value_parser = crate::flags::parse_markdown_bytes)]
    pub max_markdown_bytes: usize,

    /// Write the contents of every added and removed row in human and
    /// markdown output, not only their keys (JSON always has them, as
    /// `addedRows` and `removedRows`). The contents are held in memory.
    #[arg(long)]
    pub full_rows: bool,

    /// Changed rows by key only, without cell detail.
    #[arg(long)]
    pub keys_only: bool,

    /// Do not verify the inputs (faster; the output says so). Not with
    /// --format sql: a patch is written only from verified archives.
    #[arg(long)]
    pub no_verify: bool,

    /// Diff archives of different products instead of refusing.
    #[arg(long)]
    pub allow_product_mismatch: bool,

    /// `--exclude-table`, `--include-table`, `--secret-column`, as `pack`
    /// takes them, for a database side: added to the exclusions the
    /// archive on the other side records (which a database side always
    /// takes).
    #[command(flatten)]
    pub tables: DatabaseTables,

    /// `--max-errors`: findings shown for an invalid input.
    #[command(flatten)]
    pub max_errors: MaxErrors,

    /// The limits group.
    #[command(flatten)]
    pub limits: Limits,

    /// `--accept-format`.
    #[command(flatten)]
    pub accept_format: AcceptFormat,

    /// `--quiet`: no diff, only the exit status.
    #[command(flatten)]
    pub quiet: Quiet,

    /// `-o FILE` and `--force`.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Parses `TABLE=COL,COL`.
fn parse_key(s: &str) -> Result<(String, Vec<String>), String> {
    let (table, cols) = s
        .split_once('=')
        .ok_or_else(|| format!("expected TABLE=COL,COL, got {s:?}"))?;
    let cols: Vec<String> = cols.split(',').map(|c| c.trim().to_string()).collect();
    if table.trim().is_empty() || cols.iter().any(String::is_empty) {
        return Err(format!("expected TABLE=COL,COL, got {s:?}"));
    }
    Ok((table.trim().to_string(), cols))
}

/// Parses `FORMAT=FILE`.
fn parse_also(s: &str) -> Result<(Format, PathBuf), String> {
    let usage =
        || format!("expected FORMAT=FILE (FORMAT human, json, markdown, github or sql), got {s:?}");
    let (format, file) = s.split_once('=').ok_or_else(usage)?;
    let format = <Format as clap::ValueEnum>::from_str(format.trim(), true).map_err(|_| usage())?;
    if file.is_empty() || is_stdio(Path::new(file)) {
        return Err(format!(
            "{s:?}: --also writes a file (standard output is for --format)"
        ));
    }
    Ok((format, PathBuf::from(file)))
}

/// Writes the diff `d` in `format` (not the sql patch) into `buf`.
fn render_to(
    format: Format,
    stat: bool,
    d: &ndarc_diff::Diff,
    opts: &RenderOptions,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    match (stat, format) {
        (true, Format::Human) => render::stat(d, opts, buf),
        (true, Format::Json) => render::json_stat(d, buf),
        (true, Format::Markdown) => render::markdown_stat(d, opts, buf),
        (true, Format::Sql) => render::stat_sql(d, opts, buf),
        (false, Format::Human) => render::human(d, opts, buf),
        (false, Format::Json) => render::json(d, buf),
        (false, Format::Markdown) => render::markdown(d, opts, buf),
        (_, Format::Github) => render::github(d, buf),
        // The patch is written by `Patch::finish`.
        (false, Format::Sql) => Ok(()),
    }
}

fn source(path: &Path) -> Source<'_> {
    if is_stdio(path) {
        Source::Reader(Box::new(std::io::stdin()))
    } else {
        Source::Path(path)
    }
}

fn name(path: &Path) -> String {
    if is_stdio(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// An input opened: a source now, or a database being packed.
enum Opened<'a> {
    Source(Source<'a>),
    Packing(PackedReader),
}

impl<'a> Opened<'a> {
    /// The source, once a database's pack is done (its temporary file,
    /// read by offset; no archive when it could not be packed, which its
    /// packer's `finish` then says).
    fn source(self) -> Source<'a> {
        match self {
            Opened::Source(s) => s,
            Opened::Packing(r) => match r.into_file() {
                Some(p) => Source::File(p.file, p.start),
                None => Source::Bytes(&[]),
            },
        }
    }
}

/// The input at `path`; a database is packed on the fly (its packer kept
/// in `packing`), under the header of the archive at `other` when that is
/// one (its product, configuration and recorded exclusions), else under
/// `fallback` (the same for both sides, so that two databases compare by
/// content), with the user's `tables` flags on top. Both inputs are opened
/// before either pack is waited for, so that two databases are packed
/// side by side.
fn open<'a>(
    path: &'a Path,
    other: &Path,
    fallback: &Header,
    tables: &PackTables,
    packing: &mut Vec<(String, PackStream)>,
) -> Opened<'a> {
    if !dbinput::is_database(path) {
        return Opened::Source(source(path));
    }
    let header =
        tables.apply(dbinput::header_of_archive(other).unwrap_or_else(|| fallback.clone()));
    let mut p = PackStream::spawn(path, &header);
    let reader = p.reader();
    packing.push((name(path), p));
    match reader {
        Some(r) => Opened::Packing(r),
        None => Opened::Source(source(path)),
    }
}

/// Runs `ndarc diff`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    check_inputs(&args)?;
    let tables = args.tables.checked()?;
    check_also(&args)?;
    // The gate is read and checked before the archives are.
    let gate = match &args.gate {
        None => None,
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| {
                Failure::io(format_args!("--gate: cannot read {}", path.display()), &e)
            })?;
            Some(
                ndarc_diff::gate::Gate::parse(&bytes)
                    .map_err(|e| Failure::new(format!("--gate {}: {e}", path.display())))?,
            )
        }
    };
    let (also_sql, patch_wanted) = check_patch(&args)?;
    let opts = diff_options(&args);
    // The --also files, refused now (before the diff) when they exist.
    let mode = args.output.mode.map_or(FileMode::Umask, FileMode::Exact);
    let mut also_files = Vec::new();
    for (format, file) in &args.also {
        also_files.push((
            *format,
            AtomicFile::create_with(file, args.output.force, mode)?,
        ));
    }
    let make_patch = patch_wanted && (!args.quiet.quiet || also_sql);
    let (mut d, patch) = diff(&args, ctx, &opts, &tables, make_patch)?;
    // With a gate, the gate decides: differences that break no rule pass.
    d.gate = gate.map(|g| g.check(&d));
    let failed = match &d.gate {
        Some(g) => !g.passed(),
        None => d.has_differences(),
    };
    let status = if failed {
        Status::Findings
    } else {
        Status::Success
    };
    write_outputs(&args, ctx, &d, also_files, patch)?;
    Ok(status)
}

/// Refuses inputs that cannot be diffed as given: both standard input, one
/// that is the output, tables flags without a database.
fn check_inputs(args: &Args) -> Result<(), Failure> {
    if is_stdio(&args.before) && is_stdio(&args.after) {
        return Err(Failure::new(
            "only one of the two archives can be standard input (-)",
        ));
    }
    if let Some(dest) = &args.output.output {
        refuse_input(dest, &[&args.before, &args.after])?;
    }
    args.tables.refuse_without_database(
        [args.before.as_path(), args.after.as_path()],
        " (to leave tables or columns out of two archives' diff, use --ignore-table and --ignore-column)",
    )
}

/// Refuses an --also file that is an input or written twice.
fn check_also(args: &Args) -> Result<(), Failure> {
    for (i, (_, file)) in args.also.iter().enumerate() {
        refuse_input(file, &[&args.before, &args.after])?;
        let earlier = args.also[..i].iter().map(|(_, f)| f.as_path());
        if earlier
            .chain(args.output.output.as_deref())
            .any(|f| f == file.as_path())
        {
            return Err(Failure::new(format!(
                "--also: {} is written twice; give each output its own file",
                file.display()
            )));
        }
    }
    Ok(())
}

/// The formats written: `--format`, then each `--also`'s.
fn formats(args: &Args) -> impl Iterator<Item = Format> + '_ {
    std::iter::once(args.format).chain(args.also.iter().map(|(f, _)| *f))
}

/// Whether an --also file is the sql patch, and whether a patch is
/// written at all; refuses what a patch cannot be written with.
fn check_patch(args: &Args) -> Result<(bool, bool), Failure> {
    if !args.stat && formats(args).filter(|f| *f == Format::Sql).count() > 1 {
        return Err(Failure::new(
            "the sql patch can be written once: --format sql or one --also sql=FILE",
        ));
    }
    let also_sql = !args.stat && args.also.iter().any(|(f, _)| *f == Format::Sql);
    let patch_wanted = (args.format == Format::Sql && !args.stat) || also_sql;
    if !args.key.is_empty() && patch_wanted {
        return Err(Failure::new(
            "--key cannot be used with --format sql (or --also sql=FILE): the patch addresses rows by their own key",
        ));
    }
    if args.no_verify && patch_wanted {
        return Err(Failure::new(
            "--no-verify cannot be used with --format sql (or --also sql=FILE): a patch is written only from verified archives",
        ));
    }
    Ok((also_sql, patch_wanted))
}

/// The diff's options, from the flags.
fn diff_options(args: &Args) -> ndarc_diff::Options {
    let verify = verify_options(
        &args.max_errors,
        &args.limits,
        &args.accept_format,
        ndarc_verify::Options::default().jobs,
    );
    // Contents of added and removed rows are kept only where they are
    // written: always in JSON, in human and markdown output with
    // --full-rows or up to --max-rows.
    let row_contents = formats(args)
        .map(|format| match (args.stat, format) {
            (true, _) | (_, Format::Sql) | (_, Format::Github) => 0,
            (false, Format::Json) => usize::MAX,
            _ if args.full_rows => usize::MAX,
            _ => args.max_rows.unwrap_or(0),
        })
        .max()
        .unwrap_or(0);
    ndarc_diff::Options {
        ignore_tables: args.ignore_table.clone(),
        tables: args.table.clone(),
        ignore_objects: args.ignore_object.clone(),
        ignore_payloads: args.ignore_payload.clone(),
        keys: args.key.clone(),
        ignore_columns: args.ignore_column.clone(),
        keys_only: args.keys_only,
        row_contents,
        no_verify: args.no_verify,
        allow_product_mismatch: args.allow_product_mismatch,
        verify,
    }
}

/// Diffs the two inputs, AFTER's rows into the sql patch when
/// `make_patch`; an invalid side's findings are written as `verify` writes
/// them.
fn diff(
    args: &Args,
    ctx: &Context,
    opts: &ndarc_diff::Options,
    tables: &PackTables,
    make_patch: bool,
) -> Result<(ndarc_diff::Diff, Option<ndarc_sqlite::patch::Patch>), Failure> {
    let (na, nb) = (name(&args.before), name(&args.after));
    // A database on either side is packed on the fly, under the header of
    // the archive on the other side when there is one.
    let mut packing = Vec::new();
    let fallback = Header::for_database(&args.before);
    let sa = open(&args.before, &args.after, &fallback, tables, &mut packing);
    let sb = open(&args.after, &args.before, &fallback, tables, &mut packing);
    let (sa, sb) = (sa.source(), sb.source());
    // The patch takes AFTER's rows while the diff reads it (once), and is
    // written only once the diff is over, AFTER verified.
    let mut patch = match make_patch {
        true => Some(
            ndarc_sqlite::patch::Patch::new()
                .map_err(|e| Failure::io("cannot create a temporary file for the patch", &e))?,
        ),
        false => None,
    };
    let sink = patch.as_mut().map(|p| p as &mut dyn ndarc_diff::RowSink);
    let result = ndarc_diff::diff_labeled_with_sink((&na, sa), (&nb, sb), opts, sink);
    for (n, p) in packing {
        if let Err(why) = p.finish() {
            return Err(Failure::new(format!("{n}: {why}")));
        }
    }
    match result {
        Ok(d) => Ok((d, patch)),
        Err(Error::Invalid {
            name,
            findings,
            errors,
            ..
        }) => {
            if !args.quiet.quiet {
                for f in findings.iter().take(args.max_errors.max_errors) {
                    let at = Location {
                        file: &name,
                        line: f.line,
                        offset: f.offset,
                    };
                    diagnostic(ctx.colour, at, f.code.as_str(), &f.message);
                }
            }
            Err(Failure::new(format!(
                "{name} is not a valid archive ({errors} error{}); `ndarc verify {}` lists them, --no-verify diffs anyway",
                if errors == 1 { "" } else { "s" },
                term::shell_word(&name),
            )))
        }
        // Worded as verify words it: what was being read, then why.
        Err(Error::Io { name, source, .. }) => {
            Err(Failure::io(format_args!("cannot read {name}"), &source))
        }
        Err(e) => Err(Failure::new(e.to_string())),
    }
}

/// Writes the diff: the --also files first, each from the same diff, then
/// the output (unless --quiet).
fn write_outputs(
    args: &Args,
    ctx: &Context,
    d: &ndarc_diff::Diff,
    also_files: Vec<(Format, AtomicFile)>,
    mut patch: Option<ndarc_sqlite::patch::Patch>,
) -> Result<(), Failure> {
    let render_opts = RenderOptions {
        colour: false,
        max_rows: args.max_rows,
        full_rows: args.full_rows,
        max_bytes: (args.max_markdown_bytes > 0).then_some(args.max_markdown_bytes),
    };
    for (format, mut file) in also_files {
        let name = file.path().display().to_string();
        if format == Format::Sql && !args.stat {
            let Some(patch) = patch.take() else {
                return Err(Failure::new("the patch was not made"));
            };
            write_patch(patch, d, &mut file, &name)?;
        } else {
            let mut buf = Vec::new();
            render_to(format, args.stat, d, &render_opts, &mut buf)
                .map_err(|e| Failure::io("cannot write the diff", &e))?;
            std::io::Write::write_all(&mut file, &buf)
                .map_err(|e| Failure::io(format_args!("cannot write {name}"), &e))?;
        }
        file.commit()?;
    }
    if args.quiet.quiet {
        return Ok(());
    }
    let to_stdout = args.output.output.as_deref().is_none_or(is_stdio);
    let render_opts = RenderOptions {
        colour: to_stdout && ctx.colour.stdout && !args.stat && args.format == Format::Human,
        ..render_opts
    };
    let mut out = args.output.open(FileMode::Umask)?;
    if args.format == Format::Sql && !args.stat {
        // Streamed to the output: the patch holds every row added.
        let Some(patch) = patch else {
            return Err(Failure::new("the patch was not made"));
        };
        let name = out.name();
        write_patch(patch, d, &mut out, &name)?;
    } else {
        let mut buf = Vec::new();
        render_to(args.format, args.stat, d, &render_opts, &mut buf)
            .map_err(|e| Failure::io("cannot write the diff", &e))?;
        out.put(&buf)?;
    }
    out.finish()
}

/// Writes the sql patch of `d` to `out` (named `name` in messages).
fn write_patch(
    patch: ndarc_sqlite::patch::Patch,
    d: &ndarc_diff::Diff,
    out: &mut dyn std::io::Write,
    name: &str,
) -> Result<(), Failure> {
    patch.finish(d, out).map_err(|e| match e {
        ndarc_sqlite::Error::PatchOutput(e) => Failure::io(format_args!("cannot write {name}"), &e),
        e => Failure::new(e.to_string()),
    })
}
