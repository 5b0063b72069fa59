//! Collecting findings for one line, with positions.

use ndarc_json::{Object, Value};

use crate::code::Code;
use crate::finding::Finding;

/// Where a record line sits, so its findings carry line and file offset.
#[derive(Debug, Clone, Copy)]
pub struct LineRef<'a> {
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line's first byte in the file.
    pub offset: u64,
    /// The line's bytes, without LF (used to locate pointers on error).
    pub bytes: &'a [u8],
}

/// Findings of one line. Positions are resolved from JSON pointers only when
/// a finding is made, so the happy path pays nothing for them.
pub struct LineReport<'a> {
    at: LineRef<'a>,
    /// Resolves pointers; findings come mostly in line order, so it walks
    /// the line about once however many there are.
    locator: ndarc_json::Locator<'a>,
    /// The findings so far.
    pub findings: Vec<Finding>,
    limit: usize,
    /// Errors not kept because the limit was reached.
    pub dropped: u64,
    /// Warnings not kept because the limit was reached (counted apart, so
    /// that the limit never turns a warning into an error).
    pub dropped_warnings: u64,
}

impl<'a> LineReport<'a> {
    /// A report for the line `at`, keeping at most `limit` findings.
    pub fn new(at: LineRef<'a>, limit: usize) -> Self {
        LineReport {
            at,
            locator: ndarc_json::Locator::new(at.bytes),
            findings: Vec::new(),
            limit,
            dropped: 0,
            dropped_warnings: 0,
        }
    }

