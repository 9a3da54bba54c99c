//! The function_graph tracer's text layout (the kernel's `trace` file with
//! `current_tracer=function_graph`), rebuilt from raw `funcgraph_entry`/`funcgraph_exit`
//! records.
//!
//! Rules, each checked against the kernel's own `trace` text of the Debian 6.1 and 6.12
//! trees under `tracefs-fixtures/debian-*-function-graph-*` (tests/oracle_graph.rs):
//!
//! * **Leaf merging.** An entry whose next record *on the same CPU* is the exit of the same
//!   function by the same pid prints as one line `func();` with the call's duration; the
//!   exit is then consumed. Any other entry prints `func() {` with an empty duration cell.
//! * **Duration cell.** `rettime - calltime` in ns, printed as microseconds with up to three
//!   decimals while the integer part has fewer than 7 digits (the decimals are cut so the
//!   number stays within 7 digits), then ` us ` and spaces up to a fixed width, then `|  `.
//!   The mark before it (funcgraph-overhead) is the first of `$` > 1 s, `@` > 100 ms,
//!   `*` > 10 ms, `#` > 1 ms, `!` > 100 µs, `+` > 10 µs, else a space.
//! * **Nesting.** Two spaces per depth level before the function name or brace. An exit
//!   whose entry was not seen on this CPU at the same depth (lost, or before the buffer
//!   start) prints `} /* func */`, as does every exit with funcgraph-tail.
//! * **Task switches.** When the pid seen on a CPU changes, a block of three lines and an
//!   empty line names `comm-pid => comm-pid` (each centred in 14 columns, comm cut to 7
//!   characters). The first record of each CPU only sets the pid.
//! * **Other events** print as comments `/* text */`, indented by (depth + 1) levels when
//!   the CPU's current depth is positive; `trace_marker` and `trace_printk` text shows
//!   without the event name.
//! * **Columns** (options/funcgraph-*): abstime `%5lu.%06lu |  ` (the record's own
//!   timestamp, also on exit lines), cpu ` N) ` (width of the highest CPU number), proc
//!   (`comm-pid` centred, then ` | `), latency-format (` ` + the five latency characters +
//!   ` | `, plus the latency header and legend), duration, overrun (` (Overruns: N)` on its
//!   own line after a closing brace). With context-info off only the function column and
//!   the task-switch blocks remain, and the legend is not printed. All verified on both
//!   kernels (the `-proc-abstime`, `-overrun-nocpu`, `-nested`, `-latency`, `-nocontext`
//!   trees).
//! * **Debian 6.1 comments** print the first `%s` of an event empty; see
//!   [`blanks_first_string_in_comments`].
//!
//! Written from the kernel's layout but NOT verified against real output (neither Debian
//! kernel offers them or produced them): funcgraph-retval (`/* = value */`; the option is
//! absent from both), the irq `==========>` / `<==========` markers (no traced function lay
//! in `__irqentry_text_start..__irqentry_text_end`). funcgraph-irqs off (the `-wrapped`
//! trees) hides irq-entry functions and their callees in the kernel; that hiding is not
//! implemented here, since on these kernels no traced function lies in that range.

use crate::endian::Endianness;
use std::collections::HashMap;

use crate::event::{Kallsyms, Record, Registry};
use crate::render::Comms;

/// One event of the buffer, owned, so that the renderer can look ahead on a CPU.
#[derive(Debug, Clone)]
pub struct OwnedRecord {
    /// CPU whose buffer held it.
    pub cpu: u32,
    /// Timestamp (ns for the time clocks).
    pub ts: u64,
    /// Payload from `common_type` on.
    pub data: Vec<u8>,
}

impl OwnedRecord {
    /// A borrowed view in the shape the event model expects.
    pub fn record(&self) -> Record<'_> {
        Record {
            cpu: self.cpu,
            ts: self.ts,
            data: &self.data,
        }
    }
}

