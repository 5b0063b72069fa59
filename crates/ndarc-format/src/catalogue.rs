//! Catalogue rules shared by producers and verifiers: names, affinities,
//! the rowid alias, the schema identity, the content header, base64 and
//! timestamps (SPEC.md §4–§5).

use std::cmp::Ordering;

use ndarc_json::{cmp_utf16, Object, Value};

use crate::hash::Digest32;

/// The longest name, in UTF-16 code units.
pub(crate) const MAX_NAME_UNITS: usize = 512;

/// The `name` rule: a string of 1 to 512 UTF-16 code units without C0
/// control characters (the producer's `catalogue.mjs`).
pub fn is_name(s: &str) -> bool {
    !s.is_empty() && s.encode_utf16().count() <= MAX_NAME_UNITS && !s.bytes().any(|b| b < 0x20)
}

/// Why `s` is not a name, for messages; `None` when it is one.
pub(crate) fn name_problem(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        Some("is empty")
    } else if s.bytes().any(|b| b < 0x20) {
        Some("contains a control character (U+0000–U+001F)")
    } else if s.encode_utf16().count() > MAX_NAME_UNITS {
        Some("is longer than 512 UTF-16 code units")
    } else {
        None
    }
}

/// SQLite column affinity from a declared type, as the producer's
/// `affinity()`: contains `INT` → INTEGER; `CHAR`, `CLOB` or `TEXT` → TEXT;
/// empty or contains `BLOB` → BLOB; otherwise NUMBER.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Affinity {
    /// Safe integers.
    Integer,
    /// Strings.
    Text,
    /// Strings, numbers or `{"blob": base64}`.
    Blob,
    /// Numbers.
    Number,
}

impl Affinity {
    /// The affinity of a declared column type.
    pub fn of(declared: &str) -> Affinity {
        let t = declared.to_ascii_uppercase();
        if t.contains("INT") {
            Affinity::Integer
        } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
            Affinity::Text
        } else if t.is_empty() || t.contains("BLOB") {
            Affinity::Blob
        } else {
            Affinity::Number
        }
    }

    /// The name as SPEC.md writes it.
    pub fn name(self) -> &'static str {
        match self {
            Affinity::Integer => "INTEGER",
            Affinity::Text => "TEXT",
            Affinity::Blob => "BLOB",
            Affinity::Number => "NUMBER",
        }
    }
}

/// The rowid aliases SQLite accepts, in the order the producer tries them.
pub const ROWID_ALIASES: [&str; 3] = ["rowid", "_rowid_", "oid"];

/// The table's `rowidAlias`: `None` (JSON `null`) when any column is in the
/// primary key; otherwise the first of `rowid`, `_rowid_`, `oid` that no
/// column name shadows (ASCII case-insensitive); `Err(())` when all three are
/// shadowed (such a table cannot be exported).
#[allow(clippy::result_unit_err)]
pub fn rowid_alias<'n>(
    column_names: impl Iterator<Item = &'n str> + Clone,
    any_pk: bool,
) -> Result<Option<&'static str>, ()> {
    if any_pk {
        return Ok(None);
    }
    ROWID_ALIASES
        .iter()
        .find(|alias| !column_names.clone().any(|c| c.eq_ignore_ascii_case(alias)))
        .map(|a| Some(*a))
        .ok_or(())
}

/// Tables whose rows the import refuses when their `kind` column is
/// `'dev'` (`refuseDevData` in the seed's `devdata.mjs`: sessions and
/// credentials of the local development identity). Exact names, as the
/// import looks them up.
pub(crate) const DEV_KIND_TABLES: [&str; 2] = ["oa_credentials", "oa_sessions"];

/// The producer's default table exclusions (`defaults` in `catalogue.mjs`):
/// a trailing `%` makes a prefix, names compare ignoring ASCII case.
/// `pack` leaves these tables out unless `--include-table` names them.
pub const DEFAULT_EXCLUDED_TABLES: [&str; 13] = [
    "sqlite_%",
    "_cf_%",
    "d1_migrations",
    "_rer_deploy_migrations",
    "_rer_portability_migrations",
    "rer_portability_%",
    "rer_mail_development_outbox",
    "rer_ai_development_outbox",
    "oa_%",
    "oc_%",
    "rer_dependency_keys",
    "rer_dependency_pending",
    "rer_dependency_codes",
];

