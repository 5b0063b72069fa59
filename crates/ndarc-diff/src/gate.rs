//! Gates: the rules a diff must pass in CI (`ndarc diff --gate FILE`).
//!
//! A gate file is one JSON object, checked strictly (an unknown member, a
//! value of the wrong type or out of range is an error naming the member
//! by its JSON pointer):
//!
//! ```json
//! {
//!   "maxRemovedPercent": 1,
//!   "tables": {
//!     "*": { "maxRemovedPercent": 5 },
//!     "audit_log": { "maxRemovedPercent": 100 }
//!   },
//!   "noDroppedTables": true,
//!   "noDroppedColumns": true,
//!   "newColumnsOnlyIn": ["users", "notes"],
//!   "maxObjectBytesChanged": 1048576,
//!   "requiredConfigurationUnchanged": true
//! }
//! ```
//!
//! [`Gate::check`] is pure: a [`Diff`] and the rules in, a [`GateResult`]
//! out, each broken rule named by its pointer with a stable code.

use ndarc_json::pointer_token as token;
use ndarc_json::Value;

use crate::glob::Glob;
use crate::model::Diff;

/// The members a gate file may have.
const MEMBERS: [&str; 7] = [
    "maxRemovedPercent",
    "tables",
    "noDroppedTables",
    "noDroppedColumns",
    "newColumnsOnlyIn",
    "maxObjectBytesChanged",
    "requiredConfigurationUnchanged",
];

/// The members of an entry of `tables`.
const TABLE_MEMBERS: [&str; 1] = ["maxRemovedPercent"];

/// The rules of one `tables` entry.
#[derive(Debug, Clone, PartialEq)]
struct TableRules {
    /// The pattern, as written.
    pattern: String,
    glob: Glob,
    /// The pattern has no `*` or `?`: it names one table, and its rules
    /// replace those of the patterns that match the table too.
    exact: bool,
    max_removed_percent: Option<f64>,
}

/// A checked gate file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gate {
    max_removed_percent: Option<f64>,
    tables: Vec<TableRules>,
    no_dropped_tables: bool,
    no_dropped_columns: bool,
    new_columns_only_in: Option<Vec<(String, Glob)>>,
    max_object_bytes_changed: Option<u64>,
    required_configuration_unchanged: bool,
}

pub use crate::model::{Broken, GateResult};
use crate::Error;

fn err(pointer: &str, message: impl Into<String>) -> Error {
    Error::Gate {
        pointer: pointer.to_string(),
        message: message.into(),
    }
}

