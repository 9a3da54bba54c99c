//! The output formats of libtraceevent's event plugins, as `trace-cmd report` applies them.
//!
//! Debian's libtraceevent 1.7.1 installs plugins in
//! `/usr/lib/x86_64-linux-gnu/traceevent/plugins/`; the ones that replace or prefix the
//! print fmt of an event are implemented here (facts from reading their behaviour, the
//! code is ours):
//!
//! * `sched:sched_switch`: `prev_comm:prev_pid [prev_prio] STATE ==> next_comm:next_pid
//!   [next_prio]`. STATE is the letters of the set bits of `prev_state` among `SDTtZXxW`
//!   (bit 0 = `S`), joined by `|`, or `R` when none is set. The comms are printed up to
//!   their NUL and registered in the comm table (never replacing a known one).
//! * `sched:sched_wakeup`, `sched:sched_wakeup_new`: `comm:pid [prio]`, then ` success=N`
//!   when the event has `success`, then ` CPU:%03u` of `target_cpu`. `sched_waking` has no
//!   plugin (plain print fmt).
//! * `kmem:kfree`, `kmalloc`, `kmalloc_node`, `kmem_cache_alloc`, `kmem_cache_alloc_node`,
//!   `kmem_cache_free`: `(func+0xOFF) ` of `call_site` looked up in kallsyms, then the
//!   normal print fmt. The offset is printed as a 32-bit hex. No prefix when the address
//!   is not in a known function.
//! * `timer:hrtimer_start`: `hrtimer=0x%x function=F expires=%u softexpires=%u`;
//!   `timer:hrtimer_expire_entry`: `hrtimer=0x%x now=%u function=F`. F is `name/0x%x` with
//!   the hex of `function_start - address` (so `/0x0` for an exact match and a wrapped
//!   64-bit value otherwise), or `0x%08x` of the address when no function contains it.
//! * `ftrace:function` (the function plugin, registered after trace-cmd's own handler and
//!   so chosen over it): 3 spaces per indent level (`ftrace:indent`, on by default: the
//!   level comes from per-CPU stacks of names, see [`FunctionStacks`]; none when the
//!   parent has no kallsyms name), the function's name or `0x%x` of its address, then
//!   with `ftrace:parent` ` <-- ` and the parent's name or `0x%x`. `ftrace:offset` puts
//!   `+0x%x ` (offset from the function's start, as a 32-bit int, and a space) after each
//!   name. A record without `ip` or `parent_ip` prints `!` and then its print fmt.
//! * `ftrace:func_repeats` (the same plugin; the `func-no-repeats` trace option): the
//!   function as `ftrace:function` prints it (same stacks, same options), then
//!   ` (count: %lld  last_ts: TIME)`, TIME being the record's time less
//!   `top_delta_ts << 32 | bottom_delta_ts` in the time column's format without its
//!   leading space (trace-cmd sets the plugin's one format from the last input file).
//! * `ftrace:funcgraph_entry` / `funcgraph_exit` (trace-cmd's built-in handlers): an
//!   entry whose next record (in merged order) is its own exit (same pid and function)
//!   is a leaf, printed as one line `MARK DURATION |  INDENTfunc();` and the exit is
//!   consumed; other entries print `  ` + `           |  ` + indent + `func() {`; exits
//!   print `MARK DURATION |  INDENT}` (+ ` /* func */` with `-O fgraph:tailprint`, + `
//!   (depth)` with `fgraph:depth`). MARK is `$ `, `# `, `! `, `+ ` above 1 s, 1 ms, 100 us,
//!   10 us; DURATION is `usecs.nnn us ` (nanoseconds only while usecs has fewer than 7
//!   digits) padded so the `|` lines up; indent is 2 spaces per depth.
//! * `tlb:tlb_flush`: `pages=%ld reason=NAME (%lld)`, NAME being the plugin's own name of
//!   reasons 0 to 3 (`flush on task switch`, `remote shootdown`, `local shootdown`,
//!   `local mm shootdown`) and nothing for others; a missing field prints
//!   `CAN'T FIND FIELD "NAME"` where its value goes (and ends the text for `reason`).
//! * `syscalls:sys_enter_futex`: `op=FUTEX_CMD[|FUTEX_PRIVATE_FLAG][|FUTEX_CLOCK_REALTIME]
//!   uaddr=0x%08x` then the arguments that command uses.
//!
//! All numbers are read as libtraceevent's `tep_read_number` does: unsigned, no sign
//! extension (a pid of -1 in a 4-byte field prints as 4294967295).

mod function_stack;
mod functions;

pub use function_stack::FunctionStacks;
pub use functions::{kallsyms_listing, FunctionMap};

use crate::event::Record;

use super::tracecmd::{
    push_hex, push_i64, push_u64, push_zero_padded, read_uint, write_time_value, Catalog, Cmdlines,
    FieldSpec, TimeFormat,
};

