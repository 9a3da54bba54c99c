//! `hist`: a histogram of the call stacks of a trace.dat, as `trace-cmd hist` prints it.
//!
//! Every record adds one call chain, innermost first, to a tree per task (or one tree for
//! all tasks with `-P`): the tree's top-level chains are the innermost entries, each with
//! the callers seen under it, counted. What a chain is depends on the record:
//! * `ftrace:kernel_stack` (the `stacktrace` option, `record -T`): the functions of the
//!   stack, with the event it follows on top (printed as `*event*`);
//! * any other event: the event's name, on top of the function stack being tracked;
//! * `ftrace:function` and `funcgraph_entry`/`funcgraph_exit` track that function stack
//!   per task, and a chain is added whenever the stack unwinds.
//!
//! The records are read one CPU after the other, not merged by time, as trace-cmd reads
//! them; a file with instance buffers is read per instance (not the top buffer), the
//! counts of the earlier instances carried into the later tables, as trace-cmd does.
//! Functions are named with the file's kallsyms (a function is one kallsyms symbol) and
//! tasks with its saved cmdlines, then the comms of `sched_switch`/`sched_wakeup`
//! records for the pids those lack. Children are ordered by count, largest first; equal
//! counts keep the newest first, as trace-cmd's list merge sort leaves them. An address no
//! symbol contains names a frame `(null)`, trace-cmd's text for it.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use super::analysis::{open_records, read_error, Analysis, AnalysisError};
use crate::render::tracecmd::{
    read_uint, Catalog, Cmdlines, DatCatalog, DatSource, FieldSpec, RecordSource,
};

/// A frame: an index into the names, or None for an address no symbol contains.
type Frame = Option<u32>;

/// A node of the chain trees.
#[derive(Debug)]
struct Node {
    func: Frame,
    /// Callers, oldest first (trace-cmd's list is newest first).
    parents: Vec<usize>,
    count: i64,
    event: bool,
    pid: i32,
}

/// A task's function stack put aside while another task runs.
#[derive(Debug)]
struct Saved {
    pid: i32,
    ips: Vec<Frame>,
}

/// The fields `hist` reads, per event id.
#[derive(Debug, Default)]
struct Ids {
    function: Option<(u16, Option<FieldSpec>, Option<FieldSpec>)>,
    graph_entry: Option<(u16, Option<FieldSpec>, Option<FieldSpec>)>,
    graph_exit: Option<(u16, Option<FieldSpec>)>,
    kernel_stack: Option<(u16, Option<FieldSpec>)>,
    /// sched_wakeup and sched_wakeup_new: (id, comm, pid).
    wakeups: Vec<(u16, Option<FieldSpec>, Option<FieldSpec>)>,
    /// sched_switch: (id, prev_comm, prev_pid, next_comm, next_pid).
    switch: Option<(u16, [Option<FieldSpec>; 4])>,
}

/// The histogram's state, kept across the instance buffers of a file as trace-cmd keeps
/// it.
#[derive(Debug, Default)]
struct Hist {
    compact: bool,
    names: Vec<String>,
    interned: HashMap<(u64, bool, String), u32>,
    nodes: Vec<Node>,
    /// Roots per pid (the compact root is pid 0).
    roots: Vec<(i32, usize)>,
    /// Top-level chains, oldest first.
    chains: Vec<usize>,
    total: i64,
    ips: Vec<Frame>,
    current_pid: i32,
    saved: Vec<Saved>,
    pending_pid: i32,
    pending: Vec<Frame>,
    line_mask: u64,
}

impl Hist {
    fn new(compact: bool) -> Hist {
        Hist {
            compact,
            current_pid: -1,
            pending_pid: -1,
            ..Hist::default()
        }
    }

    fn intern(&mut self, key: (u64, bool, &str)) -> u32 {
        if let Some(&i) = self.interned.get(&(key.0, key.1, key.2.to_string())) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(key.2.to_string());
        self.interned.insert((key.0, key.1, key.2.to_string()), i);
        i
    }

    fn function(&mut self, catalog: &DatCatalog, addr: u64) -> Frame {
        let (name, start) = catalog.function(addr)?;
        let name = name.to_string();
        Some(self.intern((start, false, &name)))
    }

