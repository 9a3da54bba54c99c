//! `report --profile`: where each task spent its time, as trace-cmd 3.1.6's profiler
//! counts it.
//!
//! Behaviour copied from trace-cmd (facts, not code):
//!
//! * every record the report would print (after `--cpu` and `-F`) of the file's top
//!   buffer is accounted to a task; nothing of it is printed. Dropped events on a CPU
//!   forget the pending starts of that CPU and every start that may migrate;
//! * event pairs are timed from start to end per task: `irq_handler_entry`/`exit` (by
//!   `irq`, same CPU), `softirq_raise`/`entry` and `softirq_entry`/`exit` (by `vec`, same
//!   CPU), `raw_syscalls:sys_enter`/`sys_exit` (by `id`), `funcgraph_entry`/`exit` (by
//!   `func`). With `-G` the irq pairs belong to a per-CPU `Global CPU[N] Events` task;
//! * `sched_switch` starts the switched-out task's wait (keyed by its `prev_state`); a
//!   `sched_wakeup` of a sleeping task ends it (the task's blocked time) and starts the
//!   wakeup latency, which the `sched_switch` to it ends; a preempted task's wait ends
//!   at that `sched_switch` too. A task's name is the comm of the first switch or wakeup
//!   that names it (forgotten at `sched_process_exec`), else the file's saved cmdlines;
//! * `funcgraph_entry` and `function` entries are named by the function (kallsyms);
//! * every other event is counted per task and per value of its first field (read as a
//!   number of 1, 2, 4 or 8 bytes, else 0);
//! * with several files each record still prints its file label, and the last file's
//!   profile comes first;
//! * the output: per-CPU global tasks with events, then every task by pid, each event
//!   sorted: switches by state, then the wakeup, then the others by event id and larger
//!   total time first. trace-cmd leaves the order of equal entries (same event and
//!   total, other values) to its hash tables' memory addresses, which changes from run to
//!   run; here they go by value;
//! * each `-H` hook adds its start and end events anew (they take over the handling of
//!   events already known, such as `sched_switch`) and times them as a pair: the start's
//!   `start_match` field against the end's `end_match` field, the task named by the
//!   start's `pid` field if given; flag `P` keeps a pair on one CPU, `G` gives it to a
//!   global task (`Global Events`, or with `P` one per CPU). An event not in the file
//!   is a warning; a field an event lacks is an error;
//! * not done: the stack traces of `ftrace:kernel_stack` records (which cannot be
//!   recorded here without the function tracer) and merged comms.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::endian::Endianness;
use crate::event::{FieldSpec, Record};
use crate::render::tracecmd::{read_uint, Catalog, Cmdlines};
use crate::session::hook::EventHook;

/// What an event is to the profiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Undefined,
    Stack,
    Switch,
    Wakeup,
    Func,
    Syscall,
    Irq,
    Softirq,
    SoftirqRaise,
    Exec,
    /// An event of a `-H` hook.
    UserMate,
}

/// A hook naming a field its event does not have (trace-cmd stops there too).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProfileError {
    /// `event` has no field `field`.
    NoSuchField {
        /// The event.
        event: String,
        /// The field the hook names.
        field: String,
    },
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::NoSuchField { event, field } => write!(
                f,
                "-H hook: event {event} has no field {field} (`report --events` shows its format)"
            ),
        }
    }
}

impl std::error::Error for ProfileError {}

/// An event the profiler knows (trace-cmd's `event_data`).
#[derive(Debug, Clone)]
struct EventData {
    id: u16,
    name: String,
    kind: Kind,
    /// The event that ends what this one starts.
    end: Option<usize>,
    /// The event that starts what this one ends.
    start: Option<usize>,
    pid_field: Option<FieldSpec>,
    start_match: Option<FieldSpec>,
    end_match: Option<FieldSpec>,
    data_field: Option<FieldSpec>,
    migrate: bool,
    global: bool,
}

