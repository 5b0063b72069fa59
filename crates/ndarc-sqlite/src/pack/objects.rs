//! Objects (`--objects-dir`) and payloads (`--payload`): finding, hashing
//! and writing them in chunks (SPEC.md §13.5).

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use ndarc_format::catalogue::{cmp_payload_names, is_name};
use ndarc_format::pack::{chunk_cap, chunk_part, ArchiveWriter, PartWriter};
use ndarc_json::cmp_utf16;
use sha2::{Digest, Sha256};

use super::refuse::out_err;
use super::PackOptions;
use crate::metadata::{read_sidecar, ObjectMetadata};
use crate::Error;

pub(super) struct Binary {
    /// `(bucket, key)` for an object; `None` for a payload.
    pub(super) object: Option<(String, String)>,
    pub(super) name: String,
    pub(super) path: PathBuf,
    pub(super) size: u64,
    pub(super) sha256: [u8; 32],
    /// An object's `httpMetadata` and `customMetadata` (empty for a
    /// payload).
    pub(super) metadata: ObjectMetadata,
}

pub(super) fn unreadable(code: &'static str, what: &Path, e: &io::Error) -> Error {
    Error::Unreadable {
        code,
        message: format!("cannot read {}: {e}", what.display()),
    }
}

/// Whether the directory entry is one of `skip` (device, inode), not
/// following a link.
#[cfg(unix)]
fn skipped(entry: &std::fs::DirEntry, skip: &[(u64, u64)]) -> bool {
    use std::os::unix::fs::MetadataExt;
    !skip.is_empty()
        && entry
            .metadata()
            .is_ok_and(|m| skip.contains(&(m.dev(), m.ino())))
}

#[cfg(not(unix))]
fn skipped(_entry: &std::fs::DirEntry, _skip: &[(u64, u64)]) -> bool {
    false
}

fn walk(
    dir: &Path,
    prefix: &str,
    skip: &[(u64, u64)],
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), Error> {
    let rd = std::fs::read_dir(dir).map_err(|e| unreadable("object_unreadable", dir, &e))?;
    for entry in rd {
        let entry = entry.map_err(|e| unreadable("object_unreadable", dir, &e))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            return Err(Error::Unreadable {
                code: "object_unreadable",
                message: format!(
                    "{}: the file name is not UTF-8, so it cannot be an object key",
                    path.display()
                ),
            });
        };
        let ft = entry
            .file_type()
            .map_err(|e| unreadable("object_unreadable", &path, &e))?;
        let key = format!("{prefix}{name}");
        if ft.is_dir() {
            walk(&path, &format!("{key}/"), skip, out)?;
        } else if ft.is_file() {
            if !skipped(&entry, skip) {
                out.push((key, path));
            }
        } else {
            return Err(Error::Unreadable {
                code: "object_unreadable",
                message: format!(
                    "{}: not a regular file or directory (symbolic links are not followed)",
                    path.display()
                ),
            });
        }
    }
    Ok(())
}

fn hash_file(path: &Path) -> Result<(u64, [u8; 32]), Error> {
    let mut f = File::open(path).map_err(|e| unreadable("object_unreadable", path, &e))?;
    // A device or FIFO given as a payload has no fixed content (and
    // `/dev/zero` no end): only regular files are packed.
    let meta = f
        .metadata()
        .map_err(|e| unreadable("object_unreadable", path, &e))?;
    if !meta.is_file() {
        return Err(Error::Unreadable {
            code: "object_unreadable",
            message: format!("{}: not a regular file", path.display()),
        });
    }
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable("object_unreadable", path, &e)),
        };
        h.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, h.finalize().into()))
}