/// The funcgraph options that change the text (`options/funcgraph-*` and friends).
#[derive(Debug, Clone)]
pub struct GraphOptions {
    /// funcgraph-abstime: the timestamp column.
    pub abstime: bool,
    /// funcgraph-cpu: the ` N) ` column.
    pub cpu: bool,
    /// funcgraph-proc: the `comm-pid | ` column.
    pub proc_: bool,
    /// funcgraph-overhead: the duration mark.
    pub overhead: bool,
    /// funcgraph-duration: the duration column.
    pub duration: bool,
    /// funcgraph-tail: `} /* func */` on every closing brace.
    pub tail: bool,
    /// funcgraph-overrun: ` (Overruns: N)` after closing braces.
    pub overrun: bool,
    /// funcgraph-irqs: irq entry markers (off: irq functions are hidden).
    pub irqs: bool,
    /// funcgraph-retval: return values.
    pub retval: bool,
    /// funcgraph-retval-hex: return values always in hex.
    pub retval_hex: bool,
    /// context-info: when off only the function column is printed.
    pub context_info: bool,
    /// latency-format: the latency characters column and the latency header.
    pub latency: bool,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions {
            abstime: false,
            cpu: true,
            proc_: false,
            overhead: true,
            duration: true,
            tail: false,
            overrun: false,
            irqs: true,
            retval: false,
            retval_hex: false,
            context_info: true,
            latency: false,
        }
    }
}

impl GraphOptions {
    /// Read the options from a tracefs root or tree; missing files keep the kernel default.
    pub fn from_tracefs(t: &crate::tracefs::Tracefs) -> GraphOptions {
        GraphOptions::from_instance(&t.top())
    }

    /// Read the options of a buffer (`options/` of the top level or of an instance).
    pub fn from_instance(inst: &crate::tracefs::Instance) -> GraphOptions {
        let mut o = GraphOptions::default();
        let get = |name: &str, dflt: bool| match inst.read_string(format!("options/{name}")) {
            Ok(s) => s.trim() == "1",
            Err(_) => dflt,
        };
        o.abstime = get("funcgraph-abstime", o.abstime);
        o.cpu = get("funcgraph-cpu", o.cpu);
        o.proc_ = get("funcgraph-proc", o.proc_);
        o.overhead = get("funcgraph-overhead", o.overhead);
        o.duration = get("funcgraph-duration", o.duration);
        o.tail = get("funcgraph-tail", o.tail);
        o.overrun = get("funcgraph-overrun", o.overrun);
        o.irqs = get("funcgraph-irqs", o.irqs);
        o.retval = get("funcgraph-retval", o.retval);
        o.retval_hex = get("funcgraph-retval-hex", o.retval_hex);
        o.context_info = get("context-info", o.context_info);
        o.latency = get("latency-format", o.latency);
        o
    }

    /// The two header lines after `# tracer: function_graph` and `#`.
    pub fn write_header(&self, out: &mut Vec<u8>) {
        if !self.context_info {
            return;
        }
        if self.latency {
            // The irqs-off .. preempt-depth legend, indented past the enabled columns.
            let size = if self.abstime { 16 } else { 0 }
                + if self.cpu { 4 } else { 0 }
                + if self.proc_ { 17 } else { 0 };
            let pad = " ".repeat(size);
            for tail in [
                "  _-----=> irqs-off        ",
                " / _----=> need-resched    ",
                "| / _---=> hardirq/softirq ",
                "|| / _--=> preempt-depth   ",
                "||| /                      ",
            ] {
                out.extend_from_slice(format!("#{pad}{tail}\n").as_bytes());
            }
        }
        out.push(b'#');
        if self.abstime {
            out.extend_from_slice(b"     TIME       ");
        }
        if self.cpu {
            out.extend_from_slice(b" CPU");
        }
        if self.proc_ {
            out.extend_from_slice(b"  TASK/PID       ");
        }
        if self.latency {
            out.extend_from_slice(b"||||   ");
        }
        if self.duration {
            out.extend_from_slice(b"  DURATION   ");
        }
        out.extend_from_slice(b"               FUNCTION CALLS\n#");
        if self.abstime {
            out.extend_from_slice(b"      |         ");
        }
        if self.cpu {
            out.extend_from_slice(b" |  ");
        }
        if self.proc_ {
            out.extend_from_slice(b"   |    |        ");
        }
        if self.latency {
            out.extend_from_slice(b"||||   ");
        }
        if self.duration {
            out.extend_from_slice(b"   |   |      ");
        }
        out.extend_from_slice(b"               |   |   |   |\n");
    }
}

