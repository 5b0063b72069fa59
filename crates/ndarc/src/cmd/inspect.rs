//! `ndarc inspect`: what an archive holds, from its manifest and closing.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

use ndarc_format::manifest::carried_member;
use ndarc_format::{Carried, Finding, LineRef, Manifest};
use ndarc_verify::lines::{self, Input, Line, LineSource};

use crate::dbinput::{Header, PackStream, PackedReader};

use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{DatabaseTables, Format, FormatArg, Limits};
use crate::io::is_stdio;
use crate::term;
use crate::Context;

/// Arguments of `ndarc inspect`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Show what an archive holds, from its manifest and closing line",
    long_about = "Show what an archive holds: format and version, product, export time, source, \
tables with columns, keys and row counts, objects and payloads, exclusions, required \
configuration, migrations and the journal (count, first and last entries; the whole with \
--format json), part count, size and hashes. Reads only the first and last lines of a file \
(it does not verify: use `ndarc verify`).",
    after_help = "\
Examples:
  ndarc inspect export.ndjson
  ndarc inspect --format json export.ndjson | jq '.tables[] | {name, count}'"
)]
pub struct Args {
    /// The archive (`-` for standard input, which is read to its end).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// `--format human|json`.
    #[command(flatten)]
    format: FormatArg,
    /// The limits group (a part line longer than --max-line-bytes is not
    /// kept when standard input is read for its last line).
    #[command(flatten)]
    limits: Limits,
    /// `--exclude-table`, `--include-table`, `--secret-column`, as `pack`
    /// takes them, for a database.
    #[command(flatten)]
    tables: DatabaseTables,
}

/// What inspect reads: the manifest line and the last line, framed by the
/// line source of `ndarc-verify`, so that framing rules, limits, codes and
/// messages are those of `verify`.
struct Ends {
    /// The manifest line's record bytes.
    manifest: Vec<u8>,
    /// Its line number and offset (empty lines may precede it).
    manifest_at: (u64, u64),
    /// The last line's record bytes (`None`: no line after the manifest,
    /// or the last one is over `--max-line-bytes`).
    closing: Option<Vec<u8>>,
    /// Framing findings of the manifest line and of the last line, and of
    /// empty lines before them or after the last. From a file, whose lines
    /// before its last 64 KiB are not read, the last line's findings have
    /// line number 0 (unknown).
    framing: Vec<Finding>,
    size: u64,
}

/// Bytes at the end of a file read for its last line.
const TAIL: u64 = 64 * 1024;

/// A finding that stops inspect (no manifest to show), in `verify`'s form.
fn fatal(name: &str, f: &Finding) -> Failure {
    Failure::new(format!(
        "{name}:{}:{}: {}: {}",
        f.line, f.offset, f.code, f.message
    ))
}

/// The manifest line (the first non-empty one), or the finding that stops
/// inspect: no line at all, or one over `--max-manifest-bytes`.
fn first_line<'a>(
    src: &mut LineSource<'a>,
    args: &Args,
    name: &str,
    io: impl Fn(std::io::Error) -> Failure,
) -> Result<Line<'a>, Failure> {
    let limit = args.limits.max_manifest_bytes;
    let Some(first) = src.next_line(limit, false).map_err(&io)? else {
        return Err(fatal(name, &lines::manifest_missing()));
    };
    if first.too_long.is_some() {
        return Err(fatal(name, &first.too_long_finding(limit, "manifest")));
    }
    Ok(first)
}

/// The last line of `src` and the framing findings from it on.
fn last_line(
    src: &mut LineSource<'_>,
    limit: usize,
    io: impl Fn(std::io::Error) -> Failure,
) -> Result<(Option<Vec<u8>>, Vec<Finding>), Failure> {
    let mut last = None;
    let mut framing = Vec::new();
    // Over the limit, a line is skipped to its end (its length is known).
    while let Some(l) = src.next_line(limit, true).map_err(&io)? {
        framing = l.framing;
        last = l.too_long.is_none().then(|| l.bytes.to_vec());
    }
    framing.extend(src.take_pending());
    Ok((last, framing))
}

