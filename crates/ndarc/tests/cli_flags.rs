//! Flags defined once (issue 9, item 5): the same limits, `--max-errors`,
//! `--format json` and `--accept-format` in every command.

mod common;

use common::{example, ndarc, ndarc_in, s, testdata, Scratch};

/// `--accept-format` is the exact list of accepted identifiers, so the
/// corpus fixture that accepts only another format runs from the CLI.
#[test]
fn accept_format_is_the_exact_list() {
    let fixture = testdata("invalid/unsupported_format-accepted-other.ndjson");
    let r = ndarc(&["verify", "--accept-format", "other-format", s(&fixture)]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.out().contains(":1:111: unsupported_format:"),
        "{}",
        r.out()
    );
    let r = ndarc(&["verify", s(&fixture)]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = ndarc(&[
        "verify",
        "--accept-format",
        "other-format",
        "--accept-format",
        "rer-portability",
        s(&fixture),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let ex = example();
    let r = ndarc(&["diff", "--accept-format", "other-format", s(&ex), s(&ex)]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("unsupported_format"), "{}", r.stderr);
}

/// `--format json` is the output switch everywhere; `--json` stays as a
/// hidden alias where it meant output.
#[test]
fn format_json_everywhere() {
    let ex = example();
    for args in [
        vec!["inspect", "--format", "json", s(&ex)],
        vec!["inspect", "--json", s(&ex)],
        vec!["verify", "--format", "json", s(&ex)],
        vec!["diff", "--format", "json", s(&ex), s(&ex)],
    ] {
        let r = ndarc(&args);
        assert_eq!(r.code, 0, "{args:?}: {r:?}");
        let v: serde_json::Value = serde_json::from_slice(&r.stdout).expect("JSON");
        assert!(v.is_object(), "{args:?}");
    }
    let r = ndarc(&["inspect", "--help"]);
    assert!(!r.out().contains("--json"), "hidden: {}", r.out());
}

/// canon's JSON-input switch is `--input json`; `--json` no longer means
/// input anywhere.
#[test]
fn canon_input_json() {
    let dir = Scratch::new("canon-input");
    let r = ndarc_in(
        &dir.0,
        &["canon", "--input", "json"],
        b"{ \"b\": 1,\n \"a\": [ ] }\n",
    );
    assert_eq!(
        (r.code, r.out().as_str()),
        (0, "{\"a\":[],\"b\":1}\n"),
        "{r:?}"
    );
    let r = ndarc_in(&dir.0, &["canon", "--json"], b"{}\n");
    assert_eq!(r.code, 2, "{r:?}");
}

/// One `--max-errors` default: 100, in verify and diff alike.
#[test]
fn max_errors_has_one_default() {
    for cmd in ["verify", "diff", "canon"] {
        let r = ndarc(&[cmd, "--help"]);
        if cmd == "canon" {
            assert!(r.out().contains("--max-manifest-bytes"), "{}", r.out());
            continue;
        }
        assert!(r.out().contains("[default: 100]"), "{cmd}: {}", r.out());
        assert!(r.out().contains("--max-manifest-bytes"), "{cmd}");
    }
}