/// Whether `table` matches an exclusion `pattern` as `matches()` in
/// `catalogue.mjs` does: a trailing `%` makes the rest a prefix, and names
/// compare ignoring ASCII case.
pub fn matches_exclusion(table: &str, pattern: &str) -> bool {
    match pattern.strip_suffix('%') {
        Some(prefix) => {
            table.len() >= prefix.len()
                && table.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
        }
        None => table.eq_ignore_ascii_case(pattern),
    }
}

/// The first default exclusion pattern that `table` matches.
pub(crate) fn default_exclusion(table: &str) -> Option<&'static str> {
    DEFAULT_EXCLUDED_TABLES
        .into_iter()
        .find(|p| matches_exclusion(table, p))
}

/// Table-name prefixes that no import can create: SQLite reserves `sqlite_`
/// for its own tables and refuses `CREATE TABLE sqlite_…`; D1 reserves
/// `_cf_` (ASCII case-insensitive, as SQLite compares names).
pub(crate) const RESERVED_TABLE_PREFIXES: [&str; 2] = ["sqlite_", "_cf_"];

/// The reserved prefix `table` starts with, if any.
pub(crate) fn reserved_table_prefix(table: &str) -> Option<&'static str> {
    RESERVED_TABLE_PREFIXES.into_iter().find(|p| {
        table.len() >= p.len() && table.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
    })
}

/// D1's limit on one SQL statement, in bytes.
pub const TRANSFER_SQL_LIMIT: usize = 100_000;

/// What the producer keeps free of that limit for copy names and joins.
pub const TRANSFER_SQL_RESERVE: usize = 1024;

/// The length in bytes of a SQLite identifier quoted with double quotes
/// (`"a""b"` for `a"b`).
pub(crate) fn quoted_len(name: &str) -> usize {
    name.len() + 2 + name.bytes().filter(|&b| b == b'"').count()
}

/// The larger of the two column projections the producer builds for a table
/// (`projectedColumns` in `catalogue.mjs`), in UTF-8 bytes: every column as
/// `s."c"`, and every writable column with INTEGER affinity read as
/// `CAST(s."c" AS TEXT) AS "c"` (others `s."c"`), comma-separated. A table
/// whose projection plus [`TRANSFER_SQL_RESERVE`] exceeds
/// [`TRANSFER_SQL_LIMIT`] cannot be exported or imported
/// (`transfer_sql_limit`).
///
/// `columns` yields `(name, declared type, generated)`.
pub fn projected_columns_len<'c>(
    columns: impl Iterator<Item = (&'c str, &'c str, bool)> + Clone,
) -> usize {
    let joined = |lens: &mut dyn Iterator<Item = usize>| {
        let (n, sum) = lens.fold((0usize, 0usize), |(n, s), l| (n + 1, s + l));
        sum + n.saturating_sub(1)
    };
    // `s.` + the quoted name.
    let plain = joined(&mut columns.clone().map(|(name, _, _)| 2 + quoted_len(name)));
    let encoded = joined(&mut columns.filter(|&(_, _, generated)| !generated).map(
        |(name, decl, _)| {
            let q = quoted_len(name);
            if Affinity::of(decl) == Affinity::Integer {
                // `CAST(s.` q ` AS TEXT) AS ` q
                "CAST(s.".len() + q + " AS TEXT) AS ".len() + q
            } else {
                2 + q
            }
        },
    ));
    plain.max(encoded)
}

/// Whether a table with these column names can be copied by the producer's
/// import (`copyRowid` in `copies.mjs`): its copy is addressed through the
/// first of `rowid`, `_rowid_`, `oid` that no column shadows, so a table
/// whose columns shadow all three cannot be restored, whatever its key.
pub fn has_copy_rowid<'n>(column_names: impl Iterator<Item = &'n str> + Clone) -> bool {
    ROWID_ALIASES
        .iter()
        .any(|alias| !column_names.clone().any(|c| c.eq_ignore_ascii_case(alias)))
}

/// The schema identity: lowercase hex SHA-256 of the canonical JSON of
/// `[{name, sql}, …]` over the tables in manifest order.
pub fn schema_identity<'a>(tables: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut id = SchemaIdentity::new();
    for (name, sql) in tables {
        id.push(name, sql);
    }
    id.finish()
}

