//! Running a third-party program as `fuzz-consumer` and `fuzz-producer`
//! do: a command line split into words as a shell would (but no shell),
//! path tokens replaced, standard input empty, output kept to a limit, its
//! own process group, killed with the group after a time limit.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::exit::Failure;

/// Parses `--timeout`: seconds above 0, up to a day.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err(format!(
            "expected a number of seconds above 0 (up to 86400), got {s:?}"
        )),
    }
}

/// Splits a command line into words as a POSIX shell does, without
/// expanding anything: blanks separate words; `'…'` is literal; in `"…"` a
/// backslash escapes only `"`, `\`, `$`, `` ` `` and a newline; outside
/// quotes a backslash escapes the next character. An unterminated quote or
/// a trailing backslash is an error.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote".to_string()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote".to_string()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote".to_string()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err("a backslash at the end".to_string()),
            },
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// The command's arguments: each token (`{archive}`, `{db}`) in a word is
/// replaced by its path; a token no word holds has its path appended, in
/// the order given.
pub fn substitute(words: &[String], tokens: &[(&str, &Path)]) -> Vec<OsString> {
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
/// child.
pub fn kill_all(child: &mut Child) {
    #[cfg(unix)]
    {
        let pid = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
}

/// The first `max` bytes of a file as text (lossy), with a note of its
/// whole size when cut; empty when it cannot be read.
pub fn read_cut(path: &Path, max: usize) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let total = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = Vec::new();
    let _ = Read::by_ref(&mut f)
        .take(u64::try_from(max).unwrap_or(u64::MAX))
        .read_to_end(&mut buf);
    let mut s = String::from_utf8_lossy(&buf).into_owned();
    if total > buf.len() as u64 {
        s.push_str(&format!("… ({total} bytes in all)"));
    }
    s
}

/// Runs a command: standard input empty, standard output
/// and error to files in `scratch`, its own process group, killed with
/// the group after `timeout`.
pub fn run_child(
    argv: &[OsString],
    timeout: Duration,
    scratch: &Path,
    max_output: usize,
) -> std::io::Result<Outcome> {
    let out_path = scratch.join("stdout");
    let err_path = scratch.join("stderr");
    let (program, rest) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("an empty command"))?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path)?)
        .stderr(File::create(&err_path)?);
    own_group(&mut cmd);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    // Short naps: a fuzzing run is often a few milliseconds of child, and
    // a longer nap would be most of its wall time (try_wait is one cheap
    // system call).
    let mut nap = Duration::from_micros(100);
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            kill_all(&mut child);
            break child.wait()?;
        }
        std::thread::sleep(nap.min(timeout.saturating_sub(start.elapsed())));
        nap = (nap * 2).min(Duration::from_millis(2));
    };
    let elapsed = start.elapsed();
    Ok(Outcome {
        code: status.code(),
        signal: if timed_out { None } else { signal_of(&status) },
        timed_out,
        elapsed,
        stdout: read_cut(&out_path, max_output),
        stderr: read_cut(&err_path, max_output),
    })
}

/// A private temporary directory, removed on drop.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// Creates `ndarc-PURPOSE-PID-…` in the system's temporary directory.
    pub fn new(purpose: &str) -> Result<Scratch, Failure> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for k in 0..100u32 {
            let dir = base.join(format!(
                "ndarc-{purpose}-{}-{nanos}-{k}",
                std::process::id()
            ));
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(Scratch(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Failure::path("cannot create", &dir, &e)),
            }
        }
        Err(Failure::new(format!(
            "cannot create a temporary directory in {}",
            base.display()
        )))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The command as words, quoted where needed, for the report.
pub fn shown_command(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@{}%".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(shown_command(&w), "a 'b c' 'it'\\''s'");
    }
}
