#!/usr/bin/env python3
"""Builds the fixtures of `ndarc unpack` and of `ndarc pack`'s unreadable
databases (testdata/README.md, "Restoring" and "Databases pack cannot read"):

    python3 scripts/make-sqlite-fixtures.py

- testdata/sqlite/unpack/<code>[-<variant>].ndjson: an archive `unpack`
  fails on with <code>, and beside it <name>.json saying how to run it;
- testdata/sqlite/unreadable/<code>.db (+ .json): a file `pack` cannot read.

Python 3.8+, standard library only, deterministic. The archives are sealed
with scripts/make-corpus.py's code (its `Archive`), so every one verifies
except `invalid_archive`.
"""

import importlib.util
import json
import os
import sqlite3
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNPACK = os.path.join(ROOT, "testdata", "sqlite", "unpack")
UNREADABLE = os.path.join(ROOT, "testdata", "sqlite", "unreadable")

_spec = importlib.util.spec_from_file_location("corpus", os.path.join(ROOT, "scripts", "make-corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)
col, Archive = corpus.col, corpus.Archive


def table(name, sql, columns, rows, **extra):
    t = {"name": name, "sql": sql, "columns": columns, "rows": rows}
    t.update(extra)
    return t


def notes(rows=None):
    return table("notes", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)",
                 [col("id", "INTEGER", pk=1), col("body", "TEXT")],
                 rows if rows is not None else [{"row": {"id": 1, "body": "hello"}}])


def archive(tables=(), objects=(), payloads=()):
    return {"product": "fixture", "tables": list(tables), "objects": list(objects),
            "payloads": list(payloads)}


GREETING = {"bucket": "files", "key": "greeting.txt", "data": b"hello, world\n"}

# name -> (spec, sidecar). A sidecar: `code`, `exit`, `args` (after
# `unpack ARCHIVE -o OUT.db`; `{dir}` is a fresh directory), `before`
# (entries made first, relative to the run's directory: `{"path", "file":
# TEXT}` or `{"path", "symlink": TARGET}`; `out.db` is the output), `note`.
CASES = {
    "table_sql_rejected": (
        archive([table("t", "CREATE TABLE t(a TEXT,", [col("a", "TEXT")], [])]),
        {"code": "table_sql_rejected", "exit": 1,
         "note": "the table's sql is a syntax error: SQLite rejects it"}),
    "table_sql_rejected-duplicate-column": (
        archive([table("t", "CREATE TABLE t(a TEXT, A TEXT)", [col("a", "TEXT")], [])]),
        {"code": "table_sql_rejected", "exit": 1,
         "note": "the sql names column a twice (A): SQLite rejects it"}),
    "table_sql_mismatch": (
        archive([table("t", "CREATE TABLE t(a TEXT, b INTEGER)",
                       [col("a", "TEXT"), col("c", "INTEGER")], [])]),
        {"code": "table_sql_mismatch", "exit": 1,
         "note": "the sql creates columns a, b; the manifest says a, c"}),
    "table_sql_mismatch-notnull": (
        archive([table("t", "CREATE TABLE t(a TEXT NOT NULL)", [col("a", "TEXT")], [])]),
        {"code": "table_sql_mismatch", "exit": 1,
         "note": "the sql makes a NOT NULL; the manifest says notnull 0"}),
    "row_rejected": (
        archive([table("t", "CREATE TABLE t(a INTEGER CHECK (a > 0))", [col("a", "INTEGER")],
                       [{"rowid": 1, "row": {"a": 1}}, {"rowid": 2, "row": {"a": -1}}])]),
        {"code": "row_rejected", "exit": 1,
         "note": "the second row breaks the table's CHECK constraint"}),
    "row_rejected-unique": (
        archive([table("t", "CREATE TABLE t(a TEXT UNIQUE)", [col("a", "TEXT")],
                       [{"rowid": 1, "row": {"a": "x"}}, {"rowid": 2, "row": {"a": "x"}}])]),
        {"code": "row_rejected", "exit": 1,
         "note": "two rows with the same value in a UNIQUE column (not the primary key)"}),
    "unsafe_path": (
        archive([notes()], [dict(GREETING, key="../escape.txt")]),
        {"code": "unsafe_path", "exit": 1, "args": ["--objects-dir", "{dir}"],
         "note": "an object key with a '..' segment would leave the objects directory"}),
    "unsafe_path-absolute": (
        archive([notes()], [dict(GREETING, key="/tmp/escape.txt")]),
        {"code": "unsafe_path", "exit": 1, "args": ["--objects-dir", "{dir}"],
         "note": "an object key that is an absolute path"}),
    "unsafe_path-payload": (
        archive([notes()], [], [{"name": "..", "data": b"{}"}]),
        {"code": "unsafe_path", "exit": 1, "args": ["--objects-dir", "{dir}"],
         "note": "a payload named '..'"}),
    "unsafe_path-symlink": (
        archive([notes()], [dict(GREETING, key="sub/greeting.txt")]),
        {"code": "unsafe_path", "exit": 1, "args": ["--objects-dir", "{dir}"],
         "before": [{"path": "dir/objects/files/sub", "symlink": "."}],
         "note": "a symbolic link already on the key's way in the objects directory"}),
    "output_exists": (
        archive([notes()]),
        {"code": "output_exists", "exit": 2, "before": [{"path": "out.db", "file": "keep"}],
         "note": "the output database exists and --force is not given: it is kept"}),
    "output_exists-object": (
        archive([notes()], [GREETING]),
        {"code": "output_exists", "exit": 2, "args": ["--objects-dir", "{dir}"],
         "before": [{"path": "dir/objects/files/greeting.txt", "file": "keep"}],
         "note": "an object file exists and --force is not given: it is kept"}),
    "invalid_archive": (
        archive([notes()]),
        {"code": "invalid_archive", "exit": 1, "break": "contentHash",
         "note": "the closing line's contentHash is wrong: unpack verifies first"}),
}


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def sidecar(path, side):
    side = {k: v for k, v in side.items() if k != "break"}
    write(path, (json.dumps(side, indent=2, sort_keys=True) + "\n").encode())


def build_unpack():
    os.makedirs(UNPACK, exist_ok=True)
    for f in os.listdir(UNPACK):
        os.remove(os.path.join(UNPACK, f))
    for name, (spec, side) in CASES.items():
        assert name == side["code"] or name.startswith(side["code"] + "-"), name
        a = Archive(spec)
        if side.get("break") == "contentHash":
            data = a.render(closing=lambda c: c.update(contentHash="0" * 64))
        else:
            data = a.render()
        write(os.path.join(UNPACK, name + ".ndjson"), data)
        sidecar(os.path.join(UNPACK, name + ".json"), side)


def build_unreadable():
    os.makedirs(UNREADABLE, exist_ok=True)
    for f in os.listdir(UNREADABLE):
        os.remove(os.path.join(UNREADABLE, f))
    write(os.path.join(UNREADABLE, "not_a_database.db"),
          b'{"kind":"manifest"}\n')
    sidecar(os.path.join(UNREADABLE, "not_a_database.json"),
            {"code": "not_a_database", "exit": 2,
             "note": "an archive line, not a SQLite file (no 'SQLite format 3' header)"})
    # A valid database (page size 512, one table over several pages) with
    # its third page overwritten: the header is intact, the b-tree is not.
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "x.db")
        c = sqlite3.connect(p)
        c.executescript("PRAGMA page_size=512; PRAGMA journal_mode=DELETE; CREATE TABLE t(a TEXT);")
        c.executemany("INSERT INTO t VALUES (?)", [("%0100d" % i,) for i in range(40)])
        c.commit()
        c.close()
        with open(p, "rb") as f:
            b = bytearray(f.read())
    assert len(b) >= 512 * 4, len(b)
    b[512 * 2:512 * 3] = b"\xff" * 512
    write(os.path.join(UNREADABLE, "database_corrupt.db"), bytes(b))
    sidecar(os.path.join(UNREADABLE, "database_corrupt.json"),
            {"code": "database_corrupt", "exit": 2,
             "note": "a SQLite file (page size 512) whose third page, a b-tree page of table t, is all 0xFF"})


def main():
    build_unpack()
    build_unreadable()


if __name__ == "__main__":
    main()
