//! Hostile input: findings and exit, never a panic, a hang or an allocation
//! sized by a claim in the file.

use std::io::Read;

use ndarc_verify::{verify_bytes, verify_reader, Code, Options, Report};

fn example() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/valid/example.ndjson"
    ))
    .unwrap()
}

fn lines(a: &[u8]) -> Vec<Vec<u8>> {
    a.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn join(ls: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in ls {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

fn codes(r: &Report) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.code.as_str()).collect()
}

fn both(data: &[u8], o: &Options) -> Report {
    let a = verify_bytes(data, o);
    let b = verify_reader(data, o).unwrap();
    assert_eq!(codes(&a), codes(&b), "slice and stream disagree");
    a
}

#[test]
fn every_truncation_gives_findings() {
    let a = example();
    for cut in 0..a.len() {
        let r = both(&a[..cut], &Options::default());
        assert!(r.errors > 0, "truncation at {cut} not reported");
    }
}

#[test]
fn a_huge_line_without_lf_costs_no_allocation_of_its_size() {
    // A 64 MiB line without LF from a stream, with a 1 MiB limit: reported
    // as too long while the reader keeps a bounded buffer.
    struct Zeros(u64);
    impl Read for Zeros {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = (buf.len() as u64).min(self.0) as usize;
            buf[..n].fill(b'x');
            self.0 -= n as u64;
            Ok(n)
        }
    }
    let mut head = lines(&example())[0].clone();
    head.push(b'\n');
    let stream = head.as_slice().chain(Zeros(64 << 20));
    let o = Options {
        max_line: 1 << 20,
        ..Options::default()
    };
    let r = verify_reader(stream, &o).unwrap();
    let c = codes(&r);
    assert!(c.contains(&"line_too_long"), "{c:?}");
    assert!(c.contains(&"closing_missing"), "{c:?}");
    assert_eq!(r.bytes, head.len() as u64 + (64 << 20));
}

#[test]
fn claims_in_the_manifest_size_nothing() {
    let mut ls = lines(&example());
    let m = String::from_utf8(ls[0].clone()).unwrap();
    // 10^15 rows, a 10^15-byte object.
    let m = m.replacen("\"count\":2", "\"count\":1000000000000000", 1);
    let m = m.replacen("\"size\":13", "\"size\":1000000000000000", 1);
    ls[0] = m.into_bytes();
    let r = both(&join(&ls), &Options::default());
    let c = codes(&r);
    assert!(c.contains(&"row_count"), "{c:?}");
    assert!(c.contains(&"binary_missing"), "{c:?}");
}

#[test]
fn a_part_index_of_two_to_the_sixty() {
    let mut ls = lines(&example());
    let p = String::from_utf8(ls[2].clone()).unwrap();
    ls[2] = p
        .replacen("{\"index\":1,", "{\"index\":1152921504606846976,", 1)
        .into_bytes();
    let r = both(&join(&ls), &Options::default());
    let c = codes(&r);
    assert!(c.contains(&"invalid_integer"), "{c:?}");
    // 2^50 is a safe integer: a part index far ahead.
    let mut ls = lines(&example());
    let p = String::from_utf8(ls[2].clone()).unwrap();
    ls[2] = p
        .replacen("{\"index\":1,", "{\"index\":1125899906842624,", 1)
        .into_bytes();
    let r = both(&join(&ls), &Options::default());
    assert_eq!(r.findings[0].code, Code::PartIndex, "{:?}", codes(&r));
}

#[test]
fn a_hundred_thousand_findings_are_counted_not_kept() {
    // One part with 100,000 rows, each with a NOT NULL violation.
    let ls = lines(&example());
    let m =
        String::from_utf8(ls[0].clone())
            .unwrap()
            .replacen("\"count\":1}", "\"count\":100000}", 1);
    let mut part = String::from("{\"index\":1,\"items\":[");
    for i in 0..100_000 {
        if i > 0 {
            part.push(',');
        }
        part.push_str(&format!(
            "{{\"index\":{i},\"kind\":\"row\",\"row\":{{\"avatar\":null,\"id\":{i},\"name\":null}},\"table\":\"users\"}}"
        ));
    }
    part.push_str("],\"kind\":\"part\"}");
    let data = join(&[
        m.into_bytes(),
        ls[1].clone(),
        part.into_bytes(),
        ls[3].clone(),
        ls[4].clone(),
        ls[5].clone(),
    ]);
    let o = Options {
        max_errors: 100,
        ..Options::default()
    };
    let r = verify_bytes(&data, &o);
    assert_eq!(r.findings.len(), 100);
    assert!(r.errors >= 100_000, "{}", r.errors);
}

#[test]
fn arbitrary_garbage_lines() {
    let mut ls = lines(&example());
    for junk in [
        &b"\xff\xfe"[..],
        b"[]",
        b"null",
        b"{\"kind\":\"part\"}",
        b"{\"kind\":\"closing\"}",
        b"{\"kind\":7}",
        b"\xef\xbb\xbf{}",
    ] {
        ls.insert(2, junk.to_vec());
        let r = both(&join(&ls), &Options::default());
        assert!(r.errors > 0);
        ls.remove(2);
    }
}

#[test]
fn reports_do_not_depend_on_thread_timing() {
    // Many broken lines of every kind, empty lines among them, and a small
    // error limit: the same findings and counts with 1 or 4 threads, run
    // after run.
    let ls = lines(&example());
    let mut data = join(&ls[..1]);
    for i in 0..400u32 {
        match i % 5 {
            0 => data.extend_from_slice(b"\n"),
            1 => data.extend_from_slice(b"{\"index\":1}\r\n"),
            2 => data.extend_from_slice(&ls[1 + (i as usize % 4)]),
            3 => data.extend_from_slice(b"not json"),
            _ => data.extend_from_slice(b"[1,2,3]"),
        }
        if i % 5 != 0 && i % 5 != 1 {
            data.push(b'\n');
        }
    }
    for max_errors in [7, 100, 10_000] {
        let mut seen: Option<(Vec<String>, u64, u64)> = None;
        for jobs in [1, 4, 2, 4, 1, 4] {
            let o = Options {
                jobs,
                max_errors,
                ..Options::default()
            };
            let r = verify_bytes(&data, &o);
            let s = verify_reader(data.as_slice(), &o).unwrap();
            let key = |r: &Report| {
                (
                    r.findings
                        .iter()
                        .map(|f| format!("{}:{}:{}", f.line, f.offset, f.code))
                        .collect::<Vec<_>>(),
                    r.errors,
                    r.warnings,
                )
            };
            assert_eq!(key(&r), key(&s), "slice and stream differ (jobs {jobs})");
            match &seen {
                None => seen = Some(key(&r)),
                Some(k) => assert_eq!(k, &key(&r), "jobs {jobs}, max_errors {max_errors}"),
            }
        }
    }
}