    fn reset_stack(&mut self) {
        self.current_pid = -1;
        self.ips = Vec::new();
    }

    fn save_stack(&mut self) {
        let ips = std::mem::take(&mut self.ips);
        self.saved.push(Saved {
            pid: self.current_pid,
            ips,
        });
        self.reset_stack();
    }

    fn restore_stack(&mut self, pid: i32) {
        if let Some(i) = self.saved.iter().rposition(|s| s.pid == pid) {
            let s = self.saved.remove(i);
            self.current_pid = s.pid;
            self.ips = s.ips;
        }
    }

    fn root(&mut self, pid: i32) -> usize {
        let pid = if self.compact { 0 } else { pid };
        if let Some(&(_, r)) = self.roots.iter().find(|(p, _)| *p == pid) {
            return r;
        }
        let r = self.new_node(None, pid, false);
        self.roots.push((pid, r));
        r
    }

    fn new_node(&mut self, func: Frame, pid: i32, event: bool) -> usize {
        self.nodes.push(Node {
            func,
            parents: Vec::new(),
            count: 0,
            event,
            pid,
        });
        self.nodes.len() - 1
    }

    /// Count `chain` (outermost first) under `pid`'s tree.
    fn save_call_chain(&mut self, pid: i32, chain: &[Frame], event: bool) {
        let root = self.root(pid);
        let tree_pid = self.nodes[root].pid;
        let mut node = root;
        let mut size = chain.len();
        let mut event = event;
        loop {
            if self.nodes[node].func.is_none() {
                self.total += 1;
            }
            self.nodes[node].count += 1;
            if size == 0 {
                return;
            }
            size -= 1;
            let want = chain[size];
            // trace-cmd searches its list newest first.
            let found = self.nodes[node]
                .parents
                .iter()
                .rev()
                .copied()
                .find(|&c| self.nodes[c].func == want);
            node = match found {
                Some(c) => c,
                None => {
                    let c = self.new_node(want, tree_pid, event);
                    self.nodes[node].parents.push(c);
                    if self.nodes[node].func.is_none() {
                        self.chains.push(c);
                    }
                    c
                }
            };
            event = false;
        }
    }

    fn copy_stack_to_pending(&mut self, pid: i32) {
        self.pending_pid = pid;
        self.pending = self.ips.clone();
    }

    fn reset_pending(&mut self) {
        self.pending_pid = -1;
        self.pending = Vec::new();
    }

    fn switch_to(&mut self, pid: i32) {
        if self.current_pid >= 0 && pid != self.current_pid {
            self.save_stack();
            self.restore_stack(pid);
        }
        self.current_pid = pid;
    }

    fn unwind_to(&mut self, pid: i32, depth: u64) {
        if self.ips.len() as u64 != depth {
            let ips = self.ips.clone();
            self.save_call_chain(pid, &ips, false);
            while self.ips.len() as u64 > depth {
                self.ips.pop();
            }
        }
    }

    fn function_record(&mut self, pid: i32, func: Frame, parent: Frame) {
        self.switch_to(pid);
        if !self.ips.is_empty() {
            if self.ips.last() == Some(&parent) {
                self.ips.push(func);
            } else {
                let ips = self.ips.clone();
                self.save_call_chain(pid, &ips, false);
                while !self.ips.is_empty() {
                    self.ips.pop();
                    if self.ips.last() == Some(&parent) {
                        self.ips.push(func);
                        break;
                    }
                }
            }
        }
        if self.ips.is_empty() {
            self.ips.push(parent);
            self.ips.push(func);
        }
    }

    fn kernel_stack(&mut self, pid: i32, frames: Vec<Frame>) {
        if self.pending_pid >= 0 && pid != self.pending_pid {
            self.reset_pending();
            return;
        }
        let mut restore = false;
        if self.pending_pid >= 0 {
            if self.current_pid >= 0 {
                self.save_stack();
                restore = true;
            }
        } else if self.current_pid >= 0 {
            self.copy_stack_to_pending(self.current_pid);
            self.reset_stack();
        }
        self.current_pid = pid;
        self.ips.extend(frames);
        if self.pending_pid >= 0 {
            // trace-cmd reads the top of an empty pending stack too; nothing is there.
            if let Some(&top) = self.pending.last() {
                self.ips.push(top);
            }
            self.reset_pending();
        }
        let ips = self.ips.clone();
        self.save_call_chain(self.current_pid, &ips, true);
        if restore {
            self.restore_stack(self.current_pid);
        }
    }