/// A pending start of a pair.
#[derive(Debug, Clone, Copy)]
struct Start {
    event: usize,
    ts: u64,
    search: u64,
    val: u64,
    cpu: u32,
    migrate: bool,
}

/// The totals of one (event, value) of a task.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    count: u64,
    total: u64,
    max: u64,
    ts_max: u64,
    min: u64,
    ts_min: u64,
}

#[derive(Debug, Default)]
struct Task {
    comm: Option<String>,
    sleeping: bool,
    /// Pending starts, oldest first (the newest matching one is taken).
    starts: Vec<Start>,
    /// By (event, search value, value).
    entries: HashMap<(usize, u64, u64), Entry>,
}

/// The profile of one file.
#[derive(Debug)]
pub struct Profile {
    events: Vec<EventData>,
    by_id: HashMap<u16, usize>,
    endian: Endianness,
    common_pid: Option<FieldSpec>,
    switch_prev_comm: Option<FieldSpec>,
    switch_next_comm: Option<FieldSpec>,
    wakeup_comm: Option<FieldSpec>,
    switch: Option<usize>,
    wakeup: Option<usize>,
    tasks: HashMap<i32, Task>,
    /// "Global CPU[N] Events" (`-G`).
    percpu: Vec<Task>,
    /// "Global Events".
    global: Task,
    /// Hook events the file does not have.
    warnings: Vec<String>,
}

/// A number field as libtraceevent reads one: sizes 1, 2, 4 and 8 only.
fn number(data: &[u8], f: Option<FieldSpec>, endian: Endianness) -> Option<u64> {
    let f = f?;
    if !matches!(f.size, 1 | 2 | 4 | 8) {
        return None;
    }
    read_uint(data, f, endian)
}

