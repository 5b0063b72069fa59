//! `ndarc unpack`: an archive to a SQLite database, its objects and
//! payloads to files (ndarc-sqlite).

use std::path::PathBuf;

use ndarc_sqlite::unpack::{unpack, unpack_reader, UnpackOptions};

use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{Jobs, Mode};
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
    long_about = "Restore an archive as the producer's import would, reading it once: each \
line is verified as it is read, and only what the verification accepted is restored. Each \
table is created from its sql (one CREATE TABLE statement, judged by SQLite; a connection that \
can attach, load and trigger nothing) in dependency order and its rows are inserted with their \
rowids, in one transaction, into a temporary file. Only when the whole archive has verified is \
it committed and renamed into place, and the objects and payloads moved into place; an \
invalid archive leaves nothing.

With --objects-dir DIR, objects are written to DIR/objects/BUCKET/KEY and payloads to \
DIR/payloads/NAME, each atomically; a bucket with objects whose httpMetadata or \
customMetadata is not empty also gets DIR/metadata/BUCKET.json, the sidecar pack \
--bucket-metadata reads. Every file written is 600 and every directory created \
700, whatever the umask, unless --mode says otherwise. A key with an empty, '.' or '..' segment, an absolute \
path, a NUL or a symbolic link already in DIR on its way, and two entries that map to one \
path, are refused before anything is written. Existing files are replaced only with --force; \
a database replaced also loses its -wal, -journal and -shm files, which SQLite would otherwise \
replay onto the restored file.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The archive, or `-` for standard input: read once, verified as it is
    /// read; nothing is written unless it is valid.
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
    /// `--mode`: of every file written (the database, objects, payloads).
    #[command(flatten)]
    pub mode: Mode,
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
    let from_stdin = crate::io::is_stdio(&args.archive);
    if let (Some(dir), true, false) = (&args.objects_dir, args.force, from_stdin) {
        // The file itself, wherever a link to it is.
        let archive = std::fs::canonicalize(&args.archive).unwrap_or_else(|_| args.archive.clone());
        for sub in ["objects", "payloads", ndarc_sqlite::metadata::SIDECAR_DIR] {
            if is_under(&archive, &dir.join(sub)) {
                return Err(input_refused(&args.archive));
            }
        }
    }
    Ok(())
}

/// Runs `ndarc unpack`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    refuse_outputs(&args)?;
    let opts = UnpackOptions {
        objects_dir: args.objects_dir.clone(),
        force: args.force,
        jobs: args.jobs.get(),
        mode: args.mode.mode.unwrap_or(ndarc_sqlite::unpack::PRIVATE_MODE),
        temp_files: Some(ndarc_sqlite::unpack::TempFiles {
            create: |paths, create| {
                crate::io::cleanup::creating(|made| {
                    paths.iter().for_each(|p| made(p));
                    create()
                })
            },
            done: crate::io::cleanup::unregister,
        }),
    };
    let stdin = args.archive.as_os_str() == "-";
    let name = if stdin {
        "<stdin>".to_string()
    } else {
        args.archive.display().to_string()
    };
    let result = if stdin {
        unpack_reader(std::io::stdin(), &args.output, &opts)
    } else {
        unpack(&args.archive, &args.output, &opts)
    };
    match result {
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
