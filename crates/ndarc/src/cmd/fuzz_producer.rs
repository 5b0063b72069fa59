//! `ndarc fuzz-producer`: feed generated SQLite databases to a third-party
//! producer and check its archives against ndarc's own `pack`.
//!
//! Each run draws a database (`ndarc_sqlite::fuzzdb`, seeded), writes it
//! to a private temporary directory and runs the producer on it without a
//! shell (`{db}` and `{archive}` replaced by the paths), with a time limit
//! and its process group killed after it. ndarc's `pack` of the same
//! database is the oracle:
//!
//! - when `pack` refuses the database, the producer must refuse it too
//!   (non-zero exit) and leave no archive;
//! - otherwise the producer must exit 0 and write an archive that verifies,
//!   whose `contentHash` equals that of `pack`'s archive made with the
//!   header the producer chose (`product`, `exportedAt`, `epoch`,
//!   `sourceIdentity`, `requiredConfiguration` from its manifest). On a
//!   mismatch the first differing rows come from `ndarc-diff`.
//!
//! A failing database is shrunk (tables, then rows, then columns, while the
//! same kind of failure remains) and, with `--outdir`, kept there with the
//! producer's and the expected archives and `summary.json`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ndarc_sqlite::fuzzdb::{self, DbSpec, FuzzOptions};
use ndarc_sqlite::pack::{pack, PackOptions};

use crate::child::{
    self, progress_text, run_child, shown_command, substitute, Outcome, Progress, RunArgs, Scratch,
};
use crate::cmd::mutate::{prepare_outdir, write_atomic};
use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{Format, FormatArg, Quiet};
use crate::term::{self, paint, Style};
use crate::Context;

/// The token replaced by the database's path.
pub(crate) const DB_TOKEN: &str = "{db}";
/// The token replaced by the path the archive is to be written to.
pub use crate::child::ARCHIVE_TOKEN;

/// `exportedAt` of the reference archive when the producer gave none.
const REFERENCE_TIME: &str = "2000-01-01T00:00:00.000Z";

const EXAMPLES: &str = "\
Examples:
  Twenty databases through a producer ({db} in, {archive} out):
    ndarc fuzz-producer --exec './export --db {db} --out {archive}'

  More runs, a time limit, the failing databases (shrunk) kept:
    ndarc fuzz-producer --exec 'node export.mjs {db} {archive}' \\
        --runs 200 --seed 7 --timeout 5 --outdir fuzz-out/

  ndarc's own pack agrees with itself:
    ndarc fuzz-producer --exec 'ndarc pack {db} -o {archive}' --runs 200

  Every other database drawn from your own schema (its CHECKs, foreign keys …):
    ndarc fuzz-producer --exec './export --db {db} --out {archive}' --schema schema.sql

The command is split into words as a POSIX shell would split them but no shell runs it.
A word holding {db} or {archive} has it replaced by the path; a token no word holds has its
path appended (the database first). The archive path does not exist before the run.

Every fourth database must be refused (text in a DATETIME column, an unsafe integer, a
virtual table, a too-wide table, a foreign key to an excluded table, all rowid aliases
shadowed, in turn); the expected code is the one `ndarc pack` refuses it with.

Exit status: 0 the producer agreed on every database, 1 a disagreement, crash or time-out,
2 could not run (usage, a command that cannot be started, I/O).";

