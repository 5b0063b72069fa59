//! `--format human`.

use std::io::{self, Write};

use ndarc_format::manifest::{Column, ObjectEntry};

use super::{count, ignored_text, safe, show_value, summary, word_diff, Piece, RenderOptions};
use crate::model::{Diff, EntryDiff, NameChanges, SchemaDiff, Side, TableDiff};

struct Out<'w> {
    w: &'w mut dyn Write,
    colour: bool,
}

/// What a piece of the diff is, coloured from the tool's one palette
/// ([`ndarc_format::display::palette`]).
#[derive(Clone, Copy)]
enum Paint {
    Plain,
    Bold,
    Red,
    Green,
    Yellow,
    Dim,
}

impl Out<'_> {
    fn paint(&self, p: Paint, text: &str) -> String {
        use ndarc_format::display::palette;
        let text = safe(text, false);
        let style = match p {
            Paint::Plain => return text.into_owned(),
            _ if !self.colour => return text.into_owned(),
            Paint::Bold => palette::EMPHASIS,
            Paint::Red => palette::REMOVED,
            Paint::Green => palette::GOOD,
            Paint::Yellow => palette::CHANGED,
            Paint::Dim => palette::DIM,
        };
        palette::paint(style, &text)
    }

    fn line(&mut self, text: &str) -> io::Result<()> {
        self.w.write_all(safe(text, true).as_bytes())?;
        self.w.write_all(b"\n")
    }
}

/// A column's definition as in SQL: `TEXT NOT NULL PRIMARY KEY(1)`.
pub(crate) fn column_def(c: &Column) -> String {
    let mut s = if c.decl_type.is_empty() {
        "(no type)".to_string()
    } else {
        c.decl_type.clone()
    };
    if c.notnull {
        s.push_str(" NOT NULL");
    }
    if c.pk > 0 {
        s.push_str(&format!(" PRIMARY KEY({})", c.pk));
    }
    if let Some(g) = c.generated {
        s.push_str(match g {
            ndarc_format::manifest::Generated::Virtual => " GENERATED VIRTUAL",
            ndarc_format::manifest::Generated::Stored => " GENERATED STORED",
        });
    }
    s
}

pub(crate) fn names_text(c: &NameChanges) -> String {
    let mut v: Vec<String> = c.added.iter().map(|n| format!("+{n}")).collect();
    v.extend(c.removed.iter().map(|n| format!("-{n}")));
    v.join(", ")
}

fn object_name(o: &ObjectEntry) -> String {
    format!("{}/{}", o.bucket, o.key)
}

/// The changed fields of an object, `(field, before, after)`.
pub(crate) fn object_fields(a: &ObjectEntry, b: &ObjectEntry) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    if a.size != b.size {
        out.push(("size".into(), a.size.to_string(), b.size.to_string()));
    }
    if a.sha256 != b.sha256 {
        out.push(("sha256".into(), a.sha256.clone(), b.sha256.clone()));
    }
    for (what, x, y) in [
        ("httpMetadata", &a.http_metadata, &b.http_metadata),
        ("customMetadata", &a.custom_metadata, &b.custom_metadata),
    ] {
        let mut keys: Vec<&String> = x.iter().chain(y.iter()).map(|(k, _)| k).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let get =
                |l: &[(String, String)]| l.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            let (p, q) = (get(x), get(y));
            if p != q {
                let show = |v: Option<String>| v.map_or("(none)".into(), |v| format!("{v:?}"));
                out.push((format!("{what}.{k}"), show(p), show(q)));
            }
        }
    }
    out
}

fn more(o: &mut Out<'_>, n: usize, what: &str) -> io::Result<()> {
    if n > 0 {
        let t = o.paint(Paint::Dim, &format!("    … and {n} more {what}"));
        o.line(&t)?;
    }
    Ok(())
}

/// A row's contents for people: `(column: value, …)`, values as
/// [`show_value`] writes them.
pub(crate) fn row_text(row: &ndarc_json::OwnedValue) -> String {
    match row {
        ndarc_json::Value::Object(o) => {
            let cells: Vec<String> = o
                .sorted()
                .into_iter()
                .map(|(n, v)| format!("{n}: {}", show_value(v)))
                .collect();
            format!("({})", cells.join(", "))
        }
        other => show_value(other),
    }
}

