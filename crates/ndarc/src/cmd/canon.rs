//! `ndarc canon`: rewrite JSON lines in canonical form (RFC 8785), or check
//! that they are.
//!
//! The input is NDJSON by default: one JSON text per LF-terminated line,
//! each written back canonical on its own line, so an archive stays an
//! archive. Lines are streamed with bounded memory, read once through the
//! line source of `ndarc-verify` (a regular file in blocks that its lines
//! share, [`LineSource::new`]; standard input through a buffer whose lines
//! are copied out, [`LineSource::reader`]), so canon frames lines exactly as
//! `verify` does. They are judged in batches of about 4 MiB on every core
//! while the next batch is read and the one before is written, and written
//! or reported in input order. Framing is not
//! repaired: an empty line, a
//! CR anywhere in a line or a line longer than the limit is an error,
//! reported with the line source's code and message. A last line without LF
//! is given one (`--check` reports it).

use std::io::Read;
use std::path::PathBuf;

use ndarc_json::{canonical_form_into, canonicalize, check_canonical};
use ndarc_verify::lines::{Line, LineSource};
use ndarc_verify::{Code, Finding};

use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{parse_size, Limits};
use crate::io::{Input, Output, OutputArgs, ReadError, ARCHIVE_MODE};
use crate::term::{diagnostic, Location};
use crate::Context;

/// The default `--max-input-bytes` of `--reseal`, which holds the whole
/// archive in memory: about 6 times its size at the peak on `ndarc gen`
/// output (367 MB for 64 MB), up to about 21 times for an archive that is
/// mostly manifest (issue 11: 3.8 GB for 182 MB); see docs/commands.md, Limits.
pub(crate) const DEFAULT_MAX_RESEAL_BYTES: &str = "64M";

/// What `canon` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum InputKind {
    /// NDJSON: one JSON text per LF-terminated line.
    #[default]
    Ndjson,
    /// Exactly one JSON text (whitespace and newlines allowed), written as
    /// one canonical line.
    Json,
}

const EXAMPLES: &str = "\
Examples:
  Canonicalize an archive into a new file (written atomically, never half-written):
    ndarc canon export.ndjson -o export.canon.ndjson

  Rewrite a file in place:
    ndarc canon export.ndjson -o export.ndjson --force

  Check without writing; exit 1 naming the first non-canonical line:
    ndarc canon --check export.ndjson
    export.ndjson:3:1017: not canonical

  One pretty-printed JSON document from a pipe to one canonical line:
    cat config.json | ndarc canon --input json

  Make a test fixture after a hand edit: canonicalize, then recompute counts, schema,
  partCount and both hashes (the edit is trusted, not verified):
    ndarc canon --reseal edited.ndjson -o fixture.ndjson
    ndarc verify fixture.ndjson

Positions are FILE:LINE:OFFSET, OFFSET the byte offset from the start of the
file. Invalid input is reported as FILE:LINE:OFFSET: CODE: message, e.g.
  export.ndjson:7:5120: json_duplicate_member: duplicate member name \"id\"

Exit status: 0 canonical or rewritten, 1 invalid or (with --check) not
canonical, 2 could not run (usage, I/O, an existing output without --force).";

/// Arguments of `ndarc canon`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Rewrite JSON lines in canonical form (RFC 8785), or check that they are",
    long_about = "Rewrite JSON in canonical form (RFC 8785: no whitespace, members sorted by \
UTF-16 code units, strings and numbers written as ECMAScript writes them), or check that it is.

