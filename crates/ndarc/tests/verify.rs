//! `ndarc verify` and `ndarc inspect` end to end.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn ndarc(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ndarc"));
    cmd.args(args)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("ndarc runs");
    if let Some(input) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input).unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

fn example() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/valid/example.ndjson"
    ))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndarc-verify-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn valid_archive_exits_0_with_summary() {
    let out = ndarc(&["verify", example().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains(": valid: 0 errors, 0 warnings"), "{s}");
    assert!(
        s.contains("contentHash 6d5f30061640eb03e628acc45a8f36240c2d80acbfd31931fec91184c12abeec"),
        "{s}"
    );
    assert!(!s.contains('\x1b'), "no colour in a pipe");
}

#[test]
fn invalid_archive_exits_1_with_positions() {
    let bytes = std::fs::read(example()).unwrap();
    let bad = String::from_utf8(bytes).unwrap().replace("\"Ada\"", "null");
    let out = ndarc(&["verify", "-"], Some(bad.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("<stdin>:3:"), "{s}");
    assert!(
        s.contains(
            "row_not_null: column users.name is NOT NULL but holds null (at /items/0/row/name)"
        ),
        "{s}"
    );
    let out = ndarc(&["verify", "--format", "github", "-"], Some(bad.as_bytes()));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.starts_with("::error file=<stdin>,line=3,title=row_not_null::"),
        "{s}"
    );
    let out = ndarc(&["verify", "--format", "json", "-"], Some(bad.as_bytes()));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], false);
    assert_eq!(v["files"][0]["findings"][0]["code"], "row_not_null");
    assert_eq!(v["files"][0]["findings"][0]["pointer"], "/items/0/row/name");
    let out = ndarc(&["verify", "-q", "-"], Some(bad.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn unreadable_inputs_exit_2() {
    let d = tmp("dir");
    let out = ndarc(&["verify", d.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(e.contains("not a regular file"), "{e}");
    let out = ndarc(&["verify", d.join("missing").to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    let out = ndarc(&["verify"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn receipt_is_written_atomically_and_not_overwritten() {
    let d = tmp("receipt");
    let r = d.join("r.json");
    let out = ndarc(
        &[
            "verify",
            "--receipt",
            r.to_str().unwrap(),
            example().to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let receipt: serde_json::Value = serde_json::from_slice(&std::fs::read(&r).unwrap()).unwrap();
    assert_eq!(
        receipt["contentHash"],
        "6d5f30061640eb03e628acc45a8f36240c2d80acbfd31931fec91184c12abeec"
    );
    assert_eq!(receipt["tables"][0]["name"], "notes");
    assert_eq!(receipt["tables"][0]["count"], 2);
    assert_eq!(receipt["exclusions"]["tables"][0], "sessions");
    let out = ndarc(
        &[
            "verify",
            "--receipt",
            r.to_str().unwrap(),
            example().to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "existing receipt needs --force");
    let out = ndarc(
        &[
            "verify",
            "--force",
            "--receipt",
            r.to_str().unwrap(),
            example().to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "no temporary files left"
    );
}

#[test]
fn inspect_shows_the_manifest() {
    let out = ndarc(&["inspect", example().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("rer-portability version 2"), "{s}");
    assert!(
        s.contains("notes") && s.contains("key rowid") && s.contains("key (id)"),
        "{s}"
    );
    assert!(s.contains("archiveHash             dccd1bd7"), "{s}");
    let bytes = std::fs::read(example()).unwrap();
    let out = ndarc(&["inspect", "--json", "-"], Some(&bytes));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["product"], "example");
    assert_eq!(v["rows"], 3);
    assert_eq!(v["partCount"], 4);
    assert_eq!(
        v["closing"]["contentHash"],
        "6d5f30061640eb03e628acc45a8f36240c2d80acbfd31931fec91184c12abeec"
    );
    assert_eq!(v["tables"][1]["primaryKey"][0], "id");
}
