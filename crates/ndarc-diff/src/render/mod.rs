//! Writing a [`Diff`] for people and tools.
//!
//! - [`human`]: per table a summary line, then the changes; changed cells
//!   as `column: before → after`, long text as an inline word diff;
//!   optional ANSI colour.
//! - [`json()`]: one JSON document, a superset of `diffArchives`' result.
//! - [`markdown`]: a summary table and `<details>` sections, for CI job
//!   summaries and pull-request comments.
//! - [`github()`]: GitHub Actions annotations (`::error` per broken gate
//!   rule, `::warning` per change, a closing `::notice`).
//! - [`stat`]: counts per table and column, also as JSON
//!   ([`json_stat`]), Markdown ([`markdown_stat`]) and SQL comments
//!   ([`stat_sql`]).

mod github;
mod human;
pub mod json;
mod markdown;
mod stat;
mod value;

use std::io::{self, Write};

use ndarc_json::Value;

use crate::Diff;

pub use github::{github, github_escape};
pub use human::human;
pub use markdown::{markdown, markdown_stat, MIN_MARKDOWN_BYTES};
use stat::stat_json_value;
pub use stat::{stat, stat_sql, stat_value};

/// How text output is written.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Use ANSI colour (the caller decides: a terminal, no `NO_COLOR`).
    pub colour: bool,
    /// Rows shown per table and kind (added, removed, changed) before
    /// "… and N more"; `None` shows all. The contents of the added and
    /// removed rows shown are written when the diff kept them.
    pub max_rows: Option<usize>,
    /// Write the contents of every added and removed row the diff kept
    /// (`--full-rows`), not only their keys.
    pub full_rows: bool,
    /// `--format markdown` at most this many bytes (at least
    /// [`MIN_MARKDOWN_BYTES`]): the heading and counts in full, then row
    /// and section detail until the next piece would not fit, and a line
    /// saying what was cut; `None` (the default) writes everything.
    pub max_bytes: Option<usize>,
}

impl RenderOptions {
    /// Whether added and removed rows are shown with their contents.
    pub(crate) fn contents(&self) -> bool {
        self.full_rows || self.max_rows.is_some()
    }
}

/// Writes the JSON document (indented, members in canonical order) and a
/// final newline.
pub fn json(d: &Diff, out: &mut dyn Write) -> io::Result<()> {
    let mut buf = Vec::new();
    json::write_pretty(&json::value(d), &mut buf);
    out.write_all(&buf)
}

/// `--stat --format json`: `{equal, product, differences, stat}`,
/// indented as [`json()`] writes.
pub fn json_stat(d: &Diff, out: &mut dyn Write) -> io::Result<()> {
    let mut buf = Vec::new();
    json::write_pretty(&stat_json_value(d), &mut buf);
    out.write_all(&buf)
}

/// Text longer than this many characters is shown as a word diff.
pub(crate) const LONG_TEXT: usize = 80;

/// A cell value for people: canonical JSON, except blobs, shown as an SQL
/// blob literal (`x'89504e47'`, cut after 16 bytes with the size).
pub(crate) fn show_value(v: &Value<'_>) -> String {
    if let Value::Object(o) = v {
        if o.len() == 1 {
            if let Some(b) = o
                .get("blob")
                .and_then(Value::as_str)
                .and_then(ndarc_format::catalogue::decode_base64)
            {
                let hex: String = b.iter().take(16).map(|x| format!("{x:02x}")).collect();
                return if b.len() > 16 {
                    format!("x'{hex}…' ({} bytes)", b.len())
                } else {
                    format!("x'{hex}'")
                };
            }
        }
    }
    ndarc_json::to_canonical_string(v)
}

/// One piece of a word diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Same(String),
    Removed(String),
    Added(String),
}

