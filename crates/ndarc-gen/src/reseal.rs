//! Recomputing the derived members of a hand-edited archive.
//!
//! Like the mutators, reseal writes manifests, and on purpose ones the
//! intake refuses (a mutator turns one rule off): it edits the line's tree
//! member by member rather than reading it through `ndarc_format::manifest`,
//! whose typed and written views hold what the line means, not its bytes.

use std::collections::HashMap;

use ndarc_format::catalogue::{content_header_digest, schema_identity};
use ndarc_format::hash::sha256;
use ndarc_format::{ArchiveHasher, ContentHasher};
use ndarc_json::{Object, Value};

use crate::error::{lines, parse_line, Error};

/// What [`reseal_with`] recomputes. [`Default`] (and [`reseal`]) recompute
/// everything; a mutator that breaks one of these rules on purpose turns
/// that one off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResealOptions {
    /// Rewrite every line in canonical form. When off, a line is rewritten
    /// only when one of its members is recomputed to a new value, and other
    /// lines keep their bytes (and the hashes cover those bytes).
    pub canonical: bool,
    /// Set each table's `count` to the number of its row items.
    pub counts: bool,
    /// Set `schema` to the identity of `tables`' names and SQL.
    pub schema: bool,
    /// Set `partCount` in the manifest and the closing line to the number of
    /// lines between them.
    pub part_count: bool,
    /// Set the closing `contentHash` and `archiveHash`.
    pub hashes: bool,
}

impl Default for ResealOptions {
    fn default() -> Self {
        ResealOptions {
            canonical: true,
            counts: true,
            schema: true,
            part_count: true,
            hashes: true,
        }
    }
}

/// [`reseal_with`] with every recomputation on.
pub fn reseal(input: &[u8]) -> Result<Vec<u8>, Error> {
    reseal_with(input, ResealOptions::default())
}

fn is_kind(v: &Value<'_>, kind: &str) -> bool {
    v.get("kind").and_then(Value::as_str) == Some(kind)
}

/// Recomputes what is derived from an archive's content, so that a
/// hand-edited archive breaks only the rule it was edited to break.
///
/// The input is an archive's bytes; every line must parse as JSON (strict
/// profile), the first is taken as the manifest and the last, when its
/// `kind` is `"closing"`, as the closing line; the lines between are the
/// parts, whatever they hold. Depending on `opts` it rewrites lines in
/// canonical form, sets each table's `count` from its row items (items with
/// `kind` `"row"` and that `table`), `schema` from `tables`, `partCount`
/// (manifest and closing) to the number of part lines, and the closing
/// `contentHash` and `archiveHash` (SPEC §7, over the lines as written).
/// Nothing else is touched: not indexes, object sizes, `sha256`, the
/// framing (a missing final LF stays missing; a missing closing line is not
/// added).
///
/// The whole archive is parsed into memory: meant for test archives.
pub fn reseal_with(input: &[u8], opts: ResealOptions) -> Result<Vec<u8>, Error> {
    let (raw, trailing_lf) = lines(input);
    if raw.is_empty() {
        return Err(Error::archive(0, "the archive is empty"));
    }
    let values = raw
        .iter()
        .enumerate()
        .map(|(n, l)| parse_line(l, n))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(Value::Object(original)) = values.first() else {
        return Err(Error::archive(1, "the first line is not an object"));
    };
    let closing_at = (values.len() > 1 && is_kind(&values[values.len() - 1], "closing"))
        .then_some(values.len() - 1);
    let parts = &values[1..closing_at.unwrap_or(values.len())];

    // Row items in archive order.
    let rows: Vec<&Object<'_>> = parts
        .iter()
        .filter_map(|p| p.get("items").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_object)
        .filter(|item| item.get("kind").and_then(Value::as_str) == Some("row"))
        .collect();

    let mut manifest = original.clone();
    if opts.counts {
        let mut counts: HashMap<&str, i64> = HashMap::new();
        for item in &rows {
            if let Some(t) = item.get("table").and_then(Value::as_str) {
                *counts.entry(t).or_default() += 1;
            }
        }
        if let Some(Value::Array(tables)) = manifest.get_mut("tables") {
            for t in tables.iter_mut() {
                if let Value::Object(t) = t {
                    if let Some(name) = t.get("name").and_then(Value::as_str) {
                        let n = counts.get(name).copied().unwrap_or(0);
                        t.insert("count", Value::from(n));
                    }
                }
            }
        }
    }
    if opts.schema {
        let pairs: Option<Vec<(&str, &str)>> = original
            .get("tables")
            .and_then(Value::as_array)
            .and_then(|tables| {
                tables
                    .iter()
                    .map(|t| Some((t.get("name")?.as_str()?, t.get("sql")?.as_str()?)))
                    .collect()
            });
        if let Some(pairs) = pairs {
            let id = schema_identity(pairs.into_iter());
            manifest.insert("schema", Value::from(id));
        }
    }
    if opts.part_count {
        manifest.insert("partCount", Value::from(parts.len() as i64));
    }

    let line_out = |n: usize, old: &Value<'_>, new: Option<&Value<'_>>| -> Vec<u8> {
        match new {
            Some(new) if new != old || opts.canonical => ndarc_json::to_canonical_vec(new),
            None if opts.canonical => ndarc_json::to_canonical_vec(old),
            _ => raw[n].to_vec(),
        }
    };
    let manifest_value = Value::Object(manifest);
    let mut out_lines: Vec<Vec<u8>> = Vec::with_capacity(raw.len());
    out_lines.push(line_out(0, &values[0], Some(&manifest_value)));
    for (i, p) in parts.iter().enumerate() {
        out_lines.push(line_out(i + 1, p, None));
    }

    if let Some(at) = closing_at {
        let mut closing = values[at].as_object().cloned().unwrap_or_default();
        if opts.part_count {
            closing.insert("partCount", Value::from(parts.len() as i64));
        }
        if opts.hashes {
            let mut archive = ArchiveHasher::new();
            for l in &out_lines {
                archive.add_line(l);
            }
            let header = match &manifest_value {
                Value::Object(m) => content_header_digest(m),
                _ => sha256(b"{}"),
            };
            let mut content = ContentHasher::new(&header);
            for item in &rows {
                let mut r = Object::new();
                for member in ["row", "rowid", "table"] {
                    if let Some(v) = item.get(member) {
                        r.insert(member, v.clone());
                    }
                }
                content.add_row_digest(&sha256(&ndarc_json::to_canonical_vec(&Value::Object(r))));
            }
            closing.insert("contentHash", Value::from(content.finish()));
            closing.insert("archiveHash", Value::from(archive.finish()));
        }
        out_lines.push(line_out(at, &values[at], Some(&Value::Object(closing))));
    }

    let mut out = Vec::with_capacity(input.len() + 64);
    for (i, l) in out_lines.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(l);
    }
    if trailing_lf {
        out.push(b'\n');
    }
    Ok(out)
}
