//! One side's stream of row parts, as its reader sends them, and the
//! re-reading of a part line by offset (checked to be the line first read).

use std::collections::HashMap;

use ndarc_format::hash::{sha256, Digest32};

use crate::model::Side;
use crate::side::{self, Event, PartRows, SideEnd, SideTables};
use crate::source::Input;
use crate::Error;

/// One side's stream of row parts.
pub(crate) struct Stream<'i, 'a> {
    rx: ndarc_verify::chan::Receiver<Event>,
    pub(super) cur: Option<PartRows>,
    pub(super) pos: usize,
    pub(crate) end: Option<SideEnd>,
    pub(super) side: Side,
    pub(super) name: String,
    input: &'i Input<'a>,
    /// The side's tables, once its manifest was read.
    tables: Option<SideTables>,
    no_verify: bool,
    max_line: usize,
    /// Digests of the part lines read, by offset, with their tables: a
    /// line read again must be the line first read (kept for the second
    /// archive when its rows go to a sink; see `keep_line_digests`).
    lines: Option<HashMap<u64, (usize, Digest32)>>,
}

impl<'i, 'a> Stream<'i, 'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        rx: ndarc_verify::chan::Receiver<Event>,
        side: Side,
        name: &str,
        input: &'i Input<'a>,
        no_verify: bool,
        max_line: usize,
    ) -> Self {
        Stream {
            rx,
            cur: None,
            pos: 0,
            end: None,
            side,
            name: name.to_string(),
            input,
            tables: None,
            no_verify,
            max_line,
            lines: None,
        }
    }

    /// Keeps the digest of each part line read, so that a line read again
    /// by offset is checked to be the same (the sides' readers verified
    /// the line first read; a file changed since must not slip in).
    pub(crate) fn keep_line_digests(&mut self) {
        self.lines = Some(HashMap::new());
    }

    /// Forgets the digests of lines of tables other than `t`: lines are
    /// read again only while their table is diffed.
    pub(super) fn keep_lines_of(&mut self, t: Option<usize>) {
        if let Some(l) = &mut self.lines {
            l.retain(|_, (table, _)| Some(*table) == t);
        }
    }

    fn hung_up(&self) -> Error {
        Error::Malformed {
            side: self.side,
            name: self.name.clone(),
            line: 0,
            message: "the reader stopped unexpectedly".into(),
        }
    }

    /// The side's tables (and its manifest), the first event: shared with
    /// the reader, not copied.
    pub(crate) fn manifest(&mut self) -> Result<SideTables, Error> {
        match self.rx.recv() {
            Ok(Event::Manifest(m)) => {
                self.tables = Some((*m).clone());
                Ok(*m)
            }
            Ok(Event::Failed(e)) => Err(*e),
            _ => Err(self.hung_up()),
        }
    }

    /// Whether a row of table `t` is current, reading the next part when
    /// the current one is used up.
    pub(super) fn ready(&mut self, t: Option<usize>) -> Result<bool, Error> {
        let Some(t) = t else { return Ok(false) };
        loop {
            if let Some(p) = &self.cur {
                if self.pos < p.rows.len() {
                    return Ok(p.table == t);
                }
            }
            if self.end.is_some() {
                return Ok(false);
            }
            match self.rx.recv() {
                Ok(Event::Rows(p)) => {
                    if let Some(l) = &mut self.lines {
                        // The verifier hashed the line as read.
                        let d = p.digest.unwrap_or_else(|| sha256(&p.bytes));
                        l.insert(p.offset, (p.table, d));
                    }
                    self.cur = Some(p);
                    self.pos = 0;
                }
                Ok(Event::End(e)) => {
                    self.cur = None;
                    self.end = Some(e);
                }
                Ok(Event::Failed(e)) => return Err(*e),
                _ => return Err(self.hung_up()),
            }
        }
    }

    /// The current part (after `ready` returned true).
    pub(super) fn part(&self) -> Option<&PartRows> {
        self.cur.as_ref()
    }

    /// Reads everything left: only the end may remain.
    pub(crate) fn finish(&mut self) -> Result<SideEnd, Error> {
        loop {
            if let Some(p) = &self.cur {
                if self.pos < p.rows.len() {
                    return Err(Error::Malformed {
                        side: self.side,
                        name: self.name.clone(),
                        line: 0,
                        message: "rows of a table come after rows of a later table (tables out of manifest order)".into(),
                    });
                }
            }
            if let Some(e) = &self.end {
                return Ok(e.clone());
            }
            self.ready(Some(usize::MAX))?;
        }
    }

    /// Skips the rows of table `t`.
    pub(super) fn skip(&mut self, t: Option<usize>) -> Result<(), Error> {
        while self.ready(t)? {
            if let Some(p) = &self.cur {
                self.pos = p.rows.len();
            }
        }
        Ok(())
    }

    /// Re-reads the part line at `offset` of table `t`.
    pub(super) fn reread(&self, offset: u64, t: usize) -> Result<PartRows, Error> {
        let bad = |message: String| Error::Malformed {
            side: self.side,
            name: self.name.clone(),
            line: 0,
            message: format!("re-reading the line at byte {offset}: {message}"),
        };
        let bytes = self
            .input
            .line_at(offset, self.max_line)
            .map(|(bytes, _)| bytes)
            .map_err(|e| Error::Io {
                side: self.side,
                name: self.name.clone(),
                source: e,
            })?;
        if let Some((_, d)) = self.lines.as_ref().and_then(|l| l.get(&offset)) {
            if sha256(&bytes) != *d {
                return Err(bad(
                    "the line is not the one first read (the input changed while it was read)"
                        .into(),
                ));
            }
        }
        let table = self
            .tables
            .as_ref()
            .and_then(|ts| ts.get(t))
            .ok_or_else(|| bad("no such table".into()))?;
        side::rescan(bytes, t, table, offset, self.no_verify).map_err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::side::RowRec;

    /// A part of one row over `line`, read at offset 0 and hashed as the
    /// side's verifier hashes it.
    fn read(line: &[u8]) -> PartRows {
        PartRows {
            table: 0,
            offset: 0,
            bytes: line.to_vec(),
            rows: vec![RowRec {
                row: (1, 2),
                rowid: None,
                item: 0,
            }],
            cells: Vec::new(),
            keys: Vec::new(),
            ordered: true,
            digest: Some(sha256(line)),
        }
    }

    /// The line at an offset, read again, is checked against the digest
    /// the verifier took of the line first read: a file changed meanwhile
    /// is refused, and the same line passes the check.
    #[test]
    fn a_line_read_again_must_be_the_line_first_read() {
        let first = br#"{"index":0,"items":[],"kind":"part"}"#;
        let mut changed = first.to_vec();
        changed[9] = b'1';
        for (file, refused) in [(changed.clone(), true), (first.to_vec(), false)] {
            let mut bytes = file.clone();
            bytes.push(b'\n');
            let input = Input::Slice(&bytes);
            let (tx, rx) = ndarc_verify::chan::channel(1 << 20);
            let mut s = Stream::new(rx, Side::After, "after", &input, false, 1 << 20);
            s.keep_line_digests();
            tx.send(Event::Rows(read(first))).unwrap();
            assert!(s.ready(Some(0)).unwrap());
            let e = s.reread(0, 0).unwrap_err().to_string();
            // Past the check, the line is refused for what it is not (its
            // table is unknown here).
            assert_eq!(e.contains("not the one first read"), refused, "{e}");
            assert_eq!(e.contains("no such table"), !refused, "{e}");
        }
    }
}
