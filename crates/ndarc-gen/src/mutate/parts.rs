//! Mutations of SPEC.md §5.1: parts (index, items, mixing, order) and items
//! that name what the manifest does not list.

use ndarc_format::catalogue::encode_base64;
use ndarc_format::Code;
use ndarc_json::Value;

use crate::rng::Rng;

use super::edit::{
    flip_case, n, obj, obj_mut, pick, s, some_bytes, str_at, At, Bin, BinKind, Edit, Model, Need,
    Tab, R, V,
};
use super::fixture::{self as fx, build, case, Fixture, Recs, GREET, LOGO0, LOGO1, NOTES, USERS};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        PartIndex,
        "part_index",
        "a part index out of sequence",
        part_index
    ),
    mutation!(EmptyPart, "empty_part", "a part with no items", empty_part),
    mutation!(
        MixedPart,
        "mixed_part",
        "a part holding another table's row or another binary's chunk",
        mixed_part
    ),
    mutation!(
        PartRowCount,
        "part_row_count",
        "a new table with 1,001 rows in one part (a warning)",
        part_row_count
    ),
    mutation!(
        ItemOrder,
        "item_order",
        "two neighbouring parts of different tables or binaries swapped",
        item_order
    ),
    mutation!(
        UnknownTable,
        "unknown_table",
        "a row of a table the manifest lacks",
        unknown_table
    ),
    mutation!(
        UnknownObject,
        "unknown_object",
        "a chunk of an object the manifest lacks",
        unknown_object
    ),
    mutation!(
        UnknownPayload,
        "unknown_payload",
        "a chunk of a payload the manifest lacks",
        unknown_payload
    ),
];

fn ensure_parts(m: &mut Model, rng: &mut Rng, k: usize) -> R<()> {
    while m.parts.len() < k {
        let data = some_bytes(rng, 1, 20);
        m.add_last_payload(&data)?;
    }
    Ok(())
}

fn set_index(m: &mut Model, p: usize, v: i64) -> R<()> {
    obj_mut(m.parts.get_mut(p).need("no part")?)
        .need("not an object")?
        .insert("index", n(v));
    Ok(())
}

fn part_index(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    ensure_parts(m, rng, 1)?;
    let last = m.parts.len() - 1;
    let variant = if m.parts.len() >= 2 {
        rng.below(3)
    } else {
        rng.below(2)
    };
    match variant {
        0 => {
            set_index(m, last, last as i64 + 1)?;
            Ok(Edit::new(
                At::Part(last),
                format!(
                    "the last part says index {} where {last} is expected",
                    last + 1
                ),
            ))
        }
        1 => {
            for p in 0..m.parts.len() {
                set_index(m, p, p as i64 + 1)?;
            }
            Ok(Edit::new(At::Part(0), "parts numbered from 1"))
        }
        _ => {
            let p = 1 + rng.below(m.parts.len() as u64 - 1) as usize;
            set_index(m, p, p as i64 - 1)?;
            Ok(Edit::new(
                At::Part(p),
                format!("parts {} and {p} both say index {}", p - 1, p - 1),
            ))
        }
    }
}

fn empty_part(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let at = rng.below(m.parts.len() as u64 + 1) as usize;
    let p = m.insert_part(at, Vec::new());
    Ok(Edit::new(
        At::Part(p),
        format!("an empty part inserted as part {p}"),
    ))
}

fn mixed_part(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| !t.rows.is_empty())
        .collect();
    let bins: Vec<Bin> = m
        .bins()
        .into_iter()
        .filter(|b| !b.parts.is_empty())
        .collect();
    let mut kinds = Vec::new();
    if tabs.len() >= 2 {
        kinds.push(0);
    }
    if bins.len() >= 2 {
        kinds.push(1);
    }
    if !tabs.is_empty() && !bins.is_empty() {
        kinds.push(2);
    }
    if kinds.is_empty() {
        // Two binaries will do.
        let data = some_bytes(rng, 1, 20);
        m.add_last_payload(&data)?;
        let data = some_bytes(rng, 1, 20);
        m.add_last_payload(&data)?;
        return mixed_part(m, rng);
    }
    let (host, guest, what) = match pick(&kinds, rng, "")? {
        0 => {
            let k = 1 + rng.below(tabs.len() as u64 - 1) as usize;
            let (a, b) = if rng.one_in(2) {
                (&tabs[k - 1], &tabs[k])
            } else {
                (&tabs[k], &tabs[k - 1])
            };
            let host = pick(&a.rows, rng, "")?.0;
            let guest = pick(&b.rows, rng, "")?;
            (
                host,
                guest,
                format!(
                    "a copy of a row of {:?} inside part {host} (rows of {:?}); the original stays in its part",
                    b.name, a.name
                ),
            )
        }
        1 => {
            let k = 1 + rng.below(bins.len() as u64 - 1) as usize;
            let (a, b) = (&bins[k - 1], &bins[k]);
            let host = pick(&a.parts, rng, "")?;
            let guest = (pick(&b.parts, rng, "")?, 0);
            (
                host,
                guest,
                format!(
                    "a copy of a chunk of {} {:?} inside part {host} ({} {:?}); the original stays in its part",
                    b.kind.word(),
                    b.label,
                    a.kind.word(),
                    a.label
                ),
            )
        }
        _ => {
            let t = pick(&tabs, rng, "")?;
            let b = pick(&bins, rng, "")?;
            let host = pick(&t.rows, rng, "")?.0;
            let guest = (pick(&b.parts, rng, "")?, 0);
            (
                host,
                guest,
                format!(
                    "a copy of a chunk of {} {:?} inside part {host} (rows of {:?}); the original stays in its part",
                    b.kind.word(),
                    b.label,
                    t.name
                ),
            )
        }
    };
    let before = m.clone();
    let copy = m.item(guest.0, guest.1).cloned().need("no item")?;
    m.items_mut(host)?.push(copy);
    m.count_rows_by_part()?;
    Ok(Edit::new(At::Part(host), what)
        .seal(|o| o.counts = false)
        .content_of(before))
}

