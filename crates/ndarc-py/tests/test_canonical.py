"""ndarc.canonical and ndarc.is_canonical, against `ndarc canon`."""

import json
import math

import pytest

import ndarc

CASES = [
    {"b": 1.0, "a": [1e21, "é", None, True]},
    {"\u20ac": 1, "\U0001f600": 2, "a": 3, "\u00e9": 4},
    [0.1, 1e-7, -0.0, 2**53, 123456789012345680000, 5e-324],
    "line\u2028sep \x00 \x7f",
    {"nested": {"z": [], "y": {}}},
]


@pytest.mark.parametrize("obj", CASES)
def test_canonical_is_what_the_cli_writes(obj, cli, tmp_path):
    f = tmp_path / "in.json"
    f.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    want = cli("canon", "--input", "json", f).stdout.rstrip(b"\n")
    got = ndarc.canonical(obj)
    assert got == want
    assert ndarc.is_canonical(got)
    assert ndarc.canonical(json.dumps(obj, indent=2).encode()) == want


def test_is_canonical():
    assert ndarc.is_canonical(b'{"a":1,"b":[2]}')
    assert not ndarc.is_canonical(b'{"b":1,"a":2}')
    assert not ndarc.is_canonical(b'{"a": 1}')
    assert not ndarc.is_canonical(b"1.0")
    assert not ndarc.is_canonical(b"{not json")
    assert not ndarc.is_canonical(b'{"a":1,"a":1}')


@pytest.mark.parametrize("bad", [math.nan, math.inf, {1j: 2}, object(), b"{oops", b'{"a":1,"a":2}'])
def test_canonical_refuses_what_is_not_json(bad):
    with pytest.raises(ndarc.UsageError):
        ndarc.canonical(bad)


def test_is_canonical_takes_bytes():
    with pytest.raises(ndarc.UsageError):
        ndarc.is_canonical('{"a":1}')
