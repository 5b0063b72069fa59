//! `--format markdown`: for CI job summaries and pull-request comments.

use std::io::{self, Write};

use super::human::{column_def, names_text, object_fields, row_text};
use super::stat::stat_lines;
use super::{count, ignored_text, show_value, summary, word_diff, Piece, RenderOptions};
use crate::model::{Diff, Side, TableDiff};

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

/// Bytes of the cap kept back for what closes a cut: the end of the
/// section being written and the line that says what was cut (at most
/// some 700 bytes, see [`Out::close`]).
const RESERVE: usize = 1024;

/// The smallest `--max-markdown-bytes` (other than none): room for the
/// heading, the counts and the closing of a cut.
pub const MIN_MARKDOWN_BYTES: usize = 2048;

/// Markdown output within a byte cap ([`RenderOptions::max_bytes`]): each
/// piece (a line, a row with its cells, a key) is written whole or not at
/// all, and once one does not fit nothing more is, so the output is a
/// prefix of the uncapped one, closed by [`Out::close`].
struct Out<'a> {
    w: &'a mut dyn Write,
    /// Bytes that may still be written, the reserve aside.
    left: usize,
    /// The cap, when there is one.
    cap: Option<usize>,
    /// A piece did not fit.
    full: bool,
    /// Row changes whose detail was not written.
    rows_cut: u64,
    /// Tables whose row detail was cut (whole or in part).
    tables_cut: u64,
    /// Other sections cut, whole or in part.
    sections_cut: Vec<&'static str>,
    /// Counts-table lines not written.
    counts_cut: u64,
}

impl Out<'_> {
    /// Writes `s` when it fits; `false` once something did not.
    fn put(&mut self, s: &str) -> io::Result<bool> {
        if self.full || s.len() > self.left {
            self.full = true;
            return Ok(false);
        }
        self.left -= s.len();
        self.w.write_all(s.as_bytes())?;
        Ok(true)
    }

    /// Writes `s`, from the reserve: only what closes a cut section.
    fn force(&mut self, s: &str) -> io::Result<()> {
        self.w.write_all(s.as_bytes())
    }

    /// Marks `what` cut (once).
    fn cut_section(&mut self, what: &'static str) {
        if !self.sections_cut.contains(&what) {
            self.sections_cut.push(what);
        }
    }

    /// The line that says what was cut and how to see it, when something
    /// was. Its length is bounded (fixed text, four numbers and the names
    /// of at most five sections), so it fits the reserve.
    fn close(&mut self) -> io::Result<()> {
        let Some(cap) = self.cap.filter(|_| self.full) else {
            return Ok(());
        };
        let mut bits = Vec::new();
        if self.counts_cut > 0 {
            bits.push(format!(
                "{} of the counts table",
                count(self.counts_cut as usize, "line", "lines")
            ));
        }
        if self.tables_cut > 0 {
            bits.push(format!(
                "the detail of {} in {}",
                count(self.rows_cut as usize, "row change", "row changes"),
                count(self.tables_cut as usize, "table", "tables"),
            ));
        }
        for s in &self.sections_cut {
            bits.push(format!("the {s} section"));
        }
        let line = format!(
            "**Cut to stay within {cap} bytes** (`--max-markdown-bytes`): not shown: {}. \
             The counts above are complete; `ndarc diff --format json` (or \
             `--max-markdown-bytes 0`) shows everything.\n",
            bits.join(", ")
        );
        self.force(&line)
    }
}

/// A buffer that refuses to grow past `cap` bytes (an error stops the
/// rendering early).
struct Limited {
    buf: Vec<u8>,
    cap: usize,
}

