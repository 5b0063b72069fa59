//! `ndarc mutate`: break exactly one rule of a valid archive
//! (ndarc-gen's mutator), for testing importers and verifiers.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use ndarc_format::Code;
use ndarc_gen::mutate::{
    file_codes, mutation, mutations, Mutant, INTEGRITY_ONLY, LINEAGE_ONLY, POLICY_ONLY, PUSH_ONLY,
};

use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{parse_size, DatabaseTables, Mode, PackTables};
use crate::io::{refuse_input, AtomicFile, FileMode, Input, Output, ReadError, ARCHIVE_MODE};
use crate::term;
use crate::Context;

/// The default `--max-input-bytes`: mutants are built in memory, at 10 to
/// 13 times the input at the peak (620-640 MB for 64 MB of `ndarc gen`
/// output; docs/commands.md, Limits).
pub(crate) const DEFAULT_MAX_INPUT_BYTES: &str = "64M";

const EXAMPLES: &str = "\
Examples:
  One mutant, its rule chosen by the seed; what it broke is printed:
    ndarc mutate export.ndjson --seed 7 -o bad.ndjson
    row_not_null at line 5 (mutation row_not_null): row 2 of \"users\" (part 3): users.name (TEXT) NOT NULL, holds null

  A mutant of a chosen rule (a code, or a mutation name from --list):
    ndarc mutate export.ndjson --code sha256_mismatch --seed 3 -o bad.ndjson

  One mutant per rule a file can break, with an index of what each breaks:
    ndarc mutate export.ndjson --all --outdir mutants/
    ndarc verify --format json mutants/row_type.ndjson

  Every mutation:
    ndarc mutate --list

Each mutant breaks one rule and is re-sealed (counts, schema, partCount and
both hashes recomputed) so that, as far as the format allows, no other rule
breaks. The same input, seed and code give the same bytes.

Exit status: 0 written, 1 no mutation applies to the input (not an archive, or
it lacks what the rule needs), 2 could not run (usage, I/O, an existing output
without --force, a non-empty --outdir without --force).";

/// Arguments of `ndarc mutate`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Break exactly one rule of a valid archive, for testing importers and verifiers",
    long_about = "Write a mutant of a valid archive: a copy that breaks exactly one rule of SPEC.md, \
re-sealed so that no other rule breaks, and print the finding code a verifier must report and the \
line it must report it at.

The target (table, row, column, binary, part or line) is chosen from the archive's content by \
--seed. With --all, one mutant per finding code a file can show is written to --outdir as \
CODE.ndjson, with index.json recording each file's expected code, line, mutation and \
description (and the codes that necessarily or possibly accompany it, as the sidecars of \
testdata/invalid). File names come from codes only.",
    after_help = EXAMPLES
)]
pub struct Args {
    /// The valid archive to mutate (`-` for standard input).
    #[arg(value_name = "FILE", required_unless_present = "list")]
    pub input: Option<PathBuf>,
    /// The seed: which rule (without --code) and which target.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Break this rule: a finding code (`row_type`) or a mutation name
    /// (`row_type`, `json_syntax-nan`; see --list).
    #[arg(long, value_name = "CODE", conflicts_with = "all")]
    pub code: Option<String>,
    /// Write one mutant per finding code to --outdir, with index.json.
    #[arg(long, requires = "outdir")]
    pub all: bool,
    /// With --all: the directory to write to (created if missing; must be
    /// empty unless --force).
    #[arg(long, value_name = "DIR", requires = "all")]
    pub outdir: Option<PathBuf>,
    /// With --all: leave out this code (repeatable), e.g. line_too_long,
    /// whose mutant is 17 MB.
    #[arg(long, value_name = "CODE", requires = "all")]
    pub except: Vec<String>,
    /// List every mutation (code, name, description) and exit.
    #[arg(long, exclusive = true)]
    pub list: bool,
    /// Write the mutant to FILE instead of standard output (atomically:
    /// written beside it, then renamed).
    #[arg(short, long, value_name = "FILE", conflicts_with = "all")]
    pub output: Option<PathBuf>,
    /// Replace an existing FILE; with --all, write into a non-empty
    /// --outdir, replacing its files.
    #[arg(long)]
    pub force: bool,
    /// `--mode`: of the files holding mutants.
    #[command(flatten)]
    pub mode: Mode,
    /// The largest input accepted (K, M, G): a larger file is refused
    /// before it is read, standard input once this much has been read.
    #[arg(long, value_name = "BYTES", default_value = DEFAULT_MAX_INPUT_BYTES,
          value_parser = parse_size)]
    pub max_input_bytes: usize,
    /// `--exclude-table`, `--include-table`, `--secret-column`, as `pack`
    /// takes them, for a database input.
    #[command(flatten)]
    pub tables: DatabaseTables,
}

