//! Hostile and careless input (issue 11): each reproduction runs under a
//! time limit and an address-space limit (see `common`).

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{command, example, finish, ndarc, ndarc_in, s, testdata, Scratch, MEMORY};

const HUGE: &str = "18446744073709551615";

/// Item 7: a limit of `u64::MAX` is refused, with a usage error naming the
/// flag, by every command that takes it (it used to wrap around).
#[test]
fn limits_of_u64_max_are_refused_everywhere() {
    let ex = example();
    let e = s(&ex);
    let cases: Vec<Vec<&str>> = vec![
        vec!["verify", "--max-line-bytes", HUGE, e],
        vec!["verify", "--max-manifest-bytes", HUGE, e],
        vec!["diff", "--max-line-bytes", HUGE, e, e],
        vec!["diff", "--max-manifest-bytes", HUGE, e, e],
        vec!["inspect", "--max-manifest-bytes", HUGE, e],
        vec!["canon", "--check", "--max-line-bytes", HUGE, e],
        vec!["canon", "--check", "--max-manifest-bytes", HUGE, e],
    ];
    for args in cases {
        let r = ndarc(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        let flag = args.iter().find(|a| a.starts_with("--max-")).unwrap();
        assert!(
            r.stderr.contains(flag) && r.stderr.contains("at most"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

/// Smaller ones: one parser and one rule for the limits: K/M/G suffixes
/// everywhere, 0 refused everywhere.
#[test]
fn limits_take_suffixes_and_refuse_zero_everywhere() {
    let ex = example();
    let e = s(&ex);
    for args in [
        vec![
            "verify",
            "--max-line-bytes",
            "16M",
            "--max-manifest-bytes",
            "1M",
            e,
        ],
        vec![
            "diff",
            "--max-line-bytes",
            "300M",
            "--max-manifest-bytes",
            "1MiB",
            e,
            e,
        ],
        vec!["inspect", "--max-manifest-bytes", "64K", e],
        vec!["canon", "--check", "--max-line-bytes", "1G", e],
    ] {
        let r = ndarc(&args);
        assert_eq!(r.code, 0, "{args:?}: {r:?}");
    }
    for args in [
        vec!["verify", "--max-line-bytes", "0", e],
        vec!["verify", "--max-manifest-bytes", "0", e],
        vec!["diff", "--max-line-bytes", "0", e, e],
        vec!["inspect", "--max-manifest-bytes", "0", e],
        vec!["canon", "--check", "--max-line-bytes", "0", e],
    ] {
        let r = ndarc(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains("at least 1"), "{args:?}: {}", r.stderr);
    }
}

/// Item 8: `repart` on a FIFO is refused up front (it used to hang: it
/// reads its input twice).
#[test]
fn repart_refuses_a_fifo_at_once() {
    let dir = Scratch::new("fifo");
    let fifo = dir.path("in.fifo");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(ok.success());
    let child = command(&["repart", "--part-bytes", "4K", s(&fifo)], MEMORY)
        .spawn()
        .expect("run");
    let r = finish(child, Duration::from_secs(10), "repart on a FIFO");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
}

fn to_dev_full(args: &[&str]) -> common::Run {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut cmd = command(args, MEMORY);
    cmd.stdout(Stdio::from(full));
    let child = cmd.spawn().expect("run");
    finish(child, Duration::from_secs(60), &args.join(" "))
}

/// Item 12: a write error on standard output is exit 2 with a message, in
/// every output path.
#[test]
fn write_errors_exit_2_everywhere() {
    let ex = example();
    let e = s(&ex);
    let bad = testdata("invalid/row_not_null.ndjson");
    for args in [
        vec!["verify", e],
        vec!["verify", "--format", "github", s(&bad)],
        vec!["verify", "--format", "json", e],
        vec!["inspect", e],
        vec!["inspect", "--format", "json", e],
        vec![
            "diff",
            e,
            s(&bad),
            "--no-verify",
            "--allow-product-mismatch",
        ],
        vec!["canon", e],
        vec!["mutate", "--list"],
        vec!["mutate", e, "--seed", "1"],
        vec!["gen", "--rows", "3"],
        vec!["repart", "--part-bytes", "4K", e],
    ] {
        let r = to_dev_full(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains("cannot write"), "{args:?}: {}", r.stderr);
    }
}

/// Item 16: `--jobs` is clamped (with a note) instead of starting 10,000
/// threads.
#[test]
fn jobs_are_clamped_with_a_note() {
    let ex = example();
    let started = Instant::now();
    let r = ndarc(&["verify", "--jobs", "10000", s(&ex)]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("--jobs 10000") && r.stderr.contains("using"),
        "{}",
        r.stderr
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Item 17: SIGTERM and SIGINT remove the temporary sibling; the target
/// never appears.
#[test]
fn a_killed_writer_leaves_no_temporary() {
    for signal in ["TERM", "INT"] {
        let dir = Scratch::new(&format!("kill-{signal}"));
        let out = dir.path("big.ndjson");
        let mut cmd = command(
            &["gen", "--tables", "10", "--rows", "300000", "-o", s(&out)],
            MEMORY,
        );
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = cmd.spawn().expect("run gen");
        let started = Instant::now();
        while temporaries(&dir.0).is_empty() {
            assert!(started.elapsed() < Duration::from_secs(20), "no temporary");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(200));
        // prlimit execs ndarc, so the child's pid is ndarc's.
        let ok = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        assert!(ok.success());
        let status = child.wait().expect("wait");
        assert!(!status.success());
        assert!(temporaries(&dir.0).is_empty(), "{:?}", dir.entries());
        assert!(!out.exists());
    }
}

/// Item 17: a later run removes the stale temporary siblings of its target
/// left by a run that was killed outright (its process is gone).
#[test]
fn stale_temporaries_are_cleaned_by_a_later_run() {
    let dir = Scratch::new("stale");
    // pid_max is at most 2^22, so this process never exists.
    let stale = dir.write(".out.ndjson.ndarc-99999999-AbCdEf.tmp", b"partial");
    let other = dir.write(".other.ndjson.ndarc-99999999-AbCdEf.tmp", b"not ours");
    let mine = dir.write(
        &format!(".out.ndjson.ndarc-{}-AbCdEf.tmp", std::process::id()),
        b"a live process's",
    );
    let r = ndarc_in(&dir.0, &["gen", "--rows", "2", "-o", "out.ndjson"], b"");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!stale.exists(), "{:?}", dir.entries());
    assert!(
        other.exists() && mine.exists(),
        "only dead ones of this target"
    );
}

/// Item 14: `mutate` states and enforces its largest input before reading
/// it; a larger file is refused at once, standard input after the limit.
#[test]
fn mutate_refuses_a_large_input_before_reading_it() {
    let dir = Scratch::new("mutate-large");
    let big = dir.path("big.ndjson");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(4 << 30).expect("sparse file");
    let started = Instant::now();
    let r = ndarc(&["mutate", s(&big), "--max-input-bytes", "1M"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--max-input-bytes"), "{}", r.stderr);
    let r = ndarc(&["mutate", s(&big)]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let r = ndarc(&["canon", "--reseal", s(&big)]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--max-input-bytes"), "{}", r.stderr);
    // From a pipe: at most the limit is read, under a 600 MB address space.
    let mut cmd = command(&["mutate", "-", "--max-input-bytes", "8M"], 600 << 20);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().expect("run");
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..64 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let r = finish(child, Duration::from_secs(20), "mutate -");
    let _ = feeder.join();
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--max-input-bytes"), "{}", r.stderr);
}

/// Item 14: `canon --reseal -` stops reading at --max-input-bytes, with
/// that one error and no finding about the line it cut.
#[test]
fn reseal_from_a_pipe_stops_at_the_limit() {
    let dir = Scratch::new("reseal-pipe");
    let bytes = std::fs::read(example()).expect("example");
    let r = ndarc_in(
        &dir.0,
        &["canon", "--reseal", "--max-input-bytes", "1K", "-"],
        &bytes,
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("--max-input-bytes"), "{}", r.stderr);
    let r = ndarc_in(&dir.0, &["canon", "--reseal", "-"], &bytes);
    assert_eq!(r.code, 0, "{r:?}");
}

/// Smaller ones: diff words OS errors as verify does, without Rust's
/// `(os error N)`.
#[test]
fn diff_words_os_errors_as_verify_does() {
    let dir = Scratch::new("diff-os");
    let fifo = dir.path("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    let ex = example();
    let writer = {
        let fifo = fifo.clone();
        let bytes = std::fs::read(&ex).expect("example");
        std::thread::spawn(move || {
            let _ = std::fs::write(fifo, bytes);
        })
    };
    // A pipe is read once, as standard input is: the same archive, equal.
    let r = ndarc(&["diff", s(&fifo), s(&ex)]);
    let _ = writer.join();
    assert_eq!(r.code, 0, "{r:?}");
    // A missing file: verify's wording, no Rust `(os error N)`.
    let missing = dir.path("missing.ndjson");
    let r = ndarc(&["diff", s(&missing), s(&ex)]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(!r.stderr.contains("os error"), "{}", r.stderr);
    assert!(r.stderr.contains("cannot read"), "{}", r.stderr);
}

fn with_count(count: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(example()).expect("example");
    text.replacen("\"count\":1", &format!("\"count\":{count}"), 1)
        .into_bytes()
}

/// Smaller ones: suggested commands are runnable: quoted paths, `-`
/// rather than `<stdin>`.
#[test]
fn suggested_commands_are_quoted() {
    let dir = Scratch::new("quoted");
    let bad = dir.write("bad file.ndjson", &with_count("5"));
    let ex = example();
    let r = ndarc(&["diff", s(&bad), s(&ex)]);
    assert_eq!(r.code, 2, "{r:?}");
    let quoted = format!("`ndarc verify '{}'`", s(&bad));
    assert!(r.stderr.contains(&quoted), "{}", r.stderr);
    let r = ndarc_in(&dir.0, &["diff", "-", s(&ex)], &with_count("5"));
    assert_eq!(r.code, 2, "{r:?}");
    assert!(!r.stderr.contains("ndarc verify <stdin>"), "{}", r.stderr);
    assert!(r.stderr.contains("`ndarc verify -`"), "{}", r.stderr);
}

/// Smaller ones: the summary line gives what was seen, not what the
/// manifest claims.
#[test]
fn summary_line_counts_what_was_seen() {
    let dir = Scratch::new("claimed");
    let r = ndarc_in(&dir.0, &["verify", "-"], &with_count("1000000000000000"));
    assert_eq!(r.code, 1, "{r:?}");
    let out = r.out();
    let summary = out
        .lines()
        .find(|l| l.contains(": INVALID:"))
        .expect("summary line");
    assert!(!summary.contains("000000000000"), "{summary}");
}

/// Smaller ones: `diff --no-verify` does not call a changed claimed count
/// "the same rows in another order".
#[test]
fn no_verify_does_not_call_a_changed_count_a_reordering() {
    let dir = Scratch::new("no-verify");
    // The claimed count and the closing's contentHash changed, the rows
    // did not.
    let text = String::from_utf8(with_count("7")).expect("UTF-8");
    let at = text.rfind("\"contentHash\":\"").expect("closing hash") + 15;
    let text = format!("{}0{}", &text[..at], &text[at + 1..]);
    let changed = dir.write("changed.ndjson", text.as_bytes());
    let ex = example();
    let r = ndarc(&["diff", "--no-verify", s(&ex), s(&changed)]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(!r.out().contains("another order"), "{}", r.out());
    assert!(r.out().contains("not verified"), "{}", r.out());
}

/// Smaller ones: control characters from archive text (ESC, BEL) are
/// escaped in every human-facing output, markdown included.
#[test]
fn control_characters_are_escaped_in_human_outputs() {
    let dir = Scratch::new("controls");
    let text = std::fs::read_to_string(example()).expect("example");
    let long = "x".repeat(90);
    let edited = text.replacen("\"Ada\"", &format!("\"Ada \\u001b[2J\\u0007 {long}\""), 1);
    let edited = dir.write("edited.ndjson", edited.as_bytes());
    let r = ndarc(&[
        "canon",
        "--reseal",
        s(&edited),
        "-o",
        s(&dir.path("after.ndjson")),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let after = dir.path("after.ndjson");
    let ex = example();
    for format in ["human", "markdown"] {
        let r = ndarc(&["diff", "--format", format, s(&ex), s(&after)]);
        assert_eq!(r.code, 1, "{format}: {r:?}");
        assert!(
            !r.stdout.contains(&0x1b) && !r.stdout.contains(&0x07),
            "{format}: {}",
            r.out()
        );
    }
    // A manifest whose table name holds ESC: inspect and verify escape it.
    let named = text.replace("\"notes\"", "\"no\\u001b]0;x\\u0007tes\"");
    let named = dir.write("named.ndjson", named.as_bytes());
    for args in [vec!["inspect", s(&named)], vec!["verify", s(&named)]] {
        let r = ndarc(&args);
        assert!(
            !r.stdout.contains(&0x1b) && !r.stderr.contains('\x1b'),
            "{args:?}: {r:?}"
        );
    }
}

/// Smaller ones: an output that is one of the inputs is refused, even with
/// --force.
#[test]
fn outputs_never_replace_an_input() {
    let dir = Scratch::new("overwrite");
    let ex = example();
    let bytes = std::fs::read(&ex).expect("example");
    let a = dir.write("a.ndjson", &bytes);
    let b = dir.write("b.ndjson", &bytes);
    let link = dir.path("link.ndjson");
    std::os::unix::fs::symlink(&a, &link).expect("symlink");
    for args in [
        vec!["verify", "--receipt", s(&a), "--force", s(&a)],
        vec!["verify", "--receipt", s(&link), "--force", s(&a)],
        vec!["diff", s(&a), s(&b), "-o", s(&b), "--force"],
        vec!["mutate", s(&a), "-o", s(&a), "--force"],
        vec![
            "repart",
            "--part-bytes",
            "4K",
            s(&a),
            "-o",
            s(&link),
            "--force",
        ],
    ] {
        let r = ndarc(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains("is an input"), "{args:?}: {}", r.stderr);
        assert_eq!(std::fs::read(&a).expect("a"), bytes);
        assert_eq!(std::fs::read(&b).expect("b"), bytes);
    }
}