/// A plugin bound to one event id, with the fields it reads already resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plugin {
    /// `sched_switch`.
    SchedSwitch {
        /// prev_pid, prev_comm, prev_prio, prev_state, next_pid, next_comm, next_prio.
        f: [Option<FieldSpec>; 7],
    },
    /// `sched_wakeup`, `sched_wakeup_new`.
    SchedWakeup {
        /// pid, comm, prio, success, target_cpu.
        f: [Option<FieldSpec>; 5],
    },
    /// The kmem events with a `call_site`.
    CallSite {
        /// The `call_site` field.
        call_site: FieldSpec,
    },
    /// `hrtimer_start`.
    HrtimerStart {
        /// hrtimer (or timer), function, expires, softexpires.
        f: [Option<FieldSpec>; 4],
    },
    /// `hrtimer_expire_entry`.
    HrtimerExpire {
        /// hrtimer (or timer), now, function.
        f: [Option<FieldSpec>; 3],
    },
    /// `ftrace:function`: the function's name, indented from the per-CPU stacks.
    Function {
        /// The `ip` field.
        ip: Option<FieldSpec>,
        /// The `parent_ip` field.
        parent_ip: Option<FieldSpec>,
    },
    /// `ftrace:func_repeats` (the `func-no-repeats` trace option): the function as
    /// [`Plugin::Function`] prints it, then how many more calls were left out and when the
    /// last of them was.
    FuncRepeats {
        /// The `ip` field.
        ip: Option<FieldSpec>,
        /// The `parent_ip` field.
        parent_ip: Option<FieldSpec>,
        /// count, top_delta_ts, bottom_delta_ts.
        f: [Option<FieldSpec>; 3],
    },
    /// `ftrace:funcgraph_entry` printed as the opening of a nested call (`func() {`);
    /// leaves are merged with their exit by the report loop.
    FuncgraphEntry {
        /// func, depth.
        f: [FieldSpec; 2],
    },
    /// `ftrace:funcgraph_exit`: duration and the closing brace.
    FuncgraphExit {
        /// func, depth, calltime, rettime.
        f: [FieldSpec; 4],
    },
    /// `ftrace:kernel_stack` (the function plugin's stack handler): `<stack trace >`,
    /// then `=> name (addr)` per return address (`=> addr` without a symbol), up to the
    /// all-ones end mark or the end of the record.
    KernelStack {
        /// The `caller` array.
        caller: Option<FieldSpec>,
    },
    /// `tlb_flush`.
    TlbFlush {
        /// pages, reason.
        f: [Option<FieldSpec>; 2],
    },
    /// `sys_enter_futex`.
    Futex {
        /// uaddr, op, val, utime, uaddr2, val3.
        f: [FieldSpec; 6],
    },
}

/// trace-cmd's `-O fgraph:...` options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphOptions {
    /// `fgraph:tailprint`: `/* func */` after closing braces.
    pub tailprint: bool,
    /// `fgraph:depth`: ` (depth)` after each line.
    pub depth: bool,
}

/// The function plugin's `-O ftrace:...` options, for `ftrace:function` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionOptions {
    /// `ftrace:parent`: ` <-- parent` after the function.
    pub parent: bool,
    /// `ftrace:indent`: 3 spaces per level of the call depth guessed from the parents
    /// seen (see [`FunctionStacks`]).
    pub indent: bool,
    /// `ftrace:offset`: `+0xOFF ` (with the space) after each function name.
    pub offset: bool,
}

impl Default for FunctionOptions {
    fn default() -> FunctionOptions {
        FunctionOptions {
            parent: false,
            indent: true,
            offset: false,
        }
    }
}

/// One plugin option as `trace-cmd list -O` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginOption {
    /// The plugin's name in `-O PLUGIN:OPTION`.
    pub plugin: &'static str,
    /// The option's name.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// Whether it is set when no `-O` names it.
    pub default: bool,
}

/// The plugin options `report -O [PLUGIN:]OPTION[=VALUE]` takes, in `trace-cmd list -O`'s
/// order.
pub const PLUGIN_OPTIONS: &[PluginOption] = &[
    PluginOption {
        plugin: "ftrace",
        name: "parent",
        description: "Print parent of functions for function events",
        default: false,
    },
    PluginOption {
        plugin: "ftrace",
        name: "indent",
        description: "Try to show function call indents, based on parents",
        default: true,
    },
    PluginOption {
        plugin: "ftrace",
        name: "offset",
        description: "Show function names as well as their offsets",
        default: false,
    },
    PluginOption {
        plugin: "fgraph",
        name: "tailprint",
        description: "Print function name at function exit in function graph",
        default: false,
    },
    PluginOption {
        plugin: "fgraph",
        name: "depth",
        description: "Show the depth of each entry",
        default: false,
    },
];

/// A `-O` plugin option that names no known option or has a value other than a boolean.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PluginOptionError {
    /// The option as given.
    pub given: String,
    /// Why it is refused.
    pub why: String,
}

impl std::fmt::Display for PluginOptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known: Vec<String> = PLUGIN_OPTIONS
            .iter()
            .map(|o| format!("{}:{}", o.plugin, o.name))
            .collect();
        write!(
            f,
            "plugin option -O {:?}: {}; the known options are {} (`tracectl list -O` describes them)",
            self.given,
            self.why,
            known.join(", ")
        )
    }
}

impl std::error::Error for PluginOptionError {}

/// The values of every plugin option for one report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PluginOptions {
    /// `fgraph:*`.
    pub graph: GraphOptions,
    /// `ftrace:*`.
    pub function: FunctionOptions,
}