/// Field offsets of the two funcgraph events, read from their formats (they differ between
/// kernels: 6.5+ may add `retval`, older ones pack `calltime`).
#[derive(Debug, Clone)]
pub struct GraphLayout {
    entry_id: u16,
    exit_id: u16,
    ent_func: (usize, usize),
    ent_depth: (usize, usize),
    ret_func: (usize, usize),
    ret_depth: (usize, usize),
    ret_overrun: Option<(usize, usize)>,
    calltime: (usize, usize),
    rettime: (usize, usize),
    retval: Option<(usize, usize)>,
    pid: (usize, usize),
    flags: (usize, usize),
    preempt: (usize, usize),
    endian: Endianness,
}

impl GraphLayout {
    /// From the registry's `ftrace/funcgraph_entry` and `ftrace/funcgraph_exit`; `None`
    /// when the tree lacks them (capture copies `events/ftrace` always).
    pub fn from_registry(reg: &Registry, endian: Endianness) -> Option<GraphLayout> {
        let e = reg.by_name("ftrace", "funcgraph_entry")?;
        let x = reg.by_name("ftrace", "funcgraph_exit")?;
        let f = |s: &crate::event::Schema, n: &str| s.field(n).map(|f| (f.offset, f.size));
        Some(GraphLayout {
            entry_id: e.id,
            exit_id: x.id,
            ent_func: f(e, "func")?,
            ent_depth: f(e, "depth")?,
            ret_func: f(x, "func")?,
            ret_depth: f(x, "depth")?,
            ret_overrun: f(x, "overrun"),
            calltime: f(x, "calltime")?,
            rettime: f(x, "rettime")?,
            retval: f(x, "retval"),
            pid: f(e, "common_pid")?,
            flags: f(e, "common_flags")?,
            preempt: f(e, "common_preempt_count")?,
            endian,
        })
    }

    /// The call a funcgraph record tells of: its task, function and depth, and for an
    /// exit its `(calltime, rettime)`; None for any other event.
    pub fn call(&self, data: &[u8]) -> Option<GraphCall> {
        let id = self.id(data);
        let pid = self.pid(data);
        if id == self.entry_id {
            Some(GraphCall {
                pid,
                func: self.get(data, self.ent_func),
                depth: self.get(data, self.ent_depth) as u32,
                span: None,
            })
        } else if id == self.exit_id {
            Some(GraphCall {
                pid,
                func: self.get(data, self.ret_func),
                depth: self.get(data, self.ret_depth) as u32,
                span: Some((self.get(data, self.calltime), self.get(data, self.rettime))),
            })
        } else {
            None
        }
    }

    fn get(&self, data: &[u8], (off, size): (usize, usize)) -> u64 {
        let Some(b) = data.get(off..off + size) else {
            return 0;
        };
        self.endian.uint_of(b)
    }

    fn id(&self, data: &[u8]) -> u16 {
        self.get(data, (0, 2)) as u16
    }

    fn pid(&self, data: &[u8]) -> i32 {
        self.get(data, self.pid) as i32
    }
}

/// What one funcgraph record says ([`GraphLayout::call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphCall {
    /// The task.
    pub pid: i32,
    /// The function's address.
    pub func: u64,
    /// Its depth.
    pub depth: u32,
    /// For a return: `(calltime, rettime)`.
    pub span: Option<(u64, u64)>,
}

/// Everything the layout needs besides the records.
pub struct GraphRenderer<'a> {
    /// Field offsets.
    pub layout: GraphLayout,
    /// Options in effect when the kernel printed.
    pub opts: GraphOptions,
    /// Symbols for the function names (`%ps`).
    pub kallsyms: Option<&'a Kallsyms>,
    /// Task names for the proc column and task-switch blocks.
    pub comms: &'a Comms,
    /// Number of possible CPUs (the CPU column is as wide as the highest CPU number).
    pub ncpus: usize,
    /// `__irqentry_text_start..__irqentry_text_end`: functions there get irq markers.
    pub irq_range: Option<(u64, u64)>,
}

/// The irq entry text bounds from the text of `/proc/kallsyms`.
pub fn irq_range_from_kallsyms(text: &str) -> Option<(u64, u64)> {
    let (mut lo, mut hi) = (None, None);
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(a), Some(_), Some(name)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        match name {
            "__irqentry_text_start" => lo = u64::from_str_radix(a, 16).ok(),
            "__irqentry_text_end" => hi = u64::from_str_radix(a, 16).ok(),
            _ => continue,
        }
        if lo.is_some() && hi.is_some() {
            break;
        }
    }
    Some((lo?, hi?))
}

