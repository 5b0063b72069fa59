//! A SQLite database wherever `verify` and `diff` read an archive: the
//! on-the-fly packing of [`ndarc_sqlite::stream`], which standard input
//! (`-`) never goes through.

use std::path::Path;
use std::sync::OnceLock;

pub use ndarc_sqlite::stream::{pack_to_vec, Header, PackStream, PackedReader};

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

/// What the program does once a database's pack is done and before its
/// archive is read (see [`on_packed`]).
static PACKED: OnceLock<fn()> = OnceLock::new();

/// Sets what is done once a database's pack is done, before its archive
/// is read: the binary hands its allocator's freed memory back to the
/// system there (`main.rs`), so that the buffers the pack freed moments
/// before are not still resident while the reading allocates its own
/// (`verify DB` peaked 5 MiB higher, 34 against 29 MiB, once the reading
/// began as the pack ended). Set once; nothing is done where it is not
/// set (the library, the tests).
pub fn on_packed(f: fn()) {
    let _ = PACKED.set(f);
}

/// Runs what [`on_packed`] set.
pub(crate) fn packed() {
    if let Some(f) = PACKED.get() {
        f();
    }
}
