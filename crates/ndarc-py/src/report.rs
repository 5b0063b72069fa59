//! The verification options a call takes, and the findings and report it
//! gives back (also carried by `InvalidArchive`).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use ndarc_verify::Severity;

use crate::{InvalidArchive, UsageError};

/// The verification options of a call (`ndarc.verify`'s keywords).
#[pyclass(module = "ndarc._ndarc", frozen)]
#[derive(Clone)]
pub struct Options {
    pub(crate) inner: ndarc_verify::Options,
}

#[pymethods]
impl Options {
    #[new]
    #[pyo3(signature = (*, jobs=0, max_errors=100, max_line_bytes=None, max_manifest_bytes=None, accept_formats=None, policy=None, integrity=false))]
    fn new(
        jobs: usize,
        max_errors: usize,
        max_line_bytes: Option<usize>,
        max_manifest_bytes: Option<usize>,
        accept_formats: Option<Vec<String>>,
        policy: Option<&[u8]>,
        integrity: bool,
    ) -> PyResult<Options> {
        let mut o = ndarc_verify::Options {
            jobs,
            integrity,
            ..Default::default()
        };
        if max_errors == 0 {
            return Err(UsageError::new_err("max_errors must be at least 1"));
        }
        o.max_errors = max_errors;
        if let Some(n) = max_line_bytes {
            o.max_line = n;
        }
        if let Some(n) = max_manifest_bytes {
            o.max_manifest_line = n;
        }
        if let Some(f) = accept_formats {
            if f.is_empty() {
                return Err(UsageError::new_err(
                    "accept_formats: name at least one format",
                ));
            }
            o.formats = f;
        }
        if let Some(p) = policy {
            let p = ndarc_format::Policy::from_json(p)
                .map_err(|e| UsageError::new_err(format!("policy: {e}")))?;
            o.policy = Some(Arc::new(p));
        }
        Ok(Options { inner: o })
    }
}

/// One rule broken at one place.
#[pyclass(module = "ndarc", frozen)]
pub struct Finding {
    /// The stable snake_case code (SPEC.md §9).
    #[pyo3(get)]
    code: String,
    /// `"error"` or `"warning"`.
    #[pyo3(get)]
    severity: String,
    /// 1-based line (0 when the finding concerns no single line).
    #[pyo3(get)]
    line: u64,
    /// Byte offset in the file (for a pushed part: in the part's bytes).
    #[pyo3(get)]
    offset: u64,
    /// RFC 6901 JSON pointer into the line's record ("" for the record).
    #[pyo3(get)]
    pointer: String,
    /// What is wrong and what to do.
    #[pyo3(get)]
    message: String,
}

impl Finding {
    pub(crate) fn of(f: &ndarc_verify::Finding) -> Finding {
        Finding {
            code: f.code.as_str().to_string(),
            severity: match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            }
            .to_string(),
            line: f.line,
            offset: f.offset,
            pointer: f.pointer.clone(),
            message: f.message.clone(),
        }
    }
}

#[pymethods]
impl Finding {
    /// The finding as a dict (`code`, `severity`, `line`, `offset`,
    /// `pointer`, `message`), as `ndarc verify --format json` writes it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("code", &self.code)?;
        d.set_item("severity", &self.severity)?;
        d.set_item("line", self.line)?;
        d.set_item("offset", self.offset)?;
        d.set_item("pointer", &self.pointer)?;
        d.set_item("message", &self.message)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Finding(code={:?}, severity={:?}, line={}, offset={}, pointer={:?})",
            self.code, self.severity, self.line, self.offset, self.pointer
        )
    }

    fn __str__(&self) -> String {
        format!(
            "{}:{}: {}{}: {}",
            self.line,
            self.offset,
            if self.severity == "warning" {
                "warning: "
            } else {
                ""
            },
            self.code,
            self.message
        )
    }
}

/// What a verification found.
#[pyclass(module = "ndarc", frozen)]
pub struct Report {
    pub(crate) inner: ndarc_verify::Report,
    pub(crate) strict: bool,
}

