//! Counting (`perf stat`): one counter per event and CPU (system-wide) or per event and
//! thread (a process, or a command and the children it forks).

use std::io;

use super::data::abi::read_format;
use super::spec::{EventKind, EventSpec, ToolEvent};
use super::sys::{
    attr_bytes, new_attr, refused_exclusion, set_event, Counter, CounterReading, RawAttr,
};

/// Where counters count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// These CPUs, every task (`-a`, `-C`).
    Cpus(Vec<u32>),
    /// These threads, any CPU (`-p`, `-t`); the children they fork later are counted
    /// with them unless [`CountOptions::no_inherit`].
    Threads(Vec<i32>),
    /// A forked command that has not exec'd yet: counters inherit into its children and
    /// start at its exec.
    Command(i32),
}

/// The state of one counter after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// The kernel refused the event as unsupported (no such PMU or event here).
    NotSupported,
    /// Opened, but never scheduled in (running time 0).
    NotCounted,
    /// A reading.
    Value(CounterReading),
}

impl Count {
    /// The value scaled for multiplexing (`value * enabled / running`), or `None`.
    pub fn scaled(&self) -> Option<f64> {
        match self {
            Count::Value(r) if r.running > 0 => {
                let v = r.value as f64;
                Some(if r.running < r.enabled {
                    v * r.enabled as f64 / r.running as f64
                } else {
                    v
                })
            }
            _ => None,
        }
    }
}

/// How counters are opened, beyond their events and scope.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CountOptions {
    /// Counters of a command or of threads do not follow the children they fork
    /// (`perf stat -i`); by default they do, as perf's do.
    pub no_inherit: bool,
    /// A thread that ended before its counters were opened is left uncounted instead of
    /// failing the session (the threads of a whole system, listed a moment before).
    pub ignore_missing_threads: bool,
    /// A command's counters are not enabled by its exec but later, by
    /// [`StatSession::enable`] (`perf stat -D`).
    pub enable_later: bool,
}

/// A counting session: counters opened for every event in every slot of the scope.
#[derive(Debug)]
pub struct StatSession {
    scope: Scope,
    /// `counters[event][slot]`; `None` where the event is not supported.
    counters: Vec<Vec<Option<Counter>>>,
    /// Each event's `struct perf_event_attr` as it was opened.
    attrs: Vec<Vec<u8>>,
    /// For an event in a group of more than one: the group's size (its counters are
    /// read with the group, in one read, as perf reads them).
    group_size: Vec<Option<usize>>,
    /// `ids[event][slot]`: the kernel's id of each counter of a group (what a group read
    /// names its values by), 0 for the others.
    ids: Vec<Vec<u64>>,
}

/// errnos with which the kernel says "this event does not exist here".
pub fn is_unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL | libc::ENXIO)
    )
}

/// An event that could not be opened for a reason other than "not supported".
#[derive(Debug)]
#[non_exhaustive]
pub struct OpenError {
    /// The event as named on the command line.
    pub event: String,
    /// The CPU or thread it was opened for.
    pub slot: String,
    /// The kernel's error.
    pub source: io::Error,
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hint = match self.source.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => {
                " (needs root, or a lower /proc/sys/kernel/perf_event_paranoid)"
            }
            Some(libc::ESRCH) => " (no such process or thread)",
            Some(libc::EMFILE) => " (too many open files: raise `ulimit -n`)",
            _ => "",
        };
        write!(
            f,
            "cannot open event '{}' on {}: {}{hint}",
            self.event, self.slot, self.source
        )
    }
}

