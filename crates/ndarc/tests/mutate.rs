//! `ndarc mutate` end to end.

use std::path::{Path, PathBuf};
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
        child.stdin.take().unwrap().write_all(input).unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndarc-mutate-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A small generated archive in `dir`.
fn archive(dir: &Path) -> PathBuf {
    let (bytes, _) = ndarc_gen::generate_vec(&ndarc_gen::GenOptions::small(4)).unwrap();
    let p = dir.join("a.ndjson");
    std::fs::write(&p, bytes).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn one_mutant_names_its_code_and_line() {
    let d = tmp("one");
    let a = archive(&d);
    let out = d.join("bad.ndjson");
    let o = ndarc(&["mutate", s(&a), "--seed", "7", "-o", s(&out)], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let info = text(&o.stdout);
    // `CODE at line N (mutation NAME): description`
    let code = info.split(' ').next().unwrap();
    let line: u64 = info
        .split("at line ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(info.contains("(mutation "), "{info}");
    // --strict: the seed may pick a warning code, which verify reports
    // but does not fail on its own.
    let v = ndarc(&["verify", "--strict", "--format", "json", s(&out)], None);
    assert_eq!(v.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&v.stdout).unwrap();
    let findings = doc["files"][0]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["code"] == code && f["line"] == line),
        "{info}: {findings:?}"
    );
    // Same seed, same bytes; the output is not replaced without --force.
    let again = ndarc(&["mutate", s(&a), "--seed", "7"], None);
    assert_eq!(again.stdout, std::fs::read(&out).unwrap());
    assert_eq!(
        text(&again.stderr),
        info,
        "info goes to stderr when the mutant goes to stdout"
    );
    let refused = ndarc(&["mutate", s(&a), "--seed", "7", "-o", s(&out)], None);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused.stderr).contains("--force"));
}

#[test]
fn a_chosen_code_or_mutation() {
    let d = tmp("code");
    let a = archive(&d);
    for (which, code) in [
        ("row_not_null", "row_not_null"),
        ("json_syntax-nan", "json_syntax"),
        ("content_hash_mismatch", "content_hash_mismatch"),
    ] {
        let o = ndarc(&["mutate", s(&a), "--code", which, "--seed", "3"], None);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).starts_with(&format!("{code} at line ")),
            "{}",
            text(&o.stderr)
        );
        if which.contains('-') {
            assert!(text(&o.stderr).contains(&format!("(mutation {which})")));
        }
        let v = ndarc(&["verify", "-q", "-"], Some(&o.stdout));
        assert_eq!(v.status.code(), Some(1), "{which}");
    }
    // Standard input works too.
    let bytes = std::fs::read(&a).unwrap();
    let o = ndarc(&["mutate", "-", "--code", "row_type"], Some(&bytes));
    assert_eq!(o.status.code(), Some(0));
    let bad = ndarc(&["mutate", s(&a), "--code", "no_such_code"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("unknown code"),
        "{}",
        text(&bad.stderr)
    );
    let push = ndarc(&["mutate", s(&a), "--code", "part_missing"], None);
    assert_eq!(push.status.code(), Some(1));
    assert!(
        text(&push.stderr).contains("push API"),
        "{}",
        text(&push.stderr)
    );
}

#[test]
fn not_an_archive_exits_1() {
    let o = ndarc(&["mutate", "-", "--seed", "1"], Some(b"hello\n"));
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("no mutant"), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
}

#[test]
fn all_writes_one_mutant_per_code_and_an_index() {
    let d = tmp("all");
    let a = archive(&d);
    let dir = d.join("mutants");
    let o = ndarc(
        &[
            "mutate",
            s(&a),
            "--all",
            "--outdir",
            s(&dir),
            "--except",
            "line_too_long",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
    let mutants = index["mutants"].as_array().unwrap();
    let codes = ndarc_gen::mutate::file_codes();
    assert_eq!(
        mutants.len(),
        codes.len() - 1,
        "every file code but line_too_long"
    );
    assert!(index["notApplicable"].as_array().unwrap().is_empty());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), mutants.len() + 1);
    for m in mutants {
        let file = m["file"].as_str().unwrap();
        let code = m["code"].as_str().unwrap();
        // Names come from codes only.
        assert_eq!(file, format!("{code}.ndjson"));
        assert!(file
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.".contains(&b)));
        assert!(m["line"].as_u64().unwrap() >= 1);
        assert!(m["description"].as_str().is_some_and(|d| !d.is_empty()));
    }
    // Verify a few: the code is reported at the line.
    for m in mutants.iter().step_by(9) {
        let v = ndarc(
            &[
                "verify",
                "--format",
                "json",
                s(&dir.join(m["file"].as_str().unwrap())),
            ],
            None,
        );
        let doc: serde_json::Value = serde_json::from_slice(&v.stdout).unwrap();
        let findings = doc["files"][0]["findings"].as_array().unwrap();
        assert!(
            findings
                .iter()
                .any(|f| f["code"] == m["code"] && f["line"] == m["line"]),
            "{m}: {findings:?}"
        );
    }
    // A non-empty directory is refused without --force; with it, rewritten.
    let again = ndarc(
        &[
            "mutate",
            s(&a),
            "--all",
            "--outdir",
            s(&dir),
            "--except",
            "line_too_long",
        ],
        None,
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("not empty"),
        "{}",
        text(&again.stderr)
    );
    let forced = ndarc(
        &[
            "mutate",
            s(&a),
            "--all",
            "--outdir",
            s(&dir),
            "--force",
            "--seed",
            "5",
            "--except",
            "line_too_long",
        ],
        None,
    );
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced.stderr));
    let index2 = std::fs::read(dir.join("index.json")).unwrap();
    assert!(text(&index2).contains("\"seed\": 5"));
    // No temporary files left behind.
    let left = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(left, names.len());
}

#[test]
fn usage_errors() {
    let d = tmp("usage");
    let a = archive(&d);
    for args in [
        vec!["mutate", s(&a), "--all"],
        vec!["mutate", s(&a), "--outdir", "x"],
        vec![
            "mutate",
            s(&a),
            "--all",
            "--outdir",
            "x",
            "--code",
            "row_type",
        ],
        vec!["mutate"],
    ] {
        let o = ndarc(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    let f = d.join("file");
    std::fs::write(&f, b"x").unwrap();
    let o = ndarc(&["mutate", s(&a), "--all", "--outdir", s(&f)], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not a directory"));
}

#[test]
fn list_shows_every_mutation() {
    let o = ndarc(&["mutate", "--list"], None);
    assert_eq!(o.status.code(), Some(0));
    let t = text(&o.stdout);
    let others = ndarc_gen::mutate::PUSH_ONLY.len()
        + ndarc_gen::mutate::POLICY_ONLY.len()
        + ndarc_gen::mutate::INTEGRITY_ONLY.len()
        + ndarc_gen::mutate::LINEAGE_ONLY.len();
    assert_eq!(
        t.lines().count(),
        ndarc_gen::mutate::mutations().len() + others
    );
    // Every code, those without a mutation included.
    for code in ndarc_format::Code::ALL {
        assert!(
            t.lines().any(|l| l.starts_with(&format!("{code} "))),
            "{code}"
        );
    }
}
