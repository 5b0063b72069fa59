//! `ndarc completions` and `ndarc man`, and `inspect`'s journal and
//! migrations lines.

use std::path::PathBuf;
use std::process::{Command, Output};

fn ndarc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndarc"))
        .args(args)
        .output()
        .expect("ndarc runs")
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn completion_scripts_name_commands_and_flags() {
    let bash = ndarc(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0));
    let s = text(&bash);
    assert!(s.contains("_ndarc()"), "a bash function");
    for word in ["verify", "diff", "inspect", "--max-errors", "--strict"] {
        assert!(s.contains(word), "bash completion lacks {word}");
    }
    let zsh = ndarc(&["completions", "zsh"]);
    assert!(text(&zsh).starts_with("#compdef ndarc"));
    let fish = ndarc(&["completions", "fish"]);
    assert!(text(&fish).contains("complete -c ndarc"));
    let ps = ndarc(&["completions", "powershell"]);
    assert!(text(&ps).contains("Register-ArgumentCompleter"));
    let bad = ndarc(&["completions", "tcsh"]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn man_pages_come_from_the_flag_definitions() {
    let top = ndarc(&["man"]);
    assert_eq!(top.status.code(), Some(0));
    let s = text(&top);
    assert!(s.contains(".TH ndarc 1"), "{}", &s[..s.len().min(200)]);
    let verify = text(&ndarc(&["man", "verify"]));
    assert!(verify.contains(".TH ndarc-verify 1"));
    assert!(verify.contains("max\\-errors"), "flags are listed");
    let none = ndarc(&["man", "no-such-command"]);
    assert_eq!(none.status.code(), Some(2));

    let dir = std::env::temp_dir().join(format!("ndarc-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = ndarc(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    for page in [
        "ndarc.1",
        "ndarc-verify.1",
        "ndarc-diff.1",
        "ndarc-completions.1",
    ] {
        let body = std::fs::read_to_string(dir.join(page)).expect(page);
        assert!(body.starts_with(".ie") || body.contains(".TH"), "{page}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn testdata(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/")).join(path)
}

#[test]
fn inspect_shows_migrations_and_the_journal() {
    let dir = std::env::temp_dir().join(format!("ndarc-inspect-j-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let archive = dir.join("a.ndjson");
    let out = ndarc(&[
        "gen",
        "--seed",
        "3",
        "-o",
        archive.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let human = text(&ndarc(&["inspect", archive.to_str().unwrap()]));
    let line = |k: &str| {
        human
            .lines()
            .find(|l| l.starts_with(k))
            .unwrap_or_else(|| panic!("no {k} line in\n{human}"))
            .to_string()
    };
    // gen writes three migrations and a journal {"entries": [3 entries], "head": …}.
    let m = line("migrations");
    assert!(
        m.contains("3 entries; first {\"id\":1,\"name\":\"0001_init.sql\"}"),
        "{m}"
    );
    assert!(m.contains("last {\"id\":3,"), "{m}");
    let j = line("journal");
    assert!(j.contains("3 entries (in \"entries\")"), "{j}");
    assert!(j.contains("\"op\":\"migrate\""), "first entry: {j}");
    assert!(j.contains("\"op\":\"erase\""), "last entry: {j}");

    let json: serde_json::Value =
        serde_json::from_slice(&ndarc(&["inspect", "--json", archive.to_str().unwrap()]).stdout)
            .unwrap();
    assert_eq!(json["migrationCount"], 3);
    assert_eq!(json["migrations"][2]["name"], "0003_unicode_名前.sql");
    assert_eq!(json["journalEntries"], 3);
    assert_eq!(json["journal"]["entries"][0]["seq"], 1);

    // The example has an empty journal and no migrations.
    let ex = text(&ndarc(&[
        "inspect",
        testdata("valid/example.ndjson").to_str().unwrap(),
    ]));
    assert!(
        ex.lines()
            .any(|l| l.starts_with("migrations") && l.ends_with("none")),
        "{ex}"
    );
    assert!(
        ex.lines()
            .any(|l| l.starts_with("journal") && l.contains("0 entries")),
        "{ex}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