The input is NDJSON: one JSON text per LF-terminated line, each written back canonical on \
its own line. Empty lines, a CR anywhere in a line and lines over the limits (line 1, the manifest of an \
archive: --max-manifest-bytes; later lines: --max-line-bytes) are errors, not repaired. With \
--input json the input is one JSON text (whitespace and newlines allowed), at most \
--max-manifest-bytes.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The input file; `-` (the default) reads standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub file: PathBuf,

    /// `-o FILE` and `--force`.
    #[command(flatten)]
    pub output: OutputArgs,

    /// What the input is: `ndjson` (one JSON text per line) or `json`
    /// (exactly one JSON text, RFC 8259: whitespace and newlines around
    /// and inside allowed, nothing after the value, written as one
    /// canonical line).
    #[arg(long, value_enum, value_name = "KIND", default_value_t)]
    pub input: InputKind,

    /// Write nothing; exit 1 naming the first line that is not canonical
    /// (`FILE:LINE:OFFSET: not canonical` on standard error), 0 when all are.
    #[arg(long, conflicts_with_all = ["output", "force"])]
    pub check: bool,

    /// The limits group: line 1 at most --max-manifest-bytes, later lines
    /// at most --max-line-bytes.
    #[command(flatten)]
    pub limits: Limits,

    /// With --reseal: the largest input accepted (K, M, G), refused before
    /// it is read, as the whole archive is held in memory.
    #[arg(long, value_name = "BYTES", default_value = DEFAULT_MAX_RESEAL_BYTES,
          value_parser = parse_size, requires = "reseal")]
    pub max_input_bytes: usize,

    /// After canonicalizing, recompute what a hand edit leaves stale: each
    /// table's `count`, `schema`, `partCount` (manifest and closing) and
    /// both closing hashes (ndarc-gen's reseal). It trusts the edit:
    /// nothing is verified, so run `ndarc verify` on the result. The whole
    /// archive is held in memory.
    #[arg(long, conflicts_with_all = ["check", "input"])]
    pub reseal: bool,
}

/// Runs `ndarc canon`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    let mut input = Input::open(&args.file)?;
    let limits = args.limits;
    let json_input = args.input == InputKind::Json;
    if args.check {
        return if json_input {
            json(&mut input, None, limits.max_manifest_bytes, ctx)
        } else {
            ndjson(&mut input, None, None, limits, ctx)
        };
    }
    if args.reseal {
        check_reseal_size(&input, args.max_input_bytes)?;
    }
    let mut out = args.output.open(ARCHIVE_MODE)?;
    if args.reseal {
        return reseal(&mut input, out, limits, args.max_input_bytes, ctx);
    }
    let status = if json_input {
        json(&mut input, Some(&mut out), limits.max_manifest_bytes, ctx)?
    } else {
        ndjson(&mut input, Some(&mut out), None, limits, ctx)?
    };
    match (status, out) {
        (Status::Success, out) => out.finish()?,
        // Lines before the error have been streamed to standard output;
        // send the rest of them too.
        (Status::Findings, out @ Output::Stdout(_)) => out.finish()?,
        // An output file is discarded: it never holds partial output.
        (Status::Findings, Output::File(file)) => drop(file),
    }
    Ok(status)
}

fn too_large_to_reseal(name: &str, limit: usize) -> Failure {
    Failure::new(format!(
        "{name} is larger than {limit} bytes, the most --reseal holds in memory; raise --max-input-bytes to accept it"
    ))
}

/// Refuses a file larger than `--max-input-bytes` before reading it.
fn check_reseal_size(input: &Input, limit: usize) -> Result<(), Failure> {
    match input.file_len() {
        Some(len) if len > limit as u64 => Err(too_large_to_reseal(input.name(), limit)),
        _ => Ok(()),
    }
}

/// A reader that fails once more than `left` bytes would be read.
struct Capped<'a> {
    inner: &'a mut Input,
    left: u64,
    hit: bool,
}

impl Read for Capped<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => {
                    self.hit = true;
                    Err(std::io::Error::other("over --max-input-bytes"))
                }
            };
        }
        let room = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// `--reseal`: canonicalize every line into memory, reseal, write. Nothing
