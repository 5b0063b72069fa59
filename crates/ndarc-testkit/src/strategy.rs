//! proptest strategies for small generated archives.

use proptest::prelude::*;

use ndarc_gen::{GenOptions, Later, Rows};

/// Small [`GenOptions`]: 0–12 tables (templates, then random ones), 0–25
/// rows each, up to 4 objects of up to 2.5 KB (sometimes one spanning three
/// parts), up to 4 payloads, parts of 1 to 6 KB, and sometimes a later
/// export. Every value generates a valid archive of a few KB to a few
/// hundred KB.
pub fn arb_options() -> impl Strategy<Value = GenOptions> {
    (
        (any::<u64>(), 0usize..=12, 0u64..=10, 0u64..=15),
        (0u64..=4, 0u64..=2500, any::<bool>(), 0u64..=4, 0u64..=1200),
        (1024usize..=6000, any::<bool>(), any::<bool>()),
        proptest::option::weighted(0.3, arb_later()),
    )
        .prop_map(
            |(
                (seed, tables, lo, span),
                (objects, object_bytes, large_object, payloads, payload_bytes),
                (part_bytes, excluded_tables, migrations),
                later,
            )| GenOptions {
                seed,
                tables,
                kinds: None,
                rows: Rows::Between(lo, lo + span),
                objects,
                object_bytes,
                large_object,
                payloads,
                payload_bytes,
                part_bytes,
                excluded_tables,
                migrations,
                product: "ndarc-proptest".to_string(),
                later,
                shuffle_rows: None,
            },
        )
}

/// A [`Later`] with fractions in 0..=0.5.
pub fn arb_later() -> impl Strategy<Value = Later> {
    (
        any::<u64>(),
        0.0f64..=0.5,
        0.0f64..=0.5,
        0.0f64..=0.5,
        any::<bool>(),
    )
        .prop_map(|(seed, changed, added, removed, binary)| Later {
            seed,
            changed,
            added,
            removed,
            binary,
        })
}
