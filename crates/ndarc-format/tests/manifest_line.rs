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
