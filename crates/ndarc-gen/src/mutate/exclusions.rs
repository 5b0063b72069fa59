//! Mutations of SPEC.md §4.5: `excludedTables`, `excludedColumns` and
//! `requiredConfiguration`.

use ndarc_format::Code;
use ndarc_json::{Object, Value};

use crate::rng::Rng;

use super::edit::{
    col, flip_case, fresh_col_name, obj_mut, pick, s, sorted_utf16, strings, At, Edit, Model, Need,
    Obj, Tab, R, V,
};
use super::fixture::{add_to_users_sql, build, case, column, Fixture, Recs, M, NOTES, USERS};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        ExcludedTableOrder,
        "excluded_table_order",
        "excludedTables unsorted or repeated",
        excluded_table_order
    ),
    mutation!(
        ExcludedTablePresent,
        "excluded_table_present",
        "an archived table also excluded",
        excluded_table_present
    ),
    mutation!(
        ExcludedColumnUnknown,
        "excluded_column_unknown",
        "an excluded column of an unknown table or column",
        excluded_column_unknown
    ),
    mutation!(
        ExcludedColumnRequired,
        "excluded_column_required",
        "a NOT NULL, key or generated column excluded",
        excluded_column_required
    ),
    mutation!(
        ExcludedColumnDuplicate,
        "excluded_column_duplicate",
        "an excluded column listed twice",
        excluded_column_duplicate
    ),
    mutation!(
        DuplicateConfiguration,
        "duplicate_configuration",
        "requiredConfiguration repeats a name",
        duplicate_configuration
    ),
];

fn excluded_table_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let mut ex = m.typed().excluded_tables.clone();
    let what = match ex.len() {
        0 => {
            let a = m.fresh_table_name("ndarc_excluded_a");
            let b = m.fresh_table_name("ndarc_excluded_b");
            ex = vec![b, a];
            "two excluded tables in reverse name order".to_string()
        }
        1 => {
            ex.push(ex[0].clone());
            format!("{:?} excluded twice", ex[0])
        }
        len => {
            let k = 1 + rng.below(len as u64 - 1) as usize;
            ex.swap(k - 1, k);
            format!("excluded tables {:?} and {:?} swapped", ex[k], ex[k - 1])
        }
    };
    m.manifest.insert("excludedTables", strings(&ex));
    Ok(Edit::new(At::Manifest, what))
}

fn excluded_table_present(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    // A table no other table depends on, so that excluding it breaks no
    // foreign key.
    let free: Vec<Tab> = tabs
        .iter()
        .filter(|t| {
            !tabs.iter().any(|o| {
                o.dependencies
                    .iter()
                    .any(|d| d.eq_ignore_ascii_case(&t.name))
            })
        })
        .cloned()
        .collect();
    let t = m.table_or_new(&free, rng, "ndarc_mutant")?;
    let (name, how) = match flip_case(&t.name) {
        Some(f) if rng.one_in(2) => (f, " in another ASCII case"),
        _ => (t.name.clone(), ""),
    };
    let mut ex = m.typed().excluded_tables.clone();
    ex.push(name.clone());
    sorted_utf16(&mut ex);
    m.manifest.insert("excludedTables", strings(&ex));
    Ok(Edit::new(
        At::Manifest,
        format!("table {:?} is also listed in excludedTables{how}", t.name),
    ))
}

fn excluded_columns_mut(m: &mut Model) -> R<&mut Obj> {
    if !matches!(m.manifest.get("excludedColumns"), Some(Value::Object(_))) {
        m.manifest
            .insert("excludedColumns", Value::Object(Object::new()));
    }
    match m.manifest.get_mut("excludedColumns") {
        Some(Value::Object(o)) => Ok(o),
        _ => Err("no excludedColumns".to_string()),
    }
}

