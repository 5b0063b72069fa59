//! SQL patches: the statements that turn the first archive's database into
//! the second's, as `sqldiff` writes them.
//!
//! A [`Patch`] is the [`RowSink`] of a diff (`ndarc_diff::diff_labeled_with_sink`):
//! it takes the second archive's added rows (all rows of new and rebuilt
//! tables) while the diff reads that archive, once, and spools their
//! `INSERT`s to an unnamed temporary file; [`Patch::finish`] then writes,
//! after `PRAGMA foreign_keys = OFF` and inside one transaction:
//!
//! 1. `DROP TABLE` for tables only in the first archive and for tables whose
//!    `sql` changed (SQLite's `ALTER TABLE` cannot reach every change a
//!    `CREATE TABLE` can make, and a table rebuilt from the second archive's
//!    `sql` holds exactly its definition);
//! 2. `DELETE` of removed rows, children before parents;
//! 3. `UPDATE` of the changed cells;
//! 4. `CREATE TABLE` for new and rebuilt tables, parents first;
//! 5. `INSERT` of added rows (all rows of new and rebuilt tables), parents
//!    first, with their rowids.
//!
//! Applied to a database that holds the first archive's content (`unpack`),
//! the result holds the second's. Rows are addressed by primary key, or by
//! rowid through the table's free alias.
//!
//! What the patch guarantees, for the `sqlite3` shell as for any SQLite:
//!
//! - it is written only from a verified diff ([`PatchError::Unverified`]
//!   otherwise) and only once the diff is over, so an invalid input writes
//!   nothing;
//! - every statement starts a line and ends with `;` and a newline; every
//!   line ndarc writes is one whole statement or a `--` comment of its own
//!   text. Cells never span lines: text with a line break is written as
//!   `replace('a~b','~',char(10))`, text with NUL as hex. The only text copied
//!   as it is, a new table's `sql`, is copied only when it starts with
//!   `CREATE`, holds no `;`, no control character but tab, CR and LF, and
//!   no line the shell would take for the end of a statement (`/`, `go`):
//!   so no line can be read by the shell as a dot-command
//!   ([`PatchError::UnsafeSql`] otherwise);
//! - numbers keep their storage class and bits: as `unpack` binds a cell,
//!   an integral number within ±2^53 is an integer literal, any other a
//!   REAL, written in its short decimal form only when SQLite's conversion
//!   of it gives the same double (checked by emulating both the long
//!   double and the double conversions SQLite 3.40 may use), otherwise as
//!   an exact expression over powers of two (`(m * 1.0 / 2^k …)`, or
//!   `CAST(n AS REAL)` for integers beyond 2^53).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};

use ndarc_diff::{Diff, RowSink, Wanted};
use ndarc_format::Manifest;
use ndarc_json::Value;

/// Why a patch could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The second archive could not be read as one.
    #[error("the second archive: line {line}: {message}")]
    Archive {
        /// The 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The diff was made without verifying the archives: a patch is only
    /// written from verified ones.
    #[error("an SQL patch is written only from verified archives (the diff was made without verification)")]
    Unverified,
    /// A table's `sql`, copied into the patch, could be read by the
    /// `sqlite3` shell as more than the one statement it is.
    #[error("table {table:?}: its sql cannot be written into a patch safely: {reason}")]
    UnsafeSql {
        /// The table.
        table: String,
        /// Why.
        reason: &'static str,
    },
    /// A name holds a line break or NUL.
    #[error("{name:?}: a name with a line break or NUL cannot be written into a patch")]
    UnsafeName {
        /// The name.
        name: String,
    },
    /// Writing failed.
    #[error("cannot write the patch: {0}")]
    Io(#[from] std::io::Error),
}

use crate::quote as ident;

/// A cell as an SQL literal: `NULL`, a number, `'text'`, `X'blob'`, with
/// the storage class and value `unpack` gives it (see [`number`]).
pub fn literal(v: &Value<'_>) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
        Value::Number(n) => number(*n),
        Value::String(s) => text(s),
        Value::Object(o) => match o.get("blob").and_then(Value::as_str) {
            // Decoded as the archive was verified (ndarc-format's strict
            // decoder), not by a second base64 implementation.
            Some(b64) => match ndarc_format::catalogue::decode_base64(b64) {
                Some(bytes) => format!("X'{}'", hex(&bytes)),
                None => "NULL".to_string(),
            },
            None => "NULL".to_string(),
        },
        Value::Array(_) => "NULL".to_string(),
    }
}

