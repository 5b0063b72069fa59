//! Canonical JSON (RFC 8785): `canonicalize`, `is_canonical`.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::guard::{detached, Fail};

/// The canonical form (RFC 8785) of the JSON text `text`.
#[pyfunction]
pub(crate) fn canonicalize<'py>(py: Python<'py>, text: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
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
pub(crate) fn is_canonical(py: Python<'_>, text: &[u8]) -> PyResult<bool> {
    detached(py, || {
        Ok(matches!(ndarc_json::check_canonical(text), Ok(None)))
    })
}