/// The ends of an archive read once from a stream (standard input, a
/// database packed on the fly).
fn stream_ends(
    reader: impl std::io::Read + Send,
    args: &Args,
    name: &str,
) -> Result<Ends, Failure> {
    let part_limit = args.limits.max_line_bytes;
    let io = |e| Failure::io(format_args!("cannot read {name}"), &e);
    let mut src = LineSource::reader(reader);
    let first = first_line(&mut src, args, name, io)?;
    let mut framing = first.framing.clone();
    let manifest = first.bytes.to_vec();
    let manifest_at = (first.number, first.offset);
    drop(first);
    let (closing, more) = last_line(&mut src, part_limit, io)?;
    framing.extend(more);
    Ok(Ends {
        manifest,
        manifest_at,
        closing,
        framing,
        size: src.position(),
    })
}

fn read_ends(args: &Args, name: &str) -> Result<Ends, Failure> {
    args.tables
        .refuse_without_database([args.file.as_path()], "")?;
    if is_stdio(&args.file) {
        return stream_ends(std::io::stdin(), args, name);
    }
    let path = &args.file;
    if crate::dbinput::is_database(path) {
        // A database: packed on the fly to a temporary file, whose ends
        // are read as a file's are.
        let header = args.tables.checked()?.apply(Header::for_database(path));
        let mut packing = PackStream::spawn(path, &header);
        let packed = packing.reader().and_then(PackedReader::into_file);
        if let Err(why) = packing.finish() {
            return Err(Failure::new(format!("{name}: {why}")));
        }
        let Some(p) = packed else {
            return Err(Failure::new(format!("{name}: the packer gave no archive")));
        };
        let io = |e| Failure::io(format_args!("cannot read {name}"), &e);
        let size = p.file.metadata().map_err(io)?.len().saturating_sub(p.start);
        return file_ends(Input::FileFrom(p.file, p.start), size, args, name, io);
    }
    let io = |e| Failure::path("cannot read", path, &e);
    let file = std::fs::File::open(path).map_err(|e| Failure::path("cannot open", path, &e))?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(Failure::new(format!(
            "cannot read {}: not a regular file",
            path.display()
        )));
    }
    file_ends(Input::File(file), meta.len(), args, name, io)
}

/// The ends of the archive `input` of `size` bytes (a regular file): its
/// first line, and its last read from within the last 64 KiB, never the
/// whole file.
fn file_ends(
    input: Input<'_>,
    size: u64,
    args: &Args,
    name: &str,
    io: impl Fn(std::io::Error) -> Failure + Copy,
) -> Result<Ends, Failure> {
    let part_limit = args.limits.max_line_bytes;
    let mut src = LineSource::new(&input).map_err(io)?;
    let first = first_line(&mut src, args, name, io)?;
    let mut framing = first.framing.clone();
    let manifest = first.bytes.to_vec();
    let manifest_at = (first.number, first.offset);
    drop(first);
    // The last line: read from the first line start within the last
    // 64 KiB (or right after the manifest), never the whole file.
    let after_manifest = src.position();
    let window = size.saturating_sub(TAIL).max(after_manifest);
    let start = if window == after_manifest {
        window
    } else {
        let mut tail = vec![0u8; (size - window) as usize];
        let n = input.read_at(window, &mut tail).map_err(io)?;
        match tail[..n].iter().position(|&b| b == b'\n') {
            Some(i) => window + i as u64 + 1,
            None => size,
        }
    };
    let mut tail = LineSource::tail(&input, start).map_err(io)?;
    let (closing, more) = last_line(&mut tail, part_limit, io)?;
    framing.extend(more);
    Ok(Ends {
        manifest,
        manifest_at,
        closing,
        framing,
        size,
    })
}

