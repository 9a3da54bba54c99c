//! Every `unsafe` call of the perf side: `perf_event_open(2)`, its ioctls, counter reads,
//! and starting a command that waits until its counters are armed.
//!
//! The rest of `perf` works with the safe wrappers here ([`Counter`], [`GatedChild`]).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use perf_event_open_sys as sys;

use super::ring::{readable, RecordBytes, Records, RingStats};
pub(crate) use sys::bindings::perf_event_attr as RawAttr;

/// What a counter read returns with `read_format = TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterReading {
    /// The raw count.
    pub value: u64,
    /// Nanoseconds the event was enabled.
    pub enabled: u64,
    /// Nanoseconds it was actually on a PMU (less than `enabled` when multiplexed).
    pub running: u64,
}

impl std::ops::AddAssign for CounterReading {
    fn add_assign(&mut self, o: CounterReading) {
        self.value = self.value.wrapping_add(o.value);
        self.enabled = self.enabled.wrapping_add(o.enabled);
        self.running = self.running.wrapping_add(o.running);
    }
}

/// An open perf event file descriptor.
#[derive(Debug)]
pub struct Counter {
    fd: OwnedFd,
}

/// A zeroed attr with its `size` set, ready for the caller's fields.
pub(crate) fn new_attr() -> RawAttr {
    // SAFETY: perf_event_attr is plain old data (integers, bitfields and unions of
    // integers); all-zero is its documented default.
    let mut attr: RawAttr = unsafe { std::mem::zeroed() };
    attr.size = std::mem::size_of::<RawAttr>() as u32;
    attr
}

/// Set the event an attr opens: its type and config words.
pub(crate) fn set_event(attr: &mut RawAttr, kind: &super::spec::EventKind) {
    let (ty, config) = kind.type_config();
    attr.type_ = ty;
    attr.config = config;
    let (config1, config2) = kind.config12();
    attr.__bindgen_anon_3.config1 = config1;
    attr.__bindgen_anon_4.config2 = config2;
    if let super::spec::EventKind::Breakpoint { access, .. } = kind {
        attr.bp_type = *access;
    }
}

/// Whether perf opens an event again without exclude_guest and exclude_host after
/// `err`: the kernel's EINVAL for a PMU that takes no exclusion bits (msr).
pub(crate) fn refused_exclusion(err: &io::Error, attr: &RawAttr) -> bool {
    err.raw_os_error() == Some(libc::EINVAL) && (attr.exclude_guest() | attr.exclude_host()) != 0
}

/// The attr's bytes as perf.data stores them: perf 6.1's 128-byte layout
/// (`PERF_ATTR_SIZE_VER7`, its `size` field saying so) when the fields past it are zero,
/// else the whole struct.
pub(crate) fn attr_bytes(attr: &RawAttr) -> Vec<u8> {
    let n = std::mem::size_of::<RawAttr>();
    // SAFETY: perf_event_attr is plain old data without padding holes (every field is an
    // integer, the bitfield words included), so all its n bytes are initialised.
    let all = unsafe { std::slice::from_raw_parts((attr as *const RawAttr).cast::<u8>(), n) };
    let ver7 = sys::bindings::PERF_ATTR_SIZE_VER7 as usize;
    let mut v = if n > ver7 && all[ver7..].iter().all(|&b| b == 0) {
        all[..ver7].to_vec()
    } else {
        all.to_vec()
    };
    let len = v.len() as u32;
    v[4..8].copy_from_slice(&len.to_ne_bytes());
    v
}

/// Whether the kernel opens an event of this type and config for this thread, as perf's
/// `perf list` asks it: disabled, counting everything, and when that is refused for
/// lack of privilege, once more without the kernel's share.
pub fn event_supported(type_: u32, config: u64) -> bool {
    let mut attr = new_attr();
    attr.type_ = type_;
    attr.config = config;
    attr.set_disabled(1);
    match Counter::open(&attr, 0, -1, None) {
        Ok(_) => true,
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            attr.set_exclude_kernel(1);
            Counter::open(&attr, 0, -1, None).is_ok()
        }
        Err(_) => false,
    }
}

impl Counter {
    /// `perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC)`.
    pub(crate) fn open(
        attr: &RawAttr,
        pid: i32,
        cpu: i32,
        group: Option<&Counter>,
    ) -> io::Result<Counter> {
        Counter::open_flags(attr, pid, cpu, group, 0)
    }

    /// A counter of the tasks of one cgroup on one CPU: `perf_event_open` with the
    /// cgroup directory's descriptor as pid and `PERF_FLAG_PID_CGROUP`.
    pub(crate) fn open_in_cgroup(
        attr: &RawAttr,
        cgroup: &std::fs::File,
        cpu: i32,
        group: Option<&Counter>,
    ) -> io::Result<Counter> {
        Counter::open_flags(
            attr,
            cgroup.as_raw_fd(),
            cpu,
            group,
            sys::bindings::PERF_FLAG_PID_CGROUP as libc::c_ulong,
        )
    }

