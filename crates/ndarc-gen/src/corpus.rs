//! Small, named example archives made by the generator. They are not the
//! committed corpus: `testdata/valid` is written by `scripts/make-corpus.py`
//! (see `testdata/README.md`).

use crate::gen::{generate_vec, GenOptions, Later, Rows};
use crate::schema::TableKind;

fn base(seed: u64) -> GenOptions {
    GenOptions {
        seed,
        tables: 0,
        kinds: Some(Vec::new()),
        rows: Rows::Exactly(3),
        objects: 0,
        object_bytes: 0,
        large_object: false,
        payloads: 0,
        payload_bytes: 0,
        part_bytes: 4096,
        excluded_tables: false,
        migrations: false,
        product: "ndarc-corpus".to_string(),
        later: None,
        shuffle_rows: None,
    }
}

fn with_tables(seed: u64, kinds: &[TableKind], rows: u64) -> GenOptions {
    GenOptions {
        kinds: Some(kinds.to_vec()),
        rows: Rows::Exactly(rows),
        ..base(seed)
    }
}

/// The options of each corpus archive, by file name. Each shows one
/// feature (or a few related ones) in a file of a few KB that a person can
/// read.
pub fn corpus_options() -> Vec<(String, GenOptions)> {
    use TableKind as T;
    let everything = GenOptions {
        seed: 14,
        rows: Rows::Between(1, 3),
        objects: 4,
        object_bytes: 200,
        large_object: true,
        payloads: 3,
        payload_bytes: 120,
        part_bytes: 2048,
        product: "ndarc-corpus".to_string(),
        ..GenOptions::default()
    };
    let list = vec![
        ("empty", base(1)),
        ("minimal", with_tables(2, &[T::Tags], 1)),
        ("affinities", with_tables(3, &[T::Users], 6)),
        (
            "composite-keys",
            with_tables(4, &[T::Orders, T::KvStore], 5),
        ),
        (
            "rowid-aliases",
            with_tables(5, &[T::Events, T::LegacyRows, T::ShadowedRowid], 3),
        ),
        ("unicode-names", with_tables(6, &[T::Unicode, T::Audit], 3)),
        ("empty-table", with_tables(7, &[T::EmptyThings, T::Tags], 2)),
        (
            "dependencies",
            GenOptions {
                excluded_tables: true,
                ..with_tables(8, &[T::Users, T::Orders, T::Audit, T::Events], 1)
            },
        ),
        (
            "long-text",
            GenOptions {
                part_bytes: 65536,
                ..with_tables(9, &[T::Users], 4)
            },
        ),
        (
            "objects",
            GenOptions {
                objects: 4,
                object_bytes: 300,
                large_object: true,
                part_bytes: 1024,
                ..base(10)
            },
        ),
        (
            "payloads",
            GenOptions {
                payloads: 4,
                payload_bytes: 200,
                ..base(11)
            },
        ),
        (
            "many-parts",
            GenOptions {
                part_bytes: 1024,
                ..with_tables(12, &[T::Tags], 30)
            },
        ),
        (
            "random-tables",
            with_tables(13, &[T::Random(0), T::Random(1), T::Random(2)], 3),
        ),
        ("everything", everything.clone()),
        (
            "everything-later",
            everything.with_later(Later {
                seed: 7,
                changed: 0.3,
                added: 0.3,
                removed: 0.3,
                binary: true,
            }),
        ),
        (
            "migrations-journal",
            GenOptions {
                migrations: true,
                ..with_tables(15, &[T::Tags], 1)
            },
        ),
    ];
    list.into_iter()
        .map(|(n, o)| (format!("{n}.ndjson"), o))
        .collect()
}

/// The corpus of valid archives: `(file name, bytes)` pairs, each a few KB.
pub fn corpus_valid() -> Vec<(String, Vec<u8>)> {
    corpus_options()
        .into_iter()
        .filter_map(|(name, o)| generate_vec(&o).ok().map(|(bytes, _)| (name, bytes)))
        .collect()
}