/// A text literal on one line: `'it''s'`; with CR or LF (the shell reads
/// a patch line by line and drops a CR before a line's end), each written
/// as a mark the text lacks, put back by `replace()`:
/// `replace('a~b','~',char(10))` (a flat expression however many lines
/// the text has); with NUL (where an SQL literal ends), the UTF-8 bytes.
fn text(s: &str) -> String {
    if s.contains('\0') {
        return format!("CAST(X'{}' AS TEXT)", hex(s.as_bytes()));
    }
    if !s.contains(['\n', '\r']) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    const MARKS: &str = "~^`|#@$%&*+=!?";
    let mut marks = MARKS
        .chars()
        .chain((0xE000..=0xF8FF).filter_map(char::from_u32));
    let mut body = s.to_string();
    let mut wraps = Vec::new();
    for (brk, code) in [('\n', 10), ('\r', 13)] {
        if !s.contains(brk) {
            continue;
        }
        let Some(mark) = marks.find(|m| !s.contains(*m)) else {
            // Every mark is in the text: its bytes, then.
            return format!("CAST(X'{}' AS TEXT)", hex(s.as_bytes()));
        };
        body = body.replace(brk, mark.encode_utf8(&mut [0; 4]));
        wraps.push((mark, code));
    }
    let mut expr = format!("'{}'", body.replace('\'', "''"));
    for (mark, code) in wraps {
        expr = format!("replace({expr},'{mark}',char({code}))");
    }
    expr
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02X}"));
    }
    s
}

/// 2^53: `unpack` binds integral numbers up to this magnitude as integers.
const SAFE: f64 = 9_007_199_254_740_992.0;

/// A number as `unpack` binds it, as an SQL expression that gives exactly
/// that value: an integral number within ±2^53 as an INTEGER literal, any
/// other as a REAL of the same bits.
pub fn number(n: f64) -> String {
    if !n.is_finite() {
        // JSON has no such number.
        return "NULL".to_string();
    }
    if n.fract() == 0.0 && n.abs() <= SAFE {
        return format!("{}", n as i64);
    }
    let short = ndarc_json::to_canonical_string(&Value::Number(n));
    if decimal_is_exact(&short, n) {
        short
    } else {
        exact_real(n)
    }
}

/// A REAL as an expression SQLite evaluates exactly: the double is
/// `m·2^q` with `m` an odd integer below 2^53, so `m * 1.0` is exact and so
/// is each multiplication or division by a power of two up to 2^62 (an
/// INTEGER literal, converted exactly), every intermediate value lying
/// between `m` and the result.
pub fn exact_real(n: f64) -> String {
    let bits = n.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mut m, mut q) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    if m == 0 {
        return "0.0".to_string();
    }
    let shift = m.trailing_zeros();
    m >>= shift;
    q += shift as i32;
    if q >= 0 && n.abs() < 9_223_372_036_854_775_808.0 {
        // An integer of i64's range, converted exactly.
        return format!("CAST({} AS REAL)", n as i64);
    }
    let sign = if n < 0.0 { "-" } else { "" };
    let op = if q >= 0 { '*' } else { '/' };
    let mut out = format!("({sign}{m} * 1.0");
    let mut k = q.unsigned_abs();
    while k > 0 {
        let step = k.min(62);
        out.push_str(&format!(" {op} {}", 1u64 << step));
        k -= step;
    }
    out.push(')');
    out
}

/// Exact powers of ten as doubles.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The significant digits (at most 15, no trailing zero) and the power of
/// ten of a decimal JSON number's magnitude: `d·10^e`.
fn decimal_parts(text: &str) -> Option<(u64, i32)> {
    let t = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all: String = format!("{int}{frac}");
    let lead = all.trim_start_matches('0');
    let digits = lead.trim_end_matches('0');
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let e = exp
        .checked_sub(i32::try_from(frac.len()).ok()?)?
        .checked_add(i32::try_from(lead.len() - digits.len()).ok()?)?;
    Some((digits.parse().ok()?, e))
}

/// `x` rounded to `bits` significant bits, ties to even: `(m, s)` with the
/// result `m·2^s`.
fn round_bits(x: u128, bits: u32) -> (u128, i32) {
    let len = 128 - x.leading_zeros();
    if len <= bits {
        return (x, 0);
    }
    let sh = len - bits;
    let m = x >> sh;
    let rest = x & ((1u128 << sh) - 1);
    let half = 1u128 << (sh - 1);
    let up = rest > half || (rest == half && m & 1 == 1);
    (m + u128::from(up), sh as i32)
}