impl OpenError {
    /// Whether the kernel said the event does not exist here (no such PMU or event).
    pub fn not_supported(&self) -> bool {
        is_unsupported(&self.source)
    }
    /// Whether the kernel refused the attr itself (EINVAL), as for a clock it does not
    /// take.
    pub fn invalid_argument(&self) -> bool {
        self.source.raw_os_error() == Some(libc::EINVAL)
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl StatSession {
    /// Open every event in every slot of `scope`, disabled (a command's counters are
    /// enabled by its exec; the others by [`StatSession::enable`]).
    pub fn open(
        events: &[EventSpec],
        scope: Scope,
        opts: CountOptions,
    ) -> Result<StatSession, OpenError> {
        StatSession::open_in_cgroups(events, scope, opts, &[])
    }

    /// [`StatSession::open`], with each event's counters limited to the tasks of a cgroup
    /// where `cgroups[event]` names one: the cgroup's directory (in the cgroup file
    /// system), opened. Counting in a cgroup needs a scope of CPUs.
    pub fn open_in_cgroups(
        events: &[EventSpec],
        scope: Scope,
        opts: CountOptions,
        cgroups: &[Option<std::fs::File>],
    ) -> Result<StatSession, OpenError> {
        let slots: Vec<(i32, i32, String)> = match &scope {
            Scope::Cpus(cpus) => cpus
                .iter()
                .map(|&c| (-1, c as i32, format!("CPU{c}")))
                .collect(),
            Scope::Threads(t) => t.iter().map(|&t| (t, -1, format!("thread {t}"))).collect(),
            Scope::Command(pid) => vec![(*pid, -1, format!("process {pid}"))],
        };
        let mut counters: Vec<Vec<Option<Counter>>> = Vec::with_capacity(events.len());
        let mut attrs = Vec::with_capacity(events.len());
        let members = |leader: usize| events.iter().filter(|e| e.leader == leader).count();
        let group_size: Vec<Option<usize>> = events
            .iter()
            .map(|e| Some(members(e.leader)).filter(|&n| n > 1))
            .collect();
        for (i, e) in events.iter().enumerate() {
            let mut attr = new_attr();
            set_event(&mut attr, &e.kind);
            attr.read_format = read_format::TOTAL_TIME_ENABLED | read_format::TOTAL_TIME_RUNNING;
            if group_size[i].is_some() {
                attr.read_format |= read_format::ID | read_format::GROUP;
            }
            // As perf opens its counters (no sample is ever taken).
            attr.sample_type = super::data::abi::sample::IDENTIFIER;
            attr.set_exclude_guest(u64::from(e.exclude_guest));
            attr.set_exclude_host(u64::from(e.exclude_host));
            let leads = e.leader == i;
            attr.set_disabled(u64::from(leads));
            attr.set_exclude_user(u64::from(e.exclude_user));
            attr.set_exclude_kernel(u64::from(e.exclude_kernel));
            attr.set_exclude_hv(u64::from(e.exclude_hv));
            attr.set_precise_ip(u64::from(e.precise));
            match scope {
                Scope::Command(_) => {
                    attr.set_inherit(u64::from(!opts.no_inherit));
                    attr.set_enable_on_exec(u64::from(leads && !opts.enable_later));
                }
                Scope::Threads(_) | Scope::Cpus(_) => attr.set_inherit(u64::from(!opts.no_inherit)),
            }
            let mut row = Vec::with_capacity(slots.len());
            for (s, (pid, cpu, name)) in slots.iter().enumerate() {
                let group = if leads {
                    None
                } else {
                    counters
                        .get(e.leader)
                        .and_then(|r: &Vec<Option<Counter>>| r.get(s))
                        .and_then(|c| c.as_ref())
                };
                if !leads && group.is_none() {
                    // The leader is not supported, so the group cannot be.
                    row.push(None);
                    continue;
                }
                let cgroup = cgroups.get(i).and_then(Option::as_ref);
                let open = |attr: &RawAttr| match cgroup {
                    Some(dir) if *cpu >= 0 => Counter::open_in_cgroup(attr, dir, *cpu, group),
                    _ => Counter::open(attr, *pid, *cpu, group),
                };
                let mut opened = open(&attr);
                if matches!(&opened, Err(err) if refused_exclusion(err, &attr)) {
                    attr.set_exclude_guest(0);
                    attr.set_exclude_host(0);
                    opened = open(&attr);
                }
                match opened {
                    Ok(c) => row.push(Some(c)),
                    Err(err) if is_unsupported(&err) => row.push(None),
                    Err(err)
                        if opts.ignore_missing_threads
                            && err.raw_os_error() == Some(libc::ESRCH) =>
                    {
                        row.push(None)
                    }
                    Err(source) => {
                        return Err(OpenError {
                            event: e.name.clone(),
                            slot: name.clone(),
                            source,
                        })
                    }
                }
            }
            attrs.push(attr_bytes(&attr));
            counters.push(row);
        }
        let mut ids = Vec::with_capacity(counters.len());
        for ((row, group), e) in counters.iter().zip(&group_size).zip(events) {
            let mut row_ids = Vec::with_capacity(row.len());
            for c in row {
                row_ids.push(match (c, group) {
                    (Some(c), Some(_)) => c.id().map_err(|source| OpenError {
                        event: e.name.clone(),
                        slot: "its group (reading its id)".into(),
                        source,
                    })?,
                    _ => 0,
                });
            }
            ids.push(row_ids);
        }
        Ok(StatSession {
            scope,
            counters,
            attrs,
            ids,
            group_size,
        })
    }

    /// Event `event`'s attr as it was opened (`perf stat`'s `evlist -v` prints it).
    pub fn attr(&self, event: usize) -> Option<crate::perf::data::Attr> {
        crate::perf::data::Attr::from_native_bytes(self.attrs.get(event)?)
    }

    /// The scope the session counts in.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    fn leaders(&self) -> impl Iterator<Item = &Counter> {
        self.counters.iter().flatten().flatten()
    }

    /// Start counting (group members follow their leader; enabling them too is harmless).
    pub fn enable(&self) -> io::Result<()> {
        self.leaders().try_for_each(|c| c.enable())
    }

    /// Stop counting.
    pub fn disable(&self) -> io::Result<()> {
        self.leaders().try_for_each(|c| c.disable())
    }

    /// Start counting one event (`perf stat --control`'s `enable NAME`).
    pub fn enable_event(&self, event: usize) -> io::Result<()> {
        self.event_counters(event).try_for_each(|c| c.enable())
    }

    /// Stop counting one event.
    pub fn disable_event(&self, event: usize) -> io::Result<()> {
        self.event_counters(event).try_for_each(|c| c.disable())
    }

    fn event_counters(&self, event: usize) -> impl Iterator<Item = &Counter> {
        self.counters.get(event).into_iter().flatten().flatten()
    }

    /// Zero every counter (between intervals of `-I`, perf reports deltas; this is the
    /// other way: read, then reset).
    pub fn reset(&self) -> io::Result<()> {
        self.leaders().try_for_each(|c| c.reset())
    }

    /// Read every counter: `counts[event][slot]`.
    pub fn read(&self) -> io::Result<Vec<Vec<Count>>> {
        self.counters
            .iter()
            .zip(&self.group_size)
            .zip(&self.ids)
            .map(|((row, group), ids)| {
                row.iter()
                    .zip(ids)
                    .map(|(c, &id)| match c {
                        None => Ok(Count::NotSupported),
                        Some(c) => {
                            let r = match group {
                                Some(n) => c.read_in_group(id, *n)?,
                                None => c.read()?,
                            };
                            Ok(if r.running == 0 {
                                Count::NotCounted
                            } else {
                                Count::Value(r)
                            })
                        }
                    })
                    .collect()
            })
            .collect()
    }
}

/// What perf measures itself for its tool events at one reading of the counters, in
/// nanoseconds: the time since the counters were enabled, and the command's user and
/// system CPU time (0 until it has ended, and without a command).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolReadings {
    /// `duration_time`.
    pub duration_ns: u64,
    /// `user_time`.
    pub user_ns: u64,
    /// `system_time`.
    pub system_ns: u64,
}

