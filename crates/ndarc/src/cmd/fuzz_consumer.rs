//! `ndarc fuzz-consumer`: feed generated archives and their mutants to a
//! third-party importer or validator and report where it disagrees with
//! the format.
//!
//! Each run generates a small valid archive (ndarc-gen's generator,
//! with sizes and features drawn from the seed) and one mutant of it that
//! breaks one rule; both are written to a private temporary directory and
//! the consumer is run on each, without a shell. A valid archive must be
//! accepted (exit 0), a mutant rejected (any other exit). The consumer is
//! also reported when a signal kills it (a crash) or it outlives
//! `--timeout` (its whole process group is then killed).

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use ndarc_format::{Code, Severity};
use ndarc_gen::mutate::file_codes;
use ndarc_gen::{derive, generate_vec, mutate, GenOptions, Rng, Rows};

use crate::child::{
    self, progress_text, run_child, shown_command, substitute, Outcome, Progress, RunArgs, Scratch,
    ARCHIVE_TOKEN,
};
use crate::cmd::mutate::{parse_code, prepare_outdir, write_atomic};
use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{DatabaseTables, Format, FormatArg, Mode, PackTables, Quiet};
use crate::io::{AtomicFile, FileMode, ARCHIVE_MODE};
use crate::term::{self, paint, Style};
use crate::Context;

const EXAMPLES: &str = "\
Examples:
  Twenty runs against an importer (the path replaces {archive}):
    ndarc fuzz-consumer --exec './import --dry-run {archive}'

  More runs, a time limit, and the archives that show a problem kept:
    ndarc fuzz-consumer --exec 'python3 validate.py --file={archive}' \\
        --runs 200 --seed 7 --timeout 5 --outdir fuzz-out/

  Only some rules, machine-readable:
    ndarc fuzz-consumer --exec 'node check.js' --codes sha256_mismatch,content_hash_mismatch --format json

  Mutants of your own export (an importer that checks the product or schema):
    ndarc fuzz-consumer --exec './import --dry-run {archive}' --base export.ndjson --runs 100

  ndarc's own verifier agrees with the format (no disagreement):
    ndarc fuzz-consumer --exec 'ndarc verify -q {archive}'

The command is split into words as a POSIX shell would split them (single and double
quotes, backslashes) but no shell runs it: no pipes, redirections, variables or globs. A
word holding {archive} has it replaced by the archive's path; without {archive}, the path
is the last argument. Standard input is empty; of standard output and error only the first
--max-output bytes are kept (the rest is read and dropped), and only for the archives that
show a problem. When the consumer ends, its process group is killed, so background children
do not outlive it.

Exit status: 0 the consumer agreed on every archive, 1 a disagreement, crash or time-out,
2 could not run (usage, a command that cannot be started, I/O).";

/// Arguments of `ndarc fuzz-consumer`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Feed generated archives and their mutants to an importer; report where it disagrees",
    long_about = "Test a third-party importer or validator against the format: each run generates a \
small valid archive (sizes and features drawn from the seed) and a mutant of it that breaks exactly \
one rule (the rules taken in turn, in a seed-chosen order), and runs the command on both. A valid \
archive must be accepted (exit 0) and a mutant rejected (non-zero exit): an invalid archive \
accepted or a valid one rejected is a disagreement. A consumer killed by a signal is a crash; one \
still running after --timeout seconds is a time-out, and its whole process group is killed.

