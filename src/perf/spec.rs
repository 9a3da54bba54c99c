//! Event specs as `perf` spells them: `cycles`, `cs`, `L1-dcache-load-misses`, `r1a8`,
//! `sched:sched_switch`, `sched:*`, modifiers (`:u`, `:k`, `:h`, `:p`, `:pp`) and groups
//! (`{cycles,instructions}:u`).
//!
//! Tracepoint names are resolved by the caller (from tracefs `events/<sys>/<name>/id`)
//! through [`TracepointLookup`], so a fixture tree resolves like a live kernel.

use std::fmt;
use std::path::Path;

use super::data::abi::attr_type as types;

/// Hardware events and their `config` (the kernel's `perf_hw_id`), with perf's aliases.
const HARDWARE: &[(&str, u64)] = &[
    ("cpu-cycles", 0),
    ("cycles", 0),
    ("instructions", 1),
    ("cache-references", 2),
    ("cache-misses", 3),
    ("branch-instructions", 4),
    ("branches", 4),
    ("branch-misses", 5),
    ("bus-cycles", 6),
    ("stalled-cycles-frontend", 7),
    ("idle-cycles-frontend", 7),
    ("stalled-cycles-backend", 8),
    ("idle-cycles-backend", 8),
    ("ref-cycles", 9),
];

/// Software events (`perf_sw_ids`), with perf's aliases.
const SOFTWARE: &[(&str, u64)] = &[
    ("cpu-clock", 0),
    ("task-clock", 1),
    ("page-faults", 2),
    ("faults", 2),
    ("context-switches", 3),
    ("cs", 3),
    ("cpu-migrations", 4),
    ("migrations", 4),
    ("minor-faults", 5),
    ("major-faults", 6),
    ("alignment-faults", 7),
    ("emulation-faults", 8),
    ("dummy", 9),
    ("bpf-output", 10),
    ("cgroup-switches", 11),
];

/// `perf_hw_cache_id` names as perf prints them.
const CACHES: &[(&str, u64)] = &[
    ("L1-dcache", 0),
    ("L1-icache", 1),
    ("LLC", 2),
    ("dTLB", 3),
    ("iTLB", 4),
    ("branch", 5),
    ("node", 6),
];

/// `perf_hw_cache_op_id` in perf's singular and plural spellings.
const CACHE_OPS: &[(&str, &str, u64)] = &[
    ("load", "loads", 0),
    ("store", "stores", 1),
    ("prefetch", "prefetches", 2),
];

/// One line of `perf list`: the event's name (with its alias: `context-switches OR cs`)
/// and the kind perf names in brackets (`Software event`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedEvent {
    /// The name as perf lists it.
    pub name: String,
    /// `Hardware event`, `Software event`, `Hardware cache event`, `Raw hardware event
    /// descriptor` or `Tracepoint event`.
    pub kind: &'static str,
}

/// What `perf list [WHAT]` lists: everything, one kind, a glob over the names of every
/// kind (`perf list faults` is `*faults*`), or `sys:event` globs over tracepoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListSelector<'a> {
    /// No argument.
    All,
    /// `hw`, `hardware`.
    Hardware,
    /// `sw`, `software`.
    Software,
    /// `cache`, `hwcache`.
    Cache,
    /// `tracepoint`.
    Tracepoint,
    /// `pmu`: the events PMUs name in sysfs (`msr/tsc/`).
    Pmu,
    /// `sdt`, `metric(s)`, `metricgroup(s)`: kinds tracectl does not open.
    Unsupported,
    /// `sys:event`, each side a glob.
    Tracepoints(&'a str, &'a str),
    /// Anything else, matched as `*TEXT*`.
    Glob(&'a str),
}

