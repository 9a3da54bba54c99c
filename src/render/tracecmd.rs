//! trace-cmd-style text: what `trace-cmd report` (3.1.6 with libtraceevent 1.7.1) prints.
//!
//! # Line layout
//!
//! The output starts with one line `cpus=N` (N from the file's CPU count; when several
//! files or instances are shown, each line is prefixed by the file name right-aligned to
//! the longest name and `": "`). Then, one line per record:
//!
//! ```text
//!               sh-16142 [001]  1099.227007: kmem_cache_alloc:     (getname_flags.part.0+0x24) call_site=...
//! |--comm %16s--|-pid %-5d|[cpu %03d]|time|" name: "+pad to 20|info
//! ```
//!
//! * comm: right-aligned in 16 columns, never cut; `<idle>` for pid 0 and `<...>` for a pid
//!   with no known comm. The comm table starts from the file's saved cmdlines and grows
//!   with the comms the sched plugins print (`sched_switch`, `sched_wakeup`); an entry
//!   once known is never replaced (libtraceevent registers comms without override).
//! * `-pid` left-aligned in 5 columns, then ` [cpu]` with 3 digits.
//! * time: for the nanosecond clocks (`local`, `global`, `uptime`, `perf`, `mono*`,
//!   `x86-tsc` with a TSC2NSEC option, `tai`) it is ` %5u.%06u:` of the timestamp rounded
//!   to microseconds (`(ts + 500) / 1000`); with `-t` ` %5u.%09u:` of the nanoseconds. For
//!   other clocks (`counter`, raw `x86-tsc`) it is `%12u:` of the raw value.
//! * name: ` name: `, then spaces to make the name at least 20 columns wide.
//! * info: the event's plugin output when a plugin claims the event, else the print fmt
//!   rendered by libtraceevent's engine (see [`Catalog::write_info`]). A trailing newline
//!   of the info (trace_printk text) is dropped; the line ends in `\n`.
//!
//! With `-l` (latency format) the head is `%8.8s-%-5d %3d` (comm cut to 8 columns, no
//! brackets around the CPU) directly followed by libtraceevent's latency flags
//! (`d`/`X`/`.`, `N`/`.`, `H`/`h`/`s`/`.`, preempt depth low nibble in hex or `.`, and the
//! high nibble in hex or `.`, then migrate-disable when the event has
//! `common_migrate_disable`). Unlike the kernel's own text, libtraceevent knows nothing
//! of the lazy-resched bit (0x02 prints as `X`, its old IRQS_NOSUPPORT meaning) nor of
//! `b` (BH off), `Z`/`z` (NMI).
//!
//! A record whose event id has no format in the file prints as
//! `[UNKNOWN EVENT][UNKNOWN EVENT] (NULL):               [UNKNOWN EVENT]` (one more
//! `[UNKNOWN EVENT]` with `-l`); that happens when events were enabled outside the
//! recording session while it ran.
//!
//! A record that follows lost events is preceded by `CPU:N [M EVENTS DROPPED]` (or
//! `CPU:N [EVENTS DROPPED]` when the count is unknown).
//!
//! # Where libtraceevent prints differently from the kernel
//!
//! The info of events without a plugin is the event's print fmt evaluated by the event
//! model with [`crate::event::PrintStyle::TraceCmd`], which reproduces libtraceevent
//! 1.7's own readings (all checked against `trace-cmd report` on this kernel):
//!
//! * plain `%p` is glibc's: `0x` + hex, `(nil)` for NULL (the kernel: bare hex);
//! * `%pS`/`%pF` are `name+0xoff` (no `/0xsize`, no `[module]`), `%ps` the name,
//!   `0x...` when no symbol holds the address; `%pB` is a plain pointer;
//! * `%#x`/`%#o` of 0 print `0` (the kernel: `0x0`);
//! * names the kernel left unexpanded (`vmemmap_base`, `HRTIMER_MODE_ABS`) are, in
//!   expressions, the address of the kallsyms symbol of that name, else 0, and -1 in
//!   `__print_symbolic`/`__print_flags` tables, except the softirq and hrtimer-restart
//!   names libtraceevent knows; casts to pointers do not scale additions (`page=` is
//!   `&vmemmap_base + pfn` for the mm_page events, `0x<pfn>` without that symbol);
//! * `a OP (b OP2 c)` with OP2 looser than OP reads as `(a OP b) OP2 c` (timer_start's
//!   `flags=D|P|I`), and `a OP (c ? t : f)` as `(a OP c) ? t : f`
//!   (mm_page_alloc_extfrag's `fragmenting=`);
//! * syscall events print their print fmt as written (`fd: 0x00000003, ...`), not the
//!   kernel's `sys_read(fd: 3, ...)`; `sys_exit_*` print `0x1000`, not `sys_read -> 0x1000`;
//! * `-R` lists ` name=value` per field, each printed by the print-fmt conversion that
//!   takes that field whole when there is one.
//!
//! # Plugins
//!
//! The installed libtraceevent plugins that replace the print fmt of events seen on this
//! kind of machine are implemented in [`super::plugins`]; see there for each format.

mod catalog;
mod filter;
mod source;

use crate::endian::Endianness;
pub use catalog::DatCatalog;
pub use filter::{filter_test_strings, EventFilter, FilterContext, FilterError};
pub use source::{
    BufferBounds, CpuBounds, DatSource, EntrySource, RecordSource, SourceError, Taken,
    ThreadedSource,
};

use std::cell::RefCell;
use std::rc::Rc;

use crate::event::Record;

use super::plugins::{self, FunctionStacks, Plugin, PluginOptions};

pub use crate::event::{FieldClass, FieldSpec};

