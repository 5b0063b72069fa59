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

/// Everything a reader can see of a part: its line, the body's kind and
/// rows, the spans, and a chunk's bytes.
type Seen = (u64, u64, Vec<u8>, String, Vec<(u32, u32)>, Option<Vec<u8>>);

/// Records every part in full.
#[derive(Default)]
struct Full {
    manifest: Option<Vec<u8>>,
    parts: Vec<Seen>,
}

impl Reader for Full {
    type Error = String;

    fn start(&mut self, _: &Arc<Plan>, m: LineRef<'_>) -> Result<(), String> {
        self.manifest = Some(m.bytes.to_vec());
        Ok(())
    }

    fn part(&mut self, part: Accepted<'_>) -> Result<(), String> {
        let mut buf = Vec::new();
        let chunk = part.chunk(&mut buf).map(<[u8]>::to_vec);
        self.parts.push((
            part.line.line,
            part.line.offset,
            part.line.bytes.to_vec(),
            format!("{:?}", part.body),
            part.spans.cells.clone(),
            chunk,
        ));
        Ok(())
    }
}

/// With more than one job the reader runs on the calling thread and the
/// verification on its own (the relay); with one, both on one thread. A
/// reader must see the same parts, in the same order, with the same
/// spans and bodies, either way, and the same report must come back: for
/// every archive of the corpus, valid or not.
#[test]
fn a_relayed_reader_sees_what_a_reader_on_the_verifying_thread_sees() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut files = Vec::new();
    for dir in ["valid", "invalid"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "ndjson") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > 100, "the corpus is missing");
    let (mut relayed_parts, mut invalid) = (0, 0);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let run = |jobs: usize| {
            let options = Options {
                jobs,
                ..Options::default()
            };
            let mut full = Full::default();
            let report = ndarc_verify::read_bytes(&bytes, &options, &mut full).unwrap();
            let mut from_path = Full::default();
            let again = ndarc_verify::read_path(path, &options, &mut from_path).unwrap();
            assert_eq!(full.parts, from_path.parts, "{}: path", path.display());
            let codes = |r: &ndarc_verify::Report| {
                r.findings
                    .iter()
                    .map(|f| (f.code, f.line, f.offset))
                    .collect::<Vec<_>>()
            };
            assert_eq!(codes(&report), codes(&again), "{}", path.display());
            (full.manifest, full.parts, codes(&report), report.errors)
        };
        let one = run(1);
        let two = run(2);
        assert_eq!(one, two, "{}", path.display());
        relayed_parts += two.1.len();
        invalid += usize::from(two.3 > 0);
    }
    // The corpus exercises the relay: parts handed over, and archives
    // whose errors close it.
    assert!(relayed_parts > 100, "{relayed_parts} parts");
    assert!(invalid > 100, "{invalid} invalid archives");
}

/// A reader whose start fails gets no part, and its error comes back,
/// with one job or more.
#[test]
fn a_reader_whose_start_fails_gets_no_part() {
    #[derive(Default)]
    struct Refuses(usize);
    impl Reader for Refuses {
        type Error = &'static str;
        fn start(&mut self, _: &Arc<Plan>, _: LineRef<'_>) -> Result<(), &'static str> {
            Err("no")
        }
        fn part(&mut self, _: Accepted<'_>) -> Result<(), &'static str> {
            self.0 += 1;
            Ok(())
        }
    }
    let bytes = std::fs::read(corpus("multi-part-table.ndjson")).unwrap();
    for jobs in [1, 2, 4] {
        let options = Options {
            jobs,
            ..Options::default()
        };
        let mut r = Refuses::default();
        match ndarc_verify::read_bytes(&bytes, &options, &mut r) {
            Err(ReadError::Reader(e)) => assert_eq!(e, "no"),
            other => panic!("jobs {jobs}: got {:?}", other.map(|_| ())),
        }
        assert_eq!(r.0, 0, "jobs {jobs}");
    }
}

/// A reader that stops after its third part is handed no fourth, and its
/// error comes back, with one job or more.
#[test]
fn a_reader_that_stops_is_handed_nothing_more() {
    struct Three(u64);
    impl Reader for Three {
        type Error = u64;
        fn part(&mut self, _: Accepted<'_>) -> Result<(), u64> {
            self.0 += 1;
            if self.0 == 3 {
                return Err(self.0);
            }
            Ok(())
        }
    }
    let bytes = std::fs::read(corpus("multi-part-table.ndjson")).unwrap();
    let parts = bytes.iter().filter(|&&b| b == b'\n').count() - 2;
    assert!(parts > 3, "{parts} parts");
    for jobs in [1, 2, 4] {
        let options = Options {
            jobs,
            ..Options::default()
        };
        let mut r = Three(0);
        match ndarc_verify::read_bytes(&bytes, &options, &mut r) {
            Err(ReadError::Reader(n)) => assert_eq!(n, 3),
            other => panic!("jobs {jobs}: got {:?}", other.map(|_| ())),
        }
        assert_eq!(r.0, 3, "jobs {jobs}");
    }
}