/// Runs `ndarc inspect`.
pub fn run(args: Args, _ctx: &Context) -> CmdResult {
    let name = if is_stdio(&args.file) {
        "<stdin>".to_string()
    } else {
        args.file.display().to_string()
    };
    let ends = read_ends(&args, &name)?;
    let (manifest, problems) = manifest_of(&ends, &name)?;
    let closing = ends
        .closing
        .as_deref()
        .and_then(|c| ndarc_json::parse(c).ok())
        .filter(|v| v.get("kind").and_then(|k| k.as_str()) == Some("closing"));
    let journal = carried_member(&ends.manifest, "journal");
    let migrations = carried_member(&ends.manifest, "migrations");
    // Excluded columns by table, looked up once per table (the first entry
    // of a name, as `Manifest::excluded_columns_of` finds).
    let mut excluded_of: HashMap<&str, &[String]> = HashMap::new();
    for (t, cols) in &manifest.excluded_columns {
        excluded_of.entry(t.as_str()).or_insert(cols.as_slice());
    }
    let shown = Shown {
        name: &name,
        ends: &ends,
        manifest: &manifest,
        problems: &problems,
        closing: closing.as_ref(),
        journal: journal.as_ref(),
        migrations: migrations.as_ref(),
        excluded_of,
    };
    let out = if args.format.get() == Format::Json {
        json(&shown)
    } else {
        // Names and values come from the archive: no control characters
        // reach the terminal.
        term::safe_text(&human(&shown))
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::io("cannot write <stdout>", &e))?;
    Ok(Status::Success)
}

/// The manifest, by the one manifest intake (inspect does not judge
/// canonical form), and its problems; or the failure that stops inspect.
fn manifest_of(ends: &Ends, name: &str) -> Result<(Manifest, Vec<Finding>), Failure> {
    let read = ndarc_verify::read_manifest(
        LineRef {
            line: ends.manifest_at.0,
            offset: ends.manifest_at.1,
            bytes: &ends.manifest,
        },
        &ndarc_verify::Options {
            max_errors: 1000,
            max_manifest_line: usize::MAX,
            ..Default::default()
        },
    );
    let Some(manifest) = read.manifest else {
        let why = read
            .findings
            .iter()
            .find(|f| f.code != ndarc_format::Code::NotCanonical);
        return Err(match why {
            Some(f) => fatal(name, f),
            None => Failure::new(format!("{name}: not a manifest")),
        });
    };
    // Checked without building the line's tree (many times its size); the
    // journal and migrations alone are parsed, below.
    ndarc_json::validate_with(&ends.manifest, Default::default())
        .map_err(|e| Failure::new(format!("{name}: line 1 is not JSON: {e}")))?;
    let problems: Vec<_> = read
        .findings
        .into_iter()
        .filter(|f| f.code != ndarc_format::Code::NotCanonical)
        .collect();
    Ok((manifest, problems))
}

/// What inspect shows, read from the archive's ends.
struct Shown<'s> {
    name: &'s str,
    ends: &'s Ends,
    manifest: &'s Manifest,
    /// The manifest's findings, but for non-canonical form.
    problems: &'s [Finding],
    /// The last line, when it is a closing record.
    closing: Option<&'s ndarc_json::Value<'s>>,
    /// `journal` and `migrations` as carried, with their canonical text.
    journal: Option<&'s (Carried, String)>,
    migrations: Option<&'s (Carried, String)>,
    /// Excluded columns by table (the first entry of a name).
    excluded_of: HashMap<&'s str, &'s [String]>,
}

impl Shown<'_> {
    /// The closing's string member `k`.
    fn closing_str(&self, k: &str) -> Option<String> {
        self.closing
            .and_then(|c| c.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    }

    /// The closing's `partCount`.
    fn closing_parts(&self) -> Option<i64> {
        self.closing
            .and_then(|c| c.get("partCount"))
            .and_then(|v| v.as_safe_integer())
    }

    fn excluded_of(&self, t: &str) -> &[String] {
        self.excluded_of.get(t).copied().unwrap_or(&[])
    }

    fn journal_bytes(&self) -> usize {
        self.journal.map_or(0, |(_, text)| text.len())
    }

    fn rows(&self) -> u64 {
        self.manifest.tables.iter().map(|t| t.count).sum()
    }
}

