//! `ndarc verify`: check every rule of SPEC.md.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

// The one escaping of workflow commands (`%`, CR, LF; `:` and `,` in a
// property), shared with `diff --format github`.
use ndarc_diff::render::github_escape;
use ndarc_format::{Policy, PolicyError};
use ndarc_verify::{Report, Severity};

use crate::dbinput::{Header, PackStream, PackedReader};
use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{
    verify_options, AcceptFormat, DatabaseTables, Jobs, Limits, MaxErrors, PackTables, Quiet,
};
use crate::io::{is_stdio, refuse_input, AtomicFile};
use crate::term::{self, paint, Style};
use crate::Context;

/// Output formats of `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// `FILE:LINE:OFFSET: CODE: message` per finding, then a summary.
    #[default]
    Human,
    /// One JSON document on stdout.
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…,title=CODE::message`).
    Github,
}

/// Arguments of `ndarc verify`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Check archives against every rule of SPEC.md",
    long_about = "Check archives against every rule of SPEC.md: framing, canonical JSON, the manifest, \
every part and item, row keys, object and payload bytes, and both closing hashes. \
Part lines are checked in parallel; memory stays flat however large the archive.",
    after_help = "\
Exit status: 0 every archive is valid, 1 findings (with --strict, warnings too), 2 could not run.

Examples:
  ndarc verify export.ndjson
  ndarc verify --receipt export.receipt.json export.ndjson
  curl -s https://example.invalid/export | ndarc verify -
  ndarc verify --format github exports/*.ndjson      # annotations in GitHub Actions
  ndarc verify --policy policy.json --expect-content-hash \"$HASH\" export.ndjson
  ndarc verify --format json --max-errors 1000 a.ndjson > findings.json
  ndarc verify monday.ndjson --later tuesday.ndjson   # can tuesday's export follow monday's?"
)]
pub struct Args {
    /// Archives to verify (`-` for standard input).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// Write the receipt of a valid archive to FILE (one archive only).
    #[arg(long, value_name = "FILE")]
    receipt: Option<PathBuf>,
    /// Overwrite an existing receipt.
    #[arg(long)]
    force: bool,
    /// Fail on warnings too.
    #[arg(long)]
    strict: bool,
    /// `--jobs`: threads checking lines, the reading thread among them.
    #[command(flatten)]
    jobs: Jobs,
    /// `--max-errors`.
    #[command(flatten)]
    max_errors: MaxErrors,
    /// The limits group.
    #[command(flatten)]
    limits: Limits,
    /// `--accept-format`.
    #[command(flatten)]
    accept_format: AcceptFormat,
    /// Check the archive against an import policy (SPEC.md §15): a JSON
    /// file of `product`, `contentHash`, `acceptedSchemas`, `excludeTables`,
    /// `secretColumns`, `requiredConfiguration`, `buckets` … (the producer's
    /// configuration as JSON is one). Each breach is an error `policy_*`;
    /// the receipt records the policy. At most 16 MiB is read.
    #[arg(long, value_name = "FILE", help_heading = "Policy")]
    policy: Option<PathBuf>,
    /// The archive's closing must carry this `contentHash` (the hash the
    /// server reported); overrides the policy file's.
    #[arg(long, value_name = "HEX", help_heading = "Policy")]
    expect_content_hash: Option<String>,
    /// The archive must be an export of this product; overrides the policy
    /// file's.
    #[arg(long, value_name = "NAME", help_heading = "Policy")]
    expect_product: Option<String>,
    /// A schema identity the importer accepts (repeatable; adds to the
    /// policy file's `acceptedSchemas`).
    #[arg(long, value_name = "HEX", help_heading = "Policy")]
    accept_schema: Vec<String>,
    /// Also check that archive LATER can follow the one FILE (SPEC.md
    /// §4.6), the offline half of the producer's later-journal import: the
    /// same `sourceIdentity`, an `epoch` that does not go backwards, a
    /// `journal` and `migrations` that only grow. LATER is verified as
    /// usual too; a broken lineage rule is an error `lineage_*` on LATER.
    #[arg(long, value_name = "LATER", help_heading = "Lineage")]
    later: Option<PathBuf>,
    /// Also check the rows against the foreign keys of each table's own
    /// `sql`, as SQLite reads them (SPEC.md §11): a row whose key names no
    /// parent row is an error `foreign_key_violation`, a foreign key SQLite
    /// refuses `foreign_key_mismatch`. The keys are kept in a temporary
    /// database on disk (in TMPDIR): memory stays flat.
    #[arg(long, help_heading = "Integrity")]
    integrity: bool,
    /// `--exclude-table`, `--include-table`, `--secret-column`, as `pack`
    /// takes them, for each database input.
    #[command(flatten)]
    tables: DatabaseTables,
    /// `--quiet`.
    #[command(flatten)]
    quiet: Quiet,
}

/// The largest `--policy` file read. A policy is a few lines of JSON; the
/// limit keeps a file such as `/dev/zero` from taking all memory.
pub(crate) const MAX_POLICY_BYTES: usize = 16 << 20;

/// The bytes of `--policy FILE`, at most [`MAX_POLICY_BYTES`].
fn read_policy(path: &Path) -> Result<Vec<u8>, Failure> {
    let read_err = |e: &std::io::Error| Failure::path("cannot read", path, e);
    let file = std::fs::File::open(path).map_err(|e| read_err(&e))?;
    let mut bytes = Vec::new();
    file.take(MAX_POLICY_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| read_err(&e))?;
    if bytes.len() > MAX_POLICY_BYTES {
        return Err(Failure::new(format!(
            "--policy {}: larger than 16 MiB; a policy is a small JSON file",
            path.display()
        )));
    }
    Ok(bytes)
}

/// The policy of `--policy FILE` with the `--expect-*` and
/// `--accept-schema` options on top; `None` when none is given.
fn policy(args: &Args) -> Result<Option<Policy>, Failure> {
    let mut policy = match &args.policy {
        Some(path) => {
            let bytes = read_policy(path)?;
            Policy::from_json(&bytes)
                .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?
        }
        None => Policy::default(),
    };
    // Each option is read as the policy member it sets, so that it is
    // checked by the same rules as a policy file.
    let member = |flag: &str, member: &str, value: serde_json::Value| {
        let doc = serde_json::json!({ member: value }).to_string();
        Policy::from_json(doc.as_bytes()).map_err(|e| match e {
            PolicyError::Invalid { problem, .. } => Failure::new(format!("--{flag}: {problem}")),
            other => Failure::new(format!("--{flag}: {other}")),
        })
    };
    if let Some(h) = &args.expect_content_hash {
        policy.content_hash =
            member("expect-content-hash", "contentHash", h.as_str().into())?.content_hash;
    }
    if let Some(p) = &args.expect_product {
        policy.product = member("expect-product", "product", p.as_str().into())?.product;
    }
    if !args.accept_schema.is_empty() {
        let more = member(
            "accept-schema",
            "acceptedSchemas",
            args.accept_schema.clone().into(),
        )?;
        for s in more.accepted_schemas {
            if !policy.accepted_schemas.contains(&s) {
                policy.accepted_schemas.push(s);
            }
        }
    }
    let given = args.policy.is_some()
        || args.expect_content_hash.is_some()
        || args.expect_product.is_some()
        || !args.accept_schema.is_empty();
    Ok(given.then_some(policy))
}

/// Runs `ndarc verify`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    let inputs = inputs(&args)?;
    let mut options = verify_options(
        &args.max_errors,
        &args.limits,
        &args.accept_format,
        args.jobs.get(),
    );
    options.policy = policy(&args)?.map(Arc::new);
    options.integrity = args.integrity;
    let tables = args.tables.checked()?;
    let show_progress = !args.quiet.quiet && std::io::stderr().is_terminal();
    let run = Run {
        args: &args,
        ctx,
        options,
        tables,
        show_progress,
    };
    let mut tally = Tally {
        all_valid: true,
        could_not_run: 0,
        json_files: Vec::new(),
        earlier: None,
        follows: None,
    };
    for (index, path) in inputs.iter().enumerate() {
        run.verify(index, path, &mut tally)?;
    }
    conclude(&args, inputs.len(), tally)
}

/// The inputs in order: the archives, then --later's; refused when the
/// flags do not fit them.
fn inputs(args: &Args) -> Result<Vec<&PathBuf>, Failure> {
    if args.receipt.is_some() && args.files.len() != 1 {
        return Err(Failure::new("--receipt takes exactly one archive"));
    }
    if args.later.is_some() && args.files.len() != 1 {
        return Err(Failure::new(
            "--later takes exactly one earlier archive: ndarc verify A --later B",
        ));
    }
    let inputs: Vec<&PathBuf> = args.files.iter().chain(args.later.as_ref()).collect();
    let stdin_count = inputs.iter().filter(|p| is_stdio(p)).count();
    if stdin_count > 1 {
        return Err(Failure::new("standard input (-) can be verified only once"));
    }
    if let Some(dest) = &args.receipt {
        let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
        refuse_input(dest, &inputs)?;
    }
    args.tables
        .refuse_without_database(inputs.iter().map(|p| p.as_path()), "")?;
    Ok(inputs)
}

/// What a run of `verify` has found so far.
struct Tally {
    all_valid: bool,
    could_not_run: usize,
    json_files: Vec<serde_json::Value>,
    /// --later: the earlier archive's manifest.
    earlier: Option<ndarc_format::Manifest>,
    /// --later: whether LATER follows it (`None` when either manifest
    /// could not be read).
    follows: Option<bool>,
}

/// One run of `verify` over its inputs: the flags and the options.
struct Run<'s> {
    args: &'s Args,
    ctx: &'s Context,
    options: ndarc_verify::Options,
    /// How a database input is packed.
    tables: PackTables,
    show_progress: bool,
}

impl Run<'_> {
    /// Verifies input `index` at `path` and writes what it found.
    fn verify(&self, index: usize, path: &Path, tally: &mut Tally) -> Result<(), Failure> {
        let (args, ctx) = (self.args, self.ctx);
        let is_later = args.later.is_some() && index == 1;
        let name = display_name(path);
        let Some(result) = self.read(path, &name, tally) else {
            return Ok(());
        };
        let mut report = match result {
            Ok(r) => r,
            Err(e) => {
                if !args.quiet.quiet {
                    term::error(ctx.colour, &e.to_string());
                }
                tally.could_not_run += 1;
                if args.format == Format::Json {
                    tally
                        .json_files
                        .push(serde_json::json!({"file": name, "error": e.to_string()}));
                }
                return Ok(());
            }
        };
        if args.later.is_some() && index == 0 {
            tally.earlier = report.manifest.clone();
        }
        if is_later {
            if let (Some(a), Some(b)) = (&tally.earlier, &report.manifest) {
                let found = ndarc_format::check_lineage(a, b);
                tally.follows = Some(found.is_empty());
                for f in found {
                    if f.is_error() {
                        report.errors += 1;
                    } else {
                        report.warnings += 1;
                    }
                    report.findings.push(f);
                }
            }
        }
        let valid = report.is_valid(args.strict);
        tally.all_valid &= valid;
        // --integrity could not check a valid archive's rows: no verdict.
        if let Some(why) = &report.unchecked {
            if valid {
                tally.could_not_run += 1;
            }
            if !args.quiet.quiet && args.format != Format::Json {
                let say = format!("{name}: the foreign keys were not checked: {why}");
                if valid {
                    term::error(ctx.colour, &say);
                } else {
                    term::note(&say);
                }
            }
        }
        if !args.quiet.quiet {
            match args.format {
                Format::Human => human(&name, &report, valid, ctx)?,
                Format::Github => github(&name, &report)?,
                Format::Json => tally.json_files.push(json(&name, &report, valid)),
            }
        }
        if let Some(dest) = args.receipt.as_ref().filter(|_| index == 0) {
            if let Some(receipt) = report.receipt().filter(|_| valid) {
                let mut f = AtomicFile::create(dest, args.force)?;
                f.write_all(&receipt.to_canonical_line())
                    .map_err(|e| Failure::path("cannot write", dest, &e))?;
                f.commit()?;
            } else if !args.quiet.quiet && args.format == Format::Human {
                term::note(&format!("no receipt written: {name} is not valid"));
            }
        }
        Ok(())
    }

    /// The report of the input at `path` (named `name`), or why it could
    /// not be made; `None` when the input is skipped (a database the packer
    /// refused is reported into `tally` here).
    fn read(
        &self,
        path: &Path,
        name: &str,
        tally: &mut Tally,
    ) -> Option<Result<Report, ndarc_verify::Error>> {
        let (args, ctx) = (self.args, self.ctx);
        let mut opts = self.options.clone();
        let bar = Arc::new(OnceLock::new());
        if self.show_progress {
            opts.progress = Some(progress_bar(name.to_string(), Arc::clone(&bar)));
        }
        let result = if is_stdio(path) {
            ndarc_verify::verify_reader(std::io::stdin(), &opts)
        } else if crate::dbinput::is_database(path) {
            // A database: packed on the fly to a temporary file, verified
            // as a file is.
            let started = std::time::Instant::now();
            let header = self.tables.apply(Header::for_database(path));
            let mut packing = PackStream::spawn(path, &header);
            let file = packing.reader().and_then(PackedReader::into_file);
            if let Err(why) = packing.finish().map_err(|e| e.to_string()) {
                if self.show_progress {
                    eprint!("\r\x1b[2K");
                }
                if !args.quiet.quiet {
                    term::error(ctx.colour, &format!("{name}: {why}"));
                }
                tally.all_valid = false;
                if args.format == Format::Json {
                    tally
                        .json_files
                        .push(serde_json::json!({"file": name, "valid": false, "refused": why}));
                }
                return None;
            }
            match file {
                // The time reported is the packing's and the verifying's.
                Some(p) => ndarc_verify::verify_file(p.file, p.start, name, &opts).map(|mut r| {
                    r.elapsed = started.elapsed();
                    r
                }),
                None => Err(ndarc_verify::Error::Io {
                    path: name.to_string(),
                    source: std::io::Error::other("the packer gave no archive"),
                }),
            }
        } else {
            ndarc_verify::verify_path(path, &opts)
        };
        if let Some(bar) = bar.get() {
            bar.finish_and_clear();
        }
        Some(result)
    }
}

/// The end of a run: the JSON document, the inputs that could not be
/// verified, the lineage verdict, the exit status.
fn conclude(args: &Args, inputs: usize, tally: Tally) -> CmdResult {
    let Tally {
        all_valid,
        could_not_run,
        json_files,
        follows,
        ..
    } = tally;
    if args.format == Format::Json && !args.quiet.quiet {
        let mut doc =
            serde_json::json!({"valid": all_valid && could_not_run == 0, "files": json_files});
        if let Some(later) = &args.later {
            doc["lineage"] = serde_json::json!({
                "earlier": display_name(&args.files[0]),
                "later": display_name(later),
                "follows": follows,
            });
        }
        let mut text = serde_json::to_vec_pretty(&doc)
            .map_err(|e| Failure::new(format!("cannot write <stdout>: {e}")))?;
        text.push(b'\n');
        write_stdout(&text)?;
    }
    if could_not_run > 0 {
        return Err(Failure::new(format!(
            "{could_not_run} of {inputs} inputs could not be verified"
        )));
    }
    if let (Some(later), Format::Human, false) = (&args.later, args.format, args.quiet.quiet) {
        let (a, b) = (
            term::one_line(&display_name(&args.files[0])),
            term::one_line(&display_name(later)),
        );
        let line = match follows {
            Some(true) => format!("{b}: follows {a}\n"),
            Some(false) => format!("{b}: does NOT follow {a} (lineage_* findings above)\n"),
            None => format!("{b}: lineage to {a} not checked: a manifest could not be read\n"),
        };
        write_stdout(line.as_bytes())?;
    }
    Ok(if all_valid {
        Status::Success
    } else {
        Status::Findings
    })
}

/// How an input is named in the output: its path, or `<stdin>` for `-`.
fn display_name(path: &Path) -> String {
    if is_stdio(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Writes `bytes` to standard output and flushes; a failure is exit 2.
fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| Failure::io("cannot write <stdout>", &e))
}

/// The progress callback: an `indicatif` bar on standard error, shown
/// once more than 64 MiB are to be read (or have been, from a pipe).
fn progress_bar(
    name: String,
    bar: Arc<OnceLock<ProgressBar>>,
) -> Arc<dyn Fn(u64, Option<u64>) + Send + Sync> {
    const SHOW_FROM: u64 = 64 << 20;
    let name = term::one_line(&name);
    Arc::new(move |done, total| {
        if total.unwrap_or(done) <= SHOW_FROM {
            return;
        }
        let b = bar.get_or_init(|| {
            let (b, template) = match total {
                Some(t) => (
                    ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()),
                    "{prefix} [{bar:30}] {percent:>3}% {binary_bytes_per_sec}",
                ),
                None => (
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
                    "{prefix} {binary_bytes} {binary_bytes_per_sec}",
                ),
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                b.set_style(style.progress_chars("#> "));
            }
            b.set_prefix(name.clone());
            b
        });
        b.set_position(done);
    })
}

fn human(name: &str, r: &Report, valid: bool, ctx: &Context) -> Result<(), Failure> {
    write_stdout(human_text(name, r, valid, ctx.colour.stdout).as_bytes())
}

/// The human rendering of a report: one `FILE:LINE:OFFSET: CODE: message`
/// line per finding, then the verdict and the hashes (also what `repart`
/// prints of an input that does not verify).
pub(crate) fn human_text(name: &str, r: &Report, valid: bool, colour: bool) -> String {
    let name = &term::one_line(name);
    let mut out = String::new();
    for f in &r.findings {
        let loc = format!("{name}:{}:{}:", f.line, f.offset);
        let style = if f.severity == Severity::Error {
            Style::Error
        } else {
            Style::Warning
        };
        out.push_str(&format!(
            "{} {}{}: {}{}\n",
            paint(colour, Style::Location, &loc),
            if f.severity == Severity::Warning {
                "warning: "
            } else {
                ""
            },
            paint(colour, style, f.code.as_str()),
            term::one_line(&f.message),
            if f.pointer.is_empty() {
                String::new()
            } else {
                format!(" (at {})", term::one_line(&f.pointer))
            }
        ));
    }
    let shown = r.findings.len() as u64;
    let total = r.errors + r.warnings;
    if total > shown {
        out.push_str(&format!(
            "{name}: … and {} more findings (raise --max-errors to see them)\n",
            total - shown
        ));
    }
    let verdict = if valid {
        paint(colour, Style::Good, "valid")
    } else {
        paint(colour, Style::Error, "INVALID")
    };
    let secs = r.elapsed.as_secs_f64();
    let mbs = if secs > 0.0 {
        r.bytes as f64 / secs / 1e6
    } else {
        0.0
    };
    out.push_str(&format!(
        "{name}: {verdict}: {}, {}{}; {}, {}, {}",
        plural(r.errors, "error"),
        plural(r.warnings, "warning"),
        if r.stopped { " (stopped early)" } else { "" },
        plural(r.bytes, "byte"),
        plural(r.lines, "line"),
        plural(r.parts, "part")
    ));
    if let Some(m) = &r.manifest {
        // Counts seen: the manifest's own entries, and rows only when the
        // archive is valid (then every claimed count was checked against
        // the rows read); a claimed count is never printed as seen.
        out.push_str(&format!(", {}", plural(m.tables.len() as u64, "table")));
        if r.errors == 0 {
            let rows = m.tables.iter().fold(0u64, |n, t| n.saturating_add(t.count));
            out.push_str(&format!(", {}", plural(rows, "row")));
        }
        out.push_str(&format!(
            ", {}, {}",
            plural(m.objects.len() as u64, "object"),
            plural(m.payloads.len() as u64, "payload")
        ));
    }
    // A rate over a few kilobytes measures start-up, not throughput.
    if r.bytes >= MIN_RATE_BYTES {
        out.push_str(&format!(" in {secs:.2}s ({mbs:.0} MB/s)\n"));
    } else {
        out.push_str(&format!(" in {secs:.2}s\n"));
    }
    if let (Some(c), Some(a)) = (&r.content_hash, &r.archive_hash) {
        if valid {
            // The closing's hashes, which the computed ones equal.
            out.push_str(&format!(
                "{name}: contentHash {c}\n{name}: archiveHash {a}\n"
            ));
        } else {
            // Labelled, so that an invalid archive's hashes are not read as
            // what its closing says.
            let said = |i: usize, computed: &str| match &r.closing_hashes {
                None => " (no closing line)".to_string(),
                Some(h) => {
                    let said = if i == 0 { &h.0 } else { &h.1 };
                    if said == computed {
                        " (as the closing says)".to_string()
                    } else {
                        format!(" (the closing says {})", term::one_line(said))
                    }
                }
            };
            out.push_str(&format!(
                "{name}: computed contentHash {c}{}\n{name}: computed archiveHash {a}{}\n",
                said(0, c),
                said(1, a)
            ));
        }
    }
    out
}

/// The smallest input whose summary gives a rate (MB/s): 10 MB.
const MIN_RATE_BYTES: u64 = 10_000_000;

/// `n` and `word`, plural unless `n` is 1 ("1 payload", "2 payloads").
pub(crate) fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn github(name: &str, r: &Report) -> Result<(), Failure> {
    let mut out = String::new();
    for f in &r.findings {
        let kind = if f.severity == Severity::Error {
            "error"
        } else {
            "warning"
        };
        out.push_str(&format!(
            "::{kind} file={},line={},title={}::{}{}\n",
            github_escape(name, true),
            f.line.max(1),
            github_escape(f.code.as_str(), true),
            github_escape(&f.message, false),
            if f.pointer.is_empty() {
                String::new()
            } else {
                github_escape(&format!(" (byte {}, at {})", f.offset, f.pointer), false)
            }
        ));
    }
    if r.errors + r.warnings > r.findings.len() as u64 {
        out.push_str(&format!(
            "::error file={}::{} more findings not shown\n",
            github_escape(name, true),
            r.errors + r.warnings - r.findings.len() as u64
        ));
    }
    write_stdout(term::safe_text(&out).as_bytes())
}

fn json(name: &str, r: &Report, valid: bool) -> serde_json::Value {
    let mut doc = serde_json::json!({
        "file": name,
        "valid": valid,
        "errors": r.errors,
        "warnings": r.warnings,
        "stopped": r.stopped,
        "findings": r.findings,
        "bytes": r.bytes,
        "lines": r.lines,
        "parts": r.parts,
        "contentHash": r.content_hash,
        "archiveHash": r.archive_hash,
        "elapsedSeconds": r.elapsed.as_secs_f64(),
        "policy": r.policy.as_deref(),
    });
    // Only with --integrity, when it could not check the rows.
    if let Some(why) = &r.unchecked {
        doc["integrityUnchecked"] = why.as_str().into();
    }
    doc
}
