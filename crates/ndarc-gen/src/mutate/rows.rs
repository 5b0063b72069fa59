//! Mutations of SPEC.md §5.2 and §5.3: row items (index, count, columns,
//! cells, rowids) and row keys.

use ndarc_format::catalogue::{encode_base64, Affinity};
use ndarc_format::Code;
use ndarc_json::{Object, Value};
use ndarc_sql::quote_ident;

use crate::rng::Rng;

use super::edit::{
    col, fresh_col_name, n, obj, pick, s, some_bytes, str_at, At, Bin, BinKind, Col, Edit, Model,
    Need, Tab, R, V,
};
use super::fixture::{
    self as fx, add_to_users_sql, build, case, column, Case, Fixture, Recs, GREET, LOGO0, M, NOTES,
    USERS,
};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        RowIndex,
        "row_index",
        "a gap in a table's row indexes",
        row_index
    ),
    mutation!(
        RowCount,
        "row_count",
        "a table's count one more or one less than its rows",
        row_count
    ),
    mutation!(
        RowColumns,
        "row_columns",
        "a row with a missing, unknown, excluded or generated column",
        row_columns
    ),
    mutation!(
        RowNotNull,
        "row_not_null",
        "null in a NOT NULL column",
        row_not_null
    ),
    mutation!(
        RowType,
        "row_type",
        "a cell whose type does not fit its column's affinity",
        row_type
    ),
    mutation!(
        UnsafeInteger,
        "unsafe_integer",
        "an INTEGER cell or rowid that is not a safe integer",
        unsafe_integer
    ),
    mutation!(
        InvalidBase64,
        "invalid_base64",
        "a blob cell or chunk that is not canonical base64",
        invalid_base64
    ),
    mutation!(
        RowidOrder,
        "rowid_order",
        "two rows trade rowids",
        rowid_order
    ),
    mutation!(
        DuplicateRowKey,
        "duplicate_row_key",
        "a row repeats the key of the row before",
        duplicate_row_key
    ),
    mutation!(
        RowKeyOrder,
        "row_key_order",
        "two rows of a primary-key table trade places (a warning)",
        row_key_order
    ),
];

/// Adds a table with three rows — a primary-key table `ndarc_rows (id
/// INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER, data BLOB, r REAL)`
/// or a rowid table `ndarc_log` without `id` — at its place in name order,
/// its rows part among the others in manifest order.
fn add_rows_table(m: &mut Model, rowid: bool) -> R<()> {
    let name = m.fresh_table_name(if rowid { "ndarc_log" } else { "ndarc_rows" });
    let (cols, sql) = if rowid {
        (
            vec![
                col("msg", "TEXT", 1, 0),
                col("n", "INTEGER", 0, 0),
                col("data", "BLOB", 0, 0),
                col("r", "REAL", 0, 0),
            ],
            format!(
                "CREATE TABLE {} (msg TEXT NOT NULL, n INTEGER, data BLOB, r REAL)",
                quote_ident(&name)
            ),
        )
    } else {
        (
            vec![
                col("id", "INTEGER", 0, 1),
                col("name", "TEXT", 1, 0),
                col("n", "INTEGER", 0, 0),
                col("data", "BLOB", 0, 0),
                col("r", "REAL", 0, 0),
            ],
            format!(
                "CREATE TABLE {} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER, data BLOB, r REAL)",
                quote_ident(&name)
            ),
        )
    };
    let t = m.add_table(&name, cols, sql)?;
    let earlier: Vec<String> = m
        .typed()
        .tables
        .iter()
        .take(t)
        .map(|x| x.name.clone())
        .collect();
    let at = (0..m.parts.len())
        .rev()
        .find(|&p| {
            m.part_kind(p) == Some("row")
                && m.item(p, 0)
                    .and_then(|i| str_at(i, "table"))
                    .is_some_and(|x| earlier.iter().any(|e| e == x))
        })
        .map_or(0, |p| p + 1);
    let items = (0..3i64)
        .map(|i| {
            let mut row = Object::new();
            if !rowid {
                row.insert("id", n(i + 1));
            }
            row.insert(if rowid { "msg" } else { "name" }, s(format!("row {i}")));
            row.insert("n", n(10 * i));
            row.insert(
                "data",
                obj(vec![(
                    "blob",
                    s(encode_base64(format!("blob {i}").as_bytes())),
                )]),
            );
            row.insert("r", Value::Number(1.5 + i as f64));
            let mut item = Object::new();
            item.insert("kind", s("row"));
            item.insert("table", s(name.clone()));
            item.insert("index", n(i));
            item.insert("row", Value::Object(row));
            if rowid {
                item.insert("rowid", n(10 * (i + 1)));
            }
            Value::Object(item)
        })
        .collect();
    m.insert_part(at, items);
    Ok(())
}

