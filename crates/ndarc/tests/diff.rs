//! `ndarc diff`: exit statuses, formats against the golden files, standard
//! input, colour only on request, quiet.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn data(case: &str, file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/diff")
        .join(case)
        .join(file)
}

fn ndarc(args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ndarc");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default())
        .expect("write stdin");
    drop(input);
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn golden(case: &str, file: &str) -> String {
    std::fs::read_to_string(data(case, file)).expect("golden file")
}

#[test]
fn formats_and_exit_statuses() {
    let dir = data("changes", "");
    let run = |args: &[&str]| ndarc(args, &dir, None);
    let base = ["diff", "before.ndjson", "after.ndjson"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let (code, out, err) = run(&base);
    assert_eq!((code, err.as_str()), (1, ""));
    assert_eq!(
        out,
        golden("changes", "human.txt"),
        "piped output has no colour"
    );
    let args = with(&["--format", "json"]);
    let (code, out, _) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((code, out), (1, golden("changes", "diff.json")));
    let args = with(&["--format", "markdown"]);
    let (code, out, _) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((code, out), (1, golden("changes", "markdown.md")));
    let args = with(&["--stat"]);
    let (code, out, _) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((code, out), (1, golden("changes", "stat.txt")));
    let args = with(&["--max-rows", "1"]);
    let (code, out, _) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((code, out), (1, golden("changes", "human-max-rows-1.txt")));
    let args = with(&[
        "--ignore-table",
        "audit_*",
        "--ignore-table",
        "OLD_*",
        "--ignore-column",
        "*.email",
        "--ignore-column",
        "notes.body",
        "--keys-only",
    ]);
    let (code, out, _) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((code, out), (1, golden("changes", "human-ignored.txt")));
    // Colour only when asked (stdout is a pipe here).
    let args = with(&["--color", "always"]);
    let (_, out, _) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.contains("\x1b["));
    // Quiet: the status alone.
    let args = with(&["--quiet"]);
    let (code, out, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((code, out.as_str(), err.as_str()), (1, "", ""));
    // The same archive twice, and other part sizes: no differences.
    assert_eq!(run(&["diff", "before.ndjson", "before.ndjson"]).0, 0);
    let eq = data("equal", "");
    let (code, out, _) = ndarc(&["diff", "before.ndjson", "after.ndjson"], &eq, None);
    assert_eq!((code, out), (0, golden("equal", "human.txt")));
}

#[test]
fn stdin_and_errors() {
    let dir = data("changes", "");
    let before = std::fs::read(dir.join("before.ndjson")).unwrap();
    let (code, out, _) = ndarc(
        &["diff", "-", "after.ndjson", "--stat"],
        &dir,
        Some(&before),
    );
    assert_eq!(code, 1);
    assert_eq!(out, golden("changes", "stat.txt"));
    // Both from stdin: a usage error.
    assert_eq!(ndarc(&["diff", "-", "-"], &dir, None).0, 2);
    // A missing file, an invalid archive: exit 2 with a message.
    let (code, _, err) = ndarc(&["diff", "before.ndjson", "missing.ndjson"], &dir, None);
    assert_eq!(code, 2);
    assert!(err.contains("missing.ndjson"), "{err}");
    let mut bad = before.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x01;
    let (code, _, err) = ndarc(&["diff", "before.ndjson", "-"], &dir, Some(&bad));
    assert_eq!(code, 2);
    assert!(
        err.contains("<stdin>:") && err.contains("not a valid archive"),
        "{err}"
    );
    let (code, _, _) = ndarc(
        &[
            "diff",
            "--ignore-column",
            "nodot",
            "before.ndjson",
            "after.ndjson",
        ],
        &dir,
        None,
    );
    assert_eq!(code, 2);
    let (code, out, _) = ndarc(&["diff", "--help"], &dir, None);
    assert_eq!(code, 0);
    assert!(out.contains("Examples:") && out.contains("--ignore-column"));
}

#[test]
fn output_file_is_written_atomically() {
    let tmp = std::env::temp_dir().join(format!("ndarc-diff-cli-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let out = tmp.join("d.json");
    let a = data("changes", "before.ndjson");
    let b = data("changes", "after.ndjson");
    let args = [
        "diff",
        "--format",
        "json",
        "-o",
        out.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ];
    let (code, stdout, _) = ndarc(&args, &tmp, None);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        golden("changes", "diff.json")
            .replace(
                "\"before.ndjson\"",
                &format!("{:?}", a.display().to_string())
            )
            .replace(
                "\"after.ndjson\"",
                &format!("{:?}", b.display().to_string())
            )
    );
    // An existing file is not replaced without --force.
    assert_eq!(ndarc(&args, &tmp, None).0, 2);
    let _ = std::fs::remove_dir_all(&tmp);
}

fn bless() -> bool {
    std::env::var_os("NDARC_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `got` equals the golden file `case/file` (written when blessing: the
/// `--format sql` goldens are made here, as the library's golden test
/// cannot write patches).
fn assert_golden(case: &str, file: &str, got: &str) {
    if bless() {
        std::fs::write(data(case, file), got).expect("bless");
        return;
    }
    assert_eq!(
        got,
        golden(case, file),
        "{case}/{file}; NDARC_BLESS=1 rewrites the sql goldens"
    );
}

/// A column added, dropped and renamed: every format, `--stat` in every
/// format, and `--full-rows`, against the goldens; `diffArchives`' answer
/// (every row in both archives changed) in the JSON.
#[test]
fn column_changes_in_every_format() {
    let dir = data("columns", "");
    let run = |extra: &[&str]| {
        let mut args = vec!["diff", "before.ndjson", "after.ndjson"];
        args.extend_from_slice(extra);
        let (code, out, err) = ndarc(&args, &dir, None);
        assert_eq!((code, err.as_str()), (1, ""), "{extra:?}");
        out
    };
    for (extra, file) in [
        (&[][..], "human.txt"),
        (&["--format", "json"][..], "diff.json"),
        (&["--format", "markdown"][..], "markdown.md"),
        (&["--stat"][..], "stat.txt"),
        (&["--stat", "--format", "json"][..], "stat.json"),
        (&["--stat", "--format", "markdown"][..], "stat.md"),
        (&["--stat", "--format", "sql"][..], "stat.sql"),
        (&["--full-rows"][..], "human-full-rows.txt"),
        (
            &["--format", "markdown", "--full-rows"][..],
            "markdown-full-rows.md",
        ),
    ] {
        assert_eq!(run(extra), golden("columns", file), "{extra:?}");
    }
    assert_golden("columns", "patch.sql", &run(&["--format", "sql"]));
    assert_golden("changes", "patch.sql", &{
        let (code, out, _) = ndarc(
            &["diff", "--format", "sql", "before.ndjson", "after.ndjson"],
            &data("changes", ""),
            None,
        );
        assert_eq!(code, 1);
        out
    });
    // What diffArchives says: every row in both archives changed.
    let json = run(&["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let changed = |t: &str| -> Vec<String> {
        v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == t)
            .unwrap()["changed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(changed("tags"), ["1", "2", "3"]);
    assert_eq!(changed("items"), ["[1]", "[2]"]);
    assert_eq!(changed("people"), ["[1]", "[2]"]);
    let tags = &v["tables"][2];
    assert_eq!(tags["columns"]["removed"][0], "weight");
    assert_eq!(
        v["tables"][1]["columns"]["renamed"][0]["before"],
        "fullname"
    );
    assert_eq!(v["tables"][0]["addedRows"][0]["row"]["color"], "blue");
    // Row 3's weight was null: only it changed by the columns alone.
    assert_eq!(v["stat"]["tables"][2]["columnsOnly"], 1);
    // The human output stays short: rows whose dropped column held a
    // value show it, the others are counted.
    let human = run(&[]);
    assert!(human.contains("table tags: 0 added, 0 removed, 3 changed (column weight removed)\n  1 row changed only by the columns\n  ~ 1\n      weight: 1 → (column removed)\n  ~ 2\n      weight: 0.5 → (column removed)\n\n"), "{human}");
    assert!(
        human.contains("  ~ [1]\n      color: (column added) → \"red\"\n"),
        "{human}"
    );
}

/// --table, --ignore-object, --ignore-payload and --key decide the exit
/// status; a --key that is not unique or names no column exits 2.
#[test]
fn filters_decide_the_exit_status() {
    let dir = data("filters", "");
    let status = |extra: &[&str]| {
        let mut args = vec!["diff", "--quiet", "before.ndjson", "after.ndjson"];
        args.extend_from_slice(extra);
        ndarc(&args, &dir, None).0
    };
    assert_eq!(status(&[]), 1);
    // Every table ignored: the changed object and payload still count.
    assert_eq!(status(&["--ignore-table", "*"]), 1);
    assert_eq!(
        status(&["--ignore-table", "*", "--ignore-object", "files/*"]),
        1
    );
    assert_eq!(
        status(&[
            "--ignore-table",
            "*",
            "--ignore-object",
            "files/*",
            "--ignore-payload",
            "kv"
        ]),
        0
    );
    let quiet_tags = [
        "--ignore-object",
        "*",
        "--ignore-payload",
        "*",
        "--table",
        "tags",
    ];
    // tags' rowids were renumbered: different by rowid, equal by label.
    assert_eq!(status(&quiet_tags), 1);
    let mut by_label = quiet_tags.to_vec();
    by_label.extend(["--key", "tags=label"]);
    assert_eq!(status(&by_label), 0);
    let mut by_color = quiet_tags.to_vec();
    by_color.extend(["--key", "tags=color"]);
    let (code, _, err) = ndarc(
        &[&["diff", "before.ndjson", "after.ndjson"][..], &by_color].concat(),
        &dir,
        None,
    );
    assert_eq!(code, 2);
    assert!(err.contains("two rows of table tags"), "{err}");
    assert_eq!(status(&["--key", "tags=nope"]), 2);
    assert_eq!(status(&["--key", "nope=label"]), 2);
    assert_eq!(status(&["--key", "tags"]), 2);
    assert_eq!(status(&["--key", "tags=label", "--format", "sql"]), 2);
    // --table: only audit in the JSON.
    let (code, out, _) = ndarc(
        &[
            "diff",
            "--format",
            "json",
            "--table",
            "audit",
            "before.ndjson",
            "after.ndjson",
        ],
        &dir,
        None,
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tables"].as_array().unwrap().len(), 1);
    assert_eq!(v["tables"][0]["name"], "audit");
    assert_eq!(v["tables"][0]["addedRows"][0]["row"]["what"], "c");
    assert_eq!(v["ignored"]["tables"][0], "tags");
    // Every flag has --help text.
    let (_, help, _) = ndarc(&["diff", "--help"], &dir, None);
    for flag in [
        "--table",
        "--ignore-object",
        "--ignore-payload",
        "--key",
        "--full-rows",
        "--stat",
    ] {
        assert!(help.contains(flag), "{flag}");
    }
}

#[test]
fn options_that_cannot_mean_what_was_asked_exit_2() {
    let dir = data("changes", "");
    let base = "../../valid/base.ndjson";
    // A --table pattern that matches no table is a typo, not "no differences".
    let (code, out, err) = ndarc(
        &["diff", "before.ndjson", "after.ndjson", "--table", "nosuch"],
        &dir,
        None,
    );
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("--table \"nosuch\" matches no table of either archive (they have: audit_log, legacy, notes, old_stuff, users)"),
        "{err}"
    );
    // One pattern that matches is not enough: each must.
    let (code, _, err) = ndarc(
        &[
            "diff",
            "before.ndjson",
            "after.ndjson",
            "--table",
            "users",
            "--table",
            "user",
        ],
        &dir,
        None,
    );
    assert_eq!(code, 2, "{err}");
    // A second --key for one table would silently replace or be ignored.
    let (code, _, err) = ndarc(
        &[
            "diff",
            "before.ndjson",
            "after.ndjson",
            "--key",
            "notes=body",
            "--key",
            "NOTES=user_id",
        ],
        &dir,
        None,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a second --key for table \"NOTES\""), "{err}");
    // Different products: the message names the option that allows it.
    let (code, _, err) = ndarc(&["diff", "before.ndjson", base], &dir, None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("pass --allow-product-mismatch"), "{err}");
}
