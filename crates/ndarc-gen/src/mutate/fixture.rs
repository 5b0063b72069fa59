//! Fixtures of the conformance corpus (`testdata/invalid`): an archive made
//! from the corpus's base archive (`testdata/valid/base.ndjson`) with one
//! rule broken, and its sidecar (the contract is in `testdata/README.md`).
//!
//! Unlike a [`Mutant`](super::Mutant), whose targets are drawn from a seed,
//! a fixture's edit is fixed, so that the committed file is what a person
//! reads in its note. A group of rules declares its fixtures next to its
//! mutations (`fixtures` functions in `framing.rs` and `json.rs`: SPEC.md
//! §2 and §3);
//! `scripts/make-corpus.py --check` builds them a second time, in Python,
//! and compares.

use ndarc_format::hash::{hex, sha256};
use ndarc_format::Code;

use super::edit::R;

/// One fixture: `NAME.ndjson` and its sidecar `NAME.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// `<code>` or `<code>-<variant>`.
    pub name: &'static str,
    /// The archive's bytes.
    pub archive: Vec<u8>,
    /// The sidecar's bytes: JSON, members sorted, indented by two spaces.
    pub sidecar: Vec<u8>,
}

/// Where a fixture's finding is, for the sidecar's `offset`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Offset {
    /// Not stated.
    None,
    /// This byte.
    At(u64),
    /// The end of the file.
    Eof,
    /// The first byte of the value the sidecar's `pointer` names in its
    /// line.
    Pointer,
}

/// A sidecar, before it is written.
#[derive(Debug, Clone)]
pub(super) struct Expect {
    pub(super) code: Code,
    pub(super) line: u64,
    pub(super) offset: Offset,
    pub(super) pointer: Option<&'static str>,
    pub(super) also: &'static [&'static str],
    pub(super) allow: &'static [&'static str],
    pub(super) options: Vec<(&'static str, u64)>,
    pub(super) note: Option<&'static str>,
}

impl Expect {
    /// `code` at `line`, nothing else stated.
    pub(super) fn new(code: Code, line: u64) -> Self {
        Expect {
            code,
            line,
            offset: Offset::None,
            pointer: None,
            also: &[],
            allow: &[],
            options: Vec::new(),
            note: None,
        }
    }

    pub(super) fn offset(mut self, o: Offset) -> Self {
        self.offset = o;
        self
    }

    pub(super) fn pointer(mut self, p: &'static str) -> Self {
        self.pointer = Some(p);
        self.offset = Offset::Pointer;
        self
    }

    pub(super) fn also(mut self, codes: &'static [&'static str]) -> Self {
        self.also = codes;
        self
    }

    pub(super) fn allow(mut self, codes: &'static [&'static str]) -> Self {
        self.allow = codes;
        self
    }

    pub(super) fn option(mut self, name: &'static str, value: u64) -> Self {
        self.options.push((name, value));
        self
    }

    pub(super) fn note(mut self, note: &'static str) -> Self {
        self.note = Some(note);
        self
    }

    /// The fixture: `archive` and this sidecar.
    pub(super) fn fixture(self, name: &'static str, archive: Vec<u8>) -> R<Fixture> {
        let ok = name == self.code.as_str()
            || name
                .strip_prefix(self.code.as_str())
                .is_some_and(|v| v.starts_with('-'));
        if !ok {
            return Err(format!("{name}: not named after its code {}", self.code));
        }
        let offset = match self.offset {
            Offset::None => None,
            Offset::At(o) => Some(o),
            Offset::Eof => Some(archive.len() as u64),
            Offset::Pointer => {
                let lines = line_table(&archive);
                let p = self.pointer.unwrap_or("");
                usize::try_from(self.line)
                    .ok()
                    .and_then(|n| lines.get(n.checked_sub(1)?))
                    .and_then(|(start, raw)| {
                        ndarc_json::locate(raw, p).map(|rel| start + rel as u64)
                    })
            }
        };
        let mut members: Vec<(&str, String)> = vec![
            ("code", json_string(self.code.as_str())),
            ("line", self.line.to_string()),
        ];
        if let Some(o) = offset {
            members.push(("offset", o.to_string()));
        }
        if let Some(p) = self.pointer {
            members.push(("pointer", json_string(p)));
        }
        let list = |codes: &[&str]| {
            let items: Vec<String> = codes
                .iter()
                .map(|c| format!("    {}", json_string(c)))
                .collect();
            format!("[\n{}\n  ]", items.join(",\n"))
        };
        if !self.also.is_empty() {
            members.push(("also", list(self.also)));
        }
        if !self.allow.is_empty() {
            members.push(("allow", list(self.allow)));
        }
        if !self.options.is_empty() {
            let mut opts = self.options.clone();
            opts.sort();
            let items: Vec<String> = opts
                .iter()
                .map(|(k, v)| format!("    {}: {v}", json_string(k)))
                .collect();
            members.push(("options", format!("{{\n{}\n  }}", items.join(",\n"))));
        }
        if let Some(n) = self.note {
            members.push(("note", json_string(n)));
        }
        members.sort_by(|a, b| a.0.cmp(b.0));
        let body: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("  {}: {v}", json_string(k)))
            .collect();
        let sidecar = format!("{{\n{}\n}}\n", body.join(",\n")).into_bytes();
        Ok(Fixture {
            name,
            archive,
            sidecar,
        })
    }
}