/// Arguments of `ndarc fuzz-producer`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Feed generated SQLite databases to a producer; compare its archives with ndarc pack",
    long_about = "Test a third-party producer (a program that turns a SQLite database into an \
archive) against ndarc's own pack: each run generates a seeded random database covering every \
affinity, key shape, rowid shadowing, generated columns, foreign keys and edge values, and runs \
the command on it. An archive must verify and have the contentHash of `ndarc pack` of the same \
database under the producer's own header (product, exportedAt, epoch, sourceIdentity, \
requiredConfiguration); a database pack refuses must be refused (non-zero exit) and leave no \
archive. Failing databases are shrunk (tables, then rows, then columns) and, with --outdir, kept \
with summary.json; the report names the files kept. On a terminal, a line on standard error shows \
the runs done, agreed, the findings so far and the shrinking (not with --quiet).",
    after_help = EXAMPLES,
    mut_arg("exec", |a| a.help("The producer: a command with {db} and {archive} where the paths go")),
    mut_arg("runs", |a| a.help("Databases to feed")),
    mut_arg("seed", |a| a.help("The seed of the databases")),
    mut_arg("timeout", |a| a.help("Kill the producer (its process group) after this many seconds")),
    mut_arg("outdir", |a| a.help(
        "Keep the failing databases (shrunk), the archives and summary.json here \
         (created if missing; must be empty unless --force)"
    )),
)]
pub struct Args {
    /// `--exec`, `--runs`, `--seed`, `--timeout`, `--outdir`, `--force`.
    #[command(flatten)]
    pub run: RunArgs,
    /// `--format human|json`: the report as text or as JSON.
    #[command(flatten)]
    pub format: FormatArg,
    /// Producer runs spent shrinking one failing database at most.
    #[arg(long, default_value_t = 400, value_name = "N")]
    pub shrink_budget: usize,
    /// At most this many rows a table.
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub max_rows: usize,
    /// Also draw databases from your own schema (an SQL file of CREATE
    /// TABLE statements: your types, collations, CHECKs, defaults,
    /// generated columns and foreign keys), with random rows SQLite accepts
    /// under every constraint: every other run uses it, the rest the
    /// built-in shapes.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Keep at most this many bytes of the producer's standard output and
    /// error per run in the report (K, M suffixes; at most 1M).
    #[arg(long, default_value = "2000", value_name = "BYTES", value_parser = child::parse_max_output)]
    pub max_output: usize,
    /// `--quiet`: no report and no progress line; the exit status (and
    /// summary.json with --outdir) tells.
    #[command(flatten)]
    pub quiet: Quiet,
}

/// What went wrong with one database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A database `pack` archives was refused (non-zero exit).
    ValidRefused,
    /// Exit 0 but no archive at the path.
    NoArchive,
    /// The archive does not verify.
    InvalidArchive,
    /// The archive verifies but its content differs from `pack`'s.
    ContentMismatch,
    /// A database `pack` refuses was archived (exit 0).
    InvalidAccepted,
    /// A database `pack` refuses was refused, but an archive was left.
    ArchiveLeft,
    /// Killed by a signal.
    Crash,
    /// Killed after the time limit.
    Timeout,
}

impl Kind {
    /// The snake_case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::ValidRefused => "valid_refused",
            Kind::NoArchive => "no_archive",
            Kind::InvalidArchive => "invalid_archive",
            Kind::ContentMismatch => "content_mismatch",
            Kind::InvalidAccepted => "invalid_accepted",
            Kind::ArchiveLeft => "archive_left",
            Kind::Crash => "crash",
            Kind::Timeout => "timeout",
        }
    }

    const ALL: [Kind; 8] = [
        Kind::ValidRefused,
        Kind::NoArchive,
        Kind::InvalidArchive,
        Kind::ContentMismatch,
        Kind::InvalidAccepted,
        Kind::ArchiveLeft,
        Kind::Crash,
        Kind::Timeout,
    ];
}

/// The reference's options under the header a producer chose (`product`,
/// `exportedAt`, `epoch`, `sourceIdentity`, `requiredConfiguration` from
/// its manifest), or the fuzzer's own header before there is one.
fn reference_options(m: Option<&ndarc_format::manifest::Manifest>) -> PackOptions {
    match m {
        Some(m) => PackOptions {
            product: Some(m.product.clone()),
            exported_at: Some(m.exported_at.clone()),
            epoch: m.epoch,
            source_identity: m.source_identity.clone(),
            required_configuration: m.required_configuration.clone(),
            ..PackOptions::default()
        },
        None => PackOptions {
            product: Some("ndarc-fuzz-producer".to_string()),
            exported_at: Some(REFERENCE_TIME.to_string()),
            epoch: 0,
            source_identity: "ndarc-fuzz-producer".to_string(),
            required_configuration: Vec::new(),
            ..PackOptions::default()
        },
    }
}

