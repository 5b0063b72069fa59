//! The cell rules (SPEC.md §5.2), defined once: which values a column
//! admits. The full check turns each [`Fault`] into a finding; the fast path
//! accepts a cell only when it has none.

use crate::catalogue::{self, Affinity};
use crate::code::Code;
use crate::plan::RowColumn;

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

/// The faults of value `v` in column `c`; `scratch` holds a blob's decoded
/// bytes while they are checked.
pub(crate) fn faults(c: &RowColumn, v: CellValue<'_>, scratch: &mut Vec<u8>) -> Faults {
    match (c.affinity, v) {
        (_, CellValue::Null) if c.notnull => Faults::one(Fault::NotNull),
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

    fn col(affinity: Affinity, notnull: bool) -> RowColumn {
        RowColumn {
            name: "c".into(),
            name_json: b"\"c\"".to_vec(),
            affinity,
            notnull,
        }
    }

    fn of(c: &RowColumn, v: CellValue<'_>) -> Vec<Fault> {
        faults(c, v, &mut Vec::new()).iter().collect()
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
