"""Archive.to_arrow / to_arrow_batches: pyarrow tables typed by affinity,
whose values are the rows'."""

import pytest

import ndarc
from conftest import TESTDATA

pa = pytest.importorskip("pyarrow")

TYPES = {"INTEGER": pa.int64(), "NUMBER": pa.float64(), "TEXT": pa.large_string(),
         "BLOB": pa.large_binary()}


def as_arrow(v, typ):
    """A row's value as the Arrow column of its affinity holds it."""
    if v is None:
        return None
    if typ == pa.float64():
        return float(v)
    if typ == pa.large_binary():
        if isinstance(v, str):
            return v.encode()
        if isinstance(v, (int, float)):
            return ndarc.canonical(v)
    return v


@pytest.fixture(scope="module")
def archives(gen):
    return sorted((TESTDATA / "valid").glob("*.ndjson")) + [
        gen("arrow-features", "--seed", "3", "--rows", "60", "--part-bytes", "4KiB"),
        gen("arrow-narrow", "--shape", "narrow", "--seed", "4", "--rows", "500"),
    ]


def test_arrow_values_equal_the_rows(archives):
    n = 0
    for path in archives:
        a = ndarc.open(path)
        for table in a.tables:
            t = a.to_arrow(table)
            rows = list(a.rows(table))
            assert t.num_rows == len(rows) == a.tables[table]["count"]
            assert t.column_names == (list(rows[0]) if rows else t.column_names)
            want = [{k: as_arrow(v, t.schema.field(k).type) for k, v in r.items()} for r in rows]
            assert t.to_pylist() == want, (path.name, table)
            n += 1
    assert n > 20


def test_types_follow_affinity():
    a = ndarc.open(TESTDATA / "valid" / "cells.ndjson")
    for table, entry in a.tables.items():
        schema = a.to_arrow(table).schema
        if entry.get("rowidAlias"):
            assert schema.field(entry["rowidAlias"]).type == pa.int64()
        for c in entry["columns"]:
            if c["name"] not in schema.names:
                continue
            t = c["type"].upper()
            aff = ("INTEGER" if "INT" in t else "TEXT" if any(w in t for w in ("CHAR", "CLOB", "TEXT"))
                   else "BLOB" if t == "" or "BLOB" in t else "NUMBER")
            assert schema.field(c["name"]).type == TYPES[aff], (table, c)


def test_batches_stream_and_an_empty_table_has_its_schema(gen):
    path = gen("arrow-batches", "--tables", "2", "--rows", "70000", "--part-bytes", "256KiB")
    a = ndarc.open(path)
    table = max(a.tables, key=lambda t: a.tables[t]["count"])
    batches = list(a.to_arrow_batches(table))
    assert len(batches) >= 2
    assert sum(b.num_rows for b in batches) == a.tables[table]["count"]
    # Whole parts (at most 1,000 rows each here) up to 65,536 rows a batch.
    assert all(b.num_rows < 65536 + 1000 for b in batches)
    e = ndarc.open(TESTDATA / "valid" / "empty-table.ndjson")
    empty = [t for t, x in e.tables.items() if x["count"] == 0][0]
    t = e.to_arrow(empty)
    assert t.num_rows == 0 and t.num_columns > 0


def test_an_invalid_archive_raises():
    a = ndarc.open(TESTDATA / "invalid" / "content_hash_mismatch.ndjson")
    with pytest.raises(ndarc.InvalidArchive):
        a.to_arrow("notes")
