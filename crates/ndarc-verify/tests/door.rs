//! The one door (`ndarc_verify::read_*`): what a [`Reader`] is handed.

use std::path::PathBuf;
use std::sync::Arc;

use ndarc_format::{LineRef, Plan};
use ndarc_verify::{Accepted, Options, ReadError, Reader};

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/valid")
        .join(name)
}

/// Records what the door hands over.
#[derive(Default)]
struct Log {
    manifest: Option<(u64, u64, Vec<u8>)>,
    lines: Vec<u64>,
}

impl Reader for Log {
    type Error = String;

    fn start(&mut self, _: &Arc<Plan>, m: LineRef<'_>) -> Result<(), String> {
        self.manifest = Some((m.line, m.offset, m.bytes.to_vec()));
        Ok(())
    }

    fn part(&mut self, part: Accepted<'_>) -> Result<(), String> {
        self.lines.push(part.line.line);
        Ok(())
    }
}

#[test]
fn a_reader_is_handed_the_manifest_line_as_read_from_every_source() {
    let path = corpus("binaries.ndjson");
    let bytes = std::fs::read(&path).unwrap();
    let first = bytes.split(|&b| b == b'\n').next().unwrap().to_vec();
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    let options = Options::default();

    let mut from_path = Log::default();
    let report = ndarc_verify::read_path(&path, &options, &mut from_path).unwrap();
    assert!(report.is_valid(false));
    let mut from_stream = Log::default();
    ndarc_verify::read_stream(&bytes[..], &options, &mut from_stream).unwrap();
    let mut from_bytes = Log::default();
    ndarc_verify::read_bytes(&bytes, &options, &mut from_bytes).unwrap();

    for log in [&from_path, &from_stream, &from_bytes] {
        assert_eq!(log.manifest, Some((1, 0, first.clone())));
        // Every part line (2 ..= lines - 1), in order; not the closing.
        assert_eq!(log.lines, (2..lines).collect::<Vec<_>>());
    }
}

#[test]
fn a_manifest_with_an_error_starts_no_reader() {
    let bytes = std::fs::read(corpus("minimal.ndjson")).unwrap();
    // A CR before the manifest's LF: a framing error of the manifest line.
    let at = bytes.iter().position(|&b| b == b'\n').unwrap();
    let mut crlf = bytes[..at].to_vec();
    crlf.extend_from_slice(b"\r");
    crlf.extend_from_slice(&bytes[at..]);
    let mut log = Log::default();
    let report = ndarc_verify::read_bytes(&crlf, &Options::default(), &mut log).unwrap();
    assert!(!report.is_valid(false));
    assert_eq!(log.manifest, None);
    assert!(log.lines.is_empty());
}

#[test]
fn a_reader_that_stops_stops_the_reading_with_its_error() {
    struct Stop;
    impl Reader for Stop {
        type Error = &'static str;
        fn part(&mut self, _: Accepted<'_>) -> Result<(), &'static str> {
            Err("enough")
        }
    }
    let bytes = std::fs::read(corpus("base.ndjson")).unwrap();
    match ndarc_verify::read_bytes(&bytes, &Options::default(), &mut Stop) {
        Err(ReadError::Reader(e)) => assert_eq!(e, "enough"),
        other => panic!("expected the reader's error, got {:?}", other.map(|_| ())),
    }
}
