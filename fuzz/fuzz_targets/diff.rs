//! Structure-aware: two small archives derived from one seed, the first
//! export (cached) and a "later export" (`GenOptions::with_later`, change
//! fractions and seed from the input), through `ndarc_diff::diff`.
//!
//! - diff(b, b) is equal and has no differences;
//! - diff(a, b) succeeds and finds exactly the row, object and payload
//!   changes the generator reports in its summary;
//! - diff(a, b') with the input's edits applied to b, with or without
//!   verification, with `keys_only` and ignore globs from the input, never
//!   panics; with verification an edited b' is refused;
//! - every successful diff renders (human with colour, JSON, Markdown,
//!   stat) without panicking, and the JSON rendering is valid JSON.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use ndarc_diff::{diff, object_key, payload_key, render, Diff, Options, Source};
use ndarc_fuzz::{archive, edit};
use ndarc_gen::Later;

fn render_all(d: &Diff) {
    let opts = render::RenderOptions {
        colour: true,
        max_rows: Some(3),
        full_rows: true,
        max_bytes: None,
    };
    let mut out = Vec::new();
    render::human(d, &opts, &mut out).unwrap();
    render::markdown(d, &render::RenderOptions::default(), &mut out).unwrap();
    // --max-markdown-bytes holds exactly, whatever the diff.
    let cap = render::MIN_MARKDOWN_BYTES;
    let capped_opts = render::RenderOptions {
        max_bytes: Some(cap),
        ..opts.clone()
    };
    let mut capped = Vec::new();
    render::markdown(d, &capped_opts, &mut capped).unwrap();
    assert!(
        capped.len() <= cap,
        "capped markdown is {} bytes, over {cap}",
        capped.len()
    );
    render::github(d, &mut out).unwrap();
    render::stat(d, &opts, &mut out).unwrap();
    let mut stat = Vec::new();
    render::json_stat(d, &mut stat).unwrap();
    if let Err(e) = ndarc_json::parse(&stat) {
        panic!("diff --stat JSON output does not parse: {e}");
    }
    let mut json = Vec::new();
    render::json(d, &mut json).unwrap();
    if let Err(e) = ndarc_json::parse(&json) {
        panic!(
            "diff JSON output does not parse: {e}\n{}",
            String::from_utf8_lossy(&json)
        );
    }
}

fn frac(u: &mut Unstructured<'_>) -> f64 {
    // 0, 1/16 … 1: coarse, so that the interesting corners are reachable.
    f64::from(u.int_in_range(0u8..=16).unwrap_or(0)) / 16.0
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let a = archive::pick(&mut u);
    let later = Later {
        seed: u64::from(u.arbitrary::<u8>().unwrap_or(0)),
        changed: frac(&mut u),
        added: frac(&mut u),
        removed: frac(&mut u),
        binary: u.arbitrary().unwrap_or(false),
    };
    let b = archive::make(a.options.with_later(later));
    let s = &b.summary;

    // diff(b, b): nothing.
    let d = diff(
        Source::Bytes(&b.bytes),
        Source::Bytes(&b.bytes),
        &Options::default(),
    )
    .unwrap_or_else(|e| panic!("diff of an archive with itself failed: {e}"));
    assert!(d.equal, "an archive differs from itself");
    assert!(
        !d.has_differences(),
        "an archive differs from itself: {d:#?}"
    );

    // diff(a, b): what the generator says changed.
    let keys_only = u.arbitrary::<bool>().unwrap_or(false);
    let d = diff(
        Source::Bytes(&a.bytes),
        Source::Bytes(&b.bytes),
        &Options {
            keys_only,
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("diff of first and later export failed ({later:?}): {e}"));
    assert_eq!(
        d.equal,
        a.summary.content_hash == s.content_hash,
        "equal vs content hashes"
    );
    for t in &s.tables {
        let found = d.tables.iter().find(|x| x.name == t.name);
        let got = found.map_or((0, 0, 0), |x| {
            (
                x.changed.len() as u64,
                x.added.len() as u64,
                x.removed.len() as u64,
            )
        });
        assert_eq!(
            got,
            (t.changed, t.added, t.removed),
            "table {}: (changed, added, removed) differ from the generator's ({later:?})",
            t.name
        );
    }
    assert!(
        d.tables
            .iter()
            .all(|x| s.tables.iter().any(|t| t.name == x.name)),
        "diff reports a table the archives do not have"
    );
    let keys =
        |v: &[ndarc_format::manifest::ObjectEntry]| sorted(v.iter().map(object_key).collect());
    assert_eq!(
        keys(&d.objects.added),
        sorted(s.objects.added.clone()),
        "objects added"
    );
    assert_eq!(
        keys(&d.objects.removed),
        sorted(s.objects.removed.clone()),
        "objects removed"
    );
    assert_eq!(
        sorted(
            d.objects
                .changed
                .iter()
                .map(|(x, _)| object_key(x))
                .collect()
        ),
        sorted(s.objects.changed.clone()),
        "objects changed"
    );
    let pkeys =
        |v: &[ndarc_format::manifest::PayloadEntry]| sorted(v.iter().map(payload_key).collect());
    assert_eq!(
        pkeys(&d.payloads.added),
        sorted(s.payloads.added.clone()),
        "payloads added"
    );
    assert_eq!(
        pkeys(&d.payloads.removed),
        sorted(s.payloads.removed.clone()),
        "payloads removed"
    );
    assert_eq!(
        sorted(
            d.payloads
                .changed
                .iter()
                .map(|(x, _)| payload_key(x))
                .collect()
        ),
        sorted(s.payloads.changed.clone()),
        "payloads changed"
    );
    render_all(&d);

    // diff(a, b'): anything goes, nothing panics.
    let knobs = u.arbitrary::<u8>().unwrap_or(0);
    let pattern = |u: &mut Unstructured<'_>| -> Vec<String> {
        u.arbitrary::<&str>()
            .ok()
            .filter(|p| !p.is_empty() && p.len() <= 16)
            .map(|p| vec![p.to_string()])
            .unwrap_or_default()
    };
    let options = Options {
        no_verify: knobs & 1 != 0,
        keys_only: knobs & 2 != 0,
        allow_product_mismatch: knobs & 4 != 0,
        ignore_tables: if knobs & 8 != 0 {
            pattern(&mut u)
        } else {
            Vec::new()
        },
        ignore_columns: if knobs & 16 != 0 {
            pattern(&mut u)
        } else {
            Vec::new()
        },
        ..Options::default()
    };
    let edits = edit::read_edits(&mut u, 6);
    let edited = edit::edited(&b.bytes, &edits);
    let (first, second) = if knobs & 32 != 0 {
        (&edited, &a.bytes)
    } else {
        (&a.bytes, &edited)
    };
    let r = diff(Source::Bytes(first), Source::Bytes(second), &options);
    match &r {
        Ok(d) => {
            assert!(
                options.no_verify || edited == b.bytes,
                "an edited archive passed verification in diff ({edits:?})"
            );
            render_all(d);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
