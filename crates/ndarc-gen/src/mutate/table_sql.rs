//! Mutations of SPEC.md §4.3's `table_sql` rule: a table's `sql` that
//! starts with `CREATE TABLE` (so the lexical rule passes) but is not the
//! one plain `CREATE TABLE` of that table as SQLite's parser judges it: a
//! second statement, an ATTACH, a trigger, `AS SELECT`, a temporary table,
//! a schema name, another table's name, other columns, a function outside
//! SQLite's built-in scalars in a DEFAULT, CHECK or generated column, a
//! dot-command of the sqlite3 shell after a newline.

use ndarc_format::Code;
use ndarc_json::Value;

use crate::rng::Rng;

use super::edit::{col, fresh_col_name, obj_mut, pick, s, At, Edit, Model, Need, Tab, R};
use super::fixture::{build, case, column, Fixture, Recs, M};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        TableSql,
        "table_sql",
        "a second statement after a table's CREATE TABLE",
        second_statement
    ),
    mutation!(
        TableSql,
        "table_sql-attach",
        "an ATTACH and a DROP TABLE of the attached database after a table's CREATE TABLE",
        attach
    ),
    mutation!(
        TableSql,
        "table_sql-trigger",
        "a CREATE TRIGGER after a table's CREATE TABLE",
        trigger
    ),
    mutation!(
        TableSql,
        "table_sql-dot-command",
        "a sqlite3 shell dot-command (.shell) on a line after a table's CREATE TABLE",
        dot_command
    ),
    mutation!(
        TableSql,
        "table_sql-as-select",
        "a table's sql a CREATE TABLE … AS SELECT",
        as_select
    ),
    mutation!(
        TableSql,
        "table_sql-temp",
        "a table's sql creates the table in the temp schema",
        temp
    ),
    mutation!(
        TableSql,
        "table_sql-schema",
        "a table's sql names the main schema before the table",
        schema
    ),
    mutation!(
        TableSql,
        "table_sql-name",
        "a table's sql creates another table's name",
        other_name
    ),
    mutation!(
        TableSql,
        "table_sql-column",
        "a table's sql creates a column the manifest does not list",
        extra_column
    ),
    mutation!(
        TableSql,
        "table_sql-check",
        "a CHECK constraint calling readfile, writefile, edit or load_extension",
        function_check
    ),
    mutation!(
        TableSql,
        "table_sql-default",
        "a new column whose DEFAULT calls readfile, writefile, edit or load_extension",
        function_default
    ),
    mutation!(
        TableSql,
        "table_sql-generated",
        "a new generated column calling readfile, writefile, edit or load_extension",
        function_generated
    ),
];

/// Calls an application or extension registers, none a built-in scalar
/// function of SQLite.
const CALLS: [&str; 4] = [
    "writefile('/tmp/ndarc-mutant', 'x')",
    "readfile('/etc/passwd')",
    "edit('x', 'vi')",
    "load_extension('/tmp/ndarc-mutant.so')",
];

/// `sql` (a `CREATE TABLE` as `sqlite_schema` holds it) split after the
/// words `CREATE TABLE`: the table-name token and what follows it.
fn split_create(sql: &str) -> Option<(&str, &str)> {
    let rest = sql.trim_start();
    let rest = rest
        .get(..6)?
        .eq_ignore_ascii_case("CREATE")
        .then(|| &rest[6..])?;
    let rest = rest.trim_start();
    let rest = rest
        .get(..5)?
        .eq_ignore_ascii_case("TABLE")
        .then(|| &rest[5..])?;
    let rest = rest.trim_start();
    let end = match rest.as_bytes().first()? {
        q @ (b'"' | b'`') => {
            // A quoted name: the quote doubled inside it.
            let b = rest.as_bytes();
            let mut i = 1;
            loop {
                match b.get(i)? {
                    c if c == q && b.get(i + 1) == Some(q) => i += 2,
                    c if c == q => break i + 1,
                    _ => i += 1,
                }
            }
        }
        b'[' => rest.find(']')? + 1,
        _ => rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len()),
    };
    let (name, after) = rest.split_at(end);
    (!name.is_empty() && after.trim_start().starts_with('(')).then_some((name, after))
}

/// A table whose sql [`split_create`] reads (a new one when none does).
fn plain_table(m: &mut Model, rng: &mut Rng) -> R<Tab> {
    let tabs: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| split_create(&t.sql).is_some())
        .collect();
    m.table_or_new(&tabs, rng, "ndarc_mutant")
}

fn q(name: &str) -> String {
    ndarc_sql::quote_ident(name)
}

fn set_sql(m: &mut Model, t: &Tab, sql: String) -> R<()> {
    m.table_mut(t.idx)?.insert("sql", s(sql));
    Ok(())
}

/// Appends `tail` to the sql of some table.
fn append(m: &mut Model, rng: &mut Rng, tail: impl Fn(&Tab) -> String, what: &str) -> R<Edit> {
    let t = m.some_table(rng)?;
    let sql = format!("{}{}", t.sql, tail(&t));
    set_sql(m, &t, sql)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "the sql of table {:?} has {what} after its CREATE TABLE",
            t.name
        ),
    ))
}

