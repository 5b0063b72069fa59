//! Golden outputs of every format over small hand-written archive pairs in
//! `testdata/diff/`. `NDARC_BLESS=1 cargo test -p ndarc-diff --test golden`
//! rewrites the archives and the expected outputs.

use std::path::{Path, PathBuf};

use ndarc_diff::render::{self, RenderOptions};
use ndarc_diff::{diff_labeled, Options, Source};
use ndarc_format::catalogue::encode_base64;
use ndarc_format::hash::{hex, sha256};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/diff")
}

fn bless() -> bool {
    std::env::var_os("NDARC_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Compares `got` with the file `path`, or writes it when blessing.
/// Returns a message for each mismatch.
fn check(path: &Path, got: &[u8], failures: &mut Vec<String>) {
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, got).unwrap();
        return;
    }
    match std::fs::read(path) {
        Ok(want) if want == got => {}
        Ok(want) => failures.push(format!(
            "{} differs from the output; NDARC_BLESS=1 rewrites it.\n--- expected\n{}\n--- got\n{}",
            path.display(),
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(got)
        )),
        Err(e) => failures.push(format!("{}: {e}; NDARC_BLESS=1 writes it", path.display())),
    }
}

struct Table<'a> {
    name: &'a str,
    sql: &'a str,
    columns: &'a str,
    deps: &'a [&'a str],
    rowid_alias: Option<&'a str>,
    /// `(rowid, row JSON)`.
    rows: Vec<(Option<i64>, &'a str)>,
}

struct Archive<'a> {
    tables: Vec<Table<'a>>,
    /// `(bucket, key, bytes, httpMetadata JSON)`.
    objects: Vec<(&'a str, &'a str, &'a [u8], &'a str)>,
    payloads: Vec<(&'a str, &'a [u8])>,
    excluded_tables: &'a [&'a str],
    excluded_columns: &'a str,
    configuration: &'a [&'a str],
    exported_at: &'a str,
    rows_per_part: usize,
}

fn quote(s: &str) -> String {
    let mut o = Vec::new();
    ndarc_json::write_string(s, &mut o);
    String::from_utf8(o).unwrap()
}

fn list(names: &[&str]) -> String {
    format!(
        "[{}]",
        names.iter().map(|n| quote(n)).collect::<Vec<_>>().join(",")
    )
}

