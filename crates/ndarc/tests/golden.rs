//! Golden outputs of `ndarc verify` in every format for archives whose
//! findings a person must act on: a `not_canonical` of each rule, a
//! truncated file. The expected outputs are in `testdata/verify/`;
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
    let file = format!("testdata/invalid/{name}.ndjson");
    for (format, ext) in [("human", "txt"), ("json", "json"), ("github", "github")] {
        let out = Command::new(env!("CARGO_BIN_EXE_ndarc"))
            .current_dir(root())
            .env("NO_COLOR", "1")
            .args(["verify", "--format", format, &file])
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
