//! The table-sql judge against real shapes and against the attacks it
//! exists to refuse.

use ndarc_format::manifest::{Column, Generated, Table};
use ndarc_sql::{Refusal, TableSqlJudge, Trail};

fn col(name: &str, ty: &str, notnull: bool, pk: u32) -> Column {
    Column {
        name: name.into(),
        decl_type: ty.into(),
        notnull,
        pk,
        generated: None,
    }
}

fn gen(name: &str, ty: &str, g: Generated) -> Column {
    Column {
        generated: Some(g),
        ..col(name, ty, false, 0)
    }
}

fn table(name: &str, sql: &str, columns: Vec<Column>) -> Table {
    Table {
        name: name.into(),
        sql: sql.into(),
        columns,
        dependencies: vec![],
        rowid_alias: None,
        count: 0,
    }
}

/// A table `t` of one column `a` (no type) with `sql`.
fn t_a(sql: &str) -> Table {
    table("t", sql, vec![col("a", "", false, 0)])
}

fn refuse(judge: &TableSqlJudge, t: &Table) -> Refusal {
    match judge.judge(t) {
        Ok(()) => panic!("{:?} passed", t.sql),
        Err(r) => r,
    }
}

#[test]
fn real_shapes_pass() {
    let j = TableSqlJudge::new().unwrap();
    let ok = |t: Table| {
        if let Err(r) = j.judge(&t) {
            panic!("{:?}: {r}", t.sql);
        }
    };
    ok(t_a("CREATE TABLE t(a)"));
    ok(t_a("CREATE TABLE t(a);"));
    ok(t_a("CREATE TABLE t(a) ;  \n"));
    ok(t_a("create table T(a)"));
    ok(t_a("CREATE TABLE IF NOT EXISTS t(a)"));
    ok(t_a(
        "CREATE TABLE t(\n  a -- a comment inside the statement\n)",
    ));
    ok(t_a("CREATE TABLE \"t\" (a /* note */)"));
    ok(table(
        "Users",
        "CREATE TABLE \"Users\" (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE COLLATE NOCASE, team INTEGER REFERENCES teams(id) ON DELETE CASCADE, score REAL DEFAULT 0.5 CHECK (score >= 0), created TEXT DEFAULT CURRENT_TIMESTAMP, meta TEXT DEFAULT (json_object('a', 1)) CHECK (json_valid(meta)), FOREIGN KEY (team) REFERENCES teams(id) DEFERRABLE INITIALLY DEFERRED)",
        vec![
            col("id", "INTEGER", false, 1),
            col("email", "TEXT", true, 0),
            col("team", "INTEGER", false, 0),
            col("score", "REAL", false, 0),
            col("created", "TEXT", false, 0),
            col("meta", "TEXT", false, 0),
        ],
    ));
    ok(table(
        "m",
        "CREATE TABLE m(team TEXT NOT NULL, user INTEGER NOT NULL, role TEXT, PRIMARY KEY(user, team)) WITHOUT ROWID",
        vec![
            col("team", "TEXT", true, 2),
            col("user", "INTEGER", true, 1),
            col("role", "TEXT", false, 0),
        ],
    ));
    ok(table(
        "s",
        "CREATE TABLE s(id int PRIMARY KEY, body text, n any) STRICT",
        vec![
            // A STRICT table's key is NOT NULL.
            col("id", "INT", true, 1),
            col("body", "TEXT", false, 0),
            col("n", "ANY", false, 0),
        ],
    ));
    ok(table(
        "g",
        "CREATE TABLE g(a TEXT, b TEXT GENERATED ALWAYS AS (upper(a)) VIRTUAL, c INT AS (length(a) + abs(-1)) STORED, d AS (a ->> '$.x'))",
        vec![
            col("a", "TEXT", false, 0),
            gen("b", "TEXT", Generated::Virtual),
            gen("c", "INT", Generated::Stored),
            gen("d", "", Generated::Virtual),
        ],
    ));
    // AUTOINCREMENT: SQLite creates its sqlite_sequence with the first
    // such table, and an INSERT reads and writes it.
    for name in ["ai", "ai2"] {
        ok(table(
            name,
            &format!("CREATE TABLE {name}(a INTEGER PRIMARY KEY AUTOINCREMENT)"),
            vec![col("a", "INTEGER", false, 1)],
        ));
    }
    // The same judge, again: the database is empty between tables.
    ok(t_a("CREATE TABLE t(a)"));
}