    fn open_flags(
        attr: &RawAttr,
        pid: i32,
        cpu: i32,
        group: Option<&Counter>,
        flags: libc::c_ulong,
    ) -> io::Result<Counter> {
        let mut a = *attr;
        let group_fd = group.map_or(-1, |g| g.fd.as_raw_fd());
        // SAFETY: `a` is a fully initialised perf_event_attr whose size field matches the
        // struct; the kernel only reads it. The returned fd is owned by us alone.
        let fd = unsafe {
            sys::perf_event_open(
                &mut a,
                pid,
                cpu,
                group_fd,
                sys::bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong | flags,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor returned by the kernel.
        Ok(Counter {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn ioctl(&self, which: Ioctl) -> io::Result<()> {
        let fd = self.fd.as_raw_fd();
        // SAFETY: these ioctls take an integer argument and act only on our own fd.
        let r = unsafe {
            match which {
                Ioctl::Enable => sys::ioctls::ENABLE(fd, 0),
                Ioctl::Disable => sys::ioctls::DISABLE(fd, 0),
                Ioctl::Reset => sys::ioctls::RESET(fd, 0),
            }
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// `PERF_EVENT_IOC_ENABLE`.
    pub fn enable(&self) -> io::Result<()> {
        self.ioctl(Ioctl::Enable)
    }

    /// `PERF_EVENT_IOC_DISABLE`.
    pub fn disable(&self) -> io::Result<()> {
        self.ioctl(Ioctl::Disable)
    }

    /// `PERF_EVENT_IOC_RESET`.
    pub fn reset(&self) -> io::Result<()> {
        self.ioctl(Ioctl::Reset)
    }

    /// `PERF_EVENT_IOC_ID`: the id the kernel gave this event (sample streams name it).
    pub fn id(&self) -> io::Result<u64> {
        let mut id = 0u64;
        // SAFETY: ID writes one u64 through the pointer, which points at `id`.
        let r = unsafe { sys::ioctls::ID(self.fd.as_raw_fd(), &mut id) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(id)
        }
    }

    /// `PERF_EVENT_IOC_SET_OUTPUT`: send this event's records to `target`'s ring.
    pub fn set_output(&self, target: &Counter) -> io::Result<()> {
        // SAFETY: SET_OUTPUT takes another perf fd of ours as its argument.
        let r = unsafe { sys::ioctls::SET_OUTPUT(self.fd.as_raw_fd(), target.fd.as_raw_fd()) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// `PERF_EVENT_IOC_SET_FILTER`: a tracepoint's filter, in ftrace's filter syntax
    /// (the kernel refuses a bad one with EINVAL).
    pub fn set_filter(&self, filter: &str) -> io::Result<()> {
        let c = CString::new(filter)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the filter"))?;
        // SAFETY: SET_FILTER reads the NUL-terminated string the pointer points at, which
        // lives until the call returns; the kernel does not write through it.
        let r = unsafe { sys::ioctls::SET_FILTER(self.fd.as_raw_fd(), c.as_ptr().cast_mut()) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Read the count (the attr must have asked for both total times, as
    /// [`crate::perf::stat`] does).
    pub fn read(&self) -> io::Result<CounterReading> {
        let [value, enabled, running] = self.read3()?;
        Ok(CounterReading {
            value,
            enabled,
            running,
        })
    }

    /// Read this counter's count from a read of its whole group (the attr asked for both
    /// total times, `ID` and `GROUP`, as [`crate::perf::stat`] does for a group of more
    /// than one event): the kernel returns the group's times and every member's value
    /// with its id, in one read. `id` is this counter's ([`Counter::id`]); `members`
    /// bounds the group's size.
    pub fn read_in_group(&self, id: u64, members: usize) -> io::Result<CounterReading> {
        let mut buf = vec![0u64; 3 + 2 * members];
        // SAFETY: the Vec holds `buf.len()` initialised u64s with no padding; u8 has
        // alignment 1, and the slice lives no longer than the borrow of `buf`.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), buf.len() * 8) };
        let n = nix::unistd::read(self.fd.as_raw_fd(), bytes).map_err(io::Error::from)?;
        let words = &buf[..n / 8];
        let nr = words.first().copied().unwrap_or(0) as usize;
        if words.len() < 3 || words.len() < 3 + 2 * nr {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("perf group read returned {n} bytes for {nr} members"),
            ));
        }
        let value = words[3..3 + 2 * nr]
            .chunks_exact(2)
            .find(|m| m[1] == id)
            .map(|m| m[0])
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("perf group read has no value for event id {id}"),
                )
            })?;
        Ok(CounterReading {
            value,
            enabled: words[1],
            running: words[2],
        })
    }

    /// The samples the kernel dropped for this event, from a read with
    /// `read_format = ID | LOST` (value, id, lost), or with the enabled and running
    /// times too when `with_times` (value, enabled, running, id, lost).
    pub fn read_lost(&self, with_times: bool) -> io::Result<u64> {
        if with_times {
            Ok(self.read_words::<5>()?[4])
        } else {
            Ok(self.read3()?[2])
        }
    }

    fn read3(&self) -> io::Result<[u64; 3]> {
        self.read_words::<3>()
    }

    fn read_words<const N: usize>(&self) -> io::Result<[u64; N]> {
        let mut buf = [0u64; N];
        let n =
            nix::unistd::read(self.fd.as_raw_fd(), bytes_of(&mut buf)).map_err(io::Error::from)?;
        if n != N * 8 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("perf counter read returned {n} bytes, expected {}", N * 8),
            ));
        }
        Ok(buf)
    }

    /// The raw descriptor (for poll).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

fn bytes_of<const N: usize>(buf: &mut [u64; N]) -> &mut [u8] {
    // SAFETY: [u64; N] is N * 8 initialised bytes with no padding, and u8 has alignment 1.
    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), N * 8) }
}

/// A perf event's mmap ring: one metadata page, then `2^n` data pages the kernel writes
/// records into (see [`super::ring`] for reading them).
#[derive(Debug)]
pub struct Ring {
    base: std::ptr::NonNull<u8>,
    map_len: usize,
    data_off: usize,
    data_len: usize,
    stats: RingStats,
    /// Mapped read-only: the kernel writes it backward and overwrites its oldest
    /// records (`write_backward`); it is read with [`Ring::read_backward`].
    backward: bool,
}

/// Raise this process's soft limit of open files to its hard limit (counting every
/// thread of a system takes a descriptor per thread and event); a failure leaves the
/// limit as it was, and opening then fails with EMFILE, which names the limit.
pub fn raise_open_files_limit() {
    // SAFETY: getrlimit/setrlimit on this process with a valid struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// Run this process (its calling thread, and the threads it starts after) under
/// SCHED_FIFO at `priority` (1 to 99), as `perf record -r` runs itself.
pub fn set_fifo_priority(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: sched_setscheduler on this process with a valid, initialised struct.
    match unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The id the kernel gives the cgroup at `path` (what PERF_RECORD_CGROUP and
/// PERF_SAMPLE_CGROUP carry): the 8-byte file handle of its directory, as perf reads it
/// with `name_to_handle_at(2)`.
pub(crate) fn cgroup_id(path: &std::path::Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    /// `struct file_handle` with room for the 8 bytes of a cgroup's handle.
    #[repr(C)]
    struct CgroupHandle {
        handle_bytes: u32,
        handle_type: i32,
        id: u64,
    }
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let mut handle = CgroupHandle {
        handle_bytes: 8,
        handle_type: 0,
        id: 0,
    };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: `c` is a NUL-terminated path; `handle` is a file_handle header followed by
    // the 8 bytes its handle_bytes promises, and the kernel writes no more than that.
    let r = unsafe {
        libc::name_to_handle_at(
            libc::AT_FDCWD,
            c.as_ptr(),
            (&mut handle as *mut CgroupHandle).cast::<libc::file_handle>(),
            &mut mount_id,
            0,
        )
    };
    match r {
        0 => Ok(handle.id),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

impl Counter {
    /// Map a ring of `data_pages` pages (a power of two) for this event; other events can
    /// send their records into it with [`Counter::set_output`].
    pub fn map_ring(&self, data_pages: usize) -> io::Result<Ring> {
        self.map_ring_as(data_pages, false)
    }

    /// [`Counter::map_ring`], or with `backward` a read-only ring for an event with
    /// `write_backward`: the kernel overwrites its oldest records instead of dropping
    /// new ones (perf record's `--overwrite`).
    pub fn map_ring_as(&self, data_pages: usize, backward: bool) -> io::Result<Ring> {
        if !data_pages.is_power_of_two() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{data_pages} ring pages: must be a power of two"),
            ));
        }
        let page = page_size();
        let data_len = data_pages * page;
        let map_len = data_len + page;
        // SAFETY: a fresh shared read-write mapping of our perf fd; the kernel defines its
        // layout (perf_event_mmap_page, then the data area). Checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                if backward {
                    libc::PROT_READ
                } else {
                    libc::PROT_READ | libc::PROT_WRITE
                },
                libc::MAP_SHARED,
                self.fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = std::ptr::NonNull::new(p.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Ring {
            base,
            map_len,
            data_off: page,
            data_len,
            stats: RingStats::default(),
            backward,
        })
    }
}

const HEAD_OFFSET: usize = std::mem::offset_of!(sys::bindings::perf_event_mmap_page, data_head);
const TAIL_OFFSET: usize = std::mem::offset_of!(sys::bindings::perf_event_mmap_page, data_tail);

impl Ring {
    fn word(&self, off: usize) -> &std::sync::atomic::AtomicU64 {
        // SAFETY: `off` is data_head's or data_tail's offset in the metadata page, which is
        // 8-aligned inside our live mapping; the kernel and we access it only atomically.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(self.base.as_ptr().add(off).cast()) }
    }

    /// Hand every record the kernel has published to `f`, in place (a record wrapping the
    /// ring's end comes as [`RecordBytes::Split`]), then give their space back. Returns
    /// what this call read; [`Ring::stats`] keeps the totals.
    pub fn drain(&mut self, mut f: impl FnMut(RecordBytes<'_>)) -> RingStats {
        use std::sync::atomic::Ordering;
        if self.backward {
            return RingStats::default();
        }
        // Acquire: the records' bytes are visible once their head is.
        let head = self.word(HEAD_OFFSET).load(Ordering::Acquire);
        let tail = self.word(TAIL_OFFSET).load(Ordering::Relaxed);
        let mut st = RingStats::default();
        let Some((a, b)) = readable(self.data_len, tail, head) else {
            // Not a consistent pair: skip everything published so far.
            st.malformed_bytes = head.wrapping_sub(tail);
            self.word(TAIL_OFFSET).store(head, Ordering::Release);
            self.stats.add(&st);
            return st;
        };
        // SAFETY: both ranges lie inside the data area of our live mapping, and the kernel
        // does not write [tail, head) until we move data_tail past it below; the slices
        // do not outlive this call (`f` gets them for its own duration only).
        let (first, second) = unsafe {
            let data = self.base.as_ptr().add(self.data_off);
            (
                std::slice::from_raw_parts(data.add(a.start), a.len()),
                std::slice::from_raw_parts(data.add(b.start), b.len()),
            )
        };
        let mut recs = Records::new(first, second);
        for r in recs.by_ref() {
            st.account(&r);
            f(r);
        }
        st.malformed_bytes = recs.malformed as u64;
        // Release: our reads of the records happen before the kernel may reuse them.
        self.word(TAIL_OFFSET).store(head, Ordering::Release);
        self.stats.add(&st);
        st
    }

    /// For a backward ring (mapped read-only for `write_backward`), once its events are
    /// stopped: hand the records it holds to `f`, newest first, as they lie from
    /// data_head on (the order perf writes them in), up to a record of size 0 (the ring
    /// never filled) or the ring's size.
    pub fn read_backward(&mut self, mut f: impl FnMut(RecordBytes<'_>)) -> RingStats {
        use std::sync::atomic::Ordering;
        let mut st = RingStats::default();
        if !self.backward || self.data_len == 0 {
            return st;
        }
        let head = self.word(HEAD_OFFSET).load(Ordering::Acquire);
        // SAFETY: the whole data area of our live mapping; the events are stopped, so
        // the kernel no longer writes it, and the slice does not outlive this call.
        let data = unsafe {
            std::slice::from_raw_parts(self.base.as_ptr().add(self.data_off), self.data_len)
        };
        let len = self.data_len;
        let start = (head % len as u64) as usize;
        // How far the records go: a header of size 0 (or one that cannot be) ends them,
        // and a record that would pass the ring's size is the oldest one, half
        // overwritten.
        let mut span = 0usize;
        loop {
            let at = (start + span) % len;
            let size = if at + 8 <= len {
                u16::from_ne_bytes([data[at + 6], data[at + 7]]) as usize
            } else {
                0
            };
            if size < 8 || span + size > len {
                break;
            }
            span += size;
        }
        let first_len = span.min(len - start);
        let mut recs = Records::new(&data[start..start + first_len], &data[..span - first_len]);
        for r in recs.by_ref() {
            st.account(&r);
            f(r);
        }
        st.malformed_bytes = recs.malformed as u64;
        self.stats.add(&st);
        st
    }

    /// Bytes the kernel has published and [`Ring::drain`] has not taken yet.
    pub fn published(&self) -> u64 {
        use std::sync::atomic::Ordering;
        if self.backward {
            return 0;
        }
        let head = self.word(HEAD_OFFSET).load(Ordering::Acquire);
        let tail = self.word(TAIL_OFFSET).load(Ordering::Relaxed);
        head.wrapping_sub(tail)
    }

    /// Totals over every [`Ring::drain`] so far.
    pub fn stats(&self) -> RingStats {
        self.stats
    }

    /// Bytes of the data area.
    pub fn data_len(&self) -> usize {
        self.data_len
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mmap gave us, once.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.map_len);
        }
    }
}

/// What `poll_readable` saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PollResult {
    /// Some descriptor was readable or hung up (not a timeout).
    pub woken: bool,
    /// Some descriptor hung up (its task exited).
    pub hung_up: bool,
    /// Every descriptor hung up: nothing more will come.
    pub all_hung_up: bool,
}

/// Wait until one of `fds` is readable (a ring passed its wakeup mark, or the event
/// ended), or `timeout_ms` passes.
pub fn poll_readable(fds: &[RawFd], timeout_ms: i32) -> io::Result<PollResult> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `p` is a valid array of pollfds for the duration of the call.
    let r = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(PollResult {
        woken: r > 0,
        hung_up: p.iter().any(|p| p.revents & libc::POLLHUP != 0),
        all_hung_up: !p.is_empty() && p.iter().all(|p| p.revents & libc::POLLHUP != 0),
    })
}

enum Ioctl {
    Enable,
    Disable,
    Reset,
}

/// A forked child that waits, before `exec`, until [`GatedChild::release`] is called: the
/// caller opens its counters on the child's pid in between, so that nothing the command
/// does is missed (`enable_on_exec` then starts them at the exec itself).
#[derive(Debug)]
pub struct GatedChild {
    pid: i32,
    gate: Option<OwnedFd>,
    pidfd: Option<OwnedFd>,
    pidfd_tried: bool,
}

/// How a child ended, with its resource usage.
#[derive(Debug, Clone, Copy)]
pub struct ChildExit {
    /// Exit status as `wait` reports it (use [`ChildExit::code`]).
    pub status: i32,
    /// User CPU time in microseconds.
    pub user_us: u64,
    /// System CPU time in microseconds.
    pub sys_us: u64,
}

impl ChildExit {
    /// The exit code a shell would report (128 + signal for a killed child).
    pub fn code(&self) -> i32 {
        if libc::WIFEXITED(self.status) {
            libc::WEXITSTATUS(self.status)
        } else if libc::WIFSIGNALED(self.status) {
            128 + libc::WTERMSIG(self.status)
        } else {
            1
        }
    }