fn second_statement(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    append(
        m,
        rng,
        |t| format!("; DELETE FROM {}", q(&t.name)),
        "a DELETE",
    )
}

fn attach(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    append(
        m,
        rng,
        |_| "; ATTACH '/tmp/ndarc-other.db' AS other; DROP TABLE other.users".to_string(),
        "an ATTACH and a DROP TABLE",
    )
}

fn trigger(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    append(
        m,
        rng,
        |t| {
            format!(
                "; CREATE TRIGGER ndarc_mutant AFTER INSERT ON {0} BEGIN DELETE FROM {0}; END",
                q(&t.name)
            )
        },
        "a CREATE TRIGGER",
    )
}

fn dot_command(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    append(
        m,
        rng,
        |_| ";\n.shell touch /tmp/ndarc-mutant\n-- ".to_string(),
        "a .shell command on its own line",
    )
}

fn as_select(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let cols: Vec<String> = t
        .cols
        .iter()
        .map(|c| format!("NULL AS {}", q(&c.name)))
        .collect();
    let cols = if cols.is_empty() {
        "NULL AS x".to_string()
    } else {
        cols.join(", ")
    };
    set_sql(
        m,
        &t,
        format!("CREATE TABLE {} AS SELECT {cols}", q(&t.name)),
    )?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "the sql of table {:?} is a CREATE TABLE … AS SELECT",
            t.name
        ),
    ))
}

/// Writes `prefix` before the table name in the sql of a table.
fn qualify(m: &mut Model, rng: &mut Rng, prefix: &str) -> R<Edit> {
    let t = plain_table(m, rng)?;
    let (name, after) = split_create(&t.sql).need("no CREATE TABLE")?;
    let sql = format!("CREATE TABLE {prefix}{name}{after}");
    set_sql(m, &t, sql)?;
    Ok(Edit::new(
        At::Manifest,
        format!("the sql of table {:?} names it {prefix}{name}", t.name),
    ))
}

fn temp(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    qualify(m, rng, "temp.")
}

fn schema(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    qualify(m, rng, "main.")
}

fn other_name(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = plain_table(m, rng)?;
    let (_, after) = split_create(&t.sql).need("no CREATE TABLE")?;
    let others: Vec<String> = m
        .all_table_names()
        .into_iter()
        .filter(|n| !n.eq_ignore_ascii_case(&t.name))
        .collect();
    let other = if others.is_empty() {
        m.fresh_table_name("ndarc_other")
    } else {
        pick(&others, rng, "no table")?
    };
    set_sql(m, &t, format!("CREATE TABLE {}{after}", q(&other)))?;
    Ok(Edit::new(
        At::Manifest,
        format!("the sql of table {:?} creates {other:?}", t.name),
    ))
}

/// The sql of `t` with the column definition `def` first.
fn with_first_column(t: &Tab, def: &str) -> R<String> {
    let (name, after) = split_create(&t.sql).need("no CREATE TABLE")?;
    let open = after.find('(').need("no column list")?;
    Ok(format!(
        "CREATE TABLE {name}{}({def}, {}",
        &after[..open],
        &after[open + 1..]
    ))
}

fn extra_column(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = plain_table(m, rng)?;
    let name = fresh_col_name(&t, "ndarc_extra");
    let sql = with_first_column(&t, &format!("{} TEXT", q(&name)))?;
    set_sql(m, &t, sql)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "the sql of table {:?} creates a column {name:?} the manifest does not list",
            t.name
        ),
    ))
}

fn function_check(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = plain_table(m, rng)?;
    let call = pick(&CALLS, rng, "")?;
    // A table constraint may follow every column and constraint: before
    // the parenthesis that closes the definition (the options after it,
    // WITHOUT ROWID and STRICT, have none).
    let close = t.sql.rfind(')').need("no column list")?;
    let sql = format!(
        "{}, CHECK ({call} IS NOT NULL){}",
        &t.sql[..close],
        &t.sql[close..]
    );
    set_sql(m, &t, sql)?;
    Ok(Edit::new(
        At::Manifest,
        format!("the sql of table {:?} has a CHECK calling {call}", t.name),
    ))
}

fn function_default(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = plain_table(m, rng)?;
    let call = pick(&CALLS, rng, "")?;
    let name = fresh_col_name(&t, "ndarc_default");
    let sql = with_first_column(&t, &format!("{} TEXT DEFAULT ({call})", q(&name)))?;
    set_sql(m, &t, sql)?;
    m.columns_mut(t.idx)?.insert(0, col(&name, "TEXT", 0, 0));
    for &at in &t.rows {
        m.row_mut(at)?.insert(name.clone(), Value::Null);
    }
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} gets a first column {name:?} whose DEFAULT calls {call} (rows hold null)",
            t.name
        ),
    ))
}

