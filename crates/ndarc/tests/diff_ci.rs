//! `ndarc diff` in CI (issue 25 §3): markdown within a byte cap, several
//! outputs from one run (`--also`), gates (`--gate`).

mod common;

use common::{ndarc, ndarc_in, s, testdata, Scratch};

/// A generated pair with many changes: 10 tables of 8,000 rows against
/// the later export (5 % changed, 2 % added, 1 % removed).
fn big_pair(dir: &Scratch) -> (String, String) {
    let a = dir.path("a.ndjson");
    let b = dir.path("b.ndjson");
    let r = ndarc(&["gen", "--rows", "8000", "-o", s(&a)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = ndarc(&["gen", "--rows", "8000", "--later", "1", "-o", s(&b)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (s(&a).to_string(), s(&b).to_string())
}

const CUT: &str = "**Cut to stay within";

#[test]
fn markdown_stays_within_the_cap() {
    let dir = Scratch::new("diff-ci-cap");
    let (a, b) = big_pair(&dir);
    let run = |extra: &[&str]| {
        let mut args = vec!["diff", "--format", "markdown", &a, &b];
        args.extend_from_slice(extra);
        let r = ndarc(&args);
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stderr);
        r.out()
    };
    let full = run(&["--max-markdown-bytes", "0"]);
    assert!(full.len() > 1_024_000, "{} bytes uncapped", full.len());
    assert!(!full.contains(CUT));
    // The default: 1000K.
    let capped = run(&[]);
    assert!(capped.len() <= 1_024_000, "{} bytes", capped.len());
    assert!(
        capped.len() > 1_000_000,
        "{} bytes: the cap is used",
        capped.len()
    );
    let last = capped.lines().last().unwrap();
    assert!(
        last.starts_with("**Cut to stay within 1024000 bytes** (`--max-markdown-bytes`): not shown: the detail of ")
            && last.ends_with("The counts above are complete; `ndarc diff --format json` (or `--max-markdown-bytes 0`) shows everything."),
        "{last}"
    );
    // Full counts: the counts table is the uncapped one.
    let counts = |md: &str| -> Vec<String> {
        md.lines()
            .skip_while(|l| !l.starts_with("| | Added |"))
            .take_while(|l| l.starts_with('|'))
            .map(str::to_string)
            .collect()
    };
    assert!(counts(&full).len() > 10);
    assert_eq!(counts(&capped), counts(&full));
    // Before its closing, the capped output is the uncapped one cut at a
    // piece boundary.
    let body = &capped[..capped.rfind("\n\n</details>\n\n**Cut").unwrap()];
    assert!(full.starts_with(body));
    // Any cap holds exactly, and what is cut is counted: the rows not shown
    // plus those shown are all the row changes.
    for cap in [2048usize, 4096, 5000, 16 * 1024, 100_000, 777_777, 1 << 20] {
        let out = run(&["--max-markdown-bytes", &cap.to_string()]);
        assert!(out.len() <= cap, "cap {cap}: {} bytes", out.len());
        assert!(
            out.contains(&format!("**Cut to stay within {cap} bytes**")),
            "cap {cap}"
        );
        assert_eq!(counts(&out), counts(&full), "cap {cap}");
    }
    // A gate's section comes before the counts: a small cap keeps it.
    let gate = dir.write("g.json", br#"{"tables": {"*": {"maxRemovedPercent": 0}}}"#);
    let out = run(&["--max-markdown-bytes", "3K", "--gate", s(&gate)]);
    assert!(out.len() <= 3072);
    assert!(out.contains("#### Gate: failed\n\n1 of 1 rule broken:\n\n- <code>/tables/&#42;/maxRemovedPercent</code>"), "{out}");
    let out = run(&["--max-markdown-bytes", "4K"]);
    assert!(out.contains("**Cut to stay within 4096 bytes**"));
    // Below 2K: a usage error.
    let r = ndarc(&[
        "diff",
        "--format",
        "markdown",
        "--max-markdown-bytes",
        "2047",
        &a,
        &b,
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("at least 2048"), "{}", r.stderr);
}

#[test]
fn small_markdown_is_unchanged_by_the_cap() {
    let dir = testdata("diff/changes");
    let golden = std::fs::read_to_string(dir.join("markdown.md")).unwrap();
    assert_eq!(golden.len(), 3711);
    for extra in [
        &[][..],
        &["--max-markdown-bytes", "0"][..],
        &["--max-markdown-bytes", "4K"][..],
        &["--max-markdown-bytes", "3711"][..],
    ] {
        let mut args = vec![
            "diff",
            "--format",
            "markdown",
            "before.ndjson",
            "after.ndjson",
        ];
        args.extend_from_slice(extra);
        let r = ndarc_in(&dir, &args, b"");
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert_eq!(r.out(), golden, "{extra:?}");
    }
}

/// Cut by a cap it does not fit in, the golden diff keeps its counts and
/// closes its sections; the last line names what was left out.
#[test]
fn a_small_diff_cut_names_the_sections_left_out() {
    let dir = testdata("diff/changes");
    let golden = std::fs::read_to_string(dir.join("markdown.md")).unwrap();
    let cap = 3490usize;
    let r = ndarc_in(
        &dir,
        &[
            "diff",
            "--format",
            "markdown",
            "--max-markdown-bytes",
            "3490",
            "before.ndjson",
            "after.ndjson",
        ],
        b"",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let out = r.out();
    assert!(out.len() <= cap);
    let cut = out.rfind("\n\n</details>\n\n**Cut").unwrap();
    assert!(golden.starts_with(&out[..cut]));
    assert!(out.ends_with(
        "|---|---|---|---|\n\n\n</details>\n\n**Cut to stay within 3490 bytes** (`--max-markdown-bytes`): not shown: the detail of 2 row changes in 1 table, the objects and payloads section, the configuration section. The counts above are complete; `ndarc diff --format json` (or `--max-markdown-bytes 0`) shows everything.\n"
    ), "{out}");
    // Every table's section is there, the last one cut after its header.
    assert_eq!(out.matches("<details><summary><code>").count(), 5);
    assert_eq!(out.matches("</details>").count(), 6);
}

/// `--also FORMAT=FILE`: one run writes every format, each equal to what a
/// run of that format alone prints.
#[test]
fn one_run_writes_several_outputs() {
    let dir = testdata("diff/changes");
    let tmp = Scratch::new("diff-ci-also");
    let (md, json, sql) = (tmp.path("s.md"), tmp.path("d.json"), tmp.path("p.sql"));
    let also = |f: &str, p: &std::path::Path| format!("{f}={}", s(p));
    let (a_md, a_json, a_sql) = (
        also("markdown", &md),
        also("json", &json),
        also("sql", &sql),
    );
    let args = [
        "diff",
        "before.ndjson",
        "after.ndjson",
        "--format",
        "human",
        "--also",
        &a_md,
        "--also",
        &a_json,
        "--also",
        &a_sql,
    ];
    let r = ndarc_in(&dir, &args, b"");
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let golden = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
    assert_eq!(r.out(), golden("human.txt"));
    assert_eq!(read(&md), golden("markdown.md"));
    assert_eq!(read(&json), golden("diff.json"));
    assert_eq!(read(&sql), golden("patch.sql"));
    // Existing files are refused (exit 2, nothing written), replaced with
    // --force.
    std::fs::write(&md, "old").unwrap();
    let r = ndarc_in(
        &dir,
        &["diff", "before.ndjson", "after.ndjson", "--also", &a_md],
        b"",
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("already exists; use --force"),
        "{}",
        r.stderr
    );
    assert_eq!(read(&md), "old");
    // --quiet still writes the files asked for.
    let r = ndarc_in(
        &dir,
        &[
            "diff",
            "-q",
            "--force",
            "before.ndjson",
            "after.ndjson",
            "--also",
            &a_md,
        ],
        b"",
    );
    assert_eq!((r.code, r.out().as_str()), (1, ""));
    assert_eq!(read(&md), golden("markdown.md"));
    // --stat applies to every output.
    let r = ndarc_in(
        &dir,
        &[
            "diff",
            "--stat",
            "--force",
            "before.ndjson",
            "after.ndjson",
            "--also",
            &a_json,
        ],
        b"",
    );
    assert_eq!((r.code, r.out()), (1, golden("stat.txt")));
    assert_eq!(read(&json), golden("stat.json"));
    // Standard input can be read only once: one run is one read.
    let before = std::fs::read(dir.join("before.ndjson")).unwrap();
    let r = ndarc_in(
        &dir,
        &[
            "diff",
            "-",
            "after.ndjson",
            "--format",
            "markdown",
            "--force",
            "--also",
            &a_json,
        ],
        &before,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let alone = ndarc_in(
        &dir,
        &["diff", "-", "after.ndjson", "--format", "json"],
        &before,
    );
    assert_eq!(read(&json), alone.out());
    assert!(read(&json).contains("\"<stdin>\""));
    assert_eq!(
        r.out(),
        ndarc_in(
            &dir,
            &["diff", "-", "after.ndjson", "--format", "markdown"],
            &before
        )
        .out()
    );
}

#[test]
fn also_refuses_what_it_cannot_write() {
    let dir = testdata("diff/changes");
    let tmp = Scratch::new("diff-ci-also-refused");
    let f = s(&tmp.path("x")).to_string();
    let refused = |extra: &[&str], message: &str| {
        let mut args = vec!["diff", "before.ndjson", "after.ndjson"];
        args.extend_from_slice(extra);
        let r = ndarc_in(&dir, &args, b"");
        assert_eq!(r.code, 2, "{extra:?}");
        assert!(r.stderr.contains(message), "{extra:?}: {}", r.stderr);
    };
    refused(&["--also", "yaml=x"], "expected FORMAT=FILE");
    refused(&["--also", "json"], "expected FORMAT=FILE");
    refused(&["--also", "json=-"], "--also writes a file");
    refused(
        &["--also", "json=before.ndjson"],
        "is an input of this command",
    );
    refused(
        &[
            "--also",
            &format!("json={f}"),
            "--also",
            &format!("markdown={f}"),
        ],
        "is written twice",
    );
    refused(
        &["--format", "sql", "--also", &format!("sql={f}")],
        "the sql patch can be written once",
    );
    refused(
        &["--key", "notes=body", "--also", &format!("sql={f}")],
        "--key cannot be used with --format sql (or --also sql=FILE)",
    );
    // --force needs a file to replace.
    refused(&["--force"], "--also <FORMAT=FILE>");
    assert!(tmp.entries().is_empty());
}

fn bless() -> bool {
    std::env::var_os("NDARC_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `got` equals `testdata/diff/gate/FILE` (written when blessing).
fn check_gate_golden(file: &str, got: &str, failures: &mut Vec<String>) {
    let path = testdata("diff/gate").join(file);
    if bless() {
        std::fs::write(&path, got).expect("bless");
        return;
    }
    match std::fs::read_to_string(&path) {
        Ok(want) if want == got => {}
        Ok(want) => failures.push(format!(
            "{file} differs; NDARC_BLESS=1 rewrites it.\n--- expected\n{want}\n--- got\n{got}"
        )),
        Err(e) => failures.push(format!("{file}: {e}; NDARC_BLESS=1 writes it")),
    }
}

/// A gate that passes (exit 0 though the archives differ) and two that
/// fail (exit 1), in every format, against the goldens in
/// `testdata/diff/gate/`: `pass` and `fail` over the `changes` pair,
/// `dropped-column` (`gate_dropped_column`) over the `columns` pair.
#[test]
fn gates_decide_the_exit_status_in_every_format() {
    let mut failures = Vec::new();
    for (pair, gate, code) in [
        ("changes", "pass", 0),
        ("changes", "fail", 1),
        ("columns", "dropped-column", 1),
    ] {
        let dir = testdata(&format!("diff/{pair}"));
        let rules = format!("../gate/{gate}.gate.json");
        for (format, ext) in [
            ("human", "txt"),
            ("json", "diff.json"),
            ("markdown", "md"),
            ("github", "github"),
        ] {
            let r = ndarc_in(
                &dir,
                &[
                    "diff",
                    "before.ndjson",
                    "after.ndjson",
                    "--gate",
                    &rules,
                    "--format",
                    format,
                ],
                b"",
            );
            assert_eq!((r.code, r.stderr.as_str()), (code, ""), "{gate} {format}");
            check_gate_golden(&format!("{gate}.{ext}"), &r.out(), &mut failures);
        }
        // --stat and --quiet: the same status.
        let r = ndarc_in(
            &dir,
            &[
                "diff",
                "-q",
                "before.ndjson",
                "after.ndjson",
                "--gate",
                &rules,
            ],
            b"",
        );
        assert_eq!((r.code, r.out().as_str()), (code, ""), "{gate} -q");
        let r = ndarc_in(
            &dir,
            &[
                "diff",
                "--stat",
                "before.ndjson",
                "after.ndjson",
                "--gate",
                &rules,
            ],
            b"",
        );
        assert_eq!(r.code, code);
        let out = r.out();
        assert!(
            out.lines().any(|l| l.starts_with(&format!(
                "gate: {}",
                if code == 0 { "passed" } else { "failed" }
            ))),
            "{gate} --stat"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The failing gate names each broken rule, in each format.
    let fail = std::fs::read_to_string(testdata("diff/gate/fail.txt")).unwrap();
    assert!(
        fail.contains("gate: failed: 6 of 8 rules broken\n"),
        "{fail}"
    );
    for line in [
        "  /maxRemovedPercent: gate_removed_rows: 2 of 8 rows removed (25%), more than 5%",
        "  /tables/*/maxRemovedPercent: gate_removed_rows: table notes: 1 of 3 rows removed (33.33%), more than 10%",
        "  /noDroppedTables: gate_dropped_table: table old_stuff dropped (1 row)",
        "  /newColumnsOnlyIn: gate_new_column: column users.email added; new columns are allowed only in notes",
        "  /maxObjectBytesChanged: gate_object_bytes: 22 bytes of objects added, removed or changed (1 added, 1 removed, 1 changed), more than 10",
        "  /requiredConfigurationUnchanged: gate_configuration: requiredConfiguration changed: +SMS_KEY",
    ] {
        assert!(fail.contains(&format!("{line}\n")), "{line}");
    }
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(testdata("diff/gate/fail.diff.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["gate"]["passed"], false);
    assert_eq!(json["gate"]["rules"].as_array().unwrap().len(), 8);
    assert_eq!(json["gate"]["broken"][2]["code"], "gate_dropped_table");
    assert_eq!(json["gate"]["broken"][2]["rule"], "/noDroppedTables");
    let md = std::fs::read_to_string(testdata("diff/gate/fail.md")).unwrap();
    assert!(md.contains(
        "#### Gate: failed\n\n6 of 8 rules broken:\n\n- <code>/maxRemovedPercent</code>"
    ));
    let pass = std::fs::read_to_string(testdata("diff/gate/pass.md")).unwrap();
    assert!(pass.contains("#### Gate: passed\n\nAll 5 rules hold: "));
    // The exact name old_stuff replaces "*" for its table: its drop (100 %
    // of its rows) passes `pass`, and only notes breaks `fail`'s 10 %.
    assert!(!fail.contains("gate_removed_rows: table old_stuff"));
}

/// Dropped and renamed columns, and a table name given exactly.
#[test]
fn dropped_columns_break_no_dropped_columns() {
    let dir = testdata("diff/columns");
    let rules = testdata("diff/gate/dropped-column.gate.json");
    let r = ndarc_in(
        &dir,
        &["diff", "before.ndjson", "after.ndjson", "--gate", s(&rules)],
        b"",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let out = r.out();
    assert!(out.contains("gate: failed: 1 of 1 rule broken\n"), "{out}");
    assert!(
        out.contains("  /noDroppedColumns: gate_dropped_column: column people.fullname renamed to name (its old name is gone)\n"),
        "{out}"
    );
    assert!(
        out.contains("  /noDroppedColumns: gate_dropped_column: column tags.weight dropped\n"),
        "{out}"
    );
    // The same archive twice passes any gate.
    let r = ndarc_in(
        &dir,
        &[
            "diff",
            "before.ndjson",
            "before.ndjson",
            "--gate",
            s(&rules),
        ],
        b"",
    );
    assert_eq!(r.code, 0);
    assert!(r.out().ends_with("gate: passed (1 rule)\n"), "{}", r.out());
    // The golden names the code in every format.
    for (f, code) in [
        ("txt", "gate_dropped_column"),
        ("diff.json", "gate_dropped_column"),
        ("md", "gate&#95;dropped&#95;column"),
        ("github", "gate_dropped_column"),
    ] {
        let text =
            std::fs::read_to_string(testdata(&format!("diff/gate/dropped-column.{f}"))).unwrap();
        assert_eq!(text.matches(code).count(), 2, "dropped-column.{f}");
    }
}

/// A gate file that is not valid exits 2 before reading the archives, with
/// a message naming the member.
#[test]
fn invalid_gate_files_exit_2_naming_the_member() {
    let dir = testdata("diff/changes");
    let tmp = Scratch::new("diff-ci-gate-invalid");
    for (text, message) in [
        (
            r#"{"tables": {"*": {"maxRemovedPercnt": 5}}}"#,
            "/tables/*/maxRemovedPercnt: unknown member \"maxRemovedPercnt\"; a tables entry has maxRemovedPercent",
        ),
        (
            r#"{"noDroppedTable": true}"#,
            "/noDroppedTable: unknown member \"noDroppedTable\"",
        ),
        (r#"{"maxRemovedPercent": "5"}"#, "/maxRemovedPercent: expected a number (a percentage), got string"),
        ("[1]", "a gate file is a JSON object, not array"),
        ("{,}", "not JSON: "),
    ] {
        let rules = tmp.write("g.json", text.as_bytes());
        let r = ndarc_in(
            &dir,
            &["diff", "before.ndjson", "missing.ndjson", "--gate", s(&rules)],
            b"",
        );
        assert_eq!((r.code, r.out().as_str()), (2, ""), "{text}");
        assert!(
            r.stderr.contains(&format!("--gate {}: {message}", s(&rules))),
            "{text}: {}",
            r.stderr
        );
    }
    let r = ndarc_in(
        &dir,
        &[
            "diff",
            "before.ndjson",
            "after.ndjson",
            "--gate",
            "nosuch.json",
        ],
        b"",
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--gate: cannot read nosuch.json"),
        "{}",
        r.stderr
    );
}

/// `--format github`: annotations, as the golden (written by ndarc-diff's
/// golden test), on standard output or through --also; the exit status
/// as in every format.
#[test]
fn github_annotations() {
    let dir = testdata("diff/changes");
    let tmp = Scratch::new("diff-ci-github");
    let golden = std::fs::read_to_string(dir.join("github.txt")).unwrap();
    let r = ndarc_in(
        &dir,
        &[
            "diff",
            "--format",
            "github",
            "before.ndjson",
            "after.ndjson",
        ],
        b"",
    );
    assert_eq!((r.code, r.out()), (1, golden.clone()));
    assert!(golden.starts_with(
        "::warning title=ndarc diff%3A table audit_log::2 added, 0 removed, 0 changed\n"
    ));
    assert!(golden.lines().last().unwrap().starts_with(
        "::notice title=ndarc diff%3A before.ndjson → after.ndjson::5 tables with row changes"
    ));
    let f = tmp.path("a.txt");
    let r = ndarc_in(
        &dir,
        &[
            "diff",
            "before.ndjson",
            "after.ndjson",
            "-q",
            "--also",
            &format!("github={}", s(&f)),
        ],
        b"",
    );
    assert_eq!(r.code, 1);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), golden);
    // A broken rule whose message holds `%`: escaped as GitHub requires.
    let fail = std::fs::read_to_string(testdata("diff/gate/fail.github")).unwrap();
    assert!(fail.starts_with("::error title=ndarc diff gate%3A /maxRemovedPercent (gate_removed_rows)::2 of 8 rows removed (25%25), more than 5%25\n"), "{fail}");
    assert_eq!(
        fail.lines().filter(|l| l.starts_with("::error ")).count(),
        6
    );
}
