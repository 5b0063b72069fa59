//! Writes the fixtures of `testdata/invalid`
//! (`ndarc_gen::mutate::corpus_fixtures`: every one, each declared by the
//! mutate module of its SPEC.md section) from the base archive
//! `testdata/valid/base.ndjson`:
//!
//! ```text
//! cargo run -p ndarc-gen --example corpus -- --write testdata/invalid
//! cargo run -p ndarc-gen --example corpus -- --write /tmp/x --base other.ndjson
//! ```
//!
//! It writes each fixture's two files and removes nothing.
//! `scripts/make-corpus.py` writes `testdata/valid` and checks every
//! invalid fixture a second time (`--check DIR`); see `testdata/README.md`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let mut base = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/valid/base.ndjson"
    ));
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--write", Some(d)) => out = Some(d.into()),
            ("--base", Some(f)) => base = f.into(),
            _ => {
                eprintln!("usage: corpus --write DIR [--base FILE]");
                return ExitCode::from(2);
            }
        }
    }
    let Some(out) = out else {
        eprintln!("usage: corpus --write DIR [--base FILE]");
        return ExitCode::from(2);
    };
    match run(&base, &out) {
        Ok(n) => {
            eprintln!("wrote {n} invalid fixtures to {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("corpus: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(base: &std::path::Path, out: &std::path::Path) -> Result<usize, String> {
    let bytes = std::fs::read(base).map_err(|e| format!("cannot read {}: {e}", base.display()))?;
    let fixtures = ndarc_gen::mutate::corpus_fixtures(&bytes)?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for f in &fixtures {
        for (ext, data) in [("ndjson", &f.archive), ("json", &f.sidecar)] {
            let path = out.join(format!("{}.{ext}", f.name));
            std::fs::write(&path, data)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(fixtures.len())
}