/// Runs `ndarc mutate`.
pub fn run(args: Args, ctx: &Context) -> CmdResult {
    if args.list {
        return list();
    }
    let Some(path) = args.input.as_deref() else {
        return Err(Failure::new("give the archive to mutate, or --list"));
    };
    if let Some(dest) = &args.output {
        refuse_input(dest, &[path])?;
    }
    args.tables.refuse_without_database([path], "")?;
    let archive = read_input(path, args.max_input_bytes, &args.tables.checked()?)?;
    if args.all {
        let Some(dir) = args.outdir.as_deref() else {
            return Err(Failure::new("--all needs --outdir DIR"));
        };
        let mut except = Vec::new();
        for c in &args.except {
            except.push(parse_code(c)?);
        }
        let mode = args.mode.mode.map_or(ARCHIVE_MODE, FileMode::Exact);
        return all(
            &archive,
            path,
            dir,
            args.seed,
            &except,
            (args.force, mode),
            ctx,
        );
    }
    let result = match args.code.as_deref() {
        None => ndarc_gen::mutate_random(&archive, args.seed),
        Some(name) => match mutation(name) {
            Some(m) if Code::from_name(name).is_none() => m.apply(&archive, args.seed),
            _ => ndarc_gen::mutate(&archive, parse_code(name)?, args.seed),
        },
    };
    let m = match result {
        Ok(m) => m,
        Err(e) => {
            term::error(ctx.colour, &format!("no mutant: {e}"));
            return Ok(Status::Findings);
        }
    };
    let to_stdout = args.output.as_deref().is_none_or(crate::io::is_stdio);
    let mode = args.mode.mode.map_or(ARCHIVE_MODE, FileMode::Exact);
    let mut out = Output::open_with(args.output.as_deref(), args.force, mode)?;
    out.put(&m.bytes)?;
    out.finish()?;
    let info = format!("{}\n", describe(&m));
    if to_stdout {
        let _ = std::io::stderr().write_all(info.as_bytes());
    } else {
        write_stdout(info.as_bytes())?;
    }
    Ok(Status::Success)
}

/// `CODE at line N (mutation NAME): DESCRIPTION`.
pub(crate) fn describe(m: &Mutant) -> String {
    let mut s = format!(
        "{} at line {} (mutation {}): {}",
        m.code,
        m.line,
        m.mutation,
        term::one_line(&m.description)
    );
    if !m.also.is_empty() {
        s.push_str(&format!("; also {}", codes(&m.also)));
    }
    s
}

fn codes(v: &[Code]) -> String {
    v.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
}

/// A finding code by name, as a usage error when unknown.
pub(crate) fn parse_code(name: &str) -> Result<Code, Failure> {
    Code::from_name(name.trim()).ok_or_else(|| {
        Failure::new(format!(
            "unknown code {name:?}; `ndarc mutate --list` shows the codes and mutations"
        ))
    })
}

/// Writes `bytes` to standard output and flushes; a failure is exit 2.
fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| Failure::io("cannot write <stdout>", &e))
}

fn too_large(name: &str, limit: usize) -> Failure {
    Failure::new(format!(
        "{name} is larger than {limit} bytes; mutants are built in memory: raise --max-input-bytes to accept it"
    ))
}

/// Reads a whole input (a file or `-`) of at most `limit` bytes. A larger
/// file is refused before it is read.
/// A database is packed on the fly under `tables`, as `verify` packs it.
pub(crate) fn read_input(
    path: &Path,
    limit: usize,
    tables: &PackTables,
) -> Result<Vec<u8>, Failure> {
    if crate::dbinput::is_database(path) {
        let header = tables.apply(crate::dbinput::Header::for_database(path));
        return crate::dbinput::pack_to_vec(path, &header, limit).map_err(|why| match why {
            Some(why) => Failure::new(format!("{}: {why}", path.display())),
            None => too_large(&path.display().to_string(), limit),
        });
    }
    let mut input = Input::open(path)?;
    if input.file_len().is_some_and(|len| len > limit as u64) {
        return Err(too_large(input.name(), limit));
    }
    match input.read_all(limit) {
        Ok(b) => Ok(b),
        Err(ReadError::TooLong { limit, .. }) => Err(too_large(input.name(), limit)),
        Err(ReadError::Io(e)) => Err(Failure::io(
            format_args!("cannot read {}", input.name()),
            &e,
        )),
    }
}

