//! `ndarc inspect`: what an archive holds, from its manifest and closing.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::PathBuf;

use ndarc_format::LineRef;

use crate::exit::{CmdResult, Failure, Status};
use crate::flags::{Format, FormatArg, Limits};
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
}

struct Ends {
    manifest: Vec<u8>,
    closing: Option<Vec<u8>>,
    size: u64,
}

fn read_ends(args: &Args) -> Result<Ends, Failure> {
    let limit = args.limits.max_manifest_bytes;
    let part_limit = args.limits.max_line_bytes;
    if is_stdio(&args.file) {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 1 << 20];
        let mut manifest: Option<Vec<u8>> = None;
        let mut first = Vec::new();
        let mut cur = Vec::new();
        let mut last: Option<Vec<u8>> = None;
        let mut size = 0u64;
        loop {
            let n = stdin
                .read(&mut buf)
                .map_err(|e| Failure::io("cannot read <stdin>", &e))?;
            if n == 0 {
                break;
            }
            size += n as u64;
            for chunk in buf[..n].split_inclusive(|&b| b == b'\n') {
                let ends = chunk.last() == Some(&b'\n');
                let body = if ends {
                    &chunk[..chunk.len() - 1]
                } else {
                    chunk
                };
                if manifest.is_none() {
                    if first.len() + body.len() > limit {
                        return Err(Failure::new(format!(
                            "the manifest line is over {limit} bytes"
                        )));
                    }
                    first.extend_from_slice(body);
                    if ends {
                        manifest = Some(std::mem::take(&mut first));
                    }
                } else {
                    // Keep the line being read (bounded) and the last whole one.
                    if cur.len() + body.len() <= part_limit {
                        cur.extend_from_slice(body);
                    }
                    if ends && !cur.is_empty() {
                        last = Some(std::mem::take(&mut cur));
                    }
                }
            }
        }
        if !cur.is_empty() {
            last = Some(cur);
        }
        let manifest = manifest.unwrap_or(first);
        return Ok(Ends {
            manifest,
            closing: last,
            size,
        });
    }
    let path = &args.file;
    let file = std::fs::File::open(path).map_err(|e| Failure::path("cannot open", path, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| Failure::path("cannot read", path, &e))?;
    if !meta.is_file() {
        return Err(Failure::new(format!(
            "cannot read {}: not a regular file",
            path.display()
        )));
    }
    let size = meta.len();
    // The manifest: read up to its LF, never more than the limit.
    let mut reader = std::io::BufReader::new(&file);
    let mut manifest = Vec::new();
    (&mut reader)
        .take(limit as u64 + 1)
        .read_until_lf(&mut manifest)
        .map_err(|e| Failure::path("cannot read", path, &e))?;
    if manifest.len() > limit {
        return Err(Failure::new(format!(
            "the manifest line of {} is over {limit} bytes",
            path.display()
        )));
    }
    // The closing: the last line, read backwards from the end.
    use std::io::{Seek, SeekFrom};
    let mut f = &file;
    let tail_len = size.min(64 * 1024);
    f.seek(SeekFrom::Start(size - tail_len))
        .map_err(|e| Failure::path("cannot read", path, &e))?;
    let mut tail = Vec::with_capacity(tail_len as usize);
    f.take(tail_len)
        .read_to_end(&mut tail)
        .map_err(|e| Failure::path("cannot read", path, &e))?;
    let body = tail.strip_suffix(b"\n").unwrap_or(&tail);
    let closing = body
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| body[i + 1..].to_vec())
        .filter(|c| !c.is_empty() && size > manifest.len() as u64 + 1);
    Ok(Ends {
        manifest,
        closing,
        size,
    })
}

trait ReadUntilLf {
    fn read_until_lf(&mut self, out: &mut Vec<u8>) -> std::io::Result<usize>;
}

impl<R: std::io::BufRead> ReadUntilLf for R {
    fn read_until_lf(&mut self, out: &mut Vec<u8>) -> std::io::Result<usize> {
        let n = self.read_until(b'\n', out)?;
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        Ok(n)
    }
}