#[pymethods]
impl Report {
    /// No errors (and, when verified with `strict=True`, no warnings).
    #[getter]
    fn valid(&self) -> bool {
        self.inner.is_valid(self.strict)
    }
    /// Errors found (all counted, even past `max_errors`).
    #[getter]
    fn errors(&self) -> u64 {
        self.inner.errors
    }
    /// Warnings found.
    #[getter]
    fn warnings(&self) -> u64 {
        self.inner.warnings
    }
    /// Verification stopped early (too many errors, broken framing).
    #[getter]
    fn stopped(&self) -> bool {
        self.inner.stopped
    }
    /// The findings kept (at most `max_errors`), in file order.
    #[getter]
    fn findings(&self) -> Vec<Finding> {
        self.inner.findings.iter().map(Finding::of).collect()
    }
    /// The recomputed `contentHash` (None when it could not be computed).
    #[getter]
    fn content_hash(&self) -> Option<String> {
        self.inner.content_hash.clone()
    }
    /// The recomputed `archiveHash`.
    #[getter]
    fn archive_hash(&self) -> Option<String> {
        self.inner.archive_hash.clone()
    }
    /// Bytes read.
    #[getter]
    fn bytes(&self) -> u64 {
        self.inner.bytes
    }
    /// Lines read.
    #[getter]
    fn lines(&self) -> u64 {
        self.inner.lines
    }
    /// Part lines read.
    #[getter]
    fn parts(&self) -> u64 {
        self.inner.parts
    }
    /// Wall time, in seconds.
    #[getter]
    fn elapsed(&self) -> f64 {
        self.inner.elapsed.as_secs_f64()
    }

    /// The receipt of a valid archive as a dict (None when it is not
    /// valid): `ndarc.canonical(report.receipt())` is what
    /// `ndarc verify --receipt` writes.
    fn receipt<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.inner.receipt().filter(|_| self.valid()) {
            Some(r) => {
                let text = r.to_canonical_line();
                let v = py
                    .import("json")?
                    .call_method1("loads", (PyBytes::new(py, &text),))?;
                Ok(Some(v))
            }
            None => Ok(None),
        }
    }

    /// The report as a dict, with the members of one file of
    /// `ndarc verify --format json`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.inner;
        let d = PyDict::new(py);
        d.set_item("valid", self.valid())?;
        d.set_item("errors", r.errors)?;
        d.set_item("warnings", r.warnings)?;
        d.set_item("stopped", r.stopped)?;
        let findings = PyList::empty(py);
        for f in &r.findings {
            findings.append(Finding::of(f).to_dict(py)?)?;
        }
        d.set_item("findings", findings)?;
        d.set_item("bytes", r.bytes)?;
        d.set_item("lines", r.lines)?;
        d.set_item("parts", r.parts)?;
        d.set_item("contentHash", r.content_hash.clone())?;
        d.set_item("archiveHash", r.archive_hash.clone())?;
        d.set_item("elapsedSeconds", r.elapsed.as_secs_f64())?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Report(valid={}, errors={}, warnings={}, content_hash={:?})",
            if self.valid() { "True" } else { "False" },
            self.inner.errors,
            self.inner.warnings,
            self.inner.content_hash
        )
    }
}

/// `InvalidArchive` carrying the report.
pub(crate) fn invalid(py: Python<'_>, r: ndarc_verify::Report, strict: bool) -> PyErr {
    let first = r
        .findings
        .iter()
        .find(|f| f.is_error())
        .or(r.findings.first());
    let msg = format!(
        "not a valid archive: {} error{}, {} warning{}{}",
        r.errors,
        if r.errors == 1 { "" } else { "s" },
        r.warnings,
        if r.warnings == 1 { "" } else { "s" },
        first.map_or(String::new(), |f| format!(
            "; first at line {}, byte {}: {}: {}",
            f.line, f.offset, f.code, f.message
        ))
    );
    let err = InvalidArchive::new_err(msg);
    match Py::new(py, Report { inner: r, strict }) {
        Ok(report) => match err.value(py).setattr("report", report) {
            Ok(()) => err,
            Err(e) => e,
        },
        Err(e) => e,
    }
}