#[test]
fn a_second_statement_or_text_after_the_table_is_refused() {
    let j = TableSqlJudge::new().unwrap();
    for (sql, what) in [
        (
            "CREATE TABLE t(a); ATTACH '/other.db' AS v; DROP TABLE v.users",
            Trail::Statement,
        ),
        (
            "CREATE TABLE t(a); CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT 1; END",
            Trail::Statement,
        ),
        ("CREATE TABLE t(a);\n.shell touch F\n-- ", Trail::DotCommand),
        ("CREATE TABLE t(a); -- trailing", Trail::Comment),
        ("CREATE TABLE t(a) /* x */", Trail::Comment),
        ("CREATE TABLE t(a);;", Trail::Statement),
    ] {
        let r = refuse(&j, &t_a(sql));
        match &r {
            Refusal::Trailing { what: w, at } => {
                assert_eq!(*w, what, "{sql:?}: {r}");
                assert!(*at >= 17, "{sql:?}: {r}");
            }
            other => panic!("{sql:?}: {other:?}"),
        }
    }
    let r = refuse(&j, &t_a("CREATE TABLE t(a); ATTACH '/x' AS v"));
    assert_eq!(
        r.to_string(),
        "holds a second statement after the CREATE TABLE (at character 19)"
    );
}

#[test]
fn many_statements_do_not_recurse() {
    // Connection::prepare would prepare the whole tail, one stack frame a
    // statement.
    let j = TableSqlJudge::new().unwrap();
    let sql = format!("CREATE TABLE t(a);{}", "SELECT 1;".repeat(200_000));
    assert!(matches!(refuse(&j, &t_a(&sql)), Refusal::Trailing { .. }));
}

#[test]
fn other_shapes_of_create_are_refused() {
    let j = TableSqlJudge::new().unwrap();
    assert_eq!(
        refuse(&j, &t_a("CREATE TABLE t AS SELECT 1 AS a")),
        Refusal::AsSelect
    );
    assert_eq!(refuse(&j, &t_a("CREATE TABLE temp.t(a)")), Refusal::Temp);
    assert_eq!(
        refuse(&j, &t_a("CREATE TABLE main.t(a)")),
        Refusal::SchemaName {
            written: "main".into()
        }
    );
    assert_eq!(
        refuse(&j, &t_a("CREATE TABLE \"main\" . t(a)")),
        Refusal::SchemaName {
            written: "\"main\"".into()
        }
    );
    assert_eq!(
        refuse(&j, &t_a("CREATE TABLE u(a)")),
        Refusal::OtherName {
            created: "u".into()
        }
    );
    assert!(matches!(
        refuse(&j, &t_a("CREATE TABLE /* hidden */ t(a)")),
        Refusal::NotAsStored { .. }
    ));
    // A comment before the `;` is part of the statement for SQLite.
    assert_eq!(
        refuse(&j, &t_a("CREATE TABLE t(a) -- c\n;")),
        Refusal::Trailing {
            what: Trail::Comment,
            at: 18
        }
    );
    assert!(matches!(
        refuse(&j, &t_a("CREATE TABLE t(a")),
        Refusal::Sqlite { .. }
    ));
    assert!(matches!(
        refuse(&j, &t_a("CREATE TABLE t(a)\0; ATTACH 'x' AS y")),
        Refusal::Nul { at: 17 }
    ));
    // The CREATE of a view (the lexical rule refuses it first; SQLite
    // refuses it too).
    assert!(
        refuse(&j, &t_a("CREATE VIEW t AS SELECT 1"))
            .to_string()
            .len()
            > 10
    );
}

