"""ndarc.verify, Report, Finding, the exceptions."""

import io
import json

import pytest

import ndarc
from conftest import TESTDATA, sidecars

WARNING_CODES = {"missing_dependency", "row_key_order", "default_excluded_table",
                 "part_row_count", "chunk_size"}


def options_of(sidecar):
    o = sidecar.get("options", {})
    return {
        "max_line_bytes": o.get("max_line"),
        "max_manifest_bytes": o.get("max_manifest_line"),
        "accept_formats": o.get("formats"),
        "policy": o.get("policy"),
        "integrity": o.get("integrity", False),
    }


@pytest.mark.parametrize("path", sorted((TESTDATA / "valid").glob("*.ndjson")), ids=lambda p: p.stem)
def test_every_valid_fixture_is_valid_strictly(path):
    r = ndarc.verify(path, strict=True)
    assert r.valid, r.findings
    assert (r.errors, r.warnings, r.findings) == (0, 0, [])
    assert r.content_hash and r.archive_hash


@pytest.mark.parametrize("path,sidecar", sidecars(), ids=lambda x: getattr(x, "stem", ""))
def test_every_invalid_fixture_gives_its_code(path, sidecar):
    r = ndarc.verify(path, **options_of(sidecar))
    hits = [f for f in r.findings if f.code == sidecar["code"] and f.line == sidecar["line"]]
    assert hits, f"{path.name}: want {sidecar['code']} at line {sidecar['line']}, got {r.findings}"
    f = hits[0]
    if "pointer" in sidecar:
        assert f.pointer == sidecar["pointer"]
    if "offset" in sidecar:
        assert f.offset == sidecar["offset"]
    if sidecar["code"] in WARNING_CODES:
        assert f.severity == "warning"
        assert r.valid and r.errors == 0
        assert not ndarc.verify(path, strict=True, **options_of(sidecar)).valid
    else:
        assert f.severity == "error"
        assert not r.valid and r.errors >= 1
        assert r.receipt() is None


def test_bytes_and_file_objects_give_the_path_report():
    path = TESTDATA / "invalid" / "content_hash_mismatch.ndjson"
    data = path.read_bytes()
    want = ndarc.verify(path).to_dict()
    for src in (data, bytearray(data), memoryview(data), io.BytesIO(data), open(path, "rb")):
        got = ndarc.verify(src).to_dict()
        for k in ("valid", "errors", "warnings", "findings", "contentHash", "archiveHash"):
            assert got[k] == want[k], (type(src), k)


def test_report_matches_the_cli_json(cli):
    path = TESTDATA / "invalid" / "row_type.ndjson"
    doc = json.loads(cli("verify", "--format", "json", path).stdout)["files"][0]
    got = ndarc.verify(path).to_dict()
    for k in ("valid", "errors", "warnings", "stopped", "findings", "bytes", "lines", "parts",
              "contentHash", "archiveHash"):
        assert got[k] == doc[k], k
    f = ndarc.verify(path).findings[0]
    assert (f.code, f.severity, f.line, f.offset, f.pointer, f.message) == tuple(
        doc["findings"][0][k] for k in ("code", "severity", "line", "offset", "pointer", "message"))
    assert f.code in str(f) and "Finding(" in repr(f)


def test_receipt_is_what_the_cli_writes(cli, tmp_path):
    path = TESTDATA / "valid" / "binaries.ndjson"
    r = ndarc.verify(path)
    receipt = r.receipt()
    assert receipt["contentHash"] == r.content_hash
    assert receipt["archiveHash"] == r.archive_hash
    cli("verify", "--receipt", tmp_path / "r.json", path)
    want = json.loads((tmp_path / "r.json").read_bytes())
    # The `ndarc` member records when it was checked.
    want.pop("ndarc"), receipt.pop("ndarc")
    assert receipt == want


def test_a_database_is_packed_and_verified(cli, tmp_path):
    db = tmp_path / "base.db"
    cli("unpack", TESTDATA / "valid" / "cells.ndjson", "-o", db)
    r = ndarc.verify(db)
    assert r.valid and r.parts > 0, r.findings
    # A database pack refuses (dates as text in a DATETIME column) is an error.
    with pytest.raises(ndarc.Error, match="row_type"):
        ndarc.verify(TESTDATA / "sqlite" / "chinook.db")


def test_policy_as_dict_path_or_bytes(tmp_path):
    base = TESTDATA / "valid" / "base.ndjson"
    policy = {"contentHash": "0" * 64}
    (tmp_path / "p.json").write_text(json.dumps(policy))
    for p in (policy, tmp_path / "p.json", str(tmp_path / "p.json"), json.dumps(policy).encode()):
        r = ndarc.verify(base, policy=p)
        assert [f.code for f in r.findings] == ["policy_content_hash"], p
    assert ndarc.verify(base, policy={}).valid


def test_limits_and_max_errors():
    path = TESTDATA / "valid" / "base.ndjson"
    r = ndarc.verify(path, max_line_bytes=100)
    assert "line_too_long" in [f.code for f in r.findings]
    r = ndarc.verify(path, max_manifest_bytes=100)
    assert [f.code for f in r.findings] == ["line_too_long"]
    r = ndarc.verify(path, accept_formats=["something-else"])
    assert not r.valid
    r = ndarc.verify(TESTDATA / "invalid" / "row_type.ndjson", max_errors=1, jobs=1)
    assert len(r.findings) == 1


@pytest.mark.parametrize("bad,exc", [
    (dict(source=12), ndarc.UsageError),
    (dict(source="/nonexistent/archive.ndjson"), ndarc.Error),
    (dict(source=str(TESTDATA)), ndarc.Error),
    (dict(source=io.StringIO("text")), ndarc.Error),
    (dict(source=b"", jobs=0), ndarc.UsageError),
    (dict(source=b"", max_errors=0), ndarc.UsageError),
    (dict(source=b"", max_line_bytes=-1), ndarc.UsageError),
    (dict(source=b"", accept_formats=[]), ndarc.UsageError),
    (dict(source=b"", policy={"contentHash": "nothex"}), ndarc.UsageError),
    (dict(source=b"", policy=b"{not json"), ndarc.UsageError),
    (dict(source=b"", policy=3), ndarc.UsageError),
    (dict(source=b"", policy="/nonexistent/policy.json"), ndarc.Error),
])
def test_bad_input_raises(bad, exc):
    with pytest.raises(exc):
        ndarc.verify(**bad)


def test_an_empty_input_is_a_finding_not_an_exception():
    r = ndarc.verify(b"")
    assert [f.code for f in r.findings] == ["manifest_missing"]


def test_exception_hierarchy_and_no_panic_reaches_python():
    assert issubclass(ndarc.InvalidArchive, ndarc.Error)
    assert issubclass(ndarc.UsageError, ndarc.Error)
    with pytest.raises(ndarc.Error, match="internal error"):
        ndarc._ndarc._panic_for_test()


def test_integrity_checks_the_rows_against_their_foreign_keys():
    path = TESTDATA / "invalid" / "foreign_key_violation-both.ndjson"
    # The format alone allows the rows.
    assert ndarc.verify(path).valid
    r = ndarc.verify(path, integrity=True)
    assert not r.valid
    assert [(f.code, f.line, f.pointer) for f in r.findings] == [
        ("foreign_key_violation", 2, "/items/0/row/user_id"),
        ("foreign_key_violation", 2, "/items/2/row/user_id"),
    ]
    assert "user_id = 4" in r.findings[0].message
    assert ndarc.verify(TESTDATA / "valid" / "base.ndjson", integrity=True, strict=True).valid