    fn other_event(&mut self, pid: i32, name: Frame) {
        if self.pending_pid >= 0 {
            let p = std::mem::take(&mut self.pending);
            self.save_call_chain(self.pending_pid, &p, true);
            self.reset_pending();
        }
        self.ips.push(name);
        self.copy_stack_to_pending(pid);
        self.ips.pop();
    }

    fn flush_stack(&mut self) {
        if self.current_pid < 0 {
            return;
        }
        let ips = std::mem::take(&mut self.ips);
        self.save_call_chain(self.current_pid, &ips, false);
        self.reset_stack();
    }

    fn finish(&mut self) {
        if self.current_pid >= 0 {
            let ips = self.ips.clone();
            self.save_call_chain(self.current_pid, &ips, false);
        }
        if self.pending_pid >= 0 {
            let p = self.pending.clone();
            self.save_call_chain(self.pending_pid, &p, true);
        }
        while let Some(last) = self.saved.last() {
            let pid = last.pid;
            self.restore_stack(pid);
            let ips = self.ips.clone();
            self.save_call_chain(self.current_pid, &ips, false);
        }
    }

    /// A list of nodes (oldest first) in trace-cmd's printing order: by count, largest
    /// first, equal counts newest first.
    fn sorted(&self, list: &[usize]) -> Vec<usize> {
        let mut v: Vec<usize> = list.iter().rev().copied().collect();
        v.sort_by_key(|&n| std::cmp::Reverse(self.nodes[n].count));
        v
    }

    fn name(&self, f: Frame) -> &str {
        f.map_or("(null)", |i| self.names[i as usize].as_str())
    }

    fn single_chain(&self, mut n: usize) -> bool {
        loop {
            match self.nodes[n].parents.len() {
                0 => return true,
                1 => n = self.nodes[n].parents[0],
                _ => return false,
            }
        }
    }

    fn indent(&self, out: &mut dyn Write, indent: u32) -> io::Result<()> {
        for i in 0..indent {
            // trace-cmd tests the bit with an int shift, sign-extended.
            let bit = 1i32.wrapping_shl(i) as i64 as u64;
            out.write_all(if self.line_mask & bit != 0 {
                b"            |"
            } else {
                b"             "
            })?;
        }
        Ok(())
    }

    fn single_parent(&self, out: &mut dyn Write, n: usize, indent: u32) -> io::Result<()> {
        self.indent(out, indent)?;
        let p = self.sorted(&self.nodes[n].parents)[0];
        writeln!(out, "          {}", self.name(self.nodes[p].func))
    }

    fn dump_chain(&self, out: &mut dyn Write, mut n: usize, indent: u32) -> io::Result<()> {
        while !self.nodes[n].parents.is_empty() {
            self.single_parent(out, n, indent)?;
            n = self.sorted(&self.nodes[n].parents)[0];
        }
        Ok(())
    }

    fn print_parents(&mut self, out: &mut dyn Write, n: usize, indent: u32) -> io::Result<()> {
        if self.single_chain(n) {
            return self.dump_chain(out, n, indent);
        }
        self.line_mask |= 1u64.wrapping_shl(indent);
        let parents = self.sorted(&self.nodes[n].parents);
        let count = self.nodes[n].count;
        for (x, &p) in parents.iter().enumerate() {
            self.indent(out, indent + 1)?;
            writeln!(out)?;
            self.indent(out, indent + 1)?;
            writeln!(
                out,
                "--%{:.2}-- {}  # {}",
                percent(count, self.nodes[p].count),
                self.name(self.nodes[p].func),
                self.nodes[p].count
            )?;
            if x == parents.len() - 1 {
                self.line_mask &= 1u64.wrapping_shl(indent).wrapping_sub(1);
            }
            if self.single_chain(p) {
                self.dump_chain(out, p, indent + 1)?;
            } else {
                let mut q = p;
                while self.nodes[q].parents.len() == 1 {
                    let only = self.nodes[q].parents[0];
                    if self.nodes[only].count != self.nodes[q].count {
                        break;
                    }
                    self.single_parent(out, q, indent + 1)?;
                    q = only;
                }
                self.print_parents(out, q, indent + 1)?;
            }
        }
        Ok(())
    }

