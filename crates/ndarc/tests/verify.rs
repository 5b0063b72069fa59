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

/// `inspect` frames through `verify`'s line source: for a framing fixture,
/// each framing finding inspect reports (on the manifest line and the last
/// line) is one `verify` reports on the same input, with the same code,
/// offset and message (from a file, inspect does not count the lines before
/// the last 64 KiB, so its last-line findings have line 0). A manifest that
/// cannot be read stops inspect with `verify`'s finding, in `verify`'s form.
#[test]
fn inspect_frames_like_verify() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/invalid"
    ));
    let framing = |v: &serde_json::Value| -> Vec<(String, u64, u64, String)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["code"].as_str().unwrap().to_string(),
                    f["line"].as_u64().unwrap(),
                    f["offset"].as_u64().unwrap(),
                    f["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // (fixture, limit flags, the codes inspect must report)
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "carriage_return",
            &[],
            &["carriage_return", "carriage_return"],
        ),
        ("carriage_return-closing", &[], &["carriage_return"]),
        ("missing_final_newline", &[], &["missing_final_newline"]),
        ("empty_line-first", &[], &["empty_line"]),
        ("empty_line-end", &[], &["empty_line"]),
    ];
    for &(name, flags, want) in cases {
        let path = dir.join(format!("{name}.ndjson"));
        let bytes = std::fs::read(&path).unwrap();
        for stdin in [false, true] {
            let file = if stdin { "-" } else { path.to_str().unwrap() };
            let input = stdin.then_some(&bytes[..]);
            let run = |cmd: &str| {
                let mut args = vec![cmd, "--format", "json"];
                args.extend_from_slice(flags);
                args.push(file);
                serde_json::from_slice::<serde_json::Value>(&ndarc(&args, input).stdout).unwrap()
            };
            let v = framing(&run("verify")["files"][0]["findings"]);
            let i = framing(&run("inspect")["framingFindings"]);
            let codes: Vec<&str> = i.iter().map(|f| f.0.as_str()).collect();
            assert_eq!(codes, want, "{name} (stdin: {stdin})");
            for f in &i {
                assert!(
                    v.iter().any(|g| g.0 == f.0
                        && g.2 == f.2
                        && g.3 == f.3
                        && (g.1 == f.1 || (f.1 == 0 && !stdin))),
                    "{name} (stdin: {stdin}): inspect's {f:?} is not among verify's {v:?}"
                );
            }
        }
    }
    // Fatal ones: exit 2 with verify's line (`FILE:LINE:OFFSET: code: message`).
    let fatal: &[(&str, &[&str])] = &[
        ("manifest_missing", &[]),
        ("json_bom", &[]),
        ("line_too_long-manifest", &["--max-manifest-bytes", "1024"]),
    ];
    for &(name, flags) in fatal {
        let path = dir.join(format!("{name}.ndjson"));
        let bytes = std::fs::read(&path).unwrap();
        for stdin in [false, true] {
            let file = if stdin { "-" } else { path.to_str().unwrap() };
            let input = stdin.then_some(&bytes[..]);
            let run = |cmd: &str| {
                let mut args = vec![cmd];
                args.extend_from_slice(flags);
                args.push(file);
                ndarc(&args, input)
            };
            let v = run("verify");
            let i = run("inspect");
            assert_eq!(v.status.code(), Some(1), "{name}");
            assert_eq!(i.status.code(), Some(2), "{name}");
            let first = String::from_utf8(v.stdout).unwrap();
            let first = first.lines().next().unwrap();
            let err = String::from_utf8(i.stderr).unwrap();
            assert_eq!(
                err.trim_end(),
                format!("ndarc: error: {first}"),
                "{name} (stdin: {stdin})"
            );
        }
    }
}
