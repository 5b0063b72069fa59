#!/usr/bin/env python3
"""Writes the valid conformance corpus of the portability archive, and checks
the invalid one.

    python3 scripts/make-corpus.py                  # rewrites testdata/valid/* and testdata/lineage/*
    python3 scripts/make-corpus.py --check DIR      # builds every invalid fixture and compares
                                                    # it with DIR; writes nothing

Python 3.8+, standard library only, deterministic (no clock, no randomness):
running it twice gives the same bytes. It writes testdata/valid/<name>.ndjson:
small valid archives, each showing one feature (testdata/valid/example.ndjson
is the worked example of SPEC.md and is written by scripts/example-archive.py,
not by this script), and testdata/lineage/<case>/: pairs of valid archives
(earlier.ndjson, later.ndjson) for `ndarc verify earlier --later later`
(SPEC.md §4.6), with expected.json, the findings on the later archive
({"findings": [{"code", "line", "offset", "pointer"}], "note"}).

It does not write testdata/invalid: the Rust mutator does
(`cargo run -p ndarc-gen --example corpus -- --write testdata/invalid`). With
--check it is the independent second implementation: it builds every invalid
fixture again from `define_cases()`, with its own RFC 8785, sealing and both
hashes, and compares each archive (a valid archive with exactly one rule
broken and everything else re-sealed) and its sidecar
({"code", "line", "offset"?, "pointer"?, "also"?, "allow"?, "options"?,
"note"?}) byte for byte. See testdata/README.md for the contract.

Canonical JSON here is RFC 8785 written out by hand (Python's json module
sorts member names by code point, not by UTF-16 code unit, and formats
numbers differently from ECMAScript): see `canon`.
"""

import base64
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VALID = os.path.join(ROOT, "testdata", "valid")
LINEAGE = os.path.join(ROOT, "testdata", "lineage")

# ---------------------------------------------------------------------------
# RFC 8785 canonical JSON


def utf16_key(s):
    """Sort key: UTF-16 code units (what JavaScript's `<` compares)."""
    return s.encode("utf-16-be", "surrogatepass")


def jstr(s):
    """A string escaped exactly as ECMAScript JSON.stringify does (ES2019,
    well-formed): \\" \\\\ \\b \\t \\n \\f \\r, other C0 controls as \\u00xx
    (lowercase hex), lone surrogates as \\udxxx, everything else (U+007F,
    U+2028, astral characters) as itself."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or 0xD800 <= o <= 0xDFFF:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jnum(x):
    """ECMAScript Number::toString of a double (RFC 8785 §3.2.2.3)."""
    if isinstance(x, bool):
        raise TypeError("bool is not a number")
    if isinstance(x, int):
        if abs(x) <= 2**53:
            return str(x)
        x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("JSON has no NaN or Infinity")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))  # shortest round-trip digits, like ECMAScript
    mant, _, exp = r.partition("e")
    intpart, _, frac = mant.partition(".")
    digits = intpart + frac
    n = len(intpart) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        es = ("+" if e >= 0 else "-") + str(abs(e))
        s = (digits[0] + ("." + digits[1:] if k > 1 else "")) + "e" + es
    return sign + s


def canon(v, sort=True):
    """Canonical JSON text of v (sort=False keeps insertion order: only for
    making deliberately non-canonical lines)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return jnum(v)
    if isinstance(v, str):
        return jstr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(canon(x, sort) for x in v) + "]"
    if isinstance(v, dict):
        keys = list(v.keys())
        if sort:
            keys.sort(key=utf16_key)
        return "{" + ",".join(jstr(k) + ":" + canon(v[k], sort) for k in keys) + "}"
    raise TypeError(type(v))


def cbytes(v):
    return canon(v).encode("utf-8", "surrogatepass")


def _self_test():
    # ECMAScript number formatting.
    cases = {
        1.0: "1", -0.0: "0", 1.5: "1.5", 0.1: "0.1", 1e21: "1e+21", 1e20: "100000000000000000000",
        1e-6: "0.000001", 1e-7: "1e-7", 123.456: "123.456", 5e-324: "5e-324",
        1.7976931348623157e308: "1.7976931348623157e+308", 2**53: "9007199254740992",
        -2.5e-8: "-2.5e-8", 333333333.33333329: "333333333.3333333", 9007199254740993: "9007199254740992",
    }
    for x, want in cases.items():
        assert jnum(x) == want, (x, jnum(x), want)
    # JSON.stringify escapes.
    assert jstr("\x1f\x7f\u2028\"\\/\b") == '"\\u001f\x7f\u2028\\"\\\\/\\b"'
    # UTF-16 member order: U+1F600 (D83D DE00) sorts before U+FB01.
    assert canon({"\ufb01": 1, "\U0001F600": 2}) == '{"\U0001F600":2,"\ufb01":1}'
    # The RFC 8785 "weird" example order.
    weird = {"\u20ac": 0, "\r": 1, "\ufb33": 2, "1": 3, "\U0001F600": 4, "\x80": 5, "\u00f6": 6}
    assert [k for k in sorted(weird, key=utf16_key)] == ["\r", "1", "\x80", "\u00f6", "\u20ac", "\U0001F600", "\ufb33"]


# ---------------------------------------------------------------------------
# Producer rules


def sha(b):
    return hashlib.sha256(b).hexdigest()


def D(b):
    return hashlib.sha256(b).digest()


def b64(b):
    return base64.b64encode(b).decode("ascii")


def rowid_alias(columns):
    if any(c["pk"] > 0 for c in columns):
        return None
    names = [c["name"].lower() for c in columns]
    for a in ("rowid", "_rowid_", "oid"):
        if a not in names:
            return a
    raise ValueError("every rowid alias is shadowed")


def payload_key(name):
    # Object.entries(extraPayloads).sort() compares `name + ",[object Object]"`.
    return utf16_key(name + ",[object Object]")


def schema_of(tables):
    return sha(cbytes([{"name": t["name"], "sql": t["sql"]} for t in tables]))


def col(name, type_, notnull=0, pk=0, generated=None):
    c = {"name": name, "type": type_, "notnull": notnull, "pk": pk}
    if generated:
        c["generated"] = generated
    return c


HEADER = ["format", "version", "product", "schema", "tables", "objects", "payloads",
          "excludedTables", "excludedColumns", "requiredConfiguration"]


class Archive:
    """An archive as records: `manifest` (dict) and `parts` (list of dicts).
    Mutate them, then `render` re-seals and writes the bytes."""

    def __init__(self, spec):
        self.spec = spec
        tables = []
        parts = []
        for t in spec["tables"]:
            cols = t["columns"]
            alias = t["rowidAlias"] if "rowidAlias" in t else rowid_alias(cols)
            tables.append({"name": t["name"], "sql": t["sql"], "columns": cols,
                           "dependencies": t.get("dependencies", []), "rowidAlias": alias,
                           "count": len(t["rows"])})
        objects = [{"bucket": o["bucket"], "key": o["key"], "size": len(o["data"]),
                    "sha256": sha(o["data"]), "httpMetadata": o.get("httpMetadata", {}),
                    "customMetadata": o.get("customMetadata", {})} for o in spec.get("objects", [])]
        payloads = [{"name": p["name"], "size": len(p["data"]), "sha256": sha(p["data"])}
                    for p in spec.get("payloads", [])]
        # The producer's orders, so that a valid spec cannot be written wrongly.
        assert [t["name"] for t in tables] == sorted((t["name"] for t in tables), key=utf16_key) or spec.get("unsorted")
        assert [(o["bucket"], o["key"]) for o in objects] == sorted(
            ((o["bucket"], o["key"]) for o in objects), key=lambda bk: (utf16_key(bk[0]), utf16_key(bk[1]))) or spec.get("unsorted")
        assert [p["name"] for p in payloads] == sorted((p["name"] for p in payloads), key=payload_key) or spec.get("unsorted")
        m = {"kind": "manifest", "format": "rer-portability", "version": 2,
             "product": spec.get("product", "corpus"),
             "exportedAt": spec.get("exportedAt", "2026-01-02T03:04:05.678Z"),
             "sourceIdentity": spec.get("sourceIdentity", "src-1"),
             "schema": None, "tables": tables, "objects": objects, "payloads": payloads,
             "excludedTables": spec.get("excludedTables", []),
             "excludedColumns": spec.get("excludedColumns", {}),
             "requiredConfiguration": spec.get("requiredConfiguration", []),
             "partCount": None, "epoch": spec.get("epoch", 1), "journal": spec.get("journal", [])}
        if "migrations" in spec:
            m["migrations"] = spec["migrations"]
        self.manifest = m
        for t, mt in zip(spec["tables"], tables):
            items = []
            for i, r in enumerate(t["rows"]):
                it = {"kind": "row", "table": t["name"], "index": i, "row": r["row"]}
                if mt["rowidAlias"] is not None:
                    it["rowid"] = r.get("rowid", i + 1)
                items.append(it)
            per = t.get("per_part", 100)
            for s in range(0, len(items), per):
                parts.append({"kind": "part", "index": None, "items": items[s:s + per]})
        for kind, lst in (("object", spec.get("objects", [])), ("payload", spec.get("payloads", []))):
            for o in lst:
                data = o["data"]
                sizes = o.get("chunks") or [len(data)]
                assert sum(sizes) == len(data)
                off = 0
                for n in sizes:
                    it = {"kind": kind}
                    if kind == "object":
                        it["bucket"], it["key"] = o["bucket"], o["key"]
                    else:
                        it["name"] = o["name"]
                    it["offset"] = off
                    it["data"] = b64(data[off:off + n])
                    off += n
                    parts.append({"kind": "part", "index": None, "items": [it]})
        for i, p in enumerate(parts):
            p["index"] = i
        self.parts = parts

    # -- helpers for mutations
    def table(self, name):
        return next(t for t in self.manifest["tables"] if t["name"] == name)

    def part_of(self, pred):
        return next(i for i, p in enumerate(self.parts) if pred(p))

    def rows_part(self, table, nth=0):
        idx = [i for i, p in enumerate(self.parts) if p["items"][0].get("table") == table]
        return idx[nth]

    def binary_part(self, name, nth=0):
        idx = [i for i, p in enumerate(self.parts)
               if p["items"][0].get("key") == name or p["items"][0].get("name") == name]
        return idx[nth]

    def renumber(self):
        for i, p in enumerate(self.parts):
            p["index"] = i

    # -- sealing
    def seal(self, schema=True, counts=True, part_count=True):
        m = self.manifest
        if schema:
            m["schema"] = schema_of(m["tables"])
        if counts:
            for t in m["tables"]:
                t["count"] = sum(
                    1 for p in self.parts if p["items"] and isinstance(p["items"][0], dict)
                    and p["items"][0].get("kind") == "row" and p["items"][0].get("table") == t["name"]
                    for it in p["items"] if isinstance(it, dict) and it.get("kind") == "row"
                    and it.get("table") == t["name"])
        if part_count:
            m["partCount"] = len(self.parts)

    def content_hash(self):
        m = self.manifest
        header = {k: m[k] for k in HEADER if k in m}
        terms = [D(cbytes(header))]
        aliases = {t.get("name"): t.get("rowidAlias") for t in m["tables"] if isinstance(t, dict)}
        for p in self.parts:
            items = p.get("items") or []
            if not items or not isinstance(items[0], dict) or items[0].get("kind") != "row":
                continue
            tname = items[0].get("table")
            if tname not in aliases:
                continue
            for it in items:
                if not isinstance(it, dict) or it.get("kind") != "row" or it.get("table") != tname:
                    continue
                r = {"table": tname, "row": it["row"]}
                if "rowid" in it:  # where the item has one (SPEC §7.2)
                    r["rowid"] = it["rowid"]
                terms.append(D(cbytes(r)))
        return sha(b"".join(terms))

    def render(self, raw=None, closing=None, craw=None, frame=None, seal=None):
        """Seals and returns the file's bytes. `raw` edits the manifest and
        part lines (bytes, before archiveHash), `closing` the closing record,
        `craw` the closing line, `frame` the list of all lines (returns the
        file's bytes)."""
        self.seal(**(seal or {}))
        lines = [cbytes(self.manifest)] + [cbytes(p) for p in self.parts]
        if raw:
            lines = raw(lines)
        archive_hash = sha(b"".join(D(l) for l in lines))
        c = {"kind": "closing", "partCount": self.manifest["partCount"],
             "contentHash": self.content_hash(), "archiveHash": archive_hash}
        if closing:
            closing(c)
        cl = cbytes(c)
        if craw:
            cl = craw(cl)
        lines.append(cl)
        if frame:
            return frame(lines)
        return b"".join(l + b"\n" for l in lines)


# ---------------------------------------------------------------------------
# Locating a JSON pointer in a line (for the expected byte offset)


def _ws(b, i):
    while i < len(b) and b[i] in b" \t\n\r":
        i += 1
    return i


def _skip_string(b, i):
    assert b[i:i + 1] == b'"'
    i += 1
    while True:
        c = b[i:i + 1]
        if c == b"\\":
            i += 2
        elif c == b'"':
            return i + 1
        elif c == b"":
            raise ValueError("unterminated string")
        else:
            i += 1