/// ndarc's own archive of `db`, written to `out`, or its refusal (code,
/// message).
fn reference(db: &Path, opts: &PackOptions, out: &Path) -> Result<(), (String, String)> {
    let cannot = |e: std::io::Error| {
        (
            "io".to_string(),
            format!("cannot write {}: {e}", out.display()),
        )
    };
    let mut file =
        std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(out).map_err(cannot)?);
    match pack(db, opts, &mut file) {
        Ok(_) => file.flush().map_err(cannot),
        Err(e) => Err((e.code().to_string(), e.message().to_string())),
    }
}

/// The result of feeding one database.
#[derive(Debug)]
struct Eval {
    kind: Option<Kind>,
    outcome: Outcome,
    /// The code `pack` refuses the database with.
    refused: Option<(String, String)>,
    /// Findings, the content difference, or why no archive.
    detail: String,
    /// The producer's archive, when it left one (in the scratch directory,
    /// until the next run: archives are checked as files, never held).
    archive: Option<PathBuf>,
    /// `pack`'s archive (under the producer's header when it had one).
    expected: Option<PathBuf>,
}

struct Session {
    words: Vec<String>,
    timeout: Duration,
    max_output: usize,
    scratch: Scratch,
    verify: ndarc_verify::Options,
}

impl Session {
    fn db_path(&self) -> PathBuf {
        self.scratch.path().join("input.db")
    }

    fn archive_path(&self) -> PathBuf {
        self.scratch.path().join("output.ndjson")
    }

    fn expected_path(&self) -> PathBuf {
        self.scratch.path().join("expected.ndjson")
    }

    /// Feeds `spec` to the producer; `None` when the plan cannot be
    /// written (a shrinking step SQLite rejects).
    fn eval(&self, spec: &DbSpec) -> Result<Option<Eval>, Failure> {
        let (db, archive, expected) = (self.db_path(), self.archive_path(), self.expected_path());
        if spec.write(&db).is_err() {
            return Ok(None);
        }
        for stale in [&archive, &expected] {
            if let Err(e) = std::fs::remove_file(stale) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    return Err(Failure::path("cannot remove", stale, &e));
                }
            }
        }
        let argv = substitute(&self.words, &[(DB_TOKEN, &db), (ARCHIVE_TOKEN, &archive)]);
        let outcome = run_child(&argv, self.timeout, self.max_output)
            .map_err(|e| Failure::io(format_args!("cannot run {}", self.words[0]), &e))?;
        let produced = match std::fs::symlink_metadata(&archive) {
            Ok(_) => Some(archive.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Failure::path("cannot read", &archive, &e)),
        };
        let mut ev = Eval {
            kind: None,
            outcome,
            refused: None,
            detail: String::new(),
            archive: produced,
            expected: None,
        };
        let first = reference(&db, &reference_options(None), &expected);
        let o = &ev.outcome;
        if o.timed_out {
            ev.kind = Some(Kind::Timeout);
        } else if o.signal.is_some() {
            ev.kind = Some(Kind::Crash);
        }
        match first {
            Err(refusal) => {
                if ev.kind.is_none() && o.accepted() {
                    ev.kind = Some(Kind::InvalidAccepted);
                } else if ev.kind.is_none() && ev.archive.is_some() {
                    ev.kind = Some(Kind::ArchiveLeft);
                }
                ev.refused = Some(refusal);
                return Ok(Some(ev));
            }
            Ok(()) => ev.expected = Some(expected.clone()),
        }
        if ev.kind.is_some() {
            return Ok(Some(ev));
        }
        if !o.accepted() {
            ev.kind = Some(Kind::ValidRefused);
            return Ok(Some(ev));
        }
        if ev.archive.is_none() {
            ev.kind = Some(Kind::NoArchive);
            ev.detail = format!("exit 0 but nothing at {}", archive.display());
            return Ok(Some(ev));
        }
        // A FIFO left there would block the reading forever.
        if !std::fs::symlink_metadata(&archive).is_ok_and(|m| m.is_file()) {
            ev.kind = Some(Kind::InvalidArchive);
            ev.detail = format!("{} is not a regular file", archive.display());
            return Ok(Some(ev));
        }
        // Checked as a stream, in the verifier's bounded memory.
        let report = match ndarc_verify::verify_path(&archive, &self.verify) {
            Ok(r) => r,
            Err(e) => {
                ev.kind = Some(Kind::InvalidArchive);
                ev.detail = format!("cannot read the archive: {e}");
                return Ok(Some(ev));
            }
        };
        if !report.is_valid(false) {
            ev.kind = Some(Kind::InvalidArchive);
            ev.detail = report
                .findings
                .iter()
                .filter(|f| f.severity == ndarc_format::Severity::Error)
                .take(3)
                .map(finding_text)
                .collect::<Vec<_>>()
                .join("; ");
            return Ok(Some(ev));
        }
        let header = reference_options(report.manifest.as_ref());
        reference(&db, &header, &expected).map_err(|(code, msg)| {
            Failure::new(format!(
                "ndarc pack refused a database it had packed, under the producer's header: {code}: {msg}"
            ))
        })?;
        let want = ndarc_verify::verify_path(&expected, &self.verify)
            .map_err(|e| Failure::new(format!("cannot read {}: {e}", expected.display())))?;
        if !want.is_valid(false) {
            return Err(Failure::new(format!(
                "ndarc pack wrote an invalid archive (a bug in ndarc): {}",
                want.findings
                    .first()
                    .map_or(String::new(), |f| format!("{}: {}", f.code, f.message))
            )));
        }
        if want.content_hash != report.content_hash {
            ev.kind = Some(Kind::ContentMismatch);
            ev.detail = difference(&expected, &archive);
        }
        ev.expected = Some(expected);
        Ok(Some(ev))
    }
}

