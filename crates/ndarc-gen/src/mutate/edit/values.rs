//! Helpers that read and build JSON values and draw random ones: the
//! vocabulary of the mutations.

use std::borrow::Cow;

use ndarc_json::{cmp_utf16, Object, Value};

use crate::rng::Rng;

pub(in crate::mutate) type V = Value<'static>;
pub(in crate::mutate) type Obj = Object<'static>;
pub(in crate::mutate) type R<T> = Result<T, String>;

pub(in crate::mutate) fn obj_mut(v: &mut V) -> Option<&mut Obj> {
    match v {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

pub(in crate::mutate) fn arr_mut<'a>(o: &'a mut Obj, k: &str) -> Option<&'a mut Vec<V>> {
    match o.get_mut(k)? {
        Value::Array(a) => Some(a),
        _ => None,
    }
}

pub(in crate::mutate) fn arr<'a>(o: &'a Obj, k: &str) -> &'a [V] {
    o.get(k).and_then(Value::as_array).unwrap_or(&[])
}

pub(in crate::mutate) fn str_at<'a>(v: &'a V, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

pub(in crate::mutate) fn int_at(v: &V, k: &str) -> Option<i64> {
    v.get(k).and_then(Value::as_safe_integer)
}

pub(in crate::mutate) fn s(x: impl Into<String>) -> V {
    Value::String(Cow::Owned(x.into()))
}

pub(in crate::mutate) fn n(x: i64) -> V {
    Value::from(x)
}

pub(in crate::mutate) fn obj(members: Vec<(&'static str, V)>) -> V {
    let mut o = Object::new();
    for (k, v) in members {
        o.insert(k, v);
    }
    Value::Object(o)
}

pub(in crate::mutate) trait Need<T> {
    fn need(self, what: &str) -> R<T>;
}

impl<T> Need<T> for Option<T> {
    fn need(self, what: &str) -> R<T> {
        self.ok_or_else(|| what.to_string())
    }
}

pub(in crate::mutate) fn pick<T: Clone>(v: &[T], rng: &mut Rng, what: &str) -> R<T> {
    if v.is_empty() {
        return Err(what.to_string());
    }
    Ok(v[rng.below(v.len() as u64) as usize].clone())
}

pub(in crate::mutate) fn col(name: &str, ty: &str, notnull: i64, pk: i64) -> V {
    obj(vec![
        ("name", s(name)),
        ("type", s(ty)),
        ("notnull", n(notnull)),
        ("pk", n(pk)),
    ])
}

/// `lo` to `lo + span - 1` random bytes.
pub(in crate::mutate) fn some_bytes(rng: &mut Rng, lo: usize, span: u64) -> Vec<u8> {
    let len = lo + rng.below(span) as usize;
    random_bytes(rng, len)
}

pub(in crate::mutate) fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// `name` with the case of its ASCII letters swapped; `None` when it has
/// none.
pub(in crate::mutate) fn flip_case(name: &str) -> Option<String> {
    if !name.bytes().any(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    Some(
        name.chars()
            .map(|c| {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect(),
    )
}

pub(in crate::mutate) fn sorted_utf16(v: &mut [String]) {
    v.sort_by(|a, b| cmp_utf16(a, b));
}

pub(in crate::mutate) fn strings(v: &[String]) -> V {
    Value::Array(v.iter().map(|x| s(x.clone())).collect())
}