/// [`schema_identity`] a table at a time: the canonical JSON of
/// `[{name, sql}, …]` is written straight into the hash, never held.
pub(crate) struct SchemaIdentity {
    hash: sha2::Sha256,
    buf: Vec<u8>,
    tables: usize,
}

impl Default for SchemaIdentity {
    fn default() -> Self {
        SchemaIdentity::new()
    }
}

impl SchemaIdentity {
    /// No tables yet.
    pub fn new() -> Self {
        SchemaIdentity {
            hash: sha2::Digest::new(),
            buf: vec![b'['],
            tables: 0,
        }
    }

    /// The next table's name and SQL.
    pub fn push(&mut self, name: &str, sql: &str) {
        if self.tables > 0 {
            self.buf.push(b',');
        }
        self.tables += 1;
        self.buf.extend_from_slice(b"{\"name\":");
        ndarc_json::write_string(name, &mut self.buf);
        self.buf.extend_from_slice(b",\"sql\":");
        ndarc_json::write_string(sql, &mut self.buf);
        self.buf.push(b'}');
        if self.buf.len() >= 1 << 16 {
            sha2::Digest::update(&mut self.hash, &self.buf);
            self.buf.clear();
        }
    }

    /// The identity: lowercase hex SHA-256.
    pub fn finish(mut self) -> String {
        self.buf.push(b']');
        sha2::Digest::update(&mut self.hash, &self.buf);
        crate::hash::hex(&sha2::Digest::finalize(self.hash).into())
    }
}

/// The manifest members that the content header keeps (SPEC.md §7.2).
pub const CONTENT_HEADER_MEMBERS: [&str; 10] = [
    "excludedColumns",
    "excludedTables",
    "format",
    "objects",
    "payloads",
    "product",
    "requiredConfiguration",
    "schema",
    "tables",
    "version",
];

/// [`content_header_digest`] with each member's canonical text supplied by
/// `member(name, out)`, which writes it through `out` (in as many pieces as
/// it likes) and returns whether the member is present.
pub(crate) fn content_header_digest_by(
    mut member: impl FnMut(&str, &mut dyn FnMut(&[u8])) -> bool,
) -> Digest32 {
    use sha2::{Digest as _, Sha256};
    let mut h = Sha256::new();
    h.update(b"{");
    let mut first = true;
    for name in CONTENT_HEADER_MEMBERS {
        let mut head = Vec::with_capacity(name.len() + 4);
        if !first {
            head.push(b',');
        }
        ndarc_json::write_string(name, &mut head);
        head.push(b':');
        let mut started = false;
        let present = member(name, &mut |piece: &[u8]| {
            if !started {
                h.update(&head);
                started = true;
            }
            h.update(piece);
        });
        if present {
            first = false;
        }
    }
    h.update(b"}");
    h.finalize().into()
}

/// Digest of the canonical content header: the manifest object restricted to
/// [`CONTENT_HEADER_MEMBERS`] (those present).
///
/// The header is serialized straight into the hash, an element of an array
/// member (`tables`, `objects` …) at a time: neither a copy of the members
/// nor the whole canonical text is held. (Copying them took most of the
/// time and memory of verifying a 176 MB manifest.)
pub fn content_header_digest(manifest: &Object<'_>) -> Digest32 {
    use sha2::{Digest as _, Sha256};
    const FLUSH: usize = 1 << 16;
    let mut h = Sha256::new();
    let mut buf = Vec::with_capacity(2 * FLUSH);
    buf.push(b'{');
    let mut first = true;
    // CONTENT_HEADER_MEMBERS is in name order, the canonical order.
    for name in CONTENT_HEADER_MEMBERS {
        let Some(v) = manifest.get(name) else {
            continue;
        };
        if !first {
            buf.push(b',');
        }
        first = false;
        ndarc_json::write_string(name, &mut buf);
        buf.push(b':');
        match v {
            Value::Array(items) => {
                buf.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    ndarc_json::write_canonical(item, &mut buf);
                    if buf.len() >= FLUSH {
                        h.update(&buf);
                        buf.clear();
                    }
                }
                buf.push(b']');
            }
            _ => ndarc_json::write_canonical(v, &mut buf),
        }
        if buf.len() >= FLUSH {
            h.update(&buf);
            buf.clear();
        }
    }
    buf.push(b'}');
    h.update(&buf);
    h.finalize().into()
}

