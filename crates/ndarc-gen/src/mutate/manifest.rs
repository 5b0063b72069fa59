//! Mutations of SPEC.md §4 to §4.2: the kinds and members of records, the
//! manifest's identity (`format`, `version`) and members (names,
//! `exportedAt`, integers, `schema`).

use ndarc_format::catalogue::schema_identity;
use ndarc_format::hash::{hex, sha256};
use ndarc_format::Code;
use ndarc_json::{Object, Value};

use crate::rng::Rng;

use super::edit::{
    arr_mut, n, obj, obj_mut, pick, s, strings, At, Bin, BinKind, Edit, Model, Need, Tab, R,
};
use super::fixture::{self as fx, build, case, Fixture, Recs, CLOSING, KVC, M, NOTES, USERS};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        RecordKind,
        "record_kind",
        "a record or item whose kind is not one its place allows",
        record_kind
    ),
    mutation!(
        UnknownMember,
        "unknown_member",
        "a member the format does not define, in any kind of record",
        unknown_member
    ),
    mutation!(
        MissingMember,
        "missing_member",
        "a required member removed",
        missing_member
    ),
    mutation!(
        MemberType,
        "member_type",
        "a member of the wrong JSON type",
        member_type
    ),
    mutation!(
        UnsupportedFormat,
        "unsupported_format",
        "another format identifier",
        unsupported_format
    ),
    mutation!(
        UnsupportedVersion,
        "unsupported_version",
        "another version",
        unsupported_version
    ),
    mutation!(
        InvalidName,
        "invalid_name",
        "an empty, too long or control-character name",
        invalid_name
    ),
    mutation!(
        InvalidExportedAt,
        "invalid_exported_at",
        "exportedAt not a real toISOString timestamp",
        invalid_exported_at
    ),
    mutation!(
        InvalidInteger,
        "invalid_integer",
        "epoch or the closing partCount not a safe integer >= 0",
        invalid_integer
    ),
    mutation!(
        SchemaMismatch,
        "schema_mismatch",
        "schema not the identity of the tables",
        schema_mismatch
    ),
];

fn record_kind(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let end = m.parts.len();
    match rng.below(3) {
        0 => {
            m.parts.push(obj(vec![("kind", s("note"))]));
            Ok(Edit::new(
                At::Part(end),
                "an extra line {\"kind\":\"note\"} before the closing (partCount counts it)",
            ))
        }
        1 => {
            let p = m.insert_part(end, vec![obj(vec![("kind", s("blob")), ("data", s(""))])]);
            Ok(Edit::new(
                At::Part(p),
                "a new last part whose item's kind is \"blob\"",
            ))
        }
        _ => {
            let again = Value::Object(m.manifest.clone());
            m.parts.push(again);
            Ok(Edit::new(
                At::Part(end),
                "the manifest again as the last part line (partCount counts it)",
            ))
        }
    }
}

