//! `verify`: an archive or database verified from a path, bytes or a file
//! object.

use std::io::Read;
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use ndarc_sqlite::stream::{Header, PackStream};

use crate::guard::{detached, refused, Fail};
use crate::report::{Options, Report};
use crate::{Error, UsageError};

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

/// Verifies a path (archive or database), bytes or a binary file object.
#[pyfunction]
#[pyo3(signature = (source, options, strict=false))]
pub(crate) fn verify(
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
                let file = packing
                    .reader()
                    .and_then(ndarc_sqlite::stream::PackedReader::into_file);
                packing.finish().map_err(|e| refused(&path, e))?;
                match file {
                    Some(p) => ndarc_verify::verify_file(
                        p.file,
                        p.start,
                        &path.display().to_string(),
                        &opts,
                    )
                    .map_err(io),
                    None => Err(Fail::Error("the packer gave no archive".into())),
                }
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
