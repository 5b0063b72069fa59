//! `ndarc canon`: rewrite JSON lines in canonical form (RFC 8785), or check
//! that they are.
//!
//! The input is NDJSON by default: one JSON text per LF-terminated line,
//! each written back canonical on its own line, so an archive stays an
//! archive. Lines are streamed with bounded memory. Framing is not repaired:
//! an empty line, a CR before the LF or a line longer than the limit is an
//! error. A last line without LF is given one (`--check` reports it).

use std::io::BufReader;
use std::path::PathBuf;

use ndarc_json::{canonicalize, check_canonical};

use crate::exit::{CmdResult, Failure, Status};
use crate::io::{Input, LineReader, Output, OutputArgs, ReadError, BUFFER_BYTES};
use crate::term::{diagnostic, Location};
use crate::Context;

/// The default `--max-line-bytes`: 256 MiB, the manifest line limit of the
/// format (part lines are limited to 16 MiB by `verify`).
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 << 20;

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
    cat config.json | ndarc canon --json

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
its own line. Empty lines, CR before LF and lines longer than --max-line-bytes are errors, \
not repaired. With --json the input is one JSON text (whitespace and newlines allowed).",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The input file; `-` (the default) reads standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub input: PathBuf,

    /// `-o FILE` and `--force`.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Read exactly one JSON text (RFC 8259: whitespace and newlines around
    /// and inside allowed, nothing after the value) and write it as one
    /// canonical line.
    #[arg(long)]
    pub json: bool,

    /// Write nothing; exit 1 naming the first line that is not canonical
    /// (`FILE:LINE:OFFSET: not canonical` on standard error), 0 when all are.
    #[arg(long, conflicts_with_all = ["output", "force"])]
    pub check: bool,

    /// The longest line accepted, in bytes without the LF; a longer line is
    /// an error. Suffixes K, M, G (binary) are allowed. With --json, the
    /// limit on the whole input.
    #[arg(
        long,
        value_name = "N",
        default_value = "256MiB",
        value_parser = parse_size
    )]
    pub max_line_bytes: usize,

    /// After canonicalizing, recompute what a hand edit leaves stale: each
    /// table's `count`, `schema`, `partCount` (manifest and closing) and
    /// both closing hashes (ndarc-testkit's reseal). It trusts the edit:
    /// nothing is verified, so run `ndarc verify` on the result. The whole
    /// archive is held in memory.
    #[arg(long, conflicts_with_all = ["check", "json"])]
    pub reseal: bool,
}

