//! One capture thread per CPU: `per_cpu/cpuN/trace_pipe_raw` pages appended to a file.
//!
//! Why read(2): each page must be looked at anyway (its `commit` flags carry the lost
//! events count), a page-sized read hands over exactly one sub-buffer, and at the event
//! rates this recorder targets the copy is far below the cost of the kernel's own
//! page swap. splice would save the copy but not the page inspection.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// Tells capture threads to drain and end, waking them at once from poll.
#[derive(Debug)]
pub(crate) struct Stop {
    flag: AtomicBool,
    rd: std::os::fd::OwnedFd,
    wr: std::os::fd::OwnedFd,
}

impl Stop {
    pub fn new() -> io::Result<Arc<Stop>> {
        let (rd, wr) = nix::unistd::pipe().map_err(io::Error::from)?;
        Ok(Arc::new(Stop {
            flag: AtomicBool::new(false),
            rd,
            wr,
        }))
    }

    /// Set the flag, then make the pipe readable (it is never drained, so every
    /// thread's poll sees it).
    pub fn trigger(&self) {
        if !self.flag.swap(true, Ordering::AcqRel) {
            let _ = nix::unistd::write(&self.wr, b"x");
        }
    }

    fn is_set(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }
}

/// Where the sub-buffer header keeps what the lost-events count needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageInfo {
    pub subbuf: usize,
    pub commit_offset: usize,
    pub data_offset: usize,
    pub long_size: usize,
    /// Longest wait between two looks at `stop` and the buffer (`record -s`), in ms.
    pub sleep_ms: u16,
    /// `record -m`: keep about this many bytes per CPU, the newest ones.
    pub max_bytes: Option<u64>,
}

impl PageInfo {
    /// The layout `header_page` describes, one page per sub-buffer until the caller
    /// knows better, looked at every 100 ms, nothing dropped.
    pub fn of(hp: &crate::event::HeaderPage) -> PageInfo {
        PageInfo {
            subbuf: hp.page_size(),
            commit_offset: hp.commit_offset,
            data_offset: hp.data_offset,
            long_size: hp.long_size(),
            sleep_ms: 100,
            max_bytes: None,
        }
    }
}

/// What one CPU's capture produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuCaptured {
    /// The CPU.
    pub cpu: u32,
    /// Sub-buffers written.
    pub pages: u64,
    /// Events the kernel reported lost in page headers (counts it stored).
    pub lost_events: u64,
    /// Pages whose header says events were lost without saying how many.
    pub lost_unknown: u64,
    /// Capture files holding the kept pages, oldest first.
    pub files: Vec<PathBuf>,
}

pub(crate) struct CpuThread {
    pub cpu: u32,
    pub tmp: PathBuf,
    pub handle: Option<JoinHandle<Result<CpuCaptured, String>>>,
    /// Kernel thread id, so the recorder can keep its own threads out of the trace.
    pub tid: Option<i32>,
}

fn read_long(b: &[u8], at: usize, long: usize) -> u64 {
    if long == 8 {
        b.get(at..at + 8)
            .map(|s| u64::from_ne_bytes(s.try_into().unwrap()))
            .unwrap_or(0)
    } else {
        b.get(at..at + 4)
            .map(|s| u32::from_ne_bytes(s.try_into().unwrap()) as u64)
            .unwrap_or(0)
    }
}

fn account(page: &[u8], info: &PageInfo, out: &mut CpuCaptured) {
    let commit = read_long(page, info.commit_offset, info.long_size);
    if commit & (1 << 31) != 0 {
        if commit & (1 << 30) != 0 {
            let size = (commit & ((1 << 27) - 1)) as usize;
            out.lost_events += read_long(page, info.data_offset + size, info.long_size);
        } else {
            out.lost_unknown += 1;
        }
    }
}

