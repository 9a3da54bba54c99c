use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::Path;

use super::TracefsError;

/// How a write opens its file: `>` (truncate) or `>>` (append).
///
/// The difference matters in tracefs: truncating `kprobe_events` or `synthetic_events`
/// removes every entry, truncating `set_ftrace_filter` replaces the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendMode {
    /// Open with O_TRUNC, like the shell's `>`.
    Truncate,
    /// Open with O_APPEND, like the shell's `>>`.
    Append,
}

/// Read a whole tracefs file.
///
/// Several tracefs files (`events/header_page`, `events/<sys>/filter`, ...) return EOF for
/// any read at a non-zero offset, and every file reports `st_size` 0, so the small probe
/// read of `std::fs::read` truncates them. One large read(2) first, then read to EOF.
///
/// Outside a live tracefs (in a fixture tree) a file that is not a regular file, such as
/// a device or a FIFO, is refused: it could be read forever. tracefs files themselves
/// are regular files (with `st_size` 0).
pub fn read_file(path: &Path) -> Result<Vec<u8>, TracefsError> {
    // Checked before opening: opening a FIFO blocks until it has a writer.
    check_regular(path)?;
    let mut file = std::fs::File::open(path).map_err(|e| TracefsError::from_io(path, e))?;
    // The 1 MiB buffer of the first read is zeroed once per thread and reused: a fresh
    // zeroed megabyte per file made reading the ~2300 format files of a kernel cost more
    // than parsing them.
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        let mut buf = scratch.borrow_mut();
        if buf.len() < 1 << 20 {
            buf.resize(1 << 20, 0);
        }
        let mut len = 0;
        loop {
            if len == buf.len() {
                let grown = buf.len() * 2;
                buf.resize(grown, 0);
            }
            match file.read(&mut buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(TracefsError::from_io(path, e)),
            }
        }
        let out = buf[..len].to_vec();
        // A rare huge file (a `trace` text) does not keep its memory afterwards.
        if buf.len() > 1 << 20 {
            buf.truncate(1 << 20);
            buf.shrink_to_fit();
        }
        Ok(out)
    })
}

/// Refuse a file that is not a regular file (a device, a FIFO) unless it lives in a
/// mounted tracefs: in a fixture tree it could be read forever.
pub fn check_regular(path: &Path) -> Result<(), TracefsError> {
    let meta = std::fs::metadata(path).map_err(|e| TracefsError::from_io(path, e))?;
    if meta.is_file() || super::host::on_tracefs(path) {
        return Ok(());
    }
    Err(TracefsError::NotRegularFile {
        path: path.to_path_buf(),
    })
}

/// Write all of `data` to a tracefs file.
///
/// A rejected write (EINVAL) becomes [`TracefsError::Rejected`]; the caller that knows
/// the instance adds the `error_log` text.
pub fn write_file(path: &Path, data: &[u8], mode: AppendMode) -> Result<(), TracefsError> {
    let mut opts = OpenOptions::new();
    opts.write(true);
    match mode {
        AppendMode::Truncate => opts.truncate(true),
        AppendMode::Append => opts.append(true),
    };
    let mut file = opts
        .open(path)
        .map_err(|e| TracefsError::from_io(path, e))?;
    // Files that take a list (set_ftrace_filter, set_event, ...) consume one token per
    // write(2) and return a short count, so keep writing the rest, as the shell's echo does.
    let mut rest = data;
    loop {
        match file.write(rest) {
            Ok(n) if n >= rest.len() => return Ok(()),
            Ok(0) => {
                return Err(TracefsError::from_io(
                    path,
                    std::io::Error::new(
                        std::io::ErrorKind::WriteZero,
                        "the kernel accepted no more bytes",
                    ),
                ))
            }
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(TracefsError::Rejected {
                    path: path.to_path_buf(),
                    written: String::from_utf8_lossy(data).into_owned(),
                    error_log: None,
                })
            }
            Err(e) => return Err(TracefsError::from_io(path, e)),
        }
    }
}

/// The entries of a control file that lists one per line (`set_ftrace_filter`, an event's
/// `trigger`): trimmed, without blank lines and the kernel's `#` comments.
pub(crate) fn entry_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}