/// What the trace-cmd renderer needs to know about events: the event model behind it.
///
/// Implemented by the event registry (schemas from format files plus kallsyms and printk
/// formats); tests implement it directly.
pub trait Catalog: Sync {
    /// Every event id with its system and name (used to match `-F` event regexes).
    fn events(&self) -> Vec<(u16, &str, &str)>;
    /// `(system, name)` of the event with this id.
    fn event(&self, id: u16) -> Option<(&str, &str)>;
    /// The field `name` of the event with this id.
    fn field(&self, id: u16, name: &str) -> Option<FieldSpec>;
    /// The first field of the event with this id after the `common_*` ones.
    fn first_field(&self, _id: u16) -> Option<FieldSpec> {
        None
    }
    /// The function containing `addr` and that function's start address, from kallsyms.
    fn function(&self, addr: u64) -> Option<(&str, u64)>;
    /// The event's print fmt rendered the way libtraceevent's `pretty_print` does.
    fn write_info(&self, rec: &Record, out: &mut Vec<u8>);
    /// libtraceevent's raw field listing (`tep_print_fields`, used by `-R`).
    fn write_fields(&self, rec: &Record, out: &mut Vec<u8>);
    /// Whether the traced kernel is big-endian.
    fn endian(&self) -> Endianness;
    /// The traced kernel's `long` size in bytes.
    fn long_size(&self) -> usize {
        8
    }
    /// Whether records of event `id` may print a kernel function name (a hint: a miss
    /// only means such a record's line waits for the function map).
    fn may_print_functions(&self, _id: u16) -> bool {
        false
    }
    /// Whether the function map is being built on another thread right now: a lookup
    /// would wait for it.
    fn functions_pending(&self) -> bool {
        false
    }
}

/// How the time column is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFormat {
    /// ` %5u.%06u:` of the nanosecond timestamp rounded to microseconds (the default for
    /// the nanosecond trace clocks).
    Usecs,
    /// ` %5u.%09u:` of nanoseconds (`-t`).
    Nsecs,
    /// `%12u:` of the raw clock value (`counter`, `x86-tsc` without TSC2NSEC).
    Raw,
}

impl TimeFormat {
    /// The format trace-cmd chooses for a trace clock name (`local`, `[local]`, ...).
    ///
    /// `tsc2nsec` is whether the file carries a TSC2NSEC conversion; `nsecs` is `-t`.
    pub fn for_clock(clock: &str, tsc2nsec: bool, nsecs: bool) -> TimeFormat {
        let clock = clock.trim().trim_start_matches('[').trim_end_matches(']');
        let in_usecs = tsc2nsec
            || matches!(
                clock,
                "local" | "global" | "uptime" | "perf" | "tai" | "x86-tsc-nsec"
            )
            || clock.starts_with("mono");
        match (in_usecs, nsecs) {
            (false, _) => TimeFormat::Raw,
            (true, false) => TimeFormat::Usecs,
            (true, true) => TimeFormat::Nsecs,
        }
    }
}

/// Options of the trace-cmd-style renderer (the flags of `trace-cmd report`).
#[derive(Debug, Clone)]
pub struct TraceCmdStyle {
    /// Time column format.
    pub time: TimeFormat,
    /// `-l`: latency format head with the flag characters.
    pub latency: bool,
    /// `-R`: raw field listing instead of the print fmt and plugins.
    pub raw: bool,
    /// The `-O` plugin options (`fgraph:tailprint`, `ftrace:indent`, ...).
    pub plugin_options: PluginOptions,
    /// The plugins (trace-cmd's `ftrace` handlers and libtraceevent's); false is `-N`,
    /// where every event prints its print fmt.
    pub plugins: bool,
    /// `-n`: events whose plugin is not used (their print fmt is printed).
    pub no_handler: EventPatterns,
    /// `-r`: events printed as raw fields.
    pub print_raw: EventPatterns,
    /// `--ts-diff`: ` (+DELTA)` after the time column, padded to 9 columns.
    pub ts_diff: Option<DiffUnit>,
    /// The format of the function plugin's `func_repeats` times: trace-cmd keeps one for
    /// the whole report, the last input file's time column format.
    pub repeat_time: TimeFormat,
}

/// The unit of `--ts-diff`'s deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffUnit {
    /// Microseconds: each timestamp is rounded to µs before the difference (a file with
    /// a trace clock, without `-t` or `--ts2secs`).
    Usecs,
    /// The timestamps' own unit.
    Raw,
}

/// Events named by trace-cmd's `-n` and `-r` patterns: each a basic regex, anchored at
/// both ends and case-insensitive, that matches an event's name or its system's name.
#[derive(Debug, Clone, Default)]
pub struct EventPatterns(std::sync::Arc<Vec<regex::Regex>>);

impl EventPatterns {
    /// Compile the patterns; the error names the one that does not compile.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<EventPatterns, String> {
        let mut v = Vec::new();
        for p in patterns {
            let p = p.as_ref();
            v.push(crate::bre::basic_regex(&format!("^{p}$"))?);
        }
        Ok(EventPatterns(std::sync::Arc::new(v)))
    }

    /// Whether an event of this system and name is named.
    pub fn matches(&self, system: &str, name: &str) -> bool {
        self.0
            .iter()
            .any(|r| r.is_match(name) || r.is_match(system))
    }

    /// Whether there are no patterns.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Default for TraceCmdStyle {
    fn default() -> TraceCmdStyle {
        TraceCmdStyle {
            time: TimeFormat::Usecs,
            latency: false,
            raw: false,
            plugin_options: PluginOptions::default(),
            plugins: true,
            no_handler: EventPatterns::default(),
            print_raw: EventPatterns::default(),
            ts_diff: None,
            repeat_time: TimeFormat::Usecs,
        }
    }
}

