//! Input and output shared by the commands.
//!
//! - [`Input`]: a path or `-` for standard input; a directory or a file that
//!   cannot be opened is a [`Failure`] with a one-line message.
//! - [`Output`] and [`OutputArgs`]: standard output, or `-o FILE` written
//!   atomically ([`AtomicFile`]: a temporary sibling, fsync, rename), never
//!   replacing an existing file without `--force`, never an input
//!   ([`refuse_input`]), and never a FIFO or device (written into instead).

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::exit::Failure;

/// The path that stands for standard input or output.
pub(crate) const STDIO: &str = "-";

/// Buffer size for reading inputs and writing outputs.
pub(crate) const BUFFER_BYTES: usize = 1 << 20;

/// Whether `path` is `-`, standard input or output.
pub(crate) fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == STDIO
}

// ------------------------------------------------------------------ input

/// An opened input: a file or standard input.
pub struct Input {
    name: String,
    source: Source,
}

enum Source {
    Stdin(io::Stdin),
    File(File),
}

impl Input {
    /// Opens `path`, or standard input for `-`. A directory, a missing or
    /// unreadable file is a failure naming the path.
    pub fn open(path: &Path) -> Result<Input, Failure> {
        if is_stdio(path) {
            return Ok(Input {
                name: "<stdin>".to_string(),
                source: Source::Stdin(io::stdin()),
            });
        }
        let file = File::open(path).map_err(|e| Failure::path("cannot open", path, &e))?;
        let meta = file
            .metadata()
            .map_err(|e| Failure::path("cannot open", path, &e))?;
        if meta.is_dir() {
            return Err(Failure::new(format!(
                "cannot open {}: is a directory",
                path.display()
            )));
        }
        Ok(Input {
            name: path.display().to_string(),
            source: Source::File(file),
        })
    }

    /// The name for messages: the path as given, or `<stdin>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The size of a regular file (`None` for standard input or another
    /// kind of file), to refuse an input before reading it.
    pub(crate) fn file_len(&self) -> Option<u64> {
        match &self.source {
            Source::File(f) => f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len()),
            Source::Stdin(_) => None,
        }
    }

    /// The file, when the input is a regular file (one that can be read
    /// again by offset).
    pub(crate) fn regular_file(&self) -> Option<&File> {
        match &self.source {
            Source::File(f) => f.metadata().ok().filter(|m| m.is_file()).map(|_| f),
            Source::Stdin(_) => None,
        }
    }

    /// Reads the whole input, failing with [`ReadError::TooLong`] instead of
    /// allocating when it holds more than `limit` bytes.
    pub(crate) fn read_all(&mut self, limit: usize) -> Result<Vec<u8>, ReadError> {
        let mut buf = Vec::new();
        let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
        self.by_ref().take(cap).read_to_end(&mut buf)?;
        if buf.len() > limit {
            let lines = memchr::memchr_iter(b'\n', &buf[..limit]).count();
            return Err(ReadError::TooLong {
                line: lines as u64 + 1,
                offset: limit as u64,
                limit,
            });
        }
        Ok(buf)
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.source {
            Source::Stdin(s) => s.read(buf),
            Source::File(f) => f.read(buf),
        }
    }
}

/// Why reading an input stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The whole input is longer than the limit; `offset` is the byte of
    /// the file where the limit was passed.
    TooLong {
        /// 1-based line number.
        line: u64,
        /// Byte offset in the file of the first byte beyond the limit.
        offset: u64,
        /// The limit in bytes, LF not counted.
        limit: usize,
    },
    /// Reading failed.
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

// ----------------------------------------------------------------- output

