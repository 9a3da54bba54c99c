//! `report -w`: the wakeup latency of each task, as trace-cmd 3.1.6 measures it.
//!
//! Behaviour copied from trace-cmd (facts, not code):
//!
//! * it needs `sched:sched_wakeup` (with a `pid` field) and `sched:sched_switch` (with
//!   `next_pid` and `next_prio`); without them `-w` does nothing. `sched_wakeup_new`
//!   (with `pid`) counts as a wakeup too when the file has it;
//! * only the records the report prints count (after `--cpu` and `-F`);
//! * a wakeup whose `success` field (where the format has one) is 0 is ignored; a second
//!   wakeup of a task not yet switched in restarts its wait. Tasks are matched through
//!   trace-cmd's 32-bit hash of the pid (two pids of the same hash are one task to it);
//! * a `sched_switch` to a waiting task ends the wait: ` Latency: U.NNN usecs` (the
//!   nanoseconds, as microseconds with three decimals) is added to the end of its line;
//!   the task counts as real-time when `next_prio` is below 100;
//! * after the records, when any latency was measured: the average (total divided by
//!   the count, in integers), the largest and smallest (the first of equal ones) with the
//!   time of their switch, then the same for the real-time tasks alone when there were
//!   any.

use super::mem::trace_hash;
use std::collections::HashMap;
use std::io::{self, Write};

use crate::endian::Endianness;
use crate::event::{FieldSpec, Record};
use crate::render::tracecmd::{read_uint, Catalog};

/// Latency statistics of one class of tasks.
#[derive(Debug, Clone, Copy)]
struct Timings {
    total: u64,
    count: u64,
    max: u64,
    max_at: u64,
    min: u64,
    min_at: u64,
}

impl Default for Timings {
    fn default() -> Timings {
        Timings {
            total: 0,
            count: 0,
            max: 0,
            max_at: 0,
            min: u64::MAX,
            min_at: 0,
        }
    }
}

impl Timings {
    fn add(&mut self, lat: u64, at: u64) {
        if lat > self.max {
            self.max = lat;
            self.max_at = at;
        }
        if lat < self.min {
            self.min = lat;
            self.min_at = at;
        }
        self.total = self.total.wrapping_add(lat);
        self.count += 1;
    }

    fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let avg = self.total / self.count.max(1);
        // trace-cmd rounds the microseconds of the time without carrying into the
        // seconds.
        let at = |t: u64| {
            format!(
                "{}.{:06}",
                t / 1_000_000_000,
                ((t + 500) % 1_000_000_000) / 1000
            )
        };
        write!(
            out,
            "\nAverage wakeup latency: {}.{:03} usecs\n",
            avg / 1000,
            avg % 1000
        )?;
        writeln!(
            out,
            "Maximum Latency: {}.{:03} usecs at timestamp: {}",
            self.max / 1000,
            self.max % 1000,
            at(self.max_at)
        )?;
        write!(
            out,
            "Minimum Latency: {}.{:03} usecs at timestamp: {}\n\n",
            self.min / 1000,
            self.min % 1000,
            at(self.min_at)
        )
    }
}

/// The ids and fields `-w` reads.
#[derive(Debug, Clone, Copy)]
struct Events {
    wakeup: u16,
    wakeup_pid: FieldSpec,
    wakeup_success: Option<FieldSpec>,
    wakeup_new: Option<(u16, FieldSpec, Option<FieldSpec>)>,
    switch: u16,
    next_pid: FieldSpec,
    next_prio: FieldSpec,
}

/// The wakeup latency tracker of one report.
#[derive(Debug)]
pub struct WakeupLatency {
    events: Events,
    endian: Endianness,
    /// Wake-up time of each waiting task, by trace-cmd's hash of its pid.
    waiting: HashMap<u32, u64>,
    all: Timings,
    rt: Timings,
}

fn id_of(catalog: &dyn Catalog, system: &str, name: &str) -> Option<u16> {
    catalog
        .events()
        .into_iter()
        .find(|(_, s, n)| *s == system && *n == name)
        .map(|(id, _, _)| id)
}

