//! Mutations of SPEC.md §5.2 and §5.3: row items (index, count, columns,
//! cells, rowids) and row keys.

use ndarc_format::catalogue::{encode_base64, Affinity};
use ndarc_format::Code;
use ndarc_json::{Object, Value};

use crate::rng::Rng;

use super::edit::{
    col, fresh_col_name, n, obj, pick, s, some_bytes, str_at, At, Bin, BinKind, Col, Edit, Model,
    Need, Tab, R, V,
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
            format!("CREATE TABLE \"{name}\" (msg TEXT NOT NULL, n INTEGER, data BLOB, r REAL)"),
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
                "CREATE TABLE \"{name}\" (id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER, data BLOB, r REAL)"
            ),
        )
    };
    let t = m.add_table(&name, cols, sql)?;
    let earlier: Vec<String> = m.tabs().into_iter().take(t).map(|x| x.name).collect();
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
        .filter(|c| c.excluded && !c.generated)
        .map(|c| c.name.clone())
        .collect();
    let generated: Vec<String> = t
        .cols
        .iter()
        .filter(|c| c.generated)
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
            if c.ty.is_empty() { "no type" } else { &c.ty },
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
        .filter(|t| t.alias.is_some())
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
        .filter(|t| t.alias.is_some())
        .collect();
    let t = pick(&ts, rng, "no rowid table has two rows")?;
    let k = 1 + rng.below(t.rows.len() as u64 - 1) as usize;
    let (a, b) = (t.rows[k - 1], t.rows[k]);
    let ra = m
        .item(a.0, a.1)
        .and_then(|i| i.get("rowid"))
        .cloned()
        .need("")?;
    let rb = m
        .item(b.0, b.1)
        .and_then(|i| i.get("rowid"))
        .cloned()
        .need("")?;
    m.item_mut(a.0, a.1)?.insert("rowid", rb);
    m.item_mut(b.0, b.1)?.insert("rowid", ra);
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
    let rowid: Vec<Tab> = all.iter().filter(|t| t.alias.is_some()).cloned().collect();
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
    let ra = m
        .item(a.0, a.1)
        .and_then(|i| i.get("row"))
        .cloned()
        .need("")?;
    let rb = m
        .item(b.0, b.1)
        .and_then(|i| i.get("row"))
        .cloned()
        .need("")?;
    m.item_mut(a.0, a.1)?.insert("row", rb);
    m.item_mut(b.0, b.1)?.insert("row", ra);
    Ok(Edit::new(
        At::Part(b.0),
        format!(
            "rows {} and {k} of {:?} trade places: keys out of order (a warning)",
            k - 1,
            t.name
        ),
    ))
}