/// `m·2^e` as a double (`m` below 2^54, the result a normal double).
fn scaled(m: u128, e: i32) -> Option<f64> {
    let pow = |k: i32| {
        (-1022..=1023)
            .contains(&k)
            .then(|| f64::from_bits(((1023 + k) as u64) << 52))
    };
    // `m` is exact as a double; the power of two is applied in two steps
    // so that neither leaves the normal range.
    let (a, b) = (e / 2, e - e / 2);
    Some(m as f64 * pow(a)? * pow(b)?)
}

/// Whether SQLite reads the decimal `text` (a REAL literal: it has a `.` or
/// an exponent) as exactly `v`. SQLite 3.40's `sqlite3AtoF` takes the
/// digits as an integer `s` (at most 15 here, so none is dropped), then for
/// a positive power of ten multiplies `s` by ten while it stays below
/// i64::MAX/10, and computes `s·10^e` or `s/10^e` with `10^e` exact — in
/// `long double` where the platform has one (a 64-bit significand: the
/// result is rounded twice, to 64 then to 53 bits), else in `double`. Both
/// are emulated here exactly; the decimal is kept only when both give `v`.
fn decimal_is_exact(text: &str, v: f64) -> bool {
    if !text.contains(['.', 'e', 'E']) {
        // Digits alone are an INTEGER literal.
        return false;
    }
    let Some((digits, e)) = decimal_parts(text) else {
        return false;
    };
    let mag = v.abs();
    let (long_double, double) = if e >= 0 {
        let (mut s, mut e) = (u128::from(digits), e);
        while s < (i64::MAX / 10) as u128 && e > 0 {
            s *= 10;
            e -= 1;
        }
        if e > 19 {
            return false;
        }
        let e = e as u32;
        let (m64, s1) = round_bits(s * 10u128.pow(e), 64);
        let (m53, s2) = round_bits(m64, 53);
        let Some(ld) = scaled(m53, s1 + s2) else {
            return false;
        };
        (ld, s as f64 * POW10[e as usize])
    } else {
        let k = e.unsigned_abs();
        if k > 18 {
            // 10^k must stay below 2^60 for the quotient below to keep
            // 66 bits in 128.
            return false;
        }
        let d = u128::from(digits);
        let scale = 10u128.pow(k);
        let t = d.leading_zeros() - 1;
        let n = d << t;
        // The quotient to at least 66 bits, its last bit sticky.
        let q = (n / scale) | u128::from(n % scale != 0);
        let (m64, s1) = round_bits(q, 64);
        let (m53, s2) = round_bits(m64, 53);
        let Some(ld) = scaled(m53, s1 + s2 - t as i32) else {
            return false;
        };
        (ld, digits as f64 / POW10[k as usize])
    };
    long_double == mag && double == mag
}

/// Why a table's `sql` cannot be copied as it is into a patch read by the
/// `sqlite3` shell, which reads its input line by line and takes a line
/// starting with `.` for a dot-command (`.shell …`) when no statement text
/// is pending. The `sql` is written at the start of a line, followed by
/// `;`: text that starts with `CREATE` is pending from its first line on
/// until a `;` completes it, unless a line reads as a statement terminator
/// of another dialect (`/` or `go` alone, which the shell turns into `;`).
/// So: it starts with `CREATE`, holds no `;` at all (not even quoted: the
/// shell's view of quotes is not second-guessed), no control character
/// but tab, CR and LF, and no line that starts with `/` or `go`.
fn unsafe_sql(sql: &str) -> Option<&'static str> {
    if !sql
        .get(..6)
        .is_some_and(|p| p.eq_ignore_ascii_case("CREATE"))
    {
        return Some("it does not start with CREATE");
    }
    if sql.contains(';') {
        return Some("it holds a ';'");
    }
    if sql
        .chars()
        .any(|c| c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Some("it holds a control character");
    }
    for line in sql.split('\n').skip(1) {
        let t = line.trim_start_matches([' ', '\t', '\r', '\u{b}', '\u{c}']);
        let b = t.as_bytes();
        let go = b.len() >= 2
            && b[..2].eq_ignore_ascii_case(b"go")
            && !b
                .get(2)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80);
        if t.starts_with('/') || go {
            return Some("a line of it reads as a statement terminator ('/' or 'go')");
        }
    }
    None
}

/// Names go into statements quoted; a line break or NUL in one would
/// change what the shell reads.
fn check_name(name: &str) -> Result<(), PatchError> {
    if name.contains(['\n', '\r', '\0']) {
        return Err(PatchError::UnsafeName {
            name: name.to_string(),
        });
    }
    Ok(())
}

