//! Mutations of SPEC.md §4.3: tables an import cannot create or refuses
//! (`copyRowid`, D1's statement limit, reserved names, the producer's
//! default exclusions, development credentials).

use ndarc_format::catalogue::ROWID_ALIASES;
use ndarc_format::Code;
use ndarc_json::Value;
use ndarc_sql::quote_ident;

use crate::rng::Rng;

use super::edit::{col, flip_case, n, obj, s, At, Edit, Model, Need, R, V};
use super::fixture::{self as fx, build, case, column, Fixture, Recs, M};
use super::tables::pk_table;
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        UnsupportedCopyRowid,
        "unsupported_copy_rowid",
        "a primary-key table whose columns shadow rowid, _rowid_ and oid",
        unsupported_copy_rowid
    ),
    mutation!(
        TransferSqlLimit,
        "transfer_sql_limit",
        "a table whose column projection exceeds D1's SQL statement limit",
        transfer_sql_limit
    ),
    mutation!(
        ReservedTable,
        "reserved_table",
        "a table named sqlite_… or _cf_…",
        reserved_table
    ),
    mutation!(
        DefaultExcludedTable,
        "default_excluded_table",
        "a table the producer excludes by default (a warning)",
        default_excluded_table
    ),
    mutation!(
        DevData,
        "dev_data",
        "a table oa_dev_credentials with a row",
        dev_data
    ),
];

/// A primary-key table gets columns shadowing every rowid alias still free
/// (nullable TEXT, null in every row).
fn unsupported_copy_rowid(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pk_table(m, rng)?;
    let mut added = Vec::new();
    for alias in ROWID_ALIASES {
        if t.cols.iter().any(|c| c.name.eq_ignore_ascii_case(alias)) {
            continue;
        }
        let name = match flip_case(alias) {
            Some(f) if rng.one_in(2) => f,
            _ => alias.to_string(),
        };
        m.columns_mut(t.idx)?.push(col(&name, "TEXT", 0, 0));
        for &at in &t.rows {
            m.row_mut(at)?.insert(name.clone(), Value::Null);
        }
        added.push(name);
    }
    Ok(Edit::new(
        At::Manifest,
        format!(
            "primary-key table {:?} gets columns {added:?}, so no rowid alias is free for the import's copy",
            t.name
        ),
    ))
}

/// A new table without rows whose INTEGER columns have 500-character names
/// (3 UTF-8 bytes each): the producer's projection exceeds D1's limit.
fn transfer_sql_limit(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let name = m.fresh_table_name("ndarc_wide");
    // 400 to 500 UTF-16 units (names hold at most 512), 1,000 to 1,200 bytes.
    let (unit, times) =
        [("\u{20ac}", 400), ("\u{00e9}", 500), ("\u{4e2d}", 400)][rng.below(3) as usize];
    let stem = unit.repeat(times);
    let columns: Vec<V> = (0..50)
        .map(|i| col(&format!("{stem}{i:03}"), "INTEGER", 0, 0))
        .collect();
    let defs: Vec<String> = (0..50)
        .map(|i| {
            format!(
                "{} INTEGER",
                ndarc_sql::quote_ident(&format!("{stem}{i:03}"))
            )
        })
        .collect();
    let sql = format!(
        "CREATE TABLE {} ({})",
        ndarc_sql::quote_ident(&name),
        defs.join(", ")
    );
    m.add_table(&name, columns, sql)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "a new table {name:?} with 50 INTEGER columns whose names take over 1,000 bytes each"
        ),
    ))
}

/// A new table without rows named as SQLite or D1 reserves.
fn reserved_table(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let base = ["sqlite_stat1", "_cf_KV", "SQLITE_ndarc", "_CF_ndarc"][rng.below(4) as usize];
    let i = m.add_plain_table(base)?;
    let name = m.typed().tables.get(i).need("no table")?.name.clone();
    let edit = Edit::new(
        At::Manifest,
        format!("a new table {name:?}, a name no import can create"),
    );
    // SQLite itself refuses to create a sqlite_ table: its sql does not
    // prepare.
    Ok(if base.to_ascii_lowercase().starts_with("sqlite_") {
        edit.also(&[Code::TableSql])
    } else {
        edit
    })
}

/// A new table without rows that the producer's defaults exclude.
fn default_excluded_table(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    // Prefix patterns only: a fresh name (`_2` appended) still matches them.
    let base = [
        "oa_sessions",
        "oc_cache",
        "rer_portability_state",
        "OA_Tokens",
    ][rng.below(4) as usize];
    let i = m.add_plain_table(base)?;
    let name = m.typed().tables.get(i).need("no table")?.name.clone();
    Ok(Edit::new(
        At::Manifest,
        format!("a new table {name:?}, which the producer excludes by default (a warning)"),
    ))
}

/// A new table `oa_dev_credentials` with one row, in a part of its own at
/// its place in table order.
fn dev_data(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let name = "oa_dev_credentials";
    if m.all_table_names()
        .iter()
        .any(|t| t.eq_ignore_ascii_case(name))
    {
        return Err(format!("the archive already names {name}"));
    }
    m.add_table(
        name,
        vec![col("x", "TEXT", 0, 0)],
        format!("CREATE TABLE {name} (x TEXT)"),
    )?;
    let at = m.rows_at(name);
    let item = obj(vec![
        ("kind", s("row")),
        ("table", s(name)),
        ("index", n(0)),
        ("row", obj(vec![("x", s("dev"))])),
        ("rowid", n(1)),
    ]);
    m.insert_part(at, vec![item]);
    Ok(Edit::new(
        At::Manifest,
        format!("a new table {name:?} with one development credential"),
    )
    .also(&[Code::DefaultExcludedTable]))
}