/// `--format json`: the whole document.
fn json(s: &Shown<'_>) -> String {
    let manifest = s.manifest;
    // The whole values, for --format json (they are canonical JSON, so serde_json
    // reads them back; a failure leaves null rather than aborting).
    let whole = |v: Option<&(Carried, String)>| {
        v.and_then(|(_, text)| serde_json::from_str::<serde_json::Value>(text).ok())
    };
    let (obj_bytes, _) = manifest.binary_bytes();
    let doc = serde_json::json!({
        "file": s.name,
        "bytes": s.ends.size,
        "format": manifest.format,
        "version": manifest.version,
        "product": manifest.product,
        "exportedAt": manifest.exported_at,
        "sourceIdentity": manifest.source_identity,
        "epoch": manifest.epoch,
        "schema": manifest.schema,
        "tables": manifest.tables.iter().map(|t| serde_json::json!({
            "name": t.name,
            "count": t.count,
            "rowidAlias": t.rowid_alias,
            "primaryKey": t.primary_key().iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
            "columns": t.columns,
            "dependencies": t.dependencies,
            "excludedColumns": s.excluded_of(&t.name),
        })).collect::<Vec<_>>(),
        "rows": s.rows(),
        "objects": {"count": manifest.objects.len(), "bytes": obj_bytes},
        "payloads": manifest.payloads.iter().map(|p| serde_json::json!({"name": p.name, "size": p.size})).collect::<Vec<_>>(),
        "excludedTables": manifest.excluded_tables,
        "excludedColumns": manifest.excluded_columns.iter().map(|(t, c)| (t.clone(), c.clone())).collect::<std::collections::BTreeMap<_, _>>(),
        "requiredConfiguration": manifest.required_configuration,
        "partCount": manifest.part_count,
        "closing": s.closing.map(|_| serde_json::json!({
            "partCount": s.closing_parts(),
            "contentHash": s.closing_str("contentHash"),
            "archiveHash": s.closing_str("archiveHash"),
        })),
        "framingFindings": s.ends.framing,
        "manifestFindings": s.problems,
        "journalBytes": s.journal_bytes(),
        "journal": whole(s.journal),
        "journalEntries": s.journal.map(|(j, _)| j.entries().len()),
        "migrations": whole(s.migrations),
        "migrationCount": s.migrations.map(|(m, _)| m.entries().len()),
        "verified": false,
    });
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
    out.push('\n');
    out
}

/// One `key value` line of the human form.
fn kv(out: &mut String, k: &str, v: String) {
    out.push_str(&format!("{k:<24}{v}\n"));
}

/// The human form (before control characters are made safe).
fn human(s: &Shown<'_>) -> String {
    let (name, manifest) = (s.name, s.manifest);
    let (obj_bytes, pay_bytes) = manifest.binary_bytes();
    let mut out = String::new();
    kv(&mut out, "file", format!("{name} ({} bytes)", s.ends.size));
    kv(
        &mut out,
        "format",
        format!("{} version {}", manifest.format, manifest.version),
    );
    kv(&mut out, "product", manifest.product.clone());
    kv(&mut out, "exported at", manifest.exported_at.clone());
    kv(
        &mut out,
        "source identity",
        format!("{} (epoch {})", manifest.source_identity, manifest.epoch),
    );
    kv(&mut out, "schema", manifest.schema.clone());
    kv(
        &mut out,
        "tables",
        format!("{} ({} rows)", manifest.tables.len(), s.rows()),
    );
    human_tables(&mut out, s);
    kv(
        &mut out,
        "objects",
        format!("{} ({obj_bytes} bytes)", manifest.objects.len()),
    );
    kv(
        &mut out,
        "payloads",
        format!(
            "{} ({pay_bytes} bytes){}",
            manifest.payloads.len(),
            if manifest.payloads.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    manifest
                        .payloads
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ),
    );
    kv(&mut out, "excluded tables", list(&manifest.excluded_tables));
    kv(
        &mut out,
        "excluded columns",
        list(
            &manifest
                .excluded_columns
                .iter()
                .flat_map(|(t, cs)| cs.iter().map(move |c| format!("{t}.{c}")))
                .collect::<Vec<_>>(),
        ),
    );
    kv(
        &mut out,
        "required configuration",
        list(&manifest.required_configuration),
    );
    kv(&mut out, "migrations", journal_summary(s.migrations, 0));
    kv(
        &mut out,
        "journal",
        journal_summary(s.journal, s.journal_bytes()),
    );
    human_closing(&mut out, s);
    out.push_str("\nnot verified: `ndarc verify` checks every line and both hashes\n");
    out
}