/// Runs `f`; when the archive has no rows it can use, adds a table with
/// rows (a rowid table when `rowid`) and runs it again.
fn or_rows_table(
    m: &mut Model,
    rng: &mut Rng,
    rowid: bool,
    f: fn(&mut Model, &mut Rng) -> R<Edit>,
) -> R<Edit> {
    let saved = m.clone();
    match f(m, rng) {
        Ok(e) => Ok(e),
        Err(_) => {
            *m = saved;
            add_rows_table(m, rowid)?;
            f(m, rng)
        }
    }
}

fn tables_with_rows(m: &Model, at_least: usize) -> Vec<Tab> {
    m.tabs()
        .into_iter()
        .filter(|t| t.rows.len() >= at_least)
        .collect()
}

fn row_index(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_index_in)
}

fn row_index_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pick(&tables_with_rows(m, 1), rng, "no table has rows")?;
    let k = rng.below(t.rows.len() as u64) as usize;
    for (j, &(p, i)) in t.rows.iter().enumerate().skip(k) {
        m.item_mut(p, i)?.insert("index", n(j as i64 + 1));
    }
    Ok(Edit::new(
        At::Part(t.rows[k].0),
        format!(
            "the rows of {:?} skip index {k} (from row {k} on, each index is one more)",
            t.name
        ),
    ))
}

fn row_count(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let k = t.rows.len() as i64;
    if k > 0 && rng.one_in(2) {
        m.table_mut(t.idx)?.insert("count", n(k - 1));
        let last = t.rows.last().need("")?.0;
        return Ok(Edit::new(
            At::Part(last),
            format!(
                "table {:?} has count {} but {k} rows: reported where the rows exceed the count",
                t.name,
                k - 1
            ),
        )
        .seal(|o| o.counts = false));
    }
    m.table_mut(t.idx)?.insert("count", n(k + 1));
    Ok(Edit::new(
        At::Manifest,
        format!("table {:?} has count {} but {k} rows", t.name, k + 1),
    )
    .seal(|o| o.counts = false))
}

fn row_columns(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_columns_in)
}

fn row_columns_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pick(&tables_with_rows(m, 1), rng, "no table has rows")?;
    let at = pick(&t.rows, rng, "")?;
    let plain: Vec<String> = t.plain_cols().iter().map(|c| c.name.clone()).collect();
    let excluded: Vec<String> = t
        .cols
        .iter()
        .filter(|c| c.excluded && c.generated.is_none())
        .map(|c| c.name.clone())
        .collect();
    let generated: Vec<String> = t
        .cols
        .iter()
        .filter(|c| c.generated.is_some())
        .map(|c| c.name.clone())
        .collect();
    let mut kinds = vec![0];
    if !plain.is_empty() {
        kinds.push(1);
    }
    if !excluded.is_empty() {
        kinds.push(2);
    }
    if !generated.is_empty() {
        kinds.push(3);
    }
    let row = m.row_mut(at)?;
    let what = match pick(&kinds, rng, "")? {
        0 => {
            let name = fresh_col_name(&t, "ghost");
            row.insert(name.clone(), Value::Null);
            format!("a column {name:?} the table does not have")
        }
        1 => {
            let c = pick(&plain, rng, "")?;
            row.remove(&c);
            format!("column {c:?} left out")
        }
        2 => {
            let c = pick(&excluded, rng, "")?;
            row.insert(c.clone(), Value::Null);
            format!("the excluded column {c:?}")
        }
        _ => {
            let c = pick(&generated, rng, "")?;
            row.insert(c.clone(), Value::Null);
            format!("the generated column {c:?}")
        }
    };
    Ok(Edit::new(
        At::Part(at.0),
        format!("a row of {:?} (part {}) has {what}", t.name, at.0),
    ))
}

