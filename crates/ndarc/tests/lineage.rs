//! `ndarc verify A --later B` (issue 24 §4, SPEC.md §4.6): whether archive
//! B can follow archive A, with exact codes, pointers and exit statuses in
//! every output format.

mod common;

use common::{ndarc, ndarc_in, s, Scratch};
use serde_json::{json, Value};

/// The worked example with its manifest edited by `edit`, resealed by
/// `ndarc canon --reseal` so that it verifies.
fn archive(scratch: &Scratch, name: &str, edit: impl FnOnce(&mut Value)) -> std::path::PathBuf {
    let text = std::fs::read_to_string(common::example()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut manifest: Value = serde_json::from_str(&lines[0]).unwrap();
    edit(&mut manifest);
    lines[0] = manifest.to_string();
    let mut edited = lines.join("\n");
    edited.push('\n');
    let run = ndarc_in(&scratch.0, &["canon", "--reseal", "-"], edited.as_bytes());
    assert_eq!(run.code, 0, "reseal: {}", run.stderr);
    scratch.write(name, &run.stdout)
}

/// A: epoch 5, a journal of two entries under "entries", one migration.
fn earlier(m: &mut Value) {
    m["epoch"] = json!(5);
    m["journal"] = json!({"head": "aaaa", "entries": [{"seq": 1, "op": "migrate"}, {"seq": 2, "op": "import"}]});
    m["migrations"] = json!([{"id": 1, "name": "0001_init.sql"}]);
}

/// B as a real later export: epoch 6, the journal and migrations extended
/// (the journal's head may change: it is not an entry).
fn later(m: &mut Value) {
    earlier(m);
    m["epoch"] = json!(6);
    m["journal"] = json!({"head": "bbbb", "entries": [{"seq": 1, "op": "migrate"}, {"seq": 2, "op": "import"}, {"seq": 3, "op": "export"}]});
    m["migrations"] =
        json!([{"id": 1, "name": "0001_init.sql"}, {"id": 2, "name": "0002_more.sql"}]);
}

/// `verify A --later B --format json`: exit status and the document.
fn verify_json(a: &std::path::Path, b: &std::path::Path) -> (i32, Value) {
    let run = ndarc(&["verify", s(a), "--later", s(b), "--format", "json"]);
    let doc = serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.out()));
    (run.code, doc)
}

/// The (code, pointer, line, offset) of B's findings.
fn later_findings(doc: &Value) -> Vec<(String, String, u64, u64)> {
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["findings"], json!([]), "A is valid");
    files[1]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["pointer"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["offset"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn one(code: &str, pointer: &str) -> Vec<(String, String, u64, u64)> {
    vec![(code.to_string(), pointer.to_string(), 1, 0)]
}

#[test]
fn a_later_export_follows() {
    let d = Scratch::new("lineage-follows");
    let a = archive(&d, "a.ndjson", earlier);
    let b = archive(&d, "b.ndjson", later);
    let (code, doc) = verify_json(&a, &b);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(later_findings(&doc), vec![]);
    assert_eq!(doc["valid"], true);
    assert_eq!(doc["lineage"]["follows"], true);
    assert_eq!(doc["lineage"]["earlier"], s(&a));
    assert_eq!(doc["lineage"]["later"], s(&b));
    // An archive follows itself (the epoch may stay).
    assert_eq!(verify_json(&a, &a).0, 0);
    // Human: both verdicts, then the lineage line.
    let run = ndarc(&["verify", s(&a), "--later", s(&b)]);
    assert_eq!(run.code, 0, "{}", run.out());
    assert!(
        run.out()
            .contains(&format!("{}: follows {}\n", s(&b), s(&a))),
        "{}",
        run.out()
    );
}

#[test]
fn another_source_identity() {
    let d = Scratch::new("lineage-source");
    let a = archive(&d, "a.ndjson", earlier);
    let b = archive(&d, "b.ndjson", |m| {
        later(m);
        m["sourceIdentity"] = json!("src-2");
    });
    let (code, doc) = verify_json(&a, &b);
    assert_eq!(code, 1);
    assert_eq!(
        later_findings(&doc),
        one("lineage_source_identity_mismatch", "/sourceIdentity")
    );
    assert_eq!(doc["valid"], false);
    assert_eq!(doc["lineage"]["follows"], false);
    assert_eq!(doc["files"][0]["valid"], true);
    assert_eq!(doc["files"][1]["valid"], false);
}

#[test]
fn epoch_backwards() {
    let d = Scratch::new("lineage-epoch");
    let a = archive(&d, "a.ndjson", earlier);
    let b = archive(&d, "b.ndjson", |m| {
        later(m);
        m["epoch"] = json!(4);
    });
    let (code, doc) = verify_json(&a, &b);
    assert_eq!(code, 1);
    assert_eq!(
        later_findings(&doc),
        one("lineage_epoch_backwards", "/epoch")
    );
    // A real later export given as the earlier one: everything goes back.
    let c = archive(&d, "c.ndjson", later);
    let (code, doc) = verify_json(&c, &a);
    assert_eq!(code, 1);
    let files = doc["files"].as_array().unwrap();
    let codes: Vec<&str> = files[1]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "lineage_epoch_backwards",
            "lineage_journal_rewritten",
            "lineage_migrations_rewritten"
        ]
    );
}

