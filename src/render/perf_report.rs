//! `perf report --stdio`'s table (perf 6.1): per event, the header comments, then one
//! row per distinct sort key (command, pid, shared object, symbol) with its share of
//! the event's period, and with `--children` each entry's share counting the samples
//! whose call chains pass through it. Under each row, the call graph of its samples
//! in the `-g` mode ([`crate::render::perf_callgraph`]). Rows come in perf's order,
//! ties included: the rows pass through perf's red-black trees with perf's comparisons
//! ([`crate::perf::rbtree`]).

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use crate::event::Record;
use crate::perf::data::abi::{attr_type, misc, record, sample};
use crate::perf::data::{Attr, Event, PerfData, PerfDataError, ReadPeriods, Sample};
use crate::perf::machine::{ordered_records, Location, Machine, ObjectId};
use crate::perf::perf_map::jit_map_shown_name;
use crate::perf::rbtree::RbOrder;
use crate::perf::srcline::SourceLines;
use crate::render::perf_callgraph::{
    render, CallGraph, CallTree, ChainOrder, Frame, FrameKey, GraphContext, GraphMode,
};
use crate::render::perf_report_fields::{overhead_cell, replace_separator, Column, Columns};
use crate::render::perf_report_filter::{Elided, SampleFilter};
use crate::render::perf_report_threads::ThreadValues;

#[path = "perf_report_cmp.rs"]
mod cmp;
#[path = "perf_report_group.rs"]
mod group;
use crate::render::perf_script::event_name;
use crate::render::tracecmd::{Catalog, DatCatalog};
use cmp::{cmp_null, dso_cmp, entry_cmp, key_cmp};
use group::{event_groups, link_group};

/// A `--sort` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// `comm`: the command.
    Comm,
    /// `pid`: `tid:comm` (perf's thread key).
    Pid,
    /// `dso`: the shared object.
    Dso,
    /// `sym`: the symbol.
    Sym,
    /// `addr`: the sampled address (perf 6.1 shows a call chain entry's address
    /// offset once more by its mapping, as it does; see [`Location::unmap_delta`]).
    Addr,
    /// `cpu`: the CPU the sample was taken on (-1 when not recorded).
    Cpu,
    /// `time`: the sample's time, cut down to perf's default quantum (100 ms).
    Time,
    /// `trace`: a tracepoint's text (its `print fmt` output); `N/A` for other events.
    Trace,
    /// `socket`: the socket of the sample's CPU, from the file's CPU_TOPOLOGY (-1 when
    /// the file or the sample does not say).
    Socket,
    /// `dso_size`: the size of the mapping holding the address.
    DsoSize,
    /// `parent`: the first symbol of the call chain matching the parent regex
    /// ([`PerfReportOptions::parent`]), `[other]` when none does.
    Parent,
    /// `srcline`: `file:LINE` of the address from the object's DWARF line table, as
    /// perf's addr2line gives it ([`crate::perf::srcline`]).
    Srcline,
    /// `srcfile`: the file part of `srcline`, empty when there is none.
    Srcfile,
    /// `cgroup`: the path of the sample's cgroup (`perf record --all-cgroups`), named
    /// by the file's CGROUP records; `unknown` for an id none names, `N/A` for none.
    Cgroup,
    /// `cgroup_id`: the device and inode of the cgroup namespace of the sample's
    /// thread, from its last NAMESPACES record (`perf record --namespaces`); `0/0x0`
    /// when it has none.
    CgroupId,
}

impl SortKey {
    /// Parse `comm,dso,sym`; perf's keys that are not supported are refused with the
    /// reason.
    pub fn parse_list(s: &str) -> Result<Vec<SortKey>, String> {
        s.split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(SortKey::parse_one)
            .collect()
    }

    /// Parse one key of perf's name; perf's keys that are not supported are refused
    /// with the reason.
    pub fn parse_one(k: &str) -> Result<SortKey, String> {
        match k {
            "comm" => Ok(SortKey::Comm),
            "pid" => Ok(SortKey::Pid),
            "dso" => Ok(SortKey::Dso),
            "sym" | "symbol" => Ok(SortKey::Sym),
            "addr" => Ok(SortKey::Addr),
            "cpu" => Ok(SortKey::Cpu),
            "time" => Ok(SortKey::Time),
            "trace" => Ok(SortKey::Trace),
            "socket" => Ok(SortKey::Socket),
            "dso_size" => Ok(SortKey::DsoSize),
            "parent" => Ok(SortKey::Parent),
            "srcline" => Ok(SortKey::Srcline),
            "srcfile" => Ok(SortKey::Srcfile),
            "cgroup" => Ok(SortKey::Cgroup),
            "cgroup_id" => Ok(SortKey::CgroupId),
            other => Err(unsupported_key(other)),
        }
    }

    /// perf makes the key's text only when a comparison reaches the key.
    fn made_lazily(self) -> bool {
        matches!(self, SortKey::Trace | SortKey::Srcline | SortKey::Srcfile)
    }

    /// The column's title.
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "    Pid:Command",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
            SortKey::Addr => "Address",
            SortKey::Cpu => "CPU",
            SortKey::Time => "Time",
            SortKey::Trace => "Trace output",
            SortKey::Socket => "Socket",
            SortKey::DsoSize => "DSO size",
            SortKey::Parent => "Parent symbol",
            SortKey::Srcline => "Source:Line",
            SortKey::Srcfile => "Source File",
            SortKey::Cgroup => "Cgroup",
            SortKey::CgroupId => "cgroup id (dev/inode)",
        }
    }
}

const SUPPORTED: &str = "supported: comm, pid, dso, sym, addr, cpu, time, trace, socket, \
                         dso_size, parent, srcline, srcfile, cgroup, cgroup_id, and the columns overhead, \
                         overhead_sys, overhead_us, overhead_children, sample, period";

/// Why a `--sort` key of perf's is refused, or that it is no key at all.
fn unsupported_key(key: &str) -> String {
    const BRANCH: &[&str] = &[
        "dso_from",
        "dso_to",
        "symbol_from",
        "symbol_to",
        "mispredict",
        "in_tx",
        "abort",
        "cycles",
        "srcline_from",
        "srcline_to",
        "ipc_lbr",
        "addr_from",
        "addr_to",
    ];
    const MEMORY: &[&str] = &[
        "symbol_daddr",
        "dso_daddr",
        "locked",
        "tlb",
        "mem",
        "snoop",
        "dcacheline",
        "symbol_iaddr",
        "phys_daddr",
        "data_page_size",
        "blocked",
    ];
    const OTHER: &[&str] = &[
        "local_weight",
        "weight",
        "transaction",
        "code_page_size",
        "local_ins_lat",
        "ins_lat",
        "local_p_stage_cyc",
        "p_stage_cyc",
        "overhead_guest_sys",
        "overhead_guest_us",
    ];
    if BRANCH.contains(&key) {
        format!(
            "--sort {key}: a branch-stack key; it needs samples recorded with branch stacks \
             (perf record -b), which this reader does not decode; {SUPPORTED}"
        )
    } else if MEMORY.contains(&key) {
        format!(
            "--sort {key}: a memory-access key; it needs samples with data addresses \
             (perf mem record), which this reader does not decode; {SUPPORTED}"
        )
    } else if OTHER.contains(&key) {
        format!("--sort {key}: perf's key is not supported here; {SUPPORTED}")
    } else {
        format!("unknown --sort key '{key}'; {SUPPORTED}")
    }
}

/// A row's symbol as perf tells rows apart (`sort__sym_cmp`): by the symbol (its
/// start in its object), or by the address when there is none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum SymKey {
    /// `sym` is not a sort key.
    Unsorted,
    /// A symbol: its start and end addresses and its name; `inlined` when it is a
    /// function inlined into the symbol at `start` (perf's `sym->inlined`, a symbol
    /// of its own with the span of the one it is inlined into).
    Resolved {
        start: u64,
        end: u64,
        name: String,
        inlined: bool,
    },
    /// No symbol: the address.
    Unresolved(u64),
}

