//! Mutants: a valid archive with exactly one rule of SPEC.md broken.
//!
//! A [`Mutation`] is one way to break one rule (one finding [`Code`]); it
//! picks its target — the table, row, column, binary, part or line — from
//! the archive's own content with a seeded [`Rng`], edits the records, and
//! re-seals what is derived from them ([`reseal_with`](crate::reseal_with):
//! counts, `schema`, `partCount`, both hashes), switching off only what must
//! stay broken. So the mutant breaks that one rule and, as far as the format
//! allows, no other: where one fault necessarily brings another (a part line
//! that does not parse loses its chunk, so the binary is also missing), the
//! [`Mutant`] lists the second code in `also`; where the format leaves a
//! consequence open, in `allow` — as the sidecars of `testdata/invalid`.
//!
//! - [`mutate`]: a mutant for one code (a seed-chosen mutation of that code
//!   among those the archive allows);
//! - [`mutate_random`]: a mutant for a seed-chosen code;
//! - [`mutations`]: every mutation, by code; [`Mutation::apply`] runs one.
//!
//! Every code a file can show has at least one mutation (all of
//! [`Code::ALL`] except [`PUSH_ONLY`], [`POLICY_ONLY`], [`INTEGRITY_ONLY`] and [`LINEAGE_ONLY`]); most apply to any archive (they add
//! the table, object or payload they need when the archive has none), a
//! few need rows of a certain kind (a NOT NULL column, a primary-key table
//! with two rows …) and say [`NotApplicable`] otherwise.
//!
//! The same archive, code and seed give the same mutant, byte for byte.
//!
//! The mutations are grouped by the sections of SPEC.md whose rules they
//! break, one module each (`json`, `framing`, `manifest`, `tables`,
//! `table_sql`, `importable`, `objects`, `exclusions`, `parts`, `rows`, `chunks`,
//! `closing`); each declares its mutations, in `MUTATIONS`, with their
//! functions. `edit` holds what they edit (the archive as records, JSON
//! values) and how an edit becomes a file (reseal, byte edits, the expected
//! line); the mutations find their targets through the typed manifest of
//! ndarc-format's intake (`check_manifest_line`), so each rule of the
//! manifest (affinity, primary-key order, rowid alias, exclusions) is read
//! the one way ndarc-format reads it.
//!
//! ```
//! use ndarc_format::Code;
//! let (archive, _) = ndarc_gen::generate_vec(&ndarc_gen::GenOptions::small(3)).unwrap();
//! let m = ndarc_gen::mutate(&archive, Code::RowNotNull, 7).unwrap();
//! assert_eq!(m.code, Code::RowNotNull);
//! assert!(m.line > 1);
//! assert_eq!(m.bytes, ndarc_gen::mutate(&archive, Code::RowNotNull, 7).unwrap().bytes);
//! ```

use std::fmt;
use std::sync::LazyLock;

use ndarc_format::Code;

use crate::rng::{derive, Rng};

use edit::{render, Edit, Model, R};

/// A [`Mutation`]: its code, name, description and function. Each module
/// of a group of rules declares its mutations with it, next to their
/// functions, in `MUTATIONS`.
macro_rules! mutation {
    ($code:ident, $name:literal, $desc:literal, $f:path) => {
        Mutation {
            code: Code::$code,
            name: $name,
            description: $desc,
            apply: $f,
        }
    };
}

mod chunks;
mod closing;
mod edit;
mod exclusions;
mod fixture;
mod framing;
mod importable;
mod integrity;
mod json;
mod manifest;
mod objects;
mod parts;
mod policy;
mod rows;
mod table_sql;
mod tables;

/// Codes that only the push API (parts arriving one by one) can produce;
/// no file shows them, so no mutation makes them.
pub const PUSH_ONLY: [Code; 2] = [Code::PartConflict, Code::PartMissing];

/// Codes that only a policy (SPEC.md §15, `verify --policy`) produces: they
/// judge an archive against what a platform expects, so no file alone shows
/// them; the corpus has them as fixtures with `options.policy`.
pub const POLICY_ONLY: [Code; 11] = [
    Code::PolicyProduct,
    Code::PolicySchema,
    Code::PolicyContentHash,
    Code::PolicyExclusion,
    Code::PolicyConfiguration,
    Code::PolicyTableMissing,
    Code::PolicyBucket,
    Code::PolicyPayload,
    Code::ObjectReferences,
    Code::ReferenceColumnMissing,
    Code::ReferenceColumnExcluded,
];