/// The `-o FILE` / `--force` options of a command that writes a file.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// Write to FILE instead of standard output. The file is written to a
    /// temporary file beside it and renamed into place when complete, so it
    /// never holds partial output. An existing FIFO or character device
    /// (a pipe, /dev/null) is written into as standard output would be,
    /// never replaced.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace FILE if it exists (otherwise an existing FILE is an error);
    /// never one of the command's inputs.
    #[arg(long, requires = "output")]
    pub force: bool,
    /// The mode of a new FILE, in octal (e.g. 640). By default a file that
    /// holds archive data is 600 whatever the umask; a report follows the
    /// umask.
    #[arg(long, value_name = "OCTAL", value_parser = parse_mode, requires = "output")]
    pub mode: Option<u32>,
}

impl OutputArgs {
    /// Opens the output these options name, a new file with `default`'s
    /// mode unless `--mode` is given.
    pub fn open(&self, default: FileMode) -> Result<Output, Failure> {
        let mode = self.mode.map_or(default, FileMode::Exact);
        Output::open_with(self.output.as_deref(), self.force, mode)
    }
}

/// Parses `--mode`: octal permission bits, at most 777.
pub(crate) fn parse_mode(s: &str) -> Result<u32, String> {
    match u32::from_str_radix(s.trim().trim_start_matches("0o"), 8) {
        Ok(m) if m <= 0o777 => Ok(m),
        _ => Err(format!(
            "expected octal permission bits like 600 or 644, got {s:?}"
        )),
    }
}

/// Standard output or an atomically written file.
pub enum Output {
    /// Standard output, buffered.
    Stdout(BufWriter<io::Stdout>),
    /// A file that appears only when [`Output::finish`] succeeds.
    File(AtomicFile),
}

impl Output {
    /// Standard output for `None` or `-`, else an [`AtomicFile`] at `path`
    /// with the umask's mode.
    pub fn open(path: Option<&Path>, force: bool) -> Result<Output, Failure> {
        Output::open_with(path, force, FileMode::Umask)
    }

    /// [`Output::open`] with the mode of a new file.
    pub(crate) fn open_with(
        path: Option<&Path>,
        force: bool,
        mode: FileMode,
    ) -> Result<Output, Failure> {
        match path {
            None => Ok(Output::stdout()),
            Some(p) if is_stdio(p) => Ok(Output::stdout()),
            Some(p) => AtomicFile::create_with(p, force, mode).map(Output::File),
        }
    }

    /// Buffered standard output.
    pub fn stdout() -> Output {
        Output::Stdout(BufWriter::with_capacity(BUFFER_BYTES, io::stdout()))
    }

    /// The name for messages: the path, or `<stdout>`.
    pub fn name(&self) -> String {
        match self {
            Output::Stdout(_) => "<stdout>".to_string(),
            Output::File(f) => f.path().display().to_string(),
        }
    }

    /// Flushes standard output, or commits the file.
    pub fn finish(self) -> Result<(), Failure> {
        match self {
            Output::Stdout(mut w) => w
                .flush()
                .map_err(|e| Failure::io("cannot write <stdout>", &e)),
            Output::File(f) => f.commit(),
        }
    }

    /// Writes `bytes`, with a failure that names the output.
    pub fn put(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.write_all(bytes)
            .map_err(|e| Failure::io(format_args!("cannot write {}", self.name()), &e))
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::File(f) => f.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.write_all(buf),
            Output::File(f) => f.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::File(f) => f.flush(),
        }
    }
}

/// Who may read a file written by [`AtomicFile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileMode {
    /// The process umask decides (receipts, reports, summaries).
    #[default]
    Umask,
    /// Exactly this mode (e.g. 0o600), whatever the umask.
    Exact(u32),
}

/// Mode of outputs that hold archive data, unless `--mode` says otherwise:
/// readable and writable by the owner only, whatever the umask.
pub(crate) const ARCHIVE_MODE: FileMode = FileMode::Exact(0o600);