pub(super) fn binaries(opts: &PackOptions) -> Result<(Vec<Binary>, Vec<Binary>), Error> {
    let mut sources: Vec<(&str, &Path, &str)> = Vec::new();
    match (&opts.objects_dir, &opts.bucket) {
        (Some(dir), Some(bucket)) => sources.push((bucket, dir, "")),
        (None, None) => {}
        _ => {
            return Err(Error::Options(
                "--objects-dir and --bucket go together".to_string(),
            ))
        }
    }
    for b in &opts.buckets {
        sources.push((&b.bucket, &b.dir, b.prefix.as_deref().unwrap_or("")));
    }
    for (i, (bucket, _)) in opts.bucket_metadata.iter().enumerate() {
        if !sources.iter().any(|s| s.0 == bucket) {
            return Err(Error::Options(format!(
                "--bucket-metadata {bucket}: no bucket {bucket:?} is packed"
            )));
        }
        if opts.bucket_metadata[..i].iter().any(|(b, _)| b == bucket) {
            return Err(Error::Options(format!(
                "--bucket-metadata: bucket {bucket:?} is given twice"
            )));
        }
    }
    let mut objects = Vec::new();
    for (i, &(bucket, dir, prefix)) in sources.iter().enumerate() {
        if !is_name(bucket) {
            return Err(Error::Options(format!("bucket {bucket:?} is not a name")));
        }
        if sources[..i].iter().any(|s| s.0 == bucket) {
            return Err(Error::Options(format!("bucket {bucket:?} is given twice")));
        }
        let mut metadata = sidecar(opts, bucket)?;
        let mut files = Vec::new();
        walk(dir, "", &opts.skip_files, &mut files)?;
        files.retain(|(k, _)| k.starts_with(prefix));
        // Every key of the sidecar is checked before a file is hashed.
        let keys: std::collections::HashSet<&str> = files.iter().map(|(k, _)| k.as_str()).collect();
        if let Some(key) = metadata.keys().find(|k| !keys.contains(k.as_str())) {
            return Err(Error::Options(format!(
                "--bucket-metadata {bucket}: {key:?} is not an object of bucket {bucket:?}{}",
                if prefix.is_empty() {
                    String::new()
                } else {
                    format!(" (its keys start with {prefix:?})")
                }
            )));
        }
        for (key, path) in files {
            let (size, sha256) = hash_file(&path)?;
            objects.push(Binary {
                metadata: metadata.remove(&key).unwrap_or_default(),
                object: Some((bucket.to_string(), key)),
                name: String::new(),
                path,
                size,
                sha256,
            });
        }
    }
    // The producer's order: by bucket, then key (UTF-16 code units).
    objects.sort_by(|a, b| match (&a.object, &b.object) {
        (Some((ab, ak)), Some((bb, bk))) => cmp_utf16(ab, bb).then_with(|| cmp_utf16(ak, bk)),
        _ => std::cmp::Ordering::Equal,
    });
    let mut payloads = Vec::new();
    for (name, path) in &opts.payloads {
        if !is_name(name) {
            return Err(Error::Options(format!(
                "payload name {name:?} is not a name"
            )));
        }
        if opts.payloads.iter().filter(|(n, _)| n == name).count() > 1 {
            return Err(Error::Options(format!("payload {name:?} is given twice")));
        }
        let (size, sha256) = hash_file(path)?;
        payloads.push(Binary {
            object: None,
            name: name.clone(),
            path: path.clone(),
            size,
            sha256,
            metadata: ObjectMetadata::default(),
        });
    }
    payloads.sort_by(|a, b| cmp_payload_names(&a.name, &b.name));
    Ok((objects, payloads))
}

/// The metadata of `bucket`'s objects from its sidecar (empty without
/// one), read before the bucket is walked.
fn sidecar(
    opts: &PackOptions,
    bucket: &str,
) -> Result<std::collections::BTreeMap<String, ObjectMetadata>, Error> {
    match opts.bucket_metadata.iter().find(|(b, _)| b == bucket) {
        Some((_, file)) => read_sidecar(file).map_err(|e| {
            Error::Options(format!(
                "--bucket-metadata {bucket}={}: {e}",
                file.display()
            ))
        }),
        None => Ok(Default::default()),
    }
}

pub(super) fn cap(b: &Binary, part_bytes: usize) -> u64 {
    match &b.object {
        Some((bucket, key)) => chunk_cap(part_bytes, Some(bucket), Some(key), None),
        None => chunk_cap(part_bytes, None, None, Some(&b.name)),
    }
}