/// Codes that only `verify --integrity` (SPEC.md §11) produces: they judge
/// the rows by the foreign keys of the tables' own `sql`, which the format
/// leaves alone; the corpus has them as fixtures with `options.integrity`.
pub const INTEGRITY_ONLY: [Code; 2] = [Code::ForeignKeyViolation, Code::ForeignKeyMismatch];

/// Codes that only `verify A --later B` (SPEC.md §4.6) produces: they judge
/// one archive as the successor of another, so no file alone shows them;
/// `ndarc_format::check_lineage`'s tests and the CLI's `tests/lineage.rs`
/// cover them.
pub const LINEAGE_ONLY: [Code; 4] = [
    Code::LineageSourceIdentity,
    Code::LineageEpochBackwards,
    Code::LineageJournalRewritten,
    Code::LineageMigrationsRewritten,
];

// ------------------------------------------------------------------ API

/// One way to break one rule.
#[derive(Clone, Copy)]
pub struct Mutation {
    /// The code of the rule it breaks: the code of the first finding a
    /// verifier must report.
    pub code: Code,
    /// A stable name, `<code>` or `<code>-<variant>` (as the files of
    /// `testdata/invalid`).
    pub name: &'static str,
    /// What it does, for a person.
    pub description: &'static str,
    apply: Apply,
}

type Apply = fn(&mut Model, &mut Rng) -> R<Edit>;

impl fmt::Debug for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutation")
            .field("code", &self.code)
            .field("name", &self.name)
            .field("description", &self.description)
            .finish()
    }
}

impl Mutation {
    /// Applies this mutation to `archive` (a valid archive's bytes), its
    /// targets chosen by `seed`.
    pub fn apply(&self, archive: &[u8], seed: u64) -> Result<Mutant, NotApplicable> {
        let not = |reason: String| NotApplicable {
            code: Some(self.code),
            mutation: Some(self.name),
            reason,
        };
        let mut model = Model::parse(archive).map_err(not)?;
        let mut rng = Rng::new(derive(seed, name_seed(self.name)));
        let edit = (self.apply)(&mut model, &mut rng).map_err(not)?;
        let (bytes, line, what, also, allow) = render(model, edit).map_err(not)?;
        Ok(Mutant {
            bytes,
            code: self.code,
            line,
            mutation: self.name,
            description: what,
            also,
            allow,
        })
    }
}

/// A mutated archive and what a verifier must report on it.
#[derive(Clone, PartialEq, Eq)]
pub struct Mutant {
    /// The archive's bytes.
    pub bytes: Vec<u8>,
    /// The code of the one rule broken.
    pub code: Code,
    /// The 1-based line of the first finding of `code` (lines counted as
    /// LF-separated lines of the file, empty ones included; for
    /// `closing_missing` the line where the closing should have been).
    pub line: u64,
    /// The [`Mutation`] that made it.
    pub mutation: &'static str,
    /// What was changed, naming the table, row, column or binary.
    pub description: String,
    /// Codes that necessarily accompany `code` (a verifier must report them
    /// too), e.g. `binary_missing` when the line of a binary's only chunk
    /// does not parse.
    pub also: Vec<Code>,
    /// Codes a verifier may also report, where the format leaves the
    /// consequence open.
    pub allow: Vec<Code>,
}

impl fmt::Debug for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutant")
            .field("code", &self.code)
            .field("line", &self.line)
            .field("mutation", &self.mutation)
            .field("description", &self.description)
            .field("also", &self.also)
            .field("allow", &self.allow)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// No mutant could be made: the archive lacks what the rule needs (no
