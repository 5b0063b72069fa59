//! The README's quick start, run as a user would run it: each line of the
//! block between `<!-- quick-start -->` and `<!-- /quick-start -->` in a
//! shell, in one scratch directory, with this build's `ndarc` first on
//! PATH; a line ends with the status its `# exit N` comment names (0 when
//! it names none). Needs the `sqlite3` command (`.ci/run` installs it).

mod common;

use std::process::Command;

use common::Scratch;

/// The lines of the quick-start block, without blank lines.
fn quick_start() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let block = readme
        .split("<!-- quick-start -->")
        .nth(1)
        .and_then(|b| b.split("<!-- /quick-start -->").next())
        .expect("README.md: a <!-- quick-start --> block");
    block
        .lines()
        .filter(|l| !l.starts_with("```") && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The status a line's `# exit N` comment names, else 0.
fn expected_status(line: &str) -> i32 {
    line.split("# exit ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_quick_start_runs_as_written() {
    let lines = quick_start();
    assert!(lines.len() >= 8, "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("ndarc pack")));
    assert!(lines.iter().any(|l| l.starts_with("ndarc unpack")));
    let scratch = Scratch::new("readme-quick-start");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_ndarc"))
        .parent()
        .expect("the binary's directory")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for line in &lines {
        let out = Command::new("bash")
            .args(["-c", line])
            .current_dir(&scratch.0)
            .env("PATH", &path)
            .env("NO_COLOR", "1")
            .output()
            .expect("run bash");
        assert_eq!(
            out.status.code(),
            Some(expected_status(line)),
            "{line}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The last line diffed the patched restore against the second export.
    let patch = std::fs::read_to_string(scratch.path("patch.sql")).expect("patch.sql");
    assert!(patch.contains("INSERT INTO"), "{patch}");
    assert!(patch.contains("UPDATE"), "{patch}");
}

#[test]
fn an_exit_comment_names_the_status() {
    assert_eq!(expected_status("ndarc diff a b   # exit 1: they differ"), 1);
    assert_eq!(expected_status("ndarc verify a   # every rule"), 0);
}
