//! Sampling (`perf record`): every event opened on every CPU of the scope, sampled by
//! period or frequency, with one mmap ring per CPU that the CPU's other events share
//! (`PERF_EVENT_IOC_SET_OUTPUT`), as perf does.

use std::io;

use super::data::abi::{read_format, sample};
use super::data::AttrEntry;
use super::ring::{RecordBytes, RingStats};
use super::spec::{EventKind, EventSpec};
use super::stat::{is_unsupported, OpenError};
use super::sys::{
    attr_bytes, new_attr, poll_readable, refused_exclusion, set_event, Counter, PollResult, Ring,
};

/// Where samples are taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordScope {
    /// Every task on these CPUs (`-a`, `-C`).
    Cpus(Vec<u32>),
    /// These threads, on every online CPU (`-p`).
    Threads(Vec<i32>),
    /// A forked command that has not exec'd yet: sampling starts at its exec and
    /// follows its children.
    Command(i32),
}

/// How events are sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleOptions {
    /// `-c`: a sample every N events.
    pub period: Option<u64>,
    /// `-F`: samples per second (ignored with a period; tracepoints default to every hit).
    pub freq: u64,
    /// `-g`, `--call-graph`: how call chains are taken.
    pub call_graph: CallGraph,
    /// Data pages of each ring (a power of two).
    pub ring_pages: usize,
    /// Child tasks are followed (perf's `inherit`; off with `-i` and with `-t`).
    pub inherit: bool,
    /// `-n`: the events count without taking samples (a period of 0).
    pub no_samples: bool,
    /// `--all-user`, `--all-kernel`: every event counts in user or kernel mode only,
    /// whatever its own modifiers say.
    pub only: Option<Mode>,
    /// Sample fields asked for beyond the default ones.
    pub fields: SampleFields,
    /// Guest samples are excluded (perf's default for the events given with `-e`; its
    /// own default event does not set it).
    pub exclude_guest: bool,
    /// `--filter`: a tracepoint filter for the event at this index.
    pub filters: Vec<(usize, String)>,
    /// `--switch-events`: the kernel reports each context switch (PERF_RECORD_SWITCH, or
    /// SWITCH_CPU_WIDE on CPUs).
    pub switch_events: bool,
    /// `-k`: the clock that stamps the samples (`use_clockid`), instead of perf's clock.
    pub clockid: Option<i32>,
    /// `-D`: the events start after the command (or never). As perf does, a `dummy:HG`
    /// event then follows the others and takes the side-band records (maps, comms,
    /// tasks) from the start.
    pub delay: crate::perf::delay::InitialDelay,
    /// `-s/--stat`: per-thread counts (`inherit_stat`, and the enabled and running times
    /// in `read_format`); the kernel writes a PERF_RECORD_READ as each child task exits.
    pub inherit_stat: bool,
    /// `--buildid-mmap`: the kernel puts the build id of each mapped file in its MMAP2
    /// record (`build_id`, on the event that tracks the maps).
    pub buildid_mmap: bool,
    /// `--namespaces`: the kernel reports the namespaces of each new task
    /// (PERF_RECORD_NAMESPACES, on the event that tracks the tasks).
    pub namespaces: bool,
    /// `--all-cgroups`: every sample names its cgroup (PERF_SAMPLE_CGROUP) and the
    /// kernel reports each new cgroup (PERF_RECORD_CGROUP, on the tracking event).
    pub all_cgroups: bool,
    /// `--no-buffering`: the kernel wakes the reader at every sample (`wakeup_events`
    /// 1).
    pub no_buffering: bool,
    /// `--sample-identifier`: every sample and trailer names its event by IDENTIFIER,
    /// with one event too.
    pub sample_identifier: bool,
    /// `--running-time`: the enabled and running times in `read_format`.
    pub running_time: bool,
    /// `--kernel-callchains`, `--user-callchains`: the call chains keep this mode's
    /// frames only (`exclude_callchain_user` or `_kernel`).
    pub callchain_only: Option<Mode>,
    /// The tracking event asks the kernel for the BPF programs loaded while recording
    /// (`bpf_event`); off with `--no-bpf-event`.
    pub bpf_events: bool,
    /// `--per-thread`: a task scope (not CPUs) is sampled with one counter and one ring
    /// per thread on any CPU (cpu -1) instead of one per CPU; as perf, the tasks' children
    /// are not followed and the samples carry no time unless `sample_time` asks for it
    /// (tracepoints keep theirs). Ignored for a scope of CPUs, as perf ignores it there.
    pub per_thread: bool,
    /// `-T`: the samples carry their time even where perf would leave it out
    /// (`--per-thread`).
    pub sample_time: bool,
    /// `--overwrite`: the events write their rings backward (`write_backward`), which
    /// keep the newest records, read once the events stop.
    pub overwrite: bool,
}

