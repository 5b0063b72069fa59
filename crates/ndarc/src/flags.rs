//! Flags shared by several commands, each defined once (the model is
//! ripgrep's `crates/core/flags`): the limits group, `--max-errors`, the
//! output format, `--jobs` ([`Jobs`]), `--accept-format`, `--quiet`,
//! `--part-bytes`, `--mode`, the one parser of byte sizes and the one
//! conversion of these flags into the verifier's options
//! ([`verify_options`]).
//!
//! A command flattens the groups it needs (`#[command(flatten)]`), so a
//! flag has one name, one parser, one default and one help text wherever
//! it appears.

use crate::exit::Failure;

/// The largest byte size any flag accepts: 4 GiB. A larger limit could not
/// be honoured (a line is held in memory) and would risk wrapping around in
/// offset arithmetic, so it is refused with a usage error, not clamped.
pub(crate) const MAX_SIZE: u64 = 4 << 30;

/// Parses a byte count: digits with an optional binary suffix `K`, `KiB`,
/// `M`, `MiB`, `G`, `GiB` (case-insensitive), from 1 to [`MAX_SIZE`].
pub(crate) fn parse_size(s: &str) -> Result<usize, String> {
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
    if digits.is_empty() {
        return Err(format!(
            "expected a number of bytes like 16777216 or 16M, got {s:?}"
        ));
    }
    let too_large = || format!("{s} is too large: at most 4G ({MAX_SIZE} bytes)");
    // Digits beyond u64 are too large, not malformed.
    let n: u64 = digits.parse().map_err(|_| too_large())?;
    let bytes = n.checked_mul(1u64 << shift).ok_or_else(too_large)?;
    if bytes == 0 {
        return Err("must be at least 1 byte".to_string());
    }
    if bytes > MAX_SIZE {
        return Err(too_large());
    }
    usize::try_from(bytes).map_err(|_| too_large())
}

/// Parses `--max-markdown-bytes`: `0` for no cap, else a byte size
/// ([`parse_size`]) of at least
/// [`ndarc_diff::render::MIN_MARKDOWN_BYTES`] (2K).
pub(crate) fn parse_markdown_bytes(s: &str) -> Result<usize, String> {
    if s.trim() == "0" {
        return Ok(0);
    }
    let n = parse_size(s)?;
    let min = ndarc_diff::render::MIN_MARKDOWN_BYTES;
    if n < min {
        return Err(format!(
            "at least {min} bytes (2K), or 0 for no cap; got {n}"
        ));
    }
    Ok(n)
}

/// The limits group: how long a line may be. Every command that reads
/// archive lines takes both, with the same defaults as the format.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Limits {
    /// Longest part or closing line in bytes, without its LF (K, M, G
    /// suffixes; 1 to 4G).
    #[arg(
        long,
        value_name = "BYTES",
        default_value = "16M",
        value_parser = parse_size,
        help_heading = "Limits"
    )]
    pub max_line_bytes: usize,
    /// Longest manifest line (line 1) in bytes, without its LF (K, M, G
    /// suffixes; 1 to 4G).
    #[arg(
        long,
        value_name = "BYTES",
        default_value = "256M",
        value_parser = parse_size,
        help_heading = "Limits"
    )]
    pub max_manifest_bytes: usize,
}

impl Limits {
    /// The limit of line `number` (1-based): the manifest's for line 1.
    pub(crate) fn for_line(&self, number: u64) -> usize {
        if number == 1 {
            self.max_manifest_bytes
        } else {
            self.max_line_bytes
        }
    }
}

/// The default of `--max-errors`, the same in every command.
pub(crate) const DEFAULT_MAX_ERRORS: usize = 100;

/// `--max-errors`: findings shown at most per archive.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct MaxErrors {
    /// Findings reported at most per archive (at least 1); verification
    /// stops after this many errors. The limit bounds what is printed,
    /// never the verdict.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ERRORS,
          value_parser = parse_count)]
    pub max_errors: usize,
}

/// Parses a count of at least 1 (at most 2^32 - 1).
pub(crate) fn parse_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n as usize),
        Err(_) => Err(format!(
            "expected a number from 1 to {}, got {s:?}",
            u32::MAX
        )),
    }
}

/// Output formats of the commands that print a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// For people.
    #[default]
    Human,
    /// One JSON document on standard output.
    Json,
}