/// Give the tool events of `events` their values in `counts` (one reading of a session
/// over `scope`), as perf 6.1 reads them: the value is also its enabled and running
/// time, so a value of 0 is "not counted"; a system-wide scope has it on its first CPU
/// only (the others are not counted), and every thread of a thread scope has it. In a
/// group, perf reads a tool event that leads it and none of the others (they are not
/// counted), and a tool event under another leader as the group read gives it: the
/// dummy event's 0.
pub fn set_tool_counts(
    events: &[EventSpec],
    counts: &mut [Vec<Count>],
    scope: &Scope,
    t: ToolReadings,
) {
    for (i, e) in events.iter().enumerate() {
        let EventKind::Tool(tool) = e.kind else {
            continue;
        };
        if e.leader != i {
            continue;
        }
        for m in 0..events.len() {
            if unread_in_tool_group(events, m) && events[m].leader == i {
                if let Some(slots) = counts.get_mut(m) {
                    slots.fill(Count::NotCounted);
                }
            }
        }
        let Some(slots) = counts.get_mut(i) else {
            continue;
        };
        let v = match tool {
            ToolEvent::Duration => t.duration_ns,
            ToolEvent::User => t.user_ns,
            ToolEvent::System => t.system_ns,
        };
        let value = match v {
            0 => Count::NotCounted,
            v => Count::Value(CounterReading {
                value: v,
                enabled: v,
                running: v,
            }),
        };
        for (i, slot) in slots.iter_mut().enumerate() {
            *slot = match scope {
                Scope::Cpus(_) if i > 0 => Count::NotCounted,
                _ => value,
            };
        }
    }
}

