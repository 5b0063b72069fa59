//! `ndarc._ndarc`: the native half of the Python package `ndarc` (the
//! public API, its docs and its typing are in `python/ndarc/`).
//!
//! Every entry point releases the GIL while it works, runs its Rust work
//! under `catch_unwind` (a panic becomes `ndarc.Error`, never a
//! `PanicException`) and reuses the library crates: `ndarc-verify` for
//! verification and the one door of reading (`read_path`), `ndarc-diff`
//! and its JSON rendering, `ndarc-json` for canonical JSON, and
//! `ndarc-sqlite` for databases packed on the fly and the values a
//! restore leaves.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod cells;
pub mod read;

use std::io::{Read, Seek, SeekFrom, Write};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use ndarc_format::part::BinaryKind;
use ndarc_sqlite::stream::{Header, PackStream, Refused};
use ndarc_verify::Severity;

use cells::{Cell, Column};
use read::{Batch, Stop};

// Verification allocates many small values per line on every core, as in
// the CLI (crates/ndarc/src/main.rs): mimalloc keeps `verify` as fast as
// the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pyo3::create_exception!(
    ndarc,
    Error,
    PyException,
    "Every error ndarc raises: an input that cannot be read, a database that cannot be packed, an internal error."
);
pyo3::create_exception!(
    ndarc,
    InvalidArchive,
    Error,
    "The archive is not valid; `report` holds the findings."
);
pyo3::create_exception!(
    ndarc,
    UsageError,
    Error,
    "A call that cannot be carried out as asked: a bad option, an unknown table or object, a bad policy."
);

/// Why a call failed, before it is turned into a Python exception (which
/// needs the GIL).
enum Fail {
    Usage(String),
    Error(String),
    Invalid(Box<ndarc_verify::Report>, bool),
}

impl Fail {
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Fail::Usage(m) => UsageError::new_err(m),
            Fail::Error(m) => Error::new_err(m),
            Fail::Invalid(r, strict) => invalid(py, *r, strict),
        }
    }
}

impl From<Stop> for Fail {
    fn from(s: Stop) -> Fail {
        match s {
            Stop::Cancelled => Fail::Error("the read was stopped".into()),
            Stop::Missing(m) => Fail::Usage(m),
            Stop::Io(m) | Stop::Bad(m) => Fail::Error(m),
        }
    }
}

/// `InvalidArchive` carrying the report.
fn invalid(py: Python<'_>, r: ndarc_verify::Report, strict: bool) -> PyErr {
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

/// The text of a panic's payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs `f` with a panic turned into a [`Fail`].
fn caught<T>(f: impl FnOnce() -> Result<T, Fail>) -> Result<T, Fail> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(Fail::Error(format!(
            "internal error (please report it): {}",
            panic_text(&*p)
        )))
    })
}

/// Runs `f` without the GIL and with panics caught.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Fail> + Send) -> PyResult<T> {
    py.detach(move || caught(f)).map_err(|e| e.into_py(py))
}

/// The verification options of a call (`ndarc.verify`'s keywords).
#[pyclass(module = "ndarc._ndarc", frozen)]
#[derive(Clone)]
pub struct Options {
    inner: ndarc_verify::Options,
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
    fn of(f: &ndarc_verify::Finding) -> Finding {
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
    inner: ndarc_verify::Report,
    strict: bool,
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

/// A Python binary file object read as a stream (the verifier's reading
/// thread takes the GIL for each read).
struct PyReader(Py<PyAny>);

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let got = self
                .0
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let got = got.bind(py);
            if got.is_none() {
                return Ok(0);
            }
            let bytes: &[u8] = got.extract().map_err(|_| {
                std::io::Error::other(
                    "the file object's read() gave no bytes (open it in binary mode)",
                )
            })?;
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            Ok(n)
        })
    }
}

/// A packed database's refusal, as an error.
fn refused(path: &Path, r: Refused) -> Fail {
    Fail::Error(format!("{}: {}", path.display(), r.0))
}

