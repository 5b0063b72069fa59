//! Seeded, deterministic random SQLite databases for fuzz-testing producers.
//!
//! A database is first drawn as a [`DbSpec`] (tables, columns, keys, foreign
//! keys, rows) and then written with [`DbSpec::write`]. Keeping the plan,
//! not only the file, is what lets a failing database be shrunk
//! ([`shrink`]): drop tables, then rows, then columns, while it still fails.
//!
//! [`generate`] draws a database a conforming producer must archive. It
//! covers every affinity and a spread of declared types (`FLOATING POINT` is
//! INTEGER, `STRING` is NUMBER), single-column and composite keys, `INTEGER
//! PRIMARY KEY` aliases, WITHOUT ROWID tables, rowid tables whose columns
//! shadow `rowid`/`_rowid_` (not all three), generated columns (virtual and
//! stored), foreign keys (also naming the parent in another ASCII case),
//! NULLs, unicode and astral text, NUL and control characters, empty strings
//! and blobs, integers at ±2^53 and ±2^63 where the affinity keeps them as
//! numbers, floats (−0.0, subnormals, 1e21, the largest double), long text,
//! empty tables, and tables whose names the producer's defaults exclude
//! (holding rows that would be refused if they were archived).
//!
//! [`must_refuse`] adds one defect ([`Refusal`]) to such a database; each
//! defect has the code the seed's producer refuses it with
//! ([`Refusal::code`]).
//!
//! The module's parts: [`spec`](DbSpec) (the plan and writing it),
//! `draw` (values, types and names), `table` (one table), `refuse` (the
//! defects), `variant` (a later version) and `shrink`.

use ndarc_gen::{derive, Rng};

mod draw;
mod refuse;
mod shrink;
mod spec;
mod table;
mod variant;

pub use draw::EXCLUDED_NAMES;
pub(crate) use draw::{cell, key_cell};
pub use refuse::{must_refuse, Refusal};
pub use shrink::shrink;
pub use spec::{Cell, Column, DbSpec, ForeignKey, Generated, Row, Table};
pub use variant::variant;

use draw::{fresh, TABLE_NAMES};
use table::{excluded_table, table};

/// Quotes an identifier for SQL (the producer's `quote`).
pub use crate::quote;

/// Sizes of generated databases.
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// At most this many archived tables (besides excluded ones).
    pub max_tables: usize,
    /// At most this many rows a table.
    pub max_rows: usize,
    /// Draw one long text (16–64 KiB) in about one database of this many
    /// (0: never).
    pub long_text_one_in: u64,
}

impl Default for FuzzOptions {
    fn default() -> FuzzOptions {
        FuzzOptions {
            max_tables: 5,
            max_rows: 12,
            long_text_one_in: 8,
        }
    }
}

/// A generated database and what a producer must do with it.
#[derive(Debug, Clone)]
pub struct FuzzDb {
    /// The seed it was drawn from.
    pub seed: u64,
    /// The plan.
    pub spec: DbSpec,
    /// `Some` when the producer must refuse it.
    pub refusal: Option<Refusal>,
}

/// Draws a database a conforming producer must archive.
pub fn generate(seed: u64, opts: &FuzzOptions) -> FuzzDb {
    let mut r = Rng::new(derive(seed, 0x6462));
    let mut spec = DbSpec::default();
    let mut taken: Vec<String> = Vec::new();
    let mut parents: Vec<(String, bool)> = Vec::new();
    let mut long_text = opts.long_text_one_in > 0 && r.one_in(opts.long_text_one_in);
    let n = r.below(opts.max_tables as u64 + 1) as usize;
    for _ in 0..n {
        let name = fresh(&mut r, TABLE_NAMES, &taken, "t");
        taken.push(name.clone());
        let t = table(&mut r, name, &parents, opts, &mut long_text);
        parents.push((t.name.clone(), t.pk.is_empty()));
        spec.tables.push(t);
    }
    for _ in 0..r.below(3) {
        let t = excluded_table(&mut r, &taken);
        taken.push(t.name.clone());
        spec.tables.push(t);
    }
    FuzzDb {
        seed,
        spec,
        refusal: None,
    }
}

/// The database of run `run` of a fuzzing session seeded `seed`: every
/// fourth run must be refused, the defects taken in turn.
pub fn for_run(seed: u64, run: u64, opts: &FuzzOptions) -> FuzzDb {
    let s = derive(seed, run);
    if run % 4 == 3 {
        let defect = Refusal::ALL[((run / 4) % Refusal::ALL.len() as u64) as usize];
        must_refuse(s, opts, defect)
    } else {
        generate(s, opts)
    }
}

#[cfg(test)]
mod tests;