fn list() -> CmdResult {
    let mut s = String::new();
    for m in mutations() {
        s.push_str(&format!(
            "{:<27} {:<34} {}\n",
            m.code.as_str(),
            m.name,
            m.description
        ));
    }
    // Codes no single file shows, so no mutation makes them: listed so that
    // every code appears, with where it is tested.
    for code in PUSH_ONLY {
        s.push_str(&format!(
            "{:<27} {:<34} only the push API reports it (parts arriving one by one); no file shows it\n",
            code.as_str(),
            "-"
        ));
    }
    for code in POLICY_ONLY {
        s.push_str(&format!(
            "{:<27} {:<34} only verify --policy reports it (corpus: testdata/invalid/{code}*)\n",
            code.as_str(),
            "-"
        ));
    }
    for code in INTEGRITY_ONLY {
        s.push_str(&format!(
            "{:<27} {:<34} only verify --integrity reports it (corpus: testdata/invalid/{code}*)\n",
            code.as_str(),
            "-"
        ));
    }
    for code in LINEAGE_ONLY {
        s.push_str(&format!(
            "{:<27} {:<34} only verify A --later B reports it, between two archives; no file alone shows it\n",
            code.as_str(),
            "-"
        ));
    }
    write_stdout(s.as_bytes())?;
    Ok(Status::Success)
}

/// Prepares an output directory: creates it when missing; refuses one that
/// holds anything unless `force`; refuses a file.
pub(crate) fn prepare_outdir(dir: &Path, force: bool) -> Result<(), Failure> {
    match fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => Err(Failure::new(format!(
            "{} is not a directory",
            dir.display()
        ))),
        Ok(_) => {
            let mut entries =
                fs::read_dir(dir).map_err(|e| Failure::path("cannot read", dir, &e))?;
            if entries.next().is_some() && !force {
                Err(Failure::new(format!(
                    "{} is not empty; use --force to write into it",
                    dir.display()
                )))
            } else {
                Ok(())
            }
        }
        Err(_) => fs::create_dir_all(dir).map_err(|e| Failure::path("cannot create", dir, &e)),
    }
}

/// Writes `bytes` to `path` atomically, with `mode` for a new file.
pub(crate) fn write_atomic(
    path: &Path,
    bytes: &[u8],
    force: bool,
    mode: FileMode,
) -> Result<(), Failure> {
    let mut f = AtomicFile::create_with(path, force, mode)?;
    f.write_all(bytes)
        .map_err(|e| Failure::path("cannot write", path, &e))?;
    f.commit()
}

fn all(
    archive: &[u8],
    source: &Path,
    dir: &Path,
    seed: u64,
    except: &[Code],
    (force, mode): (bool, FileMode),
    ctx: &Context,
) -> CmdResult {
    prepare_outdir(dir, force)?;
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    let mut report = String::new();
    for code in file_codes() {
        if except.contains(&code) {
            continue;
        }
        match ndarc_gen::mutate(archive, code, seed) {
            Ok(m) => {
                // The name comes from the code alone: [a-z0-9_], never a
                // path from the archive.
                let file = format!("{}.ndjson", code.as_str());
                write_atomic(&dir.join(&file), &m.bytes, force, mode)?;
                report.push_str(&format!("{file}: {}\n", describe(&m)));
                written.push(serde_json::json!({
                    "file": file,
                    "code": m.code.as_str(),
                    "line": m.line,
                    "mutation": m.mutation,
                    "description": m.description,
                    "also": m.also.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
                    "allow": m.allow.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
                    "severity": m.code.severity().as_str(),
                }));
            }
            Err(e) => {
                report.push_str(&format!("{}: not applicable: {}\n", code, e.reason));
                skipped.push(serde_json::json!({"code": code.as_str(), "reason": e.reason}));
            }
        }
    }
    let index = serde_json::json!({
        "source": source.display().to_string(),
        "seed": seed,
        "mutants": written,
        "notApplicable": skipped,
    });
    let mut text = serde_json::to_vec_pretty(&index)
        .map_err(|e| Failure::new(format!("cannot write index.json: {e}")))?;
    text.push(b'\n');
    write_atomic(&dir.join("index.json"), &text, force, FileMode::Umask)?;
    report.push_str(&format!(
        "{} mutants and index.json written to {}\n",
        written.len(),
        dir.display()
    ));
    write_stdout(report.as_bytes())?;
    if written.is_empty() {
        term::error(ctx.colour, "no mutation applies to this input");
        return Ok(Status::Findings);
    }
    Ok(Status::Success)
}
