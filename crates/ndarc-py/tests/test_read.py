"""ndarc.open: manifest, rows, Arrow, object and payload bytes, against
what `ndarc unpack` restores."""

import os
import sqlite3
import time

import pytest

import ndarc
from conftest import TESTDATA

VALID = sorted((TESTDATA / "valid").glob("*.ndjson"))


@pytest.fixture(scope="module")
def archives(gen):
    out = [p for p in VALID]
    out.append(gen("features", "--seed", "1", "--rows", "40", "--part-bytes", "4KiB"))
    out.append(gen("narrow", "--shape", "narrow", "--seed", "2", "--rows", "300",
                   "--part-bytes", "8KiB"))
    return out


def restored(cli, archive, tmp_path):
    """The database and objects directory `ndarc unpack` restores (None
    when an object cannot be written as a file, such as an empty key)."""
    db = tmp_path / (archive.stem + ".db")
    objects = tmp_path / (archive.stem + ".objects")
    if cli("unpack", archive, "-o", db, "--objects-dir", objects).returncode == 0:
        return db, objects
    cli("unpack", archive, "-o", db)
    return db, None


def row_columns(archive, table):
    t = archive.tables[table]
    excluded = set(archive.manifest.get("excludedColumns", {}).get(table, []))
    return [c["name"] for c in t["columns"] if not c.get("generated") and c["name"] not in excluded]


def q(name):
    return '"' + name.replace('"', '""') + '"'


def db_rows(db, archive, table):
    t = archive.tables[table]
    cols = row_columns(archive, table)
    alias = t.get("rowidAlias")
    names = ([alias] if alias else []) + cols
    sel = ([alias] if alias else []) + [q(c) for c in cols]
    order = f" ORDER BY {alias}" if alias else ""
    with sqlite3.connect(db) as conn:
        got = conn.execute(f"SELECT {', '.join(sel)} FROM {q(table)}{order}").fetchall()
    return [dict(zip(names, r)) for r in got]


def sort_key(row):
    return tuple((type(v).__name__, 0 if v is None else v) for v in row.values())


def test_rows_are_the_rows_unpack_restores(archives, cli, tmp_path):
    tables = 0
    for path in archives:
        db, _ = restored(cli, path, tmp_path)
        with ndarc.open(path) as a:
            for table, entry in a.tables.items():
                got = list(a.rows(table))
                want = db_rows(db, a, table)
                assert len(got) == entry["count"] == len(want), (path.name, table)
                for g in got:
                    assert list(g) == list(want[0]) if want else True
                if entry.get("rowidAlias"):
                    assert got == want, (path.name, table)
                else:
                    assert sorted(got, key=sort_key) == sorted(want, key=sort_key), (path.name, table)
                # Types too (1 == 1.0 in Python).
                assert [[type(v) for v in r.values()] for r in sorted(got, key=sort_key)] == \
                    [[type(v) for v in r.values()] for r in sorted(want, key=sort_key)], (path.name, table)
                tables += 1
    assert tables > 20


def test_objects_and_payloads_are_the_bytes_unpack_writes(archives, cli, tmp_path):
    n = 0
    for path in archives:
        _, objects = restored(cli, path, tmp_path)
        if objects is None:
            continue
        a = ndarc.open(path)
        for o in a.objects:
            want = (objects / "objects" / o["bucket"] / o["key"]).read_bytes()
            assert a.object_bytes(o["bucket"], o["key"]) == want
            assert len(want) == o["size"]
            n += 1
        for name, p in a.payloads.items():
            assert a.payload_bytes(name) == (objects / "payloads" / name).read_bytes()
            n += 1
    assert n > 10


def test_manifest_members():
    a = ndarc.open(TESTDATA / "valid" / "base.ndjson")
    assert a.manifest["kind"] == "manifest"
    assert sorted(a.tables) == ["notes", "users"]
    assert a.tables["users"]["count"] == 2
    assert [(o["bucket"], o["key"]) for o in a.objects] == [("files", "greeting.txt"), ("files", "logo.bin")]
    assert list(a.payloads) == ["kv cache", "kv"]
    assert a.verify().valid
    assert "base.ndjson" in repr(a)
    # Table names are matched ignoring ASCII case, as SQLite's are.
    assert list(a.rows("USERS")) == list(a.rows("users"))


def test_rows_of_an_invalid_archive_raise_at_the_first_finding():
    # The closing's contentHash is wrong: every row is yielded, then the
    # end is an InvalidArchive, not StopIteration.
    a = ndarc.open(TESTDATA / "invalid" / "content_hash_mismatch.ndjson")
    got = []
    with pytest.raises(ndarc.InvalidArchive) as e:
        for r in a.rows("notes"):
            got.append(r)
    assert len(got) == 3
    assert "content_hash_mismatch" in [f.code for f in e.value.report.findings]
    # A row that breaks a rule is never yielded.
    a = ndarc.open(TESTDATA / "invalid" / "row_type.ndjson")
    with pytest.raises(ndarc.InvalidArchive) as e:
        for t in a.tables:
            list(a.rows(t))
    assert "row_type" in [f.code for f in e.value.report.findings]
    with pytest.raises(ndarc.InvalidArchive):
        a.object_bytes("files", "greeting.txt")
    with pytest.raises(ndarc.InvalidArchive):
        a.payload_bytes("kv")


def threads():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_dropping_the_iterator_stops_the_reading(gen):
    path = gen("drop", "--tables", "3", "--rows", "20000", "--part-bytes", "64KiB")
    a = ndarc.open(path, jobs=1)
    table = next(t for t, e in a.tables.items() if e["count"] > 1000)
    before = threads()
    it = a.rows(table)
    next(it)
    assert threads() > before
    del it
    deadline = time.monotonic() + 30
    while threads() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threads() == before
    # The next read starts afresh.
    assert sum(1 for _ in a.rows(table)) == a.tables[table]["count"]


def test_bad_input_raises(tmp_path):
    with pytest.raises(ndarc.Error):
        ndarc.open(tmp_path / "missing.ndjson")
    with pytest.raises(ndarc.Error):
        ndarc.open(tmp_path)
    with pytest.raises(ndarc.UsageError):
        ndarc.open(12)
    with pytest.raises(ndarc.InvalidArchive) as e:
        ndarc.open(TESTDATA / "invalid" / "json_syntax-literal.ndjson")
    assert e.value.report.findings[0].code == "json_syntax"
    (tmp_path / "empty.ndjson").write_bytes(b"")
    with pytest.raises(ndarc.InvalidArchive):
        ndarc.open(tmp_path / "empty.ndjson")
    with pytest.raises(ndarc.InvalidArchive):
        ndarc.open(TESTDATA / "valid" / "base.ndjson", max_manifest_bytes=10)
    a = ndarc.open(TESTDATA / "valid" / "base.ndjson")
    for call in (lambda: a.rows("nope"), lambda: a.rows(3), lambda: a.object_bytes("files", "nope"),
                 lambda: a.payload_bytes("nope"), lambda: a.to_arrow_batches("nope")):
        with pytest.raises(ndarc.UsageError):
            call()
    # The file replaced after open: what is asked for is looked for again.
    p = tmp_path / "swap.ndjson"
    p.write_bytes((TESTDATA / "valid" / "base.ndjson").read_bytes())
    a = ndarc.open(p)
    p.write_bytes((TESTDATA / "valid" / "minimal.ndjson").read_bytes())
    with pytest.raises(ndarc.UsageError, match="no table"):
        list(a.rows("users"))
