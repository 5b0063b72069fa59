//! Running a third-party program as `fuzz-consumer` and `fuzz-producer`
//! do: a command line split into words as a shell would (but no shell),
//! path tokens replaced, standard input empty, output kept to a limit, its
//! own process group, killed with the group after a time limit; a private
//! scratch directory; and the flags both commands take.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use crate::exit::Failure;
use crate::io::cleanup;

/// The token replaced by an archive's path: the archive fed to a consumer,
/// or the path a producer is to write.
pub const ARCHIVE_TOKEN: &str = "{archive}";

/// Parses `--timeout`: seconds above 0, up to a day.
pub(crate) fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err(format!(
            "expected a number of seconds above 0 (up to 86400), got {s:?}"
        )),
    }
}

/// Where a fuzzer is, for its status line on a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    /// Runs finished.
    pub done: u64,
    /// Runs in all (`--runs`).
    pub total: u64,
    /// Runs on which the program under test agreed with the format.
    pub agreed: u64,
    /// Problems found so far (disagreements, crashes, time-outs).
    pub findings: u64,
    /// While a failing input is being shrunk: the program's runs spent on
    /// it so far.
    pub shrinking: Option<usize>,
}

/// The text of a fuzzer's status line, such as `fuzz-producer: 12/40 runs,
/// 11 agreed, 1 finding, shrinking… (35 tries)`.
pub(crate) fn progress_text(command: &str, p: &Progress) -> String {
    let plural = if p.findings == 1 { "" } else { "s" };
    let mut s = format!(
        "{command}: {}/{} runs, {} agreed, {} finding{plural}",
        p.done, p.total, p.agreed, p.findings
    );
    if let Some(tries) = p.shrinking {
        let tries = if tries == 1 {
            "1 try".to_string()
        } else {
            format!("{tries} tries")
        };
        s.push_str(&format!(", shrinking\u{2026} ({tries})"));
    }
    s
}

/// Parses `--max-output`: a byte size (K, M suffixes), at most 1M, since
/// the output is kept in memory for the report.
pub(crate) fn parse_max_output(s: &str) -> Result<usize, String> {
    match crate::flags::parse_size(s) {
        Ok(n) if n <= 1 << 20 => Ok(n),
        Ok(_) => Err("at most 1M: the output is kept in memory for the report".to_string()),
        Err(e) => Err(e),
    }
}

/// The flags of a command that runs a program under test, defined once.
/// Their help names the program's role (consumer, producer), so each
/// command sets the help of `--exec`, `--runs`, `--seed`, `--timeout` and
/// `--outdir` with `mut_arg`; names, value names, defaults and parsers
/// are these.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The program under test: a command with tokens where the paths go.
    #[arg(long, value_name = "CMD")]
    pub exec: String,
    /// Runs.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub runs: u64,
    /// The seed of the runs.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Kill the program (its process group) after this many seconds.
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = parse_seconds)]
    pub timeout: f64,
    /// Keep what shows a problem, and summary.json, here (created if
    /// missing; must be empty unless --force).
    #[arg(long, value_name = "DIR")]
    pub outdir: Option<PathBuf>,
    /// Write into a non-empty --outdir, replacing its files.
    #[arg(long, requires = "outdir")]
    pub force: bool,
}

impl RunArgs {
    /// `--exec` split into words; an empty command is a usage error.
    pub fn words(&self) -> Result<Vec<String>, Failure> {
        let words = split_words(&self.exec).map_err(|e| Failure::new(format!("--exec: {e}")))?;
        if words.is_empty() {
            return Err(Failure::new("--exec: an empty command"));
        }
        Ok(words)
    }

    /// The report's closing line naming `summary.json` in `--outdir`,
    /// after a blank line; empty without `--outdir`.
    pub(crate) fn summary_line(&self) -> String {
        match &self.outdir {
            Some(dir) => format!("\nsummary: {}\n", dir.join("summary.json").display()),
            None => String::new(),
        }
    }

    /// `--timeout` as a duration.
    pub(crate) fn time_limit(&self) -> Duration {
        Duration::from_secs_f64(self.timeout)
    }
}

/// Splits a command line into words as a POSIX shell does, without
/// expanding anything (`shlex`): blanks separate words; `'…'` is literal;
/// in `"…"` a backslash escapes only `"`, `\`, `$`, `` ` `` and a newline;
/// outside quotes a backslash escapes the next character; a `#` that starts
/// a word starts a comment. An unterminated quote or a trailing backslash
/// is an error.
pub(crate) fn split_words(line: &str) -> Result<Vec<String>, String> {
    shlex::split(line).ok_or_else(|| "an unterminated quote or a backslash at the end".to_string())
}