/// A finding of the producer's archive as the report shows it: line, byte
/// offset and JSON pointer, so its author can find it (`verify`'s human
/// form without the file name).
fn finding_text(f: &ndarc_format::Finding) -> String {
    let at = if f.pointer.is_empty() {
        String::new()
    } else {
        format!(" (at {})", f.pointer)
    };
    format!(
        "line {}, byte {}: {}: {}{at}",
        f.line, f.offset, f.code, f.message
    )
}

/// The first differences between `pack`'s archive and the producer's, as
/// `ndarc diff` shows them (three rows a kind and table at most).
fn difference(expected: &Path, actual: &Path) -> String {
    let opts = ndarc_diff::Options {
        allow_product_mismatch: true,
        ..ndarc_diff::Options::default()
    };
    let d = match ndarc_diff::diff_labeled(
        ("ndarc pack", ndarc_diff::Source::Path(expected)),
        ("producer", ndarc_diff::Source::Path(actual)),
        &opts,
    ) {
        Ok(d) => d,
        Err(e) => return format!("cannot diff: {e}"),
    };
    let mut buf = Vec::new();
    let ro = ndarc_diff::render::RenderOptions {
        colour: false,
        max_rows: Some(3),
        full_rows: false,
        max_bytes: None,
    };
    if ndarc_diff::render::human(&d, &ro, &mut buf).is_err() {
        return "cannot render the difference".to_string();
    }
    let mut s = String::from_utf8_lossy(&buf).into_owned();
    if s.len() > 4000 {
        let mut cut = 4000;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("\n…");
    }
    s
}

/// One problem found, after shrinking.
struct Problem {
    run: u64,
    db_seed: u64,
    planned: Option<&'static str>,
    kind: Kind,
    original: String,
    shrunk: String,
    shrink_runs: usize,
    eval: Eval,
    files: Vec<String>,
}

