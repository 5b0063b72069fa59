//! `PushVerifier`: an archive verified as it arrives, part by part.

use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::guard::{detached, Fail};
use crate::report::invalid;
use crate::report::{Finding, Options, Report};
use crate::UsageError;

/// What `PushVerifier.feed_part` decided.
#[pyclass(module = "ndarc", frozen)]
pub struct PartOutcome {
    /// `"accepted"`, `"duplicate"` (the same bytes again: nothing changes)
    /// or `"rejected"` (not recorded; send corrected bytes).
    #[pyo3(get)]
    status: String,
    /// The part's findings (warnings of an accepted part, errors of a
    /// rejected one).
    #[pyo3(get)]
    findings: Py<PyList>,
}

#[pymethods]
impl PartOutcome {
    /// The part counts (accepted now or before).
    #[getter]
    fn accepted(&self) -> bool {
        self.status != "rejected"
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "PartOutcome(status={:?}, findings={})",
            self.status,
            self.findings.bind(py).len()
        )
    }
}

/// The push verifier's state: the verifier (taken by `finish`), and the
/// accepted parts' bytes in an unnamed temporary file, for the re-read of
/// tables out of key order.
struct PushState {
    verifier: Option<ndarc_verify::PushVerifier>,
    spool: Option<std::fs::File>,
    at: std::collections::HashMap<u64, (u64, usize)>,
    fed: u64,
    max_line: usize,
}

/// Verifies an archive that arrives as a manifest, then parts in any order
/// (with retries), then the closing.
#[pyclass(module = "ndarc")]
pub struct PushVerifier {
    state: Mutex<PushState>,
}

/// The part's `index` member, if it is a safe integer.
fn index_of(line: &[u8]) -> Option<u64> {
    let at = ndarc_json::locate(line, "/index")?;
    let rest = line.get(at..)?;
    let end = rest
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

#[pymethods]
impl PushVerifier {
    #[new]
    #[pyo3(signature = (manifest, options))]
    fn new(py: Python<'_>, manifest: &[u8], options: &Options) -> PyResult<PushVerifier> {
        let opts = options.inner.clone();
        let manifest = strip_lf(manifest);
        let v = detached(py, || {
            Ok(
                ndarc_verify::PushVerifier::new(manifest, &opts).map_err(|findings| {
                    let errors = findings.iter().filter(|f| f.is_error()).count() as u64;
                    let warnings = findings.len() as u64 - errors;
                    ndarc_verify::Report {
                        findings,
                        errors: errors.max(1),
                        warnings,
                        ..Default::default()
                    }
                }),
            )
        })?;
        match v {
            Ok(v) => Ok(PushVerifier {
                state: Mutex::new(PushState {
                    verifier: Some(v),
                    spool: None,
                    at: Default::default(),
                    fed: 0,
                    max_line: opts.max_line,
                }),
            }),
            Err(report) => Err(invalid(py, report, false)),
        }
    }

    /// Adds one part line.
    #[pyo3(signature = (line, index=None))]
    fn feed_part(&self, py: Python<'_>, line: &[u8], index: Option<u64>) -> PyResult<PartOutcome> {
        let line = strip_lf(line);
        let state = &self.state;
        let (status, findings) = detached(py, move || {
            let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
            let index = index.or_else(|| index_of(line)).unwrap_or(s.fed);
            s.fed += 1;
            let v = s
                .verifier
                .as_mut()
                .ok_or_else(|| Fail::Usage("finish() was called already".into()))?;
            let outcome = v.add_part(index, line);
            use ndarc_verify::PushOutcome as O;
            let r = match outcome {
                O::Accepted(f) => {
                    // Kept for the re-read of a table out of key order.
                    if line.len() <= s.max_line {
                        let spool = match s.spool.take() {
                            Some(f) => f,
                            None => tempfile::tempfile().map_err(|e| {
                                Fail::Error(format!("cannot create a temporary file: {e}"))
                            })?,
                        };
                        let mut spool = spool;
                        let at = spool
                            .seek(SeekFrom::End(0))
                            .and_then(|at| spool.write_all(line).map(|()| at))
                            .map_err(|e| Fail::Error(format!("cannot spool a part: {e}")))?;
                        s.spool = Some(spool);
                        s.at.insert(index, (at, line.len()));
                    }
                    ("accepted", f)
                }
                O::Duplicate => ("duplicate", Vec::new()),
                O::Rejected(f) => ("rejected", f),
            };
            Ok(r)
        })?;
        let list = PyList::empty(py);
        for f in &findings {
            list.append(Finding::of(f))?;
        }
        Ok(PartOutcome {
            status: status.to_string(),
            findings: list.unbind(),
        })
    }

    /// Indices of the parts not yet accepted (at most 1,000).
    #[getter]
    fn missing(&self) -> PyResult<Vec<u64>> {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &s.verifier {
            Some(v) => Ok(v.missing()),
            None => Err(UsageError::new_err("finish() was called already")),
        }
    }

    /// Ends with the closing line and gives the report.
    #[pyo3(signature = (closing, strict=false))]
    fn finish(&self, py: Python<'_>, closing: &[u8], strict: bool) -> PyResult<Report> {
        let closing = strip_lf(closing);
        let state = &self.state;
        let report = detached(py, move || {
            let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
            let v = s
                .verifier
                .take()
                .ok_or_else(|| Fail::Usage("finish() was called already".into()))?;
            let at = std::mem::take(&mut s.at);
            let mut spool = s.spool.take();
            Ok(v.finish(closing, |i| {
                let (off, len) = *at.get(&i)?;
                let f = spool.as_mut()?;
                let mut buf = vec![0; len];
                f.seek(SeekFrom::Start(off)).ok()?;
                f.read_exact(&mut buf).ok()?;
                Some(buf)
            }))
        })?;
        Ok(Report {
            inner: report,
            strict,
        })
    }
}

/// A line without its LF (a caller may pass one).
fn strip_lf(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}