impl<'a> ListSelector<'a> {
    /// perf list's reading of one argument.
    pub fn parse(arg: &'a str) -> ListSelector<'a> {
        match arg {
            "hw" | "hardware" => ListSelector::Hardware,
            "sw" | "software" => ListSelector::Software,
            "cache" | "hwcache" => ListSelector::Cache,
            "tracepoint" => ListSelector::Tracepoint,
            "pmu" => ListSelector::Pmu,
            "sdt" | "metric" | "metrics" | "metricgroup" | "metricgroups" => {
                ListSelector::Unsupported
            }
            _ => match arg.split_once(':') {
                Some((sys, ev)) => ListSelector::Tracepoints(sys, ev),
                None => ListSelector::Glob(arg),
            },
        }
    }
}

/// A table of names (`HARDWARE`, `SOFTWARE`) as `perf list` shows it, in config order:
/// each config's first name, with the next one of the same config as its alias.
fn listed(table: &[(&'static str, u64)]) -> Vec<(&'static str, &'static str, u64)> {
    let mut out: Vec<(&str, &str, u64)> = Vec::new();
    for &(name, config) in table {
        match out.last_mut() {
            Some(last) if last.2 == config => last.1 = name,
            _ => out.push((name, "", config)),
        }
    }
    out
}

/// The cache ops each cache has (bit per `perf_hw_cache_op_id`), in `CACHES` order.
const CACHE_OPS_VALID: [u8; 7] = [0b111, 0b101, 0b111, 0b111, 0b001, 0b001, 0b111];

/// The events `perf list` would list for `what` that tracectl can open, in perf 6.1's
/// order and layout: hardware and hardware cache events only where `supported(type,
/// config)` says the kernel opens them (perf asks the kernel the same way), software
/// events, the events PMUs name in sysfs (`pmu_events`, as `(pmu, event)`), the raw
/// descriptors `rNNN` and `PMU/terms/`, and `tracepoints` (systems and events). perf's
/// breakpoints, SDT events and metrics are not listed: tracectl does not take them.
pub fn list_events(
    what: ListSelector<'_>,
    supported: &dyn Fn(u32, u64) -> bool,
    pmu_events: &[(String, String)],
    tracepoints: &[(String, String)],
) -> Vec<ListedEvent> {
    use crate::tracefs::suggest::glob_match as glob;
    let symbols = |table: &[(&'static str, u64)], t: u32, kind, pat: Option<&str>| {
        let mut v: Vec<String> = listed(table)
            .into_iter()
            .filter(|(n, a, _)| pat.map_or(true, |p| glob(p, n) || (!a.is_empty() && glob(p, a))))
            .filter(|&(_, _, config)| supported(t, config))
            .map(|(n, a, _)| {
                if a.is_empty() {
                    n.to_string()
                } else {
                    format!("{n} OR {a}")
                }
            })
            .collect();
        v.sort();
        v.into_iter()
            .map(|name| ListedEvent { name, kind })
            .collect::<Vec<_>>()
    };
    let caches = |pat: Option<&str>| {
        let mut v = Vec::new();
        for (c, &(cache, _)) in CACHES.iter().enumerate() {
            for (op, &(one, many, _)) in CACHE_OPS.iter().enumerate() {
                if CACHE_OPS_VALID[c] & 1 << op == 0 {
                    continue;
                }
                for miss in [false, true] {
                    let name = if miss {
                        format!("{cache}-{one}-misses")
                    } else {
                        format!("{cache}-{many}")
                    };
                    let config = c as u64 | (op as u64) << 8 | u64::from(miss) << 16;
                    if pat.map_or(true, |p| glob(p, &name)) && supported(types::HW_CACHE, config) {
                        v.push(name);
                    }
                }
            }
        }
        v.sort();
        v.into_iter()
            .map(|name| ListedEvent {
                name,
                kind: "Hardware cache event",
            })
            .collect::<Vec<_>>()
    };
    // Sorted as whole `sys:event` names, as perf 6.1 lists them (`fib6:` before `fib:`).
    let tps = |sys: Option<&str>, ev: Option<&str>| {
        let mut v: Vec<String> = tracepoints
            .iter()
            .filter(|(s, e)| sys.map_or(true, |p| glob(p, s)) && ev.map_or(true, |p| glob(p, e)))
            .map(|(s, e)| format!("{s}:{e}"))
            .collect();
        v.sort();
        v.into_iter()
            .map(|name| ListedEvent {
                name,
                kind: "Tracepoint event",
            })
            .collect::<Vec<_>>()
    };
    // A glob matches the whole `pmu/event/` name or the event's own.
    let pmus = |pat: Option<&str>| {
        let mut v: Vec<String> = pmu_events
            .iter()
            .map(|(pmu, ev)| (format!("{pmu}/{ev}/"), ev))
            .filter(|(full, ev)| pat.map_or(true, |p| glob(p, full) || glob(p, ev)))
            .map(|(full, _)| full)
            .collect();
        v.sort();
        v.into_iter()
            .map(|name| ListedEvent {
                name,
                kind: "Kernel PMU event",
            })
            .collect::<Vec<_>>()
    };
    let hw = |p| symbols(HARDWARE, types::HARDWARE, "Hardware event", p);
    let sw = |p| symbols(SOFTWARE, types::SOFTWARE, "Software event", p);
    // perf's tool events: counted by perf itself, listed after the software events.
    let tools = |pat: Option<&str>| {
        TOOL_EVENTS
            .iter()
            .filter(|n| pat.map_or(true, |p| glob(p, n)))
            .map(|n| ListedEvent {
                name: (*n).into(),
                kind: "Tool event",
            })
            .collect::<Vec<_>>()
    };
    let mut out = Vec::new();
    match what {
        ListSelector::All => {
            out.extend(hw(None));
            out.extend(sw(None));
            out.extend(tools(None));
            out.extend(caches(None));
            out.extend(pmus(None));
            out.push(ListedEvent {
                name: "rNNN".into(),
                kind: "Raw hardware event descriptor",
            });
            out.push(ListedEvent {
                name: "cpu/t1=v1[,t2=v2,t3 ...]/modifier".into(),
                kind: "Raw hardware event descriptor",
            });
            out.push(ListedEvent {
                name: "mem:<addr>[/len][:access]".into(),
                kind: "Hardware breakpoint",
            });
            out.extend(tps(None, None));
        }
        ListSelector::Hardware => out.extend(hw(None)),
        ListSelector::Software => {
            out.extend(sw(None));
            out.extend(tools(None));
        }
        ListSelector::Cache => out.extend(caches(None)),
        ListSelector::Tracepoint => out.extend(tps(None, None)),
        ListSelector::Pmu => out.extend(pmus(None)),
        ListSelector::Unsupported => {}
        ListSelector::Tracepoints(s, e) => out.extend(tps(Some(s), Some(e))),
        ListSelector::Glob(g) => {
            let p = format!("*{g}*");
            out.extend(hw(Some(&p)));
            out.extend(sw(Some(&p)));
            out.extend(tools(Some(&p)));
            out.extend(caches(Some(&p)));
            out.extend(pmus(Some(&p)));
            out.extend(tps(None, Some(&p)));
        }
    }
    out
}

/// perf's tool events, in `perf list` order: perf measures them itself (wall time of the
/// run, the workload's user and system CPU time) rather than through the kernel.
pub const TOOL_EVENTS: [&str; 3] = ["duration_time", "user_time", "system_time"];

/// One of perf's tool events, which perf measures itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolEvent {
    /// `duration_time`: the wall time of the run so far, in nanoseconds.
    Duration,
    /// `user_time`: the command's user CPU time (from its rusage once it has ended).
    User,
    /// `system_time`: the command's system CPU time (from its rusage once it has ended).
    System,
}

impl ToolEvent {
    /// The tool event of this name, spelled as perf spells it (case matters).
    pub fn named(name: &str) -> Option<ToolEvent> {
        match name {
            "duration_time" => Some(ToolEvent::Duration),
            "user_time" => Some(ToolEvent::User),
            "system_time" => Some(ToolEvent::System),
            _ => None,
        }
    }
}

/// The software event ids of the two clocks (their counts are nanoseconds).
pub const SW_CPU_CLOCK: u64 = 0;
/// See [`SW_CPU_CLOCK`].
pub const SW_TASK_CLOCK: u64 = 1;
/// `PERF_COUNT_SW_DUMMY`: counts nothing; carries the side-band records of a recording
/// whose events start late (`perf record -D`).
pub const SW_DUMMY: u64 = 9;
/// `PERF_COUNT_SW_BPF_OUTPUT`: samples a BPF program writes (`bpf-output`).
pub const SW_BPF_OUTPUT: u64 = 10;

/// What kind of event a spec names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventKind {
    /// A generalised hardware event (`PERF_TYPE_HARDWARE`).
    Hardware(u64),
    /// A software event (`PERF_TYPE_SOFTWARE`).
    Software(u64),
    /// A hardware cache event: `id | op << 8 | result << 16`.
    HwCache(u64),
    /// A raw PMU event `rNNN`.
    Raw(u64),
    /// A tracepoint, with the id from its tracefs `format`/`id` file.
    Tracepoint {
        /// The event's system.
        system: String,
        /// The event's name.
        name: String,
        /// The kernel's event id.
        id: u64,
    },
    /// A hardware breakpoint (`mem:ADDR[/LEN][:ACCESS]`): counts the accesses to
    /// LEN bytes at ADDR.
    Breakpoint {
        /// `perf_event_attr.bp_addr`.
        addr: u64,
        /// `perf_event_attr.bp_type`: `HW_BREAKPOINT_R` (1), `_W` (2), `_X` (4).
        access: u32,
        /// `perf_event_attr.bp_len`.
        len: u64,
    },
    /// One of perf's tool events (`duration_time`, `user_time`, `system_time`):
    /// opened as the software dummy event, which counts nothing, and given the value
    /// perf measures itself (see [`super::stat::set_tool_counts`]).
    Tool(ToolEvent),
    /// An event of a PMU named through its sysfs directory (`msr/tsc/`): its type and
    /// config words (see [`super::pmu`]).
    Pmu {
        /// The PMU's name.
        pmu: String,
        /// `perf_event_attr.type`.
        type_: u32,
        /// `perf_event_attr.config`.
        config: u64,
        /// `perf_event_attr.config1`.
        config1: u64,
        /// `perf_event_attr.config2`.
        config2: u64,
    },
}

impl EventKind {
    /// `perf_event_attr.type` and `.config`.
    pub fn type_config(&self) -> (u32, u64) {
        match self {
            EventKind::Hardware(c) => (types::HARDWARE, *c),
            EventKind::Software(c) => (types::SOFTWARE, *c),
            EventKind::HwCache(c) => (types::HW_CACHE, *c),
            EventKind::Raw(c) => (types::RAW, *c),
            EventKind::Tracepoint { id, .. } => (types::TRACEPOINT, *id),
            EventKind::Tool(_) => (types::SOFTWARE, SW_DUMMY),
            EventKind::Breakpoint { .. } => (types::BREAKPOINT, 0),
            EventKind::Pmu { type_, config, .. } => (*type_, *config),
        }
    }

    /// `perf_event_attr.config1` and `.config2` (set only by PMU terms).
    pub fn config12(&self) -> (u64, u64) {
        match self {
            EventKind::Pmu {
                config1, config2, ..
            } => (*config1, *config2),
            // bp_addr and bp_len share the words of config1 and config2.
            EventKind::Breakpoint { addr, len, .. } => (*addr, *len),
            _ => (0, 0),
        }
    }

    /// Whether perf samples every occurrence by default (a period of 1, not a
    /// frequency): tracepoints and breakpoints.
    pub fn samples_every_hit(&self) -> bool {
        matches!(
            self,
            EventKind::Tracepoint { .. } | EventKind::Breakpoint { .. }
        )
    }

    /// Whether this is `cpu-clock` or `task-clock`, whose counts are nanoseconds.
    pub fn is_clock(&self) -> bool {
        matches!(self, EventKind::Software(SW_CPU_CLOCK | SW_TASK_CLOCK))
    }
}

/// One event of an event list, with its modifiers and its place in a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    /// The name as perf prints it: as typed, with the event's own modifiers.
    pub name: String,
    /// What it counts.
    pub kind: EventKind,
    /// `:k` or `:h` without `u`.
    pub exclude_user: bool,
    /// `:u` or `:h` without `k`.
    pub exclude_kernel: bool,
    /// Set unless `:h` is given alongside `:u`/`:k` (perf excludes the hypervisor then).
    pub exclude_hv: bool,
    /// The number of `p`s (precise_ip).
    pub precise: u8,
    /// perf's exclude_guest: set for an event without modifiers, and by `u` or `p` in
    /// its modifiers unless `G` is among them (`H` sets it too).
    pub exclude_guest: bool,
    /// perf's exclude_host: `G` (guest only) without `H` in the modifiers.
    pub exclude_host: bool,
    /// Index of this event's group leader in the list (itself when it leads or is alone).
    pub leader: usize,
    /// Spelled `PMU/terms/`: perf gives it no unit or scale of its own, so a software
    /// clock named that way counts in nanoseconds rather than msec.
    pub through_pmu: bool,
}

/// An event list that could not be understood.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// The text is not an event perf knows.
    Unknown {
        /// The event text.
        event: String,
    },
    /// A tracepoint name or glob that matches nothing.
    NoTracepoint {
        /// The event text.
        event: String,
        /// Why (from the lookup), with suggestions where there are any.
        reason: String,
    },
    /// A modifier letter perf does not accept.
    BadModifier {
        /// The event text.
        event: String,
        /// The modifier text.
        modifier: String,
    },
    /// A `PMU/terms/` event that its PMU's sysfs directory does not allow.
    Pmu {
        /// The event text.
        event: String,
        /// Why.
        error: super::pmu::PmuError,
    },
    /// Unbalanced braces or an empty element.
    Syntax {
        /// The whole list.
        list: String,
        /// What is wrong.
        what: String,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Unknown { event } => write!(
                f,
                "event '{event}' is not a hardware, software, cache, raw (rNNN) or tracepoint (system:event) event"
            ),
            SpecError::NoTracepoint { event, reason } => {
                write!(f, "event '{event}': {reason}")
            }
            SpecError::BadModifier { event, modifier } => write!(
                f,
                "event '{event}': modifier ':{modifier}' is not one of u, k, h, p, pp, ppp"
            ),
            SpecError::Pmu { event, error } => write!(f, "event '{event}': {error}"),
            SpecError::Syntax { list, what } => write!(f, "event list '{list}': {what}"),
        }
    }
}

