//! Rows of the second archive handed out during the diff's one pass over
//! it, for output that needs their contents (the SQL patch's `INSERT`s)
//! without reading the archive a second time.

use ndarc_format::Manifest;

use crate::model::Diff;
use crate::scan::slice;
use crate::side::PartRows;
use crate::Error;

/// Which rows of one of the second archive's tables a [`RowSink`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wanted {
    /// None.
    #[default]
    None,
    /// The rows added (whose key the first archive's table lacks).
    Added,
    /// Every row.
    All,
}

/// Takes rows of the second archive (AFTER) while the diff reads it, in
/// archive order within a table, each row once: see
/// [`diff_labeled_with_sink`](crate::diff_labeled_with_sink).
///
/// Rows are given as the verified stream holds them (canonical JSON when
/// the input is verified). They belong to an archive whose verification
/// is not over: a sink keeps them aside and uses them only once the diff
/// returned `Ok` (an invalid input is an error).
pub trait RowSink {
    /// Called once both manifests were read and compared, before any row:
    /// the second archive's manifest, and the diff so far (its schema
    /// part, what is ignored).
    fn start(&mut self, after: &Manifest, diff: &Diff);

    /// Called before the rows of the second archive's table `name` (a
    /// table the diff does not ignore): which of its rows the sink takes.
    fn table(&mut self, name: &str) -> Wanted;

    /// A row of the table last announced: its `row` object and its
    /// `rowid` (for tables whose rows carry one), as JSON text.
    fn row(&mut self, row: &[u8], rowid: Option<&[u8]>) -> std::io::Result<()>;

    /// Forget the rows given since the table was announced: the table's
    /// rows turned out not to be in key order, so which are added is known
    /// only at the end of the table, when they are given again (with
    /// [`Wanted::Added`] only; with [`Wanted::All`] no row is taken back).
    fn restart(&mut self) -> std::io::Result<()>;
}

/// The sink of a diff, with what it wants of the current table.
pub(crate) struct Taker<'s> {
    sink: Option<&'s mut dyn RowSink>,
    pub(crate) want: Wanted,
}

impl<'s> Taker<'s> {
    pub(crate) fn new(sink: Option<&'s mut dyn RowSink>) -> Self {
        Taker {
            sink,
            want: Wanted::None,
        }
    }

    /// Whether there is a sink.
    pub(crate) fn is_some(&self) -> bool {
        self.sink.is_some()
    }

    pub(crate) fn start(&mut self, after: &Manifest, d: &Diff) {
        if let Some(s) = self.sink.as_deref_mut() {
            s.start(after, d);
        }
    }

    /// Announces a table the second archive has (`None`: it has not).
    pub(crate) fn table(&mut self, name: &str, after: Option<usize>) {
        self.want = match (self.sink.as_deref_mut(), after) {
            (Some(s), Some(_)) => s.table(name),
            _ => Wanted::None,
        };
    }

    fn give(&mut self, p: &PartRows, i: usize) -> Result<(), Error> {
        let (Some(s), Some(r)) = (self.sink.as_deref_mut(), p.rows.get(i)) else {
            return Ok(());
        };
        let rowid = r.rowid.map(|(_, span)| slice(&p.bytes, span));
        s.row(slice(&p.bytes, r.row), rowid).map_err(Error::Sink)
    }

    /// Row `i` of `p` was read (matched or not): given when every row is
    /// wanted.
    pub(crate) fn read(&mut self, p: &PartRows, i: usize) -> Result<(), Error> {
        if self.want == Wanted::All {
            self.give(p, i)?;
        }
        Ok(())
    }

    /// Row `i` of `p` is added, for good.
    pub(crate) fn added(&mut self, p: &PartRows, i: usize) -> Result<(), Error> {
        if self.want != Wanted::None {
            self.give(p, i)?;
        }
        Ok(())
    }

    /// Row `i` of `p`, re-read, is added: given when only added rows are
    /// wanted (all rows were given as they were read).
    pub(crate) fn added_late(&mut self, p: &PartRows, i: usize) -> Result<(), Error> {
        if self.want == Wanted::Added {
            self.give(p, i)?;
        }
        Ok(())
    }

    /// The table's rows go through the index: rows given as added so far
    /// are taken back.
    pub(crate) fn restart(&mut self) -> Result<(), Error> {
        match self.sink.as_deref_mut() {
            Some(s) if self.want == Wanted::Added => s.restart().map_err(Error::Sink),
            _ => Ok(()),
        }
    }
}