/// `--format human|json`, with `--json` as a hidden, deprecated alias of
/// `--format json` (it meant JSON output before the flags were unified).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct FormatArg {
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Deprecated: use --format json.
    #[arg(long, hide = true, conflicts_with = "format")]
    pub json: bool,
}

impl FormatArg {
    /// The format chosen.
    pub fn get(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.format
        }
    }
}

/// `--jobs` above this many threads per core is clamped.
pub(crate) const JOBS_PER_CORE: usize = 4;

/// `--jobs N` clamped to [`JOBS_PER_CORE`] times the cores, with a note on
/// standard error when clamped (0 stays 0: one per core).
pub(crate) fn clamp_jobs(jobs: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let max = cores.saturating_mul(JOBS_PER_CORE);
    if jobs > max {
        crate::term::note(&format!(
            "--jobs {jobs} is more than {JOBS_PER_CORE} per core; using {max}"
        ));
        max
    } else {
        jobs
    }
}

/// `--jobs N` / `-j N`, the one definition every command that runs threads
/// flattens: read it with [`Jobs::get`], which clamps it.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Jobs {
    /// Threads (default 0: one per core; 1 runs on one core only). More
    /// than 4 per core are clamped to that, with a note.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0)]
    pub jobs: usize,
}

impl Jobs {
    /// The number of threads asked, clamped by [`clamp_jobs`] (0: one per
    /// core).
    pub fn get(&self) -> usize {
        clamp_jobs(self.jobs)
    }
}

/// `--accept-format NAME` (repeatable), for the commands that verify.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AcceptFormat {
    /// The accepted `format` identifiers (repeatable): exactly these, in
    /// place of the default `rer-portability`.
    #[arg(long, value_name = "NAME")]
    pub accept_format: Vec<String>,
}

/// `--quiet` / `-q`: nothing on standard output or progress on standard
/// error; the exit status tells (an error that stops the command is still
/// one line on standard error).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Quiet {
    /// Print nothing; only the exit status tells (an error that stops the
    /// command is still one line on standard error).
    #[arg(long, short)]
    pub quiet: bool,
}

/// The one conversion of the verification flags (`--max-errors`, the
/// limits group, `--accept-format`, `--jobs`) into the verifier's options.
pub(crate) fn verify_options(
    max_errors: &MaxErrors,
    limits: &Limits,
    formats: &AcceptFormat,
    jobs: usize,
) -> ndarc_verify::Options {
    let mut options = ndarc_verify::Options {
        max_errors: max_errors.max_errors,
        jobs,
        max_line: limits.max_line_bytes,
        max_manifest_line: limits.max_manifest_bytes,
        ..ndarc_verify::Options::default()
    };
    if !formats.accept_format.is_empty() {
        options.formats = formats.accept_format.clone();
    }
    options
}

/// Parses a part size (`--part-bytes`): a byte size in
/// [`ndarc_format::pack::PART_BYTES`], 1KiB to 16MiB.
pub(crate) fn parse_part_bytes(s: &str) -> Result<usize, String> {
    let n = parse_size(s)?;
    if ndarc_format::pack::PART_BYTES.contains(&n) {
        Ok(n)
    } else {
        Err(format!("a part size is 1KiB to 16MiB, not {n} bytes"))
    }
}

/// `--part-bytes SIZE`: the producer's `partBytes`, the size a part line
/// is packed to (default 16MiB, the producer's).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct PartBytes {
    /// The producer's partBytes, 1KiB to 16MiB (K, M suffixes): parts are
    /// packed up to this size.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_part_bytes)]
    pub part_bytes: usize,
}

/// What of a database is archived: `--exclude-table`, `--include-table`
/// and `--secret-column` (`pack`, and every command that reads a database
/// where an archive is: `verify`, `inspect`, `diff`, `repart`, `mutate`,
/// `fuzz-consumer --base`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DatabaseTables {
    /// Also exclude tables matching PATTERN (ASCII case-insensitive; a
    /// trailing % matches any suffix; repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub exclude_table: Vec<String>,
    /// Archive TABLE even if a pattern excludes it (exact name; repeatable).
    #[arg(long, value_name = "TABLE")]
    pub include_table: Vec<String>,
    /// Leave TABLE.COLUMN out of the rows and list it in excludedColumns
    /// (split at the first '.'; repeatable).
    #[arg(long, value_name = "TABLE.COLUMN")]
    pub secret_column: Vec<String>,
}