impl std::error::Error for SpecError {}

/// Resolves `system:name` (globs allowed in either part) to `(system, name, id)` triples.
pub trait TracepointLookup {
    /// The tracepoints a pattern names, in a stable order, or why there are none.
    fn tracepoints(&self, pattern: &str) -> Result<Vec<(String, String, u64)>, String>;
}

impl<F: Fn(&str) -> Result<Vec<(String, String, u64)>, String>> TracepointLookup for F {
    fn tracepoints(&self, pattern: &str) -> Result<Vec<(String, String, u64)>, String> {
        self(pattern)
    }
}

/// Parse one `-e` argument (a comma list of events and `{...}` groups) and append its
/// events to `out`.
pub fn parse_event_list(
    list: &str,
    lookup: &dyn TracepointLookup,
    out: &mut Vec<EventSpec>,
) -> Result<(), SpecError> {
    let syntax = |what: &str| SpecError::Syntax {
        list: list.to_string(),
        what: what.to_string(),
    };
    for item in split_top(list).ok_or_else(|| syntax("unbalanced { }"))? {
        let item = item.trim();
        if item.is_empty() {
            return Err(syntax("empty event between commas"));
        }
        if let Some(rest) = item.strip_prefix('{') {
            let close = rest.rfind('}').ok_or_else(|| syntax("unbalanced { }"))?;
            let (inner, after) = (&rest[..close], &rest[close + 1..]);
            let group_mods = match after.strip_prefix(':') {
                Some(m) => Some(m),
                None if after.is_empty() => None,
                None => return Err(syntax("text after a group's '}' must be ':modifiers'")),
            };
            let leader = out.len();
            let members = split_top(inner).ok_or_else(|| syntax("unbalanced { }"))?;
            for member in members {
                let member = member.trim();
                if member.is_empty() {
                    return Err(syntax("empty event in a group"));
                }
                let before = out.len();
                parse_one(member, lookup, out)?;
                for e in &mut out[before..] {
                    e.leader = leader;
                    if let Some(m) = group_mods {
                        apply_modifiers(e, m, member)?;
                    }
                }
            }
        } else {
            parse_one(item, lookup, out)?;
        }
    }
    Ok(())
}