    /// The signal that ended the child, with the C library's description of it
    /// (`strsignal`: "Terminated" for SIGTERM), or None when it exited by itself.
    pub fn signal(&self) -> Option<(i32, String)> {
        if !libc::WIFSIGNALED(self.status) {
            return None;
        }
        let sig = libc::WTERMSIG(self.status);
        // SAFETY: strsignal returns a NUL-terminated string (or NULL), copied out at once,
        // before any other call could overwrite its buffer.
        let text = unsafe {
            let p = libc::strsignal(sig);
            if p.is_null() {
                format!("Signal {sig}")
            } else {
                std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Some((sig, text))
    }
}

impl GatedChild {
    /// Fork a child that will exec `argv` (searched in PATH) once released.
    ///
    /// The program is looked up before the fork so that a missing command is an error
    /// here, not a child that exits 127.
    pub fn spawn(argv: &[String]) -> io::Result<GatedChild> {
        let Some(prog) = argv.first() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no command given",
            ));
        };
        let path = find_in_path(prog).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{prog}: command not found"),
            )
        })?;
        let cpath = CString::new(path.into_os_string().into_encoded_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in command"))?;
        let cargs: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in argument"))?;
        let mut ptrs: Vec<*const libc::c_char> = cargs.iter().map(|c| c.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let (rd, wr) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from)?;
        // SAFETY: after fork the child calls only async-signal-safe functions (read,
        // execv, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            drop(wr);
            let mut b = [0u8; 1];
            // SAFETY: prctl names the task, read fills a local buffer, then exec; all
            // async-signal-safe system calls.
            unsafe {
                // As perf: the child is `perf-exec` until its exec, so that a COMM
                // written for it before then does not name the recording tool.
                libc::prctl(libc::PR_SET_NAME, c"perf-exec".as_ptr(), 0, 0, 0);
                let n = libc::read(rd.as_raw_fd(), b.as_mut_ptr().cast(), 1);
                if n == 1 {
                    libc::execv(cpath.as_ptr(), ptrs.as_ptr());
                }
                libc::_exit(127);
            }
        }
        drop(rd);
        Ok(GatedChild {
            pid,
            gate: Some(wr),
            pidfd: None,
            pidfd_tried: false,
        })
    }

    /// The child's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Let the child exec its command.
    pub fn release(&mut self) -> io::Result<()> {
        if let Some(g) = self.gate.take() {
            nix::unistd::write(&g, b"x").map_err(io::Error::from)?;
        }
        Ok(())
    }

    /// Ask the child to end (SIGTERM), as `perf stat --timeout` does when its time is up.
    pub fn terminate(&self) -> io::Result<()> {
        if self.pid <= 0 {
            return Ok(());
        }
        // SAFETY: kill on our own child, which is not reaped yet (so its pid is not reused).
        if unsafe { libc::kill(self.pid, libc::SIGTERM) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Wait for the child, returning its status and CPU times.
    pub fn wait(&mut self) -> io::Result<ChildExit> {
        loop {
            if let Some(e) = self.reap(0)? {
                return Ok(e);
            }
        }
    }

    /// Wait up to `timeout` for the child to exit (a pidfd polled with the timeout, so the
    /// exit is seen at once), reaping it if it did.
    pub fn wait_timeout(&mut self, timeout: std::time::Duration) -> io::Result<Option<ChildExit>> {
        self.poll_exit(timeout);
        self.try_wait()
    }

    /// Whether the child has exited, waiting up to `timeout` for it, without reaping it:
    /// until [`GatedChild::try_wait`] reaps it, its /proc entries (a zombie's) can still
    /// be read.
    pub fn exited(&mut self, timeout: std::time::Duration) -> io::Result<bool> {
        if self.pid <= 0 {
            return Ok(true);
        }
        if !timeout.is_zero() {
            self.poll_exit(timeout);
        }
        // SAFETY: siginfo_t is plain data the kernel fills in.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child with WNOWAIT, which leaves it unreaped.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            };
        }
        // SAFETY: si_pid is valid for a child state change; 0 when none was reported.
        Ok(unsafe { info.si_pid() } != 0)
    }

    /// Sleep until the child exits or `timeout` passes (a pidfd polled with the timeout,
    /// so the exit is seen at once).
    fn poll_exit(&mut self, timeout: std::time::Duration) {
        if self.pidfd.is_none() && !self.pidfd_tried {
            self.pidfd_tried = true;
            // SAFETY: pidfd_open on our own unreaped child; the fd is owned below.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.pid, 0) };
            if fd >= 0 {
                // SAFETY: a fresh descriptor returned by the kernel.
                self.pidfd = Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) });
            }
        }
        match &self.pidfd {
            Some(fd) => {
                let mut p = libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
                // SAFETY: one valid pollfd for the duration of the call.
                unsafe { libc::poll(&mut p, 1, ms) };
            }
            None => std::thread::sleep(timeout.min(std::time::Duration::from_millis(1))),
        }
    }

    /// Reap the child if it has exited, without blocking.
    pub fn try_wait(&mut self) -> io::Result<Option<ChildExit>> {
        self.reap(libc::WNOHANG)
    }

    fn reap(&mut self, flags: i32) -> io::Result<Option<ChildExit>> {
        if self.pid <= 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "child already reaped",
            ));
        }
        let mut status = 0;
        // SAFETY: rusage is plain data filled in by the kernel.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child with valid out-pointers.
        let r = unsafe { libc::wait4(self.pid, &mut status, flags, &mut ru) };
        if r == 0 {
            return Ok(None);
        }
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(None)
            } else {
                Err(e)
            };
        }
        self.pid = 0;
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Ok(Some(ChildExit {
            status,
            user_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
        }))
    }
}