fn function_generated(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = plain_table(m, rng)?;
    let call = pick(&CALLS, rng, "")?;
    let name = fresh_col_name(&t, "ndarc_generated");
    let sql = with_first_column(&t, &format!("{} TEXT AS ({call})", q(&name)))?;
    set_sql(m, &t, sql)?;
    let mut c = col(&name, "TEXT", 0, 0);
    obj_mut(&mut c).need("")?.insert("generated", s("virtual"));
    m.columns_mut(t.idx)?.insert(0, c);
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} gets a first column {name:?}, generated by {call} (rows do not carry it)",
            t.name
        ),
    ))
}

// ------------------------------------------------------------- fixtures

const NOTES_SQL: &str = "CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))";
const USERS_SQL: &str =
    "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, score REAL)";

/// The fixtures of `testdata/invalid` for this rule, from the base
/// archive's records (tables `notes`, at 0, then `users`, at 1).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    // The fixture `name`: the sql of table `at` is `sql`.
    let fx = |name, at: usize, note, sql: String| {
        let pointer = if at == 0 {
            "/tables/0/sql"
        } else {
            "/tables/1/sql"
        };
        let v = s(sql);
        case(r, name, 1, pointer)
            .note(note)
            .with(move |r| r.set(M, pointer, v))
    };
    // The fixture `name`: users gets a last column `initial` generated by
    // `call`, in its sql and its columns (rows do not carry it).
    let generated = |name, note, call: &str| {
        let sql = USERS_SQL.replace(
            "score REAL",
            &format!("score REAL, initial TEXT AS ({call})"),
        );
        fx(name, 1, note, sql).with(|r| {
            r.set(
                M,
                "/tables/1/columns/-",
                column("initial", "TEXT", 0, 0, Some("virtual")),
            )
        })
    };
    build(vec![
        fx(
            "table_sql",
            0,
            "a DELETE after the CREATE TABLE",
            format!("{NOTES_SQL}; DELETE FROM users"),
        ),
        fx(
            "table_sql-attach",
            1,
            "an ATTACH and a DROP TABLE in the attached database after the CREATE TABLE",
            format!("{USERS_SQL}; ATTACH '/tmp/other.db' AS other; DROP TABLE other.users"),
        ),
        fx(
            "table_sql-trigger",
            0,
            "a CREATE TRIGGER after the CREATE TABLE",
            format!("{NOTES_SQL}; CREATE TRIGGER notes_wipe AFTER INSERT ON notes BEGIN DELETE FROM users; END"),
        ),
        fx(
            "table_sql-dot-command",
            0,
            "a dot-command on its own line: the sqlite3 shell runs it when a SQL patch holding the sql is piped in",
            format!("{NOTES_SQL};\n.shell touch /tmp/ndarc-pwned\n-- "),
        ),
        fx(
            "table_sql-comment",
            0,
            "a comment after the CREATE TABLE (sqlite_schema never holds one)",
            format!("{NOTES_SQL}; -- and more"),
        ),
        fx(
            "table_sql-as-select",
            0,
            "the table's columns and rows from a query",
            "CREATE TABLE notes AS SELECT 'x' AS body, 1 AS user_id".to_string(),
        ),
        fx(
            "table_sql-temp",
            0,
            "the table in the temp schema (CREATE TEMP TABLE is invalid_table_sql)",
            NOTES_SQL.replace("TABLE notes", "TABLE temp.notes"),
        ),
        fx(
            "table_sql-schema",
            0,
            "the table name qualified by the main schema",
            NOTES_SQL.replace("TABLE notes", "TABLE main.notes"),
        ),
        fx(
            "table_sql-name",
            0,
            "the sql of notes is the sql of users",
            USERS_SQL.to_string(),
        ),
        fx(
            "table_sql-column",
            1,
            "the sql declares score TEXT; the manifest (and the rows) say REAL",
            USERS_SQL.replace("score REAL", "score TEXT"),
        ),
        fx(
            "table_sql-writefile-default",
            0,
            "a DEFAULT calling writefile (an application function of the sqlite3 shell)",
            NOTES_SQL.replace("body TEXT", "body TEXT DEFAULT (writefile('/tmp/ndarc-pwned', 'x'))"),
        ),
        fx(
            "table_sql-readfile-check",
            1,
            "a CHECK calling readfile (an application function of the sqlite3 shell)",
            USERS_SQL.replace("NOT NULL", "NOT NULL CHECK (name <> readfile('/etc/passwd'))"),
        ),
        generated(
            "table_sql-edit-generated",
            "a generated column calling edit (an application function of the sqlite3 shell)",
            "edit(name, 'vi')",
        ),
        fx(
            "table_sql-load_extension-default",
            0,
            "a DEFAULT calling load_extension",
            NOTES_SQL.replace("body TEXT", "body TEXT DEFAULT (load_extension('/tmp/x.so'))"),
        ),
        fx(
            "table_sql-load_extension-check",
            1,
            "a CHECK calling load_extension",
            USERS_SQL.replace("score REAL", "score REAL, CHECK (load_extension('/tmp/x.so') IS NULL)"),
        ),
        generated(
            "table_sql-load_extension-generated",
            "a generated column calling load_extension",
            "load_extension('/tmp/x.so')",
        ),
    ])
}
