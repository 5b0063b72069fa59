//! Rows: cells as pure functions of (seed, table, row slot, column), and
//! the canonical writer of row items.

use std::io;
use std::ops::Range;

use ndarc_format::Affinity;
use ndarc_json::{number, write_string, MAX_SAFE_INTEGER};

use crate::rng::{derive, derive_all, mix, Rng};
use crate::schema::{CellKind, ColDef, KeyPart, TableDef};

/// One cell; text and blob bytes live in the [`Scratch`] arenas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Num(f64),
    Text(usize, usize),
    Blob(usize, usize),
}

/// Reused buffers, so generating a row allocates nothing in steady state.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    cells: Vec<Cell>,
    text: String,
    bytes: Vec<u8>,
}

/// How much a row may hold. Rows are drawn in [`Mode::Full`]; a row whose
/// item would not fit in one part at the chosen `part_bytes` (the
/// producer's `row_part_too_large`) is drawn again smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Full,
    Compact,
    Minimal,
}

const MODES: [Mode; 3] = [Mode::Full, Mode::Compact, Mode::Minimal];

/// Which version of a row slot to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// The row as the first export has it.
    Base,
    /// The same key with some cells changed (a later export).
    Changed,
    /// A new row whose key sorts right after the slot's (a later export).
    Added,
}

pub(crate) const WORDS: &[&str] = &[
    "alpha", "bravo", "charlie", "delta", "echo", "kilo", "lima", "nova", "orbit", "pixel",
    "quartz", "river", "sigma", "tango", "umbra", "vector", "willow", "zephyr", "Lorem", "ipsum",
];

/// Unicode beyond ASCII: accents precomposed and combining, RTL scripts and
/// a bidi override, astral characters (emoji, ZWJ sequence, flag,
/// mathematical letters, CJK extension B), private use and U+FB33 (which
/// sort differently in UTF-16 and code-point order against astral ones).
pub(crate) const UNICODE: &[&str] = &[
    "é",
    "e\u{301}",
    "ñ",
    "Ω",
    "ß",
    "日本語",
    "中文",
    "한국어",
    "שלום",
    "مرحبا",
    "😀",
    "👩\u{200D}💻",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "𠜎",
    "🇺🇳",
    "a\u{308}\u{332}",
    "Ελληνικά",
    "Русский",
    "\u{E000}",
    "\u{FB33}",
    "\u{FFFD}",
    "\u{202E}abc\u{202C}",
];

/// Text that JSON must escape (quotes, backslashes, C0 controls) or that
/// `JSON.stringify` writes raw although other encoders escape it (U+007F,
/// U+2028, U+2029, `/`, `<`).
pub(crate) const ESCAPES: &[&str] = &[
    "\"",
    "\\",
    "\n",
    "\t",
    "\r",
    "\u{0}",
    "\u{1}",
    "\u{1f}",
    "\u{8}",
    "\u{c}",
    "\u{b}",
    "\u{7f}",
    "\u{2028}",
    "\u{2029}",
    "</script>",
    "'",
    "\\u0041",
    "/",
    "\"quoted\"",
    "C:\\path\\to",
];

const KEY_SUFFIXES: &[&str] = &[
    "",
    "",
    "",
    "-é",
    "-😀",
    "-שלום",
    "-e\u{301}",
    "-日本",
    " \"q\"",
    "-\u{E000}",
];

const TLDS: &[&str] = &["com", "org", "test", "example", "xn--bcher-kva.example"];

impl Scratch {
    fn text_cell(&mut self, f: impl FnOnce(&mut String)) -> Cell {
        let start = self.text.len();
        f(&mut self.text);
        Cell::Text(start, self.text.len())
    }

    fn blob_cell(&mut self, rng: &mut Rng, len: u64) -> Cell {
        let start = self.bytes.len();
        for _ in 0..len {
            self.bytes.push(rng.next_u64() as u8);
        }
        Cell::Blob(start, self.bytes.len())
    }

    fn text(&self, a: usize, b: usize) -> &str {
        &self.text[a..b]
    }
}

fn name_text(s: &mut String, rng: &mut Rng, mode: Mode) {
    let n = match mode {
        Mode::Full => rng.range(1, 3),
        Mode::Compact => 1,
        Mode::Minimal => {
            s.push('x');
            return;
        }
    };
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        if rng.chance(0.4) {
            s.push_str(rng.pick(UNICODE));
        } else {
            s.push_str(rng.pick(WORDS));
        }
    }
}