/// Verifies a path (archive or database), bytes or a binary file object.
#[pyfunction]
#[pyo3(signature = (source, options, strict=false))]
fn verify(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    options: &Options,
    strict: bool,
) -> PyResult<Report> {
    let opts = options.inner.clone();
    let report = if let Ok(b) = source.cast::<PyBytes>() {
        let data = b.as_bytes();
        detached(py, || Ok(ndarc_verify::verify_bytes(data, &opts)))?
    } else if source.is_instance_of::<PyString>() {
        let path: PathBuf = source.extract()?;
        detached(py, move || {
            let io = |e: ndarc_verify::Error| Fail::Error(e.to_string());
            if ndarc_sqlite::stream::is_database(&path) {
                let mut packing = PackStream::spawn(&path, &Header::for_database(&path));
                let r = match packing.reader() {
                    Some(reader) => ndarc_verify::verify_reader(reader, &opts).map_err(io),
                    None => Err(Fail::Error("the packer gave no archive".into())),
                };
                packing.finish().map_err(|e| refused(&path, e))?;
                r
            } else {
                ndarc_verify::verify_path(&path, &opts).map_err(io)
            }
        })?
    } else if source.hasattr("read")? {
        let reader = PyReader(source.clone().unbind());
        detached(py, move || {
            ndarc_verify::verify_reader(reader, &opts).map_err(|e| Fail::Error(e.to_string()))
        })?
    } else {
        return Err(UsageError::new_err(format!(
            "verify takes a path, bytes or a binary file object, not {}",
            source.get_type().name()?
        )));
    };
    // `integrity=True` could not check a valid archive's rows: no verdict
    // (the CLI's exit 2).
    if let (Some(why), true) = (&report.unchecked, report.is_valid(strict)) {
        return Err(Error::new_err(format!(
            "the foreign keys were not checked: {why}"
        )));
    }
    Ok(Report {
        inner: report,
        strict,
    })
}

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

/// The canonical form (RFC 8785) of the JSON text `text`.
#[pyfunction]
fn canonicalize<'py>(py: Python<'py>, text: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let out = detached(py, || {
        let mut out = Vec::with_capacity(text.len());
        ndarc_json::canonicalize(text, &mut out)
            .map_err(|e| Fail::Usage(format!("not JSON: {}: {e}", e.code())))?;
        Ok(out)
    })?;
    Ok(PyBytes::new(py, &out))
}

/// Whether `text` is one JSON text in canonical form.
#[pyfunction]
fn is_canonical(py: Python<'_>, text: &[u8]) -> PyResult<bool> {
    detached(py, || {
        Ok(matches!(ndarc_json::check_canonical(text), Ok(None)))
    })
}

/// The manifest line of the archive at `path`, when the manifest has no
/// error (else `InvalidArchive` with its findings).
#[pyfunction]
fn manifest_line<'py>(
    py: Python<'py>,
    path: PathBuf,
    options: &Options,
) -> PyResult<Bound<'py, PyBytes>> {
    let opts = options.inner.clone();
    let line = detached(py, move || {
        let io = |e: std::io::Error| Fail::Error(format!("cannot read {}: {e}", path.display()));
        let file = std::fs::File::open(&path).map_err(io)?;
        if !file.metadata().map_err(io)?.is_file() {
            return Err(Fail::Error(format!(
                "{}: not a regular file",
                path.display()
            )));
        }
        let input = ndarc_verify::lines::Input::File(file);
        let mut src = ndarc_verify::lines::LineSource::new(&input).map_err(io)?;
        let line = src.next_line(opts.max_manifest_line, false).map_err(io)?;
        let bytes: Vec<u8> = match &line {
            Some(l) if l.too_long.is_none() => l.bytes.to_vec(),
            _ => Vec::new(),
        };
        if let Some(len) = line.as_ref().and_then(|l| l.too_long) {
            return Err(Fail::Invalid(
                Box::new(ndarc_verify::Report {
                    errors: 1,
                    findings: vec![ndarc_verify::Finding::new(
                        ndarc_verify::Code::LineTooLong,
                        1,
                        0,
                        "",
                        format!(
                            "the manifest line is {len} bytes, over the limit of {}; raise max_manifest_bytes if it is legitimate",
                            opts.max_manifest_line
                        ),
                    )],
                    ..Default::default()
                }),
                false,
            ));
        }
        let at = ndarc_format::LineRef {
            line: 1,
            offset: 0,
            bytes: &bytes,
        };
        let read = ndarc_verify::read_manifest(at, &opts);
        if read.manifest.is_none() || read.has_errors() {
            let errors = read.findings.iter().filter(|f| f.is_error()).count() as u64;
            let mut findings = read.findings;
            if line.is_none() {
                findings.push(ndarc_verify::Finding::new(
                    ndarc_verify::Code::ManifestMissing,
                    1,
                    0,
                    "",
                    "the file is empty: an archive starts with its manifest line",
                ));
            }
            return Err(Fail::Invalid(
                Box::new(ndarc_verify::Report {
                    errors: (errors + read.dropped).max(1),
                    findings,
                    ..Default::default()
                }),
                false,
            ));
        }
        Ok(bytes)
    })?;
    Ok(PyBytes::new(py, &line))
}

