//! Errors of [`crate::reseal`] and [`crate::repartition`].

use std::io;

use ndarc_format::framing::RawLines;

/// Why an archive could not be resealed or repartitioned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A line is not JSON under the archive's profile.
    #[error("line {line}: {source}")]
    Json {
        /// 1-based line number.
        line: u64,
        /// The parse error (offset within the line).
        #[source]
        source: ndarc_json::Error,
    },
    /// The archive's structure does not allow the operation (no manifest,
    /// no closing line, a row too large for the new part size …).
    #[error("{}", at_line(*line, message))]
    Archive {
        /// 1-based line number (0 when it concerns no single line).
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The input could not be read (`repart`).
    #[error(transparent)]
    Read(ndarc_verify::Error),
    /// The input did not verify (`repart`): the verifier's report, whose
    /// findings say why. Nothing was written.
    #[error("{}", invalid(.0))]
    Invalid(Box<ndarc_verify::Report>),
}

fn invalid(r: &ndarc_verify::Report) -> String {
    let mut s = format!("the archive is not valid ({} errors", r.errors);
    if let Some(f) = r.findings.iter().find(|f| f.is_error()) {
        s.push_str(&format!(
            "; first at line {}, byte {}: {}: {}",
            f.line, f.offset, f.code, f.message
        ));
    }
    s.push(')');
    s
}

fn at_line(line: u64, message: &str) -> String {
    if line == 0 {
        message.to_string()
    } else {
        format!("line {line}: {message}")
    }
}

impl Error {
    pub(crate) fn archive(line: u64, message: impl Into<String>) -> Error {
        Error::Archive {
            line,
            message: message.into(),
        }
    }
}

/// Splits an archive into its raw lines ([`ndarc_format::framing::RawLines`]:
/// without LF, a CR before it kept, as the mutations need the bytes as they
/// are); the second value tells whether the input ended with an LF.
pub(crate) fn lines(input: &[u8]) -> (Vec<&[u8]>, bool) {
    let mut trailing = false;
    let lines = RawLines::new(input)
        .map(|l| {
            trailing = l.has_lf;
            l.bytes
        })
        .collect();
    (lines, trailing)
}

/// Parses line `n` (0-based).
pub(crate) fn parse_line(bytes: &[u8], n: usize) -> Result<ndarc_json::Value<'_>, Error> {
    ndarc_json::parse(bytes).map_err(|source| Error::Json {
        line: n as u64 + 1,
        source,
    })
}