/// Short text as application exports hold it: words and non-ASCII pieces
/// until 5 to 40 bytes (never cut inside a character).
fn word_text(s: &mut String, rng: &mut Rng, mode: Mode) {
    if mode == Mode::Minimal {
        s.push_str("xxxxx");
        return;
    }
    let start = s.len();
    let target = rng.range(5, 40) as usize;
    while s.len() - start < target {
        let piece = if rng.one_in(2) {
            rng.pick(UNICODE)
        } else {
            rng.pick(WORDS)
        };
        let sep = usize::from(s.len() > start);
        if s.len() - start + sep + piece.len() > 40 {
            break;
        }
        if sep == 1 {
            s.push(if rng.one_in(4) { '-' } else { ' ' });
        }
        s.push_str(piece);
    }
    while s.len() - start < 5 {
        s.push('_');
    }
}

fn escapes_text(s: &mut String, rng: &mut Rng, slot: u64, mode: Mode) {
    match mode {
        Mode::Minimal => {}
        Mode::Compact => s.push_str(rng.pick(ESCAPES)),
        Mode::Full => {
            if slot % 7 == 1 {
                // Every C0 control character once.
                s.extend((0u8..0x20).map(char::from));
                return;
            }
            let n = rng.range(2, 6);
            let forced = rng.below(n);
            for i in 0..n {
                let pool = if i == forced {
                    ESCAPES
                } else {
                    match rng.below(3) {
                        0 => ESCAPES,
                        1 => UNICODE,
                        _ => WORDS,
                    }
                };
                s.push_str(rng.pick(pool));
            }
        }
    }
}

fn long_text(s: &mut String, rng: &mut Rng, slot: u64, mode: Mode) {
    match mode {
        Mode::Minimal => {}
        Mode::Compact => s.push_str(rng.pick(WORDS)),
        Mode::Full => {
            let target = if slot % 17 == 3 || rng.one_in(50) {
                2000 + rng.below(6000) as usize
            } else {
                20 + rng.below(200) as usize
            };
            let start = s.len();
            let mut i = 0u64;
            while s.len() - start < target {
                if i > 0 {
                    s.push(if i.is_multiple_of(12) { '\n' } else { ' ' });
                }
                match i % 9 {
                    4 => s.push_str(rng.pick(UNICODE)),
                    8 => s.push_str(rng.pick(ESCAPES)),
                    _ => s.push_str(rng.pick(WORDS)),
                }
                i += 1;
            }
        }
    }
}

fn json_text(s: &mut String, rng: &mut Rng, mode: Mode) {
    match mode {
        Mode::Minimal => {}
        Mode::Compact => s.push_str("{}"),
        Mode::Full => {
            let mut msg = Vec::new();
            let frag = if rng.one_in(2) {
                rng.pick(ESCAPES)
            } else {
                rng.pick(UNICODE)
            };
            write_string(frag, &mut msg);
            let msg = String::from_utf8(msg).unwrap_or_default();
            s.push_str(&format!(
                "{{\"id\":{},\"msg\":{msg},\"ok\":{},\"ratio\":{},\"tags\":[\"{}\",\"{}\"]}}",
                rng.below(100_000),
                rng.one_in(2),
                rng.below(1000) as f64 / 8.0,
                rng.pick(WORDS),
                rng.pick(WORDS),
            ));
        }
    }
}

fn real(rng: &mut Rng, slot: u64) -> f64 {
    let pick = if slot % 11 == 2 {
        rng.below(8)
    } else {
        rng.below(24)
    };
    match pick {
        0 => 1e21,
        1 => 1e-7,
        2 => 5e-324,
        3 => 1.797_693_134_862_315_7e308,
        4 => -0.5,
        5 => 1_152_921_504_606_846_976.0, // 2^60
        6 => 0.1 + 0.2,
        7 => 123_456_789.125,
        8..=15 => rng.range_i64(-1_000_000, 1_000_000) as f64 / 1000.0,
        _ => rng.unit() * 1000.0,
    }
}

fn int(rng: &mut Rng, slot: u64) -> i64 {
    const MAX: i64 = 9_007_199_254_740_991;
    let pick = if slot % 11 == 2 {
        rng.below(4)
    } else {
        rng.below(20)
    };
    match pick {
        0 => MAX,
        1 => -MAX,
        2 => 0,
        3 => -1,
        4..=8 => rng.range_i64(-1_000_000, 1_000_000),
        _ => rng.range_i64(0, 100_000),
    }
}