/// Comms by pid, kept exactly the way libtraceevent 1.7 keeps them for `trace-cmd report`.
///
/// Which comm trace-cmd prints for a pid that was registered twice (saved cmdlines, then a
/// sched plugin seeing another name) depends on libtraceevent's data structure, so this
/// reproduces it:
/// * Until the first lookup of a non-zero pid, registrations go to a list, newest first,
///   duplicates kept. `<idle>` (pid 0) never looks anything up.
/// * The first lookup turns the list into an array sorted by pid with a stable sort (glibc's
///   `qsort` is a merge sort for arrays this size), so duplicates stay newest first.
/// * Lookups are glibc's `bsearch`, which returns whichever duplicate its midpoints reach
///   first.
/// * Later registrations of a pid already present are refused; new pids are inserted
///   after every smaller pid.
/// * Saved cmdlines are read line by line and reading stops at the first line that is not
///   `pid comm`.
#[derive(Debug, Default, Clone)]
pub struct Cmdlines {
    inner: RefCell<CommTable>,
}

#[derive(Debug, Default, Clone)]
struct CommTable {
    /// Registrations before the first lookup, oldest first.
    list: Vec<(i32, Box<str>)>,
    /// The sorted array, once a lookup has built it.
    array: Option<Vec<(i32, Box<str>)>>,
    /// The last lookup (pid, index found): consecutive records mostly share a pid.
    /// Cleared whenever the array changes.
    last: std::cell::Cell<Option<(i32, Option<usize>)>>,
    /// Changes whenever a lookup could answer differently (see [`Cmdlines::generation`]).
    generation: u64,
    /// Once the array is built: a bit per pid in it (pids below [`KNOWN_PIDS`]), so that
    /// the sched plugins, which register two comms per line, mostly of pids known already,
    /// find them without a search (a tenth of a sched file's report was those searches).
    known: Vec<u64>,
}

/// Pids up to the kernel's `PID_MAX_LIMIT` (4M) have a bit in [`CommTable::known`];
/// others are searched.
const KNOWN_PIDS: i32 = 1 << 22;

/// A comm-table generation no table has had: a renderer whose table is replaced never
/// mistakes the new table's state for the old one's.
fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl CommTable {
    fn build(&mut self) -> &mut Vec<(i32, Box<str>)> {
        if self.array.is_none() {
            let mut v: Vec<(i32, Box<str>)> =
                std::mem::take(&mut self.list).into_iter().rev().collect();
            v.sort_by_key(|e| e.0);
            for &(pid, _) in &v {
                self.mark_known(pid);
            }
            self.array = Some(v);
            self.generation = next_generation();
        }
        self.array.as_mut().expect("just built")
    }

    /// Note that the array holds `pid`.
    fn mark_known(&mut self, pid: i32) {
        if (0..KNOWN_PIDS).contains(&pid) {
            let word = pid as usize / 64;
            if word >= self.known.len() {
                self.known.resize(word + 1, 0);
            }
            self.known[word] |= 1 << (pid % 64);
        }
    }

    /// Whether the array (built) holds `pid`.
    #[inline]
    fn holds(&self, array: &[(i32, Box<str>)], pid: i32) -> bool {
        if (0..KNOWN_PIDS).contains(&pid) {
            let bit = self
                .known
                .get(pid as usize / 64)
                .map_or(0, |w| w >> (pid % 64));
            return bit & 1 != 0;
        }
        CommTable::search(array, pid).is_some()
    }

    /// glibc's bsearch over `array` for `pid`.
    fn search(array: &[(i32, Box<str>)], pid: i32) -> Option<usize> {
        let (mut l, mut u) = (0usize, array.len());
        while l < u {
            let idx = (l + u) / 2;
            match pid.cmp(&array[idx].0) {
                std::cmp::Ordering::Less => u = idx,
                std::cmp::Ordering::Greater => l = idx + 1,
                std::cmp::Ordering::Equal => return Some(idx),
            }
        }
        None
    }
}

impl Cmdlines {
    /// An empty table.
    pub fn new() -> Cmdlines {
        Cmdlines::default()
    }

    /// Register the `pid comm` lines of a saved_cmdlines text, stopping at the first line
    /// that is not one.
    pub fn load(&mut self, text: &str) {
        for line in text.split('\n').filter(|l| !l.is_empty()) {
            let line = line.trim_start();
            let digits = line.strip_prefix('-').unwrap_or(line);
            let end = digits
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(digits.len());
            let num_len = line.len() - digits.len() + end;
            let Ok(pid) = line[..num_len].parse::<i32>() else {
                return;
            };
            let comm = line[num_len..].trim_start();
            if comm.is_empty() {
                return;
            }
            self.register(pid, comm);
        }
    }

    /// Register the comm `name` (bytes of a record, made valid UTF-8) for `pid`: what
    /// [`Cmdlines::register`] does, without converting a name that is known already.
    pub fn register_bytes(&self, pid: i32, name: &[u8]) {
        if self.knows(pid) {
            return;
        }
        self.register(pid, &String::from_utf8_lossy(name));
    }

    /// Whether registering a comm for `pid` would change nothing, as far as the table
    /// can tell without the name: it is sorted already (see [`Cmdlines::is_sorted`]) and
    /// holds `pid`, or `pid` is 0 (refused once sorted).
    #[inline]
    pub fn knows(&self, pid: i32) -> bool {
        let t = self.inner.borrow();
        match &t.array {
            Some(array) => pid == 0 || t.holds(array, pid),
            None => false,
        }
    }

    /// Register `comm` for `pid` (`tep_register_comm`).
    pub fn register(&self, pid: i32, comm: &str) {
        let mut t = self.inner.borrow_mut();
        let t = &mut *t;
        match &mut t.array {
            None => {
                t.list.push((pid, comm.into()));
                t.generation = next_generation();
            }
            Some(array) => {
                if pid == 0 || CommTable::search(array, pid).is_some() {
                    return;
                }
                let at = array.partition_point(|e| e.0 < pid);
                array.insert(at, (pid, comm.into()));
                t.mark_known(pid);
                t.last.set(None);
                t.generation = next_generation();
            }
        }
    }

    /// A number that stays the same as long as [`Cmdlines::comm`] gives every pid the
    /// same answer (it changes with each registration and when the lookup array is made).
    pub fn generation(&self) -> u64 {
        self.inner.borrow().generation
    }