/// A row of a table and one of its writable columns outside the key,
/// filtered by `want`.
fn pick_cell(
    m: &Model,
    rng: &mut Rng,
    want: impl Fn(&Col) -> bool,
) -> R<(Tab, Col, (usize, usize))> {
    let mut choices = Vec::new();
    for t in tables_with_rows(m, 1) {
        for c in t.plain_cols() {
            if want(c) {
                choices.push((t.clone(), c.clone()));
            }
        }
    }
    let (t, c) = pick(&choices, rng, "no row has such a column")?;
    let at = pick(&t.rows, rng, "")?;
    Ok((t, c, at))
}

fn set_cell(m: &mut Model, t: &Tab, c: &Col, at: (usize, usize), v: V, what: &str) -> R<Edit> {
    let k = t.rows.iter().position(|x| *x == at).unwrap_or(0);
    m.row_mut(at)?.insert(c.name.clone(), v);
    Ok(Edit::new(
        At::Part(at.0),
        format!(
            "row {k} of {:?} (part {}): {}.{} ({}) {what}",
            t.name,
            at.0,
            t.name,
            c.name,
            if c.decl_type.is_empty() {
                "no type"
            } else {
                &c.decl_type
            },
        ),
    ))
}

fn row_not_null(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_not_null_in)
}

fn row_not_null_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (t, c, at) = pick_cell(m, rng, |c| c.notnull)?;
    set_cell(m, &t, &c, at, Value::Null, "NOT NULL, holds null")
}

fn row_type(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_type_in)
}

fn row_type_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (t, c, at) = pick_cell(m, rng, |_| true)?;
    let (v, what) = match c.affinity() {
        Affinity::Text => match rng.below(3) {
            0 => (n(1), "holds a number"),
            1 => (
                obj(vec![("blob", s(encode_base64(b"text")))]),
                "holds a {blob}",
            ),
            _ => (Value::Bool(true), "holds true"),
        },
        Affinity::Number => match rng.below(2) {
            0 => (
                s("2024-01-01 10:00:00"),
                "holds text (NUMBER affinity: dates as text are refused)",
            ),
            _ => (s("1.5"), "holds the text \"1.5\""),
        },
        Affinity::Integer => match rng.below(2) {
            0 => (Value::Bool(true), "holds true"),
            _ => (Value::Array(vec![n(1)]), "holds an array"),
        },
        Affinity::Blob => match rng.below(3) {
            0 => (Value::Bool(false), "holds false"),
            1 => (Value::Array(vec![n(1)]), "holds an array"),
            _ => (
                obj(vec![("blob", s(encode_base64(b"png"))), ("type", s("png"))]),
                "holds an object that is not {blob}",
            ),
        },
    };
    set_cell(m, &t, &c, at, v, what)
}

fn unsafe_integer(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, true, unsafe_integer_in)
}

fn unsafe_integer_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let rowid_tabs: Vec<Tab> = tables_with_rows(m, 1)
        .into_iter()
        .filter(|t| t.rowid_alias.is_some())
        .collect();
    let cells = pick_cell(m, rng, |c| c.affinity() == Affinity::Integer);
    if cells.is_err() || (!rowid_tabs.is_empty() && rng.one_in(3)) {
        let t = pick(&rowid_tabs, rng, "no INTEGER cell and no rowid")?;
        let at = *t.rows.last().need("")?;
        m.item_mut(at.0, at.1)?
            .insert("rowid", Value::Number(9_007_199_254_740_994.0));
        return Ok(Edit::new(
            At::Part(at.0),
            format!(
                "the last row of {:?} has rowid 2^53+2 (still increasing, not safe)",
                t.name
            ),
        ));
    }
    let (t, c, at) = cells?;
    let (v, what) = match rng.below(5) {
        0 => (Value::Number(9_007_199_254_740_992.0), "holds 2^53"),
        1 => (Value::Number(-9_007_199_254_740_992.0), "holds -2^53"),
        2 => (Value::Number(7.5), "holds 7.5"),
        3 => (s("7"), "holds the text \"7\""),
        _ => (
            obj(vec![("blob", s(encode_base64(b"\x07")))]),
            "holds a {blob}",
        ),
    };
    set_cell(m, &t, &c, at, v, what)
}