def _skip_value(b, i):
    c = b[i:i + 1]
    if c == b'"':
        return _skip_string(b, i)
    if c in (b"{", b"["):
        depth = 0
        while True:
            c = b[i:i + 1]
            if c == b'"':
                i = _skip_string(b, i)
                continue
            if c in (b"{", b"["):
                depth += 1
            elif c in (b"}", b"]"):
                depth -= 1
                if depth == 0:
                    return i + 1
            elif c == b"":
                raise ValueError("unterminated")
            i += 1
    while i < len(b) and b[i:i + 1] not in (b",", b"}", b"]", b" "):
        i += 1
    return i


def locate(b, pointer):
    """Byte offset in `b` of the value `pointer` names, or None."""
    try:
        i = _ws(b, 0)
        if pointer == "":
            return i
        for tok in pointer[1:].split("/"):
            tok = tok.replace("~1", "/").replace("~0", "~")
            c = b[i:i + 1]
            if c == b"{":
                i = _ws(b, i + 1)
                while True:
                    if b[i:i + 1] == b"}":
                        return None
                    ke = _skip_string(b, i)
                    key = json.loads(b[i:ke].decode("utf-8", "surrogatepass"))
                    i = _ws(b, ke)
                    assert b[i:i + 1] == b":"
                    i = _ws(b, i + 1)
                    if key == tok:
                        break
                    i = _ws(b, _skip_value(b, i))
                    if b[i:i + 1] != b",":
                        return None
                    i = _ws(b, i + 1)
            elif c == b"[":
                want = int(tok)
                i = _ws(b, i + 1)
                for _ in range(want):
                    i = _ws(b, _skip_value(b, i))
                    if b[i:i + 1] != b",":
                        return None
                    i = _ws(b, i + 1)
                if b[i:i + 1] == b"]":
                    return None
            else:
                return None
        return i
    except (ValueError, AssertionError, UnicodeDecodeError):
        return None


def line_table(data):
    """[(line number, offset, bytes without LF or CR)] as a verifier frames them."""
    out = []
    off = 0
    n = 0
    while off < len(data):
        n += 1
        j = data.find(b"\n", off)
        end = len(data) if j < 0 else j
        raw = data[off:end]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        out.append((n, off, raw))
        off = end + 1
    return out


# ---------------------------------------------------------------------------
# Archives


PNG = b"\x89PNG\r\n\x1a\n"


def base_spec():
    """The archive every invalid case breaks: two tables (one rowid table,
    one with a primary key), two objects (one cut into two chunks), two
    payloads in the producer's order (`kv cache` before `kv`).

    Lines: 1 manifest; 2 rows of notes; 3 rows of users; 4 object
    greeting.txt; 5, 6 the two chunks of logo.bin; 7 payload "kv cache";
    8 payload "kv"; 9 closing."""
    return {
        "product": "corpus",
        "tables": [
            {"name": "notes",
             "sql": "CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))",
             "columns": [col("body", "TEXT"), col("user_id", "INTEGER")],
             "dependencies": ["users"],
             "rows": [
                 {"rowid": 1, "row": {"body": "first", "user_id": 7}},
                 {"rowid": 5, "row": {"body": None, "user_id": None}},
                 {"rowid": 9, "row": {"body": "ctl\x1f del\x7f ls\u2028 \u00e9 \U0001F600 \"q\" \\", "user_id": 3}},
             ]},
            {"name": "users",
             "sql": "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, score REAL)",
             "columns": [col("id", "INTEGER", pk=1), col("name", "TEXT", notnull=1),
                         col("avatar", "BLOB"), col("score", "REAL")],
             "rows": [
                 {"row": {"id": 3, "name": "Ada", "avatar": {"blob": b64(PNG)}, "score": 1.5}},
                 {"row": {"id": 7, "name": "Bob", "avatar": None, "score": 2}},
             ]},
        ],
        "objects": [
            {"bucket": "files", "key": "greeting.txt", "data": b"hello, world\n",
             "httpMetadata": {"contentType": "text/plain"},
             "customMetadata": {"\ufb01le": "ligature", "\U0001F600": "astral"}},
            {"bucket": "files", "key": "logo.bin", "data": b"\x00\x01\x02\x03\xfc\xfd\xfe\xff",
             "chunks": [4, 4]},
        ],
        "payloads": [
            {"name": "kv cache", "data": b"[]"},
            {"name": "kv", "data": b"{}"},
        ],
        "excludedTables": ["sessions"],
        "requiredConfiguration": ["MAIL_KEY"],
    }


def valid_archives():
    """name -> spec of the valid corpus."""
    v = {}

    # The archive every invalid case breaks: the Rust corpus writer
    # (`cargo run -p ndarc-gen --example corpus`) reads it to write the
    # invalid fixtures.
    v["base"] = base_spec()

    v["minimal"] = {"product": "empty", "tables": [], "requiredConfiguration": []}

    v["composite-key"] = {
        "product": "composite",
        "tables": [{
            "name": "memberships",
            "sql": "CREATE TABLE memberships(team TEXT NOT NULL, user INTEGER NOT NULL, role TEXT, PRIMARY KEY(user, team))",
            # pk order: user (1) then team (2); rows are in (user, team) order.
            "columns": [col("team", "TEXT", 1, 2), col("user", "INTEGER", 1, 1), col("role", "TEXT")],
            "rows": [
                {"row": {"team": "b", "user": 1, "role": "owner"}},
                {"row": {"team": "c", "user": 1, "role": None}},
                {"row": {"team": "a", "user": 2, "role": "member"}},
                {"row": {"team": "B", "user": 10, "role": "member"}},
                {"row": {"team": "a", "user": 10, "role": "member"}},
            ]}],
    }

    v["rowid-alias"] = {
        "product": "aliases",
        "tables": [
            {"name": "a_plain", "sql": "CREATE TABLE a_plain(x TEXT)",
             "columns": [col("x", "TEXT")],
             "rows": [{"rowid": -5, "row": {"x": "negative rowids are fine"}}, {"rowid": 0, "row": {"x": "zero"}},
                      {"rowid": 9007199254740991, "row": {"x": "max safe"}}]},
            {"name": "b_shadow_rowid", "sql": "CREATE TABLE b_shadow_rowid(RowId TEXT, y INTEGER REFERENCES A_PLAIN)",
             "columns": [col("RowId", "TEXT"), col("y", "INTEGER")],
             # Foreign-key parents are named as the SQL wrote them: names compare ignoring ASCII case.
             "dependencies": ["A_PLAIN"],
             "rows": [{"rowid": 1, "row": {"RowId": "shadowed", "y": 1}}, {"rowid": 2, "row": {"RowId": None, "y": 2}}]},
            {"name": "c_shadow_two", "sql": "CREATE TABLE c_shadow_two(rowid TEXT, _ROWID_ TEXT)",
             "columns": [col("rowid", "TEXT"), col("_ROWID_", "TEXT")],
             "rows": [{"rowid": 3, "row": {"rowid": "r", "_ROWID_": "_r_"}}]},
        ],
    }

    v["generated-columns"] = {
        "product": "generated",
        "tables": [{
            "name": "items",
            "sql": "CREATE TABLE items(id INTEGER PRIMARY KEY, price INTEGER NOT NULL, qty INTEGER NOT NULL, "
                   "total INTEGER GENERATED ALWAYS AS (price * qty) VIRTUAL, label TEXT GENERATED ALWAYS AS ('#' || id) STORED)",
            "columns": [col("id", "INTEGER", 0, 1), col("price", "INTEGER", 1), col("qty", "INTEGER", 1),
                        col("total", "INTEGER", 0, 0, "virtual"), col("label", "TEXT", 0, 0, "stored")],
            "rows": [{"row": {"id": 1, "price": 250, "qty": 2}}, {"row": {"id": 2, "price": 99, "qty": 0}}],
        }],
    }

    v["excluded-columns"] = {
        "product": "excluded",
        "tables": [
            {"name": "accounts",
             "sql": "CREATE TABLE accounts(id INTEGER PRIMARY KEY, email TEXT NOT NULL, password_hash TEXT, totp_secret TEXT, note TEXT)",
             "columns": [col("id", "INTEGER", 0, 1), col("email", "TEXT", 1), col("password_hash", "TEXT"),
                         col("totp_secret", "TEXT"), col("note", "TEXT")],
             "rows": [{"row": {"id": 1, "email": "a@example.com", "note": "x"}},
                      {"row": {"id": 2, "email": "b@example.com", "note": None}}]},
            {"name": "audit", "sql": "CREATE TABLE audit(at INTEGER, what TEXT, account INTEGER REFERENCES accounts(id))",
             "columns": [col("at", "INTEGER"), col("what", "TEXT"), col("account", "INTEGER")],
             "dependencies": ["accounts"],
             "rows": [{"rowid": 1, "row": {"at": 1700000000, "account": 1}}]},
        ],
        # Not sorted (the producer passes them through as configured).
        "excludedColumns": {"accounts": ["totp_secret", "password_hash"], "audit": ["what"]},
        "excludedTables": ["login_attempts", "sessions"],
        "requiredConfiguration": ["SMTP_URL", "AUTH_SECRET"],
    }

    v["empty-table"] = {
        "product": "empty-table",
        "tables": [
            # "B_upper" sorts before "a": names sort by UTF-16 code units, not ignoring case.
            {"name": "B_upper", "sql": "CREATE TABLE B_upper(x TEXT)", "columns": [col("x", "TEXT")], "rows": []},
            {"name": "a", "sql": "CREATE TABLE a(x INTEGER)", "columns": [col("x", "INTEGER")],
             "rows": [{"rowid": 1, "row": {"x": 1}}]},
            {"name": "b", "sql": "create  table\tb (id integer primary key)", "columns": [col("id", "integer", 0, 1)],
             "rows": []},
            {"name": "c", "sql": "CREATE TABLE c(y TEXT)", "columns": [col("y", "TEXT")],
             "rows": [{"rowid": 1, "row": {"y": "after an empty table"}}]},
        ],
    }

    v["binaries"] = {
        "product": "binaries",
        "tables": [],
        "objects": [
            {"bucket": "avatars", "key": "", "data": b"empty key", "httpMetadata": {}, "customMetadata": {}},
            {"bucket": "avatars", "key": "empty.bin", "data": b"",
             "httpMetadata": {"contentType": "application/octet-stream", "cacheControl": "no-store"},
             "customMetadata": {"owner": "7"}},
            {"bucket": "avatars", "key": "multi.bin", "data": bytes(range(256)) * 3 + b"tail",
             "chunks": [256, 256, 256, 4]},
            {"bucket": "docs", "key": "a/b/c.txt", "data": b"nested key\n"},
            {"bucket": "docs", "key": "\U0001F600.txt", "data": b"astral key"},
            {"bucket": "docs", "key": "\ufb01.txt", "data": b"bmp key after astral in UTF-16 order"},
        ],
        "payloads": [
            {"name": "kv cache", "data": b'{"k":"v"}', "chunks": [5, 4]},
            {"name": "kv", "data": b""},
            {"name": "kvx", "data": b"x"},
        ],
    }

    v["unicode"] = {
        "product": "\u00fcnic\u00f6de \U0001F600",
        "sourceIdentity": "\u65e5\u672c\u8a9e/\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
        "tables": [
            {"name": "t\u00e9xt", "sql": "CREATE TABLE \"t\u00e9xt\"(\"\ufb01\" TEXT, \"\U0001F600\" TEXT, k TEXT PRIMARY KEY)",
             # Row members sort by UTF-16: U+1F600 (D83D) before U+FB01.
             "columns": [col("\ufb01", "TEXT"), col("\U0001F600", "TEXT"), col("k", "TEXT", 0, 1)],
             # Keys in SQLite BINARY order: UTF-8 bytes (U+FB01 = EF AC 81 < U+1F600 = F0 9F 98 80).
             "rows": [
                 {"row": {"k": "", "\ufb01": "empty key", "\U0001F600": None}},
                 {"row": {"k": "A", "\ufb01": "\x00\x01\x07\x08\t\n\x0b\x0c\r\x0e\x1f", "\U0001F600": "C0 controls"}},
                 {"row": {"k": "a", "\ufb01": "\x7f\x80\u009f\u00a0\u2028\u2029\ufeff\ufffd", "\U0001F600": "DEL, C1, separators, BOM char"}},
                 {"row": {"k": "\u00e9", "\ufb01": "\"\\/'<>&", "\U0001F600": "quotes and solidus"}},
                 {"row": {"k": "\ufb01", "\ufb01": "\U0001F600\U0001F44D\U0001F3FD\u200d", "\U0001F600": "astral, ZWJ"}},
                 {"row": {"k": "\U0001F600", "\ufb01": "\U00010000\U0010FFFF", "\U0001F600": "first and last astral"}},
             ]},
        ],
        "objects": [{"bucket": "b\u00fccket", "key": "k\u00e9y", "data": "\u00e9\U0001F600\n".encode(),
                     "httpMetadata": {"contentType": "text/plain; charset=utf-8"},
                     "customMetadata": {"\u20ac": "0", "\r": "1", "\ufb33": "2", "1": "3", "\U0001F600": "4",
                                        "\x80": "5", "\u00f6": "6"}}],
        "payloads": [{"name": "n\u00e4me", "data": b"\xff\xfe"}],
        "requiredConfiguration": ["\u00e9", "\U0001F600" * 256],
    }

    v["cells"] = {
        "product": "cells",
        "tables": [{
            "name": "cells",
            "sql": "CREATE TABLE cells(i INTEGER, t VARCHAR(10), b BLOB, u, n REAL, d DATETIME, c NUMERIC)",
            "columns": [col("i", "INTEGER"), col("t", "VARCHAR(10)"), col("b", "BLOB"), col("u", ""),
                        col("n", "REAL"), col("d", "DATETIME"), col("c", "NUMERIC")],
            "rows": [
                {"rowid": 1, "row": {"i": 9007199254740991, "t": "text", "b": {"blob": b64(PNG)}, "u": {"blob": ""},
                                     "n": 0.1, "d": 1700000000000, "c": -0.0}},
                {"rowid": 2, "row": {"i": -9007199254740991, "t": "", "b": "text in a blob column", "u": 42,
                                     "n": 1e21, "d": 1e-7, "c": 5e-324}},
                {"rowid": 3, "row": {"i": 0, "t": None, "b": 3.25, "u": "x", "n": 1.7976931348623157e308,
                                     "d": -2.5e-8, "c": 123456789012345680000}},
                {"rowid": 4, "row": {"i": None, "t": None, "b": {"blob": b64(b"\x00" * 5)}, "u": None,
                                     "n": None, "d": None, "c": None}},
            ],
        }],
    }

    v["multi-part-table"] = {
        "product": "multi-part",
        "tables": [
            {"name": "events", "sql": "CREATE TABLE events(id INTEGER PRIMARY KEY, kind TEXT)",
             "columns": [col("id", "INTEGER", 0, 1), col("kind", "TEXT")],
             "per_part": 3,
             "rows": [{"row": {"id": i * 3 - 7, "kind": "k%d" % (i % 4)}} for i in range(10)]},
            {"name": "log", "sql": "CREATE TABLE log(msg TEXT)", "columns": [col("msg", "TEXT")],
             "per_part": 2,
             "rows": [{"rowid": 10 * i + 1, "row": {"msg": "m%d" % i}} for i in range(5)]},
        ],
    }

    v["nesting-depth-64"] = {
        "product": "depth",
        "tables": [],
        # The manifest object is depth 1, so 63 nested arrays reach depth 64.
        "journal": {"batches": [[[0]]], "deep": None},
        "migrations": [{"id": "0001_init", "sql": "CREATE TABLE t(x)"}],
        "epoch": 9007199254740991,
    }
    return v