/// The archive's lines, then resealed (canonical form, counts, schema,
/// partCount and both hashes computed by ndarc-gen's reseal).
fn build(a: &Archive<'_>) -> Vec<u8> {
    let tables: Vec<String> = a
        .tables
        .iter()
        .map(|t| {
            format!(
                r#"{{"name":{},"sql":{},"columns":{},"dependencies":{},"rowidAlias":{},"count":0}}"#,
                quote(t.name),
                quote(t.sql),
                t.columns,
                list(t.deps),
                t.rowid_alias.map_or("null".into(), quote)
            )
        })
        .collect();
    let objects: Vec<String> = a
        .objects
        .iter()
        .map(|(b, k, bytes, http)| {
            format!(
                r#"{{"bucket":{},"key":{},"size":{},"sha256":"{}","httpMetadata":{},"customMetadata":{{}}}}"#,
                quote(b),
                quote(k),
                bytes.len(),
                hex(&sha256(bytes)),
                http
            )
        })
        .collect();
    let payloads: Vec<String> = a
        .payloads
        .iter()
        .map(|(n, bytes)| {
            format!(
                r#"{{"name":{},"size":{},"sha256":"{}"}}"#,
                quote(n),
                bytes.len(),
                hex(&sha256(bytes))
            )
        })
        .collect();
    let mut lines = vec![format!(
        r#"{{"kind":"manifest","format":"rer-portability","version":2,"product":"golden","exportedAt":"{}","sourceIdentity":"src-1","schema":"","tables":[{}],"objects":[{}],"payloads":[{}],"excludedTables":{},"excludedColumns":{},"requiredConfiguration":{},"partCount":0,"epoch":1,"journal":[]}}"#,
        a.exported_at,
        tables.join(","),
        objects.join(","),
        payloads.join(","),
        list(a.excluded_tables),
        a.excluded_columns,
        list(a.configuration)
    )];
    let mut index = 0;
    let mut part = |items: Vec<String>, lines: &mut Vec<String>| {
        lines.push(format!(
            r#"{{"kind":"part","index":{index},"items":[{}]}}"#,
            items.join(",")
        ));
        index += 1;
    };
    for t in &a.tables {
        for (chunk_no, chunk) in t.rows.chunks(a.rows_per_part.max(1)).enumerate() {
            let items = chunk
                .iter()
                .enumerate()
                .map(|(i, (rowid, row))| {
                    let rowid = rowid.map_or(String::new(), |r| format!(r#","rowid":{r}"#));
                    format!(
                        r#"{{"kind":"row","table":{},"index":{}{rowid},"row":{row}}}"#,
                        quote(t.name),
                        chunk_no * a.rows_per_part.max(1) + i
                    )
                })
                .collect();
            part(items, &mut lines);
        }
    }
    for (b, k, bytes, _) in &a.objects {
        part(
            vec![format!(
                r#"{{"kind":"object","bucket":{},"key":{},"offset":0,"data":"{}"}}"#,
                quote(b),
                quote(k),
                encode_base64(bytes)
            )],
            &mut lines,
        );
    }
    for (n, bytes) in &a.payloads {
        part(
            vec![format!(
                r#"{{"kind":"payload","name":{},"offset":0,"data":"{}"}}"#,
                quote(n),
                encode_base64(bytes)
            )],
            &mut lines,
        );
    }
    lines.push(r#"{"kind":"closing","partCount":0,"contentHash":"","archiveHash":""}"#.into());
    let text = lines.join("\n") + "\n";
    ndarc_testkit::reseal(text.as_bytes()).expect("reseal")
}

const NOTES_SQL: &str = "CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))";
const NOTES_COLS: &str = r#"[{"name":"body","type":"TEXT","notnull":0,"pk":0},{"name":"user_id","type":"INTEGER","notnull":0,"pk":0}]"#;
const LEGACY_SQL: &str = "CREATE TABLE legacy(rowid TEXT, value INTEGER)";
const LEGACY_COLS: &str = r#"[{"name":"rowid","type":"TEXT","notnull":0,"pk":0},{"name":"value","type":"INTEGER","notnull":0,"pk":0}]"#;
const LONG_BEFORE: &str = "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun by the old mill.";
const LONG_AFTER: &str = "The quick red fox jumps over the lazy dog, then naps in the warm afternoon sun by the new mill.";

fn before(rows_per_part: usize) -> Archive<'static> {
    let long =
        Box::leak(format!(r#"{{"body":{},"user_id":7}}"#, quote(LONG_BEFORE)).into_boxed_str());
    Archive {
        tables: vec![
            Table {
                name: "legacy",
                sql: LEGACY_SQL,
                columns: LEGACY_COLS,
                deps: &[],
                rowid_alias: Some("_rowid_"),
                rows: vec![(Some(1), r#"{"rowid":"a","value":1}"#), (Some(2), r#"{"rowid":"b","value":2}"#)],
            },
            Table {
                name: "notes",
                sql: NOTES_SQL,
                columns: NOTES_COLS,
                deps: &["users"],
                rowid_alias: Some("rowid"),
                rows: vec![
                    (Some(1), r#"{"body":"first","user_id":7}"#),
                    (Some(5), r#"{"body":null,"user_id":null}"#),
                    (Some(6), long),
                ],
            },
            Table {
                name: "old_stuff",
                sql: "CREATE TABLE old_stuff(id TEXT PRIMARY KEY, v REAL)",
                columns: r#"[{"name":"id","type":"TEXT","notnull":0,"pk":1},{"name":"v","type":"REAL","notnull":0,"pk":0}]"#,
                deps: &[],
                rowid_alias: None,
                rows: vec![(None, r#"{"id":"x|y","v":1.5}"#)],
            },
            Table {
                name: "users",
                sql: "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, bio TEXT)",
                columns: r#"[{"name":"id","type":"INTEGER","notnull":0,"pk":1},{"name":"name","type":"TEXT","notnull":1,"pk":0},{"name":"avatar","type":"BLOB","notnull":0,"pk":0},{"name":"bio","type":"TEXT","notnull":0,"pk":0}]"#,
                deps: &[],
                rowid_alias: None,
                rows: vec![
                    (None, r#"{"id":7,"name":"Ada","avatar":{"blob":"iVBORw=="},"bio":"naïve café"}"#),
                    (None, r#"{"id":8,"name":"Bob","avatar":null,"bio":"😀"}"#),
                ],
            },
        ],
        objects: vec![
            ("files", "gone.txt", b"bye\n", r#"{}"#),
            ("files", "greeting.txt", b"hello, world\n", r#"{"contentType":"text/plain"}"#),
        ],
        payloads: vec![("kv", b"{}")],
        excluded_tables: &["sessions"],
        excluded_columns: "{}",
        configuration: &["MAIL_KEY"],
        exported_at: "2026-01-02T03:04:05.678Z",
        rows_per_part,
    }
}

fn after() -> Archive<'static> {
    let long =
        Box::leak(format!(r#"{{"body":{},"user_id":7}}"#, quote(LONG_AFTER)).into_boxed_str());
    Archive {
        tables: vec![
            Table {
                name: "audit_log",
                sql: "CREATE TABLE audit_log(at INTEGER, what TEXT)",
                columns: r#"[{"name":"at","type":"INTEGER","notnull":0,"pk":0},{"name":"what","type":"TEXT","notnull":0,"pk":0}]"#,
                deps: &[],
                rowid_alias: Some("rowid"),
                rows: vec![(Some(1), r#"{"at":100,"what":"login"}"#), (Some(2), r#"{"at":200,"what":"logout"}"#)],
            },
            Table {
                name: "legacy",
                sql: LEGACY_SQL,
                columns: LEGACY_COLS,
                deps: &[],
                rowid_alias: Some("_rowid_"),
                rows: vec![(Some(1), r#"{"rowid":"a","value":1}"#), (Some(2), r#"{"rowid":"b","value":3}"#)],
            },
            Table {
                name: "notes",
                sql: NOTES_SQL,
                columns: NOTES_COLS,
                deps: &["users"],
                rowid_alias: Some("rowid"),
                rows: vec![
                    (Some(1), r#"{"body":"First","user_id":7}"#),
                    (Some(6), long),
                    (Some(9), r#"{"body":"tab\tand \"quotes\"","user_id":8}"#),
                ],
            },
            Table {
                name: "users",
                sql: "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, bio TEXT, email TEXT)",
                columns: r#"[{"name":"id","type":"INTEGER","notnull":0,"pk":1},{"name":"name","type":"TEXT","notnull":1,"pk":0},{"name":"avatar","type":"BLOB","notnull":0,"pk":0},{"name":"bio","type":"TEXT","notnull":0,"pk":0},{"name":"email","type":"TEXT","notnull":0,"pk":0}]"#,
                deps: &[],
                rowid_alias: None,
                rows: vec![
                    (None, r#"{"id":7,"name":"Ada","avatar":{"blob":"iVBORw0KGgo="},"email":"ada@example.com"}"#),
                    (None, r#"{"id":8,"name":"Bøb","avatar":null,"email":null}"#),
                ],
            },
        ],
        objects: vec![
            ("files", "greeting.txt", b"hello, world!\n", r#"{"contentType":"text/markdown"}"#),
            ("files", "new.txt", b"new\n", r#"{}"#),
        ],
        payloads: vec![("kv", br#"{"a":1}"#)],
        excluded_tables: &["sessions"],
        excluded_columns: r#"{"users":["bio"]}"#,
        configuration: &["MAIL_KEY", "SMS_KEY"],
        exported_at: "2026-02-03T04:05:06.789Z",
        rows_per_part: 2,
    }
}

/// The columns of `names`, all `TEXT` unless `name:TYPE`, the first the
/// primary key when `pk`.
fn cols(names: &[&str], pk: bool) -> &'static str {
    let list: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let (n, ty) = n.split_once(':').unwrap_or((n, "TEXT"));
            format!(
                r#"{{"name":"{n}","type":"{ty}","notnull":0,"pk":{}}}"#,
                u8::from(pk && i == 0)
            )
        })
        .collect();
    Box::leak(format!("[{}]", list.join(",")).into_boxed_str())
}

/// `columns`: a column added (`items.color`), dropped (`tags.weight`) and
/// renamed (`people.fullname` → `people.name`), with rows changed only by
/// that, rows with other changes too, and rows added and removed.
fn columns_case(later: bool) -> Archive<'static> {
    let (items_sql, items_cols, items_rows) = if later {
        (
            "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, color TEXT)",
            cols(&["id:INTEGER", "name", "color"], true),
            vec![
                (None, r#"{"id":1,"name":"pen","color":"red"}"#),
                (None, r#"{"id":2,"name":"mug","color":null}"#),
                (None, r#"{"id":4,"name":"bag","color":"blue"}"#),
            ],
        )
    } else {
        (
            "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT)",
            cols(&["id:INTEGER", "name"], true),
            vec![
                (None, r#"{"id":1,"name":"pen"}"#),
                (None, r#"{"id":2,"name":"cup"}"#),
                (None, r#"{"id":3,"name":"box"}"#),
            ],
        )
    };
    let (people_sql, people_cols, people_rows) = if later {
        (
            "CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, age INTEGER)",
            cols(&["id:INTEGER", "name", "age:INTEGER"], true),
            vec![
                (None, r#"{"id":1,"name":"Ada Lovelace","age":36}"#),
                (None, r#"{"id":2,"name":"Bob","age":40}"#),
            ],
        )
    } else {
        (
            "CREATE TABLE people(id INTEGER PRIMARY KEY, fullname TEXT, age INTEGER)",
            cols(&["id:INTEGER", "fullname", "age:INTEGER"], true),
            vec![
                (None, r#"{"id":1,"fullname":"Ada","age":36}"#),
                (None, r#"{"id":2,"fullname":"Bob","age":40}"#),
            ],
        )
    };
    let (tags_sql, tags_cols, tags_rows) = if later {
        (
            "CREATE TABLE tags(label TEXT)",
            cols(&["label"], false),
            vec![
                (Some(1), r#"{"label":"red"}"#),
                (Some(2), r#"{"label":"green"}"#),
                (Some(3), r#"{"label":"blue"}"#),
            ],
        )
    } else {
        (
            "CREATE TABLE tags(label TEXT, weight REAL)",
            cols(&["label", "weight:REAL"], false),
            vec![
                (Some(1), r#"{"label":"red","weight":1}"#),
                (Some(2), r#"{"label":"green","weight":0.5}"#),
                (Some(3), r#"{"label":"blue","weight":null}"#),
            ],
        )
    };
    let table = |name, sql, columns, rowid_alias, rows| Table {
        name,
        sql,
        columns,
        deps: &[],
        rowid_alias,
        rows,
    };
    Archive {
        tables: vec![
            table("items", items_sql, items_cols, None, items_rows),
            table("people", people_sql, people_cols, None, people_rows),
            table("tags", tags_sql, tags_cols, Some("rowid"), tags_rows),
        ],
        objects: vec![],
        payloads: vec![],
        excluded_tables: &[],
        excluded_columns: "{}",
        configuration: &[],
        exported_at: if later {
            "2026-03-02T00:00:00.000Z"
        } else {
            "2026-03-01T00:00:00.000Z"
        },
        rows_per_part: 2,
    }
}

/// `filters`: only rows, one object and one payload differ; the rowids of
/// `tags` were renumbered (its labels identify its rows), `audit` gained
/// a row.
fn filters_case(later: bool) -> Archive<'static> {
    let audit: Vec<(Option<i64>, &str)> = if later {
        vec![
            (Some(1), r#"{"at":1,"what":"a"}"#),
            (Some(2), r#"{"at":2,"what":"b"}"#),
            (Some(3), r#"{"at":3,"what":"c"}"#),
        ]
    } else {
        vec![
            (Some(1), r#"{"at":1,"what":"a"}"#),
            (Some(2), r#"{"at":2,"what":"b"}"#),
        ]
    };
    let tags: Vec<(Option<i64>, &str)> = if later {
        vec![
            (Some(10), r#"{"color":"cool","label":"blue"}"#),
            (Some(11), r#"{"color":"cool","label":"green"}"#),
            (Some(12), r#"{"color":"warm","label":"red"}"#),
        ]
    } else {
        vec![
            (Some(1), r#"{"color":"warm","label":"red"}"#),
            (Some(2), r#"{"color":"cool","label":"green"}"#),
            (Some(3), r#"{"color":"cool","label":"blue"}"#),
        ]
    };
    Archive {
        tables: vec![
            Table {
                name: "audit",
                sql: "CREATE TABLE audit(at INTEGER, what TEXT)",
                columns: cols(&["at:INTEGER", "what"], false),
                deps: &[],
                rowid_alias: Some("rowid"),
                rows: audit,
            },
            Table {
                name: "tags",
                sql: "CREATE TABLE tags(label TEXT, color TEXT)",
                columns: cols(&["label", "color"], false),
                deps: &[],
                rowid_alias: Some("rowid"),
                rows: tags,
            },
        ],
        objects: vec![("files", "a.txt", if later { b"two" } else { b"one" }, "{}")],
        payloads: vec![("kv", if later { br#"{"a":1}"# } else { b"{}" })],
        excluded_tables: &[],
        excluded_columns: "{}",
        configuration: &[],
        exported_at: "2026-04-01T00:00:00.000Z",
        rows_per_part: 2,
    }
}

/// Every format of the diff of the pair in `case`, with `opts`, the
/// contents of every added and removed row kept (as the CLI keeps them
/// for JSON; text shows them only when asked).
fn outputs(case: &Path, opts: &Options, suffix: &str, failures: &mut Vec<String>) {
    let (a, b) = (case.join("before.ndjson"), case.join("after.ndjson"));
    let opts = Options {
        row_contents: usize::MAX,
        ..opts.clone()
    };
    let d = diff_labeled(
        ("before.ndjson", Source::Path(&a)),
        ("after.ndjson", Source::Path(&b)),
        &opts,
    )
    .expect("diff");
    let plain = RenderOptions::default();
    let mut out = Vec::new();
    render::human(&d, &plain, &mut out).unwrap();
    check(&case.join(format!("human{suffix}.txt")), &out, failures);
    let mut out = Vec::new();
    render::json(&d, &mut out).unwrap();
    // The JSON is one valid document whose canonical form is the value's.
    let parsed = ndarc_json::parse(&out).expect("valid JSON");
    assert_eq!(
        ndarc_json::to_canonical_vec(&parsed),
        ndarc_json::to_canonical_vec(&render::json::value(&d))
    );
    check(&case.join(format!("diff{suffix}.json")), &out, failures);
    let mut out = Vec::new();
    render::markdown(&d, &plain, &mut out).unwrap();
    check(&case.join(format!("markdown{suffix}.md")), &out, failures);
    let mut out = Vec::new();
    render::github(&d, &mut out).unwrap();
    check(&case.join(format!("github{suffix}.txt")), &out, failures);
    let mut out = Vec::new();
    render::stat(&d, &plain, &mut out).unwrap();
    check(&case.join(format!("stat{suffix}.txt")), &out, failures);
    // --stat in the other formats.
    let mut out = Vec::new();
    render::json_stat(&d, &mut out).unwrap();
    check(&case.join(format!("stat{suffix}.json")), &out, failures);
    let mut out = Vec::new();
    render::markdown_stat(&d, &plain, &mut out).unwrap();
    check(&case.join(format!("stat{suffix}.md")), &out, failures);
    let mut out = Vec::new();
    render::stat_sql(&d, &plain, &mut out).unwrap();
    check(&case.join(format!("stat{suffix}.sql")), &out, failures);
    // Added and removed rows with their contents.
    let full = RenderOptions {
        full_rows: true,
        ..RenderOptions::default()
    };
    let mut out = Vec::new();
    render::human(&d, &full, &mut out).unwrap();
    check(
        &case.join(format!("human-full-rows{suffix}.txt")),
        &out,
        failures,
    );
    let mut out = Vec::new();
    render::markdown(&d, &full, &mut out).unwrap();
    check(
        &case.join(format!("markdown-full-rows{suffix}.md")),
        &out,
        failures,
    );
}

#[test]
fn golden_outputs() {
    let mut failures = Vec::new();
    let root = dir();
    // `changes`: a schema change (a column added, a table added and one
    // removed), a shadowed-rowid table (`_rowid_`), blob cells, long text
    // (word diff), unicode, a changed object and payload, exclusions and
    // configuration.
    let changes = root.join("changes");
    check(
        &changes.join("before.ndjson"),
        &build(&before(3)),
        &mut failures,
    );
    check(
        &changes.join("after.ndjson"),
        &build(&after()),
        &mut failures,
    );
    // `equal`: the same content in other part sizes.
    let equal = root.join("equal");
    check(
        &equal.join("before.ndjson"),
        &build(&before(3)),
        &mut failures,
    );
    check(
        &equal.join("after.ndjson"),
        &build(&before(1)),
        &mut failures,
    );
    let columns = root.join("columns");
    check(
        &columns.join("before.ndjson"),
        &build(&columns_case(false)),
        &mut failures,
    );
    check(
        &columns.join("after.ndjson"),
        &build(&columns_case(true)),
        &mut failures,
    );
    let filters = root.join("filters");
    check(
        &filters.join("before.ndjson"),
        &build(&filters_case(false)),
        &mut failures,
    );
    check(
        &filters.join("after.ndjson"),
        &build(&filters_case(true)),
        &mut failures,
    );
    if bless() || failures.is_empty() {
        outputs(&columns, &Options::default(), "", &mut failures);
        outputs(&changes, &Options::default(), "", &mut failures);
        outputs(
            &changes,
            &Options {
                ignore_tables: vec!["audit_*".into(), "OLD_*".into()],
                ignore_columns: vec!["*.email".into(), "notes.body".into()],
                keys_only: true,
                ..Options::default()
            },
            "-ignored",
            &mut failures,
        );
        outputs(&equal, &Options::default(), "", &mut failures);
        // --max-rows 1: the rows shown, with their contents.
        let (a, b) = (changes.join("before.ndjson"), changes.join("after.ndjson"));
        let d = diff_labeled(
            ("before.ndjson", Source::Path(&a)),
            ("after.ndjson", Source::Path(&b)),
            &Options {
                row_contents: 1,
                ..Options::default()
            },
        )
        .unwrap();
        let mut out = Vec::new();
        render::human(
            &d,
            &RenderOptions {
                colour: false,
                max_rows: Some(1),
                full_rows: false,
                max_bytes: None,
            },
            &mut out,
        )
        .unwrap();
        check(&changes.join("human-max-rows-1.txt"), &out, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn golden_pairs_say_what_they_should() {
    let a = build(&before(3));
    let b = build(&after());
    let d = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&b), &Options::default()).unwrap();
    assert!(!d.equal && d.schema_changed && d.has_differences());
    let users = d.tables.iter().find(|t| t.name == "users").unwrap();
    let scope = users.scope.as_ref().unwrap();
    assert_eq!(scope.only_before, vec!["bio"]);
    assert_eq!(scope.only_after, vec!["email"]);
    assert_eq!(users.changed.len(), 2);
    let legacy = d.tables.iter().find(|t| t.name == "legacy").unwrap();
    assert_eq!(legacy.changed[0].key, "2");
    let names: Vec<&str> = d.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["audit_log", "legacy", "notes", "old_stuff", "users"]
    );
    // Ignoring everything that differs in rows and schema leaves the rest.
    let all = Options {
        ignore_tables: vec!["*".into()],
        ..Options::default()
    };
    let d = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&b), &all).unwrap();
    assert!(d.tables.is_empty() && !d.schema_changed && d.objects.has_changes());
    let e = build(&before(1));
    let d = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&e), &Options::default()).unwrap();
    assert!(d.equal && !d.has_differences());
}

#[test]
fn columns_added_dropped_and_renamed_change_every_row() {
    let a = build(&columns_case(false));
    let b = build(&columns_case(true));
    let opts = Options {
        row_contents: usize::MAX,
        ..Options::default()
    };
    let d = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&b), &opts).unwrap();
    type Summary = (String, Vec<String>, Vec<bool>, String, Vec<String>);
    let summary = |d: &ndarc_diff::Diff| -> Vec<Summary> {
        d.tables
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.changed.iter().map(|c| c.key.clone()).collect(),
                    t.changed.iter().map(|c| c.columns_only).collect(),
                    t.columns_reason(),
                    t.changed
                        .iter()
                        .flat_map(|c| &c.cells)
                        .map(|c| {
                            format!(
                                "{}:{}→{}:{:?}",
                                c.column,
                                ndarc_json::to_canonical_string(&c.before),
                                ndarc_json::to_canonical_string(&c.after),
                                c.only
                            )
                        })
                        .collect(),
                )
            })
            .collect()
    };
    let want = vec![
        (
            "items".to_string(),
            vec!["[1]".to_string(), "[2]".to_string()],
            // [1] changed only by the columns, but holds a color.
            vec![false, false],
            "column color added".to_string(),
            // [2]'s color is null: not shown.
            vec![
                "color:null→\"red\":Some(After)".to_string(),
                "name:\"cup\"→\"mug\":None".to_string(),
            ],
        ),
        (
            "people".to_string(),
            vec!["[1]".to_string(), "[2]".to_string()],
            vec![false, true],
            "column fullname renamed to name".to_string(),
            vec!["name:\"Ada\"→\"Ada Lovelace\":None".to_string()],
        ),
        (
            "tags".to_string(),
            vec!["1".to_string(), "2".to_string(), "3".to_string()],
            // Row 3's weight was null.
            vec![false, false, true],
            "column weight removed".to_string(),
            vec![
                "weight:1→null:Some(Before)".to_string(),
                "weight:0.5→null:Some(Before)".to_string(),
            ],
        ),
    ];
    assert_eq!(summary(&d), want);
    let people = &d.tables[1];
    assert_eq!(people.changed[0].cells[0].column, "name");
    assert_eq!(d.schema.tables_changed[1].columns_renamed.len(), 1);
    assert!(d.schema.tables_changed[1].columns_added.is_empty());
    let items = &d.tables[0];
    assert_eq!(items.added_rows.len(), 1);
    assert_eq!(
        ndarc_json::to_canonical_string(&items.removed_rows[0]),
        r#"{"id":3,"name":"box"}"#
    );
    // The same when the rows of `items` are out of key order (matched
    // through the index, not the merge).
    let mut later = columns_case(true);
    later.tables[0].rows.reverse();
    later.rows_per_part = 1;
    let b2 = build(&later);
    let d2 = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&b2), &opts).unwrap();
    assert!(d2.tables[0].unordered);
    assert_eq!(summary(&d2), want);
    assert_eq!(d2.tables[0].added_rows, items.added_rows);
    assert_eq!(d2.tables[0].removed_rows, items.removed_rows);
    // Ignoring the added column: no row of `items` changes by columns.
    let ign = Options {
        ignore_columns: vec!["items.color".into()],
        ..Options::default()
    };
    let d3 = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&b), &ign).unwrap();
    assert_eq!(d3.tables[0].changed.len(), 1);
    assert!(!d3.tables[0].columns_differ());
    // Without contents asked for, none are kept.
    let d4 = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&b), &Options::default()).unwrap();
    assert!(d4.tables[0].added_rows.is_empty());
}

/// `people` gains a column `phone` that one row of three fills: every
/// format that lists changed rows shows that row's value (issue 24), in
/// key order or not.
#[test]
fn an_added_column_shows_the_values_rows_hold() {
    let case = |later: bool, reversed: bool| {
        let mut rows = if later {
            vec![
                (None, r#"{"id":1,"name":"Ada","phone":null}"#),
                (None, r#"{"id":2,"name":"Bob","phone":"555"}"#),
                (None, r#"{"id":3,"name":"Cy","phone":null}"#),
            ]
        } else {
            vec![
                (None, r#"{"id":1,"name":"Ada"}"#),
                (None, r#"{"id":2,"name":"Bob"}"#),
                (None, r#"{"id":3,"name":"Cy"}"#),
            ]
        };
        if reversed {
            rows.reverse();
        }
        let mut a = columns_case(later);
        a.tables = vec![Table {
            name: "people",
            sql: if later {
                "CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, phone TEXT)"
            } else {
                "CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT)"
            },
            columns: if later {
                cols(&["id:INTEGER", "name", "phone"], true)
            } else {
                cols(&["id:INTEGER", "name"], true)
            },
            deps: &[],
            rowid_alias: None,
            rows,
        }];
        a.rows_per_part = 1;
        build(&a)
    };
    let a = case(false, false);
    for reversed in [false, true] {
        let b = case(true, reversed);
        let d = diff_labeled(
            ("a", Source::Bytes(&a)),
            ("b", Source::Bytes(&b)),
            &Options::default(),
        )
        .unwrap();
        let t = &d.tables[0];
        assert_eq!(t.unordered, reversed);
        assert_eq!(t.changed.len(), 3);
        assert_eq!(t.columns_only(), 2);
        let shown: Vec<_> = t.changed.iter().filter(|c| !c.cells.is_empty()).collect();
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].key, "[2]");
        assert_eq!(
            shown[0].cells,
            vec![ndarc_diff::CellChange {
                column: "phone".into(),
                before: ndarc_json::Value::Null,
                after: ndarc_json::Value::String("555".to_string().into()),
                only: Some(ndarc_diff::Side::After),
            }]
        );
        let plain = RenderOptions::default();
        let text = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut out = Vec::new();
            f(&mut out);
            String::from_utf8(out).unwrap()
        };
        let human = text(&|o| render::human(&d, &plain, o).unwrap());
        assert!(
            human.contains("  ~ [2]\n      phone: (column added) → \"555\"\n"),
            "{human}"
        );
        assert!(
            human.contains("  2 rows changed only by the columns\n"),
            "{human}"
        );
        let md = text(&|o| render::markdown(&d, &plain, o).unwrap());
        assert!(
            md.contains(
                "| <code>&#91;2&#93;</code> | <code>phone</code> | *(column added)* | <code>\"555\"</code> |"
            ),
            "{md}"
        );
        let json = ndarc_json::to_canonical_string(&render::json::value(&d));
        assert!(
            json.contains(
                r#"{"cells":[{"after":"555","before":null,"column":"phone","columnOnlyIn":"after"}],"columnsOnly":false,"key":"[2]"}"#
            ),
            "{json}"
        );
        let stat = text(&|o| render::stat(&d, &plain, o).unwrap());
        assert!(stat.contains(" people.phone | ~1 cell\n"), "{stat}");
        // And the mirror image: the column removed shows what is lost.
        let m = diff_labeled(
            ("b", Source::Bytes(&b)),
            ("a", Source::Bytes(&a)),
            &Options::default(),
        )
        .unwrap();
        let human = text(&|o| render::human(&m, &plain, o).unwrap());
        assert!(
            human.contains("  ~ [2]\n      phone: \"555\" → (column removed)\n"),
            "{human}"
        );
    }
}

#[test]
fn filters_leave_out_what_they_name_and_keys_can_be_chosen() {
    let a = build(&filters_case(false));
    let b = build(&filters_case(true));
    let run = |o: Options| ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&b), &o);
    let d = run(Options::default()).unwrap();
    assert!(d.has_differences());
    assert_eq!(d.tables.len(), 2);
    // Every table ignored: the object and payload still differ.
    let d = run(Options {
        ignore_tables: vec!["*".into()],
        ..Options::default()
    })
    .unwrap();
    assert!(d.tables.is_empty() && d.has_differences());
    // And ignoring those too leaves no difference (exit status 0).
    let d = run(Options {
        ignore_tables: vec!["*".into()],
        ignore_objects: vec!["files/*".into()],
        ignore_payloads: vec!["kv".into()],
        ..Options::default()
    })
    .unwrap();
    assert!(!d.has_differences(), "{:?}", d.tables);
    assert_eq!(d.ignored.objects, ["files/a.txt"]);
    assert_eq!(d.ignored.payloads, ["kv"]);
    // --table: only the tables named.
    let d = run(Options {
        tables: vec!["AUD*".into()],
        ..Options::default()
    })
    .unwrap();
    let names: Vec<&str> = d.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["audit"]);
    assert_eq!(d.ignored.tables, ["tags"]);
    // The rowids of tags were renumbered: by rowid, every row differs; by
    // label, none.
    let only_tags = |keys: Vec<(String, Vec<String>)>| Options {
        tables: vec!["tags".into()],
        ignore_objects: vec!["*".into()],
        ignore_payloads: vec!["*".into()],
        keys,
        ..Options::default()
    };
    let d = run(only_tags(vec![])).unwrap();
    assert!(d.has_differences());
    let d = run(only_tags(vec![("TAGS".into(), vec!["label".into()])])).unwrap();
    assert!(!d.has_differences(), "{:?}", d.tables);
    // Matched by color (not unique), then by color and label.
    let e = run(only_tags(vec![("tags".into(), vec!["color".into()])])).unwrap_err();
    assert!(
        matches!(&e, ndarc_diff::Error::KeyNotUnique { key, .. } if key == r#"["cool"]"#),
        "{e}"
    );
    let d = run(only_tags(vec![(
        "tags".into(),
        vec!["color".into(), "label".into()],
    )]))
    .unwrap();
    assert!(!d.has_differences());
    let e = run(only_tags(vec![("tags".into(), vec!["nope".into()])])).unwrap_err();
    assert!(matches!(e, ndarc_diff::Error::Key(_)), "{e}");
    // Only the rowids differ: with the key chosen, no difference, though
    // the contentHashes differ.
    let mut later = filters_case(true);
    let earlier = filters_case(false);
    later.tables[0].rows = earlier.tables[0].rows.clone();
    later.objects = earlier.objects.clone();
    later.payloads = earlier.payloads.clone();
    let c = build(&later);
    let by_label = Options {
        keys: vec![("tags".into(), vec!["label".into()])],
        ..Options::default()
    };
    let d = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&c), &by_label).unwrap();
    assert!(!d.equal && !d.has_differences(), "{:?}", d.tables);
    assert_eq!(d.ignored.keys, ["tags=label"]);
    let d = ndarc_diff::diff(Source::Bytes(&a), Source::Bytes(&c), &Options::default()).unwrap();
    assert!(d.has_differences());
}
