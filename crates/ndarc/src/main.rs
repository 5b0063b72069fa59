//! `ndarc`: command-line tools for the portability archive.
//!
//! To add a command: a module `src/cmd/NAME.rs` (see the library docs in
//! `src/lib.rs`), one variant of [`Command`] and one arm in [`run`].

#![deny(unsafe_code)]

use std::process::ExitCode;

// Verification and diff allocate many small values per line on every core;
// mimalloc's per-thread heaps are faster at that than glibc malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (libmimalloc-sys
/// names no constant for it; the test `purge_delay_option` checks that
/// this is the option, by its default of 1000 ms).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays committed before it goes back to the
/// system: 10 ms. At 0, every parse tree `verify --integrity` builds and
/// frees per line was committed again page by page (on a 129 MB archive:
/// 224,000 page faults and 1.88 s, against 22,000 and 1.40 s at 10 ms); the
/// peak RSS of plain verification stays within 3 % (a 437 MB archive of
/// 16 MiB lines: 89-91 MiB at 0, 92-93 MiB at 10 ms).
const PURGE_DELAY_MS: std::ffi::c_long = 10;

/// Freed memory goes back to the system at once, or nearly
/// ([`PURGE_DELAY_MS`]). mimalloc keeps it committed for a second by
/// default; verification frees and allocates
/// 8-16 MiB read blocks and decoded chunks, so that in a run of a second
/// or less the peak RSS was nearly the sum of them all (a 438 MB archive
/// with 16 MiB lines: 119-135 MiB for 72 MiB live). Measured on
/// `gen --shape narrow`, the CPU time is the same either way.
#[allow(unsafe_code)]
fn purge_freed_memory_at_once() {
    // SAFETY: sets an option, which mimalloc reads whenever it purges;
    // any value is valid.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
}

/// Hands the memory freed so far back to the system now, the purge delay
/// aside (`mi_collect(true)`: the abandoned heaps of threads that ended
/// are reclaimed and their free pages purged): run once a database's pack
/// is done, on its thread, before its archive is read
/// (`ndarc::dbinput::on_packed`).
#[allow(unsafe_code)]
fn release_freed_memory() {
    // SAFETY: asks mimalloc, the global allocator, to collect; it takes no
    // pointer and is safe to call from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// No transparent huge pages for this process. mimalloc asks for them
/// (`madvise(MADV_HUGEPAGE)`) on the memory it reserves, where a system
/// gives them on request (`/sys/kernel/mm/transparent_hugepage/enabled`
/// set to `madvise`, as on Debian and Ubuntu): every 2 MiB region then
/// became resident whole at its first touch, and again after each purge,
/// zeroed by the kernel. Without them, `diff -q` of two 191 MB archives
/// held 48-57 MiB instead of 73-80 MiB, and of two 956 MB archives 74-79
/// instead of 98-103 MiB, in the same time (benches/README.md, issue 26).
/// mimalloc's own option (`allow_thp`) is read when it reserves its first
/// arena, which is before `main`; the process flag stops huge pages for
/// every later fault (and is inherited by child processes, so the fuzzers,
/// which run the user's programs, leave it alone).
fn no_transparent_huge_pages() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // Not fatal: a kernel without the flag keeps its huge pages.
        let _ = rustix::thread::disable_transparent_huge_pages(true);
    }
}

use std::io::Write;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use ndarc::exit::{CmdResult, Failure, Status, EXIT_FAILURE};
use ndarc::io::{AtomicFile, FileMode};
use ndarc::term::{self, ColorChoice, Colour};
use ndarc::{cmd, Context};

/// Tools for the portability archive, an NDJSON export format.
#[derive(Debug, Parser)]
#[command(
    name = "ndarc",
    version,
    about = "Tools for the portability archive (NDJSON: a manifest line, part lines, a closing line)",
    propagate_version = true,
    arg_required_else_help = true,
    after_help = "\
Exit status:
  0  success
  1  findings: invalid or non-canonical input, or differences
  2  could not run: a usage error, a file that cannot be read or written