# ---------------------------------------------------------------------------
# Invalid cases


CASES = []


def case(name, code, line, pointer=None, also=(), allow=(), options=None, note=None, offset="auto",
         mut=None, raw=None, closing=None, craw=None, frame=None, seal=None, spec=None, data=None):
    CASES.append(dict(name=name, code=code, line=line, pointer=pointer, also=list(also), allow=list(allow),
                      options=options, note=note, offset=offset, mut=mut, raw=raw, closing=closing, craw=craw,
                      frame=frame, seal=seal, spec=spec, data=data))


def sub(idx, old, new, count=1):
    """A raw edit: replace `old` by `new` in line `idx` (0 = manifest)."""
    def f(lines):
        assert lines[idx].count(old) >= 1, (idx, old, lines[idx])
        lines[idx] = lines[idx].replace(old, new, count)
        return lines
    return f


def nest(n):
    return b"[" * n + b"]" * n


M, NOTES, USERS, GREET, LOGO0, LOGO1, KVC, KV = 0, 1, 2, 3, 4, 5, 6, 7  # line index (line number - 1)
CLOSING = 9  # line number of the closing in the base archive


def add_to_users_sql(a, column_sql):
    """Declares one more column of users, last, in its sql (as the column
    the case adds to its columns)."""
    t = a.table("users")
    t["sql"] = t["sql"].replace("score REAL)", "score REAL, " + column_sql + ")")


def row(a, table, i):
    p = a.parts[a.rows_part(table)]
    return p["items"][i]


def add_part(items):
    def f(a):
        a.parts.append({"kind": "part", "index": len(a.parts), "items": items})
    return f


