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
//!   total, other values; any two wakeups) to its hash table: a stable sort of the
//!   entries in bucket order, the bucket a hash of the event's heap address plus the
//!   entry's values, so the order changes from run to run with the heap's place (5 runs
//!   of one file, 5 orders); here they go by value;
//! * an `ftrace:kernel_stack` record belongs to what its task did just before: the
//!   pending start it just made (a switch, a wakeup: the wakeup's stack goes to the
//!   woken task), else the entry it just counted or ended (with that entry's last
//!   time); otherwise it is kept for a `funcgraph_entry` that comes next. A start's stack
//!   is accounted when the start ends. Each entry's stacks print as a tree under it
//!   (see [`super::profile_stacks`]);
//! * `-H` hooks pair two events of the user's choice (see [`super::profile_hooks`]);
//!   a pair with the `g` flag that may migrate belongs to the `Global Events` task;
//! * `--by-comm` ([`Profile::by_comm`]): the tasks named by their records (not by the
//!   saved cmdlines) are merged per comm into `group: COMM`, printed after the global
//!   tasks and before the remaining tasks: a group's wakeups are one entry, its switches
//!   one per state, its other entries as the tasks' (counts and times summed, the longest
//!   and shortest kept, stacks merged). trace-cmd 3.1.6 sorts the groups by comparing
//!   the bytes of their memory addresses as strings (its `compare_groups` is given
//!   pointers), an order that changes from run to run; here they go by comm.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::endian::Endianness;
use crate::event::{FieldSpec, Record};
use crate::render::tracecmd::{read_uint, Catalog, Cmdlines};
use crate::session::profile_hooks::{HookError, ProfileHook};
use crate::session::profile_stacks::{Durations, Layout, Stacks};

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
    /// Either event of a `-H` hook.
    Hook,
}

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

/// A kernel stack record's `caller` bytes and time.
#[derive(Debug, Clone)]
struct StackRecord {
    bytes: Vec<u8>,
    ts: u64,
    /// Which record it was (a task keeps its last stack for one more of its records).
    serial: u64,
}

/// A pending start of a pair.
#[derive(Debug, Clone)]
struct Start {
    /// Unique in the profile (a task's `last_start` names it).
    id: u64,
    stack: Option<StackRecord>,
    event: usize,
    ts: u64,
    search: u64,
    val: u64,
    cpu: u32,
    migrate: bool,
}

/// The totals of one (event, value) of a task.
#[derive(Debug, Default)]
struct Entry {
    /// The time of the pair that ended last (a stack that follows gets it).
    last_time: u64,
    stacks: Stacks,
    times: Durations,
}

/// Where a task lives in the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TaskRef {
    Pid(i32),
    Cpu(usize),
    Global,
}

/// An entry's key: (event, search value, value).
type EntryKey = (usize, u64, u64);