pub(super) fn write_binary(
    b: &Binary,
    part_bytes: usize,
    part: &mut PartWriter,
    archive: &mut ArchiveWriter,
    out: &mut dyn Write,
    chunk: &mut Vec<u8>,
) -> Result<u64, Error> {
    let cap = usize::try_from(cap(b, part_bytes)).unwrap_or(usize::MAX);
    let changed = || Error::Unreadable {
        code: "object_changed",
        message: format!("{} changed while it was packed", b.path.display()),
    };
    let mut f = File::open(&b.path).map_err(|e| unreadable("object_unreadable", &b.path, &e))?;
    let mut h = Sha256::new();
    let mut offset = 0u64;
    let mut bytes = 0u64;
    let object = b.object.as_ref().map(|(x, y)| (x.as_str(), y.as_str()));
    loop {
        chunk.clear();
        let want = cap.min(usize::try_from(b.size - offset.min(b.size)).unwrap_or(usize::MAX));
        chunk.resize(want, 0);
        let mut got = 0;
        while got < want {
            match f.read(&mut chunk[got..]) {
                Ok(0) => return Err(changed()),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(unreadable("object_unreadable", &b.path, &e)),
            }
        }
        if want == 0 && offset > 0 {
            break;
        }
        h.update(&chunk[..]);
        chunk_part(part, object, &b.name, offset, chunk);
        bytes += archive.finish_part(part, out).map_err(out_err)?;
        offset += want as u64;
        if offset >= b.size {
            break;
        }
    }
    let mut extra = [0u8; 1];
    let longer = matches!(f.read(&mut extra), Ok(n) if n > 0);
    let digest: [u8; 32] = h.finalize().into();
    if longer || digest != b.sha256 {
        return Err(changed());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload_options(path: &Path) -> PackOptions {
        PackOptions {
            payloads: vec![("kv".to_string(), path.to_path_buf())],
            ..PackOptions::default()
        }
    }

    /// A payload whose bytes change between the pass that hashes it and the
    /// pass that writes it is `object_changed`, whether it grows, shrinks or
    /// keeps its size (a race no file alone reproduces, so it is tested
    /// here, between the two passes).
    #[test]
    fn a_file_changed_between_the_passes_is_object_changed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("kv.json");
        for after in [&b"{\"a\":2}"[..], b"{\"a\":12}", b"{}"] {
            std::fs::write(&p, b"{\"a\":1}").unwrap();
            let (_, payloads) = binaries(&payload_options(&p)).unwrap();
            std::fs::write(&p, after).unwrap();
            let mut part = PartWriter::new(1024);
            let mut archive = ArchiveWriter::begin(b"{}", 1, &mut Vec::new()).unwrap();
            let e = write_binary(
                &payloads[0],
                1024,
                &mut part,
                &mut archive,
                &mut Vec::new(),
                &mut Vec::new(),
            )
            .expect_err("changed");
            assert!(
                matches!(
                    e,
                    Error::Unreadable {
                        code: "object_changed",
                        ..
                    }
                ),
                "{e}"
            );
        }
    }

    /// `skip_files` leaves out a file by identity (the archive being
    /// written into the objects directory), whatever its name.
    #[cfg(unix)]
    #[test]
    fn skipped_files_are_not_objects() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a.txt"), b"a").unwrap();
        let out = dir.path().join("sub/out.ndjson");
        std::fs::write(&out, b"growing").unwrap();
        let mut opts = PackOptions {
            objects_dir: Some(dir.path().to_path_buf()),
            bucket: Some("FILES".to_string()),
            ..PackOptions::default()
        };
        let keys = |opts: &PackOptions| -> Vec<String> {
            let (objects, _) = binaries(opts).unwrap();
            objects
                .into_iter()
                .filter_map(|b| b.object.map(|(_, key)| key))
                .collect()
        };
        assert_eq!(keys(&opts), ["a.txt", "sub/out.ndjson"]);
        let meta = std::fs::metadata(&out).unwrap();
        opts.skip_files = vec![(meta.dev(), meta.ino())];
        assert_eq!(keys(&opts), ["a.txt"]);
    }

    #[test]
    fn a_payload_that_is_not_a_regular_file_is_unreadable() {
        for p in ["/dev/null", "/"] {
            let Err(e) = binaries(&payload_options(Path::new(p))) else {
                panic!("{p}: packed");
            };
            assert!(
                matches!(
                    e,
                    Error::Unreadable {
                        code: "object_unreadable",
                        ..
                    }
                ),
                "{p}: {e}"
            );
        }
    }
}