fn exclude(m: &mut Model, table: &str, column: &str, times: usize) -> R<()> {
    let ex = excluded_columns_mut(m)?;
    let mut list: Vec<V> = ex
        .get(table)
        .and_then(Value::as_array)
        .map(<[V]>::to_vec)
        .unwrap_or_default();
    for _ in 0..times {
        list.push(s(column));
    }
    ex.insert(table.to_string(), Value::Array(list));
    Ok(())
}

fn remove_cell(m: &mut Model, t: &Tab, column: &str) -> R<()> {
    for &at in &t.rows {
        m.row_mut(at)?.remove(column);
    }
    Ok(())
}

fn excluded_column_unknown(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    if tabs.is_empty() || rng.one_in(2) {
        let ghost = m.fresh_table_name("ghosts");
        exclude(m, &ghost, "x", 1)?;
        return Ok(Edit::new(
            At::Manifest,
            format!("excludedColumns names a table {ghost:?} the manifest lacks"),
        ));
    }
    let t = pick(&tabs, rng, "no table")?;
    let c = fresh_col_name(&t, "title");
    exclude(m, &t.name, &c, 1)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "excludedColumns names a column {c:?} that table {:?} lacks",
            t.name
        ),
    ))
}

fn excluded_column_required(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut notnull = Vec::new();
    let mut generated = Vec::new();
    let mut keys = Vec::new();
    for t in &tabs {
        for c in &t.cols {
            if c.excluded {
                continue;
            }
            if c.generated.is_some() {
                generated.push((t.clone(), c.clone()));
            } else if c.pk > 0 {
                keys.push((t.clone(), c.clone()));
            } else if c.notnull {
                notnull.push((t.clone(), c.clone()));
            }
        }
    }
    let mut kinds = Vec::new();
    if !notnull.is_empty() {
        kinds.push(0);
    }
    if !generated.is_empty() {
        kinds.push(1);
    }
    if !keys.is_empty() {
        kinds.push(2);
    }
    if kinds.is_empty() {
        kinds.push(3);
    }
    match pick(&kinds, rng, "")? {
        0 => {
            let (t, c) = pick(&notnull, rng, "")?;
            exclude(m, &t.name, &c.name, 1)?;
            remove_cell(m, &t, &c.name)?;
            Ok(Edit::new(
                At::Manifest,
                format!(
                    "the NOT NULL column {}.{} is excluded (rows leave it out)",
                    t.name, c.name
                ),
            ))
        }
        1 => {
            let (t, c) = pick(&generated, rng, "")?;
            exclude(m, &t.name, &c.name, 1)?;
            Ok(Edit::new(
                At::Manifest,
                format!("the generated column {}.{} is excluded", t.name, c.name),
            ))
        }
        2 => {
            let (t, c) = pick(&keys, rng, "")?;
            exclude(m, &t.name, &c.name, 1)?;
            remove_cell(m, &t, &c.name)?;
            Ok(Edit::new(
                At::Manifest,
                format!(
                    "the primary-key column {}.{} is excluded (rows leave it out, so row keys collapse)",
                    t.name, c.name
                ),
            )
            .allow(&[Code::DuplicateRowKey, Code::RowKeyOrder]))
        }
        _ => {
            let t = m.some_table(rng)?;
            let name = fresh_col_name(&t, "ndarc_generated");
            let mut c = col(&name, "TEXT", 0, 0);
            obj_mut(&mut c).need("")?.insert("generated", s("virtual"));
            m.columns_mut(t.idx)?.push(c);
            exclude(m, &t.name, &name, 1)?;
            Ok(Edit::new(
                At::Manifest,
                format!(
                    "table {:?} gets a generated column {name:?}, and it is excluded",
                    t.name
                ),
            )
            // The column is not in the table's sql.
            .allow(&[Code::TableSql]))
        }
    }
}