#[derive(Debug, Default)]
struct Task {
    /// How many tasks the profile had before this one (trace-cmd's task table lists the
    /// newest of a bucket first).
    made: usize,
    comm: Option<String>,
    sleeping: bool,
    /// The start this task made last, while a stack may still follow it.
    last_start: Option<u64>,
    /// The entry this task counted or ended last, while a stack may still follow it.
    last_event: Option<EntryKey>,
    /// The task the next stack of this one belongs to (the task it woke).
    proxy: Option<TaskRef>,
    /// A stack that came with no start or entry to belong to.
    last_stack: Option<StackRecord>,
    /// Pending starts, oldest first (the newest matching one is taken).
    starts: Vec<Start>,
    /// By (event, search value, value).
    entries: HashMap<EntryKey, Entry>,
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
    /// `ftrace:kernel_stack`'s `caller` field.
    stack_caller: Option<FieldSpec>,
    layout: Layout,
    /// The last start id and stack serial given.
    serial: u64,
    /// Hooks whose events the file does not have.
    warnings: Vec<String>,
    /// `--by-comm`: tasks merged per comm.
    by_comm: bool,
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
    /// The profiler of a file of these events, with `cpus` CPUs and the kernel's
    /// `sizeof(long)` `long_size`; `global` is `-G`, `hooks` the `-H` pairs in trace-cmd's
    /// order reversed (they are added last first, as trace-cmd walks its list). A hook
    /// naming a field its event does not have is an error; one whose event the file
    /// lacks is left out with a warning.
    pub fn new(
        catalog: &dyn Catalog,
        cpus: usize,
        long_size: usize,
        global: bool,
        hooks: &[ProfileHook],
    ) -> Result<Profile, HookError> {
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
            stack_caller: None,
            by_comm: false,
            layout: Layout {
                long_size: if long_size == 4 { 4 } else { 8 },
                endian: catalog.endian(),
            },
            serial: 0,
            warnings: Vec::new(),
        };
        let add = |p: &mut Profile, system: &str, name: &str, kind: Kind| -> Option<usize> {
            let (id, _, _) = *all.iter().find(|(_, s, n)| *s == system && *n == name)?;
            if p.by_id.contains_key(&id) {
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
        let stack = add(&mut p, "ftrace", "kernel_stack", Kind::Stack);
        let field = |p: &Profile, e: usize, name: &str| catalog.field(p.events[e].id, name);
        if let Some(s) = stack {
            p.stack_caller = field(&p, s, "caller");
        }
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
        for hook in hooks.iter().rev() {
            // A hook's events are added again: they take over the events' ids.
            let mut added = [None, None];
            let ends = [
                (&hook.start_system, &hook.start_event),
                (&hook.end_system, &hook.end_event),
            ];
            for (slot, (system, name)) in added.iter_mut().zip(ends) {
                let found = all
                    .iter()
                    .filter(|(_, s, n)| n == name && system.as_deref().map_or(true, |w| w == *s))
                    .min_by_key(|(id, _, _)| *id);
                let Some(&(id, _, _)) = found else {
                    continue;
                };
                if p.common_pid.is_none() {
                    p.common_pid = catalog.field(id, "common_pid");
                }
                p.events.push(EventData {
                    id,
                    name: name.clone(),
                    kind: Kind::Hook,
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
                *slot = Some(p.events.len() - 1);
            }
            let (s, e) = match added {
                [Some(s), Some(e)] => (s, e),
                [None, _] => {
                    p.warnings
                        .push(format!("Event {} not found", hook.start_event));
                    continue;
                }
                [_, None] => {
                    p.warnings
                        .push(format!("Event {} not found", hook.end_event));
                    continue;
                }
            };
            let mut wanted = vec![(s, hook.start_match.as_str()), (e, hook.end_match.as_str())];
            if let Some(pid) = &hook.start_pid {
                wanted.push((s, pid.as_str()));
            }
            for (ev, f) in wanted {
                if field(&p, ev, f).is_none() {
                    return Err(HookError::NoField {
                        event: p.events[ev].name.clone(),
                        field: f.to_string(),
                    });
                }
            }
            mate(
                &mut p,
                s,
                hook.start_pid.as_deref(),
                &hook.start_match,
                e,
                &hook.end_match,
                hook.migrate,
                hook.global,
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

    /// Merge the tasks of one comm into one group (trace-cmd's `--by-comm`).
    pub fn by_comm(&mut self, yes: bool) {
        self.by_comm = yes;
    }

    /// The tasks named by their records, merged per comm (in comm order), and the pids
    /// of the tasks merged.
    fn groups(&self) -> (Vec<(&str, Task)>, std::collections::HashSet<i32>) {
        let mut groups: std::collections::BTreeMap<&str, Task> = Default::default();
        let mut merged = std::collections::HashSet::new();
        if !self.by_comm {
            return (Vec::new(), merged);
        }
        // Merged in trace-cmd's order (its task table's buckets, the newest task of a bucket
        // first): of equal longest or shortest times, the first merged one's time stamp is
        // kept.
        let mut pids: Vec<i32> = self.tasks.keys().copied().collect();
        pids.sort_unstable_by_key(|p| (task_bucket(*p), std::cmp::Reverse(self.tasks[p].made)));
        for pid in pids {
            let t = &self.tasks[&pid];
            let Some(comm) = t.comm.as_deref() else {
                continue;
            };
            merged.insert(pid);
            let g = groups.entry(comm).or_default();
            for (&(e, search, val), en) in &t.entries {
                let key = match self.events[e].kind {
                    // One wakeup entry for the group, whoever was woken.
                    Kind::Wakeup => (e, 0, 0),
                    // One per state.
                    Kind::Switch => (e, val, val),
                    _ => (e, search, val),
                };
                let to = g.entries.entry(key).or_default();
                to.times.merge(&en.times);
                to.stacks.merge(&en.stacks);
            }
        }
        (groups.into_iter().collect(), merged)
    }

    /// What the profile left out (a hook's event the file does not have).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn task(&mut self, pid: i32) -> &mut Task {
        let made = self.tasks.len();
        self.tasks.entry(pid).or_insert_with(|| Task {
            made,
            ..Task::default()
        })
    }

    fn task_at(&mut self, r: TaskRef) -> &mut Task {
        match r {
            TaskRef::Pid(pid) => self.task(pid),
            TaskRef::Cpu(cpu) => &mut self.percpu[cpu],
            TaskRef::Global => &mut self.global,
        }
    }

    fn next_serial(&mut self) -> u64 {
        self.serial += 1;
        self.serial
    }

    /// The task an event of `e` belongs to (trace-cmd's `find_event_task`).
    fn event_task(&self, e: usize, rec: &Record, pid: u64) -> TaskRef {
        let ev = &self.events[e];
        if ev.global {
            let cpu = rec.cpu as usize;
            if ev.migrate || cpu >= self.percpu.len() {
                return TaskRef::Global;
            }
            return TaskRef::Cpu(cpu);
        }
        let pid = match ev.pid_field {
            Some(f) => number(rec.data, Some(f), self.endian).unwrap_or(pid),
            None => pid,
        };
        TaskRef::Pid(pid as i32)
    }

    /// Account one record the report would print; `missed` is whether events were
    /// dropped on its CPU just before it.
    pub fn record(&mut self, rec: &Record, missed: bool) {
        if missed {
            let cpu = rec.cpu;
            let forget = |t: &mut Task| {
                let before = t.starts.len();
                t.starts.retain(|s| !(s.migrate || s.cpu == cpu));
                if t.starts.len() != before && !t.starts.iter().any(|s| Some(s.id) == t.last_start)
                {
                    t.last_start = None;
                }
            };
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
        let held = self.task(pid as i32).last_stack.as_ref().map(|s| s.serial);
        let ev = &self.events[e];
        match ev.kind {
            Kind::Stack => self.stack(rec, pid),
            Kind::Exec => {
                let pid = match ev.data_field {
                    Some(f) => number(rec.data, Some(f), self.endian).unwrap_or(pid),
                    None => pid,
                };
                self.task(pid as i32).comm = None;
            }
            Kind::Switch => self.switch(e, rec),
            Kind::Wakeup if ev.end.is_some() => self.wakeup(e, rec, pid),
            // funcgraph_entry: a stack kept just before belongs to it.
            Kind::Func if ev.end.is_some() => {
                let r = self.start_event(e, rec, pid);
                let t = self.task_at(r);
                if let Some(stack) = t.last_stack.take() {
                    let last = t.last_start;
                    if let Some(s) = t.starts.iter_mut().find(|s| Some(s.id) == last) {
                        s.stack = Some(stack);
                    }
                    t.last_event = None;
                }
                t.last_start = None;
            }
            // funcgraph_exit: no stack follows it.
            Kind::Func if ev.start.is_some() => {
                let r = self.end_event(e, rec, pid);
                self.task_at(r).last_event = None;
            }
            _ => self.generic(e, rec, pid),
        }
        // A kept stack lasts until the task's next record.
        if let Some(serial) = held {
            let t = self.task(pid as i32);
            if t.last_stack.as_ref().map(|s| s.serial) == Some(serial) {
                t.last_stack = None;
            }
        }
    }

    /// A kernel stack of the task `pid` (trace-cmd's `handle_stacktrace_event`).
    fn stack(&mut self, rec: &Record, pid: u64) {
        let me = TaskRef::Pid(pid as i32);
        let bytes = match self.stack_caller {
            Some(f) => rec.data.get(f.offset..).unwrap_or(&[]),
            None => &[],
        };
        // trace-cmd refuses a stack shorter than an int; such a record is left out.
        if bytes.len() < 4 {
            return;
        }
        let serial = self.next_serial();
        let stack = StackRecord {
            bytes: bytes.to_vec(),
            ts: rec.ts,
            serial,
        };
        let t = self.task_at(me);
        t.last_stack = None;
        let owner = t.proxy.take().unwrap_or(me);
        let t = self.task_at(owner);
        if t.last_start.is_none() && t.last_event.is_none() {
            self.task_at(me).last_stack = Some(stack);
            return;
        }
        if let Some(id) = t.last_start.take() {
            if let Some(s) = t.starts.iter_mut().find(|s| s.id == id) {
                s.stack = Some(stack);
            }
            t.last_event = None;
            return;
        }
        if let Some(key) = t.last_event.take() {
            if let Some(en) = t.entries.get_mut(&key) {
                en.stacks.add(&stack.bytes, en.last_time, rec.ts);
            }
        }
    }

    /// The end of a pair (trace-cmd's `handle_end_event`).
    fn end_event(&mut self, e: usize, rec: &Record, pid: u64) -> TaskRef {
        let ev = &self.events[e];
        let (start, start_match) = (ev.start, ev.start_match);
        let r = self.event_task(e, rec, pid);
        let val = number(rec.data, start_match, self.endian).unwrap_or(0);
        let t = self.task_at(r);
        let key = start.and_then(|s| end_start(t, s, rec.ts, val));
        t.last_start = None;
        t.last_event = key;
        r
    }

    /// The start of a pair (trace-cmd's `handle_start_event`).
    fn start_event(&mut self, e: usize, rec: &Record, pid: u64) -> TaskRef {
        let ev = &self.events[e];
        let (end_match, migrate) = (ev.end_match, ev.migrate);
        let r = self.event_task(e, rec, pid);
        let val = number(rec.data, end_match, self.endian).unwrap_or(0);
        let id = self.next_serial();
        let t = self.task_at(r);
        t.starts.push(Start {
            id,
            stack: None,
            event: e,
            ts: rec.ts,
            search: val,
            val,
            cpu: rec.cpu,
            migrate,
        });
        t.last_start = Some(id);
        t.last_event = None;
        r
    }

    fn generic(&mut self, e: usize, rec: &Record, pid: u64) {
        let ev = &self.events[e];
        let (start, end) = (ev.start, ev.end);
        let mut done = false;
        if start.is_some() {
            self.end_event(e, rec, pid);
            done = true;
        }
        if end.is_some() {
            self.start_event(e, rec, pid);
            done = true;
        }
        if done {
            return;
        }
        let t = self.task(pid as i32);
        t.proxy = None;
        t.last_start = None;
        t.last_event = None;
        // trace-cmd's `account_task`: counted per value of the data field.
        let ev = &self.events[e];
        let mut owner = TaskRef::Pid(pid as i32);
        if let Some(f) = ev.pid_field {
            let other = TaskRef::Pid(number(rec.data, Some(f), self.endian).unwrap_or(0) as i32);
            self.task(pid as i32).proxy = Some(other);
            owner = other;
        }
        let val = number(rec.data, self.events[e].data_field, self.endian).unwrap_or(0);
        let t = self.task_at(owner);
        t.entries.entry((e, val, val)).or_default().times.count += 1;
        t.last_event = Some((e, val, val));
    }

    fn switch(&mut self, e: usize, rec: &Record) {
        let endian = self.endian;
        let ev = self.events[e].clone();
        let prev_pid = number(rec.data, ev.pid_field, endian).unwrap_or(0);
        let prev_state = number(rec.data, ev.data_field, endian).unwrap_or(0) & 1023;
        let next_pid = number(rec.data, ev.end_match, endian).unwrap_or(0);
        let (prev_comm, next_comm) = (self.switch_prev_comm, self.switch_next_comm);
        let id = self.next_serial();
        let task = self.task(prev_pid as i32);
        if task.comm.is_none() {
            task.comm = prev_comm.map(|f| text(rec.data, f));
        }
        task.sleeping = prev_state != 0;
        task.starts.push(Start {
            id,
            stack: None,
            event: e,
            ts: rec.ts,
            search: prev_pid,
            val: prev_state,
            cpu: rec.cpu,
            migrate: ev.migrate,
        });
        task.last_start = Some(id);
        task.last_event = None;
        let task = self.task(next_pid as i32);
        if task.comm.is_none() {
            task.comm = next_comm.map(|f| text(rec.data, f));
        }
        if let Some(w) = ev.start {
            end_start(task, w, rec.ts, next_pid);
        }
        end_start(task, e, rec.ts, next_pid);
    }

    fn wakeup(&mut self, e: usize, rec: &Record, waker: u64) {
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
            // The stack that follows belongs to nothing.
            let w = self.task(waker as i32);
            w.proxy = None;
            w.last_start = None;
            w.last_event = None;
            return;
        }
        task.sleeping = false;
        // The stack that follows is the woken task's.
        self.task(waker as i32).proxy = Some(TaskRef::Pid(pid as i32));
        let id = self.next_serial();
        let task = self.task(pid as i32);
        if let Some(s) = ev.start {
            end_start(task, s, rec.ts, pid);
        }
        task.starts.push(Start {
            id,
            stack: None,
            event: e,
            ts: rec.ts,
            search: pid,
            val: pid,
            cpu: rec.cpu,
            migrate: ev.migrate,
        });
        task.last_event = None;
        task.last_start = Some(id);
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
        let (groups, merged) = self.groups();
        for (comm, g) in &groups {
            write!(out, "\ngroup: {comm}\n")?;
            self.write_entries(g, catalog, out)?;
        }
        let mut pids: Vec<i32> = self
            .tasks
            .keys()
            .copied()
            .filter(|p| !merged.contains(p))
            .collect();
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
                    // trace-cmd leaves equal switch states and all wakeup entries in its
                    // hash order (see the module's notes): here by value, then search key.
                    Kind::Switch | Kind::Wakeup => a.2.cmp(&b.2).then(a.1.cmp(&b.1)),
                    _ => da
                        .id
                        .cmp(&db.id)
                        .then(eb.times.total.cmp(&ea.times.total))
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
            line.push_str(&format!(" ({})", en.times.count));
            if en.times.total != 0 {
                let sec = |ts: u64| ts / 1_000_000_000;
                let usec = |ts: u64| ((ts % 1_000_000_000) + 500) / 1000;
                line.push_str(&format!(
                    " Total: {} Avg: {} Max: {}(ts:{}.{:06}) Min:{}(ts:{}.{:06})",
                    en.times.total,
                    en.times.total / en.times.count.max(1),
                    en.times.max,
                    sec(en.times.ts_max),
                    usec(en.times.ts_max),
                    en.times.min,
                    sec(en.times.ts_min),
                    usec(en.times.ts_min)
                ));
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
            en.stacks.write(self.layout, catalog, out)?;
        }
        Ok(())
    }
}

/// The bucket of trace-cmd's 1024-bucket task table that holds `pid` (its `trace_hash`).
fn task_bucket(pid: i32) -> u32 {
    super::mem::trace_hash(pid as u32) & 1023
}

/// End the newest pending start of `event` for `search` in `task`: its time (and its
/// stack, if one came with it) goes to the start's (event, search value, value) entry,
/// whose key is returned.
fn end_start(task: &mut Task, event: usize, ts: u64, search: u64) -> Option<EntryKey> {
    let i = task
        .starts
        .iter()
        .rposition(|s| s.event == event && s.search == search)?;
    let s = task.starts.remove(i);
    if task.last_start == Some(s.id) {
        task.last_start = None;
    }
    let delta = (ts as i64).wrapping_sub(s.ts as i64).max(0) as u64;
    let key = (s.event, s.search, s.val);
    let en = task.entries.entry(key).or_default();
    en.times.add(delta, ts);
    en.last_time = delta;
    if let Some(stack) = s.stack {
        en.stacks.add(&stack.bytes, delta, stack.ts);
    }
    Some(key)
}
