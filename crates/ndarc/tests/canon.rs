//! `ndarc canon` end to end: outputs, exit statuses, positions, atomic
//! output and `--force`, standard input, `--input json`, `--check`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_ndarc");

struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

impl Run {
    fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Runs `ndarc ARGS` in `dir` with `stdin` as standard input.
fn ndarc_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    ndarc_env(dir, &[], args, stdin)
}

/// [`ndarc_in`] with more environment variables.
fn ndarc_env(dir: &Path, env: &[(&str, &Path)], args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ndarc");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    // Write from a thread so a large input cannot deadlock against output.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ndarc(args: &[&str], stdin: &[u8]) -> Run {
    ndarc_in(&std::env::temp_dir(), args, stdin)
}

/// A fresh directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ndarc-canon-test-{}-{name}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        fs::write(&p, bytes).expect("write file");
        p
    }

    fn run(&self, args: &[&str], stdin: &[u8]) -> Run {
        ndarc_in(&self.0, args, stdin)
    }

    /// The names in the directory, sorted.
    fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(&self.0)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const MESSY: &[u8] =
    b"{\"b\": 1, \"a\": [1.0, 2e0, -0]}\n{\"x\":\"\\u0041\\/\"}\n[1E21,\"\\ud83d\\ude00\"]\n";
const CANON: &str = "{\"a\":[1,2,0],\"b\":1}\n{\"x\":\"A/\"}\n[1e+21,\"\u{1F600}\"]\n";

#[test]
fn canonicalizes_each_line_to_stdout() {
    let s = Scratch::new("stdout");
    s.write("in.ndjson", MESSY);
    let r = s.run(&["canon", "in.ndjson"], b"");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(r.out(), CANON);
}

#[test]
fn canonical_input_is_copied_byte_for_byte() {
    let canon = "{\"\u{1F600}\":1,\"\u{FB33}\":2}\n\"\\u0000\\b\\u001f\\\"\\\\\u{7f}\u{2028}\"\n[5e-324,1.7976931348623157e+308,0.30000000000000004]\n";
    let r = ndarc(&["canon"], canon.as_bytes());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(r.out(), canon);
    let r = ndarc(&["canon", "--check"], canon.as_bytes());
    assert_eq!((r.code, r.out().as_str(), r.stderr.as_str()), (0, "", ""));
}

#[test]
fn reads_stdin_with_dash_or_no_file() {
    for args in [&["canon", "-"][..], &["canon"][..]] {
        let r = ndarc(args, MESSY);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        assert_eq!(r.out(), CANON, "{args:?}");
    }
}

/// Standard input is read once: no copy of it is spooled to a temporary
/// file (a 3 MiB input, read in several chunks, in rewrite and check mode).
/// An unnamed temporary file (`O_TMPFILE`) never shows in a directory, so
/// TMPDIR names a directory that does not exist: creating any temporary
/// file there fails, and would fail the run.
#[test]
fn stdin_is_not_spooled() {
    let s = Scratch::new("tmpdir");
    let tmpdir = s.path("none");
    let mut input = Vec::new();
    while input.len() < 3 << 20 {
        input.extend_from_slice(MESSY);
    }
    let want = CANON.repeat(input.len() / MESSY.len());
    let env = [("TMPDIR", tmpdir.as_path())];
    let r = ndarc_env(&s.0, &env, &["canon", "-"], &input);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(r.out() == want, "the canonical lines");
    let r = ndarc_env(&s.0, &env, &["canon", "--check", "-"], want.as_bytes());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(s.entries(), Vec::<String>::new());
}

#[test]
fn empty_input_gives_empty_output() {
    let r = ndarc(&["canon"], b"");
    assert_eq!((r.code, r.out().as_str(), r.stderr.as_str()), (0, "", ""));
    let r = ndarc(&["canon", "--check"], b"");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

#[test]
fn last_line_gets_its_lf() {
    let r = ndarc(&["canon"], b"{\"a\":1}\n[ 1 ]");
    assert_eq!((r.code, r.out().as_str()), (0, "{\"a\":1}\n[1]\n"));
    let r = ndarc(&["canon", "--check"], b"{\"a\":1}\n[1]");
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "<stdin>:2:11: not canonical: the last line does not end with LF\n"
    );
}

