use super::literal::{decimal_is_exact, SAFE};
use super::safety::unsafe_sql;
use super::tables::{parents_first, where_key, TableDef};
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