/// Start capturing `pipe` into `tmp` until `stop` is set, then drain what is left.
///
/// The error names the file that failed, `pipe` or `tmp`.
pub(crate) fn spawn(
    cpu: u32,
    pipe: PathBuf,
    tmp: PathBuf,
    info: PageInfo,
    stop: Arc<Stop>,
) -> Result<CpuThread, String> {
    // A device in a fixture tree would be drained forever.
    crate::tracefs::check_regular(&pipe).map_err(|e| e.to_string())?;
    let src = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&pipe)
        .map_err(|e| crate::tracefs::TracefsError::from_io(&pipe, e).to_string())?;
    let mut dst = File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    // With -m, two halves alternate: when the current one is full the older one is
    // emptied and written next, so the newest max/2..max bytes are kept.
    let other = PathBuf::from(format!("{}.b", tmp.display()));
    let mut order = vec![tmp.clone()];
    let first = tmp.clone();
    let half_pages = info.max_bytes.map(|m| (m / 2 / info.subbuf as u64).max(1));
    let (tid_tx, tid_rx) = std::sync::mpsc::sync_channel(1);
    let handle = std::thread::Builder::new()
        .name(format!("capture-cpu{cpu}"))
        .spawn(move || {
            let _ = tid_tx.send(nix::unistd::gettid().as_raw());
            let mut out = CpuCaptured {
                cpu,
                ..Default::default()
            };
            let mut buf = vec![0u8; info.subbuf];
            let ctx = |e: io::Error, what: &str| format!("cpu{cpu}: {what}: {e}");
            loop {
                // The last pass after stop drains everything the kernel still holds.
                let stopping = stop.is_set();
                loop {
                    match nix::unistd::read(std::os::fd::AsRawFd::as_raw_fd(&src), &mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            buf[n..].fill(0);
                            account(&buf, &info, &mut out);
                            // Written straight through: data already read is on disk even if
                            // the process is killed right after.
                            if let Some(half) = half_pages {
                                if out.pages > 0 && out.pages % half == 0 {
                                    let next = if order.last() == Some(&first) {
                                        &other
                                    } else {
                                        &first
                                    };
                                    dst = File::create(next)
                                        .map_err(|e| ctx(e, "rotating capture file"))?;
                                    order.retain(|p| p != next);
                                    order.push(next.clone());
                                }
                            }
                            dst.write_all(&buf)
                                .map_err(|e| ctx(e, "writing capture file"))?;
                            out.pages += 1;
                        }
                        Err(nix::errno::Errno::EAGAIN) => break,
                        Err(nix::errno::Errno::EINTR) => continue,
                        Err(e) => return Err(format!("cpu{cpu}: reading {}: {e}", pipe.display())),
                    }
                }
                if stopping {
                    break;
                }
                // Wake on data (the kernel's buffer_percent) or every `sleep_ms` to see `stop`.
                let mut fds = [
                    PollFd::new(src.as_fd(), PollFlags::POLLIN),
                    PollFd::new(stop.rd.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::from(info.sleep_ms.max(1))) {
                    Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                    Err(e) => return Err(format!("cpu{cpu}: poll {}: {e}", pipe.display())),
                }
            }
            dst.flush().map_err(|e| ctx(e, "flushing capture file"))?;
            out.files = order;
            Ok(out)
        })
        .map_err(|e| format!("cpu{cpu}: cannot start the capture thread: {e}"))?;
    let tid = tid_rx.recv().ok();
    Ok(CpuThread {
        cpu,
        tmp,
        handle: Some(handle),
        tid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(commit: u64, stored: Option<u64>) -> Vec<u8> {
        let mut p = vec![0u8; 4096];
        p[8..16].copy_from_slice(&commit.to_ne_bytes());
        if let Some(n) = stored {
            let at = 16 + (commit & ((1 << 27) - 1)) as usize;
            p[at..at + 8].copy_from_slice(&n.to_ne_bytes());
        }
        p
    }

    #[test]
    fn lost_events_from_page_flags() {
        let info = PageInfo {
            subbuf: 4096,
            commit_offset: 8,
            data_offset: 16,
            long_size: 8,
            sleep_ms: 100,
            max_bytes: None,
        };
        let mut c = CpuCaptured::default();
        account(&page(100, None), &info, &mut c);
        assert_eq!((c.lost_events, c.lost_unknown), (0, 0));
        account(&page(100 | 1 << 31 | 1 << 30, Some(42)), &info, &mut c);
        assert_eq!((c.lost_events, c.lost_unknown), (42, 0));
        account(&page(64 | 1 << 31, None), &info, &mut c);
        assert_eq!((c.lost_events, c.lost_unknown), (42, 1));
    }
}