fn key_cell(part: &KeyPart, k: u64, s: &mut Scratch) -> Cell {
    match part {
        KeyPart::Int {
            shift,
            mask,
            offset,
        } => Cell::Int(offset + ((k >> shift) & mask) as i64),
        KeyPart::Text {
            prefix,
            shift,
            mask,
            width,
            suffix,
        } => {
            let v = (k >> shift) & mask;
            s.text_cell(|t| {
                use std::fmt::Write as _;
                t.push_str(prefix);
                let _ = write!(t, "{v:0width$}");
                if *suffix {
                    t.push_str(KEY_SUFFIXES[(mix(v) % KEY_SUFFIXES.len() as u64) as usize]);
                }
            })
        }
    }
}

fn cell(col: &ColDef, rng: &mut Rng, slot: u64, mode: Mode, s: &mut Scratch) -> Cell {
    use CellKind as K;
    if !col.notnull && (mode == Mode::Minimal || rng.below(1000) < col.nulls) {
        return Cell::Null;
    }
    match &col.kind {
        K::Key(_) => Cell::Null, // keys are drawn by `key_cell`
        K::Int => Cell::Int(int(rng, slot)),
        K::SmallInt => Cell::Int(rng.range_i64(1, 20)),
        K::Bool => Cell::Int(rng.range_i64(0, 1)),
        K::Real => Cell::Num(real(rng, slot)),
        K::Numeric => {
            if rng.one_in(2) {
                Cell::Int(rng.range_i64(-100_000, 100_000))
            } else {
                Cell::Num(rng.range_i64(-10_000_000, 10_000_000) as f64 / 100.0)
            }
        }
        K::Money => Cell::Num(rng.range_i64(1, 1_000_000) as f64 / 100.0),
        K::EpochMs => {
            if rng.one_in(8) && col.affinity != Affinity::Integer {
                // Unix seconds with a fraction, as some schemas store them.
                Cell::Num(1_500_000_000.0 + rng.below(300_000_000) as f64 + 0.25)
            } else {
                Cell::Int(1_500_000_000_000 + rng.below(300_000_000_000) as i64)
            }
        }
        K::Name => s.text_cell(|t| name_text(t, rng, mode)),
        K::Email => s.text_cell(|t| {
            if mode != Mode::Minimal {
                t.push_str(&format!(
                    "{}.{}@example.{}",
                    rng.pick(WORDS).to_ascii_lowercase(),
                    rng.below(10_000),
                    rng.pick(TLDS)
                ));
            }
        }),
        K::ShortText => s.text_cell(|t| {
            if mode != Mode::Minimal {
                t.push_str(&format!("{}-{}", rng.pick(WORDS), rng.below(1000)));
            }
        }),
        K::Escapes => s.text_cell(|t| escapes_text(t, rng, slot, mode)),
        K::LongText => s.text_cell(|t| long_text(t, rng, slot, mode)),
        K::JsonText => s.text_cell(|t| json_text(t, rng, mode)),
        K::Color => s.text_cell(|t| t.push_str(&format!("#{:06x}", rng.below(0x100_0000)))),
        K::Enum(values) => s.text_cell(|t| t.push_str(rng.pick(values))),
        K::Blob => {
            let len = match mode {
                Mode::Full if slot % 13 == 7 => rng.range(512, 2048),
                Mode::Full => rng.below(49),
                Mode::Compact => rng.below(7),
                Mode::Minimal => 0,
            };
            s.blob_cell(rng, len)
        }
        K::Word => s.text_cell(|t| word_text(t, rng, mode)),
        K::Signed => Cell::Int(if rng.one_in(3) {
            rng.range_i64(-1000, -1)
        } else {
            rng.range_i64(0, 1000)
        }),
        K::Any => match (mode, rng.below(6)) {
            (Mode::Minimal, _) => Cell::Int(0),
            (_, 0) => s.text_cell(|t| name_text(t, rng, mode)),
            (_, 1) => Cell::Int(int(rng, slot)),
            (_, 2) => Cell::Num(real(rng, slot)),
            (Mode::Full, 3) => {
                let len = rng.range(1, 40);
                s.blob_cell(rng, len)
            }
            (_, 5) => s.blob_cell(rng, 0),
            _ => s.text_cell(|t| t.push_str(rng.pick(WORDS))),
        },
    }
}