/// Refuses a member not in `known`.
fn known_members(o: &ndarc_json::Object<'_>, known: &[&str], at: &str) -> Result<(), Error> {
    for name in o.keys() {
        if !known.contains(&name) {
            return Err(err(
                &format!("{at}/{}", token(name)),
                format!(
                    "unknown member {name:?}; a {} has {}",
                    if at.is_empty() {
                        "gate file"
                    } else {
                        "tables entry"
                    },
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

fn percent(v: &Value<'_>, at: &str) -> Result<f64, Error> {
    match v.as_f64() {
        Some(p) if (0.0..=100.0).contains(&p) => Ok(p),
        Some(p) => Err(err(at, format!("a percentage is 0 to 100, not {p}"))),
        None => Err(err(
            at,
            format!("expected a number (a percentage), got {}", v.type_name()),
        )),
    }
}

fn boolean(v: &Value<'_>, at: &str) -> Result<bool, Error> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(err(
            at,
            format!("expected true or false, got {}", v.type_name()),
        )),
    }
}

impl Gate {
    /// Checks and reads a gate file.
    pub fn parse(bytes: &[u8]) -> Result<Gate, Error> {
        let v = ndarc_json::parse(bytes).map_err(|e| err("", format!("not JSON: {e}")))?;
        let Value::Object(o) = &v else {
            return Err(err(
                "",
                format!("a gate file is a JSON object, not {}", v.type_name()),
            ));
        };
        known_members(o, &MEMBERS, "")?;
        let mut g = Gate::default();
        for (name, v) in o.iter() {
            let at = format!("/{name}");
            match name {
                "maxRemovedPercent" => g.max_removed_percent = Some(percent(v, &at)?),
                "noDroppedTables" => g.no_dropped_tables = boolean(v, &at)?,
                "noDroppedColumns" => g.no_dropped_columns = boolean(v, &at)?,
                "requiredConfigurationUnchanged" => {
                    g.required_configuration_unchanged = boolean(v, &at)?
                }
                "maxObjectBytesChanged" => {
                    g.max_object_bytes_changed = Some(
                        v.as_safe_integer()
                            .and_then(|n| u64::try_from(n).ok())
                            .ok_or_else(|| {
                                err(&at, "expected a whole number of bytes, 0 or more")
                            })?,
                    )
                }
                "newColumnsOnlyIn" => {
                    let list = v.as_array().ok_or_else(|| {
                        err(
                            &at,
                            format!(
                                "expected an array of table names or patterns, got {}",
                                v.type_name()
                            ),
                        )
                    })?;
                    let mut names = Vec::new();
                    for (i, x) in list.iter().enumerate() {
                        let s = x.as_str().filter(|s| !s.is_empty()).ok_or_else(|| {
                            err(
                                &format!("{at}/{i}"),
                                "expected a table name or pattern (a non-empty string)",
                            )
                        })?;
                        names.push((s.to_string(), Glob::new(s)));
                    }
                    g.new_columns_only_in = Some(names);
                }
                "tables" => {
                    let Value::Object(t) = v else {
                        return Err(err(
                            &at,
                            format!(
                                "expected an object of table names or patterns, got {}",
                                v.type_name()
                            ),
                        ));
                    };
                    for (pattern, rules) in t.iter() {
                        let at = format!("/tables/{}", token(pattern));
                        if pattern.is_empty() {
                            return Err(err(&at, "a table name or pattern is not empty"));
                        }
                        let Value::Object(r) = rules else {
                            return Err(err(
                                &at,
                                format!("expected an object of rules, got {}", rules.type_name()),
                            ));
                        };
                        known_members(r, &TABLE_MEMBERS, &at)?;
                        let mut tr = TableRules {
                            pattern: pattern.to_string(),
                            glob: Glob::new(pattern),
                            exact: !pattern.contains(['*', '?']),
                            max_removed_percent: None,
                        };
                        if let Some(p) = r.get("maxRemovedPercent") {
                            tr.max_removed_percent =
                                Some(percent(p, &format!("{at}/maxRemovedPercent"))?);
                        }
                        g.tables.push(tr);
                    }
                }
                _ => {}
            }
        }
        Ok(g)
    }

    /// The rules given, as JSON pointers, in the order they are checked.
    pub fn rules(&self) -> Vec<String> {
        let mut r = Vec::new();
        if self.max_removed_percent.is_some() {
            r.push("/maxRemovedPercent".to_string());
        }
        for t in &self.tables {
            if t.max_removed_percent.is_some() {
                r.push(format!("/tables/{}/maxRemovedPercent", token(&t.pattern)));
            }
        }
        if self.no_dropped_tables {
            r.push("/noDroppedTables".into());
        }
        if self.no_dropped_columns {
            r.push("/noDroppedColumns".into());
        }
        if self.new_columns_only_in.is_some() {
            r.push("/newColumnsOnlyIn".into());
        }
        if self.max_object_bytes_changed.is_some() {
            r.push("/maxObjectBytesChanged".into());
        }
        if self.required_configuration_unchanged {
            r.push("/requiredConfigurationUnchanged".into());
        }
        r
    }

    /// The `tables` entries that apply to `table`: the exact ones naming
    /// it when there are some, else every pattern that matches it.
    fn entries_for(&self, table: &str) -> Vec<&TableRules> {
        let matching: Vec<&TableRules> = self
            .tables
            .iter()
            .filter(|t| t.glob.matches(table))
            .collect();
        if matching.iter().any(|t| t.exact) {
            matching.into_iter().filter(|t| t.exact).collect()
        } else {
            matching
        }
    }

    /// Checks `d` against the rules.
    pub fn check(&self, d: &Diff) -> GateResult {
        let mut broken = Vec::new();
        self.removed_rows(d, &mut broken);
        self.dropped(d, &mut broken);
        self.new_columns(d, &mut broken);
        self.object_bytes(d, &mut broken);
        self.configuration(d, &mut broken);
        GateResult {
            rules: self.rules(),
            broken,
        }
    }

    /// `maxRemovedPercent`, of all rows and of the rows of each table.
    fn removed_rows(&self, d: &Diff, broken: &mut Vec<Broken>) {
        let removed_of = |name: &str| {
            d.tables
                .iter()
                .find(|t| t.name == name)
                .map_or(0, |t| t.removed.len() as u64)
        };
        if let Some(max) = self.max_removed_percent {
            let before: u64 = d.counts.iter().filter_map(|c| c.before).sum();
            let removed: u64 = d.counts.iter().map(|c| removed_of(&c.name)).sum();
            if over(removed, before, max) {
                broken.push(Broken {
                    code: "gate_removed_rows",
                    rule: "/maxRemovedPercent".into(),
                    message: format!(
                        "{removed} of {before} rows removed ({}), more than {}%",
                        show_percent(removed, before),
                        show_number(max)
                    ),
                });
            }
        }
        for (i, t) in self.tables.iter().enumerate() {
            let Some(max) = t.max_removed_percent else {
                continue;
            };
            for c in &d.counts {
                // Only the entries that apply to the table count.
                if !self
                    .entries_for(&c.name)
                    .iter()
                    .any(|e| std::ptr::eq(*e, &self.tables[i]))
                {
                    continue;
                }
                let before = c.before.unwrap_or(0);
                let removed = removed_of(&c.name);
                if over(removed, before, max) {
                    broken.push(Broken {
                        code: "gate_removed_rows",
                        rule: format!("/tables/{}/maxRemovedPercent", token(&t.pattern)),
                        message: format!(
                            "table {}: {removed} of {before} rows removed ({}){}, more than {}%",
                            c.name,
                            show_percent(removed, before),
                            if c.after.is_none() {
                                ", the table dropped"
                            } else {
                                ""
                            },
                            show_number(max)
                        ),
                    });
                }
            }
        }
    }

    /// `noDroppedTables` and `noDroppedColumns`.
    fn dropped(&self, d: &Diff, broken: &mut Vec<Broken>) {
        if self.no_dropped_tables {
            for t in &d.schema.tables_removed {
                broken.push(Broken {
                    code: "gate_dropped_table",
                    rule: "/noDroppedTables".into(),
                    message: format!(
                        "table {} dropped ({})",
                        t.name,
                        crate::render::count(t.count as usize, "row", "rows")
                    ),
                });
            }
        }
        if self.no_dropped_columns {
            for t in &d.schema.tables_changed {
                for c in &t.columns_removed {
                    broken.push(Broken {
                        code: "gate_dropped_column",
                        rule: "/noDroppedColumns".into(),
                        message: format!("column {}.{} dropped", t.name, c.name),
                    });
                }
                for (b, a) in &t.columns_renamed {
                    broken.push(Broken {
                        code: "gate_dropped_column",
                        rule: "/noDroppedColumns".into(),
                        message: format!(
                            "column {}.{} renamed to {} (its old name is gone)",
                            t.name, b.name, a.name
                        ),
                    });
                }
            }
        }
    }

    /// `newColumnsOnlyIn`.
    fn new_columns(&self, d: &Diff, broken: &mut Vec<Broken>) {
        if let Some(allowed) = &self.new_columns_only_in {
            for t in &d.schema.tables_changed {
                if allowed.iter().any(|(_, g)| g.matches(&t.name)) {
                    continue;
                }
                for c in &t.columns_added {
                    broken.push(Broken {
                        code: "gate_new_column",
                        rule: "/newColumnsOnlyIn".into(),
                        message: format!(
                            "column {}.{} added; new columns are allowed only in {}",
                            t.name,
                            c.name,
                            if allowed.is_empty() {
                                "no table".to_string()
                            } else {
                                allowed
                                    .iter()
                                    .map(|(n, _)| n.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            }
                        ),
                    });
                }
            }
        }
    }

    /// `maxObjectBytesChanged`.
    fn object_bytes(&self, d: &Diff, broken: &mut Vec<Broken>) {
        if let Some(max) = self.max_object_bytes_changed {
            let o = &d.objects;
            let bytes = o.added.iter().map(|x| x.size).sum::<u64>()
                + o.removed.iter().map(|x| x.size).sum::<u64>()
                + o.changed.iter().map(|(_, a)| a.size).sum::<u64>();
            if bytes > max {
                broken.push(Broken {
                    code: "gate_object_bytes",
                    rule: "/maxObjectBytesChanged".into(),
                    message: format!(
                        "{bytes} bytes of objects added, removed or changed ({} added, {} removed, {} changed), more than {max}",
                        o.added.len(),
                        o.removed.len(),
                        o.changed.len()
                    ),
                });
            }
        }
    }

    /// `requiredConfigurationUnchanged`.
    fn configuration(&self, d: &Diff, broken: &mut Vec<Broken>) {
        if self.required_configuration_unchanged
            && (d.configuration_changed || !d.configuration.is_empty())
        {
            let c = &d.configuration;
            let mut bits: Vec<String> = c.added.iter().map(|n| format!("+{n}")).collect();
            bits.extend(c.removed.iter().map(|n| format!("-{n}")));
            broken.push(Broken {
                code: "gate_configuration",
                rule: "/requiredConfigurationUnchanged".into(),
                message: if bits.is_empty() {
                    "requiredConfiguration reordered".into()
                } else {
                    format!("requiredConfiguration changed: {}", bits.join(" "))
                },
            });
        }
    }
}

/// `removed` of `before` is more than `max` percent.
fn over(removed: u64, before: u64, max: f64) -> bool {
    before > 0 && removed as f64 * 100.0 > max * before as f64
}

/// A number as people write it: `5`, `0.5`.
fn show_number(n: f64) -> String {
    let s = format!("{n:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// `removed` of `before` as a percentage: `30%`, `0.05%`, `<0.01%`.
fn show_percent(removed: u64, before: u64) -> String {
    if before == 0 {
        return "0%".into();
    }
    let p = removed as f64 * 100.0 / before as f64;
    if p > 0.0 && p < 0.01 {
        "<0.01%".into()
    } else {
        format!("{}%", show_number(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        Gate::parse(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn gate_files_are_checked_strictly() {
        assert_eq!(
            refused(r#"{"maxRemovedPercnt": 5}"#),
            "/maxRemovedPercnt: unknown member \"maxRemovedPercnt\"; a gate file has maxRemovedPercent, tables, noDroppedTables, noDroppedColumns, newColumnsOnlyIn, maxObjectBytesChanged, requiredConfigurationUnchanged"
        );
        assert_eq!(
            refused(r#"{"tables": {"a/b": {"maxRemoved": 1}}}"#),
            "/tables/a~1b/maxRemoved: unknown member \"maxRemoved\"; a tables entry has maxRemovedPercent"
        );
        assert_eq!(
            refused(r#"{"maxRemovedPercent": 101}"#),
            "/maxRemovedPercent: a percentage is 0 to 100, not 101"
        );
        assert_eq!(
            refused(r#"{"noDroppedTables": 1}"#),
            "/noDroppedTables: expected true or false, got number"
        );
        assert_eq!(
            refused(r#"{"newColumnsOnlyIn": ["a", 3]}"#),
            "/newColumnsOnlyIn/1: expected a table name or pattern (a non-empty string)"
        );
        assert_eq!(
            refused(r#"{"maxObjectBytesChanged": 1.5}"#),
            "/maxObjectBytesChanged: expected a whole number of bytes, 0 or more"
        );
        assert_eq!(refused("[]"), "a gate file is a JSON object, not array");
        assert!(refused("{").starts_with("not JSON: "));
        let g = Gate::parse(br#"{"tables": {"*": {"maxRemovedPercent": 5}, "audit": {"maxRemovedPercent": 100}}, "noDroppedTables": false}"#).unwrap();
        assert_eq!(
            g.rules(),
            [
                "/tables/*/maxRemovedPercent",
                "/tables/audit/maxRemovedPercent"
            ]
        );
        // An exact name replaces the patterns for its table.
        assert_eq!(g.entries_for("AUDIT").len(), 1);
        assert_eq!(g.entries_for("AUDIT")[0].pattern, "audit");
        assert_eq!(g.entries_for("users")[0].pattern, "*");
    }

    #[test]
    fn checks_on_a_diff() {
        use crate::model::{TableCount, TableDiff};
        let mut d = Diff::default();
        for (name, before, removed) in [("audit", 10, 9), ("users", 100, 6)] {
            d.counts.push(TableCount {
                name: name.into(),
                before: Some(before),
                after: Some(before - removed),
            });
            d.tables.push(TableDiff {
                name: name.into(),
                removed: (0..removed).map(|k| k.to_string()).collect(),
                ..TableDiff::default()
            });
        }
        d.configuration_changed = true;
        let g = Gate::parse(
            br#"{"tables": {"*": {"maxRemovedPercent": 5}, "Audit": {"maxRemovedPercent": 90}},
                 "maxRemovedPercent": 13.5, "requiredConfigurationUnchanged": true}"#,
        )
        .unwrap();
        let r = g.check(&d);
        let got: Vec<(&str, &str, &str)> = r
            .broken
            .iter()
            .map(|b| (b.code, b.rule.as_str(), b.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "gate_removed_rows",
                    "/maxRemovedPercent",
                    "15 of 110 rows removed (13.64%), more than 13.5%"
                ),
                (
                    "gate_removed_rows",
                    "/tables/*/maxRemovedPercent",
                    "table users: 6 of 100 rows removed (6%), more than 5%"
                ),
                (
                    "gate_configuration",
                    "/requiredConfigurationUnchanged",
                    "requiredConfiguration reordered"
                ),
            ]
        );
        assert!(!r.passed());
        assert!(Gate::parse(b"{}").unwrap().check(&d).passed());
    }

    #[test]
    fn percentages() {
        assert!(over(6, 100, 5.0) && !over(5, 100, 5.0) && !over(0, 0, 0.0));
        assert!(over(1, 100, 0.0));
        assert_eq!(show_percent(1, 3), "33.33%");
        assert_eq!(show_percent(1, 100_000), "<0.01%");
        assert_eq!(show_number(5.0), "5");
        assert_eq!(show_number(0.5), "0.5");
    }
}