    fn print(&mut self, out: &mut dyn Write, comms: &Cmdlines) -> io::Result<()> {
        let chains = self.sorted(&self.chains);
        for (i, &c) in chains.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            let n = &self.nodes[c];
            let pct = percent(self.total, n.count);
            if self.compact {
                writeln!(
                    out,
                    "  %{pct:.2} <all pids> {:>30} #{}",
                    self.name(n.func),
                    n.count
                )?;
            } else {
                writeln!(
                    out,
                    "  %{pct:.2}  ({}) {} {:>30} #{}",
                    n.pid,
                    &*comms.comm(n.pid),
                    self.name(n.func),
                    n.count
                )?;
            }
            out.write_all(b"         |\n")?;
            let star = if n.event { "*" } else { "" };
            writeln!(out, "         --- {star}{}{star}", self.name(n.func))?;
            self.print_parents(out, c, 0)?;
        }
        // trace-cmd keeps its chains sorted in place.
        self.chains = chains.into_iter().rev().collect();
        for i in 0..self.nodes.len() {
            let sorted: Vec<usize> = self
                .sorted(&self.nodes[i].parents)
                .into_iter()
                .rev()
                .collect();
            self.nodes[i].parents = sorted;
        }
        Ok(())
    }
}

fn percent(total: i64, part: i64) -> f64 {
    part as f64 / total as f64 * 100.0
}

/// Write the call-stack histogram of the file at `path` to `out` (`compact`: one tree for
/// all tasks, trace-cmd's `-P`). Returns the warnings of sub-buffers skipped.
pub fn write_hist(
    path: &Path,
    compact: bool,
    out: &mut dyn Write,
) -> Result<Vec<String>, AnalysisError> {
    let dat = open_records(path, Analysis::Hist)?;
    let catalog = DatCatalog::from_dat(&dat);
    let endian = catalog.endian();
    let mut comms = Cmdlines::new();
    comms.load(dat.cmdlines());
    let ids = ids(&catalog);
    let long = dat.long_size();
    let mut h = Hist::new(compact);
    let mut warnings = Vec::new();
    let buffers: Vec<usize> = if dat.buffers().len() > 1 {
        (1..dat.buffers().len()).collect()
    } else {
        vec![0]
    };
    let read_err = read_error(path);
    let mut any = false;
    for b in buffers {
        let cpus: Vec<u32> = dat
            .buffer(b)
            .map_err(AnalysisError::Open)?
            .cpus()
            .iter()
            .map(|c| c.cpu)
            .collect();
        let mut cpus = cpus;
        cpus.sort_unstable();
        for cpu in cpus {
            let mut source = DatSource::open(&dat, b).map_err(AnalysisError::Open)?;
            source.retain_cpu(cpu);
            while source.peek_ts().map_err(read_err)?.is_some() {
                let Some(taken) = source.take() else { break };
                any = true;
                if taken.missed.is_some() {
                    h.flush_stack();
                }
                let d = taken.rec.data;
                let Some(ev) = taken.rec.event_id(endian) else {
                    continue;
                };
                let num = |f: Option<FieldSpec>| f.and_then(|f| read_uint(d, f, endian));
                let pid = num(catalog.field(ev, "common_pid")).unwrap_or(0) as u32 as i32;
                if let Some((_, ip, parent)) = ids.function.filter(|f| f.0 == ev) {
                    let func = h.function(&catalog, num(ip).unwrap_or(0));
                    let parent = h.function(&catalog, num(parent).unwrap_or(0));
                    h.function_record(pid, func, parent);
                } else if let Some((_, func, depth)) = ids.graph_entry.filter(|f| f.0 == ev) {
                    let func = h.function(&catalog, num(func).unwrap_or(0));
                    h.switch_to(pid);
                    h.unwind_to(pid, num(depth).unwrap_or(0));
                    h.ips.push(func);
                } else if let Some((_, depth)) = ids.graph_exit.filter(|f| f.0 == ev) {
                    h.switch_to(pid);
                    h.unwind_to(pid, num(depth).unwrap_or(0));
                } else if let Some((_, caller)) = ids.kernel_stack.filter(|f| f.0 == ev) {
                    let frames = match caller {
                        Some(c) => stack_frames(&mut h, &catalog, d, c.offset, long, endian),
                        None => Vec::new(),
                    };
                    h.kernel_stack(pid, frames);
                } else {
                    learn_comms(&ids, ev, d, endian, &mut comms);
                    let name = match catalog.event(ev) {
                        Some((_, n)) => n.to_string(),
                        None => format!("[UNKNOWN EVENT {ev}]"),
                    };
                    let frame = Some(h.intern((u64::from(ev), true, &name)));
                    h.other_event(pid, frame);
                }
            }
            warnings.extend(source.take_warnings());
        }
        if !any {
            return Err(AnalysisError::NoRecords {
                analysis: Analysis::Hist,
                path: path.to_path_buf(),
            });
        }
        h.finish();
        h.print(out, &comms)
            .map_err(|source| AnalysisError::Output {
                analysis: Analysis::Hist,
                source,
            })?;
    }
    Ok(warnings)
}

