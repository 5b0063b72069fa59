//! The data-driven fixtures of the SQLite bridge (testdata/README.md):
//! `testdata/sqlite/unpack/` (archives `unpack` fails on),
//! `testdata/sqlite/unreadable/` (files `pack` cannot read) and
//! `testdata/sqlite/producers/` (faulty producers `fuzz-producer` catches),
//! each run with its exact code; and every code SPEC.md §13.6 (exit 2),
//! §13.7 and §14 name has a fixture here, in `testdata/sqlite/refuse/`, or
//! is listed in testdata/README.md with where it is tested.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const NDARC: &str = env!("CARGO_BIN_EXE_ndarc");

fn testdata(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(sub)
}

fn ndarc(args: &[&str]) -> Output {
    Command::new(NDARC)
        .args(args)
        .env("NO_COLOR", "1")
        .env("NDARC", NDARC)
        .stdin(Stdio::null())
        .output()
        .expect("ndarc runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The files of `dir` with extension `ext`, sorted, as (stem, path).
fn files(dir: &Path, ext: &str) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some(ext))
        .map(|p| {
            let stem = p.file_stem().and_then(|x| x.to_str()).expect("name");
            (stem.to_string(), p.clone())
        })
        .collect();
    out.sort();
    out
}

fn sidecar(p: &Path) -> Value {
    let text = std::fs::read_to_string(p.with_extension("json"))
        .unwrap_or_else(|e| panic!("{}: sidecar: {e}", p.display()));
    serde_json::from_str(&text).expect("sidecar JSON")
}

fn named_after(name: &str, code: &str) {
    assert!(
        name == code || name.starts_with(&format!("{code}-")),
        "{name}: named after its code {code}"
    );
}

/// Every `unpack/NAME.ndjson` fails with its sidecar's code and exit
/// status, as one line `ARCHIVE: CODE: message`, and leaves nothing behind:
/// no database and no files beyond what was there before.
#[test]
fn every_unpack_fixture_fails_with_its_code() {
    let fixtures = files(&testdata("sqlite/unpack"), "ndjson");
    assert!(fixtures.len() >= 9, "{fixtures:?}");
    for (name, archive) in &fixtures {
        let side = sidecar(archive);
        let code = side["code"].as_str().expect("code");
        named_after(name, code);
        let work = tempfile::tempdir().unwrap();
        let dir = work.path().join("dir");
        std::fs::create_dir(&dir).unwrap();
        for b in side["before"].as_array().into_iter().flatten() {
            let p = work.path().join(b["path"].as_str().expect("path"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            if let Some(text) = b["file"].as_str() {
                std::fs::write(&p, text).unwrap();
            } else {
                let target = b["symlink"].as_str().expect("file or symlink");
                std::os::unix::fs::symlink(target, &p).unwrap();
            }
        }
        let listing = || {
            let mut v: Vec<String> = walk(work.path());
            v.sort();
            v
        };
        let before = listing();
        let out = work.path().join("out.db");
        let mut args = vec!["unpack", s(archive), "-o", s(&out)];
        let extra: Vec<String> = side["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| a.as_str().expect("arg").replace("{dir}", s(&dir)))
            .collect();
        args.extend(extra.iter().map(String::as_str));
        let o = ndarc(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            side["exit"].as_i64().map(|x| x as i32),
            "{name}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{name}: one line: {e}");
        let want = format!("{}: {code}: ", s(archive));
        assert!(e.contains(&want), "{name}: expected {want:?} in {e}");
        assert_eq!(listing(), before, "{name}: nothing left behind");
        for b in side["before"].as_array().into_iter().flatten() {
            if let Some(text) = b["file"].as_str() {
                let p = work.path().join(b["path"].as_str().unwrap());
                assert_eq!(std::fs::read_to_string(&p).unwrap(), text, "{name}: kept");
            }
        }
    }
}

/// Every path under `root`, relative, with a `/` after directories.
fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                out.push(format!("{rel}/"));
                stack.push(p);
            } else {
                out.push(rel);
            }
        }
    }
    out
}

/// Every `unreadable/NAME.db` is a file `pack` cannot read: its code, exit
/// 2, one line, no archive.
#[test]
fn every_unreadable_database_fixture_fails_with_its_code() {
    let fixtures = files(&testdata("sqlite/unreadable"), "db");
    assert!(fixtures.len() >= 2, "{fixtures:?}");
    for (name, db) in &fixtures {
        let side = sidecar(db);
        let code = side["code"].as_str().expect("code");
        named_after(name, code);
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("x.ndjson");
        let o = ndarc(&["pack", s(db), "-o", s(&out)]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            side["exit"].as_i64().map(|x| x as i32),
            "{name}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{name}: one line: {e}");
        let want = format!("{}: {code}: ", s(db));
        assert!(e.contains(&want), "{name}: expected {want:?} in {e}");
        assert!(!out.exists(), "{name}: no archive");
    }
}

