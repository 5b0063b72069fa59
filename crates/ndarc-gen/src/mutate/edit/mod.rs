//! What the mutations edit, and how an edit becomes a file:
//!
//! - [`model`]: an archive as records ([`Model`]: the manifest, the part
//!   lines and the closing, as JSON values, so that a mutation can write
//!   what no valid archive holds) with the typed manifest of ndarc-format's
//!   intake;
//! - [`targets`]: through that typed manifest, where the mutations find
//!   their targets ([`Tab`], [`Col`], [`Bin`]: tables, columns and
//!   binaries with their indexes in the JSON and the parts that hold their
//!   rows or chunks);
//! - [`values`]: the helpers that read and build values;
//! - [`render`]: [`Edit`], what a mutation changed, the reseal that
//!   follows, byte edits after sealing and the line of the expected
//!   finding;
//! - [`bytes`]: byte edits of a line, and where a line starts.

mod bytes;
mod model;
mod render;
mod targets;
mod values;

pub(super) use bytes::{first_number, line_start, splice, string_value};
pub(super) use model::Model;
pub(super) use render::{render, At, Edit};
pub(super) use targets::{fresh_col_name, Bin, BinKind, Col, Tab};
pub(super) use values::{
    arr, arr_mut, col, flip_case, int_at, n, obj, obj_mut, pick, random_bytes, s, some_bytes,
    sorted_utf16, str_at, strings, Need, Obj, R, V,
};
