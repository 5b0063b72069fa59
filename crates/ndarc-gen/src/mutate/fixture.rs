//! Fixtures of the conformance corpus (`testdata/invalid`): an archive made
//! from the corpus's base archive (`testdata/valid/base.ndjson`) with one
//! rule broken, and its sidecar (the contract is in `testdata/README.md`).
//!
//! Unlike a [`Mutant`](super::Mutant), whose targets are drawn from a seed,
//! a fixture's edit is fixed, so that the committed file is what a person
//! reads in its note. A group of rules declares its fixtures next to its
//! mutations (the `fixtures` functions of its module): SPEC.md §2 and §3 as
//! byte edits of the base archive's lines, the others as [`Case`]s: edits
//! of its records ([`Recs`]), sealed the way the corpus seals
//! (`Archive.render` in `scripts/make-corpus.py`).
//! Fixtures edit manifests as trees, member by member: they write what the
//! manifest intake refuses, so they cannot go through it.
//! `scripts/make-corpus.py --check` builds them a second time, in Python,
//! and compares.

use ndarc_format::catalogue::{decode_base64, encode_base64, CONTENT_HEADER_MEMBERS};
use ndarc_format::framing::RawLines;
use ndarc_format::hash::{hex, sha256, ArchiveHasher, ContentHasher};
use ndarc_format::Code;

use std::borrow::Cow;

use ndarc_json::{Object, Value};

use super::edit::{R, V};

/// One fixture: `NAME.ndjson` and its sidecar `NAME.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// `<code>` or `<code>-<variant>`.
    pub name: &'static str,
    /// The archive's bytes.
    pub archive: Vec<u8>,
    /// The sidecar's bytes: JSON, members sorted, indented by two spaces.
    pub sidecar: Vec<u8>,
}

/// Where a fixture's finding is, for the sidecar's `offset`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Offset {
    /// Not stated.
    None,
    /// This byte.
    At(u64),
    /// The end of the file.
    Eof,
    /// The first byte of the value the sidecar's `pointer` names in its
    /// line.
    Pointer,
}

/// A sidecar, before it is written.
#[derive(Debug, Clone)]
pub(super) struct Expect {
    pub(super) code: Code,
    pub(super) line: u64,
    pub(super) offset: Offset,
    pub(super) pointer: Option<&'static str>,
    pub(super) also: &'static [&'static str],
    pub(super) allow: &'static [&'static str],
    pub(super) options: Vec<(&'static str, V)>,
    pub(super) note: Option<&'static str>,
}

impl Expect {
    /// `code` at `line`, nothing else stated.
    pub(super) fn new(code: Code, line: u64) -> Self {
        Expect {
            code,
            line,
            offset: Offset::None,
            pointer: None,
            also: &[],
            allow: &[],
            options: Vec::new(),
            note: None,
        }
    }

    pub(super) fn offset(mut self, o: Offset) -> Self {
        self.offset = o;
        self
    }

    pub(super) fn pointer(mut self, p: &'static str) -> Self {
        self.pointer = Some(p);
        self.offset = Offset::Pointer;
        self
    }