    /// Whether a lookup has sorted the table: from then on a copy of it answers every
    /// lookup as this table does until the next [`Cmdlines::generation`] change (before,
    /// this table's first lookup would change how later registrations are kept).
    pub fn is_sorted(&self) -> bool {
        self.inner.borrow().array.is_some()
    }

    /// The comm printed for `pid`.
    pub fn comm(&self, pid: i32) -> std::cell::Ref<'_, str> {
        const IDLE: &str = "<idle>";
        const UNKNOWN: &str = "<...>";
        if pid == 0 {
            return std::cell::Ref::map(self.inner.borrow(), |_| IDLE);
        }
        if self.inner.borrow().array.is_none() {
            self.inner.borrow_mut().build();
        }
        std::cell::Ref::map(self.inner.borrow(), |t| {
            let array = t.array.as_deref().unwrap_or(&[]);
            let found = match t.last.get() {
                Some((p, i)) if p == pid => i,
                _ => {
                    let i = CommTable::search(array, pid);
                    t.last.set(Some((pid, i)));
                    i
                }
            };
            found.map_or(UNKNOWN, |i| &*array[i].1)
        })
    }
}

/// What the renderer keeps per event id.
#[derive(Debug, Clone)]
struct IdInfo {
    known: bool,
    /// ` name: ` padded to 20 columns.
    name_column: Box<[u8]>,
    plugin: Option<Plugin>,
    /// Printed as raw fields (`-R`, or `-r` naming it).
    raw: bool,
    /// Its info may look up a kernel function name.
    may_print_functions: bool,
}

/// Renders records as `trace-cmd report` lines.
pub struct TraceCmdRenderer<'c, C: Catalog + ?Sized> {
    catalog: &'c C,
    style: TraceCmdStyle,
    /// The comm table, shared by every record printed.
    pub cmdlines: Rc<Cmdlines>,
    /// Plugin resolved per event id (index = id); `None` inside = no plugin.
    /// Per event id (index): resolved on first use.
    ids: Vec<Option<IdInfo>>,
    common_pid: Option<FieldSpec>,
    common_flags: Option<FieldSpec>,
    common_pc: Option<FieldSpec>,
    common_migrate: Option<Option<FieldSpec>>,
    head: HeadCache,
    /// The catalog's byte order, asked once.
    endian: Endianness,
    /// `--ts-diff`: the last printed record's time (in the delta's unit; 0 before the
    /// first). trace-cmd keeps one for all inputs: a report of several sets it before
    /// each record and reads it back after.
    pub diff_last: u64,
    /// The function plugin's per-CPU stacks (`-O ftrace:indent`): trace-cmd keeps one set
    /// for every buffer and file of a report, so renderers of one report share them
    /// (see [`TraceCmdRenderer::share_function_stacks`]).
    function_stacks: Rc<RefCell<FunctionStacks>>,
    /// Whether the sched plugins register the comms they print (see
    /// [`TraceCmdRenderer::leave_comms_to_others`]).
    learns_comms: bool,
}

/// The parts of recent head lines that the next records mostly repeat.
#[derive(Debug, Clone, Default)]
struct HeadCache {
    /// `%16s-%-5d [%03d]` of recent (pid, cpu, comm table generation)s, direct-mapped:
    /// the lines of a CPU alternate between a few tasks (the idle task and those it
    /// switches to), so that the last one alone missed a third of the time.
    prefixes: Vec<HeadPrefix>,
    secs: super::kernel::SecondsColumn,
}

/// Slots of [`HeadCache::prefixes`].
const HEAD_SLOTS: usize = 16;

/// One cached `%16s-%-5d [%03d]` (a comm of up to 64 bytes).
#[derive(Debug, Clone)]
struct HeadPrefix {
    key: Option<(i32, u32, u64)>,
    len: u8,
    text: [u8; 96],
}

impl HeadCache {
    /// The slot of (pid, cpu).
    #[inline]
    fn slot(&mut self, pid: i32, cpu: u32) -> &mut HeadPrefix {
        if self.prefixes.is_empty() {
            self.prefixes = vec![
                HeadPrefix {
                    key: None,
                    len: 0,
                    text: [b' '; 96],
                };
                HEAD_SLOTS
            ];
        }
        let h = (pid as u32 ^ cpu.rotate_left(7)).wrapping_mul(0x9e37_79b9) >> 28;
        &mut self.prefixes[h as usize % HEAD_SLOTS]
    }
}

impl<'c, C: Catalog + ?Sized> TraceCmdRenderer<'c, C> {
    /// A renderer for events described by `catalog`.
    pub fn new(catalog: &'c C, style: TraceCmdStyle, cmdlines: Cmdlines) -> Self {
        TraceCmdRenderer {
            catalog,
            style,
            cmdlines: Rc::new(cmdlines),
            ids: Vec::new(),
            common_pid: None,
            common_flags: None,
            common_pc: None,
            common_migrate: None,
            head: HeadCache::default(),
            endian: catalog.endian(),
            diff_last: 0,
            function_stacks: Rc::default(),
            learns_comms: true,
        }
    }

    /// Leave the comms the sched plugins print to be registered by another renderer,
    /// the one that writes the heads of these lines (see
    /// [`TraceCmdRenderer::learn_comms`]): this one writes their infos only.
    pub fn leave_comms_to_others(&mut self) {
        self.learns_comms = false;
    }

    /// Use `other`'s function plugin stacks from now on, as trace-cmd does for all the
    /// buffers and files of one report (its plugin keeps them per CPU number only).
    pub fn share_function_stacks<D: Catalog + ?Sized>(&mut self, other: &TraceCmdRenderer<D>) {
        self.function_stacks = Rc::clone(&other.function_stacks);
    }

    /// Use `other`'s comm table from now on, as trace-cmd does for the buffers of one file
    /// (they share one tep handle): a comm learned in one buffer shows in the others, and
    /// the first lookup in any of them sorts the table for all (see [`Cmdlines`]).
    pub fn share_cmdlines<D: Catalog + ?Sized>(&mut self, other: &TraceCmdRenderer<D>) {
        self.cmdlines = Rc::clone(&other.cmdlines);
        self.head = HeadCache::default();
    }