#[test]
fn check_names_the_first_non_canonical_line_and_offset() {
    let s = Scratch::new("check");
    // Offsets are from the start of the file: line 3 starts at byte 12.
    s.write("a.ndjson", b"{\"a\":1}\n[1]\n{\"id\":7, \"x\":2}\n[ ]\n");
    let r = s.run(&["canon", "--check", "a.ndjson"], b"");
    assert_eq!(r.code, 1);
    assert_eq!(r.out(), "");
    assert_eq!(r.stderr, "a.ndjson:3:20: not canonical\n");

    let cases: &[(&[u8], &str)] = &[
        (b" {}\n", "<stdin>:1:0: not canonical\n"),
        (b"{}\n{\"b\":1,\"a\":2}\n", "<stdin>:2:10: not canonical\n"),
        (b"[1]\n[1.0]\n", "<stdin>:2:5: not canonical\n"),
        (
            b"[1]\n[1]\n[\"\\u0041\"]\n",
            "<stdin>:3:10: not canonical\n",
        ),
        (b"[1]\n[\"\\/\"]\n", "<stdin>:2:6: not canonical\n"),
        (
            b"{\"a\":{\"c\":1,\"b\":2}}\n",
            "<stdin>:1:12: not canonical\n",
        ),
        (b"[-0]\n", "<stdin>:1:1: not canonical\n"),
        (b"[1e21]\n", "<stdin>:1:1: not canonical\n"),
    ];
    for (input, want) in cases {
        let r = ndarc(&["canon", "--check", "-"], input);
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (1, *want),
            "{}",
            String::from_utf8_lossy(input)
        );
        assert!(r.stdout.is_empty());
    }
}

#[test]
fn invalid_lines_exit_1_with_file_line_offset_code() {
    let cases: &[(&[u8], &str)] = &[
        (
            b"{\"a\":1}\n{\"a\":1,\"a\":2}\n",
            "<stdin>:2:15: json_duplicate_member: duplicate member name \"a\"\n",
        ),
        (
            b"[1]\n[1,]\n",
            "<stdin>:2:7: json_syntax: expected a JSON value, found `]` (a trailing comma?)\n",
        ),
        (
            b"\xef\xbb\xbf{}\n",
            "<stdin>:1:0: json_bom: the text starts with a UTF-8 byte-order mark; remove the first three bytes\n",
        ),
        (b"[1]\n[\"\xff\"]\n", "<stdin>:2:6: json_invalid_utf8: invalid UTF-8 byte sequence\n"),
        (
            b"[\"\\ud800\"]\n",
            "<stdin>:1:2: json_lone_surrogate: escaped lone surrogate \\ud800: strings must be valid Unicode\n",
        ),
        (
            b"[1e309]\n",
            "<stdin>:1:1: json_number_range: number 1e309 is out of the range of a 64-bit double\n",
        ),
        (
            b"{}\n\n{}\n",
            "<stdin>:2:3: empty_line: an empty line; every line is one record\n",
        ),
        (
            b"{}\r\n{}\n",
            "<stdin>:1:2: carriage_return: the line ends with CR LF; records are separated by LF alone\n",
        ),
        // A CR anywhere in a line, at its offset (the line source's rule,
        // as in `verify`), even where JSON would take it as whitespace.
        (
            b"{}\n[1,\r2]\n",
            "<stdin>:2:6: carriage_return: a carriage return (CR) inside the line; lines are separated by LF alone and hold no CR\n",
        ),
        (
            b"{}\n\r\n{}\n",
            "<stdin>:2:3: carriage_return: the line ends with CR LF; records are separated by LF alone\n",
        ),
        // Empty lines at the end.
        (
            b"{}\n\n\n",
            "<stdin>:2:3: empty_line: an empty line; every line is one record\n",
        ),
        (
            b"{} {}\n",
            "<stdin>:1:3: json_syntax: unexpected `{` after the JSON value; one text holds exactly one value\n",
        ),
    ];
    for (input, want) in cases {
        for check in [false, true] {
            let mut args = vec!["canon"];
            if check {
                args.push("--check");
            }
            let r = ndarc(&args, input);
            assert_eq!(
                (r.code, r.stderr.as_str()),
                (1, *want),
                "check={check} {}",
                String::from_utf8_lossy(input)
            );
        }
    }
    let deep = "[".repeat(65) + &"]".repeat(65) + "\n";
    let r = ndarc(&["canon"], format!("1\n{deep}").as_bytes());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with("<stdin>:2:66: json_depth: "),
        "{}",
        r.stderr
    );
}