    pub(super) fn also(mut self, codes: &'static [&'static str]) -> Self {
        self.also = codes;
        self
    }

    pub(super) fn allow(mut self, codes: &'static [&'static str]) -> Self {
        self.allow = codes;
        self
    }

    pub(super) fn option(self, name: &'static str, value: u64) -> Self {
        self.option_value(name, Value::from(value as i64))
    }

    pub(super) fn option_value(mut self, name: &'static str, value: V) -> Self {
        self.options.push((name, value));
        self
    }

    pub(super) fn note(mut self, note: &'static str) -> Self {
        self.note = Some(note);
        self
    }

    /// The fixture: `archive` and this sidecar.
    pub(super) fn fixture(self, name: &'static str, archive: Vec<u8>) -> R<Fixture> {
        let ok = name == self.code.as_str()
            || name
                .strip_prefix(self.code.as_str())
                .is_some_and(|v| v.starts_with('-'));
        if !ok {
            return Err(format!("{name}: not named after its code {}", self.code));
        }
        let offset = match self.offset {
            Offset::None => None,
            Offset::At(o) => Some(o),
            Offset::Eof => Some(archive.len() as u64),
            Offset::Pointer => {
                let lines = line_table(&archive);
                let p = self.pointer.unwrap_or("");
                usize::try_from(self.line)
                    .ok()
                    .and_then(|n| lines.get(n.checked_sub(1)?))
                    .and_then(|(start, raw)| {
                        ndarc_json::locate(raw, p).map(|rel| start + rel as u64)
                    })
            }
        };
        let mut side = Object::new();
        side.insert("code", Value::from(self.code.as_str()));
        side.insert("line", Value::from(self.line as i64));
        if let Some(o) = offset {
            side.insert("offset", Value::from(o as i64));
        }
        if let Some(p) = self.pointer {
            side.insert("pointer", Value::from(p));
        }
        let list =
            |codes: &[&'static str]| Value::Array(codes.iter().map(|c| Value::from(*c)).collect());
        if !self.also.is_empty() {
            side.insert("also", list(self.also));
        }
        if !self.allow.is_empty() {
            side.insert("allow", list(self.allow));
        }
        if !self.options.is_empty() {
            side.insert(
                "options",
                Value::Object(Object::from_members(
                    self.options
                        .into_iter()
                        .map(|(k, v)| (Cow::Borrowed(k), v))
                        .collect(),
                )),
            );
        }
        if let Some(n) = self.note {
            side.insert("note", Value::from(n));
        }
        let mut sidecar = String::new();
        pretty(&Value::Object(side), 0, &mut sidecar);
        sidecar.push('\n');
        let sidecar = sidecar.into_bytes();
        Ok(Fixture {
            name,
            archive,
            sidecar,
        })
    }
}

/// `v` as the corpus's sidecars write JSON (Python's `json.dumps` with
/// `indent=2, sort_keys=True, ensure_ascii=False`), indented by `depth`
/// levels.
fn pretty(v: &V, depth: usize, out: &mut String) {
    let pad = |d: usize| "  ".repeat(d);
    match v {
        Value::Array(a) if !a.is_empty() => {
            out.push_str("[\n");
            for (i, x) in a.iter().enumerate() {
                out.push_str(if i > 0 { ",\n" } else { "" });
                out.push_str(&pad(depth + 1));
                pretty(x, depth + 1, out);
            }
            out.push('\n');
            out.push_str(&pad(depth));
            out.push(']');
        }
        Value::Object(o) if !o.is_empty() => {
            let mut members: Vec<(&str, &V)> = o.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push_str("{\n");
            for (i, (k, x)) in members.into_iter().enumerate() {
                out.push_str(if i > 0 { ",\n" } else { "" });
                out.push_str(&pad(depth + 1));
                out.push_str(&json_string(k));
                out.push_str(": ");
                pretty(x, depth + 1, out);
            }
            out.push('\n');
            out.push_str(&pad(depth));
            out.push('}');
        }
        Value::String(s) => out.push_str(&json_string(s)),
        other => out.push_str(&ndarc_json::to_canonical_string(other)),
    }
}

/// A JSON string as the corpus's sidecars write it (Python's `json.dumps`
/// with `ensure_ascii=False`: non-ASCII as is, control characters escaped).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// (offset, bytes without LF or a CR before it) of each LF-separated line,
/// as a verifier frames them.
fn line_table(data: &[u8]) -> Vec<(u64, &[u8])> {
    RawLines::new(data)
        .map(|l| {
            (
                l.offset as u64,
                l.bytes.strip_suffix(b"\r").unwrap_or(l.bytes),
            )
        })
        .collect()
}

/// The base archive's lines, without LF: the manifest, the parts, the
/// closing.
#[derive(Debug, Clone)]
pub(super) struct Base {
    pub(super) lines: Vec<Vec<u8>>,
}

impl Base {
    pub(super) fn new(bytes: &[u8]) -> R<Base> {
        if !bytes.ends_with(b"\n") {
            return Err("the base archive does not end with LF".into());
        }
        let lines: Vec<Vec<u8>> = RawLines::new(bytes).map(|l| l.bytes.to_vec()).collect();
        if lines.len() < 3 {
            return Err("the base archive has no parts".into());
        }
        Ok(Base { lines })
    }

    /// Index of the closing line.
    pub(super) fn closing(&self) -> usize {
        self.lines.len() - 1
    }
}

/// Each line followed by LF.
pub(super) fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