#[derive(Default, Clone)]
struct CpuState {
    last_pid: Option<i32>,
    depth: i64,
    enter_funcs: HashMap<u64, u64>,
}

const RETFUNC_DEPTH: u64 = 50;

/// Width of the centred `comm-pid` cell. Measured on Debian 6.1 and 6.12: `tracect-102`
/// (11 characters) gets one space before and two after, `cat-99` four and four.
const PROC_CELL: usize = 14;

impl<'a> GraphRenderer<'a> {
    /// Render `recs` (in the merged, time-ordered order of the `trace` file). `comment`
    /// writes the text of any other event (without a trailing newline) and returns false
    /// when it does not know the event.
    pub fn render(
        &self,
        recs: &[OwnedRecord],
        comment: &mut dyn FnMut(&Record, &mut Vec<u8>) -> bool,
        out: &mut Vec<u8>,
    ) {
        // Index of the next record on the same CPU, for leaf detection.
        let mut next_same_cpu = vec![usize::MAX; recs.len()];
        let mut last: HashMap<u32, usize> = HashMap::new();
        for (i, r) in recs.iter().enumerate() {
            if let Some(p) = last.insert(r.cpu, i) {
                next_same_cpu[p] = i;
            }
        }
        let mut consumed = vec![false; recs.len()];
        let mut cpus: HashMap<u32, CpuState> = HashMap::new();
        let irq = self.irq_range();
        let l = &self.layout;
        for (i, r) in recs.iter().enumerate() {
            if consumed[i] {
                continue;
            }
            let st = cpus.entry(r.cpu).or_insert_with(|| CpuState {
                depth: 0,
                ..Default::default()
            });
            let id = l.id(&r.data);
            let pid = l.pid(&r.data);
            if id == l.entry_id {
                let func = l.get(&r.data, l.ent_func);
                let depth = l.get(&r.data, l.ent_depth) as u32 as i64;
                let leaf = match next_same_cpu[i] {
                    usize::MAX => None,
                    j => {
                        let n = &recs[j];
                        (l.id(&n.data) == l.exit_id
                            && l.pid(&n.data) == pid
                            && l.get(&n.data, l.ret_func) == func)
                            .then_some(j)
                    }
                };
                self.prologue(out, st, r, pid, irq, Some((func, true)));
                match leaf {
                    Some(j) => {
                        consumed[j] = true;
                        let x = &recs[j].data;
                        st.depth = depth - 1;
                        if (depth as u64) < RETFUNC_DEPTH {
                            st.enter_funcs.insert(depth as u64, 0);
                        }
                        let dur = l.get(x, l.rettime).wrapping_sub(l.get(x, l.calltime));
                        self.duration(out, Some(dur));
                        indent(out, depth);
                        if self.opts.retval {
                            let rv = l.retval.map(|f| l.get(x, f)).unwrap_or(0);
                            self.write_retval(out, rv, true, func);
                        } else {
                            self.sym(out, func);
                            out.extend_from_slice(b"();\n");
                        }
                        self.irq_marker(out, r, pid, irq, func, false);
                    }
                    None => {
                        st.depth = depth;
                        if (depth as u64) < RETFUNC_DEPTH {
                            st.enter_funcs.insert(depth as u64, func);
                        }
                        self.duration(out, None);
                        indent(out, depth);
                        self.sym(out, func);
                        out.extend_from_slice(b"() {\n");
                    }
                }
            } else if id == l.exit_id {
                let func = l.get(&r.data, l.ret_func);
                let depth = l.get(&r.data, l.ret_depth) as u32 as i64;
                let mut matched = true;
                st.depth = depth - 1;
                if (depth as u64) < RETFUNC_DEPTH {
                    if st.enter_funcs.get(&(depth as u64)).copied().unwrap_or(0) != func {
                        matched = false;
                    }
                    st.enter_funcs.insert(depth as u64, 0);
                }
                self.prologue(out, st, r, pid, irq, None);
                let dur = l
                    .get(&r.data, l.rettime)
                    .wrapping_sub(l.get(&r.data, l.calltime));
                self.duration(out, Some(dur));
                indent(out, depth);
                if self.opts.retval {
                    let rv = l.retval.map(|f| l.get(&r.data, f)).unwrap_or(0);
                    self.write_retval(out, rv, false, func);
                } else if matched && !self.opts.tail {
                    out.extend_from_slice(b"}\n");
                } else {
                    out.extend_from_slice(b"} /* ");
                    self.sym(out, func);
                    out.extend_from_slice(b" */\n");
                }
                if self.opts.overrun {
                    let o = l.ret_overrun.map(|f| l.get(&r.data, f)).unwrap_or(0);
                    out.extend_from_slice(format!(" (Overruns: {o})\n").as_bytes());
                }
                self.irq_marker(out, r, pid, irq, func, false);
            } else {
                let depth = st.depth;
                let mark = out.len();
                self.prologue(out, st, r, pid, irq, None);
                self.duration_fill(out);
                if depth > 0 {
                    for _ in 0..(depth + 1) * 2 {
                        out.push(b' ');
                    }
                }
                out.extend_from_slice(b"/* ");
                if !comment(&r.record(), out) {
                    out.truncate(mark);
                    continue;
                }
                while out.last() == Some(&b'\n') {
                    out.pop();
                }
                out.extend_from_slice(b" */\n");
            }
        }
    }

