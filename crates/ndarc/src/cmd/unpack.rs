//! `ndarc unpack`: an archive to a SQLite database, its objects and
//! payloads to files (ndarc-sqlite).

use std::path::PathBuf;

use ndarc_sqlite::unpack::{unpack, UnpackOptions};

use crate::exit::{CmdResult, Failure, Status};
use crate::flags::Jobs;
use crate::io::{input_refused, is_under, refuse_input};
use crate::term;
use crate::Context;

const EXAMPLES: &str = "\
Examples:
  Restore an archive into a new database, its objects and payloads under ./files:
    ndarc unpack export.ndjson -o restored.db --objects-dir ./files

  Look at an archive's rows with SQL:
    ndarc unpack export.ndjson -o /tmp/x.db && sqlite3 /tmp/x.db 'SELECT count(*) FROM users'

Exit status: 0 restored; 1 the archive is invalid, or valid but SQLite cannot hold it (its
sql is rejected, a row breaks a constraint, an object key would leave DIR); 2 could not run
(usage, I/O, an existing output without --force). Nothing is left behind on failure.";

/// Arguments of `ndarc unpack`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Restore an archive into a SQLite database (and its objects and payloads into files)",
    long_about = "Restore an archive as the producer's import would: verify it first, then \
create each table from its sql in dependency order and insert its rows with their rowids, \
in one transaction, into a temporary file renamed into place at the end.

With --objects-dir DIR, objects are written to DIR/objects/BUCKET/KEY and payloads to \
DIR/payloads/NAME, each atomically. Every file written is 600 and every directory created \
700, whatever the umask, unless --mode says otherwise. A key with an empty, '.' or '..' segment, an absolute \
path, a NUL or a symbolic link already in DIR on its way is refused before anything is \
written. Existing files are replaced only with --force.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The archive (a file: it is verified, then read again).
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// The database to create.
    #[arg(short, long, value_name = "DB")]
    pub output: PathBuf,
    /// Write objects and payloads under DIR.
    #[arg(long, value_name = "DIR")]
    pub objects_dir: Option<PathBuf>,
    /// Replace an existing database and existing object files (never the
    /// archive, nor a database path that is not a regular file).
    #[arg(long)]
    pub force: bool,
    /// The mode of every file written (the database, objects, payloads),
    /// in octal; directories created get it plus x where r (600 → 700,
    /// 640 → 750). Default 600 whatever the umask: an archive's content is
    /// private. A file replaced with --force keeps its mode.
    #[arg(long, value_name = "OCTAL", value_parser = crate::io::parse_mode)]
    pub mode: Option<u32>,
    /// `--jobs`: verification threads.
    #[command(flatten)]
    pub jobs: Jobs,
}

/// Refuses outputs that would destroy an input or a node that is not a
/// regular file, before the library is called: the archive as the
/// database (even with --force), a database path that is a FIFO, device
/// or socket (it is written to a temporary file and renamed over DB), and
/// with --force an archive inside DIR/objects or DIR/payloads, where an
/// object or payload could replace it.
fn refuse_outputs(args: &Args) -> Result<(), Failure> {
    refuse_input(&args.output, &[&args.archive])?;
    if let Ok(meta) = std::fs::metadata(&args.output) {
        if !meta.is_file() && !meta.is_dir() {
            return Err(Failure::new(format!(
                "cannot write {}: not a regular file; the database is written beside it and renamed into place, which would replace it",
                args.output.display()
            )));
        }
    }
    if let (Some(dir), true) = (&args.objects_dir, args.force) {
        // The file itself, wherever a link to it is.
        let archive = std::fs::canonicalize(&args.archive).unwrap_or_else(|_| args.archive.clone());
        for sub in ["objects", "payloads"] {
            if is_under(&archive, &dir.join(sub)) {
                return Err(input_refused(&args.archive));
            }
        }
    }
    Ok(())
}

/// Runs `ndarc unpack`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    if args.archive.as_os_str() == "-" {
        return Err(Failure::new(
            "unpack reads its input twice; give a file, not standard input",
        ));
    }
    refuse_outputs(&args)?;
    let opts = UnpackOptions {
        objects_dir: args.objects_dir.clone(),
        force: args.force,
        jobs: args.jobs.get(),
        mode: args.mode.unwrap_or(ndarc_sqlite::unpack::PRIVATE_MODE),
    };
    let name = args.archive.display().to_string();
    match unpack(&args.archive, &args.output, &opts) {
        Ok(s) => {
            if s.skipped > 0 {
                term::error(
                    ctx.colour,
                    &format!(
                        "note: {} objects and payloads not written (no --objects-dir)",
                        s.skipped
                    ),
                );
            }
            Ok(Status::Success)
        }
        Err(e) if e.exit_code() == 1 => {
            let text = e.to_string();
            let message = text.split_once(": ").map_or(text.as_str(), |(_, m)| m);
            term::file_diagnostic(ctx.colour, &name, e.code(), message);
            Ok(Status::Findings)
        }
        Err(e) => Err(Failure::new(format!(
            "{name}: {}",
            term::one_line(&e.to_string())
        ))),
    }
}