/// Groups of parts in archive order: the parts of one table's rows, of one
/// binary.
fn groups(m: &Model) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for p in 0..m.parts.len() {
        let key = match m.item(p, 0) {
            Some(i) => match str_at(i, "kind") {
                Some("row") => format!("rows of {:?}", str_at(i, "table").unwrap_or_default()),
                Some("object") => format!(
                    "object {:?}",
                    format!(
                        "{}/{}",
                        str_at(i, "bucket").unwrap_or_default(),
                        str_at(i, "key").unwrap_or_default()
                    )
                ),
                Some("payload") => {
                    format!("payload {:?}", str_at(i, "name").unwrap_or_default())
                }
                _ => format!("part {p}"),
            },
            None => format!("part {p}"),
        };
        match out.last_mut() {
            Some((k, v)) if *k == key => v.push(p),
            _ => out.push((key, vec![p])),
        }
    }
    out
}

fn item_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    ensure_parts(m, rng, 1)?;
    if groups(m).len() < 2 {
        let data = some_bytes(rng, 1, 20);
        m.add_last_payload(&data)?;
    }
    let gs = groups(m);
    let k = 1 + rng.below(gs.len() as u64 - 1) as usize;
    // The last part of group k-1 and the first of group k trade places:
    // the first is then out of order.
    let a = *gs[k - 1].1.last().need("")?;
    let b = gs[k].1[0];
    m.parts.swap(a, b);
    m.renumber();
    Ok(Edit::new(
        At::Part(b),
        format!(
            "the first part of the {} moved before the last part of the {} (parts {a} and {b} swapped)",
            gs[k].0, gs[k - 1].0
        ),
    )
    .allow(&[Code::RowCount, Code::BinaryMissing, Code::RowIndex]))
}

fn unknown_table(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| !t.rows.is_empty())
        .collect();
    let (item, name) = match tabs
        .iter()
        .filter(|t| flip_case(&t.name).is_some())
        .cloned()
        .collect::<Vec<_>>()
    {
        v if !v.is_empty() && rng.one_in(2) => {
            let t = pick(&v, rng, "")?;
            let at = *t.rows.last().need("")?;
            let mut item = m.item(at.0, at.1).cloned().need("")?;
            let name = flip_case(&t.name).need("")?;
            obj_mut(&mut item)
                .need("")?
                .insert("table", s(name.clone()));
            (item, name)
        }
        _ => {
            let name = m.fresh_table_name("ghosts");
            (
                obj(vec![
                    ("kind", s("row")),
                    ("table", s(name.clone())),
                    ("index", n(0)),
                    ("row", obj(vec![("x", n(1))])),
                ]),
                name,
            )
        }
    };
    let before = m.clone();
    let at = m.parts.len();
    let p = m.insert_part(at, vec![item]);
    Ok(Edit::new(
        At::Part(p),
        format!("a new last part with a row of table {name:?}, which the manifest does not list"),
    )
    .content_of(before))
}

fn unknown_binary(m: &mut Model, rng: &mut Rng, kind: BinKind) -> R<Edit> {
    let data = some_bytes(rng, 1, 20);
    let (item, label) = match kind {
        BinKind::Object => (
            obj(vec![
                ("kind", s("object")),
                ("bucket", s("files")),
                ("key", s("ghost.txt")),
                ("offset", n(0)),
                ("data", s(encode_base64(&data))),
            ]),
            "files/ghost.txt",
        ),
        BinKind::Payload => (
            obj(vec![
                ("kind", s("payload")),
                ("name", s("ghost-payload")),
                ("offset", n(0)),
                ("data", s(encode_base64(&data))),
            ]),
            "ghost-payload",
        ),
    };
    let at = m.parts.len();
    let p = m.insert_part(at, vec![item]);
    Ok(Edit::new(
        At::Part(p),
        format!(
            "a new last part with a chunk of {} {label:?}, which the manifest does not list",
            kind.word()
        ),
    ))
}

fn unknown_object(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    unknown_binary(m, rng, BinKind::Object)
}

