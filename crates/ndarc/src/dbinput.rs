//! A SQLite database wherever `verify` and `diff` read an archive: the
//! on-the-fly packing of [`ndarc_sqlite::stream`], which standard input
//! (`-`) never goes through.

use std::path::Path;

pub use ndarc_sqlite::stream::{on_packed, pack_to_vec, Header, PackStream, PackedReader};

use crate::io::is_stdio;

/// Whether `path` names a SQLite database (judged by its header; standard
/// input never is).
pub fn is_database(path: &Path) -> bool {
    !is_stdio(path) && ndarc_sqlite::stream::is_database(path)
}

/// The header of the archive at `path` (see [`Header::of_archive`]);
/// `None` for standard input.
pub(crate) fn header_of_archive(path: &Path) -> Option<Header> {
    if is_stdio(path) {
        return None;
    }
    Header::of_archive(path)
}