/// Decodes canonical base64 (RFC 4648 standard alphabet, with padding, no
/// whitespace, unused bits zero). `None` when `s` is not canonical base64.
pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    decode_base64_into(s, &mut out).then_some(out)
}

/// Decodes canonical base64 into `out` (appending); `false` when `s` is not
/// canonical base64.
pub fn decode_base64_into(s: &str, out: &mut Vec<u8>) -> bool {
    // base64-simd decodes several times faster than the base64 crate, and
    // its STANDARD engine is as strict (padding required, no whitespace,
    // unused bits zero: the tests below hold it to that). `decode_append`
    // decodes into the spare capacity without zeroing it first (a chunk
    // decodes to megabytes), and leaves `out` as it was on an error.
    base64_simd::STANDARD.decode_append(s, out).is_ok()
}

/// Decodes canonical base64 `s` a piece at a time, as
/// [`decode_base64_into`] judges it: `f` gets each piece of the decoded
/// bytes in order, every piece but the last a multiple of 64 bytes (whole
/// SHA-256 blocks). Returns whether `s` is canonical base64; on `false`
/// the pieces given so far are to be dropped. A whole object of a 16 MiB
/// line is then hashed without a 12 MiB buffer per line and job.
pub(crate) fn decode_base64_pieces(s: &str, mut f: impl FnMut(&[u8])) -> bool {
    // 64 Ki characters decode to 48 KiB: 768 blocks.
    const PIECE: usize = 64 << 10;
    let mut buf = vec![0u8; PIECE / 4 * 3];
    let mut rest = s.as_bytes();
    while !rest.is_empty() {
        let (piece, after) = rest.split_at(rest.len().min(PIECE));
        // Padding ends the text: in a piece before the last it would be
        // accepted as the end of that piece.
        if !after.is_empty() && piece.last() == Some(&b'=') {
            return false;
        }
        match base64_simd::STANDARD.decode(piece, base64_simd::Out::from_slice(&mut buf)) {
            Ok(d) => f(d),
            Err(_) => return false,
        }
        rest = after;
    }
    true
}

/// Encodes bytes as canonical base64 (base64-simd, the workspace's one
/// base64 crate: it decodes several times faster than the `base64` crate).
pub fn encode_base64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
}

/// The exact length that decoding canonical base64 `s` gives, from its
/// length and padding alone (checked before any work is sized by it).
pub(crate) fn decoded_len(s: &str) -> usize {
    let pad = s.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (s.len() / 4) * 3 - pad.min((s.len() / 4) * 3)
}

/// The length decoding `s` would give if it were base64, valid or not:
/// 3 bytes per 4 characters, less the trailing `=` (at most 2).
pub(crate) fn decoded_len_lenient(s: &str) -> usize {
    let pad = s.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (s.len() * 3 / 4).saturating_sub(pad)
}

/// The `Date.prototype.toISOString` form (`YYYY-MM-DDTHH:MM:SS.sssZ`) of
/// `ms` milliseconds after the Unix epoch.
pub fn iso_time(ms: u64) -> String {
    let days = (ms / 86_400_000) as i64;
    let rem = ms % 86_400_000;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Whether `s` is `Date.prototype.toISOString` output for a real instant:
/// `YYYY-MM-DDTHH:MM:SS.sssZ` with a valid calendar date and time.
pub fn is_iso_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 24 {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let sep = [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ];
    if sep.iter().any(|&(i, c)| b[i] != c) {
        return false;
    }
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s_), Some(_ms)) = (
        digits(0..4),
        digits(5..7),
        digits(8..10),
        digits(11..13),
        digits(14..16),
        digits(17..19),
        digits(20..23),
    ) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d) && h < 24 && mi < 60 && s_ < 60
}

/// The order of payloads: the producer sorts `Object.entries(extraPayloads)`,
/// which compares the strings `name + ",[object Object]"` by UTF-16 code
/// units, so a name sorts after its own extensions (`kv cache` before `kv`).
pub fn cmp_payload_names(a: &str, b: &str) -> Ordering {
    let ka = format!("{a},[object Object]");
    let kb = format!("{b},[object Object]");
    cmp_utf16(&ka, &kb)
}

