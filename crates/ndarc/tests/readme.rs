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

/// The README's CI recipe (between `<!-- ci-recipe -->` markers).
fn ci_recipe() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    readme
        .split("<!-- ci-recipe -->")
        .nth(1)
        .and_then(|b| b.split("<!-- /ci-recipe -->").next())
        .expect("README.md: a <!-- ci-recipe --> block")
        .to_string()
}

/// A workflow step: its `name`, `id` and `run` script (a one-line `run:`
/// or a `run: |` block, unindented).
#[derive(Debug, Default)]
struct Step {
    name: String,
    id: String,
    run: String,
}

/// The steps of a workflow's one job, read line by line (the recipe uses
/// only `- name:`, `- uses:`, `- if:`, `id:`, `run:` and `run: |`).
fn steps(yaml: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut block: Option<usize> = None;
    for line in yaml.lines() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        if let Some(at) = block {
            if indent > at || text.is_empty() {
                let run = &mut steps.last_mut().expect("a step").run;
                run.push_str(line.get(at + 2..).unwrap_or(""));
                run.push('\n');
                continue;
            }
            block = None;
        }
        let (text, new_step) = match text.strip_prefix("- ") {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        if new_step && indent >= 6 {
            steps.push(Step::default());
        }
        let Some(step) = steps.last_mut() else {
            continue;
        };
        let key_indent = if new_step { indent + 2 } else { indent };
        if let Some(v) = text.strip_prefix("name: ") {
            step.name = v.split(" #").next().unwrap_or(v).trim().to_string();
        } else if let Some(v) = text.strip_prefix("id: ") {
            step.id = v.trim().to_string();
        } else if text == "run: |" {
            block = Some(key_indent);
        } else if let Some(v) = text.strip_prefix("run: ") {
            step.run = format!("{v}\n");
        }
    }
    steps
}

/// Runs `script` as GitHub runs a `run:` step (`bash --noprofile --norc
/// -eo pipefail`), in `dir`, with this build's `ndarc` first on PATH and
/// the step summary and outputs files GitHub provides.
fn run_step(dir: &std::path::Path, script: &str) -> (i32, String, String) {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_ndarc"))
        .parent()
        .expect("the binary's directory")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let summary = dir.join("step-summary.md");
    let outputs = dir.join("step-outputs.txt");
    let _ = std::fs::remove_file(&summary);
    let _ = std::fs::remove_file(&outputs);
    std::fs::write(dir.join("step.sh"), script).expect("write the step");
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "step.sh"])
        .current_dir(dir)
        .env("PATH", &path)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .output()
        .expect("run bash");
    assert!(
        out.status.code().is_some(),
        "{script}: killed\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code().unwrap_or(-1),
        std::fs::read_to_string(&summary).unwrap_or_default(),
        std::fs::read_to_string(&outputs).unwrap_or_default(),
    )
}

#[test]
fn the_ci_recipe_runs_as_written() {
    let yaml = ci_recipe();
    let steps = steps(&yaml);
    // Every `steps.ID.outputs` the recipe reads names a step with that id.
    for r in yaml.split("steps.").skip(1) {
        let id = r.split('.').next().unwrap_or("");
        assert!(
            steps.iter().any(|s| s.id == id),
            "steps.{id} is read but no step has id: {id}"
        );
    }
    let step = |name: &str| {
        steps
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no step {name:?} in {steps:?}"))
            .run
            .clone()
    };
    let verify = step("Verify against the policy");
    let diff = step("Diff against the baseline");
    assert!(diff.contains("--gate gate.json"), "{diff}");

    let scratch = Scratch::new("readme-ci-recipe");
    let dir = &scratch.0;
    let gen = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ndarc"))
            .arg("gen")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("ndarc gen");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    };
    gen(&["--rows", "2000", "-o", "baseline.ndjson"]);
    gen(&["--rows", "2000", "--later", "1", "-o", "export.ndjson"]);
    scratch.write("policy.json", b"{}");

    // Today's export verifies against the policy.
    let (status, _, _) = run_step(dir, &verify);
    assert_eq!(status, 0, "{verify}");

    // Changed, within the gate: the step passes, the summary holds the
    // diff and the gate's verdict, the output says changed.
    scratch.write(
        "gate.json",
        br#"{"noDroppedTables": true, "tables": {"*": {"maxRemovedPercent": 50}}}"#,
    );
    let (status, summary, outputs) = run_step(dir, &diff);
    assert_eq!(status, 0, "{summary}");
    assert!(summary.contains("users"), "{summary}");
    assert!(summary.contains("Gate: passed"), "{summary}");
    assert_eq!(outputs, "changed=true\n");
    let json = std::fs::read_to_string(scratch.path("diff.json")).expect("diff.json");
    assert!(json.contains("\"equal\": false"), "{json}");

    // A rule broken: the step fails, and the summary names the rule.
    scratch.write("gate.json", br#"{"maxRemovedPercent": 0}"#);
    std::fs::remove_file(scratch.path("diff.json")).expect("remove diff.json");
    let (status, summary, outputs) = run_step(dir, &diff);
    assert_eq!(status, 1, "{summary}");
    assert!(summary.contains("Gate: failed"), "{summary}");
    assert!(
        summary.contains("<code>/maxRemovedPercent</code>"),
        "{summary}"
    );
    assert_eq!(outputs, "changed=true\n");

    // The same export: nothing changed, the step passes.
    std::fs::copy(
        scratch.path("baseline.ndjson"),
        scratch.path("export.ndjson"),
    )
    .expect("copy");
    std::fs::remove_file(scratch.path("diff.json")).expect("remove diff.json");
    let (status, summary, outputs) = run_step(dir, &diff);
    assert_eq!(status, 0, "{summary}");
    assert_eq!(outputs, "changed=false\n");

    // An export that is not an archive: could not run, exit 2.
    scratch.write("export.ndjson", b"not an archive\n");
    std::fs::remove_file(scratch.path("diff.json")).expect("remove diff.json");
    let (status, _, outputs) = run_step(dir, &diff);
    assert_eq!(status, 2);
    assert_eq!(outputs, "changed=false\n");
}
