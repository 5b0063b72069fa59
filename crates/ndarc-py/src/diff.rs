//! `diff`: two archives or databases compared, as `ndarc diff --format json`.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use ndarc_sqlite::stream::{Header, PackStream};

use crate::guard::{detached, Fail};
use crate::report::Options;
use crate::UsageError;

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
) -> Opened<'a> {
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
                Some(r) => Opened::Packing(r),
                None => Opened::Source(ndarc_diff::Source::Path(p)),
            }
        }
        Side::Path(p) => Opened::Source(ndarc_diff::Source::Path(p)),
        Side::Bytes(bytes) => Opened::Source(ndarc_diff::Source::Bytes(bytes)),
    }
}

/// A side opened: a source now, or a database being packed (both sides
/// are opened before either pack is waited for, so that two databases
/// are packed side by side).
enum Opened<'a> {
    Source(ndarc_diff::Source<'a>),
    Packing(ndarc_sqlite::stream::PackedReader),
}

impl<'a> Opened<'a> {
    /// The source, once a database's pack is done (no archive when it
    /// could not be packed, which its packer's `finish` then says).
    fn source(self) -> ndarc_diff::Source<'a> {
        match self {
            Opened::Source(s) => s,
            Opened::Packing(r) => match r.into_file() {
                Some(p) => ndarc_diff::Source::File(p.file, p.start),
                None => ndarc_diff::Source::Bytes(&[]),
            },
        }
    }
}

/// The diff of `before` and `after` as the JSON of `ndarc diff --format
/// json` (with `stat`, of `--stat --format json`).
#[pyfunction]
#[pyo3(signature = (before, after, options, *, tables, ignore_tables, ignore_columns, ignore_objects, ignore_payloads, keys, keys_only, stat, no_verify, allow_product_mismatch))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn diff<'py>(
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
        let (sa, sb) = (sa.source(), sb.source());
        let result = ndarc_diff::diff_labeled((&na, sa), (&nb, sb), &opts);
        for (n, p) in packing {
            if let Err(why) = p.finish() {
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
