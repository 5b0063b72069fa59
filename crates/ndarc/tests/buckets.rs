//! Issue 24 §1: `pack` takes several buckets, each with its directory and
//! optional prefix (the producer's `buckets` map), and they round-trip
//! through `unpack`.

mod common;

use common::{example, ndarc, s, Scratch};

fn manifest_objects(archive: &std::path::Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(archive).unwrap();
    let m: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    m["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["bucket"].as_str().unwrap().to_string(),
                o["key"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn two_buckets_with_a_prefix_round_trip_through_unpack() {
    let dir = Scratch::new("pack-buckets");
    let db = dir.path("in.db");
    assert_eq!(ndarc(&["unpack", s(&example()), "-o", s(&db)]).code, 0);
    let files = dir.path("files");
    let images = dir.path("images");
    std::fs::create_dir_all(files.join("docs")).unwrap();
    std::fs::create_dir_all(images.join("avatars")).unwrap();
    std::fs::write(files.join("docs/a.txt"), b"alpha").unwrap();
    std::fs::write(files.join("b.txt"), b"").unwrap();
    std::fs::write(images.join("avatars/1.png"), b"\x89PNG one").unwrap();
    // Outside the prefix avatars/: not an object of the bucket.
    std::fs::write(images.join("thumbs.db"), b"cache").unwrap();
    let archive = dir.path("out.ndjson");
    let r = ndarc(&[
        "pack",
        s(&db),
        "-o",
        s(&archive),
        "--bucket-dir",
        &format!("images={}", s(&images)),
        "--bucket-dir",
        &format!("files={}", s(&files)),
        "--bucket-prefix",
        "images=avatars/",
    ]);
    assert_eq!(r.code, 0, "{}", r.out());
    assert_eq!(
        manifest_objects(&archive),
        [
            ("files", "b.txt"),
            ("files", "docs/a.txt"),
            ("images", "avatars/1.png")
        ]
        .map(|(b, k)| (b.to_string(), k.to_string()))
    );
    assert_eq!(ndarc(&["verify", s(&archive)]).code, 0);
    let out = dir.path("restored");
    let r = ndarc(&[
        "unpack",
        s(&archive),
        "-o",
        s(&dir.path("restored.db")),
        "--objects-dir",
        s(&out),
    ]);
    assert_eq!(r.code, 0, "{}", r.out());
    let read = |p: &str| std::fs::read(out.join(p)).unwrap();
    assert_eq!(read("objects/files/docs/a.txt"), b"alpha");
    assert_eq!(read("objects/files/b.txt"), b"");
    assert_eq!(read("objects/images/avatars/1.png"), b"\x89PNG one");
    assert!(!out.join("objects/images/thumbs.db").exists());
}

#[test]
fn a_bucket_given_twice_or_a_prefix_without_its_bucket_cannot_run() {
    let dir = Scratch::new("pack-buckets-bad");
    let db = dir.path("in.db");
    assert_eq!(ndarc(&["unpack", s(&example()), "-o", s(&db)]).code, 0);
    let d = dir.path("d");
    std::fs::create_dir_all(&d).unwrap();
    let spec = format!("b={}", s(&d));
    let r = ndarc(&["pack", s(&db), "--bucket-dir", &spec, "--bucket-dir", &spec]);
    assert_eq!(r.code, 2, "{}", r.out());
    assert!(r.stderr.contains("given twice"), "{}", r.out());
    let r = ndarc(&["pack", s(&db), "--bucket-prefix", "c=x/"]);
    assert_eq!(r.code, 2, "{}", r.out());
    assert!(r.stderr.contains("no --bucket-dir c=DIR"), "{}", r.out());
}

/// A database whose `users.avatar` holds keys of bucket `images` and
/// `docs.path` keys of bucket `files` (issue 24 §1, objectReferences),
/// with the two buckets' directories.
struct Referencing {
    dir: Scratch,
    db: std::path::PathBuf,
    images: std::path::PathBuf,
    files: std::path::PathBuf,
}

fn referencing(name: &str) -> Referencing {
    let dir = Scratch::new(name);
    let db = dir.path("app.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar TEXT, token TEXT);
         INSERT INTO users VALUES (1, 'ada', 'avatars/1.png', 't1'), (2, 'bob', NULL, 't2'),
                                  (3, 'cy', 'avatars/1.png', NULL), (4, 'di', 'avatars/4.png', NULL);
         CREATE TABLE docs(id INTEGER PRIMARY KEY, path TEXT);
         INSERT INTO docs VALUES (1, 'a.txt'), (2, 'sub/b.txt'), (3, NULL);
         CREATE TABLE audit(id INTEGER PRIMARY KEY, file TEXT);",
    )
    .unwrap();
    drop(conn);
    let images = dir.path("images");
    let files = dir.path("files");
    std::fs::create_dir_all(images.join("avatars")).unwrap();
    std::fs::create_dir_all(files.join("sub")).unwrap();
    std::fs::write(images.join("avatars/1.png"), b"\x89PNG one").unwrap();
    std::fs::write(images.join("avatars/4.png"), b"\x89PNG four").unwrap();
    std::fs::write(files.join("a.txt"), b"alpha").unwrap();
    std::fs::write(files.join("sub/b.txt"), b"beta").unwrap();
    Referencing {
        dir,
        db,
        images,
        files,
    }
}

impl Referencing {
    /// `ndarc pack` of the database with both buckets and `extra` options.
    fn pack(&self, out: &std::path::Path, extra: &[&str]) -> common::Run {
        let images = format!("images={}", s(&self.images));
        let files = format!("files={}", s(&self.files));
        let mut args = vec![
            "pack",
            s(&self.db),
            "-o",
            s(out),
            "--bucket-dir",
            &images,
            "--bucket-dir",
            &files,
        ];
        args.extend_from_slice(extra);
        ndarc(&args)
    }
}

const BOTH: [&str; 4] = [
    "--object-references",
    "images=users.avatar",
    "--object-references",
    "files=docs.path",
];

const POLICY: &str = r#"{"buckets":{"images":{"objectReferences":{"table":"users","keyColumn":"avatar"}},
    "files":{"prefix":"","objectReferences":{"table":"docs","keyColumn":"path"}}}}"#;

#[test]
fn two_buckets_with_object_references_round_trip_through_unpack() {
    let r = referencing("refs-ok");
    let archive = r.dir.path("out.ndjson");
    let run = r.pack(&archive, &BOTH);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        manifest_objects(&archive),
        [
            ("files", "a.txt"),
            ("files", "sub/b.txt"),
            ("images", "avatars/1.png"),
            ("images", "avatars/4.png")
        ]
        .map(|(b, k)| (b.to_string(), k.to_string()))
    );
    // The producer's configuration as a policy: the archive meets it.
    let policy = r.dir.write("policy.json", POLICY.as_bytes());
    let v = ndarc(&["verify", "--policy", s(&policy), s(&archive)]);
    assert_eq!(v.code, 0, "{}{}", v.out(), v.stderr);
    let out = r.dir.path("restored");
    let restored = r.dir.path("restored.db");
    let u = ndarc(&[
        "unpack",
        s(&archive),
        "-o",
        s(&restored),
        "--objects-dir",
        s(&out),
    ]);
    assert_eq!(u.code, 0, "{}", u.stderr);
    assert_eq!(
        std::fs::read(out.join("objects/images/avatars/4.png")).unwrap(),
        b"\x89PNG four"
    );
    assert_eq!(
        std::fs::read(out.join("objects/files/sub/b.txt")).unwrap(),
        b"beta"
    );
    let conn = rusqlite::Connection::open(&restored).unwrap();
    let avatars: Vec<Option<String>> = conn
        .prepare("SELECT avatar FROM users ORDER BY id")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        avatars,
        [
            Some("avatars/1.png".to_string()),
            None,
            Some("avatars/1.png".to_string()),
            Some("avatars/4.png".to_string())
        ]
    );
    // And the restored database packs again under the same references.
    let again = r.dir.path("again.ndjson");
    let images = format!("images={}", s(&out.join("objects/images")));
    let files = format!("files={}", s(&out.join("objects/files")));
    let p = ndarc(&[
        "pack",
        s(&restored),
        "-o",
        s(&again),
        "--bucket-dir",
        &images,
        "--bucket-dir",
        &files,
        BOTH[0],
        BOTH[1],
        BOTH[2],
        BOTH[3],
    ]);
    assert_eq!(p.code, 0, "{}", p.stderr);
}