/// Rows (or Arrow columns) of one table, streamed from a reader thread.
#[pyclass(module = "ndarc")]
pub struct TableIter {
    columns: Vec<Column>,
    keys: Vec<Py<PyString>>,
    batches: Mutex<Option<Receiver<Batch>>>,
    done: Mutex<Option<JoinHandle<Result<ndarc_verify::Report, Stop>>>>,
    cancel: Arc<std::sync::atomic::AtomicBool>,
    current: Option<cells::RowBatch>,
    pos: usize,
}

impl Drop for TableIter {
    fn drop(&mut self) {
        // The reader thread stops at its next line.
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl TableIter {
    /// The next batch, or the end: `None` once the archive proved valid,
    /// an exception otherwise.
    fn next_batch(&mut self, py: Python<'_>) -> PyResult<Option<Batch>> {
        let rx = self.batches.get_mut().unwrap_or_else(|e| e.into_inner());
        let Some(chan) = rx.take() else {
            return Ok(None);
        };
        let (chan, got) = py.detach(move || {
            let got = chan.recv();
            (chan, got)
        });
        if let Ok(b) = got {
            *rx = Some(chan);
            return Ok(Some(b));
        }
        let handle = self
            .done
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(handle) = handle else {
            return Ok(None);
        };
        let result = py.detach(move || handle.join());
        match result {
            Ok(Ok(report)) if report.is_valid(false) => Ok(None),
            Ok(Ok(report)) => Err(invalid(py, report, false)),
            Ok(Err(stop)) => Err(Fail::from(stop).into_py(py)),
            Err(p) => Err(Error::new_err(format!(
                "internal error (please report it): {}",
                panic_text(&*p)
            ))),
        }
    }
}

fn cell_object<'py>(py: Python<'py>, c: &Cell<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Cell::Null => py.None().into_bound(py),
        Cell::Int(i) => i.into_pyobject(py)?.into_any(),
        Cell::Real(r) => r.into_pyobject(py)?.into_any(),
        Cell::Text(s) => PyString::new(py, s).into_any(),
        Cell::Blob(b) => PyBytes::new(py, b).into_any(),
    })
}

#[pymethods]
impl TableIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next row as a dict (rows mode).
    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        loop {
            if let Some(b) = &self.current {
                if self.pos < b.rows {
                    let w = self.columns.len();
                    let d = PyDict::new(py);
                    let row = &b.cells[self.pos * w..(self.pos + 1) * w];
                    for (k, c) in self.keys.iter().zip(row) {
                        d.set_item(k.bind(py), cell_object(py, c)?)?;
                    }
                    self.pos += 1;
                    return Ok(Some(d));
                }
            }
            self.current = None;
            match self.next_batch(py)? {
                Some(Batch::Rows(b)) => {
                    self.current = Some(b);
                    self.pos = 0;
                }
                Some(Batch::Arrow(_)) => {
                    return Err(Error::new_err("this iterator gives Arrow batches"))
                }
                None => return Ok(None),
            }
        }
    }

    /// The columns: `(name, arrow type name)` pairs.
    #[getter]
    fn columns(&self) -> Vec<(String, &'static str)> {
        self.columns
            .iter()
            .map(|c| (c.name.clone(), c.kind.arrow_name()))
            .collect()
    }

    /// The next Arrow batch as `(rows, [(validity, nulls, data, offsets)])`
    /// (buffers as bytes, validity and offsets None where absent), or None
    /// at the end.
    fn next_arrow<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match self.next_batch(py)? {
            Some(Batch::Arrow(b)) => {
                let cols = PyList::empty(py);
                for c in &b.columns {
                    let validity = (c.nulls > 0).then(|| PyBytes::new(py, &c.validity));
                    let offsets = (!c.offsets.is_empty()).then(|| PyBytes::new(py, &c.offsets));
                    cols.append((validity, c.nulls, PyBytes::new(py, &c.data), offsets))?;
                }
                Ok(Some((b.rows, cols).into_pyobject(py)?))
            }
            Some(Batch::Rows(_)) => Err(Error::new_err("this iterator gives rows")),
            None => Ok(None),
        }
    }

    /// Stops the read (the iterator then ends without a verdict).
    fn close(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.batches
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.done
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.current = None;
    }
}

