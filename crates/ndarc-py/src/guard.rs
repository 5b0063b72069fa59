//! Failures of a call, turned into Python exceptions; the GIL released
//! and panics caught around the Rust work.

use std::panic::AssertUnwindSafe;
use std::path::Path;

use pyo3::prelude::*;

use crate::read::Stop;
use crate::report::invalid;
use crate::{Error, UsageError};

/// Why a call failed, before it is turned into a Python exception (which
/// needs the GIL).
pub(crate) enum Fail {
    Usage(String),
    Error(String),
    Invalid(Box<ndarc_verify::Report>, bool),
}

impl Fail {
    pub(crate) fn into_py(self, py: Python<'_>) -> PyErr {
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

/// The text of a panic's payload.
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs `f` with a panic turned into a [`Fail`].
pub(crate) fn caught<T>(f: impl FnOnce() -> Result<T, Fail>) -> Result<T, Fail> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(Fail::Error(format!(
            "internal error (please report it): {}",
            panic_text(&*p)
        )))
    })
}

/// Runs `f` without the GIL and with panics caught.
pub(crate) fn detached<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Fail> + Send,
) -> PyResult<T> {
    py.detach(move || caught(f)).map_err(|e| e.into_py(py))
}

/// A packed database's refusal, as an error.
pub(crate) fn refused(path: &Path, r: ndarc_sqlite::Error) -> Fail {
    Fail::Error(format!("{}: {r}", path.display()))
}