/// Runs `ndarc canon`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    let mut input = Input::open(&args.input)?;
    let limit = args.max_line_bytes;
    if args.check {
        return if args.json {
            json(&mut input, None, limit, ctx)
        } else {
            ndjson(&mut input, None, None, limit, ctx)
        };
    }
    let mut out = args.output.open()?;
    if args.reseal {
        return reseal(&mut input, out, limit, ctx);
    }
    let status = if args.json {
        json(&mut input, Some(&mut out), limit, ctx)?
    } else {
        ndjson(&mut input, Some(&mut out), None, limit, ctx)?
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

/// `--reseal`: canonicalize every line into memory, reseal, write. Nothing
/// is written when a line is not JSON or the archive cannot be resealed.
fn reseal(input: &mut Input, mut out: Output, limit: usize, ctx: &Context) -> CmdResult {
    let name = input.name().to_string();
    let mut lines = Vec::new();
    let status = ndjson(input, Some(&mut out), Some(&mut lines), limit, ctx)?;
    if status != Status::Success {
        if let Output::File(file) = out {
            drop(file);
        }
        return Ok(status);
    }
    match ndarc_testkit::reseal(&lines) {
        Ok(sealed) => {
            out.put(&sealed)?;
            out.finish()?;
            Ok(Status::Success)
        }
        Err(e) => {
            let at = Location {
                file: &name,
                line: match &e {
                    ndarc_testkit::Error::Json { line, .. }
                    | ndarc_testkit::Error::Archive { line, .. } => *line,
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
    mut out: Option<&mut Output>,
    mut collect: Option<&mut Vec<u8>>,
    limit: usize,
    ctx: &Context,
) -> CmdResult {
    let name = input.name().to_string();
    let mut reader = LineReader::new(BufReader::with_capacity(BUFFER_BYTES, input), limit);
    let mut line = Vec::new();
    let mut canon = Vec::new();
    loop {
        let info = match reader.next_line(&mut line) {
            Ok(Some(info)) => info,
            Ok(None) => break,
            Err(ReadError::TooLong {
                line: number,
                offset,
                limit,
            }) => {
                let at = Location {
                    file: &name,
                    line: number,
                    offset,
                };
                let msg = format!(
                    "line {number} is longer than {limit} bytes; raise --max-line-bytes to accept it"
                );
                diagnostic(ctx.colour, at, "line_too_long", &msg);
                return Ok(Status::Findings);
            }
            Err(ReadError::Io(e)) => {
                return Err(Failure::io(format_args!("cannot read {name}"), &e))
            }
        };
        let at = |k: usize| Location {
            file: &name,
            line: info.number,
            offset: info.offset + k as u64,
        };
        if line.is_empty() {
            let msg = "empty line; every line holds one JSON text";
            diagnostic(ctx.colour, at(0), "empty_line", msg);
            return Ok(Status::Findings);
        }
        if line.last() == Some(&b'\r') {
            let msg = "the line ends with CR (a CRLF line ending?); lines end with LF alone";
            diagnostic(ctx.colour, at(line.len() - 1), "carriage_return", msg);
            return Ok(Status::Findings);
        }
        match out.as_deref_mut() {
            None => match check_canonical(&line) {
                Ok(None) if info.terminated => {}
                Ok(None) => {
                    let msg = "not canonical: the last line does not end with LF";
                    diagnostic(ctx.colour, at(line.len()), "", msg);
                    return Ok(Status::Findings);
                }
                Ok(Some(k)) => {
                    diagnostic(ctx.colour, at(k), "", "not canonical");
                    return Ok(Status::Findings);
                }
                Err(e) => {
                    diagnostic(ctx.colour, at(e.offset()), e.code(), e.message());
                    return Ok(Status::Findings);
                }
            },
            Some(out) => {
                canon.clear();
                if let Err(e) = canonicalize(&line, &mut canon) {
                    diagnostic(ctx.colour, at(e.offset()), e.code(), e.message());
                    return Ok(Status::Findings);
                }
                canon.push(b'\n');
                match collect.as_deref_mut() {
                    // --reseal: counts and schema in line 1 depend on every
                    // later line, so the archive is resealed whole.
                    Some(lines) => lines.extend_from_slice(&canon),
                    None => out.put(&canon)?,
                }
            }
        }
    }
    Ok(Status::Success)
}

/// `--json`: one JSON text, canonicalized to one line (or checked: the
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
                "the input is longer than {limit} bytes; raise --max-line-bytes to accept it"
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

/// Parses a byte count: digits with an optional binary suffix `K`, `KiB`,
/// `M`, `MiB`, `G`, `GiB` (case-insensitive). At least 1.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, suffix) = s.split_at(split);
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => {
            return Err(format!(
                "unknown size suffix {suffix:?}; use K, M or G (binary)"
            ))
        }
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("expected a number of bytes like 16777216 or 16MiB, got {s:?}"))?;
    let bytes = n
        .checked_mul(1usize << shift)
        .ok_or_else(|| format!("{s} is too large"))?;
    if bytes == 0 {
        return Err("the limit must be at least 1 byte".to_string());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1"), Ok(1));
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("16m"), Ok(16 << 20));
        assert_eq!(parse_size("2K"), Ok(2048));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("256MiB"), Ok(DEFAULT_MAX_LINE_BYTES));
        assert!(parse_size("0").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("1T").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999999999999G").is_err());
    }
}
