use super::draw::{BLOB_TYPES, INT_TYPES, NUMBER_TYPES, SAFE, TEXT_TYPES};
use super::*;
use ndarc_format::Affinity;
use rusqlite::Connection;

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ndarc-fuzzdb-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn affinities_follow_the_seed() {
    assert_eq!(Affinity::of("FLOATING POINT"), Affinity::Integer);
    assert_eq!(Affinity::of("varchar(3)"), Affinity::Text);
    assert_eq!(Affinity::of(""), Affinity::Blob);
    assert_eq!(Affinity::of("DATETIME"), Affinity::Number);
    assert_eq!(Affinity::of("STRING"), Affinity::Number);
    assert_eq!(Affinity::of("REAL"), Affinity::Number);
}

#[test]
fn generation_is_deterministic_and_writable() {
    let o = FuzzOptions::default();
    for run in 0..60 {
        let a = for_run(9, run, &o);
        let b = for_run(9, run, &o);
        assert_eq!(a.spec, b.spec);
        let p = tmp(&format!("g{run}.db"));
        a.spec
            .write(&p)
            .unwrap_or_else(|e| panic!("run {run}: {e}"));
        let conn = Connection::open(&p).unwrap();
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type='table'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(n as usize >= a.spec.tables.len());
    }
}

#[test]
fn the_runs_cover_the_features() {
    let o = FuzzOptions::default();
    let specs: Vec<FuzzDb> = (0..200).map(|run| for_run(1, run, &o)).collect();
    let tables = || specs.iter().flat_map(|d| d.spec.tables.iter());
    assert!(tables().any(|t| t.without_rowid));
    assert!(tables().any(|t| t.pk.len() >= 2));
    assert!(tables().any(|t| t.pk.len() == 1 && t.inline_pk));
    assert!(tables().any(|t| t.has_rowids() && t.free_rowid_alias() == Some("oid")));
    assert!(tables().any(|t| t
        .columns
        .iter()
        .any(|c| c.generated.as_ref().is_some_and(|g| g.stored))));
    assert!(tables().any(|t| t
        .foreign_keys
        .iter()
        .any(|f| f.parent != f.parent.to_lowercase()
            && specs.iter().any(|d| d
                .spec
                .tables
                .iter()
                .any(|p| p.name != f.parent && p.name.eq_ignore_ascii_case(&f.parent))))));
    assert!(tables().any(|t| t.rows.is_empty() && t.virtual_using.is_none()));
    assert!(tables().any(|t| EXCLUDED_NAMES.contains(&t.name.as_str())));
    let cells = || tables().flat_map(|t| t.rows.iter().flat_map(|r| r.cells.iter()));
    assert!(cells().any(|c| *c == Cell::Blob(Vec::new())));
    assert!(cells().any(|c| *c == Cell::Text(String::new())));
    assert!(cells().any(|c| matches!(c, Cell::Real(x) if x.to_bits() == (-0.0f64).to_bits())));
    assert!(cells().any(|c| *c == Cell::Real(5e-324)));
    assert!(cells().any(|c| *c == Cell::Real(1e21)));
    assert!(cells().any(|c| *c == Cell::Int(i64::MAX)));
    assert!(cells().any(|c| *c == Cell::Int(-SAFE)));
    assert!(cells().any(|c| matches!(c, Cell::Text(s) if s.chars().any(|ch| ch as u32 > 0xffff))));
    assert!(cells().any(|c| matches!(c, Cell::Text(s) if s.len() > 16_000)));
    let decls: Vec<&str> = tables()
        .flat_map(|t| t.columns.iter().map(|c| c.decl.as_str()))
        .collect();
    for d in INT_TYPES
        .iter()
        .chain(TEXT_TYPES)
        .chain(BLOB_TYPES)
        .chain(NUMBER_TYPES)
    {
        assert!(decls.contains(d), "{d}");
    }
    for defect in Refusal::ALL {
        assert!(
            specs.iter().any(|d| d.refusal == Some(defect)),
            "{defect:?}"
        );
    }
}

#[test]
fn values_are_stored_with_the_classes_meant() {
    let p = tmp("classes.db");
    let db = must_refuse(3, &FuzzOptions::default(), Refusal::DatetimeText);
    db.spec.write(&p).unwrap();
    let conn = Connection::open(&p).unwrap();
    let t = db.spec.tables.last().unwrap();
    let ty: String = conn
        .query_row(
            &format!("SELECT typeof(at) FROM {}", quote(&t.name)),
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ty, "text");
}

#[test]
fn too_wide_passes_the_limit_and_shadowing_covers_all_aliases() {
    let o = FuzzOptions::default();
    let w = must_refuse(1, &o, Refusal::TooWide);
    let t = w.spec.tables.last().unwrap();
    let projected: usize = t.columns.iter().map(|c| quote(&c.name).len() + 3).sum();
    assert!(projected + 1024 > 100_000, "{projected}");
    for d in [Refusal::RowidShadowed, Refusal::CopyRowidShadowed] {
        let db = must_refuse(1, &o, d);
        let t = db.spec.tables.last().unwrap();
        assert_eq!(t.free_rowid_alias(), None);
        assert_eq!(t.pk.is_empty(), d == Refusal::RowidShadowed);
        db.spec.write(&tmp("shadow.db")).unwrap();
    }
}

#[test]
fn shrinking_keeps_the_failure_and_drops_the_rest() {
    let mut spec = generate(5, &FuzzOptions::default()).spec;
    // A needle: one table holding one marked row among nine.
    let col = |n: &str| Column {
        name: n.to_string(),
        decl: "TEXT".to_string(),
        not_null: false,
        generated: None,
    };
    spec.tables.push(Table {
        name: "needle".to_string(),
        columns: vec![col("a"), col("b"), col("c")],
        pk: Vec::new(),
        inline_pk: false,
        without_rowid: false,
        foreign_keys: Vec::new(),
        rows: (0..9)
            .map(|i| Row {
                rowid: Some(i),
                cells: vec![
                    Cell::Null,
                    Cell::Text(if i == 6 { "!" } else { "" }.into()),
                    Cell::Null,
                ],
            })
            .collect(),
        virtual_using: None,
        lower_keywords: false,
        sql: None,
    });
    let fails = |s: &DbSpec| {
        s.tables.iter().any(|t| {
            t.name == "needle"
                && t.rows
                    .iter()
                    .any(|r| r.cells.contains(&Cell::Text("!".into())))
        })
    };
    let (small, tries) = shrink(&spec, 1000, fails);
    assert!(fails(&small));
    assert_eq!(small.tables.len(), 1);
    assert_eq!(small.tables[0].rows.len(), 1);
    assert_eq!(small.tables[0].columns.len(), 1);
    assert!(tries > 0 && tries < 1000);
}
