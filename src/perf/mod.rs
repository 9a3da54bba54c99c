//! perf_event counting and sampling on the same event model as ftrace.
//!
//! * [`spec`]: event lists as perf spells them (`cycles:u`, `cs`, `sched:*`, `{a,b}`).
//! * [`buildid_cache`]: perf's build-id cache filled with the recorded files, as
//!   `perf record` fills it.
//! * [`config`]: perf's configuration files (`buildid.dir`), read as perf reads them.
//! * [`cpu_list`], [`time_ranges`]: `-C` and `--time` of perf script and perf report, read
//!   as perf reads them.
//! * [`data`]: perf.data files (`perf record`'s output) read without copying.
//! * [`machine`]: threads, mappings and symbols rebuilt from a perf.data's records.
//! * [`symbols`]: kallsyms and ELF symbol tables with perf's rules, and demangling.
//! * [`srcline`]: source lines of addresses (DWARF line tables), as perf prints them.
//! * [`stat`]: counting sessions (`tracectl perf stat`), per CPU or per thread.
//! * [`record`]: sampling sessions (`tracectl perf record`), one ring per CPU.
//! * [`recording`]: a session's records written into perf.data until the end.
//! * [`synth`]: the side-band records of what already runs.
//! * [`unwind`]: user stacks of `--call-graph dwarf` samples unwound with the mapped
//!   files' call frame information.
//! * [`ring`]: the records of a perf mmap ring, read in place with wrap-around.
//! * `nsinfo` (private): the namespaces of a process that mapped a file, which the
//!   file is read in while the process lives, as perf does.
//! * `sys` (private): every `unsafe` call of the perf side — `perf_event_open(2)`, its
//!   ioctls, counter reads, the mmap rings, the forked command that waits until its
//!   counters are armed, and the read-only file mapping perf.data files are read through.
//!
//! Tracepoints are named by their tracefs id, so a tracepoint counted here is the same
//! event `tracectl record` decodes with [`crate::event::Schema`].

pub mod buildid_cache;
pub mod config;
pub mod cpu_list;
pub mod data;
pub mod machine;
mod nsinfo;
pub mod rbtree;
pub mod record;
pub mod recording;
pub mod ring;
pub mod spec;
pub mod srcline;
pub mod stat;
pub mod symbols;
pub mod synth;
mod sys;
pub mod time_ranges;
pub mod unwind;

pub use spec::{parse_event_list, EventKind, EventSpec, SpecError, TracepointLookup};
pub use stat::{aggregate, delta, Count, OpenError, RunStats, Scope, StatSession};
pub use sys::{page_size, ChildExit, CounterReading, GatedChild, PollResult, Ring};

/// The online CPUs (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> std::io::Result<Vec<u32>> {
    let path = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(path)?;
    crate::tracefs::parse_cpu_list(text.trim(), crate::tracefs::MAX_CPUS)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{path}: {e}")))
}

/// The threads of a process (`/proc/PID/task`), sorted.
pub fn process_threads(pid: i32) -> std::io::Result<Vec<i32>> {
    let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    v.sort_unstable();
    Ok(v)
}