fn unknown_member(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let bins = m.bins();
    let mut targets = vec!["manifest", "closing"];
    if !tabs.is_empty() {
        targets.extend(["table", "column"]);
    }
    if tabs.iter().any(|t| !t.rows.is_empty()) {
        targets.push("row");
    }
    if !m.typed().objects.is_empty() {
        targets.push("object");
    }
    if !m.typed().payloads.is_empty() {
        targets.push("payload");
    }
    if !m.parts.is_empty() {
        targets.push("part");
    }
    if bins.iter().any(|b| !b.parts.is_empty()) {
        targets.push("chunk");
    }
    match pick(&targets, rng, "nothing to add a member to")? {
        "manifest" => {
            m.manifest.insert("comment", s("exported by hand"));
            Ok(Edit::new(
                At::Manifest,
                "the manifest has a member \"comment\"",
            ))
        }
        "closing" => Ok(
            Edit::new(At::Closing, "the closing has a member \"receipt\": null")
                .closing_value(|c| c.insert("receipt", Value::Null)),
        ),
        "table" => {
            let t = pick(&tabs, rng, "no table")?;
            m.table_mut(t.idx)?
                .insert("without_rowid", Value::Bool(false));
            Ok(Edit::new(
                At::Manifest,
                format!("table {:?} has a member \"without_rowid\"", t.name),
            ))
        }
        "column" => {
            let t = pick(&tabs, rng, "no table")?;
            let c = pick(&t.cols, rng, "no column")?;
            m.column_mut(t.idx, c.idx)?.insert("collation", s("NOCASE"));
            Ok(Edit::new(
                At::Manifest,
                format!("column {}.{} has a member \"collation\"", t.name, c.name),
            ))
        }
        "row" => {
            let with_rows: Vec<Tab> = tabs.into_iter().filter(|t| !t.rows.is_empty()).collect();
            let t = pick(&with_rows, rng, "no rows")?;
            let at = pick(&t.rows, rng, "no rows")?;
            m.item_mut(at.0, at.1)?
                .insert("deleted", Value::Bool(false));
            Ok(Edit::new(
                At::Part(at.0),
                format!(
                    "a row item of {:?} (part {}) has a member \"deleted\"",
                    t.name, at.0
                ),
            ))
        }
        "object" => {
            let k = rng.below(m.typed().objects.len() as u64) as usize;
            m.entry_mut(BinKind::Object, k)?
                .insert("etag", s("\"abc\""));
            Ok(Edit::new(
                At::Manifest,
                format!("object entry {k} has a member \"etag\""),
            ))
        }
        "payload" => {
            let k = rng.below(m.typed().payloads.len() as u64) as usize;
            m.entry_mut(BinKind::Payload, k)?.insert("type", s("json"));
            Ok(Edit::new(
                At::Manifest,
                format!("payload entry {k} has a member \"type\""),
            ))
        }
        "part" => {
            let p = rng.below(m.parts.len() as u64) as usize;
            obj_mut(&mut m.parts[p])
                .need("not an object")?
                .insert("note", s("hand-edited"));
            Ok(Edit::new(
                At::Part(p),
                format!("part {p} has a member \"note\""),
            ))
        }
        _ => {
            let with: Vec<Bin> = bins.into_iter().filter(|b| !b.parts.is_empty()).collect();
            let b = pick(&with, rng, "no chunk")?;
            let p = pick(&b.parts, rng, "no chunk")?;
            m.item_mut(p, 0)?.insert("size", n(b.size));
            Ok(Edit::new(
                At::Part(p),
                format!(
                    "a chunk of {} {:?} (part {p}) has a member \"size\"",
                    b.kind.word(),
                    b.label
                ),
            ))
        }
    }
}

