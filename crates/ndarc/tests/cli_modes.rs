//! Issue 12 §3: outputs that hold archive data are created 0600 whatever
//! the umask (unless `--mode`); receipts, reports and indexes follow the
//! umask.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{example, s, Scratch, BIN};

/// Runs `ndarc ARGS` under `umask 000` in `dir`.
fn with_umask_000(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut script = String::from("umask 000; exec \"$0\"");
    for i in 1..=args.len() {
        script.push_str(&format!(" \"${i}\""));
    }
    std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ndarc")
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
}

#[test]
fn archive_outputs_are_private_reports_follow_the_umask() {
    let dir = Scratch::new("modes");
    let ex = example();
    let e = s(&ex);
    let run = |args: &[&str]| {
        let o = with_umask_000(&dir.0, args);
        assert!(
            o.status.code() == Some(0) || o.status.code() == Some(1),
            "{args:?}: {o:?}"
        );
    };
    run(&["gen", "--rows", "3", "-o", "gen.ndjson"]);
    run(&["gen", "--rows", "3", "-o", "gen640.ndjson", "--mode", "640"]);
    run(&["canon", e, "-o", "canon.ndjson"]);
    run(&["repart", "--part-bytes", "4K", e, "-o", "repart.ndjson"]);
    run(&["mutate", e, "-o", "mutant.ndjson"]);
    run(&[
        "mutate",
        e,
        "--all",
        "--outdir",
        "mutants",
        "--except",
        "line_too_long",
    ]);
    run(&["verify", "--receipt", "receipt.json", e]);
    run(&[
        "diff",
        e,
        "gen.ndjson",
        "--allow-product-mismatch",
        "-o",
        "diff.txt",
    ]);
    let accept_all = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/accept-all.sh");
    run(&[
        "fuzz-consumer",
        "--exec",
        s(&accept_all),
        "--runs",
        "1",
        "--outdir",
        "fuzz",
    ]);
    for (file, want) in [
        ("gen.ndjson", 0o600),
        ("gen640.ndjson", 0o640),
        ("canon.ndjson", 0o600),
        ("repart.ndjson", 0o600),
        ("mutant.ndjson", 0o600),
        ("mutants/sha256_mismatch.ndjson", 0o600),
        ("mutants/index.json", 0o666),
        ("receipt.json", 0o666),
        ("diff.txt", 0o666),
        ("fuzz/summary.json", 0o666),
    ] {
        assert_eq!(
            mode(&dir.path(file)),
            want,
            "{file}: {:o}",
            mode(&dir.path(file))
        );
    }
    let fed: Vec<String> = std::fs::read_dir(dir.path("fuzz"))
        .expect("outdir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ndjson"))
        .collect();
    assert!(!fed.is_empty());
    for f in fed {
        assert_eq!(mode(&dir.path(&format!("fuzz/{f}"))), 0o600, "{f}");
    }
}