/// A value different from `old` that fits the column.
fn perturb(col: &ColDef, old: Cell, s: &mut Scratch) -> Cell {
    match old {
        Cell::Null => match col.affinity {
            Affinity::Integer => Cell::Int(7),
            Affinity::Number => Cell::Num(0.5),
            Affinity::Text => s.text_cell(|t| t.push('∆')),
            Affinity::Blob => {
                s.bytes.push(1);
                Cell::Blob(s.bytes.len() - 1, s.bytes.len())
            }
        },
        Cell::Int(n) if matches!(col.kind, CellKind::Bool) => Cell::Int(1 - n.clamp(0, 1)),
        Cell::Int(n) => Cell::Int(if (n as f64) < MAX_SAFE_INTEGER {
            n + 1
        } else {
            n - 1
        }),
        Cell::Num(x) => Cell::Num(if x == 0.5 { 0.25 } else { 0.5 }),
        Cell::Text(a, b) => {
            let old = s.text[a..b].to_string();
            s.text_cell(|t| {
                t.push_str(&old);
                t.push('∆');
            })
        }
        Cell::Blob(a, b) => {
            let start = s.bytes.len();
            s.bytes.extend_from_within(a..b);
            s.bytes.push(0xFF);
            Cell::Blob(start, s.bytes.len())
        }
    }
}

fn cells_equal(s: &Scratch, a: Cell, b: Cell) -> bool {
    match (a, b) {
        (Cell::Text(a0, a1), Cell::Text(b0, b1)) => s.text(a0, a1) == s.text(b0, b1),
        (Cell::Blob(a0, a1), Cell::Blob(b0, b1)) => s.bytes[a0..a1] == s.bytes[b0..b1],
        (Cell::Num(x), Cell::Num(y)) => x == y,
        (Cell::Int(x), Cell::Int(y)) => x == y,
        (Cell::Null, Cell::Null) => true,
        _ => false,
    }
}

fn write_cell(c: Cell, s: &Scratch, out: &mut Vec<u8>) {
    match c {
        Cell::Null => out.extend_from_slice(b"null"),
        Cell::Int(n) => number::write(n as f64, out),
        Cell::Num(x) => number::write(x, out),
        Cell::Text(a, b) => write_string(s.text(a, b), out),
        Cell::Blob(a, b) => {
            out.extend_from_slice(b"{\"blob\":\"");
            push_base64(&s.bytes[a..b], out);
            out.extend_from_slice(b"\"}");
        }
    }
}

pub(crate) use ndarc_format::pack::push_base64;

/// The digits of the widest row index a part can hold (2^53 − 1).
const INDEX_WIDTH: usize = 16;