impl Write for Limited {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.buf.len() + b.len() > self.cap {
            return Err(io::Error::other("over the cap"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Changes of a table's rows, as counted in the counts table.
fn row_changes(t: &TableDiff) -> u64 {
    (t.added.len() + t.removed.len() + t.changed.len()) as u64
}

/// A changed row's lines of the `Key | Column | Before | After` table.
fn changed_row(c: &crate::model::RowChange) -> String {
    let mut o = String::new();
    for (i, cell) in c.cells.iter().enumerate() {
        let key = if i == 0 { code(&c.key) } else { String::new() };
        let (before, after) = match cell.only {
            Some(Side::After) => (
                "*(column added)*".to_string(),
                code(&show_value(&cell.after)),
            ),
            Some(Side::Before) => (
                code(&show_value(&cell.before)),
                "*(column removed)*".to_string(),
            ),
            None => match word_diff(&cell.before, &cell.after) {
                Some(pieces) => {
                    let mut s = String::new();
                    for p in pieces {
                        match p {
                            Piece::Same(t) => s.push_str(&esc(&t)),
                            Piece::Removed(t) => s.push_str(&format!("<del>{}</del>", esc(&t))),
                            Piece::Added(t) => s.push_str(&format!("<ins>{}</ins>", esc(&t))),
                        }
                    }
                    ("(word diff)".to_string(), s)
                }
                None => (
                    code(&show_value(&cell.before)),
                    code(&show_value(&cell.after)),
                ),
            },
        };
        o.push_str(&format!(
            "| {key} | {} | {before} | {after} |\n",
            code(&cell.column)
        ));
    }
    o
}

/// A table's `<details>` section; when a piece does not fit, the section
/// is closed and the rows not shown are counted.
fn rows_section(
    w: &mut Out<'_>,
    t: &TableDiff,
    opts: &RenderOptions,
    keys_only: bool,
) -> io::Result<()> {
    let total = row_changes(t);
    // Row changes written or summed up ("… and N more") so far.
    let mut done = 0u64;
    let opened = rows_body(w, t, opts, keys_only, &mut done)?;
    if !w.full {
        return Ok(());
    }
    if total > done || !opened {
        w.rows_cut += total.saturating_sub(done);
        w.tables_cut += 1;
    }
    if opened {
        w.force("\n\n</details>\n\n")?;
    }
    Ok(())
}

/// Writes the section, counting in `done` the row changes written; returns
/// whether the section was opened. Stops at the first piece that does not
/// fit (the caller closes the section).
fn rows_body(
    w: &mut Out<'_>,
    t: &TableDiff,
    opts: &RenderOptions,
    keys_only: bool,
    done: &mut u64,
) -> io::Result<bool> {
    let why = if t.columns_differ() {
        format!(" ({})", esc(&t.columns_reason()))
    } else {
        String::new()
    };
    if !w.put(&format!(
        "<details><summary>{}: {} added, {} removed, {} changed{why}</summary>\n\n",
        code(&t.name),
        t.added.len(),
        t.removed.len(),
        t.changed.len()
    ))? {
        return Ok(false);
    }
    if let Some(sc) = t.scope.as_ref().filter(|sc| !sc.ignored.is_empty()) {
        if !w.put(&format!(
            "Columns ignored: {}.\n\n",
            sc.ignored
                .iter()
                .map(|c| code(c))
                .collect::<Vec<_>>()
                .join(", ")
        ))? {
            return Ok(true);
        }
    }
    let only = t.columns_only();
    if only > 0 {
        if !w.put(&format!(
            "{} changed only by the columns.\n\n",
            count(only, "row", "rows")
        ))? {
            return Ok(true);
        }
        *done += only as u64;
    }
    let cap = opts.max_rows.unwrap_or(usize::MAX);
    let listed: Vec<&crate::model::RowChange> =
        t.changed.iter().filter(|c| !c.columns_only).collect();
    if !listed.is_empty() {
        let head = if keys_only {
            "| Changed key |\n|---|\n"
        } else {
            "| Key | Column | Before | After |\n|---|---|---|---|\n"
        };
        if !w.put(head)? {
            return Ok(true);
        }
        for c in listed.iter().take(cap) {
            let row = if keys_only {
                format!("| {} |\n", code(&c.key))
            } else {
                changed_row(c)
            };
            if !w.put(&row)? {
                return Ok(true);
            }
            *done += 1;
        }
        if listed.len() > cap {
            if !w.put(&format!("\n… and {} more changed\n", listed.len() - cap))? {
                return Ok(true);
            }
            *done += (listed.len() - cap) as u64;
        }
        if !w.put("\n")? {
            return Ok(true);
        }
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
            if !w.put(&format!("| {what} key | Row |\n|---|---|\n"))? {
                return Ok(true);
            }
            for (i, k) in list.iter().take(cap).enumerate() {
                let row = rows.get(i).map_or(String::new(), |r| code(&row_text(r)));
                if !w.put(&format!("| {} | {row} |\n", code(k)))? {
                    return Ok(true);
                }
                *done += 1;
            }
            if list.len() > cap {
                if !w.put(&format!("\n… and {} more\n", list.len() - cap))? {
                    return Ok(true);
                }
                *done += (list.len() - cap) as u64;
            }
            if !w.put("\n")? {
                return Ok(true);
            }
            continue;
        }
        // Keys on one line, `, ` between them: written key by key.
        for (i, k) in list.iter().take(cap).enumerate() {
            let piece = if i == 0 {
                format!("{what}: {}", code(k))
            } else {
                format!(", {}", code(k))
            };
            if !w.put(&piece)? {
                return Ok(true);
            }
            *done += 1;
        }
        if list.len() > cap {
            if !w.put(&format!(" … and {} more", list.len() - cap))? {
                return Ok(true);
            }
            *done += (list.len() - cap) as u64;
        }
        if !w.put("\n\n")? {
            return Ok(true);
        }
    }
    w.put("</details>\n\n")?;
    Ok(true)
}

/// `--stat --format markdown`: the heading, the summary and a table of the
/// `--stat` lines (per table, per column, schema, objects and payloads
/// with bytes, configuration).
pub fn markdown_stat(d: &Diff, _opts: &RenderOptions, w: &mut dyn Write) -> io::Result<()> {
    w.write_all(heading(d).as_bytes())?;
    if let Some(g) = &d.gate {
        w.write_all(gate_section(g).as_bytes())?;
    }
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

/// The gate's outcome: `#### Gate: passed` with the rules checked, or
/// `#### Gate: failed` with a line per broken rule.
fn gate_section(g: &crate::gate::GateResult) -> String {
    let rules = g.rules.len();
    if rules == 0 {
        return "#### Gate: passed\n\nThe gate has no rules.\n\n".into();
    }
    if g.passed() {
        return format!(
            "#### Gate: passed\n\n{} hold: {}.\n\n",
            if rules == 1 {
                "The rule".to_string()
            } else {
                format!("All {rules} rules")
            },
            g.rules
                .iter()
                .map(|r| code(r))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut names: Vec<&str> = g.broken.iter().map(|b| b.rule.as_str()).collect();
    names.dedup();
    let mut o = format!(
        "#### Gate: failed\n\n{} of {} broken:\n\n",
        names.len(),
        count(rules, "rule", "rules")
    );
    for b in &g.broken {
        o.push_str(&format!(
            "- {} ({}): {}\n",
            code(&b.rule),
            code(b.code),
            esc(&b.message)
        ));
    }
    o.push('\n');
    o
}

fn heading(d: &Diff) -> String {
    format!(
        "### ndarc diff: {} → {}\n\n**{}** (product {}; contentHash {} → {}{})\n\n",
        code(&d.before.name),
        code(&d.after.name),
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
/// and configuration. With [`RenderOptions::max_bytes`] the output is at
/// most that many bytes: pieces are written whole until one does not fit,
/// then the open section is closed and a last line says what was not
/// shown and how to see it.
pub fn markdown(d: &Diff, opts: &RenderOptions, w: &mut dyn Write) -> io::Result<()> {
    if let Some(cap) = opts.max_bytes {
        // What fits whole is written whole: the reserve is kept back only
        // when something must be cut.
        let mut whole = Limited {
            buf: Vec::new(),
            cap,
        };
        let uncapped = RenderOptions {
            max_bytes: None,
            ..opts.clone()
        };
        if markdown(d, &uncapped, &mut whole).is_ok() {
            return w.write_all(&whole.buf);
        }
    }
    let mut o = Out {
        w,
        left: opts
            .max_bytes
            .map_or(usize::MAX, |c| c.saturating_sub(RESERVE)),
        cap: opts.max_bytes,
        full: false,
        rows_cut: 0,
        tables_cut: 0,
        sections_cut: Vec::new(),
        counts_cut: 0,
    };
    body(d, opts, &mut o)?;
    o.close()
}

fn body(d: &Diff, opts: &RenderOptions, w: &mut Out<'_>) -> io::Result<()> {
    if !w.put(&heading(d))? {
        w.cut_detail(d, 0);
        return Ok(());
    }
    if let Some(g) = &d.gate {
        // Before the counts: only a gate longer than the cap is cut.
        if !w.put(&gate_section(g))? {
            w.cut_section("gate");
            w.cut_detail(d, 0);
            return Ok(());
        }
    }
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
        let n = counts.len() as u64;
        let mut written = 0u64;
        if w.put("| | Added | Removed | Changed |\n|---|---:|---:|---:|\n")? {
            for (n, a, r, c) in counts {
                if !w.put(&format!("| {n} | {a} | {r} | {c} |\n"))? {
                    break;
                }
                written += 1;
            }
        }
        w.counts_cut = n - written;
        if w.full {
            w.force("\n")?;
            w.cut_detail(d, 0);
            return Ok(());
        }
        w.put("\n")?;
    }
    if s.has_changes() && !schema_section(d, w)? {
        w.force("\n</details>\n\n")?;
    }
    if w.full {
        w.cut_detail(d, 0);
        return Ok(());
    }
    for (i, t) in d.tables.iter().enumerate() {
        rows_section(w, t, opts, d.keys_only)?;
        if w.full {
            w.cut_detail(d, i + 1);
            return Ok(());
        }
    }
    if d.objects.has_changes() || d.payloads.has_changes() {
        if !objects_section(d, w)? {
            w.force("\n</details>\n\n")?;
        }
        if w.full {
            w.cut_detail(d, d.tables.len());
            return Ok(());
        }
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
    if !config.is_empty()
        && !w.put(&format!(
            "<details><summary>Configuration</summary>\n\n{}\n\n</details>\n\n",
            config.join("\n")
        ))?
    {
        w.cut_section("configuration");
    }
    if !d.ignored.is_empty() && !w.put(&format!("Ignored: {}.\n", ignored_text(d, &|s| code(s))))? {
        w.cut_section("ignored");
    }
    Ok(())
}

impl Out<'_> {
    /// Counts as cut the row detail of the tables from `from` on and the
    /// sections after them.
    fn cut_detail(&mut self, d: &Diff, from: usize) {
        if from == 0 && d.schema.has_changes() {
            self.cut_section("schema");
        }
        for t in d.tables.iter().skip(from) {
            self.rows_cut += row_changes(t);
            self.tables_cut += 1;
        }
        if d.objects.has_changes() || d.payloads.has_changes() {
            self.cut_section("objects and payloads");
        }
        if d.configuration_changed
            || !d.configuration.is_empty()
            || !d.excluded_tables.is_empty()
            || !d.excluded_columns.is_empty()
            || d.before.product != d.after.product
        {
            self.cut_section("configuration");
        }
    }
}

/// The schema section, line by line; `false` when a line did not fit
/// after the section was opened.
fn schema_section(d: &Diff, w: &mut Out<'_>) -> io::Result<bool> {
    let s = &d.schema;
    if !w.put("<details><summary>Schema</summary>\n\n")? {
        return Ok(true);
    }
    let mut lines = Vec::new();
    for t in &s.tables_added {
        lines.push(format!(
            "- table added: {} ({}, {})\n",
            code(&t.name),
            count(t.columns.len(), "column", "columns"),
            count(t.count as usize, "row", "rows")
        ));
    }
    for t in &s.tables_removed {
        lines.push(format!(
            "- table removed: {} ({}, {})\n",
            code(&t.name),
            count(t.columns.len(), "column", "columns"),
            count(t.count as usize, "row", "rows")
        ));
    }
    for line in lines {
        if !w.put(&line)? {
            return Ok(false);
        }
    }
    for t in &s.tables_changed {
        let mut o = format!("- table changed: {}\n", code(&t.name));
        for c in &t.columns_added {
            o.push_str(&format!(
                "  - column added: {} {}\n",
                code(&c.name),
                code(&column_def(c))
            ));
        }
        for c in &t.columns_removed {
            o.push_str(&format!(
                "  - column removed: {} {}\n",
                code(&c.name),
                code(&column_def(c))
            ));
        }
        for (b, a) in &t.columns_renamed {
            o.push_str(&format!(
                "  - column renamed: {} → {} {}\n",
                code(&b.name),
                code(&a.name),
                code(&column_def(a))
            ));
        }
        for c in &t.columns_changed {
            o.push_str(&format!(
                "  - column changed: {} {} → {}\n",
                code(&c.name),
                code(&column_def(&c.before)),
                code(&column_def(&c.after))
            ));
        }
        if !t.dependencies.is_empty() {
            o.push_str(&format!(
                "  - dependencies: {}\n",
                code(&names_text(&t.dependencies))
            ));
        }
        if let Some((b, a)) = &t.rowid_alias {
            let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "null".into());
            o.push_str(&format!(
                "  - rowidAlias: {} → {}\n",
                code(&show(b)),
                code(&show(a))
            ));
        }
        if let Some(sql) = &t.sql {
            o.push_str("\n```diff\n");
            for (tag, text) in &sql.lines {
                // A fenced block: only a line of backticks could end it.
                o.push_str(&format!("{tag}{}\n", text.replace("```", "`\u{200b}``")));
            }
            o.push_str("```\n\n");
        }
        if !w.put(&o)? {
            return Ok(false);
        }
    }
    w.put("\n</details>\n\n")
}

/// The objects and payloads section, line by line; `false` when a line did
/// not fit after the section was opened.
fn objects_section(d: &Diff, w: &mut Out<'_>) -> io::Result<bool> {
    if !w.put("<details><summary>Objects and payloads</summary>\n\n")? {
        return Ok(true);
    }
    let mut lines = Vec::new();
    for o in &d.objects.added {
        lines.push(format!(
            "- object added: {} ({} bytes)\n",
            code(&format!("{}/{}", o.bucket, o.key)),
            o.size
        ));
    }
    for o in &d.objects.removed {
        lines.push(format!(
            "- object removed: {} ({} bytes)\n",
            code(&format!("{}/{}", o.bucket, o.key)),
            o.size
        ));
    }
    for (b, a) in &d.objects.changed {
        let f: Vec<String> = object_fields(b, a)
            .into_iter()
            .map(|(f, x, y)| format!("{f} {} → {}", code(&x), code(&y)))
            .collect();
        lines.push(format!(
            "- object changed: {}: {}\n",
            code(&format!("{}/{}", b.bucket, b.key)),
            f.join(", ")
        ));
    }
    for p in &d.payloads.added {
        lines.push(format!(
            "- payload added: {} ({} bytes)\n",
            code(&p.name),
            p.size
        ));
    }
    for p in &d.payloads.removed {
        lines.push(format!(
            "- payload removed: {} ({} bytes)\n",
            code(&p.name),
            p.size
        ));
    }
    for (b, a) in &d.payloads.changed {
        lines.push(format!(
            "- payload changed: {}: size {} → {}, sha256 {} → {}\n",
            code(&b.name),
            b.size,
            a.size,
            code(&b.sha256),
            code(&a.sha256)
        ));
    }
    for line in lines {
        if !w.put(&line)? {
            return Ok(false);
        }
    }
    w.put("\n</details>\n\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_closing_of_a_cut_fits_the_reserve() {
        let mut buf = Vec::new();
        let mut o = super::Out {
            w: &mut buf,
            left: 0,
            cap: Some(usize::MAX),
            full: true,
            rows_cut: u64::MAX,
            tables_cut: u64::MAX,
            sections_cut: vec![
                "gate",
                "schema",
                "objects and payloads",
                "configuration",
                "ignored",
            ],
            counts_cut: u64::MAX,
        };
        o.force("\n\n</details>\n\n").unwrap();
        o.close().unwrap();
        assert!(buf.len() < super::RESERVE, "{}", buf.len());
    }

    #[test]
    fn bidi_controls_are_escaped_in_markdown() {
        assert_eq!(super::esc("a\u{202e}b"), "a&#92;u{202e}b");
        assert_eq!(super::esc("x\u{1b}"), "x&#92;u{1b}");
    }
}