/// A file written under a temporary name in the destination's directory and
/// renamed into place by [`AtomicFile::commit`] after an fsync. Dropped
/// without a commit (an error, a panic), it removes the temporary file and
/// leaves the destination untouched; SIGINT and SIGTERM remove it too
/// ([`cleanup`]), and a later run removes the ones a killed run left.
///
/// The temporary file is `tempfile`'s, named
/// `.NAME.ndarc-PID-RANDOM.tmp` so that stale ones can be told apart.
///
/// A destination that exists and is a FIFO or a character device (a pipe,
/// `/dev/null`, a terminal) is written into directly, as `cp` would, with
/// or without `--force`: nothing is replaced, and renaming a regular file
/// over such a node would destroy it (as root, `/dev/null` itself). A
/// socket or a block device is refused.
pub struct AtomicFile {
    dest: PathBuf,
    file: Option<Sink>,
    /// The temporary path, registered for removal on a signal; `None` when
    /// writing into a FIFO or device.
    tmp: Option<PathBuf>,
    force: bool,
}

/// Where an [`AtomicFile`] writes.
enum Sink {
    /// A temporary sibling, renamed into place on commit.
    Temp(BufWriter<tempfile::NamedTempFile>),
    /// An existing FIFO or character device, written in place.
    Direct(BufWriter<File>),
}

/// How [`AtomicFile`] treats a symbolic link at the destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    /// Follow it, as `cp` does: the file it names decides (a FIFO or
    /// device is written into), and a regular file's link is replaced.
    Follow,
    /// Never follow it: the link is replaced like a regular file (with
    /// `force`), and any other kind of file is refused.
    Replace,
}

impl AtomicFile {
    /// Starts writing `dest` with the umask's mode. Fails at once (before
    /// any work) when `dest` exists and `force` is false, or when `dest` is
    /// a directory.
    pub fn create(dest: &Path, force: bool) -> Result<AtomicFile, Failure> {
        AtomicFile::create_with(dest, force, FileMode::Umask)
    }

    /// [`AtomicFile::create`] with the mode of a new file. A replaced file
    /// (`force`) keeps its own mode. An existing FIFO or character device
    /// is written into (`force` is not needed: nothing is replaced).
    pub(crate) fn create_with(
        dest: &Path,
        force: bool,
        mode: FileMode,
    ) -> Result<AtomicFile, Failure> {
        AtomicFile::create_inner(dest, force, mode, Links::Follow)
    }

    /// Starts writing `dest`, replacing what is there, without ever
    /// following a link at `dest`: a symbolic link is replaced by the new
    /// file (which gets `mode`, not the link's), a regular file keeps its
    /// mode, and any other kind of file is refused. For files written into
    /// a directory the user names but may not own every entry of (`man
    /// --dir`), where a planted link must not redirect the write.
    pub fn replace_never_following(dest: &Path, mode: FileMode) -> Result<AtomicFile, Failure> {
        AtomicFile::create_inner(dest, true, mode, Links::Replace)
    }