With --base ARCHIVE, the mutants are made from that archive (the user's own export, for a \
consumer that checks the product or schema) instead of generated ones; it is fed once as the \
valid archive.

Archives are written to a private temporary directory (ndarc-fuzz-consumer-PID-… in TMPDIR) \
and removed afterwards, or by the next run if this one is killed outright; with --outdir, \
each archive that shows a problem is copied there (RUN-valid.ndjson or RUN-CODE.ndjson) with \
summary.json. Mutants of warning codes (still importable) are not fed.

The report ends with a table per code: mutants tried, caught (rejected), missed (accepted), \
misses first, the most harmful first (an unsafe or corrupt archive accepted before a cosmetic \
order rule). On a terminal, a line on standard error shows the runs done, agreed and the \
findings so far (not with --quiet).",
    after_help = EXAMPLES,
    mut_arg("exec", |a| a.help("The consumer: a command with {archive} where the path goes")),
    mut_arg("runs", |a| a.help("Runs: each feeds one valid archive and one mutant")),
    mut_arg("seed", |a| a.help("The seed of the archives, the rules' order and the mutants")),
    mut_arg("timeout", |a| a.help("Kill the consumer (its process group) after this many seconds")),
    mut_arg("outdir", |a| a.help(
        "Copy the archives that show a problem, and summary.json, here \
         (created if missing; must be empty unless --force)"
    )),
    mut_arg("mode", |a| a.requires("outdir")),
)]
pub struct Args {
    /// `--exec`, `--runs`, `--seed`, `--timeout`, `--outdir`, `--force`.
    #[command(flatten)]
    pub run: RunArgs,
    /// `--format human|json`: the summary as text or as JSON.
    #[command(flatten)]
    pub format: FormatArg,
    /// `--mode`: of the archives copied to --outdir (only with it).
    #[command(flatten)]
    pub mode: Mode,
    /// `--quiet`: no report and no progress line; the exit status (and
    /// summary.json with --outdir) tells.
    #[command(flatten)]
    pub quiet: Quiet,
    /// `--exclude-table`, `--include-table`, `--secret-column`, as `pack`
    /// takes them, for a database --base.
    #[command(flatten)]
    pub tables: DatabaseTables,
    /// Only mutants of these codes (comma-separated, repeatable); default:
    /// every error code a file can show.
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    pub codes: Vec<String>,
    /// Make the mutants from this archive (the user's own export, held in
    /// memory; at most 256M) instead of generated ones, for a consumer
    /// that checks the product or the schema: it must be valid; it is fed
    /// once as the valid archive, and each run feeds one mutant of it.
    #[arg(long, value_name = "ARCHIVE")]
    pub base: Option<PathBuf>,
    /// Keep at most this many bytes of the consumer's standard output and
    /// error per archive in the report (K, M suffixes; at most 1M).
    #[arg(long, default_value = "2000", value_name = "BYTES", value_parser = child::parse_max_output)]
    pub max_output: usize,
}

// ------------------------------------------------------------------ runs

/// Small generator options drawn from `seed`: 0–6 tables of 0–13 rows, up
/// to 3 objects and 3 payloads, parts of 1 to 5 KB.
pub(crate) fn run_options(seed: u64) -> GenOptions {
    let mut r = Rng::new(seed);
    let lo = r.below(6);
    let span = r.below(8);
    GenOptions {
        seed: r.next_u64(),
        tables: r.below(7) as usize,
        kinds: None,
        rows: Rows::Between(lo, lo + span),
        objects: r.below(4),
        object_bytes: r.below(1500),
        large_object: r.one_in(3),
        payloads: r.below(4),
        payload_bytes: r.below(600),
        part_bytes: 1024 + r.below(4096) as usize,
        excluded_tables: r.one_in(2),
        migrations: r.one_in(2),
        product: "ndarc-fuzz-consumer".to_string(),
        later: None,
        shuffle_rows: None,
    }
}

/// What a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A mutant (invalid) accepted.
    InvalidAccepted,
    /// A valid archive rejected.
    ValidRejected,
    /// Killed by a signal.
    Crash,
    /// Killed after the time limit.
    Timeout,
}

impl Kind {
    /// The snake_case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::InvalidAccepted => "invalid_accepted",
            Kind::ValidRejected => "valid_rejected",
            Kind::Crash => "crash",
            Kind::Timeout => "timeout",
        }
    }
}

struct Fed {
    run: u64,
    gen_seed: u64,
    /// `None` for the valid archive.
    mutant: Option<ndarc_gen::Mutant>,
    outcome: Outcome,
    file: String,
}

impl Fed {
    fn problem(&self) -> Option<Kind> {
        let o = &self.outcome;
        if o.timed_out {
            Some(Kind::Timeout)
        } else if o.signal.is_some() {
            Some(Kind::Crash)
        } else if self.mutant.is_some() && o.accepted() {
            Some(Kind::InvalidAccepted)
        } else if self.mutant.is_none() && !o.accepted() {
            Some(Kind::ValidRejected)
        } else {
            None
        }
    }