/// The word diff of two long texts (unchanged runs longer than 60
/// characters shortened to their ends around `…`), or `None` when either
/// value is not a string or both are short.
pub(crate) fn word_diff(before: &Value<'_>, after: &Value<'_>) -> Option<Vec<Piece>> {
    let (a, b) = (before.as_str()?, after.as_str()?);
    if a.chars().count() <= LONG_TEXT && b.chars().count() <= LONG_TEXT {
        return None;
    }
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_words(a, b);
    let mut pieces: Vec<Piece> = Vec::new();
    for c in diff.iter_all_changes() {
        let text = c.value().to_string();
        let last = pieces.last_mut();
        match (c.tag(), last) {
            (similar::ChangeTag::Equal, Some(Piece::Same(s))) => s.push_str(&text),
            (similar::ChangeTag::Delete, Some(Piece::Removed(s))) => s.push_str(&text),
            (similar::ChangeTag::Insert, Some(Piece::Added(s))) => s.push_str(&text),
            (similar::ChangeTag::Equal, _) => pieces.push(Piece::Same(text)),
            (similar::ChangeTag::Delete, _) => pieces.push(Piece::Removed(text)),
            (similar::ChangeTag::Insert, _) => pieces.push(Piece::Added(text)),
        }
    }
    let n = pieces.len();
    for (i, p) in pieces.iter_mut().enumerate() {
        if let Piece::Same(s) = p {
            let chars: Vec<char> = s.chars().collect();
            if chars.len() > 60 {
                // Keep up to 25 characters each side, cut at a space.
                let head: String = if i == 0 {
                    String::new()
                } else {
                    let h: String = chars[..25].iter().collect();
                    match h.rfind(' ') {
                        Some(at) if at > 0 => h[..=at].to_string(),
                        _ => h,
                    }
                };
                let tail: String = if i + 1 == n {
                    String::new()
                } else {
                    let t: String = chars[chars.len() - 25..].iter().collect();
                    match t.find(' ') {
                        Some(at) if at + 1 < t.len() => t[at..].to_string(),
                        _ => t,
                    }
                };
                *s = format!("{head}…{tail}");
            }
        }
    }
    Some(pieces)
}

/// `s` with control characters (C0, DEL, C1: what could move a terminal's
/// cursor or start an escape sequence) written as `\u{…}` escapes;
/// `keep_esc` keeps ESC, for lines whose colour codes were added here.
pub(crate) fn safe(s: &str, keep_esc: bool) -> std::borrow::Cow<'_, str> {
    if !s
        .chars()
        .any(|c| ndarc_format::display::is_unsafe_char(c) && !(keep_esc && c == '\x1b'))
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\x1b' if keep_esc => o.push(c),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            // Bidirectional controls too: they reorder what is around them.
            c if ndarc_format::display::is_unsafe_char(c) => {
                o.push_str(&format!("\\u{{{:x}}}", u32::from(c)))
            }
            c => o.push(c),
        }
    }
    std::borrow::Cow::Owned(o)
}

/// Terminal columns `s` takes, roughly (East Asian wide characters and
/// emoji 2, combining marks and zero-width characters 0, others 1), for
/// aligning `--stat`.
pub(crate) fn width(s: &str) -> usize {
    s.chars()
        .map(|c| match u32::from(c) {
            0x0300..=0x036F | 0x200B..=0x200F | 0x20D0..=0x20FF | 0xFE00..=0xFE0F => 0,
            0x1100..=0x115F
            | 0x2E80..=0xA4CF
            | 0xAC00..=0xD7A3
            | 0xF900..=0xFAFF
            | 0xFE30..=0xFE4F
            | 0xFF00..=0xFF60
            | 0xFFE0..=0xFFE6
            | 0x1F300..=0x1FAFF
            | 0x20000..=0x3FFFD => 2,
            _ => 1,
        })
        .sum()
}

/// A count with its noun, `1 row` / `2 rows`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Why the contentHashes of unverified inputs can differ with nothing else
/// found: an order is only one of the causes, as the closing's hash and the
/// manifest's counts were not checked against the lines.
const UNVERIFIED_HASHES: &str = "not verified: rows in a different order, or a manifest count or closing hash that does not match the lines";

/// What was ignored, for people: `tables audit_* (matched: audit_log);
/// objects files/tmp/* (matched: none)`, one part per kind of pattern
/// given (`--table` patterns as `all but PATTERN`), `fmt` writing each
/// list of patterns or names.
pub(crate) fn ignored_text(d: &Diff, fmt: &dyn Fn(&str) -> String) -> String {
    let i = &d.ignored;
    let mut tables = Vec::new();
    if !i.table_patterns.is_empty() {
        tables.push(fmt(&i.table_patterns.join(", ")));
    }
    if !i.only_table_patterns.is_empty() {
        tables.push(format!(
            "all but {}",
            fmt(&i.only_table_patterns.join(", "))
        ));
    }
    let tables = tables.join(", ");
    let mut bits = Vec::new();
    for (what, patterns, matched) in [
        ("tables", tables, &i.tables),
        ("columns", fmt(&i.column_patterns.join(", ")), &i.columns),
        ("objects", fmt(&i.object_patterns.join(", ")), &i.objects),
        ("payloads", fmt(&i.payload_patterns.join(", ")), &i.payloads),
    ] {
        let given = match what {
            "tables" => !patterns.is_empty(),
            "columns" => !i.column_patterns.is_empty(),
            "objects" => !i.object_patterns.is_empty(),
            _ => !i.payload_patterns.is_empty(),
        };
        if !given {
            continue;
        }
        bits.push(format!(
            "{what} {patterns} (matched: {})",
            if matched.is_empty() {
                "none".to_string()
            } else {
                fmt(&matched.join(", "))
            }
        ));
    }
    if !i.keys.is_empty() {
        bits.push(format!("rows matched by {}", fmt(&i.keys.join(", "))));
    }
    bits.join("; ")
}