/// One row's identity: the values of the selected keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    comm: String,
    pid: i32,
    /// The shared object's file name, which rows are told apart and sorted by; None
    /// when unmapped.
    dso: Option<String>,
    /// The name the `Shared Object` column shows, when not `dso` (a JIT's perf map
    /// shows as `[JIT] tid PID`, yet perf 6.1 sorted its rows as `perf-PID.map`, after
    /// the file's name).
    dso_shown: Option<String>,
    sym: SymKey,
    /// The address as perf shows it (`addr`).
    addr: u64,
    /// The CPU, -1 when not recorded (`cpu`).
    cpu: i32,
    /// The time, cut to the quantum (`time`).
    time: u64,
    /// The tracepoint's text; None for other events (`trace`).
    trace: Option<String>,
    /// The socket of the sample's CPU, -1 when unknown (`socket`).
    socket: i32,
    /// The size of the mapping; None when unmapped (`dso_size`).
    map_size: Option<u64>,
    /// The sample's parent symbol; None for `[other]` (`parent`).
    parent: Option<String>,
    /// The source line (`srcline`).
    srcline: Option<String>,
    /// The source file (`srcfile`).
    srcfile: Option<String>,
    /// The sample's cgroup id (`cgroup`).
    cgroup: u64,
    /// The device and inode of the thread's cgroup namespace (`cgroup_id`).
    cgroup_ns: (u64, u64),
}

#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    self_: u64,
    children: u64,
    /// The samples of the row's own (perf's `nr_events`, the `Samples` column).
    samples: u64,
    /// The period of the row's own samples taken in the kernel (`period_sys`).
    period_sys: u64,
    /// The period of the row's own samples taken in user space (`period_us`).
    period_us: u64,
    /// The thread of the sample that made the row. perf sizes the command column by
    /// this thread's comm at the end of the file (`thread__comm_len`), not by the comm
    /// the row shows, and cuts the shown comm to that width: a row made by a sample
    /// taken before an exec shows `perf-ex` when the thread ended as `sh`.
    first_tid: i32,
    /// `[k]` rather than `[.]`: the level of the location that made the row (perf does
    /// not tell rows apart by it).
    kernel: bool,
    /// The location that made the row had no symbol: perf then widens the symbol and
    /// object columns for a raw address, whichever keys are shown.
    unresolved: bool,
}

/// One row (perf's `hist_entry`).
#[derive(Debug)]
struct Row {
    key: Key,
    totals: Totals,
    /// The short name of the object of the location that made the row: perf compares
    /// symbols of different objects by it even when `dso` is no sort key.
    map_dso: Option<String>,
    /// The map of the location that last landed in the row (perf's `he->ms.map`).
    map: Option<MapOf>,
    /// Call chains, when they are printed.
    tree: Option<CallTree>,
    /// Which of the row's texts perf made ([`MADE_TRACE`], [`MADE_SRCLINE`],
    /// [`MADE_SRCFILE`]): it makes a `trace`, `srcline` or `srcfile` text only when a
    /// comparison reaches that key, and sizes the column by the texts made by the time
    /// it files the row for output.
    made: Cell<u8>,
    /// Hidden by a filter (perf's `he->filtered`): the filters of the sample that
    /// made the row decide, whatever samples land in it later.
    filtered: bool,
    /// Made in a group leader's table for a member's row it lacks (perf's
    /// `he->dummy`): no share of its own, shown with the member's.
    dummy: bool,
}

const MADE_TRACE: u8 = 1;
const MADE_SRCLINE: u8 = 2;
const MADE_SRCFILE: u8 = 4;

impl Row {
    fn mark(&self, what: u8) {
        self.made.set(self.made.get() | what);
    }
}

impl Row {
    /// A row that only takes part in comparisons.
    fn stand_in(key: Key) -> Row {
        Row {
            key,
            totals: Totals::default(),
            map_dso: None,
            map: None,
            tree: None,
            made: Cell::new(0),
            filtered: false,
            dummy: false,
        }
    }
}

/// Which of perf's maps a location was found in, as far as that shows in a report:
/// the process whose maps hold it (-1: the kernel's), its object, and where the
/// object is mapped there (its start less its file offset).
type MapOf = (i32, ObjectId, u64);

/// The map of a location of process `pid`; None when unmapped.
fn map_of(pid: i32, loc: &Location) -> Option<MapOf> {
    let object = loc.object?;
    Some((if loc.kernel { -1 } else { pid }, object, loc.unmap_delta))
}

#[derive(Debug, Default)]
struct EventHists {
    samples: u64,
    period: u64,
    /// The samples whose own row is not filtered (perf's `nr_non_filtered_samples`).
    unfiltered_samples: u64,
    /// The row of each key, a shortcut past the tree that holds only while perf's
    /// comparison is a total order on the rows ([`EventHists::row`]).
    index: HashMap<Key, usize>,
    rows: Vec<Row>,
    /// The rows as perf files them while reading (`hists->entries_in`).
    entries_in: RbOrder,
    /// The rows merged again (`hists->entries_collapsed`) and the row of each of its
    /// items, once [`EventHists::collapse`] made it.
    collapsed: Option<(RbOrder, Vec<usize>)>,
    /// In a group leader's table (`--group`): for each row, the counts of the rows of
    /// the other events of the group with its key (perf's `pairs`), zero for none.
    pairs: Vec<Vec<Totals>>,
    /// In a group leader's table: each other event's total period (of the shares).
    member_totals: Vec<u64>,
    /// The period of the rows no filter hid before `--symbol-filter` did (perf's
    /// `callchain_non_filtered_period`, counted as samples arrive), once it has.
    before_symbol_filter: Option<u64>,
}

impl EventHists {
    /// The row of `key`, made (and filed as perf files it) when new.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        keys: &[SortKey],
        key: Key,
        tid: i32,
        kernel: bool,
        dso: Option<&str>,
        unresolved: bool,
        map: Option<MapOf>,
        machine: &Machine,
        filtered: bool,
    ) -> usize {
        let row = Row {
            key,
            totals: Totals {
                first_tid: tid,
                kernel,
                unresolved,
                ..Totals::default()
            },
            map_dso: dso.map(short_dso),
            map,
            tree: None,
            made: Cell::new(0),
            filtered,
            dummy: false,
        };
        // With `sym` as a key perf's comparison is no total order: an inlined
        // function's symbol is compared by name and others by start, a symbol and an
        // address by object but two addresses by address alone, and a row's symbol
        // changes when a location of another map lands in it. Its walk down the tree
        // can then miss a row of the same key and make another, so every location
        // takes that walk.
        let shortcut = (!keys.contains(&SortKey::Sym))
            .then(|| self.index.get(&row.key))
            .flatten();
        if let Some(&i) = shortcut {
            if keys.iter().any(|k| k.made_lazily()) {
                // Only for the texts the search makes on its way.
                self.entries_in
                    .find(|e| entry_cmp(keys, &self.rows[e], &row));
            }
            self.follow_map(keys, i, map, machine);
            return i;
        }
        let rows = &self.rows;
        // hists__findnew_entry: a row met on the way down that compares equal takes the
        // sample, as rows of other keys can (the symbols of two objects of one name at
        // one address); else the new row goes left when hist_entry__cmp(existing, new)
        // < 0.
        if let Some(i) = self.entries_in.find(|e| entry_cmp(keys, &rows[e], &row)) {
            self.index.insert(row.key, i);
            self.follow_map(keys, i, map, machine);
            return i;
        }
        let i = self
            .entries_in
            .insert(|e| entry_cmp(keys, &rows[e], &row) == Ordering::Less);
        self.index.insert(row.key.clone(), i);
        self.rows.push(row);
        i
    }
}

impl EventHists {
    /// perf's `hists__collapse_resort`, which only `comm` among these keys asks for
    /// (`se_collapse`): the rows taken in order and filed again into a new tree with
    /// the same comparison, a row that meets an equal one on its way down merged into
    /// it (its shares and call chains), as the first filing can miss rows of one key
    /// (see [`EventHists::row`]). Returns the rows left, in the new tree's order.
    fn collapse(&mut self, keys: &[SortKey]) {
        let mut collapsed = RbOrder::new();
        let mut filed: Vec<usize> = Vec::with_capacity(self.rows.len());
        for i in self.entries_in.in_order() {
            let rows = &self.rows;
            if let Some(e) = collapsed.find(|e| entry_cmp(keys, &rows[filed[e]], &rows[i])) {
                let into = filed[e];
                let t = rows[i].totals;
                let tree = self.rows[i].tree.take();
                let row = &mut self.rows[into];
                // perf's `he_stat__add_stat`.
                row.totals.self_ += t.self_;
                row.totals.children += t.children;
                row.totals.samples += t.samples;
                row.totals.period_sys += t.period_sys;
                row.totals.period_us += t.period_us;
                if let Some(t) = tree {
                    row.tree.get_or_insert_with(CallTree::default).merge(&t);
                }
                continue;
            }
            collapsed.insert(|e| entry_cmp(keys, &rows[filed[e]], &rows[i]) == Ordering::Less);
            filed.push(i);
        }
        self.collapsed = Some((collapsed, filed));
    }

