"""Verify, diff and read portability archives from Python.

The same rules, findings and speed as the ``ndarc`` command-line tool: the
work is done by its Rust crates, with the GIL released.

>>> import ndarc
>>> report = ndarc.verify("testdata/valid/example.ndjson")
>>> report.valid, report.content_hash[:8]
(True, '6d5f3006')
>>> with ndarc.open("testdata/valid/example.ndjson") as archive:
...     sorted(archive.tables)
['notes', 'users']
>>> ndarc.canonical({"b": 1.0, "a": [1e21, "é"]})
b'{"a":[1e+21,"\\xc3\\xa9"],"b":1}'
"""

from __future__ import annotations

import json as _json
import os as _os
from typing import (
    IO,
    Any,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Union,
)

from . import _ndarc
from ._ndarc import (
    Error,
    Finding,
    InvalidArchive,
    PartOutcome,
    Report,
    UsageError,
)

__all__ = [
    "Archive",
    "Error",
    "Finding",
    "InvalidArchive",
    "PartOutcome",
    "PushVerifier",
    "Report",
    "UsageError",
    "canonical",
    "diff",
    "is_canonical",
    "open",
    "verify",
]

__version__ = "0.1.0"

PathLike = Union[str, "_os.PathLike[str]"]
Policy = Union[Mapping[str, Any], PathLike, bytes]

# The largest policy file read, as `ndarc verify --policy` (16 MiB).
_MAX_POLICY_BYTES = 16 << 20


def _policy_bytes(policy: Optional[Policy]) -> Optional[bytes]:
    if policy is None:
        return None
    if isinstance(policy, (bytes, bytearray)):
        return bytes(policy)
    if isinstance(policy, Mapping):
        try:
            return _json.dumps(policy, ensure_ascii=False, allow_nan=False).encode()
        except (TypeError, ValueError) as e:
            raise UsageError(f"policy: not JSON: {e}") from None
    if isinstance(policy, (str, _os.PathLike)):
        path = _os.fspath(policy)
        try:
            with builtins_open(path, "rb") as f:
                data = f.read(_MAX_POLICY_BYTES + 1)
        except OSError as e:
            raise Error(f"cannot read policy {path}: {e.strerror or e}") from None
        if len(data) > _MAX_POLICY_BYTES:
            raise UsageError(f"policy {path}: larger than 16 MiB; a policy is a small JSON file")
        return data
    raise UsageError(f"policy: a dict, a path or JSON bytes, not {type(policy).__name__}")