fn invalid_base64(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let cell = pick_cell(m, rng, |c| c.affinity() == Affinity::Blob);
    let single: Vec<Bin> = m
        .bins()
        .into_iter()
        .filter(|b| b.parts.len() == 1 && b.size > 0)
        .collect();
    if let Ok((t, c, at)) = cell {
        if single.is_empty() || rng.one_in(2) {
            let (v, what) = match rng.below(3) {
                0 => ("QUI", "{blob} without padding (QUI)"),
                1 => ("QR==", "{blob} with unused bits set (QR==)"),
                _ => ("QU JD", "{blob} with a space (QU JD)"),
            };
            return set_cell(
                m,
                &t,
                &c,
                at,
                obj(vec![("blob", s(v))]),
                &format!("holds {what}"),
            );
        }
    }
    let b = if single.is_empty() {
        let data = some_bytes(rng, 1, 40);
        let idx = m.add_last_payload(&data)?;
        m.bins()
            .into_iter()
            .find(|b| b.kind == BinKind::Payload && b.idx == idx)
            .need("")?
    } else {
        pick(&single, rng, "")?
    };
    let p = b.parts[0];
    let item = m.item_mut(p, 0)?;
    let data = item
        .get("data")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mid = data.len() / 2 / 4 * 4;
    let bad = if rng.one_in(2) || !data.is_char_boundary(mid) {
        format!("{data}=")
    } else {
        format!("{}\n{}", &data[..mid], &data[mid..])
    };
    item.insert("data", s(bad));
    Ok(Edit::new(
        At::Part(p),
        format!(
            "the only chunk of {} {:?} is not canonical base64 (extra padding or an LF)",
            b.kind.word(),
            b.label
        ),
    )
    .allow(&[
        Code::BinaryMissing,
        Code::SizeMismatch,
        Code::Sha256Mismatch,
    ]))
}

fn rowid_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, true, rowid_order_in)
}

fn rowid_order_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let ts: Vec<Tab> = tables_with_rows(m, 2)
        .into_iter()
        .filter(|t| t.rowid_alias.is_some())
        .collect();
    let t = pick(&ts, rng, "no rowid table has two rows")?;
    let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
    let (a, b) = (t.rows[k - 1], t.rows[k]);
    m.swap_member(a, b, "rowid")?;
    Ok(Edit::new(
        At::Part(b.0),
        format!(
            "rows {} and {k} of {:?} trade rowids: row {k}'s is lower",
            k - 1,
            t.name
        ),
    ))
}

fn duplicate_row_key(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, duplicate_row_key_in)
}

fn duplicate_row_key_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let all = tables_with_rows(m, 2);
    let keyed: Vec<Tab> = all.iter().filter(|t| t.has_pk()).cloned().collect();
    let rowid: Vec<Tab> = all
        .iter()
        .filter(|t| t.rowid_alias.is_some())
        .cloned()
        .collect();
    if keyed.is_empty() || (!rowid.is_empty() && rng.one_in(3)) {
        let t = pick(&rowid, rng, "no table has two rows")?;
        let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
        let (a, b) = (t.rows[k - 1], t.rows[k]);
        let ra = m
            .item(a.0, a.1)
            .and_then(|i| i.get("rowid"))
            .cloned()
            .need("")?;
        m.item_mut(b.0, b.1)?.insert("rowid", ra);
        return Ok(Edit::new(
            At::Part(b.0),
            format!("row {k} of {:?} repeats the rowid of row {}", t.name, k - 1),
        )
        .allow(&[Code::RowidOrder]));
    }
    let t = pick(&keyed, rng, "")?;
    let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
    let (a, b) = (t.rows[k - 1], t.rows[k]);
    let keys: Vec<String> = t.pk_cols().iter().map(|c| c.name.clone()).collect();
    let src = m
        .item(a.0, a.1)
        .and_then(|i| i.get("row"))
        .cloned()
        .need("")?;
    let row = m.row_mut(b)?;
    for c in &keys {
        row.insert(c.clone(), src.get(c).cloned().unwrap_or(Value::Null));
    }
    Ok(Edit::new(
        At::Part(b.0),
        format!(
            "row {k} of {:?} repeats the key ({}) of row {}",
            t.name,
            keys.join(", "),
            k - 1
        ),
    ))
}

