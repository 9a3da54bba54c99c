//! perf_event counting and sampling on the same event model as ftrace.
//!
//! * [`spec`]: event lists as perf spells them (`cycles:u`, `cs`, `sched:*`, `{a,b}`).
//! * [`data`]: perf.data files (`perf record`'s output) read without copying.
//! * [`machine`]: threads, mappings and symbols rebuilt from a perf.data's records.
//! * [`symbols`]: kallsyms and ELF symbol tables with perf's rules, and demangling.
//! * [`stat`]: counting sessions (`tracectl perf stat`), per CPU or per thread.
//! * `sys` (private): every `unsafe` call of the perf side — `perf_event_open(2)`, its
//!   ioctls, counter reads, the forked command that waits until its counters are armed,
//!   and the read-only file mapping perf.data files are read through.
//!
//! Tracepoints are named by their tracefs id, so a tracepoint counted here is the same
//! event `tracectl record` decodes with [`crate::event::Schema`].

pub mod data;
pub mod machine;
pub mod spec;
pub mod stat;
pub mod symbols;
mod sys;

pub use spec::{parse_event_list, EventKind, EventSpec, SpecError, TracepointLookup};
pub use stat::{aggregate, delta, Count, OpenError, RunStats, Scope, StatSession};
pub use sys::{ChildExit, CounterReading, GatedChild};

/// The online CPUs (`/sys/devices/system/cpu/online`), as a CPU list.
pub fn online_cpus() -> std::io::Result<Vec<u32>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    let mut v = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let bad = || {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "/sys/devices/system/cpu/online: cannot read '{}'",
                    text.trim()
                ),
            )
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                v.extend(a..=b);
            }
            None => v.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(v)
}

/// The threads of a process (`/proc/PID/task`), sorted.
pub fn process_threads(pid: i32) -> std::io::Result<Vec<i32>> {
    let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    v.sort_unstable();
    Ok(v)
}