/// The digits of `n` in decimal.
fn decimal_width(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The later-export parameters a row maker needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LaterRows {
    pub seed: u64,
}

/// What [`RowMaker::item`] wrote.
#[derive(Debug, Clone)]
pub(crate) struct Made {
    /// The `row` object's bytes within the item.
    pub row: Range<usize>,
    /// The item's `rowid`, for rowid tables.
    pub rowid: Option<i64>,
    /// For [`Variant::Changed`]: whether the row differs from the base row.
    pub changed: bool,
}

/// Draws rows and writes their items.
#[derive(Debug)]
pub(crate) struct RowMaker {
    seed: u64,
    later: Option<LaterRows>,
    part_bytes: usize,
    s: Scratch,
    cmp: Vec<u8>,
}

impl RowMaker {
    pub(crate) fn new(seed: u64, later: Option<LaterRows>, part_bytes: usize) -> RowMaker {
        RowMaker {
            seed,
            later,
            part_bytes,
            s: Scratch::default(),
            cmp: Vec::new(),
        }
    }

    fn row_seed(&self, t: &TableDef, slot: u64, variant: Variant) -> u64 {
        let base = derive_all(self.seed, &[t.salt, slot]);
        match (variant, self.later) {
            (Variant::Added, Some(l)) => derive_all(base, &[0xADD, l.seed]),
            _ => base,
        }
    }

    /// The key number of a slot: `4·slot + 0|1` for the slot's own row,
    /// `4·slot + 3` for a row a later export adds after it.
    fn key_number(&self, t: &TableDef, slot: u64, variant: Variant) -> u64 {
        let base = slot.wrapping_mul(4);
        match variant {
            Variant::Added => base + 3,
            _ => base + (mix(derive_all(self.seed, &[t.salt, slot, 0xB17])) & 1),
        }
    }

    fn build(&mut self, t: &TableDef, slot: u64, variant: Variant, k: u64, mode: Mode) {
        let row_seed = self.row_seed(t, slot, variant);
        let later = self.later;
        let s = &mut self.s;
        s.cells.clear();
        s.text.clear();
        s.bytes.clear();
        for &ci in &t.row_cols {
            let col = &t.columns[ci];
            let c = if let CellKind::Key(part) = &col.kind {
                key_cell(part, k, s)
            } else {
                let mut rng = Rng::new(derive(row_seed, ci as u64));
                cell(col, &mut rng, slot, mode, s)
            };
            s.cells.push(c);
        }
        if variant != Variant::Changed || t.mutable.is_empty() {
            return;
        }
        let Some(later) = later else { return };
        let mut pick = Rng::new(derive_all(later.seed, &[t.salt, slot, 0xC4]));
        let mut chosen: Vec<usize> = t
            .mutable
            .iter()
            .copied()
            .filter(|_| pick.one_in(2))
            .collect();
        if chosen.is_empty() {
            chosen.push(pick.pick(&t.mutable));
        }
        for n in chosen {
            let ci = t.row_cols[n];
            let col = &t.columns[ci];
            let mut rng = Rng::new(derive_all(row_seed, &[later.seed, ci as u64]));
            let old = s.cells[n];
            let mut new = cell(col, &mut rng, slot, mode, s);
            if cells_equal(s, old, new) {
                new = perturb(col, old, s);
            }
            s.cells[n] = new;
        }
    }

    fn write_item(
        &self,
        t: &TableDef,
        index: u64,
        rowid: Option<i64>,
        out: &mut Vec<u8>,
    ) -> Range<usize> {
        out.extend_from_slice(b"{\"index\":");
        number::write(index as f64, out);
        out.extend_from_slice(b",\"kind\":\"row\",\"row\":");
        let start = out.len();
        out.push(b'{');
        for (n, &c) in self.s.cells.iter().enumerate() {
            out.extend_from_slice(&t.prefixes[n]);
            write_cell(c, &self.s, out);
        }
        out.push(b'}');
        let end = out.len();
        if let Some(id) = rowid {
            out.extend_from_slice(b",\"rowid\":");
            number::write(id as f64, out);
        }
        out.extend_from_slice(b",\"table\":");
        out.extend_from_slice(&t.name_json);
        out.push(b'}');
        start..end
    }

    #[allow(clippy::too_many_arguments)]
    fn fit(
        &mut self,
        t: &TableDef,
        slot: u64,
        variant: Variant,
        k: u64,
        index: u64,
        rowid: Option<i64>,
        out: &mut Vec<u8>,
    ) -> io::Result<Range<usize>> {
        for mode in MODES {
            self.build(t, slot, variant, k, mode);
            out.clear();
            let row = self.write_item(t, index, rowid, out);
            // Measured as if the index had its widest spelling: a row's cells
            // must not depend on its place, or a later export, whose indexes
            // shift, would change rows near the limit it never chose to.
            let widest = out.len() - decimal_width(index) + INDEX_WIDTH;
            if widest + 201 <= self.part_bytes {
                return Ok(row);
            }
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a row of table {:?} does not fit in a part of {} bytes (row_part_too_large)",
                t.name, self.part_bytes
            ),
        ))
    }

    /// Writes the item of row `slot` (as `variant`) with row index `index`
    /// into `out` (cleared first).
    pub(crate) fn item(
        &mut self,
        t: &TableDef,
        slot: u64,
        variant: Variant,
        index: u64,
        out: &mut Vec<u8>,
    ) -> io::Result<Made> {
        let k = self.key_number(t, slot, variant);
        let rowid = t.rowid_alias.map(|_| t.rowid_offset + k as i64);
        let row = self.fit(t, slot, variant, k, index, rowid, out)?;
        let mut changed = false;
        if variant == Variant::Changed {
            let mut cmp = std::mem::take(&mut self.cmp);
            let base = self.fit(t, slot, Variant::Base, k, index, rowid, &mut cmp)?;
            changed = cmp[base] != out[row.clone()];
            self.cmp = cmp;
        }
        Ok(Made {
            row,
            rowid,
            changed,
        })
    }
}