    /// The rows in the order of the tree they are in now (`entries_collapsed` once
    /// made, else `entries_in`).
    fn current_order(&self) -> Vec<usize> {
        match &self.collapsed {
            Some((tree, filed)) => tree.in_order().into_iter().map(|e| filed[e]).collect(),
            None => self.entries_in.in_order(),
        }
    }

    /// Hide the rows whose symbol's name does not hold `text` (rows without a symbol
    /// too). perf counts the period of the rows left again for `--percentage
    /// relative`, not their samples.
    fn filter_by_symbol(&mut self, text: &str) {
        self.before_symbol_filter = Some(self.unfiltered_period());
        for r in &mut self.rows {
            let holds = matches!(&r.key.sym, SymKey::Resolved { name, .. } if name.contains(text));
            r.filtered |= !holds;
        }
    }

    /// The period the call graphs' threshold is a share of with `--percentage
    /// relative`: that of the rows the filters of the samples leave, as perf counts it
    /// while the samples arrive, before `--symbol-filter` hides rows.
    fn callchain_unfiltered_period(&self) -> u64 {
        self.before_symbol_filter
            .unwrap_or_else(|| self.unfiltered_period())
    }

    /// The period of the rows no filter hides (perf's `total_non_filtered_period`).
    fn unfiltered_period(&self) -> u64 {
        self.rows
            .iter()
            .filter(|r| !r.filtered)
            .map(|r| r.totals.self_)
            .sum()
    }

    /// perf's `hists__findnew_entry` when a location lands in row `i` from another map
    /// (another process, or another object of the same name): with `sym` as a key, the
    /// row's symbol becomes the one its start falls in within the new map, and the row
    /// takes that map.
    fn follow_map(&mut self, keys: &[SortKey], i: usize, map: Option<MapOf>, machine: &Machine) {
        let row = &mut self.rows[i];
        if !keys.contains(&SortKey::Sym) || row.map == map {
            return;
        }
        if let (SymKey::Resolved { start, .. }, Some((_, object, _))) = (&row.key.sym, map) {
            if let Some((name, at, end)) = machine.symbol_span_at(object, *start) {
                row.key.sym = SymKey::Resolved {
                    start: at,
                    end,
                    name: name.to_string(),
                    inlined: false,
                };
            }
        }
        row.map = map;
    }
}

/// The `srcline` and `srcfile` of rows, when they are keys.
struct KeyLines(SourceLines);

impl KeyLines {
    fn fill(&mut self, keys: &[SortKey], k: &mut Key, machine: &Machine, loc: &Location, ip: u64) {
        if keys.contains(&SortKey::Srcline) {
            k.srcline = Some(self.0.srcline(machine, loc, ip));
        }
        if keys.contains(&SortKey::Srcfile) {
            k.srcfile = Some(self.0.srcfile(machine, loc, ip));
        }
    }
}

/// A tracepoint sample's text as perf's `trace` key shows it (libtraceevent's
/// `print fmt` output); None for other events.
fn trace_text(attr: &Attr, catalog: Option<&DatCatalog>, s: &Sample) -> Option<String> {
    if attr.type_ != attr_type::TRACEPOINT {
        return None;
    }
    let mut out = Vec::new();
    if let Some(c) = catalog {
        let rec = Record {
            cpu: s.cpu,
            ts: s.time,
            data: s.raw,
        };
        c.write_info(&rec, &mut out);
    }
    while out.last() == Some(&b'\n') {
        out.pop();
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// The file name of a shared object (kernel names such as `[kernel.kallsyms]` as they
/// are), which perf tells rows apart and sorts them by.
fn short_dso(d: &str) -> String {
    if d.starts_with('[') {
        d.to_string()
    } else {
        d.rsplit('/').next().unwrap_or(d).to_string()
    }
}

/// What a row is keyed by. `raw` is the address as sampled; `chained` says the
/// location is a call chain entry: perf keys (and prints) an unresolved one by that
/// address, and the sample's own by the file-relative one; for `addr` it maps a chain
/// entry's address once more (`map__unmap_ip` of an address that was never made
/// file-relative).
fn key_of(
    keys: &[SortKey],
    comm: &str,
    tid: i32,
    cpu: i32,
    loc: &Location,
    raw: u64,
    chained: bool,
) -> Key {
    let has = |k| keys.contains(&k);
    Key {
        // The thread key shows the thread's last comm (filled in at the end), the
        // command key the comm at the sample's time.
        comm: if has(SortKey::Comm) {
            comm.to_string()
        } else {
            String::new()
        },
        pid: if has(SortKey::Pid) { tid } else { 0 },
        dso: if has(SortKey::Dso) {
            loc.dso.map(short_dso)
        } else {
            None
        },
        dso_shown: loc
            .dso
            .filter(|_| has(SortKey::Dso))
            .and_then(jit_map_shown_name),
        sym: if has(SortKey::Sym) {
            match loc.sym {
                Some((n, off)) => SymKey::Resolved {
                    start: loc.addr.wrapping_sub(off),
                    end: loc.sym_end,
                    name: n.to_string(),
                    inlined: false,
                },
                None if chained => SymKey::Unresolved(raw),
                None => SymKey::Unresolved(loc.addr),
            }
        } else {
            SymKey::Unsorted
        },
        addr: match (has(SortKey::Addr), chained) {
            (false, _) => 0,
            (true, true) => raw.wrapping_add(loc.unmap_delta),
            (true, false) => raw,
        },
        cpu: if has(SortKey::Cpu) { cpu } else { 0 },
        time: 0,
        trace: None,
        socket: 0,
        map_size: if has(SortKey::DsoSize) {
            loc.dso.map(|_| loc.map_size)
        } else {
            None
        },
        parent: None,
        srcline: None,
        srcfile: None,
        cgroup: 0,
        cgroup_ns: (0, 0),
    }
}

/// Where a NAMESPACES record holds the cgroup namespace (the kernel's `CGROUP_NS_INDEX`).
const CGROUP_NS_INDEX: usize = 6;

/// A sample's `cgroup` and `cgroup_id` keys, each 0 unless it is a sort key: its
/// cgroup id, and the cgroup namespace of its thread as last recorded.
fn cgroup_keys(
    keys: &[SortKey],
    s: &Sample,
    namespaces: &HashMap<i32, (u64, u64)>,
) -> (u64, (u64, u64)) {
    let cgroup = if keys.contains(&SortKey::Cgroup) {
        s.cgroup
    } else {
        0
    };
    let ns = if keys.contains(&SortKey::CgroupId) {
        namespaces.get(&s.tid).copied().unwrap_or((0, 0))
    } else {
        (0, 0)
    };
    (cgroup, ns)
}

/// perf's `--time-quantum` default: 100 ms.
pub const TIME_QUANTUM_NS: u64 = 100_000_000;

/// perf's default `--parent` regex.
pub const PARENT_PATTERN: &str = "^sys_|^do_page_fault";

/// The report's options besides the sort keys.
#[derive(Debug, Clone)]
pub struct PerfReportOptions {
    /// `--children`/`--no-children`; None: on when the samples have call chains.
    pub children: Option<bool>,
    /// How call chains are printed under the rows (`-g`).
    pub graph: CallGraph,
    /// `-p/--parent`: a sample's parent is the first symbol of its call chain (in
    /// the chain's print order) this matches (`parent` key).
    pub parent: regex::Regex,
    /// `-x/--exclude-other`: leave out rows without a parent (all of them when
    /// `parent` is no key); the shares stay those of the whole event.
    pub exclude_other: bool,
    /// `--time-quantum`, in nanoseconds (not 0): the width of a `time` row.
    pub time_quantum_ns: u64,
    /// The samples taken and the rows shown (`-c`, `--pid`, `--tid`, `-d`, `-S`, `-C`,
    /// `--time`, `-U`).
    pub filter: SampleFilter,
    /// `--percentage relative`: shares (and the header's counts) of the rows the
    /// filters leave; perf's default is `absolute`, shares of the whole event.
    pub relative: bool,
    /// `-t/--field-separator`: the text between columns, which are then not padded
    /// to line up, and of call chains in `folded` mode.
    pub field_separator: Option<String>,
    /// `--group` (Some(true)) or `--no-group` (Some(false)); by default the events of
    /// a group (GROUP_DESC) are shown together, in the leader's table.
    pub group: Option<bool>,
    /// `-T/--threads`: the counts of the threads' READ records after the report
    /// ([`ThreadValues`]).
    pub show_threads: bool,
    /// `--pretty raw`: the `-T` table one entry per thread and event
    /// ([`ThreadValues::render_raw`]).
    pub threads_raw: bool,
    /// `--max-stack`: at most this many entries of each call chain (from the
    /// outermost caller in caller order, from the sample in callee order).
    pub max_stack: usize,
    /// `--percent-limit`: rows under this share are not printed.
    pub percent_limit: f32,
    /// `-q/--quiet`: the rows alone, without the comment lines.
    pub quiet: bool,
    /// `--time` as given, which the header repeats.
    pub time_str: Option<String>,
    /// `--header`: the perf.data header block ([`crate::render::perf_header`]), printed
    /// where the hint to ask for it goes otherwise.
    pub header_block: Option<Vec<u8>>,
    /// `--symbol-filter`: only the first event's rows whose symbol's name holds this
    /// text are shown (the others still count in the shares); `sym` must be a key.
    pub symbol_filter: Option<String>,
}

impl Default for PerfReportOptions {
    fn default() -> PerfReportOptions {
        PerfReportOptions {
            children: None,
            graph: CallGraph::default(),
            parent: regex::Regex::new(PARENT_PATTERN).expect("the default parent regex"),
            exclude_other: false,
            time_quantum_ns: TIME_QUANTUM_NS,
            filter: SampleFilter::default(),
            relative: false,
            field_separator: None,
            max_stack: usize::MAX,
            show_threads: false,
            threads_raw: false,
            group: None,
            percent_limit: 0.0,
            quiet: false,
            time_str: None,
            header_block: None,
            symbol_filter: None,
        }
    }
}

/// Parse perf's `--time-quantum` value: a number (decimal, `0x` hex or `0` octal, as
/// C's `strtoul`) of nanoseconds, or followed by `s`, `ms`, `us` or `ns`.
pub fn parse_time_quantum(arg: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "--time-quantum '{arg}': give a number of nanoseconds, or one followed by \
             s, ms, us or ns (e.g. 10ms)"
        )
    };
    let t = arg.trim_start();
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if t.len() > 1 && t.starts_with('0') {
        (8, &t[1..])
    } else {
        (10, t)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    if end == 0 && radix != 8 {
        return Err(bad());
    }
    let n = if end == 0 {
        0
    } else {
        u64::from_str_radix(&digits[..end], radix).map_err(|_| bad())?
    };
    if n == 0 {
        return Err(format!(
            "--time-quantum '{arg}': the time quantum cannot be 0"
        ));
    }
    let scale = match digits[end..].trim_start() {
        "" | "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(bad()),
    };
    n.checked_mul(scale).ok_or_else(bad)
}

/// A call chain entry of a sample as its row is made from it.
struct ChainRow<'m> {
    key: Key,
    /// The entry's map.
    map: Option<MapOf>,
    /// `[k]`: the entry's level.
    kernel: bool,
    /// The entry's object.
    dso: Option<&'m str>,
    /// The entry has no symbol.
    unresolved: bool,
    /// The row's source line is the one perf kept with the entry (an unwound entry's
    /// `srcline`), made with the row.
    kept_line: bool,
    frame: Frame,
}

