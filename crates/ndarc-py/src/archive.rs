//! Reading a valid archive: its manifest line, a table's rows or Arrow
//! batches (`TableIter`), an object's or payload's bytes.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use ndarc_format::part::BinaryKind;

use crate::cells::{Cell, Column};
use crate::guard::{detached, panic_text, Fail};
use crate::read::{Batch, Stop};
use crate::report::invalid;
use crate::report::Options;
use crate::Error;
use crate::{cells, read};

/// The manifest line of the archive at `path`, when the manifest has no
/// error (else `InvalidArchive` with its findings).
#[pyfunction]
pub(crate) fn manifest_line<'py>(
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
pub(crate) fn read_table(
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
pub(crate) fn read_binary<'py>(
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