/// Text ndarc writes in a comment: control characters become `?`.
fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// What the patch needs of one table of the second archive.
#[derive(Debug, Clone)]
struct TableDef {
    sql: String,
    pk: Vec<String>,
    rowid_alias: Option<String>,
    dependencies: Vec<String>,
}

fn table_defs(m: &Manifest) -> HashMap<String, TableDef> {
    m.tables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                TableDef {
                    sql: t.sql.clone(),
                    pk: t.primary_key().iter().map(|c| c.name.clone()).collect(),
                    // The alias is written bare: only SQLite's own names
                    // for the rowid are (a valid archive has no other).
                    rowid_alias: t.rowid_alias.as_ref().map(|a| {
                        if ["rowid", "_rowid_", "oid"]
                            .iter()
                            .any(|x| x.eq_ignore_ascii_case(a))
                        {
                            a.clone()
                        } else {
                            ident(a)
                        }
                    }),
                    dependencies: t.dependencies.clone(),
                },
            )
        })
        .collect()
}

/// Table names, parents before children (cycles broken by name order).
fn parents_first(names: &[String], defs: &HashMap<String, TableDef>) -> Vec<String> {
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort_by(|a, b| ndarc_json::cmp_utf16(a, b));
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut done: HashSet<String> = HashSet::new();
    fn visit(
        n: &str,
        names: &[&String],
        defs: &HashMap<String, TableDef>,
        done: &mut HashSet<String>,
        stack: &mut Vec<String>,
        out: &mut Vec<String>,
    ) {
        if done.contains(n) || stack.iter().any(|s| s == n) {
            return;
        }
        stack.push(n.to_string());
        if let Some(d) = defs.get(n) {
            for p in &d.dependencies {
                if let Some(real) = names.iter().find(|x| x.eq_ignore_ascii_case(p)) {
                    visit(real, names, defs, done, stack, out);
                }
            }
        }
        stack.pop();
        if done.insert(n.to_string()) {
            out.push(n.to_string());
        }
    }
    let mut stack = Vec::new();
    for n in &sorted {
        visit(n, &sorted, defs, &mut done, &mut stack, &mut out);
    }
    out
}

/// `WHERE` for the row with key text `key` (`[1,"a"]` or a rowid).
fn where_key(def: &TableDef, key: &str) -> Option<String> {
    if let Some(alias) = &def.rowid_alias {
        let id: i64 = key.parse().ok()?;
        return Some(format!("{alias} = {id}"));
    }
    let v = ndarc_json::parse(key.as_bytes()).ok()?;
    let vals = v.as_array()?;
    if vals.len() != def.pk.len() {
        return None;
    }
    Some(
        def.pk
            .iter()
            .zip(vals)
            .map(|(c, v)| format!("{} IS {}", ident(c), literal(v)))
            .collect::<Vec<_>>()
            .join(" AND "),
    )
}

/// The key text of a row item, as `diff` keys rows.
fn key_of(def: &TableDef, row: &Value<'_>, rowid: Option<&Value<'_>>) -> Option<String> {
    if def.rowid_alias.is_some() {
        return rowid
            .and_then(Value::as_safe_integer)
            .map(|i| i.to_string());
    }
    let vals: Vec<Value<'_>> = def
        .pk
        .iter()
        .map(|c| row.get(c).cloned().unwrap_or(Value::Null))
        .collect();
    Some(ndarc_json::to_canonical_string(&Value::Array(vals)))
}

fn insert(table: &str, def: &TableDef, row: &Value<'_>, rowid: Option<&Value<'_>>) -> String {
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    if let Some(o) = row.as_object() {
        for (name, v) in o.sorted() {
            cols.push(ident(name));
            vals.push(literal(v));
        }
    }
    if let (Some(alias), Some(id)) = (&def.rowid_alias, rowid) {
        cols.push(alias.clone());
        vals.push(literal(id));
    }
    format!(
        "INSERT INTO {}({}) VALUES({});\n",
        ident(table),
        cols.join(","),
        vals.join(",")
    )
}