/// Split on commas outside braces; `None` when braces do not balance.
fn split_top(s: &str) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    // Between the slashes of `PMU/terms/` commas separate terms, not events.
    let mut in_terms = false;
    for (i, c) in s.char_indices() {
        match c {
            // The slash of a breakpoint's length (`mem:ADDR/LEN`) opens no terms.
            '/' if !in_terms && s[start..i].trim_start_matches('{').starts_with("mem:") => {}
            '/' => in_terms = !in_terms,
            ',' if in_terms => {}
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    (depth == 0).then(|| {
        parts.push(&s[start..]);
        parts
    })
}

fn lookup_named(table: &[(&str, u64)], name: &str) -> Option<u64> {
    table
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, c)| c)
}

/// `L1-dcache-load-misses` and friends: `cache[-op[-misses]]`, or `cache-misses`
/// alone meaning the read op.
fn cache_config(name: &str) -> Option<u64> {
    let lower = name.to_ascii_lowercase();
    for &(cache, id) in CACHES {
        let Some(rest) = lower.strip_prefix(&cache.to_ascii_lowercase()) else {
            continue;
        };
        let Some(rest) = rest.strip_prefix('-') else {
            continue;
        };
        for &(one, many, op) in CACHE_OPS {
            if rest == many || rest == one {
                return Some(id | op << 8);
            }
            if rest == format!("{one}-misses") || rest == format!("{one}-miss") {
                return Some(id | op << 8 | 1 << 16);
            }
        }
        if rest == "misses" {
            return Some(id | 1 << 16);
        }
    }
    None
}