    fn json(&self, kind: Option<Kind>, saved: Option<&str>) -> serde_json::Value {
        let m = self.mutant.as_ref();
        serde_json::json!({
            "kind": kind.map(Kind::as_str),
            "run": self.run,
            "genSeed": self.gen_seed,
            "archive": if m.is_some() { "mutant" } else { "valid" },
            "code": m.map(|m| m.code.as_str()),
            "mutation": m.map(|m| m.mutation),
            "line": m.map(|m| m.line),
            "description": m.map(|m| m.description.clone()),
            "file": saved,
            "exitCode": self.outcome.code,
            "signal": self.outcome.signal,
            "timedOut": self.outcome.timed_out,
            "elapsedSeconds": self.outcome.elapsed.as_secs_f64(),
            "stdout": self.outcome.stdout,
            "stderr": self.outcome.stderr,
        })
    }
}

/// The codes to mutate, in a seed-chosen order.
fn code_order(args: &Args) -> Result<Vec<Code>, Failure> {
    let mut codes = if args.codes.is_empty() {
        file_codes()
            .into_iter()
            .filter(|c| c.severity() == Severity::Error)
            .collect()
    } else {
        let mut v = Vec::new();
        for name in &args.codes {
            let c = parse_code(name)?;
            if c.severity() != Severity::Error {
                return Err(Failure::new(format!(
                    "{c} is a warning: an archive with it is still valid, so no consumer has to reject it"
                )));
            }
            if !file_codes().contains(&c) {
                return Err(Failure::new(format!(
                    "{c} is reported only by the push API; no file shows it"
                )));
            }
            if !v.contains(&c) {
                v.push(c);
            }
        }
        v
    };
    let mut r = Rng::new(derive(args.run.seed, 0xc0de));
    for i in (1..codes.len()).rev() {
        let j = r.below(i as u64 + 1) as usize;
        codes.swap(i, j);
    }
    Ok(codes)
}

/// The largest `--base` archive: it is held in memory with a mutant.
const MAX_BASE_BYTES: u64 = 256 << 20;

/// The `--base` archive, read and verified (not valid: exit 2).
fn read_base(path: &Path, tables: &PackTables) -> Result<Vec<u8>, Failure> {
    if crate::dbinput::is_database(path) {
        // A database is packed on the fly, as `verify` does; the archive
        // is verified below like any other.
        let header = tables.apply(crate::dbinput::Header::for_database(path));
        let bytes =
            crate::dbinput::pack_to_vec(path, &header, MAX_BASE_BYTES as usize).map_err(|why| {
                Failure::new(match why {
                    Some(why) => format!("--base {}: {why}", path.display()),
                    None => format!(
                        "--base {}: packs to more than 256M; mutants are made in memory",
                        path.display()
                    ),
                })
            })?;
        return verified_base(path, bytes);
    }
    let file = fs::File::open(path).map_err(|e| Failure::path("cannot read", path, &e))?;
    let mut bytes = Vec::new();
    file.take(MAX_BASE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::path("cannot read", path, &e))?;
    if bytes.len() as u64 > MAX_BASE_BYTES {
        return Err(Failure::new(format!(
            "--base {}: larger than 256M; mutants are made in memory",
            path.display()
        )));
    }
    verified_base(path, bytes)
}

