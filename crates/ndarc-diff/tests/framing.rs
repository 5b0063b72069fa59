//! One framing layer (issue 9 item 1): every framing fixture of
//! `testdata/invalid` gives the same framing findings through `verify` and
//! through `diff` (which stops at the first invalid line, so the diff's
//! findings are compared with verify's up to that line).

use std::path::Path;

use ndarc_diff::{diff, Error, Options, Source};
use ndarc_verify::{verify_bytes, Code};

const FRAMING: &[Code] = &[
    Code::CarriageReturn,
    Code::EmptyLine,
    Code::MissingFinalNewline,
    Code::LineTooLong,
    Code::ManifestMissing,
    Code::ClosingMissing,
    Code::TrailingData,
];

/// `"key": N` in a sidecar.
fn number(sidecar: &str, key: &str) -> Option<usize> {
    let at = sidecar.find(&format!("\"{key}\":"))? + key.len() + 3;
    let digits: String = sidecar[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[test]
fn verify_and_diff_frame_alike() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/invalid");
    let mut checked = 0;
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .collect();
    names.sort();
    for path in names {
        let sidecar = std::fs::read_to_string(path.with_extension("json")).unwrap();
        let framing = FRAMING
            .iter()
            .any(|c| sidecar.contains(&format!("\"code\": \"{}\"", c.as_str())));
        if !framing {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let mut opts = Options::default();
        if let Some(n) = number(&sidecar, "max_line") {
            opts.verify.max_line = n;
        }
        if let Some(n) = number(&sidecar, "max_manifest_line") {
            opts.verify.max_manifest_line = n;
        }
        let v = verify_bytes(&data, &opts.verify);
        let got = diff(Source::Bytes(&data), Source::Bytes(&data), &opts);
        let Err(Error::Invalid { findings, .. }) = &got else {
            panic!("{}: diff did not find it invalid: {got:?}", path.display());
        };
        let key = |f: &ndarc_verify::Finding| (f.code, f.line, f.offset, f.message.clone());
        let from_diff: Vec<_> = findings
            .iter()
            .filter(|f| FRAMING.contains(&f.code))
            .map(key)
            .collect();
        let last = findings.iter().map(|f| f.line).max().unwrap_or(0);
        let from_verify: Vec<_> = v
            .findings
            .iter()
            .filter(|f| FRAMING.contains(&f.code) && f.line <= last)
            .map(key)
            .collect();
        assert!(!from_verify.is_empty(), "{}", path.display());
        assert_eq!(from_diff, from_verify, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 15, "{checked} framing fixtures");
}