/// One call chain entry as the call graph keys and prints it.
fn frame_of(loc: &Location, raw: u64, inlined: Option<&Arc<str>>) -> Frame {
    let dso = loc.object.map_or(0, |o| o.order() + 1);
    let (addr, name) = match loc.sym {
        Some((n, off)) => (loc.addr.wrapping_sub(off), n.to_string()),
        // C's `%#llx`: no 0x for zero.
        None if raw == 0 => (raw, "0".to_string()),
        None => (raw, format!("{raw:#x}")),
    };
    match inlined {
        Some(i) if loc.sym.is_some() => Frame {
            key: FrameKey {
                dso,
                addr,
                ip: raw,
                resolved: true,
                inlined: Some(i.clone()),
            },
            name: format!("{i} (inlined)"),
        },
        _ => Frame {
            key: FrameKey {
                dso,
                addr,
                ip: raw,
                resolved: loc.sym.is_some(),
                inlined: None,
            },
            name,
        },
    }
}

/// Whether the report accumulates call chains (`--children`): as asked (by default
/// when the file has call chains), and only when it has them.
pub fn accumulates(file: &PerfData, children: Option<bool>) -> bool {
    let has_chains = has_call_chains(file);
    // perf decides before it reads the records, and a pipe's events are records: it
    // knows no event with call chains then, and never accumulates.
    children.unwrap_or(has_chains) && has_chains && !file.is_pipe()
}

/// Whether the file has events sampled with call chains.
pub fn has_call_chains(file: &PerfData) -> bool {
    file.attrs()
        .iter()
        .any(|a| a.sample_type & sample::CALLCHAIN != 0)
}

