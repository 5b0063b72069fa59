//! The values, types and names a generated database is drawn from.

use ndarc_format::Affinity;
use ndarc_gen::Rng;

use super::Cell;

pub(super) const INT_TYPES: &[&str] = &[
    "INTEGER",
    "INT",
    "integer",
    "BIGINT",
    "TINYINT",
    "UNSIGNED BIG INT",
    "INT8",
    "MediumInt",
    "FLOATING POINT",
];
pub(super) const TEXT_TYPES: &[&str] = &[
    "TEXT",
    "text",
    "VARCHAR(255)",
    "NCHAR(55)",
    "CLOB",
    "CHARACTER(20)",
    "NATIVE CHARACTER(70)",
    "VARYING CHARACTER(255)",
];
pub(super) const BLOB_TYPES: &[&str] = &["BLOB", "", "blob"];
pub(super) const NUMBER_TYPES: &[&str] = &[
    "REAL",
    "DOUBLE",
    "DOUBLE PRECISION",
    "FLOAT",
    "NUMERIC",
    "DECIMAL(10,5)",
    "BOOLEAN",
    "DATE",
    "DATETIME",
    "STRING",
    "real",
];

pub(super) const TABLE_NAMES: &[&str] = &[
    "users",
    "Orders",
    "line_items",
    "naïve café",
    "日本語",
    "x y",
    "quote\"d",
    "𝄞tab",
    "Ω",
    "a",
    "B",
    "tags",
    "events",
    "_private",
    "sqlite",
    "Ａ",
];
/// Names the producer's defaults exclude (`sqlite_%` cannot be created).
pub const EXCLUDED_NAMES: &[&str] = &[
    "_cf_KV",
    "d1_migrations",
    "OA_tokens",
    "oc_sessions",
    "rer_portability_state",
    "_RER_DEPLOY_MIGRATIONS",
    "rer_dependency_keys",
    "Oa_",
];
pub(super) const COLUMN_NAMES: &[&str] = &[
    "name",
    "Value",
    "créé",
    "emoji😀",
    "with space",
    "quote\"col",
    "n",
    "ID2",
    "日付",
    "x",
    "body",
    "Ｚ",
    "\u{e000}",
    "𝄞",
];

const STRINGS: &[&str] = &[
    "",
    "a",
    "héllo wörld",
    "日本語のテキスト",
    "𝄞 music 😀 and 🏳️‍🌈",
    "quote \" and \\ backslash",
    "tab\tnew\nline\rcr",
    "nul\u{0}inside",
    "\u{1}\u{1f}\u{7f}",
    "\u{2028}\u{2029}",
    "\u{fffd}",
    "\u{e000}\u{ffff}\u{10000}\u{10ffff}",
    " leading and trailing ",
    "1e3",
    "-0",
    "null",
    "{\"blob\":\"AA==\"}",
];

pub(super) const SAFE: i64 = (1 << 53) - 1;

fn floats(r: &mut Rng) -> f64 {
    const F: &[f64] = &[
        -0.0,
        0.0,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        2.225073858507201e-308,
        1e21,
        -1e21,
        9.999999999999999e20,
        1e-7,
        1e-6,
        0.1,
        1.5,
        -2.75,
        1.7976931348623157e308,
        -1.7976931348623157e308,
        123456789.123,
        9007199254740993.0,
    ];
    if r.one_in(3) {
        // A random finite double from its bits.
        loop {
            let x = f64::from_bits(r.next_u64());
            if x.is_finite() {
                return x;
            }
        }
    }
    r.pick(F)
}

fn ints(r: &mut Rng, big: bool) -> i64 {
    const I: &[i64] = &[0, 1, -1, 42, SAFE, -SAFE, 1 << 31, -(1 << 31), 1 << 32];
    const BIG: &[i64] = &[1 << 53, -(1 << 53), i64::MAX, i64::MIN, (1 << 53) + 1];
    if big && r.one_in(4) {
        return r.pick(BIG);
    }
    if r.one_in(2) {
        r.pick(I)
    } else {
        r.range_i64(-100_000, 100_000)
    }
}