impl PluginOptions {
    /// Apply `-O` options as trace-cmd 3.1.6 does for a report of `files` input files:
    /// `[PLUGIN:]OPTION[=VALUE]`, where a missing plugin matches the option in every
    /// plugin; the value may be `1`/`true` or `0`/`false`, and the last value given for the
    /// same `[PLUGIN:]OPTION` wins. libtraceevent applies the options each time a file
    /// loads its plugins, the one naming the plugin first, then the one without: a value
    /// sets, and a missing value flips the option, once per file (`-O indent` turns the
    /// indent off for one file and leaves it on for two). trace-cmd ignores options no
    /// plugin knows; here they are refused.
    pub fn parse<S: AsRef<str>>(
        options: &[S],
        files: usize,
    ) -> Result<PluginOptions, PluginOptionError> {
        // Per known option: the last value given with its plugin's name and without.
        let mut named: Vec<Option<Option<bool>>> = vec![None; PLUGIN_OPTIONS.len()];
        let mut unnamed: Vec<Option<Option<bool>>> = vec![None; PLUGIN_OPTIONS.len()];
        for given in options {
            let given = given.as_ref();
            let err = |why: &str| PluginOptionError {
                given: given.to_string(),
                why: why.to_string(),
            };
            let (name, value) = match given.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (given, None),
            };
            let (plugin, option) = match name.split_once(':') {
                Some((p, o)) => (Some(p), o),
                None => (None, name),
            };
            let value = match value.map(str::to_ascii_lowercase).as_deref() {
                None => None,
                Some("1") | Some("true") => Some(true),
                Some("0") | Some("false") => Some(false),
                Some(_) => return Err(err("the value must be 1, true, 0 or false")),
            };
            let mut found = false;
            for (i, o) in PLUGIN_OPTIONS.iter().enumerate() {
                if option != o.name {
                    continue;
                }
                match plugin {
                    Some(p) if p == o.plugin => named[i] = Some(value),
                    Some(_) => continue,
                    None => unnamed[i] = Some(value),
                }
                found = true;
            }
            if !found {
                return Err(err("no plugin has this option"));
            }
        }
        let mut set: Vec<bool> = PLUGIN_OPTIONS.iter().map(|o| o.default).collect();
        for _ in 0..files {
            for (i, v) in set.iter_mut().enumerate() {
                for given in [named[i], unnamed[i]].into_iter().flatten() {
                    *v = given.unwrap_or(!*v);
                }
            }
        }
        let get = |plugin: &str, name: &str| {
            PLUGIN_OPTIONS
                .iter()
                .position(|o| o.plugin == plugin && o.name == name)
                .is_some_and(|i| set[i])
        };
        Ok(PluginOptions {
            graph: GraphOptions {
                tailprint: get("fgraph", "tailprint"),
                depth: get("fgraph", "depth"),
            },
            function: FunctionOptions {
                parent: get("ftrace", "parent"),
                indent: get("ftrace", "indent"),
                offset: get("ftrace", "offset"),
            },
        })
    }
}

/// The plugin trace-cmd applies to `system:name`, if any.
pub fn resolve<C: Catalog + ?Sized>(c: &C, id: u16, system: &str, name: &str) -> Option<Plugin> {
    let f = |n: &str| c.field(id, n);
    match (system, name) {
        ("sched", "sched_switch") => Some(Plugin::SchedSwitch {
            f: [
                f("prev_pid"),
                f("prev_comm"),
                f("prev_prio"),
                f("prev_state"),
                f("next_pid"),
                f("next_comm"),
                f("next_prio"),
            ],
        }),
        ("sched", "sched_wakeup" | "sched_wakeup_new") => Some(Plugin::SchedWakeup {
            f: [
                f("pid"),
                f("comm"),
                f("prio"),
                f("success"),
                f("target_cpu"),
            ],
        }),
        (
            "kmem",
            "kfree"
            | "kmalloc"
            | "kmalloc_node"
            | "kmem_cache_alloc"
            | "kmem_cache_alloc_node"
            | "kmem_cache_free",
        ) => f("call_site").map(|call_site| Plugin::CallSite { call_site }),
        ("timer", "hrtimer_start") => Some(Plugin::HrtimerStart {
            f: [
                f("timer").or_else(|| f("hrtimer")),
                f("function"),
                f("expires"),
                f("softexpires"),
            ],
        }),
        ("timer", "hrtimer_expire_entry") => Some(Plugin::HrtimerExpire {
            f: [f("timer").or_else(|| f("hrtimer")), f("now"), f("function")],
        }),
        ("ftrace", "function") => Some(Plugin::Function {
            ip: f("ip"),
            parent_ip: f("parent_ip"),
        }),
        ("ftrace", "func_repeats") => Some(Plugin::FuncRepeats {
            ip: f("ip"),
            parent_ip: f("parent_ip"),
            f: [f("count"), f("top_delta_ts"), f("bottom_delta_ts")],
        }),
        ("ftrace", "kernel_stack") => Some(Plugin::KernelStack {
            caller: f("caller"),
        }),
        ("ftrace", "funcgraph_entry") => Some(Plugin::FuncgraphEntry {
            f: [f("func")?, f("depth")?],
        }),
        ("ftrace", "funcgraph_exit") => Some(Plugin::FuncgraphExit {
            f: [f("func")?, f("depth")?, f("calltime")?, f("rettime")?],
        }),
        ("tlb", "tlb_flush") => Some(Plugin::TlbFlush {
            f: [f("pages"), f("reason")],
        }),
        ("syscalls", "sys_enter_futex") => {
            let all = [
                f("uaddr")?,
                f("op")?,
                f("val")?,
                f("utime")?,
                f("uaddr2")?,
                f("val3")?,
            ];
            Some(Plugin::Futex { f: all })
        }
        _ => None,
    }
}

