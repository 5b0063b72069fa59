//! Shared helpers of the CLI tests: runs of the binary under a time limit
//! and an address-space limit (`prlimit`), so that a hang or a blow-up
//! fails the test instead of stalling CI.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_ndarc");

/// Address space allowed to a run unless a test says otherwise.
pub const MEMORY: u64 = 3 << 30;

/// How a run ended.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Run {
    /// Standard output, lossily decoded.
    pub fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// A command for `ndarc ARGS` under `prlimit --as=memory`.
pub fn command(args: &[&str], memory: u64) -> Command {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={memory}"))
        .arg("--")
        .arg(BIN)
        .args(args)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Waits for `child` at most `limit`; a child still running then is killed
/// and the test fails.
pub fn finish(mut child: Child, limit: Duration, what: &str) -> Run {
    let out_pipe = child.stdout.take();
    let err_pipe = child.stderr.take();
    let reader = |p: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = p {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(out_pipe.map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let err = reader(err_pipe.map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let status = match child.wait_timeout(limit).expect("wait") {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().expect("stdout"),
        stderr: String::from_utf8_lossy(&err.join().expect("stderr")).into_owned(),
    }
}

/// Runs `ndarc ARGS` in `dir` with `stdin`, 60 s and [`MEMORY`] at most.
pub fn ndarc_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    let mut cmd = command(args, MEMORY);
    cmd.current_dir(dir).stdin(Stdio::piped());
    let mut child = cmd.spawn().expect("run ndarc");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let run = finish(child, Duration::from_secs(60), &args.join(" "));
    let _ = feeder.join();
    run
}

/// Runs `ndarc ARGS` in the temporary directory, empty standard input.
pub fn ndarc(args: &[&str]) -> Run {
    ndarc_in(&std::env::temp_dir(), args, b"")
}

/// The worked example of SPEC.md §8.
pub fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/valid/example.ndjson")
}

/// A corpus file.
pub fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// A fresh scratch directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A new empty directory named after the test.
    pub fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("ndarc-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch dir");
        Scratch(d)
    }

    /// A path inside.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes a file inside and returns its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write");
        p
    }

    /// The entries' names, sorted.
    pub fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `p` as a `&str`.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}