fn missing_member(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut targets = vec!["manifest", "closing"];
    if !tabs.is_empty() {
        targets.push("table");
    }
    if tabs
        .iter()
        .any(|t| t.rowid_alias.is_some() && !t.rows.is_empty())
    {
        targets.push("rowid");
    }
    if tabs.iter().any(|t| !t.rows.is_empty()) {
        targets.push("row-index");
    }
    if !m.typed().objects.is_empty() {
        targets.push("object");
    }
    if !m.parts.is_empty() {
        targets.push("part-index");
    }
    if m.bins().iter().any(|b| b.parts.len() == 1) {
        targets.push("chunk-data");
    }
    match pick(&targets, rng, "nothing to remove")? {
        "manifest" => {
            let member = pick(
                &["journal", "epoch", "sourceIdentity", "exportedAt"],
                rng,
                "",
            )?;
            m.manifest.remove(member);
            Ok(Edit::new(
                At::Manifest,
                format!("the manifest without {member:?}"),
            ))
        }
        "closing" => Ok(
            Edit::new(At::Closing, "the closing without \"contentHash\"").closing_value(|c| {
                c.remove("contentHash");
            }),
        ),
        "table" => {
            let t = pick(&tabs, rng, "no table")?;
            m.table_mut(t.idx)?.remove("dependencies");
            Ok(Edit::new(
                At::Manifest,
                format!("table {:?} without \"dependencies\"", t.name),
            ))
        }
        "rowid" => {
            let ts: Vec<Tab> = tabs
                .into_iter()
                .filter(|t| t.rowid_alias.is_some() && !t.rows.is_empty())
                .collect();
            let t = pick(&ts, rng, "no rowid rows")?;
            let k = rng.below(t.rows.len() as u64) as usize;
            let at = t.rows[k];
            m.item_mut(at.0, at.1)?.remove("rowid");
            Ok(Edit::new(
                At::Part(at.0),
                format!("row {k} of rowid table {:?} without its rowid", t.name),
            ))
        }
        "row-index" => {
            let ts: Vec<Tab> = tabs.into_iter().filter(|t| !t.rows.is_empty()).collect();
            let t = pick(&ts, rng, "no rows")?;
            let k = rng.below(t.rows.len() as u64) as usize;
            let at = t.rows[k];
            m.item_mut(at.0, at.1)?.remove("index");
            Ok(Edit::new(
                At::Part(at.0),
                format!("row {k} of {:?} without its index", t.name),
            )
            .allow(&[Code::RowIndex]))
        }
        "object" => {
            let k = rng.below(m.typed().objects.len() as u64) as usize;
            m.entry_mut(BinKind::Object, k)?.remove("customMetadata");
            Ok(Edit::new(
                At::Manifest,
                format!("object entry {k} without \"customMetadata\""),
            ))
        }
        "part-index" => {
            let p = rng.below(m.parts.len() as u64) as usize;
            obj_mut(&mut m.parts[p])
                .need("not an object")?
                .remove("index");
            Ok(
                Edit::new(At::Part(p), format!("part {p} without its index"))
                    .allow(&[Code::PartIndex]),
            )
        }
        _ => {
            let bs: Vec<Bin> = m
                .bins()
                .into_iter()
                .filter(|b| b.parts.len() == 1)
                .collect();
            let b = pick(&bs, rng, "no chunk")?;
            m.item_mut(b.parts[0], 0)?.remove("data");
            // A chunk without data carries no bytes: the binary is then
            // incomplete, unless it is empty anyway.
            let also: &[Code] = if b.size > 0 {
                &[Code::BinaryMissing]
            } else {
                &[]
            };
            Ok(Edit::new(
                At::Part(b.parts[0]),
                format!(
                    "the only chunk of {} {:?} without \"data\"",
                    b.kind.word(),
                    b.label
                ),
            )
            .also(also))
        }
    }
}

fn member_type(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut targets = vec![
        "product",
        "excludedTables",
        "configuration",
        "closing",
        "items",
    ];
    if !tabs.is_empty() {
        targets.push("sql");
    }
    // Only where the alias is null: a rowid table whose alias is unreadable
    // loses its rows' rowids too.
    let keyed: Vec<Tab> = tabs
        .iter()
        .filter(|t| t.rowid_alias.is_none())
        .cloned()
        .collect();
    if !keyed.is_empty() {
        targets.push("rowidAlias");
    }
    match pick(&targets, rng, "")? {
        "product" => {
            m.manifest.insert("product", n(5));
            Ok(Edit::new(At::Manifest, "product is the number 5"))
        }
        "excludedTables" => {
            let first = m
                .typed()
                .excluded_tables
                .first()
                .cloned()
                .unwrap_or_else(|| "sessions".to_string());
            m.manifest.insert("excludedTables", s(first));
            Ok(Edit::new(
                At::Manifest,
                "excludedTables is a string, not an array",
            ))
        }
        "configuration" => {
            let list = arr_mut(&mut m.manifest, "requiredConfiguration").need("no list")?;
            if list.is_empty() {
                list.push(n(7));
            } else {
                list[0] = n(7);
            }
            Ok(Edit::new(
                At::Manifest,
                "requiredConfiguration[0] is the number 7",
            ))
        }
        "closing" => Ok(
            Edit::new(At::Closing, "the closing archiveHash is the number 0")
                .closing_value(|c| c.insert("archiveHash", n(0))),
        ),
        "items" => {
            let end = m.parts.len();
            m.parts.push(obj(vec![
                ("kind", s("part")),
                ("index", n(end as i64)),
                ("items", Value::Object(Object::new())),
            ]));
            Ok(Edit::new(
                At::Part(end),
                "a new last part whose items is an object",
            ))
        }
        "sql" => {
            let t = pick(&tabs, rng, "no table")?;
            m.table_mut(t.idx)?.insert("sql", Value::Null);
            Ok(
                Edit::new(At::Manifest, format!("table {:?} has sql null", t.name))
                    .also(&[Code::InvalidTableSql]),
            )
        }
        _ => {
            let t = pick(&keyed, rng, "no table")?;
            m.table_mut(t.idx)?.insert("rowidAlias", Value::Bool(false));
            Ok(Edit::new(
                At::Manifest,
                format!("table {:?} has rowidAlias false", t.name),
            ))
        }
    }
}

