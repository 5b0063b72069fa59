//! `ndarc repart`: re-pack an archive into parts of another size
//! (ndarc-gen), through the one door of `ndarc-verify`: the input is read
//! once and verified as it is read, and the output is written only when it
//! is valid.

use std::io::Write;
use std::path::{Path, PathBuf};

use ndarc_gen::{repart_path, repart_stream, Error, Summary};

use crate::cmd::gen::{summary_json, write_summary};
use crate::cmd::verify::human_text;
use crate::dbinput::{is_database, Header, PackStream};
use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{
    verify_options, AcceptFormat, DatabaseTables, Jobs, Limits, MaxErrors, PartBytes,
};
use crate::io::{is_stdio, refuse_input, Output, OutputArgs, ARCHIVE_MODE};
use crate::term;
use crate::Context;

const EXAMPLES: &str = "\
Examples:
  Re-pack into 1 MiB parts:
    ndarc repart export.ndjson --part-bytes 1MiB -o export.1m.ndjson

  The content hash stays, the archive hash and partCount change:
    ndarc repart export.ndjson --part-bytes 4KiB --summary -o small-parts.ndjson

  From standard input, or a SQLite database packed on the fly:
    curl -s https://example.invalid/export | ndarc repart - --part-bytes 64KiB -o e.ndjson
    ndarc repart app.db --part-bytes 1MiB -o app.ndjson

Exit status: 0 written, 1 the input is not a valid archive (its findings are printed on
standard error as `verify` prints them, and nothing is written) or a row is too large for
the new part size, 2 could not run (usage, I/O, an existing output without --force).";

/// Arguments of `ndarc repart`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Re-pack a valid archive's rows, objects and payloads into parts of another size",
    long_about = "Re-pack a valid archive's rows, objects and payloads into parts of --part-bytes \
with the producer's packing rule (rows of one table per part, at most min(1000, \
ceil(partBytes/128)) rows, 200 bytes of room; one object or payload chunk per part).

The input is read once and verified as it is read (every rule of `ndarc verify`); the new \
parts are kept in a temporary file meanwhile, and the output is written only when the input \
is valid. An input that does not verify (an edited row, a CRLF copy …) is never re-sealed: \
its findings are printed and nothing is written.

Rows, bytes and every manifest member but partCount are unchanged, so contentHash stays the \
same; partCount and archiveHash change. The input may be a file, `-` for standard input, or \
a SQLite database (packed on the fly).",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The archive to re-pack (`-` for standard input; a SQLite database
    /// is packed on the fly).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// `--part-bytes`: the new part size.
    #[command(flatten)]
    pub part_bytes: PartBytes,
    /// Print a JSON summary (bytes, partCount, hashes, rows per table) on
    /// standard error.
    #[arg(long)]
    pub summary: bool,
    /// `--jobs`: threads verifying lines.
    #[command(flatten)]
    pub jobs: Jobs,
    /// `--max-errors`.
    #[command(flatten)]
    pub max_errors: MaxErrors,
    /// The limits group.
    #[command(flatten)]
    pub limits: Limits,
    /// `-o FILE` and `--force`.
    #[command(flatten)]
    pub output: OutputArgs,
    /// `--exclude-table`, `--include-table`, `--secret-column`, as `pack`
    /// takes them, for a database input.
    #[command(flatten)]
    pub tables: DatabaseTables,
}

/// Runs `ndarc repart`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    if let Some(dest) = &args.output.output {
        refuse_input(dest, &[&args.input])?;
    }
    args.tables
        .refuse_without_database([args.input.as_path()], "")?;
    let tables = args.tables.checked()?;
    let name = if is_stdio(&args.input) {
        "<stdin>".to_string()
    } else {
        match std::fs::metadata(&args.input) {
            Ok(meta) if meta.is_dir() => {
                return Err(Failure::new(format!(
                    "cannot open {}: is a directory",
                    args.input.display()
                )))
            }
            // Checked on the path, before opening: opening a FIFO would
            // block until a writer comes.
            Ok(meta) if !meta.is_file() => {
                return Err(Failure::new(format!(
                "cannot re-pack {}: not a regular file (give `-` to read a pipe on standard input)",
                args.input.display()
            )))
            }
            Ok(_) => {}
            Err(e) => return Err(Failure::path("cannot open", &args.input, &e)),
        }
        args.input.display().to_string()
    };
    let options = verify_options(
        &args.max_errors,
        &args.limits,
        &AcceptFormat::default(),
        args.jobs.get(),
    );
    let part_bytes = args.part_bytes.part_bytes;
    let mut out = args.output.open(ARCHIVE_MODE)?;
    let spool = spool(args.output.output.as_deref())?;
    let result = if is_stdio(&args.input) {
        repart_stream(std::io::stdin(), part_bytes, &options, spool, &mut out)
    } else if is_database(&args.input) {
        let header = tables.apply(Header::for_database(&args.input));
        let mut packing = PackStream::spawn(&args.input, &header);
        let r = match packing.reader() {
            Some(reader) => repart_stream(reader, part_bytes, &options, spool, &mut out),
            None => return Err(Failure::new("the database could not be packed")),
        };
        if let Err(why) = packing.finish() {
            term::error(ctx.colour, &format!("{name}: {why}"));
            return Ok(Status::Findings);
        }
        r
    } else {
        repart_path(&args.input, part_bytes, &options, spool, &mut out)
    };
    finish(result, out, &name, &args, ctx)
}

/// The temporary file that holds the new parts until the manifest (whose
/// `partCount` they decide) is written: unnamed, beside the output file
/// (the same file system), or in the temporary directory.
fn spool(output: Option<&Path>) -> Result<std::fs::File, Failure> {
    let dir = output.filter(|p| !is_stdio(p)).map(|p| match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    });
    let made = match &dir {
        Some(d) => tempfile::tempfile_in(d),
        None => tempfile::tempfile(),
    };
    made.map_err(|e| Failure::io("cannot create a temporary file", &e))
}

fn finish(
    result: Result<Summary, Error>,
    out: Output,
    name: &str,
    args: &Args,
    ctx: &Context,
) -> CmdResult {
    match result {
        Ok(summary) => {
            out.finish()?;
            if args.summary {
                write_summary(&summary_json(&summary))?;
            }
            Ok(Status::Success)
        }
        Err(Error::Invalid(report)) => {
            // Nothing was written: `out` is dropped (a file is removed).
            drop(out);
            let text = human_text(name, &report, false, ctx.colour.stderr);
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
            term::error(
                ctx.colour,
                &format!("{name} is not a valid archive; nothing was written"),
            );
            Ok(Status::Findings)
        }
        // Writing the output or the spool (the temporary file of parts).
        Err(Error::Io(e)) => Err(Failure::io(
            format_args!("cannot write {} (re-packing {name})", out.name()),
            &e,
        )),
        Err(Error::Read(e)) => Err(Failure::new(e.to_string())),
        Err(e) => {
            term::error(
                ctx.colour,
                &format!("{name}: {}", term::one_line(&e.to_string())),
            );
            Ok(Status::Findings)
        }
    }
}