fn table(o: &mut Out<'_>, t: &TableDiff, opts: &RenderOptions, keys_only: bool) -> io::Result<()> {
    let mut head = format!(
        "{} {}: {} added, {} removed, {} changed",
        o.paint(Paint::Bold, "table"),
        o.paint(Paint::Bold, &t.name),
        t.added.len(),
        t.removed.len(),
        t.changed.len()
    );
    if t.columns_differ() {
        // Column names from the archive: no control character passes.
        head.push_str(&format!(" ({})", safe(&t.columns_reason(), false)));
    }
    o.line(&head)?;
    if let Some(sc) = t.scope.as_ref().filter(|sc| !sc.ignored.is_empty()) {
        let t = o.paint(
            Paint::Dim,
            &format!("  columns ignored: {}", sc.ignored.join(", ")),
        );
        o.line(&t)?;
    }
    let only = t.columns_only();
    if only > 0 {
        let t = o.paint(
            Paint::Dim,
            &format!(
                "  {} changed only by the columns",
                count(only, "row", "rows")
            ),
        );
        o.line(&t)?;
    }
    if t.unordered {
        let t = o.paint(
            Paint::Dim,
            "  rows out of key order: matched through an index",
        );
        o.line(&t)?;
    }
    let cap = opts.max_rows.unwrap_or(usize::MAX);
    for (list, rows, mark, paint, what) in [
        (&t.added, &t.added_rows, '+', Paint::Green, "added"),
        (&t.removed, &t.removed_rows, '-', Paint::Red, "removed"),
    ] {
        for (i, k) in list.iter().take(cap).enumerate() {
            let text = match rows.get(i).filter(|_| opts.contents()) {
                Some(r) => format!("  {mark} {k}  {}", row_text(r)),
                None => format!("  {mark} {k}"),
            };
            let l = o.paint(paint, &text);
            o.line(&l)?;
        }
        more(o, list.len().saturating_sub(cap), what)?;
    }
    let listed: Vec<&crate::model::RowChange> =
        t.changed.iter().filter(|c| !c.columns_only).collect();
    for c in listed.iter().take(cap) {
        let l = o.paint(Paint::Yellow, &format!("  ~ {}", c.key));
        o.line(&l)?;
        if keys_only {
            continue;
        }
        for cell in &c.cells {
            let column = safe(&cell.column, false);
            let line = match cell.only {
                Some(Side::After) => format!(
                    "      {column}: (column added) → {}",
                    o.paint(Paint::Green, &show_value(&cell.after))
                ),
                Some(Side::Before) => format!(
                    "      {column}: {} → (column removed)",
                    o.paint(Paint::Red, &show_value(&cell.before))
                ),
                None => match word_diff(&cell.before, &cell.after) {
                    Some(pieces) => {
                        let mut s = format!("      {column}: ");
                        for p in pieces {
                            match p {
                                Piece::Same(t) => s.push_str(&safe(&t, false)),
                                Piece::Removed(t) => {
                                    s.push_str(&o.paint(Paint::Red, &format!("[-{t}-]")))
                                }
                                Piece::Added(t) => {
                                    s.push_str(&o.paint(Paint::Green, &format!("{{+{t}+}}")))
                                }
                            }
                        }
                        s
                    }
                    None => format!(
                        "      {column}: {} → {}",
                        o.paint(Paint::Red, &show_value(&cell.before)),
                        o.paint(Paint::Green, &show_value(&cell.after))
                    ),
                },
            };
            o.line(&line)?;
        }
    }
    more(o, listed.len().saturating_sub(cap), "changed")
}

fn entries<T>(
    o: &mut Out<'_>,
    what: &str,
    d: &EntryDiff<T>,
    name: impl Fn(&T) -> String,
    size: impl Fn(&T) -> u64,
    fields: impl Fn(&T, &T) -> Vec<(String, String, String)>,
) -> io::Result<()> {
    if !d.has_changes() {
        return Ok(());
    }
    let head = format!(
        "{}: {} added, {} removed, {} changed",
        o.paint(Paint::Bold, what),
        d.added.len(),
        d.removed.len(),
        d.changed.len()
    );
    o.line(&head)?;
    for e in &d.added {
        let l = o.paint(
            Paint::Green,
            &format!(
                "  + {} ({})",
                name(e),
                count(size(e) as usize, "byte", "bytes")
            ),
        );
        o.line(&l)?;
    }
    for e in &d.removed {
        let l = o.paint(
            Paint::Red,
            &format!(
                "  - {} ({})",
                name(e),
                count(size(e) as usize, "byte", "bytes")
            ),
        );
        o.line(&l)?;
    }
    for (b, a) in &d.changed {
        let l = o.paint(Paint::Yellow, &format!("  ~ {}", name(b)));
        o.line(&l)?;
        for (f, x, y) in fields(b, a) {
            let l = format!(
                "      {f}: {} → {}",
                o.paint(Paint::Red, &x),
                o.paint(Paint::Green, &y)
            );
            o.line(&l)?;
        }
    }
    Ok(())
}

