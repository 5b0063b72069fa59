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
    assert_eq!(golden.len(), 3491);
    for extra in [
        &[][..],
        &["--max-markdown-bytes", "0"][..],
        &["--max-markdown-bytes", "4K"][..],
        &["--max-markdown-bytes", "3491"][..],
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
