//! Round trips: `pack(unpack(a))` has the content of `a`, and
//! `unpack(pack(db))` holds the rows, rowids and bytes of `db`.

mod common;

use std::path::Path;

use common::*;
use ndarc_sqlite::pack::PackOptions;
use ndarc_sqlite::unpack::{unpack, UnpackOptions};
use proptest::prelude::*;
use rusqlite::types::Value as SqlValue;

/// Pack options that reproduce the header of `manifest`.
fn options_for(m: &ndarc_verify::Manifest) -> PackOptions {
    let mut o = opts();
    o.product = Some(m.product.clone());
    o.required_configuration = m.required_configuration.clone();
    o.secret_columns = m
        .excluded_columns
        .iter()
        .flat_map(|(t, cs)| cs.iter().map(move |c| (t.clone(), c.clone())))
        .collect();
    o
}

/// Every table's rows: `(rowid or NULL, cells…)` in rowid/key order, with
/// storage classes.
fn dump(db: &Path) -> Vec<(String, Vec<Vec<SqlValue>>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    names
        .into_iter()
        .map(|t| {
            let q = ndarc_sqlite::quote(&t);
            let without_rowid: bool = conn
                .query_row(
                    "SELECT wr FROM pragma_table_list WHERE name = ?1",
                    [&t],
                    |r| r.get(0),
                )
                .unwrap();
            let free = ["rowid", "_rowid_", "oid"].into_iter().find(|a| {
                conn.prepare(&format!(
                    "SELECT name FROM pragma_table_xinfo({})",
                    sql_str(&t)
                ))
                .unwrap()
                .query_map([], |r| r.get::<_, String>(0))
                .unwrap()
                .all(|n| !n.unwrap().eq_ignore_ascii_case(a))
            });
            let rowid = match (without_rowid, free) {
                (false, Some(a)) => a.to_string(),
                _ => "NULL".to_string(),
            };
            let sql = format!("SELECT {rowid}, * FROM {q} ORDER BY 1, 2");
            let mut st = conn.prepare(&sql).unwrap();
            let n = st.column_count();
            let rows = st
                .query_map([], |r| (0..n).map(|i| r.get::<_, SqlValue>(i)).collect())
                .unwrap()
                .collect::<Result<Vec<Vec<SqlValue>>, _>>()
                .unwrap();
            (t, rows)
        })
        .collect()
}

/// `archive` as SQLite reports its tables: the STRICT type names (`int`,
/// `integer`, `real`, `text`, `blob`, `any`) upper-cased and the sql
/// starting `CREATE TABLE `, resealed; `None` when nothing changes.
fn sqlite_types(archive: &[u8]) -> Option<Vec<u8>> {
    let end = archive.iter().position(|&b| b == b'\n')?;
    use ndarc_json::Value;
    let mut m = ndarc_json::parse(&archive[..end]).ok()?.into_owned();
    let mut changed = false;
    let Value::Object(mo) = &mut m else {
        return None;
    };
    if let Some(Value::Array(tables)) = mo.get_mut("tables") {
        for t in tables {
            let Value::Object(to) = t else { continue };
            // SQLite keeps a table's sql from its name on, after its own
            // `CREATE TABLE `.
            if let Some(Value::String(sql)) = to.get_mut("sql") {
                let words: Vec<&str> = sql
                    .splitn(3, char::is_whitespace)
                    .filter(|w| !w.is_empty())
                    .collect();
                let rest = sql.trim_start()[6..].trim_start()[5..]
                    .trim_start()
                    .to_string();
                if words.len() >= 2 && !sql.starts_with("CREATE TABLE ") {
                    *sql = format!("CREATE TABLE {rest}").into();
                    changed = true;
                }
            }
            let Some(Value::Array(cols)) = to.get_mut("columns") else {
                continue;
            };
            for c in cols {
                let Value::Object(co) = c else { continue };
                if let Some(Value::String(ty)) = co.get_mut("type") {
                    let up = ty.to_ascii_uppercase();
                    if ["INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY"].contains(&up.as_str())
                        && **ty != *up
                    {
                        *ty = up.into();
                        changed = true;
                    }
                }
            }
        }
    }
    if !changed {
        return None;
    }
    let mut out = ndarc_json::to_canonical_vec(&m);
    out.extend_from_slice(&archive[end..]);
    ndarc_testkit::reseal(&out).ok()
}

fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// pack(unpack(a)) has the contentHash of a, for generated archives
    /// SQLite can hold (no objects or payloads, whose metadata and names a
    /// file system does not keep; no excluded tables, which unpack does not
    /// create).
    #[test]
    fn pack_of_unpack_keeps_the_content(gen in ndarc_testkit::arb_options()) {
        let mut gen = gen;
        gen.objects = 0;
        gen.payloads = 0;
        gen.excluded_tables = false;
        gen.later = None;
        let (archive, summary) = ndarc_testkit::generate_vec(&gen).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.ndjson");
        std::fs::write(&a, &archive).unwrap();
        let db = dir.path().join("a.db");
        unpack(&a, &db, &UnpackOptions::default()).unwrap();
        let report = ndarc_verify::verify_bytes(&archive, &ndarc_verify::Options::default());
        let manifest = report.manifest.unwrap();
        let mut o = options_for(&manifest);
        o.part_bytes = gen.part_bytes;
        let (bytes, packed) = pack_vec(&db, &o).unwrap();
        assert_valid(&bytes);
        let expected = sqlite_types(&archive).map_or(summary.content_hash.clone(), |a| {
            ndarc_verify::verify_bytes(&a, &ndarc_verify::Options::default()).content_hash.unwrap()
        });
        prop_assert_eq!(&packed.content_hash, &expected);
        // The same part size gives the same parts too.
        let again = ndarc_verify::verify_bytes(&bytes, &ndarc_verify::Options::default());
        prop_assert_eq!(again.parts, report.parts);
    }

    /// unpack(pack(db)) holds the rows, rowids and bytes of db.
    #[test]
    fn unpack_of_pack_keeps_rows_rowids_and_bytes(
        rows in proptest::collection::vec(
            (
                -1_000_000i64..1_000_000,
                proptest::option::of(any::<i32>().prop_map(i64::from)),
                proptest::option::of("\\PC{0,20}"),
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
                proptest::option::of(-1e300f64..1e300),
                0u8..4,
            ),
            0..200,
        ),
        // Small parts (a row or a few each) and parts of many rows, so that
        // unpack inserts rows one at a time and in batches.
        part_bytes in prop_oneof![1024usize..8192, 8192usize..65536],
    ) {
        let (_d, p) = db("
            CREATE TABLE r(i INTEGER, t TEXT, b BLOB, f REAL, n NUMERIC, any_);
            CREATE TABLE k(id TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID;
            CREATE TABLE g(id INTEGER PRIMARY KEY, x INT, y INT GENERATED ALWAYS AS (x * 2) STORED);
        ");
        {
            let conn = rusqlite::Connection::open(&p).unwrap();
            let mut seen = std::collections::HashSet::new();
            for (rowid, i, t, b, f, which) in &rows {
                if !seen.insert(*rowid) { continue; }
                let any: SqlValue = match which {
                    0 => SqlValue::Null,
                    1 => SqlValue::Integer(*rowid),
                    2 => t.clone().map_or(SqlValue::Null, SqlValue::Text),
                    _ => b.clone().map_or(SqlValue::Null, SqlValue::Blob),
                };
                conn.execute(
                    "INSERT INTO r(rowid, i, t, b, f, n, any_) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    rusqlite::params![rowid, i, t, b, f, f.map(|x| x.round()), any],
                ).unwrap();
                conn.execute("INSERT INTO k VALUES(?1, ?2)", rusqlite::params![format!("k{rowid}"), b]).unwrap();
                conn.execute("INSERT INTO g(id, x) VALUES(?1, ?2)", rusqlite::params![rowid, i]).unwrap();
            }
        }
        let (dir, a) = packed_file(&p, part_bytes);
        let back = dir.path().join("back.db");
        unpack(&a, &back, &UnpackOptions::default()).unwrap();
        prop_assert_eq!(dump(&back), dump(&p));
    }
}

#[test]
fn objects_and_payloads_round_trip_through_files() {
    let (d, p) = db("CREATE TABLE t(a TEXT); INSERT INTO t VALUES('x');");
    let up = d.path().join("up");
    std::fs::create_dir_all(up.join("img/2024")).unwrap();
    std::fs::write(up.join("img/2024/a.png"), vec![7u8; 5000]).unwrap();
    std::fs::write(up.join("empty"), b"").unwrap();
    std::fs::write(d.path().join("kv.json"), b"{\"a\":1}").unwrap();
    let mut o = opts();
    o.objects_dir = Some(up);
    o.bucket = Some("FILES".into());
    o.payloads = vec![("kv".into(), d.path().join("kv.json"))];
    o.part_bytes = 2048;
    let (bytes, s) = pack_vec(&p, &o).unwrap();
    assert_valid(&bytes);
    assert_eq!((s.objects, s.payloads), (2, 1));
    let a = d.path().join("a.ndjson");
    std::fs::write(&a, &bytes).unwrap();
    let files = d.path().join("files");
    let back = d.path().join("back.db");
    let u = unpack(
        &a,
        &back,
        &UnpackOptions {
            objects_dir: Some(files.clone()),
            ..UnpackOptions::default()
        },
    )
    .unwrap();
    assert_eq!((u.objects, u.payloads), (2, 1));
    assert_eq!(
        std::fs::read(files.join("objects/FILES/img/2024/a.png")).unwrap(),
        vec![7u8; 5000]
    );
    assert_eq!(
        std::fs::read(files.join("objects/FILES/empty")).unwrap(),
        b""
    );
    assert_eq!(
        std::fs::read(files.join("payloads/kv")).unwrap(),
        b"{\"a\":1}"
    );
    o.objects_dir = Some(files.join("objects/FILES"));
    o.payloads = vec![("kv".into(), files.join("payloads/kv"))];
    let (again, s2) = pack_vec(&back, &o).unwrap();
    assert_eq!(s2.content_hash, s.content_hash);
    assert_eq!(again, bytes);
    // An existing output is not replaced without force; nothing else is written.
    let e = unpack(&a, &back, &UnpackOptions::default()).unwrap_err();
    assert_eq!((e.code(), e.exit_code()), ("output_exists", 2));
    let e = unpack(
        &a,
        &d.path().join("other.db"),
        &UnpackOptions {
            objects_dir: Some(files.clone()),
            ..UnpackOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), "output_exists", "{e}");
    assert!(!d.path().join("other.db").exists());
}