/// A patch in the making: the [`RowSink`] of the diff it is written from.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ndarc_diff::{diff_labeled_with_sink, Options, Source};
/// let mut patch = ndarc_sqlite::patch::Patch::new()?;
/// let d = diff_labeled_with_sink(
///     ("a.ndjson", Source::Path("a.ndjson".as_ref())),
///     ("b.ndjson", Source::Path("b.ndjson".as_ref())),
///     &Options::default(),
///     Some(&mut patch),
/// )?;
/// patch.finish(&d, &mut std::io::stdout().lock())?;
/// # Ok(()) }
/// ```
pub struct Patch {
    /// The second archive's tables.
    defs: HashMap<String, TableDef>,
    /// Tables created (new or rebuilt): all their rows are inserted.
    full: HashSet<String>,
    /// `INSERT`s, table by table, in an unnamed temporary file.
    spool: BufWriter<File>,
    /// Bytes written to the spool.
    len: u64,
    /// Per table, the spool's ranges holding its `INSERT`s.
    segments: Vec<(String, u64, u64)>,
    /// The table whose rows come, and where they start in the spool.
    current: Option<(String, u64)>,
}

impl std::fmt::Debug for Patch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Patch")
            .field("tables", &self.defs.len())
            .field("spooled", &self.len)
            .finish()
    }
}

impl Patch {
    /// A patch with its spool (an unnamed temporary file).
    pub fn new() -> io::Result<Patch> {
        Ok(Patch {
            defs: HashMap::new(),
            full: HashSet::new(),
            spool: BufWriter::with_capacity(1 << 16, tempfile::tempfile()?),
            len: 0,
            segments: Vec::new(),
            current: None,
        })
    }

    /// Ends the rows of the current table.
    fn close_table(&mut self) {
        if let Some((name, start)) = self.current.take() {
            if self.len > start {
                self.segments.push((name, start, self.len));
            }
        }
    }

    /// Writes the patch: `d` is the diff this patch took the rows of
    /// (verified, and over: the second archive is valid). Ignored tables
    /// and columns are left out of the patch as they are out of the diff
    /// (whose `--ignore-table`/`--ignore-column` options made `d`): no
    /// statement names an ignored table, no `UPDATE` sets an ignored
    /// column and a `sql` change that only ignored columns explain
    /// rebuilds nothing; a row inserted is inserted whole, ignored columns
    /// included, since it had no value before.
    ///
    /// Nothing is written when the patch cannot be written whole
    /// (an unverified diff, a `sql` or a name that is not safe to write).
    pub fn finish(mut self, d: &Diff, out: &mut dyn Write) -> Result<(), PatchError> {
        if !d.verified {
            return Err(PatchError::Unverified);
        }
        self.close_table();
        let defs = &self.defs;
        let rebuilt: Vec<String> = d
            .schema
            .tables_changed
            .iter()
            .filter(|t| t.sql.is_some() || t.rowid_alias.is_some() || t.key_changed)
            .map(|t| t.name.clone())
            .collect();
        let created: Vec<String> = d
            .schema
            .tables_added
            .iter()
            .map(|t| t.name.clone())
            .chain(rebuilt.iter().cloned())
            .collect();
        let dropped: Vec<String> = d
            .schema
            .tables_removed
            .iter()
            .map(|t| t.name.clone())
            .chain(rebuilt.iter().cloned())
            .collect();
        let full: HashSet<&str> = created.iter().map(String::as_str).collect();
        // Everything that could make the patch unsafe is checked before a
        // byte is written.
        for t in created.iter().chain(&dropped) {
            check_name(t)?;
        }
        for t in &created {
            if let Some(def) = defs.get(t) {
                if let Some(reason) = unsafe_sql(&def.sql) {
                    return Err(PatchError::UnsafeSql {
                        table: t.clone(),
                        reason,
                    });
                }
            }
        }
        for t in &d.tables {
            check_name(&t.name)?;
            if let Some(def) = defs.get(&t.name) {
                for c in def.pk.iter() {
                    check_name(c)?;
                }
            }
            for ch in &t.changed {
                for c in &ch.cells {
                    check_name(&c.column)?;
                }
            }
        }

        writeln!(
            out,
            "-- ndarc diff --format sql: from {} to {}",
            comment_text(&d.before.name),
            comment_text(&d.after.name)
        )?;
        // Foreign keys are checked by the database the patch is applied to, not
        // row by row while it runs (archives need not satisfy them, and a
        // rebuilt parent is dropped before its rows come back); the pragma
        // has no effect inside a transaction, so it comes first.
        writeln!(out, "PRAGMA foreign_keys = OFF;")?;
        writeln!(out, "BEGIN TRANSACTION;")?;
        // Children before parents when dropping and deleting.
        let all_before: Vec<String> = d.tables.iter().map(|t| t.name.clone()).collect();
        for t in parents_first(&dropped, defs).iter().rev() {
            writeln!(out, "DROP TABLE IF EXISTS {};", ident(t))?;
        }
        let changed_tables = parents_first(&all_before, defs);
        for name in changed_tables.iter().rev() {
            if full.contains(name.as_str()) {
                continue;
            }
            let (Some(t), Some(def)) = (d.tables.iter().find(|t| &t.name == name), defs.get(name))
            else {
                continue;
            };
            for key in &t.removed {
                if let Some(w) = where_key(def, key) {
                    writeln!(out, "DELETE FROM {} WHERE {w};", ident(name))?;
                }
            }
        }
        for name in &changed_tables {
            if full.contains(name.as_str()) {
                continue;
            }
            let (Some(t), Some(def)) = (d.tables.iter().find(|t| &t.name == name), defs.get(name))
            else {
                continue;
            };
            for ch in &t.changed {
                // A removed column's cell has nothing to set (a table whose
                // columns changed is rebuilt whole anyway).
                let set: Vec<String> = ch
                    .cells
                    .iter()
                    .filter(|c| c.only != Some(ndarc_diff::Side::Before))
                    .map(|c| format!("{} = {}", ident(&c.column), literal(&c.after)))
                    .collect();
                if set.is_empty() {
                    continue;
                }
                let Some(w) = where_key(def, &ch.key) else {
                    continue;
                };
                writeln!(
                    out,
                    "UPDATE {} SET {} WHERE {w};",
                    ident(name),
                    set.join(", ")
                )?;
            }
        }
        for t in parents_first(&created, defs) {
            if let Some(def) = defs.get(&t) {
                writeln!(out, "{};", def.sql)?;
            }
        }
        // Added rows, table by table in the order the diff gave them,
        // written parents first.
        self.spool.flush()?;
        let mut file = self.spool.into_inner().map_err(|e| e.into_error())?;
        let names: Vec<String> = self.segments.iter().map(|(n, _, _)| n.clone()).collect();
        let mut buf = vec![0u8; 1 << 16];
        for t in parents_first(&names, defs) {
            for (_, start, end) in self.segments.iter().filter(|(n, _, _)| *n == t) {
                file.seek(SeekFrom::Start(*start))?;
                let mut left = end - start;
                while left > 0 {
                    let n = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
                    file.read_exact(&mut buf[..n])?;
                    out.write_all(&buf[..n])?;
                    left -= n as u64;
                }
            }
        }
        writeln!(out, "COMMIT;")?;
        Ok(())
    }
}