/// The command's arguments: each token (`{archive}`, `{db}`) in a word is
/// replaced by its path; a token no word holds has its path appended, in
/// the order given.
pub(crate) fn substitute(words: &[String], tokens: &[(&str, &Path)]) -> Vec<OsString> {
    let mut found = vec![false; tokens.len()];
    let mut out: Vec<OsString> = words
        .iter()
        .map(|w| {
            let mut s = OsString::new();
            let mut rest = w.as_str();
            // Replace the leftmost token first, so a path is never searched.
            loop {
                let next = tokens
                    .iter()
                    .enumerate()
                    .filter_map(|(k, (t, _))| rest.find(t).map(|at| (at, k)))
                    .min();
                let Some((at, k)) = next else {
                    s.push(rest);
                    break;
                };
                found[k] = true;
                s.push(&rest[..at]);
                s.push(tokens[k].1.as_os_str());
                rest = &rest[at + tokens[k].0.len()..];
            }
            s
        })
        .collect();
    for (k, (_, path)) in tokens.iter().enumerate() {
        if !found[k] {
            out.push(path.as_os_str().to_owned());
        }
    }
    out
}

/// How one run of a child ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did (and it was not ours).
    pub signal: Option<i32>,
    /// It outlived the time limit and was killed.
    pub timed_out: bool,
    /// Wall time.
    pub elapsed: Duration,
    /// Standard output, cut to the limit.
    pub stdout: String,
    /// Standard error, cut to the limit.
    pub stderr: String,
}

