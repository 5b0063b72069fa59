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

use std::ffi::OsString;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use ndarc_format::{Code, Severity};
use ndarc_gen::mutate::file_codes;
use ndarc_gen::{derive, generate_vec, mutate, GenOptions, Rng, Rows};

use crate::cmd::mutate::{parse_code, prepare_outdir, write_atomic};
use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{Format, FormatArg};
use crate::io::{cleanup, parse_mode, AtomicFile, FileMode, ARCHIVE_MODE};
use crate::term::{self, paint, Style};
use crate::Context;

/// The token replaced by the archive's path.
pub(crate) const ARCHIVE_TOKEN: &str = "{archive}";

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
summary.json. Mutants of warning codes (still importable) are not fed.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The consumer: a command with {archive} where the path goes.
    #[arg(long, value_name = "CMD")]
    pub exec: String,
    /// Runs: each feeds one valid archive and one mutant.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub runs: u64,
    /// The seed of the archives, the rules' order and the mutants.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Kill the consumer (its process group) after this many seconds.
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = parse_seconds)]
    pub timeout: f64,
    /// Copy the archives that show a problem, and summary.json, here
    /// (created if missing; must be empty unless --force).
    #[arg(long, value_name = "DIR")]
    pub outdir: Option<PathBuf>,
    /// Write into a non-empty --outdir, replacing its files.
    #[arg(long, requires = "outdir")]
    pub force: bool,
    /// `--format human|json`: the summary as text or as JSON.
    #[command(flatten)]
    pub format: FormatArg,
    /// The mode of the archives copied to --outdir, in octal (default 600,
    /// whatever the umask; summary.json follows the umask).
    #[arg(long, value_name = "OCTAL", value_parser = parse_mode, requires = "outdir")]
    pub mode: Option<u32>,
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
    #[arg(long, default_value = "2000", value_name = "BYTES", value_parser = parse_max_output)]
    pub max_output: usize,
}

fn parse_max_output(s: &str) -> Result<usize, String> {
    match crate::flags::parse_size(s) {
        Ok(n) if n <= 1 << 20 => Ok(n),
        Ok(_) => Err("at most 1M: the output is kept in memory for the report".to_string()),
        Err(e) => Err(e),
    }
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err(format!(
            "expected a number of seconds above 0 (up to 86400), got {s:?}"
        )),
    }
}

// -------------------------------------------------------- the command line

/// Splits a command line into words as a POSIX shell does, without
/// expanding anything (`shlex`): blanks separate words; `'…'` is literal;
/// in `"…"` a backslash escapes only `"`, `\\`, `$`, `` ` `` and a newline;
/// outside quotes a backslash escapes the next character. An unterminated
/// quote or a trailing backslash is an error.
pub(crate) fn split_words(line: &str) -> Result<Vec<String>, String> {
    shlex::split(line).ok_or_else(|| "an unterminated quote or a backslash at the end".to_string())
}

/// The consumer's arguments for `archive`: each `{archive}` in a word is
/// replaced by the path; without any, the path is appended.
pub(crate) fn command_for(words: &[String], archive: &Path) -> Vec<OsString> {
    let mut found = false;
    let mut out: Vec<OsString> = words
        .iter()
        .map(|w| {
            if !w.contains(ARCHIVE_TOKEN) {
                return OsString::from(w);
            }
            found = true;
            let mut s = OsString::new();
            for (i, piece) in w.split(ARCHIVE_TOKEN).enumerate() {
                if i > 0 {
                    s.push(archive.as_os_str());
                }
                s.push(piece);
            }
            s
        })
        .collect();
    if !found {
        out.push(archive.as_os_str().to_owned());
    }
    out
}

// ------------------------------------------------------------- running it

/// How one run of the consumer ended.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did (and it was not ours).
    pub signal: Option<i32>,
    /// It outlived the time limit and was killed.
    pub timed_out: bool,
    /// Wall time.
    pub elapsed: Duration,
    /// Standard output, cut to the limit.
    pub stdout: String,
    /// Standard error, cut to the limit.
    pub stderr: String,
}