fn unsupported_format(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let f = pick(
        &["rer-portability-3", "rer-portability-v2", "other-format"],
        rng,
        "",
    )?;
    m.manifest.insert("format", s(f));
    Ok(Edit::new(At::Manifest, format!("format is {f:?}")))
}

fn unsupported_version(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (v, what) = match rng.below(3) {
        0 => (n(3), "3"),
        1 => (n(1), "1"),
        _ => (s("2"), "the string \"2\""),
    };
    m.manifest.insert("version", v);
    Ok(Edit::new(At::Manifest, format!("version is {what}")))
}

fn invalid_name(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut targets = vec!["product", "sourceIdentity", "configuration"];
    // A table name with LF at its end keeps its place in name order; its
    // rows, dependencies and exclusions are renamed with it.
    let renamable: Vec<Tab> = tabs.clone();
    if !renamable.is_empty() {
        targets.push("table");
    }
    match pick(&targets, rng, "")? {
        "product" => {
            m.manifest.insert("product", s(""));
            Ok(Edit::new(At::Manifest, "product is the empty string"))
        }
        "sourceIdentity" => {
            let old = m.typed().source_identity.clone();
            m.manifest.insert("sourceIdentity", s(format!("{old}\t1")));
            Ok(Edit::new(
                At::Manifest,
                "sourceIdentity holds a TAB (a C0 control character)",
            ))
        }
        "configuration" => {
            let long = "\u{1F600}".repeat(257);
            let list = arr_mut(&mut m.manifest, "requiredConfiguration").need("no list")?;
            if list.is_empty() {
                list.push(s(long));
            } else {
                list[0] = s(long);
            }
            Ok(Edit::new(
                At::Manifest,
                "requiredConfiguration[0] is 257 astral characters: 514 UTF-16 code units (the limit is 512)",
            ))
        }
        _ => {
            let t = pick(&renamable, rng, "no table")?;
            let new = format!("{}\n", t.name);
            m.table_mut(t.idx)?.insert("name", s(new.clone()));
            for &(p, i) in &t.rows {
                m.item_mut(p, i)?.insert("table", s(new.clone()));
            }
            for other in &tabs {
                if other.dependencies.contains(&t.name) {
                    let deps: Vec<String> = other
                        .dependencies
                        .iter()
                        .map(|d| if *d == t.name { new.clone() } else { d.clone() })
                        .collect();
                    m.table_mut(other.idx)?
                        .insert("dependencies", strings(&deps));
                }
            }
            if let Some(Value::Object(ex)) = m.manifest.get_mut("excludedColumns") {
                if let Some(v) = ex.remove(&t.name) {
                    ex.insert(new.clone(), v);
                }
            }
            Ok(Edit::new(
                At::Manifest,
                format!(
                    "table {:?} renamed with an LF at the end (its rows too)",
                    t.name
                ),
            ))
        }
    }
}

fn invalid_exported_at(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let v = pick(
        &[
            "2023-02-29T00:00:00.000Z",
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.678+00:00",
            "2026-01-02 03:04:05.678Z",
            "2026-13-02T03:04:05.678Z",
        ],
        rng,
        "",
    )?;
    m.manifest.insert("exportedAt", s(v));
    Ok(Edit::new(At::Manifest, format!("exportedAt is {v:?}")))
}