    /// Task-switch block, then the context columns.
    fn prologue(
        &self,
        out: &mut Vec<u8>,
        st: &mut CpuState,
        r: &OwnedRecord,
        pid: i32,
        irq: Option<(u64, u64)>,
        entry: Option<(u64, bool)>,
    ) {
        if st.last_pid != Some(pid) {
            if let Some(prev) = st.last_pid {
                out.extend_from_slice(b" ------------------------------------------\n");
                self.cpu_col(out, r.cpu);
                self.proc_col(out, prev);
                out.extend_from_slice(b" => ");
                self.proc_col(out, pid);
                out.extend_from_slice(b"\n ------------------------------------------\n\n");
            }
            st.last_pid = Some(pid);
        }
        if let Some((func, _)) = entry {
            self.irq_marker(out, r, pid, irq, func, true);
        }
        self.context(out, r, pid);
    }

    fn context(&self, out: &mut Vec<u8>, r: &OwnedRecord, pid: i32) {
        if !self.opts.context_info {
            return;
        }
        if self.opts.abstime {
            out.extend_from_slice(
                format!(
                    "{:5}.{:06} |  ",
                    r.ts / 1_000_000_000,
                    (r.ts % 1_000_000_000) / 1000
                )
                .as_bytes(),
            );
        }
        if self.opts.cpu {
            self.cpu_col(out, r.cpu);
        }
        if self.opts.proc_ {
            self.proc_col(out, pid);
            out.extend_from_slice(b" | ");
        }
        if self.opts.latency {
            let l = &self.layout;
            let c = crate::render::latency_chars(
                l.get(&r.data, l.flags) as u8,
                l.get(&r.data, l.preempt) as u8,
            );
            out.push(b' ');
            out.extend_from_slice(&c);
            out.extend_from_slice(b" | ");
        }
    }

    fn irq_marker(
        &self,
        out: &mut Vec<u8>,
        r: &OwnedRecord,
        pid: i32,
        irq: Option<(u64, u64)>,
        func: u64,
        enter: bool,
    ) {
        let Some((lo, hi)) = irq else { return };
        if !self.opts.irqs || func < lo || func >= hi {
            return;
        }
        self.context(out, r, pid);
        if self.opts.duration && self.opts.context_info {
            out.extend_from_slice(b"  ");
        }
        out.extend_from_slice(if enter {
            b"==========>"
        } else {
            b"<=========="
        });
        if self.opts.duration && self.opts.context_info {
            out.extend_from_slice(b" |");
        }
        out.push(b'\n');
    }

    fn irq_range(&self) -> Option<(u64, u64)> {
        self.irq_range
    }

    fn cpu_col(&self, out: &mut Vec<u8>, cpu: u32) {
        let width = (self.ncpus.max(1) - 1).to_string().len();
        out.extend_from_slice(format!(" {:>width$}) ", cpu).as_bytes());
    }

