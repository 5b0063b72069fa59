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
//!
//! One module a job: `verify` (options, findings, reports), `push` (the
//! push verifier), `archive` (manifest line, tables, binaries), `diff`,
//! `canonical` (canonical JSON) and `guard` (failures, the GIL, panics);
//! all registered here, under the names the Python API has always had.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod cells;
pub mod read;

mod archive;
mod canonical;
mod diff;
mod guard;
mod push;
mod report;
mod verify;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pub use archive::TableIter;
pub use push::{PartOutcome, PushVerifier};
pub use report::{Finding, Options, Report};

use guard::{detached, Fail};

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
    m.add_function(wrap_pyfunction!(verify::verify, m)?)?;
    m.add_function(wrap_pyfunction!(canonical::canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(canonical::is_canonical, m)?)?;
    m.add_function(wrap_pyfunction!(archive::manifest_line, m)?)?;
    m.add_function(wrap_pyfunction!(archive::read_table, m)?)?;
    m.add_function(wrap_pyfunction!(archive::read_binary, m)?)?;
    m.add_function(wrap_pyfunction!(diff::diff, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