/// The one-line summary of a diff.
pub(crate) fn summary(d: &Diff) -> String {
    if !d.has_differences() {
        return if d.equal {
            "no differences: the contentHashes are equal".into()
        } else if d.order_only && !d.verified {
            format!("no differences found, though the contentHashes differ ({UNVERIFIED_HASHES})")
        } else if d.order_only {
            "no differences found, though the contentHashes differ (ignored changes, or the same rows in another order)".into()
        } else {
            "no differences outside what was ignored".into()
        };
    }
    let mut parts = Vec::new();
    let (a, r, c) = d.row_totals();
    if !d.tables.is_empty() {
        parts.push(format!(
            "{} with row changes ({} added, {} removed, {} changed)",
            count(d.tables.len(), "table", "tables"),
            a,
            r,
            c
        ));
    }
    let s = &d.schema;
    if s.has_changes() {
        let mut bits = Vec::new();
        if !s.tables_added.is_empty() {
            bits.push(format!(
                "{} added",
                count(s.tables_added.len(), "table", "tables")
            ));
        }
        if !s.tables_removed.is_empty() {
            bits.push(format!(
                "{} removed",
                count(s.tables_removed.len(), "table", "tables")
            ));
        }
        if !s.tables_changed.is_empty() {
            bits.push(format!(
                "{} changed",
                count(s.tables_changed.len(), "table", "tables")
            ));
        }
        parts.push(format!("schema: {}", bits.join(", ")));
    }
    for (what, e) in entry_counts(d) {
        if e != (0, 0, 0) {
            parts.push(format!(
                "{what}: {} added, {} removed, {} changed",
                e.0, e.1, e.2
            ));
        }
    }
    if d.configuration_changed || !d.configuration.is_empty() {
        parts.push("requiredConfiguration changed".into());
    }
    if !d.excluded_tables.is_empty() || !d.excluded_columns.is_empty() {
        parts.push("exclusions changed".into());
    }
    if d.before.product != d.after.product {
        parts.push("product changed".into());
    }
    if d.order_only && !d.verified {
        parts.push(format!("the contentHashes differ ({UNVERIFIED_HASHES})"));
    } else if d.order_only {
        parts.push("the same rows in another order (contentHashes differ)".into());
    }
    parts.join("; ")
}

/// Objects and payloads: added, removed and changed, by name.
pub(crate) fn entry_counts(d: &Diff) -> [(&'static str, (usize, usize, usize)); 2] {
    let o = &d.objects;
    let p = &d.payloads;
    [
        ("objects", (o.added.len(), o.removed.len(), o.changed.len())),
        (
            "payloads",
            (p.added.len(), p.removed.len(), p.changed.len()),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_word_diffs() {
        let v = ndarc_json::parse(br#"{"blob":"iVBORw=="}"#).unwrap();
        assert_eq!(show_value(&v), "x'89504e47'");
        let long = ndarc_json::parse(br#"{"blob":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#)
            .unwrap();
        assert!(show_value(&long).ends_with("(33 bytes)"));
        assert_eq!(show_value(&Value::from("a\"b")), r#""a\"b""#);
        let a = Value::from(
            "the quick brown fox jumps over the lazy dog and keeps running far away into the hills",
        );
        let b = Value::from(
            "the quick red fox jumps over the lazy dog and keeps running far away into the hills",
        );
        let w = word_diff(&a, &b).unwrap();
        assert!(w.contains(&Piece::Removed("brown".into())), "{w:?}");
        assert!(w.contains(&Piece::Added("red".into())), "{w:?}");
        assert!(word_diff(&Value::from("a"), &Value::from("b")).is_none());
        assert!(word_diff(&a, &Value::Null).is_none());
        assert_eq!(safe("a\x1b[2Jb\n", false), "a\\u{1b}[2Jb\\n");
        assert_eq!(safe("\x1b[1mx\u{9b}", true), "\x1b[1mx\\u{9b}");
        assert_eq!(safe("plain é", false), "plain é");
        // Bidirectional controls from archive text are escaped too.
        assert_eq!(safe("a\u{202e}b\u{2067}", false), "a\\u{202e}b\\u{2067}");
        assert_eq!(width("名前_😀"), 7);
        assert_eq!(width("e\u{301}"), 1);
    }
}
