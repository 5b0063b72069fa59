//! `--stat`: counts per table only.

use std::io::{self, Write};

use super::{safe, summary, width, RenderOptions};
use crate::model::Diff;

/// Writes one line per table with row changes (`name | +added -removed
/// ~changed`), lines for schema, objects, payloads and configuration when
/// they changed, and the summary line.
pub fn stat(d: &Diff, _opts: &RenderOptions, w: &mut dyn Write) -> io::Result<()> {
    let mut rows: Vec<(String, String)> = d
        .tables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                format!(
                    "+{} -{} ~{}",
                    t.added.len(),
                    t.removed.len(),
                    t.changed.len()
                ),
            )
        })
        .collect();
    let s = &d.schema;
    if s.has_changes() {
        rows.push((
            "(schema)".into(),
            format!(
                "+{} -{} ~{} tables",
                s.tables_added.len(),
                s.tables_removed.len(),
                s.tables_changed.len()
            ),
        ));
    }
    for (what, e) in [
        (
            "(objects)",
            (
                d.objects.added.len(),
                d.objects.removed.len(),
                d.objects.changed.len(),
            ),
        ),
        (
            "(payloads)",
            (
                d.payloads.added.len(),
                d.payloads.removed.len(),
                d.payloads.changed.len(),
            ),
        ),
    ] {
        if e != (0, 0, 0) {
            rows.push((what.into(), format!("+{} -{} ~{}", e.0, e.1, e.2)));
        }
    }
    if d.configuration_changed || !d.configuration.is_empty() {
        rows.push((
            "(requiredConfiguration)".into(),
            format!(
                "+{} -{}",
                d.configuration.added.len(),
                d.configuration.removed.len()
            ),
        ));
    }
    if !d.excluded_tables.is_empty() {
        rows.push((
            "(excludedTables)".into(),
            format!(
                "+{} -{}",
                d.excluded_tables.added.len(),
                d.excluded_tables.removed.len()
            ),
        ));
    }
    for c in &d.excluded_columns {
        rows.push((
            format!("(excludedColumns of {})", c.table),
            format!("+{} -{}", c.added.len(), c.removed.len()),
        ));
    }
    let widest = rows
        .iter()
        .map(|(n, _)| width(&safe(n, false)))
        .max()
        .unwrap_or(0);
    for (n, c) in rows {
        let n = safe(&n, false);
        let pad = widest.saturating_sub(width(&n));
        writeln!(w, " {n}{} | {c}", " ".repeat(pad))?;
    }
    writeln!(w, "{}", summary(d))
}