impl Drop for GatedChild {
    /// A child never released (an error while arming counters) is reaped: closing the
    /// gate makes it `_exit(127)` without running the command.
    fn drop(&mut self) {
        if self.pid > 0 {
            self.gate.take();
            let _ = self.wait();
        }
    }
}

fn find_in_path(prog: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &std::path::Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if prog.contains('/') {
        let p = std::path::PathBuf::from(prog);
        return is_exec(&p).then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(prog))
        .find(|p| is_exec(p))
}

/// A file mapped read-only into memory (how perf.data files are read: no copy, pages
/// loaded as they are touched). The file must not shrink while it is mapped.
#[derive(Debug)]
pub(crate) struct MappedFile {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value; sharing or moving it across
// threads is as safe as sharing a `&[u8]`.
unsafe impl Send for MappedFile {}
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Map all of `file` (None for an empty file, which cannot be mapped).
    pub(crate) fn map(file: &std::fs::File) -> io::Result<Option<MappedFile>> {
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "file too large to map"))?;
        if len == 0 {
            return Ok(None);
        }
        // SAFETY: a fresh private read-only mapping of a file we hold open; the kernel
        // checks the descriptor and length.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Some(MappedFile { ptr, len }))
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // SAFETY: unmapping the region this value mapped, once.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// bpf(2) commands used to read the loaded programs (`enum bpf_cmd`).
mod bpf_cmd {
    pub const PROG_GET_NEXT_ID: libc::c_long = 11;
    pub const PROG_GET_FD_BY_ID: libc::c_long = 13;
    pub const OBJ_GET_INFO_BY_FD: libc::c_long = 15;
    pub const BTF_GET_FD_BY_ID: libc::c_long = 19;
}