impl Outcome {
    /// Exit 0.
    pub fn accepted(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// How it ended, for a report: `still running after SECSs, killed`
    /// (`timeout` as given on the command line), `killed by signal N` or
    /// `exit N`.
    pub fn how(&self, timeout: f64) -> String {
        match (self.timed_out, self.signal, self.code) {
            (true, _, _) => format!("still running after {timeout}s, killed"),
            (_, Some(sig), _) => format!("killed by signal {sig}"),
            (_, _, Some(code)) => format!("exit {code}"),
            _ => "no exit status".to_string(),
        }
    }

    /// The report's `  stderr: …` line: the program's own words (the
    /// first 300 characters), made one safe line; empty when it wrote
    /// nothing.
    pub(crate) fn stderr_line(&self) -> String {
        let err = self.stderr.trim();
        if err.is_empty() {
            return String::new();
        }
        format!(
            "  stderr: {}\n",
            crate::term::one_line(&err.chars().take(300).collect::<String>())
        )
    }
}

#[cfg(unix)]
fn signal_of(status: &ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: &ExitStatus) -> Option<i32> {
    None
}

#[cfg(unix)]
fn own_group(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

#[cfg(not(unix))]
fn own_group(_cmd: &mut Command) {}

/// Kills the child's whole process group (it leads its own), then the
/// child, and forgets the group ([`cleanup::forget_group`]). Also called
/// after a normal exit: background children left by the program are
/// killed with their group.
pub(crate) fn kill_all(child: &mut Child) {
    #[cfg(unix)]
    {
        let pid = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    cleanup::forget_group(child.id());
}

/// What a reader thread kept of one stream: the first bytes, and how many
/// there were in all.
#[derive(Default)]
struct Kept {
    head: Vec<u8>,
    total: u64,
}

/// Reads `pipe` to its end on a thread, keeping its first `max` bytes and
/// dropping the rest, so that a program that writes without end neither
/// blocks nor fills memory or disk.
fn keep_head(
    mut pipe: impl Read + Send + 'static,
    max: usize,
) -> std::io::Result<(Arc<Mutex<Kept>>, std::sync::mpsc::Receiver<()>)> {
    let kept = Arc::new(Mutex::new(Kept::default()));
    let (done, finished) = std::sync::mpsc::channel();
    let k = Arc::clone(&kept);
    std::thread::Builder::new()
        .name("ndarc-child-output".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let Ok(mut k) = k.lock() else { break };
                        let room = max.saturating_sub(k.head.len()).min(n);
                        k.head.extend_from_slice(&buf[..room]);
                        k.total += n as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        })?;
    Ok((kept, finished))
}

/// The text kept of a stream, noting the size when cut. Waits a moment for
/// the reader to see the end: a grandchild that escaped the process group
/// may hold the pipe open, and is not waited for.
fn take_head(kept: &Mutex<Kept>, finished: &std::sync::mpsc::Receiver<()>) -> String {
    let _ = finished.recv_timeout(Duration::from_secs(1));
    let Ok(mut k) = kept.lock() else {
        return String::new();
    };
    let mut s = String::from_utf8_lossy(&k.head).into_owned();
    if k.total > k.head.len() as u64 {
        s.push_str(&format!("… ({} bytes in all)", k.total));
    }
    k.head = Vec::new();
    s
}

/// Runs a command: standard input empty, the first `max_output` bytes of
/// standard output and error kept (the rest read and dropped), its own
/// process group, which is killed when the command exits, after
/// `timeout`, or when ndarc is stopped by SIGINT or SIGTERM
/// ([`cleanup::spawn_group`]).
pub(crate) fn run_child(
    argv: &[OsString],
    timeout: Duration,
    max_output: usize,
) -> std::io::Result<Outcome> {
    let (program, rest) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("an empty command"))?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    own_group(&mut cmd);
    let start = Instant::now();
    let mut child = cleanup::spawn_group(&mut cmd)?;
    let streams = (child.stdout.take(), child.stderr.take());
    let (out, err) = match streams {
        (Some(o), Some(e)) => (keep_head(o, max_output), keep_head(e, max_output)),
        _ => {
            kill_all(&mut child);
            let _ = child.wait();
            return Err(std::io::Error::other("no pipes to the child"));
        }
    };
    let (out, err) = match (out, err) {
        (Ok(o), Ok(e)) => (o, e),
        (Err(e), _) | (_, Err(e)) => {
            kill_all(&mut child);
            let _ = child.wait();
            return Err(e);
        }
    };
    let deadline = start.checked_add(timeout);
    let waited = loop {
        let left = deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        match child.wait_timeout(left)? {
            // wait-timeout polls in whole milliseconds, the rest of the
            // time dropped, so it can give up to 1 ms early: wait that out.
            None if deadline.is_some_and(|d| Instant::now() < d) => continue,
            w => break w,
        }
    };
    let (status, timed_out) = match waited {
        Some(status) => {
            // Exited: what it left running in its group goes too.
            kill_all(&mut child);
            (status, false)
        }
        None => {
            kill_all(&mut child);
            (child.wait()?, true)
        }
    };
    let elapsed = start.elapsed();
    Ok(Outcome {
        code: status.code(),
        signal: if timed_out { None } else { signal_of(&status) },
        timed_out,
        elapsed,
        stdout: take_head(&out.0, &out.1),
        stderr: take_head(&err.0, &err.1),
    })
}

/// A private temporary directory (`tempfile`) named
/// `ndarc-PURPOSE-PID-RANDOM`, removed on drop and on SIGINT or SIGTERM;
/// those of runs killed outright (SIGKILL) are removed by the next run of
/// the same purpose.
#[derive(Debug)]
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    /// Removes the stale scratch directories of `purpose`, then creates
    /// this run's in the system's temporary directory.
    pub fn new(purpose: &str) -> Result<Scratch, Failure> {
        let prefix = format!("ndarc-{purpose}-");
        remove_stale_scratch(&std::env::temp_dir(), &prefix);
        let dir = cleanup::creating(|made| {
            let dir = tempfile::Builder::new()
                .prefix(&format!("{prefix}{}-", std::process::id()))
                .tempdir()?;
            made(dir.path());
            Ok(dir)
        })
        .map_err(|e: std::io::Error| {
            Failure::io(
                format_args!(
                    "cannot create a temporary directory in {}",
                    std::env::temp_dir().display()
                ),
                &e,
            )
        })?;
        Ok(Scratch(dir))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        cleanup::unregister(self.0.path());
    }
}