fn builtin_kind(name: &str) -> Option<EventKind> {
    if let Some(c) = lookup_named(HARDWARE, name) {
        return Some(EventKind::Hardware(c));
    }
    if let Some(c) = lookup_named(SOFTWARE, name) {
        return Some(EventKind::Software(c));
    }
    if let Some(c) = cache_config(name) {
        return Some(EventKind::HwCache(c));
    }
    if let Some(t) = ToolEvent::named(name) {
        return Some(EventKind::Tool(t));
    }
    let hex = name.strip_prefix('r')?;
    if hex.is_empty() || hex.len() > 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok().map(EventKind::Raw)
}

fn is_modifier_text(m: &str) -> bool {
    !m.is_empty() && m.bytes().all(|b| b"ukhpPGHSDIW".contains(&b))
}

fn parse_one(
    text: &str,
    lookup: &dyn TracepointLookup,
    out: &mut Vec<EventSpec>,
) -> Result<(), SpecError> {
    let mut parts = text.splitn(3, ':');
    let first = parts.next().unwrap_or_default();
    let second = parts.next();
    let third = parts.next();
    let leader = out.len();
    let spec = |name: String, kind: EventKind| EventSpec {
        name,
        kind,
        exclude_user: false,
        exclude_kernel: false,
        exclude_hv: false,
        precise: 0,
        exclude_guest: true,
        exclude_host: false,
        leader,
        through_pmu: false,
    };
    if let Some(rest) = text.strip_prefix("mem:") {
        let (e, mods) = breakpoint(text, rest, spec)?;
        let mut e = e;
        if let Some(m) = mods {
            apply_modifiers(&mut e, m, text)?;
        }
        out.push(e);
        return Ok(());
    }
    if let Some((pmu, rest)) = text.split_once('/') {
        let (terms, mods) = rest.rsplit_once('/').ok_or_else(|| SpecError::Syntax {
            list: text.to_string(),
            what: "a PMU event is written PMU/TERMS/ (the closing '/' is missing)".to_string(),
        })?;
        let ev = super::pmu::resolve(Path::new(super::pmu::SYSFS_PMUS), pmu, terms).map_err(
            |error| SpecError::Pmu {
                event: text.to_string(),
                error,
            },
        )?;
        let kind = match (ev.type_, ev.config1 | ev.config2) {
            (types::HARDWARE, 0) => EventKind::Hardware(ev.config),
            (types::SOFTWARE, 0) => EventKind::Software(ev.config),
            (types::HW_CACHE, 0) => EventKind::HwCache(ev.config),
            (types::RAW, 0) => EventKind::Raw(ev.config),
            _ => EventKind::Pmu {
                pmu: ev.pmu,
                type_: ev.type_,
                config: ev.config,
                config1: ev.config1,
                config2: ev.config2,
            },
        };
        let mut e = spec(ev.name.unwrap_or_else(|| text.to_string()), kind);
        e.through_pmu = true;
        let mods = mods.strip_prefix(':').unwrap_or(mods);
        if !mods.is_empty() {
            apply_modifiers(&mut e, mods, text)?;
        }
        out.push(e);
        return Ok(());
    }
    if let Some(kind) = builtin_kind(first) {
        if third.is_some() {
            return Err(SpecError::Unknown {
                event: text.to_string(),
            });
        }
        let mut e = spec(text.to_string(), kind);
        if let Some(m) = second {
            apply_modifiers(&mut e, m, text)?;
        }
        out.push(e);
        return Ok(());
    }
    let Some(name) = second else {
        return Err(SpecError::Unknown {
            event: text.to_string(),
        });
    };
    let pattern = format!("{first}:{name}");
    let found = lookup
        .tracepoints(&pattern)
        .map_err(|reason| SpecError::NoTracepoint {
            event: text.to_string(),
            reason,
        })?;
    if found.is_empty() {
        return Err(SpecError::NoTracepoint {
            event: text.to_string(),
            reason: "no such tracepoint (see `tracectl list -e`)".to_string(),
        });
    }
    let glob = pattern.contains(['*', '?', '[']);
    for (i, (system, ev, id)) in found.into_iter().enumerate() {
        let shown = if glob {
            match third {
                Some(m) => format!("{system}:{ev}:{m}"),
                None => format!("{system}:{ev}"),
            }
        } else {
            text.to_string()
        };
        let mut e = spec(
            shown,
            EventKind::Tracepoint {
                system,
                name: ev,
                id,
            },
        );
        e.leader = leader + i;
        if let Some(m) = third {
            apply_modifiers(&mut e, m, text)?;
        }
        out.push(e);
    }
    Ok(())
}