/// Write the report of `file` sorted by `keys`, and return how many rows it has
/// (perf's `nr_entries`) and how many records came out of order (for the caller to
/// warn of, as perf does; see [`for_each_ordered`](crate::perf::machine::for_each_ordered)).
/// With no rows, only the first lines are written, as perf 6.1 writes them before it
/// says the file has no samples (for the caller to say).
pub fn write_report(
    file: &PerfData,
    mut machine: Machine,
    catalog: Option<&DatCatalog>,
    columns: &Columns,
    opts: &PerfReportOptions,
    out: &mut dyn Write,
) -> Result<(usize, u64), PerfDataError> {
    let graph = &opts.graph;
    let keys = &columns.keys()[..];
    let mut lines = KeyLines(SourceLines::new());
    let sockets = if keys.contains(&SortKey::Socket) {
        file.cpu_sockets()?
    } else {
        None
    };
    let children = accumulates(file, opts.children);
    // perf sets caller order for --children (its default) before it reads a pipe's
    // events, which then turn the accumulation off: a pipe keeps the order.
    let caller = if file.is_pipe() {
        opts.children != Some(false)
    } else {
        children
    };
    let order = graph.order.unwrap_or(if caller {
        ChainOrder::Caller
    } else {
        ChainOrder::Callee
    });
    let mut hists: Vec<EventHists> = file.attrs().iter().map(|_| EventHists::default()).collect();
    let mut lost = 0u64;
    let mut threads = ThreadValues::default();
    let mut read_periods = ReadPeriods::default();
    // perf's `env->cgroups`: the first path each CGROUP record gives an id.
    let mut cgroups: HashMap<u64, String> = HashMap::new();
    // The cgroup namespace of each thread, from its last NAMESPACES record; a FORK
    // makes the thread anew, without namespaces.
    let mut cgroup_ns: HashMap<i32, (u64, u64)> = HashMap::new();
    let (records, out_of_order) = ordered_records(file)?;
    for r in records {
        if r.type_ == record::READ && opts.show_threads {
            // perf takes the record's event from its id, the first event without one.
            let id = match file.decode(&r)? {
                Event::Other { id, .. } => id.id,
                _ => None,
            };
            let attr = match id {
                Some(id) if id != 0 => file.attr_of_id(id),
                _ => Some(0),
            };
            if let (Some(attr), Some(b)) = (attr, r.body.get(..16)) {
                let e = file.endian();
                threads.add(
                    e.u32(&b[..4]) as i32,
                    e.u32(&b[4..8]) as i32,
                    attr,
                    || event_name(&file.attrs()[attr], catalog),
                    e.u64(&b[8..16]),
                );
            }
        }
        if r.type_ == record::LOST_SAMPLES {
            if let Some(b) = r.body.get(..8) {
                lost += file.endian().u64(b);
            }
            continue;
        }
        match file.decode(&r)? {
            Event::Sample(sampled) => {
                // A READ sample is one sample per counter value, as perf delivers it.
                for s in read_periods.split(file, sampled) {
                    let filter = &opts.filter;
                    // perf drops these samples before it counts them.
                    if filter.drops(s.time, s.cpu) {
                        continue;
                    }
                    let comm = machine.comm(s.tid).to_string();
                    let attr = &file.attrs()[s.attr];
                    let ip = machine.resolve(s.pid, s.cpumode, s.ip);
                    if filter.hide_unresolved && ip.sym.is_none() {
                        continue;
                    }
                    let h = &mut hists[s.attr];
                    h.samples += 1;
                    h.period += s.period;
                    // The filters that keep the sample counted but its rows hidden; the
                    // rows of its call chain share them.
                    let mut filtered = filter.thread_filtered(&comm, s.pid, s.tid)
                        || filter.location_filtered(&ip);
                    let cpu = if attr.sample_type & sample::CPU != 0 {
                        s.cpu as i32
                    } else {
                        -1
                    };
                    let mut self_key = key_of(keys, &comm, s.tid, cpu, &ip, s.ip, false);
                    // The same for every entry of the sample.
                    let time = if keys.contains(&SortKey::Time) {
                        s.time / opts.time_quantum_ns * opts.time_quantum_ns
                    } else {
                        0
                    };
                    let trace = if keys.contains(&SortKey::Trace) {
                        trace_text(attr, catalog, &s)
                    } else {
                        None
                    };
                    // perf's `al->socket`: -1 without a CPU or without the file's ids.
                    let socket = match (&sockets, usize::try_from(cpu)) {
                        _ if !keys.contains(&SortKey::Socket) => 0,
                        (Some(ids), Ok(c)) => ids.get(c).copied().unwrap_or(-1),
                        _ => -1,
                    };
                    let chained = attr.sample_type & sample::CALLCHAIN != 0;
                    let mut locs = Vec::new();
                    let wants_parent = keys.contains(&SortKey::Parent);
                    if chained && (children || graph.mode != GraphMode::None || wants_parent) {
                        let mut entries = Vec::new();
                        // perf looks the chain up in the order it prints it.
                        lines.0.callchain_entries(
                            &machine,
                            &s,
                            usize::MAX,
                            order == ChainOrder::Caller,
                            |unwound, n, l, raw, inlined, srcline| {
                                entries.push((unwound, n));
                                // perf matches the parent regex against the symbol of
                                // each sampled address, not an inlined function's name
                                // nor a frame that DWARF unwinding found.
                                let checked = !unwound && inlined.is_none();
                                locs.push((
                                    l,
                                    raw,
                                    inlined.map(Arc::<str>::from),
                                    srcline.map(str::to_string),
                                    checked,
                                ))
                            },
                        );
                        // `--max-stack`: perf resolves the sampled chain in print order
                        // and stops after that many entries, so caller order keeps the
                        // outermost; it unwinds that many frames from the sample.
                        let sampled = entries
                            .iter()
                            .filter(|e| !e.0)
                            .map(|e| e.1 + 1)
                            .max()
                            .unwrap_or(0);
                        let max = opts.max_stack;
                        let keep = |(unwound, n): (bool, usize)| {
                            if unwound || order == ChainOrder::Callee {
                                n < max
                            } else {
                                n + max >= sampled
                            }
                        };
                        let mut kept = entries.into_iter();
                        locs.retain(|_| kept.next().is_some_and(keep));
                        if filter.hide_unresolved {
                            // perf leaves such entries out of the chain it builds.
                            locs.retain(|(l, ..)| l.sym.is_some());
                        }
                        if order == ChainOrder::Caller {
                            locs.reverse();
                        }
                    }
                    // The first symbol in the order perf resolves the chain (its print
                    // order) that the regex matches; the sample's own address is the
                    // chain's first entry.
                    let parent = if wants_parent {
                        locs.iter()
                            .filter(|loc| loc.4)
                            .filter_map(|(l, ..)| l.sym.map(|(n, _)| n))
                            .find(|n| opts.parent.is_match(n))
                            .map(str::to_string)
                    } else {
                        None
                    };
                    // `-x`: perf's parent filter, on the rows of the sample.
                    filtered |= opts.exclude_other && parent.is_none();
                    self_key.time = time;
                    self_key.trace = trace.clone();
                    self_key.socket = socket;
                    self_key.parent = parent.clone();
                    let (cgroup, ns) = cgroup_keys(keys, &s, &cgroup_ns);
                    self_key.cgroup = cgroup;
                    self_key.cgroup_ns = ns;
                    // perf's `he->ip`: the file-relative address.
                    lines.fill(keys, &mut self_key, &machine, &ip, ip.addr);
                    let self_row = h.row(
                        keys,
                        self_key,
                        s.tid,
                        ip.kernel,
                        ip.dso,
                        ip.sym.is_none(),
                        map_of(s.pid, &ip),
                        &machine,
                        filtered,
                    );
                    let t = &mut h.rows[self_row].totals;
                    t.self_ += s.period;
                    t.samples += 1;
                    match s.cpumode {
                        misc::KERNEL => t.period_sys += s.period,
                        misc::USER => t.period_us += s.period,
                        _ => {}
                    }
                    if !h.rows[self_row].filtered {
                        h.unfiltered_samples += 1;
                    }
                    // Each entry's row identity, level and object, and its frame.
                    let mut chain: Vec<ChainRow> = Vec::new();
                    if chained && (children || graph.mode != GraphMode::None) {
                        // perf fills one location entry after the other and leaves the
                        // level of an unmapped address as the entry before it had it
                        // (the sample's own at the start).
                        let mut kernel = ip.kernel;
                        for (mut l, raw, inlined, srcline, _) in locs {
                            if l.dso.is_some() {
                                kernel = l.kernel;
                            } else {
                                l.kernel = kernel;
                            }
                            let mut k = key_of(keys, &comm, s.tid, cpu, &l, raw, true);
                            if let (Some(i), SymKey::Resolved { name, inlined, .. }) =
                                (&inlined, &mut k.sym)
                            {
                                *name = i.to_string();
                                *inlined = true;
                            }
                            k.time = time;
                            k.trace = trace.clone();
                            k.socket = socket;
                            k.parent = parent.clone();
                            k.cgroup = cgroup;
                            k.cgroup_ns = ns;
                            // perf's `he->ip` of a chain entry: the address as sampled.
                            // Only its own rows (`--children`) ask for the entry's line;
                            // each asking counts towards perf's addr2line failure limit.
                            if children {
                                lines.fill(keys, &mut k, &machine, &l, raw);
                            }
                            // An unwound entry's row shows the line perf kept with the
                            // entry (`al->srcline`), not one made from that address, and
                            // has that text from the start.
                            let kept_line = srcline.is_some() && k.srcline.is_some();
                            if kept_line {
                                k.srcline = srcline;
                            }
                            chain.push(ChainRow {
                                map: map_of(s.pid, &l),
                                key: k,
                                kernel: l.kernel,
                                dso: l.dso,
                                unresolved: l.sym.is_none(),
                                kept_line,
                                frame: frame_of(&l, raw, inlined.as_ref()),
                            });
                        }
                    }
                    let frames: Vec<Frame> = chain.iter().map(|c| c.frame.clone()).collect();
                    let trees = chained && graph.mode != GraphMode::None;
                    if trees {
                        h.rows[self_row]
                            .tree
                            .get_or_insert_with(CallTree::default)
                            .add(&frames, s.period);
                    }
                    if children {
                        // perf walks the chain in print order and counts each row once
                        // per sample, with the chain from that entry on; the rows are
                        // made in that order.
                        // perf compares each entry with those already counted through a
                        // stand-in (`he_tmp`) that has the entry's map but no time and no
                        // socket, and a repeat is not filed at all: with `time` as a key
                        // (and a time past the first quantum), or `socket` (and a socket
                        // other than 0), no entry is ever a repeat, and a row counts once
                        // per entry. An entry that is no repeat walks down the tree as any
                        // location does, and can miss the row it would have repeated.
                        let mut seen: Vec<usize> = vec![self_row];
                        for (i, c) in chain.into_iter().enumerate() {
                            let k = c.key;
                            let mut stand_in = Row::stand_in(Key {
                                time: 0,
                                socket: 0,
                                cgroup: 0,
                                cgroup_ns: (0, 0),
                                ..k.clone()
                            });
                            stand_in.map_dso = c.dso.map(short_dso);
                            if seen
                                .iter()
                                .any(|&r| entry_cmp(keys, &h.rows[r], &stand_in) == Ordering::Equal)
                            {
                                continue;
                            }
                            let row = h.row(
                                keys,
                                k,
                                s.tid,
                                c.kernel,
                                c.dso,
                                c.unresolved,
                                c.map,
                                &machine,
                                filtered,
                            );
                            if c.kept_line {
                                h.rows[row].mark(MADE_SRCLINE);
                            }
                            seen.push(row);
                            if trees {
                                h.rows[row]
                                    .tree
                                    .get_or_insert_with(CallTree::default)
                                    .add(&frames[i..], s.period);
                            }
                        }
                        for row in seen {
                            h.rows[row].totals.children += s.period;
                        }
                    }
                }
            }
            other => {
                match other {
                    Event::Cgroup { cgroup, path, .. } => {
                        cgroups
                            .entry(cgroup)
                            .or_insert_with(|| String::from_utf8_lossy(path).into_owned());
                    }
                    Event::Namespaces { tid, links, .. } => {
                        let ns = links.iter().nth(CGROUP_NS_INDEX).unwrap_or((0, 0));
                        cgroup_ns.insert(tid, ns);
                    }
                    Event::Task {
                        exit: false, tid, ..
                    } => {
                        cgroup_ns.remove(&tid);
                    }
                    _ => {}
                }
                machine.apply(&other)
            }
        }
    }
    // perf's `report__collapse_hists`: each event's rows merged again when a key asks
    // for it; in a group shown together, each other event's rows then matched with
    // the leader's (`hists__match`), and those without a match added to the leader's
    // (`hists__link`).
    for h in &mut hists {
        if columns.collapse {
            h.collapse(keys);
        }
    }
    // perf's `hists__filter_by_symbol`, on the first event's rows.
    if let (Some(text), Some(h)) = (&opts.symbol_filter, hists.first_mut()) {
        h.filter_by_symbol(text);
    }
    let groups = event_groups(file, opts.group)?;
    let shown_together = opts.group != Some(false);
    if shown_together {
        for g in &groups {
            link_group(&mut hists, g, keys, opts.relative);
        }
    }
    let w = |e: io::Error| {
        PerfDataError::new(
            file.path(),
            "output",
            0,
            crate::perf::data::PerfDataErrorKind::Io(e),
        )
    };
    let mut text = Vec::new();
    if let Some(block) = &opts.header_block {
        text.extend_from_slice(block);
    } else if !opts.quiet {
        text.extend_from_slice(
            b"# To display the perf.data header info, please use --header/--header-only options.\n#\n",
        );
    }
    // A filter of one value: its line, in the order of the keys (also with -q).
    for k in keys {
        if let Some(e) = elided_by(*k) {
            if let Some(v) = opts.filter.single(e) {
                text.extend_from_slice(format!("# {}: {v}\n", e.name()).as_bytes());
            }
        }
    }
    let rows: usize = hists.iter().map(|h| h.rows.len()).sum();
    if rows == 0 {
        out.write_all(&text).map_err(w)?;
        return Ok((0, out_of_order));
    }
    if !opts.quiet {
        text.extend_from_slice(b"#\n");
        text.extend_from_slice(format!("# Total Lost Samples: {lost}\n#\n").as_bytes());
    }
    for i in 0..hists.len() {
        let group = groups.iter().find(|g| g.leader == i);
        let member = groups
            .iter()
            .any(|g| i > g.leader && i < g.leader + g.members);
        if hists[i].samples == 0 || (shown_together && member) {
            continue;
        }
        let counts = |h: &EventHists| {
            if opts.relative {
                (h.unfiltered_samples, h.unfiltered_period())
            } else {
                (h.samples, h.period)
            }
        };
        let (mut samples, mut period) = counts(&hists[i]);
        let mut name = event_name(&file.attrs()[i], catalog);
        if let (Some(g), true) = (group, shown_together) {
            // perf's `evsel__group_desc`, and the counts of all the group's events.
            let names: Vec<String> = (g.leader..g.leader + g.members)
                .map(|e| event_name(&file.attrs()[e], catalog))
                .collect();
            name = match (&g.name, g.forced) {
                (_, true) => names.join(", "),
                (Some(n), _) => format!("{n} {{ {} }}", names.join(", ")),
                (None, _) => format!("anon group {{ {} }}", names.join(", ")),
            };
            for member in &hists[g.leader + 1..g.leader + g.members] {
                let (s, p) = counts(member);
                samples += s;
                period += p;
            }
        }
        let plural = if group.is_some_and(|g| g.members > 1) {
            "s"
        } else {
            ""
        };
        let h = &mut hists[i];
        // perf's convert_unit: K, M, G above a thousand, else a space.
        let (mut n, mut unit) = (samples, ' ');
        for u in ['K', 'M', 'G'] {
            if n > 1000 {
                n /= 1000;
                unit = u;
            }
        }
        if !opts.quiet {
            let time = match &opts.time_str {
                Some(t) => format!(" (time slices: {t})"),
                None => String::new(),
            };
            text.extend_from_slice(
                format!(
                    "# Samples: {n}{unit} of event{plural} '{name}'{time}\n# Event count (approx.): {period}\n#\n"
                )
                .as_bytes(),
            );
        }
        write_table(
            h,
            columns,
            children,
            graph,
            order,
            opts,
            &mut machine,
            &cgroups,
            &mut text,
        );
        text.extend_from_slice(b"\n\n");
    }
    if !opts.quiet {
        text.extend_from_slice(b"#\n#\n");
    }
    if opts.show_threads {
        let table = if opts.threads_raw {
            threads.render_raw()
        } else {
            threads.render()
        };
        text.extend_from_slice(table.as_bytes());
    }
    out.write_all(&text).map_err(w)?;
    Ok((rows, out_of_order))
}