/// A pack refusal: exit 1, `DB: CODE: message`, no file written.
fn refused(run: &common::Run, out: &std::path::Path, code: &str, says: &[&str]) {
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(": {code}: ")),
        "{}",
        run.stderr
    );
    for s in says {
        assert!(run.stderr.contains(s), "{s:?} not in {}", run.stderr);
    }
    assert!(!out.exists(), "{} written", out.display());
}

#[test]
fn pack_refuses_a_key_without_object_and_an_object_without_reference() {
    let r = referencing("refs-refused");
    let out = r.dir.path("out.ndjson");
    // users 4 references avatars/4.png, which is gone.
    std::fs::remove_file(r.images.join("avatars/4.png")).unwrap();
    let run = r.pack(&out, &BOTH);
    refused(
        &run,
        &out,
        "object_references",
        &[
            "\"avatars/4.png\"",
            "users.avatar",
            "rowid 4",
            "bucket images",
        ],
    );
    std::fs::write(r.images.join("avatars/4.png"), b"back").unwrap();
    // An object no row references.
    std::fs::write(r.files.join("orphan.txt"), b"nobody").unwrap();
    let run = r.pack(&out, &BOTH);
    refused(
        &run,
        &out,
        "object_references",
        &["\"orphan.txt\"", "referenced by no row of docs.path"],
    );
    // A number is no object key (the producer compares values with keys
    // as they are).
    std::fs::remove_file(r.files.join("orphan.txt")).unwrap();
    let run = r.pack(&out, &["--object-references", "images=users.id"]);
    refused(
        &run,
        &out,
        "object_references",
        &["users.id at rowid 1 is not text"],
    );
}