/// A breakpoint event `mem:ADDR[/LEN][:ACCESS][:MODIFIERS]` as perf's parser reads it
/// (`rest` follows `mem:`): ADDR in decimal or `0x` hex, LEN in bytes (0 or none: 8 for
/// an execution breakpoint, else 4), ACCESS one to three of r, w and x (none: rw). perf
/// names it as typed, but only up to a `/`. Returns the event and its modifiers.
fn breakpoint<'t>(
    text: &'t str,
    rest: &'t str,
    spec: impl Fn(String, EventKind) -> EventSpec,
) -> Result<(EventSpec, Option<&'t str>), SpecError> {
    let syntax = |what: &str| SpecError::Syntax {
        list: text.to_string(),
        what: format!(
            "{what}; a breakpoint is written mem:ADDR[/LEN][:ACCESS], e.g. mem:0x1000/8:w"
        ),
    };
    fn number(s: &str) -> Option<u64> {
        match s.strip_prefix("0x") {
            Some(h) if !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                u64::from_str_radix(h, 16).ok()
            }
            Some(_) => None,
            None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
            None => None,
        }
    }
    let end = rest.find([':', '/']).unwrap_or(rest.len());
    let addr = number(&rest[..end]).ok_or_else(|| syntax("the address is not a number"))?;
    let mut tail = &rest[end..];
    let mut len = 0;
    if let Some(after) = tail.strip_prefix('/') {
        let end = after.find(':').unwrap_or(after.len());
        len = number(&after[..end]).ok_or_else(|| syntax("the length is not a number"))?;
        tail = &after[end..];
    }
    let mut access = 0;
    let mut mods = None;
    if let Some(after) = tail.strip_prefix(':') {
        let (word, more) = after
            .split_once(':')
            .map_or((after, None), |(w, m)| (w, Some(m)));
        if !word.is_empty() && word.len() <= 3 && word.bytes().all(|b| b"rwx".contains(&b)) {
            for b in word.bytes() {
                let bit = match b {
                    b'r' => 1,
                    b'w' => 2,
                    _ => 4,
                };
                if access & bit != 0 {
                    return Err(syntax(&format!(
                        "'{}' is given twice in the access",
                        b as char
                    )));
                }
                access |= bit;
            }
            mods = more;
        } else {
            // No access letters: what follows the colon are the event's modifiers.
            mods = Some(after);
        }
    }
    if access == 0 {
        access = 1 | 2;
    }
    if len == 0 {
        len = if access == 4 { 8 } else { 4 };
    }
    let name = match text.find('/') {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    };
    Ok((
        spec(name, EventKind::Breakpoint { addr, access, len }),
        mods,
    ))
}

