//! The producer's packing rule and the part-line writer live in
//! `ndarc_format::pack`, shared with `ndarc-sqlite`'s `pack`.

pub use ndarc_format::pack::{PartWriter, RowPacker, PART_OVERHEAD};