Examples:
  ndarc verify export.ndjson
  ndarc inspect export.ndjson
  ndarc canon export.ndjson -o export.canon.ndjson
  ndarc canon --check export.ndjson
  ndarc pack shop.db -o shop.ndjson
  ndarc unpack shop.ndjson -o restored.db
  ndarc help canon
  ndarc completions bash > /etc/bash_completion.d/ndarc
  ndarc man verify | man -l -"
)]
struct Cli {
    /// When to colour output.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t, global = true)]
    color: ColorChoice,

    #[command(subcommand)]
    command: Command,
}

/// The subcommands. Add a variant per command (see the crate docs).
#[derive(Debug, Subcommand)]
enum Command {
    // Help texts come from each command's `Args` (`about`, `long_about`,
    // `after_help`).
    Canon(cmd::canon::Args),
    Verify(cmd::verify::Args),
    Inspect(cmd::inspect::Args),
    Gen(cmd::gen::Args),
    Repart(cmd::repart::Args),
    Mutate(cmd::mutate::Args),
    FuzzConsumer(cmd::fuzz_consumer::Args),
    FuzzProducer(cmd::fuzz_producer::Args),
    Diff(cmd::diff::Args),
    Pack(cmd::pack::Args),
    Unpack(cmd::unpack::Args),
    Completions(Completions),
    Man(Man),
}

/// `ndarc completions SHELL`: a completion script from the one flag
/// definition.
#[derive(Debug, clap::Args)]
#[command(
    about = "Print a shell completion script",
    after_help = "\
Examples:
  ndarc completions bash > /etc/bash_completion.d/ndarc
  ndarc completions zsh > \"${fpath[1]}/_ndarc\"
  ndarc completions fish > ~/.config/fish/completions/ndarc.fish
  ndarc completions powershell >> $PROFILE"
)]
struct Completions {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// `ndarc man [COMMAND] [--dir DIR]`: manual pages from the one flag
/// definition.
#[derive(Debug, clap::Args)]
#[command(
    about = "Print a manual page (roff), or write every page to a directory",
    after_help = "\
Examples:
  ndarc man | man -l -
  ndarc man verify | man -l -
  ndarc man --dir /usr/local/share/man/man1"
)]
struct Man {
    /// The command whose page to print (default: ndarc(1) itself).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    command: Option<String>,
    /// Write ndarc.1 and ndarc-COMMAND.1 for every command into DIR
    /// (created if missing; existing pages are replaced, each through a
    /// temporary file and a rename; a symbolic link at a page's name is
    /// replaced, never followed).
    #[arg(long, value_name = "DIR")]
    dir: Option<std::path::PathBuf>,
}