/// primary-key table with two rows …), does not parse, or the code is one
/// no file can show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotApplicable {
    /// The code asked for, when there was one.
    pub code: Option<Code>,
    /// The mutation that was tried last, when there was one.
    pub mutation: Option<&'static str>,
    /// Why not.
    pub reason: String,
}

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(c) => write!(f, "{c}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for NotApplicable {}

/// Every mutation: each group's, in the order of SPEC.md's sections, which
/// is the order of their codes.
static MUTATIONS: LazyLock<Vec<Mutation>> = LazyLock::new(|| {
    let mut all = [
        json::MUTATIONS,
        framing::MUTATIONS,
        manifest::MUTATIONS,
        tables::MUTATIONS,
        table_sql::MUTATIONS,
        importable::MUTATIONS,
        objects::MUTATIONS,
        exclusions::MUTATIONS,
        parts::MUTATIONS,
        rows::MUTATIONS,
        chunks::MUTATIONS,
        closing::MUTATIONS,
    ]
    .concat();
    // A group's codes may interleave with another's (table_sql sits among
    // tables' codes): the order of the codes, a mutation's own order kept.
    let pos = |c: Code| Code::ALL.iter().position(|&x| x == c);
    all.sort_by_key(|m| pos(m.code));
    all
});

/// Every mutation, in SPEC.md order of their codes.
pub fn mutations() -> &'static [Mutation] {
    &MUTATIONS
}

/// The mutations of `code`.
pub(crate) fn mutations_of(code: Code) -> impl Iterator<Item = &'static Mutation> {
    MUTATIONS.iter().filter(move |m| m.code == code)
}

pub use fixture::Fixture;

/// The fixtures of `testdata/invalid` that this crate writes, from the
/// corpus's base archive (`testdata/valid/base.ndjson`): each module of a
/// group of rules declares its fixtures in `fixtures`, next to the
/// mutations of the same rules, with the edit fixed so that the file is
/// what its note says. `cargo run -p ndarc-gen --example corpus -- --write
/// DIR` writes them; `scripts/make-corpus.py --check` builds them a second
/// time, in Python, and compares (`testdata/README.md`).
pub fn corpus_fixtures(base: &[u8]) -> Result<Vec<Fixture>, String> {
    let base = fixture::Base::new(base)?;
    if base.lines.len() != 9 {
        return Err(format!(
            "the base archive has {} lines; the fixtures are written for its 9",
            base.lines.len()
        ));
    }
    let mut out = framing::fixtures(&base)?;
    out.extend(framing::canonical_fixtures(&base)?);
    out.extend(json::fixtures(&base)?);
    let recs = fixture::Recs::new(&base)?;
    out.extend(manifest::fixtures(&recs)?);
    out.extend(tables::fixtures(&recs)?);
    out.extend(table_sql::fixtures(&recs)?);
    out.extend(importable::fixtures(&recs)?);
    out.extend(objects::fixtures(&recs)?);
    out.extend(exclusions::fixtures(&recs)?);
    out.extend(parts::fixtures(&recs)?);
    out.extend(rows::fixtures(&recs)?);
    out.extend(chunks::fixtures(&recs)?);
    out.extend(closing::fixtures(&recs)?);
    out.extend(policy::fixtures(&recs)?);
    out.extend(integrity::fixtures(&recs)?);
    Ok(out)
}

/// The mutation called `name`.
pub fn mutation(name: &str) -> Option<&'static Mutation> {
    MUTATIONS.iter().find(|m| m.name == name)
}

/// Every code a file can show: [`Code::ALL`] without [`PUSH_ONLY`],
/// [`POLICY_ONLY`], [`INTEGRITY_ONLY`] and [`LINEAGE_ONLY`].
pub fn file_codes() -> Vec<Code> {
    Code::ALL
        .iter()
        .copied()
        .filter(|c| {
            !PUSH_ONLY.contains(c)
                && !POLICY_ONLY.contains(c)
                && !INTEGRITY_ONLY.contains(c)
                && !LINEAGE_ONLY.contains(c)
        })
        .collect()
}

