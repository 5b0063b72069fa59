//! The cell rules (SPEC.md §5.2), defined once: which values a column
//! admits. The full check turns each [`Fault`] into a finding; the fast path
//! accepts a cell only when it has none.

use crate::catalogue::{self, Affinity};
use crate::code::Code;

/// What a cell holds, as far as the cell rules care.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CellValue<'a> {
    /// `null`.
    Null,
    /// A number, and whether it is a safe integer.
    Number {
        /// |n| ≤ 2^53−1 and integral.
        safe_integer: bool,
    },
    /// A string.
    Text,
    /// `{"blob": string}`: the base64 text.
    Blob(&'a str),
    /// Any other object.
    Object,
    /// A boolean or an array.
    Other,
}

/// One way a cell breaks the cell rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// `null` in a NOT NULL column.
    NotNull,
    /// Not a safe integer in an INTEGER column.
    UnsafeInteger,
    /// An object that is not `{"blob": base64}`.
    NotABlob,
    /// A boolean or an array.
    Kind,
    /// Text in a NUMBER column.
    NeedsNumber,
    /// A number in a TEXT column.
    NeedsText,
    /// A blob's base64 is not canonical.
    InvalidBase64,
    /// A blob outside a BLOB column.
    BlobOutsideBlob,
}

impl Fault {
    /// The finding code.
    pub(crate) fn code(self) -> Code {
        match self {
            Fault::NotNull => Code::RowNotNull,
            Fault::UnsafeInteger => Code::UnsafeInteger,
            Fault::InvalidBase64 => Code::InvalidBase64,
            Fault::NotABlob
            | Fault::Kind
            | Fault::NeedsNumber
            | Fault::NeedsText
            | Fault::BlobOutsideBlob => Code::RowType,
        }
    }
}

/// The faults of one cell: none, one or (a blob) two.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Faults([Option<Fault>; 2]);

impl Faults {
    fn one(f: Fault) -> Faults {
        Faults([Some(f), None])
    }

    /// Whether the column admits the value.
    pub(crate) fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    /// The faults, in the order the full check reports them.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Fault> + '_ {
        self.0.iter().flatten().copied()
    }
}

/// Which scalar cells a column admits, as a bit set derived from
/// [`faults`] once per column (so the rule stays in one place): the fast
/// path tests a cell with one shift instead of walking the rules. Blobs are
/// not in the set: their base64 must be decoded, so they go to [`faults`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Admits(u8);

impl Admits {
    const NULL: u8 = 1;
    const SAFE_INTEGER: u8 = 1 << 1;
    const OTHER_NUMBER: u8 = 1 << 2;
    const TEXT: u8 = 1 << 3;
    const BOOLEAN: u8 = 1 << 4;

    /// The set for a column of this affinity and nullability.
    pub(crate) fn of(affinity: Affinity, notnull: bool) -> Admits {
        let mut scratch = Vec::new();
        let mut bits = 0;
        for (bit, v) in [
            (Admits::NULL, CellValue::Null),
            (
                Admits::SAFE_INTEGER,
                CellValue::Number { safe_integer: true },
            ),
            (
                Admits::OTHER_NUMBER,
                CellValue::Number {
                    safe_integer: false,
                },
            ),
            (Admits::TEXT, CellValue::Text),
            (Admits::BOOLEAN, CellValue::Other),
        ] {
            if faults(affinity, notnull, v, &mut scratch).is_empty() {
                bits |= bit;
            }
        }
        Admits(bits)
    }

    /// Whether the column admits the scalar cell `v`.
    #[cfg(test)]
    pub(crate) fn scalar(self, v: &ndarc_json::Scalar<'_>) -> bool {
        use ndarc_json::Scalar;
        match v {
            Scalar::Null => self.null(),
            Scalar::Bool(_) => self.boolean(),
            Scalar::String(_) => self.text(),
            Scalar::Number(n) => self.number(n),
        }
    }

    /// Whether the column admits `null`.
    #[inline]
    pub(crate) fn null(self) -> bool {
        self.0 & Admits::NULL != 0
    }

    /// Whether the column admits `true` and `false`.
    #[inline]
    pub(crate) fn boolean(self) -> bool {
        self.0 & Admits::BOOLEAN != 0
    }

    /// Whether the column admits a string.
    #[inline]
    pub(crate) fn text(self) -> bool {
        self.0 & Admits::TEXT != 0
    }

    /// Whether the column admits the number `n`.
    #[inline]
    pub(crate) fn number(self, n: &ndarc_json::RawNumber<'_>) -> bool {
        let numbers = self.0 & (Admits::SAFE_INTEGER | Admits::OTHER_NUMBER);
        // Most columns admit both kinds of number or neither: then whether
        // it is a safe integer does not matter.
        if numbers == 0 || numbers == Admits::SAFE_INTEGER | Admits::OTHER_NUMBER {
            numbers != 0
        } else if n.safe_integer().is_some() {
            numbers == Admits::SAFE_INTEGER
        } else {
            numbers == Admits::OTHER_NUMBER
        }
    }
}