    fn proc_col(&self, out: &mut Vec<u8>, pid: i32) {
        let comm: String = self.comms.comm(pid).chars().take(7).collect();
        let s = format!("{comm}-{pid}");
        let spaces = PROC_CELL.saturating_sub(s.len());
        for _ in 0..spaces / 2 {
            out.push(b' ');
        }
        out.extend_from_slice(s.as_bytes());
        for _ in 0..spaces - spaces / 2 {
            out.push(b' ');
        }
    }

    fn duration_fill(&self, out: &mut Vec<u8>) {
        if self.opts.duration && self.opts.context_info {
            out.extend_from_slice(b"              |  ");
        }
    }

    fn duration(&self, out: &mut Vec<u8>, d: Option<u64>) {
        let Some(d) = d else {
            return self.duration_fill(out);
        };
        if !self.opts.duration || !self.opts.context_info {
            return;
        }
        if self.opts.overhead {
            out.push(mark(d));
            out.push(b' ');
        } else {
            out.extend_from_slice(b"  ");
        }
        write_duration(out, d);
        out.extend_from_slice(b"|  ");
    }

    fn sym(&self, out: &mut Vec<u8>, addr: u64) {
        match self.kallsyms.and_then(|k| k.lookup(addr)) {
            Some(s) => {
                out.extend_from_slice(s.name.as_bytes());
                if let Some(m) = s.module {
                    out.extend_from_slice(format!(" [{m}]").as_bytes());
                }
            }
            None => out.extend_from_slice(format!("0x{addr:x}").as_bytes()),
        }
    }

    fn write_retval(&self, out: &mut Vec<u8>, rv: u64, leaf: bool, func: u64) {
        let mut err: i64 = 0;
        if rv != 0 && !self.opts.retval_hex {
            let e = if rv & (1 << 31) != 0 && rv >> 32 == 0 {
                rv as u32 as i32 as i64
            } else {
                rv as i64
            };
            if (-4095..0).contains(&e) {
                err = e;
            }
        }
        if leaf {
            self.sym(out, func);
            out.extend_from_slice(b"(); /* = ");
        } else {
            out.extend_from_slice(b"} /* ");
            self.sym(out, func);
            out.extend_from_slice(b" = ");
        }
        if self.opts.retval_hex || err == 0 {
            out.extend_from_slice(format!("0x{rv:x} */\n").as_bytes());
        } else {
            out.extend_from_slice(format!("{err} */\n").as_bytes());
        }
    }
}

fn indent(out: &mut Vec<u8>, depth: i64) {
    for _ in 0..depth.max(0) * 2 {
        out.push(b' ');
    }
}

/// The duration mark (funcgraph-overhead): first threshold exceeded, in ns.
pub fn mark(d: u64) -> u8 {
    const MARKS: [(u64, u8); 6] = [
        (1_000_000_000, b'$'),
        (100_000_000, b'@'),
        (10_000_000, b'*'),
        (1_000_000, b'#'),
        (100_000, b'!'),
        (10_000, b'+'),
    ];
    MARKS.iter().find(|(v, _)| d > *v).map_or(b' ', |m| m.1)
}

