//! JSON values the JSON and the `--stat` renderings both build.

use ndarc_json::{Object, OwnedValue, Value};

/// An object of `members`.
pub(super) fn obj(members: Vec<(&'static str, OwnedValue)>) -> OwnedValue {
    let mut o = Object::new();
    for (n, v) in members {
        o.insert(n, v);
    }
    Value::Object(o)
}

/// A string.
pub(super) fn s(text: &str) -> OwnedValue {
    Value::String(text.to_string().into())
}

/// An array of strings.
pub(super) fn strings(list: &[String]) -> OwnedValue {
    Value::Array(list.iter().map(|x| s(x)).collect())
}

/// `{passed, rules, broken: [{code, rule, message}]}`.
pub(crate) fn gate(g: &crate::gate::GateResult) -> OwnedValue {
    obj(vec![
        ("passed", Value::Bool(g.passed())),
        ("rules", strings(&g.rules)),
        (
            "broken",
            Value::Array(
                g.broken
                    .iter()
                    .map(|b| {
                        obj(vec![
                            ("code", s(b.code)),
                            ("rule", s(&b.rule)),
                            ("message", s(&b.message)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}