impl RowSink for Patch {
    fn start(&mut self, after: &Manifest, d: &Diff) {
        self.defs = table_defs(after);
        self.full = d
            .schema
            .tables_added
            .iter()
            .map(|t| t.name.clone())
            .chain(
                d.schema
                    .tables_changed
                    .iter()
                    .filter(|t| t.sql.is_some() || t.rowid_alias.is_some() || t.key_changed)
                    .map(|t| t.name.clone()),
            )
            .collect();
    }

    fn table(&mut self, name: &str) -> Wanted {
        self.close_table();
        if !self.defs.contains_key(name) {
            return Wanted::None;
        }
        self.current = Some((name.to_string(), self.len));
        if self.full.contains(name) {
            Wanted::All
        } else {
            Wanted::Added
        }
    }

    fn row(&mut self, row: &[u8], rowid: Option<&[u8]>) -> io::Result<()> {
        let bad = |e: ndarc_json::Error| io::Error::new(io::ErrorKind::InvalidData, e.to_string());
        let Some((name, _)) = &self.current else {
            return Ok(());
        };
        let Some(def) = self.defs.get(name) else {
            return Ok(());
        };
        let row = ndarc_json::parse(row).map_err(bad)?;
        let rowid = rowid.map(ndarc_json::parse).transpose().map_err(bad)?;
        if let Some(o) = row.as_object() {
            for (c, _) in o.iter() {
                check_name(c).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            }
        }
        let sql = insert(name, def, &row, rowid.as_ref());
        self.spool.write_all(sql.as_bytes())?;
        self.len += sql.len() as u64;
        Ok(())
    }

    fn restart(&mut self) -> io::Result<()> {
        let Some((_, start)) = &self.current else {
            return Ok(());
        };
        let start = *start;
        self.spool.flush()?;
        let f = self.spool.get_mut();
        f.set_len(start)?;
        f.seek(SeekFrom::Start(start))?;
        self.len = start;
        Ok(())
    }
}