/// bpf(2) with an attr of `words` (the kernel reads `words.len() * 8` bytes and may
/// write results back into them).
fn bpf(cmd: libc::c_long, words: &mut [u64]) -> io::Result<libc::c_long> {
    // SAFETY: the attr is a live, writable buffer of the size passed; the commands used
    // here carry no pointers in it except OBJ_GET_INFO_BY_FD's, checked by its caller.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            words.as_mut_ptr(),
            std::mem::size_of_val(words) as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Two `__u32` fields of a bpf attr as the `u64` word that holds them.
fn u32_pair(first: u32, second: u32) -> u64 {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&first.to_ne_bytes());
    b[4..].copy_from_slice(&second.to_ne_bytes());
    u64::from_ne_bytes(b)
}

/// The second `__u32` field of a bpf attr word.
fn second_u32(word: u64) -> u32 {
    u32_in(&word.to_ne_bytes(), 4)
}

/// `BPF_PROG_GET_NEXT_ID`: the id of the first loaded BPF program after `id`, `None` past
/// the last one.
pub(crate) fn bpf_prog_next_id(id: u32) -> io::Result<Option<u32>> {
    // union bpf_attr: start_id, next_id, open_flags.
    let mut attr = [u32_pair(id, 0), 0];
    match bpf(bpf_cmd::PROG_GET_NEXT_ID, &mut attr) {
        Ok(_) => Ok(Some(second_u32(attr[0]))),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

fn bpf_fd_by_id(cmd: libc::c_long, id: u32) -> io::Result<OwnedFd> {
    let mut attr = [u32_pair(id, 0), 0];
    let fd = bpf(cmd, &mut attr)?;
    // SAFETY: the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `BPF_PROG_GET_FD_BY_ID`: a descriptor of the loaded program `id`.
pub(crate) fn bpf_prog_fd(id: u32) -> io::Result<OwnedFd> {
    bpf_fd_by_id(bpf_cmd::PROG_GET_FD_BY_ID, id)
}

/// The element size of one array of `struct bpf_prog_info`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ElemSize {
    /// Always this many bytes.
    Fixed(usize),
    /// As the kernel says in the `__u32` at this offset of the info.
    Field(usize),
}

/// One array `struct bpf_prog_info` points at: the offsets of its pointer and count, and
/// its element size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InfoArray {
    /// Offset of the array's pointer (a `__u64`).
    pub ptr_at: usize,
    /// Offset of its element count (a `__u32`).
    pub count_at: usize,
    /// Bytes of one element.
    pub size: ElemSize,
}

/// The arrays of `struct bpf_prog_info` in perf's order (`enum perf_bpil_array`): JITed
/// instructions, translated instructions, map ids, JITed symbol addresses, JITed function
/// lengths, func_info, line_info, JITed line info, program tags.
pub(crate) const PROG_INFO_ARRAYS: [InfoArray; 9] = {
    const fn a(ptr_at: usize, count_at: usize, size: ElemSize) -> InfoArray {
        InfoArray {
            ptr_at,
            count_at,
            size,
        }
    }
    use ElemSize::{Field, Fixed};
    [
        a(24, 16, Fixed(1)),
        a(32, 20, Fixed(1)),
        a(56, 52, Fixed(4)),
        a(112, 104, Fixed(8)),
        a(120, 108, Fixed(4)),
        a(136, 144, Field(132)),
        a(152, 148, Field(172)),
        a(160, 168, Field(176)),
        a(184, 180, Fixed(8)),
    ]
};

/// A program's `struct bpf_prog_info` and the arrays asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProgInfo {
    /// The info as the kernel filled it (its array pointers are this process's addresses).
    pub info: Vec<u8>,
    /// The length the kernel filled.
    pub info_len: u32,
    /// The arrays kept: bit `i` for [`PROG_INFO_ARRAYS`]`[i]`.
    pub arrays: u64,
    /// Each array's bytes (empty when not kept).
    pub data: Vec<Vec<u8>>,
    /// An array's count or element size changed between the two reads.
    pub mismatch: bool,
}