impl SampleOptions {
    /// perf record's defaults: `-F 4000`, no call chains, 128 ring pages, inherited.
    pub fn new() -> SampleOptions {
        SampleOptions {
            period: None,
            freq: 4000,
            call_graph: CallGraph::None,
            ring_pages: 128,
            inherit: true,
            no_samples: false,
            only: None,
            fields: SampleFields::default(),
            exclude_guest: false,
            clockid: None,
            delay: crate::perf::delay::InitialDelay::Now,
            inherit_stat: false,
            buildid_mmap: false,
            namespaces: false,
            all_cgroups: false,
            no_buffering: false,
            sample_identifier: false,
            running_time: false,
            callchain_only: None,
            bpf_events: true,
            per_thread: false,
            sample_time: false,
            overwrite: false,
            filters: Vec::new(),
            switch_events: false,
        }
    }
}

impl Default for SampleOptions {
    fn default() -> SampleOptions {
        SampleOptions::new()
    }
}

/// The mode `--all-user` or `--all-kernel` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `--all-user`: exclude_kernel set, exclude_user cleared.
    User,
    /// `--all-kernel`: exclude_user set, exclude_kernel cleared.
    Kernel,
}

/// Sample fields perf record adds on request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleFields {
    /// `-d`: the data address (PERF_SAMPLE_ADDR) with its source (DATA_SRC), and the
    /// data mappings recorded (`mmap_data`) to resolve it.
    pub addr: bool,
    /// `--sample-cpu`: PERF_SAMPLE_CPU.
    pub cpu: bool,
    /// `-P`: PERF_SAMPLE_PERIOD with a fixed period too.
    pub period: bool,
    /// `-R`: PERF_SAMPLE_RAW (with CPU, as perf adds it).
    pub raw: bool,
    /// `--intr-regs`: PERF_SAMPLE_REGS_INTR of these registers (a `PERF_REG_*` mask).
    pub intr_regs: Option<u64>,
    /// `--user-regs`: PERF_SAMPLE_REGS_USER of these registers (a `PERF_REG_*` mask).
    pub user_regs: Option<u64>,
    /// `-W`: PERF_SAMPLE_WEIGHT_STRUCT.
    pub weight: bool,
    /// `--phys-data`: PERF_SAMPLE_PHYS_ADDR.
    pub phys_addr: bool,
    /// `--data-page-size`: PERF_SAMPLE_DATA_PAGE_SIZE.
    pub data_page_size: bool,
    /// `--code-page-size`: PERF_SAMPLE_CODE_PAGE_SIZE.
    pub code_page_size: bool,
}

/// How call chains are taken (`-g`, `--call-graph MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallGraph {
    /// No call chains.
    #[default]
    None,
    /// `fp`: the kernel walks the frame pointers of the kernel and user stacks.
    FramePointer,
    /// `dwarf[,SIZE]`: the kernel walks the kernel stack; each sample also carries the
    /// user registers and `stack_size` bytes of user stack, unwound when the file is read
    /// ([`crate::perf::unwind`]).
    Dwarf {
        /// Bytes of user stack copied per sample (a multiple of 8).
        stack_size: u32,
    },
}

/// A `--call-graph` value perf would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallGraphError {
    /// Not `fp`, `dwarf` or `lbr`.
    UnknownMode(String),
    /// `lbr` needs a CPU's last branch records.
    Lbr,
    /// A `dwarf,SIZE` whose size is not a number, is 0, or is above the most the kernel
    /// copies.
    StackSize(String),
}

impl std::fmt::Display for CallGraphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallGraphError::UnknownMode(m) => {
                write!(
                    f,
                    "--call-graph {m}: unknown mode (use fp, or dwarf[,SIZE])"
                )
            }
            CallGraphError::Lbr => write!(
                f,
                "--call-graph lbr: needs the last branch records of an Intel CPU's hardware \
                 counters, which this machine does not have (use fp or dwarf)"
            ),
            CallGraphError::StackSize(s) => write!(
                f,
                "--call-graph dwarf,{s}: incorrect stack dump size (give bytes, at most {})",
                CallGraph::MAX_STACK_SIZE
            ),
        }
    }
}

impl std::error::Error for CallGraphError {}