#[test]
fn stdout_keeps_the_lines_before_an_error() {
    let r = ndarc(&["canon"], b"[ 1 ]\n{\"b\":2, \"a\":1}\n[1,]\n[2]\n");
    assert_eq!(r.code, 1);
    assert_eq!(r.out(), "[1]\n{\"a\":1,\"b\":2}\n");
    assert!(
        r.stderr.starts_with("<stdin>:3:24: json_syntax:"),
        "{}",
        r.stderr
    );
}

/// Over many batches (about 12 MiB, batches of 4 MiB read, judged and
/// written by overlapping stages), the output keeps input order, and a
/// problem deep in the input is reported at its line with exactly the
/// lines before it written.
#[test]
fn many_batches_keep_input_order_and_stop_at_the_first_problem() {
    let pad = "é".repeat(100);
    // Members in order (rewritten in one pass) or not (parsed and sorted).
    let messy = |i: usize| match i % 2 {
        0 => format!("{{\"n\": {i}.0, \"pad\": \"{pad}\"}}\n"),
        _ => format!("{{\"pad\": \"{pad}\", \"n\": {i}.0}}\n"),
    };
    let canon = |i: usize| format!("{{\"n\":{i},\"pad\":\"{pad}\"}}\n");
    let lines = 60_000;
    let input: String = (1..=lines).map(messy).collect();
    assert!(input.len() > 12 << 20);
    let want: String = (1..=lines).map(canon).collect();
    let r = ndarc(&["canon"], input.as_bytes());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(r.out() == want, "canonical lines in input order");

    // An invalid line in the third batch.
    let bad = 45_000;
    let mut broken: Vec<String> = (1..=lines).map(messy).collect();
    broken[bad - 1] = "[1,]\n".to_string();
    let offset: usize = broken[..bad - 1].iter().map(String::len).sum::<usize>() + 3;
    let r = ndarc(&["canon"], broken.concat().as_bytes());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .starts_with(&format!("<stdin>:{bad}:{offset}: json_syntax:")),
        "{}",
        r.stderr
    );
    let before: String = (1..bad).map(canon).collect();
    assert!(r.out() == before, "exactly the lines before the error");

    // --check: the first non-canonical line, and an empty line, deep in.
    let mut mixed: Vec<String> = (1..=lines).map(canon).collect();
    mixed[bad - 1] = "{\"n\": 1}\n".to_string();
    let offset: usize = mixed[..bad - 1].iter().map(String::len).sum::<usize>() + 5;
    let r = ndarc(&["canon", "--check"], mixed.concat().as_bytes());
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, format!("<stdin>:{bad}:{offset}: not canonical\n"));
    mixed[bad - 1] = "\n".to_string();
    let r = ndarc(&["canon", "--check"], mixed.concat().as_bytes());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with(&format!("<stdin>:{bad}:")) && r.stderr.contains("empty_line"),
        "{}",
        r.stderr
    );
}

#[test]
fn long_lines_are_an_error_not_an_allocation() {
    let r = ndarc(&["canon", "--max-line-bytes", "8"], b"[1,2,3]\n[1,2,3,4]\n");
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "<stdin>:2:16: line_too_long: line 2 is longer than 8 bytes; raise --max-line-bytes to accept it\n"
    );
    assert_eq!(r.out(), "[1,2,3]\n");
    // A line of exactly the limit is fine (the LF is not counted).
    let r = ndarc(&["canon", "--max-line-bytes", "9"], b"[1,2,3,4]\n");
    assert_eq!((r.code, r.out().as_str()), (0, "[1,2,3,4]\n"));
    // 64 MiB without an LF against a 1 KiB limit: stops at once.
    let big = vec![b' '; 64 << 20];
    let r = ndarc(&["canon", "--max-manifest-bytes", "1K"], &big);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with("<stdin>:1:1024: line_too_long: "),
        "{}",
        r.stderr
    );
}