/// The tables of the human form: a line per table, then its columns.
fn human_tables(out: &mut String, s: &Shown<'_>) {
    let manifest = s.manifest;
    let width = manifest
        .tables
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0);
    for t in &manifest.tables {
        let key = match &t.rowid_alias {
            Some(a) => format!("key {a}"),
            None => format!(
                "key ({})",
                t.primary_key()
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        out.push_str(&format!(
            "  {:<width$}  {:>10} rows  {key}\n",
            t.name, t.count
        ));
        let excluded: HashSet<&str> = s.excluded_of(&t.name).iter().map(String::as_str).collect();
        for c in &t.columns {
            let mut notes = Vec::new();
            if c.pk > 0 {
                notes.push(format!("pk {}", c.pk));
            }
            if c.notnull {
                notes.push("not null".to_string());
            }
            if let Some(g) = c.generated {
                notes.push(format!(
                    "generated {}",
                    if g == ndarc_format::manifest::Generated::Virtual {
                        "virtual"
                    } else {
                        "stored"
                    }
                ));
            }
            if excluded.contains(c.name.as_str()) {
                notes.push("excluded".to_string());
            }
            out.push_str(&format!(
                "      {} {} ({}){}\n",
                c.name,
                if c.decl_type.is_empty() {
                    "(no type)"
                } else {
                    &c.decl_type
                },
                c.affinity().name(),
                if notes.is_empty() {
                    String::new()
                } else {
                    format!(", {}", notes.join(", "))
                }
            ));
        }
        if !t.dependencies.is_empty() {
            out.push_str(&format!("      depends on {}\n", t.dependencies.join(", ")));
        }
    }
}

/// The human form's parts and hashes (from the closing), the framing
/// findings and the manifest's problems.
fn human_closing(out: &mut String, s: &Shown<'_>) {
    let (name, manifest) = (s.name, s.manifest);
    kv(
        out,
        "parts",
        match s.closing_parts() {
            Some(c) if c as u64 != manifest.part_count => {
                format!("{} (the closing says {c})", manifest.part_count)
            }
            _ => manifest.part_count.to_string(),
        },
    );
    kv(
        out,
        "contentHash",
        s.closing_str("contentHash")
            .unwrap_or_else(|| "(no closing line)".into()),
    );
    kv(
        out,
        "archiveHash",
        s.closing_str("archiveHash")
            .unwrap_or_else(|| "(no closing line)".into()),
    );
    // Framing findings as `verify` writes them (there are a few at
    // most: those of the two lines read).
    if !s.ends.framing.is_empty() {
        out.push('\n');
    }
    for f in &s.ends.framing {
        out.push_str(&format!(
            "{name}:{}:{}: {}: {}\n",
            f.line, f.offset, f.code, f.message
        ));
    }
    if !s.problems.is_empty() {
        out.push_str(&format!(
            "\nthe manifest has {} problems (first: {}: {}); run `ndarc verify`\n",
            s.problems.len(),
            s.problems[0].code,
            s.problems[0].message
        ));
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// One line: how many entries, and the first and last as canonical JSON
/// (shortened, control characters escaped by the JSON form itself).
fn journal_summary(v: Option<&(Carried, String)>, bytes: usize) -> String {
    let Some((carried, _)) = v else {
        return "none".to_string();
    };
    let items = carried.entries();
    let short = |text: &str| match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    };
    let mut s = format!(
        "{} {}",
        items.len(),
        if items.len() == 1 { "entry" } else { "entries" }
    );
    if let Some(m) = carried.member() {
        s.push_str(&format!(" (in {m:?})"));
    }
    if bytes > 0 {
        s.push_str(&format!(", {bytes} bytes"));
    }
    match items.as_slice() {
        [] => {}
        [only] => s.push_str(&format!("; {}", short(only))),
        [first, .., last] => s.push_str(&format!("; first {}; last {}", short(first), short(last))),
    }
    s
}