/// The futex commands in `FUTEX_CMD_MASK` order, with the formats of val, utime (val2),
/// uaddr2 and val3 each one prints (`None` = not printed; `true` = hex `0x%08x`).
type FutexArgs = [Option<bool>; 4];
const FUTEX_OPS: [(&str, FutexArgs); 13] = [
    ("FUTEX_WAIT", [Some(true), Some(true), None, None]),
    ("FUTEX_WAKE", [Some(false), None, None, None]),
    ("FUTEX_FD", [Some(false), None, None, None]),
    (
        "FUTEX_REQUEUE",
        [Some(false), Some(false), Some(true), None],
    ),
    (
        "FUTEX_CMP_REQUEUE",
        [Some(false), Some(false), Some(true), Some(true)],
    ),
    (
        "FUTEX_WAKE_OP",
        [Some(false), Some(false), Some(true), Some(true)],
    ),
    ("FUTEX_LOCK_PI", [None, Some(true), None, None]),
    ("FUTEX_UNLOCK_PI", [None, None, None, None]),
    ("FUTEX_TRYLOCK_PI", [None, None, None, None]),
    (
        "FUTEX_WAIT_BITSET",
        [Some(true), Some(true), None, Some(true)],
    ),
    ("FUTEX_WAKE_BITSET", [Some(false), None, None, Some(true)]),
    (
        "FUTEX_WAIT_REQUEUE_PI",
        [Some(true), Some(true), Some(true), Some(true)],
    ),
    (
        "FUTEX_CMP_REQUEUE_PI",
        [Some(false), Some(false), Some(true), Some(true)],
    ),
];
const FUTEX_ARG_NAMES: [&str; 4] = [" val=", " val2=", " uaddr2=", " val3="];
const FUTEX_PRIVATE_FLAG: u64 = 128;
const FUTEX_CLOCK_REALTIME: u64 = 256;

fn hex08(out: &mut Vec<u8>, v: u64) {
    crate::bytes::put(out, b"0x");
    let mut b = Vec::with_capacity(16);
    push_hex(&mut b, v);
    for _ in b.len()..8 {
        out.push(b'0');
    }
    crate::bytes::put(out, &b);
}

/// `%.*s` of a char array: up to the first NUL.
fn c_str(data: &[u8], f: FieldSpec) -> &[u8] {
    let b = data.get(f.offset..f.offset + f.size).unwrap_or(&[]);
    let end = memchr::memchr(0, b).unwrap_or(b.len());
    &b[..end]
}

fn func_field<C: Catalog + ?Sized>(c: &C, out: &mut Vec<u8>, addr: u64) {
    match c.function(addr) {
        Some((name, start)) => {
            crate::bytes::put(out, name.as_bytes());
            crate::bytes::put(out, b"/0x");
            push_hex(out, start.wrapping_sub(addr));
        }
        None => hex08(out, addr),
    }
}

fn comm_pid(
    out: &mut Vec<u8>,
    data: &[u8],
    comm: Option<FieldSpec>,
    pid: u64,
    state: &PluginState,
) {
    if let Some(cf) = comm {
        let name = c_str(data, cf);
        crate::bytes::put(out, name);
        if state.learn_comms {
            state.cmdlines.register_bytes(pid as i32, name);
        }
        out.push(b':');
    }
    push_i64(out, pid as i64);
}

fn write_state(out: &mut Vec<u8>, val: u64) {
    let mut found = false;
    for (i, &ch) in b"SDTtZXxW".iter().enumerate() {
        if val & (1 << i) != 0 {
            if found {
                out.push(b'|');
            }
            found = true;
            out.push(ch);
        }
    }
    if !found {
        out.push(b'R');
    }
}

/// trace-cmd's duration mark: `$ ` over 1 s, `# ` over 1 ms, `! ` over 100 us, `+ ` over
/// 10 us (no `@` or `*` as the kernel has), else two spaces.
fn graph_overhead(out: &mut Vec<u8>, duration: u64) {
    crate::bytes::put(
        out,
        match duration {
            d if d > 1_000_000_000 => b"$ ",
            d if d > 1_000_000 => b"# ",
            d if d > 100_000 => b"! ",
            d if d > 10_000 => b"+ ",
            _ => b"  ",
        },
    );
}

/// `usecs[.nnn] us ` padded to the duration column, then `|  `; the nanoseconds are shown
/// while the microseconds take fewer than 7 digits.
fn graph_duration(out: &mut Vec<u8>, duration: u64) {
    let start = out.len();
    push_u64(out, duration / 1000);
    if out.len() - start < 7 {
        out.push(b'.');
        push_zero_padded(out, duration % 1000, 3);
    }
    let len = out.len() - start;
    crate::bytes::put(out, b" us ");
    for _ in len..7 {
        out.push(b' ');
    }
    crate::bytes::put(out, b"|  ");
}

fn graph_func<C: Catalog + ?Sized>(c: &C, out: &mut Vec<u8>, depth: u64, func: u64) {
    for _ in 0..(depth as i32).saturating_mul(2).max(0) {
        out.push(b' ');
    }
    match c.function(func) {
        Some((name, _)) => crate::bytes::put(out, name.as_bytes()),
        None => push_hex(out, func),
    }
}

/// A function_graph leaf: an entry directly followed by its own exit, as one line.
pub fn write_graph_leaf<C: Catalog + ?Sized>(
    c: &C,
    entry: (&Record, [FieldSpec; 2]),
    exit: (&Record, [FieldSpec; 4]),
    show_depth: bool,
    out: &mut Vec<u8>,
) {
    let endian = c.endian();
    let num = |r: &Record, f: FieldSpec| read_uint(r.data, f, endian).unwrap_or(0);
    let duration = num(exit.0, exit.1[3]).wrapping_sub(num(exit.0, exit.1[2]));
    graph_overhead(out, duration);
    graph_duration(out, duration);
    let depth = num(entry.0, entry.1[1]);
    graph_func(c, out, depth, num(entry.0, entry.1[0]));
    crate::bytes::put(out, b"();");
    if show_depth {
        crate::bytes::put(out, b" (");
        push_i64(out, depth as i64);
        out.push(b')');
    }
}