fn u32_in(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
}

/// `BPF_OBJ_GET_INFO_BY_FD` of a program, as perf reads it: a first call for the counts
/// and element sizes, then one with a buffer for each array of `wanted` (bits of
/// [`PROG_INFO_ARRAYS`]) that the kernel's info holds. `info_len` is the size of the
/// `struct bpf_prog_info` to read.
pub(crate) fn bpf_prog_info(fd: &OwnedFd, info_len: usize, wanted: u64) -> io::Result<ProgInfo> {
    let mut first = vec![0u8; info_len];
    // SAFETY: no pointers in a zeroed info.
    let len = unsafe { bpf_obj_info(fd, &mut first)? } as usize;
    let size_of = |info: &[u8], s: ElemSize| match s {
        ElemSize::Fixed(n) => n,
        ElemSize::Field(at) => u32_in(info, at) as usize,
    };
    let mut arrays = 0u64;
    let mut data = Vec::new();
    for (i, a) in PROG_INFO_ARRAYS.iter().enumerate() {
        let kernel_has = len >= a.ptr_at + 8
            && len >= a.count_at + 4
            && !matches!(a.size, ElemSize::Field(at) if len < at + 4);
        if wanted & (1 << i) == 0 || !kernel_has {
            data.push(Vec::new());
            continue;
        }
        arrays |= 1 << i;
        let n = u32_in(&first, a.count_at) as usize * size_of(&first, a.size);
        data.push(vec![0u8; n]);
    }
    let mut info = vec![0u8; info_len];
    for (i, a) in PROG_INFO_ARRAYS.iter().enumerate() {
        if arrays & (1 << i) == 0 {
            continue;
        }
        let count = u32_in(&first, a.count_at);
        info[a.count_at..a.count_at + 4].copy_from_slice(&count.to_ne_bytes());
        if let ElemSize::Field(at) = a.size {
            info[at..at + 4].copy_from_slice(&first[at..at + 4]);
        }
        let ptr = if data[i].is_empty() {
            0
        } else {
            data[i].as_mut_ptr() as u64
        };
        info[a.ptr_at..a.ptr_at + 8].copy_from_slice(&ptr.to_ne_bytes());
    }
    // SAFETY (of the kernel's writes): each pointer set above addresses a buffer of its
    // count times its element size, both as the kernel gave them in the first call (the
    // kernel writes no more than the count it is given, of its own element size, which
    // does not change); the buffers outlive the call.
    let filled = unsafe { bpf_obj_info(fd, &mut info)? };
    let mismatch = PROG_INFO_ARRAYS.iter().enumerate().any(|(i, a)| {
        arrays & (1 << i) != 0
            && (u32_in(&first, a.count_at) != u32_in(&info, a.count_at)
                || size_of(&first, a.size) != size_of(&info, a.size))
    });
    Ok(ProgInfo {
        info,
        info_len: filled,
        arrays,
        data,
        mismatch,
    })
}

