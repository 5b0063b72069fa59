//! `ndarc repart`: re-pack an archive into parts of another size
//! (ndarc-gen).

use std::path::PathBuf;

use ndarc_gen::{repartition_file, Error};

use crate::cmd::gen::{summary_json, write_summary};
use crate::exit::{CmdResult, Failure, Status};
use crate::flags::parse_size;
use crate::io::{is_stdio, refuse_input, OutputArgs, ARCHIVE_MODE};
use crate::term;
use crate::Context;

const EXAMPLES: &str = "\
Examples:
  Re-pack into 1 MiB parts:
    ndarc repart export.ndjson --part-bytes 1MiB -o export.1m.ndjson

  The content hash stays, the archive hash and partCount change:
    ndarc repart export.ndjson --part-bytes 4KiB --summary -o small-parts.ndjson

Exit status: 0 written, 1 the input is not an archive that can be re-packed (a line that
does not parse, no closing line, a row too large for the new part size), 2 could not run
(usage, I/O, an existing output without --force).";

/// Arguments of `ndarc repart`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Re-pack an archive's rows, objects and payloads into parts of another size",
    long_about = "Re-pack a valid archive's rows, objects and payloads into parts of --part-bytes \
with the producer's packing rule (rows of one table per part, at most min(1000, \
ceil(partBytes/128)) rows, 200 bytes of room; one object or payload chunk per part).

Rows, bytes and every manifest member but partCount are unchanged, so contentHash stays the \
same; partCount and archiveHash change. The input is read twice, a line at a time, so it must \
be a file, not standard input.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The archive to re-pack (a file: it is read twice).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// The new part size, 1KiB to 16MiB (K, M suffixes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub part_bytes: usize,
    /// Print a JSON summary (bytes, partCount, hashes, rows per table) on
    /// standard error.
    #[arg(long)]
    pub summary: bool,
    /// `-o FILE` and `--force`.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `ndarc repart`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    if is_stdio(&args.input) {
        return Err(Failure::new(
            "repart reads its input twice; give a file, not standard input",
        ));
    }
    // Checked on the path, before opening: opening a FIFO would block
    // until a writer comes, and a second pass could never read it again.
    match std::fs::metadata(&args.input) {
        Ok(meta) if meta.is_dir() => {
            return Err(Failure::new(format!(
                "cannot open {}: is a directory",
                args.input.display()
            )))
        }
        Ok(meta) if !meta.is_file() => {
            return Err(Failure::new(format!(
                "cannot re-pack {}: not a regular file (repart reads its input twice)",
                args.input.display()
            )))
        }
        Ok(_) => {}
        Err(e) => return Err(Failure::path("cannot open", &args.input, &e)),
    }
    if let Some(dest) = &args.output.output {
        refuse_input(dest, &[&args.input])?;
    }
    if !(1024..=ndarc_format::MAX_PART_LINE).contains(&args.part_bytes) {
        return Err(Failure::new(format!(
            "--part-bytes must be from 1KiB to 16MiB, not {}",
            args.part_bytes
        )));
    }
    let mut out = args.output.open(ARCHIVE_MODE)?;
    let name = out.name();
    match repartition_file(&args.input, args.part_bytes, &mut out) {
        Ok(summary) => {
            out.finish()?;
            if args.summary {
                write_summary(&summary_json(&summary))?;
            }
            Ok(Status::Success)
        }
        Err(Error::Io(e)) => {
            // A read error names the input; a write error the output.
            let what = if e.kind() == std::io::ErrorKind::NotFound {
                format!("cannot open {}", args.input.display())
            } else {
                format!("cannot re-pack {} into {name}", args.input.display())
            };
            Err(Failure::io(what, &e))
        }
        Err(e) => {
            term::error(
                ctx.colour,
                &format!(
                    "{}: {}",
                    args.input.display(),
                    term::one_line(&e.to_string())
                ),
            );
            Ok(Status::Findings)
        }
    }
}
