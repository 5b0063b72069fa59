"""The GIL is released while ndarc works.

A structural check, not a timing one: while one thread verifies a large
archive, the main thread keeps running Python code. Were the GIL held for
the verification, the main thread would run only around the call (a switch
interval or two); released, it runs throughout. The main thread's loop is
measured against its own rate alone, so a loaded machine slows both alike.
"""

import sys
import threading
import time

import pytest

import ndarc


@pytest.fixture(scope="module")
def big(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("gil") / "big.ndjson"
    cli("gen", "--shape", "narrow", "--rows", "60000", "--part-bytes", "1M", "-o", path)
    yield path
    path.unlink()


def loop_rate():
    """Iterations of the watch loop per second, alone."""
    flag = threading.Event()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.05:
        for _ in range(1000):
            if flag.is_set():
                break
            n += 1
    return n / (time.perf_counter() - t0)


def ticks_during(call):
    """Runs call() on a thread; returns (loop iterations of this thread
    meanwhile, the call's wall time, its result)."""
    done = threading.Event()
    out = {}

    def work():
        t0 = time.perf_counter()
        out["result"] = call()
        out["seconds"] = time.perf_counter() - t0
        done.set()

    t = threading.Thread(target=work)
    n = 0
    t.start()
    while not done.is_set():
        n += 1
    t.join()
    return n, out["seconds"], out["result"]


def test_verify_releases_the_gil(big):
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        rate = loop_rate()
        n, seconds, report = ticks_during(lambda: ndarc.verify(big, jobs=1))
    finally:
        sys.setswitchinterval(old)
    assert report.valid
    assert seconds > 0.05, "the archive is too small for this check"
    # Held, the loop would have run for a few milliseconds at most.
    assert n >= 0.1 * rate * seconds, (n, rate, seconds)


def test_reading_rows_releases_the_gil_between_batches(big):
    a = ndarc.open(big, jobs=1)
    table = max(a.tables, key=lambda t: a.tables[t]["count"])
    n, seconds, count = ticks_during(lambda: sum(1 for _ in a.rows(table)))
    assert count == a.tables[table]["count"]
    assert n > 0


def test_two_threads_verify_at_once(big):
    results = []
    threads = [threading.Thread(target=lambda: results.append(ndarc.verify(big, jobs=1)))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2 and all(r.valid for r in results)
    assert results[0].content_hash == results[1].content_hash