/// perf's modifier rules: `u`, `k` and `h` select what is counted (everything not named
/// is excluded), `p` raises precise_ip; `G`, `H`, `S`, `D`, `I`, `W`, `P` are accepted and
/// have no effect on counting here.
fn apply_modifiers(e: &mut EventSpec, m: &str, event: &str) -> Result<(), SpecError> {
    if !is_modifier_text(m) {
        return Err(SpecError::BadModifier {
            event: event.to_string(),
            modifier: m.to_string(),
        });
    }
    let (u, k, h) = (m.contains('u'), m.contains('k'), m.contains('h'));
    if u || k || h {
        e.exclude_user = !u;
        e.exclude_kernel = !k;
        e.exclude_hv = !h;
    }
    let p = m.bytes().filter(|&b| b == b'p').count();
    if p > 3 {
        return Err(SpecError::BadModifier {
            event: event.to_string(),
            modifier: m.to_string(),
        });
    }
    e.precise = e.precise.max(p as u8);
    e.exclude_guest = match (m.contains('G'), m.contains('H')) {
        (true, _) => false,
        (false, true) => true,
        (false, false) => u || p > 0,
    };
    e.exclude_host = m.contains('G') && !m.contains('H');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(pattern: &str) -> Result<Vec<(String, String, u64)>, String> {
        let all = [
            ("sched", "sched_switch", 300),
            ("sched", "sched_wakeup", 301),
        ];
        let (sys, name) = pattern.split_once(':').unwrap();
        let m = |p: &str, s: &str| {
            p == "*" || p == s || (p.ends_with('*') && s.starts_with(&p[..p.len() - 1]))
        };
        Ok(all
            .iter()
            .filter(|(s, n, _)| m(sys, s) && m(name, n))
            .map(|&(s, n, i)| (s.to_string(), n.to_string(), i))
            .collect())
    }

    fn parse(s: &str) -> Result<Vec<EventSpec>, SpecError> {
        let mut v = Vec::new();
        parse_event_list(s, &tp, &mut v).map(|_| v)
    }

    #[test]
    fn names_and_aliases() {
        let v = parse("cycles,cs,faults,task-clock,r1a8,L1-dcache-load-misses,LLC-loads").unwrap();
        let k: Vec<_> = v.iter().map(|e| e.kind.type_config()).collect();
        assert_eq!(
            k,
            [
                (0, 0),
                (1, 3),
                (1, 2),
                (1, 1),
                (4, 0x1a8),
                (3, 0x10000),
                (3, 2)
            ]
        );
        assert_eq!(v[1].name, "cs");
        assert_eq!(
            parse("dTLB-load-misses").unwrap()[0].kind,
            EventKind::HwCache(3 | 1 << 16)
        );
        assert_eq!(
            parse("branch-store-misses").unwrap()[0].kind,
            EventKind::HwCache(5 | 1 << 8 | 1 << 16)
        );
    }

    #[test]
    fn modifiers() {
        let v = parse("cycles:u,cs:k,cycles:pp").unwrap();
        assert!(!v[0].exclude_user && v[0].exclude_kernel && v[0].exclude_hv);
        assert!(v[1].exclude_user && !v[1].exclude_kernel);
        assert_eq!(v[2].precise, 2);
        assert_eq!(v[0].name, "cycles:u");
        assert!(matches!(
            parse("cycles:x"),
            Err(SpecError::BadModifier { .. })
        ));
    }

    #[test]
    fn groups_and_tracepoints() {
        let v = parse("{cs,task-clock}:u,sched:*").unwrap();
        assert_eq!(v.iter().map(|e| e.leader).collect::<Vec<_>>(), [0, 0, 2, 3]);
        assert!(v[1].exclude_kernel);
        assert_eq!(v[1].name, "task-clock");
        assert_eq!(v[3].name, "sched:sched_wakeup");
        assert_eq!(v[2].kind.type_config(), (2, 300));
        assert!(matches!(
            parse("sched:nosuch"),
            Err(SpecError::NoTracepoint { .. })
        ));
        assert!(matches!(parse("nosuch"), Err(SpecError::Unknown { .. })));
        assert!(matches!(
            parse("{cs,task-clock"),
            Err(SpecError::Syntax { .. })
        ));
        assert!(matches!(parse("cs,,cs"), Err(SpecError::Syntax { .. })));
    }
}
