//! `ndarc fuzz-consumer` end to end, against deliberately lax, hanging and
//! crashing consumers (`tests/fixtures/`) and against `ndarc verify`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const NDARC: &str = env!("CARGO_BIN_EXE_ndarc");

fn fuzz(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(NDARC);
    cmd.arg("fuzz-consumer")
        .args(args)
        .env("NO_COLOR", "1")
        .env("NDARC", NDARC)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("ndarc runs")
}

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    // A quoted word, so that the path may hold blanks.
    format!("'{}'", p.display())
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndarc-fuzz-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn summary(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn problems<'a>(v: &'a Value, kind: &str) -> Vec<&'a Value> {
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == kind)
        .collect()
}

const HASH_CODES: [&str; 3] = [
    "content_hash_mismatch",
    "archive_hash_mismatch",
    "sha256_mismatch",
];

#[test]
fn accept_all_is_caught_on_every_mutant() {
    let out = tmp("accept-all");
    let exec = format!("{} {{archive}}", fixture("accept-all.sh"));
    let o = fuzz(
        &[
            "--exec",
            &exec,
            "--runs",
            "8",
            "--seed",
            "1",
            "--outdir",
            out.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = summary(&o);
    assert_eq!(v["archives"], 16);
    assert_eq!(v["disagreements"], 8);
    assert_eq!(v["invalidAccepted"], 8);
    assert_eq!(v["validRejected"], 0);
    assert_eq!(v["valid"]["accepted"], 8);
    let accepted = problems(&v, "invalid_accepted");
    assert_eq!(accepted.len(), 8);
    // Eight runs take eight different rules.
    let codes: std::collections::BTreeSet<&str> = accepted
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes.len(), 8);
    // Each reproducing archive is saved, with the summary.
    for p in &accepted {
        let file = p["file"].as_str().unwrap();
        assert_eq!(
            file,
            format!(
                "{:04}-{}.ndjson",
                p["run"].as_u64().unwrap(),
                p["code"].as_str().unwrap()
            )
        );
        let verify = Command::new(NDARC)
            .args(["verify", "-q"])
            .arg(out.join(file))
            .status()
            .unwrap();
        assert_eq!(verify.code(), Some(1), "{file} is invalid");
    }
    let saved: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(saved, v);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 9);
    // The same seed gives the same runs; a non-empty outdir needs --force.
    let again = fuzz(
        &[
            "--exec",
            &exec,
            "--runs",
            "8",
            "--seed",
            "1",
            "--outdir",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(again.status.code(), Some(2));
    let again = fuzz(
        &[
            "--exec", &exec, "--runs", "8", "--seed", "1", "--format", "json",
        ],
        &[],
    );
    let w = summary(&again);
    let strip = |v: &Value| -> Vec<(Value, Value, Value)> {
        v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["run"].clone(),
                    p["code"].clone(),
                    p["description"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&w), strip(&v));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn accept_all_human_report() {
    let exec = format!("{} {{archive}}", fixture("accept-all.sh"));
    let o = fuzz(&["--exec", &exec, "--runs", "2"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(
        t.contains("fuzz-consumer: 2 runs (seed 0), 4 archives fed to: "),
        "{t}"
    );
    assert!(
        t.contains("disagreements:  2 (2 invalid accepted, 0 valid rejected)"),
        "{t}"
    );
    assert_eq!(t.matches("invalid_accepted: run ").count(), 2, "{t}");
}

/// Under `--color always` the report's own styling reaches the terminal
/// as escape codes, while a consumer's control characters are still
/// escaped. Before, the escaping meant for their text was applied to the
/// styled report, so the colour codes were printed as `\u{1b}[1m…`.
#[test]
fn colour_codes_are_kept_and_consumer_text_escaped() {
    let exec = r#"sh -c 'printf "\033[2Jboom" >&2' x {archive}"#;
    let o = fuzz(&["--color", "always", "--exec", exec, "--runs", "1"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(
        t.contains("\x1b[1m\x1b[31minvalid_accepted\x1b[0m: run "),
        "{t:?}"
    );
    assert!(!t.contains("\\u{1b}[1m"), "{t:?}");
    assert!(t.contains("  stderr: \\u{1b}[2Jboom\n"), "{t:?}");
    assert!(!t.contains("\x1b[2J"), "{t:?}");
}

#[test]
fn ignore_hashes_is_caught_on_the_hash_mutants_only() {
    let exec = fixture("ignore-hashes.py");
    let codes = format!(
        "{},row_type,json_syntax,unknown_member,binary_missing",
        HASH_CODES.join(",")
    );
    let o = fuzz(
        &[
            "--exec", &exec, "--runs", "7", "--seed", "2", "--codes", &codes, "--format", "json",
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = summary(&o);
    assert_eq!(v["valid"]["accepted"], 7, "valid archives are accepted");
    assert_eq!(v["mutants"]["fed"], 7);
    let accepted = problems(&v, "invalid_accepted");
    let mut got: Vec<&str> = accepted
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    got.sort_unstable();
    let mut want = HASH_CODES.to_vec();
    want.sort_unstable();
    assert_eq!(got, want, "{v:#}");
    assert_eq!(v["disagreements"], 3);
    assert_eq!(v["crashes"], 0);
    assert_eq!(v["timeouts"], 0);
}

/// Mutations the verifier is known to miss (see ndarc-gen's
/// tests/mutants.rs KNOWN_GAPS); none now.
const VERIFIER_GAPS: &[&str] = &[];

#[test]
fn the_verifier_itself_agrees() {
    let exec = format!("'{NDARC}' verify -q {{archive}}");
    // 70 runs take every error code once.
    let o = fuzz(
        &[
            "--exec",
            &exec,
            "--runs",
            "70",
            "--seed",
            "4",
            "--format",
            "json",
            "--timeout",
            "60",
        ],
        &[],
    );
    let v = summary(&o);
    assert_eq!(v["valid"]["accepted"], 70);
    assert_eq!(v["validRejected"], 0);
    assert_eq!(v["crashes"], 0);
    assert_eq!(v["timeouts"], 0);
    for p in v["problems"].as_array().unwrap() {
        assert!(
            VERIFIER_GAPS.contains(&p["mutation"].as_str().unwrap_or("")),
            "the verifier disagrees with a mutant: {p:#}"
        );
    }
    assert_eq!(
        o.status.code(),
        Some(if v["problems"].as_array().unwrap().is_empty() {
            0
        } else {
            1
        })
    );
    // Without that gap's code, no disagreement at all.
    let codes: Vec<&str> = ndarc_gen::mutate::file_codes()
        .into_iter()
        .filter(|c| c.severity() == ndarc_format::Severity::Error && c.as_str() != "table_order")
        .map(|c| c.as_str())
        .collect();
    let o = fuzz(
        &[
            "--exec",
            &exec,
            "--runs",
            "12",
            "--seed",
            "9",
            "--codes",
            &codes.join(","),
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(
        t.contains(
            "disagreements:  0 (0 invalid accepted, 0 valid rejected); crashes: 0; time-outs: 0"
        ),
        "{t}"
    );
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[test]
fn a_consumer_that_hangs_times_out_with_its_children() {
    let pids = tmp("sleep-pids");
    let exec = format!("{} {{archive}}", fixture("sleep.sh"));
    let start = Instant::now();
    let o = fuzz(
        &[
            "--exec",
            &exec,
            "--runs",
            "1",
            "--timeout",
            "0.5",
            "--format",
            "json",
        ],
        &[("SLEEP_PIDS", pids.to_str().unwrap())],
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(o.status.code(), Some(1));
    let v = summary(&o);
    assert_eq!(v["timeouts"], 2);
    assert_eq!(v["disagreements"], 0);
    for p in problems(&v, "timeout") {
        assert_eq!(p["timedOut"], true);
        assert!(p["elapsedSeconds"].as_f64().unwrap() >= 0.5);
    }
    // The sleeping children were killed with their process group.
    if Path::new("/proc").exists() {
        let text = std::fs::read_to_string(&pids).unwrap_or_default();
        let list: Vec<u32> = text
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        assert_eq!(list.len(), 2, "{text:?}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while list.iter().any(|&p| alive(p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for p in list {
            assert!(!alive(p), "sleep {p} survived");
        }
    }
    let _ = std::fs::remove_file(&pids);
}

fn pids_in(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Issue 11, item 15: background children of a consumer that exits
/// normally are killed with its process group.
#[test]
fn background_children_die_when_the_consumer_exits() {
    let pids = tmp("background-pids");
    let exec = format!("{} {{archive}}", fixture("background.sh"));
    let o = fuzz(
        &["--exec", &exec, "--runs", "1", "--format", "json"],
        &[("SLEEP_PIDS", pids.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(1), "the mutant is accepted");
    let list = pids_in(&pids);
    assert_eq!(list.len(), 2, "{list:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while list.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for p in list {
        assert!(!alive(p), "background sleep {p} survived");
    }
    let _ = std::fs::remove_file(&pids);
}

fn tree_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => tree_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Issue 11, item 15: a consumer that writes without end fills neither the
/// disk nor memory: only the first --max-output bytes are kept.
#[test]
fn endless_output_is_dropped_not_stored() {
    let scratch = tmp("endless-tmpdir");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut child = Command::new(NDARC)
        .args([
            "fuzz-consumer",
            "--exec",
            "sh -c 'yes' sh {archive}",
            "--runs",
            "1",
            "--timeout",
            "1",
            "--max-output",
            "1K",
            "--format",
            "json",
        ])
        .env("TMPDIR", &scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut most = 0;
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut s);
        s
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        most = most.max(tree_bytes(&scratch));
        assert!(start.elapsed() < Duration::from_secs(30), "still running");
        std::thread::sleep(Duration::from_millis(50));
    }
    let v: Value = serde_json::from_slice(&reader.join().unwrap()).unwrap();
    assert_eq!(v["timeouts"], 2, "{v:#}");
    let out = v["problems"][0]["stdout"].as_str().unwrap();
    assert!(out.starts_with("y\ny\n"), "{out}");
    assert!(out.len() < 1100, "{}", out.len());
    assert!(most < 1 << 20, "the scratch directory held {most} bytes");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn a_consumer_killed_by_a_signal_is_a_crash() {
    let o = fuzz(
        &[
            "--exec",
            &fixture("crash.sh"),
            "--runs",
            "1",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    let v = summary(&o);
    assert_eq!(v["crashes"], 2);
    for p in problems(&v, "crash") {
        assert_eq!(p["signal"], 11);
        assert_eq!(p["exitCode"], Value::Null);
    }
    let human = fuzz(&["--exec", &fixture("crash.sh"), "--runs", "1"], &[]);
    let t = String::from_utf8(human.stdout).unwrap();
    assert!(
        t.contains("crash: run 0: valid archive: killed by signal 11"),
        "{t}"
    );
}

#[test]
fn output_is_captured_and_cut() {
    // `sh -c` is the consumer here, run without a shell of our own: the
    // script is one argument.
    let exec =
        "sh -c 'head -c 5000 /dev/zero | tr \"\\\\0\" x; echo oops >&2; exit 3' sh {archive}";
    let o = fuzz(
        &[
            "--exec",
            exec,
            "--runs",
            "1",
            "--max-output",
            "100",
            "--format",
            "json",
        ],
        &[],
    );
    let v = summary(&o);
    let p = problems(&v, "valid_rejected");
    assert_eq!(p.len(), 1, "{v:#}");
    assert_eq!(p[0]["exitCode"], 3);
    assert_eq!(p[0]["stderr"], "oops\n");
    let out = p[0]["stdout"].as_str().unwrap();
    assert!(out.starts_with(&"x".repeat(100)), "{out}");
    assert!(out.ends_with("(5000 bytes in all)"), "{out}");
}

#[test]
fn usage_errors_exit_2() {
    for (exec, msg) in [
        ("", "empty command"),
        ("'unterminated", "unterminated"),
        (
            "/no/such/consumer {archive}",
            "cannot run /no/such/consumer",
        ),
    ] {
        let o = fuzz(&["--exec", exec, "--runs", "1"], &[]);
        assert_eq!(o.status.code(), Some(2), "{exec}");
        let e = String::from_utf8(o.stderr).unwrap();
        assert!(e.contains(msg), "{exec}: {e}");
    }
    for args in [
        vec!["--exec", "true", "--codes", "row_key_order"],
        vec!["--exec", "true", "--codes", "part_missing"],
        vec!["--exec", "true", "--codes", "nope"],
        vec!["--exec", "true", "--timeout", "0"],
        vec!["--exec", "true", "--force"],
    ] {
        let o = fuzz(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn scratch_directories_of_killed_runs_are_removed_by_the_next() {
    let tmpdir = tmp("stale-scratch");
    std::fs::create_dir_all(&tmpdir).unwrap();
    // Beyond Linux's largest pid (2^22): no such process.
    let dead = tmpdir.join("ndarc-fuzz-consumer-4194399-AbCdEf");
    let live = tmpdir.join(format!("ndarc-fuzz-consumer-{}-AbCdEf", std::process::id()));
    let other = tmpdir.join("ndarc-fuzz-consumer-notapid-AbCdEf");
    for d in [&dead, &live, &other] {
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/run-0.ndjson"), b"x").unwrap();
    }
    let tmp_s = tmpdir.to_str().unwrap();
    let o = fuzz(
        &[
            "--exec",
            &fixture("accept-all.sh"),
            "--runs",
            "1",
            "--format",
            "json",
        ],
        &[("TMPDIR", tmp_s)],
    );
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{o:?}"
    );
    assert!(!dead.exists(), "the dead run's scratch is removed");
    assert!(
        live.join("sub/run-0.ndjson").exists(),
        "a live run's is kept"
    );
    assert!(
        other.join("sub/run-0.ndjson").exists(),
        "another name is kept"
    );
    // This run's own scratch is gone too, and was named for its pid.
    let left: Vec<String> = std::fs::read_dir(&tmpdir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    let _ = std::fs::remove_dir_all(&tmpdir);
}

/// A consumer that checks the product rejects every generated archive
/// ("valid rejected"); with --base, mutants of the user's own archive are
/// fed, and it is fed once as the valid one.
#[test]
fn base_archive_feeds_mutants_of_the_users_export() {
    let base =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/diff/columns/before.ndjson");
    let base = base.to_str().unwrap();
    let exec = r#"sh -c 'grep -q "\"product\":\"golden\"" "$1" && exec "$NDARC" verify -q "$1"' sh {archive}"#;
    let args = |extra: &[&str]| -> Vec<String> {
        [
            "--exec", exec, "--runs", "6", "--seed", "3", "--format", "json",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let run = |a: Vec<String>| fuzz(&a.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let generated = summary(&run(args(&[])));
    assert_eq!(generated["validRejected"], 6, "{generated:#}");
    let o = run(args(&["--base", base]));
    let v = summary(&o);
    assert_eq!(v["validRejected"], 0, "{v:#}");
    assert_eq!(v["valid"]["fed"], 1);
    assert_eq!(v["valid"]["accepted"], 1);
    assert_eq!(v["mutants"]["fed"], 6);
    assert_eq!(v["base"], base);
    for p in v["problems"].as_array().unwrap() {
        assert!(
            VERIFIER_GAPS.contains(&p["mutation"].as_str().unwrap_or("")),
            "{p:#}"
        );
    }
    // An invalid base: exit 2 before anything runs.
    let bad = tmp("bad-base");
    std::fs::create_dir_all(&bad).unwrap();
    let path = bad.join("bad.ndjson");
    std::fs::write(&path, b"{\"kind\":\"manifest\"}\n").unwrap();
    let o = run(args(&["--base", path.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a valid archive"));
    let _ = std::fs::remove_dir_all(&bad);
}

/// The per-code table ranks the misses by harm: the hash mismatches the
/// lax consumer accepts (a corrupt archive) come first, the cosmetic order
/// and canonical-form rules it catches last, in the report and the JSON.
#[test]
fn per_code_table_ranks_misses_by_harm() {
    let exec = fixture("ignore-hashes.py");
    let args = [
        "--exec",
        &exec,
        "--runs",
        "4",
        "--seed",
        "2",
        "--codes",
        "not_canonical,item_order,content_hash_mismatch,row_type",
    ];
    let o = fuzz(&[&args[..], &["--format", "json"]].concat(), &[]);
    assert_eq!(o.status.code(), Some(1));
    let v = summary(&o);
    let rows = v["codes"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["code"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "content_hash_mismatch",
            "row_type",
            "item_order",
            "not_canonical"
        ],
        "{v:#}"
    );
    assert_eq!(
        rows[0],
        serde_json::json!({"code": "content_hash_mismatch", "harm": "corrupt",
            "tried": 1, "caught": 0, "missed": 1})
    );
    for r in &rows[1..] {
        assert_eq!(
            (&r["tried"], &r["caught"], &r["missed"]),
            (&1.into(), &1.into(), &0.into()),
            "{r}"
        );
    }
    assert_eq!(rows[1]["harm"], "invalid");
    assert_eq!(rows[2]["harm"], "cosmetic");
    assert_eq!(rows[3]["harm"], "cosmetic");

    let h = fuzz(&args, &[]);
    assert_eq!(h.status.code(), Some(1));
    let t = String::from_utf8(h.stdout).unwrap();
    let table = t
        .split("per code (misses first, most harmful first):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{t}"));
    let lines: Vec<Vec<&str>> = table
        .lines()
        .take(5)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["code", "harm", "tried", "caught", "missed"]);
    assert_eq!(
        lines[1],
        ["content_hash_mismatch", "corrupt", "1", "0", "1"]
    );
    assert_eq!(lines[2], ["row_type", "invalid", "1", "1", "0"]);
    assert_eq!(lines[3][0], "item_order");
    assert_eq!(lines[4], ["not_canonical", "cosmetic", "1", "1", "0"]);
    // Without a terminal nothing is drawn on standard error.
    assert!(
        h.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&h.stderr)
    );
}

/// A consumer that misses everything: the misses come most harmful first,
/// unsafe and corrupt archives before cosmetic order rules.
#[test]
fn accept_all_misses_are_ranked_by_harm() {
    let exec = format!("{} {{archive}}", fixture("accept-all.sh"));
    let o = fuzz(&["--exec", &exec, "--runs", "70", "--format", "json"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let v = summary(&o);
    let rank = ["unsafe", "corrupt", "framing", "invalid", "cosmetic"];
    let rows = v["codes"].as_array().unwrap();
    let ranks: Vec<usize> = rows
        .iter()
        .map(|r| {
            assert_eq!(r["missed"], r["tried"], "{r}");
            rank.iter().position(|h| r["harm"] == *h).unwrap()
        })
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    let at = |code: &str| rows.iter().position(|r| r["code"] == code).unwrap();
    assert!(at("table_sql") < at("closing_missing"));
    assert!(at("closing_missing") < at("json_syntax"));
    assert!(at("sha256_mismatch") < at("item_order"));
    assert!(at("duplicate_row_key") < at("not_canonical"));
    assert_eq!(rows.len() as u64, v["mutants"]["fed"].as_u64().unwrap());
}

/// The human report names the file it kept for each problem; nothing goes
/// to standard error without a terminal.
#[test]
fn human_report_names_the_files_it_kept() {
    let out = tmp("names");
    let exec = format!("{} {{archive}}", fixture("accept-all.sh"));
    let o = fuzz(
        &[
            "--exec",
            &exec,
            "--runs",
            "3",
            "--outdir",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = String::from_utf8(o.stdout).unwrap();
    let named: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("invalid_accepted: run "))
        .map(|l| l.rsplit_once(" -> ").unwrap_or_else(|| panic!("{l}")).1)
        .collect();
    assert_eq!(named.len(), 3, "{t}");
    for path in named {
        assert!(Path::new(path).is_file(), "{path}");
        assert!(path.ends_with(".ndjson"), "{path}");
    }

    let _ = std::fs::remove_dir_all(&out);
}

/// Without a terminal no progress line is drawn: standard error stays
/// empty and the report is the same as before. `--quiet` prints nothing
/// but still writes summary.json.
#[test]
fn no_progress_without_a_terminal_and_quiet_prints_nothing() {
    let exec = format!("{} {{archive}}", fixture("accept-all.sh"));
    let o = fuzz(&["--exec", &exec, "--runs", "3"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(
        t.starts_with("fuzz-consumer: 3 runs (seed 0), 6 archives fed to: "),
        "{t}"
    );
    assert!(!t.contains('\r') && !t.contains("3/3 runs"), "{t}");

    let quiet = tmp("quiet");
    let q = fuzz(
        &[
            "--exec",
            &exec,
            "--runs",
            "3",
            "-q",
            "--outdir",
            quiet.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(q.status.code(), Some(1));
    assert!(q.stdout.is_empty());
    assert!(q.stderr.is_empty());
    let saved: Value =
        serde_json::from_slice(&std::fs::read(quiet.join("summary.json")).unwrap()).unwrap();
    assert_eq!(saved["invalidAccepted"], 3);
    let _ = std::fs::remove_dir_all(&quiet);
}