/// is written when a line is not JSON or the archive cannot be resealed.
fn reseal(
    input: &mut Input,
    mut out: Output,
    limits: Limits,
    max_input: usize,
    ctx: &Context,
) -> CmdResult {
    let name = input.name().to_string();
    let mut lines = Vec::new();
    // At most `max_input` bytes are read (standard input has no size to
    // check first); more is a read error, before any line is judged.
    let mut capped = Capped {
        inner: &mut *input,
        left: max_input as u64,
        hit: false,
    };
    let status = ndjson_from(
        &name,
        LineSource::reader(&mut capped),
        Some(&mut out),
        Some(&mut lines),
        limits,
        ctx,
    );
    // Reading runs ahead of judging: a line found wrong before the cap
    // was passed is reported as it was without the read-ahead.
    if capped.hit && status.is_err() {
        return Err(too_large_to_reseal(&name, max_input));
    }
    let status = status?;
    if status != Status::Success {
        if let Output::File(file) = out {
            drop(file);
        }
        return Ok(status);
    }
    match ndarc_gen::reseal(&lines) {
        Ok(sealed) => {
            out.put(&sealed)?;
            out.finish()?;
            Ok(Status::Success)
        }
        Err(e) => {
            let at = Location {
                file: &name,
                line: match &e {
                    ndarc_gen::Error::Json { line, .. }
                    | ndarc_gen::Error::Archive { line, .. } => *line,
                    _ => 0,
                },
                offset: 0,
            };
            let msg = format!("cannot reseal: {e}");
            diagnostic(ctx.colour, at, "", &msg);
            Ok(Status::Findings)
        }
    }
}

/// NDJSON: canonicalize (`out` is `Some`) or check each line. With
/// `collect`, canonical lines go there instead of to `out`.
fn ndjson(
    input: &mut Input,
    out: Option<&mut Output>,
    collect: Option<&mut Vec<u8>>,
    limits: Limits,
    ctx: &Context,
) -> CmdResult {
    let name = input.name().to_string();
    // A regular file is read through the line source's blocks, which its
    // lines share (no copy per line); standard input through a buffer
    // whose lines are copied out.
    let file = match input.regular_file() {
        Some(f) => Some(
            f.try_clone()
                .map_err(|e| Failure::io(format_args!("cannot read {name}"), &e))?,
        ),
        None => None,
    };
    match file {
        Some(f) => {
            let lines = ndarc_verify::lines::Input::File(f);
            let source = LineSource::new(&lines)
                .map_err(|e| Failure::io(format_args!("cannot read {name}"), &e))?;
            ndjson_from(&name, source, out, collect, limits, ctx)
        }
        None => ndjson_from(&name, LineSource::reader(input), out, collect, limits, ctx),
    }
}

/// Reports the first framing finding of `framing` that canon does not
/// repair (all but `missing_final_newline`, see [`unterminated`]), with the
/// line source's own code, position and message; whether there was one.
fn framing_error(name: &str, framing: &[Finding], ctx: &Context) -> bool {
    let Some(f) = framing.iter().find(|f| f.code != Code::MissingFinalNewline) else {
        return false;
    };
    let at = Location {
        file: name,
        line: f.line,
        offset: f.offset,
    };
    diagnostic(ctx.colour, at, f.code.as_str(), &f.message);
    true
}

/// Whether `framing` says the line has no LF after it (the last line of
/// the input): `--check` reports it, a rewrite gives the line its LF.
fn unterminated(framing: &[Finding]) -> bool {
    framing.iter().any(|f| f.code == Code::MissingFinalNewline)
}

/// Lines checked or rewritten together on the thread pool: enough that
/// every core has work, few enough that memory stays bounded (about five
/// batches and their rewritten lines are alive at once, see
/// [`ndjson_from`]).
const BATCH_BYTES: usize = 4 << 20;
/// At most this many lines in a batch (short lines).
const BATCH_LINES: usize = 8192;
/// Rewritten lines' buffers kept for reuse, in bytes of capacity: a fresh
/// buffer per line costs more in page faults than rewriting it.
const SPARE_BYTES: usize = 32 << 20;

