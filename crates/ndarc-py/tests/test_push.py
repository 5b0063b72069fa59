"""ndarc.PushVerifier: parts in any order, retries, conflicts, the end."""

import pytest

import ndarc
from conftest import TESTDATA


def lines(name="base"):
    return (TESTDATA / "valid" / f"{name}.ndjson").read_bytes().splitlines()


def test_parts_in_any_order_give_the_file_report():
    ls = lines()
    want = ndarc.verify(TESTDATA / "valid" / "base.ndjson")
    v = ndarc.PushVerifier(ls[0])
    parts = ls[1:-1]
    order = list(range(len(parts)))[::2] + list(range(len(parts)))[1::2]
    for i in order:
        out = v.feed_part(parts[i] + b"\n")
        assert out.status == "accepted" and out.accepted and out.findings == []
    assert v.missing == []
    r = v.finish(ls[-1])
    assert r.valid, r.findings
    assert (r.content_hash, r.archive_hash) == (want.content_hash, want.archive_hash)


def test_retries_conflicts_rejections_and_missing_parts():
    ls = lines()
    v = ndarc.PushVerifier(ls[0])
    assert v.feed_part(ls[1]).status == "accepted"
    assert v.feed_part(ls[1]).status == "duplicate"
    conflict = v.feed_part(ls[2], index=0)
    assert conflict.status == "rejected" and not conflict.accepted
    assert [f.code for f in conflict.findings] == ["part_conflict"]
    bad = v.feed_part(b'{"kind":"part","index":1,"items":[]}')
    assert bad.status == "rejected"
    assert "empty_part" in [f.code for f in bad.findings]
    assert v.missing == list(range(1, len(ls) - 2))
    r = v.finish(ls[-1])
    assert not r.valid
    assert "part_missing" in [f.code for f in r.findings]
    with pytest.raises(ndarc.UsageError):
        v.finish(ls[-1])
    with pytest.raises(ndarc.UsageError):
        v.feed_part(ls[1])


def test_rows_out_of_key_order_are_reread_for_duplicates():
    path = TESTDATA / "invalid" / "row_key_order.ndjson"
    ls = path.read_bytes().splitlines()
    v = ndarc.PushVerifier(ls[0])
    for p in reversed(ls[1:-1]):
        assert v.feed_part(p).accepted
    r = v.finish(ls[-1])
    want = ndarc.verify(path)
    assert [f.code for f in r.findings] == [f.code for f in want.findings]
    assert r.valid == want.valid


@pytest.mark.parametrize("manifest", [b"", b"not json", b'{"kind":"part"}'])
def test_a_bad_manifest_raises_invalid_archive(manifest):
    with pytest.raises(ndarc.InvalidArchive) as e:
        ndarc.PushVerifier(manifest)
    assert e.value.report.errors >= 1 and e.value.report.findings
    assert not e.value.report.valid


def test_bad_arguments():
    with pytest.raises(ndarc.UsageError):
        ndarc.PushVerifier(42)
    v = ndarc.PushVerifier(lines()[0])
    with pytest.raises(ndarc.UsageError):
        v.feed_part(None)
