//! The generated databases against the reference producer: every database
//! `fuzzdb` plans as archivable packs into an archive that verifies, and
//! every database it plans to be refused is refused with the planned code.

use ndarc_sqlite::fuzzdb::{for_run, FuzzOptions, Refusal};
use ndarc_sqlite::pack::{pack, PackOptions};

#[test]
fn pack_agrees_with_the_plans() {
    let dir = std::env::temp_dir().join(format!("ndarc-fuzzdb-pack-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = FuzzOptions::default();
    let opts = PackOptions {
        product: Some("fuzz".into()),
        exported_at: Some("2026-01-01T00:00:00.000Z".into()),
        ..PackOptions::default()
    };
    let verify = ndarc_verify::Options {
        jobs: 1,
        ..ndarc_verify::Options::default()
    };
    let mut seen = Vec::new();
    for run in 0..120 {
        let db = for_run(11, run, &o);
        let path = dir.join(format!("{run}.db"));
        db.spec.write(&path).unwrap();
        let mut out = Vec::new();
        let got = pack(&path, &opts, &mut out);
        match (db.refusal, got) {
            (None, Ok(summary)) => {
                let r = ndarc_verify::verify_bytes(&out, &verify);
                assert!(
                    r.is_valid(false),
                    "run {run}: {:?}\n{}",
                    r.findings.first(),
                    db.spec.describe()
                );
                assert_eq!(
                    r.content_hash.as_deref(),
                    Some(summary.content_hash.as_str())
                );
            }
            (Some(plan), Err(e)) => {
                assert_eq!(e.code(), plan.code(), "run {run}: {}", e.message());
                seen.push(plan);
            }
            (None, Err(e)) => panic!("run {run}: refused: {}: {}", e.code(), e.message()),
            (Some(plan), Ok(_)) => panic!("run {run}: {plan:?} was archived"),
        }
        let _ = std::fs::remove_file(&path);
    }
    for d in Refusal::ALL {
        assert!(seen.contains(&d), "{d:?}");
    }
}