impl Problem {
    fn json(&self) -> serde_json::Value {
        let o = &self.eval.outcome;
        serde_json::json!({
            "kind": self.kind.as_str(),
            "run": self.run,
            "dbSeed": self.db_seed,
            "plannedRefusal": self.planned,
            "expectedRefusal": self.eval.refused.as_ref().map(|r| &r.0),
            "expectedMessage": self.eval.refused.as_ref().map(|r| &r.1),
            "database": self.original,
            "shrunk": self.shrunk,
            "shrinkRuns": self.shrink_runs,
            "detail": self.eval.detail,
            "exitCode": o.code,
            "signal": o.signal,
            "timedOut": o.timed_out,
            "elapsedSeconds": o.elapsed.as_secs_f64(),
            "stdout": o.stdout,
            "stderr": o.stderr,
            "files": self.files,
        })
    }
}

/// Runs `ndarc fuzz-producer`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    let words = args.run.words()?;
    if let Some(dir) = &args.run.outdir {
        prepare_outdir(dir, args.run.force)?;
    }
    let session = Session {
        words,
        timeout: args.run.time_limit(),
        max_output: args.max_output,
        scratch: Scratch::new("fuzz-producer")?,
        verify: ndarc_verify::Options {
            jobs: 1,
            max_errors: 10,
            ..ndarc_verify::Options::default()
        },
    };
    let gen = FuzzOptions {
        max_rows: args.max_rows,
        ..FuzzOptions::default()
    };
    let schema = read_schema(&args)?;
    let start = Instant::now();
    let mut found = Found::default();
    // Runs, agreements, findings and shrinking, on a terminal only.
    let mut shown = Shown {
        status: term::StatusLine::for_stderr(args.quiet.quiet),
        progress: Progress {
            total: args.run.runs,
            ..Progress::default()
        },
    };
    shown.update();
    for run in 0..args.run.runs {
        if run > 0 {
            shown.update();
        }
        let db = match &schema {
            // Every other run from the author's schema.
            Some(schema) if run % 2 == 1 => {
                schema.generate(ndarc_gen::derive(args.run.seed, run), &gen)
            }
            _ => fuzzdb::for_run(args.run.seed, run, &gen),
        };
        one_run(&args, &session, run, &db, &mut found, &mut shown)?;
    }
    shown.status.clear();
    let elapsed = start.elapsed().as_secs_f64();
    let summary = summary(&args, &session, &found, elapsed);
    let problems = &found.problems;
    let mut text = serde_json::to_vec_pretty(&summary)
        .map_err(|e| Failure::new(format!("cannot write the summary: {e}")))?;
    text.push(b'\n');
    if let Some(dir) = &args.run.outdir {
        write_atomic(
            &dir.join("summary.json"),
            &text,
            args.run.force,
            crate::io::FileMode::Umask,
        )?;
    }
    let out = if args.quiet.quiet {
        Vec::new()
    } else if args.format.get() == Format::Json {
        text
    } else {
        human(&args, &session.words, problems, &summary, ctx).into_bytes()
    };
    std::io::stdout()
        .lock()
        .write_all(&out)
        .map_err(|e| Failure::io("cannot write <stdout>", &e))?;
    Ok(if problems.is_empty() {
        Status::Success
    } else {
        Status::Findings
    })
}

/// The author's schema (`--schema`), parsed.
fn read_schema(args: &Args) -> Result<Option<ndarc_sqlite::fuzzschema::Schema>, Failure> {
    let Some(path) = &args.schema else {
        return Ok(None);
    };
    let sql = std::fs::read_to_string(path).map_err(|e| Failure::path("cannot read", path, &e))?;
    Ok(Some(
        ndarc_sqlite::fuzzschema::Schema::parse(&sql)
            .map_err(|e| Failure::new(format!("--schema {}: {e}", path.display())))?,
    ))
}

/// What the runs found so far.
#[derive(Default)]
struct Found {
    problems: Vec<Problem>,
    /// Databases that pack, and databases the packer must refuse.
    archivable: u64,
    refusable: u64,
    /// Refusals by code.
    refusal_codes: std::collections::BTreeMap<String, u64>,
    /// Runs whose refusal is not the planned one.
    planned_mismatch: Vec<serde_json::Value>,
}

/// The status line (on a terminal only) and what it shows.
struct Shown {
    status: term::StatusLine,
    progress: Progress,
}

