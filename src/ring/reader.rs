//! Per-CPU sources of sub-buffers: a fixture tree's files to EOF, or the live
//! `trace_pipe_raw` files read without blocking.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::page::PageLayout;
use crate::endian::Endianness;
use crate::event::{HeaderPage, HeaderPageError};
use crate::tracefs::{Instance, Tracefs, TracefsError};

/// An error setting up a ring-buffer source.
#[derive(Debug)]
#[non_exhaustive]
pub enum RingError {
    /// A tracefs file could not be read.
    Tracefs(TracefsError),
    /// `events/header_page` could not be understood.
    HeaderPage(HeaderPageError),
    /// Another reader holds this buffer (EBUSY: since 6.5 the per-CPU `trace_pipe_raw` and
    /// the global `trace_pipe` of one buffer cannot be read at the same time).
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// No `per_cpu/cpuN/trace_pipe_raw` at all under the root.
    NoData {
        /// The root searched.
        root: PathBuf,
    },
    /// A sub-buffer size that cannot be right: not a number, zero, past
    /// [`MAX_SUBBUF`], or not dividing the data of a recorded tree.
    SubBufferSize {
        /// The file that shows it (`buffer_subbuf_size_kb` or a `trace_pipe_raw`).
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

/// Largest sub-buffer accepted: the kernel's largest (order 10) with 64 KiB pages.
pub const MAX_SUBBUF: usize = 64 << 20;

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingError::Tracefs(e) => write!(f, "{e}"),
            RingError::HeaderPage(e) => write!(f, "{e}"),
            RingError::Busy { path } => write!(
                f,
                "{}: busy, another program is reading this buffer (stop it, or give -e EVENT to read a private instance)",
                path.display()
            ),
            RingError::NoData { root } => write!(
                f,
                "{}: no per_cpu/cpuN/trace_pipe_raw files (a tree captured without events has no data)",
                root.display()
            ),
            RingError::SubBufferSize { path, detail } => write!(f, "{}: {detail}", path.display()),
        }
    }
}

impl std::error::Error for RingError {}

impl From<TracefsError> for RingError {
    fn from(e: TracefsError) -> Self {
        RingError::Tracefs(e)
    }
}

/// Whether the machine named in `uname -m` style is big-endian.
fn machine_is_big_endian(machine: &str) -> bool {
    let m = machine.trim();
    [
        "s390",
        "s390x",
        "ppc",
        "ppc64",
        "powerpc",
        "mips",
        "mips64",
        "sparc",
        "sparc64",
        "m68k",
        "parisc",
        "armeb",
        "aarch64_be",
    ]
    .contains(&m)
}

/// The sub-buffer layout of a tracefs root (or of an instance directory's parent root):
/// `events/header_page`, `buffer_subbuf_size_kb` when present, and the byte order from
/// the tree's `host/uname` (live roots: this machine's).
pub fn page_layout(t: &Tracefs) -> Result<PageLayout, RingError> {
    let header =
        HeaderPage::parse(&t.read_string("events/header_page")?).map_err(RingError::HeaderPage)?;
    let subbuf = subbuf_size(t, Path::new(""))?;
    let endian = match t.host().uname_line() {
        Some(u) => Endianness::big_if(
            u.split_whitespace()
                .last()
                .is_some_and(machine_is_big_endian),
        ),
        None => Endianness::NATIVE,
    };
    Ok(PageLayout::new(&header, subbuf, endian))
}

/// The sub-buffer size in bytes from `buffer_subbuf_size_kb` of `instance` (a directory
/// relative to the root, empty for the top level); None when the kernel has no such file
/// (before 6.8, where a sub-buffer is one page).
pub fn subbuf_size(t: &Tracefs, instance: &Path) -> Result<Option<usize>, RingError> {
    let rel = instance.join("buffer_subbuf_size_kb");
    let text = match t.read_string(&rel) {
        Ok(s) => s,
        Err(e) if e.is_unavailable() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    match text.trim().parse::<usize>() {
        // The kernel's sub-buffers are a power-of-two number of pages.
        Ok(kb) if kb.is_power_of_two() && kb <= MAX_SUBBUF / 1024 => Ok(Some(kb * 1024)),
        _ => Err(RingError::SubBufferSize {
            path: t.path(rel),
            detail: format!(
                "{:?} is not a sub-buffer size (a power of two from 1 to {} KiB)",
                text.trim(),
                MAX_SUBBUF / 1024
            ),
        }),
    }
}

/// Check that `len` bytes read from `path` are whole sub-buffers of `subbuf` bytes: a
/// size that does not divide the data would decode it wrongly without a word.
pub fn check_whole_subbufs(path: &Path, len: u64, subbuf: usize) -> Result<(), RingError> {
    if subbuf > 0 && len % subbuf as u64 == 0 {
        return Ok(());
    }
    Err(RingError::SubBufferSize {
        path: path.to_path_buf(),
        detail: format!(
            "{len} bytes are not a whole number of {subbuf}-byte sub-buffers: buffer_subbuf_size_kb ({} KiB) does not match the data",
            subbuf / 1024
        ),
    })
}

/// The raw bytes of one CPU's `trace_pipe_raw`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawCpuData {
    /// The CPU.
    pub cpu: u32,
    /// Whole sub-buffers, back to back.
    pub bytes: Vec<u8>,
}

