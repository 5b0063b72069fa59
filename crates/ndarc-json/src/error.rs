//! Parse errors with stable codes and byte offsets.

use std::fmt;

/// What is wrong with a JSON text. Each kind has a stable snake_case code
/// (see `SPEC.md`, "JSON profile") that the verifier reports as a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Anything RFC 8259 does not allow: a trailing comma, a comment, `NaN`,
    /// a leading zero, a raw control character in a string, text after the
    /// value, an empty input …
    Syntax,
    /// The bytes are not UTF-8.
    InvalidUtf8,
    /// The text starts with a UTF-8 byte-order mark.
    Bom,
    /// An object names the same member twice.
    DuplicateMember,
    /// An escape denotes a lone UTF-16 surrogate.
    LoneSurrogate,
    /// A number literal overflows an IEEE-754 double.
    NumberRange,
    /// Arrays and objects nest deeper than the limit.
    Depth,
}

impl ErrorKind {
    /// The stable snake_case code of this kind.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "json_syntax",
            ErrorKind::InvalidUtf8 => "json_invalid_utf8",
            ErrorKind::Bom => "json_bom",
            ErrorKind::DuplicateMember => "json_duplicate_member",
            ErrorKind::LoneSurrogate => "json_lone_surrogate",
            ErrorKind::NumberRange => "json_number_range",
            ErrorKind::Depth => "json_depth",
        }
    }

    /// Every kind, for documentation and tests.
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Syntax,
        ErrorKind::InvalidUtf8,
        ErrorKind::Bom,
        ErrorKind::DuplicateMember,
        ErrorKind::LoneSurrogate,
        ErrorKind::NumberRange,
        ErrorKind::Depth,
    ];
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A JSON text could not be parsed: what, where (byte offset from the start
/// of the text) and a message a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    offset: usize,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, offset: usize, message: impl Into<String>) -> Self {
        Error {
            kind,
            offset,
            message: message.into(),
        }
    }

    /// What is wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable code of the kind, e.g. `json_duplicate_member`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// Byte offset of the fault from the start of the parsed text.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The message, without code or offset.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {}: {}",
            self.code(),
            self.offset,
            self.message
        )
    }
}

impl std::error::Error for Error {}