def _options(
    *,
    policy: Optional[Policy] = None,
    jobs: Optional[int] = None,
    max_errors: int = 100,
    max_line_bytes: Optional[int] = None,
    max_manifest_bytes: Optional[int] = None,
    accept_formats: Optional[Sequence[str]] = None,
    integrity: bool = False,
) -> "_ndarc.Options":
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise UsageError(f"jobs must be a positive integer or None, not {jobs!r}")
    for name, v in (("max_errors", max_errors), ("max_line_bytes", max_line_bytes),
                    ("max_manifest_bytes", max_manifest_bytes)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise UsageError(f"{name} must be a non-negative integer, not {v!r}")
    if isinstance(accept_formats, str):
        accept_formats = [accept_formats]
    return _ndarc.Options(
        jobs=jobs or 0,
        max_errors=max_errors,
        max_line_bytes=max_line_bytes,
        max_manifest_bytes=max_manifest_bytes,
        accept_formats=list(accept_formats) if accept_formats is not None else None,
        policy=_policy_bytes(policy),
        integrity=bool(integrity),
    )


def verify(
    source: Union[PathLike, bytes, bytearray, memoryview, IO[bytes]],
    *,
    policy: Optional[Policy] = None,
    strict: bool = False,
    jobs: Optional[int] = None,
    max_errors: int = 100,
    max_line_bytes: Optional[int] = None,
    max_manifest_bytes: Optional[int] = None,
    accept_formats: Optional[Sequence[str]] = None,
    integrity: bool = False,
) -> Report:
    """Check an archive against every rule of SPEC.md, as ``ndarc verify`` does.

    ``source`` is a path (an archive, or a SQLite database packed on the
    fly), the archive's bytes, or a binary file object (read to its end).
    The GIL is released while the archive is checked on ``jobs`` threads
    (default: one per core).

    ``policy`` is an import policy (SPEC.md §15): a dict, a path to its JSON
    file, or its JSON bytes. ``strict`` makes warnings fail ``valid`` too.
    ``max_errors`` bounds the findings kept (and stops the check there);
    ``max_line_bytes``, ``max_manifest_bytes`` and ``accept_formats`` are
    the CLI's limits ``--max-line-bytes``, ``--max-manifest-bytes`` and
    ``--accept-format``. ``integrity`` also checks the rows against the
    foreign keys of the tables' own ``sql``, as SQLite compares them
    (``ndarc verify --integrity``: ``foreign_key_violation``,
    ``foreign_key_mismatch``); ``Error`` is raised when it cannot check
    them.

    An invalid archive is a report with ``valid`` False, not an exception;
    ``Error`` is raised when the input cannot be read.

    >>> r = ndarc.verify("testdata/valid/example.ndjson")
    >>> r.valid, r.errors, r.warnings
    (True, 0, 0)
    >>> r = ndarc.verify(b'{"kind":"part"}\\n')
    >>> r.valid, r.findings[0].code, r.findings[0].line
    (False, 'manifest_missing', 1)
    """
    opts = _options(
        policy=policy,
        jobs=jobs,
        max_errors=max_errors,
        max_line_bytes=max_line_bytes,
        max_manifest_bytes=max_manifest_bytes,
        accept_formats=accept_formats,
        integrity=integrity,
    )
    if isinstance(source, (bytearray, memoryview)):
        source = bytes(source)
    elif isinstance(source, _os.PathLike):
        source = _os.fspath(source)
    if isinstance(source, bytes) or isinstance(source, str):
        return _ndarc.verify(source, opts, strict)
    if hasattr(source, "read"):
        return _ndarc.verify(source, opts, strict)
    raise UsageError(
        f"verify takes a path, bytes or a binary file object, not {type(source).__name__}"
    )


class PushVerifier:
    """Verify an archive that arrives as a manifest, then parts in any order
    (with retries), then the closing line: what a server's import endpoint
    receives.

    ``feed_part`` returns a :class:`PartOutcome`: ``"accepted"``,
    ``"duplicate"`` (the same bytes again) or ``"rejected"`` (with the
    errors; the sender may send corrected bytes for the same index).
    Findings of a part carry ``line`` = index + 2 and offsets within the
    part's bytes. ``finish`` gives the :class:`Report`.

    >>> lines = open("testdata/valid/example.ndjson", "rb").read().splitlines()
    >>> v = ndarc.PushVerifier(lines[0])
    >>> [v.feed_part(p).status for p in reversed(lines[1:-1])]
    ['accepted', 'accepted', 'accepted', 'accepted']
    >>> v.finish(lines[-1]).valid
    True

    A manifest with an error raises :class:`InvalidArchive`.
    """

    def __init__(
        self,
        manifest_line: bytes,
        *,
        policy: Optional[Policy] = None,
        max_errors: int = 100,
        max_line_bytes: Optional[int] = None,
        max_manifest_bytes: Optional[int] = None,
        accept_formats: Optional[Sequence[str]] = None,
    ) -> None:
        opts = _options(
            policy=policy,
            max_errors=max_errors,
            max_line_bytes=max_line_bytes,
            max_manifest_bytes=max_manifest_bytes,
            accept_formats=accept_formats,
        )
        self._v = _ndarc.PushVerifier(_line_bytes(manifest_line, "manifest_line"), opts)

    def feed_part(self, line: bytes, index: Optional[int] = None) -> PartOutcome:
        """Add one part line (its bytes, with or without LF). Its index is
        read from the line unless given."""
        return self._v.feed_part(_line_bytes(line, "line"), index)

    @property
    def missing(self) -> List[int]:
        """Indices of parts not accepted yet (at most 1,000)."""
        return self._v.missing

    def finish(self, closing_line: bytes, *, strict: bool = False) -> Report:
        """End with the closing line; parts never fed are ``part_missing``."""
        return self._v.finish(_line_bytes(closing_line, "closing_line"), strict)


def _line_bytes(v: Any, what: str) -> bytes:
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, bytes):
        return v
    raise UsageError(f"{what}: bytes, not {type(v).__name__}")


