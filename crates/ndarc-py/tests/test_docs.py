"""The examples in the package's docstrings run (from the repository root,
where they find testdata/)."""

import doctest

import ndarc
from conftest import ROOT


def test_docstring_examples(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testmod(ndarc, globs={"ndarc": ndarc}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted >= 10