/// What the plugins read and change across records.
pub struct PluginState<'a> {
    /// The comm table (the sched plugins register the comms they print).
    pub cmdlines: &'a Cmdlines,
    /// Whether the sched plugins register the comms they print (false where another
    /// renderer registers them, see [`Plugin::learn_comms`]).
    pub learn_comms: bool,
    /// The `-O` options.
    pub options: &'a PluginOptions,
    /// The function plugin's per-CPU stacks.
    pub function_stacks: &'a std::cell::RefCell<FunctionStacks>,
    /// The format of `func_repeats`' last call time (trace-cmd sets one for the whole
    /// report: the last input file's).
    pub repeat_time: TimeFormat,
}

/// The function plugin's name of a function: `name`, then `+0xOFF ` with `offset`.
fn function_name(out: &mut Vec<u8>, name: &str, start: u64, addr: u64, offset: bool) {
    crate::bytes::put(out, name.as_bytes());
    if offset {
        // `+0x%x ` of the difference as a C int.
        crate::bytes::put(out, b"+0x");
        push_hex(out, u64::from(addr.wrapping_sub(start) as u32));
        out.push(b' ');
    }
}

/// `ftrace:function` as libtraceevent's function plugin prints it: the indent, the
/// function, and ` <-- parent` with `ftrace:parent`. A record without `ip` or `parent_ip`
/// prints `!` and returns true (the print fmt follows).
fn write_function<C: Catalog + ?Sized>(
    c: &C,
    rec: &Record,
    (ip, parent_ip): (Option<FieldSpec>, Option<FieldSpec>),
    state: &PluginState<'_>,
    out: &mut Vec<u8>,
) -> bool {
    let endian = c.endian();
    let num = |f: Option<FieldSpec>| f.and_then(|f| read_uint(rec.data, f, endian));
    let (Some(addr), Some(paddr)) = (num(ip), num(parent_ip)) else {
        out.push(b'!');
        return true;
    };
    let opts = state.options.function;
    let func = c.function(addr);
    let parent = c.function(paddr);
    if let (Some((pname, _)), true) = (parent, opts.indent) {
        let level = state
            .function_stacks
            .borrow_mut()
            .level(rec.cpu, pname, func.map(|(n, _)| n));
        out.resize(out.len() + level * 3, b' ');
    }
    match func {
        Some((name, start)) => function_name(out, name, start, addr, opts.offset),
        None => {
            crate::bytes::put(out, b"0x");
            push_hex(out, addr);
        }
    }
    if opts.parent {
        crate::bytes::put(out, b" <-- ");
        match parent {
            Some((name, start)) => function_name(out, name, start, paddr, opts.offset),
            None => {
                crate::bytes::put(out, b"0x");
                push_hex(out, paddr);
            }
        }
    }
    false
}

/// `ftrace:func_repeats` as the function plugin prints it: the function line, then
/// ` (count: N  last_ts: TIME)`, TIME being the record's time less the delta the record
/// holds (`top_delta_ts << 32 | bottom_delta_ts`, in the clock's units) in the time
/// column's format without its padding space and colon. A missing field prints `!` and
/// returns true (the print fmt follows).
fn write_func_repeats<C: Catalog + ?Sized>(
    c: &C,
    rec: &Record,
    function: (Option<FieldSpec>, Option<FieldSpec>),
    [count, top, bottom]: [Option<FieldSpec>; 3],
    state: &PluginState<'_>,
    out: &mut Vec<u8>,
) -> bool {
    // The plugin ignores what the function part returns.
    write_function(c, rec, function, state, out);
    let endian = c.endian();
    let num = |f: Option<FieldSpec>| f.and_then(|f| read_uint(rec.data, f, endian));
    let (Some(count), Some(top), Some(bottom)) = (num(count), num(top), num(bottom)) else {
        out.push(b'!');
        return true;
    };
    crate::bytes::put(out, b" (count: ");
    push_i64(out, count as i64);
    crate::bytes::put(out, b"  last_ts: ");
    let delta = (top << 32) | bottom;
    write_time_value(out, rec.ts.wrapping_sub(delta), state.repeat_time);
    out.push(b')');
    false
}

impl Plugin {
    /// Register the comms that [`Plugin::write`] of `rec` registers (the sched plugins),
    /// and nothing else: the text is then left to a renderer that does not register them
    /// ([`PluginState::learn_comms`] false), on another thread.
    pub fn learn_comms<C: Catalog + ?Sized>(&self, c: &C, rec: &Record, cmdlines: &Cmdlines) {
        let endian = c.endian();
        let d = rec.data;
        let num = |f: Option<FieldSpec>| f.and_then(|f| read_uint(d, f, endian));
        let learn = |pid: u64, comm: Option<FieldSpec>| {
            if let Some(cf) = comm.filter(|_| !cmdlines.knows(pid as i32)) {
                cmdlines.register_bytes(pid as i32, c_str(d, cf));
            }
        };
        match *self {
            Plugin::SchedSwitch { f } => {
                // As `write` does: the next task only after the previous one's pid.
                let Some(prev_pid) = num(f[0]) else { return };
                learn(prev_pid, f[1]);
                if let Some(next_pid) = num(f[4]) {
                    learn(next_pid, f[5]);
                }
            }
            Plugin::SchedWakeup { f } => {
                if let Some(pid) = num(f[0]) {
                    learn(pid, f[1]);
                }
            }
            _ => {}
        }
    }