    fn create_inner(
        dest: &Path,
        force: bool,
        mode: FileMode,
        links: Links,
    ) -> Result<AtomicFile, Failure> {
        let existing = match links {
            Links::Follow => fs::metadata(dest).ok(),
            Links::Replace => fs::symlink_metadata(dest).ok(),
        };
        if let Some(meta) = &existing {
            if meta.is_dir() {
                return Err(Failure::new(format!(
                    "cannot write {}: is a directory",
                    dest.display()
                )));
            }
            let replaceable = meta.is_file() || meta.file_type().is_symlink();
            if !replaceable {
                return match links {
                    Links::Follow => AtomicFile::direct(dest, meta, force),
                    Links::Replace => Err(Failure::new(format!(
                        "cannot write {}: {}; only a regular file or a symbolic link there is replaced",
                        dest.display(),
                        kind_of(meta)
                    ))),
                };
            }
            if !force {
                return Err(refuse_overwrite(dest));
            }
        }
        let Some(file_name) = dest.file_name() else {
            return Err(Failure::new(format!(
                "cannot write {}: not a file name",
                dest.display()
            )));
        };
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        remove_stale(&dir, file_name);
        let mut prefix = OsString::from(".");
        prefix.push(file_name);
        prefix.push(format!("{TMP_TAG}{}-", std::process::id()));
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp").rand_bytes(8);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The mode asked at creation is narrowed by the umask; an exact
            // mode is set again below.
            let at_open = match mode {
                FileMode::Umask => 0o666,
                FileMode::Exact(m) => m & 0o600,
            };
            builder.permissions(fs::Permissions::from_mode(at_open));
        }
        let tmp = cleanup::creating(|made| {
            let tmp = builder.tempfile_in(&dir)?;
            made(tmp.path());
            Ok(tmp)
        })
        .map_err(|e: std::io::Error| {
            Failure::io(
                format_args!("cannot create a temporary file in {}", dir.display()),
                &e,
            )
        })?;
        let chmod = match (&existing, mode) {
            // Keep the mode of the file being replaced (not a link's 777).
            (Some(meta), _) if meta.is_file() => Some(meta.permissions()),
            #[cfg(unix)]
            (_, FileMode::Exact(m)) => {
                use std::os::unix::fs::PermissionsExt;
                Some(fs::Permissions::from_mode(m))
            }
            _ => None,
        };
        if let Some(perms) = chmod {
            let _ = tmp.as_file().set_permissions(perms);
        }
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            tmp: Some(tmp.path().to_path_buf()),
            file: Some(Sink::Temp(BufWriter::with_capacity(BUFFER_BYTES, tmp))),
            force,
        })
    }

    /// Opens an existing FIFO or character device to write into it (a
    /// FIFO's open waits for a reader, as a shell's `>` does). Neither
    /// created nor truncated: if a regular file took its place meanwhile,
    /// it is refused untouched.
    fn direct(dest: &Path, meta: &fs::Metadata, force: bool) -> Result<AtomicFile, Failure> {
        if !is_stream(meta) {
            return Err(Failure::new(format!(
                "cannot write {}: {}; ndarc writes only into a regular file, a FIFO or a character device",
                dest.display(),
                kind_of(meta)
            )));
        }
        let file = fs::OpenOptions::new()
            .write(true)
            .open(dest)
            .map_err(|e| Failure::path("cannot write", dest, &e))?;
        let opened = file
            .metadata()
            .map_err(|e| Failure::path("cannot write", dest, &e))?;
        if !is_stream(&opened) {
            return Err(Failure::new(format!(
                "cannot write {}: it changed while it was opened",
                dest.display()
            )));
        }
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            tmp: None,
            file: Some(Sink::Direct(BufWriter::with_capacity(BUFFER_BYTES, file))),
            force,
        })
    }

    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// The temporary file being written (renamed to [`AtomicFile::path`]
    /// on commit); `None` when writing into a FIFO or device.
    pub(crate) fn temp_path(&self) -> Option<&Path> {
        self.tmp.as_deref()
    }

    /// Flushes and fsyncs the temporary file, then moves it to the
    /// destination (atomically replacing it with `--force`; without, failing
    /// if a file appeared there meanwhile) and fsyncs the directory. A FIFO
    /// or device is only flushed.
    pub fn commit(mut self) -> Result<(), Failure> {
        let dest = self.dest.clone();
        let write_err = |e: &io::Error| Failure::path("cannot write", &dest, e);
        let writer = match self.file.take() {
            Some(Sink::Temp(w)) => w,
            Some(Sink::Direct(mut w)) => return w.flush().map_err(|e| write_err(&e)),
            None => {
                return Err(Failure::new(format!(
                    "cannot write {}: already committed",
                    dest.display()
                )))
            }
        };
        let tmp = writer.into_inner().map_err(|e| write_err(e.error()))?;
        tmp.as_file().sync_all().map_err(|e| write_err(&e))?;
        let persisted = if self.force {
            tmp.persist(&self.dest)
        } else {
            // Never replaces a file created by someone else since `create`
            // (a hard link, or rename without replacing).
            tmp.persist_noclobber(&self.dest)
        };
        if let Err(e) = persisted {
            // `e.file` is dropped here, removing the temporary file.
            if e.error.kind() == io::ErrorKind::AlreadyExists {
                return Err(refuse_overwrite(&self.dest));
            }
            return Err(write_err(&e.error));
        }
        sync_dir(&self.dest);
        Ok(())
    }
}

