//! perf_event counting and sampling on the same event model as ftrace.
//!
//! * [`spec`]: event lists as perf spells them (`cycles:u`, `cs`, `sched:*`, `{a,b}`).
//! * [`buildid_cache`]: perf's build-id cache filled with the recorded files, as
//!   `perf record` fills it.
//! * [`cgroup`]: the cgroups counters can be limited to (`perf stat -G`).
//! * [`config`]: perf's configuration files (`buildid.dir`), read as perf reads them.
//! * [`cpu_list`], [`time_ranges`]: `-C` and `--time` of perf script and perf report, read
//!   as perf reads them.
//! * [`data`]: perf.data files (`perf record`'s output) read without copying.
//! * [`kernel_kallsyms`]: where the kallsyms of a file's kernel come from (the running
//!   kernel's from perf's cached copy when that gives the same symbols).
//! * [`machine`]: threads, mappings and symbols rebuilt from a perf.data's records.
//! * [`symbols`]: kallsyms and ELF symbol tables with perf's rules, and demangling.
//! * [`srcline`]: source lines of addresses (DWARF line tables), as perf prints them.
//! * [`srccode`]: the text of source lines (`-F srccode`), files kept as perf keeps them.
//! * [`stat`]: counting sessions (`tracectl perf stat`), per CPU or per thread.
//! * [`record`]: sampling sessions (`tracectl perf record`), one ring per CPU.
//! * [`recording`]: a session's records written into perf.data until the end.
//! * [`synth`]: the side-band records of what already runs.
//! * [`unwind`]: user stacks of `--call-graph dwarf` samples unwound with the mapped
//!   files' call frame information.
//! * [`ring`]: the records of a perf mmap ring, read in place with wrap-around.
//! * [`x86_insn`]: x86 instruction lengths as perf's decoder counts them (`-F insnlen`).
//! * [`code`]: the instruction at a sampled address, read from the file perf reads it
//!   from (`-F insn`).
//! * `nsinfo` (private): the namespaces of a process that mapped a file, which the
//!   file is read in while the process lives, as perf does.
//! * `sys` (private): every `unsafe` call of the perf side — `perf_event_open(2)`, its
//!   ioctls, counter reads, the mmap rings, the forked command that waits until its
//!   counters are armed, and the read-only file mapping perf.data files are read through.
//!
//! Tracepoints are named by their tracefs id, so a tracepoint counted here is the same
//! event `tracectl record` decodes with [`crate::event::Schema`].

pub mod bpf_progs;
pub mod buildid_cache;
pub mod cgroup;
pub mod clockid;
pub mod code;
pub mod config;
pub mod cpu_list;
pub mod data;
pub mod delay;
pub mod kernel_kallsyms;
pub mod machine;
mod nsinfo;
mod object_dwarf;
pub mod perf_map;
pub mod pmu;
pub mod rbtree;
pub mod record;
pub mod recording;
pub mod regs;
pub mod ring;
pub mod spec;
pub mod srccode;
pub mod srcline;
pub mod stat;
pub mod switch_output;
pub mod symbols;
mod symsrc;
pub mod synth;
mod sys;
pub mod time_ranges;
pub mod unwind;
pub mod x86_insn;

pub use spec::{parse_event_list, EventKind, EventSpec, SpecError, ToolEvent, TracepointLookup};
pub use stat::{
    aggregate, delta, set_tool_counts, unread_in_tool_group, Count, CountOptions, OpenError,
    RunStats, Scope, StatSession, ToolReadings,
};
pub use sys::{
    event_supported, page_size, raise_open_files_limit, set_fifo_priority, ChildExit,
    CounterReading, GatedChild, PollResult, Ring,
};

/// The online CPUs (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> std::io::Result<Vec<u32>> {
    let path = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(path)?;
    crate::tracefs::parse_cpu_list(text.trim(), crate::tracefs::MAX_CPUS)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{path}: {e}")))
}

/// Where a CPU sits: its socket (physical package), die, core and NUMA node, as sysfs
/// gives them (`/sys/devices/system/cpu/cpuN/topology`, `/sys/devices/system/node`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuTopology {
    /// `physical_package_id`.
    pub socket: i32,
    /// `die_id` (0 where the kernel has no dies).
    pub die: i32,
    /// `core_id`.
    pub core: i32,
    /// The node whose `cpuN` link names this CPU (0 without NUMA nodes in sysfs).
    pub node: i32,
}

/// The topology of `cpu` (see [`CpuTopology`]).
pub fn cpu_topology(cpu: u32) -> std::io::Result<CpuTopology> {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
    let id = |name: &str, missing: Option<i32>| -> std::io::Result<i32> {
        let path = format!("{base}/{name}");
        match std::fs::read_to_string(&path) {
            Ok(t) => t.trim().parse().map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{path}: not a number: {:?}", t.trim()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && missing.is_some() => {
                Ok(missing.unwrap_or(0))
            }
            Err(e) => Err(std::io::Error::new(e.kind(), format!("{path}: {e}"))),
        }
    };
    let node = std::fs::read_dir("/sys/devices/system/node")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e
                .file_name()
                .to_str()?
                .strip_prefix("node")?
                .parse::<i32>()
                .ok()?;
            e.path().join(format!("cpu{cpu}")).exists().then_some(n)
        })
        .min()
        .unwrap_or(0);
    Ok(CpuTopology {
        socket: id("physical_package_id", None)?,
        die: id("die_id", Some(0))?,
        core: id("core_id", None)?,
        node,
    })
}

/// Every thread of every process (`/proc/*/task/*`) in ascending order, with its
/// `comm` (threads that end while the list is read are left out).
pub fn all_threads() -> std::io::Result<Vec<(i32, String)>> {
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    let mut out = Vec::new();
    for pid in pids {
        let Ok(tids) = process_threads(pid) else {
            continue;
        };
        for tid in tids {
            if let Some(comm) = thread_comm(tid) {
                out.push((tid, comm));
            }
        }
    }
    Ok(out)
}

/// A thread's `comm` (`/proc/TID/comm`), or None once it has ended.
pub fn thread_comm(tid: i32) -> Option<String> {
    let t = std::fs::read_to_string(format!("/proc/{tid}/comm")).ok()?;
    Some(t.strip_suffix('\n').unwrap_or(&t).to_string())
}

/// The process a thread belongs to (the `Tgid` of `/proc/TID/status`).
pub fn thread_group(tid: i32) -> std::io::Result<i32> {
    let path = format!("/proc/{tid}/status");
    let text = std::fs::read_to_string(&path)?;
    text.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{path}: no Tgid line"),
            )
        })
}

/// The processes whose /proc directory belongs to `uid` (as perf's `-u` finds them),
/// in pid order.
pub fn user_processes(uid: u32) -> std::io::Result<Vec<i32>> {
    use std::os::unix::fs::MetadataExt as _;
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")?
        .filter_map(|e| {
            let e = e.ok()?;
            let pid = e.file_name().to_str()?.parse().ok()?;
            (e.metadata().ok()?.uid() == uid).then_some(pid)
        })
        .collect();
    pids.sort_unstable();
    Ok(pids)
}

/// The threads of a process (`/proc/PID/task`), sorted.
pub fn process_threads(pid: i32) -> std::io::Result<Vec<i32>> {
    let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    v.sort_unstable();
    Ok(v)
}
