//! `--format markdown`: for CI job summaries and pull-request comments.

use std::io::{self, Write};

use super::human::{column_def, names_text, object_fields, row_text};
use super::stat::stat_lines;
use super::{count, ignored_text, show_value, summary, word_diff, Piece, RenderOptions};
use crate::model::{Diff, TableDiff};

/// Text safe in a Markdown table cell or paragraph: HTML special
/// characters escaped, `|` escaped, newlines as `<br>`, other control
/// characters as `\u{…}`.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '|' => o.push_str("&#124;"),
            '\\' => o.push_str("&#92;"),
            '`' => o.push_str("&#96;"),
            '*' => o.push_str("&#42;"),
            '_' => o.push_str("&#95;"),
            '[' => o.push_str("&#91;"),
            ']' => o.push_str("&#93;"),
            '\n' => o.push_str("<br>"),
            '\r' => {}
            // ESC, BEL and the other controls from archive text: shown, not
            // passed to the viewer.
            c if ndarc_format::display::is_unsafe_char(c) => {
                o.push_str(&format!("&#92;u{{{:x}}}", u32::from(c)))
            }
            c => o.push(c),
        }
    }
    o
}

/// `<code>…</code>` with the text escaped (works inside table cells, where
/// backtick spans cannot hold `|`).
fn code(s: &str) -> String {
    format!("<code>{}</code>", esc(s))
}