impl CallGraph {
    /// perf's default stack copy for `dwarf`.
    pub const DEFAULT_STACK_SIZE: u32 = 8192;
    /// The largest stack copy: the kernel takes less than 64 KiB, a multiple of 8.
    pub const MAX_STACK_SIZE: u32 = 65528;

    /// Parse a `--call-graph` value as perf does: `fp`, `dwarf`, or `dwarf,SIZE` with
    /// SIZE in bytes (`0x` hex and leading-0 octal too, as C's `strtoul`), rounded up
    /// to a multiple of 8.
    pub fn parse(value: &str) -> Result<CallGraph, CallGraphError> {
        let mut parts = value.splitn(2, ',');
        let mode = parts.next().unwrap_or("");
        let size = parts.next();
        match (mode, size) {
            ("fp", None) => Ok(CallGraph::FramePointer),
            ("dwarf", None) => Ok(CallGraph::Dwarf {
                stack_size: CallGraph::DEFAULT_STACK_SIZE,
            }),
            ("dwarf", Some(s)) => {
                let bad = || CallGraphError::StackSize(s.to_string());
                let (digits, radix) =
                    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                        (h, 16)
                    } else if s.len() > 1 && s.starts_with('0') {
                        (&s[1..], 8)
                    } else {
                        (s, 10)
                    };
                let n = u64::from_str_radix(digits, radix).map_err(|_| bad())?;
                let n = n.checked_add(7).ok_or_else(bad)? / 8 * 8;
                if n == 0 || n > u64::from(CallGraph::MAX_STACK_SIZE) {
                    return Err(bad());
                }
                Ok(CallGraph::Dwarf {
                    stack_size: n as u32,
                })
            }
            ("lbr", _) => Err(CallGraphError::Lbr),
            _ => Err(CallGraphError::UnknownMode(value.to_string())),
        }
    }
}

/// A session that could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum RecordOpenError {
    /// An event could not be opened.
    Open(OpenError),
    /// The kernel refused a tracepoint's filter (`--filter`).
    Filter {
        /// The event as named on the command line.
        event: String,
        /// The filter as given.
        filter: String,
        /// The kernel's error (EINVAL for a filter it cannot parse).
        source: io::Error,
    },
}

impl From<OpenError> for RecordOpenError {
    fn from(e: OpenError) -> RecordOpenError {
        RecordOpenError::Open(e)
    }
}

impl std::fmt::Display for RecordOpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordOpenError::Open(e) => e.fmt(f),
            RecordOpenError::Filter {
                event,
                filter,
                source,
            } => write!(
                f,
                "failed to set filter \"{filter}\" on event {event}: {source} (the kernel \
                 refused it: check the field names in the event's format file, and the \
                 filter's syntax)"
            ),
        }
    }
}

impl std::error::Error for RecordOpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordOpenError::Open(e) => Some(e),
            RecordOpenError::Filter { source, .. } => Some(source),
        }
    }
}

/// One event as opened, with the name perf gives it (after a fallback).
#[derive(Debug, Clone)]
pub struct OpenedEvent {
    /// The name as perf prints it (`cpu-clock:ppp` for `cycles:P` on a machine without a
    /// hardware PMU).
    pub name: String,
    /// Whether it is a tracepoint (its samples carry the raw ftrace record).
    pub tracepoint: bool,
    /// Index of its group's leader (itself when it leads or is alone).
    pub leader: usize,
}

/// A sampling session.
#[derive(Debug)]
pub struct RecordSession {
    counters: Vec<Counter>,
    /// The event (index into `attrs`) of each counter.
    event_of: Vec<usize>,
    /// Whether each event's counters read their lost samples.
    reads_lost: Vec<bool>,
    rings: Vec<Ring>,
    attrs: Vec<AttrEntry>,
    events: Vec<OpenedEvent>,
    sample_type: u64,
    maps_data: bool,
    delay: crate::perf::delay::InitialDelay,
    /// The counters' reads carry the enabled and running times (`-s`).
    read_times: bool,
    /// Where each id's counter is, for perf's ID_INDEX, event by event.
    id_slots: Vec<IdSlot>,
    /// The threads the counters are opened on (-1 for all of them).
    threads: Vec<i32>,
    /// The CPUs the counters are opened on (-1 for any, per thread).
    cpus: Vec<i32>,
    /// `--overwrite`: the rings are backward ones, read at the end.
    overwrite: bool,
}

/// One counter of a session, as perf's ID_INDEX record lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSlot {
    /// The counter's id.
    pub id: u64,
    /// The ring its records go to.
    pub ring: u64,
    /// Its CPU (-1 for any).
    pub cpu: i32,
    /// Its thread (-1 for all).
    pub tid: i32,
}