/// The frames of a kernel_stack record, outermost first: the callers up to the first
/// `-1` (a word whose low 32 bits are all ones ends it too, as in trace-cmd), read back
/// from there; addresses no symbol contains are left out.
fn stack_frames(
    h: &mut Hist,
    catalog: &DatCatalog,
    data: &[u8],
    offset: usize,
    long: usize,
    endian: crate::endian::Endianness,
) -> Vec<Frame> {
    let mut words = Vec::new();
    let mut at = offset;
    while at + long <= data.len() {
        let Some(addr) = endian.read_uint(data, at, long) else {
            break;
        };
        if (long == 8 && addr == u64::MAX) || addr as u32 == u32::MAX {
            break;
        }
        words.push(addr);
        at += long;
    }
    words
        .into_iter()
        .rev()
        .filter_map(|a| h.function(catalog, a).map(Some))
        .collect()
}

fn learn_comms(
    ids: &Ids,
    ev: u16,
    d: &[u8],
    endian: crate::endian::Endianness,
    comms: &mut Cmdlines,
) {
    let comm = |f: Option<FieldSpec>| -> Option<String> {
        let f = f?;
        let b = d.get(f.offset..)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        Some(String::from_utf8_lossy(&b[..end]).into_owned())
    };
    let num = |f: Option<FieldSpec>| f.and_then(|f| read_uint(d, f, endian));
    let learn = |c: Option<FieldSpec>, p: Option<FieldSpec>| {
        if let (Some(c), Some(p)) = (comm(c), num(p)) {
            comms.register(p as u32 as i32, &c);
        }
    };
    if let Some((_, c, p)) = ids.wakeups.iter().find(|w| w.0 == ev) {
        learn(*c, *p);
    } else if let Some((_, f)) = ids.switch.as_ref().filter(|s| s.0 == ev) {
        learn(f[0], f[1]);
        learn(f[2], f[3]);
    }
}

fn ids(catalog: &DatCatalog) -> Ids {
    let id = |sys: &str, name: &str| catalog.registry().by_name(sys, name).map(|s| s.id);
    let f = |id: u16, n: &str| catalog.field(id, n);
    let mut ids = Ids::default();
    if let Some(i) = id("ftrace", "function") {
        ids.function = Some((i, f(i, "ip"), f(i, "parent_ip")));
    }
    if let Some(i) = id("ftrace", "funcgraph_entry") {
        ids.graph_entry = Some((i, f(i, "func"), f(i, "depth")));
    }
    if let Some(i) = id("ftrace", "funcgraph_exit") {
        ids.graph_exit = Some((i, f(i, "depth")));
    }
    if let Some(i) = id("ftrace", "kernel_stack") {
        ids.kernel_stack = Some((i, f(i, "caller")));
    }
    for ev in ["sched_wakeup", "sched_wakeup_new"] {
        if let Some(i) = id("sched", ev) {
            ids.wakeups.push((i, f(i, "comm"), f(i, "pid")));
        }
    }
    if let Some(i) = id("sched", "sched_switch") {
        ids.switch = Some((
            i,
            [
                f(i, "prev_comm"),
                f(i, "prev_pid"),
                f(i, "next_comm"),
                f(i, "next_pid"),
            ],
        ));
    }
    ids
}
