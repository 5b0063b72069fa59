"""Fixtures of the ndarc Python test suite.

The tests compare the package with the `ndarc` command-line tool (the
reference): set NDARC_CLI to its path, else it is looked for in the
workspace's target directory (CARGO_TARGET_DIR or target/) and on PATH.
"""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
TESTDATA = ROOT / "testdata"


def _cli():
    env = os.environ.get("NDARC_CLI")
    if env:
        if not pathlib.Path(env).is_file():
            pytest.exit(f"NDARC_CLI={env}: no such file", returncode=2)
        return env
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("release", "debug"):
        p = target / profile / "ndarc"
        if p.is_file():
            return str(p)
    found = shutil.which("ndarc")
    if found:
        return found
    pytest.exit("the ndarc CLI was not found: build it (cargo build --release -p ndarc) "
                "or set NDARC_CLI", returncode=2)


@pytest.fixture(scope="session")
def cli():
    """Runs the CLI: cli(*args) -> CompletedProcess (bytes)."""
    exe = _cli()

    def run(*args, check=True):
        p = subprocess.run([exe, "--color", "never", *map(str, args)], capture_output=True)
        if check and p.returncode not in (0, 1):
            raise AssertionError(f"ndarc {' '.join(map(str, args))}: exit {p.returncode}: "
                                 f"{p.stderr.decode(errors='replace')}")
        return p

    return run


@pytest.fixture(scope="session")
def gen(cli, tmp_path_factory):
    """gen(name, *args) -> the path of an archive `ndarc gen` writes."""
    d = tmp_path_factory.mktemp("gen")
    made = {}

    def make(name, *args):
        if name not in made:
            out = d / f"{name}.ndjson"
            cli("gen", *args, "-o", out)
            made[name] = out
        return made[name]

    return make


def sidecars():
    """(archive, sidecar dict) of every testdata/invalid fixture."""
    out = []
    for f in sorted((TESTDATA / "invalid").glob("*.ndjson")):
        out.append((f, json.loads(f.with_suffix(".json").read_text())))
    return out