/// Sets the closing line's (the last line's) `archiveHash` to the hash of
/// the lines before it as they are (SPEC.md §7: over the raw bytes).
pub(super) fn rehash(lines: &mut [Vec<u8>]) -> R<()> {
    let (closing, rest) = lines.split_last_mut().ok_or("no lines")?;
    let h = archive_hash(rest);
    let key = b"\"archiveHash\":\"";
    let at = closing
        .windows(key.len())
        .position(|w| w == key)
        .ok_or("the closing line has no archiveHash")?
        + key.len();
    if closing.len() < at + 64 {
        return Err("the closing line's archiveHash is cut".into());
    }
    closing[at..at + 64].copy_from_slice(h.as_bytes());
    Ok(())
}

/// `line` with the first `old` replaced by `new`.
pub(super) fn replace(line: &[u8], old: &[u8], new: &[u8]) -> R<Vec<u8>> {
    let at = line
        .windows(old.len())
        .position(|w| w == old)
        .ok_or_else(|| format!("{:?} not found", String::from_utf8_lossy(old)))?;
    let mut out = line[..at].to_vec();
    out.extend_from_slice(new);
    out.extend_from_slice(&line[at + old.len()..]);
    Ok(out)
}

// ------------------------------------------- records, sealed as the corpus

/// Line indexes (line number − 1) of the base archive: the manifest, the
/// rows of `notes` and `users`, `greeting.txt`, the two chunks of
/// `logo.bin`, the payloads `kv cache` and `kv`.
pub(super) const M: usize = 0;
pub(super) const NOTES: usize = 1;
pub(super) const USERS: usize = 2;
pub(super) const GREET: usize = 3;
pub(super) const LOGO0: usize = 4;
pub(super) const LOGO1: usize = 5;
pub(super) const KVC: usize = 6;
pub(super) const KV: usize = 7;
/// The line number of the base archive's closing.
pub(super) const CLOSING: u64 = 9;

/// An archive as records, edited and then sealed the way the corpus's
/// base archive is (`Archive.render` of `scripts/make-corpus.py`: `schema`,
/// counts, `partCount`, then a new closing line with both hashes).
#[derive(Debug, Clone)]
pub(super) struct Recs {
    pub(super) manifest: V,
    pub(super) parts: Vec<V>,
}

/// What [`Recs::seal`] recomputes (all of it unless a fixture breaks one on
/// purpose).
#[derive(Debug, Clone, Copy)]
pub(super) struct Seal {
    pub(super) schema: bool,
    pub(super) counts: bool,
    pub(super) part_count: bool,
}

/// `text` (JSON) as a value.
pub(super) fn j(text: &str) -> R<V> {
    ndarc_json::parse(text.as_bytes())
        .map(Value::into_owned)
        .map_err(|e| format!("{text}: {e}"))
}

fn tokens(ptr: &str) -> impl Iterator<Item = String> + '_ {
    ptr.split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
}

fn index(t: &str, len: usize) -> R<usize> {
    t.parse::<usize>()
        .ok()
        .filter(|&i| i < len)
        .ok_or_else(|| format!("no element {t}"))
}

fn sha_hex(bytes: &[u8]) -> String {
    hex(&sha256(bytes))
}

/// `archiveHash` of `lines` as they are (ndarc-format's construction).
fn archive_hash(lines: &[Vec<u8>]) -> String {
    let mut h = ArchiveHasher::new();
    for l in lines {
        h.add_line(l);
    }
    h.finish()
}

impl Recs {
    /// The base archive's records (without its closing line).
    pub(super) fn new(base: &Base) -> R<Recs> {
        let mut v = base.lines[..base.closing()].iter().map(|l| {
            ndarc_json::parse(l)
                .map(Value::into_owned)
                .map_err(|e| format!("the base archive: {e}"))
        });
        let manifest = v.next().ok_or("no manifest")??;
        Ok(Recs {
            manifest,
            parts: v.collect::<R<_>>()?,
        })
    }

    /// Line `k` (0-based: 0 is the manifest).
    pub(super) fn line(&mut self, k: usize) -> R<&mut V> {
        match k {
            0 => Ok(&mut self.manifest),
            _ => self
                .parts
                .get_mut(k - 1)
                .ok_or_else(|| format!("no line {k}")),
        }
    }