def define_cases():
    # --- framing -------------------------------------------------------------
    case("carriage_return", "carriage_return", 1, offset=None,
         note="every line ends with CR LF (a Windows conversion). archiveHash is computed over the raw line "
              "bytes, CRs included (FORMAT-BRIEF §7: 'BOM and CR are errors; archiveHash is still defined over the raw line bytes')",
         raw=lambda ls: [l + b"\r" for l in ls], craw=lambda l: l + b"\r")
    case("carriage_return-closing", "carriage_return", CLOSING, offset=None,
         note="only the closing line (which no hash covers) ends with CR LF", craw=lambda l: l + b"\r")
    case("carriage_return-inside", "carriage_return", 4, offset=None, also=["json_syntax", "binary_missing"],
         note="a bare CR inside a line (not before the LF): not JSON whitespace inside a string",
         raw=sub(GREET, b'"key":"greeting.txt"', b'"key":"greeting\r.txt"'))
    case("empty_line", "empty_line", 3, offset=None,
         frame=lambda ls: b"".join(l + b"\n" for l in ls[:2]) + b"\n" + b"".join(l + b"\n" for l in ls[2:]))
    case("empty_line-first", "empty_line", 1, offset=0,
         note="an empty line before the manifest (which is then line 2)",
         frame=lambda ls: b"\n" + b"".join(l + b"\n" for l in ls))
    case("carriage_return-empty-line", "carriage_return", 3, offset=None, also=["empty_line"],
         note="a line holding only CR: a CR and an empty line",
         frame=lambda ls: b"".join(l + b"\n" for l in ls[:2]) + b"\r\n" + b"".join(l + b"\n" for l in ls[2:]))
    case("empty_line-end", "empty_line", 10, offset=None,
         note="an LF after the closing line's LF",
         frame=lambda ls: b"".join(l + b"\n" for l in ls) + b"\n")
    case("missing_final_newline", "missing_final_newline", CLOSING, offset=None,
         frame=lambda ls: b"\n".join(ls))
    case("missing_final_newline-truncated", "missing_final_newline", CLOSING, offset=None,
         also=["json_syntax", "closing_missing"], allow=["part_count_mismatch"],
         note="a download cut in the middle of the closing line; the cut line cannot be told from a part, so "
              "counting it as one (part_count_mismatch) is allowed",
         frame=lambda ls: b"".join(l + b"\n" for l in ls[:-1]) + ls[-1][:40])
    case("line_too_long", "line_too_long", 4, options={"max_line": 1024}, offset=None, also=["binary_missing"],
         spec=lambda s: s["objects"][0].update(data=bytes(range(256)) * 3 + bytes(132)),
         note="the limit is lowered to 1024 bytes; greeting.txt is 900 bytes in one chunk (1,200 base64)")
    case("line_too_long-by-one", "line_too_long", 4, options="max_line=len(line 4)-1", offset=None,
         also=["binary_missing"], note="the limit is one byte less than line 4 (the longest part line)",
         spec=lambda s: s["objects"][0].update(data=bytes(range(256)) * 3 + bytes(132)))
    case("line_too_long-manifest", "line_too_long", 1, options={"max_manifest_line": 1024}, offset=None,
         note="the manifest limit is lowered to 1024 bytes; the manifest is longer")
    case("trailing_data", "trailing_data", 10, offset=None,
         note="the closing line is repeated after the closing line",
         frame=lambda ls: b"".join(l + b"\n" for l in ls + [ls[-1]]))
    case("trailing_data-garbage", "trailing_data", 10, offset=None, allow=["json_syntax"],
         note="a line that is not JSON after the closing; reporting that it is not JSON is allowed",
         frame=lambda ls: b"".join(l + b"\n" for l in ls) + b"-- end of export --\n")
    case("trailing_data-part", "trailing_data", 10, offset=None,
         note="a well-formed part line follows the closing",
         frame=lambda ls: b"".join(l + b"\n" for l in ls + [ls[KV]]))
    case("closing_missing", "closing_missing", CLOSING, offset="eof",
         note="truncated before the closing line; the finding is at the line where the closing should be, offset = file length",
         frame=lambda ls: b"".join(l + b"\n" for l in ls[:-1]))
    case("manifest_missing", "manifest_missing", 1, offset=0, data=b"", note="an empty file")
    case("manifest_missing-part-first", "manifest_missing", 1, pointer="/kind",
         note="the manifest line is missing: the file starts with the first part",
         frame=lambda ls: b"".join(l + b"\n" for l in ls[1:]))
    case("manifest_missing-array", "manifest_missing", 1, pointer="",
         raw=lambda ls: [b"[" + ls[0] + b"]"] + ls[1:])

    # --- JSON profile --------------------------------------------------------
    case("json_syntax", "json_syntax", 1, offset=None, raw=sub(M, b'"journal":[]', b'"journal":[,]'))
    case("json_syntax-part", "json_syntax", 8, offset=None, also=["binary_missing"],
         raw=lambda ls: ls[:KV] + [ls[KV][:-1]] + ls[KV + 1:])
    case("json_syntax-literal", "json_syntax", 1, offset=None, raw=sub(M, b'"journal":[]', b'"journal":[True]'))
    case("json_syntax-nan", "json_syntax", 1, offset=None, raw=sub(M, b'"journal":[]', b'"journal":[NaN]'))
    case("json_syntax-leading-zero", "json_syntax", 1, offset=None, raw=sub(M, b'"epoch":1', b'"epoch":01'))
    case("json_syntax-control-in-string", "json_syntax", 1, offset=None,
         raw=sub(M, b'"sourceIdentity":"src-1"', b'"sourceIdentity":"src\x01-1"'))
    case("json_invalid_utf8", "json_invalid_utf8", 1, offset=None,
         raw=sub(M, b'"sourceIdentity":"src-1"', b'"sourceIdentity":"src\xff-1"'))
    case("json_invalid_utf8-part", "json_invalid_utf8", 8, offset=None, also=["binary_missing"],
         raw=sub(KV, b'"name":"kv"', b'"name":"k\xc3v"'))
    case("json_invalid_utf8-surrogate", "json_invalid_utf8", 1, offset=None,
         note="a surrogate encoded in UTF-8 (CESU-8 style, ED A0 80) is not UTF-8",
         raw=sub(M, b'"sourceIdentity":"src-1"', b'"sourceIdentity":"src\xed\xa0\x80"'))
    case("json_invalid_utf8-overlong", "json_invalid_utf8", 1, offset=None,
         raw=sub(M, b'"sourceIdentity":"src-1"', b'"sourceIdentity":"src\xc0\xaf"'))
    case("json_bom", "json_bom", 1, offset=0, raw=lambda ls: [b"\xef\xbb\xbf" + ls[0]] + ls[1:])
    case("json_bom-part", "json_bom", 8, offset=None, also=["binary_missing"],
         raw=lambda ls: ls[:KV] + [b"\xef\xbb\xbf" + ls[KV]] + ls[KV + 1:])
    case("json_duplicate_member", "json_duplicate_member", 1, offset=None,
         raw=sub(M, b'"journal":[]', b'"journal":{"a":1,"a":1}'))
    case("json_duplicate_member-top", "json_duplicate_member", 1, offset=None,
         raw=sub(M, b'"epoch":1,', b'"epoch":1,"epoch":1,'))
    case("json_duplicate_member-part", "json_duplicate_member", 8, offset=None, also=["binary_missing"],
         raw=sub(KV, b'"kind":"part"}', b'"kind":"part","kind":"part"}'))
    case("json_duplicate_member-escaped", "json_duplicate_member", 3, offset=None, also=["row_count", "content_hash_mismatch"],
         note="the same name spelled two ways (\"id\" and \"\\u0069d\") in a row: a rows part that does not parse loses its rows",
         raw=sub(USERS, b'"id":3,', b'"id":3,"\\u0069d":3,'))
    case("json_lone_surrogate", "json_lone_surrogate", 1, offset=None,
         raw=sub(M, b'"sourceIdentity":"src-1"', b'"sourceIdentity":"src-\\ud800"'))
    case("json_lone_surrogate-low", "json_lone_surrogate", 1, offset=None,
         raw=sub(M, b'"sourceIdentity":"src-1"', b'"sourceIdentity":"\\udc00src"'))
    case("json_lone_surrogate-reversed", "json_lone_surrogate", 1, offset=None,
         raw=sub(M, b'"sourceIdentity":"src-1"', b'"sourceIdentity":"\\ude00\\ud83d"'))
    case("json_lone_surrogate-part", "json_lone_surrogate", 8, offset=None, also=["binary_missing"],
         raw=sub(KV, b'"name":"kv"', b'"name":"kv\\ud83d"'))
    case("json_number_range", "json_number_range", 1, offset=None, raw=sub(M, b'"epoch":1', b'"epoch":1e400'))
    case("json_number_range-negative", "json_number_range", 1, offset=None,
         raw=sub(M, b'"journal":[]', b'"journal":[-1.8e308]'))
    case("json_number_range-part", "json_number_range", 8, offset=None, also=["binary_missing"],
         raw=sub(KV, b'"offset":0', b'"offset":1e400'))
    case("json_depth", "json_depth", 1, offset=None,
         note="journal holds 64 nested arrays inside the manifest object: depth 65",
         raw=sub(M, b'"journal":[]', b'"journal":' + nest(64)))
    case("json_depth-part", "json_depth", 8, offset=None, also=["binary_missing"],
         note="part (1) > items (2) > item (3) > 62 arrays: depth 65",
         raw=sub(KV, b'"data":"e30="', b'"data":' + nest(62)))
    case("not_canonical", "not_canonical", 1, offset=None, raw=sub(M, b'"epoch":1,', b'"epoch": 1,'))
    case("not_canonical-order", "not_canonical", 2, offset=None,
         note="members of a part in insertion order (kind, index, items) instead of sorted",
         raw=lambda ls: ls[:1] + [canon(dict([("kind", "part"), ("index", 0),
                                               ("items", json.loads(ls[1])["items"])]), sort=False).encode()] + ls[2:])
    case("not_canonical-code-point-order", "not_canonical", 1, offset=None,
         note="customMetadata members sorted by code point (U+FB01 before U+1F600) instead of UTF-16 code units",
         raw=sub(M, '"\U0001F600":"astral","\ufb01le":"ligature"'.encode(), '"\ufb01le":"ligature","\U0001F600":"astral"'.encode()))
    case("not_canonical-escape", "not_canonical", 2, offset=None, raw=sub(NOTES, b'"first"', b'"\\u0066irst"'))
    case("not_canonical-hex-case", "not_canonical", 2, offset=None, raw=sub(NOTES, b"\\u001f", b"\\u001F"))
    case("not_canonical-del-escaped", "not_canonical", 2, offset=None,
         note="U+007F escaped; JSON.stringify writes it as itself",
         raw=sub(NOTES, b"\x7f", b"\\u007f"))
    case("not_canonical-astral-escaped", "not_canonical", 2, offset=None,
         raw=sub(NOTES, "\U0001F600".encode(), b"\\ud83d\\ude00"))
    case("not_canonical-solidus", "not_canonical", 1, offset=None, raw=sub(M, b'"text/plain"', b'"text\\/plain"'))
    case("not_canonical-number", "not_canonical", 2, offset=None, raw=sub(NOTES, b'"user_id":7}', b'"user_id":7.0}'))
    case("not_canonical-exponent", "not_canonical", 3, offset=None, raw=sub(USERS, b'"score":1.5}', b'"score":15e-1}'))
    case("not_canonical-negative-zero", "not_canonical", 1, offset=None, raw=sub(M, b'"journal":[]', b'"journal":[-0]'))
    case("not_canonical-closing", "not_canonical", CLOSING, offset=None, craw=lambda l: l.replace(b",", b", ", 1))

    # --- records -------------------------------------------------------------
    case("record_kind", "record_kind", 9, pointer="/kind",
         note="an extra line (line 9) after the payloads whose kind is neither part nor closing (partCount counts it)",
         mut=add_part([]), raw=lambda ls: ls[:-1] + [b'{"kind":"note"}'])
    case("record_kind-item", "record_kind", 9, pointer="/items/0/kind",
         mut=add_part([{"kind": "blob", "data": ""}]))
    case("record_kind-manifest-again", "record_kind", 9, pointer="/kind",
         mut=add_part([]), raw=lambda ls: ls[:-1] + [ls[0]])
    case("record_kind-not-object", "record_kind", 9, pointer="",
         mut=add_part([]), raw=lambda ls: ls[:-1] + [b"[]"])
    case("unknown_member", "unknown_member", 1, pointer="/comment",
         mut=lambda a: a.manifest.update(comment="hello"))
    case("unknown_member-table", "unknown_member", 1, pointer="/tables/1/without_rowid",
         mut=lambda a: a.table("users").update(without_rowid=False))
    case("unknown_member-column", "unknown_member", 1, pointer="/tables/1/columns/1/collation",
         mut=lambda a: a.table("users")["columns"][1].update(collation="NOCASE"))
    case("unknown_member-object", "unknown_member", 1, pointer="/objects/0/etag",
         mut=lambda a: a.manifest["objects"][0].update(etag="abc"))
    case("unknown_member-payload", "unknown_member", 1, pointer="/payloads/1/type",
         mut=lambda a: a.manifest["payloads"][1].update(type="json"))
    case("unknown_member-part", "unknown_member", 2, pointer="/table",
         mut=lambda a: a.parts[0].update(table="notes"))
    case("unknown_member-row", "unknown_member", 3, pointer="/items/1/deleted",
         mut=lambda a: row(a, "users", 1).update(deleted=False))
    case("unknown_member-rowid", "unknown_member", 3, pointer="/items/0/rowid",
         note="a row of a primary-key table (rowidAlias null) carries a rowid",
         mut=lambda a: row(a, "users", 0).update(rowid=3))
    case("unknown_member-chunk", "unknown_member", 4, pointer="/items/0/size",
         mut=lambda a: a.parts[a.binary_part("greeting.txt")]["items"][0].update(size=13))
    case("unknown_member-closing", "unknown_member", CLOSING, pointer="/receipt",
         closing=lambda c: c.update(receipt=None))
    case("missing_member", "missing_member", 1, pointer="",
         mut=lambda a: a.manifest.pop("journal"))
    case("missing_member-table", "missing_member", 1, pointer="/tables/0",
         note="a rowid table without dependencies member",
         mut=lambda a: a.table("notes").pop("dependencies"))
    case("missing_member-part-index", "missing_member", 3, pointer="",
         mut=lambda a: a.parts[1].pop("index"))
    case("missing_member-row-index", "missing_member", 2, pointer="/items/1",
         mut=lambda a: row(a, "notes", 1).pop("index"))
    case("missing_member-rowid", "missing_member", 2, pointer="/items/1",
         note="a row of a rowid table without its rowid",
         mut=lambda a: row(a, "notes", 1).pop("rowid"))
    case("missing_member-closing", "missing_member", CLOSING, pointer="",
         closing=lambda c: c.pop("contentHash"))
    case("missing_member-object", "missing_member", 1, pointer="/objects/1",
         mut=lambda a: a.manifest["objects"][1].pop("customMetadata"))
    case("missing_member-chunk", "missing_member", 7, pointer="/items/0",
         also=["binary_missing"], note="a payload chunk without data carries no bytes",
         mut=lambda a: a.parts[a.binary_part("kv cache")]["items"][0].pop("data"))
    case("member_type", "member_type", 1, pointer="/product", mut=lambda a: a.manifest.update(product=5))
    case("member_type-tables", "member_type", 1, pointer="/excludedTables",
         mut=lambda a: a.manifest.update(excludedTables="sessions"))
    case("member_type-sql", "member_type", 1, pointer="/tables/1/sql", also=["invalid_table_sql"],
         note="sql is not a string: the table is not a CREATE TABLE statement either",
         mut=lambda a: a.table("users").update(sql=None))
    case("member_type-rowid-alias", "member_type", 1, pointer="/tables/1/rowidAlias",
         mut=lambda a: a.table("users").update(rowidAlias=False))
    case("member_type-configuration", "member_type", 1, pointer="/requiredConfiguration/0",
         mut=lambda a: a.manifest.update(requiredConfiguration=[7]))
    case("member_type-part-items", "member_type", 9, pointer="/items",
         mut=add_part({}))
    case("member_type-closing", "member_type", CLOSING, pointer="/archiveHash",
         closing=lambda c: c.update(archiveHash=0))
    case("unsupported_format", "unsupported_format", 1, pointer="/format",
         mut=lambda a: a.manifest.update(format="rer-portability-3"))
    case("unsupported_format-accepted-other", "unsupported_format", 1, pointer="/format",
         options={"formats": ["other-format"]}, note="with --accept-format other-format, rer-portability is not accepted")
    case("unsupported_version", "unsupported_version", 1, pointer="/version",
         mut=lambda a: a.manifest.update(version=3))
    case("unsupported_version-string", "unsupported_version", 1, pointer="/version",
         mut=lambda a: a.manifest.update(version="2"))
    case("invalid_name", "invalid_name", 1, pointer="/product", mut=lambda a: a.manifest.update(product=""))
    case("invalid_name-control", "invalid_name", 1, pointer="/sourceIdentity",
         mut=lambda a: a.manifest.update(sourceIdentity="src\t1"))
    case("invalid_name-too-long", "invalid_name", 1, pointer="/requiredConfiguration/0",
         note="257 astral characters are 514 UTF-16 code units (the limit is 512)",
         mut=lambda a: a.manifest.update(requiredConfiguration=["\U0001F600" * 257]))
    case("invalid_name-table", "invalid_name", 1, pointer="/tables/0/name",
         note="a table name with LF; its rows name it the same way",
         mut=lambda a: [a.table("notes").update(name="no\ntes")] + [it.update(table="no\ntes") for it in a.parts[0]["items"]])
    case("invalid_name-bucket", "invalid_name", 1, pointer="/objects/0/bucket",
         note="bucket files\\u0000 (for both objects and their chunks); the first finding is at /objects/0/bucket",
         spec=lambda s: [o.update(bucket="files\x00") for o in s["objects"]])
    case("invalid_exported_at", "invalid_exported_at", 1, pointer="/exportedAt",
         mut=lambda a: a.manifest.update(exportedAt="2023-02-29T00:00:00.000Z"))
    case("invalid_exported_at-no-millis", "invalid_exported_at", 1, pointer="/exportedAt",
         mut=lambda a: a.manifest.update(exportedAt="2026-01-02T03:04:05Z"))
    case("invalid_exported_at-offset", "invalid_exported_at", 1, pointer="/exportedAt",
         mut=lambda a: a.manifest.update(exportedAt="2026-01-02T03:04:05.678+00:00"))
    case("invalid_integer", "invalid_integer", 1, pointer="/epoch", mut=lambda a: a.manifest.update(epoch=-1))
    case("invalid_integer-fraction", "invalid_integer", 1, pointer="/epoch", mut=lambda a: a.manifest.update(epoch=1.5))
    case("invalid_integer-unsafe", "invalid_integer", 1, pointer="/epoch",
         mut=lambda a: a.manifest.update(epoch=2**53))
    case("invalid_integer-part-index", "invalid_integer", 3, pointer="/index",
         mut=lambda a: a.parts[1].update(index=-1))
    case("invalid_integer-closing", "invalid_integer", CLOSING, pointer="/partCount",
         closing=lambda c: c.update(partCount=7.5))
    case("schema_mismatch", "schema_mismatch", 1, pointer="/schema",
         seal={"schema": False}, mut=lambda a: a.manifest.update(schema="0" * 64))
    case("schema_mismatch-stale", "schema_mismatch", 1, pointer="/schema",
         note="the schema of the tables before a column was added",
         seal={"schema": False},
         mut=lambda a: (a.manifest.update(schema=schema_of(a.manifest["tables"])),
                        a.table("users").update(sql=a.table("users")["sql"].replace(")", ", x TEXT)")),
                        a.table("users")["columns"].append(col("x", "TEXT")),
                        [it["row"].update(x=None) for it in a.parts[1]["items"]]))
    case("table_order", "table_order", 1, pointer="/tables/1/name",
         note="tables in reverse name order (rows follow the manifest's order)",
         mut=lambda a: (a.manifest["tables"].reverse(),
                        a.parts.__setitem__(slice(0, 2), [a.parts[1], a.parts[0]]), a.renumber()))
    case("table_order-case-apart", "table_order", 1, pointer="/tables/2/name",
         note="USERS and users equal ignoring ASCII case with notes sorting between them (UTF-16 order puts upper case first)",
         mut=lambda a: (a.manifest["tables"].insert(0, {"name": "USERS", "sql": "CREATE TABLE USERS(x TEXT)",
                                                       "columns": [col("x", "TEXT")], "dependencies": [],
                                                       "rowidAlias": "rowid", "count": 0})))
    case("table_order-case", "table_order", 1, pointer="/tables/1/name",
         note="two tables whose names differ only in ASCII case: NOTES (no rows) and notes",
         mut=lambda a: (a.manifest["tables"].insert(0, {"name": "NOTES", "sql": "CREATE TABLE NOTES(x TEXT)",
                                                       "columns": [col("x", "TEXT")], "dependencies": [],
                                                       "rowidAlias": "rowid", "count": 0})))
    case("invalid_table_sql", "invalid_table_sql", 1, pointer="/tables/1/sql",
         mut=lambda a: a.table("users").update(sql="CREATE VIRTUAL TABLE users USING fts5(id, name, avatar, score)"))
    case("invalid_table_sql-view", "invalid_table_sql", 1, pointer="/tables/0/sql",
         mut=lambda a: a.table("notes").update(sql="CREATE VIEW notes AS SELECT 1"))
    case("invalid_table_sql-temp", "invalid_table_sql", 1, pointer="/tables/0/sql",
         mut=lambda a: a.table("notes").update(sql="CREATE TEMP TABLE notes(body TEXT, user_id INTEGER)"))
    case("invalid_table_sql-multibyte", "invalid_table_sql", 1, pointer="/tables/0/sql",
         note="a multi-byte character inside the word after CREATE (found by fuzzing: the check once sliced inside it and panicked)",
         mut=lambda a: a.table("notes").update(sql="CREATE TABL\u00c9E notes(body TEXT, user_id INTEGER)"))
    # table_sql: the sql passes the lexical rule but SQLite's parser finds
    # more than the one plain CREATE TABLE of the table.
    notes_sql = "CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))"
    users_sql = "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, score REAL)"

    def sql_case(name, table, note, sql, column=None):
        at = 0 if table == "notes" else 1

        def mut(a):
            a.table(table).update(sql=sql)
            if column:
                a.table(table)["columns"].append(column)
        case(name, "table_sql", 1, pointer=f"/tables/{at}/sql", note=note, mut=mut)

    def gen_case(name, note, call):
        sql_case(name, "users", note,
                 users_sql.replace("score REAL", f"score REAL, initial TEXT AS ({call})"),
                 column=col("initial", "TEXT", generated="virtual"))
    sql_case("table_sql", "notes", "a DELETE after the CREATE TABLE",
             notes_sql + "; DELETE FROM users")
    sql_case("table_sql-attach", "users",
             "an ATTACH and a DROP TABLE in the attached database after the CREATE TABLE",
             users_sql + "; ATTACH '/tmp/other.db' AS other; DROP TABLE other.users")
    sql_case("table_sql-trigger", "notes", "a CREATE TRIGGER after the CREATE TABLE",
             notes_sql + "; CREATE TRIGGER notes_wipe AFTER INSERT ON notes BEGIN DELETE FROM users; END")
    sql_case("table_sql-dot-command", "notes",
             "a dot-command on its own line: the sqlite3 shell runs it when a SQL patch holding the sql is piped in",
             notes_sql + ";\n.shell touch /tmp/ndarc-pwned\n-- ")
    sql_case("table_sql-comment", "notes",
             "a comment after the CREATE TABLE (sqlite_schema never holds one)",
             notes_sql + "; -- and more")
    sql_case("table_sql-as-select", "notes", "the table's columns and rows from a query",
             "CREATE TABLE notes AS SELECT 'x' AS body, 1 AS user_id")
    sql_case("table_sql-temp", "notes",
             "the table in the temp schema (CREATE TEMP TABLE is invalid_table_sql)",
             notes_sql.replace("TABLE notes", "TABLE temp.notes"))
    sql_case("table_sql-schema", "notes", "the table name qualified by the main schema",
             notes_sql.replace("TABLE notes", "TABLE main.notes"))
    sql_case("table_sql-name", "notes", "the sql of notes is the sql of users", users_sql)
    sql_case("table_sql-column", "users",
             "the sql declares score TEXT; the manifest (and the rows) say REAL",
             users_sql.replace("score REAL", "score TEXT"))
    sql_case("table_sql-writefile-default", "notes",
             "a DEFAULT calling writefile (an application function of the sqlite3 shell)",
             notes_sql.replace("body TEXT", "body TEXT DEFAULT (writefile('/tmp/ndarc-pwned', 'x'))"))
    sql_case("table_sql-readfile-check", "users",
             "a CHECK calling readfile (an application function of the sqlite3 shell)",
             users_sql.replace("NOT NULL", "NOT NULL CHECK (name <> readfile('/etc/passwd'))"))
    gen_case("table_sql-edit-generated",
             "a generated column calling edit (an application function of the sqlite3 shell)",
             "edit(name, 'vi')")
    sql_case("table_sql-load_extension-default", "notes", "a DEFAULT calling load_extension",
             notes_sql.replace("body TEXT", "body TEXT DEFAULT (load_extension('/tmp/x.so'))"))
    sql_case("table_sql-load_extension-check", "users", "a CHECK calling load_extension",
             users_sql.replace("score REAL", "score REAL, CHECK (load_extension('/tmp/x.so') IS NULL)"))
    gen_case("table_sql-load_extension-generated", "a generated column calling load_extension",
             "load_extension('/tmp/x.so')")
    case("empty_columns", "empty_columns", 1, pointer="/tables/2/columns", also=["table_sql"],
         note="CREATE TABLE zzz() does not prepare either (table_sql)",
         mut=lambda a: a.manifest["tables"].append({"name": "zzz", "sql": "CREATE TABLE zzz()", "columns": [],
                                                    "dependencies": [], "rowidAlias": "rowid", "count": 0}))
    case("duplicate_column", "duplicate_column", 1, pointer="/tables/0/columns/2/name",
         note="a second column BODY (names are case-insensitive); rows carry both",
         mut=lambda a: (a.table("notes")["columns"].append(col("BODY", "TEXT")),
                        [it["row"].update(BODY=None) for it in a.parts[0]["items"]]))
    case("reserved_column", "reserved_column", 1, pointer="/tables/0/columns/2/name",
         mut=lambda a: (a.table("notes")["columns"].append(col("rer_portability_rowid", "INTEGER")),
                        [it["row"].update(rer_portability_rowid=None) for it in a.parts[0]["items"]]))
    case("invalid_notnull", "invalid_notnull", 1, pointer="/tables/1/columns/2/notnull",
         mut=lambda a: a.table("users")["columns"][2].update(notnull=2))
    case("invalid_notnull-bool", "invalid_notnull", 1, pointer="/tables/1/columns/2/notnull",
         mut=lambda a: a.table("users")["columns"][2].update(notnull=False))
    case("invalid_pk", "invalid_pk", 1, pointer="/tables/1/columns",
         note="a composite key with positions 1 and 3",
         mut=lambda a: a.table("users")["columns"][1].update(pk=3))
    case("invalid_pk-fraction", "invalid_pk", 1, pointer="/tables/1/columns/1/pk",
         mut=lambda a: a.table("users")["columns"][1].update(pk=0.5))
    case("invalid_pk-twice", "invalid_pk", 1, pointer="/tables/1/columns",
         note="two columns at key position 1",
         mut=lambda a: a.table("users")["columns"][1].update(pk=1))
    case("generated_primary_key", "generated_primary_key", 1, pointer="/tables/1/columns/4/pk",
         note="a generated column at key position 2 (id stays position 1, so keys stay unique)",
         mut=lambda a: a.table("users")["columns"].append(col("slug", "TEXT", 0, 2, "stored")))
    case("invalid_generated", "invalid_generated", 1, pointer="/tables/1/columns/4/generated",
         note="generated is neither virtual nor stored, so the column counts as writable and rows carry it",
         mut=lambda a: (a.table("users")["columns"].append(col("slug", "TEXT", 0, 0, "always")),
                        [it["row"].update(slug=None) for it in a.parts[1]["items"]]))
    case("dependency_order", "dependency_order", 1, pointer="/tables/0/dependencies/1",
         note="notes depends on users and on itself, listed unsorted",
         mut=lambda a: a.table("notes").update(dependencies=["users", "notes"]))
    case("dependency_order-duplicate", "dependency_order", 1, pointer="/tables/0/dependencies/1",
         mut=lambda a: a.table("notes").update(dependencies=["users", "users"]))
    case("excluded_foreign_key", "excluded_foreign_key", 1, pointer="/tables/0/dependencies/0",
         mut=lambda a: a.table("notes").update(dependencies=["sessions", "users"]))
    case("excluded_foreign_key-case", "excluded_foreign_key", 1, pointer="/tables/0/dependencies/0",
         note="table names compare ignoring ASCII case",
         mut=lambda a: a.table("notes").update(dependencies=["SESSIONS", "users"]))
    case("missing_dependency", "missing_dependency", 1, pointer="/tables/0/dependencies/0",
         note="a warning: the archive is still importable",
         mut=lambda a: a.table("notes").update(dependencies=["accounts", "users"]))
    case("rowid_alias_mismatch", "rowid_alias_mismatch", 1, pointer="/tables/0/rowidAlias",
         mut=lambda a: a.table("notes").update(rowidAlias="oid"))
    case("rowid_alias_mismatch-shadowed", "rowid_alias_mismatch", 1, pointer="/tables/0/rowidAlias",
         note="a column named ROWID shadows rowid, so the alias is _rowid_",
         mut=lambda a: (a.table("notes")["columns"].append(col("ROWID", "TEXT")),
                        [it["row"].update(ROWID=None) for it in a.parts[0]["items"]]))
    case("rowid_alias_mismatch-all-shadowed", "rowid_alias_mismatch", 1, pointer="/tables/0/rowidAlias",
         note="rowid, _rowid_ and oid are all column names and there is no primary key",
         mut=lambda a: (a.table("notes")["columns"].extend([col("rowid", "TEXT"), col("_rowid_", "TEXT"), col("OID", "TEXT")]),
                        [it["row"].update(rowid=None, _rowid_=None, OID=None) for it in a.parts[0]["items"]]))
    case("rowid_alias_mismatch-null", "rowid_alias_mismatch", 1, pointer="/tables/0/rowidAlias",
         note="a table without primary key says rowidAlias null; its rows carry no rowid accordingly, so they "
              "have no row key either (every key is the empty primary key)",
         allow=["duplicate_row_key"],
         mut=lambda a: (a.table("notes").update(rowidAlias=None), [it.pop("rowid") for it in a.parts[0]["items"]]))
    # --- policy (SPEC.md §15): the base archive, checked against a policy ------
    zeros = "0" * 64
    case("policy_product", "policy_product", 1, pointer="/product",
         options={"policy": {"product": "shop"}},
         note="the archive is an export of corpus; the policy expects shop")
    case("policy_schema", "policy_schema", 1, pointer="/schema",
         options={"policy": {"acceptedSchemas": [zeros]}},
         note="the importer accepts one schema identity, not this archive's")
    case("policy_content_hash", "policy_content_hash", CLOSING, pointer="/contentHash",
         options={"policy": {"contentHash": zeros}},
         note="the server reported another contentHash than the archive carries")
    case("policy_exclusion", "policy_exclusion", 1, pointer="/tables/0/name",
         options={"policy": {"excludeTables": ["NOTE%"]}},
         note="notes matches the policy's exclusion NOTE% (ASCII case-insensitive, % a prefix)")
    case("policy_exclusion-secret", "policy_exclusion", 1, pointer="/tables/1/columns/3/name",
         options={"policy": {"secretColumns": {"users": ["Score"]}}},
         note="users.score is a secret column under the policy but is not in excludedColumns")
    case("policy_configuration", "policy_configuration", 1, pointer="/requiredConfiguration",
         options={"policy": {"requiredConfiguration": ["MAIL_KEY", "DB_URL"]}},
         note="the policy provides MAIL_KEY and DB_URL; the archive names only MAIL_KEY")
    case("policy_exclusion-derived", "policy_exclusion", 1, pointer="/tables/1/name",
         options={"policy": {"derivedTables": ["users"]}},
         note="users is a derived table under the policy: the producer excludes it")
    case("policy_table_missing", "policy_table_missing", 1, pointer="/tables",
         options={"policy": {"includeTables": ["audit"]}},
         note="the policy includes table audit, but the archive does not hold it")
    case("policy_bucket", "policy_bucket", 1, pointer="/objects/0/bucket",
         options={"policy": {"buckets": {"images": {}}}},
         note="the objects are in bucket files; the policy exports only images")
    case("policy_bucket-prefix", "policy_bucket", 1, pointer="/objects/0/key",
         options={"policy": {"buckets": {"files": {"prefix": "logo"}}}},
         note="greeting.txt is outside the prefix logo of bucket files")
    case("policy_payload", "policy_payload", 1, pointer="/payloads/0/name",
         options={"policy": {"extraPayloads": {"kv": {}}}},
         note="payload kv cache is not one of the policy's extra payloads (kv)")
    # A bucket's objectReferences: its objects are exactly the distinct non-null values of a column.
    def refs(table, column):
        return {"policy": {"buckets": {"files": {"objectReferences": {"table": table, "keyColumn": column}}}}}

    def bodies(*values):
        def f(a):
            for i, v in enumerate(values):
                row(a, "notes", i)["row"]["body"] = v
        return f
    case("object_references", "object_references", 2, pointer="/items/1/row/body",
         options=refs("notes", "body"),
         note="notes.body holds the keys of bucket files; the row at rowid 5 references missing.png, "
              "which is not an object of the bucket",
         mut=bodies("greeting.txt", "missing.png", "logo.bin"))
    case("object_references-unreferenced", "object_references", 1, pointer="/objects/1/key",
         options=refs("notes", "body"),
         note="every row of notes references greeting.txt (or nothing); logo.bin of bucket files is "
              "referenced by no row",
         mut=bodies("greeting.txt", None, "greeting.txt"))
    case("reference_column_missing", "reference_column_missing", 1, pointer="/tables/0/columns",
         options=refs("notes", "title"),
         note="the policy's objectReferences names notes.title; notes has no column title")
    case("reference_column_missing-table", "reference_column_missing", 1, pointer="/tables",
         options=refs("attachments", "key"),
         note="the policy's objectReferences names table attachments, which the archive does not hold")
    case("reference_column_excluded", "reference_column_excluded", 1, pointer="/excludedTables/0",
         options=refs("sessions", "file"),
         note="the policy's objectReferences names table sessions, which the archive excludes")
    case("reference_column_excluded-secret", "reference_column_excluded", 1,
         pointer="/excludedColumns/users/0", options=refs("users", "avatar"),
         note="the policy's objectReferences names users.avatar, an excluded (secret) column the rows "
              "do not carry",
         mut=lambda a: (a.manifest.update(excludedColumns={"users": ["avatar"]}),
                        [it["row"].pop("avatar") for it in a.parts[1]["items"]]))

    # --- integrity (SPEC.md §11, verify --integrity): the rows against the
    # foreign keys of the tables' own sql; the base archive's notes.user_id
    # REFERENCES users(id) ----------------------------------------------------
    integrity = {"integrity": True}

    def user_id(i, v):
        def f(a):
            row(a, "notes", i)["row"]["user_id"] = v
        return f
    case("foreign_key_violation", "foreign_key_violation", 2, pointer="/items/2/row/user_id",
         options=integrity, mut=user_id(2, 12345),
         note="notes row 2 has user_id 12345; users has ids 3 and 7 only: a database with "
              "foreign_keys=ON refuses the row")
    case("foreign_key_violation-both", "foreign_key_violation", 2, pointer="/items/0/row/user_id",
         also=["foreign_key_violation"], options=integrity,
         mut=lambda a: (user_id(0, 4)(a), user_id(2, 8)(a)),
         note="two rows of notes name users 4 and 8, which do not exist: each is a finding, in line order")
    case("foreign_key_mismatch", "foreign_key_mismatch", 1, pointer="/tables/0/sql", options=integrity,
         mut=lambda a: a.table("notes").update(
             sql="CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(name))"),
         note="notes.user_id references users(name), which is neither the primary key of users nor "
              "UNIQUE: SQLite calls the foreign key a mismatch and refuses every change to notes")

    # --- importable tables (SPEC.md §4.3) --------------------------------------
    def plain_table(name, cols=None, alias="rowid"):
        cols = cols or [col("x", "TEXT")]
        return {"name": name, "sql": "CREATE TABLE \"%s\"(%s)" % (name, ", ".join(
            '"%s" %s' % (c["name"].replace('"', '""'), c["type"]) for c in cols)),
            "columns": cols, "dependencies": [], "rowidAlias": alias, "count": 0}
    case("unsupported_copy_rowid", "unsupported_copy_rowid", 1, pointer="/tables/1/columns",
         note="a primary-key table with columns named rowid, _rowid_ and OID: the import addresses its copy "
              "through a free rowid alias (copyRowid in copies.mjs), so it cannot restore the table",
         mut=lambda a: a.manifest["tables"].insert(1, plain_table("tags", [
             col("id", "INTEGER", 0, 1), col("rowid", "TEXT"), col("_rowid_", "TEXT"), col("OID", "TEXT")], None)))
    case("transfer_sql_limit", "transfer_sql_limit", 1, pointer="/tables/2/columns",
         note="40 INTEGER columns with 503-character names (3 bytes each in UTF-8): the producer's "
              "CAST(s.\"c\" AS TEXT) AS \"c\" projection takes 121,239 bytes, over D1's 100,000 less 1,024",
         mut=lambda a: a.manifest["tables"].append(plain_table(
             "wide", [col("\u20ac" * 500 + "%03d" % i, "INTEGER") for i in range(40)])))
    case("reserved_table", "reserved_table", 1, pointer="/tables/1/name", also=["table_sql"],
         note="sqlite_stat1: SQLite refuses CREATE TABLE for names starting with sqlite_ (so its sql does not prepare: table_sql)",
         mut=lambda a: a.manifest["tables"].insert(1, plain_table("sqlite_stat1")))
    case("reserved_table-cf", "reserved_table", 1, pointer="/tables/0/name",
         note="_CF_kv: D1 reserves the _cf_ prefix (ASCII case-insensitive)",
         mut=lambda a: a.manifest["tables"].insert(0, plain_table("_CF_kv")))
    case("default_excluded_table", "default_excluded_table", 1, pointer="/tables/1/name",
         note="a warning: oa_sessions matches the producer's default exclusion oa_%, so only an explicit "
              "include archives it",
         mut=lambda a: a.manifest["tables"].insert(1, plain_table("oa_sessions")))

    def dev_credentials(a):
        a.manifest["tables"].insert(1, plain_table("oa_dev_credentials"))
        a.parts.insert(1, {"kind": "part", "index": 0, "items": [
            {"kind": "row", "table": "oa_dev_credentials", "index": 0, "row": {"x": "dev"}, "rowid": 1}]})
        a.renumber()
    case("dev_data", "dev_data", 1, pointer="/tables/1/count",
         also=["default_excluded_table"],
         note="oa_dev_credentials holds a row: the import refuses development credentials (refuseDevData)",
         mut=dev_credentials)

    def dev_session(a):
        a.manifest["tables"].insert(1, plain_table("oa_sessions", [col("kind", "TEXT"), col("token", "TEXT")]))
        a.parts.insert(1, {"kind": "part", "index": 0, "items": [
            {"kind": "row", "table": "oa_sessions", "index": 0, "row": {"kind": "live", "token": "a"}, "rowid": 1},
            {"kind": "row", "table": "oa_sessions", "index": 1, "row": {"kind": "dev", "token": "b"}, "rowid": 2}]})
        a.renumber()
    case("dev_data-session", "dev_data", 3, pointer="/items/1/row/kind",
         also=["default_excluded_table"],
         note="an oa_sessions row whose kind is \"dev\": the import refuses development sessions (refuseDevData)",
         mut=dev_session)
    case("object_order", "object_order", 1, pointer="/objects/1",
         mut=lambda a: (a.manifest["objects"].reverse(),
                        a.parts.__setitem__(slice(2, 5), [a.parts[3], a.parts[4], a.parts[2]]), a.renumber()))
    case("object_order-utf16", "object_order", 1, pointer="/objects/3",
         note="keys in code-point order: U+FB01 before U+1F600 (UTF-16 order puts U+1F600 first)",
         mut=lambda a: (a.manifest["objects"].extend([
             {"bucket": "files", "key": "\ufb01", "size": 1, "sha256": sha(b"1"), "httpMetadata": {}, "customMetadata": {}},
             {"bucket": "files", "key": "\U0001F600", "size": 1, "sha256": sha(b"2"), "httpMetadata": {}, "customMetadata": {}}]),
             a.parts.__setitem__(slice(5, 5), [
                 {"kind": "part", "index": 0, "items": [{"kind": "object", "bucket": "files", "key": "\ufb01", "offset": 0, "data": b64(b"1")}]},
                 {"kind": "part", "index": 0, "items": [{"kind": "object", "bucket": "files", "key": "\U0001F600", "offset": 0, "data": b64(b"2")}]}]),
             a.renumber()))
    case("object_order-duplicate", "object_order", 1, pointer="/objects/1",
         note="greeting.txt listed twice (and its chunk twice)",
         allow=["item_order", "binary_missing"],
         mut=lambda a: (a.manifest["objects"].insert(1, dict(a.manifest["objects"][0])),
                        a.parts.insert(3, json.loads(json.dumps(a.parts[2]))), a.renumber()))
    case("payload_order", "payload_order", 1, pointer="/payloads/1",
         note="payloads in plain name order (kv, kv cache); the producer's order is kv cache, kv",
         mut=lambda a: (a.manifest["payloads"].reverse(),
                        a.parts.__setitem__(slice(5, 7), [a.parts[6], a.parts[5]]), a.renumber()))
    case("payload_order-duplicate", "payload_order", 1, pointer="/payloads/2",
         allow=["item_order", "binary_missing"],
         mut=lambda a: (a.manifest["payloads"].append(dict(a.manifest["payloads"][1])),
                        a.parts.append(json.loads(json.dumps(a.parts[6]))), a.renumber()))
    case("invalid_sha256", "invalid_sha256", 1, pointer="/objects/0/sha256", also=["sha256_mismatch"],
         note="the right digest in uppercase hex: not the lowercase digest, so it does not match either",
         mut=lambda a: a.manifest["objects"][0].update(sha256=a.manifest["objects"][0]["sha256"].upper()))
    case("invalid_sha256-closing", "invalid_sha256", CLOSING, pointer="/contentHash", also=["content_hash_mismatch"],
         closing=lambda c: c.update(contentHash=c["contentHash"][:63]))
    case("invalid_sha256-payload", "invalid_sha256", 1, pointer="/payloads/1/sha256", also=["sha256_mismatch"],
         mut=lambda a: a.manifest["payloads"][1].update(sha256="sha256:" + a.manifest["payloads"][1]["sha256"]))
    case("invalid_metadata", "invalid_metadata", 1, pointer="/objects/0/httpMetadata/contentLength",
         mut=lambda a: a.manifest["objects"][0]["httpMetadata"].update(contentLength=13))
    case("invalid_metadata-array", "invalid_metadata", 1, pointer="/objects/1/customMetadata",
         mut=lambda a: a.manifest["objects"][1].update(customMetadata=[]))
    case("excluded_table_order", "excluded_table_order", 1, pointer="/excludedTables/1",
         mut=lambda a: a.manifest.update(excludedTables=["sessions", "audit"]))
    case("excluded_table_order-duplicate", "excluded_table_order", 1, pointer="/excludedTables/1",
         mut=lambda a: a.manifest.update(excludedTables=["sessions", "sessions"]))
    case("excluded_table_present", "excluded_table_present", 1, pointer="/excludedTables/0",
         mut=lambda a: a.manifest.update(excludedTables=["notes", "sessions"]))
    case("excluded_table_present-case", "excluded_table_present", 1, pointer="/excludedTables/0",
         mut=lambda a: a.manifest.update(excludedTables=["NOTES", "sessions"]))
    case("excluded_column_unknown", "excluded_column_unknown", 1, pointer="/excludedColumns/ghosts",
         mut=lambda a: a.manifest.update(excludedColumns={"ghosts": ["x"]}))
    case("excluded_column_unknown-column", "excluded_column_unknown", 1, pointer="/excludedColumns/notes/0",
         mut=lambda a: a.manifest.update(excludedColumns={"notes": ["title"]}))
    case("excluded_column_required", "excluded_column_required", 1, pointer="/excludedColumns/users/0",
         note="a NOT NULL column is excluded (rows leave it out as excluded columns)",
         mut=lambda a: (a.manifest.update(excludedColumns={"users": ["name"]}),
                        [it["row"].pop("name") for it in a.parts[1]["items"]]))
    case("excluded_column_required-pk", "excluded_column_required", 1, pointer="/excludedColumns/users/0",
         note="the primary key is excluded (rows leave it out, so every row key is empty)",
         allow=["duplicate_row_key"],
         mut=lambda a: (a.manifest.update(excludedColumns={"users": ["id"]}),
                        [it["row"].pop("id") for it in a.parts[1]["items"]]))
    case("excluded_column_required-generated", "excluded_column_required", 1, pointer="/excludedColumns/users/0",
         mut=lambda a: (a.table("users")["columns"].append(col("slug", "TEXT", 0, 0, "virtual")),
                        add_to_users_sql(a, "slug TEXT AS (lower(name))"),
                        a.manifest.update(excludedColumns={"users": ["slug"]})))
    case("excluded_column_duplicate", "excluded_column_duplicate", 1, pointer="/excludedColumns/notes/1",
         mut=lambda a: (a.manifest.update(excludedColumns={"notes": ["body", "body"]}),
                        [it["row"].pop("body") for it in a.parts[0]["items"]]))
    case("duplicate_configuration", "duplicate_configuration", 1, pointer="/requiredConfiguration/1",
         mut=lambda a: a.manifest.update(requiredConfiguration=["MAIL_KEY", "MAIL_KEY"]))

    # --- parts ---------------------------------------------------------------
    case("part_index", "part_index", 8, pointer="/index",
         note="the last part says index 7 where 6 is expected", mut=lambda a: a.parts[-1].update(index=7))
    case("part_index-from-one", "part_index", 2, pointer="/index",
         note="parts numbered from 1", mut=lambda a: [p.update(index=p["index"] + 1) for p in a.parts])
    case("part_index-repeat", "part_index", 3, pointer="/index",
         note="two parts say index 0 (the second holds the users rows)", mut=lambda a: a.parts[1].update(index=0),
         allow=[])
    case("empty_part", "empty_part", 9, pointer="/items", mut=add_part([]))
    case("mixed_part", "mixed_part", 2, pointer="/items/3",
         note="a users row inside the part of notes rows (the users rows are also in their own part)",
         mut=lambda a: a.parts[0]["items"].append(json.loads(json.dumps(a.parts[1]["items"][0]))))
    case("mixed_part-binaries", "mixed_part", 4, pointer="/items/1",
         note="an object part holds a second item (a copy of the payload kv's chunk, which also has its own part)",
         mut=lambda a: a.parts[2]["items"].append(json.loads(json.dumps(a.parts[6]["items"][0]))))
    case("mixed_part-object-in-rows", "mixed_part", 3, pointer="/items/2",
         mut=lambda a: a.parts[1]["items"].append(json.loads(json.dumps(a.parts[2]["items"][0]))))
    case("item_order", "item_order", 7, pointer="/items/0",
         note="the payload kv cache before the last chunk of logo.bin: objects come before payloads",
         mut=lambda a: (a.parts.__setitem__(slice(4, 6), [a.parts[5], a.parts[4]]), a.renumber()))
    case("item_order-rows-after-objects", "item_order", 4, pointer="/items/0",
         note="the object greeting.txt before the rows of users: rows come first",
         mut=lambda a: (a.parts.__setitem__(slice(1, 3), [a.parts[2], a.parts[1]]), a.renumber()))
    case("item_order-tables", "item_order", 4, pointer="/items/0",
         note="rows of notes, users, then notes again (notes cut into two parts)",
         spec=lambda s: s["tables"][0].update(per_part=2),
         mut=lambda a: (a.parts.__setitem__(slice(1, 3), [a.parts[2], a.parts[1]]), a.renumber()))
    case("item_order-objects", "item_order", 6, pointer="/items/0",
         note="logo.bin's chunks before greeting.txt: objects come in manifest order",
         mut=lambda a: (a.parts.__setitem__(slice(2, 5), [a.parts[3], a.parts[4], a.parts[2]]), a.renumber()))
    case("unknown_table", "unknown_table", 9, pointer="/items/0/table",
         mut=add_part([{"kind": "row", "table": "ghosts", "index": 0, "rowid": 1, "row": {"x": 1}}]))
    case("unknown_table-case", "unknown_table", 9, pointer="/items/0/table",
         note="rows name a table as USERS; names in rows match the manifest exactly",
         mut=add_part([{"kind": "row", "table": "USERS", "index": 2, "row": {"id": 9, "name": "Eve", "avatar": None, "score": 0}}]))
    case("unknown_object", "unknown_object", 9, pointer="/items/0",
         mut=add_part([{"kind": "object", "bucket": "files", "key": "ghost.txt", "offset": 0, "data": b64(b"boo")}]))
    case("unknown_payload", "unknown_payload", 9, pointer="/items/0",
         mut=add_part([{"kind": "payload", "name": "kv2", "offset": 0, "data": b64(b"{}")}]))
    case("row_index", "row_index", 2, pointer="/items/1/index",
         mut=lambda a: [row(a, "notes", i).update(index=i + 1) for i in (1, 2)])
    case("row_index-first", "row_index", 3, pointer="/items/0/index",
         note="the rows of users start at index 1",
         mut=lambda a: [it.update(index=it["index"] + 1) for it in a.parts[1]["items"]])
    case("row_index-across-parts", "row_index", 3, pointer="/items/0/index",
         note="notes cut into two parts; the second starts at 3 instead of 2",
         spec=lambda s: s["tables"][0].update(per_part=2),
         mut=lambda a: a.parts[1]["items"][0].update(index=3))
    case("row_count", "row_count", 1, pointer="/tables/0/count", seal={"counts": False},
         mut=lambda a: a.seal() or a.table("notes").update(count=4))
    case("row_count-over", "row_count", 2, pointer="/items/0", seal={"counts": False},
         note="count 2 but three rows: reported on the part where the rows exceed the count",
         mut=lambda a: a.seal() or a.table("notes").update(count=2))
    case("row_count-empty-table", "row_count", 1, pointer="/tables/1/count", seal={"counts": False},
         note="users has count 2 and no rows at all",
         mut=lambda a: (a.parts.pop(1), a.renumber(), a.seal(counts=False)))
    case("row_columns", "row_columns", 3, pointer="/items/1/row",
         mut=lambda a: row(a, "users", 1)["row"].pop("score"))
    case("row_columns-extra", "row_columns", 3, pointer="/items/1/row",
         mut=lambda a: row(a, "users", 1)["row"].update(email=None))
    case("row_columns-case", "row_columns", 2, pointer="/items/0/row",
         note="a column spelled BODY in a row (row members match column names exactly)",
         mut=lambda a: row(a, "notes", 0).__setitem__("row", {"BODY": "first", "user_id": 7}))
    case("row_columns-generated", "row_columns", 3, pointer="/items/0/row",
         note="a generated column's value in a row",
         mut=lambda a: (a.table("users")["columns"].append(col("slug", "TEXT", 0, 0, "virtual")),
                        add_to_users_sql(a, "slug TEXT AS (lower(name))"),
                        row(a, "users", 0)["row"].update(slug="ada")))
    case("row_columns-excluded", "row_columns", 2, pointer="/items/0/row",
         note="an excluded column's value in a row",
         mut=lambda a: (a.manifest.update(excludedColumns={"notes": ["body"]}),
                        [it["row"].pop("body") for it in a.parts[0]["items"][1:]]))
    case("row_columns-not-object", "row_columns", 2, pointer="/items/1/row", allow=["content_hash_mismatch"],
         mut=lambda a: row(a, "notes", 1).update(row=[None, None]))
    case("row_not_null", "row_not_null", 3, pointer="/items/1/row/name",
         mut=lambda a: row(a, "users", 1)["row"].update(name=None))
    case("row_type", "row_type", 2, pointer="/items/0/row/body",
         mut=lambda a: row(a, "notes", 0)["row"].update(body=1))
    case("row_type-datetime-text", "row_type", 3, pointer="/items/1/row/joined",
         note="text in a DATETIME column (NUMBER affinity): the producer refuses it",
         mut=lambda a: (a.table("users")["columns"].append(col("joined", "DATETIME")),
                        add_to_users_sql(a, "joined DATETIME"),
                        [it["row"].update(joined=1700000000) for it in a.parts[1]["items"]],
                        row(a, "users", 1)["row"].update(joined="2024-01-01 10:00:00")))
    case("row_type-real-text", "row_type", 3, pointer="/items/0/row/score",
         mut=lambda a: row(a, "users", 0)["row"].update(score="1.5"))
    case("row_type-blob-in-text", "row_type", 2, pointer="/items/0/row/body",
         mut=lambda a: row(a, "notes", 0)["row"].update(body={"blob": b64(b"first")}))
    case("row_type-bool", "row_type", 3, pointer="/items/0/row/avatar",
         mut=lambda a: row(a, "users", 0)["row"].update(avatar=True))
    case("row_type-array", "row_type", 3, pointer="/items/0/row/avatar",
         mut=lambda a: row(a, "users", 0)["row"].update(avatar=[1]))
    case("row_type-object", "row_type", 3, pointer="/items/0/row/avatar",
         note="an object that is not {blob}",
         mut=lambda a: row(a, "users", 0)["row"].update(avatar={"blob": b64(PNG), "type": "png"}))
    case("unsafe_integer", "unsafe_integer", 2, pointer="/items/0/row/user_id",
         mut=lambda a: row(a, "notes", 0)["row"].update(user_id=2**53))
    case("unsafe_integer-text", "unsafe_integer", 2, pointer="/items/0/row/user_id",
         note="text in an INTEGER column",
         mut=lambda a: row(a, "notes", 0)["row"].update(user_id="7"))
    case("unsafe_integer-fraction", "unsafe_integer", 2, pointer="/items/0/row/user_id",
         mut=lambda a: row(a, "notes", 0)["row"].update(user_id=7.5))
    case("unsafe_integer-blob", "unsafe_integer", 2, pointer="/items/0/row/user_id",
         note="a blob in an INTEGER column is unsafe_integer (FORMAT-BRIEF §7)",
         mut=lambda a: row(a, "notes", 0)["row"].update(user_id={"blob": b64(b"\x07")}))
    case("unsafe_integer-rowid", "unsafe_integer", 2, pointer="/items/2/rowid",
         mut=lambda a: row(a, "notes", 2).update(rowid=2**53 + 2))
    case("unsafe_integer-negative", "unsafe_integer", 2, pointer="/items/0/row/user_id",
         mut=lambda a: row(a, "notes", 0)["row"].update(user_id=-(2**53)))
    case("invalid_base64", "invalid_base64", 3, pointer="/items/0/row/avatar/blob",
         note="the blob without padding",
         mut=lambda a: row(a, "users", 0)["row"].update(avatar={"blob": b64(PNG).rstrip("=")}))
    case("invalid_base64-bits", "invalid_base64", 3, pointer="/items/0/row/avatar/blob",
         note="unused bits not zero (iVBORw0KGgp= instead of iVBORw0KGgo=)",
         mut=lambda a: row(a, "users", 0)["row"].update(avatar={"blob": b64(PNG)[:-2] + "p="}))
    case("invalid_base64-chunk", "invalid_base64", 4, pointer="/items/0/data", allow=["binary_missing"],
         note="chunk data with whitespace; the object's bytes cannot be read, so reporting it incomplete is allowed",
         mut=lambda a: a.parts[2]["items"][0].update(data=b64(b"hello, world\n")[:8] + "\n" + b64(b"hello, world\n")[8:]))
    case("invalid_base64-url-alphabet", "invalid_base64", 5, pointer="/items/0/data", allow=["binary_missing"],
         note="the URL-safe alphabet (- and _) in the first of logo.bin's two chunks; the object's bytes cannot be read, "
              "so reporting it incomplete is allowed; the second chunk's offset (4) is right",
         mut=lambda a: a.parts[3]["items"][0].update(data=base64.urlsafe_b64encode(b"\x00\x01\xfb\xff").decode()))
    case("rowid_order", "rowid_order", 2, pointer="/items/2/rowid",
         mut=lambda a: row(a, "notes", 2).update(rowid=2))
    case("rowid_order-across-parts", "rowid_order", 3, pointer="/items/0/rowid",
         spec=lambda s: s["tables"][0].update(per_part=2),
         mut=lambda a: a.parts[1]["items"][0].update(rowid=4))
    case("duplicate_row_key", "duplicate_row_key", 3, pointer="/items/1/row",
         mut=lambda a: row(a, "users", 1)["row"].update(id=3))
    case("duplicate_row_key-rowid", "duplicate_row_key", 2, pointer="/items/1/rowid",
         mut=lambda a: row(a, "notes", 1).update(rowid=1))
    case("duplicate_row_key-composite", "duplicate_row_key", 2, pointer="/items/1/row",
         spec=lambda s: s.update(tables=[valid_archives()["composite-key"]["tables"][0]], objects=[], payloads=[]),
         mut=lambda a: row(a, "memberships", 1)["row"].update(team="b"))
    case("duplicate_row_key-across-parts", "duplicate_row_key", 4, pointer="/items/0/row",
         note="users cut into one row per part; the second row repeats key 3",
         spec=lambda s: s["tables"][1].update(per_part=1),
         mut=lambda a: a.parts[2]["items"][0]["row"].update(id=3))
    case("duplicate_row_key-rowid-unordered", "duplicate_row_key", 3, pointer="/items/1/rowid", also=["rowid_order"],
         note="notes rowids [1, 5] [3, 1]: out of order (an error for rowids) and 1 repeats across parts",
         spec=lambda s: (s["tables"][0].update(per_part=2),
                         s["tables"][0]["rows"].__setitem__(2, {"rowid": 3, "row": {"body": "x", "user_id": None}}),
                         s["tables"][0]["rows"].append({"rowid": 1, "row": {"body": "dup", "user_id": None}})))
    case("duplicate_row_key-unordered", "duplicate_row_key", 4, pointer="/items/1/row", also=["row_key_order"],
         note="users cut into parts [3, 7] [5, 3]: out of key order (a warning) and 3 repeats across parts; "
              "finding the repeat needs the re-scan",
         spec=lambda s: (s["tables"][1].update(per_part=2),
                         s["tables"][1]["rows"].extend([{"row": {"id": 5, "name": "Cy", "avatar": None, "score": 0}},
                                                        {"row": {"id": 3, "name": "Dup", "avatar": None, "score": 0}}])))
    case("duplicate_row_key-negative-zero", "duplicate_row_key", 3, pointer="/items/1/row", also=["not_canonical"],
         note="keys 0 and -0 are one value to SQLite (-0 is written as is, so the line is not canonical)",
         mut=lambda a: (row(a, "users", 0)["row"].update(id=0), row(a, "users", 1)["row"].update(id=0)),
         raw=sub(USERS, b'"id":0,"name":"Bob"', b'"id":-0,"name":"Bob"'))
    case("row_key_order", "row_key_order", 3, pointer="/items/1/row",
         note="a warning: users rows in descending key order",
         mut=lambda a: a.parts[1]["items"].reverse() or [it.update(index=i) for i, it in enumerate(a.parts[1]["items"])])
    case("row_key_order-types", "row_key_order", 3, pointer="/items/1/row",
         note="a warning: a text key before an integer key (SQLite orders numbers before text)",
         mut=lambda a: (a.table("users")["columns"][0].update(type=""),
                        a.table("users").update(
                            sql="CREATE TABLE users(id PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, score REAL)"),
                        row(a, "users", 0)["row"].update(id="3")))
    case("chunk_offset", "chunk_offset", 6, pointer="/items/0/offset",
         note="the second chunk of logo.bin says offset 5 where 4 is expected; the bytes themselves are complete and "
              "hash to sha256",
         mut=lambda a: a.parts[4]["items"][0].update(offset=5))
    case("chunk_offset-first", "chunk_offset", 4, pointer="/items/0/offset",
         note="a whole object in one chunk at offset 1",
         mut=lambda a: a.parts[2]["items"][0].update(offset=1))
    case("empty_chunk", "empty_chunk", 6, pointer="/items/0/data",
         note="logo.bin in three chunks, the middle one empty (offset 4, data \"\")",
         mut=lambda a: (a.parts.insert(4, {"kind": "part", "index": 0, "items": [
             {"kind": "object", "bucket": "files", "key": "logo.bin", "offset": 4, "data": ""}]}), a.renumber()))
    case("chunk_size", "chunk_size", 6, pointer="/items/0/data",
         note="logo.bin in chunks of 2, 4 and 2 bytes: the producer cuts every chunk but the last to one size",
         spec=lambda s: s["objects"][1].update(chunks=[2, 4, 2]))
    case("chunk_size-last", "chunk_size", 6, pointer="/items/0/data",
         note="logo.bin in chunks of 3 and 5 bytes: the last chunk is larger than the first",
         spec=lambda s: s["objects"][1].update(chunks=[3, 5]))
    case("part_row_count", "part_row_count", 2, pointer="/items/1000",
         note="1,001 rows of notes in one part; the producer packs at most 1,000 rows a part (nextItems)",
         spec=lambda s: s["tables"][0].update(per_part=1001, rows=[
             {"rowid": i + 1, "row": {"body": "r%d" % i, "user_id": None}} for i in range(1001)]))
    case("empty_chunk-payload", "empty_chunk", 8, pointer="/items/0/data",
         note="the payload kv cache in chunks of 1, 0 and 1 bytes",
         spec=lambda s: s["payloads"][0].update(chunks=[1, 0, 1]))
    case("binary_missing", "binary_missing", 1, pointer="/objects/0",
         note="greeting.txt has no chunks", mut=lambda a: (a.parts.pop(2), a.renumber()))
    case("binary_missing-last-chunk", "binary_missing", 1, pointer="/objects/1",
         note="logo.bin stops after its first chunk", mut=lambda a: (a.parts.pop(4), a.renumber()))
    case("binary_missing-payload", "binary_missing", 1, pointer="/payloads/1",
         note="the last payload has no chunk", mut=lambda a: (a.parts.pop(6), a.renumber()))
    case("binary_missing-empty-object", "binary_missing", 1, pointer="/objects/0",
         note="an empty object still has one chunk (offset 0, data \"\")",
         spec=lambda s: s["objects"].insert(0, {"bucket": "a", "key": "empty", "data": b""}),
         mut=lambda a: (a.parts.pop(2), a.renumber()))
    case("size_mismatch", "size_mismatch", 4, pointer="/items/0/data",
         note="greeting.txt's chunk holds 13 bytes but its size says 12 (sha256 is that of the 13 bytes)",
         mut=lambda a: a.manifest["objects"][0].update(size=12))
    case("size_mismatch-chunks", "size_mismatch", 6, pointer="/items/0/data",
         note="logo.bin's two chunks hold 8 bytes but its size says 6: reported at the chunk that goes past it",
         mut=lambda a: a.manifest["objects"][1].update(size=6))
    case("sha256_mismatch", "sha256_mismatch", 4, pointer="/items/0/data",
         mut=lambda a: a.manifest["objects"][0].update(sha256=sha(b"hello, world!\n")))
    case("sha256_mismatch-chunks", "sha256_mismatch", 6, pointer="/items/0/data",
         note="logo.bin's second chunk has other bytes",
         mut=lambda a: a.parts[4]["items"][0].update(data=b64(b"\xfc\xfd\xfe\x00")))
    case("sha256_mismatch-empty", "sha256_mismatch", 4, pointer="/items/0/data",
         note="an empty object whose sha256 is not that of no bytes",
         spec=lambda s: s["objects"].insert(0, {"bucket": "a", "key": "empty", "data": b""}),
         mut=lambda a: a.manifest["objects"][0].update(sha256=sha(b"x")))
    case("part_count_mismatch", "part_count_mismatch", 1, pointer="/partCount", seal={"part_count": False},
         note="the manifest says 8 parts; there are 7 (the closing says 7)",
         mut=lambda a: a.manifest.update(partCount=8), closing=lambda c: c.update(partCount=7))
    case("part_count_mismatch-closing", "part_count_mismatch", CLOSING, pointer="/partCount",
         closing=lambda c: c.update(partCount=6))
    case("content_hash_mismatch", "content_hash_mismatch", CLOSING, pointer="/contentHash",
         closing=lambda c: c.update(contentHash=sha(b"other")))
    case("content_hash_mismatch-rowid", "content_hash_mismatch", CLOSING, pointer="/contentHash",
         note="contentHash computed without the rowids of notes",
         closing=lambda c: c.update(contentHash=no_rowid_content))
    case("archive_hash_mismatch", "archive_hash_mismatch", CLOSING, pointer="/archiveHash",
         closing=lambda c: c.update(archiveHash=sha(b"other")))
    case("archive_hash_mismatch-with-lf", "archive_hash_mismatch", CLOSING, pointer="/archiveHash",
         note="archiveHash computed over lines with their LF",
         closing=lambda c: c.update(archiveHash=with_lf_hash))


