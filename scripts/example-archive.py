#!/usr/bin/env python3
"""Writes testdata/valid/example.ndjson, the worked example of SPEC.md §8.

Only ASCII strings and small integers occur, for which Python's
json.dumps(sort_keys=True, separators=(",", ":")) is RFC 8785 canonical JSON.
Run: python3 scripts/example-archive.py > testdata/valid/example.ndjson
"""
import base64, hashlib, json

def canon(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

def D(b):
    return hashlib.sha256(b).digest()

tables = [
    {"name": "notes", "sql": "CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(id))",
     "columns": [{"name": "body", "type": "TEXT", "notnull": 0, "pk": 0},
                 {"name": "user_id", "type": "INTEGER", "notnull": 0, "pk": 0}],
     "dependencies": ["users"], "rowidAlias": "rowid", "count": 2},
    {"name": "users", "sql": "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB)",
     "columns": [{"name": "id", "type": "INTEGER", "notnull": 0, "pk": 1},
                 {"name": "name", "type": "TEXT", "notnull": 1, "pk": 0},
                 {"name": "avatar", "type": "BLOB", "notnull": 0, "pk": 0}],
     "dependencies": [], "rowidAlias": None, "count": 1},
]
obj = b"hello, world\n"
pay = b"{}"
manifest = {
    "kind": "manifest", "format": "rer-portability", "version": 2, "product": "example",
    "exportedAt": "2026-01-02T03:04:05.678Z", "sourceIdentity": "src-1",
    "schema": hashlib.sha256(canon([{"name": t["name"], "sql": t["sql"]} for t in tables]).encode()).hexdigest(),
    "tables": tables,
    "objects": [{"bucket": "files", "key": "greeting.txt", "size": len(obj), "sha256": hashlib.sha256(obj).hexdigest(),
                 "httpMetadata": {"contentType": "text/plain"}, "customMetadata": {}}],
    "payloads": [{"name": "kv", "size": len(pay), "sha256": hashlib.sha256(pay).hexdigest()}],
    "excludedTables": ["sessions"], "excludedColumns": {}, "requiredConfiguration": ["MAIL_KEY"],
    "partCount": 4, "epoch": 1, "journal": [],
}
rows = [
    {"kind": "row", "table": "notes", "index": 0, "rowid": 1, "row": {"body": "first", "user_id": 7}},
    {"kind": "row", "table": "notes", "index": 1, "rowid": 5, "row": {"body": None, "user_id": None}},
]
parts = [
    {"kind": "part", "index": 0, "items": rows},
    {"kind": "part", "index": 1, "items": [{"kind": "row", "table": "users", "index": 0,
        "row": {"id": 7, "name": "Ada", "avatar": {"blob": base64.b64encode(b"\x89PNG").decode()}}}]},
    {"kind": "part", "index": 2, "items": [{"kind": "object", "bucket": "files", "key": "greeting.txt", "offset": 0,
        "data": base64.b64encode(obj).decode()}]},
    {"kind": "part", "index": 3, "items": [{"kind": "payload", "name": "kv", "offset": 0,
        "data": base64.b64encode(pay).decode()}]},
]
lines = [canon(manifest)] + [canon(p) for p in parts]
archive_hash = hashlib.sha256(b"".join(D(l.encode()) for l in lines)).hexdigest()
keep = ["format", "version", "product", "schema", "tables", "objects", "payloads",
        "excludedTables", "excludedColumns", "requiredConfiguration"]
header = {k: manifest[k] for k in keep}
terms = [D(canon(header).encode())]
for p in parts:
    for it in p["items"]:
        if it["kind"] == "row":
            r = {"table": it["table"], "row": it["row"]}
            if "rowid" in it:
                r["rowid"] = it["rowid"]
            terms.append(D(canon(r).encode()))
content_hash = hashlib.sha256(b"".join(terms)).hexdigest()
lines.append(canon({"kind": "closing", "partCount": 4, "contentHash": content_hash, "archiveHash": archive_hash}))
print("\n".join(lines))