    /// The style in use.
    pub fn style(&self) -> &TraceCmdStyle {
        &self.style
    }

    /// The fields of `id` when it is `ftrace:funcgraph_entry` (for leaf merging).
    pub fn graph_entry(&mut self, id: u16) -> Option<[FieldSpec; 2]> {
        // By reference: a plugin is a few hundred bytes, too many to copy per record.
        let info = self.info(id);
        match &info.plugin {
            Some(Plugin::FuncgraphEntry { f }) if !info.raw => Some(*f),
            _ => None,
        }
    }

    /// Whether `next` is the exit of the function_graph entry `entry` (same pid and
    /// function), and its fields if so.
    pub fn graph_exit_of(
        &mut self,
        entry: &Record,
        f: [FieldSpec; 2],
        next: &Record,
    ) -> Option<[FieldSpec; 4]> {
        let endian = self.endian;
        let id = next.event_id(endian)?;
        let Some(Plugin::FuncgraphExit { f: x }) = &self.info(id).plugin else {
            return None;
        };
        let x = *x;
        let same_pid = self.pid(entry) == self.pid(next);
        let same_func = read_uint(entry.data, f[0], endian) == read_uint(next.data, x[0], endian);
        (same_pid && same_func).then_some(x)
    }

    /// Write a function_graph leaf (entry and exit merged) as one whole line.
    pub fn write_graph_leaf(
        &mut self,
        out: &mut Vec<u8>,
        entry: &Record,
        f: [FieldSpec; 2],
        exit: &Record,
        x: [FieldSpec; 4],
    ) {
        self.write_head(out, entry);
        self.write_name(out, entry);
        plugins::write_graph_leaf(
            self.catalog,
            (entry, f),
            (exit, x),
            self.style.plugin_options.graph.depth,
            out,
        );
        out.push(b'\n');
    }

    fn common(&mut self, id: u16) {
        if self.common_pid.is_none() {
            self.common_pid = self.catalog.field(id, "common_pid");
            self.common_flags = self.catalog.field(id, "common_flags");
            self.common_pc = self.catalog.field(id, "common_preempt_count");
        }
    }

    /// The pid of a record (`common_pid`; 0 when unknown).
    pub fn pid(&mut self, rec: &Record) -> i32 {
        let endian = self.endian;
        let Some(id) = rec.event_id(endian) else {
            return 0;
        };
        self.common(id);
        match self.common_pid {
            Some(f) => read_uint(rec.data, f, endian).map_or(0, |v| v as u32 as i32),
            None => 0,
        }
    }

    #[inline]
    fn info(&mut self, id: u16) -> &IdInfo {
        let i = usize::from(id);
        if !matches!(self.ids.get(i), Some(Some(_))) {
            self.fill_info(id);
        }
        self.ids[i].as_ref().expect("filled above")
    }

    #[cold]
    fn fill_info(&mut self, id: u16) {
        let i = usize::from(id);
        if i >= self.ids.len() {
            self.ids.resize(i + 1, None);
        }
        if self.ids[i].is_none() {
            let ev = self.catalog.event(id);
            let name = ev.map_or("(NULL)", |(_, n)| n);
            let mut col = Vec::with_capacity(name.len() + 24);
            col.push(b' ');
            col.extend_from_slice(name.as_bytes());
            col.extend_from_slice(b": ");
            col.resize(col.len() + 20usize.saturating_sub(name.len()), b' ');
            let st = &self.style;
            let raw = st.raw || ev.is_some_and(|(sys, name)| st.print_raw.matches(sys, name));
            let plugin = ev
                .filter(|(sys, name)| st.plugins && !raw && !st.no_handler.matches(sys, name))
                .and_then(|(sys, name)| plugins::resolve(self.catalog, id, sys, name));
            self.ids[i] = Some(IdInfo {
                known: ev.is_some(),
                name_column: col.into(),
                plugin,
                raw,
                may_print_functions: ev.is_some() && self.catalog.may_print_functions(id),
            });
        }
    }

    /// `CPU:N [M EVENTS DROPPED]` (`count` None: the kernel did not count them); pass the
    /// count through [`shown_missed`] first.
    pub fn write_dropped(&self, out: &mut Vec<u8>, cpu: u32, count: Option<u64>) {
        crate::bytes::put(out, b"CPU:");
        push_u64(out, u64::from(cpu));
        match count {
            Some(n) => {
                crate::bytes::put(out, b" [");
                push_u64(out, n);
                crate::bytes::put(out, b" EVENTS DROPPED]\n");
            }
            None => crate::bytes::put(out, b" [EVENTS DROPPED]\n"),
        }
    }

    /// Write the head: comm, pid, cpu (and latency flags with `-l`), the time column and
    /// the `--ts-diff` delta.
    pub fn write_head(&mut self, out: &mut Vec<u8>, rec: &Record) {
        self.write_head_columns(out, rec);
        if let Some(unit) = self.style.ts_diff {
            let ts = match unit {
                DiffUnit::Usecs => rec.ts.saturating_add(500) / 1000,
                DiffUnit::Raw => rec.ts,
            };
            // ` %-8s` of `(+DELTA)`, empty for the first record (or after a zero time).
            let mut cell = Vec::with_capacity(24);
            if self.diff_last != 0 {
                cell.extend_from_slice(b"(+");
                push_i64(&mut cell, ts.wrapping_sub(self.diff_last) as i64);
                cell.push(b')');
            }
            out.push(b' ');
            let n = cell.len();
            crate::bytes::put(out, &cell);
            out.resize(out.len() + 8usize.saturating_sub(n), b' ');
            self.diff_last = ts;
        }
    }