#[test]
fn journal_rewritten() {
    let d = Scratch::new("lineage-journal");
    let a = archive(&d, "a.ndjson", earlier);
    let b = archive(&d, "b.ndjson", |m| {
        later(m);
        m["journal"]["entries"][1]["op"] = json!("erase");
    });
    let (code, doc) = verify_json(&a, &b);
    assert_eq!(code, 1);
    assert_eq!(
        later_findings(&doc),
        one("lineage_journal_rewritten", "/journal/entries/1")
    );
    // An entry removed: the list stops short.
    let c = archive(&d, "c.ndjson", |m| {
        later(m);
        m["journal"]["entries"] = json!([{"seq": 1, "op": "migrate"}]);
    });
    assert_eq!(
        later_findings(&verify_json(&a, &c).1),
        one("lineage_journal_rewritten", "/journal/entries")
    );
    // Reshaped: an array where A has an object.
    let e = archive(&d, "e.ndjson", |m| {
        later(m);
        m["journal"] = json!([{"seq": 1, "op": "migrate"}, {"seq": 2, "op": "import"}]);
    });
    assert_eq!(
        later_findings(&verify_json(&a, &e).1),
        one("lineage_journal_rewritten", "/journal")
    );
}

#[test]
fn migrations_rewritten() {
    let d = Scratch::new("lineage-migrations");
    let a = archive(&d, "a.ndjson", earlier);
    let b = archive(&d, "b.ndjson", |m| {
        later(m);
        m["migrations"] = json!([{"id": 2, "name": "0002_more.sql"}]);
    });
    assert_eq!(
        later_findings(&verify_json(&a, &b).1),
        one("lineage_migrations_rewritten", "/migrations/0")
    );
    let c = archive(&d, "c.ndjson", |m| {
        later(m);
        m.as_object_mut().unwrap().remove("migrations");
    });
    let (code, doc) = verify_json(&a, &c);
    assert_eq!(code, 1);
    assert_eq!(
        later_findings(&doc),
        one("lineage_migrations_rewritten", "/migrations")
    );
}

#[test]
fn every_format_shows_the_findings() {
    let d = Scratch::new("lineage-formats");
    let a = archive(&d, "a.ndjson", earlier);
    let b = archive(&d, "b.ndjson", |m| {
        later(m);
        m["epoch"] = json!(0);
        m["journal"]["entries"][0]["seq"] = json!(0);
    });
    let human = ndarc(&["verify", s(&a), "--later", s(&b)]);
    assert_eq!(human.code, 1);
    let out = human.out();
    assert!(
        out.contains(&format!(
            "{}:1:0: lineage_epoch_backwards: epoch 0 is lower than the earlier archive's 5",
            s(&b)
        )),
        "{out}"
    );
    assert!(
        out.contains("lineage_journal_rewritten: journal entry 0 differs")
            && out.contains("(at /journal/entries/0)"),
        "{out}"
    );
    assert!(
        out.contains(&format!("{}: does NOT follow {}", s(&b), s(&a))),
        "{out}"
    );
    let github = ndarc(&["verify", "--format", "github", s(&a), "--later", s(&b)]);
    assert_eq!(github.code, 1);
    let lines: Vec<String> = github.out().lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with(&format!(
            "::error file={},line=1,title=lineage_epoch_backwards::",
            s(&b)
        )),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("title=lineage_journal_rewritten::")
            && lines[1].contains("(byte 0, at /journal/entries/0)"),
        "{lines:?}"
    );
    // --quiet: the exit status alone.
    let quiet = ndarc(&["verify", "-q", s(&a), "--later", s(&b)]);
    assert_eq!((quiet.code, quiet.out()), (1, String::new()));
}