_current = {}


def no_rowid_content(c=None):
    a = _current["archive"]
    saved = [[it.pop("rowid", None) for it in p["items"]] for p in a.parts[:1]]
    h = a.content_hash()
    for it, r in zip(a.parts[0]["items"], saved[0]):
        it["rowid"] = r
    return h


def with_lf_hash():
    a = _current["archive"]
    lines = [cbytes(a.manifest)] + [cbytes(p) for p in a.parts]
    return sha(b"".join(D(l + b"\n") for l in lines))


# ---------------------------------------------------------------------------
# Writing

# Every invalid fixture is written by the Rust mutator (the `fixtures`
# functions of the modules of crates/ndarc-gen/src/mutate/, one per section
# of SPEC.md; run by
# `cargo run -p ndarc-gen --example corpus -- --write testdata/invalid`).
# This script does not write them; `--check` builds them all, on its own,
# from `define_cases()`, and compares.


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def build_case(c):
    spec = base_spec()
    if c["spec"]:
        c["spec"](spec)
    a = Archive(spec)
    _current["archive"] = a
    if c["mut"]:
        c["mut"](a)
    closing = c["closing"]
    if closing:
        inner = closing

        def closing(cl):
            inner(cl)
            for k, v in list(cl.items()):
                if callable(v):
                    cl[k] = v()
    if c["data"] is not None:
        return c["data"]
    return a.render(raw=c["raw"], closing=closing, craw=c["craw"], frame=c["frame"], seal=c["seal"])