impl Outcome {
    /// Exit 0.
    pub fn accepted(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

#[cfg(unix)]
fn signal_of(status: &ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: &ExitStatus) -> Option<i32> {
    None
}

#[cfg(unix)]
fn own_group(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

#[cfg(not(unix))]
fn own_group(_cmd: &mut Command) {}

/// Kills the child's whole process group (it leads its own), then the
/// child. Also called after a normal exit: background children left by
/// the consumer are killed with their group.
fn kill_all(child: &mut Child) {
    #[cfg(unix)]
    {
        let pid = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
}

/// What a reader thread kept of one stream: the first bytes, and how many
/// there were in all.
#[derive(Default)]
struct Kept {
    head: Vec<u8>,
    total: u64,
}

/// Reads `pipe` to its end on a thread, keeping its first `max` bytes and
/// dropping the rest, so that a consumer that writes without end neither
/// blocks nor fills memory or disk.
fn keep_head(
    mut pipe: impl Read + Send + 'static,
    max: usize,
) -> std::io::Result<(Arc<Mutex<Kept>>, std::sync::mpsc::Receiver<()>)> {
    let kept = Arc::new(Mutex::new(Kept::default()));
    let (done, finished) = std::sync::mpsc::channel();
    let k = Arc::clone(&kept);
    std::thread::Builder::new()
        .name("ndarc-consumer-output".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let Ok(mut k) = k.lock() else { break };
                        let room = max.saturating_sub(k.head.len()).min(n);
                        k.head.extend_from_slice(&buf[..room]);
                        k.total += n as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        })?;
    Ok((kept, finished))
}

/// The text kept of a stream, noting the size when cut. Waits a moment for
/// the reader to see the end: a grandchild that escaped the process group
/// may hold the pipe open, and is not waited for.
fn take_head(kept: &Mutex<Kept>, finished: &std::sync::mpsc::Receiver<()>) -> String {
    let _ = finished.recv_timeout(Duration::from_secs(1));
    let Ok(mut k) = kept.lock() else {
        return String::new();
    };
    let mut s = String::from_utf8_lossy(&k.head).into_owned();
    if k.total > k.head.len() as u64 {
        s.push_str(&format!("… ({} bytes in all)", k.total));
    }
    k.head = Vec::new();
    s
}

/// Runs the consumer on one archive: standard input empty, the first
/// `max_output` bytes of standard output and error kept, its own process
/// group, which is killed when the consumer exits or after `timeout`.
pub(crate) fn run_consumer(
    argv: &[OsString],
    timeout: Duration,
    max_output: usize,
) -> std::io::Result<Outcome> {
    let (program, rest) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("an empty command"))?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    own_group(&mut cmd);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let streams = (child.stdout.take(), child.stderr.take());
    let (out, err) = match streams {
        (Some(o), Some(e)) => (keep_head(o, max_output), keep_head(e, max_output)),
        _ => {
            kill_all(&mut child);
            let _ = child.wait();
            return Err(std::io::Error::other("no pipes to the consumer"));
        }
    };
    let (out, err) = match (out, err) {
        (Ok(o), Ok(e)) => (o, e),
        (Err(e), _) | (_, Err(e)) => {
            kill_all(&mut child);
            let _ = child.wait();
            return Err(e);
        }
    };
    let (status, timed_out) = match child.wait_timeout(timeout)? {
        Some(status) => {
            // Exited: what it left running in its group goes too.
            kill_all(&mut child);
            (status, false)
        }
        None => {
            kill_all(&mut child);
            (child.wait()?, true)
        }
    };
    let elapsed = start.elapsed();
    Ok(Outcome {
        code: status.code(),
        signal: if timed_out { None } else { signal_of(&status) },
        timed_out,
        elapsed,
        stdout: take_head(&out.0, &out.1),
        stderr: take_head(&err.0, &err.1),
    })
}

/// What names a scratch directory: `ndarc-fuzz-consumer-PID-RANDOM` in the
/// temporary directory, so that one a killed run left can be told apart.
const SCRATCH_PREFIX: &str = "ndarc-fuzz-consumer-";

/// A private temporary directory (`tempfile`), removed on drop and on
/// SIGINT or SIGTERM; those of runs killed outright (SIGKILL) are removed
/// by the next run ([`remove_stale_scratch`]).
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Result<Scratch, Failure> {
        remove_stale_scratch(&std::env::temp_dir());
        let dir = tempfile::Builder::new()
            .prefix(&format!("{SCRATCH_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|e| {
                Failure::io(
                    format_args!(
                        "cannot create a temporary directory in {}",
                        std::env::temp_dir().display()
                    ),
                    &e,
                )
            })?;
        cleanup::register(dir.path());
        Ok(Scratch(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        cleanup::unregister(self.0.path());
    }
}

/// Removes the scratch directories in `tmp` of fuzz-consumer runs whose
/// process no longer exists (killed outright, so that neither drop nor the
/// signal handler ran). Directories of live processes, and anything not
/// named `ndarc-fuzz-consumer-PID-…`, are left alone; errors are ignored
/// (housekeeping).
fn remove_stale_scratch(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SCRATCH_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        // Not followed: a link is not a scratch directory.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && pid != std::process::id() && !crate::io::process_exists(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
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
    let mut r = Rng::new(derive(args.seed, 0xc0de));
    for i in (1..codes.len()).rev() {
        let j = r.below(i as u64 + 1) as usize;
        codes.swap(i, j);
    }
    Ok(codes)
}

/// The largest `--base` archive: it is held in memory with a mutant.
const MAX_BASE_BYTES: u64 = 256 << 20;

/// The `--base` archive, read and verified (not valid: exit 2).
fn read_base(path: &Path) -> Result<Vec<u8>, Failure> {
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
    let words = split_words(&args.exec).map_err(|e| Failure::new(format!("--exec: {e}")))?;
    if words.is_empty() {
        return Err(Failure::new("--exec: an empty command"));
    }
    let codes = code_order(&args)?;
    if let Some(dir) = &args.outdir {
        prepare_outdir(dir, args.force)?;
    }
    let base = args.base.as_deref().map(read_base).transpose()?;
    let scratch = Scratch::new()?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut fed: Vec<Fed> = Vec::new();
    let mut next_code = 0usize;
    for run in 0..args.runs {
        let opts = run_options(derive(args.seed, run));
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
            if let Ok(m) = mutate(&valid, code, derive(args.seed ^ 0x6d75, run)) {
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
            let argv = command_for(&words, &path);
            let outcome = run_consumer(&argv, timeout, args.max_output)
                .map_err(|e| Failure::io(format_args!("cannot run {}", words[0]), &e))?;
            let mut f = Fed {
                run,
                gen_seed,
                mutant: m,
                outcome,
                file,
            };
            if f.problem().is_none() {
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
        }
    }
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
        let saved = match &args.outdir {
            Some(dir) => {
                let from = scratch.path().join(&f.file);
                let bytes = fs::read(&from).map_err(|e| Failure::path("cannot read", &from, &e))?;
                let mode = args.mode.map_or(ARCHIVE_MODE, FileMode::Exact);
                write_atomic(&dir.join(&f.file), &bytes, args.force, mode)?;
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
        "runs": args.runs,
        "seed": args.seed,
        "base": args.base.as_ref().map(|p| p.display().to_string()),
        "timeoutSeconds": args.timeout,
        "archives": fed.len(),
        "valid": tally(false),
        "mutants": tally(true),
        "disagreements": disagreements,
        "invalidAccepted": count(Kind::InvalidAccepted),
        "validRejected": count(Kind::ValidRejected),
        "crashes": count(Kind::Crash),
        "timeouts": count(Kind::Timeout),
        "problems": problems.iter().map(|(f, k, s)| f.json(Some(*k), s.as_deref())).collect::<Vec<_>>(),
    });
    // Written straight from the value: no second copy as text.
    let write_json = |w: &mut dyn Write| -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, &summary)?;
        w.write_all(b"\n")
    };
    if let Some(dir) = &args.outdir {
        let dest = dir.join("summary.json");
        let mut f = AtomicFile::create(&dest, args.force)?;
        write_json(&mut f).map_err(|e| Failure::path("cannot write", &dest, &e))?;
        f.commit()?;
    }
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if args.format.get() == Format::Json {
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
        args.runs,
        args.seed,
        fed.len(),
        shown_command(words)
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
        let how = match (f.outcome.timed_out, f.outcome.signal, f.outcome.code) {
            (true, _, _) => format!("still running after {}s, killed", args.timeout),
            (_, Some(sig), _) => format!("killed by signal {sig}"),
            (_, _, Some(code)) => format!("exit {code}"),
            _ => "no exit status".to_string(),
        };
        let style = match kind {
            Kind::Crash | Kind::Timeout => Style::Warning,
            _ => Style::Error,
        };
        s.push_str(&format!(
            "{}: run {}: {what}: {how}",
            paint(c, style, kind.as_str()),
            f.run
        ));
        if let (Some(dir), Some(file)) = (&args.outdir, saved) {
            s.push_str(&format!(" -> {}", dir.join(file).display()));
        }
        s.push('\n');
        let err = f.outcome.stderr.trim();
        // The consumer's own words, made one safe line.
        if !err.is_empty() {
            s.push_str(&format!(
                "  stderr: {}\n",
                term::one_line(&err.chars().take(300).collect::<String>())
            ));
        }
    }
    if let Some(dir) = &args.outdir {
        s.push_str(&format!(
            "\nsummary: {}\n",
            dir.join("summary.json").display()
        ));
    }
    term::safe_text(&s)
}

/// The command as words, quoted where needed (`shlex`), for the report.
fn shown_command(words: &[String]) -> String {
    words
        .iter()
        .map(|w| match shlex::try_quote(w) {
            Ok(q) => q.into_owned(),
            Err(_) => format!("{w:?}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        let w = |s: &str| split_words(s).unwrap();
        assert_eq!(w("a b  c"), ["a", "b", "c"]);
        assert_eq!(w("  lead trail  "), ["lead", "trail"]);
        assert_eq!(w("'a b' \"c d\""), ["a b", "c d"]);
        assert_eq!(w(r#"a\ b"#), ["a b"]);
        assert_eq!(w(r#""a\"b" 'x\y'"#), ["a\"b", "x\\y"]);
        assert_eq!(w(r#""\n\$""#), ["\\n$"]);
        assert_eq!(w("''"), [""]);
        assert_eq!(w("x'y'\"z\""), ["xyz"]);
        assert_eq!(w("a;b|c > d"), ["a;b|c", ">", "d"]);
        assert_eq!(w("$HOME `id`"), ["$HOME", "`id`"]);
        assert!(w("").is_empty());
        assert!(split_words("'open").is_err());
        assert!(split_words("\"open").is_err());
        assert!(split_words("end\\").is_err());
    }

    #[test]
    fn archive_token_is_replaced_or_appended() {
        let p = Path::new("/tmp/x y.ndjson");
        let words = split_words("check --file={archive} -q").unwrap();
        assert_eq!(
            command_for(&words, p),
            ["check", "--file=/tmp/x y.ndjson", "-q"]
        );
        let words = split_words("check -q").unwrap();
        assert_eq!(command_for(&words, p), ["check", "-q", "/tmp/x y.ndjson"]);
        let words = split_words("cmp {archive} {archive}").unwrap();
        assert_eq!(command_for(&words, p).len(), 3);
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("1.5"), Ok(1.5));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("inf").is_err());
        assert!(parse_seconds("x").is_err());
    }

    #[test]
    fn run_options_are_small_and_valid() {
        for s in 0..20 {
            let o = run_options(s);
            let (bytes, _) = generate_vec(&o).unwrap();
            assert!(bytes.len() < 200_000, "{}", bytes.len());
        }
    }

    #[test]
    fn shown_commands_quote_what_needs_it() {
        let w = vec!["a".to_string(), "b c".to_string(), "it's".to_string()];
        assert_eq!(shown_command(&w), "a 'b c' \"it's\"");
    }
}