    /// Whether [`Plugin::learn_comms`] does all that [`Plugin::write`] changes.
    pub fn only_learns_comms(&self) -> bool {
        matches!(
            self,
            Plugin::SchedSwitch { .. } | Plugin::SchedWakeup { .. }
        )
    }

    /// Write the plugin's text; true when the event's print fmt must follow (libtraceevent's
    /// handler return value).
    pub fn write<C: Catalog + ?Sized>(
        &self,
        c: &C,
        rec: &Record,
        state: PluginState<'_>,
        out: &mut Vec<u8>,
    ) -> bool {
        let graph = state.options.graph;
        let endian = c.endian();
        let d = rec.data;
        let num = |f: Option<FieldSpec>| f.and_then(|f| read_uint(d, f, endian));
        match *self {
            Plugin::SchedSwitch { f } => {
                let Some(prev_pid) = num(f[0]) else {
                    out.push(b'!');
                    return true;
                };
                comm_pid(out, d, f[1], prev_pid, &state);
                out.push(b' ');
                if let Some(p) = num(f[2]) {
                    out.push(b'[');
                    push_i64(out, i64::from(p as u32 as i32));
                    crate::bytes::put(out, b"] ");
                }
                if let Some(s) = num(f[3]) {
                    write_state(out, s);
                }
                crate::bytes::put(out, b" ==> ");
                let Some(next_pid) = num(f[4]) else {
                    out.push(b'!');
                    return true;
                };
                comm_pid(out, d, f[5], next_pid, &state);
                if let Some(p) = num(f[6]) {
                    crate::bytes::put(out, b" [");
                    push_i64(out, i64::from(p as u32 as i32));
                    out.push(b']');
                }
                false
            }
            Plugin::SchedWakeup { f } => {
                let Some(pid) = num(f[0]) else {
                    out.push(b'!');
                    return true;
                };
                comm_pid(out, d, f[1], pid, &state);
                if let Some(p) = num(f[2]) {
                    crate::bytes::put(out, b" [");
                    push_i64(out, p as i64);
                    out.push(b']');
                }
                if let Some(s) = num(f[3]) {
                    crate::bytes::put(out, b" success=");
                    push_i64(out, s as i64);
                }
                if let Some(cpu) = num(f[4]) {
                    crate::bytes::put(out, b" CPU:");
                    push_zero_padded(out, cpu, 3);
                }
                false
            }
            Plugin::CallSite { call_site } => {
                if let Some(addr) = num(Some(call_site)) {
                    if let Some((name, start)) = c.function(addr) {
                        out.push(b'(');
                        crate::bytes::put(out, name.as_bytes());
                        crate::bytes::put(out, b"+0x");
                        push_hex(out, u64::from(addr.wrapping_sub(start) as u32));
                        crate::bytes::put(out, b") ");
                    }
                }
                true
            }
            Plugin::HrtimerStart { f } => {
                crate::bytes::put(out, b"hrtimer=");
                if let Some(t) = num(f[0]) {
                    crate::bytes::put(out, b"0x");
                    push_hex(out, t);
                }
                if let Some(func) = num(f[1]) {
                    crate::bytes::put(out, b" function=");
                    func_field(c, out, func);
                }
                crate::bytes::put(out, b" expires=");
                if let Some(v) = num(f[2]) {
                    push_u64(out, v);
                }
                crate::bytes::put(out, b" softexpires=");
                if let Some(v) = num(f[3]) {
                    push_u64(out, v);
                }
                false
            }
            Plugin::HrtimerExpire { f } => {
                crate::bytes::put(out, b"hrtimer=");
                if let Some(t) = num(f[0]) {
                    crate::bytes::put(out, b"0x");
                    push_hex(out, t);
                }
                crate::bytes::put(out, b" now=");
                if let Some(v) = num(f[1]) {
                    push_u64(out, v);
                }
                if let Some(func) = num(f[2]) {
                    crate::bytes::put(out, b" function=");
                    func_field(c, out, func);
                }
                false
            }
            Plugin::KernelStack { caller } => {
                let Some(caller) = caller else {
                    crate::bytes::put(out, b"<CANT FIND FIELD caller>");
                    return false;
                };
                crate::bytes::put(out, b"<stack trace >");
                let long = if c.long_size() == 4 { 4 } else { 8 };
                let all_ones = if long == 4 {
                    u64::from(u32::MAX)
                } else {
                    u64::MAX
                };
                let words = d.get(caller.offset..).unwrap_or_default();
                for w in words.chunks_exact(long) {
                    let ip = match long {
                        4 => u64::from(endian.u32(w)),
                        _ => endian.u64(w),
                    };
                    if ip == all_ones {
                        break;
                    }
                    crate::bytes::put(out, b"\n=> ");
                    match c.function(ip) {
                        Some((name, _)) => {
                            crate::bytes::put(out, name.as_bytes());
                            crate::bytes::put(out, b" (");
                            push_hex(out, ip);
                            out.push(b')');
                        }
                        None => push_hex(out, ip),
                    }
                }
                false
            }
            Plugin::TlbFlush { f } => {
                crate::bytes::put(out, b"pages=");
                match num(f[0]) {
                    Some(p) => push_i64(out, p as i64),
                    None => crate::bytes::put(out, b"CAN'T FIND FIELD \"pages\""),
                }
                let Some(reason) = num(f[1]) else {
                    crate::bytes::put(out, b"CAN'T FIND FIELD \"reason\"");
                    return false;
                };
                crate::bytes::put(out, b" reason=");
                const REASONS: [&[u8]; 4] = [
                    b"flush on task switch",
                    b"remote shootdown",
                    b"local shootdown",
                    b"local mm shootdown",
                ];
                if let Some(name) = REASONS.get(reason as usize) {
                    crate::bytes::put(out, name);
                }
                crate::bytes::put(out, b" (");
                push_i64(out, reason as i64);
                out.push(b')');
                false
            }
            Plugin::Function { ip, parent_ip } => {
                write_function(c, rec, (ip, parent_ip), &state, out)
            }
            Plugin::FuncRepeats { ip, parent_ip, f } => {
                write_func_repeats(c, rec, (ip, parent_ip), f, &state, out)
            }
            Plugin::FuncgraphEntry { f } => {
                crate::bytes::put(out, b"  ");
                crate::bytes::put(out, b"           |  ");
                let depth = num(Some(f[1])).unwrap_or(0);
                graph_func(c, out, depth, num(Some(f[0])).unwrap_or(0));
                crate::bytes::put(out, b"() {");
                if graph.depth {
                    crate::bytes::put(out, b" (");
                    push_i64(out, depth as i64);
                    out.push(b')');
                }
                false
            }
            Plugin::FuncgraphExit { f } => {
                let duration = num(Some(f[3]))
                    .unwrap_or(0)
                    .wrapping_sub(num(Some(f[2])).unwrap_or(0));
                graph_overhead(out, duration);
                graph_duration(out, duration);
                let depth = num(Some(f[1])).unwrap_or(0);
                for _ in 0..(depth as i32).saturating_mul(2).max(0) {
                    out.push(b' ');
                }
                out.push(b'}');
                if graph.tailprint {
                    if let Some((name, _)) = num(Some(f[0])).and_then(|v| c.function(v)) {
                        crate::bytes::put(out, b" /* ");
                        crate::bytes::put(out, name.as_bytes());
                        crate::bytes::put(out, b" */");
                    }
                }
                if graph.depth {
                    crate::bytes::put(out, b" (");
                    push_i64(out, depth as i64);
                    out.push(b')');
                }
                false
            }
            Plugin::Futex { f } => {
                let mut a = [0u64; 6];
                for (v, spec) in a.iter_mut().zip(f) {
                    match read_uint(d, spec, endian) {
                        Some(x) => *v = x,
                        None => return true,
                    }
                }
                let cmd = a[1] & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
                let Some((name, args)) = FUTEX_OPS.get(cmd as usize) else {
                    return true;
                };
                crate::bytes::put(out, b"op=");
                crate::bytes::put(out, name.as_bytes());
                if a[1] & FUTEX_PRIVATE_FLAG != 0 {
                    crate::bytes::put(out, b"|FUTEX_PRIVATE_FLAG");
                }
                if a[1] & FUTEX_CLOCK_REALTIME != 0 {
                    crate::bytes::put(out, b"|FUTEX_CLOCK_REALTIME");
                }
                crate::bytes::put(out, b" uaddr=");
                hex08(out, a[0]);
                let vals = [a[2], a[3], a[4], a[5]];
                for ((fmt, label), v) in args.iter().zip(FUTEX_ARG_NAMES).zip(vals) {
                    if let Some(hex) = fmt {
                        // utime and val2 share the slot: hex when it is a timeout.
                        let label = if label == " val2=" && *hex {
                            " utime="
                        } else {
                            label
                        };
                        crate::bytes::put(out, label.as_bytes());
                        if *hex {
                            hex08(out, v);
                        } else {
                            push_u64(out, v);
                        }
                    }
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endian::Endianness;
    use crate::event::FieldClass;

    /// `ftrace:func_repeats` (id 19) as 6.1 lays it out, less the fields `drop` names.
    struct Repeats {
        drop: &'static str,
    }

    impl Catalog for Repeats {
        fn events(&self) -> Vec<(u16, &str, &str)> {
            vec![(19, "ftrace", "func_repeats")]
        }
        fn event(&self, id: u16) -> Option<(&str, &str)> {
            (id == 19).then_some(("ftrace", "func_repeats"))
        }
        fn field(&self, _id: u16, name: &str) -> Option<FieldSpec> {
            let (offset, size) = match name {
                "ip" => (8, 8),
                "parent_ip" => (16, 8),
                "count" => (24, 2),
                "top_delta_ts" => (26, 2),
                "bottom_delta_ts" => (28, 4),
                _ => return None,
            };
            (name != self.drop).then_some(FieldSpec {
                offset,
                size,
                signed: false,
                class: FieldClass::Number,
            })
        }
        fn function(&self, addr: u64) -> Option<(&str, u64)> {
            match addr {
                0x1000..=0x1fff => Some(("filldir64", 0x1000)),
                0x2000..=0x2fff => Some(("dcache_readdir", 0x2000)),
                _ => None,
            }
        }
        fn write_info(&self, _rec: &Record, _out: &mut Vec<u8>) {}
        fn write_fields(&self, _rec: &Record, _out: &mut Vec<u8>) {}
        fn endian(&self) -> Endianness {
            Endianness::Little
        }
    }

    fn write(drop: &'static str, ts: u64) -> (String, bool) {
        let c = Repeats { drop };
        let mut data = vec![0u8; 32];
        data[0..2].copy_from_slice(&19u16.to_le_bytes());
        data[8..16].copy_from_slice(&0x1000u64.to_le_bytes());
        data[16..24].copy_from_slice(&0x2095u64.to_le_bytes());
        data[24..26].copy_from_slice(&10u16.to_le_bytes());
        data[26..28].copy_from_slice(&1u16.to_le_bytes());
        data[28..32].copy_from_slice(&5u32.to_le_bytes());
        let rec = Record {
            cpu: 0,
            ts,
            data: &data,
        };
        let plugin = resolve(&c, 19, "ftrace", "func_repeats").unwrap();
        let cmdlines = Cmdlines::new();
        let stacks = std::cell::RefCell::new(FunctionStacks::new());
        let options = PluginOptions::default();
        let state = PluginState {
            cmdlines: &cmdlines,
            learn_comms: true,
            options: &options,
            function_stacks: &stacks,
            repeat_time: TimeFormat::Raw,
        };
        let mut out = Vec::new();
        let pretty = plugin.write(&c, &rec, state, &mut out);
        (String::from_utf8(out).unwrap(), pretty)
    }

    #[test]
    fn func_repeats_subtracts_both_halves_of_the_delta() {
        // (1 << 32 | 5) before 5 << 32.
        assert_eq!(
            write("", 5 << 32),
            (
                "filldir64 (count: 10  last_ts:  17179869179)".to_string(),
                false
            )
        );
    }

    /// The plugin's handler prints `!` for a missing field of its own after the function
    /// part, and the print fmt follows.
    #[test]
    fn a_missing_field_prints_a_bang_and_the_print_fmt() {
        for field in ["count", "top_delta_ts", "bottom_delta_ts"] {
            assert_eq!(write(field, 0), ("filldir64!".to_string(), true), "{field}");
        }
        // The function part's `!` does not stop the handler, whose time wraps below 0 as
        // C's unsigned subtraction does.
        assert_eq!(
            write("ip", 0),
            (
                "! (count: 10  last_ts: 18446744069414584315)".to_string(),
                false
            )
        );
    }

    /// `sched:sched_switch` (id 5) as 6.1 lays it out.
    struct Switch;

    impl Catalog for Switch {
        fn events(&self) -> Vec<(u16, &str, &str)> {
            vec![(5, "sched", "sched_switch")]
        }
        fn event(&self, id: u16) -> Option<(&str, &str)> {
            (id == 5).then_some(("sched", "sched_switch"))
        }
        fn field(&self, _id: u16, name: &str) -> Option<FieldSpec> {
            let (offset, size, class) = match name {
                "prev_comm" => (8, 16, FieldClass::CharArray),
                "prev_pid" => (24, 4, FieldClass::Number),
                "prev_prio" => (28, 4, FieldClass::Number),
                "prev_state" => (32, 8, FieldClass::Long),
                "next_comm" => (40, 16, FieldClass::CharArray),
                "next_pid" => (56, 4, FieldClass::Number),
                "next_prio" => (60, 4, FieldClass::Number),
                _ => return None,
            };
            Some(FieldSpec {
                offset,
                size,
                signed: class == FieldClass::Number,
                class,
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

    /// The report loop learns the comms of a sched_switch line itself and leaves its text
    /// to a renderer on another thread that learns none: together they must print and
    /// learn what one renderer writing the line does, whether the comm table is still a
    /// list or already sorted.
    #[test]
    fn a_switch_learned_here_and_written_there_matches_one_written_here() {
        let mut data = vec![0u8; 64];
        data[0..2].copy_from_slice(&5u16.to_le_bytes());
        data[8..12].copy_from_slice(b"bash");
        data[24..28].copy_from_slice(&100i32.to_le_bytes());
        data[28..32].copy_from_slice(&120i32.to_le_bytes());
        data[32..40].copy_from_slice(&1u64.to_le_bytes());
        data[40..47].copy_from_slice(b"cc1plus");
        data[56..60].copy_from_slice(&200i32.to_le_bytes());
        data[60..64].copy_from_slice(&120i32.to_le_bytes());
        let rec = Record {
            cpu: 0,
            ts: 0,
            data: &data,
        };
        let plugin = resolve(&Switch, 5, "sched", "sched_switch").unwrap();
        assert!(plugin.only_learns_comms());
        let stacks = std::cell::RefCell::new(FunctionStacks::new());
        let options = PluginOptions::default();
        let write = |cmdlines: &Cmdlines, learn_comms: bool| {
            let state = PluginState {
                cmdlines,
                learn_comms,
                options: &options,
                function_stacks: &stacks,
                repeat_time: TimeFormat::Raw,
            };
            let mut out = Vec::new();
            let pretty = plugin.write(&Switch, &rec, state, &mut out);
            (String::from_utf8(out).unwrap(), pretty)
        };
        let comms = |c: &Cmdlines| [c.comm(100).to_string(), c.comm(200).to_string()];
        for sorted in [false, true] {
            let table = || {
                let c = Cmdlines::new();
                c.register(7, "init");
                if sorted {
                    // The first lookup sorts the table.
                    assert_eq!(&*c.comm(7), "init");
                }
                c
            };
            let one = table();
            let line = write(&one, true);
            assert_eq!(
                line,
                ("bash:100 [120] S ==> cc1plus:200 [120]".to_string(), false)
            );
            let (here, there) = (table(), table());
            plugin.learn_comms(&Switch, &rec, &here);
            assert_eq!(write(&there, false), line, "sorted {sorted}");
            assert_eq!(comms(&here), comms(&one), "sorted {sorted}");
            assert_eq!(comms(&there), ["<...>", "<...>"], "sorted {sorted}");
        }
    }
}