def _cross_check():
    """This script's sealing reproduces scripts/example-archive.py's output."""
    path = os.path.join(VALID, "example.ndjson")
    ex = {"product": "example", "tables": [
        {"name": "notes", "sql": "CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))",
         "columns": [col("body", "TEXT"), col("user_id", "INTEGER")], "dependencies": ["users"],
         "rows": [{"rowid": 1, "row": {"body": "first", "user_id": 7}},
                  {"rowid": 5, "row": {"body": None, "user_id": None}}]},
        {"name": "users", "sql": "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB)",
         "columns": [col("id", "INTEGER", 0, 1), col("name", "TEXT", 1), col("avatar", "BLOB")],
         "rows": [{"row": {"id": 7, "name": "Ada", "avatar": {"blob": b64(b"\x89PNG")}}}]}],
        "objects": [{"bucket": "files", "key": "greeting.txt", "data": b"hello, world\n",
                     "httpMetadata": {"contentType": "text/plain"}}],
        "payloads": [{"name": "kv", "data": b"{}"}], "excludedTables": ["sessions"],
        "requiredConfiguration": ["MAIL_KEY"]}
    with open(path, "rb") as f:
        assert Archive(ex).render() == f.read(), "sealing disagrees with testdata/valid/example.ndjson"


def lineage_cases():
    """name -> (earlier spec, later spec, [(code, pointer)], note): pairs of
    valid archives, the later checked against the earlier (SPEC.md §4.6).
    Every finding is on the later archive's manifest (line 1, offset 0)."""
    def spec(source="src-1", epoch=5, journal=None, migrations=None):
        s = base_spec()
        s["sourceIdentity"] = source
        s["epoch"] = epoch
        s["journal"] = journal if journal is not None else {
            "entries": [{"op": "migrate", "seq": 1}, {"op": "import", "seq": 2}], "head": "aaaa"}
        s["migrations"] = migrations if migrations is not None else [
            {"id": 1, "name": "0001_init.sql"}]
        return s
    grown_journal = {"entries": [{"op": "migrate", "seq": 1}, {"op": "import", "seq": 2},
                                 {"op": "export", "seq": 3}], "head": "bbbb"}
    grown_migrations = [{"id": 1, "name": "0001_init.sql"}, {"id": 2, "name": "0002_more.sql"}]
    later = lambda **kw: spec(**dict({"epoch": 6, "journal": grown_journal,
                                      "migrations": grown_migrations}, **kw))
    return {
        "follows": (spec(), later(), [],
                    "a later export of the same source: epoch up, journal and migrations extended"),
        "lineage_source_identity_mismatch": (
            spec(), later(source="src-2"), [("lineage_source_identity_mismatch", "/sourceIdentity")],
            "the later archive comes from another source"),
        "lineage_epoch_backwards": (
            spec(), later(epoch=4), [("lineage_epoch_backwards", "/epoch")],
            "the later archive's epoch is below the earlier's"),
        "lineage_journal_rewritten": (
            spec(), later(journal={"entries": [{"op": "migrate", "seq": 1}, {"op": "restore", "seq": 2},
                                               {"op": "export", "seq": 3}], "head": "bbbb"}),
            [("lineage_journal_rewritten", "/journal/entries/1")],
            "the later journal's second entry differs from the earlier's"),
        "lineage_migrations_rewritten": (
            spec(), later(migrations=[{"id": 2, "name": "0002_more.sql"}]),
            [("lineage_migrations_rewritten", "/migrations/0")],
            "the later migrations drop the earlier's first"),
        "every-rule": (
            spec(), later(source="src-2", epoch=4, journal=[], migrations=[]),
            [("lineage_source_identity_mismatch", "/sourceIdentity"),
             ("lineage_epoch_backwards", "/epoch"),
             ("lineage_journal_rewritten", "/journal"),
             ("lineage_migrations_rewritten", "/migrations")],
            "every rule broken at once, in the order they are checked"),
    }


