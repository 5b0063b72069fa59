//! How an edit becomes a file: [`Edit`] (what a mutation changed, the
//! reseal that follows, byte edits after sealing, the line of the expected
//! finding) and [`render`].

use ndarc_format::{ArchiveHasher, Code};

use super::model::Model;
use super::values::{obj_mut, s, str_at, Need, Obj, R};
use crate::error::lines;
use crate::reseal::{reseal_with, ResealOptions};

/// Where the expected finding is, resolved after the edit.
#[derive(Debug, Clone, Copy)]
pub(in crate::mutate) enum At {
    Manifest,
    Part(usize),
    Closing,
    /// An explicit line number of the final file.
    Line(u64),
}

type LinesEdit = Box<dyn FnOnce(&mut Vec<Vec<u8>>) -> R<()>>;
type BytesEdit = Box<dyn FnOnce(&mut Vec<u8>) -> R<()>>;

/// What a mutation did, and how to finish the file.
pub(in crate::mutate) struct Edit {
    pub(in crate::mutate) at: At,
    what: String,
    pub(in crate::mutate) seal: ResealOptions,
    pub(in crate::mutate) also: Vec<Code>,
    pub(in crate::mutate) allow: Vec<Code>,
    /// Byte edits of the manifest and part lines after sealing; archiveHash
    /// is then recomputed over the lines as edited.
    pub(in crate::mutate) lines: Option<LinesEdit>,
    /// A byte edit of the closing line (after archiveHash).
    pub(in crate::mutate) closing: Option<BytesEdit>,
    /// An edit of the whole file, last.
    pub(in crate::mutate) frame: Option<BytesEdit>,
    /// The archive whose rows a verifier hashes into contentHash, when it
    /// is not the mutant's own (rows it cannot place — of an unknown table,
    /// in another table's part — are left out, as the verifier does).
    content: Option<Box<Model>>,
}

impl Edit {
    pub(in crate::mutate) fn new(at: At, what: impl Into<String>) -> Edit {
        Edit {
            at,
            what: what.into(),
            seal: ResealOptions::default(),
            also: Vec::new(),
            allow: Vec::new(),
            lines: None,
            closing: None,
            frame: None,
            content: None,
        }
    }
    pub(in crate::mutate) fn content_of(mut self, m: Model) -> Edit {
        self.content = Some(Box::new(m));
        self
    }
    pub(in crate::mutate) fn seal(mut self, f: impl FnOnce(&mut ResealOptions)) -> Edit {
        f(&mut self.seal);
        self
    }
    pub(in crate::mutate) fn also(mut self, codes: &[Code]) -> Edit {
        self.also.extend_from_slice(codes);
        self
    }
    pub(in crate::mutate) fn allow(mut self, codes: &[Code]) -> Edit {
        self.allow.extend_from_slice(codes);
        self
    }
    /// Edits line `k` (0-based: 0 is the manifest) after sealing.
    pub(in crate::mutate) fn line(
        mut self,
        k: usize,
        f: impl FnOnce(&[u8]) -> R<Vec<u8>> + 'static,
    ) -> Edit {
        self.lines = Some(Box::new(move |ls: &mut Vec<Vec<u8>>| {
            let l = ls.get_mut(k).need("no such line")?;
            *l = f(l)?;
            Ok(())
        }));
        self
    }
    pub(in crate::mutate) fn closing_bytes(
        mut self,
        f: impl FnOnce(&mut Vec<u8>) -> R<()> + 'static,
    ) -> Edit {
        self.closing = Some(Box::new(f));
        self
    }
    /// Edits the closing record (after both hashes are computed).
    pub(in crate::mutate) fn closing_value(self, f: impl FnOnce(&mut Obj) + 'static) -> Edit {
        self.closing_bytes(move |l| {
            let mut v = ndarc_json::parse(l)
                .map_err(|e| e.to_string())?
                .into_owned();
            f(obj_mut(&mut v).need("the closing is not an object")?);
            *l = ndarc_json::to_canonical_vec(&v);
            Ok(())
        })
    }
    pub(in crate::mutate) fn frame(
        mut self,
        f: impl FnOnce(&mut Vec<u8>) -> R<()> + 'static,
    ) -> Edit {
        self.frame = Some(Box::new(f));
        self
    }
}

type Rendered = (Vec<u8>, u64, String, Vec<Code>, Vec<Code>);

fn closing_member(sealed: &[u8], member: &str) -> R<String> {
    let (raw, _) = lines(sealed);
    let last = raw.last().need("no closing line")?;
    let v = ndarc_json::parse(last).map_err(|e| e.to_string())?;
    str_at(&v.into_owned(), member)
        .map(str::to_string)
        .need("no such member in the closing")
}

fn set_closing_member(line: &mut Vec<u8>, member: &'static str, value: String) -> R<()> {
    let mut closing = ndarc_json::parse(line)
        .map_err(|e| e.to_string())?
        .into_owned();
    obj_mut(&mut closing)
        .need("the closing is not an object")?
        .insert(member, s(value));
    *line = ndarc_json::to_canonical_vec(&closing);
    Ok(())
}

pub(in crate::mutate) fn render(model: Model, edit: Edit) -> R<Rendered> {
    let part_count = model.parts.len();
    let sealed =
        reseal_with(&model.to_text(), edit.seal).map_err(|e| format!("cannot seal: {e}"))?;
    let (raw, _) = lines(&sealed);
    let mut ls: Vec<Vec<u8>> = raw.iter().map(|l| l.to_vec()).collect();
    if let Some(cm) = edit.content {
        let other = reseal_with(&cm.to_text(), ResealOptions::default())
            .map_err(|e| format!("cannot seal: {e}"))?;
        let hash = closing_member(&other, "contentHash")?;
        set_closing_member(ls.last_mut().need("no closing line")?, "contentHash", hash)?;
    }
    if let Some(f) = edit.lines {
        let last = ls.pop().need("no closing line")?;
        f(&mut ls)?;
        let mut h = ArchiveHasher::new();
        for l in &ls {
            h.add_line(l);
        }
        let mut last = last;
        set_closing_member(&mut last, "archiveHash", h.finish())?;
        ls.push(last);
    }
    if let Some(f) = edit.closing {
        f(ls.last_mut().need("no closing line")?)?;
    }
    let mut out = Vec::with_capacity(sealed.len() + 64);
    for l in &ls {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    if let Some(f) = edit.frame {
        f(&mut out)?;
    }
    let line = match edit.at {
        At::Manifest => 1,
        At::Part(p) => p as u64 + 2,
        At::Closing => part_count as u64 + 2,
        At::Line(l) => l,
    };
    Ok((out, line, edit.what, edit.also, edit.allow))
}