fn invalid_integer(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    match rng.below(4) {
        0 => {
            m.manifest.insert("epoch", n(-1));
            Ok(Edit::new(At::Manifest, "epoch is -1"))
        }
        1 => {
            m.manifest.insert("epoch", Value::Number(1.5));
            Ok(Edit::new(At::Manifest, "epoch is 1.5"))
        }
        2 => {
            m.manifest
                .insert("epoch", Value::Number(9_007_199_254_740_992.0));
            Ok(Edit::new(
                At::Manifest,
                "epoch is 2^53 (not a safe integer)",
            ))
        }
        _ => {
            let k = m.parts.len() as f64 + 0.5;
            Ok(
                Edit::new(At::Closing, format!("the closing partCount is {k}"))
                    .closing_value(move |c| c.insert("partCount", Value::Number(k))),
            )
        }
    }
}

fn schema_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tables = &m.typed().tables;
    let (value, what) = if !tables.is_empty() && rng.one_in(2) {
        // The schema of the tables before the last one was added.
        let before = &tables[..tables.len() - 1];
        (
            schema_identity(before.iter().map(|t| (t.name.as_str(), t.sql.as_str()))),
            "schema is that of the tables without the last one (stale)",
        )
    } else {
        (
            hex(&sha256(&rng.next_u64().to_le_bytes())),
            "schema is another SHA-256",
        )
    };
    m.manifest.insert("schema", s(value));
    Ok(Edit::new(At::Manifest, what).seal(|o| o.schema = false))
}

// ------------------------------------------------------------- fixtures