fn excluded_column_duplicate(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let listed: Vec<(String, String)> = m
        .typed()
        .excluded_columns
        .iter()
        .flat_map(|(t, cs)| cs.iter().map(move |c| (t.clone(), c.clone())))
        .collect();
    if !listed.is_empty() && rng.one_in(2) {
        let (t, c) = pick(&listed, rng, "")?;
        exclude(m, &t, &c, 1)?;
        return Ok(Edit::new(
            At::Manifest,
            format!("the excluded column {t}.{c} listed a second time"),
        ));
    }
    let tabs = m.tabs();
    let mut choices = Vec::new();
    for t in &tabs {
        for c in t.plain_cols() {
            if !c.notnull {
                choices.push((t.clone(), c.clone()));
            }
        }
    }
    let (t, c) = m.column_or_new(&choices, rng)?;
    exclude(m, &t.name, &c.name, 2)?;
    remove_cell(m, &t, &c.name)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "column {}.{} excluded twice (rows leave it out)",
            t.name, c.name
        ),
    ))
}

fn duplicate_configuration(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let mut list = m.typed().required_configuration.clone();
    let name = if list.is_empty() {
        list.push("NDARC_KEY".to_string());
        "NDARC_KEY".to_string()
    } else {
        pick(&list, rng, "")?
    };
    let at = rng.below(list.len() as u64 + 1) as usize;
    list.insert(at, name.clone());
    m.manifest.insert("requiredConfiguration", strings(&list));
    Ok(Edit::new(
        At::Manifest,
        format!("requiredConfiguration lists {name:?} twice"),
    ))
}

// ------------------------------------------------------------- fixtures

/// Fixtures that only set a list of the manifest: name, the sidecar's
/// pointer (inside that list), the list.
#[rustfmt::skip]
const PLAIN: [(&str, &str, &str); 7] = [
    ("excluded_table_order", "/excludedTables/1", r#"["sessions","audit"]"#),
    ("excluded_table_order-duplicate", "/excludedTables/1", r#"["sessions","sessions"]"#),
    ("excluded_table_present", "/excludedTables/0", r#"["notes","sessions"]"#),
    ("excluded_table_present-case", "/excludedTables/0", r#"["NOTES","sessions"]"#),
    ("excluded_column_unknown", "/excludedColumns/ghosts", r#"{"ghosts":["x"]}"#),
    ("excluded_column_unknown-column", "/excludedColumns/notes/0", r#"{"notes":["title"]}"#),
    ("duplicate_configuration", "/requiredConfiguration/1", r#"["MAIL_KEY","MAIL_KEY"]"#),
];

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    // The manifest member `ptr` is inside (its first token) set to `json`.
    let c = |name, ptr: &'static str, json| {
        let member = ptr.split('/').nth(1).unwrap_or_default();
        case(r, name, 1, ptr).set(M, &format!("/{member}"), json)
    };
    let mut cases: Vec<_> = PLAIN
        .into_iter()
        .map(|(name, ptr, json)| c(name, ptr, json))
        .collect();
    cases.extend([
        c(
            "excluded_column_required",
            "/excludedColumns/users/0",
            r#"{"users":["name"]}"#,
        )
        .note("a NOT NULL column is excluded (rows leave it out as excluded columns)")
        .with(|r| r.each_del(USERS, 0, "/row/name")),
        c(
            "excluded_column_required-pk",
            "/excludedColumns/users/0",
            r#"{"users":["id"]}"#,
        )
        .note("the primary key is excluded (rows leave it out, so every row key is empty)")
        .allow(&["duplicate_row_key"])
        .with(|r| r.each_del(USERS, 0, "/row/id")),
        c(
            "excluded_column_required-generated",
            "/excludedColumns/users/0",
            r#"{"users":["slug"]}"#,
        )
        .with(|r| {
            r.set(
                M,
                "/tables/1/columns/-",
                column("slug", "TEXT", 0, 0, Some("virtual")),
            )?;
            add_to_users_sql(r, "slug TEXT AS (lower(name))")
        }),
        c(
            "excluded_column_duplicate",
            "/excludedColumns/notes/1",
            r#"{"notes":["body","body"]}"#,
        )
        .with(|r| r.each_del(NOTES, 0, "/row/body")),
    ]);
    build(cases)
}