    /// The `common_flags` of a record (0 when it has none): the irq-context bits are
    /// [`HARDIRQ_FLAG`] and [`SOFTIRQ_FLAG`].
    pub fn flags(&mut self, rec: &Record) -> u64 {
        let endian = self.endian;
        let Some(id) = rec.event_id(endian) else {
            return 0;
        };
        self.common(id);
        self.common_flags
            .and_then(|f| read_uint(rec.data, f, endian))
            .unwrap_or(0)
    }

    fn write_head_columns(&mut self, out: &mut Vec<u8>, rec: &Record) {
        let pid = self.pid(rec);
        if !self.style.latency {
            let key = Some((pid, rec.cpu, self.cmdlines.generation()));
            let slot = self.head.slot(pid, rec.cpu);
            if slot.key == key {
                // The same comm-pid-CPU columns as a recent record.
                crate::bytes::put(out, &slot.text[..usize::from(slot.len)]);
                return self.write_head_time(out, rec);
            }
        }
        let comm = self.cmdlines.comm(pid);
        if self.style.latency {
            let c = comm.as_bytes();
            let c = &c[..c.len().min(8)];
            pad_left(out, c, 8);
            drop(comm);
            out.push(b'-');
            push_i64_left(out, i64::from(pid), 5);
            out.push(b' ');
            crate::bytes::push_dec_padded(out, u64::from(rec.cpu), 3, b' ');
            self.write_latency(out, rec);
        } else if comm.len() <= 64 {
            use super::kernel::{put_i64, put_zero};
            // `%16s-%-5d [%03d]`, kept for the next records of the same pid and CPU (the
            // key is taken after the lookup, the first of which makes the comm array).
            let key = (pid, rec.cpu, self.cmdlines.generation());
            let c = comm.as_bytes();
            let mut b = [b' '; 96];
            let mut i = 16usize.saturating_sub(c.len());
            b[i..i + c.len()].copy_from_slice(c);
            i += c.len();
            b[i] = b'-';
            let start = i + 1;
            i = put_i64(&mut b, start, i64::from(pid)).max(start + 5);
            b[i..i + 2].copy_from_slice(b" [");
            i = put_zero(&mut b, i + 2, u64::from(rec.cpu), 3);
            b[i] = b']';
            drop(comm);
            let slot = self.head.slot(pid, rec.cpu);
            slot.text = b;
            slot.len = (i + 1) as u8;
            slot.key = Some(key);
            crate::bytes::put(out, &b[..i + 1]);
            return self.write_head_time(out, rec);
        } else {
            pad_left(out, comm.as_bytes(), 16);
            out.push(b'-');
            push_i64_left(out, i64::from(pid), 5);
            crate::bytes::put(out, b" [");
            push_zero_padded(out, u64::from(rec.cpu), 3);
            out.push(b']');
        }
        write_time(out, rec.ts, self.style.time);
    }

    /// The time column after the comm-pid-CPU columns: ` %5lu.` of whole seconds (mostly
    /// the last record's), then the fraction's fixed digits and `:`.
    fn write_head_time(&mut self, out: &mut Vec<u8>, rec: &Record) {
        match self.style.time {
            TimeFormat::Usecs => return self.head.secs.write_usecs(out, rec.ts, [b':']),
            TimeFormat::Nsecs => {
                crate::bytes::put(out, self.head.secs.text(rec.ts / 1_000_000_000));
                crate::bytes::push_dec_width(out, rec.ts % 1_000_000_000, 9);
            }
            TimeFormat::Raw => return write_time(out, rec.ts, TimeFormat::Raw),
        }
        crate::bytes::put_array(out, [b':']);
    }

    fn write_latency(&mut self, out: &mut Vec<u8>, rec: &Record) {
        let endian = self.endian;
        let Some(id) = rec.event_id(endian) else {
            return;
        };
        self.common(id);
        if self.common_migrate.is_none() {
            self.common_migrate = Some(self.catalog.field(id, "common_migrate_disable"));
        }
        let flags = self
            .common_flags
            .and_then(|f| read_uint(rec.data, f, endian))
            .unwrap_or(0);
        let pc = self
            .common_pc
            .and_then(|f| read_uint(rec.data, f, endian))
            .unwrap_or(0);
        let hard = flags & HARDIRQ_FLAG != 0;
        let soft = flags & SOFTIRQ_FLAG != 0;
        out.push(if flags & 0x01 != 0 {
            b'd'
        } else if flags & 0x02 != 0 {
            b'X'
        } else {
            b'.'
        });
        out.push(if flags & 0x04 != 0 { b'N' } else { b'.' });
        out.push(match (hard, soft) {
            (true, true) => b'H',
            (true, false) => b'h',
            (false, true) => b's',
            _ => b'.',
        });
        let hex = b"0123456789abcdef";
        out.push(if pc & 0xf != 0 {
            hex[(pc & 0xf) as usize]
        } else {
            b'.'
        });
        if pc & 0xf0 != 0 {
            let mut b = Vec::new();
            push_hex(&mut b, pc >> 4);
            crate::bytes::put(out, &b);
        } else {
            out.push(b'.');
        }
        if let Some(Some(f)) = self.common_migrate {
            match read_uint(rec.data, f, endian) {
                Some(v) => push_i64(out, sign_extend(v, f.size)),
                None => out.push(b'.'),
            }
        }
    }

    /// Write ` name: ` padded to 20 columns.
    pub fn write_name(&mut self, out: &mut Vec<u8>, rec: &Record) {
        match rec.event_id(self.endian) {
            Some(id) => crate::bytes::put(out, &self.info(id).name_column),
            None => crate::bytes::put(out, b" (NULL):               "),
        }
    }

    /// Whether the info of this record can be written by another renderer (on another
    /// thread) once [`TraceCmdRenderer::learn_comms`] ran here: an independent one (see
    /// [`TraceCmdRenderer::info_is_independent`]), or a sched plugin's, whose text reads
    /// nothing of the renderer's state and only adds comms to it.
    pub fn info_is_deferrable(&mut self, rec: &Record) -> bool {
        if self.info_is_independent(rec) {
            return true;
        }
        let Some(id) = rec.event_id(self.endian) else {
            return false;
        };
        let info = self.info(id);
        info.known && !info.raw && info.plugin.as_ref().is_some_and(Plugin::only_learns_comms)
    }