/// `usecs[.nnn] us ` padded: at most 7 digits in all, then spaces to 8 characters of number.
pub fn write_duration(out: &mut Vec<u8>, d: u64) {
    let us = (d / 1000).to_string();
    let ns = d % 1000;
    out.extend_from_slice(us.as_bytes());
    let mut len = us.len();
    if len < 7 {
        // The kernel's snprintf into min(5, 8 - len) bytes keeps 8 - len - 1 digits.
        let keep = (5usize.min(8 - len) - 1).min(3);
        let frac = format!("{ns:03}");
        out.push(b'.');
        out.extend_from_slice(&frac.as_bytes()[..keep]);
        len += keep + 1;
    }
    out.extend_from_slice(b" us ");
    for _ in len..8 {
        out.push(b' ');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dur(d: u64) -> String {
        let mut v = Vec::new();
        write_duration(&mut v, d);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn duration_cells_match_the_kernel_samples() {
        // Samples from the kernel's text: "  0.318 us    |", "! 310.041 us  |", "* 52999.05 us |".
        assert_eq!(format!("  {}|", dur(318)), "  0.318 us    |");
        assert_eq!(
            format!("{} {}|", mark(310_041) as char, dur(310_041)),
            "! 310.041 us  |"
        );
        assert_eq!(
            format!("{} {}|", mark(52_999_050) as char, dur(52_999_050)),
            "* 52999.05 us |"
        );
        assert_eq!(mark(10_000), b' ');
        assert_eq!(mark(10_001), b'+');
        assert_eq!(mark(1_000_000_001), b'$');
    }
}

/// Whether the kernel that printed the tree leaves the first `%s` of an event empty inside
/// a graph comment. Seen on Debian 6.1.192 for `sched_switch` (`prev_comm=`, a char array)
/// and `sched_process_exec` (`filename=`, a `__data_loc` string) while the later `%s`
/// (`next_comm=`) prints; Debian 6.12.117 prints all of them. The other releases are
/// unknown, so only 6.1 gets the emulation. `release` is `uname -r`.
pub fn blanks_first_string_in_comments(release: &str) -> bool {
    release.starts_with("6.1.") || release.starts_with("6.1-")
}

/// Emulate [`blanks_first_string_in_comments`] on `body` (the event text after `name: `):
/// when the print format starts with literal text and a `%s` followed by more literal text,
/// the value between the two literals is removed. Formats of any other shape are left as
/// they are.
pub fn blank_first_string(print_fmt: &str, body: &mut Vec<u8>) {
    let Some(fmt) = print_fmt.trim_start().strip_prefix('"') else {
        return;
    };
    let Some(pct) = fmt.find('%') else { return };
    let (lead, rest) = fmt.split_at(pct);
    let Some(after) = rest.strip_prefix("%s") else {
        return;
    };
    let end = after.find(['%', '"']).unwrap_or(after.len());
    let follow = &after[..end];
    if lead.contains('\\')
        || follow.is_empty()
        || follow.contains('\\')
        || !body.starts_with(lead.as_bytes())
    {
        return;
    }
    let from = lead.len();
    if let Some(i) = body[from..]
        .windows(follow.len())
        .position(|w| w == follow.as_bytes())
    {
        body.drain(from..from + i);
    }
}

#[cfg(test)]
mod quirk_tests {
    use super::*;

    #[test]
    fn first_string_is_blanked_like_debian_6_1() {
        // Kernel text from tracefs-fixtures/debian-6.1-function-graph-nested/trace.
        let fmt = "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm";
        let mut b = b"prev_comm=tracectl prev_pid=104 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0".to_vec();
        blank_first_string(fmt, &mut b);
        assert_eq!(b, b"prev_comm= prev_pid=104 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0".to_vec());
        let mut other = b"irq=1 name=x".to_vec();
        blank_first_string("\"irq=%d name=%s\", REC->irq", &mut other);
        assert_eq!(other, b"irq=1 name=x".to_vec());
        assert!(blanks_first_string_in_comments("6.1.0-56-amd64"));
        assert!(!blanks_first_string_in_comments("6.12.117+deb12-amd64"));
    }
}

/// The latency-format header block that precedes the graph legend:
/// `# function_graph latency trace v1.1.5 on RELEASE` and the summary lines.
///
/// `entries`/`total` come from the per-CPU stats, `ncpus` is `#P:`. Two values are not in
/// a tree: the CPU the reader of `trace` ran on (`CPU#`), printed as 0, and the preemption
/// model, taken from `uname -v` (`PREEMPT_RT` -> `preempt_rt`, a bare `PREEMPT` ->
/// `preempt`, else `desktop`; Debian 6.1 and 6.12 with `PREEMPT_DYNAMIC` print `desktop`).
pub fn write_latency_header(
    out: &mut Vec<u8>,
    uname: &str,
    entries: u64,
    total: u64,
    ncpus: usize,
) {
    let mut words = uname.split_whitespace();
    let release = words.nth(2).unwrap_or("");
    let rest: Vec<&str> = words.collect();
    let model = if rest.contains(&"PREEMPT_RT") {
        "preempt_rt"
    } else if rest.contains(&"PREEMPT") {
        "preempt"
    } else {
        "desktop"
    };
    out.extend_from_slice(
        format!(
            "# function_graph latency trace v1.1.5 on {release}\n\
             # --------------------------------------------------------------------\n\
             # latency: 0 us, #{entries}/{total}, CPU#0 | (M:{model} VP:0, KP:0, SP:0 HP:0 #P:{ncpus})\n\
             #    -----------------\n\
             #    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n\
             #    -----------------\n\
             #\n"
        )
        .as_bytes(),
    );
}