    /// The line this reports on.
    pub fn at(&self) -> LineRef<'a> {
        self.at
    }

    /// Records a finding at the value `pointer` names.
    pub fn add(&mut self, code: Code, pointer: &str, message: impl Into<String>) {
        if self.findings.len() >= self.limit {
            self.drop(code);
            return;
        }
        let rel = self.locator.locate(pointer).unwrap_or(0);
        self.findings.push(Finding::new(
            code,
            self.at.line,
            self.at.offset + rel as u64,
            pointer,
            message,
        ));
    }

    /// Records a finding at a byte offset within the line.
    pub fn add_at(&mut self, code: Code, rel: usize, pointer: &str, message: impl Into<String>) {
        if self.findings.len() >= self.limit {
            self.drop(code);
            return;
        }
        self.findings.push(Finding::new(
            code,
            self.at.line,
            self.at.offset + rel as u64,
            pointer,
            message,
        ));
    }

    /// Records `not_canonical` for this line, which parsed as JSON and is
    /// not canonical from byte `parser_at` on: at the first byte that
    /// differs from the canonical form, with the JSON pointer there, the
    /// rule broken and the text found and expected (SPEC.md §3.2).
    /// `subject` names the line in the message ("the line", "the manifest
    /// line").
    pub fn add_not_canonical(&mut self, parser_at: usize, subject: &str) {
        let (rel, pointer, what) = match ndarc_json::explain_non_canonical(self.at.bytes) {
            Some(d) => (d.offset, d.pointer.clone(), format!(": {}", d.describe())),
            // The explanation agrees with the parser (property-tested); this
            // only keeps the finding should they ever disagree.
            None => (parser_at, String::new(), String::new()),
        };
        self.add_at(
            Code::NotCanonical,
            rel,
            &pointer,
            format!(
                "{subject} is valid JSON but not its canonical (RFC 8785) form{what}; `ndarc canon` rewrites it"
            ),
        );
    }

    /// Counts a finding of `code` past the limit.
    fn drop(&mut self, code: Code) {
        match code.severity() {
            crate::Severity::Error => self.dropped += 1,
            crate::Severity::Warning => self.dropped_warnings += 1,
        }
    }

    /// Whether any error (not warning) was recorded.
    pub fn has_errors(&self) -> bool {
        self.dropped > 0 || self.findings.iter().any(Finding::is_error)
    }

    /// Checks that `obj` has exactly the members `required` plus any of
    /// `optional`: `unknown_member` and `missing_member` findings. Returns
    /// whether all required members are present.
    pub fn members(
        &mut self,
        obj: &Object<'_>,
        ptr: &str,
        required: &[&str],
        optional: &[&str],
        what: &str,
    ) -> bool {
        for name in obj.keys() {
            if !required.contains(&name) && !optional.contains(&name) {
                self.add(
                    Code::UnknownMember,
                    &join(ptr, name),
                    format!(
                        "{what} has an unknown member {name:?}; the format defines only {}",
                        list(required, optional)
                    ),
                );
            }
        }
        let mut ok = true;
        for name in required {
            if !obj.contains_key(name) {
                ok = false;
                self.add(
                    Code::MissingMember,
                    ptr,
                    format!("{what} lacks the member {name:?}"),
                );
            }
        }
        ok
    }

    /// The member `name` as `extract` reads it, or a `member_type` finding
    /// saying it must be `expected`; `None` also when it is absent (absence
    /// is [`members`](Self::members)' to report).
    fn typed<'v, 'b, T: ?Sized>(
        &mut self,
        obj: &'v Object<'b>,
        ptr: &str,
        name: &str,
        expected: &str,
        extract: impl FnOnce(&'v Value<'b>) -> Option<&'v T>,
    ) -> Option<&'v T> {
        let v = obj.get(name)?;
        let got = extract(v);
        if got.is_none() {
            self.add(
                Code::MemberType,
                &join(ptr, name),
                format!("{name:?} must be {expected}, not {}", v.type_name()),
            );
        }
        got
    }

    /// The string member `name`, or a `member_type` finding.
    pub fn str<'v>(&mut self, obj: &'v Object<'_>, ptr: &str, name: &str) -> Option<&'v str> {
        self.typed(obj, ptr, name, "a string", Value::as_str)
    }

    /// The array member `name`, or a `member_type` finding.
    pub fn array<'v, 'b>(
        &mut self,
        obj: &'v Object<'b>,
        ptr: &str,
        name: &str,
    ) -> Option<&'v [Value<'b>]> {
        self.typed(obj, ptr, name, "an array", Value::as_array)
    }

    /// The object member `name`, or a `member_type` finding.
    pub fn object<'v, 'b>(
        &mut self,
        obj: &'v Object<'b>,
        ptr: &str,
        name: &str,
    ) -> Option<&'v Object<'b>> {
        self.typed(obj, ptr, name, "an object", Value::as_object)
    }

    /// The member `name` as a safe integer ≥ 0: `member_type` when it is not
    /// a number, `invalid_integer` when it is a number but not such an
    /// integer.
    pub fn count(&mut self, obj: &Object<'_>, ptr: &str, name: &str) -> Option<u64> {
        let v = obj.get(name)?;
        match v {
            Value::Number(n) => match ndarc_json::safe_integer(*n) {
                Some(i) if i >= 0 => Some(i as u64),
                _ => {
                    self.add(
                        Code::InvalidInteger,
                        &join(ptr, name),
                        format!(
                            "{name:?} must be a whole number from 0 to 2^53−1, not {}",
                            ndarc_json::number::format(*n)
                        ),
                    );
                    None
                }
            },
            other => {
                self.add(
                    Code::MemberType,
                    &join(ptr, name),
                    format!("{name:?} must be a number, not {}", other.type_name()),
                );
                None
            }
        }
    }

    /// The string member `name` checked against the name rule
    /// (`invalid_name`).
    pub fn name<'v>(&mut self, obj: &'v Object<'_>, ptr: &str, name: &str) -> Option<&'v str> {
        let s = self.str(obj, ptr, name)?;
        self.check_name(s, &join(ptr, name), name);
        Some(s)
    }

    /// Checks one string against the name rule; `false` when it is not a name.
    pub(crate) fn check_name(&mut self, s: &str, ptr: &str, what: &str) -> bool {
        if let Some(problem) = crate::catalogue::name_problem(s) {
            self.add(
                Code::InvalidName,
                ptr,
                format!("{what} {s:?} {problem}; names are 1 to 512 UTF-16 code units without control characters"),
            );
            false
        } else {
            true
        }
    }

    /// Moves the findings out, with the number of errors dropped (see
    /// also [`dropped_warnings`](Self::dropped_warnings)).
    pub fn into_findings(self) -> (Vec<Finding>, u64) {
        (self.findings, self.dropped)
    }
}

/// `ptr` + `/` + the escaped token `name`.
pub fn join(ptr: &str, name: &str) -> String {
    let mut s = String::with_capacity(ptr.len() + name.len() + 1);
    s.push_str(ptr);
    s.push_str(&crate::finding::pointer([name]));
    s
}

fn list(required: &[&str], optional: &[&str]) -> String {
    required
        .iter()
        .chain(optional)
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}