    /// What [`TraceCmdRenderer::write_info`] of this record changes in the renderer, and
    /// nothing else: the comms a sched plugin registers. For a deferrable info (see
    /// [`TraceCmdRenderer::info_is_deferrable`]), at the point of the line where its
    /// info would have been written.
    pub fn learn_comms(&mut self, rec: &Record) {
        let Some(id) = rec.event_id(self.endian) else {
            return;
        };
        self.info(id);
        let plugin = self
            .ids
            .get(usize::from(id))
            .and_then(|i| i.as_ref()?.plugin.as_ref());
        if let Some(p) = plugin.filter(|p| p.only_learns_comms()) {
            p.learn_comms(self.catalog, rec, &self.cmdlines);
        }
    }

    /// Whether [`TraceCmdRenderer::write_info`] of this record may look up a function
    /// name in a function map that another thread is still building (so that it would
    /// wait for it now).
    pub fn info_waits_for_functions(&mut self, rec: &Record) -> bool {
        let Some(id) = rec.event_id(self.endian) else {
            return false;
        };
        self.info(id).may_print_functions && self.catalog.functions_pending()
    }

    /// Whether [`TraceCmdRenderer::write_info`] of this record neither reads nor changes
    /// the renderer's state, so that another renderer (on another thread) can write it
    /// later: a known event whose plugin, if any, does not register comms (the sched
    /// plugins do), is not part of function_graph's leaf merging and is not the function
    /// plugin indenting from its stacks.
    pub fn info_is_independent(&mut self, rec: &Record) -> bool {
        let Some(id) = rec.event_id(self.endian) else {
            return false;
        };
        let indent = self.style.plugin_options.function.indent;
        let info = self.info(id);
        info.known
            && (info.raw
                || match info.plugin {
                    Some(
                        Plugin::SchedSwitch { .. }
                        | Plugin::SchedWakeup { .. }
                        | Plugin::FuncgraphEntry { .. }
                        | Plugin::FuncgraphExit { .. },
                    ) => false,
                    Some(Plugin::Function { .. } | Plugin::FuncRepeats { .. }) => !indent,
                    _ => true,
                })
    }

    /// Whether the whole line of this record (head, name and info) can be written by
    /// another renderer holding a copy of this one's comm table: its info is independent
    /// (see [`TraceCmdRenderer::info_is_independent`]) and its head carries no
    /// `--ts-diff` delta (which depends on the line before).
    pub fn line_is_independent(&mut self, rec: &Record) -> bool {
        self.style.ts_diff.is_none() && self.info_is_independent(rec)
    }

    /// Write the info part: plugin output or the print fmt (or the raw fields with `-R`).
    pub fn write_info(&mut self, out: &mut Vec<u8>, rec: &Record) {
        let start = out.len();
        let endian = self.endian;
        let id = rec.event_id(endian);
        let raw = match id {
            Some(id) => self.info(id).raw,
            None => self.style.raw,
        };
        if raw {
            self.catalog.write_fields(rec, out);
        } else {
            if let Some(id) = id {
                self.info(id);
            }
            // Borrowed from `ids` while `cmdlines` is borrowed mutably: no copy per record.
            let plugin = id
                .and_then(|id| self.ids.get(usize::from(id))?.as_ref())
                .and_then(|i| i.plugin.as_ref());
            let pretty = match plugin {
                Some(p) => p.write(
                    self.catalog,
                    rec,
                    plugins::PluginState {
                        cmdlines: &self.cmdlines,
                        learn_comms: self.learns_comms,
                        options: &self.style.plugin_options,
                        function_stacks: &self.function_stacks,
                        repeat_time: self.style.repeat_time,
                    },
                    out,
                ),
                None => true,
            };
            if pretty {
                self.catalog.write_info(rec, out);
            }
        }
        if out.len() > start && out.last() == Some(&b'\n') {
            out.pop();
        }
    }

    /// Write one whole line (head, name, info, newline), preceded by the dropped-events line
    /// when `missed` says events were lost before this record (`Some(None)`: unknown count).
    pub fn write_record(&mut self, out: &mut Vec<u8>, rec: &Record, missed: Option<Option<u64>>) {
        if let Some(count) = missed.and_then(shown_missed) {
            self.write_dropped(out, rec.cpu, count);
        }
        let known = match rec.event_id(self.endian) {
            Some(id) => self.info(id).known,
            None => false,
        };
        if !known {
            // libtraceevent prints this for each part it cannot find the event for: the
            // head, (the latency flags,) the time, then the name "(NULL)" and the info.
            crate::bytes::put(out, UNKNOWN);
            if self.style.latency {
                crate::bytes::put(out, UNKNOWN);
            }
            crate::bytes::put(out, UNKNOWN);
            crate::bytes::put(out, b" (NULL):               ");
            crate::bytes::put(out, UNKNOWN);
            out.push(b'\n');
            return;
        }
        self.write_head(out, rec);
        self.write_name(out, rec);
        self.write_info(out, rec);
        out.push(b'\n');
    }
}

const UNKNOWN: &[u8] = b"[UNKNOWN EVENT]";

/// The `common_flags` bit of a record written in hard interrupt context.
pub const HARDIRQ_FLAG: u64 = 0x08;
/// The `common_flags` bit of a record written in soft interrupt context.
pub const SOFTIRQ_FLAG: u64 = 0x10;

/// Write the time column in `fmt`.
pub fn write_time(out: &mut Vec<u8>, ts: u64, fmt: TimeFormat) {
    if fmt != TimeFormat::Raw {
        out.push(b' ');
    }
    write_time_value(out, ts, fmt);
    out.push(b':');
}