#[test]
fn output_file_is_atomic_and_needs_force_to_replace() {
    let s = Scratch::new("atomic");
    s.write("in.ndjson", MESSY);
    let r = s.run(&["canon", "in.ndjson", "-o", "out.ndjson"], b"");
    assert_eq!((r.code, r.out().as_str(), r.stderr.as_str()), (0, "", ""));
    assert_eq!(
        fs::read_to_string(s.path("out.ndjson")).expect("out"),
        CANON
    );
    assert_eq!(s.entries(), vec!["in.ndjson", "out.ndjson"]);

    // Existing output: refused with exit 2, file untouched.
    s.write("out.ndjson", b"precious\n");
    let r = s.run(&["canon", "in.ndjson", "-o", "out.ndjson"], b"");
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "ndarc: error: out.ndjson already exists; use --force to replace it\n"
    );
    assert_eq!(fs::read(s.path("out.ndjson")).expect("out"), b"precious\n");

    // --force replaces it.
    let r = s.run(&["canon", "in.ndjson", "-o", "out.ndjson", "--force"], b"");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(
        fs::read_to_string(s.path("out.ndjson")).expect("out"),
        CANON
    );

    // Invalid input: exit 1, the existing file is untouched, no temporary
    // file is left, with or without --force.
    s.write("bad.ndjson", b"[1]\n[2]\n[3,]\n");
    s.write("out.ndjson", b"precious\n");
    let r = s.run(&["canon", "bad.ndjson", "-o", "out.ndjson", "--force"], b"");
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with("bad.ndjson:3:11: json_syntax:"),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read(s.path("out.ndjson")).expect("out"), b"precious\n");
    let r = s.run(&["canon", "bad.ndjson", "-o", "new.ndjson"], b"");
    assert_eq!(r.code, 1);
    assert_eq!(s.entries(), vec!["bad.ndjson", "in.ndjson", "out.ndjson"]);
}

#[test]
fn rewrites_in_place_with_force() {
    let s = Scratch::new("inplace");
    s.write("a.ndjson", MESSY);
    let r = s.run(&["canon", "a.ndjson", "-o", "a.ndjson", "--force"], b"");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(fs::read_to_string(s.path("a.ndjson")).expect("a"), CANON);
    assert_eq!(s.entries(), vec!["a.ndjson"]);
    let r = s.run(&["canon", "--check", "a.ndjson"], b"");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

#[test]
fn output_from_stdin_and_to_dash() {
    let s = Scratch::new("stdin-out");
    let r = s.run(&["canon", "-", "-o", "c.ndjson"], MESSY);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(fs::read_to_string(s.path("c.ndjson")).expect("c"), CANON);
    let r = s.run(&["canon", "-o", "-"], MESSY);
    assert_eq!((r.code, r.out()), (0, CANON.to_string()));
}

#[test]
fn json_mode_reads_one_pretty_document() {
    let pretty = b"{\n  \"name\": \"caf\\u00e9\",\n  \"tags\": [\n    \"b\",\n    \"a\"\n  ],\n  \"count\": 10.0,\n  \"nested\": { \"z\": null, \"y\": true }\n}\n";
    let want = "{\"count\":10,\"name\":\"caf\u{e9}\",\"nested\":{\"y\":true,\"z\":null},\"tags\":[\"b\",\"a\"]}\n";
    let r = ndarc(&["canon", "--input", "json"], pretty);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(r.out(), want);
    // Its canonical output passes --check, with and without --json.
    for args in [
        &["canon", "--input", "json", "--check"][..],
        &["canon", "--check"][..],
    ] {
        let r = ndarc(args, want.as_bytes());
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
    }
    // The pretty text is not canonical: the first byte after `{`.
    let r = ndarc(&["canon", "--input", "json", "--check"], pretty);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (1, "<stdin>:1:1: not canonical\n")
    );
    // Without --json, the first line `{` is not a JSON text.
    let r = ndarc(&["canon"], pretty);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with("<stdin>:1:1: json_syntax:"),
        "{}",
        r.stderr
    );
}

