"""ndarc.diff: the JSON of `ndarc diff --format json`, with the CLI's filters."""

import json
import shutil

import pytest

import ndarc
from conftest import TESTDATA

DIFF = TESTDATA / "diff"


def cli_json(cli, *args):
    p = cli("diff", "--format", "json", *args)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("case", ["changes", "columns", "equal", "filters"])
def test_the_document_is_the_clis(case, cli):
    a, b = DIFF / case / "before.ndjson", DIFF / case / "after.ndjson"
    assert ndarc.diff(a, b) == cli_json(cli, a, b)
    assert ndarc.diff(a, b, stat=True) == cli_json(cli, "--stat", a, b)


FILTERS = [
    (dict(ignore_tables=["audit*"]), ["--ignore-table", "audit*"]),
    (dict(tables=["tags"]), ["--table", "tags"]),
    (dict(ignore_columns=["*.color"]), ["--ignore-column", "*.color"]),
    (dict(ignore_objects=["files/*"], ignore_payloads=["kv"]),
     ["--ignore-object", "files/*", "--ignore-payload", "kv"]),
    (dict(keys={"tags": ["label"]}), ["--key", "tags=label"]),
    (dict(keys_only=True), ["--keys-only"]),
    (dict(no_verify=True), ["--no-verify"]),
]


@pytest.mark.parametrize("kw,flags", FILTERS, ids=lambda x: str(x))
def test_filters_are_the_clis(kw, flags, cli):
    a, b = DIFF / "filters" / "before.ndjson", DIFF / "filters" / "after.ndjson"
    assert ndarc.diff(a, b, **kw) == cli_json(cli, *flags, a, b)


def test_generated_exports_and_bytes(gen, cli):
    a = gen("diff-a", "--seed", "7", "--rows", "50")
    b = gen("diff-b", "--seed", "7", "--later", "1", "--rows", "50")
    want = cli_json(cli, a, b)
    assert ndarc.diff(a, b) == want
    got = ndarc.diff(a.read_bytes(), b.read_bytes())
    assert got["tables"] == want["tables"] and got["equal"] == want["equal"] is False


def packed(d):
    """A diff document without what packing a database stamps on its side
    (the time of the export, so its archiveHash)."""
    for side in ("before", "after"):
        d[side].pop("exportedAt", None)
        d[side].pop("archiveHash", None)
    return d


def test_databases_are_packed_on_the_fly(cli, tmp_path):
    archive = TESTDATA / "valid" / "cells.ndjson"
    db, copy = tmp_path / "a.db", tmp_path / "b.db"
    cli("unpack", archive, "-o", db)
    shutil.copy(db, copy)
    d = ndarc.diff(db, copy)
    assert packed(d) == packed(cli_json(cli, db, copy))
    assert d["equal"] is True
    # A database against its archive: packed under the archive's header.
    d = ndarc.diff(archive, db)
    assert packed(d) == packed(cli_json(cli, archive, db))
    assert d["tables"] == []
    with pytest.raises(ndarc.Error, match="row_type"):
        ndarc.diff(TESTDATA / "sqlite" / "chinook.db", db)


def test_errors(tmp_path):
    base = TESTDATA / "valid" / "base.ndjson"
    with pytest.raises(ndarc.InvalidArchive) as e:
        ndarc.diff(base, TESTDATA / "invalid" / "row_type.ndjson")
    assert "row_type" in [f.code for f in e.value.report.findings]
    other = DIFF / "filters" / "before.ndjson"
    with pytest.raises(ndarc.UsageError, match="different products"):
        ndarc.diff(base, other)
    assert ndarc.diff(base, other, allow_product_mismatch=True)["equal"] is False
    with pytest.raises(ndarc.UsageError):
        ndarc.diff(base, base, ignore_columns=["nodot"])
    with pytest.raises(ndarc.UsageError):
        ndarc.diff(base, base, keys={"nosuchtable": ["x"]})
    with pytest.raises(ndarc.UsageError):
        ndarc.diff(base, base, keys={"notes": []})
    with pytest.raises(ndarc.UsageError):
        ndarc.diff(1, base)
    with pytest.raises(ndarc.UsageError):
        ndarc.diff(base, base, tables=[1])
    with pytest.raises(ndarc.Error):
        ndarc.diff(base, tmp_path / "missing.ndjson")