/// Whether `meta` is a FIFO or a character device: a stream written in
/// place, never replaced.
fn is_stream(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        t.is_fifo() || t.is_char_device()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// The kind of a file that is neither regular nor a directory, for
/// messages.
fn kind_of(meta: &fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_symlink() {
        return "a symbolic link";
    }
    "not a regular file"
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(Sink::Temp(f)) => f.write(buf),
            Some(Sink::Direct(f)) => f.write(buf),
            None => Err(io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(Sink::Temp(f)) => f.flush(),
            Some(Sink::Direct(f)) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Dropping the NamedTempFile (if not persisted) removes it.
        self.file = None;
        if let Some(tmp) = &self.tmp {
            cleanup::unregister(tmp);
        }
    }
}

fn refuse_overwrite(dest: &Path) -> Failure {
    Failure::new(format!(
        "{} already exists; use --force to replace it",
        dest.display()
    ))
}

/// What marks a temporary sibling as ndarc's: `.NAME` + this + `PID-…`.
const TMP_TAG: &str = ".ndarc-";

/// Removes the temporary siblings of `file_name` in `dir` that an earlier
/// run left when it was killed outright (SIGKILL, a power cut): those whose
/// process no longer exists. Others' files, and those of live processes,
/// are left alone. Errors are ignored: this is housekeeping.
fn remove_stale(dir: &Path, file_name: &std::ffi::OsStr) {
    let mut prefix = String::from(".");
    let Some(name) = file_name.to_str() else {
        return;
    };
    prefix.push_str(name);
    prefix.push_str(TMP_TAG);
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let entry_name = entry.file_name();
        let Some(rest) = entry_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .filter(|r| r.ends_with(".tmp"))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && pid != std::process::id() && !process_exists(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this id exists (unknown: assume it does).
pub(crate) fn process_exists(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Refuses to write `dest` when it is one of `inputs` (the same file, also
/// through a link), even with `--force`: the output would destroy what the
/// command reads.
pub(crate) fn refuse_input(dest: &Path, inputs: &[&Path]) -> Result<(), Failure> {
    if is_stdio(dest) {
        return Ok(());
    }
    for input in inputs.iter().filter(|p| !is_stdio(p)) {
        if same_file(dest, input) {
            return Err(input_refused(dest));
        }
    }
    Ok(())
}

/// The failure of an output that is one of the command's inputs.
pub(crate) fn input_refused(dest: &Path) -> Failure {
    Failure::new(format!(
        "{} is an input of this command; write the output elsewhere (--force never replaces an input)",
        dest.display()
    ))
}

/// Whether `path` (existing or not) lies in the directory tree of `dir`:
/// one of the directories that hold it is `dir` itself, compared by
/// identity (device and inode), so also through links and `..`. A link at
/// `path` itself is not followed.
pub(crate) fn is_under(path: &Path, dir: &Path) -> bool {
    let Ok(dir_meta) = fs::metadata(dir) else {
        return false;
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(mut at) = fs::canonicalize(parent) else {
        return false;
    };
    loop {
        if fs::metadata(&at).is_ok_and(|m| same_identity(&m, &dir_meta)) {
            return true;
        }
        if !at.pop() {
            return false;
        }
    }
}

/// Whether two metadata describe the same file (Unix: device and inode;
/// elsewhere unknown, so no).
pub(crate) fn same_identity(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        a.dev() == b.dev() && a.ino() == b.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

/// Whether two paths name the same existing file.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        #[cfg(unix)]
        (Ok(x), Ok(y)) => {
            use std::os::unix::fs::MetadataExt;
            x.dev() == y.dev() && x.ino() == y.ino()
        }
        #[cfg(not(unix))]
        (Ok(_), Ok(_)) => match (fs::canonicalize(a), fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        },
        _ => false,
    }
}

/// Makes the rename durable (Unix); errors are ignored, as some file systems
/// do not support it.
fn sync_dir(path: &Path) {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Removal of temporary files and directories when the process is stopped
/// by SIGINT or SIGTERM: the paths in use are registered, and the first
/// registration starts a thread (signal-hook) that removes them and exits
/// with 128 + the signal's number, as a shell reports a killed command.
pub mod cleanup {
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command};
    use std::sync::{Mutex, MutexGuard, Once};

    static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    /// Process groups of running children (each led by the child).
    static GROUPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    static HANDLER: Once = Once::new();

    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        // A panic elsewhere while holding it leaves the list usable.
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Spawns `cmd`, which must make the child lead its own process group
    /// (`process_group(0)`), and kills that whole group (SIGKILL) if this
    /// process is stopped by SIGINT or SIGTERM before [`forget_group`], so
    /// that nothing the child started outlives ndarc. The registry is held
    /// across the spawn: a signal arriving meanwhile waits until the group
    /// is known.
    pub(crate) fn spawn_group(cmd: &mut Command) -> std::io::Result<Child> {
        HANDLER.call_once(install);
        let mut groups = lock(&GROUPS);
        let child = cmd.spawn()?;
        groups.push(child.id());
        Ok(child)
    }

    /// Forgets the group of child `pid` (it has been killed or has ended).
    pub(crate) fn forget_group(pid: u32) {
        let mut groups = lock(&GROUPS);
        if let Some(i) = groups.iter().rposition(|&g| g == pid) {
            groups.swap_remove(i);
        }
    }

    /// Runs `create`, which makes temporary files or directories and names
    /// each one it made to its argument; those are removed if the process
    /// is stopped by a signal before [`unregister`]. Creating and naming
    /// are one step for the signal handler, which holds the same registry
    /// from its sweep until the process exits: a signal either finds every
    /// file `create` made, or comes first and `create` never runs. (Naming
    /// a path only after creating it would leave a file made just before a
    /// signal; naming it before would let a file be made just after the
    /// sweep.)
    pub fn creating<T>(create: impl FnOnce(&mut dyn FnMut(&Path)) -> T) -> T {
        HANDLER.call_once(install);
        let mut paths = lock(&PATHS);
        create(&mut |p: &Path| paths.push(p.to_path_buf()))
    }

    /// Forgets `path` (it was committed, or removed).
    pub(crate) fn unregister(path: &Path) {
        let mut paths = lock(&PATHS);
        if let Some(i) = paths.iter().rposition(|p| p == path) {
            paths.swap_remove(i);
        }
    }

    #[cfg(unix)]
    fn install() {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("ndarc-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    // Both held until exit, so that no child is spawned
                    // and no file registered after the sweep.
                    let groups = lock(&GROUPS);
                    for &pid in groups.iter() {
                        if let Some(pid) = i32::try_from(pid)
                            .ok()
                            .and_then(rustix::process::Pid::from_raw)
                        {
                            let _ = rustix::process::kill_process_group(
                                pid,
                                rustix::process::Signal::KILL,
                            );
                        }
                    }
                    let paths = lock(&PATHS);
                    for p in paths.iter() {
                        if p.is_dir() {
                            let _ = std::fs::remove_dir_all(p);
                        } else {
                            let _ = std::fs::remove_file(p);
                        }
                    }
                    std::process::exit(128 + signal);
                }
            });
        drop(spawned);
    }

    #[cfg(not(unix))]
    fn install() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused<T>(r: Result<T, Failure>) -> Failure {
        match r {
            Ok(_) => panic!("expected a failure"),
            Err(e) => e,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        tempfile::Builder::new()
            .prefix(&format!("ndarc-io-{name}-"))
            .tempdir()
            .expect("create scratch dir")
            .keep()
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn atomic_file_appears_only_on_commit() {
        let dir = scratch("commit");
        let dest = dir.join("out.ndjson");
        let mut f = AtomicFile::create(&dest, false).expect("create");
        f.write_all(b"hello\n").expect("write");
        assert!(!dest.exists());
        assert_eq!(entries(&dir).len(), 1, "one temporary file");
        f.commit().expect("commit");
        assert_eq!(fs::read(&dest).expect("read"), b"hello\n");
        assert_eq!(entries(&dir), vec!["out.ndjson"]);

        // Existing file: refused without force, before any write.
        let e = refused(AtomicFile::create(&dest, false));
        assert!(e.message().contains("already exists"), "{e}");
        // Dropped without commit: nothing changes, no temporary left.
        let mut f = AtomicFile::create(&dest, true).expect("create");
        f.write_all(b"partial").expect("write");
        drop(f);
        assert_eq!(fs::read(&dest).expect("read"), b"hello\n");
        assert_eq!(entries(&dir), vec!["out.ndjson"]);
        // Forced: replaced.
        let mut f = AtomicFile::create(&dest, true).expect("create");
        f.write_all(b"new\n").expect("write");
        f.commit().expect("commit");
        assert_eq!(fs::read(&dest).expect("read"), b"new\n");
        assert_eq!(entries(&dir), vec!["out.ndjson"]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn atomic_file_never_replaces_a_file_created_meanwhile() {
        let dir = scratch("race");
        let dest = dir.join("out");
        let mut f = AtomicFile::create(&dest, false).expect("create");
        f.write_all(b"mine").expect("write");
        fs::write(&dest, b"theirs").expect("write theirs");
        let e = refused(f.commit());
        assert!(e.message().contains("already exists"), "{e}");
        assert_eq!(fs::read(&dest).expect("read"), b"theirs");
        assert_eq!(entries(&dir), vec!["out"]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn is_under_compares_directories_by_identity() {
        let dir = scratch("under");
        fs::create_dir_all(dir.join("a/b")).expect("mkdir");
        let a = dir.join("a");
        assert!(is_under(&dir.join("a/x"), &a));
        assert!(is_under(&dir.join("a/b/new"), &a));
        assert!(is_under(&dir.join("a/b/../x"), &a));
        assert!(!is_under(&dir.join("x"), &a));
        assert!(!is_under(&dir.join("a/../x"), &a));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&a, dir.join("link")).expect("symlink");
            assert!(is_under(&dir.join("link/x"), &a));
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_replaced_never_followed() {
        let dir = scratch("links");
        let victim = dir.join("victim");
        fs::write(&victim, b"keep").expect("write");
        let dest = dir.join("page");
        std::os::unix::fs::symlink(&victim, &dest).expect("symlink");
        let mut f = AtomicFile::replace_never_following(&dest, FileMode::Umask).expect("create");
        f.write_all(b"new").expect("write");
        f.commit().expect("commit");
        assert_eq!(fs::read(&victim).expect("victim"), b"keep");
        assert!(fs::symlink_metadata(&dest).expect("page").is_file());
        assert_eq!(fs::read(&dest).expect("page"), b"new");
        // Anything else that is not a regular file is refused.
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let e = refused(AtomicFile::replace_never_following(&fifo, FileMode::Umask));
        assert!(e.message().contains("a FIFO"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn directories_are_refused() {
        let dir = scratch("dirs");
        let e = refused(Input::open(&dir));
        assert!(e.message().ends_with(": is a directory"), "{e}");
        let e = refused(AtomicFile::create(&dir, true));
        assert!(e.message().ends_with(": is a directory"), "{e}");
        let e = refused(Input::open(&dir.join("missing")));
        assert!(e.message().ends_with("no such file or directory"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }
}