// ------------------------------------------------------------- fixtures

/// A table `name` with these columns (`x TEXT` when none) and no rows,
/// its SQL quoting every name.
fn plain_table(name: &str, columns: Vec<V>, alias: Option<&str>) -> V {
    let columns = if columns.is_empty() {
        vec![column("x", "TEXT", 0, 0, None)]
    } else {
        columns
    };
    let defs: Vec<String> = columns
        .iter()
        .map(|c| {
            let field = |k| c.get(k).and_then(Value::as_str).unwrap_or_default();
            format!(
                "{} {}",
                ndarc_sql::quote_ident(field("name")),
                field("type")
            )
        })
        .collect();
    fx::obj([
        ("name", Value::from(name.to_string())),
        (
            "sql",
            Value::from(format!(
                "CREATE TABLE {}({})",
                quote_ident(name),
                defs.join(", ")
            )),
        ),
        ("columns", Value::Array(columns)),
        ("dependencies", Value::Array(Vec::new())),
        (
            "rowidAlias",
            alias.map_or(Value::Null, |a| Value::from(a.to_string())),
        ),
        ("count", Value::from(0)),
    ])
}

/// Inserts `table` at position `at` of the manifest's tables, and `rows`
/// (row items, JSON) as a part after the rows of the tables before it.
fn insert_table(r: &mut Recs, at: usize, table: V, rows: Option<&str>) -> R<()> {
    match r.at(M, "/tables")? {
        Value::Array(ts) => ts.insert(at, table),
        _ => return Err("no tables".into()),
    }
    match rows {
        Some(rows) => r.insert_part(at + 1, fx::part(fx::j(rows)?)),
        None => Ok(()),
    }
}

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    let text = |name| column(name, "TEXT", 0, 0, None);
    let plain = |at: usize, name: &'static str| {
        move |r: &mut Recs| insert_table(r, at, plain_table(name, Vec::new(), Some("rowid")), None)
    };
    build(vec![
        c("unsupported_copy_rowid", 1, "/tables/1/columns")
            .note("a primary-key table with columns named rowid, _rowid_ and OID: the import addresses its copy through a free rowid alias (copyRowid in copies.mjs), so it cannot restore the table")
            .with(|r| {
                let cols = vec![column("id", "INTEGER", 0, 1, None), text("rowid"), text("_rowid_"), text("OID")];
                insert_table(r, 1, plain_table("tags", cols, None), None)
            }),
        c("transfer_sql_limit", 1, "/tables/2/columns")
            .note("40 INTEGER columns with 503-character names (3 bytes each in UTF-8): the producer's CAST(s.\"c\" AS TEXT) AS \"c\" projection takes 121,239 bytes, over D1's 100,000 less 1,024")
            .with(|r| {
                let cols = (0..40)
                    .map(|i| column(&format!("{}{i:03}", "\u{20ac}".repeat(500)), "INTEGER", 0, 0, None))
                    .collect();
                insert_table(r, 2, plain_table("wide", cols, Some("rowid")), None)
            }),
        c("reserved_table", 1, "/tables/1/name")
            .note("sqlite_stat1: SQLite refuses CREATE TABLE for names starting with sqlite_ (so its sql does not prepare: table_sql)")
            .also(&["table_sql"])
            .with(plain(1, "sqlite_stat1")),
        c("reserved_table-cf", 1, "/tables/0/name")
            .note("_CF_kv: D1 reserves the _cf_ prefix (ASCII case-insensitive)")
            .with(plain(0, "_CF_kv")),
        c("default_excluded_table", 1, "/tables/1/name")
            .note("a warning: oa_sessions matches the producer's default exclusion oa_%, so only an explicit include archives it")
            .with(plain(1, "oa_sessions")),
        c("dev_data", 1, "/tables/1/count")
            .also(&["default_excluded_table"])
            .note("oa_dev_credentials holds a row: the import refuses development credentials (refuseDevData)")
            .with(|r| {
                let t = plain_table("oa_dev_credentials", Vec::new(), Some("rowid"));
                let rows = r#"[{"kind":"row","table":"oa_dev_credentials","index":0,"row":{"x":"dev"},"rowid":1}]"#;
                insert_table(r, 1, t, Some(rows))
            }),
        c("dev_data-session", 3, "/items/1/row/kind")
            .also(&["default_excluded_table"])
            .note("an oa_sessions row whose kind is \"dev\": the import refuses development sessions (refuseDevData)")
            .with(|r| {
                let t = plain_table("oa_sessions", vec![text("kind"), text("token")], Some("rowid"));
                let rows = r#"[{"kind":"row","table":"oa_sessions","index":0,"row":{"kind":"live","token":"a"},"rowid":1},{"kind":"row","table":"oa_sessions","index":1,"row":{"kind":"dev","token":"b"},"rowid":2}]"#;
                insert_table(r, 1, t, Some(rows))
            }),
    ])
}