    /// The value `ptr` (RFC 6901) names in line `k`.
    pub(super) fn at(&mut self, k: usize, ptr: &str) -> R<&mut V> {
        let mut v = self.line(k)?;
        for t in tokens(ptr) {
            v = match v {
                Value::Object(o) => o.get_mut(&t).ok_or_else(|| format!("no member {t}"))?,
                Value::Array(a) => {
                    let i = index(&t, a.len())?;
                    &mut a[i]
                }
                _ => return Err(format!("{ptr}: {t} is inside a scalar")),
            };
        }
        Ok(v)
    }

    fn parent(&mut self, k: usize, ptr: &str) -> R<(&mut V, String)> {
        let (parent, last) = ptr.rsplit_once('/').ok_or("an empty pointer")?;
        let last = tokens(&format!("/{last}")).next().unwrap_or_default();
        Ok((self.at(k, parent)?, last))
    }

    /// Sets (or adds) the value `ptr` names in line `k`; `-` appends to an
    /// array.
    pub(super) fn set(&mut self, k: usize, ptr: &str, value: V) -> R<()> {
        match self.parent(k, ptr)? {
            (Value::Object(o), last) => o.insert(last, value),
            (Value::Array(a), last) if last == "-" => a.push(value),
            (Value::Array(a), last) => {
                let i = index(&last, a.len())?;
                a[i] = value;
            }
            _ => return Err(format!("{ptr}: not in an object or array")),
        }
        Ok(())
    }

    /// Removes the value `ptr` names in line `k`.
    pub(super) fn del(&mut self, k: usize, ptr: &str) -> R<V> {
        match self.parent(k, ptr)? {
            (Value::Object(o), last) => o.remove(&last).ok_or_else(|| format!("no {ptr}")),
            (Value::Array(a), last) => {
                let i = index(&last, a.len())?;
                Ok(a.remove(i))
            }
            _ => Err(format!("{ptr}: not in an object or array")),
        }
    }

    /// Sets `ptr` (relative to each item) to `value` in every item of line
    /// `k`.
    pub(super) fn each(&mut self, k: usize, ptr: &str, value: &V) -> R<()> {
        let n = self.at(k, "/items")?.as_array().map_or(0, <[V]>::len);
        for i in 0..n {
            self.set(k, &format!("/items/{i}{ptr}"), value.clone())?;
        }
        Ok(())
    }

    /// Removes `ptr` (relative to each item) from every item of line `k`
    /// from item `from` on.
    pub(super) fn each_del(&mut self, k: usize, from: usize, ptr: &str) -> R<()> {
        let n = self.at(k, "/items")?.as_array().map_or(0, <[V]>::len);
        for i in from..n {
            self.del(k, &format!("/items/{i}{ptr}"))?;
        }
        Ok(())
    }

    /// Sets each part's `index` to its position.
    pub(super) fn renumber(&mut self) {
        for (i, p) in self.parts.iter_mut().enumerate() {
            if let Value::Object(o) = p {
                o.insert("index", Value::from(i as i64));
            }
        }
    }

    /// Cuts the part of line `k` after its first `at` items: the rest go to
    /// a new part after it, and the parts are renumbered.
    pub(super) fn split(&mut self, k: usize, at: usize) -> R<()> {
        let Value::Array(items) = self.at(k, "/items")? else {
            return Err(format!("line {k} has no items"));
        };
        if at > items.len() {
            return Err(format!("line {k} has fewer than {at} items"));
        }
        let rest = items.split_off(at);
        self.parts.insert(k, part(Value::Array(rest)));
        self.renumber();
        Ok(())
    }

    /// Cuts the binary whose chunks are the `n` parts from line `k` into
    /// chunks of `sizes` bytes, one part each.
    pub(super) fn rechunk(&mut self, k: usize, n: usize, sizes: &[usize]) -> R<()> {
        let old: Vec<V> = self.parts.splice(k - 1..k - 1 + n, []).collect();
        let mut bytes = Vec::new();
        for p in &old {
            let data = p
                .get("items")
                .and_then(Value::as_array)
                .and_then(|i| i.first());
            let data = data
                .and_then(|i| i.get("data")?.as_str())
                .ok_or("no chunk")?;
            bytes.extend(decode_base64(data).ok_or("not base64")?);
        }
        if sizes.iter().sum::<usize>() != bytes.len() {
            return Err(format!("{} bytes, not {sizes:?}", bytes.len()));
        }
        let item = old
            .first()
            .and_then(|p| p.get("items")?.as_array()?.first().cloned());
        let Some(Value::Object(item)) = item else {
            return Err("no chunk".into());
        };
        let mut off = 0;
        let new: Vec<V> = sizes
            .iter()
            .map(|&size| {
                let mut it = item.clone();
                it.insert("offset", Value::from(off as i64));
                it.insert("data", Value::from(encode_base64(&bytes[off..off + size])));
                off += size;
                part(Value::Array(vec![Value::Object(it)]))
            })
            .collect();
        self.parts.splice(k - 1..k - 1, new);
        self.renumber();
        Ok(())
    }