/// Runs `ndarc inspect`.
pub fn run(args: Args, _ctx: &Context) -> CmdResult {
    let ends = read_ends(&args)?;
    let name = if is_stdio(&args.file) {
        "<stdin>".to_string()
    } else {
        args.file.display().to_string()
    };
    // Checked without building the line's tree (many times its size); the
    // journal and migrations alone are parsed, below.
    ndarc_json::validate_with(&ends.manifest, Default::default())
        .map_err(|e| Failure::new(format!("{name}: line 1 is not JSON: {e}")))?;
    // The one manifest intake; inspect does not judge canonical form.
    let read = ndarc_verify::read_manifest(
        LineRef {
            line: 1,
            offset: 0,
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
            .find(|f| f.code != ndarc_format::Code::NotCanonical)
            .map_or("not a manifest".to_string(), |f| {
                format!("{}: {}", f.code, f.message)
            });
        return Err(Failure::new(format!("{name}: {why}")));
    };
    let problems: Vec<_> = read
        .findings
        .into_iter()
        .filter(|f| f.code != ndarc_format::Code::NotCanonical)
        .collect();
    let closing = ends
        .closing
        .as_deref()
        .and_then(|c| ndarc_json::parse(c).ok())
        .filter(|v| v.get("kind").and_then(|k| k.as_str()) == Some("closing"));
    let hash = |k: &str| {
        closing
            .as_ref()
            .and_then(|c| c.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let closing_parts = closing
        .as_ref()
        .and_then(|c| c.get("partCount"))
        .and_then(|v| v.as_safe_integer());
    let journal = top_member(&ends.manifest, "journal");
    let migrations = top_member(&ends.manifest, "migrations");
    let (journal, migrations) = (journal.as_ref(), migrations.as_ref());
    let journal_bytes = journal
        .map(|j| ndarc_json::to_canonical_string(j).len())
        .unwrap_or(0);
    // The whole values, for --format json (they are canonical JSON, so serde_json
    // reads them back; a failure leaves null rather than aborting).
    let whole = |v: Option<&ndarc_json::Value<'_>>| {
        v.and_then(|v| {
            serde_json::from_str::<serde_json::Value>(&ndarc_json::to_canonical_string(v)).ok()
        })
    };
    // Excluded columns by table, looked up once per table (the first entry
    // of a name, as `Manifest::excluded_columns_of` finds).
    let mut excluded_of: HashMap<&str, &[String]> = HashMap::new();
    for (t, cols) in &manifest.excluded_columns {
        excluded_of.entry(t.as_str()).or_insert(cols.as_slice());
    }
    let excluded_of = |t: &str| excluded_of.get(t).copied().unwrap_or(&[]);
    let (obj_bytes, pay_bytes) = manifest.binary_bytes();
    let rows: u64 = manifest.tables.iter().map(|t| t.count).sum();
    let mut out = String::new();
    if args.format.get() == Format::Json {
        let doc = serde_json::json!({
            "file": name,
            "bytes": ends.size,
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
                "excludedColumns": excluded_of(&t.name),
            })).collect::<Vec<_>>(),
            "rows": rows,
            "objects": {"count": manifest.objects.len(), "bytes": obj_bytes},
            "payloads": manifest.payloads.iter().map(|p| serde_json::json!({"name": p.name, "size": p.size})).collect::<Vec<_>>(),
            "excludedTables": manifest.excluded_tables,
            "excludedColumns": manifest.excluded_columns.iter().map(|(t, c)| (t.clone(), c.clone())).collect::<std::collections::BTreeMap<_, _>>(),
            "requiredConfiguration": manifest.required_configuration,
            "partCount": manifest.part_count,
            "closing": closing.as_ref().map(|_| serde_json::json!({
                "partCount": closing_parts,
                "contentHash": hash("contentHash"),
                "archiveHash": hash("archiveHash"),
            })),
            "manifestFindings": problems,
            "journalBytes": journal_bytes,
            "journal": whole(journal),
            "journalEntries": journal.map(|j| entries(j).0.len()),
            "migrations": whole(migrations),
            "migrationCount": migrations.map(|m| entries(m).0.len()),
            "verified": false,
        });
        out = serde_json::to_string_pretty(&doc).unwrap_or_default();
        out.push('\n');
    } else {
        let kv = |out: &mut String, k: &str, v: String| out.push_str(&format!("{k:<24}{v}\n"));
        kv(&mut out, "file", format!("{name} ({} bytes)", ends.size));
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
            format!("{} ({rows} rows)", manifest.tables.len()),
        );
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
            let excluded: HashSet<&str> = excluded_of(&t.name).iter().map(String::as_str).collect();
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
        kv(&mut out, "migrations", journal_summary(migrations, 0));
        kv(&mut out, "journal", journal_summary(journal, journal_bytes));
        kv(
            &mut out,
            "parts",
            match closing_parts {
                Some(c) if c as u64 != manifest.part_count => {
                    format!("{} (the closing says {c})", manifest.part_count)
                }
                _ => manifest.part_count.to_string(),
            },
        );
        kv(
            &mut out,
            "contentHash",
            hash("contentHash").unwrap_or_else(|| "(no closing line)".into()),
        );
        kv(
            &mut out,
            "archiveHash",
            hash("archiveHash").unwrap_or_else(|| "(no closing line)".into()),
        );
        if !problems.is_empty() {
            out.push_str(&format!(
                "\nthe manifest has {} problems (first: {}: {}); run `ndarc verify`\n",
                problems.len(),
                problems[0].code,
                problems[0].message
            ));
        }
        out.push_str("\nnot verified: `ndarc verify` checks every line and both hashes\n");
        // Names and values come from the archive: no control characters
        // reach the terminal.
        out = term::safe_text(&out);
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::io("cannot write <stdout>", &e))?;
    Ok(Status::Success)
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// The member `name` of the top-level object `line` (valid JSON), parsed
/// alone.
fn top_member<'a>(line: &'a [u8], name: &str) -> Option<ndarc_json::Value<'a>> {
    let at = ndarc_json::locate(line, &ndarc_format::finding::pointer([name]))?;
    let end = ndarc_json::skip_value(line, at)?;
    ndarc_json::parse(&line[at..end]).ok()
}