/// Every page: `ndarc` itself, then `ndarc-COMMAND` for each command, with
/// the file name each goes to.
fn man_pages() -> Vec<(String, clap::Command)> {
    let root = Cli::command();
    let mut pages = vec![("ndarc".to_string(), root.clone())];
    for sub in root.get_subcommands() {
        let name = format!("ndarc-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    pages
}

fn render_man(cmd: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(cmd).render(out)
}

fn run_man(args: Man) -> CmdResult {
    if let Some(dir) = args.dir {
        std::fs::create_dir_all(&dir).map_err(|e| Failure::path("cannot create", &dir, &e))?;
        for (name, cmd) in man_pages() {
            let path = dir.join(format!("{name}.1"));
            let mut page = Vec::new();
            render_man(cmd, &mut page).map_err(|e| Failure::io("cannot render", &e))?;
            // Through a temporary file and a rename: a reader never sees a
            // partial page, and a symbolic link planted at the page's name
            // is replaced, never written through.
            let mut file = AtomicFile::replace_never_following(&path, FileMode::Umask)?;
            file.write_all(&page)
                .map_err(|e| Failure::path("cannot write", &path, &e))?;
            file.commit()?;
        }
        return Ok(Status::Success);
    }
    let want = match &args.command {
        Some(c) => format!("ndarc-{c}"),
        None => "ndarc".to_string(),
    };
    let Some((_, cmd)) = man_pages().into_iter().find(|(name, _)| *name == want) else {
        return Err(Failure::new(format!(
            "no command {:?}: `ndarc --help` lists them",
            args.command.unwrap_or_default()
        )));
    };
    let mut out = std::io::stdout().lock();
    render_man(cmd, &mut out)
        .and_then(|()| out.flush())
        .map_err(|e| Failure::io("cannot write output", &e))?;
    Ok(Status::Success)
}

fn run_completions(args: Completions) -> CmdResult {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "ndarc", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)
        .and_then(|()| out.flush())
        .map_err(|e| Failure::io("cannot write output", &e))?;
    Ok(Status::Success)
}

/// Runs the chosen command.
fn run(command: Command, ctx: &Context) -> CmdResult {
    // The flag passes to child processes: the fuzzers' programs under test
    // run as the user would run them.
    if !matches!(command, Command::FuzzConsumer(_) | Command::FuzzProducer(_)) {
        no_transparent_huge_pages();
    }
    match command {
        Command::Canon(args) => cmd::canon::run(args, ctx),
        Command::Verify(args) => cmd::verify::run(args, ctx),
        Command::Inspect(args) => cmd::inspect::run(args, ctx),
        Command::Gen(args) => cmd::gen::run(args, ctx),
        Command::Repart(args) => cmd::repart::run(args, ctx),
        Command::Mutate(args) => cmd::mutate::run(args, ctx),
        Command::FuzzConsumer(args) => cmd::fuzz_consumer::run(args, ctx),
        Command::FuzzProducer(args) => cmd::fuzz_producer::run(args, ctx),
        Command::Diff(args) => cmd::diff::run(args, ctx),
        Command::Pack(args) => cmd::pack::run(args, ctx),
        Command::Unpack(args) => cmd::unpack::run(args, ctx),
        Command::Completions(args) => run_completions(args),
        Command::Man(args) => run_man(args),
    }
}

fn main() -> ExitCode {
    purge_freed_memory_at_once();
    ndarc::dbinput::on_packed(release_freed_memory);
    // `--version` also names the SHA-256 code this CPU runs, which
    // benchmark figures depend on.
    let command = Cli::command().long_version(format!(
        "{} (SHA-256 kernel: {})",
        env!("CARGO_PKG_VERSION"),
        ndarc_sha::kernel()
    ));
    let parsed = command
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // Help and --version exit 0; usage errors exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_FAILURE } else { 0 });
        }
    };
    let ctx = Context {
        colour: Colour::detect(cli.color),
    };
    // A write beyond the file size limit (`ulimit -f`) raises SIGXFSZ,
    // which kills the process by default and leaves its temporary files
    // behind. Caught, the write fails with EFBIG instead and is reported
    // as any other write error (exit 2, temporary files removed). Children
    // (fuzz-consumer's and fuzz-producer's) get the default back at exec.
    #[cfg(unix)]
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    match run(cli.command, &ctx) {
        Ok(status) => status.exit_code(),
        Err(failure) => {
            if !failure.is_broken_pipe() {
                term::error(ctx.colour, failure.message());
            }
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option set at start-up is the purge delay: mimalloc's default
    /// for it is 1000 ms, and setting it is read back.
    #[test]
    #[allow(unsafe_code)]
    fn purge_delay_option() {
        // SAFETY: reads an option.
        let before = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(before, 1000);
        purge_freed_memory_at_once();
        // SAFETY: as above.
        let after = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(after, PURGE_DELAY_MS);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn transparent_huge_pages_are_turned_off() {
        no_transparent_huge_pages();
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().ok(),
            Some(true)
        );
    }

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
