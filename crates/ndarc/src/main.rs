//! `ndarc`: command-line tools for the portability archive.
//!
//! To add a command: a module `src/cmd/NAME.rs` (see the library docs in
//! `src/lib.rs`), one variant of [`Command`] and one arm in [`run`].

#![forbid(unsafe_code)]

use std::process::ExitCode;

// Verification and diff allocate many small values per line on every core;
// mimalloc's per-thread heaps are faster at that than glibc malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

use ndarc::exit::{CmdResult, EXIT_FAILURE};
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
  ndarc help canon"
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
}

/// Runs the chosen command.
fn run(command: Command, ctx: &Context) -> CmdResult {
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
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