/// `bytes` if they are a valid archive (else exit 2).
fn verified_base(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, Failure> {
    let report = ndarc_verify::verify_bytes(&bytes, &ndarc_verify::Options::default());
    if !report.is_valid(false) {
        let first = report
            .findings
            .iter()
            .find(|f| f.severity == Severity::Error)
            .map_or(String::new(), |f| {
                format!("; line {}: {}: {}", f.line, f.code, f.message)
            });
        return Err(Failure::new(format!(
            "--base {}: not a valid archive ({} errors{first}); `ndarc verify {}` lists them",
            path.display(),
            report.errors,
            term::shell_word(&path.display().to_string())
        )));
    }
    Ok(bytes)
}

/// Runs `ndarc fuzz-consumer`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    let words = args.run.words()?;
    let codes = code_order(&args)?;
    if let Some(dir) = &args.run.outdir {
        prepare_outdir(dir, args.run.force)?;
    }
    args.tables
        .refuse_without_database(args.base.as_deref(), "")?;
    let tables = args.tables.checked()?;
    let base = args
        .base
        .as_deref()
        .map(|p| read_base(p, &tables))
        .transpose()?;
    let scratch = Scratch::new("fuzz-consumer")?;
    let timeout = args.run.time_limit();
    let mut fed: Vec<Fed> = Vec::new();
    let mut next_code = 0usize;
    // Runs, agreements and findings so far, on a terminal only.
    let mut status = term::StatusLine::for_stderr(args.quiet.quiet);
    let mut progress = Progress {
        total: args.run.runs,
        ..Progress::default()
    };
    status.set(&progress_text("fuzz-consumer", &progress));
    for run in 0..args.run.runs {
        let mut agreed = true;
        let opts = run_options(derive(args.run.seed, run));
        // The user's archive, or one generated for the run.
        let (valid, gen_seed) = match &base {
            Some(b) => (b.clone(), 0),
            None => (
                generate_vec(&opts)
                    .map_err(|e| Failure::new(format!("cannot generate run {run}: {e}")))?
                    .0,
                opts.seed,
            ),
        };
        let mut mutant = None;
        for _ in 0..codes.len() {
            let code = codes[next_code % codes.len()];
            next_code += 1;
            if let Ok(m) = mutate(&valid, code, derive(args.run.seed ^ 0x6d75, run)) {
                mutant = Some(m);
                break;
            }
        }
        // A --base archive is fed once, in run 0.
        let mut feed = if base.is_none() || run == 0 {
            vec![(None, valid)]
        } else {
            Vec::new()
        };
        if let Some(m) = mutant {
            let bytes = m.bytes.clone();
            feed.push((Some(m), bytes));
        }
        for (m, bytes) in feed {
            let file = match &m {
                None => format!("{run:04}-valid.ndjson"),
                Some(m) => format!("{run:04}-{}.ndjson", m.code.as_str()),
            };
            let path = scratch.path().join(&file);
            fs::write(&path, &bytes).map_err(|e| Failure::path("cannot write", &path, &e))?;
            let argv = substitute(&words, &[(ARCHIVE_TOKEN, &path)]);
            let outcome = run_child(&argv, timeout, args.max_output)
                .map_err(|e| Failure::io(format_args!("cannot run {}", words[0]), &e))?;
            let mut f = Fed {
                run,
                gen_seed,
                mutant: m,
                outcome,
                file,
            };
            if f.problem().is_some() {
                agreed = false;
                progress.findings += 1;
            } else {
                let _ = fs::remove_file(&path);
                // Only problems are reported: their output is all that is
                // kept, and a mutant's bytes are dropped with it.
                f.outcome.stdout = String::new();
                f.outcome.stderr = String::new();
                if let Some(m) = &mut f.mutant {
                    m.bytes = Vec::new();
                }
            }
            fed.push(f);
            status.set(&progress_text("fuzz-consumer", &progress));
        }
        progress.done += 1;
        progress.agreed += u64::from(agreed);
        status.set(&progress_text("fuzz-consumer", &progress));
    }
    status.clear();
    report(&args, &words, &fed, &scratch, ctx)
}