/// What checking or rewriting one line found.
enum Outcome {
    /// Canonical already: written as it is.
    Canonical,
    /// Rewritten (without its LF), in a buffer of [`Spare`].
    Rewritten(Vec<u8>),
    /// Not canonical from this offset (`--check`).
    NotCanonical(usize),
    /// Not JSON, or JSON the profile refuses.
    Invalid(ndarc_json::Error),
}

/// Buffers for rewritten lines, handed back once written.
#[derive(Default)]
struct Spare(std::sync::Mutex<(Vec<Vec<u8>>, usize)>);

impl Spare {
    fn take(&self) -> Vec<u8> {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (list, held) = &mut *g;
        match list.pop() {
            Some(buf) => {
                *held -= buf.capacity();
                buf
            }
            None => Vec::new(),
        }
    }

    fn give(&self, mut buf: Vec<u8>) {
        buf.clear();
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (list, held) = &mut *g;
        if *held + buf.capacity() <= SPARE_BYTES {
            *held += buf.capacity();
            list.push(buf);
        }
    }
}

/// Checks (`rewrite` false) or rewrites one line, in one pass when it is
/// canonical already.
fn judge(bytes: &[u8], rewrite: bool, spare: &Spare) -> Outcome {
    if rewrite {
        let mut buf = spare.take();
        return match canonical_form_into(bytes, &mut buf) {
            Ok(false) => Outcome::Rewritten(buf),
            Ok(true) => {
                spare.give(buf);
                Outcome::Canonical
            }
            Err(e) => {
                spare.give(buf);
                Outcome::Invalid(e)
            }
        };
    }
    match check_canonical(bytes) {
        Ok(None) => Outcome::Canonical,
        Ok(Some(k)) => Outcome::NotCanonical(k),
        Err(e) => Outcome::Invalid(e),
    }
}

/// Lines read together, each with its limit.
type Batch<'a> = Vec<(Line<'a>, usize)>;

/// What the reading thread hands on, through the judging thread, to the
/// writing one.
enum Msg<'a> {
    /// A batch of lines with their limits, and (once judged) what judging
    /// each found: `None` for a line with a framing problem or over its
    /// limit, which ends the batch and the reading.
    Lines(Batch<'a>, Vec<Option<Outcome>>),
    /// Reading failed after the lines sent before.
    Failed(std::io::Error),
    /// The end of the input, with the findings of empty lines at the end.
    End(Vec<Finding>),
}

/// Whether a line is not judged: a framing problem canon does not repair,
/// or over its limit.
fn unjudged(line: &Line<'_>) -> bool {
    line.too_long.is_some()
        || line
            .framing
            .iter()
            .any(|f| f.code != Code::MissingFinalNewline)
}

/// Reads batches of lines into `tx` until the end, a read error or a line
/// that is not judged; stops early when the receiver is gone.
fn read_batches<'a>(
    mut source: LineSource<'a>,
    limits: Limits,
    tx: &std::sync::mpsc::SyncSender<Msg<'a>>,
    done: &std::sync::mpsc::Receiver<Batch<'a>>,
) {
    loop {
        // Lines written are dropped here, on the thread that allocated
        // their buffers: freed elsewhere, the allocator took fresh pages
        // for the next lines (10 % of the time in page faults).
        while let Ok(old) = done.try_recv() {
            drop(old);
        }
        let mut batch = Vec::new();
        let mut bytes = 0;
        let mut stop = false;
        let mut at_end = false;
        while bytes < BATCH_BYTES && batch.len() < BATCH_LINES {
            // Empty lines count: the manifest limit is line 1's.
            let limit = limits.for_line(source.lines() + 1);
            let line = match source.next_line(limit, false) {
                Ok(Some(line)) => line,
                Ok(None) => {
                    at_end = true;
                    break;
                }
                Err(e) => {
                    // The lines read before the error in this batch are
                    // neither judged nor written (as before the pipeline).
                    let _ = tx.send(Msg::Failed(e));
                    return;
                }
            };
            bytes += line.bytes.len();
            stop = unjudged(&line);
            batch.push((line, limit));
            if stop {
                break;
            }
        }
        if !batch.is_empty() && tx.send(Msg::Lines(batch, Vec::new())).is_err() {
            return;
        }
        if stop {
            // The writer reports that line and stops there.
            return;
        }
        if at_end {
            let _ = tx.send(Msg::End(source.take_pending()));
            return;
        }
    }
}

