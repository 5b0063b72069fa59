//! Outputs never destroy what they should not (issue 22 §5): `--force`
//! never replaces an input nor a file that is not a regular file, `pack`
//! never archives its own output, `--policy` is read with a limit, `man
//! --dir` never follows a planted link, a signal ends a fuzzed program's
//! whole process group, and `unpack --jobs` is clamped.

#![cfg(unix)]

mod common;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{command, example, finish, ndarc, ndarc_in, s, Run, Scratch, MEMORY};

/// A database to pack: the example archive unpacked.
fn database(dir: &Scratch) -> PathBuf {
    let db = dir.path("in.db");
    let r = ndarc(&["unpack", s(&example()), "-o", s(&db)]);
    assert_eq!(r.code, 0, "{r:?}");
    db
}

fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .expect("mkfifo");
    assert!(ok.success());
}

fn is_fifo(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_fifo())
}

/// Reads the FIFO `p` to its end on a thread. If ndarc never opens it, the
/// thread stays blocked; it is never joined before the test has checked
/// that `p` is still a FIFO, and it does not keep the tests from ending.
fn read_fifo(p: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    let p = p.to_path_buf();
    std::thread::spawn(move || std::fs::read(p).expect("read the FIFO"))
}

/// Runs `ndarc ARGS` writing into the FIFO `fifo` (a reader drains it);
/// returns the run and what went through the pipe.
fn into_fifo(dir: &Scratch, args: &[&str], fifo: &Path) -> (Run, Vec<u8>) {
    let reader = read_fifo(fifo);
    let r = ndarc_in(&dir.0, args, b"");
    assert!(is_fifo(fifo), "{args:?} replaced the FIFO: {r:?}");
    // Not joined unless ndarc wrote (the reader would wait for ever).
    assert_eq!(r.code, 0, "{args:?}: {r:?}");
    let got = reader.join().expect("reader");
    (r, got)
}

// ------------------------------------------------------- 1. inputs