/// The raw BTF data of the BTF object `id` (`BPF_BTF_GET_FD_BY_ID`, then
/// `BPF_OBJ_GET_INFO_BY_FD` for its size and again for its bytes).
pub(crate) fn bpf_btf_data(id: u32) -> io::Result<Vec<u8>> {
    let fd = bpf_fd_by_id(bpf_cmd::BTF_GET_FD_BY_ID, id)?;
    // struct bpf_btf_info: btf (pointer), btf_size, id, name, name_len, kernel_btf.
    let mut info = [0u8; 32];
    // SAFETY: no pointer in a zeroed info.
    unsafe { bpf_obj_info(&fd, &mut info)? };
    let size = u32_in(&info, 8);
    let mut data = vec![0u8; size as usize];
    let mut info = [0u8; 32];
    info[8..12].copy_from_slice(&size.to_ne_bytes());
    let ptr = if data.is_empty() {
        0
    } else {
        data.as_mut_ptr() as u64
    };
    info[..8].copy_from_slice(&ptr.to_ne_bytes());
    // SAFETY: the kernel writes at most btf_size bytes at the pointer: `data` holds that
    // many.
    unsafe { bpf_obj_info(&fd, &mut info)? };
    data.truncate(u32_in(&info, 8).min(size) as usize);
    Ok(data)
}

/// `BPF_OBJ_GET_INFO_BY_FD` of `fd` into `info`; returns the length filled.
///
/// # Safety
/// Every array pointer in `info` is null or addresses a buffer, live for the call, of at
/// least its count times the kernel's element size.
unsafe fn bpf_obj_info(fd: &OwnedFd, info: &mut [u8]) -> io::Result<u32> {
    let len = u32::try_from(info.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bpf info too large"))?;
    // union bpf_attr: bpf_fd, info_len, info (a pointer).
    let mut attr = [
        u32_pair(fd.as_raw_fd() as u32, len),
        info.as_mut_ptr() as u64,
    ];
    bpf(bpf_cmd::OBJ_GET_INFO_BY_FD, &mut attr)?;
    Ok(second_u32(attr[0]))
}