/// Starts reading table `table` of the archive at `path`: rows (`arrow`
/// false) or Arrow batches.
#[pyfunction]
fn read_table(
    py: Python<'_>,
    path: PathBuf,
    table: String,
    arrow: bool,
    options: &Options,
) -> PyResult<TableIter> {
    let opts = options.inner.clone();
    let read = detached(py, move || {
        read::read_table(path, table, arrow, opts)
            .map_err(|e| Fail::Error(format!("cannot start a reader thread: {e}")))
    })?;
    // The columns come with the manifest; without them the read failed,
    // which the first batch then says.
    let columns_rx = read.columns;
    let columns = py.detach(move || columns_rx.recv().unwrap_or_default());
    let keys = columns
        .iter()
        .map(|c| PyString::intern(py, &c.name).unbind())
        .collect();
    Ok(TableIter {
        columns,
        keys,
        batches: Mutex::new(Some(read.batches)),
        done: Mutex::new(Some(read.done)),
        cancel: read.cancel,
        current: None,
        pos: 0,
    })
}

/// The bytes of an object (`kind` "object": `a` bucket, `b` key) or a
/// payload (`kind` "payload": `a` its name), once the whole archive proved
/// valid.
#[pyfunction]
fn read_binary<'py>(
    py: Python<'py>,
    path: PathBuf,
    kind: &str,
    a: String,
    b: String,
    options: &Options,
) -> PyResult<Bound<'py, PyBytes>> {
    let kind = match kind {
        "object" => BinaryKind::Object,
        _ => BinaryKind::Payload,
    };
    let opts = options.inner.clone();
    let bytes = detached(py, move || {
        let (bytes, report) = read::read_binary(&path, kind, (a, b), &opts)?;
        if !report.is_valid(false) {
            return Err(Fail::Invalid(Box::new(report), false));
        }
        Ok(bytes)
    })?;
    Ok(PyBytes::new(py, &bytes))
}

/// One side of a diff: a path (archive or database) or bytes.
enum Side {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

fn side(v: &Bound<'_, PyAny>) -> PyResult<Side> {
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(Side::Bytes(b.as_bytes().to_vec()));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Side::Path(v.extract()?));
    }
    Err(UsageError::new_err(format!(
        "diff takes paths or bytes, not {}",
        v.get_type().name()?
    )))
}

/// The diff input of one side; a database is packed on the fly (its packer
/// kept in `packing`), under the header of the archive on the other side
/// when there is one (as `ndarc diff` does), else `fallback`, so that two
/// databases, or a database and its export, compare by content.
fn diff_source<'a>(
    s: &'a Side,
    other: &Side,
    name: &str,
    fallback: &Header,
    packing: &mut Vec<(String, PackStream)>,
) -> ndarc_diff::Source<'a> {
    match s {
        Side::Path(p) if ndarc_sqlite::stream::is_database(p) => {
            let header = match other {
                Side::Path(o) => Header::of_archive(o),
                Side::Bytes(_) => None,
            }
            .unwrap_or_else(|| fallback.clone());
            let mut ps = PackStream::spawn(p, &header);
            let r = ps.reader();
            packing.push((name.to_string(), ps));
            match r {
                Some(r) => ndarc_diff::Source::Reader(Box::new(r)),
                None => ndarc_diff::Source::Path(p),
            }
        }
        Side::Path(p) => ndarc_diff::Source::Path(p),
        Side::Bytes(bytes) => ndarc_diff::Source::Bytes(bytes),
    }
}