/// The faults of value `v` in a column of this affinity and nullability;
/// `scratch` holds a blob's decoded bytes while they are checked.
pub(crate) fn faults(
    affinity: Affinity,
    notnull: bool,
    v: CellValue<'_>,
    scratch: &mut Vec<u8>,
) -> Faults {
    match (affinity, v) {
        (_, CellValue::Null) if notnull => Faults::one(Fault::NotNull),
        (_, CellValue::Null) => Faults::default(),
        (_, CellValue::Object) => Faults::one(Fault::NotABlob),
        (_, CellValue::Other) => Faults::one(Fault::Kind),
        (Affinity::Integer, CellValue::Number { safe_integer: true }) => Faults::default(),
        (Affinity::Integer, _) => Faults::one(Fault::UnsafeInteger),
        (affinity, CellValue::Blob(b64)) => {
            scratch.clear();
            let bad = !catalogue::decode_base64_into(b64, scratch);
            let outside = affinity != Affinity::Blob;
            Faults([
                bad.then_some(Fault::InvalidBase64)
                    .or(outside.then_some(Fault::BlobOutsideBlob)),
                (bad && outside).then_some(Fault::BlobOutsideBlob),
            ])
        }
        (Affinity::Number, CellValue::Text) => Faults::one(Fault::NeedsNumber),
        (Affinity::Text, CellValue::Number { .. }) => Faults::one(Fault::NeedsText),
        _ => Faults::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column as the rules see it.
    struct Col {
        affinity: Affinity,
        notnull: bool,
        admits: Admits,
    }

    fn col(affinity: Affinity, notnull: bool) -> Col {
        Col {
            affinity,
            notnull,
            admits: Admits::of(affinity, notnull),
        }
    }

    fn of(c: &Col, v: CellValue<'_>) -> Vec<Fault> {
        faults(c.affinity, c.notnull, v, &mut Vec::new())
            .iter()
            .collect()
    }

    #[test]
    fn the_scalar_set_agrees_with_the_rules() {
        use ndarc_json::{Scalar, Scanner};
        let cells = [
            "null",
            "true",
            "false",
            "0",
            "-7",
            "9007199254740991",
            "9007199254740992",
            "1.5",
            "1e+21",
            "\"t\"",
        ];
        for affinity in [
            Affinity::Integer,
            Affinity::Text,
            Affinity::Blob,
            Affinity::Number,
        ] {
            for notnull in [false, true] {
                let c = col(affinity, notnull);
                for text in cells {
                    let v = Scanner::new(text.as_bytes())
                        .and_then(|mut s| s.scalar())
                        .unwrap();
                    let value = match v {
                        Scalar::Null => CellValue::Null,
                        Scalar::Bool(_) => CellValue::Other,
                        Scalar::Number(n) => CellValue::Number {
                            safe_integer: n.safe_integer().is_some(),
                        },
                        Scalar::String(_) => CellValue::Text,
                    };
                    assert_eq!(
                        c.admits.scalar(&v),
                        of(&c, value).is_empty(),
                        "{affinity:?} {notnull} {text}"
                    );
                }
            }
        }
    }

    #[test]
    fn admits() {
        use CellValue as V;
        use Fault as F;
        let int = col(Affinity::Integer, false);
        let safe = V::Number { safe_integer: true };
        let unsafe_ = V::Number {
            safe_integer: false,
        };
        assert_eq!(of(&int, safe), []);
        assert_eq!(of(&int, unsafe_), [F::UnsafeInteger]);
        assert_eq!(of(&int, V::Text), [F::UnsafeInteger]);
        assert_eq!(of(&int, V::Blob("AA==")), [F::UnsafeInteger]);
        assert_eq!(of(&int, V::Object), [F::NotABlob]);
        assert_eq!(of(&int, V::Other), [F::Kind]);
        assert_eq!(of(&int, V::Null), []);
        assert_eq!(of(&col(Affinity::Text, true), V::Null), [F::NotNull]);
        assert_eq!(of(&col(Affinity::Number, false), V::Text), [F::NeedsNumber]);
        assert_eq!(of(&col(Affinity::Number, false), unsafe_), []);
        assert_eq!(of(&col(Affinity::Text, false), safe), [F::NeedsText]);
        let blob = col(Affinity::Blob, false);
        assert_eq!(of(&blob, V::Blob("AQI=")), []);
        assert_eq!(of(&blob, V::Text), []);
        assert_eq!(of(&blob, unsafe_), []);
        assert_eq!(of(&blob, V::Blob("AQJ=")), [F::InvalidBase64]);
        let text = col(Affinity::Text, false);
        assert_eq!(of(&text, V::Blob("AQI=")), [F::BlobOutsideBlob]);
        assert_eq!(
            of(&text, V::Blob("A")),
            [F::InvalidBase64, F::BlobOutsideBlob]
        );
        assert_eq!(F::NeedsText.code(), Code::RowType);
    }
}
