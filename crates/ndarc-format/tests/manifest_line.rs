//! `check_manifest_line` (the manifest read from its text, an element at a
//! time, without the line's tree) gives exactly what `check_manifest` gives
//! on the parsed tree: the same findings, positions and messages, and the
//! same typed manifest and content header digest. Over the first line of
//! every corpus file, and each of them spelled non-canonically (spaces
//! around every `:` and `,`, and the members of every object reversed).

use ndarc_format::{
    check_manifest, check_manifest_line, LineRef, LineReport, ManifestOptions, ManifestOutcome,
};

/// Findings and the manifest (with its header digest), as text.
fn outcome(line: &[u8], lazy: bool) -> (Vec<String>, Option<String>) {
    let at = LineRef {
        line: 1,
        offset: 7,
        bytes: line,
    };
    let mut r = LineReport::new(at, usize::MAX);
    let options = ManifestOptions::default();
    let out = if lazy {
        let Ok(nc) = ndarc_json::validate_with(line, Default::default()) else {
            return (vec!["not JSON".into()], None);
        };
        check_manifest_line(line, nc.is_none(), &mut r, &options)
    } else {
        let Ok(v) = ndarc_json::parse(line) else {
            return (vec!["not JSON".into()], None);
        };
        check_manifest(&v, &mut r, &options)
    };
    let m = match out {
        ManifestOutcome::Read(m) => Some(format!("{m:?}")),
        ManifestOutcome::Fatal => None,
    };
    let (findings, _) = r.into_findings();
    (findings.iter().map(|f| format!("{f:?}")).collect(), m)
}

/// `v` written with a space after every `:` and `,`, object members in
/// reverse order: valid JSON, not canonical.
fn respell(v: &ndarc_json::Value<'_>, out: &mut String) {
    use ndarc_json::Value;
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                respell(x, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().collect::<Vec<_>>().into_iter().rev().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(
                    &String::from_utf8(ndarc_json::to_canonical_vec(&Value::from(k))).unwrap(),
                );
                out.push_str(": ");
                respell(x, out);
            }
            out.push('}');
        }
        other => out.push_str(&String::from_utf8(ndarc_json::to_canonical_vec(other)).unwrap()),
    }
}

#[test]
fn the_line_and_the_tree_give_the_same_manifest() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut checked = 0;
    for dir in ["valid", "invalid"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "ndjson"))
            .collect();
        files.sort();
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            let line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
            let mut lines = vec![line.to_vec()];
            if let Ok(v) = ndarc_json::parse(line) {
                let mut s = String::new();
                respell(&v, &mut s);
                lines.push(s.into_bytes());
            }
            for l in &lines {
                assert_eq!(
                    outcome(l, true),
                    outcome(l, false),
                    "{}: {}",
                    path.display(),
                    String::from_utf8_lossy(&l[..l.len().min(300)])
                );
                checked += 1;
            }
        }
    }
    // 255 corpus files: each first line, and again respelled when it parses.
    assert!(checked > 450, "{checked} lines");
}

/// `journal` and `migrations` are typed the same way from the line and
/// from the tree, canonical or respelled: entries as canonical JSON text,
/// the entries' member of an object, an opaque value whole.
#[test]
fn journal_and_migrations_are_typed_alike() {
    use ndarc_format::Carried;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let bytes = std::fs::read(root.join("valid/example.ndjson")).unwrap();
    let line = bytes.split(|&b| b == b'\n').next().unwrap();
    let text = String::from_utf8(line.to_vec()).unwrap();
    let read = |line: &[u8], lazy: bool| {
        let at = LineRef {
            line: 1,
            offset: 0,
            bytes: line,
        };
        let mut r = LineReport::new(at, usize::MAX);
        let options = ManifestOptions::default();
        let out = if lazy {
            let nc = ndarc_json::validate_with(line, Default::default()).unwrap();
            check_manifest_line(line, nc.is_none(), &mut r, &options)
        } else {
            check_manifest(&ndarc_json::parse(line).unwrap(), &mut r, &options)
        };
        match out {
            ManifestOutcome::Read(m) => (m.journal, m.migrations),
            ManifestOutcome::Fatal => panic!("fatal"),
        }
    };
    let cases = [
        (
            r#""journal":{"entries":[{"b":1,"a":2.50}],"head":"h"}"#,
            Carried::Entries {
                member: Some("entries".into()),
                entries: vec![r#"{"a":2.5,"b":1}"#.into()],
            },
        ),
        (
            r#""journal":[1,"x"]"#,
            Carried::Entries {
                member: None,
                entries: vec!["1".into(), r#""x""#.into()],
            },
        ),
        (
            r#""journal":{"a":[1],"b":[2]}"#,
            Carried::Opaque(r#"{"a":[1],"b":[2]}"#.into()),
        ),
        (
            r#""journal":"cursor""#,
            Carried::Opaque(r#""cursor""#.into()),
        ),
    ];
    for (journal, expected) in cases {
        let edited = text.replace(r#""journal":[]"#, journal).replace(
            r#""kind":"manifest""#,
            r#""kind":"manifest","migrations":[{"id":1}]"#,
        );
        let mut respelled = String::new();
        respell(
            &ndarc_json::parse(edited.as_bytes()).unwrap(),
            &mut respelled,
        );
        for l in [edited.as_bytes(), respelled.as_bytes()] {
            for lazy in [true, false] {
                let (j, m) = read(l, lazy);
                assert_eq!(j.as_ref(), Some(&expected), "{journal} lazy {lazy}");
                assert_eq!(
                    m,
                    Some(Carried::Entries {
                        member: None,
                        entries: vec![r#"{"id":1}"#.into()]
                    })
                );
            }
        }
    }
}