/// A producer fixture's header: `# expect: KIND` and `# args: ARGS…`.
fn producer_header(script: &str) -> (String, Vec<String>) {
    let mut expect = String::new();
    let mut args = Vec::new();
    for line in script.lines().take_while(|l| l.starts_with('#')) {
        let h = line.trim_start_matches('#').trim();
        if let Some(k) = h.strip_prefix("expect:") {
            expect = k.trim().to_string();
        } else if let Some(a) = h.strip_prefix("args:") {
            args = a.split_whitespace().map(str::to_string).collect();
        }
    }
    (expect, args)
}

/// Every `producers/KIND.sh`, run under `fuzz-producer` (with `$NDARC` the
/// reference `ndarc`), is caught with exactly its kind: exit 1, and every
/// problem of the summary is of that kind.
#[test]
fn every_producer_fixture_is_caught_with_its_kind() {
    let fixtures = files(&testdata("sqlite/producers"), "sh");
    assert!(fixtures.len() >= 8, "{fixtures:?}");
    for (name, script) in &fixtures {
        let (kind, args) = producer_header(&std::fs::read_to_string(script).unwrap());
        assert!(!kind.is_empty(), "{name}: no # expect: line");
        named_after(name, &kind);
        let exec = format!("sh '{}' {{db}} {{archive}}", s(script));
        let mut all = vec![
            "fuzz-producer",
            "--exec",
            &exec,
            "--shrink-budget",
            "0",
            "--json",
        ];
        all.extend(args.iter().map(String::as_str));
        let o = ndarc(&all);
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
        assert_eq!(o.status.code(), Some(1), "{name}: {v:#}");
        let kinds: Vec<&str> = v["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .map(|p| p["kind"].as_str().expect("kind"))
            .collect();
        assert!(!kinds.is_empty(), "{name}: {v:#}");
        assert!(kinds.iter().all(|k| *k == kind), "{name}: {kinds:?}");
    }
}

/// The text of SPEC.md between two headings.
fn spec_section<'a>(spec: &'a str, from: &str, to: &str) -> &'a str {
    spec.split(from)
        .nth(1)
        .and_then(|s| s.split(to).next())
        .unwrap_or_else(|| panic!("SPEC.md {from}"))
}

/// The `backticked` words of `text` that look like codes (snake_case).
fn codes_in(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.contains('_') && w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_code_of_pack_unpack_and_fuzz_producer_has_a_fixture_or_is_listed() {
    let spec = std::fs::read_to_string(testdata("../SPEC.md")).expect("SPEC.md");
    // §13.6, the exit-2 rows (the exit-1 refusals have testdata/sqlite/refuse).
    let pack: Vec<String> = spec_section(&spec, "### 13.6", "### 13.7")
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains("` | 2 |"))
        .filter_map(|l| l.split('`').nth(1).map(str::to_string))
        .collect();
    assert!(pack.len() >= 8, "{pack:?}");
    let unpack = codes_in(spec_section(&spec, "### 13.7", "## 14."));
    assert!(unpack.len() >= 7, "{unpack:?}");
    let problems_text = spec_section(&spec, "## 14.", "## 15.");
    let problems_text = problems_text
        .split("**Problems**")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect("§14 Problems");
    let kinds: Vec<String> = problems_text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_string)
        .collect();
    assert_eq!(kinds.len(), 8, "{kinds:?}");

    let stems = |sub: &str, ext: &str| -> Vec<String> {
        files(&testdata(sub), ext)
            .into_iter()
            .map(|(n, _)| n.split('-').next().unwrap().to_string())
            .collect()
    };
    let mut fixtures = stems("sqlite/unpack", "ndjson");
    fixtures.extend(stems("sqlite/unreadable", "db"));
    fixtures.extend(stems("sqlite/refuse", "sql"));
    let producers = stems("sqlite/producers", "sh");

    // testdata/README.md: the codes without a fixture, `| `code` | where |`.
    let readme = std::fs::read_to_string(testdata("README.md")).expect("README");
    let listed_text = readme
        .split("### Codes without a fixture")
        .nth(1)
        .expect("testdata/README.md: ### Codes without a fixture");
    let listed_text = listed_text.split("\n#").next().unwrap();
    let listed: Vec<String> = listed_text
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('`').nth(1).map(str::to_string))
        .collect();

    for code in pack.iter().chain(&unpack) {
        let has = fixtures.contains(code);
        assert!(
            has != listed.contains(code),
            "{code}: needs a fixture or a line in testdata/README.md (not both)"
        );
    }
    for kind in &kinds {
        assert!(
            producers.contains(kind),
            "fuzz-producer problem {kind}: no testdata/sqlite/producers fixture"
        );
    }
    for code in &listed {
        assert!(
            pack.contains(code) || unpack.contains(code),
            "testdata/README.md lists {code}, which SPEC.md §13.6/§13.7 does not name"
        );
    }
}