impl DatabaseTables {
    /// Whether any of the flags is given.
    pub fn any(&self) -> bool {
        !self.exclude_table.is_empty()
            || !self.include_table.is_empty()
            || !self.secret_column.is_empty()
    }

    /// The flags checked (`--secret-column` split), to apply to each
    /// database input's header.
    pub fn checked(&self) -> Result<PackTables, Failure> {
        Ok(PackTables {
            exclude: self.exclude_table.clone(),
            include: self.include_table.clone(),
            secret: self.secret_columns()?,
        })
    }

    /// Refuses the flags when no input is a database: they say how a
    /// database is packed (`instead`: what does the job for archives).
    pub fn refuse_without_database<'p>(
        &self,
        inputs: impl IntoIterator<Item = &'p std::path::Path>,
        instead: &str,
    ) -> Result<(), Failure> {
        if self.any() && !inputs.into_iter().any(crate::dbinput::is_database) {
            return Err(Failure::new(format!(
                "--exclude-table, --include-table and --secret-column say how a database input is packed; no input is a database{instead}"
            )));
        }
        Ok(())
    }

    /// `--secret-column` as (table, column) pairs.
    pub fn secret_columns(&self) -> Result<Vec<(String, String)>, Failure> {
        self.secret_column
            .iter()
            .map(|s| match s.split_once('.') {
                Some((t, c)) if !t.is_empty() && !c.is_empty() => {
                    Ok((t.to_string(), c.to_string()))
                }
                _ => Err(usage(
                    "--secret-column",
                    format!("{s:?}: expected TABLE.COLUMN"),
                )),
            })
            .collect()
    }
}

/// [`DatabaseTables`] checked: what a database input's header adds.
#[derive(Debug, Clone, Default)]
pub struct PackTables {
    exclude: Vec<String>,
    include: Vec<String>,
    secret: Vec<(String, String)>,
}

impl PackTables {
    /// `header` with these tables excluded, included and columns left out.
    pub fn apply(&self, mut header: crate::dbinput::Header) -> crate::dbinput::Header {
        header.exclude_tables.extend(self.exclude.iter().cloned());
        header.include_tables.extend(self.include.iter().cloned());
        header.secret_columns.extend(self.secret.iter().cloned());
        header
    }
}

/// `--mode OCTAL`: the permissions of the files a command writes from an
/// archive's content.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Mode {
    /// The mode of the files written from an archive's content, in octal;
    /// directories created get it plus x where r (600 -> 700). Default 600
    /// whatever the umask: an archive's content is private. Reports and
    /// indexes (summary.json, index.json) follow the umask; a file
    /// replaced with --force keeps its mode.
    #[arg(long, value_name = "OCTAL", value_parser = crate::io::parse_mode)]
    pub mode: Option<u32>,
}

/// A usage failure naming `flag`.
pub fn usage(flag: &str, message: impl std::fmt::Display) -> Failure {
    Failure::new(format!("{flag}: {message}"))
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
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert!(parse_size("4097M").unwrap_err().contains("at most"));
        assert!(parse_size("18446744073709551615")
            .unwrap_err()
            .contains("at most"));
        assert!(parse_size("99999999999999999999999G")
            .unwrap_err()
            .contains("at most"));
        assert!(parse_size("0").unwrap_err().contains("at least 1"));
        assert!(parse_size("0K").unwrap_err().contains("at least 1"));
        assert!(parse_size("").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("1T").is_err());
        assert!(parse_size("-1").is_err());
    }

    #[test]
    fn markdown_caps() {
        assert_eq!(parse_markdown_bytes("0"), Ok(0));
        assert_eq!(parse_markdown_bytes("1000K"), Ok(1_024_000));
        assert_eq!(parse_markdown_bytes("1M"), Ok(1 << 20));
        assert_eq!(parse_markdown_bytes("2048"), Ok(2048));
        assert!(parse_markdown_bytes("2047")
            .unwrap_err()
            .contains("at least 2048"));
        assert!(parse_markdown_bytes("x").is_err());
    }

    #[test]
    fn limits_per_line() {
        let l = Limits {
            max_line_bytes: 5,
            max_manifest_bytes: 9,
        };
        assert_eq!((l.for_line(1), l.for_line(2)), (9, 5));
    }
}