fn text(r: &mut Rng) -> String {
    if r.one_in(2) {
        return r.pick(STRINGS).to_string();
    }
    let n = r.below(24);
    let mut s = String::new();
    for _ in 0..n {
        let c = match r.below(10) {
            0 => char::from_u32(0x80 + r.below(0x700) as u32),
            1 => char::from_u32(0x1F300 + r.below(0x300) as u32),
            2 => char::from_u32(0x4E00 + r.below(0x100) as u32),
            _ => char::from_u32(0x20 + r.below(0x5F) as u32),
        };
        s.push(c.unwrap_or('?'));
    }
    s
}

fn blob(r: &mut Rng) -> Vec<u8> {
    let n = if r.one_in(4) { 0 } else { r.below(40) };
    (0..n).map(|_| r.next_u64() as u8).collect()
}

/// A valid non-key cell for a column of affinity `a`.
pub(crate) fn cell(r: &mut Rng, a: Affinity, nullable: bool) -> Cell {
    if nullable && r.one_in(4) {
        return Cell::Null;
    }
    match a {
        Affinity::Integer => match r.below(8) {
            0 => Cell::Real(r.range_i64(-1000, 1000) as f64),
            1 => Cell::Text(r.range_i64(-1000, 1000).to_string()),
            _ => Cell::Int(ints(r, false)),
        },
        Affinity::Number => match r.below(6) {
            0 | 1 => Cell::Int(ints(r, true)),
            2 => Cell::Text(r.pick(&["12", "1e3", "-7.5", " 4 "]).to_string()),
            _ => Cell::Real(floats(r)),
        },
        Affinity::Text => match r.below(8) {
            0 => Cell::Int(ints(r, true)),
            1 => Cell::Real(floats(r)),
            _ => Cell::Text(text(r)),
        },
        Affinity::Blob => match r.below(5) {
            0 => Cell::Int(ints(r, true)),
            1 => Cell::Real(floats(r)),
            2 => Cell::Text(text(r)),
            _ => Cell::Blob(blob(r)),
        },
    }
}

/// A key cell: unique per `i` within the column (with the same affinity,
/// no two are equal to SQLite or as canonical JSON).
pub(crate) fn key_cell(r: &mut Rng, a: Affinity, i: usize, last: bool) -> Cell {
    let i = i as i64;
    if !last {
        // Leading key columns repeat, so the later ones order ties.
        let k = r.below(3) as i64;
        return match a {
            Affinity::Integer => Cell::Int(k - 1),
            Affinity::Number => Cell::Real(k as f64 + 0.25),
            Affinity::Text => Cell::Text(["", "b", "É"][k as usize].to_string()),
            Affinity::Blob => Cell::Blob(vec![k as u8; k as usize]),
        };
    }
    match a {
        Affinity::Integer => Cell::Int(if i % 5 == 4 { SAFE - i } else { i * 7 - 20 }),
        Affinity::Number => {
            if i % 2 == 0 {
                Cell::Int(i * 3)
            } else {
                Cell::Real(i as f64 * 3.0 + 0.5)
            }
        }
        Affinity::Text => Cell::Text(format!("{}{i}", r.pick(&["k", "Ä", "😀", "", "Z"]))),
        Affinity::Blob => match i % 3 {
            0 => Cell::Int(i),
            1 => Cell::Text(format!("t{i}")),
            _ => Cell::Blob(vec![(i >> 8) as u8, i as u8]),
        },
    }
}

pub(super) fn decl(r: &mut Rng, a: Affinity) -> String {
    match a {
        Affinity::Integer => r.pick(INT_TYPES),
        Affinity::Text => r.pick(TEXT_TYPES),
        Affinity::Blob => r.pick(BLOB_TYPES),
        Affinity::Number => r.pick(NUMBER_TYPES),
    }
    .to_string()
}

pub(super) fn any_affinity(r: &mut Rng) -> Affinity {
    r.pick(&[
        Affinity::Integer,
        Affinity::Text,
        Affinity::Blob,
        Affinity::Number,
    ])
}

pub(super) fn fresh(r: &mut Rng, pool: &[&str], taken: &[String], fallback: &str) -> String {
    for _ in 0..4 {
        let n = r.pick(pool);
        if !taken.iter().any(|t| t.eq_ignore_ascii_case(n)) {
            return n.to_string();
        }
    }
    let mut k = taken.len();
    loop {
        let n = format!("{fallback}{k}");
        if !taken.iter().any(|t| t.eq_ignore_ascii_case(&n)) {
            return n;
        }
        k += 1;
    }
}

pub(super) fn swap_ascii_case(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}