impl Shown {
    fn update(&mut self) {
        self.status
            .set(&progress_text("fuzz-producer", &self.progress));
    }
}

/// Run `run`: feeds database `db` to the producer; a problem is shrunk and
/// kept (its files in `--outdir`).
fn one_run(
    args: &Args,
    session: &Session,
    run: u64,
    db: &fuzzdb::FuzzDb,
    found: &mut Found,
    shown: &mut Shown,
) -> Result<(), Failure> {
    let ev = session.eval(&db.spec)?.ok_or_else(|| {
        Failure::new(format!(
            "cannot write the database of run {run} (a bug in the generator)"
        ))
    })?;
    match &ev.refused {
        Some((code, _)) => {
            found.refusable += 1;
            *found.refusal_codes.entry(code.clone()).or_default() += 1;
        }
        None => found.archivable += 1,
    }
    let planned = db.refusal.map(|r| r.code());
    if planned != ev.refused.as_ref().map(|r| r.0.as_str()) {
        found.planned_mismatch.push(serde_json::json!({
            "run": run,
            "planned": planned,
            "pack": ev.refused.as_ref().map(|r| &r.0),
        }));
    }
    shown.progress.done += 1;
    let Some(kind) = ev.kind else {
        shown.progress.agreed += 1;
        return Ok(());
    };
    shown.progress.findings += 1;
    let (small, tries) = if kind == Kind::Timeout {
        (db.spec.clone(), 0)
    } else {
        let mut tried = 0usize;
        fuzzdb::shrink(&db.spec, args.shrink_budget, |cand| {
            if shown.status.enabled() {
                shown.status.set(&progress_text(
                    "fuzz-producer",
                    &Progress {
                        shrinking: Some(tried),
                        ..shown.progress
                    },
                ));
            }
            tried += 1;
            matches!(session.eval(cand), Ok(Some(e)) if e.kind == Some(kind))
        })
    };
    // Feed the smallest database again for its files and details (the
    // scratch files are the last run's); when it no longer fails the
    // same way (a producer that is not deterministic), the original.
    let last = match session.eval(&small)? {
        Some(e) if e.kind == Some(kind) => e,
        _ => session.eval(&db.spec)?.unwrap_or(ev),
    };
    let mut p = Problem {
        run,
        db_seed: db.seed,
        planned,
        kind,
        original: db.spec.describe(),
        shrunk: small.describe(),
        shrink_runs: tries,
        eval: last,
        files: Vec::new(),
    };
    if let Some(dir) = &args.run.outdir {
        p.files = keep(session, dir, &p, args.run.force)?;
    }
    found.problems.push(p);
    Ok(())
}

/// The summary document (`summary.json`, `--format json`).
fn summary(args: &Args, session: &Session, found: &Found, elapsed: f64) -> serde_json::Value {
    let problems = &found.problems;
    let count = |k: Kind| problems.iter().filter(|p| p.kind == k).count();
    let by_kind: serde_json::Map<String, serde_json::Value> = Kind::ALL
        .iter()
        .map(|&k| (k.as_str().to_string(), count(k).into()))
        .collect();
    serde_json::json!({
        "command": session.words,
        "runs": args.run.runs,
        "seed": args.run.seed,
        "timeoutSeconds": args.run.timeout,
        "archivable": found.archivable,
        "mustRefuse": found.refusable,
        "refusalCodes": found.refusal_codes,
        "agreed": args.run.runs - problems.len() as u64,
        "disagreements": problems.iter().filter(|p| !matches!(p.kind, Kind::Crash | Kind::Timeout)).count(),
        "crashes": count(Kind::Crash),
        "timeouts": count(Kind::Timeout),
        "kinds": by_kind,
        "plannedRefusalMismatches": found.planned_mismatch,
        "elapsedSeconds": elapsed,
        "problems": problems.iter().map(Problem::json).collect::<Vec<_>>(),
    })
}