/// The diff of `before` and `after` as the JSON of `ndarc diff --format
/// json` (with `stat`, of `--stat --format json`).
#[pyfunction]
#[pyo3(signature = (before, after, options, *, tables, ignore_tables, ignore_columns, ignore_objects, ignore_payloads, keys, keys_only, stat, no_verify, allow_product_mismatch))]
#[allow(clippy::too_many_arguments)]
fn diff<'py>(
    py: Python<'py>,
    before: &Bound<'py, PyAny>,
    after: &Bound<'py, PyAny>,
    options: &Options,
    tables: Vec<String>,
    ignore_tables: Vec<String>,
    ignore_columns: Vec<String>,
    ignore_objects: Vec<String>,
    ignore_payloads: Vec<String>,
    keys: Vec<(String, Vec<String>)>,
    keys_only: bool,
    stat: bool,
    no_verify: bool,
    allow_product_mismatch: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let (a, b) = (side(before)?, side(after)?);
    if let Some((t, _)) = keys.iter().find(|(t, c)| t.is_empty() || c.is_empty()) {
        return Err(UsageError::new_err(format!(
            "keys: table {t:?} needs a non-empty list of columns"
        )));
    }
    let opts = ndarc_diff::Options {
        ignore_tables,
        tables,
        ignore_objects,
        ignore_payloads,
        keys,
        ignore_columns,
        keys_only,
        row_contents: if stat { 0 } else { usize::MAX },
        no_verify,
        allow_product_mismatch,
        verify: options.inner.clone(),
    };
    let out = detached(py, move || {
        let name = |s: &Side, d: &str| match s {
            Side::Path(p) => p.display().to_string(),
            Side::Bytes(_) => d.to_string(),
        };
        let (na, nb) = (name(&a, "before"), name(&b, "after"));
        let fallback = match &a {
            Side::Path(p) => Header::for_database(p),
            Side::Bytes(_) => Header::for_database(Path::new("database")),
        };
        let mut packing: Vec<(String, PackStream)> = Vec::new();
        let sa = diff_source(&a, &b, &na, &fallback, &mut packing);
        let sb = diff_source(&b, &a, &nb, &fallback, &mut packing);
        let result = ndarc_diff::diff_labeled((&na, sa), (&nb, sb), &opts);
        for (n, p) in packing {
            if let Err(Refused(why)) = p.finish() {
                return Err(Fail::Error(format!("{n}: {why}")));
            }
        }
        let d = match result {
            Ok(d) => d,
            Err(ndarc_diff::Error::Invalid {
                findings, errors, ..
            }) => {
                let warnings = findings.iter().filter(|f| !f.is_error()).count() as u64;
                return Err(Fail::Invalid(
                    Box::new(ndarc_verify::Report {
                        findings,
                        errors: errors.max(1),
                        warnings,
                        ..Default::default()
                    }),
                    false,
                ));
            }
            Err(
                e @ (ndarc_diff::Error::Pattern { .. }
                | ndarc_diff::Error::Key(_)
                | ndarc_diff::Error::KeyNotUnique { .. }
                | ndarc_diff::Error::ProductMismatch { .. }),
            ) => return Err(Fail::Usage(e.to_string())),
            Err(e) => return Err(Fail::Error(e.to_string())),
        };
        let mut buf = Vec::new();
        let written = if stat {
            ndarc_diff::render::json_stat(&d, &mut buf)
        } else {
            ndarc_diff::render::json(&d, &mut buf)
        };
        written.map_err(|e| Fail::Error(format!("cannot write the diff: {e}")))?;
        Ok(buf)
    })?;
    Ok(PyBytes::new(py, &out))
}

/// Raises a Rust panic inside the guard, for the test that no panic
/// reaches Python.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    detached(py, || -> Result<(), Fail> { panic!("a test panic") })
}

/// The native module.
#[pymodule]
fn _ndarc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("InvalidArchive", py.get_type::<InvalidArchive>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add_class::<Options>()?;
    m.add_class::<Finding>()?;
    m.add_class::<Report>()?;
    m.add_class::<PartOutcome>()?;
    m.add_class::<PushVerifier>()?;
    m.add_class::<TableIter>()?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(is_canonical, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_line, m)?)?;
    m.add_function(wrap_pyfunction!(read_table, m)?)?;
    m.add_function(wrap_pyfunction!(read_binary, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