/// [`ndjson`] over any reader named `name`. Lines are read once (no copy of
/// the input is kept) in three stages that overlap: one thread reads
/// batches, one has each batch judged on the thread pool, and this one
/// writes or reports them in input order, stopping at the first problem.
/// Each stage hands on through a channel of no capacity, so at most about
/// five batches are alive at once (one in each stage and one waiting at
/// each hand-off).
fn ndjson_from(
    name: &str,
    source: LineSource<'_>,
    out: Option<&mut Output>,
    collect: Option<&mut Vec<u8>>,
    limits: Limits,
    ctx: &Context,
) -> CmdResult {
    use rayon::prelude::*;
    use std::sync::mpsc::sync_channel;
    let rewrite = out.is_some();
    let spare = Spare::default();
    let spare = &spare;
    std::thread::scope(|scope| {
        let (read_tx, read_rx) = sync_channel::<Msg<'_>>(0);
        let (judged_tx, judged_rx) = sync_channel::<Msg<'_>>(0);
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        scope.spawn(move || read_batches(source, limits, &read_tx, &done_rx));
        scope.spawn(move || {
            for msg in read_rx {
                let msg = match msg {
                    Msg::Lines(batch, _) => {
                        let outcomes = batch
                            .par_iter()
                            .map(|(line, _)| {
                                (!unjudged(line)).then(|| judge(&line.bytes, rewrite, spare))
                            })
                            .collect();
                        Msg::Lines(batch, outcomes)
                    }
                    other => other,
                };
                if judged_tx.send(msg).is_err() {
                    return;
                }
            }
        });
        // Returning drops `judged_rx`, which stops the other two stages.
        write_batches(name, judged_rx, &done_tx, out, collect, spare, ctx)
    })
}