/// A char array field up to its first NUL.
fn text(data: &[u8], f: FieldSpec) -> String {
    let b = data.get(f.offset..f.offset + f.size).unwrap_or(&[]);
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

const SOFTIRQS: [&str; 10] = [
    "HI",
    "TIMER",
    "NET_TX",
    "NET_RX",
    "BLOCK",
    "BLOCK_IOPOLL",
    "TASKLET",
    "SCHED",
    "HRTIMER",
    "RCU",
];

impl Profile {
    /// The profiler of a file of these events, with `cpus` CPUs; `global` is `-G`,
    /// `hooks` the `-H` pairs.
    pub fn new(
        catalog: &dyn Catalog,
        cpus: usize,
        global: bool,
        hooks: &[EventHook],
    ) -> Result<Profile, ProfileError> {
        let all = catalog.events();
        let mut p = Profile {
            events: Vec::new(),
            by_id: HashMap::new(),
            endian: catalog.endian(),
            common_pid: None,
            switch_prev_comm: None,
            switch_next_comm: None,
            wakeup_comm: None,
            switch: None,
            wakeup: None,
            tasks: HashMap::new(),
            percpu: (0..cpus).map(|_| Task::default()).collect(),
            global: Task::default(),
            warnings: Vec::new(),
        };
        // A hook's event is added even when known (it then takes over), and may name no
        // system (the first event of that name).
        let add_event = |p: &mut Profile,
                         system: Option<&str>,
                         name: &str,
                         kind: Kind,
                         fresh: bool|
         -> Option<usize> {
            let (id, _, _) = *all
                .iter()
                .find(|(_, s, n)| system.map_or(true, |sys| *s == sys) && *n == name)?;
            if !fresh && p.by_id.contains_key(&id) {
                return p.by_id.get(&id).copied();
            }
            if p.common_pid.is_none() {
                p.common_pid = catalog.field(id, "common_pid");
            }
            p.events.push(EventData {
                id,
                name: name.to_string(),
                kind,
                end: None,
                start: None,
                pid_field: None,
                start_match: None,
                end_match: None,
                data_field: None,
                migrate: false,
                global: false,
            });
            p.by_id.insert(id, p.events.len() - 1);
            Some(p.events.len() - 1)
        };
        let add = |p: &mut Profile, system: &str, name: &str, kind: Kind| {
            add_event(p, Some(system), name, kind, false)
        };
        let irq_entry = add(&mut p, "irq", "irq_handler_entry", Kind::Irq);
        let irq_exit = add(&mut p, "irq", "irq_handler_exit", Kind::Irq);
        let softirq_entry = add(&mut p, "irq", "softirq_entry", Kind::Softirq);
        let softirq_exit = add(&mut p, "irq", "softirq_exit", Kind::Softirq);
        let softirq_raise = add(&mut p, "irq", "softirq_raise", Kind::SoftirqRaise);
        let wakeup = add(&mut p, "sched", "sched_wakeup", Kind::Wakeup);
        let switch = add(&mut p, "sched", "sched_switch", Kind::Switch);
        let fgraph_entry = add(&mut p, "ftrace", "funcgraph_entry", Kind::Func);
        let fgraph_exit = add(&mut p, "ftrace", "funcgraph_exit", Kind::Func);
        let sys_enter = add(&mut p, "raw_syscalls", "sys_enter", Kind::Syscall);
        let sys_exit = add(&mut p, "raw_syscalls", "sys_exit", Kind::Syscall);
        let exec = add(&mut p, "sched", "sched_process_exec", Kind::Exec);
        let _stack = add(&mut p, "ftrace", "kernel_stack", Kind::Stack);
        let field = |p: &Profile, e: usize, name: &str| catalog.field(p.events[e].id, name);
        if let Some(e) = exec {
            p.events[e].data_field = field(&p, e, "old_pid");
        }
        if let Some(s) = switch {
            p.events[s].data_field = field(&p, s, "prev_state");
            p.switch_prev_comm = field(&p, s, "prev_comm");
            p.switch_next_comm = field(&p, s, "next_comm");
        }
        // mate(start, pid field, start's field matched, end, end's field matched, ...)
        let mate = |p: &mut Profile,
                    start: usize,
                    pid: Option<&str>,
                    end_match: &str,
                    end: usize,
                    start_match: &str,
                    migrate: bool,
                    global: bool| {
            p.events[start].end = Some(end);
            p.events[end].start = Some(start);
            if let Some(pid) = pid {
                p.events[start].pid_field = field(p, start, pid);
            }
            p.events[start].end_match = field(p, start, end_match);
            p.events[end].start_match = field(p, end, start_match);
            for e in [start, end] {
                p.events[e].migrate = migrate;
                p.events[e].global = global;
            }
        };
        if let (Some(s), Some(w)) = (switch, wakeup) {
            mate(
                &mut p,
                s,
                Some("prev_pid"),
                "next_pid",
                w,
                "pid",
                true,
                false,
            );
            mate(&mut p, w, Some("pid"), "pid", s, "prev_pid", true, false);
            p.events[w].data_field = field(&p, w, "success");
            p.wakeup_comm = field(&p, w, "comm");
        }
        if let (Some(a), Some(b)) = (irq_entry, irq_exit) {
            mate(&mut p, a, None, "irq", b, "irq", false, global);
        }
        if let (Some(a), Some(b)) = (softirq_entry, softirq_exit) {
            mate(&mut p, a, None, "vec", b, "vec", false, global);
        }
        if let (Some(a), Some(b)) = (softirq_raise, softirq_entry) {
            mate(&mut p, a, None, "vec", b, "vec", false, global);
        }
        if let (Some(a), Some(b)) = (fgraph_entry, fgraph_exit) {
            mate(&mut p, a, None, "func", b, "func", true, false);
        }
        if let (Some(a), Some(b)) = (sys_enter, sys_exit) {
            mate(&mut p, a, None, "id", b, "id", true, false);
        }
        if let Some(f) = add(&mut p, "ftrace", "function", Kind::Func) {
            p.events[f].data_field = field(&p, f, "ip");
        }
        // trace-cmd keeps its hooks last given first.
        for h in hooks.iter().rev() {
            let start = add_event(
                &mut p,
                h.start_system.as_deref(),
                &h.start_event,
                Kind::UserMate,
                true,
            );
            let end = add_event(
                &mut p,
                h.end_system.as_deref(),
                &h.end_event,
                Kind::UserMate,
                true,
            );
            let (Some(start), Some(end)) = (start, end) else {
                let missing = if start.is_none() {
                    &h.start_event
                } else {
                    &h.end_event
                };
                p.warnings
                    .push(format!("-H hook: event {missing} not found in the file"));
                continue;
            };
            let need = |p: &Profile, e: usize, name: &str| {
                field(p, e, name).ok_or_else(|| ProfileError::NoSuchField {
                    event: p.events[e].name.clone(),
                    field: name.to_string(),
                })
            };
            if let Some(pid) = &h.pid {
                need(&p, start, pid)?;
            }
            need(&p, start, &h.start_match)?;
            need(&p, end, &h.end_match)?;
            mate(
                &mut p,
                start,
                h.pid.as_deref(),
                &h.start_match,
                end,
                &h.end_match,
                h.migrate,
                h.global,
            );
        }
        p.switch = switch;
        p.wakeup = wakeup;
        // Every other event: counted by the value of its first field.
        let mut rest: Vec<&(u16, &str, &str)> = all.iter().collect();
        rest.sort_by_key(|(id, _, _)| *id);
        for &(id, system, name) in rest {
            if p.by_id.contains_key(&id) {
                continue;
            }
            if let Some(e) = add(&mut p, system, name, Kind::Undefined) {
                p.events[e].data_field = catalog.first_field(id);
            }
        }
        Ok(p)
    }

    /// Warnings about the hooks (events the file does not have), taken once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn task(&mut self, pid: i32) -> &mut Task {
        self.tasks.entry(pid).or_default()
    }

    /// The task an event of `e` belongs to (trace-cmd's `find_event_task`).
    fn event_task(&mut self, e: usize, rec: &Record, pid: u64) -> &mut Task {
        let ev = &self.events[e];
        if ev.global {
            if ev.migrate {
                return &mut self.global;
            }
            let cpu = rec.cpu as usize;
            if cpu < self.percpu.len() {
                return &mut self.percpu[cpu];
            }
            return &mut self.global;
        }
        let pid = match ev.pid_field {
            Some(f) => number(rec.data, Some(f), self.endian).unwrap_or(pid),
            None => pid,
        };
        self.task(pid as i32)
    }

    /// Account one record the report would print; `missed` is whether events were
    /// dropped on its CPU just before it.
    pub fn record(&mut self, rec: &Record, missed: bool) {
        if missed {
            let cpu = rec.cpu;
            let forget = |t: &mut Task| t.starts.retain(|s| !(s.migrate || s.cpu == cpu));
            self.tasks.values_mut().for_each(forget);
            self.percpu.iter_mut().for_each(forget);
            forget(&mut self.global);
        }
        let Some(id) = rec.event_id(self.endian) else {
            return;
        };
        let Some(&e) = self.by_id.get(&id) else {
            return;
        };
        let pid = number(rec.data, self.common_pid, self.endian).unwrap_or(0);
        // Every task that records an event is listed, with or without entries.
        self.task(pid as i32);
        match self.events[e].kind {
            Kind::Stack => {}
            Kind::Exec => {
                let pid = match self.events[e].data_field {
                    Some(f) => number(rec.data, Some(f), self.endian).unwrap_or(pid),
                    None => pid,
                };
                self.task(pid as i32).comm = None;
            }
            Kind::Switch => self.switch(e, rec),
            Kind::Wakeup if self.events[e].end.is_some() => self.wakeup(e, rec),
            _ => self.generic(e, rec, pid),
        }
    }

    fn generic(&mut self, e: usize, rec: &Record, pid: u64) {
        let endian = self.endian;
        let ev = self.events[e].clone();
        let mut done = false;
        if let Some(start) = ev.start {
            let val = number(rec.data, ev.start_match, endian).unwrap_or(0);
            let task = self.event_task(e, rec, pid);
            end_start(task, start, rec.ts, val);
            done = true;
        }
        if ev.end.is_some() {
            let val = number(rec.data, ev.end_match, endian).unwrap_or(0);
            let migrate = ev.migrate;
            let task = self.event_task(e, rec, pid);
            task.starts.push(Start {
                event: e,
                ts: rec.ts,
                search: val,
                val,
                cpu: rec.cpu,
                migrate,
            });
            done = true;
        }
        if !done {
            let val = number(rec.data, ev.data_field, endian).unwrap_or(0);
            let task = self.task(pid as i32);
            task.entries.entry((e, val, val)).or_default().count += 1;
        }
    }

    fn switch(&mut self, e: usize, rec: &Record) {
        let endian = self.endian;
        let ev = self.events[e].clone();
        let prev_pid = number(rec.data, ev.pid_field, endian).unwrap_or(0);
        let prev_state = number(rec.data, ev.data_field, endian).unwrap_or(0) & 1023;
        let next_pid = number(rec.data, ev.end_match, endian).unwrap_or(0);
        let (prev_comm, next_comm) = (self.switch_prev_comm, self.switch_next_comm);
        let task = self.task(prev_pid as i32);
        if task.comm.is_none() {
            task.comm = prev_comm.map(|f| text(rec.data, f));
        }
        task.sleeping = prev_state != 0;
        task.starts.push(Start {
            event: e,
            ts: rec.ts,
            search: prev_pid,
            val: prev_state,
            cpu: rec.cpu,
            migrate: ev.migrate,
        });
        let task = self.task(next_pid as i32);
        if task.comm.is_none() {
            task.comm = next_comm.map(|f| text(rec.data, f));
        }
        if let Some(w) = ev.start {
            end_start(task, w, rec.ts, next_pid);
        }
        end_start(task, e, rec.ts, next_pid);
    }

    fn wakeup(&mut self, e: usize, rec: &Record) {
        let endian = self.endian;
        let ev = self.events[e].clone();
        if let Some(s) = number(rec.data, ev.data_field, endian) {
            if s == 0 {
                return;
            }
        }
        let pid = number(rec.data, ev.pid_field, endian).unwrap_or(0);
        let comm = self.wakeup_comm;
        let task = self.task(pid as i32);
        if task.comm.is_none() {
            task.comm = comm.map(|f| text(rec.data, f));
        }
        if !task.sleeping {
            return;
        }
        task.sleeping = false;
        if let Some(s) = ev.start {
            end_start(task, s, rec.ts, pid);
        }
        task.starts.push(Start {
            event: e,
            ts: rec.ts,
            search: pid,
            val: pid,
            cpu: rec.cpu,
            migrate: ev.migrate,
        });
    }

    /// The profile's text, after the records: task names missing from the records come
    /// from `cmdlines`, function names from `catalog`'s kallsyms.
    pub fn write(
        &self,
        catalog: &dyn Catalog,
        cmdlines: &Cmdlines,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        if !self.global.entries.is_empty() {
            writeln!(out, "Global Events")?;
            self.write_entries(&self.global, catalog, out)?;
        }
        for (cpu, t) in self.percpu.iter().enumerate() {
            if !t.entries.is_empty() {
                writeln!(out, "Global CPU[{cpu}] Events")?;
                self.write_entries(t, catalog, out)?;
            }
        }
        let mut pids: Vec<i32> = self.tasks.keys().copied().collect();
        pids.sort_unstable();
        for pid in pids {
            let t = &self.tasks[&pid];
            match &t.comm {
                Some(c) => write!(out, "\ntask: {c}-{pid}\n")?,
                None => write!(out, "\ntask: {}-{pid}\n", &*cmdlines.comm(pid))?,
            }
            self.write_entries(t, catalog, out)?;
        }
        Ok(())
    }

    fn write_entries(
        &self,
        t: &Task,
        catalog: &dyn Catalog,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let mut entries: Vec<(&(usize, u64, u64), &Entry)> = t.entries.iter().collect();
        let rank = |k: Kind| match k {
            Kind::Switch => 0,
            Kind::Wakeup => 1,
            _ => 2,
        };
        entries.sort_by(|(a, ea), (b, eb)| {
            let (da, db) = (&self.events[a.0], &self.events[b.0]);
            rank(da.kind)
                .cmp(&rank(db.kind))
                .then_with(|| match da.kind {
                    Kind::Switch => a.2.cmp(&b.2),
                    Kind::Wakeup => std::cmp::Ordering::Equal,
                    _ => da
                        .id
                        .cmp(&db.id)
                        .then(eb.total.cmp(&ea.total))
                        .then(a.2.cmp(&b.2))
                        .then(a.1.cmp(&b.1)),
                })
        });
        for (k, en) in entries {
            let ev = &self.events[k.0];
            let val = k.2;
            let mut line = String::from("  Event: ");
            match ev.kind {
                Kind::Switch => {
                    line.push_str(&ev.name);
                    line.push(':');
                    if val == 0 {
                        line.push('R');
                    } else {
                        let states = b"RSDTtXZxKWP";
                        let mut v = val as i32;
                        let mut i = 0;
                        while v != 0 && i < states.len() - 1 {
                            if v & 1 != 0 {
                                line.push(states[i + 1] as char);
                            }
                            i += 1;
                            v >>= 1;
                        }
                    }
                }
                Kind::Softirq | Kind::SoftirqRaise => {
                    let v = val as i32;
                    match usize::try_from(v).ok().and_then(|i| SOFTIRQS.get(i)) {
                        Some(s) => line.push_str(&format!("{}:{s}", ev.name)),
                        None => line.push_str(&format!("{}:{v}", ev.name)),
                    }
                }
                Kind::Syscall => line.push_str(&format!("{}:{}", ev.name, val as i32)),
                Kind::Func => match catalog.function(val) {
                    Some((name, _)) => line.push_str(&format!("func: {name}()")),
                    None => line.push_str(&format!("func: 0x{val:x}")),
                },
                _ => line.push_str(&format!("{}:0x{val:x}", ev.name)),
            }
            line.push_str(&format!(" ({})", en.count));
            if en.total != 0 {
                let sec = |ts: u64| ts / 1_000_000_000;
                let usec = |ts: u64| ((ts % 1_000_000_000) + 500) / 1000;
                line.push_str(&format!(
                    " Total: {} Avg: {} Max: {}(ts:{}.{:06}) Min:{}(ts:{}.{:06})",
                    en.total,
                    en.total / en.count.max(1),
                    en.max,
                    sec(en.ts_max),
                    usec(en.ts_max),
                    en.min,
                    sec(en.ts_min),
                    usec(en.ts_min)
                ));
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        Ok(())
    }
}

/// End the newest pending start of `event` for `search` in `task`: its time goes to the
/// start's (event, search value, value) entry.
fn end_start(task: &mut Task, event: usize, ts: u64, search: u64) {
    let Some(i) = task
        .starts
        .iter()
        .rposition(|s| s.event == event && s.search == search)
    else {
        return;
    };
    let s = task.starts.remove(i);
    let delta = (ts as i64).wrapping_sub(s.ts as i64).max(0) as u64;
    let en = task.entries.entry((s.event, s.search, s.val)).or_default();
    en.count += 1;
    en.total = en.total.wrapping_add(delta);
    if delta > en.max {
        en.max = delta;
        en.ts_max = ts;
    }
    if en.count == 1 || delta < en.min {
        en.min = delta;
        en.ts_min = ts;
    }
}
