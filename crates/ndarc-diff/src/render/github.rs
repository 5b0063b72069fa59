//! `--format github`: GitHub Actions workflow commands, one annotation a
//! line: `::error` for each broken gate rule, `::warning` for each change
//! (per table, schema, objects and payloads, configuration), and a
//! closing `::notice` with the summary (and the gate's outcome).

use std::io::{self, Write};

use super::{count, safe, summary};
use crate::model::Diff;

/// `s` escaped for a workflow command: `%` as `%25`, CR as `%0D`, LF as
/// `%0A`; in a property (`title=`, `file=`) also `:` as `%3A` and `,` as
/// `%2C`, as GitHub's runner reads them.
pub fn github_escape(s: &str, property: bool) -> String {
    let mut out = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

/// One annotation: `::KIND title=TITLE::MESSAGE`, archive text made safe
/// (control and bidirectional characters escaped) before it is escaped
/// for GitHub.
fn line(w: &mut dyn Write, kind: &str, title: &str, message: &str) -> io::Result<()> {
    writeln!(
        w,
        "::{kind} title={}::{}",
        github_escape(&safe(title, false), true),
        github_escape(&safe(message, false), false)
    )
}

/// Writes the annotations of `d`.
pub fn github(d: &Diff, w: &mut dyn Write) -> io::Result<()> {
    if let Some(g) = &d.gate {
        for b in &g.broken {
            line(
                w,
                "error",
                &format!("ndarc diff gate: {} ({})", b.rule, b.code),
                &b.message,
            )?;
        }
    }
    for t in &d.tables {
        let why = if t.columns_differ() {
            format!(" ({})", t.columns_reason())
        } else {
            String::new()
        };
        line(
            w,
            "warning",
            &format!("ndarc diff: table {}", t.name),
            &format!(
                "{} added, {} removed, {} changed{why}",
                t.added.len(),
                t.removed.len(),
                t.changed.len()
            ),
        )?;
    }
    let s = &d.schema;
    for t in &s.tables_added {
        line(
            w,
            "warning",
            "ndarc diff: schema",
            &format!(
                "table {} added ({})",
                t.name,
                count(t.count as usize, "row", "rows")
            ),
        )?;
    }
    for t in &s.tables_removed {
        line(
            w,
            "warning",
            "ndarc diff: schema",
            &format!(
                "table {} removed ({})",
                t.name,
                count(t.count as usize, "row", "rows")
            ),
        )?;
    }
    for t in &s.tables_changed {
        let mut bits: Vec<String> = Vec::new();
        bits.extend(
            t.columns_added
                .iter()
                .map(|c| format!("column {} added", c.name)),
        );
        bits.extend(
            t.columns_removed
                .iter()
                .map(|c| format!("column {} removed", c.name)),
        );
        bits.extend(
            t.columns_renamed
                .iter()
                .map(|(b, a)| format!("column {} renamed to {}", b.name, a.name)),
        );
        bits.extend(
            t.columns_changed
                .iter()
                .map(|c| format!("column {} changed", c.name)),
        );
        if bits.is_empty() {
            bits.push("definition changed".into());
        }
        line(
            w,
            "warning",
            "ndarc diff: schema",
            &format!("table {} changed: {}", t.name, bits.join(", ")),
        )?;
    }
    for (what, e) in super::entry_counts(d) {
        if e != (0, 0, 0) {
            line(
                w,
                "warning",
                &format!("ndarc diff: {what}"),
                &format!("{} added, {} removed, {} changed", e.0, e.1, e.2),
            )?;
        }
    }
    if d.configuration_changed || !d.configuration.is_empty() {
        line(
            w,
            "warning",
            "ndarc diff: configuration",
            "requiredConfiguration changed",
        )?;
    }
    let gate = match &d.gate {
        None => String::new(),
        Some(g) if g.passed() => {
            format!("; gate passed ({})", count(g.rules.len(), "rule", "rules"))
        }
        Some(g) => {
            let mut names: Vec<&str> = g.broken.iter().map(|b| b.rule.as_str()).collect();
            names.dedup();
            format!(
                "; gate failed ({} of {} broken)",
                names.len(),
                count(g.rules.len(), "rule", "rules")
            )
        }
    };
    line(
        w,
        "notice",
        &format!("ndarc diff: {} → {}", d.before.name, d.after.name),
        &format!("{}{gate}", summary(d)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TableDiff;

    #[test]
    fn escapes_as_github_reads() {
        assert_eq!(github_escape("50% a\r\nb", false), "50%25 a%0D%0Ab");
        assert_eq!(github_escape("t: a, b%", true), "t%3A a%2C b%25");
    }

    #[test]
    fn annotations() {
        let mut d = Diff::default();
        d.before.name = "a.ndjson".into();
        d.after.name = "b.ndjson".into();
        d.tables.push(TableDiff {
            name: "100%,x:y\nz".into(),
            added: vec!["1".into()],
            ..TableDiff::default()
        });
        d.gate = Some(crate::gate::GateResult {
            rules: vec!["/noDroppedTables".into()],
            broken: vec![crate::gate::Broken {
                code: "gate_dropped_table",
                rule: "/noDroppedTables".into(),
                message: "table t dropped (100% of it)".into(),
            }],
        });
        let mut out = Vec::new();
        github(&d, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "::error title=ndarc diff gate%3A /noDroppedTables (gate_dropped_table)::table t dropped (100%25 of it)\n\
             ::warning title=ndarc diff%3A table 100%25%2Cx%3Ay\\nz::1 added, 0 removed, 0 changed\n\
             ::notice title=ndarc diff%3A a.ndjson → b.ndjson::1 table with row changes (1 added, 0 removed, 0 changed); gate failed (1 of 1 rule broken)\n"
        );
    }
}
