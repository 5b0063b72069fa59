//! Pins the output of every mutation: a SHA-256 over every mutant (bytes,
//! line, description, `also`, `allow`) or refusal reason, for several seeds,
//! on the corpus's base archive, on every generated valid corpus archive and
//! on generated archives with and without tables, objects and payloads.
//!
//! The mutator's contract is that the same archive and seed give the same
//! mutant, byte for byte; a refactoring of the mutator must keep this digest.
//! When a change of behaviour is intended, print the new digest with
//! `cargo test --release -p ndarc-gen --test mutant_digest -- --nocapture`
//! and record it here, saying why in the commit.

use std::path::PathBuf;

use ndarc_format::Code;
use ndarc_gen::mutate::mutations;
use ndarc_gen::{corpus_valid, generate_vec, mutate_random, GenOptions, Mutant, Rows};
use sha2::{Digest, Sha256};

/// The digest of the mutator's output, recorded after the table_sql
/// mutations were added (and empty_columns, reserved_table of a sqlite_
/// name, and transfer_sql_limit's table were made to say, or to write,
/// what SQLite's parser finds in their sql), then again after a generated
/// column added and excluded was allowed to give `table_sql` too (f1d825b),
/// then again when a later export's journal started keeping the first
/// export's entries (issue 24: only `everything-later` changed).
const RECORDED: &str = "60e38dbb6c5826ec3947e93df02c1f4471d28301fec763cc5396bf33055c6abc";

fn archives() -> Vec<(String, Vec<u8>)> {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/valid/base.ndjson");
    let mut out = vec![(
        "base".to_string(),
        std::fs::read(&base).expect("testdata/valid/base.ndjson"),
    )];
    out.extend(corpus_valid());
    for seed in [1, 2] {
        let (bytes, _) = generate_vec(&GenOptions::small(seed)).expect("generate");
        out.push((format!("small({seed})"), bytes));
    }
    // Nothing to target: the mutations add the table, object or payload
    // they need.
    let bare = GenOptions {
        tables: 0,
        objects: 0,
        payloads: 0,
        excluded_tables: false,
        migrations: false,
        ..GenOptions::small(3)
    };
    out.push(("bare".to_string(), generate_vec(&bare).expect("generate").0));
    let one_row = GenOptions {
        tables: 4,
        rows: Rows::Exactly(1),
        ..GenOptions::small(4)
    };
    out.push((
        "one_row".to_string(),
        generate_vec(&one_row).expect("generate").0,
    ));
    out
}

/// Adds one outcome to `h`; true when it is a mutant.
fn feed(h: &mut Sha256, r: &Result<Mutant, ndarc_gen::NotApplicable>) -> bool {
    let ok = r.is_ok();
    match r {
        Ok(m) => {
            h.update(b"ok\0");
            h.update((m.bytes.len() as u64).to_le_bytes());
            h.update(&m.bytes);
            h.update(m.line.to_le_bytes());
            h.update(m.mutation.as_bytes());
            h.update(b"\0");
            h.update(m.description.as_bytes());
            h.update(b"\0");
            for c in &m.also {
                h.update(c.as_str().as_bytes());
                h.update(b",");
            }
            h.update(b"|");
            for c in &m.allow {
                h.update(c.as_str().as_bytes());
                h.update(b",");
            }
        }
        Err(e) => {
            h.update(b"err\0");
            h.update(e.to_string().as_bytes());
        }
    }
    h.update(b"\n");
    ok
}

#[test]
fn every_mutation_gives_the_recorded_mutants() {
    let mut all = Sha256::new();
    let mut lines = Vec::new();
    for (name, archive) in archives() {
        let mut h = Sha256::new();
        let (mut made, mut refused) = (0, 0);
        let mut count = |ok: bool| if ok { made += 1 } else { refused += 1 };
        for m in mutations() {
            // A line over the limit is 16 MiB: once, on the base archive.
            let seeds = match (m.code, name.as_str()) {
                (Code::LineTooLong, "base") => 0..1,
                (Code::LineTooLong, _) => 0..0,
                _ => 0..4,
            };
            for seed in seeds {
                count(feed(&mut h, &m.apply(&archive, seed)));
            }
        }
        for seed in 0..4 {
            count(feed(&mut h, &mutate_random(&archive, seed)));
        }
        let d = h.finalize();
        all.update(d);
        lines.push(format!(
            "{name}: {} ({made} mutants, {refused} refused)",
            hex(&d)
        ));
    }
    let got = hex(&all.finalize());
    println!("{}\nall: {got}", lines.join("\n"));
    assert_eq!(got, RECORDED, "per archive:\n{}", lines.join("\n"));
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