/// A number field as libtraceevent reads one: sizes 1, 2, 4 and 8 only.
fn number(data: &[u8], f: FieldSpec, endian: Endianness) -> Option<u64> {
    if !matches!(f.size, 1 | 2 | 4 | 8) {
        return None;
    }
    read_uint(data, f, endian)
}

impl WakeupLatency {
    /// The tracker for a file of these events; None when it lacks the events or fields
    /// trace-cmd needs (then `-w` adds nothing).
    pub fn new(catalog: &dyn Catalog) -> Option<WakeupLatency> {
        let wakeup = id_of(catalog, "sched", "sched_wakeup")?;
        let wakeup_pid = catalog.field(wakeup, "pid")?;
        let switch = id_of(catalog, "sched", "sched_switch")?;
        let next_pid = catalog.field(switch, "next_pid")?;
        let next_prio = catalog.field(switch, "next_prio")?;
        let wakeup_new = match id_of(catalog, "sched", "sched_wakeup_new") {
            None => None,
            Some(id) => Some((id, catalog.field(id, "pid")?, catalog.field(id, "success"))),
        };
        Some(WakeupLatency {
            events: Events {
                wakeup,
                wakeup_pid,
                wakeup_success: catalog.field(wakeup, "success"),
                wakeup_new,
                switch,
                next_pid,
                next_prio,
            },
            endian: catalog.endian(),
            waiting: HashMap::new(),
            all: Timings::default(),
            rt: Timings::default(),
        })
    }

    /// Account a printed record; returns the latency (ns) ending at it, to be shown
    /// with [`write_latency`](Self::write_latency).
    pub fn record(&mut self, rec: &Record) -> Option<u64> {
        let id = rec.event_id(self.endian)?;
        let e = self.events;
        let woken = if id == e.wakeup {
            Some((e.wakeup_pid, e.wakeup_success))
        } else {
            e.wakeup_new
                .filter(|(new, _, _)| *new == id)
                .map(|(_, pid, success)| (pid, success))
        };
        if let Some((pid, success)) = woken {
            if let Some(s) = success.and_then(|s| number(rec.data, s, self.endian)) {
                if s == 0 {
                    return None;
                }
            }
            let pid = number(rec.data, pid, self.endian)?;
            self.waiting.insert(trace_hash(pid as u32), rec.ts);
            return None;
        }
        if id != e.switch {
            return None;
        }
        let prio = number(rec.data, e.next_prio, self.endian)?;
        let pid = number(rec.data, e.next_pid, self.endian)?;
        let start = self.waiting.remove(&trace_hash(pid as u32))?;
        let lat = rec.ts.wrapping_sub(start);
        self.all.add(lat, rec.ts);
        if prio <= 99 {
            self.rt.add(lat, rec.ts);
        }
        Some(lat)
    }

    /// The annotation of a record that ended a wait, before its newline.
    pub fn write_latency(out: &mut Vec<u8>, lat: u64) {
        // Writing to a Vec cannot fail.
        let _ = write!(out, " Latency: {}.{:03} usecs", lat / 1000, lat % 1000);
    }

    /// The summary after the records (nothing when no latency was measured).
    pub fn write_summary(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.all.count == 0 {
            return Ok(());
        }
        self.all.write(out)?;
        if self.rt.count > 0 {
            out.write_all(b"RT task timings:\n")?;
            self.rt.write(out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_trace_cmd_values() {
        // Distinct pids of the usual range give distinct keys.
        let keys: std::collections::HashSet<u32> = (0..70_000).map(trace_hash).collect();
        assert_eq!(keys.len(), 70_000);
    }

    #[test]
    fn timings_print_like_trace_cmd() {
        let mut t = Timings::default();
        t.add(1_552, 2_964_052_692_400);
        t.add(28_119_562, 2_964_041_340_700);
        let mut out = Vec::new();
        t.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\nAverage wakeup latency: 14060.557 usecs\n\
             Maximum Latency: 28119.562 usecs at timestamp: 2964.041341\n\
             Minimum Latency: 1.552 usecs at timestamp: 2964.052692\n\n"
        );
    }
}