#[test]
fn force_never_replaces_an_input_of_pack() {
    let dir = Scratch::new("pack-inputs");
    let db = database(&dir);
    let db_bytes = std::fs::read(&db).expect("db");
    let kv = dir.write("kv.json", b"{\"a\":1}");
    let objects = dir.path("objects");
    std::fs::create_dir_all(objects.join("sub")).expect("mkdir");
    let object = objects.join("sub/a.txt");
    std::fs::write(&object, b"object").expect("write");
    let objects_args = ["--objects-dir", s(&objects), "--bucket", "FILES"];
    let cases: Vec<(Vec<&str>, &Path, &[u8])> = vec![
        (vec![], &db, &db_bytes),
        (vec!["--payload", "kv=kv.json"], &kv, b"{\"a\":1}"),
        (objects_args.to_vec(), &object, b"object"),
    ];
    for (extra, victim, bytes) in cases {
        let mut args = vec!["pack", "in.db", "-o", s(victim), "--force"];
        args.extend(&extra);
        let r = ndarc_in(&dir.0, &args, b"");
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(
            r.stderr.contains("is an input of this command"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(std::fs::read(victim).expect("kept"), bytes, "{args:?}");
    }
    // A new file beside the objects is not an input.
    let r = ndarc_in(
        &dir.0,
        &["pack", "in.db", "-o", "out.ndjson", "--force"],
        b"",
    );
    assert_eq!(r.code, 0, "{r:?}");
}

#[test]
fn force_never_replaces_the_archive_of_unpack() {
    let dir = Scratch::new("unpack-input");
    let archive = dir.path("a.ndjson");
    std::fs::copy(example(), &archive).expect("copy");
    let before = std::fs::read(&archive).expect("read");
    let r = ndarc(&["unpack", s(&archive), "-o", s(&archive), "--force"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("is an input of this command"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&archive).expect("kept"), before);
    assert_eq!(dir.entries(), ["a.ndjson"]);
    // An archive where its own objects go: --force could replace it.
    let files = dir.path("files");
    let inside = files.join("objects/b.ndjson");
    std::fs::create_dir_all(inside.parent().expect("parent")).expect("mkdir");
    std::fs::copy(example(), &inside).expect("copy");
    let db = dir.path("x.db");
    let args = [
        "unpack",
        s(&inside),
        "-o",
        s(&db),
        "--objects-dir",
        s(&files),
    ];
    let mut forced = args.to_vec();
    forced.push("--force");
    let r = ndarc(&forced);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("is an input of this command"),
        "{}",
        r.stderr
    );
    assert!(!db.exists());
    // Without --force nothing there can be replaced: restored.
    let r = ndarc(&args);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read(&inside).expect("kept"), before);
}

// --------------------------------------------- 2. not a regular file

/// `-o FIFO` streams into the pipe, with or without `--force`, and leaves
/// the FIFO in place: nothing is replaced.
#[test]
fn an_output_that_is_a_fifo_is_written_into_not_replaced() {
    let dir = Scratch::new("fifo-out");
    let db = database(&dir);
    let fifo = dir.path("out.fifo");
    mkfifo(&fifo);
    let gen = ndarc(&["gen", "--rows", "3"]);
    assert_eq!(gen.code, 0, "{gen:?}");
    let ex = example();
    let canon = ndarc(&["canon", s(&ex)]);
    let pack_args = ["pack", s(&db), "--exported-at", "2026-01-02T03:04:05.678Z"];
    let pack = ndarc(&pack_args);
    assert_eq!(pack.code, 0, "{pack:?}");
    let runs: Vec<(Vec<&str>, &[u8])> = vec![
        (vec!["gen", "--rows", "3"], &gen.stdout),
        (vec!["canon", s(&ex)], &canon.stdout),
        (pack_args.to_vec(), &pack.stdout),
    ];
    for (args, want) in runs {
        for force in [false, true] {
            let mut a = args.clone();
            a.extend(["-o", s(&fifo)]);
            if force {
                a.push("--force");
            }
            let (r, got) = into_fifo(&dir, &a, &fifo);
            assert_eq!(r.code, 0, "{a:?}: {r:?}");
            assert!(got == want, "{a:?}: other bytes through the FIFO");
        }
    }
    // No temporary file was left beside it.
    assert_eq!(dir.entries(), ["in.db", "out.fifo"]);
}

fn is_char_device(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

/// `-o /dev/null` discards, with or without `--force`, and `/dev/null`
/// stays a character device: a rename over it (as root) replaced it with a
/// regular file for the whole machine.
#[test]
fn dev_null_as_an_output_discards_and_stays_a_device() {
    let null = Path::new("/dev/null");
    assert!(is_char_device(null), "/dev/null is not a character device");
    let ex = example();
    let runs: [&[&str]; 4] = [
        &["gen", "--rows", "3", "-o", "/dev/null"],
        &["gen", "--rows", "3", "-o", "/dev/null", "--force"],
        &["canon", s(&ex), "-o", "/dev/null", "--force"],
        &["diff", s(&ex), s(&ex), "-o", "/dev/null", "--force"],
    ];
    for args in runs {
        let r = ndarc(args);
        assert!(is_char_device(null), "{args:?} replaced /dev/null: {r:?}");
        assert_eq!(r.code, 0, "{args:?}: {r:?}");
    }
    // A database cannot be written into a device: refused.
    let r = ndarc(&["unpack", s(&ex), "-o", "/dev/null", "--force"]);
    assert!(is_char_device(null), "unpack replaced /dev/null: {r:?}");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
}

/// `unpack -o FIFO`: a database cannot be a pipe; refused before anything
/// is written, the FIFO kept.
#[test]
fn unpack_refuses_a_database_path_that_is_not_a_regular_file() {
    let dir = Scratch::new("unpack-fifo");
    let fifo = dir.path("db.fifo");
    mkfifo(&fifo);
    let ex = example();
    for force in [false, true] {
        let mut args = vec!["unpack", s(&ex), "-o", s(&fifo)];
        if force {
            args.push("--force");
        }
        let child = command(&args, MEMORY).spawn().expect("run");
        let r = finish(child, Duration::from_secs(60), "unpack -o FIFO");
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
        assert!(is_fifo(&fifo));
    }
    assert_eq!(dir.entries(), ["db.fifo"]);
}

// ------------------------------------------------------ 3. --policy

#[test]
fn a_policy_file_is_read_with_a_limit() {
    let dir = Scratch::new("policy");
    // 16 MiB of blanks and a JSON object: valid JSON, but over the limit.
    let mut big = vec![b' '; 16 << 20];
    big.extend_from_slice(b"{}");
    let big = dir.write("big.json", &big);
    for policy in [big.as_path(), Path::new("/dev/zero")] {
        let r = ndarc(&["verify", "--policy", s(policy), s(&example())]);
        assert_eq!(r.code, 2, "{policy:?}: {r:?}");
        assert!(
            r.stderr.contains("larger than 16 MiB"),
            "{policy:?}: {}",
            r.stderr
        );
    }
    let ok = dir.write("ok.json", b"{\"product\":\"example\"}");
    let r = ndarc(&["verify", "--policy", s(&ok), s(&example())]);
    assert_eq!(r.code, 0, "{r:?}");
}

// ------------------------------------------------------- 4. man --dir

#[test]
fn man_dir_replaces_a_planted_link_and_never_follows_it() {
    let dir = Scratch::new("man");
    let pages = dir.path("man1");
    std::fs::create_dir(&pages).expect("mkdir");
    let victim = dir.write("victim", b"precious\n");
    std::os::unix::fs::symlink(&victim, pages.join("ndarc.1")).expect("symlink");
    std::os::unix::fs::symlink("/dev/null", pages.join("ndarc-verify.1")).expect("symlink");
    let r = ndarc(&["man", "--dir", s(&pages)]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read(&victim).expect("victim"), b"precious\n");
    for name in ["ndarc.1", "ndarc-verify.1"] {
        let p = pages.join(name);
        let meta = std::fs::symlink_metadata(&p).expect("page");
        assert!(meta.file_type().is_file(), "{name} is still a link");
        let text = std::fs::read_to_string(&p).expect("page");
        assert!(text.contains(".TH"), "{name}: {text}");
    }
    // Only pages, no temporary file left.
    for e in std::fs::read_dir(&pages).expect("read dir") {
        let name = e.expect("entry").file_name().to_string_lossy().into_owned();
        assert!(name.starts_with("ndarc") && name.ends_with(".1"), "{name}");
    }
}

// ------------------------------------------ 5. output under --objects-dir

fn objects_of(summary: &str) -> i64 {
    let line = summary
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no summary in {summary}"));
    let v: serde_json::Value = serde_json::from_str(line).expect("summary JSON");
    v["objects"].as_i64().expect("objects")
}

#[test]
fn pack_never_archives_its_own_output() {
    let dir = Scratch::new("pack-self");
    let db = database(&dir);
    let objects = dir.path("objects");
    std::fs::create_dir_all(objects.join("sub")).expect("mkdir");
    std::fs::write(objects.join("a.txt"), b"object a").expect("write");
    let common = [
        "pack",
        s(&db),
        "--objects-dir",
        s(&objects),
        "--bucket",
        "FILES",
        "--summary",
    ];
    // -o inside the objects: neither its temporary file nor itself.
    for out in ["out.ndjson", "sub/out.ndjson"] {
        let mut args = common.to_vec();
        let out = objects.join(out);
        args.extend(["-o", s(&out)]);
        let r = ndarc_in(&dir.0, &args, b"");
        assert_eq!(r.code, 0, "{args:?}: {r:?}");
        assert_eq!(objects_of(&r.stderr), 1, "{args:?}: {}", r.stderr);
        let v = ndarc(&["verify", s(&out)]);
        assert_eq!(v.code, 0, "{v:?}");
        std::fs::remove_file(&out).expect("rm");
    }
    // Standard output redirected into a file under the objects.
    let out = objects.join("stdout.ndjson");
    let file = std::fs::File::create(&out).expect("create");
    let mut cmd = command(&common, MEMORY);
    cmd.current_dir(&dir.0).stdout(Stdio::from(file));
    let r = finish(cmd.spawn().expect("run"), Duration::from_secs(60), "pack >");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(objects_of(&r.stderr), 1, "{}", r.stderr);
    let v = ndarc(&["verify", s(&out)]);
    assert_eq!(v.code, 0, "{v:?}");
}

// ------------------------------------------ 8. links under --objects-dir

#[test]
fn pack_never_follows_a_link_out_of_the_objects_dir() {
    let dir = Scratch::new("pack-link");
    let db = database(&dir);
    let secret = dir.write("secret.txt", b"TOP-SECRET-CONTENT");
    let outside = dir.path("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    std::fs::write(outside.join("b.txt"), b"OUTSIDE-DIR-CONTENT").expect("write");
    let objects = dir.path("objects");
    std::fs::create_dir(&objects).expect("mkdir");
    std::fs::write(objects.join("a.txt"), b"object a").expect("write");
    for (link, target) in [("link.txt", &secret), ("linkdir", &outside)] {
        let l = objects.join(link);
        std::os::unix::fs::symlink(target, &l).expect("symlink");
        let out = dir.path("out.ndjson");
        let args = [
            "pack",
            s(&db),
            "--objects-dir",
            s(&objects),
            "--bucket",
            "FILES",
            "-o",
            s(&out),
        ];
        let r = ndarc(&args);
        assert_eq!(r.code, 2, "{link}: {r:?}");
        assert!(
            r.stderr.contains("symbolic links are not followed"),
            "{link}: {}",
            r.stderr
        );
        assert!(!out.exists(), "{link}: an archive was written");
        std::fs::remove_file(&l).expect("rm link");
    }
}

// ------------------------------------- 6. a signal ends the child's group

/// Waits until `p` holds a process id; `None` after `limit`.
fn wait_for_pid(p: &Path, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(pid) = std::fs::read_to_string(p)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return Some(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Whether process `pid` is alive (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

fn gone_within(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

#[test]
fn a_signal_ends_the_whole_process_group_of_the_program_under_test() {
    let dir = Scratch::new("signal-group");
    for (command_name, signal) in [
        ("fuzz-consumer", "TERM"),
        ("fuzz-producer", "TERM"),
        ("fuzz-consumer", "INT"),
    ] {
        let pidfile = dir.path(&format!("{command_name}-{signal}.pid"));
        let script = dir.write(
            "program.sh",
            format!("sleep 1000 &\necho $! > '{}'\nwait\n", pidfile.display()).as_bytes(),
        );
        let exec = format!("sh '{}'", script.display());
        let mut child = std::process::Command::new(common::BIN)
            .args([
                command_name,
                "--exec",
                &exec,
                "--runs",
                "1",
                "--timeout",
                "600",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run");
        let Some(sleep) = wait_for_pid(&pidfile, Duration::from_secs(60)) else {
            let _ = child.kill();
            panic!("{command_name}: the program never started");
        };
        let sent = std::process::Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        let status = child.wait().expect("wait");
        let gone = gone_within(sleep, Duration::from_secs(10));
        if !gone {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &sleep.to_string()])
                .status();
        }
        assert!(
            gone,
            "{command_name} SIG{signal}: the program's background process outlived ndarc ({status})"
        );
    }
}

// ------------------------------------------------- 7. unpack --jobs

#[test]
fn unpack_jobs_is_clamped_as_everywhere() {
    let dir = Scratch::new("unpack-jobs");
    let db = dir.path("x.db");
    let r = ndarc(&["unpack", s(&example()), "-o", s(&db), "--jobs", "100000"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("--jobs 100000 is more than 4 per core"),
        "{}",
        r.stderr
    );
    let r = ndarc(&["unpack", s(&example()), "-o", s(&db), "--force", "-j", "0"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stderr.contains("--jobs"), "{}", r.stderr);
}