#[test]
fn pack_refuses_a_reference_column_missing_or_excluded() {
    let r = referencing("refs-columns");
    let out = r.dir.path("out.ndjson");
    let run = r.pack(&out, &["--object-references", "images=users.photo"]);
    refused(
        &run,
        &out,
        "reference_column_missing",
        &["table users has no column photo"],
    );
    let run = r.pack(&out, &["--object-references", "images=avatars.key"]);
    refused(
        &run,
        &out,
        "reference_column_missing",
        &["no table avatars"],
    );
    let run = r.pack(
        &out,
        &[
            "--object-references",
            "images=users.avatar",
            "--secret-column",
            "users.avatar",
        ],
    );
    refused(
        &run,
        &out,
        "reference_column_excluded",
        &["users.avatar is a secret column"],
    );
    let run = r.pack(
        &out,
        &[
            "--object-references",
            "files=audit.file",
            "--exclude-table",
            "audit",
        ],
    );
    refused(
        &run,
        &out,
        "reference_column_excluded",
        &["table audit is excluded"],
    );
    // A bucket that is not packed, or a malformed flag: cannot run.
    let run = r.pack(&out, &["--object-references", "videos=users.avatar"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no bucket videos"), "{}", run.stderr);
    let run = r.pack(&out, &["--object-references", "images=users"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("expected BUCKET=TABLE.COLUMN"),
        "{}",
        run.stderr
    );
}

/// (code, line, pointer) of each finding of `verify --format json`.
fn findings(stdout: &str) -> Vec<(String, u64, String)> {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("JSON output");
    v["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn verify_policy_checks_object_references_in_both_directions() {
    let r = referencing("refs-verify");
    // Packed without references: avatars/4.png is missing, orphan.txt is
    // referenced by no row.
    std::fs::remove_file(r.images.join("avatars/4.png")).unwrap();
    std::fs::write(r.files.join("orphan.txt"), b"nobody").unwrap();
    let archive = r.dir.path("out.ndjson");
    let run = r.pack(&archive, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let policy = r.dir.write("policy.json", POLICY.as_bytes());
    let v = ndarc(&[
        "verify",
        "--format",
        "json",
        "--policy",
        s(&policy),
        s(&archive),
    ]);
    assert_eq!(v.code, 1, "{}{}", v.out(), v.stderr);
    // Tables in name order: audit (no rows), docs (line 2), users (line
    // 3); objects: files
    // a.txt, orphan.txt, sub/b.txt, then images avatars/1.png.
    assert_eq!(
        findings(&v.out()),
        [
            ("object_references", 3, "/items/3/row/avatar"),
            ("object_references", 1, "/objects/1/key"),
        ]
        .map(|(c, l, p)| (c.to_string(), l, p.to_string()))
    );
    let text = ndarc(&["verify", "--policy", s(&policy), s(&archive)]);
    assert_eq!(text.code, 1);
    let all = format!("{}{}", text.out(), text.stderr);
    assert!(all.contains("\"avatars/4.png\""), "{all}");
    assert!(all.contains("\"orphan.txt\""), "{all}");
    // The same archive from standard input, and with one job.
    let stdin = std::fs::read(&archive).unwrap();
    let piped = common::ndarc_in(
        r.dir.path("").as_path(),
        &[
            "verify",
            "--format",
            "json",
            "--jobs",
            "1",
            "--policy",
            s(&policy),
            "-",
        ],
        &stdin,
    );
    assert_eq!(piped.code, 1, "{}", piped.stderr);
    assert_eq!(findings(&piped.out()), findings(&v.out()));
    // A policy naming a column the archive does not have.
    let bad = r.dir.write(
        "bad.json",
        br#"{"buckets":{"files":{},"images":{"objectReferences":{"table":"users","keyColumn":"photo"}}}}"#,
    );
    let v = ndarc(&[
        "verify",
        "--format",
        "json",
        "--policy",
        s(&bad),
        s(&archive),
    ]);
    assert_eq!(v.code, 1);
    assert_eq!(
        findings(&v.out()),
        [(
            "reference_column_missing".to_string(),
            1,
            "/tables/2/columns".to_string()
        )]
    );
}

/// Issue 24 §2: `--bucket-metadata NAME=FILE` gives the objects'
/// `httpMetadata` and `customMetadata`; `unpack --objects-dir` writes the
/// same sidecars (`metadata/NAME.json`), so pack → unpack → pack gives the
/// same archive, byte for byte, with two buckets.
#[test]
fn bucket_metadata_round_trips_through_unpack_byte_for_byte() {
    let dir = Scratch::new("pack-bucket-metadata");
    let db = dir.path("in.db");
    assert_eq!(ndarc(&["unpack", s(&example()), "-o", s(&db)]).code, 0);
    let files = dir.path("files");
    let images = dir.path("images");
    std::fs::create_dir_all(files.join("docs")).unwrap();
    std::fs::create_dir_all(&images).unwrap();
    std::fs::write(files.join("docs/a.txt"), b"alpha").unwrap();
    std::fs::write(files.join("b.txt"), b"beta").unwrap();
    std::fs::write(images.join("1.png"), b"\x89PNG one").unwrap();
    let files_meta = dir.write(
        "files-meta.json",
        br#"{"docs/a.txt":{"httpMetadata":{"contentType":"text/plain","cacheControl":"max-age=60"},"customMetadata":{"owner":"ada"}}}"#,
    );
    let images_meta = dir.write(
        "images-meta.json",
        br#"{"1.png":{"customMetadata":{"w":"64","h":"64"}}}"#,
    );
    let pack = |files: &std::path::Path,
                images: &std::path::Path,
                metadata: &[(&str, &std::path::Path)],
                out: &std::path::Path| {
        let mut args: Vec<String> = [
            "pack",
            s(&db),
            "-o",
            s(out),
            "--product",
            "example",
            "--exported-at",
            "2026-01-02T03:04:05.678Z",
            "--bucket-dir",
            &format!("files={}", s(files)),
            "--bucket-dir",
            &format!("images={}", s(images)),
        ]
        .map(String::from)
        .to_vec();
        for (b, f) in metadata {
            args.push("--bucket-metadata".into());
            args.push(format!("{b}={}", s(f)));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ndarc(&args)
    };
    let first = dir.path("first.ndjson");
    let r = pack(
        &files,
        &images,
        &[("files", &files_meta), ("images", &images_meta)],
        &first,
    );
    assert_eq!(r.code, 0, "{}", r.out());
    let text = std::fs::read_to_string(&first).unwrap();
    let m: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let objects = m["objects"].as_array().unwrap();
    let meta = |i: usize| {
        (
            objects[i]["key"].as_str().unwrap().to_string(),
            objects[i]["httpMetadata"].to_string(),
            objects[i]["customMetadata"].to_string(),
        )
    };
    assert_eq!(
        meta(0),
        ("b.txt".into(), "{}".into(), "{}".into()),
        "an object the sidecar does not name"
    );
    assert_eq!(
        meta(1),
        (
            "docs/a.txt".into(),
            r#"{"cacheControl":"max-age=60","contentType":"text/plain"}"#.into(),
            r#"{"owner":"ada"}"#.into()
        )
    );
    assert_eq!(
        meta(2),
        ("1.png".into(), "{}".into(), r#"{"h":"64","w":"64"}"#.into())
    );
    assert_eq!(ndarc(&["verify", s(&first)]).code, 0);

    let out = dir.path("restored");
    let restored = dir.path("restored.db");
    let r = ndarc(&[
        "unpack",
        s(&first),
        "-o",
        s(&restored),
        "--objects-dir",
        s(&out),
    ]);
    assert_eq!(r.code, 0, "{}", r.out());
    assert_eq!(
        std::fs::read_to_string(out.join("metadata/files.json")).unwrap(),
        "{\"docs/a.txt\":{\"customMetadata\":{\"owner\":\"ada\"},\"httpMetadata\":{\"cacheControl\":\"max-age=60\",\"contentType\":\"text/plain\"}}}\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("metadata/images.json")).unwrap(),
        "{\"1.png\":{\"customMetadata\":{\"h\":\"64\",\"w\":\"64\"},\"httpMetadata\":{}}}\n"
    );
    let second = dir.path("second.ndjson");
    let r = pack(
        &out.join("objects/files"),
        &out.join("objects/images"),
        &[
            ("files", &out.join("metadata/files.json")),
            ("images", &out.join("metadata/images.json")),
        ],
        &second,
    );
    assert_eq!(r.code, 0, "{}", r.out());
    assert!(
        std::fs::read(&first).unwrap() == std::fs::read(&second).unwrap(),
        "pack → unpack → pack changed the archive"
    );
    // A sidecar already there is replaced only with --force.
    let again = |extra: &[&str], out: &std::path::Path| {
        let db = dir.path("again.db");
        let _ = std::fs::remove_file(&db);
        let mut args = vec!["unpack", s(&first), "-o", s(&db), "--objects-dir", s(out)];
        args.extend_from_slice(extra);
        ndarc(&args)
    };
    let only_sidecar = dir.path("only-sidecar");
    std::fs::create_dir_all(only_sidecar.join("metadata")).unwrap();
    std::fs::write(only_sidecar.join("metadata/images.json"), b"old").unwrap();
    let r = again(&[], &only_sidecar);
    assert_eq!(r.code, 2, "{}", r.out());
    assert!(r.stderr.contains("output_exists"), "{}", r.out());
    assert!(!only_sidecar.join("objects").exists());
    let r = again(&["--force"], &only_sidecar);
    assert_eq!(r.code, 0, "{}", r.out());
    assert_eq!(
        std::fs::read(only_sidecar.join("metadata/images.json")).unwrap(),
        std::fs::read(out.join("metadata/images.json")).unwrap()
    );
    // A symbolic link on the sidecar's way is not followed.
    #[cfg(unix)]
    {
        let linked = dir.path("linked");
        let elsewhere = dir.path("elsewhere");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, linked.join("metadata")).unwrap();
        let r = again(&["--force"], &linked);
        assert_eq!(r.code, 1, "{}", r.out());
        assert!(r.stderr.contains("unsafe_path"), "{}", r.out());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
    // Without metadata, unpack writes no sidecar.
    let plain = dir.path("plain.ndjson");
    assert_eq!(pack(&files, &images, &[], &plain).code, 0);
    let out2 = dir.path("restored2");
    let r = ndarc(&[
        "unpack",
        s(&plain),
        "-o",
        s(&dir.path("restored2.db")),
        "--objects-dir",
        s(&out2),
    ]);
    assert_eq!(r.code, 0, "{}", r.out());
    assert!(!out2.join("metadata").exists());
}

/// A sidecar that is not as the spec wants, names no object of its bucket,
/// or names no bucket packed, exits 2 with what is wrong; nothing is
/// written.
#[test]
fn a_bad_bucket_metadata_sidecar_cannot_run() {
    let dir = Scratch::new("pack-bucket-metadata-bad");
    let db = dir.path("in.db");
    assert_eq!(ndarc(&["unpack", s(&example()), "-o", s(&db)]).code, 0);
    let files = dir.path("files");
    std::fs::create_dir_all(files.join("docs")).unwrap();
    std::fs::write(files.join("docs/a.txt"), b"alpha").unwrap();
    let out = dir.path("out.ndjson");
    let run = |bucket: &str, sidecar: &[u8], prefix: Option<&str>| {
        let f = dir.write("meta.json", sidecar);
        let mut args = vec![
            "pack".to_string(),
            s(&db).to_string(),
            "-o".into(),
            s(&out).to_string(),
            "--bucket-dir".into(),
            format!("files={}", s(&files)),
            "--bucket-metadata".into(),
            format!("{bucket}={}", s(&f)),
        ];
        if let Some(p) = prefix {
            args.push("--bucket-prefix".into());
            args.push(format!("files={p}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ndarc(&args)
    };
    for (bucket, sidecar, prefix, says) in [
        (
            "files",
            &br#"{"docs/b.txt":{"httpMetadata":{}}}"#[..],
            None,
            r#""docs/b.txt" is not an object of bucket "files""#,
        ),
        (
            "files",
            br#"{"docs/a.txt":{}}"#,
            Some("x/"),
            r#""docs/a.txt" is not an object of bucket "files" (its keys start with "x/")"#,
        ),
        (
            "files",
            br#"{"docs/a.txt":{"httpMetadata":{"contentLength":5}}}"#,
            None,
            "httpMetadata is not an object whose values are strings (invalid_metadata)",
        ),
        (
            "files",
            br#"{"docs/a.txt":{"etag":"x"}}"#,
            None,
            r#"unknown member "etag""#,
        ),
        ("files", b"[1]", None, "not a JSON object"),
        (
            "files",
            b"{\"a\":{},\"a\":{}}",
            None,
            "json_duplicate_member",
        ),
        ("images", b"{}", None, r#"no bucket "images" is packed"#),
    ] {
        let r = run(bucket, sidecar, prefix);
        assert_eq!(r.code, 2, "{}", r.out());
        assert!(r.stderr.contains(says), "{says}: {}", r.out());
        assert!(!out.exists());
    }
    let r = ndarc(&[
        "pack",
        s(&db),
        "--bucket-dir",
        &format!("files={}", s(&files)),
        "--bucket-metadata",
        "files",
    ]);
    assert_eq!(r.code, 2, "{}", r.out());
    assert!(r.stderr.contains("expected NAME=FILE"), "{}", r.out());
}