fn report(
    args: &Args,
    words: &[String],
    fed: &[Fed],
    scratch: &Scratch,
    ctx: &Context,
) -> CmdResult {
    let mut problems = Vec::new();
    let count = |k: Kind| fed.iter().filter(|f| f.problem() == Some(k)).count();
    for f in fed {
        let Some(kind) = f.problem() else {
            continue;
        };
        let saved = match &args.run.outdir {
            Some(dir) => {
                let from = scratch.path().join(&f.file);
                let bytes = fs::read(&from).map_err(|e| Failure::path("cannot read", &from, &e))?;
                let mode = args.mode.mode.map_or(ARCHIVE_MODE, FileMode::Exact);
                write_atomic(&dir.join(&f.file), &bytes, args.run.force, mode)?;
                Some(f.file.clone())
            }
            None => None,
        };
        problems.push((f, kind, saved));
    }
    // Accepted: exit 0; rejected: another exit status; crashes and
    // time-outs are counted apart.
    let tally = |mutants: bool| {
        let (mut n, mut acc, mut rej) = (0, 0, 0);
        for f in fed.iter().filter(|f| f.mutant.is_some() == mutants) {
            n += 1;
            if !f.outcome.timed_out && f.outcome.signal.is_none() {
                if f.outcome.accepted() {
                    acc += 1;
                } else {
                    rej += 1;
                }
            }
        }
        serde_json::json!({"fed": n, "accepted": acc, "rejected": rej})
    };
    let disagreements = count(Kind::InvalidAccepted) + count(Kind::ValidRejected);
    let summary = serde_json::json!({
        "command": words,
        "runs": args.run.runs,
        "seed": args.run.seed,
        "base": args.base.as_ref().map(|p| p.display().to_string()),
        "timeoutSeconds": args.run.timeout,
        "archives": fed.len(),
        "valid": tally(false),
        "mutants": tally(true),
        "disagreements": disagreements,
        "invalidAccepted": count(Kind::InvalidAccepted),
        "validRejected": count(Kind::ValidRejected),
        "crashes": count(Kind::Crash),
        "timeouts": count(Kind::Timeout),
        "problems": problems.iter().map(|(f, k, s)| f.json(Some(*k), s.as_deref())).collect::<Vec<_>>(),
        "codes": code_table(fed).iter().map(CodeRow::json).collect::<Vec<_>>(),
    });
    // Written straight from the value: no second copy as text.
    let write_json = |w: &mut dyn Write| -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, &summary)?;
        w.write_all(b"\n")
    };
    if let Some(dir) = &args.run.outdir {
        let dest = dir.join("summary.json");
        let mut f = AtomicFile::create(&dest, args.run.force)?;
        write_json(&mut f).map_err(|e| Failure::path("cannot write", &dest, &e))?;
        f.commit()?;
    }
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if args.quiet.quiet {
        Ok(())
    } else if args.format.get() == Format::Json {
        write_json(&mut stdout)
    } else {
        let text = human(args, words, fed, &problems, &summary, ctx);
        stdout.write_all(text.as_bytes())
    };
    written
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::io("cannot write <stdout>", &e))?;
    Ok(if problems.is_empty() {
        Status::Success
    } else {
        Status::Findings
    })
}

fn human(
    args: &Args,
    words: &[String],
    fed: &[Fed],
    problems: &[(&Fed, Kind, Option<String>)],
    summary: &serde_json::Value,
    ctx: &Context,
) -> String {
    let c = ctx.colour.stdout;
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    let t = |k: &str, f: &str| summary[k][f].as_u64().unwrap_or(0);
    let mut s = format!(
        "fuzz-consumer: {} runs (seed {}), {} archives fed to: {}\n",
        args.run.runs,
        args.run.seed,
        fed.len(),
        term::safe_text(&shown_command(words))
    );
    s.push_str(&format!(
        "  valid archives: {} fed, {} accepted, {} rejected\n",
        t("valid", "fed"),
        t("valid", "accepted"),
        t("valid", "rejected")
    ));
    s.push_str(&format!(
        "  mutants:        {} fed, {} rejected, {} accepted\n",
        t("mutants", "fed"),
        t("mutants", "rejected"),
        t("mutants", "accepted")
    ));
    s.push_str(&format!(
        "  disagreements:  {} ({} invalid accepted, {} valid rejected); crashes: {}; time-outs: {}\n",
        n("disagreements"),
        n("invalidAccepted"),
        n("validRejected"),
        n("crashes"),
        n("timeouts")
    ));
    if !problems.is_empty() {
        s.push('\n');
    }
    for (f, kind, saved) in problems {
        let what = match &f.mutant {
            Some(m) => format!(
                "mutant {} at line {} ({}): {}",
                m.code,
                m.line,
                m.mutation,
                term::one_line(&m.description)
            ),
            None => "valid archive".to_string(),
        };
        let how = f.outcome.how(args.run.timeout);
        let style = match kind {
            Kind::Crash | Kind::Timeout => Style::Warning,
            _ => Style::Error,
        };
        // Escaped piece by piece: the styling around the kind is ours.
        s.push_str(&format!(
            "{}: run {}: {}: {}",
            paint(c, style, kind.as_str()),
            f.run,
            term::safe_text(&what),
            term::safe_text(&how)
        ));
        if let (Some(dir), Some(file)) = (&args.run.outdir, saved) {
            let path = dir.join(file).display().to_string();
            s.push_str(&format!(" -> {}", term::safe_text(&path)));
        }
        s.push('\n');
        s.push_str(&term::safe_text(&f.outcome.stderr_line()));
    }
    s.push_str(&table_text(&code_table(fed)));
    s.push_str(&term::safe_text(&args.run.summary_line()));
    s
}