fn row_key_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    or_rows_table(m, rng, false, row_key_order_in)
}

fn row_key_order_in(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let ts: Vec<Tab> = tables_with_rows(m, 2)
        .into_iter()
        .filter(Tab::has_pk)
        .collect();
    let t = pick(&ts, rng, "no primary-key table has two rows")?;
    let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
    let (a, b) = (t.rows[k - 1], t.rows[k]);
    m.swap_member(a, b, "row")?;
    Ok(Edit::new(
        At::Part(b.0),
        format!(
            "rows {} and {k} of {:?} trade places: keys out of order (a warning)",
            k - 1,
            t.name
        ),
    ))
}

// ------------------------------------------------------------- fixtures

/// The composite-key table of the valid corpus (`composite-key`) with its
/// five rows in key order, alone in the archive.
const MEMBERSHIPS: &str = r#"{"name":"memberships","sql":"CREATE TABLE memberships(team TEXT NOT NULL, user INTEGER NOT NULL, role TEXT, PRIMARY KEY(user, team))","columns":[{"name":"team","type":"TEXT","notnull":1,"pk":2},{"name":"user","type":"INTEGER","notnull":1,"pk":1},{"name":"role","type":"TEXT","notnull":0,"pk":0}],"dependencies":[],"rowidAlias":null,"count":5}"#;
const MEMBERSHIP_ROWS: [&str; 5] = [
    r#"{"team":"b","user":1,"role":"owner"}"#,
    r#"{"team":"c","user":1,"role":null}"#,
    r#"{"team":"a","user":2,"role":"member"}"#,
    r#"{"team":"B","user":10,"role":"member"}"#,
    r#"{"team":"a","user":10,"role":"member"}"#,
];

/// A row item of `table` (with `rowid` for a rowid table).
fn row_item(table: &'static str, index: i64, rowid: Option<i64>, row: &str) -> R<V> {
    let mut it = vec![
        ("kind", Value::from("row")),
        ("table", Value::from(table)),
        ("index", Value::from(index)),
        ("row", fx::j(row)?),
    ];
    if let Some(id) = rowid {
        it.push(("rowid", Value::from(id)));
    }
    Ok(fx::obj(it))
}

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let mut cases = index_and_count_cases(r);
    cases.extend(cell_cases(r));
    cases.extend(key_cases(r));
    build(cases)
}

/// Rows numbered and counted wrong (`row_index`, `row_count`).
fn index_and_count_cases(r: &Recs) -> Vec<Case> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    let split_notes = |r: &mut Recs| r.split(NOTES, 2);
    let no_counts = |s: &mut fx::Seal| s.counts = false;
    vec![
        c("row_index", 2, "/items/1/index")
            .set(NOTES, "/items/1/index", "2")
            .set(NOTES, "/items/2/index", "3"),
        c("row_index-first", 3, "/items/0/index")
            .note("the rows of users start at index 1")
            .set(USERS, "/items/0/index", "1")
            .set(USERS, "/items/1/index", "2"),
        c("row_index-across-parts", 3, "/items/0/index")
            .note("notes cut into two parts; the second starts at 3 instead of 2")
            .with(split_notes)
            .put("3"),
        c("row_count", 1, "/tables/0/count")
            .unsealed(no_counts)
            .with(Recs::count)
            .put("4"),
        c("row_count-over", 2, "/items/0")
            .unsealed(no_counts)
            .note("count 2 but three rows: reported on the part where the rows exceed the count")
            .with(Recs::count)
            .set(M, "/tables/0/count", "2"),
        c("row_count-empty-table", 1, "/tables/1/count")
            .unsealed(no_counts)
            .note("users has count 2 and no rows at all")
            .with(|r| {
                r.parts.remove(1);
                r.renumber();
                Ok(())
            }),
    ]
}

