//! Every table `fuzzdb` generates, packed by the reference producer, passes
//! the table-sql judge (SPEC.md §4.3, `table_sql`): the rule refuses what
//! no real database holds, not the shapes real databases have (keys of
//! every kind, WITHOUT ROWID, generated columns, foreign keys, lower-case
//! keywords, quoted and unicode names).

use ndarc_format::manifest::check_manifest_line;
use ndarc_format::{LineRef, LineReport, ManifestOptions, ManifestOutcome};
use ndarc_sqlite::fuzzdb::{generate, FuzzOptions};
use ndarc_sqlite::pack::{pack, PackOptions};

#[test]
fn every_packed_fuzzdb_table_passes_the_judge() {
    let dir = tempfile::tempdir().unwrap();
    let o = FuzzOptions::default();
    let opts = PackOptions {
        product: Some("fuzz".into()),
        exported_at: Some("2026-01-01T00:00:00.000Z".into()),
        ..PackOptions::default()
    };
    let judge = ndarc_sql::TableSqlJudge::new().unwrap();
    let mut judged = 0;
    for seed in 0..300 {
        let db = generate(seed, &o);
        let path = dir.path().join(format!("{seed}.db"));
        db.spec.write(&path).unwrap();
        let mut out = Vec::new();
        pack(&path, &opts, &mut out).unwrap_or_else(|e| panic!("seed {seed}: {}", e.message()));
        let line = &out[..out.iter().position(|&b| b == b'\n').unwrap()];
        let at = LineRef {
            line: 1,
            offset: 0,
            bytes: line,
        };
        let mut r = LineReport::new(at, 100);
        let ManifestOutcome::Read(m) =
            check_manifest_line(line, true, &mut r, &ManifestOptions::default())
        else {
            panic!("seed {seed}: no manifest");
        };
        for t in &m.tables {
            if let Err(refusal) = judge.judge(t) {
                panic!(
                    "seed {seed}: table {:?}: {refusal}\n{}\n{}",
                    t.name,
                    t.sql,
                    db.spec.describe()
                );
            }
            judged += 1;
        }
        let _ = std::fs::remove_file(&path);
    }
    assert!(judged > 300, "{judged} tables");
}