/// perf's modifier suffix for an event whose name it rebuilds from its attr
/// (`evsel__add_modifiers`): when a mode is excluded, a letter for each mode that is not
/// (`k`, `u`, `h`), then the `p`s: `:u` for `cycles:u`, `:uh` under `--all-user`.
fn modifier_suffix(attr: &super::sys::RawAttr) -> String {
    let mut m = String::new();
    let (k, u, h) = (
        attr.exclude_kernel() != 0,
        attr.exclude_user() != 0,
        attr.exclude_hv() != 0,
    );
    if k || u || h {
        for (excluded, letter) in [(k, 'k'), (u, 'u'), (h, 'h')] {
            if !excluded {
                m.push(letter);
            }
        }
    }
    for _ in 0..attr.precise_ip() {
        m.push('p');
    }
    if m.is_empty() {
        m
    } else {
        format!(":{m}")
    }
}

impl RecordSession {
    /// Open every event on every slot of `scope`, disabled (a command's start at its
    /// exec; the others at [`RecordSession::enable`]). `cycles` falls back to `cpu-clock`
    /// where the hardware event does not exist, as perf does.
    pub fn open(
        events: &[EventSpec],
        opts: &SampleOptions,
        scope: &RecordScope,
        online: &[u32],
    ) -> Result<RecordSession, RecordOpenError> {
        // As perf: a delayed or system-wide recording tracks mappings and tasks with a
        // dummy event of its own (on CPUs it runs from the start, before the events are
        // enabled, while the running processes are synthesized).
        let tracking_dummy = opts.delay.is_delayed() || matches!(scope, RecordScope::Cpus(_));
        let with_dummy;
        let events = if tracking_dummy {
            let mut v = events.to_vec();
            v.push(EventSpec {
                name: "dummy:HG".into(),
                kind: EventKind::Software(super::spec::SW_DUMMY),
                exclude_user: false,
                exclude_kernel: false,
                exclude_hv: false,
                precise: 0,
                exclude_guest: false,
                exclude_host: false,
                leader: events.len(),
                through_pmu: false,
            });
            with_dummy = v;
            &with_dummy[..]
        } else {
            events
        };
        let per_thread = opts.per_thread && !matches!(scope, RecordScope::Cpus(_));
        let online: Vec<i32> = match per_thread {
            true => vec![-1],
            false => online.iter().map(|&c| c as i32).collect(),
        };
        let (pids, cpus): (Vec<i32>, Vec<i32>) = match scope {
            RecordScope::Cpus(c) => (vec![-1], c.iter().map(|&c| c as i32).collect()),
            RecordScope::Threads(t) => (t.clone(), online),
            RecordScope::Command(p) => (vec![*p], online),
        };
        // PERIOD is per event: with a frequency, with -P, and on tracepoints.
        let mut sample_type = sample::IP | sample::TID;
        // As perf: per-thread samples are not stamped unless -T asks (a tracepoint's
        // are, below).
        if !per_thread || opts.sample_time {
            sample_type |= sample::TIME;
        }
        if opts.call_graph != CallGraph::None {
            sample_type |= sample::CALLCHAIN;
        }
        if let CallGraph::Dwarf { .. } = opts.call_graph {
            sample_type |= sample::REGS_USER | sample::STACK_USER;
        }
        if opts.fields.addr {
            sample_type |= sample::ADDR | sample::DATA_SRC;
        }
        if opts.fields.raw {
            sample_type |= sample::RAW;
        }
        let f = &opts.fields;
        for (on, bit) in [
            (f.intr_regs.is_some(), sample::REGS_INTR),
            (f.user_regs.is_some(), sample::REGS_USER),
            (f.weight, sample::WEIGHT_STRUCT),
            (f.phys_addr, sample::PHYS_ADDR),
            (f.data_page_size, sample::DATA_PAGE_SIZE),
            (f.code_page_size, sample::CODE_PAGE_SIZE),
        ] {
            if on {
                sample_type |= bit;
            }
        }
        if matches!(scope, RecordScope::Cpus(_)) || opts.fields.cpu || opts.fields.raw {
            sample_type |= sample::CPU;
        }
        if opts.all_cgroups {
            sample_type |= sample::CGROUP;
        }
        // What each event adds to the common sample type: PERIOD with a frequency and
        // with -P; RAW, CPU and PERIOD on tracepoints (CPU is in the records' id trailer
        // too, so the trailers of a tracepoint's records are longer than another
        // event's: a reader tells them apart by the IDENTIFIER at their end).
        let own_bits = |i: usize, e: &EventSpec| {
            let tracepoint = matches!(e.kind, EventKind::Tracepoint { .. });
            let dummy = tracking_dummy && i == events.len() - 1;
            let mut bits = 0;
            if tracepoint {
                bits |= sample::RAW | sample::CPU | sample::PERIOD | sample::TIME;
            }
            if opts.fields.period
                || (!dummy && !tracepoint && !e.kind.samples_every_hit() && opts.period.is_none())
            {
                bits |= sample::PERIOD;
            }
            bits
        };
        // As perf: with several events, each sample names its event, by ID when every
        // event samples the same fields, else by IDENTIFIER (first in a sample, last in
        // a trailer, so a reader finds it without knowing the event).
        if opts.sample_identifier {
            sample_type |= sample::IDENTIFIER;
        } else if events.len() > 1 {
            let first = own_bits(0, &events[0]);
            let same = events
                .iter()
                .enumerate()
                .all(|(i, e)| own_bits(i, e) == first);
            sample_type |= if same { sample::ID } else { sample::IDENTIFIER };
        }
        let first_sample_type = sample_type | events.first().map_or(0, |e| own_bits(0, e));
        let mut s = RecordSession {
            counters: Vec::new(),
            event_of: Vec::new(),
            reads_lost: Vec::new(),
            rings: Vec::new(),
            attrs: Vec::new(),
            events: Vec::new(),
            sample_type: first_sample_type,
            maps_data: matches!(opts.call_graph, CallGraph::Dwarf { .. }) || opts.fields.addr,
            delay: opts.delay,
            read_times: opts.inherit_stat || opts.running_time,
            id_slots: Vec::new(),
            threads: pids.clone(),
            cpus: cpus.clone(),
            overwrite: opts.overwrite,
        };
        // The ring of each CPU (of each thread, per thread): an index into `counters`.
        let mut ring_of: Vec<Option<usize>> = vec![None; cpus.len().max(pids.len())];
        // Where each event's counters start in `counters` (every event has one per slot,
        // in the same order, so a member finds its leader's at the same offset).
        let mut first_counter: Vec<usize> = Vec::with_capacity(events.len());
        for (i, e) in events.iter().enumerate() {
            first_counter.push(s.counters.len());
            let leads = e.leader == i;
            let mut kind = e.kind.clone();
            let mut name = e.name.clone();
            let tracepoint = matches!(kind, EventKind::Tracepoint { .. });
            let mut ids = Vec::new();
            let mut slots = Vec::new();
            // read_format LOST (Linux 6.0) counts every dropped sample; without it, only
            // the ring's LOST records tell.
            let mut lost_fmt = true;
            // perf's fallback for PMUs that take no exclusion bits (msr).
            let mut exclude_guest_host = true;
            let attr = 'fallback: loop {
                let mut attr = new_attr();
                set_event(&mut attr, &kind);
                attr.sample_type = sample_type | own_bits(i, e);
                attr.read_format = read_format::ID | if lost_fmt { read_format::LOST } else { 0 };
                if opts.inherit_stat || opts.running_time {
                    attr.read_format |=
                        read_format::TOTAL_TIME_ENABLED | read_format::TOTAL_TIME_RUNNING;
                }
                if opts.inherit_stat {
                    attr.set_inherit_stat(1);
                }
                if opts.no_buffering {
                    attr.__bindgen_anon_2.wakeup_events = 1;
                }
                if opts.call_graph != CallGraph::None {
                    match opts.callchain_only {
                        Some(Mode::Kernel) => attr.set_exclude_callchain_user(1),
                        Some(Mode::User) => attr.set_exclude_callchain_kernel(1),
                        None => {}
                    }
                }
                let dummy = tracking_dummy && i == events.len() - 1;
                match (opts.period, tracepoint || kind.samples_every_hit()) {
                    _ if dummy => attr.__bindgen_anon_1.sample_period = 1,
                    (Some(p), _) => attr.__bindgen_anon_1.sample_period = p,
                    (None, true) => attr.__bindgen_anon_1.sample_period = 1,
                    (None, false) => {
                        attr.set_freq(1);
                        attr.__bindgen_anon_1.sample_freq = opts.freq;
                    }
                }
                if opts.no_samples {
                    // perf's -n: the period (or frequency) is 0, so nothing is sampled.
                    attr.__bindgen_anon_1.sample_period = 0;
                }
                // A group starts and stops with its leader. The tracking dummy of a
                // delayed recording on CPUs runs from the start.
                let command = matches!(scope, RecordScope::Command(_));
                attr.set_disabled(u64::from(leads && (command || !dummy)));
                attr.set_inherit(u64::from(opts.inherit));
                let (mut exclude_user, mut exclude_kernel) = (e.exclude_user, e.exclude_kernel);
                match opts.only {
                    Some(Mode::User) => (exclude_user, exclude_kernel) = (false, true),
                    Some(Mode::Kernel) => (exclude_user, exclude_kernel) = (true, false),
                    None => {}
                }
                attr.set_exclude_user(u64::from(exclude_user));
                attr.set_exclude_kernel(u64::from(exclude_kernel));
                attr.set_exclude_hv(u64::from(e.exclude_hv));
                attr.set_exclude_guest(u64::from(
                    opts.exclude_guest && e.exclude_guest && !dummy && exclude_guest_host,
                ));
                attr.set_exclude_host(u64::from(e.exclude_host && exclude_guest_host));
                attr.set_precise_ip(u64::from(e.precise));
                attr.set_sample_id_all(1);
                attr.set_write_backward(u64::from(opts.overwrite));
                if let Some(id) = opts.clockid {
                    attr.set_use_clockid(1);
                    attr.clockid = id;
                }
                if let Some(mask) = opts.fields.intr_regs {
                    attr.sample_regs_intr = mask;
                }
                if let Some(mask) = opts.fields.user_regs {
                    attr.sample_regs_user = mask;
                }
                if let CallGraph::Dwarf { stack_size } = opts.call_graph {
                    // The kernel part of the chain only; the user part is unwound from
                    // the registers and the stack copy.
                    attr.sample_regs_user |= super::unwind::X86_64_USER_REGS;
                    attr.sample_stack_user = stack_size;
                    attr.set_exclude_callchain_user(1);
                }
                // With -D, only the tracking dummy starts with the command.
                if command {
                    attr.set_enable_on_exec(u64::from(leads && (dummy || !tracking_dummy)));
                }
                if dummy || (i == 0 && !tracking_dummy) {
                    attr.set_mmap(1);
                    attr.set_mmap2(1);
                    attr.set_comm(1);
                    attr.set_comm_exec(1);
                    attr.set_task(1);
                    attr.set_context_switch(u64::from(opts.switch_events));
                    // BPF programs loaded (and unloaded) while recording: their symbols
                    // and ids, as perf asks on its tracking event.
                    attr.set_ksymbol(1);
                    attr.set_bpf_event(u64::from(opts.bpf_events));
                    attr.set_build_id(u64::from(opts.buildid_mmap));
                    attr.set_namespaces(u64::from(opts.namespaces));
                    attr.set_cgroup(u64::from(opts.all_cgroups));
                    // perf's choice for dwarf call graphs: the unwinder reads the call
                    // frame tables through the process's readable mappings too.
                    attr.set_mmap_data(u64::from(s.maps_data));
                }
                for (ci, &cpu) in cpus.iter().enumerate() {
                    for (pi, &pid) in pids.iter().enumerate() {
                        let slot = ci * pids.len() + pi;
                        let group = (!leads)
                            .then(|| first_counter.get(e.leader).map(|f| &s.counters[f + slot]))
                            .flatten();
                        let ring = if per_thread { pi } else { ci };
                        let c = match Counter::open(&attr, pid, cpu, group) {
                            Ok(c) => c,
                            Err(err)
                                if err.raw_os_error() == Some(libc::EINVAL)
                                    && lost_fmt
                                    && ids.is_empty() =>
                            {
                                lost_fmt = false;
                                continue 'fallback;
                            }
                            Err(err)
                                if exclude_guest_host
                                    && refused_exclusion(&err, &attr)
                                    && ids.is_empty() =>
                            {
                                exclude_guest_host = false;
                                continue 'fallback;
                            }
                            Err(err)
                                if is_unsupported(&err)
                                    && kind == EventKind::Hardware(0)
                                    && ids.is_empty() =>
                            {
                                // perf's fallback: cycles -> cpu-clock, same modifiers.
                                kind = EventKind::Software(super::spec::SW_CPU_CLOCK);
                                name = format!("cpu-clock{}", modifier_suffix(&attr));
                                continue 'fallback;
                            }
                            Err(source) => {
                                return Err(RecordOpenError::Open(OpenError {
                                    event: e.name.clone(),
                                    slot: match (pid, cpu) {
                                        (-1, _) => format!("CPU{cpu}"),
                                        (_, -1) => format!("task {pid}"),
                                        _ => format!("CPU{cpu} for task {pid}"),
                                    },
                                    source,
                                }))
                            }
                        };
                        if let Some((_, filter)) = opts.filters.iter().find(|(k, _)| *k == i) {
                            c.set_filter(filter)
                                .map_err(|source| RecordOpenError::Filter {
                                    event: e.name.clone(),
                                    filter: filter.clone(),
                                    source,
                                })?;
                        }
                        let wrap = |source: io::Error| OpenError {
                            event: name.clone(),
                            slot: match cpu {
                                -1 => format!("task {pid}"),
                                _ => format!("CPU{cpu}"),
                            },
                            source,
                        };
                        let id = c.id().map_err(wrap)?;
                        ids.push(id);
                        slots.push(IdSlot {
                            id,
                            ring: ring as u64,
                            cpu,
                            tid: pid,
                        });
                        match ring_of[ring] {
                            None => {
                                s.rings.push(
                                    c.map_ring_as(opts.ring_pages, opts.overwrite)
                                        .map_err(wrap)?,
                                );
                                ring_of[ring] = Some(s.counters.len());
                            }
                            Some(r) => c.set_output(&s.counters[r]).map_err(wrap)?,
                        }
                        s.counters.push(c);
                        s.event_of.push(i);
                    }
                }
                break attr;
            };
            s.id_slots.extend(slots);
            s.attrs.push(AttrEntry {
                attr: attr_bytes(&attr),
                ids,
                name: name.clone(),
            });
            s.events.push(OpenedEvent {
                name,
                tracepoint,
                leader: e.leader,
            });
            s.reads_lost.push(lost_fmt);
        }
        Ok(s)
    }

    /// The attrs with their ids, for the file.
    pub fn attrs(&self) -> &[AttrEntry] {
        &self.attrs
    }

    /// Every counter's id with its ring, CPU and thread, event by event (perf's
    /// ID_INDEX).
    pub fn id_slots(&self) -> &[IdSlot] {
        &self.id_slots
    }

    /// The threads the counters are opened on, -1 meaning all (perf's THREAD_MAP).
    pub fn threads(&self) -> &[i32] {
        &self.threads
    }

    /// The CPUs the counters are opened on, -1 meaning any (perf's CPU_MAP).
    pub fn cpus(&self) -> &[i32] {
        &self.cpus
    }

    /// The events as opened.
    pub fn events(&self) -> &[OpenedEvent] {
        &self.events
    }

    /// The groups of more than one event: (leader index, number of members).
    pub fn groups(&self) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for (i, _) in self
            .events
            .iter()
            .enumerate()
            .filter(|(i, e)| e.leader == *i)
        {
            let n = self.events.iter().filter(|e| e.leader == i).count() as u32;
            if n > 1 {
                v.push((i as u32, n));
            }
        }
        v
    }

    /// Whether the readable mappings are recorded too, not only the executable ones
    /// (perf's `mmap_data`, with `--call-graph dwarf`).
    pub fn maps_data(&self) -> bool {
        self.maps_data
    }

    /// The first event's sample type: the one its side-band records (and those
    /// synthesized for the file) are written with. The others differ at most by PERIOD,
    /// RAW and CPU.
    pub fn sample_type(&self) -> u64 {
        self.sample_type
    }

    /// Start sampling.
    pub fn enable(&self) -> io::Result<()> {
        self.counters.iter().try_for_each(|c| c.enable())
    }

    /// `-D`: when the events start (see [`SampleOptions::delay`]).
    pub fn delay(&self) -> crate::perf::delay::InitialDelay {
        self.delay
    }

    /// Stop sampling.
    pub fn disable(&self) -> io::Result<()> {
        self.counters.iter().try_for_each(|c| c.disable())
    }

    /// Wait until a ring has passed its wakeup mark, a task ended, or `timeout_ms`.
    pub fn poll(&self, timeout_ms: i32) -> io::Result<PollResult> {
        // Every descriptor, not only the rings' owners: each one hangs up when its own
        // task is gone, and the end is when they all have.
        let fds: Vec<_> = self.counters.iter().map(Counter::raw_fd).collect();
        poll_readable(&fds, timeout_ms)
    }

    /// Samples the kernel dropped, per event (read from its counters; `None` for an event
    /// whose kernel cannot say, where only the rings' LOST records count).
    pub fn lost_per_event(&self) -> io::Result<Vec<Option<u64>>> {
        let mut v: Vec<Option<u64>> = self.reads_lost.iter().map(|&r| r.then_some(0)).collect();
        for (c, &e) in self.counters.iter().zip(&self.event_of) {
            if let Some(total) = v[e].as_mut() {
                *total += c.read_lost(self.read_times)?;
            }
        }
        Ok(v)
    }

    /// Totals over every drain: records, bytes, and what the kernel reported lost.
    pub fn ring_stats(&self) -> RingStats {
        let mut st = RingStats::default();
        for r in &self.rings {
            st.add(&r.stats());
        }
        st
    }

    /// `--overwrite`: whether the rings are backward ones, which
    /// [`RecordSession::read_overwritten`] reads once the events stop (the drains
    /// read nothing from them).
    pub fn overwrite(&self) -> bool {
        self.overwrite
    }

    /// `--overwrite`, once the events are stopped: hand the records every ring kept to
    /// `f`, ring by ring, each ring's newest first (as perf writes them).
    pub fn read_overwritten(&mut self, mut f: impl FnMut(RecordBytes<'_>)) -> RingStats {
        let mut st = RingStats::default();
        for r in &mut self.rings {
            st.add(&r.read_backward(&mut f));
        }
        st
    }

    /// Hand every published record of every ring to `f`, in place.
    pub fn drain(&mut self, f: impl FnMut(RecordBytes<'_>)) -> RingStats {
        self.drain_at_least(1, f).0
    }

    /// Hand the published records of every ring that holds at least `min_bytes` of them
    /// to `f`, in place (perf record's `--mmap-flush`); the others wait for a later
    /// drain. Also returns whether a ring with records was left waiting.
    pub fn drain_at_least(
        &mut self,
        min_bytes: u64,
        mut f: impl FnMut(RecordBytes<'_>),
    ) -> (RingStats, bool) {
        let mut st = RingStats::default();
        let mut waiting = false;
        for r in &mut self.rings {
            match r.published() {
                0 => {}
                n if n < min_bytes => waiting = true,
                _ => st.add(&r.drain(&mut f)),
            }
        }
        (st, waiting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf 6.1's `evsel__add_modifiers` for a name rebuilt from the attr: `cycles:P`
    /// falls back to `cpu-clock:ppp`, and to `cpu-clock:uhppp` under `--all-user` (the
    /// hypervisor is not excluded then); `cycles:u` (hv excluded) to `cpu-clock:u`.
    #[test]
    fn rebuilt_names_follow_the_attr() {
        let attr = |k: u64, u: u64, h: u64, p: u64| {
            let mut a = super::super::sys::new_attr();
            a.set_exclude_kernel(k);
            a.set_exclude_user(u);
            a.set_exclude_hv(h);
            a.set_precise_ip(p);
            a
        };
        assert_eq!(modifier_suffix(&attr(0, 0, 0, 3)), ":ppp");
        assert_eq!(modifier_suffix(&attr(1, 0, 0, 3)), ":uhppp");
        assert_eq!(modifier_suffix(&attr(0, 1, 0, 3)), ":khppp");
        assert_eq!(modifier_suffix(&attr(1, 0, 1, 0)), ":u");
        assert_eq!(modifier_suffix(&attr(0, 1, 1, 0)), ":k");
        assert_eq!(modifier_suffix(&attr(0, 0, 0, 0)), "");
    }

    /// perf 6.1's `get_stack_size`: `dwarf,100` records 104 bytes, `dwarf,0x1000` 4096,
    /// `dwarf,65528` is the most and `dwarf,65529` (65536 once rounded) too much, as are
    /// 0 and trailing text.
    #[test]
    fn call_graph_values_follow_perf() {
        let dwarf = |n| Ok(CallGraph::Dwarf { stack_size: n });
        assert_eq!(CallGraph::parse("fp"), Ok(CallGraph::FramePointer));
        assert_eq!(CallGraph::parse("dwarf"), dwarf(8192));
        assert_eq!(CallGraph::parse("dwarf,100"), dwarf(104));
        assert_eq!(CallGraph::parse("dwarf,0x1000"), dwarf(4096));
        assert_eq!(CallGraph::parse("dwarf,010"), dwarf(8));
        assert_eq!(CallGraph::parse("dwarf,65528"), dwarf(65528));
        for bad in ["65529", "0", "12k", "", "-8"] {
            assert_eq!(
                CallGraph::parse(&format!("dwarf,{bad}")),
                Err(CallGraphError::StackSize(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(CallGraph::parse("lbr"), Err(CallGraphError::Lbr));
        assert!(matches!(
            CallGraph::parse("fp,8"),
            Err(CallGraphError::UnknownMode(_))
        ));
    }
}