/// The filter whose single value makes perf leave out the column of `k`.
fn elided_by(k: SortKey) -> Option<Elided> {
    match k {
        SortKey::Comm => Some(Elided::Comm),
        SortKey::Dso => Some(Elided::Dso),
        SortKey::Sym => Some(Elided::Symbol),
        _ => None,
    }
}

/// The columns perf shows (`sort__setup_elide`): those of a filter with one value are
/// left out, unless that would leave out every column.
fn shown_keys(keys: &[SortKey], filter: &SampleFilter) -> Vec<SortKey> {
    let elided = |k: &SortKey| elided_by(*k).is_some_and(|e| filter.single(e).is_some());
    if keys.iter().all(elided) {
        return keys.to_vec();
    }
    keys.iter().copied().filter(|k| !elided(k)).collect()
}

/// C's `%.3d`: at least three digits.
fn three_digits(n: i32) -> String {
    if n < 0 {
        format!("-{:03}", n.unsigned_abs())
    } else {
        format!("{n:03}")
    }
}

/// perf's width of a symbol's column (`hists__calc_col_len`): the name's length as
/// its `u16 namelen` holds it, plus 4 for the level (`[.] `), kept in a `u16` too.
fn sym_col_len(name: &str) -> usize {
    (name.len() as u16).wrapping_add(4) as usize
}

/// C's `%.*s`: `s` cut to `w` characters.
fn push_cut(line: &mut String, s: &str, w: usize) {
    match s.char_indices().nth(w) {
        Some((end, _)) => line.push_str(&s[..end]),
        None => line.push_str(s),
    }
}

/// C's `%-*s` (`%*s` when `right`), and `%-*.*s` when `cut`: written by hand, as a
/// column can be wider than Rust's format width allows.
fn push_padded(line: &mut String, s: &str, w: usize, right: bool, cut: bool) {
    let shown = if cut {
        s.char_indices().nth(w).map_or(s, |(end, _)| &s[..end])
    } else {
        s
    };
    let pad = w.saturating_sub(shown.chars().count());
    if right {
        line.extend(std::iter::repeat(' ').take(pad));
    }
    line.push_str(shown);
    if !right {
        line.extend(std::iter::repeat(' ').take(pad));
    }
}

