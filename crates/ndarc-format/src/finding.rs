//! Findings: what a verifier reports, with its position.

use std::fmt;

use crate::code::{Code, Severity};

/// One rule broken at one place.
///
/// `line` is 1-based; `offset` is the byte offset from the start of the file
/// (or, for the push API, of the record's bytes as given); `pointer` is an
/// RFC 6901 JSON pointer into the line's record (empty for the whole line).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The rule.
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// 1-based line number (0 when the finding concerns no single line).
    pub line: u64,
    /// Byte offset in the file.
    pub offset: u64,
    /// JSON pointer into the line's record.
    pub pointer: String,
    /// What is wrong and what to do, for a person.
    pub message: String,
}

impl Finding {
    /// A finding of `code` with the code's severity.
    pub fn new(
        code: Code,
        line: u64,
        offset: u64,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            code,
            severity: code.severity(),
            line,
            offset,
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    /// Whether this is an error (not a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.line, self.offset, self.code, self.message
        )?;
        if !self.pointer.is_empty() {
            write!(f, " (at {})", self.pointer)?;
        }
        Ok(())
    }
}

/// Builds an RFC 6901 JSON pointer from reference tokens.
pub fn pointer<I, S>(tokens: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for t in tokens {
        out.push('/');
        for c in t.as_ref().chars() {
            match c {
                '~' => out.push_str("~0"),
                '/' => out.push_str("~1"),
                c => out.push(c),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape() {
        assert_eq!(
            pointer(["items", "0", "row", "a/b~c"]),
            "/items/0/row/a~1b~0c"
        );
        assert_eq!(pointer(Vec::<String>::new()), "");
    }
}