def diff(
    before: Union[PathLike, bytes],
    after: Union[PathLike, bytes],
    *,
    tables: Optional[Sequence[str]] = None,
    ignore_tables: Optional[Sequence[str]] = None,
    ignore_columns: Optional[Sequence[str]] = None,
    ignore_objects: Optional[Sequence[str]] = None,
    ignore_payloads: Optional[Sequence[str]] = None,
    keys: Optional[Mapping[str, Sequence[str]]] = None,
    keys_only: bool = False,
    stat: bool = False,
    no_verify: bool = False,
    allow_product_mismatch: bool = False,
    max_errors: int = 100,
    max_line_bytes: Optional[int] = None,
    max_manifest_bytes: Optional[int] = None,
    accept_formats: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    """The differences between two archives (or SQLite databases, packed on
    the fly), as the JSON document of ``ndarc diff --format json``.

    The filters are the CLI's: ``tables`` (``--table``), ``ignore_tables``,
    ``ignore_columns`` (``TABLE.COLUMN`` globs), ``ignore_objects``
    (``BUCKET/KEY`` globs), ``ignore_payloads``, ``keys`` (``{table:
    [columns]}``, as ``--key TABLE=COL,COL``), ``keys_only``, ``stat``
    (the document of ``--stat --format json``), ``no_verify`` and
    ``allow_product_mismatch``. Both inputs are verified as they are read:
    an invalid one raises :class:`InvalidArchive`; different products, bad
    patterns or keys raise :class:`UsageError`.

    >>> d = ndarc.diff("testdata/valid/base.ndjson", "testdata/valid/base.ndjson")
    >>> d["equal"]
    True
    """

    def globs(v: Optional[Sequence[str]], name: str) -> List[str]:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        if not all(isinstance(x, str) for x in v):
            raise UsageError(f"{name}: a list of strings")
        return list(v)

    def side(v: Any, name: str) -> Union[str, bytes]:
        if isinstance(v, _os.PathLike):
            return _os.fspath(v)
        if isinstance(v, (bytearray, memoryview)):
            return bytes(v)
        if isinstance(v, (str, bytes)):
            return v
        raise UsageError(f"{name}: a path or bytes, not {type(v).__name__}")

    key_list = []
    for t, cols in (keys or {}).items():
        cols = [cols] if isinstance(cols, str) else list(cols)
        if not isinstance(t, str) or not all(isinstance(c, str) for c in cols):
            raise UsageError("keys: {table: [column, ...]}")
        key_list.append((t, cols))
    opts = _options(
        max_errors=max_errors,
        max_line_bytes=max_line_bytes,
        max_manifest_bytes=max_manifest_bytes,
        accept_formats=accept_formats,
    )
    out = _ndarc.diff(
        side(before, "before"),
        side(after, "after"),
        opts,
        tables=globs(tables, "tables"),
        ignore_tables=globs(ignore_tables, "ignore_tables"),
        ignore_columns=globs(ignore_columns, "ignore_columns"),
        ignore_objects=globs(ignore_objects, "ignore_objects"),
        ignore_payloads=globs(ignore_payloads, "ignore_payloads"),
        keys=key_list,
        keys_only=bool(keys_only),
        stat=bool(stat),
        no_verify=bool(no_verify),
        allow_product_mismatch=bool(allow_product_mismatch),
    )
    return _json.loads(out)


def canonical(obj: Any) -> bytes:
    """The canonical JSON (RFC 8785) of ``obj``, as ``ndarc canon`` writes it:
    members sorted by UTF-16 code units, strings and numbers as ECMAScript
    writes them, no whitespace. ``obj`` is anything ``json.dumps`` takes;
    ``bytes`` are taken as a JSON text to canonicalize.

    >>> ndarc.canonical({"b": [1.0, 1e21], "a": "\\u00e9"})
    b'{"a":"\\xc3\\xa9","b":[1,1e+21]}'
    >>> ndarc.canonical(b'{"z": 1, "a": 2}')
    b'{"a":2,"z":1}'
    """
    if isinstance(obj, (bytes, bytearray, memoryview)):
        text = bytes(obj)
    else:
        try:
            text = _json.dumps(obj, ensure_ascii=False, allow_nan=False).encode()
        except (TypeError, ValueError) as e:
            raise UsageError(f"not representable as JSON: {e}") from None
    return _ndarc.canonicalize(text)


def is_canonical(data: Union[bytes, bytearray, memoryview]) -> bool:
    """Whether ``data`` is one JSON text in canonical form (RFC 8785)
    (False for text that is not JSON).

    >>> ndarc.is_canonical(b'{"a":1}'), ndarc.is_canonical(b'{"a": 1}')
    (True, False)
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise UsageError(f"is_canonical takes bytes, not {type(data).__name__}")
    return _ndarc.is_canonical(bytes(data))


class Archive:
    """An archive opened for reading (see :func:`open`).

    ``manifest`` is the manifest as a dict; ``tables`` maps each table name
    to its manifest entry (``columns``, ``count``, ``sql`` …); ``objects``
    lists the objects' entries; ``payloads`` maps payload names to theirs.

    Every read (``rows``, ``to_arrow``, ``object_bytes`` …) reads the file
    once more, verifying each line as it is read: only lines the verifier
    accepted give rows or bytes, and a finding anywhere in the archive
    raises :class:`InvalidArchive` (an iterator ends only once the whole
    archive is verified).
    """

    def __init__(self, path: PathLike, options: "_ndarc.Options") -> None:
        self.path = _os.fspath(path)
        self._options = options
        line = _ndarc.manifest_line(self.path, options)
        self.manifest: Dict[str, Any] = _json.loads(line)
        self.tables: Dict[str, Dict[str, Any]] = {
            t["name"]: t for t in self.manifest.get("tables", [])
        }
        self.objects: List[Dict[str, Any]] = list(self.manifest.get("objects", []))
        self.payloads: Dict[str, Dict[str, Any]] = {
            p["name"]: p for p in self.manifest.get("payloads", [])
        }

    def __repr__(self) -> str:
        return f"<ndarc.Archive {self.path!r}: {len(self.tables)} tables>"

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def _table(self, table: str) -> str:
        if not isinstance(table, str):
            raise UsageError(f"a table name, not {type(table).__name__}")
        if table in self.tables:
            return table
        folded = [t for t in self.tables if t.lower() == table.lower()]
        if len(folded) == 1:
            return folded[0]
        raise UsageError(f"the archive has no table {table!r}; it has {sorted(self.tables)}")

    def verify(self, *, strict: bool = False) -> Report:
        """Verify the whole archive (as :func:`verify`, with the options of
        :func:`open`)."""
        return _ndarc.verify(self.path, self._options, strict)

    def rows(self, table: str) -> Iterator[Dict[str, Any]]:
        """The rows of ``table`` as dicts, in archive order (the table's key
        order), streamed with bounded memory.

        Keys are the rowid alias first (``rowid``, ``_rowid_`` or ``oid``)
        for a table without primary key, then the columns rows carry (not
        generated, not excluded) in the table's order. Values are those a
        restored database holds (``ndarc unpack``): ``int``, ``float``,
        ``str``, ``bytes`` for blobs and ``None``. Dropping the iterator
        stops the reading.

        >>> with ndarc.open("testdata/valid/example.ndjson") as a:
        ...     next(iter(a.rows("users")))
        {'id': 7, 'name': 'Ada', 'avatar': b'\\x89PNG'}
        """
        return _ndarc.read_table(self.path, self._table(table), False, self._options)

    def to_arrow_batches(self, table: str) -> Iterator["pyarrow.RecordBatch"]:
        """The rows of ``table`` as ``pyarrow.RecordBatch`` es (whole parts,
        about 65,536 rows each), typed by column affinity: INTEGER ``int64``, NUMBER
        (REAL, NUMERIC …) ``float64``, TEXT ``large_string``, BLOB
        ``large_binary`` (a text cell as its UTF-8 bytes, a number as its
        JSON text); the rowid ``int64``. Needs pyarrow (``pip install
        ndarc[arrow]``)."""
        pa = _pyarrow()
        it = _ndarc.read_table(self.path, self._table(table), True, self._options)
        return _arrow_batches(pa, it, _schema(pa, it))

    def to_arrow(self, table: str) -> "pyarrow.Table":
        """All rows of ``table`` as one ``pyarrow.Table`` (see
        :meth:`to_arrow_batches`), for pandas (``.to_pandas()``), polars
        (``polars.from_arrow``) or DuckDB.

        >>> with ndarc.open("testdata/valid/example.ndjson") as a:
        ...     a.to_arrow("users").column("id").to_pylist()  # doctest: +SKIP
        [1, 2]
        """
        pa = _pyarrow()
        it = _ndarc.read_table(self.path, self._table(table), True, self._options)
        schema = _schema(pa, it)
        return pa.Table.from_batches(list(_arrow_batches(pa, it, schema)), schema=schema)

    def object_bytes(self, bucket: str, key: str) -> bytes:
        """The bytes of the object ``key`` of ``bucket``, once the whole
        archive proved valid."""
        if not any(o["bucket"] == bucket and o["key"] == key for o in self.objects):
            raise UsageError(f"the archive has no object {key!r} in bucket {bucket!r}")
        return _ndarc.read_binary(self.path, "object", bucket, key, self._options)

    def payload_bytes(self, name: str) -> bytes:
        """The bytes of the payload ``name``, once the whole archive proved
        valid."""
        if name not in self.payloads:
            raise UsageError(f"the archive has no payload {name!r}")
        return _ndarc.read_binary(self.path, "payload", name, "", self._options)


def open(
    path: PathLike,
    *,
    policy: Optional[Policy] = None,
    jobs: Optional[int] = None,
    max_errors: int = 100,
    max_line_bytes: Optional[int] = None,
    max_manifest_bytes: Optional[int] = None,
    accept_formats: Optional[Sequence[str]] = None,
) -> Archive:
    """Open the archive at ``path`` for reading: its manifest is read (and
    checked: a manifest with an error raises :class:`InvalidArchive`); the
    rest is verified as it is read. The options are those of
    :func:`verify`.

    >>> a = ndarc.open("testdata/valid/example.ndjson")
    >>> a.tables["users"]["count"], list(a.payloads)
    (1, ['kv'])
    """
    opts = _options(
        policy=policy,
        jobs=jobs,
        max_errors=max_errors,
        max_line_bytes=max_line_bytes,
        max_manifest_bytes=max_manifest_bytes,
        accept_formats=accept_formats,
    )
    if not isinstance(path, (str, _os.PathLike)):
        raise UsageError(f"open takes a path, not {type(path).__name__}")
    return Archive(path, opts)


import builtins as _builtins  # noqa: E402

builtins_open = _builtins.open


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise Error(
            "Arrow output needs pyarrow: pip install 'ndarc[arrow]' (or pip install pyarrow)"
        ) from None
    return pyarrow


def _schema(pa: Any, it: Any) -> Any:
    # The columns and their types come from the reader (crates/ndarc-py
    # src/cells.rs: the type of each affinity).
    return pa.schema([pa.field(name, getattr(pa, kind)()) for name, kind in it.columns])


def _arrow_batches(pa: Any, it: Any, schema: Any) -> Iterator[Any]:
    kinds = [f.type for f in schema]
    try:
        while True:
            got = it.next_arrow()
            if got is None:
                return
            n, buffers = got
            arrays = []
            for typ, (validity, nulls, data, offsets) in zip(kinds, buffers):
                vb = pa.py_buffer(validity) if validity is not None else None
                if offsets is None:
                    bufs = [vb, pa.py_buffer(data)]
                else:
                    bufs = [vb, pa.py_buffer(offsets), pa.py_buffer(data)]
                arrays.append(pa.Array.from_buffers(typ, n, bufs, null_count=nulls))
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)
    finally:
        it.close()