/// The text of column `k` for a row; `sym_width` is the symbol column's width.
fn cell(
    k: SortKey,
    key: &Key,
    t: &Totals,
    sym_width: usize,
    machine: &mut Machine,
    cgroups: &HashMap<u64, String>,
) -> String {
    match k {
        SortKey::Cgroup if key.cgroup == 0 => "N/A".to_string(),
        SortKey::Cgroup => cgroups
            .get(&key.cgroup)
            .map_or_else(|| "unknown".to_string(), String::clone),
        SortKey::CgroupId => format!("{}/{:#x}", key.cgroup_ns.0, key.cgroup_ns.1),
        SortKey::Comm => key.comm.clone(),
        SortKey::Pid => format!("{:>7}:{}", key.pid, machine.comm(key.pid)),
        SortKey::Dso => key
            .dso_shown
            .clone()
            .or_else(|| key.dso.clone())
            .unwrap_or_else(|| "[unknown]".into()),
        // C's `%#llx`: no 0x for zero.
        SortKey::Addr if key.addr == 0 => "0".to_string(),
        SortKey::Addr => format!("{:#x}", key.addr),
        SortKey::Cpu => three_digits(key.cpu),
        SortKey::Socket => three_digits(key.socket),
        // C's `%*d` of a 64-bit size: its low 32 bits, signed.
        SortKey::DsoSize => match key.map_size {
            Some(n) => (n as u32 as i32).to_string(),
            None => "unknown".to_string(),
        },
        SortKey::Parent => key.parent.clone().unwrap_or_else(|| "[other]".into()),
        SortKey::Srcline => key.srcline.clone().unwrap_or_default(),
        SortKey::Srcfile => key.srcfile.clone().unwrap_or_default(),
        // `timestamp__scnprintf_usec`.
        SortKey::Time => format!(
            "{}.{:06}",
            key.time / 1_000_000_000,
            key.time % 1_000_000_000 / 1000
        ),
        SortKey::Trace => key.trace.clone().unwrap_or_else(|| "N/A".into()),
        SortKey::Sym => {
            let level = if t.kernel { "[k] " } else { "[.] " };
            match &key.sym {
                // `"%.*s"` with what the column leaves after the level: a name longer
                // than the column (one whose 16-bit length wrapped) is cut.
                SymKey::Resolved { name, inlined, .. } => {
                    let mut s = String::from(level);
                    push_cut(&mut s, name, sym_width.saturating_sub(level.len()));
                    if *inlined {
                        s.push_str(" (inlined)");
                    }
                    s
                }
                // C's `%#.16llx`: no 0x for zero.
                SymKey::Unresolved(0) => format!("{level}{:016x}", 0),
                SymKey::Unresolved(a) => format!("{level}0x{a:016x}"),
                SymKey::Unsorted => String::new(),
            }
        }
    }
}

/// The rows in perf's output order, each with the texts perf had made of it when it
/// filed it: filed as they were made (`entries_in`), merged
/// in that order when a key needs it (`hists__collapse_resort`), and filed again in
/// that order by the output comparison (`hists__output_resort`), each time into a
/// red-black tree, whose shape decides between rows the comparison does not order.
fn output_order(
    h: &mut EventHists,
    columns: &Columns,
    children: bool,
    graph: &CallGraph,
    order: ChainOrder,
) -> Vec<(usize, u8)> {
    let made = h.current_order();
    let h = &*h;
    let depth = |r: &Row| r.tree.as_ref().map_or(0, CallTree::max_depth);
    // `hist_entry__sort(a, b)`: the sort list's columns in turn; `a` goes left of `b`
    // when it is Greater.
    let members = h.member_totals.len();
    let sort = |ia: usize, ib: usize| {
        let (a, b) = (&h.rows[ia], &h.rows[ib]);
        let (ta, tb) = (&a.totals, &b.totals);
        let mut o = Ordering::Equal;
        for c in &columns.sort {
            o = o.then_with(|| match c {
                // `__hpp__sort_acc`: nothing to compare without accumulated chains.
                Column::Children if !children => Ordering::Equal,
                Column::Children => ta.children.cmp(&tb.children).then_with(|| {
                    // Callers above their callees when a thread's rows have equal
                    // Children shares; rows of different threads are equal here.
                    if graph.mode == GraphMode::None || ta.first_tid != tb.first_tid {
                        return Ordering::Equal;
                    }
                    match order {
                        ChainOrder::Caller => depth(a).cmp(&depth(b)),
                        ChainOrder::Callee => depth(b).cmp(&depth(a)),
                    }
                }),
                // `__hpp__sort`: the event's count, then those of the group's
                // other events in turn.
                Column::Overhead
                | Column::Period
                | Column::OverheadSys
                | Column::OverheadUs
                | Column::Samples => {
                    let mut o = own_count(*c, ta).cmp(&own_count(*c, tb));
                    for m in 0..members {
                        o = o.then_with(|| {
                            own_count(*c, &h.pairs[ia][m]).cmp(&own_count(*c, &h.pairs[ib][m]))
                        });
                    }
                    o
                }
                Column::Key(k) => match k {
                    SortKey::Dso => dso_cmp(
                        a.key.dso_shown.as_deref().or(a.key.dso.as_deref()),
                        b.key.dso_shown.as_deref().or(b.key.dso.as_deref()),
                    ),
                    // `sort__sym_sort`: by name; rows without a symbol are equal.
                    SortKey::Sym => {
                        let name = |r: &Row| match &r.key.sym {
                            SymKey::Resolved { name, .. } => Some(name.clone()),
                            _ => None,
                        };
                        match (name(a), name(b)) {
                            (Some(x), Some(y)) => y.cmp(&x),
                            (x, y) => cmp_null(x, y),
                        }
                    }
                    _ => key_cmp(*k, a, b),
                },
            });
        }
        o
    };
    let mut output = RbOrder::new();
    let mut filed: Vec<(usize, u8)> = Vec::with_capacity(made.len());
    for i in made {
        let t = &h.rows[i].totals;
        if !h.rows[i].dummy && ((children && t.children == 0) || (!children && t.self_ == 0)) {
            continue;
        }
        output.insert(|e| sort(i, filed[e].0) == Ordering::Greater);
        // perf sizes the columns by a row's texts right after filing it.
        filed.push((i, h.rows[i].made.get()));
    }
    output.in_order().into_iter().map(|e| filed[e]).collect()
}

/// A row's own count of an overhead column.
fn own_count(c: Column, t: &Totals) -> u64 {
    match c {
        Column::Children => t.children,
        Column::OverheadSys => t.period_sys,
        Column::OverheadUs => t.period_us,
        Column::Samples => t.samples,
        Column::Overhead | Column::Period => t.self_,
        Column::Key(_) => 0,
    }
}

/// How a sort key's cell is made: the text perf's `se_snprintf` writes (in which a
/// separator's first character becomes a dot), and the spaces perf adds after it to
/// line the columns up (`hist_entry__snprintf_alignment`, for all but the last).
fn key_cell(k: SortKey, text: &str, width: usize, last: bool) -> (String, usize) {
    let mut s = String::new();
    let aligned = match k {
        SortKey::Sym | SortKey::Addr => {
            s.push_str(text);
            !(k == SortKey::Sym && last)
        }
        // C's `%s`: as it is, lined up unless last.
        SortKey::Cgroup | SortKey::CgroupId => {
            s.push_str(text);
            !last
        }
        // C's `%-.*s`: cut to the width, not padded.
        SortKey::Time | SortKey::Trace | SortKey::Srcline | SortKey::Srcfile => {
            push_cut(&mut s, text, width);
            !last
        }
        SortKey::Cpu | SortKey::Socket | SortKey::DsoSize => {
            push_padded(&mut s, text, width, true, false);
            false
        }
        // C's `%-*.*s`: padded and cut to the width.
        _ => {
            push_padded(&mut s, text, width, false, true);
            false
        }
    };
    let pad = if aligned {
        width.saturating_sub(s.chars().count())
    } else {
        0
    };
    (s, pad)
}