#[test]
fn usage_errors_exit_2() {
    let d = Scratch::new("lineage-usage");
    let a = archive(&d, "a.ndjson", earlier);
    let b = archive(&d, "b.ndjson", later);
    // Several earlier archives: which one would B follow?
    let run = ndarc(&["verify", s(&a), s(&a), "--later", s(&b)]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--later takes exactly one earlier archive"),
        "{}",
        run.stderr
    );
    // Standard input for both.
    let run = ndarc(&["verify", "-", "--later", "-"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // A missing LATER could not be verified.
    let run = ndarc(&["verify", s(&a), "--later", s(&d.path("missing.ndjson"))]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn a_broken_later_archive_is_verified_as_usual() {
    let d = Scratch::new("lineage-broken");
    let a = archive(&d, "a.ndjson", earlier);
    let b = archive(&d, "b.ndjson", later);
    // The closing hashes no longer match once a byte of B changes.
    let mut bytes = std::fs::read(&b).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let at = text.find("\"bbbb\"").unwrap();
    bytes[at + 1] = b'c';
    std::fs::write(&b, &bytes).unwrap();
    let (code, doc) = verify_json(&a, &b);
    assert_eq!(code, 1);
    let codes: Vec<String> = later_findings(&doc).into_iter().map(|f| f.0).collect();
    assert_eq!(codes, ["archive_hash_mismatch"]);
    // The lineage itself holds.
    assert_eq!(doc["lineage"]["follows"], true);
}

#[test]
fn gen_later_writes_an_export_that_follows() {
    let d = Scratch::new("lineage-gen");
    let small = [
        "--seed",
        "3",
        "--tables",
        "2",
        "--rows",
        "5",
        "--objects",
        "1",
        "--payloads",
        "1",
        "--object-bytes",
        "64",
        "--payload-bytes",
        "64",
    ];
    let gen = |name: &str, later: &[&str]| {
        let path = d.path(name);
        let mut args = vec!["gen"];
        args.extend_from_slice(&small);
        args.extend_from_slice(later);
        args.extend_from_slice(&["-o", s(&path)]);
        let run = ndarc(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        path
    };
    let a = gen("a.ndjson", &[]);
    let b = gen("b.ndjson", &["--later", "1"]);
    let (code, doc) = verify_json(&a, &b);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["lineage"]["follows"], true);
    // The other way round the later one goes back.
    let (code, doc) = verify_json(&b, &a);
    assert_eq!(code, 1);
    let codes: Vec<&str> = doc["files"][1]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        ["lineage_epoch_backwards", "lineage_journal_rewritten"]
    );
}

/// Every pair of `testdata/lineage/` (written by `scripts/make-corpus.py`)
/// gives exactly the findings of its `expected.json` on the later archive,
/// and exit status 1 when it has any (0 otherwise); together the pairs
/// cover every lineage code.
#[test]
fn the_lineage_fixtures_give_their_expected_findings() {
    let root = common::testdata("lineage");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert_eq!(cases.len(), 6, "{cases:?}");
    let mut codes = std::collections::BTreeSet::new();
    for case in &cases {
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("expected.json")).unwrap())
                .unwrap();
        let want: Vec<(String, String, u64, u64)> = expected["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["code"].as_str().unwrap().to_string(),
                    f["pointer"].as_str().unwrap().to_string(),
                    f["line"].as_u64().unwrap(),
                    f["offset"].as_u64().unwrap(),
                )
            })
            .collect();
        let (code, doc) = verify_json(&case.join("earlier.ndjson"), &case.join("later.ndjson"));
        assert_eq!(later_findings(&doc), want, "{}", case.display());
        assert_eq!(code, i32::from(!want.is_empty()), "{}", case.display());
        assert_eq!(
            doc["lineage"]["follows"],
            want.is_empty(),
            "{}",
            case.display()
        );
        // A fixture named after a code breaks that rule alone.
        let name = case.file_name().unwrap().to_str().unwrap();
        if name.starts_with("lineage_") {
            assert_eq!(want.len(), 1, "{name}");
            assert_eq!(want[0].0, name);
        }
        codes.extend(want.into_iter().map(|w| w.0));
    }
    assert_eq!(
        codes.into_iter().collect::<Vec<_>>(),
        [
            "lineage_epoch_backwards",
            "lineage_journal_rewritten",
            "lineage_migrations_rewritten",
            "lineage_source_identity_mismatch"
        ]
    );
}