/// Writes the SQL patch from the first archive to the second, for a
/// second archive in memory: `d` is their diff (made with verification),
/// `after` the second archive, whose rows are read again here (a file is
/// better diffed with a [`Patch`] as its sink, which reads it once). See
/// [`Patch::finish`].
pub fn write_patch(d: &Diff, after: &[u8], out: &mut dyn Write) -> Result<(), PatchError> {
    if !d.verified {
        return Err(PatchError::Unverified);
    }
    let mut lines = after.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let bad = |line: u64, message: &str| PatchError::Archive {
        line,
        message: message.to_string(),
    };
    let first = lines.next().ok_or_else(|| bad(1, "empty"))?;
    let read = ndarc_verify::read_manifest(
        ndarc_format::LineRef {
            line: 1,
            offset: 0,
            bytes: first,
        },
        &ndarc_verify::Options::default(),
    );
    let manifest = read.manifest.ok_or_else(|| bad(1, "not a manifest"))?;
    let mut patch = Patch::new()?;
    patch.start(&manifest, d);
    let wanted: HashMap<&str, HashSet<&str>> = d
        .tables
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.added.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let mut current: Option<(String, Wanted)> = None;
    for (i, line) in lines.enumerate() {
        let n = i as u64 + 2;
        let rec = ndarc_json::parse(line).map_err(|e| bad(n, &e.to_string()))?;
        if rec.get("kind").and_then(Value::as_str) != Some("part") {
            continue;
        }
        let items = rec.get("items").and_then(Value::as_array).unwrap_or(&[]);
        for it in items {
            if it.get("kind").and_then(Value::as_str) != Some("row") {
                break;
            }
            let (Some(table), Some(row)) = (it.get("table").and_then(Value::as_str), it.get("row"))
            else {
                continue;
            };
            if current.as_ref().map(|(t, _)| t.as_str()) != Some(table) {
                // Tables the diff left out (ignored) are not announced.
                let known = patch.full.contains(table) || wanted.contains_key(table);
                let want = if known {
                    patch.table(table)
                } else {
                    patch.close_table();
                    Wanted::None
                };
                current = Some((table.to_string(), want));
            }
            let want = current.as_ref().map_or(Wanted::None, |(_, w)| *w);
            let rowid = it.get("rowid");
            let take = match want {
                Wanted::All => true,
                Wanted::Added => patch.defs.get(table).is_some_and(|def| {
                    key_of(def, row, rowid).is_some_and(|k| {
                        wanted
                            .get(table)
                            .is_some_and(|keys| keys.contains(k.as_str()))
                    })
                }),
                Wanted::None => false,
            };
            if take {
                let rowid = rowid.map(ndarc_json::to_canonical_vec);
                patch.row(&ndarc_json::to_canonical_vec(row), rowid.as_deref())?;
            }
        }
    }
    patch.finish(d, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(json: &str) -> String {
        literal(&ndarc_json::parse(json.as_bytes()).unwrap())
    }

    #[test]
    fn literals() {
        assert_eq!(lit("null"), "NULL");
        assert_eq!(lit("-9007199254740991"), "-9007199254740991");
        assert_eq!(lit("9007199254740992"), "9007199254740992");
        assert_eq!(lit("1e+21"), "1e+21");
        assert_eq!(lit("0.1"), "0.1");
        assert_eq!(lit("-0"), "0");
        assert_eq!(lit(r#""it's""#), "'it''s'");
        assert_eq!(lit(r#""a\u0000b""#), "CAST(X'610062' AS TEXT)");
        assert_eq!(lit(r#"{"blob":"AP8="}"#), "X'00FF'");
        assert_eq!(lit(r#"{"blob":""}"#), "X''");
    }

    #[test]
    fn text_never_spans_lines() {
        assert_eq!(lit(r#""a\nb""#), "replace('a~b','~',char(10))");
        assert_eq!(
            lit(r#""~\r\n.shell x\n'""#),
            "replace(replace('~`^.shell x^''','^',char(10)),'`',char(13))"
        );
        assert_eq!(lit(r#""\n""#), "replace('~','~',char(10))");
    }

    #[test]
    fn reals_are_exact_where_sqlite_340_rounds_twice() {
        // Canonical JSON prints it as digits: an INTEGER literal.
        assert_eq!(
            number(66_651_525_643_534_064.0),
            "CAST(66651525643534064 AS REAL)"
        );
        // SQLite 3.40 reads this decimal one bit off (rounded to long
        // double, then to double).
        let v = 0.0070881014f64;
        assert!(!decimal_is_exact("0.0070881014", v));
        assert!(number(v).starts_with('(') && number(v).contains(" * 1.0 / "));
        assert_eq!(
            number(5e-324),
            format!("(1 * 1.0{} / 1048576)", " / 4611686018427387904".repeat(17))
        );
        assert_eq!(
            number(-9_223_372_036_854_775_808.0),
            "(-1 * 1.0 * 4611686018427387904 * 2)"
        );
        assert_eq!(
            number(-9_223_372_036_854_774_784.0),
            "CAST(-9223372036854774784 AS REAL)"
        );
        assert_eq!(number(1.5e-7), "1.5e-7");
        assert_eq!(number(4.35), "4.35");
        assert_eq!(number(0.5), "0.5");
        assert!(!decimal_is_exact(
            "66651525643534064",
            66_651_525_643_534_064.0
        ));
    }

    /// The exact forms, evaluated by SQLite (the bundled one), give the
    /// same bits and class REAL; so do the decimals kept.
    #[test]
    fn sqlite_evaluates_the_literals_exactly() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut values = vec![
            5e-324,
            -5e-324,
            f64::MAX,
            -f64::MAX,
            2.2250738585072014e-308,
            1e21,
            9.223372036854776e18,
            66_651_525_643_534_064.0,
            0.0070881014,
        ];
        while values.len() < 5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = if x.is_multiple_of(3) {
                (x >> 20) as f64 / 1000.0
            } else {
                f64::from_bits(x)
            };
            if f.is_finite() {
                values.push(f);
            }
        }
        for v in values {
            let int = v.fract() == 0.0 && v.abs() <= SAFE;
            for (i, expr) in [number(v), exact_real(v)].into_iter().enumerate() {
                let (class, got): (String, f64) = c
                    .query_row(&format!("SELECT typeof({expr}), {expr}"), [], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .unwrap();
                if int && i == 0 {
                    assert_eq!(class, "integer", "{v:e}: {expr}");
                    assert_eq!(got, v, "{v:e}: {expr}");
                    continue;
                }
                assert_eq!(class, "real", "{v:e}: {expr}");
                // -0.0 and 0.0 are one value to SQLite.
                assert_eq!(got.to_bits(), (v + 0.0).to_bits(), "{v:e}: {expr}");
            }
        }
    }

    #[test]
    fn sql_that_could_end_early_in_the_shell_is_refused() {
        assert_eq!(unsafe_sql("CREATE TABLE t(a,\n b TEXT DEFAULT 'x')"), None);
        assert!(unsafe_sql("CREATE TABLE t(a /* c */\n/* d */)").is_some());
        assert!(unsafe_sql("CREATE TABLE t2(a);\n.shell touch F\n-- ").is_some());
        assert!(unsafe_sql("CREATE TABLE t(a DEFAULT (1\n/\n.5))").is_some());
        assert!(unsafe_sql("CREATE TABLE t(a\n GO \n)").is_some());
        assert!(unsafe_sql("CREATE TABLE t(a\n\rgo\r\n)").is_some());
        assert_eq!(unsafe_sql("CREATE TABLE t(a\n good)"), None);
        assert!(unsafe_sql("-- c\nCREATE TABLE t(a)").is_some());
        assert!(unsafe_sql(" CREATE TABLE t(a)").is_some());
        assert!(unsafe_sql("CREATE TABLE t(a DEFAULT 'x\u{0}')").is_some());
        assert!(unsafe_sql("CREATE TABLE t(a DEFAULT ';')").is_some());
        assert_eq!(unsafe_sql("create table \"é\"(a)"), None);
    }

    #[test]
    fn parents_come_first_whatever_the_case() {
        let def = |deps: &[&str]| TableDef {
            sql: String::new(),
            pk: Vec::new(),
            rowid_alias: Some("rowid".into()),
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
        };
        let defs: HashMap<String, TableDef> = [
            ("a".to_string(), def(&["Parent"])),
            ("parent".to_string(), def(&[])),
            ("z".to_string(), def(&["a"])),
        ]
        .into_iter()
        .collect();
        let names = vec!["z".to_string(), "a".to_string(), "parent".to_string()];
        assert_eq!(parents_first(&names, &defs), ["parent", "a", "z"]);
    }

    #[test]
    fn rows_are_addressed_by_key_or_rowid() {
        let rowid = TableDef {
            sql: String::new(),
            pk: Vec::new(),
            rowid_alias: Some("_rowid_".into()),
            dependencies: Vec::new(),
        };
        assert_eq!(where_key(&rowid, "-7").unwrap(), "_rowid_ = -7");
        let pk = TableDef {
            pk: vec!["a".into(), "b\"".into()],
            rowid_alias: None,
            ..rowid
        };
        assert_eq!(
            where_key(&pk, r#"[1,{"blob":"AA=="}]"#).unwrap(),
            r#""a" IS 1 AND "b""" IS X'00'"#
        );
    }
}