/// The writing stage of [`ndjson_from`].
fn write_batches<'a>(
    name: &str,
    rx: std::sync::mpsc::Receiver<Msg<'a>>,
    done: &std::sync::mpsc::Sender<Batch<'a>>,
    mut out: Option<&mut Output>,
    mut collect: Option<&mut Vec<u8>>,
    spare: &Spare,
    ctx: &Context,
) -> CmdResult {
    let rewrite = out.is_some();
    for msg in rx {
        let (batch, outcomes) = match msg {
            Msg::Lines(batch, outcomes) => (batch, outcomes),
            Msg::Failed(e) => return Err(Failure::io(format_args!("cannot read {name}"), &e)),
            // Empty lines at the end.
            Msg::End(pending) => {
                return Ok(if framing_error(name, &pending, ctx) {
                    Status::Findings
                } else {
                    Status::Success
                });
            }
        };
        for ((line, limit), outcome) in batch.iter().zip(outcomes) {
            // Findings of empty lines before this one come first (file order).
            if framing_error(name, &line.framing, ctx) {
                return Ok(Status::Findings);
            }
            if line.too_long.is_some() {
                let number = line.number;
                let at = Location {
                    file: name,
                    line: number,
                    offset: line.offset + *limit as u64,
                };
                let flag = if number == 1 {
                    "--max-manifest-bytes"
                } else {
                    "--max-line-bytes"
                };
                let msg = format!(
                    "line {number} is longer than {limit} bytes; raise {flag} to accept it"
                );
                diagnostic(ctx.colour, at, Code::LineTooLong.as_str(), &msg);
                return Ok(Status::Findings);
            }
            let terminated = !unterminated(&line.framing);
            let at = |k: usize| Location {
                file: name,
                line: line.number,
                offset: line.offset + k as u64,
            };
            let text: &[u8] = match outcome {
                None => continue,
                Some(Outcome::Invalid(e)) => {
                    diagnostic(ctx.colour, at(e.offset()), e.code(), e.message());
                    return Ok(Status::Findings);
                }
                Some(Outcome::NotCanonical(k)) => {
                    diagnostic(ctx.colour, at(k), "", "not canonical");
                    return Ok(Status::Findings);
                }
                Some(Outcome::Canonical) if !rewrite && !terminated => {
                    let msg = "not canonical: the last line does not end with LF";
                    diagnostic(ctx.colour, at(line.bytes.len()), "", msg);
                    return Ok(Status::Findings);
                }
                Some(Outcome::Canonical) => &line.bytes,
                Some(Outcome::Rewritten(ref canon)) => canon,
            };
            let Some(out) = out.as_deref_mut() else {
                continue;
            };
            match collect.as_deref_mut() {
                // --reseal: counts and schema in line 1 depend on every
                // later line, so the archive is resealed whole.
                Some(lines) => {
                    lines.extend_from_slice(text);
                    lines.push(b'\n');
                }
                None => {
                    out.put(text)?;
                    out.put(b"\n")?;
                }
            }
            if let Some(Outcome::Rewritten(buf)) = outcome {
                spare.give(buf);
            }
        }
        // Back to the reader (once it has stopped, dropped here).
        let _ = done.send(batch);
    }
    // The stages before stopped without a word: only a panic does that,
    // and the scope passes it on.
    Err(Failure::new(format!("cannot read {name}: reading stopped")))
}

/// `--input json`: one JSON text, canonicalized to one line (or checked: the
/// input is canonical when it is the canonical text and one LF).
fn json(input: &mut Input, out: Option<&mut Output>, limit: usize, ctx: &Context) -> CmdResult {
    let name = input.name().to_string();
    let text = match input.read_all(limit) {
        Ok(text) => text,
        Err(ReadError::TooLong {
            line,
            offset,
            limit,
        }) => {
            let at = Location {
                file: &name,
                line,
                offset,
            };
            let msg = format!(
                "the input is longer than {limit} bytes; raise --max-manifest-bytes to accept it"
            );
            diagnostic(ctx.colour, at, "input_too_long", &msg);
            return Ok(Status::Findings);
        }
        Err(ReadError::Io(e)) => return Err(Failure::io(format_args!("cannot read {name}"), &e)),
    };
    let at = |k: usize| Location {
        file: &name,
        line: 1 + memchr::memchr_iter(b'\n', &text[..k.min(text.len())]).count() as u64,
        offset: k as u64,
    };
    match out {
        None => {
            let (body, has_lf) = match text.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (&text[..], false),
            };
            match check_canonical(body) {
                Ok(None) if has_lf => Ok(Status::Success),
                Ok(None) => {
                    let msg = "not canonical: the text does not end with LF";
                    diagnostic(ctx.colour, at(text.len()), "", msg);
                    Ok(Status::Findings)
                }
                Ok(Some(k)) => {
                    diagnostic(ctx.colour, at(k), "", "not canonical");
                    Ok(Status::Findings)
                }
                Err(e) => {
                    diagnostic(ctx.colour, at(e.offset()), e.code(), e.message());
                    Ok(Status::Findings)
                }
            }
        }
        Some(out) => {
            let mut canon = Vec::with_capacity(text.len() + 1);
            if let Err(e) = canonicalize(&text, &mut canon) {
                diagnostic(ctx.colour, at(e.offset()), e.code(), e.message());
                return Ok(Status::Findings);
            }
            canon.push(b'\n');
            out.put(&canon)?;
            Ok(Status::Success)
        }
    }
}
