//! Golden outputs of `ndarc verify` in every format for archives whose
//! findings a person must act on: a `not_canonical` of each rule, a
//! truncated file, both hash mismatches. The expected outputs are in `testdata/verify/`;
//! `NDARC_BLESS=1 cargo test -p ndarc --test golden` rewrites them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bless() -> bool {
    std::env::var_os("NDARC_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Compares `got` with the file `path`, or writes it when blessing.
fn check(path: &Path, got: &str, failures: &mut Vec<String>) {
    if bless() {
        std::fs::write(path, got).unwrap();
        return;
    }
    match std::fs::read_to_string(path) {
        Ok(want) if want == got => {}
        Ok(want) => failures.push(format!(
            "{} differs from the output; NDARC_BLESS=1 rewrites it.\n--- expected\n{want}\n--- got\n{got}",
            path.display()
        )),
        Err(e) => failures.push(format!("{}: {e}; NDARC_BLESS=1 writes it", path.display())),
    }
}

/// The timing of the human summary (` in 0.01s (3 MB/s)`), which varies,
/// as ` in TIME`.
fn untimed_human(s: &str) -> String {
    s.lines()
        .map(|l| match l.rfind(" in ") {
            Some(k) if l[k..].ends_with("s") || l[k..].ends_with(')') => {
                let tail = &l[k + 4..];
                if tail.starts_with(|c: char| c.is_ascii_digit()) {
                    format!("{} in TIME\n", &l[..k])
                } else {
                    format!("{l}\n")
                }
            }
            _ => format!("{l}\n"),
        })
        .collect()
}

/// Every `elapsedSeconds` as 0.
fn untime(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "elapsedSeconds" {
                    *x = serde_json::json!(0);
                } else {
                    untime(x);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(untime),
        _ => {}
    }
}

fn untimed_json(s: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(s).expect("verify --format json");
    untime(&mut v);
    let mut out = serde_json::to_string_pretty(&v).unwrap();
    out.push('\n');
    out
}

/// Runs `ndarc verify --format FORMAT testdata/invalid/NAME.ndjson` from
/// the repository's root (so the file name in the output is stable) and
/// checks each format's output and exit status against `testdata/verify/`.
fn golden(name: &str, failures: &mut Vec<String>) {
    golden_of(&format!("testdata/invalid/{name}.ndjson"), name, failures);
}

/// As [`golden`], for the archive `file` (relative to the repository's
/// root) and the golden files `testdata/verify/NAME.*`.
fn golden_of(file: &str, name: &str, failures: &mut Vec<String>) {
    for (format, ext) in [("human", "txt"), ("json", "json"), ("github", "github")] {
        let out = Command::new(env!("CARGO_BIN_EXE_ndarc"))
            .current_dir(root())
            .env("NO_COLOR", "1")
            .args(["verify", "--format", format, file])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{name} {format}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let got = match format {
            "human" => untimed_human(&stdout),
            "json" => untimed_json(&stdout),
            _ => stdout,
        };
        check(
            &root().join(format!("testdata/verify/{name}.{ext}")),
            &got,
            failures,
        );
    }
}

fn run(names: &[&str]) {
    let mut failures = Vec::new();
    for name in names {
        golden(name, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn not_canonical_of_each_rule() {
    // whitespace, number spelling, string escape, member order
    run(&[
        "not_canonical",
        "not_canonical-number",
        "not_canonical-exponent",
        "not_canonical-escape",
        "not_canonical-order",
        "not_canonical-code-point-order",
    ]);
}

#[test]
fn not_canonical_names_the_rule_pointer_and_texts() {
    // The golden files pin the whole output; this says what matters in it.
    let out = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .current_dir(root())
        .args([
            "verify",
            "--format",
            "json",
            "testdata/invalid/not_canonical-number.ndjson",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["files"][0]["findings"][0];
    assert_eq!(f["code"], "not_canonical");
    assert_eq!(f["pointer"], "/items/0/row/user_id");
    let m = f["message"].as_str().unwrap();
    assert!(
        m.contains("number spelling: found `7.0`, canonical `7`"),
        "{m}"
    );
    // The offset is the number's first byte.
    let bytes = std::fs::read(root().join("testdata/invalid/not_canonical-number.ndjson")).unwrap();
    let at = f["offset"].as_u64().unwrap() as usize;
    assert!(bytes[at..].starts_with(b"7.0"), "{at}");
}

#[test]
fn hash_mismatches_say_their_causes() {
    run(&["content_hash_mismatch", "archive_hash_mismatch"]);
}

/// `testdata/verify/truncated.ndjson`: the base archive cut at byte 2000,
/// in the middle of its third line (a download cut short). Written here,
/// from `valid/base.ndjson`, and checked like the outputs.
#[test]
fn a_truncated_file_leads_with_closing_missing() {
    let mut failures = Vec::new();
    let base = std::fs::read(root().join("testdata/valid/base.ndjson")).unwrap();
    let cut = String::from_utf8(base[..2000].to_vec()).unwrap();
    let path = root().join("testdata/verify/truncated.ndjson");
    check(&path, &cut, &mut failures);
    golden_of(
        "testdata/verify/truncated.ndjson",
        "truncated",
        &mut failures,
    );
    // The closing cut in the middle: the cut line is counted as a part.
    golden("missing_final_newline-truncated", &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));

    let out = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .current_dir(root())
        .args([
            "verify",
            "--format",
            "json",
            "testdata/verify/truncated.ndjson",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["files"][0];
    let codes: Vec<&str> = f["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    // The cause first; where the file was cut next; what the rest would
    // have held folded into the cause.
    assert_eq!(
        codes,
        ["closing_missing", "missing_final_newline", "json_syntax"]
    );
    assert_eq!(f["errors"], 3);
    let m = f["findings"][0]["message"].as_str().unwrap();
    assert!(
        m.contains("6 findings that follow from it not listed (1 row_count, 4 binary_missing, 1 part_count_mismatch"),
        "{m}"
    );
}

#[test]
fn the_human_summary_labels_the_hashes_of_an_invalid_archive_computed() {
    let out = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .current_dir(root())
        .args(["verify", "testdata/invalid/content_hash_mismatch.ndjson"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let closing = "d9298a10d1b0735837dc4bd85dac641b0f3cef27a47e5d53a54f2f3f5b2fcffa";
    assert!(
        text.contains(&format!(
            ": computed contentHash 19707cb1d095e7ca1c2a60efdaae896ae092f8df5f8b53717a6b73be26158a6b (the closing says {closing})"
        )),
        "{text}"
    );
    assert!(text.contains(": computed archiveHash "), "{text}");
    assert!(text.contains("(as the closing says)"), "{text}");
    assert!(text.contains("an edit by hand"), "{text}");
    // A valid archive's hashes are the closing's: no label.
    let out = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .current_dir(root())
        .args(["verify", "testdata/valid/base.ndjson"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("base.ndjson: contentHash "), "{text}");
    assert!(!text.contains("computed"), "{text}");
}

#[test]
fn the_summary_counts_in_words_and_gives_no_rate_for_a_small_file() {
    let out = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .current_dir(root())
        .args(["verify", "testdata/invalid/not_canonical.ndjson"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(": INVALID: 1 error, 0 warnings; 2925 bytes,"),
        "{text}"
    );
    // A rate over 3 KB measures start-up, not throughput.
    assert!(!text.contains("MB/s"), "{text}");
}