/// Write a time as libtraceevent prints `TEP_PRINT_TIME` in `fmt`'s format (`%6.1000d`,
/// `%9.1d` or `%12d`): `%5u.%06u` of the time rounded to microseconds (the rounding
/// wraps, as C's unsigned addition does), `%5u.%09u`, or `%12u`.
pub fn write_time_value(out: &mut Vec<u8>, ts: u64, fmt: TimeFormat) {
    match fmt {
        TimeFormat::Usecs => {
            let us = ts.wrapping_add(500) / 1000;
            crate::bytes::push_dec_padded(out, us / 1_000_000, 5, b' ');
            out.push(b'.');
            push_zero_padded(out, us % 1_000_000, 6);
        }
        TimeFormat::Nsecs => {
            crate::bytes::push_dec_padded(out, ts / 1_000_000_000, 5, b' ');
            out.push(b'.');
            push_zero_padded(out, ts % 1_000_000_000, 9);
        }
        TimeFormat::Raw => {
            crate::bytes::push_dec_padded(out, ts, 12, b' ');
        }
    }
}

/// Read a field as an unsigned number of its size (1, 2, 4 or 8 bytes), as
/// libtraceevent's `tep_read_number` does: no sign extension.
#[inline]
pub fn read_uint(data: &[u8], f: FieldSpec, endian: Endianness) -> Option<u64> {
    endian.read_uint(data, f.offset, f.size)
}

/// Sign-extend the low `size` bytes of `v`.
pub fn sign_extend(v: u64, size: usize) -> i64 {
    if size == 0 || size >= 8 {
        return v as i64;
    }
    let shift = 64 - 8 * size as u32;
    ((v << shift) as i64) >> shift
}

pub(crate) fn pad_left(out: &mut Vec<u8>, s: &[u8], width: usize) {
    for _ in s.len()..width {
        out.push(b' ');
    }
    crate::bytes::put(out, s);
}

pub(crate) use crate::bytes::{push_dec as push_u64, push_i64};

#[inline]
pub(crate) fn push_hex(out: &mut Vec<u8>, v: u64) {
    crate::bytes::push_hex(out, v, false);
}

fn push_i64_left(out: &mut Vec<u8>, v: i64, width: usize) {
    let start = out.len();
    push_i64(out, v);
    for _ in (out.len() - start)..width {
        out.push(b' ');
    }
}

#[inline]
pub(crate) fn push_zero_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    crate::bytes::push_dec_padded(out, v, width, b'0');
}

/// The lost-events mark trace-cmd 3.1.6 prints for a stored count (`None`: not counted):
/// it takes the count as a C `int` (libtraceevent's `kbuffer_missed_events`), so one whose
/// low 32 bits are negative prints as not counted and one whose low 32 bits are 0 prints
/// no line at all (None). `trace-cmd split` stores an uncounted loss as the count -1.
pub fn shown_missed(count: Option<u64>) -> Option<Option<u64>> {
    match count.map(|n| n as u32 as i32) {
        Some(0) => None,
        Some(n) if n > 0 => Some(Some(n as u64)),
        _ => Some(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One event, `demo:tick` (id 7), with the common fields at their usual offsets.
    struct OneEvent;

    impl Catalog for OneEvent {
        fn events(&self) -> Vec<(u16, &str, &str)> {
            vec![(7, "demo", "tick")]
        }
        fn event(&self, id: u16) -> Option<(&str, &str)> {
            (id == 7).then_some(("demo", "tick"))
        }
        fn field(&self, _id: u16, name: &str) -> Option<FieldSpec> {
            let (offset, size) = match name {
                "common_flags" => (2, 1),
                "common_preempt_count" => (3, 1),
                "common_pid" => (4, 4),
                _ => return None,
            };
            Some(FieldSpec {
                offset,
                size,
                signed: name == "common_pid",
                class: FieldClass::Number,
            })
        }
        fn function(&self, _addr: u64) -> Option<(&str, u64)> {
            None
        }
        fn write_info(&self, _rec: &Record, _out: &mut Vec<u8>) {}
        fn write_fields(&self, _rec: &Record, _out: &mut Vec<u8>) {}
        fn endian(&self) -> Endianness {
            Endianness::Little
        }
    }

    fn head(r: &mut TraceCmdRenderer<OneEvent>, pid: i32, cpu: u32, ts: u64) -> String {
        let mut data = vec![0u8; 8];
        data[0..2].copy_from_slice(&7u16.to_le_bytes());
        data[4..8].copy_from_slice(&pid.to_le_bytes());
        let mut out = Vec::new();
        r.write_head(
            &mut out,
            &Record {
                cpu,
                ts,
                data: &data,
            },
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn heads_follow_pid_cpu_time_and_comm_changes() {
        let mut cmdlines = Cmdlines::new();
        cmdlines.load("1 init\n");
        let mut r = TraceCmdRenderer::new(&OneEvent, TraceCmdStyle::default(), cmdlines);
        assert_eq!(
            head(&mut r, 1, 0, 5_000_000_499),
            "            init-1     [000]     5.000000:"
        );
        assert_eq!(
            head(&mut r, 1, 0, 5_000_000_500),
            "            init-1     [000]     5.000001:"
        );
        assert_eq!(
            head(&mut r, 1, 1, 5_999_999_500),
            "            init-1     [001]     6.000000:"
        );
        assert_eq!(
            head(&mut r, 100, 1, 6_000_001_000),
            "           <...>-100   [001]     6.000001:"
        );
        // A comm registered later (as the sched plugins do) shows on the next line.
        r.cmdlines.register(100, "late");
        assert_eq!(
            head(&mut r, 100, 1, 6_000_002_000),
            "            late-100   [001]     6.000002:"
        );
        assert_eq!(
            head(&mut r, 0, 1, 12_345_678_901_000),
            "          <idle>-0     [001] 12345.678901:"
        );
        // A table swapped for another one is not taken for the old one.
        r.cmdlines = Rc::new(Cmdlines::new());
        r.cmdlines.register(100, "other");
        assert_eq!(
            head(&mut r, 100, 1, 6_000_002_000),
            "           other-100   [001]     6.000002:"
        );
    }
}