/// A part line that replaces the last line (an empty part added for it, so
/// that `partCount` counts it).
fn last_line(line: &'static [u8]) -> impl Fn(&mut Vec<Vec<u8>>) -> R<()> {
    move |ls| {
        *ls.last_mut().need("no lines")? = line.to_vec();
        Ok(())
    }
}

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    let too_long = format!("\"{}\"", "\u{1F600}".repeat(257));
    build(vec![
        c("record_kind", 9, "/kind")
            .note("an extra line (line 9) after the payloads whose kind is neither part nor closing (partCount counts it)")
            .add_part("[]")
            .raw(last_line(br#"{"kind":"note"}"#)),
        c("record_kind-item", 9, "/items/0/kind")
            .add_part(r#"[{"kind":"blob","data":""}]"#),
        c("record_kind-manifest-again", 9, "/kind")
            .add_part("[]")
            .raw(|ls| {
                let m = ls[0].clone();
                *ls.last_mut().need("no lines")? = m;
                Ok(())
            }),
        c("record_kind-not-object", 9, "").add_part("[]").raw(last_line(b"[]")),
        c("unknown_member", 1, "/comment").put(r#""hello""#),
        c("unknown_member-table", 1, "/tables/1/without_rowid").put("false"),
        c("unknown_member-column", 1, "/tables/1/columns/1/collation").put(r#""NOCASE""#),
        c("unknown_member-object", 1, "/objects/0/etag").put(r#""abc""#),
        c("unknown_member-payload", 1, "/payloads/1/type").put(r#""json""#),
        c("unknown_member-part", 2, "/table").put(r#""notes""#),
        c("unknown_member-row", 3, "/items/1/deleted").put("false"),
        c("unknown_member-rowid", 3, "/items/0/rowid")
            .note("a row of a primary-key table (rowidAlias null) carries a rowid")
            .put("3"),
        c("unknown_member-chunk", 4, "/items/0/size").put("13"),
        c("unknown_member-closing", CLOSING, "/receipt").put("null"),
        c("missing_member", 1, "").del(M, "/journal"),
        c("missing_member-table", 1, "/tables/0")
            .note("a rowid table without dependencies member")
            .del(M, "/tables/0/dependencies"),
        c("missing_member-part-index", 3, "").del(USERS, "/index"),
        c("missing_member-row-index", 2, "/items/1").del(NOTES, "/items/1/index"),
        c("missing_member-rowid", 2, "/items/1")
            .note("a row of a rowid table without its rowid")
            .del(NOTES, "/items/1/rowid"),
        c("missing_member-closing", CLOSING, "")
            .closing(|c, _| c.remove("contentHash").map(drop).need("no contentHash")),
        c("missing_member-object", 1, "/objects/1").del(M, "/objects/1/customMetadata"),
        c("missing_member-chunk", 7, "/items/0")
            .also(&["binary_missing"])
            .note("a payload chunk without data carries no bytes")
            .del(KVC, "/items/0/data"),
        c("member_type", 1, "/product").put("5"),
        c("member_type-tables", 1, "/excludedTables").put(r#""sessions""#),
        c("member_type-sql", 1, "/tables/1/sql")
            .also(&["invalid_table_sql"])
            .note("sql is not a string: the table is not a CREATE TABLE statement either")
            .put("null"),
        c("member_type-rowid-alias", 1, "/tables/1/rowidAlias").put("false"),
        c("member_type-configuration", 1, "/requiredConfiguration/0").put("7"),
        c("member_type-part-items", 9, "/items").add_part("{}"),
        c("member_type-closing", CLOSING, "/archiveHash").put("0"),
        c("unsupported_format", 1, "/format").put(r#""rer-portability-3""#),
        c("unsupported_format-accepted-other", 1, "/format")
            .option("formats", r#"["other-format"]"#)
            .note("with --accept-format other-format, rer-portability is not accepted"),
        c("unsupported_version", 1, "/version").put("3"),
        c("unsupported_version-string", 1, "/version").put(r#""2""#),
        c("invalid_name", 1, "/product").put(r#""""#),
        c("invalid_name-control", 1, "/sourceIdentity").put(r#""src\t1""#),
        c("invalid_name-too-long", 1, "/requiredConfiguration/0")
            .note("257 astral characters are 514 UTF-16 code units (the limit is 512)")
            .put(&too_long),
        c("invalid_name-table", 1, "/tables/0/name")
            .note("a table name with LF; its rows name it the same way")
            .put(r#""no\ntes""#)
            .with(|r| r.each(NOTES, "/table", &Value::from("no\ntes"))),
        c("invalid_name-bucket", 1, "/objects/0/bucket")
            .note("bucket files\\u0000 (for both objects and their chunks); the first finding is at /objects/0/bucket")
            .with(|r| {
                let b = Value::from("files\0");
                r.set(M, "/objects/0/bucket", b.clone())?;
                r.set(M, "/objects/1/bucket", b.clone())?;
                (fx::GREET..=fx::LOGO1).try_for_each(|k| r.each(k, "/bucket", &b))
            }),
        c("invalid_exported_at", 1, "/exportedAt").put(r#""2023-02-29T00:00:00.000Z""#),
        c("invalid_exported_at-no-millis", 1, "/exportedAt").put(r#""2026-01-02T03:04:05Z""#),
        c("invalid_exported_at-offset", 1, "/exportedAt")
            .put(r#""2026-01-02T03:04:05.678+00:00""#),
        c("invalid_integer", 1, "/epoch").put("-1"),
        c("invalid_integer-fraction", 1, "/epoch").put("1.5"),
        c("invalid_integer-unsafe", 1, "/epoch").put("9007199254740992"),
        c("invalid_integer-part-index", 3, "/index").put("-1"),
        c("invalid_integer-closing", CLOSING, "/partCount").put("7.5"),
        c("schema_mismatch", 1, "/schema")
            .unsealed(|s| s.schema = false)
            .put(&format!("\"{}\"", "0".repeat(64))),
        c("schema_mismatch-stale", 1, "/schema")
            .note("the schema of the tables before a column was added")
            .unsealed(|s| s.schema = false)
            .with(|r| {
                r.set(M, "/schema", Value::from(r.schema()))?;
                let sql = r.at(M, "/tables/1/sql")?.as_str().need("no sql")?.replace(')', ", x TEXT)");
                r.set(M, "/tables/1/sql", Value::from(sql))?;
                r.set(M, "/tables/1/columns/-", fx::j(r#"{"name":"x","type":"TEXT","notnull":0,"pk":0}"#)?)?;
                r.each(USERS, "/row/x", &Value::Null)
            }),
    ])
}
