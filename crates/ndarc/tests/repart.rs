//! `ndarc repart` reads through the one door (issue 22 §4): an input that
//! does not verify is never re-sealed, and nothing is written.

mod common;

use common::{example, ndarc, ndarc_in, s, Scratch};

/// The `contentHash` line `verify` prints for `path`.
fn content_hash(path: &std::path::Path) -> String {
    let r = ndarc(&["verify", s(path)]);
    assert_eq!(r.code, 0, "{} does not verify: {r:?}", path.display());
    r.out()
        .lines()
        .find_map(|l| l.split_once(": contentHash ").map(|(_, h)| h.to_string()))
        .expect("a contentHash line")
}

#[test]
fn repart_of_an_edited_row_exits_1_and_writes_nothing() {
    let dir = Scratch::new("repart-edited");
    let text = std::fs::read_to_string(example()).expect("example");
    let edited = text.replacen("\"body\":\"first\"", "\"body\":\"frist\"", 1);
    assert_ne!(edited, text);
    let input = dir.write("edited.ndjson", edited.as_bytes());
    let v = ndarc(&["verify", s(&input)]);
    assert!(v.out().contains("content_hash_mismatch"), "{v:?}");
    let out = dir.path("out.ndjson");
    let r = ndarc(&["repart", "--part-bytes", "4K", s(&input), "-o", s(&out)]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("content_hash_mismatch"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was written"), "{}", r.stderr);
    assert!(!out.exists());
    assert_eq!(dir.entries(), ["edited.ndjson"], "no temporary file left");
    // To standard output: nothing written either.
    let r = ndarc(&["repart", "--part-bytes", "4K", s(&input)]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.is_empty());
}

#[test]
fn repart_of_a_crlf_copy_exits_1() {
    let dir = Scratch::new("repart-crlf");
    let text = std::fs::read_to_string(example()).expect("example");
    let input = dir.write("crlf.ndjson", text.replace('\n', "\r\n").as_bytes());
    let out = dir.path("out.ndjson");
    let r = ndarc(&["repart", "--part-bytes", "4K", s(&input), "-o", s(&out)]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("carriage_return"), "{}", r.stderr);
    assert!(!out.exists());
    // The same through standard input.
    let r = ndarc_in(
        &dir.0,
        &["repart", "--part-bytes", "4K", "-"],
        text.replace('\n', "\r\n").as_bytes(),
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.is_empty());
}

#[test]
fn repart_of_a_valid_archive_keeps_its_content_hash() {
    let dir = Scratch::new("repart-valid");
    let input = dir.path("in.ndjson");
    let g = ndarc(&["gen", "--seed", "1", "--rows", "200", "-o", s(&input)]);
    assert_eq!(g.code, 0, "{g:?}");
    let want = content_hash(&input);
    let out = dir.path("out.ndjson");
    let r = ndarc(&["repart", "--part-bytes", "32K", s(&input), "-o", s(&out)]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(content_hash(&out), want);
    assert_ne!(
        std::fs::read(&out).expect("out"),
        std::fs::read(&input).expect("in"),
        "the parts are packed anew"
    );
    // From standard input, the same output.
    let bytes = std::fs::read(&input).expect("in");
    let r = ndarc_in(&dir.0, &["repart", "--part-bytes", "32K", "-"], &bytes);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, std::fs::read(&out).expect("out"));
}
