//! The `ndarc` command-line tool, as a library of commands and shared
//! helpers; `src/main.rs` holds the argument parser and dispatch.
//!
//! # Adding a command
//!
//! A command is one module `src/cmd/NAME.rs` with
//!
//! - `pub struct Args` (`#[derive(clap::Args)]`, with `#[command(long_about
//!   = …, after_help = …)]` giving examples), and
//! - `pub fn run(args: Args, ctx: &Context) -> CmdResult`,
//!
//! plus `pub mod NAME;` in `src/cmd/mod.rs`, one variant of `Command` and one
//! arm in `run` in `src/main.rs`. Shared pieces:
//!
//! - [`io`]: inputs (a path or `-` for standard input; a directory is an
//!   error), bounded line reading, standard output or an atomic `-o FILE`
//!   that refuses to replace a file without `--force`;
//! - [`term`]: the colour decision (`--color`, `NO_COLOR`, terminals) and
//!   `FILE:LINE:OFFSET: CODE: message` diagnostics;
//! - [`flags`]: the flags several commands share, each defined once (the
//!   limits group, `--max-errors`, `--format`, `--jobs`, byte sizes);
//! - [`exit`]: statuses — 0 success, 1 findings or differences, 2 could not
//!   run (usage, I/O).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod child;
pub mod cmd;
pub mod dbinput;
pub mod exit;
pub mod flags;
pub mod io;
pub mod term;

/// What every command gets besides its arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    /// Whether to colour standard output and standard error.
    pub colour: term::Colour,
}