#[allow(clippy::too_many_arguments)]
fn write_table(
    h: &mut EventHists,
    columns: &Columns,
    children: bool,
    graph: &CallGraph,
    order: ChainOrder,
    opts: &PerfReportOptions,
    machine: &mut Machine,
    cgroups: &HashMap<u64, String>,
    out: &mut Vec<u8>,
) {
    let mut shown = output_order(h, columns, children, graph, order);
    let members = h.member_totals.len();
    let h = &*h;
    let out_keys: Vec<SortKey> = columns
        .output
        .iter()
        .filter_map(|c| match c {
            Column::Key(k) => Some(*k),
            _ => None,
        })
        .collect();
    let keys = &shown_keys(&out_keys, &opts.filter)[..];
    let out_cols: Vec<Column> = columns
        .output
        .iter()
        .copied()
        .filter(|c| match c {
            Column::Key(k) => keys.contains(k),
            _ => true,
        })
        .collect();
    // perf files the rows its filters (and `-x`) hide in its output tree (they shape
    // it) and skips them when printing and sizing the columns.
    shown.retain(|&(i, _)| !h.rows[i].filtered);
    let total = if opts.relative {
        h.unfiltered_period()
    } else {
        h.period
    };
    let made: Vec<u8> = shown.iter().map(|&(i, _)| h.rows[i].made.get()).collect();
    let made_when_filed: Vec<u8> = shown.iter().map(|&(_, m)| m).collect();
    // Rows of one key can be several (see [`EventHists::row`]): each keeps its own
    // call chains.
    let trees: Vec<Option<&CallTree>> = shown
        .iter()
        .map(|&(i, _)| h.rows[i].tree.as_ref())
        .collect();
    let pair_rows: Vec<&[Totals]> = shown
        .iter()
        .map(|&(i, _)| h.pairs.get(i).map_or(&[][..], |p| &p[..]))
        .collect();
    let rows: Vec<(&Key, &Totals)> = shown
        .into_iter()
        .map(|(i, _)| (&h.rows[i].key, &h.rows[i].totals))
        .collect();
    let unresolved = rows.iter().any(|(_, t)| t.unresolved);
    // The symbol column is sized by the names (`hists__calc_col_len`), not by the
    // texts, which can be cut to it or go past it by ` (inlined)`.
    let mut sym_width = SortKey::Sym.header().len();
    for (key, _) in &rows {
        if let SymKey::Resolved { name, .. } = &key.sym {
            sym_width = sym_width.max(sym_col_len(name));
        }
    }
    if unresolved {
        sym_width = sym_width.max(22);
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(k, t)| {
            keys.iter()
                .map(|&s| cell(s, k, t, sym_width, machine, cgroups))
                .collect()
        })
        .collect();
    let sep = opts.field_separator.as_deref();
    let widths: Vec<usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let mut w = k.header().len();
            if matches!(
                k,
                SortKey::Cpu | SortKey::Time | SortKey::Socket | SortKey::DsoSize
            ) {
                // perf's CPU column is 3 wide whatever it holds, its time column 12,
                // its socket and size columns as wide as their headers.
                w = w.max(if *k == SortKey::Time { 12 } else { 3 });
            } else if *k == SortKey::Trace {
                for ((key, _), made) in rows.iter().zip(&made) {
                    if made & MADE_TRACE != 0 {
                        w = w.max(key.trace.as_ref().map_or(0, String::len));
                    }
                }
            } else if *k == SortKey::Srcline || *k == SortKey::Srcfile {
                let bit = if *k == SortKey::Srcline {
                    MADE_SRCLINE
                } else {
                    MADE_SRCFILE
                };
                for (c, made) in cells.iter().zip(&made_when_filed) {
                    if made & bit != 0 {
                        w = w.max(c[i].len());
                    }
                }
            } else if *k == SortKey::Sym {
                w = sym_width;
            } else if *k == SortKey::CgroupId {
                // perf's column is 20 wide whatever it holds: its title's width.
            } else if *k == SortKey::Comm {
                for (_, t) in &rows {
                    w = w.max(machine.comm(t.first_tid).len());
                }
            } else {
                for c in &cells {
                    w = w.max(c[i].len());
                }
            }
            // perf's `hists__set_unres_dso_col_len`: not with a separator or `-d`.
            if *k == SortKey::Dso && unresolved && sep.is_none() && opts.filter.dsos.is_none() {
                w = w.max(16);
            }
            if *k == SortKey::Addr {
                w = w.max(18);
            }
            w
        })
        .collect();
    let key_index = |k: SortKey| keys.iter().position(|&x| x == k).unwrap_or(0);
    // perf's `hpp__width_fn`: a group's overhead column holds each event's count.
    let width_of = |c: Column| match c {
        Column::Key(k) => widths[key_index(k)],
        c => c.overhead_width().unwrap_or(0) * (members + 1),
    };
    // The columns' titles (perf's `hists__fprintf_headers`); with a separator, no
    // line of dots under them.
    let mut head = String::from("# ");
    let mut dots = String::from("# ");
    /// perf formats each column's title into a buffer of 1024 bytes: a title padded
    /// wider than that is cut (the dots below it are not).
    const TITLE_MAX: usize = 1023;
    for (i, &c) in out_cols.iter().enumerate() {
        if i > 0 {
            head.push_str(sep.unwrap_or("  "));
            dots.push_str("  ");
        }
        let w = width_of(c);
        push_padded(
            &mut head,
            columns.title(c),
            w.min(TITLE_MAX),
            c.overhead_width().is_some(),
            false,
        );
        dots.push_str(&".".repeat(w));
    }
    if !opts.quiet {
        out.extend_from_slice(head.as_bytes());
        out.push(b'\n');
        if sep.is_none() {
            out.extend_from_slice(format!("{dots}\n#\n").as_bytes());
        }
    }
    let pct = |v: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * v as f64 / total as f64
        }
    };
    for ((((_, t), c), tree), pairs) in rows.iter().zip(&cells).zip(trees).zip(&pair_rows) {
        // `--percent-limit`: perf compares the share as a float.
        let share = if children { t.children } else { t.self_ };
        if opts.percent_limit > 0.0 && (pct(share) as f32) < opts.percent_limit {
            continue;
        }
        let mut line = String::new();
        for (i, &col) in out_cols.iter().enumerate() {
            let last = i + 1 == out_cols.len();
            if sep.is_none() || i > 0 {
                line.push_str(sep.unwrap_or("  "));
            }
            let w = width_of(col);
            let (text, pad) = match col {
                Column::Key(k) => {
                    let (text, pad) = key_cell(k, &c[key_index(k)], w, last);
                    (replace_separator(&text, sep), pad)
                }
                col => {
                    let base = col.overhead_width().unwrap_or(0);
                    let text = if col == Column::Children && !children {
                        // perf's `hpp__fmt_acc` without accumulated chains.
                        format!("{:>base$}", "N/A")
                    } else {
                        // The event's count, then those of the group's other events.
                        let mut text = String::new();
                        let counts = std::iter::once((*t, total))
                            .chain(pairs.iter().zip(h.member_totals.iter().copied()));
                        for (t, total) in counts {
                            let v = own_count(col, t);
                            let value = if col.is_percent() {
                                let p = if total == 0 {
                                    0.0
                                } else {
                                    100.0 * v as f64 / total as f64
                                };
                                format!("{p:.2}")
                            } else {
                                v.to_string()
                            };
                            text.push_str(&overhead_cell(
                                &value,
                                col.is_percent(),
                                base,
                                sep.is_some(),
                            ));
                        }
                        text
                    };
                    let pad = if last {
                        0
                    } else {
                        w.saturating_sub(text.len())
                    };
                    (text, pad)
                }
            };
            line.push_str(&text);
            line.extend(std::iter::repeat(' ').take(pad));
        }
        line.push('\n');
        out.extend_from_slice(line.as_bytes());
        if let Some(tree) = tree {
            let cx = GraphContext {
                graph: *graph,
                // perf's call graphs take shares of the whole event, whatever
                // `--percentage` says.
                total: h.period,
                threshold_total: if opts.relative {
                    h.callchain_unfiltered_period()
                } else {
                    total
                },
                row: if children { t.children } else { t.self_ },
                sym_first: columns.sym_first,
                folded_separator: sep,
            };
            out.extend_from_slice(render(tree, cx).as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf reads the number with C's `strtoul(arg, &end, 0)` and then a unit.
    #[test]
    fn time_quantum_units_and_bases() {
        assert_eq!(parse_time_quantum("10ms"), Ok(10_000_000));
        assert_eq!(parse_time_quantum("10 ms"), Ok(10_000_000));
        assert_eq!(parse_time_quantum("2s"), Ok(2_000_000_000));
        assert_eq!(parse_time_quantum("7us"), Ok(7_000));
        assert_eq!(parse_time_quantum("5000ns"), Ok(5_000));
        assert_eq!(parse_time_quantum("5000"), Ok(5_000));
        assert_eq!(parse_time_quantum("0x10"), Ok(16));
        assert_eq!(parse_time_quantum("010"), Ok(8));
        for bad in ["0", "00", "ms", "", "10xs", "10 m", "99999999999999999999s"] {
            assert!(parse_time_quantum(bad).is_err(), "{bad}");
        }
    }
}