fn unknown_payload(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    unknown_binary(m, rng, BinKind::Payload)
}

/// A new table with 1,001 rows in one part: more than the producer packs
/// (a warning).
fn part_row_count(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let i = m.add_plain_table("bulk")?;
    let name = m.typed().tables.get(i).need("no table")?.name.clone();
    let rows = ndarc_format::pack::MAX_PART_ROWS + 1;
    let items = (0..rows)
        .map(|k| {
            obj(vec![
                ("kind", s("row")),
                ("table", s(&name)),
                ("index", n(k as i64)),
                ("row", obj(vec![("x", s(format!("r{k}")))])),
                ("rowid", n(k as i64 + 1)),
            ])
        })
        .collect();
    let at = m.rows_at(&name);
    let p = m.insert_part(at, items);
    Ok(Edit::new(
        At::Part(p),
        format!("a new table {name:?} with {rows} rows in one part: more than the producer packs (a warning)"),
    ))
}

// ------------------------------------------------------------- fixtures

/// Item `i` of line `k`.
fn item(r: &mut Recs, k: usize, i: usize) -> R<V> {
    r.at(k, &format!("/items/{i}")).cloned()
}

/// The parts of lines `from..to` moved `by` places to the left.
fn rotate(from: usize, to: usize, by: usize) -> impl FnOnce(&mut Recs) -> R<()> {
    move |r| {
        r.parts
            .get_mut(from - 1..to - 1)
            .ok_or("no such parts")?
            .rotate_left(by);
        r.renumber();
        Ok(())
    }
}

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    // A copy of item 0 of line `from` appended to line `to`.
    let copy = |to: usize, from: usize| {
        move |r: &mut Recs| {
            let it = item(r, from, 0)?;
            r.set(to, "/items/-", it)
        }
    };
    build(vec![
        c("part_index", 8, "/index")
            .note("the last part says index 7 where 6 is expected")
            .put("7"),
        c("part_index-from-one", 2, "/index")
            .note("parts numbered from 1")
            .with(|r| {
                for (i, p) in r.parts.iter_mut().enumerate() {
                    if let Value::Object(o) = p {
                        o.insert("index", n(i as i64 + 1));
                    }
                }
                Ok(())
            }),
        c("part_index-repeat", 3, "/index")
            .note("two parts say index 0 (the second holds the users rows)")
            .put("0"),
        c("empty_part", 9, "/items").add_part("[]"),
        c("mixed_part", 2, "/items/3")
            .note("a users row inside the part of notes rows (the users rows are also in their own part)")
            .with(copy(NOTES, USERS)),
        c("mixed_part-binaries", 4, "/items/1")
            .note("an object part holds a second item (a copy of the payload kv's chunk, which also has its own part)")
            .with(copy(GREET, fx::KV)),
        c("mixed_part-object-in-rows", 3, "/items/2").with(copy(USERS, GREET)),
        c("item_order", 7, "/items/0")
            .note("the payload kv cache before the last chunk of logo.bin: objects come before payloads")
            .with(rotate(LOGO1, fx::KV, 1)),
        c("item_order-rows-after-objects", 4, "/items/0")
            .note("the object greeting.txt before the rows of users: rows come first")
            .with(rotate(USERS, LOGO0, 1)),
        c("item_order-tables", 4, "/items/0")
            .note("rows of notes, users, then notes again (notes cut into two parts)")
            .with(|r| r.split(NOTES, 2))
            .with(rotate(USERS, LOGO0, 1)),
        c("item_order-objects", 6, "/items/0")
            .note("logo.bin's chunks before greeting.txt: objects come in manifest order")
            .with(rotate(GREET, fx::KVC, 1)),
        c("unknown_table", 9, "/items/0/table")
            .add_part(r#"[{"kind":"row","table":"ghosts","index":0,"rowid":1,"row":{"x":1}}]"#),
        c("unknown_table-case", 9, "/items/0/table")
            .note("rows name a table as USERS; names in rows match the manifest exactly")
            .add_part(r#"[{"kind":"row","table":"USERS","index":2,"row":{"id":9,"name":"Eve","avatar":null,"score":0}}]"#),
        c("unknown_object", 9, "/items/0")
            .add_part(r#"[{"kind":"object","bucket":"files","key":"ghost.txt","offset":0,"data":"Ym9v"}]"#),
        c("unknown_payload", 9, "/items/0")
            .add_part(r#"[{"kind":"payload","name":"kv2","offset":0,"data":"e30="}]"#),
        c("part_row_count", 2, "/items/1000")
            .note("1,001 rows of notes in one part; the producer packs at most 1,000 rows a part (nextItems)")
            .with(|r| {
                let rows = (0..1001)
                    .map(|i| {
                        fx::j(&format!(
                            r#"{{"kind":"row","table":"notes","index":{i},"rowid":{},"row":{{"body":"r{i}","user_id":null}}}}"#,
                            i + 1
                        ))
                    })
                    .collect::<R<_>>()?;
                r.set(NOTES, "/items", Value::Array(rows))
            }),
    ])
}