/// Writes the diff for people: a header naming both inputs, schema changes,
/// per table a summary line and its rows, objects, payloads, configuration
/// and exclusions, and a closing summary line.
pub fn human(d: &Diff, opts: &RenderOptions, w: &mut dyn Write) -> io::Result<()> {
    let mut o = Out {
        w,
        colour: opts.colour,
    };
    let o = &mut o;
    header(o, d)?;
    schema(o, &d.schema)?;
    for t in &d.tables {
        table(o, t, opts, d.keys_only)?;
        o.line("")?;
    }
    binaries(o, d)?;
    configuration(o, d)?;
    footer(o, d)
}

/// The header: both inputs, whether they were verified, their warnings.
fn header(o: &mut Out<'_>, d: &Diff) -> io::Result<()> {
    for (mark, i, p) in [
        ("---", &d.before, Paint::Red),
        ("+++", &d.after, Paint::Green),
    ] {
        let l = o.paint(
            p,
            &format!(
                "{mark} {}  ({} {}, exported {}, contentHash {})",
                i.name,
                i.product,
                count(i.rows as usize, "row", "rows"),
                i.exported_at,
                short(&i.content_hash)
            ),
        );
        o.line(&l)?;
    }
    if !d.verified {
        o.line("(not verified: --no-verify)")?;
    }
    for (i, side) in [(&d.before, "before"), (&d.after, "after")] {
        if i.warnings > 0 {
            o.line(&format!(
                "({side}: verification found {})",
                count(i.warnings as usize, "warning", "warnings")
            ))?;
        }
    }
    o.line("")
}

/// The schema changes, when there are some.
fn schema(o: &mut Out<'_>, s: &SchemaDiff) -> io::Result<()> {
    if s.has_changes() {
        let h = o.paint(Paint::Bold, "schema");
        o.line(&h)?;
        for t in &s.tables_added {
            let l = o.paint(
                Paint::Green,
                &format!(
                    "  + table {} ({}, {})",
                    t.name,
                    count(t.columns.len(), "column", "columns"),
                    count(t.count as usize, "row", "rows")
                ),
            );
            o.line(&l)?;
        }
        for t in &s.tables_removed {
            let l = o.paint(
                Paint::Red,
                &format!(
                    "  - table {} ({}, {})",
                    t.name,
                    count(t.columns.len(), "column", "columns"),
                    count(t.count as usize, "row", "rows")
                ),
            );
            o.line(&l)?;
        }
        for t in &s.tables_changed {
            let l = o.paint(Paint::Yellow, &format!("  ~ table {}", t.name));
            o.line(&l)?;
            for c in &t.columns_added {
                let l = o.paint(
                    Paint::Green,
                    &format!("      + column {} {}", c.name, column_def(c)),
                );
                o.line(&l)?;
            }
            for c in &t.columns_removed {
                let l = o.paint(
                    Paint::Red,
                    &format!("      - column {} {}", c.name, column_def(c)),
                );
                o.line(&l)?;
            }
            for (b, a) in &t.columns_renamed {
                let l = o.paint(
                    Paint::Yellow,
                    &format!(
                        "      ~ column {} renamed to {} {}",
                        b.name,
                        a.name,
                        column_def(a)
                    ),
                );
                o.line(&l)?;
            }
            for c in &t.columns_changed {
                let l = format!(
                    "      ~ column {}: {} → {}",
                    c.name,
                    o.paint(Paint::Red, &column_def(&c.before)),
                    o.paint(Paint::Green, &column_def(&c.after))
                );
                o.line(&l)?;
            }
            if !t.dependencies.is_empty() {
                o.line(&format!(
                    "      dependencies: {}",
                    names_text(&t.dependencies)
                ))?;
            }
            if let Some((b, a)) = &t.rowid_alias {
                let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "null".into());
                o.line(&format!("      rowidAlias: {} → {}", show(b), show(a)))?;
            }
            if t.key_changed {
                o.line("      row key changed: rows are matched by key text")?;
            }
            if let Some(sql) = &t.sql {
                o.line("      sql:")?;
                for (tag, text) in &sql.lines {
                    let p = match tag {
                        '-' => Paint::Red,
                        '+' => Paint::Green,
                        _ => Paint::Plain,
                    };
                    let l = o.paint(p, &format!("        {tag} {text}"));
                    o.line(&l)?;
                }
            }
        }
        o.line("")?;
    }

    Ok(())
}

