//! The part lines' way from the encoding thread to the output: the
//! channels' ends, the two places a line goes ([`LineOut`], into an
//! archive being written; [`Spool`], after the room kept for a manifest),
//! and [`Writer`], which hashes the lines two at a time on the way.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};

use ndarc_format::hash::Digest32;
use ndarc_format::pack::ArchiveWriter;

use super::refuse::out_err;
use crate::Error;

/// Where the writing thread puts the part lines the encoder hands over:
/// sealed into the archive (their digests for the `archiveHash` taken by
/// [`Writer`] on this thread, beside SQLite's reads, rather than on the
/// busier encoding thread) and written.
pub(super) struct LineOut<'a> {
    pub(super) archive: &'a mut ArchiveWriter,
    pub(super) out: &'a mut dyn Write,
}

/// What the writing thread does with a part line the encoder hands over
/// (with its LF) and its digest (SHA-256 of the line without its LF,
/// which [`Writer`] takes two lines at a time).
pub(super) trait Lines {
    fn line(&mut self, line: &[u8], digest: &Digest32) -> Result<(), Error>;
}

impl Lines for LineOut<'_> {
    fn line(&mut self, line: &[u8], digest: &Digest32) -> Result<(), Error> {
        self.archive
            .handed_part_hashed(line, digest, self.out)
            .map(drop)
            .map_err(out_err)
    }
}

/// The one-pass writer's part lines, written after the room kept for the
/// manifest before it can be written, each with the digest `archiveHash`
/// takes of it.
pub(super) struct Spool<'a> {
    pub(super) file: std::io::BufWriter<std::fs::File>,
    pub(super) digests: Vec<Digest32>,
    pub(super) bytes: u64,
    pub(super) stop: &'a AtomicBool,
}

impl Lines for Spool<'_> {
    fn line(&mut self, line: &[u8], digest: &Digest32) -> Result<(), Error> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(stopped());
        }
        self.digests.push(*digest);
        self.file.write_all(line).map_err(out_err)?;
        self.bytes += line.len() as u64;
        Ok(())
    }
}

/// The one-pass writer's reader went away.
pub(super) fn stopped() -> Error {
    Error::Handoff(std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "the reader stopped",
    ))
}

/// The writing side's lines: finished lines from the encoder, buffers
/// handed back to it, and how many of those it has not taken yet.
pub(super) type ReturnLines<'a> = (&'a Receiver<Vec<u8>>, &'a Sender<Vec<u8>>, &'a AtomicUsize);
/// The encoder's side of [`ReturnLines`].
pub(super) type SendLines<'a> = (&'a Sender<Vec<u8>>, &'a Receiver<Vec<u8>>, &'a AtomicUsize);

/// Part-line buffers kept for reuse (each up to `partBytes`). Lines the
/// writing thread has not written yet are bounded by the batches in
/// flight: at most the parts they complete.
pub(super) const MAX_SPARE_LINES: usize = 2;

/// The part lines on their way to [`Lines`] (none in pass 1), hashed two
/// at a time: each line waits for the next, and the two digests are taken
/// interleaved ([`ndarc_sha::digest_two`]), which on the SHA extensions
/// costs little more than one. The lines' hashing is on the thread that
/// reads SQLite and writes, which had the lighter share of the work
/// (49 % of the CPU of packing 1.6 M narrow rows, 7 % of it hashing lines
/// one at a time).
pub(super) struct Writer<'a> {
    pub(super) out: Option<&'a mut dyn Lines>,
    /// A line waiting to be hashed beside the next.
    pub(super) waiting: Option<Vec<u8>>,
}

impl Writer<'_> {
    /// Takes the next line; `done` gets each buffer once its line is
    /// written.
    pub(super) fn line(
        &mut self,
        line: Vec<u8>,
        done: &mut dyn FnMut(Vec<u8>),
    ) -> Result<(), Error> {
        let Some(out) = self.out.as_deref_mut() else {
            done(line);
            return Ok(());
        };
        let Some(first) = self.waiting.take() else {
            self.waiting = Some(line);
            return Ok(());
        };
        let (d1, d2) = ndarc_sha::digest_two(body(&first), body(&line));
        out.line(&first, &d1)?;
        done(first);
        out.line(&line, &d2)?;
        done(line);
        Ok(())
    }

    /// Writes the line still waiting, if any, hashed alone.
    pub(super) fn flush(&mut self) -> Result<(), Error> {
        if let (Some(out), Some(line)) = (self.out.as_deref_mut(), self.waiting.take()) {
            line_alone(out, &line)?;
        }
        Ok(())
    }
}

/// Hands `out` one line hashed by itself (the last one, which has no
/// other to be hashed beside).
pub(super) fn line_alone(out: &mut dyn Lines, line: &[u8]) -> Result<(), Error> {
    out.line(line, &ndarc_format::hash::sha256(body(line)))
}

/// A part line without its LF.
pub(super) fn body(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

/// Writes the part lines the encoder has finished, handing their buffers
/// back.
pub(super) fn write_lines(
    (lines, used, spare_lines): ReturnLines<'_>,
    out: &mut Writer<'_>,
) -> Result<(), Error> {
    // Keep a few buffers for the encoder's next lines; free the rest,
    // which would otherwise each keep the largest part they ever held.
    let mut give_back = |line: Vec<u8>| {
        if spare_lines.load(Ordering::Relaxed) < MAX_SPARE_LINES {
            spare_lines.fetch_add(1, Ordering::Relaxed);
            let _ = used.send(line);
        }
    };
    while let Ok(line) = lines.try_recv() {
        out.line(line, &mut give_back)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A [`Lines`] that records what it is handed.
    #[derive(Default)]
    struct Record(Vec<(Vec<u8>, Digest32)>);

    impl Lines for Record {
        fn line(&mut self, line: &[u8], digest: &Digest32) -> Result<(), Error> {
            self.0.push((line.to_vec(), *digest));
            Ok(())
        }
    }

    #[test]
    fn lines_are_written_in_order_with_their_own_digests_two_at_a_time() {
        for count in 0..6usize {
            let lines: Vec<Vec<u8>> = (0..count)
                .map(|k| {
                    let mut l: Vec<u8> = (0..k * 150 + 7).map(|i| (i * 31 + k) as u8).collect();
                    l.push(b'\n');
                    l
                })
                .collect();
            let mut record = Record::default();
            let mut back = Vec::new();
            let mut w = Writer {
                out: Some(&mut record),
                waiting: None,
            };
            for (i, l) in lines.iter().enumerate() {
                w.line(l.clone(), &mut |b| back.push(b)).unwrap();
                // A line waits only for the next one.
                assert_eq!(back.len(), (i + 1) & !1, "after line {i}");
            }
            w.flush().unwrap();
            assert_eq!(back.len(), count - count % 2, "{count} lines: buffers back");
            let want: Vec<(Vec<u8>, Digest32)> = lines
                .iter()
                .map(|l| (l.clone(), ndarc_format::hash::sha256(&l[..l.len() - 1])))
                .collect();
            assert_eq!(record.0, want, "{count} lines");
        }
        // Pass 1 writes nothing and hands each buffer back at once.
        let mut w = Writer {
            out: None,
            waiting: None,
        };
        let mut back = 0;
        w.line(b"x\n".to_vec(), &mut |_| back += 1).unwrap();
        w.flush().unwrap();
        assert_eq!(back, 1);
    }
}