/// Rows whose members or cells break their columns (`row_columns`, `row_not_null`, `row_type`, `unsafe_integer`, `invalid_base64`).
fn cell_cases(r: &Recs) -> Vec<Case> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    vec![
        c("row_columns", 3, "/items/1/row").del(USERS, "/items/1/row/score"),
        c("row_columns-extra", 3, "/items/1/row").set(USERS, "/items/1/row/email", "null"),
        c("row_columns-case", 2, "/items/0/row")
            .note("a column spelled BODY in a row (row members match column names exactly)")
            .put(r#"{"BODY":"first","user_id":7}"#),
        c("row_columns-generated", 3, "/items/0/row")
            .note("a generated column's value in a row")
            .with(|r| {
                let slug = column("slug", "TEXT", 0, 0, Some("virtual"));
                r.set(M, "/tables/1/columns/-", slug)?;
                add_to_users_sql(r, "slug TEXT AS (lower(name))")
            })
            .set(USERS, "/items/0/row/slug", r#""ada""#),
        c("row_columns-excluded", 2, "/items/0/row")
            .note("an excluded column's value in a row")
            .set(M, "/excludedColumns", r#"{"notes":["body"]}"#)
            .with(|r| r.each_del(NOTES, 1, "/row/body")),
        c("row_columns-not-object", 2, "/items/1/row")
            .allow(&["content_hash_mismatch"])
            .put("[null,null]"),
        c("row_not_null", 3, "/items/1/row/name").put("null"),
        c("row_type", 2, "/items/0/row/body").put("1"),
        c("row_type-datetime-text", 3, "/items/1/row/joined")
            .note("text in a DATETIME column (NUMBER affinity): the producer refuses it")
            .with(|r| {
                r.set(M, "/tables/1/columns/-", column("joined", "DATETIME", 0, 0, None))?;
                add_to_users_sql(r, "joined DATETIME")?;
                r.each(USERS, "/row/joined", &Value::from(1_700_000_000))
            })
            .put(r#""2024-01-01 10:00:00""#),
        c("row_type-real-text", 3, "/items/0/row/score").put(r#""1.5""#),
        c("row_type-blob-in-text", 2, "/items/0/row/body").put(r#"{"blob":"Zmlyc3Q="}"#),
        c("row_type-bool", 3, "/items/0/row/avatar").put("true"),
        c("row_type-array", 3, "/items/0/row/avatar").put("[1]"),
        c("row_type-object", 3, "/items/0/row/avatar")
            .note("an object that is not {blob}")
            .put(r#"{"blob":"iVBORw0KGgo=","type":"png"}"#),
        c("unsafe_integer", 2, "/items/0/row/user_id").put("9007199254740992"),
        c("unsafe_integer-text", 2, "/items/0/row/user_id")
            .note("text in an INTEGER column")
            .put(r#""7""#),
        c("unsafe_integer-fraction", 2, "/items/0/row/user_id").put("7.5"),
        c("unsafe_integer-blob", 2, "/items/0/row/user_id")
            .note("a blob in an INTEGER column is unsafe_integer (FORMAT-BRIEF §7)")
            .put(r#"{"blob":"Bw=="}"#),
        c("unsafe_integer-rowid", 2, "/items/2/rowid").put("9007199254740994"),
        c("unsafe_integer-negative", 2, "/items/0/row/user_id").put("-9007199254740992"),
        c("invalid_base64", 3, "/items/0/row/avatar/blob")
            .note("the blob without padding")
            .put(r#""iVBORw0KGgo""#),
        c("invalid_base64-bits", 3, "/items/0/row/avatar/blob")
            .note("unused bits not zero (iVBORw0KGgp= instead of iVBORw0KGgo=)")
            .put(r#""iVBORw0KGgp=""#),
        c("invalid_base64-chunk", 4, "/items/0/data")
            .allow(&["binary_missing"])
            .note("chunk data with whitespace; the object's bytes cannot be read, so reporting it incomplete is allowed")
            .set(GREET, "/items/0/data", r#""aGVsbG8s\nIHdvcmxkCg==""#),
        c("invalid_base64-url-alphabet", 5, "/items/0/data")
            .allow(&["binary_missing"])
            .note("the URL-safe alphabet (- and _) in the first of logo.bin's two chunks; the object's bytes cannot be read, so reporting it incomplete is allowed; the second chunk's offset (4) is right")
            .set(LOGO0, "/items/0/data", r#""AAH7_w==""#),
    ]
}

/// Rows out of order or repeating a key (`rowid_order`, `duplicate_row_key`, `row_key_order`).
fn key_cases(r: &Recs) -> Vec<Case> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    let split_notes = |r: &mut Recs| r.split(NOTES, 2);
    vec![
        c("rowid_order", 2, "/items/2/rowid").put("2"),
        c("rowid_order-across-parts", 3, "/items/0/rowid")
            .with(split_notes)
            .put("4"),
        c("duplicate_row_key", 3, "/items/1/row").set(USERS, "/items/1/row/id", "3"),
        c("duplicate_row_key-rowid", 2, "/items/1/rowid").put("1"),
        c("duplicate_row_key-composite", 2, "/items/1/row")
            .with(|r| {
                r.set(M, "/tables", Value::Array(vec![fx::j(MEMBERSHIPS)?]))?;
                r.set(M, "/objects", Value::Array(Vec::new()))?;
                r.set(M, "/payloads", Value::Array(Vec::new()))?;
                let rows = (0..)
                    .zip(MEMBERSHIP_ROWS)
                    .map(|(i, row)| row_item("memberships", i, None, row))
                    .collect::<R<_>>()?;
                r.parts = vec![fx::part(Value::Array(rows))];
                r.renumber();
                Ok(())
            })
            .set(NOTES, "/items/1/row/team", r#""b""#),
        c("duplicate_row_key-across-parts", 4, "/items/0/row")
            .note("users cut into one row per part; the second row repeats key 3")
            .with(|r| r.split(USERS, 1))
            .set(USERS + 1, "/items/0/row/id", "3"),
        c("duplicate_row_key-rowid-unordered", 3, "/items/1/rowid")
            .also(&["rowid_order"])
            .note("notes rowids [1, 5] [3, 1]: out of order (an error for rowids) and 1 repeats across parts")
            .with(|r| {
                let x = row_item("notes", 2, Some(3), r#"{"body":"x","user_id":null}"#)?;
                r.set(NOTES, "/items/2", x)?;
                let dup = row_item("notes", 3, Some(1), r#"{"body":"dup","user_id":null}"#)?;
                r.set(NOTES, "/items/-", dup)?;
                r.split(NOTES, 2)
            }),
        c("duplicate_row_key-unordered", 4, "/items/1/row")
            .also(&["row_key_order"])
            .note("users cut into parts [3, 7] [5, 3]: out of key order (a warning) and 3 repeats across parts; finding the repeat needs the re-scan")
            .with(|r| {
                for (i, row) in [(2, r#"{"id":5,"name":"Cy","avatar":null,"score":0}"#), (3, r#"{"id":3,"name":"Dup","avatar":null,"score":0}"#)] {
                    r.set(USERS, "/items/-", row_item("users", i, None, row)?)?;
                }
                r.split(USERS, 2)
            }),
        c("duplicate_row_key-negative-zero", 3, "/items/1/row")
            .also(&["not_canonical"])
            .note("keys 0 and -0 are one value to SQLite (-0 is written as is, so the line is not canonical)")
            .set(USERS, "/items/0/row/id", "0")
            .set(USERS, "/items/1/row/id", "0")
            .raw(|ls| {
                ls[USERS] = fx::replace(&ls[USERS], br#""id":0,"name":"Bob""#, br#""id":-0,"name":"Bob""#)?;
                Ok(())
            }),
        c("row_key_order", 3, "/items/1/row")
            .note("a warning: users rows in descending key order")
            .with(|r| {
                if let Value::Array(items) = r.at(USERS, "/items")? {
                    items.reverse();
                }
                (0..2).try_for_each(|i| r.set(USERS, &format!("/items/{i}/index"), Value::from(i)))
            }),
        c("row_key_order-types", 3, "/items/1/row")
            .note("a warning: a text key before an integer key (SQLite orders numbers before text)")
            .set(M, "/tables/1/columns/0/type", r#""""#)
            .set(
                M,
                "/tables/1/sql",
                r#""CREATE TABLE users(id PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, score REAL)""#,
            )
            .set(USERS, "/items/0/row/id", r#""3""#),
    ]
}
