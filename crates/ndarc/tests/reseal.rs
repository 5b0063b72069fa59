//! `ndarc canon --reseal`: canonicalize, then recompute counts, schema,
//! partCount and both hashes after a hand edit.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn ndarc(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ndarc"));
    cmd.args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("ndarc runs");
    if let Some(input) = stdin {
        use std::io::Write;
        // A usage error exits before reading: a broken pipe is fine.
        let _ = child.stdin.take().unwrap().write_all(input);
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndarc-reseal-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn example() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/valid/example.ndjson"
    ))
    .unwrap()
}

/// The example archive after a hand edit: a row removed from the notes
/// part, a table's SQL changed, the line pretty-printed (not canonical).
fn edited() -> Vec<u8> {
    let text = String::from_utf8(example()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut notes: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    notes["items"].as_array_mut().unwrap().pop();
    lines[1] = serde_json::to_string_pretty(&notes)
        .unwrap()
        .replace('\n', " ");
    lines[0] = lines[0].replace(
        "user_id INTEGER REFERENCES users(id))",
        "user_id INTEGER REFERENCES users (id))",
    );
    let mut out = lines.join("\n");
    out.push('\n');
    out.into_bytes()
}

fn codes(out: &Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_hand_edit_verifies_after_reseal() {
    let d = tmp("edit");
    let bad = d.join("edited.ndjson");
    std::fs::write(&bad, edited()).unwrap();
    let v = ndarc(&["verify", "--format", "json", bad.to_str().unwrap()], None);
    assert_eq!(v.status.code(), Some(1));
    let before = codes(&v);
    for c in [
        "not_canonical",
        "row_count",
        "schema_mismatch",
        "content_hash_mismatch",
        "archive_hash_mismatch",
    ] {
        assert!(before.iter().any(|x| x == c), "{c}: {before:?}");
    }
    let fixed = d.join("fixture.ndjson");
    let o = ndarc(
        &[
            "canon",
            "--reseal",
            bad.to_str().unwrap(),
            "-o",
            fixed.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = ndarc(&["verify", "--strict", fixed.to_str().unwrap()], None);
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
    let text = String::from_utf8(std::fs::read(&fixed).unwrap()).unwrap();
    assert!(text.contains("\"count\":1,"), "notes has one row now");
    // Standard input to standard output gives the same bytes.
    let piped = ndarc(&["canon", "--reseal"], Some(&edited()));
    assert_eq!(piped.status.code(), Some(0));
    assert_eq!(piped.stdout, std::fs::read(&fixed).unwrap());
    // A valid archive is its own reseal.
    let same = ndarc(&["canon", "--reseal", "-"], Some(&example()));
    assert_eq!(same.stdout, example());
}

#[test]
fn reseal_trusts_the_edit() {
    // A row made invalid by hand is sealed, not repaired: verify still
    // reports the row, and only the row.
    let text = String::from_utf8(example())
        .unwrap()
        .replace("\"Ada\"", "null");
    let o = ndarc(&["canon", "--reseal"], Some(text.as_bytes()));
    assert_eq!(o.status.code(), Some(0));
    let v = ndarc(&["verify", "--format", "json", "-"], Some(&o.stdout));
    assert_eq!(codes(&v), ["row_not_null"]);
}

#[test]
fn input_that_cannot_be_resealed() {
    let d = tmp("bad");
    let out = d.join("out.ndjson");
    // Not JSON: reported as canon reports it; no output file.
    let o = ndarc(
        &["canon", "--reseal", "-", "-o", out.to_str().unwrap()],
        Some(b"{\"a\":1}\n[1,\n"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("<stdin>:2:"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.exists());
    // JSON, but no manifest object.
    let o = ndarc(
        &["canon", "--reseal", "-", "-o", out.to_str().unwrap()],
        Some(b"[1]\n"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot reseal"));
    assert!(!out.exists());
    // --reseal with --check or --json is a usage error.
    for extra in ["--check", "--json"] {
        let o = ndarc(&["canon", "--reseal", extra, "-"], Some(&example()));
        assert_eq!(o.status.code(), Some(2), "{extra}");
    }
}