/// Removes the scratch directories in `tmp` named `PREFIX` then a PID
/// whose process no longer exists (killed outright, so that neither drop
/// nor the signal handler ran). Directories of live processes, and
/// anything not named `PREFIX-PID-…`, are left alone; errors are ignored
/// (housekeeping).
fn remove_stale_scratch(tmp: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        // Not followed: a link is not a scratch directory.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && pid != std::process::id() && !crate::io::process_exists(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The command as words, quoted where needed (`shlex`), for the report.
pub(crate) fn shown_command(words: &[String]) -> String {
    words
        .iter()
        .map(|w| match shlex::try_quote(w) {
            Ok(q) => q.into_owned(),
            Err(_) => format!("{w:?}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_line_text() {
        let mut p = Progress {
            done: 3,
            total: 20,
            agreed: 2,
            findings: 1,
            shrinking: None,
        };
        assert_eq!(
            progress_text("fuzz-producer", &p),
            "fuzz-producer: 3/20 runs, 2 agreed, 1 finding"
        );
        p.shrinking = Some(0);
        assert_eq!(
            progress_text("fuzz-producer", &p),
            "fuzz-producer: 3/20 runs, 2 agreed, 1 finding, shrinking\u{2026} (0 tries)"
        );
        p.shrinking = Some(1);
        p.findings = 2;
        assert_eq!(
            progress_text("fuzz-consumer", &p),
            "fuzz-consumer: 3/20 runs, 2 agreed, 2 findings, shrinking\u{2026} (1 try)"
        );
        assert_eq!(
            progress_text("fuzz-consumer", &Progress::default()),
            "fuzz-consumer: 0/0 runs, 0 agreed, 0 findings"
        );
    }

    #[test]
    fn words_split_like_a_shell() {
        let w = |s: &str| split_words(s).unwrap();
        assert_eq!(w("a b  c"), ["a", "b", "c"]);
        assert_eq!(w("  lead trail  "), ["lead", "trail"]);
        assert_eq!(w("'a b' \"c d\""), ["a b", "c d"]);
        assert_eq!(w(r#"a\ b"#), ["a b"]);
        assert_eq!(w(r#""a\"b" 'x\y'"#), ["a\"b", "x\\y"]);
        assert_eq!(w(r#""\n\$""#), ["\\n$"]);
        assert_eq!(w("''"), [""]);
        assert_eq!(w("x'y'\"z\""), ["xyz"]);
        assert_eq!(w("a;b|c > d"), ["a;b|c", ">", "d"]);
        assert_eq!(w("$HOME `id`"), ["$HOME", "`id`"]);
        assert!(w("").is_empty());
        assert!(split_words("'open").is_err());
        assert!(split_words("\"open").is_err());
        assert!(split_words("end\\").is_err());
    }

    #[test]
    fn tokens_are_replaced_or_appended() {
        let (db, ar) = (Path::new("/t/a.db"), Path::new("/t/o {db}.ndjson"));
        let toks = [("{db}", db), ("{archive}", ar)];
        let w = split_words("p --in={db} -o {archive}").unwrap();
        assert_eq!(
            substitute(&w, &toks),
            ["p", "--in=/t/a.db", "-o", "/t/o {db}.ndjson"]
        );
        let w = split_words("p {archive}").unwrap();
        assert_eq!(substitute(&w, &toks), ["p", "/t/o {db}.ndjson", "/t/a.db"]);
        let w = split_words("p").unwrap();
        assert_eq!(substitute(&w, &toks), ["p", "/t/a.db", "/t/o {db}.ndjson"]);
    }

    #[test]
    fn a_hash_starting_a_word_is_a_comment() {
        assert_eq!(split_words("a #b c\nd").unwrap(), ["a", "d"]);
        assert_eq!(split_words("a#b '#c'").unwrap(), ["a#b", "#c"]);
    }

    #[test]
    fn one_token_is_replaced_everywhere_or_appended() {
        let p = Path::new("/tmp/x y.ndjson");
        let toks = [("{archive}", p)];
        let words = split_words("check --file={archive} -q").unwrap();
        assert_eq!(
            substitute(&words, &toks),
            ["check", "--file=/tmp/x y.ndjson", "-q"]
        );
        let words = split_words("check -q").unwrap();
        assert_eq!(
            substitute(&words, &toks),
            ["check", "-q", "/tmp/x y.ndjson"]
        );
        let words = split_words("cmp {archive} {archive}").unwrap();
        assert_eq!(substitute(&words, &toks).len(), 3);
    }

    #[test]
    fn max_output() {
        assert_eq!(parse_max_output("1K"), Ok(1024));
        assert_eq!(parse_max_output("1M"), Ok(1 << 20));
        assert!(parse_max_output("2M").is_err());
        assert!(parse_max_output("0").is_err());
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("1.5"), Ok(1.5));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("inf").is_err());
        assert!(parse_seconds("x").is_err());
    }

    #[test]
    fn shown_commands_quote_what_needs_it() {
        let w = vec!["a".to_string(), "b c".to_string(), "it's".to_string()];
        assert_eq!(shown_command(&w), "a 'b c' \"it's\"");
    }
}
