//! Mutations of SPEC.md §4.3: tables an import cannot create or refuses
//! (`copyRowid`, D1's statement limit, reserved names, the producer's
//! default exclusions, development credentials).

use ndarc_format::catalogue::ROWID_ALIASES;
use ndarc_format::Code;
use ndarc_json::Value;

use crate::rng::Rng;

use super::edit::{col, flip_case, n, obj, s, At, Edit, Model, Need, R, V};
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
    let sql = format!("CREATE TABLE \"{name}\" (\"{stem}000\" INTEGER, …)");
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
    let name = m.tabs().into_iter().nth(i).need("no table")?.name;
    Ok(Edit::new(
        At::Manifest,
        format!("a new table {name:?}, a name no import can create"),
    ))
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
    let name = m.tabs().into_iter().nth(i).need("no table")?.name;
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