    /// Removes the part of line `k`, and renumbers.
    pub(super) fn drop_part(&mut self, k: usize) -> R<V> {
        if k == 0 || k > self.parts.len() {
            return Err(format!("no part at line {k}"));
        }
        let p = self.parts.remove(k - 1);
        self.renumber();
        Ok(p)
    }

    /// Inserts `p` as the part of line `k`, and renumbers.
    pub(super) fn insert_part(&mut self, k: usize, p: V) -> R<()> {
        if k == 0 || k > self.parts.len() + 1 {
            return Err(format!("no part at line {k}"));
        }
        self.parts.insert(k - 1, p);
        self.renumber();
        Ok(())
    }

    /// Appends a part holding `items`, numbered as the next part.
    pub(super) fn add_part(&mut self, items: V) {
        let mut p = part(items);
        if let Value::Object(o) = &mut p {
            o.insert("index", Value::from(self.parts.len() as i64));
        }
        self.parts.push(p);
    }

    fn table_names(&self) -> Vec<&str> {
        self.manifest
            .get("tables")
            .and_then(Value::as_array)
            .unwrap_or(&[])
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .collect()
    }

    /// The row items of `table` in parts whose first item is a row of
    /// `table` (what a verifier counts and hashes).
    fn rows_of<'a>(&'a self, table: &'a str) -> impl Iterator<Item = &'a V> + 'a {
        let is_row = move |it: &&V| {
            it.get("kind").and_then(Value::as_str) == Some("row")
                && it.get("table").and_then(Value::as_str) == Some(table)
        };
        self.parts
            .iter()
            .filter_map(|p| p.get("items").and_then(Value::as_array))
            .filter(move |items| items.first().is_some_and(|f| is_row(&f)))
            .flat_map(move |items| items.iter().filter(is_row))
    }

    /// Sets each table's `count` to its rows in parts of that table.
    pub(super) fn count(&mut self) -> R<()> {
        let names: Vec<String> = self.table_names().iter().map(|t| t.to_string()).collect();
        let counts: Vec<i64> = names
            .iter()
            .map(|t| self.rows_of(t).count() as i64)
            .collect();
        let Ok(Value::Array(ts)) = self.at(M, "/tables") else {
            return Ok(());
        };
        if ts.len() != counts.len() {
            return Err("a table without a name".into());
        }
        for (t, n) in ts.iter_mut().zip(counts) {
            if let Value::Object(o) = t {
                o.insert("count", Value::from(n));
            }
        }
        Ok(())
    }

    /// The schema identity of the tables as they are (SPEC.md §4.1: over
    /// their names and SQL, whatever those hold).
    pub(super) fn schema(&self) -> String {
        let pairs: Vec<V> = self
            .manifest
            .get("tables")
            .and_then(Value::as_array)
            .unwrap_or(&[])
            .iter()
            .map(|t| {
                let m = |k: &'static str| (k, t.get(k).cloned().unwrap_or(Value::Null));
                obj([m("name"), m("sql")])
            })
            .collect();
        sha_hex(&ndarc_json::to_canonical_vec(&Value::Array(pairs)))
    }

    /// Recomputes what `seal` asks for.
    pub(super) fn seal(&mut self, seal: Seal) -> R<()> {
        if seal.schema {
            let id = self.schema();
            self.set(0, "/schema", Value::from(id))?;
        }
        if seal.counts {
            self.count()?;
        }
        if seal.part_count {
            self.set(0, "/partCount", Value::from(self.parts.len() as i64))?;
        }
        Ok(())
    }

    /// The manifest and part lines, canonical.
    pub(super) fn lines(&self) -> Vec<Vec<u8>> {
        std::iter::once(&self.manifest)
            .chain(&self.parts)
            .map(ndarc_json::to_canonical_vec)
            .collect()
    }

    /// `contentHash` (SPEC.md §7.2): the header, then the rows of parts
    /// whose first item is a row of a table the manifest lists.
    pub(super) fn content_hash(&self) -> R<String> {
        let header: Vec<(&str, V)> = CONTENT_HEADER_MEMBERS
            .iter()
            .filter_map(|&k| Some((k, self.manifest.get(k)?.clone())))
            .collect();
        // The terms are built from the records as they are (a fixture's
        // may break the rules the typed readers check); the fold is
        // ndarc-format's.
        let mut h = ContentHasher::new(&sha256(&ndarc_json::to_canonical_vec(&obj(header))));
        let names = self.table_names();
        // Parts in order; a table's rows may come back in later parts.
        for p in &self.parts {
            let Some(t) = p
                .get("items")
                .and_then(Value::as_array)
                .and_then(|items| items.first())
                .filter(|f| f.get("kind").and_then(Value::as_str) == Some("row"))
                .and_then(|f| f.get("table")?.as_str())
                .filter(|t| names.contains(t))
            else {
                continue;
            };
            let items = p.get("items").and_then(Value::as_array).unwrap_or(&[]);
            for it in items.iter().filter(|it| {
                it.get("kind").and_then(Value::as_str) == Some("row")
                    && it.get("table").and_then(Value::as_str) == Some(t)
            }) {
                let mut r = vec![
                    ("table", Value::from(t.to_string())),
                    (
                        "row",
                        it.get("row").cloned().ok_or("a row item without row")?,
                    ),
                ];
                if let Some(id) = it.get("rowid") {
                    r.push(("rowid", id.clone()));
                }
                h.add_row_digest(&sha256(&ndarc_json::to_canonical_vec(&obj(r))));
            }
        }
        Ok(h.finish())
    }
}

