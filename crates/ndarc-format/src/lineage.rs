//! Lineage between two archives (SPEC.md §4.6): whether archive B can
//! follow archive A, as the producer's import hands a later journal
//! (`laterJournal`: `sourceIdentity`, `epoch`, `journal`) to the server.
//!
//! [`check_lineage`] is the whole rule: two typed manifests in, findings
//! out. It checks what can be checked offline; the bridging itself (what
//! the journal entries mean, whether the server's state accepts the epoch)
//! is the server's.

use crate::code::Code;
use crate::finding::{pointer, Finding};
use crate::manifest::{Carried, Manifest};

/// The findings of archive `later` (B) as a successor of `earlier` (A).
///
/// Every finding is about B's manifest: line 1, offset 0 (the manifest
/// line's start), a JSON pointer into B's manifest. No finding means B
/// can follow A as far as can be told offline:
/// - `lineage_source_identity_mismatch`: the same `sourceIdentity`;
/// - `lineage_epoch_backwards`: B's `epoch` is not below A's;
/// - `lineage_journal_rewritten`: B's `journal` entries start with A's,
///   equal and in order;
/// - `lineage_migrations_rewritten`: the same for `migrations` (absent in
///   A: nothing to keep; absent in B but present in A: rewritten).
pub fn check_lineage(earlier: &Manifest, later: &Manifest) -> Vec<Finding> {
    let mut out = Vec::new();
    if earlier.source_identity != later.source_identity {
        out.push(Finding::new(
            Code::LineageSourceIdentity,
            1,
            0,
            "/sourceIdentity",
            format!(
                "sourceIdentity is {:?} but the earlier archive's is {:?}: a later journal must come from the same source; export B again from the service A was exported from",
                later.source_identity, earlier.source_identity
            ),
        ));
    }
    if later.epoch < earlier.epoch {
        out.push(Finding::new(
            Code::LineageEpochBackwards,
            1,
            0,
            "/epoch",
            format!(
                "epoch {} is lower than the earlier archive's {}: B is older than A; swap the two archives or export B again",
                later.epoch, earlier.epoch
            ),
        ));
    }
    grows(
        earlier.journal.as_ref(),
        later.journal.as_ref(),
        "journal",
        Code::LineageJournalRewritten,
        &mut out,
    );
    grows(
        earlier.migrations.as_ref(),
        later.migrations.as_ref(),
        "migrations",
        Code::LineageMigrationsRewritten,
        &mut out,
    );
    out
}

