//! Exit statuses and the error that stops a command.
//!
//! Every command returns [`CmdResult`]: `Ok(Status::Success)` (exit 0),
//! `Ok(Status::Findings)` (exit 1: the input is invalid, not canonical or
//! differs) or `Err(Failure)` (exit 2: the command could not run — a usage
//! error, a file that cannot be opened, read or written).

use std::fmt;
use std::io;
use std::path::Path;
use std::process::ExitCode;

/// How a command that ran to its end went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Nothing to report: exit 0.
    Success,
    /// The command found problems or differences and reported them: exit 1.
    Findings,
}

impl Status {
    /// The process exit code of this status.
    pub fn exit_code(self) -> ExitCode {
        match self {
            Status::Success => ExitCode::from(EXIT_OK),
            Status::Findings => ExitCode::from(EXIT_FINDINGS),
        }
    }
}

/// Exit status: success.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status: findings, invalid input or differences.
pub(crate) const EXIT_FINDINGS: u8 = 1;
/// Exit status: the command could not run (usage, I/O).
pub const EXIT_FAILURE: u8 = 2;

/// The result of a command.
pub type CmdResult = Result<Status, Failure>;

/// The command could not run. `main` prints the message as one line,
/// `ndarc: error: MESSAGE`, and exits 2.
#[derive(Debug)]
pub struct Failure {
    message: String,
    broken_pipe: bool,
}

impl Failure {
    /// A failure with a message a person can act on.
    pub fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            broken_pipe: false,
        }
    }

    /// An I/O error while doing `what` (e.g. "cannot read data.ndjson").
    /// A broken pipe on output is remembered so that `main` exits quietly.
    pub fn io(what: impl fmt::Display, err: &io::Error) -> Self {
        Failure {
            message: format!("{what}: {}", describe_io(err)),
            broken_pipe: err.kind() == io::ErrorKind::BrokenPipe,
        }
    }

    /// An I/O error on the file `path`.
    pub fn path(what: &str, path: &Path, err: &io::Error) -> Self {
        Failure::io(format_args!("{what} {}", path.display()), err)
    }

    /// The message, without the `ndarc: error:` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the failure is a write to a closed pipe (`ndarc … | head`),
    /// which is reported by the exit status alone.
    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// An I/O error as a short lower-case phrase, without Rust's
/// `(os error N)` suffix.
fn describe_io(err: &io::Error) -> String {
    let err = innermost(err);
    #[cfg(unix)]
    if err.raw_os_error() == Some(rustix::io::Errno::SPIPE.raw_os_error()) {
        return "not a regular file (a pipe?); give it as standard input (-) instead".to_string();
    }
    #[cfg(unix)]
    if err.raw_os_error() == Some(rustix::io::Errno::FBIG.raw_os_error()) {
        return "file too large (over the file size limit, `ulimit -f`?)".to_string();
    }
    #[cfg(unix)]
    if err.raw_os_error() == Some(rustix::io::Errno::NOSPC.raw_os_error()) {
        return "no space left on device (the disk is full)".to_string();
    }
    match err.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        io::ErrorKind::AlreadyExists => "already exists".to_string(),
        io::ErrorKind::BrokenPipe => "broken pipe".to_string(),
        _ => {
            let s = err.to_string();
            let s = match s.find(" (os error") {
                Some(at) => &s[..at],
                None => &s,
            };
            // "Illegal seek" reads as the rest of the message: lower case.
            let mut chars = s.chars();
            match chars.next() {
                Some(c) if err.raw_os_error().is_some() => c.to_lowercase().chain(chars).collect(),
                _ => s.to_string(),
            }
        }
    }
}

/// The OS error inside wrappers that add a path to it (`tempfile`'s
/// writes): the path is in ndarc's own message already.
fn innermost(err: &io::Error) -> &io::Error {
    match err
        .get_ref()
        .and_then(|e| e.source())
        .and_then(|s| s.downcast_ref::<io::Error>())
    {
        Some(inner) => innermost(inner),
        None => err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_messages_are_one_line() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        let f = Failure::path("cannot open", Path::new("x.ndjson"), &e);
        assert_eq!(
            f.message(),
            "cannot open x.ndjson: no such file or directory"
        );
        assert!(!f.is_broken_pipe());
        let f = Failure::io("cannot write", &io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(f.is_broken_pipe());
        let f = Failure::io("x", &io::Error::other("custom"));
        assert_eq!(f.to_string(), "x: custom");
    }
}