/// The entries of a journal or migration list: the elements of an array, or
/// of the one array member of an object (`{"head": …, "entries": […]}`),
/// otherwise the value itself as one entry. The format carries these values
/// without interpreting them (SPEC.md §4.2), so this is a reading aid only.
fn entries<'v, 'a>(
    v: &'v ndarc_json::Value<'a>,
) -> (Vec<&'v ndarc_json::Value<'a>>, Option<String>) {
    use ndarc_json::Value;
    match v {
        Value::Array(items) => (items.iter().collect(), None),
        Value::Object(o) => {
            let arrays: Vec<(&str, &[Value<'a>])> = o
                .iter()
                .filter_map(|(k, v)| v.as_array().map(|a| (k, a)))
                .collect();
            match arrays.as_slice() {
                [(name, items)] => (items.iter().collect(), Some(name.to_string())),
                _ => (vec![v], None),
            }
        }
        Value::Null => (Vec::new(), None),
        other => (vec![other], None),
    }
}

/// One line: how many entries, and the first and last as canonical JSON
/// (shortened, control characters escaped by the JSON form itself).
fn journal_summary(v: Option<&ndarc_json::Value<'_>>, bytes: usize) -> String {
    let Some(v) = v else {
        return "none".to_string();
    };
    let (items, member) = entries(v);
    let short = |e: &ndarc_json::Value<'_>| {
        let text = ndarc_json::to_canonical_string(e);
        match text.char_indices().nth(80) {
            Some((i, _)) => format!("{}…", &text[..i]),
            None => text,
        }
    };
    let mut s = format!(
        "{} {}",
        items.len(),
        if items.len() == 1 { "entry" } else { "entries" }
    );
    if let Some(m) = member {
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