/// Pushes at most one finding: where B's `name` stops extending A's.
fn grows(a: Option<&Carried>, b: Option<&Carried>, name: &str, code: Code, out: &mut Vec<Finding>) {
    let (a_member, a_entries) = match a {
        // A holds no list of entries: nothing offline can tell growth.
        None | Some(Carried::Opaque(_)) => return,
        Some(Carried::Entries { member, entries }) => (member, entries),
    };
    if a_entries.is_empty() {
        return;
    }
    let top = pointer([name]);
    let Some(b) = b else {
        out.push(Finding::new(
            code,
            1,
            0,
            top,
            format!(
                "{name} is absent but the earlier archive's has {} entries: a later export keeps them; export B again from A's source",
                a_entries.len()
            ),
        ));
        return;
    };
    let b_entries = match b {
        Carried::Entries { member, entries } if member == a_member => entries,
        _ => {
            let shape = match a_member {
                Some(m) => format!("an object with the entries in {m:?}"),
                None => "an array of entries".to_string(),
            };
            out.push(Finding::new(
                code,
                1,
                0,
                top,
                format!(
                    "{name} is not {shape} as in the earlier archive: a later export extends the earlier {name}, it does not reshape it"
                ),
            ));
            return;
        }
    };
    if let Some(i) = a_entries.iter().zip(b_entries).position(|(x, y)| x != y) {
        out.push(Finding::new(
            code,
            1,
            0,
            b.entry_pointer(name, Some(i)),
            format!(
                "{name} entry {i} differs from the earlier archive's entry {i}: entries are only appended; B must start with A's {} entries unchanged",
                a_entries.len()
            ),
        ));
    } else if b_entries.len() < a_entries.len() {
        out.push(Finding::new(
            code,
            1,
            0,
            b.entry_pointer(name, None),
            format!(
                "{name} has {} entries but the earlier archive's has {}: entries were removed; B must start with all of A's",
                b_entries.len(),
                a_entries.len()
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(member: Option<&str>, entries: &[&str]) -> Carried {
        Carried::Entries {
            member: member.map(str::to_string),
            entries: entries.iter().map(|e| e.to_string()).collect(),
        }
    }

    fn manifest(
        source: &str,
        epoch: u64,
        journal: Carried,
        migrations: Option<Carried>,
    ) -> Manifest {
        Manifest {
            source_identity: source.to_string(),
            epoch,
            journal: Some(journal),
            migrations,
            ..Manifest::default()
        }
    }

    fn a() -> Manifest {
        manifest(
            "src-1",
            7,
            list(Some("entries"), &[r#"{"seq":1}"#, r#"{"seq":2}"#]),
            Some(list(None, &[r#"{"id":1}"#])),
        )
    }

    fn found(f: &[Finding]) -> Vec<(&str, &str)> {
        f.iter()
            .map(|f| (f.code.as_str(), f.pointer.as_str()))
            .collect()
    }

    #[test]
    fn a_later_export_follows() {
        let b = manifest(
            "src-1",
            8,
            list(
                Some("entries"),
                &[r#"{"seq":1}"#, r#"{"seq":2}"#, r#"{"seq":3}"#],
            ),
            Some(list(None, &[r#"{"id":1}"#, r#"{"id":2}"#])),
        );
        assert!(check_lineage(&a(), &b).is_empty());
        // The same archive follows itself: the epoch may stay.
        assert!(check_lineage(&a(), &a()).is_empty());
        // A without migrations or with an empty journal keeps nothing.
        let mut bare = a();
        bare.migrations = None;
        bare.journal = Some(list(None, &[]));
        assert!(check_lineage(&bare, &b).is_empty());
    }

    #[test]
    fn another_source() {
        let mut b = a();
        b.source_identity = "src-2".into();
        let f = check_lineage(&a(), &b);
        assert_eq!(
            found(&f),
            [("lineage_source_identity_mismatch", "/sourceIdentity")]
        );
        assert_eq!((f[0].line, f[0].offset), (1, 0));
        assert!(f[0].is_error());
        assert!(f[0].message.contains("\"src-1\""), "{}", f[0].message);
    }

    #[test]
    fn epoch_backwards() {
        let mut b = a();
        b.epoch = 6;
        let f = check_lineage(&a(), &b);
        assert_eq!(found(&f), [("lineage_epoch_backwards", "/epoch")]);
        assert!(f[0]
            .message
            .contains("epoch 6 is lower than the earlier archive's 7"));
    }

    #[test]
    fn journal_rewritten() {
        let mut b = a();
        b.journal = Some(list(
            Some("entries"),
            &[r#"{"seq":1}"#, r#"{"seq":9}"#, r#"{"seq":3}"#],
        ));
        assert_eq!(
            found(&check_lineage(&a(), &b)),
            [("lineage_journal_rewritten", "/journal/entries/1")]
        );
        // Shortened.
        b.journal = Some(list(Some("entries"), &[r#"{"seq":1}"#]));
        assert_eq!(
            found(&check_lineage(&a(), &b)),
            [("lineage_journal_rewritten", "/journal/entries")]
        );
        // Reshaped: an array where A had an object.
        b.journal = Some(list(None, &[r#"{"seq":1}"#, r#"{"seq":2}"#]));
        assert_eq!(
            found(&check_lineage(&a(), &b)),
            [("lineage_journal_rewritten", "/journal")]
        );
        b.journal = Some(Carried::Opaque("\"x\"".into()));
        assert_eq!(
            found(&check_lineage(&a(), &b)),
            [("lineage_journal_rewritten", "/journal")]
        );
    }

    #[test]
    fn migrations_rewritten() {
        let mut b = a();
        b.migrations = Some(list(None, &[r#"{"id":2}"#]));
        assert_eq!(
            found(&check_lineage(&a(), &b)),
            [("lineage_migrations_rewritten", "/migrations/0")]
        );
        b.migrations = None;
        assert_eq!(
            found(&check_lineage(&a(), &b)),
            [("lineage_migrations_rewritten", "/migrations")]
        );
    }

    #[test]
    fn an_opaque_earlier_value_is_the_servers() {
        let mut earlier = a();
        earlier.journal = Some(Carried::Opaque("\"cursor-1\"".into()));
        let mut b = a();
        b.journal = Some(Carried::Opaque("\"cursor-0\"".into()));
        assert!(check_lineage(&earlier, &b).is_empty());
    }

    #[test]
    fn every_rule_at_once() {
        let b = manifest("other", 0, list(None, &[]), None);
        let codes: Vec<&str> = check_lineage(&a(), &b)
            .iter()
            .map(|f| f.code.as_str())
            .collect();
        assert_eq!(
            codes,
            [
                "lineage_source_identity_mismatch",
                "lineage_epoch_backwards",
                "lineage_journal_rewritten",
                "lineage_migrations_rewritten"
            ]
        );
    }
}