/// Object order: by bucket, then key, each in UTF-16 code-unit order (the
/// producer compares JavaScript strings with `<`).
pub fn cmp_objects(a: (&str, &str), b: (&str, &str)) -> Ordering {
    cmp_utf16(a.0, b.0).then_with(|| cmp_utf16(a.1, b.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256;

    /// The definition: a copy of the members, serialized whole.
    fn header_digest_by_copy(manifest: &Object<'_>) -> Digest32 {
        let mut header = Object::new();
        for name in CONTENT_HEADER_MEMBERS {
            if let Some(v) = manifest.get(name) {
                header.insert(name, v.clone());
            }
        }
        sha256(&ndarc_json::to_canonical_vec(&Value::Object(header)))
    }

    #[test]
    fn content_header_digest_streams_what_the_copy_hashes() {
        let big_table = format!(
            r#"{{"name":"t","sql":"{}","columns":[],"count":0,"dependencies":[],"rowidAlias":null}}"#,
            "x".repeat(70_000)
        );
        let tables: Vec<String> = (0..300)
            .map(|i| format!(r#"{{"name":"t{i}","count":{i},"é😀":[1.5,null,true]}}"#))
            .chain([big_table])
            .collect();
        for manifest in [
            r#"{"kind":"manifest"}"#.to_string(),
            r#"{"version":2,"tables":[],"format":"f","journal":[1]}"#.to_string(),
            format!(
                r#"{{"version":2,"tables":[{}],"format":"rer-portability","excludedColumns":{{"b":["x"],"a":["y"],"":[],"😀":[]}},"excludedTables":["z"],"objects":[{{"bucket":"b","key":"k"}}],"payloads":[],"product":"p","requiredConfiguration":["A"],"schema":"s","epoch":7,"exportedAt":"x"}}"#,
                tables.join(",")
            ),
            // Members of another type than the format says still hash.
            r#"{"tables":{"b":1,"a":2},"objects":"o","version":[[],[{}]]}"#.to_string(),
        ] {
            let v = ndarc_json::parse(manifest.as_bytes()).unwrap();
            let o = v.as_object().unwrap();
            assert_eq!(
                content_header_digest(o),
                header_digest_by_copy(o),
                "{manifest:.200}"
            );
        }
    }

    #[test]
    fn affinities() {
        assert_eq!(Affinity::of("INTEGER"), Affinity::Integer);
        assert_eq!(Affinity::of("bigint"), Affinity::Integer);
        assert_eq!(Affinity::of("VARCHAR(10)"), Affinity::Text);
        assert_eq!(Affinity::of("clob"), Affinity::Text);
        assert_eq!(Affinity::of(""), Affinity::Blob);
        assert_eq!(Affinity::of("BLOB"), Affinity::Blob);
        assert_eq!(Affinity::of("REAL"), Affinity::Number);
        assert_eq!(Affinity::of("DATETIME"), Affinity::Number);
        assert_eq!(Affinity::of("NUMERIC"), Affinity::Number);
        // INT wins over CHAR, as in SQLite: "CHARINT" is INTEGER.
        assert_eq!(Affinity::of("CHARINT"), Affinity::Integer);
    }

    #[test]
    fn rowid_aliases() {
        let cols = ["a", "b"];
        assert_eq!(rowid_alias(cols.iter().copied(), false), Ok(Some("rowid")));
        assert_eq!(rowid_alias(cols.iter().copied(), true), Ok(None));
        let cols = ["ROWID", "b"];
        assert_eq!(
            rowid_alias(cols.iter().copied(), false),
            Ok(Some("_rowid_"))
        );
        let cols = ["rowid", "_ROWID_", "oid"];
        assert_eq!(rowid_alias(cols.iter().copied(), false), Err(()));
    }

    #[test]
    fn exclusions_follow_the_producer() {
        assert!(matches_exclusion("sqlite_sequence", "sqlite_%"));
        assert!(matches_exclusion("SQLITE_STAT1", "sqlite_%"));
        assert!(matches_exclusion("D1_Migrations", "d1_migrations"));
        assert!(!matches_exclusion("d1_migrations2", "d1_migrations"));
        assert!(!matches_exclusion("oa", "oa_%"));
        // Multi-byte names shorter or longer than the prefix do not panic.
        assert!(!matches_exclusion("é", "oa_%"));
        assert!(!matches_exclusion("oé_x", "oa_%"));
        assert_eq!(default_exclusion("oa_sessions"), Some("oa_%"));
        assert_eq!(default_exclusion("_CF_KV"), Some("_cf_%"));
        assert_eq!(default_exclusion("users"), None);
        assert_eq!(reserved_table_prefix("Sqlite_x"), Some("sqlite_"));
        assert_eq!(reserved_table_prefix("_cf_KV"), Some("_cf_"));
        assert_eq!(reserved_table_prefix("oa_sessions"), None);
    }

    /// The projection as `projectedColumns` in `catalogue.mjs` writes it.
    fn projection(cols: &[(&str, &str, bool)], encoded: bool) -> String {
        let q = |n: &str| format!("\"{}\"", n.replace('"', "\"\""));
        cols.iter()
            .filter(|c| !encoded || !c.2)
            .map(|&(n, t, _)| {
                if encoded && Affinity::of(t) == Affinity::Integer {
                    format!("CAST(s.{} AS TEXT) AS {}", q(n), q(n))
                } else {
                    format!("s.{}", q(n))
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn projected_columns_len_is_the_producers_statement() {
        let cases: [&[(&str, &str, bool)]; 4] = [
            &[("id", "INTEGER", false)],
            &[
                ("id", "INTEGER", false),
                ("na\"me", "TEXT", false),
                ("é", "", true),
            ],
            &[("g", "INT", true), ("h", "INT", true)],
            &[
                ("a", "BLOB", false),
                ("b", "bigint", false),
                ("c", "REAL", true),
            ],
        ];
        for cols in cases {
            let want = projection(cols, false)
                .len()
                .max(projection(cols, true).len());
            assert_eq!(
                projected_columns_len(cols.iter().copied()),
                want,
                "{cols:?}"
            );
        }
        assert_eq!(projected_columns_len(std::iter::empty()), 0);
    }

    #[test]
    fn copy_rowid_needs_one_free_alias() {
        assert!(has_copy_rowid(["id", "rowid", "oid"].into_iter()));
        assert!(!has_copy_rowid(
            ["id", "ROWID", "_rowid_", "Oid"].into_iter()
        ));
    }

    #[test]
    fn names() {
        assert!(is_name("users"));
        assert!(!is_name(""));
        assert!(!is_name("a\nb"));
        assert!(is_name(&"x".repeat(512)));
        assert!(!is_name(&"x".repeat(513)));
        // 256 astral characters are 512 UTF-16 units.
        assert!(is_name(&"😀".repeat(256)));
        assert!(!is_name(&"😀".repeat(257)));
    }

    #[test]
    fn timestamps() {
        assert!(is_iso_timestamp("2026-11-29T16:12:06.000Z"));
        assert!(is_iso_timestamp("2024-02-29T23:59:59.999Z"));
        assert!(!is_iso_timestamp("2023-02-29T00:00:00.000Z"));
        assert!(!is_iso_timestamp("2026-11-29T16:12:06Z"));
        assert!(!is_iso_timestamp("2026-11-29 16:12:06.000Z"));
        assert!(!is_iso_timestamp("2026-13-01T00:00:00.000Z"));
        assert!(!is_iso_timestamp("2026-11-29T24:00:00.000Z"));
    }

    #[test]
    fn payload_order_follows_the_producer() {
        assert_eq!(cmp_payload_names("kv cache", "kv"), Ordering::Less);
        assert_eq!(cmp_payload_names("a", "b"), Ordering::Less);
        assert_eq!(cmp_payload_names("kv", "kva"), Ordering::Less);
    }

    /// The base64 crate's standard engine: padding required, unused bits
    /// zero, no whitespace; an independent decoder to hold ours to.
    fn reference(text: &str) -> Option<Vec<u8>> {
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text).ok()
    }

    /// Decoding a piece at a time judges a text as decoding it whole does,
    /// gives the same bytes, and cuts them at whole SHA-256 blocks: around
    /// the piece size, and with padding or a bad character at a cut.
    #[test]
    fn base64_in_pieces_agrees_with_the_whole() {
        const PIECE: usize = 64 << 10;
        let mut texts = Vec::new();
        for n in [
            0usize,
            1,
            2,
            3,
            47,
            48,
            49,
            PIECE / 4 * 3 - 1,
            PIECE / 4 * 3,
            PIECE / 4 * 3 + 1,
            2 * PIECE / 4 * 3 + 2,
        ] {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 131 + 7) as u8).collect();
            texts.push(encode_base64(&bytes));
        }
        // Padding that ends the first piece, then more text: "QQ==" at
        // the cut would be a valid end of that piece alone.
        let mut padded = "A".repeat(PIECE - 4);
        padded.push_str("QQ==");
        padded.push_str("QUJD");
        texts.push(padded);
        let mut bad = encode_base64(&vec![7u8; PIECE]).into_bytes();
        bad[PIECE] = b'*';
        texts.push(String::from_utf8(bad).unwrap());
        for text in &texts {
            let mut whole = Vec::new();
            let ok = decode_base64_into(text, &mut whole);
            let mut got = Vec::new();
            let mut cuts = Vec::new();
            let ok_pieces = decode_base64_pieces(text, |p| {
                cuts.push(p.len());
                got.extend_from_slice(p);
            });
            assert_eq!(ok_pieces, ok, "text of {} characters", text.len());
            assert_eq!(ok, reference(text).is_some());
            if ok {
                assert_eq!(got, whole);
                let last = cuts.pop().unwrap_or(0);
                assert!(
                    cuts.iter().all(|c| c % 64 == 0 && *c > 0),
                    "{cuts:?} {last}"
                );
            }
        }
    }

    #[test]
    fn base64_is_canonical_only_in_both_decoders() {
        for (text, ok) in [
            ("aGk=", true),
            ("", true),
            ("aGl=", false),
            ("aGk", false),
            ("aG k=", false),
            ("aGk=\n", false),
            ("aGk==", false),
            ("a===", false),
            ("aGVsbG8=", true),
            ("aGVsbG9=", false),
            ("-_8=", false),
            ("+/8=", true),
        ] {
            let mut v = Vec::new();
            assert_eq!(decode_base64_into(text, &mut v), ok, "{text:?}");
            assert_eq!(decode_base64(text).is_some(), ok, "{text:?}");
            assert_eq!(reference(text).is_some(), ok, "{text:?}");
            if ok {
                assert_eq!(Some(v), decode_base64(text));
            }
        }
        // Every text of up to 4 characters over an alphabet that has
        // letters, digits, both specials, padding, whitespace and the URL
        // alphabet's two: base64-simd (which the format uses) and the
        // base64 crate's strict engine (the reference) agree on each.
        let alphabet = b"AQgw+/=_- \n9";
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.len() == texts.last().map_or(0, String::len))
                .flat_map(|t| alphabet.iter().map(move |&c| format!("{t}{}", c as char)))
                .collect();
            texts.extend(longer);
        }
        // And longer ones, around the SIMD decoder's block sizes.
        for n in [16usize, 31, 32, 33, 48, 64, 65, 100] {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let good = encode_base64(&bytes);
            texts.push(good.clone());
            let mut bad = good.clone().into_bytes();
            bad[n / 2] = b'*';
            texts.push(String::from_utf8(bad).unwrap());
            texts.push(format!("{good}="));
            texts.push(good[..good.len() - 1].to_string());
        }
        assert!(texts.len() > 20_000);
        for text in &texts {
            assert_eq!(decode_base64(text), reference(text), "{text:?}");
        }
        assert_eq!(decode_base64("aGk="), Some(b"hi".to_vec()));
        assert_eq!(decode_base64(""), Some(vec![]));
        assert_eq!(decode_base64("aGl="), None); // unused bits set
        assert_eq!(decode_base64("aGk"), None); // no padding
        assert_eq!(decode_base64("aG k="), None);
        assert_eq!(decode_base64("aGk=\n"), None);
        assert_eq!(decoded_len("aGk="), 2);
        assert_eq!(decoded_len("aGVsbG8="), 5);
        assert_eq!(decoded_len(""), 0);
        assert_eq!(decoded_len("=="), 0);
    }

    #[test]
    fn schema_identity_is_sha_of_canonical_list() {
        let id = schema_identity([("t", "CREATE TABLE t(a)")].into_iter());
        let expected = crate::hash::hex(&sha256(br#"[{"name":"t","sql":"CREATE TABLE t(a)"}]"#));
        assert_eq!(id, expected);
    }
}