def write_lineage():
    """Rewrites testdata/lineage/ from `lineage_cases()`."""
    if os.path.isdir(LINEAGE):
        for case in os.listdir(LINEAGE):
            d = os.path.join(LINEAGE, case)
            for f in os.listdir(d):
                os.remove(os.path.join(d, f))
            os.rmdir(d)
    for name, (earlier, later, findings, note) in lineage_cases().items():
        d = os.path.join(LINEAGE, name)
        os.makedirs(d)
        write(os.path.join(d, "earlier.ndjson"), Archive(earlier).render())
        write(os.path.join(d, "later.ndjson"), Archive(later).render())
        expected = {"findings": [{"code": c, "line": 1, "offset": 0, "pointer": p}
                                 for c, p in findings], "note": note}
        write(os.path.join(d, "expected.json"),
              (json.dumps(expected, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode())
    return len(lineage_cases())


def main():
    _self_test()
    _cross_check()
    check = None
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check = sys.argv[2]
    elif len(sys.argv) != 1:
        print("usage: make-corpus.py [--check DIR]", file=sys.stderr)
        sys.exit(2)
    if check is not None:
        sys.exit(check_invalid(check))
    os.makedirs(VALID, exist_ok=True)
    # Remove what an earlier run wrote (never example.ndjson).
    for f in os.listdir(VALID):
        if f != "example.ndjson" and f.endswith(".ndjson"):
            os.remove(os.path.join(VALID, f))
    for name, spec in valid_archives().items():
        a = Archive(spec)
        if name == "nesting-depth-64":
            data = a.render(raw=sub(M, b'"journal":{"batches":[[[0]]],"deep":null}',
                                    b'"journal":{"batches":[[[0]]],"deep":' + nest(62) + b"}"))
        else:
            data = a.render()
        write(os.path.join(VALID, name + ".ndjson"), data)
    print("wrote %d valid archives (testdata/invalid is written by the Rust mutator; "
          "--check checks it)" % len(valid_archives()), file=sys.stderr)
    print("wrote %d lineage pairs to testdata/lineage" % write_lineage(), file=sys.stderr)


def check_invalid(directory):
    """Builds every invalid fixture here, independently of the Rust
    mutator, and compares it with DIR byte for byte (archive and sidecar);
    writes nothing. Returns the exit status."""
    want = {}
    for c, data, side in invalid_cases():
        want[c["name"] + ".ndjson"] = data
        want[c["name"] + ".json"] = side
    got = set(f for f in os.listdir(directory) if f.endswith((".ndjson", ".json")))
    problems = []
    for f in sorted(set(want) | got):
        if f not in got:
            problems.append("%s: missing" % f)
        elif f not in want:
            problems.append("%s: not a fixture this script defines" % f)
        else:
            with open(os.path.join(directory, f), "rb") as fh:
                if fh.read() != want[f]:
                    problems.append("%s: differs from what this script builds" % f)
    for p in problems:
        print(p, file=sys.stderr)
    print("checked %d invalid fixtures in %s: %d problems"
          % (len(want) // 2, directory, len(problems)), file=sys.stderr)
    return 1 if problems else 0


def invalid_cases():
    """(case, archive bytes, sidecar bytes) of every invalid case."""
    CASES.clear()
    define_cases()
    names = set()
    for c in CASES:
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        assert c["name"] == c["code"] or c["name"].startswith(c["code"] + "-"), c["name"]
        data = build_case(c)
        lt = line_table(data)
        side = {"code": c["code"], "line": c["line"]}
        off = c["offset"]
        if off == "eof":
            off = len(data)
        elif off == "auto":
            off = None
            if c["pointer"] is not None and c["line"] <= len(lt):
                n, start, raw = lt[c["line"] - 1]
                rel = locate(raw, c["pointer"])
                if rel is not None:
                    off = start + rel
        if off is not None:
            side["offset"] = off
        if c["pointer"] is not None:
            side["pointer"] = c["pointer"]
        if c["also"]:
            side["also"] = c["also"]
        if c["allow"]:
            side["allow"] = c["allow"]
        opts = c["options"]
        if opts == "max_line=len(line 4)-1":
            opts = {"max_line": len(lt[3][2]) - 1}
            assert all(len(r) <= opts["max_line"] for n, _, r in lt[1:] if n != 4)
        if opts:
            side["options"] = opts
        if c["note"]:
            side["note"] = c["note"]
        yield c, data, (json.dumps(side, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


if __name__ == "__main__":
    main()
