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