/// One row of the per-code table: the mutants of one code fed, and what
/// the consumer did with them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodeRow {
    code: Code,
    /// Mutants fed.
    tried: u64,
    /// Rejected (a non-zero exit): the consumer caught the fault.
    caught: u64,
    /// Accepted (exit 0): the consumer missed it. Crashes and time-outs
    /// are neither; they count in `tried` only.
    missed: u64,
}

impl CodeRow {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "code": self.code.as_str(),
            "harm": self.code.harm().as_str(),
            "tried": self.tried,
            "caught": self.caught,
            "missed": self.missed,
        })
    }
}

/// The per-code table: a row for each code a mutant of was fed, misses
/// first, ranked by the harm of accepting the code ([`Code::harm`]:
/// unsafe and corrupt archives first, cosmetic order rules last), then by
/// name.
fn code_table(fed: &[Fed]) -> Vec<CodeRow> {
    let mut rows: Vec<CodeRow> = Vec::new();
    for f in fed {
        let Some(m) = &f.mutant else { continue };
        let i = match rows.iter().position(|r| r.code == m.code) {
            Some(i) => i,
            None => {
                rows.push(CodeRow {
                    code: m.code,
                    tried: 0,
                    caught: 0,
                    missed: 0,
                });
                rows.len() - 1
            }
        };
        let r = &mut rows[i];
        r.tried += 1;
        let o = &f.outcome;
        if !o.timed_out && o.signal.is_none() {
            if o.accepted() {
                r.missed += 1;
            } else {
                r.caught += 1;
            }
        }
    }
    rows.sort_by_key(|r| (r.missed == 0, r.code.harm(), r.code.as_str()));
    rows
}

/// The per-code table as text, after a blank line; empty when no mutant
/// was fed.
fn table_text(rows: &[CodeRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let w = rows
        .iter()
        .map(|r| r.code.as_str().len())
        .max()
        .unwrap_or(0)
        .max("code".len());
    let mut s = format!(
        "\nper code (misses first, most harmful first):\n  {:<w$}  {:<8}  {:>5}  {:>6}  {:>6}\n",
        "code", "harm", "tried", "caught", "missed"
    );
    for r in rows {
        s.push_str(&format!(
            "  {:<w$}  {:<8}  {:>5}  {:>6}  {:>6}\n",
            r.code.as_str(),
            r.code.harm().as_str(),
            r.tried,
            r.caught,
            r.missed
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_text_aligns_and_ranks() {
        let row = |code, tried, caught, missed| CodeRow {
            code,
            tried,
            caught,
            missed,
        };
        let text = table_text(&[
            row(Code::Sha256Mismatch, 2, 1, 1),
            row(Code::ItemOrder, 1, 1, 0),
        ]);
        assert_eq!(
            text,
            "\nper code (misses first, most harmful first):\n\
             \x20 code             harm      tried  caught  missed\n\
             \x20 sha256_mismatch  corrupt       2       1       1\n\
             \x20 item_order       cosmetic      1       1       0\n"
        );
        assert_eq!(table_text(&[]), "");
    }

    #[test]
    fn run_options_are_small_and_valid() {
        for s in 0..20 {
            let o = run_options(s);
            let (bytes, _) = generate_vec(&o).unwrap();
            assert!(bytes.len() < 200_000, "{}", bytes.len());
        }
    }
}