/// Copies a problem's shrunk database and archives to `dir`: the names come
/// from the run number and the kind only.
fn keep(session: &Session, dir: &Path, p: &Problem, force: bool) -> Result<Vec<String>, Failure> {
    let stem = format!("{:04}-{}", p.run, p.kind.as_str());
    let mut files = Vec::new();
    let db = session.db_path();
    let bytes = std::fs::read(&db).map_err(|e| Failure::path("cannot read", &db, &e))?;
    let name = format!("{stem}.db");
    write_atomic(&dir.join(&name), &bytes, force, crate::io::ARCHIVE_MODE)?;
    files.push(name);
    for (from, suffix) in [
        (&p.eval.archive, "ndjson"),
        (&p.eval.expected, "expected.ndjson"),
    ] {
        let Some(from) = from else { continue };
        let name = format!("{stem}.{suffix}");
        copy_atomic(from, &dir.join(&name), force)?;
        files.push(name);
    }
    Ok(files)
}

/// Copies the regular file `from` (a scratch archive, which the producer
/// may have made anything) to `to` through a temporary sibling, streamed.
fn copy_atomic(from: &Path, to: &Path, force: bool) -> Result<(), Failure> {
    let meta =
        std::fs::symlink_metadata(from).map_err(|e| Failure::path("cannot read", from, &e))?;
    if !meta.is_file() {
        return Err(Failure::new(format!(
            "{} is not a regular file; not kept",
            from.display()
        )));
    }
    let mut src = std::fs::File::open(from).map_err(|e| Failure::path("cannot read", from, &e))?;
    let mut f = crate::io::AtomicFile::create_with(to, force, crate::io::ARCHIVE_MODE)?;
    std::io::copy(&mut src, &mut f).map_err(|e| Failure::path("cannot write", to, &e))?;
    f.commit()
}

fn human(
    args: &Args,
    words: &[String],
    problems: &[Problem],
    summary: &serde_json::Value,
    ctx: &Context,
) -> String {
    let c = ctx.colour.stdout;
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    let mut s = format!(
        "fuzz-producer: {} databases (seed {}) fed to: {}\n",
        args.run.runs,
        args.run.seed,
        shown_command(words)
    );
    s.push_str(&format!(
        "  archivable: {}; must be refused: {}; agreed: {}\n",
        n("archivable"),
        n("mustRefuse"),
        n("agreed")
    ));
    s.push_str(&format!(
        "  disagreements: {}; crashes: {}; time-outs: {}; {:.1} s\n",
        n("disagreements"),
        n("crashes"),
        n("timeouts"),
        summary["elapsedSeconds"].as_f64().unwrap_or(0.0)
    ));
    if let Some(m) = summary["plannedRefusalMismatches"].as_array() {
        if !m.is_empty() {
            s.push_str(&format!(
                "  note: on {} runs ndarc pack's refusal is not the one planned\n",
                m.len()
            ));
        }
    }
    if !problems.is_empty() {
        s.push('\n');
    }
    for p in problems {
        let o = &p.eval.outcome;
        let how = o.how(args.run.timeout);
        let style = match p.kind {
            Kind::Crash | Kind::Timeout => Style::Warning,
            _ => Style::Error,
        };
        let why = match &p.eval.refused {
            Some((code, _)) => format!(" (ndarc pack refuses it: {code})"),
            None => String::new(),
        };
        s.push_str(&format!(
            "{}: run {}: {how}{why}; shrunk from {} to {} in {} runs",
            paint(c, style, p.kind.as_str()),
            p.run,
            p.original,
            p.shrunk,
            p.shrink_runs
        ));
        s.push('\n');
        // Every file kept for it, as summary.json's `files` names them.
        if let (Some(dir), false) = (&args.run.outdir, p.files.is_empty()) {
            let paths: Vec<String> = p
                .files
                .iter()
                .map(|f| dir.join(f).display().to_string())
                .collect();
            s.push_str(&format!("  files: {}\n", term::one_line(&paths.join(", "))));
        }
        for line in p.eval.detail.lines().take(12) {
            s.push_str(&format!("  {line}\n"));
        }
        s.push_str(&o.stderr_line());
    }
    s.push_str(&args.run.summary_line());
    s
}