fn rows_section(
    w: &mut dyn Write,
    t: &TableDiff,
    opts: &RenderOptions,
    keys_only: bool,
) -> io::Result<()> {
    let why = if t.columns_differ() {
        format!(" ({})", esc(&t.columns_reason()))
    } else {
        String::new()
    };
    writeln!(
        w,
        "<details><summary>{}: {} added, {} removed, {} changed{why}</summary>\n",
        code(&t.name),
        t.added.len(),
        t.removed.len(),
        t.changed.len()
    )?;
    if let Some(sc) = t.scope.as_ref().filter(|sc| !sc.ignored.is_empty()) {
        writeln!(
            w,
            "Columns ignored: {}.\n",
            sc.ignored
                .iter()
                .map(|c| code(c))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    let only = t.columns_only();
    if only > 0 {
        writeln!(
            w,
            "{} changed only by the columns.\n",
            count(only, "row", "rows")
        )?;
    }
    let cap = opts.max_rows.unwrap_or(usize::MAX);
    let listed: Vec<&crate::model::RowChange> =
        t.changed.iter().filter(|c| !c.columns_only).collect();
    if !listed.is_empty() {
        if keys_only {
            writeln!(w, "| Changed key |\n|---|")?;
            for c in listed.iter().take(cap) {
                writeln!(w, "| {} |", code(&c.key))?;
            }
        } else {
            writeln!(w, "| Key | Column | Before | After |\n|---|---|---|---|")?;
            for c in listed.iter().take(cap) {
                for (i, cell) in c.cells.iter().enumerate() {
                    let key = if i == 0 { code(&c.key) } else { String::new() };
                    let (before, after) = match word_diff(&cell.before, &cell.after) {
                        Some(pieces) => {
                            let mut s = String::new();
                            for p in pieces {
                                match p {
                                    Piece::Same(t) => s.push_str(&esc(&t)),
                                    Piece::Removed(t) => {
                                        s.push_str(&format!("<del>{}</del>", esc(&t)))
                                    }
                                    Piece::Added(t) => {
                                        s.push_str(&format!("<ins>{}</ins>", esc(&t)))
                                    }
                                }
                            }
                            ("(word diff)".to_string(), s)
                        }
                        None => (
                            code(&show_value(&cell.before)),
                            code(&show_value(&cell.after)),
                        ),
                    };
                    writeln!(w, "| {key} | {} | {before} | {after} |", code(&cell.column))?;
                }
            }
        }
        if listed.len() > cap {
            writeln!(w, "\n… and {} more changed", listed.len() - cap)?;
        }
        writeln!(w)?;
    }
    for (what, list, rows) in [
        ("Added", &t.added, &t.added_rows),
        ("Removed", &t.removed, &t.removed_rows),
    ] {
        if list.is_empty() {
            continue;
        }
        if opts.contents() && !rows.is_empty() {
            // Keys with their contents, one per line.
            writeln!(w, "| {what} key | Row |\n|---|---|")?;
            for (i, k) in list.iter().take(cap).enumerate() {
                let row = rows.get(i).map_or(String::new(), |r| code(&row_text(r)));
                writeln!(w, "| {} | {row} |", code(k))?;
            }
            if list.len() > cap {
                writeln!(w, "\n… and {} more", list.len() - cap)?;
            }
            writeln!(w)?;
            continue;
        }
        let shown: Vec<String> = list.iter().take(cap).map(|k| code(k)).collect();
        write!(w, "{what}: {}", shown.join(", "))?;
        if list.len() > cap {
            write!(w, " … and {} more", list.len() - cap)?;
        }
        writeln!(w, "\n")?;
    }
    writeln!(w, "</details>\n")
}

/// `--stat --format markdown`: the heading, the summary and a table of the
/// `--stat` lines (per table, per column, schema, objects and payloads
/// with bytes, configuration).
pub fn markdown_stat(d: &Diff, _opts: &RenderOptions, w: &mut dyn Write) -> io::Result<()> {
    heading(d, w)?;
    let lines = stat_lines(d);
    if !lines.is_empty() {
        writeln!(w, "| | Changes |\n|---|---|")?;
        for (n, c) in lines {
            writeln!(w, "| {} | {} |", code(&n), esc(&c))?;
        }
        writeln!(w)?;
    }
    Ok(())
}

fn heading(d: &Diff, w: &mut dyn Write) -> io::Result<()> {
    writeln!(
        w,
        "### ndarc diff: {} → {}\n",
        code(&d.before.name),
        code(&d.after.name)
    )?;
    writeln!(
        w,
        "**{}** (product {}; contentHash {} → {}{})\n",
        esc(&summary(d)),
        code(&d.product),
        code(
            d.before
                .content_hash
                .get(..12)
                .unwrap_or(&d.before.content_hash)
        ),
        code(
            d.after
                .content_hash
                .get(..12)
                .unwrap_or(&d.after.content_hash)
        ),
        if d.verified { "" } else { "; not verified" }
    )
}

/// Writes a heading, the summary, a table of counts, then `<details>`
/// sections for schema changes, each table's rows, objects and payloads,
/// and configuration.
pub fn markdown(d: &Diff, opts: &RenderOptions, w: &mut dyn Write) -> io::Result<()> {
    heading(d, w)?;
    if !d.has_differences() {
        return Ok(());
    }
    let s = &d.schema;
    let mut counts = Vec::new();
    for t in &d.tables {
        counts.push((
            code(&t.name),
            t.added.len(),
            t.removed.len(),
            t.changed.len(),
        ));
    }
    if s.has_changes() {
        counts.push((
            "<em>tables (schema)</em>".into(),
            s.tables_added.len(),
            s.tables_removed.len(),
            s.tables_changed.len(),
        ));
    }
    if d.objects.has_changes() {
        counts.push((
            "<em>objects</em>".into(),
            d.objects.added.len(),
            d.objects.removed.len(),
            d.objects.changed.len(),
        ));
    }
    if d.payloads.has_changes() {
        counts.push((
            "<em>payloads</em>".into(),
            d.payloads.added.len(),
            d.payloads.removed.len(),
            d.payloads.changed.len(),
        ));
    }
    if !counts.is_empty() {
        writeln!(w, "| | Added | Removed | Changed |\n|---|---:|---:|---:|")?;
        for (n, a, r, c) in counts {
            writeln!(w, "| {n} | {a} | {r} | {c} |")?;
        }
        writeln!(w)?;
    }
    if s.has_changes() {
        writeln!(w, "<details><summary>Schema</summary>\n")?;
        for t in &s.tables_added {
            writeln!(
                w,
                "- table added: {} ({}, {})",
                code(&t.name),
                count(t.columns.len(), "column", "columns"),
                count(t.count as usize, "row", "rows")
            )?;
        }
        for t in &s.tables_removed {
            writeln!(
                w,
                "- table removed: {} ({}, {})",
                code(&t.name),
                count(t.columns.len(), "column", "columns"),
                count(t.count as usize, "row", "rows")
            )?;
        }
        for t in &s.tables_changed {
            writeln!(w, "- table changed: {}", code(&t.name))?;
            for c in &t.columns_added {
                writeln!(
                    w,
                    "  - column added: {} {}",
                    code(&c.name),
                    code(&column_def(c))
                )?;
            }
            for c in &t.columns_removed {
                writeln!(
                    w,
                    "  - column removed: {} {}",
                    code(&c.name),
                    code(&column_def(c))
                )?;
            }
            for (b, a) in &t.columns_renamed {
                writeln!(
                    w,
                    "  - column renamed: {} → {} {}",
                    code(&b.name),
                    code(&a.name),
                    code(&column_def(a))
                )?;
            }
            for c in &t.columns_changed {
                writeln!(
                    w,
                    "  - column changed: {} {} → {}",
                    code(&c.name),
                    code(&column_def(&c.before)),
                    code(&column_def(&c.after))
                )?;
            }
            if !t.dependencies.is_empty() {
                writeln!(
                    w,
                    "  - dependencies: {}",
                    code(&names_text(&t.dependencies))
                )?;
            }
            if let Some((b, a)) = &t.rowid_alias {
                let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "null".into());
                writeln!(w, "  - rowidAlias: {} → {}", code(&show(b)), code(&show(a)))?;
            }
            if let Some(sql) = &t.sql {
                writeln!(w, "\n```diff")?;
                for (tag, text) in &sql.lines {
                    // A fenced block: only a line of backticks could end it.
                    writeln!(w, "{tag}{}", text.replace("```", "`\u{200b}``"))?;
                }
                writeln!(w, "```\n")?;
            }
        }
        writeln!(w, "\n</details>\n")?;
    }
    for t in &d.tables {
        rows_section(w, t, opts, d.keys_only)?;
    }
    if d.objects.has_changes() || d.payloads.has_changes() {
        writeln!(w, "<details><summary>Objects and payloads</summary>\n")?;
        for o in &d.objects.added {
            writeln!(
                w,
                "- object added: {} ({} bytes)",
                code(&format!("{}/{}", o.bucket, o.key)),
                o.size
            )?;
        }
        for o in &d.objects.removed {
            writeln!(
                w,
                "- object removed: {} ({} bytes)",
                code(&format!("{}/{}", o.bucket, o.key)),
                o.size
            )?;
        }
        for (b, a) in &d.objects.changed {
            let f: Vec<String> = object_fields(b, a)
                .into_iter()
                .map(|(f, x, y)| format!("{f} {} → {}", code(&x), code(&y)))
                .collect();
            writeln!(
                w,
                "- object changed: {}: {}",
                code(&format!("{}/{}", b.bucket, b.key)),
                f.join(", ")
            )?;
        }
        for p in &d.payloads.added {
            writeln!(w, "- payload added: {} ({} bytes)", code(&p.name), p.size)?;
        }
        for p in &d.payloads.removed {
            writeln!(w, "- payload removed: {} ({} bytes)", code(&p.name), p.size)?;
        }
        for (b, a) in &d.payloads.changed {
            writeln!(
                w,
                "- payload changed: {}: size {} → {}, sha256 {} → {}",
                code(&b.name),
                b.size,
                a.size,
                code(&b.sha256),
                code(&a.sha256)
            )?;
        }
        writeln!(w, "\n</details>\n")?;
    }
    let mut config = Vec::new();
    if d.configuration_changed || !d.configuration.is_empty() {
        config.push(format!(
            "- requiredConfiguration: {}",
            code(&if d.configuration.is_empty() {
                "reordered".into()
            } else {
                names_text(&d.configuration)
            })
        ));
    }
    if !d.excluded_tables.is_empty() {
        config.push(format!(
            "- excludedTables: {}",
            code(&names_text(&d.excluded_tables))
        ));
    }
    for c in &d.excluded_columns {
        let n = crate::model::NameChanges {
            added: c.added.clone(),
            removed: c.removed.clone(),
        };
        config.push(format!(
            "- excludedColumns of {}: {}",
            code(&c.table),
            code(&names_text(&n))
        ));
    }
    if d.before.product != d.after.product {
        config.push(format!(
            "- product: {} → {}",
            code(&d.before.product),
            code(&d.after.product)
        ));
    }
    if !config.is_empty() {
        writeln!(
            w,
            "<details><summary>Configuration</summary>\n\n{}\n\n</details>\n",
            config.join("\n")
        )?;
    }
    if !d.ignored.is_empty() {
        writeln!(w, "Ignored: {}.", ignored_text(d, &|s| code(s)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn bidi_controls_are_escaped_in_markdown() {
        assert_eq!(super::esc("a\u{202e}b"), "a&#92;u{202e}b");
        assert_eq!(super::esc("x\u{1b}"), "x&#92;u{1b}");
    }
}