#[test]
fn json_mode_errors_have_lines() {
    let cases: &[(&[u8], &str)] = &[
        (
            b"{\n  \"a\": 1,\n  \"b\": [1, 2,]\n}\n",
            "<stdin>:3:25: json_syntax: expected a JSON value, found `]` (a trailing comma?)\n",
        ),
        (
            b"{\"a\": 1}\n{\"b\": 2}\n",
            "<stdin>:2:9: json_syntax: unexpected `{` after the JSON value; one text holds exactly one value\n",
        ),
        (
            b"",
            "<stdin>:1:0: json_syntax: expected a JSON value, found the end of the text\n",
        ),
        (
            b"{\n\"a\": 1,\n\"a\": 2\n}",
            "<stdin>:3:10: json_duplicate_member: duplicate member name \"a\"\n",
        ),
    ];
    for (input, want) in cases {
        let r = ndarc(&["canon", "--input", "json"], input);
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (1, *want),
            "{}",
            String::from_utf8_lossy(input)
        );
        assert!(r.stdout.is_empty());
    }
    // --input json --check: the text must be canonical and end with one LF.
    let r = ndarc(&["canon", "--input", "json", "--check"], b"[1]");
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "<stdin>:1:3: not canonical: the text does not end with LF\n"
        )
    );
    let r = ndarc(&["canon", "--input", "json", "--check"], b"[1]\n\n");
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (1, "<stdin>:1:3: not canonical\n")
    );
    let r = ndarc(
        &["canon", "--input", "json", "--max-manifest-bytes", "4"],
        b"[1, 2]",
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with("<stdin>:1:4: input_too_long: "),
        "{}",
        r.stderr
    );
}

#[test]
fn usage_and_io_problems_exit_2() {
    let usage: &[&[&str]] = &[
        &["canon", "--bogus"],
        &["canon", "--check", "-o", "x"],
        &["canon", "--force"],
        &["canon", "--max-line-bytes", "0"],
        &["canon", "--max-line-bytes", "lots"],
        &["canon", "a", "b"],
        &["frobnicate"],
        &[],
    ];
    for args in usage {
        let r = ndarc(args, b"");
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}");
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
    let s = Scratch::new("io");
    let r = s.run(&["canon", "missing.ndjson"], b"");
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "ndarc: error: cannot open missing.ndjson: no such file or directory\n"
        )
    );
    fs::create_dir(s.path("d")).expect("mkdir");
    let r = s.run(&["canon", "d"], b"");
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (2, "ndarc: error: cannot open d: is a directory\n")
    );
    let r = s.run(&["canon", "-o", "d", "--force"], b"[1]\n");
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (2, "ndarc: error: cannot write d: is a directory\n")
    );
    let r = s.run(&["canon", "-o", "no/such/dir/x.ndjson"], b"[1]\n");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("ndarc: error: cannot create a temporary file in no/such/dir"),
        "{}",
        r.stderr
    );
}

#[test]
fn help_and_version() {
    let r = ndarc(&["-V"], b"");
    assert_eq!((r.code, r.out().trim()), (0, "ndarc 0.1.0"));
    // The long form also names the SHA-256 code this CPU runs.
    let r = ndarc(&["--version"], b"");
    let kernel = r
        .out()
        .trim()
        .strip_prefix("ndarc 0.1.0 (SHA-256 kernel: ")
        .and_then(|k| k.strip_suffix(')'))
        .map(str::to_string);
    assert_eq!(r.code, 0);
    assert!(
        matches!(
            kernel.as_deref(),
            Some("avx512-lanes" | "sha-ni-pairs" | "portable")
        ),
        "{}",
        r.out()
    );
    for args in [
        &["--help"][..],
        &["canon", "--help"][..],
        &["help", "canon"][..],
    ] {
        let r = ndarc(args, b"");
        assert_eq!(r.code, 0, "{args:?}");
        assert!(r.out().contains("Examples:"), "{args:?}: {}", r.out());
    }
    let r = ndarc(&["canon", "--help"], b"");
    assert!(r.out().contains("ndarc canon --check export.ndjson"));
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let r = ndarc(&["--color", "always", "canon", "--check"], b" 1\n");
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("\x1b["), "{:?}", r.stderr);
    // Pipes are not terminals: no colour by default.
    let r = ndarc(&["canon", "--check"], b" 1\n");
    assert!(!r.stderr.contains('\x1b'), "{:?}", r.stderr);
    let r = ndarc(&["canon", "--check", "--color", "never"], b" 1\n");
    assert_eq!(r.stderr, "<stdin>:1:0: not canonical\n");
}