/// A JSON string as the corpus's sidecars write it (Python's `json.dumps`
/// with `ensure_ascii=False`: non-ASCII as is, control characters escaped).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// (offset, bytes without LF or a CR before it) of each LF-separated line,
/// as a verifier frames them.
fn line_table(data: &[u8]) -> Vec<(u64, &[u8])> {
    let mut out = Vec::new();
    let mut off = 0;
    while off < data.len() {
        let end = data[off..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |i| off + i);
        let raw = &data[off..end];
        out.push((off as u64, raw.strip_suffix(b"\r").unwrap_or(raw)));
        off = end + 1;
    }
    out
}

/// The base archive's lines, without LF: the manifest, the parts, the
/// closing.
#[derive(Debug, Clone)]
pub(super) struct Base {
    pub(super) lines: Vec<Vec<u8>>,
}

impl Base {
    pub(super) fn new(bytes: &[u8]) -> R<Base> {
        let body = bytes
            .strip_suffix(b"\n")
            .ok_or("the base archive does not end with LF")?;
        let lines: Vec<Vec<u8>> = body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        if lines.len() < 3 {
            return Err("the base archive has no parts".into());
        }
        Ok(Base { lines })
    }

    /// Index of the closing line.
    pub(super) fn closing(&self) -> usize {
        self.lines.len() - 1
    }
}

/// Each line followed by LF.
pub(super) fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

/// Sets the closing line's (the last line's) `archiveHash` to the hash of
/// the lines before it as they are (SPEC.md §7: over the raw bytes).
pub(super) fn rehash(lines: &mut [Vec<u8>]) -> R<()> {
    let (closing, rest) = lines.split_last_mut().ok_or("no lines")?;
    let mut digests = Vec::with_capacity(32 * rest.len());
    for l in rest.iter() {
        digests.extend_from_slice(&sha256(l));
    }
    let h = hex(&sha256(&digests));
    let key = b"\"archiveHash\":\"";
    let at = closing
        .windows(key.len())
        .position(|w| w == key)
        .ok_or("the closing line has no archiveHash")?
        + key.len();
    if closing.len() < at + 64 {
        return Err("the closing line's archiveHash is cut".into());
    }
    closing[at..at + 64].copy_from_slice(h.as_bytes());
    Ok(())
}

/// `line` with the first `old` replaced by `new`.
pub(super) fn replace(line: &[u8], old: &[u8], new: &[u8]) -> R<Vec<u8>> {
    let at = line
        .windows(old.len())
        .position(|w| w == old)
        .ok_or_else(|| format!("{:?} not found", String::from_utf8_lossy(old)))?;
    let mut out = line[..at].to_vec();
    out.extend_from_slice(new);
    out.extend_from_slice(&line[at + old.len()..]);
    Ok(out)
}