fn cpu_numbers(t: &Tracefs) -> Vec<u32> {
    let mut cpus: Vec<u32> = std::fs::read_dir(t.path("per_cpu"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    cpus.sort_unstable();
    cpus
}

/// Read every `per_cpu/cpuN/trace_pipe_raw` of a fixture tree to EOF (only `cpu` when
/// given), in CPU order. Do not use on a live root: there these files block.
pub fn load_cpu_files(t: &Tracefs, cpu: Option<u32>) -> Result<Vec<RawCpuData>, RingError> {
    let subbuf = page_layout(t)?.subbuf_size;
    let mut out = Vec::new();
    for c in cpu_numbers(t) {
        if cpu.is_some_and(|want| want != c) {
            continue;
        }
        let rel = format!("per_cpu/cpu{c}/trace_pipe_raw");
        if !t.exists(&rel) {
            continue;
        }
        let bytes = t.read(&rel)?;
        check_whole_subbufs(&t.path(&rel), bytes.len() as u64, subbuf)?;
        out.push(RawCpuData { cpu: c, bytes });
    }
    if out.is_empty() {
        return Err(RingError::NoData {
            root: t.root().to_path_buf(),
        });
    }
    Ok(out)
}

/// Live per-CPU readers of `trace_pipe_raw`: non-blocking reads of whole sub-buffers, with
/// `poll` to wait for data.
#[derive(Debug)]
pub struct LiveReader {
    files: Vec<(u32, File)>,
    subbuf_size: usize,
    scratch: Vec<u8>,
}

impl LiveReader {
    /// Open `per_cpu/cpuN/trace_pipe_raw` of a buffer (the top level or an instance) for
    /// every CPU, or just `cpu`.
    pub fn open(
        t: &Instance,
        layout: &PageLayout,
        cpu: Option<u32>,
    ) -> Result<LiveReader, RingError> {
        let mut files = Vec::new();
        for c in t.cpus().unwrap_or_default() {
            if cpu.is_some_and(|want| want != c) {
                continue;
            }
            let path = t.path(format!("per_cpu/cpu{c}/trace_pipe_raw"));
            let f = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
                .map_err(|e| {
                    if e.raw_os_error() == Some(libc::EBUSY) {
                        RingError::Busy { path: path.clone() }
                    } else {
                        TracefsError::from_io(&path, e).into()
                    }
                })?;
            files.push((c, f));
        }
        if files.is_empty() {
            return Err(RingError::NoData { root: t.path("") });
        }
        Ok(LiveReader {
            files,
            subbuf_size: layout.subbuf_size,
            scratch: vec![0; layout.subbuf_size],
        })
    }

    /// Wait until some CPU has data or `timeout` passes (interrupted waits return early).
    pub fn wait(&self, timeout: Duration) -> io::Result<()> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let mut fds: Vec<PollFd> = self
            .files
            .iter()
            .map(|(_, f)| PollFd::new(f.as_fd(), PollFlags::POLLIN))
            .collect();
        let ms = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
        match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
            Err(e) => Err(io::Error::from_raw_os_error(e as i32)),
        }
    }

    /// Append every whole sub-buffer available now to `out[i]` for the i-th CPU (in CPU
    /// order, see [`LiveReader::cpus`]); returns the bytes read.
    pub fn read_available(&mut self, out: &mut [Vec<u8>]) -> io::Result<usize> {
        let mut total = 0;
        for (i, (_, f)) in self.files.iter_mut().enumerate() {
            loop {
                match f.read(&mut self.scratch) {
                    Ok(0) => break,
                    Ok(n) => {
                        let dst = &mut out[i];
                        dst.extend_from_slice(&self.scratch[..n]);
                        // Keep sub-buffers aligned even if a read came back short.
                        dst.resize(
                            dst.len()
                                + (self.subbuf_size - n % self.subbuf_size) % self.subbuf_size,
                            0,
                        );
                        total += n;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(total)
    }

    /// The CPUs read, in order.
    pub fn cpus(&self) -> Vec<u32> {
        self.files.iter().map(|(c, _)| *c).collect()
    }
}