/// A mutant of `archive` (a valid archive's bytes) that breaks the rule of
/// `code`. The mutations of that code are tried in a seed-chosen order and
/// the first that applies is used; its targets are chosen by `seed` too.
pub fn mutate(archive: &[u8], code: Code, seed: u64) -> Result<Mutant, NotApplicable> {
    let mut candidates: Vec<&Mutation> = mutations_of(code).collect();
    if candidates.is_empty() {
        return Err(NotApplicable {
            code: Some(code),
            mutation: None,
            reason: if PUSH_ONLY.contains(&code) {
                "only the push API reports this code; no file shows it".to_string()
            } else if POLICY_ONLY.contains(&code) {
                "only a policy (verify --policy) reports this code; no file alone shows it"
                    .to_string()
            } else if INTEGRITY_ONLY.contains(&code) {
                "only verify --integrity reports this code, from the tables' foreign keys; the format alone allows it"
                    .to_string()
            } else if LINEAGE_ONLY.contains(&code) {
                "only verify --later reports this code, between two archives; no file alone shows it"
                    .to_string()
            } else {
                "no mutation makes this code".to_string()
            },
        });
    }
    let mut rng = Rng::new(derive(seed, code as u64));
    shuffle(&mut candidates, &mut rng);
    let mut last = None;
    for m in candidates {
        match m.apply(archive, rng.next_u64()) {
            Ok(mutant) => return Ok(mutant),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or(NotApplicable {
        code: Some(code),
        mutation: None,
        reason: "no mutation applies".to_string(),
    }))
}

/// A mutant of `archive` for a seed-chosen code of [`file_codes`] (the next
/// one in a seed-chosen order when a code does not apply).
pub fn mutate_random(archive: &[u8], seed: u64) -> Result<Mutant, NotApplicable> {
    let mut codes = file_codes();
    let mut rng = Rng::new(derive(seed, 0x6d75_7461_6e74));
    shuffle(&mut codes, &mut rng);
    let mut last = None;
    for code in codes {
        match mutate(archive, code, rng.next_u64()) {
            Ok(m) => return Ok(m),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or(NotApplicable {
        code: None,
        mutation: None,
        reason: "no mutation applies".to_string(),
    }))
}

fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

fn name_seed(name: &str) -> u64 {
    // FNV-1a: a stable per-mutation stream.
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_code_has_a_mutation_and_names_are_unique() {
        for code in file_codes() {
            assert!(mutations_of(code).next().is_some(), "{code}");
        }
        for c in PUSH_ONLY
            .iter()
            .chain(&POLICY_ONLY)
            .chain(&INTEGRITY_ONLY)
            .chain(&LINEAGE_ONLY)
        {
            assert!(mutations_of(*c).next().is_none());
        }
        let mut names: Vec<&str> = mutations().iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), mutations().len());
        for m in mutations() {
            assert!(
                m.name == m.code.as_str() || m.name.starts_with(&format!("{}-", m.code)),
                "{}",
                m.name
            );
        }
    }

    #[test]
    fn mutations_are_in_the_order_of_their_codes() {
        let pos = |c: Code| Code::ALL.iter().position(|&x| x == c);
        for w in mutations().windows(2) {
            assert!(
                pos(w[0].code) <= pos(w[1].code),
                "{} {}",
                w[0].name,
                w[1].name
            );
        }
    }

    #[test]
    fn an_archive_of_another_format_identifier_is_mutated() {
        // The mutator reads the archive's own identifier (a verifier may
        // be told to accept it); only what it must refuse is refused.
        let (archive, _) = crate::generate_vec(&crate::GenOptions::small(5)).unwrap();
        let text = String::from_utf8(archive).unwrap();
        let other = text.replacen(
            &format!("\"format\":\"{}\"", ndarc_format::FORMAT),
            "\"format\":\"other-portability\"",
            1,
        );
        assert_ne!(other, text);
        let m = mutate(other.as_bytes(), Code::RowNotNull, 3).unwrap();
        assert_eq!(m.code, Code::RowNotNull);
        assert!(m.bytes.windows(18).any(|w| w == b"other-portability\""));
    }

    #[test]
    fn bad_input_is_not_applicable() {
        for input in [&b""[..], b"{}\n", b"not json\n", b"[1]\n[2]\n"] {
            assert!(mutate(input, Code::RowType, 1).is_err());
            assert!(mutate_random(input, 1).is_err());
        }
        let e = mutate(b"", Code::PartMissing, 1).unwrap_err();
        assert!(e.reason.contains("push API"), "{e}");
    }
}