/// Objects and payloads added, removed and changed.
fn binaries(o: &mut Out<'_>, d: &Diff) -> io::Result<()> {
    let had_entries = d.objects.has_changes() || d.payloads.has_changes();
    entries(
        o,
        "objects",
        &d.objects,
        object_name,
        |e| e.size,
        object_fields,
    )?;
    entries(
        o,
        "payloads",
        &d.payloads,
        |p| p.name.clone(),
        |p| p.size,
        |a, b| {
            let mut f = Vec::new();
            if a.size != b.size {
                f.push(("size".into(), a.size.to_string(), b.size.to_string()));
            }
            if a.sha256 != b.sha256 {
                f.push(("sha256".into(), a.sha256.clone(), b.sha256.clone()));
            }
            f
        },
    )?;
    if had_entries {
        o.line("")?;
    }

    Ok(())
}

/// Changes of `requiredConfiguration`, the exclusions and the product.
fn configuration(o: &mut Out<'_>, d: &Diff) -> io::Result<()> {
    let mut config = false;
    if d.configuration_changed || !d.configuration.is_empty() {
        let mut l = format!("{}: ", o.paint(Paint::Bold, "requiredConfiguration"));
        l.push_str(&if d.configuration.is_empty() {
            "reordered".to_string()
        } else {
            names_text(&d.configuration)
        });
        o.line(&l)?;
        config = true;
    }
    if !d.excluded_tables.is_empty() {
        let l = format!(
            "{}: {}",
            o.paint(Paint::Bold, "excludedTables"),
            names_text(&d.excluded_tables)
        );
        o.line(&l)?;
        config = true;
    }
    for c in &d.excluded_columns {
        let changes = NameChanges {
            added: c.added.clone(),
            removed: c.removed.clone(),
        };
        let l = format!(
            "{} {}: {}",
            o.paint(Paint::Bold, "excludedColumns of"),
            c.table,
            names_text(&changes)
        );
        o.line(&l)?;
        config = true;
    }
    if d.before.product != d.after.product {
        o.line(&format!(
            "product: {:?} → {:?}",
            d.before.product, d.after.product
        ))?;
        config = true;
    }
    if config {
        o.line("")?;
    }
    Ok(())
}

/// What was ignored, the summary line and the gate's outcome.
fn footer(o: &mut Out<'_>, d: &Diff) -> io::Result<()> {
    if !d.ignored.is_empty() {
        let text = ignored_text(d, &|s| s.to_string());
        let l = o.paint(Paint::Dim, &format!("ignored: {text}"));
        o.line(&l)?;
    }
    let l = o.paint(Paint::Bold, &summary(d));
    o.line(&l)?;
    if let Some(g) = &d.gate {
        for l in gate_lines(g) {
            o.line(&l)?;
        }
    }
    Ok(())
}

/// The gate's outcome for people: `gate: passed (7 rules)` or `gate:
/// failed: 2 of 7 rules broken`, then a line per broken rule: `  RULE:
/// CODE: what broke it`.
pub(crate) fn gate_lines(g: &crate::gate::GateResult) -> Vec<String> {
    let rules = g.rules.len();
    let mut out = Vec::new();
    if g.passed() {
        out.push(format!("gate: passed ({})", count(rules, "rule", "rules")));
        return out;
    }
    let mut names: Vec<&str> = g.broken.iter().map(|b| b.rule.as_str()).collect();
    names.dedup();
    out.push(format!(
        "gate: failed: {} of {} broken",
        names.len(),
        count(rules, "rule", "rules")
    ));
    for b in &g.broken {
        out.push(format!("  {}: {}: {}", b.rule, b.code, b.message));
    }
    out
}

fn short(h: &str) -> String {
    if h.chars().count() > 12 {
        format!("{}…", h.chars().take(12).collect::<String>())
    } else {
        h.to_string()
    }
}