/// Declares one more column of `users`, last, in its sql (as a case adds
/// the column to its columns): the sql stays the table's (`table_sql`).
pub(super) fn add_to_users_sql(r: &mut Recs, column_sql: &str) -> R<()> {
    let sql = match r.at(M, "/tables/1/sql")? {
        Value::String(s) => s.replace("score REAL)", &format!("score REAL, {column_sql})")),
        _ => return Err("users has no sql".into()),
    };
    r.set(M, "/tables/1/sql", Value::from(sql))
}

/// A column as the manifest lists it; `generated` when it is one.
pub(super) fn column(name: &str, ty: &str, notnull: i64, pk: i64, generated: Option<&str>) -> V {
    let mut c = super::edit::col(name, ty, notnull, pk);
    if let (Some(g), Value::Object(o)) = (generated, &mut c) {
        o.insert("generated", Value::from(g.to_string()));
    }
    c
}

/// A part holding `items` (numbered 0: renumber after inserting it).
pub(super) fn part(items: V) -> V {
    obj([
        ("kind", Value::from("part")),
        ("index", Value::from(0)),
        ("items", items),
    ])
}

/// An object of `members`.
pub(super) fn obj(members: impl IntoIterator<Item = (&'static str, V)>) -> V {
    Value::Object(Object::from_members(
        members
            .into_iter()
            .map(|(k, v)| (Cow::Borrowed(k), v))
            .collect(),
    ))
}

type RawEdit = Box<dyn Fn(&mut Vec<Vec<u8>>) -> R<()>>;
type ClosingEdit = Box<dyn Fn(&mut Object<'static>, &Recs) -> R<()>>;

/// A fixture being declared: the records it edits, how they are sealed,
/// byte edits, and its sidecar. Errors are kept until [`Case::build`].
pub(super) struct Case {
    name: &'static str,
    expect: Expect,
    recs: Recs,
    seal: Seal,
    raw: Vec<RawEdit>,
    closing: Vec<ClosingEdit>,
    err: Option<String>,
}

/// The fixture `name` (named after its code) whose finding is at `line`
/// and `pointer`, made from `recs`.
pub(super) fn case(recs: &Recs, name: &'static str, line: u64, pointer: &'static str) -> Case {
    let code = Code::from_name(name.split('-').next().unwrap_or(name));
    Case {
        name,
        expect: Expect::new(code.unwrap_or(Code::ALL[0]), line).pointer(pointer),
        recs: recs.clone(),
        seal: Seal {
            schema: true,
            counts: true,
            part_count: true,
        },
        raw: Vec::new(),
        closing: Vec::new(),
        err: code.is_none().then(|| format!("{name}: no such code")),
    }
}

impl Case {
    /// Edits the records.
    pub(super) fn with(mut self, f: impl FnOnce(&mut Recs) -> R<()>) -> Case {
        if self.err.is_none() {
            self.err = f(&mut self.recs)
                .err()
                .map(|e| format!("{}: {e}", self.name));
        }
        self
    }

    /// Sets the value `ptr` names in line `k` to `json`.
    pub(super) fn set(self, k: usize, ptr: &str, json: &str) -> Case {
        let v = j(json);
        self.with(|r| r.set(k, ptr, v?))
    }

    /// Sets the value the sidecar's pointer names to `json` (in the
    /// closing line too).
    pub(super) fn put(self, json: &str) -> Case {
        let (k, ptr) = (
            self.expect.line as usize - 1,
            self.expect.pointer.unwrap_or(""),
        );
        if k == self.recs.parts.len() + 1 {
            let v = j(json);
            return self.closing_member(ptr.trim_start_matches('/'), move |_, _| v.clone());
        }
        self.set(k, ptr, json)
    }

    /// Removes the value `ptr` names in line `k`.
    pub(super) fn del(self, k: usize, ptr: &str) -> Case {
        self.with(|r| r.del(k, ptr).map(drop))
    }

    pub(super) fn note(mut self, note: &'static str) -> Case {
        self.expect = self.expect.note(note);
        self
    }

    pub(super) fn also(mut self, codes: &'static [&'static str]) -> Case {
        self.expect = self.expect.also(codes);
        self
    }

    pub(super) fn allow(mut self, codes: &'static [&'static str]) -> Case {
        self.expect = self.expect.allow(codes);
        self
    }

    /// A verifier option of the sidecar, as JSON.
    pub(super) fn option(mut self, name: &'static str, json: &str) -> Case {
        match j(json) {
            Ok(v) => self.expect = self.expect.option_value(name, v),
            Err(e) => self.err = self.err.or(Some(e)),
        }
        self
    }

    /// Leaves `schema`, the counts or `partCount` as the edit made them.
    pub(super) fn unsealed(mut self, f: impl FnOnce(&mut Seal)) -> Case {
        f(&mut self.seal);
        self
    }

    /// A byte edit of the manifest and part lines, before `archiveHash`.
    pub(super) fn raw(mut self, f: impl Fn(&mut Vec<Vec<u8>>) -> R<()> + 'static) -> Case {
        self.raw.push(Box::new(f));
        self
    }

    /// An edit of the closing record.
    pub(super) fn closing(
        mut self,
        f: impl Fn(&mut Object<'static>, &Recs) -> R<()> + 'static,
    ) -> Case {
        self.closing.push(Box::new(f));
        self
    }

    /// Sets the closing's `member` to what `f` makes of the closing so far
    /// and the sealed records.
    pub(super) fn closing_member(
        self,
        member: &'static str,
        f: impl Fn(&Object<'static>, &Recs) -> R<V> + 'static,
    ) -> Case {
        self.closing(move |c, r| {
            let v = f(c, r)?;
            c.insert(member, v);
            Ok(())
        })
    }

    /// Appends a part holding `items` (JSON).
    pub(super) fn add_part(self, items: &str) -> Case {
        let items = j(items);
        self.with(|r| {
            r.add_part(items?);
            Ok(())
        })
    }

    /// Seals the records and writes the file and sidecar.
    pub(super) fn build(mut self) -> R<Fixture> {
        if let Some(e) = self.err {
            return Err(e);
        }
        let r = &mut self.recs;
        r.seal(self.seal)?;
        let mut lines = r.lines();
        for f in &self.raw {
            f(&mut lines)?;
        }
        let mut closing = Object::new();
        closing.insert("kind", Value::from("closing"));
        let count = r.manifest.get("partCount").cloned().unwrap_or(Value::Null);
        closing.insert("partCount", count);
        closing.insert("contentHash", Value::from(r.content_hash()?));
        closing.insert("archiveHash", Value::from(archive_hash(&lines)));
        for f in &self.closing {
            f(&mut closing, r)?;
        }
        lines.push(ndarc_json::to_canonical_vec(&Value::Object(closing)));
        self.expect.fixture(self.name, join(&lines))
    }
}

/// Builds each case.
pub(super) fn build(cases: Vec<Case>) -> R<Vec<Fixture>> {
    cases.into_iter().map(Case::build).collect()
}