/// Whether event `i` is a member of a group that a tool event leads: perf 6.1 fails to
/// read those members, so they are not counted and add nothing to the statistics other
/// rows' metrics come from (a clock among them gives no rates per second).
pub fn unread_in_tool_group(events: &[EventSpec], i: usize) -> bool {
    let leader = events[i].leader;
    leader != i
        && matches!(
            events.get(leader).map(|l| &l.kind),
            Some(EventKind::Tool(_))
        )
}

/// Sum one event's slots into one count (perf's aggregation without `-A`).
pub fn aggregate(slots: &[Count]) -> Count {
    let mut sum = CounterReading::default();
    let mut any_value = false;
    let mut any_opened = false;
    for s in slots {
        match s {
            Count::Value(r) => {
                sum += *r;
                any_value = true;
                any_opened = true;
            }
            Count::NotCounted => any_opened = true,
            Count::NotSupported => {}
        }
    }
    if any_value {
        Count::Value(sum)
    } else if any_opened {
        Count::NotCounted
    } else {
        Count::NotSupported
    }
}

/// The delta between two readings of the same counter (for intervals).
pub fn delta(now: &Count, before: &Count) -> Count {
    match (now, before) {
        (Count::Value(n), Count::Value(b)) => {
            let r = CounterReading {
                value: n.value.wrapping_sub(b.value),
                enabled: n.enabled.wrapping_sub(b.enabled),
                running: n.running.wrapping_sub(b.running),
            };
            if r.running == 0 {
                Count::NotCounted
            } else {
                Count::Value(r)
            }
        }
        (n, _) => *n,
    }
}

/// Mean and standard deviation of the mean over repeated runs (`-r`), as perf computes
/// them (Welford's running variance; the noise is `stddev / sqrt(n)`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RunStats {
    n: u64,
    mean: f64,
    m2: f64,
}

impl RunStats {
    /// Add one run's value.
    pub fn push(&mut self, v: f64) {
        self.n += 1;
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Runs counted.
    pub fn runs(&self) -> u64 {
        self.n
    }

    /// Standard deviation of the mean (0 for fewer than two runs).
    pub fn stddev_of_mean(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let variance = self.m2 / (self.n - 1) as f64;
        (variance / self.n as f64).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_and_aggregation() {
        let r = |value, enabled, running| {
            Count::Value(CounterReading {
                value,
                enabled,
                running,
            })
        };
        assert_eq!(r(100, 200, 100).scaled(), Some(200.0));
        assert_eq!(Count::NotCounted.scaled(), None);
        assert_eq!(
            aggregate(&[r(1, 2, 2), Count::NotCounted, r(3, 4, 4)]),
            r(4, 6, 6)
        );
        assert_eq!(
            aggregate(&[Count::NotCounted, Count::NotSupported]),
            Count::NotCounted
        );
        assert_eq!(aggregate(&[Count::NotSupported]), Count::NotSupported);
        assert_eq!(delta(&r(10, 20, 20), &r(4, 5, 5)), r(6, 15, 15));
    }

    #[test]
    fn run_stats() {
        let mut s = RunStats::default();
        for v in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            s.push(v);
        }
        assert_eq!(s.mean(), 5.0);
        // sample variance 32/7, of the mean / 8
        assert!((s.stddev_of_mean() - (32.0f64 / 7.0 / 8.0).sqrt()).abs() < 1e-12);
    }
}