#[test]
fn columns_are_compared_as_table_xinfo_reports_them() {
    let j = TableSqlJudge::new().unwrap();
    let base = || {
        table(
            "t",
            "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT NOT NULL, g AS (body || 'x') STORED)",
            vec![
                col("id", "INTEGER", false, 1),
                col("body", "TEXT", true, 0),
                gen("g", "", Generated::Stored),
            ],
        )
    };
    assert_eq!(j.judge(&base()), Ok(()));
    let mut t = base();
    t.columns[1].name = "Body".into();
    assert!(matches!(refuse(&j, &t), Refusal::Columns { .. }));
    let mut t = base();
    t.columns[1].decl_type = "BLOB".into();
    assert!(matches!(refuse(&j, &t), Refusal::Columns { .. }));
    let mut t = base();
    t.columns[1].notnull = false;
    assert!(matches!(refuse(&j, &t), Refusal::Columns { .. }));
    let mut t = base();
    t.columns[0].pk = 0;
    assert!(matches!(refuse(&j, &t), Refusal::Columns { .. }));
    let mut t = base();
    t.columns[2].generated = Some(Generated::Virtual);
    assert!(matches!(refuse(&j, &t), Refusal::Columns { .. }));
    let mut t = base();
    t.columns.pop();
    let r = refuse(&j, &t);
    assert_eq!(
        r.to_string(),
        "creates columns other than the manifest lists (3 columns, where the manifest lists 2)"
    );
    assert_eq!(j.judge(&base()), Ok(()));
}

#[test]
fn functions_outside_the_builtin_scalars_are_refused_in_every_expression() {
    let j = TableSqlJudge::new().unwrap();
    for f in [
        "writefile('/tmp/x', 'y')",
        "readfile('/etc/passwd')",
        "edit('x')",
        "load_extension('/tmp/x.so')",
        "fts3_tokenizer('x')",
    ] {
        let name = &f[..f.find('(').unwrap()];
        for (sql, columns, place) in [
            (
                format!("CREATE TABLE t(a DEFAULT ({f}))"),
                vec![col("a", "", false, 0)],
                "DEFAULT",
            ),
            (
                format!("CREATE TABLE t(a, CHECK ({f} IS NOT NULL))"),
                vec![col("a", "", false, 0)],
                "CHECK",
            ),
            (
                format!("CREATE TABLE t(a CHECK (a = {f}))"),
                vec![col("a", "", false, 0)],
                "CHECK",
            ),
            (
                format!("CREATE TABLE t(a, b AS ({f}))"),
                vec![col("a", "", false, 0), gen("b", "", Generated::Virtual)],
                "CHECK",
            ),
            (
                format!("CREATE TABLE t(a, b AS (coalesce(a, {f})) STORED)"),
                vec![col("a", "", false, 0), gen("b", "", Generated::Stored)],
                "CHECK",
            ),
        ] {
            let r = refuse(&j, &table("t", &sql, columns));
            match &r {
                Refusal::Function {
                    name: n, place: p, ..
                } => {
                    assert_eq!(n.to_ascii_lowercase(), name, "{sql}: {r}");
                    // SQLite sends a DEFAULT's functions to the authorizer
                    // when it creates the table (since 3.54; before, only
                    // the INSERT compiled them); CHECK and generated
                    // expressions always then.
                    assert!(p.contains(place), "{sql}: {r}");
                }
                other => panic!("{sql}: {other:?}"),
            }
        }
    }
    let r = refuse(
        &j,
        &t_a("CREATE TABLE t(a DEFAULT (load_extension('/tmp/x.so')))"),
    );
    assert_eq!(
        r.to_string(),
        "calls the function load_extension() in an expression of the table (a DEFAULT, CHECK or generated column), which is not one of SQLite's built-in scalar functions"
    );
    let r = refuse(
        &j,
        &t_a("CREATE TABLE t(a CHECK (writefile('/tmp/x', 'y')))"),
    );
    assert_eq!(
        r.to_string(),
        "calls the function writefile() in an expression of the table (a DEFAULT, CHECK or generated column), which SQLite does not know"
    );
}

#[test]
fn builtin_functions_pass_in_every_expression() {
    let j = TableSqlJudge::new().unwrap();
    let t = table(
        "t",
        "CREATE TABLE t(a TEXT DEFAULT (printf('%d', abs(random()) % 10)), b REAL DEFAULT (julianday('now')) CHECK (b > 0 AND round(b) = round(b)), c AS (json_extract(a, '$.x') -> '$' || lower(hex(a))), d INTEGER DEFAULT (unixepoch()) CHECK (d >= 0 OR iif(d, 1, 0)), e DEFAULT (sqrt(4) + pi()))",
        vec![
            col("a", "TEXT", false, 0),
            col("b", "REAL", false, 0),
            gen("c", "", Generated::Virtual),
            col("d", "INTEGER", false, 0),
            col("e", "", false, 0),
        ],
    );
    assert_eq!(j.judge(&t), Ok(()));
}
