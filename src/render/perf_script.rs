//! `perf script`'s text (perf 6.1): one line per sample, `comm tid [cpu] secs.usecs:
//! period event: payload`, with the call chain on `\t<addr> sym+0xoff (dso)` lines and a
//! blank line after it; and Brendan Gregg's folded stacks (`--folded`).
//!
//! A tracepoint payload is printed by the event model's print-fmt engine in
//! libtraceevent's style ([`DatCatalog`]), with the schemas of the file's TRACING_DATA.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::bytes::{push_dec, push_dec6, push_dec_padded, put, put_array};
use crate::event::{PlainLine, PrintEnv, PrintStyle, Record, Schema};
use crate::perf::data::abi::{attr_flag, attr_type, record, sample};
use crate::perf::data::{
    Attr, ClockData, Event, PerfData, PerfDataError, RawRecord, ReadPeriods, Sample,
};
use crate::perf::machine::{
    for_each_ordered, for_each_ordered_with_marks, ordered_records, Location, Machine,
};
use crate::perf::srcline::{SourceLines, SRCLINE_UNKNOWN};
use crate::render::perf_dump::{write_sample_place, RecordDump};
use crate::render::perf_script_fields as extra;
use crate::render::tracecmd::{Catalog, DatCatalog};

/// Fields of `perf script -F` (perf's `PERF_OUTPUT_*`).
pub mod field {
    #![allow(missing_docs)]
    pub const COMM: u64 = 1 << 0;
    pub const TID: u64 = 1 << 1;
    pub const PID: u64 = 1 << 2;
    pub const TIME: u64 = 1 << 3;
    pub const CPU: u64 = 1 << 4;
    pub const EVNAME: u64 = 1 << 5;
    pub const TRACE: u64 = 1 << 6;
    pub const IP: u64 = 1 << 7;
    pub const SYM: u64 = 1 << 8;
    pub const DSO: u64 = 1 << 9;
    pub const ADDR: u64 = 1 << 10;
    pub const SYMOFFSET: u64 = 1 << 11;
    pub const SRCLINE: u64 = 1 << 12;
    pub const PERIOD: u64 = 1 << 13;
    pub const IREGS: u64 = 1 << 14;
    pub const BRSTACK: u64 = 1 << 15;
    pub const BRSTACKSYM: u64 = 1 << 16;
    pub const DATA_SRC: u64 = 1 << 17;
    pub const WEIGHT: u64 = 1 << 18;
    pub const BPF_OUTPUT: u64 = 1 << 19;
    pub const CALLINDENT: u64 = 1 << 20;
    pub const INSN: u64 = 1 << 21;
    pub const INSNLEN: u64 = 1 << 22;
    pub const BRSTACKINSN: u64 = 1 << 23;
    pub const BRSTACKOFF: u64 = 1 << 24;
    pub const SYNTH: u64 = 1 << 25;
    pub const PHYS_ADDR: u64 = 1 << 26;
    pub const UREGS: u64 = 1 << 27;
    pub const METRIC: u64 = 1 << 28;
    pub const MISC: u64 = 1 << 29;
    pub const SRCCODE: u64 = 1 << 30;
    pub const IPC: u64 = 1 << 31;
    pub const TOD: u64 = 1 << 32;
    pub const DATA_PAGE_SIZE: u64 = 1 << 33;
    pub const CODE_PAGE_SIZE: u64 = 1 << 34;
    pub const INS_LAT: u64 = 1 << 35;
    pub const BRSTACKINSNLEN: u64 = 1 << 36;
    pub const FLAGS: u64 = 1 << 37;
}

/// `-F` names and their fields.
pub const FIELD_NAMES: &[(&str, u64)] = &[
    ("comm", field::COMM),
    ("tid", field::TID),
    ("pid", field::PID),
    ("time", field::TIME),
    ("cpu", field::CPU),
    ("event", field::EVNAME),
    ("trace", field::TRACE),
    ("ip", field::IP),
    ("sym", field::SYM),
    ("dso", field::DSO),
    ("addr", field::ADDR),
    ("symoff", field::SYMOFFSET),
    ("srcline", field::SRCLINE),
    ("period", field::PERIOD),
    ("iregs", field::IREGS),
    ("uregs", field::UREGS),
    ("brstack", field::BRSTACK),
    ("brstacksym", field::BRSTACKSYM),
    ("flags", field::FLAGS),
    ("data_src", field::DATA_SRC),
    ("weight", field::WEIGHT),
    ("bpf-output", field::BPF_OUTPUT),
    ("brstackinsn", field::BRSTACKINSN),
    ("brstackinsnlen", field::BRSTACKINSNLEN),
    ("brstackoff", field::BRSTACKOFF),
    ("callindent", field::CALLINDENT),
    ("insn", field::INSN),
    ("insnlen", field::INSNLEN),
    ("synth", field::SYNTH),
    ("phys_addr", field::PHYS_ADDR),
    ("metric", field::METRIC),
    ("misc", field::MISC),
    ("srccode", field::SRCCODE),
    ("ipc", field::IPC),
    ("tod", field::TOD),
    ("data_page_size", field::DATA_PAGE_SIZE),
    ("code_page_size", field::CODE_PAGE_SIZE),
    ("ins_lat", field::INS_LAT),
];

/// The fields this module prints; perf takes the others of [`FIELD_NAMES`] too.
const PRINTED: u64 = {
    use field::*;
    COMM | TID
        | PID
        | TIME
        | CPU
        | EVNAME
        | TRACE
        | IP
        | SYM
        | DSO
        | ADDR
        | SYMOFFSET
        | SRCLINE
        | PERIOD
        | MISC
        | TOD
        | IREGS
        | UREGS
        | WEIGHT
        | INS_LAT
        | PHYS_ADDR
        | BPF_OUTPUT
        | DATA_SRC
        | DATA_PAGE_SIZE
        | CODE_PAGE_SIZE
        | INSN
        | INSNLEN
        | SRCCODE
};

/// `PERF_SAMPLE_BRANCH_ANY` of `branch_sample_type`.
const BRANCH_ANY: u64 = 1 << 3;

/// perf's default fields for an event type.
fn default_fields(type_: u32) -> u64 {
    use field::*;
    let base = COMM | TID | CPU | TIME | EVNAME;
    match type_ {
        attr_type::TRACEPOINT => base | TRACE,
        // Printed only for a bpf-output event's samples.
        attr_type::SOFTWARE => base | IP | SYM | SYMOFFSET | DSO | PERIOD | BPF_OUTPUT,
        _ => base | IP | SYM | SYMOFFSET | DSO | PERIOD,
    }
}

/// Why `perf script` output cannot be made as asked.
#[derive(Debug)]
#[non_exhaustive]
pub enum ScriptError {
    /// The file could not be read.
    Data(PerfDataError),
    /// A `-F` field the samples do not carry, or that needs another.
    Field(String),
    /// Writing the output failed.
    Io(io::Error),
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptError::Data(e) => write!(f, "{e}"),
            ScriptError::Field(m) => write!(f, "{m}"),
            ScriptError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ScriptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ScriptError::Data(e) => Some(e),
            ScriptError::Field(_) => None,
            ScriptError::Io(e) => Some(e),
        }
    }
}

impl From<PerfDataError> for ScriptError {
    fn from(e: PerfDataError) -> Self {
        ScriptError::Data(e)
    }
}
impl From<io::Error> for ScriptError {
    fn from(e: io::Error) -> Self {
        ScriptError::Io(e)
    }
}

/// `-F` as given: the fields, and the event type they are for (None: every type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequest {
    /// `PERF_TYPE_*` of `hw:`, `sw:`, `trace:`, `raw:` or `break:`; events of other
    /// types keep perf's defaults.
    pub event_type: Option<u32>,
    /// The fields.
    pub fields: FieldSpec,
    /// What perf warns of this `-F` as it reads it: a field given for every type that
    /// some types cannot print (`'trace' not valid for software events. Ignoring.`).
    pub warnings: Vec<String>,
}

/// The fields of `-F`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldSpec {
    /// The fields to print (`comm,tid,time`), for every event type.
    Set(u64),
    /// Changes to perf's default fields of each event type (`+pid,-cpu`), in the
    /// order given: whether the field is added, and the field.
    Change(Vec<(bool, u64)>),
}

/// Parse `-F`: field names (`comm,tid,time`), or, each with a `+` or a `-`, fields to
/// add to or take from perf's defaults (`+pid,-period`), after an optional event type
/// (`sw:comm,tid`) they are for.
pub fn parse_fields(spec: &str) -> Result<FieldRequest, ScriptError> {
    let (event_type, list) = match spec.split_once(':') {
        Some((t, list)) => {
            let t = match t {
                "hw" => attr_type::HARDWARE,
                "sw" => attr_type::SOFTWARE,
                "trace" => attr_type::TRACEPOINT,
                "raw" => attr_type::RAW,
                "break" => attr_type::BREAKPOINT,
                _ => {
                    return Err(ScriptError::Field(format!(
                        "-F {spec}: unknown event type '{t}'; give hw, sw, trace, raw or \
                         break before the ':', or no type for every event"
                    )))
                }
            };
            (Some(t), list)
        }
        None if spec.trim().is_empty() => {
            return Err(ScriptError::Field(
                "-F is empty: every event type would show nothing; name fields, or give a \
                 type (-F sw:) to hide that type's events"
                    .into(),
            ))
        }
        None => (None, spec),
    };
    let fields = parse_field_list(list)?;
    let mut warnings = Vec::new();
    for tok in list.split(',').map(str::trim) {
        let name = tok.trim_start_matches(['+', '-']);
        let Some(&(name, f)) = FIELD_NAMES.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        match event_type {
            // perf 6.1 reads a field given for one type that the type cannot print as
            // an error (`-F sw:trace`), and one given for every type as a warning for
            // each of its output types that cannot print it, in the order of its table.
            Some(t) if invalid_fields(t) & f != 0 => {
                return Err(ScriptError::Field(format!(
                    "-F {spec}: '{name}' not valid for {} events; {}",
                    type_name(t),
                    if f == field::TRACE {
                        "only tracepoints (trace:) have it"
                    } else {
                        "only software (sw:) and tracepoint (trace:) events have it"
                    }
                )))
            }
            Some(_) => {}
            None => {
                for t in 0..OUTPUT_TYPES {
                    if invalid_fields(t) & f != 0 {
                        warnings.push(format!(
                            "'{name}' not valid for {} events. Ignoring.",
                            output_type_name(t)
                        ));
                    }
                }
            }
        }
    }
    Ok(FieldRequest {
        event_type,
        fields,
        warnings,
    })
}

/// perf 6.1's output types: the six `PERF_TYPE_*` below `PERF_TYPE_MAX`, then its
/// synthesized and other events.
const OUTPUT_TYPES: u32 = 8;

/// The fields perf 6.1 cannot print for an output type.
fn invalid_fields(t: u32) -> u64 {
    match t {
        attr_type::SOFTWARE => field::TRACE,
        attr_type::TRACEPOINT => 0,
        _ => field::TRACE | field::BPF_OUTPUT,
    }
}

/// perf 6.1's name of an output type in its `-F` warnings: raw, breakpoint,
/// synthesized and other events are all "unknown" there.
fn output_type_name(t: u32) -> &'static str {
    match t {
        attr_type::HARDWARE | attr_type::SOFTWARE | attr_type::TRACEPOINT | attr_type::HW_CACHE => {
            type_name(t)
        }
        _ => "unknown",
    }
}

/// The fields of `-F` after any type.
fn parse_field_list(spec: &str) -> Result<FieldSpec, ScriptError> {
    let mut set = 0;
    let mut changes = Vec::new();
    let mut kind = None;
    for tok in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (change, name) = match tok.as_bytes()[0] {
            b'+' => (Some(true), &tok[1..]),
            b'-' => (Some(false), &tok[1..]),
            _ => (None, tok),
        };
        // As perf: either every field is added or removed, or none is.
        if *kind.get_or_insert(change.is_some()) != change.is_some() {
            return Err(ScriptError::Field(format!(
                "-F {spec}: cannot mix fields to add or remove (+field, -field) with fields \
                 that replace the defaults; give each field a + or a -, or none"
            )));
        }
        let f = FIELD_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                ScriptError::Field(format!(
                    "invalid -F field '{name}'; known: {}",
                    FIELD_NAMES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(",")
                ))
            })?;
        match change {
            Some(add) => changes.push((add, f)),
            // perf keeps the defaults of a list with a `-` anywhere in it (as in
            // `bpf-output`), and adds its fields to them.
            None if spec.contains('-') => changes.push((true, f)),
            None => set |= f,
        }
    }
    Ok(if changes.is_empty() {
        FieldSpec::Set(set)
    } else {
        FieldSpec::Change(changes)
    })
}

/// Where `--per-event-dump` writes each event's samples, and what it wrote there.
pub struct PerEventDump<'o> {
    /// A writer for each event of the file, in the file's order.
    pub writers: Vec<Box<dyn Write + 'o>>,
    /// Bytes written to each.
    pub bytes: Vec<u64>,
    /// Samples written to each.
    pub samples: Vec<u64>,
}

impl<'o> PerEventDump<'o> {
    /// Write to `writers`, one per event of the file.
    pub fn new(writers: Vec<Box<dyn Write + 'o>>) -> PerEventDump<'o> {
        let n = writers.len();
        PerEventDump {
            writers,
            bytes: vec![0; n],
            samples: vec![0; n],
        }
    }

    /// A sample of event `attr`, printed as `text`.
    fn take(&mut self, attr: usize, text: &[u8]) -> io::Result<()> {
        let Some(w) = self.writers.get_mut(attr) else {
            return Ok(());
        };
        w.write_all(text)?;
        self.bytes[attr] += text.len() as u64;
        self.samples[attr] += 1;
        Ok(())
    }

    /// Flush every writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.writers.iter_mut().try_for_each(|w| w.flush())
    }
}

/// What `tracectl perf script` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptOutput {
    /// perf script's text.
    Text,
    /// Collapsed stacks: `root;...;leaf count`, one line per distinct stack.
    Folded,
}

/// The name perf gives an event of the file.
pub fn event_name(attr: &Attr, catalog: Option<&DatCatalog>) -> String {
    if let Some(n) = &attr.name {
        return n.clone();
    }
    if attr.type_ == attr_type::TRACEPOINT {
        if let Some((s, n)) = catalog.and_then(|c| c.event(attr.config as u16)) {
            return format!("{s}:{n}");
        }
    }
    "unknown".to_string()
}

/// How `perf script` shows a sample's time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TimeStyle {
    /// The recorded time.
    #[default]
    Absolute,
    /// Since the first record shown with a time (`--reltime`).
    Relative,
    /// Since the record shown before (`--deltatime`); the first shows 0.
    Delta,
}

/// Side-band records `perf script` prints between the samples (`--show-*-events`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SideBand {
    /// COMM, FORK and EXIT (`--show-task-events`).
    pub task: bool,
    /// MMAP and MMAP2 (`--show-mmap-events`).
    pub mmap: bool,
    /// LOST (`--show-lost-events`).
    pub lost: bool,
    /// SWITCH and SWITCH_CPU_WIDE (`--show-switch-events`).
    pub switch: bool,
    /// KSYMBOL and BPF_EVENT (`--show-bpf-events`).
    pub bpf: bool,
    /// NAMESPACES (`--show-namespace-events`).
    pub namespace: bool,
    /// CGROUP (`--show-cgroup-events`).
    pub cgroup: bool,
    /// FINISHED_ROUND (`--show-round-events`); the records are then taken in the
    /// file's order, not sorted by time, as perf does.
    pub round: bool,
}

/// `perf script`'s options that select samples and change how they show.
#[derive(Debug, Clone)]
pub struct ScriptOptions {
    /// Only samples of threads with these comms (`-c`).
    pub comms: Option<Vec<String>>,
    /// Only samples of these processes (`--pid`).
    pub pids: Option<Vec<i32>>,
    /// Only samples of these threads (`--tid`).
    pub tids: Option<Vec<i32>>,
    /// Only records of the CPUs set here, by CPU number (`-C`); side-band records too.
    pub cpus: Option<Vec<bool>>,
    /// Only samples in these spans of time (`--time`).
    pub time: Option<crate::perf::time_ranges::TimeRanges>,
    /// Only samples whose address is in one of these functions, by name or by the
    /// function's start address as `0x...` (`-S`).
    pub symbols: Option<Vec<String>>,
    /// Only samples whose address is in one of these files, by path or base name
    /// (`--dsos`).
    pub dsos: Option<Vec<String>>,
    /// How times show (`--reltime`, `--deltatime`).
    pub time_style: TimeStyle,
    /// Nine decimals of seconds instead of six (`--ns`).
    pub nanoseconds: bool,
    /// Samples on one line, without their call chains (`-G`).
    pub hide_call_graph: bool,
    /// The most call-chain entries taken from a sample (`--max-stack`; perf's default
    /// is the kernel's `perf_event_max_stack`).
    pub max_stack: usize,
    /// A call chain's lines end after the first entry in one of these functions
    /// (`--stop-bt`).
    pub stop_bt: Vec<String>,
    /// Side-band records shown.
    pub show: SideBand,
    /// Every record dumped as perf's `-D` does, the input named as given here.
    pub dump: Option<String>,
}

impl Default for ScriptOptions {
    fn default() -> Self {
        ScriptOptions {
            comms: None,
            pids: None,
            tids: None,
            cpus: None,
            time: None,
            symbols: None,
            dsos: None,
            time_style: TimeStyle::Absolute,
            nanoseconds: false,
            hide_call_graph: false,
            max_stack: DEFAULT_MAX_STACK,
            stop_bt: Vec::new(),
            show: SideBand::default(),
            dump: None,
        }
    }
}

/// perf's `PERF_MAX_STACK_DEPTH`, the kernel's default `perf_event_max_stack`.
pub const DEFAULT_MAX_STACK: usize = 127;

impl ScriptOptions {
    /// Whether a sample is kept only when its thread, file or function is one named.
    fn filters_resolved(&self) -> bool {
        self.comms.is_some()
            || self.pids.is_some()
            || self.tids.is_some()
            || self.symbols.is_some()
            || self.dsos.is_some()
    }

    /// perf's `filter_cpu`: whether a record of `cpu` (None: unknown) is left out.
    fn skips_cpu(&self, cpu: Option<u32>) -> bool {
        match (&self.cpus, cpu) {
            (Some(set), Some(c)) => !set.get(c as usize).copied().unwrap_or(false),
            _ => false,
        }
    }
}

/// Samples of a perf.data printed as `perf script` prints them.
pub struct PerfScript<'f> {
    file: &'f PerfData,
    /// Threads, mappings and symbols.
    pub machine: Machine,
    catalog: Option<DatCatalog>,
    fields: Vec<u64>,
    /// `%*s: ` of each event's name, right-aligned to the longest.
    name_columns: Vec<Vec<u8>>,
    /// Whether the samples' branch flags are shown (`-F flags`), for every type.
    print_flags: bool,
    use_callchain: bool,
    /// The columns before the microseconds (comm, pids, CPU, `%5u.` of the seconds) of
    /// the last sample of each CPU (modulo [`HEAD_SLOTS`]), and what they were made of: a
    /// CPU's neighbouring samples mostly repeat them.
    heads: Vec<HeadCache>,
    /// Counts the changes of the machine (a COMM, a FORK), which make every head stale.
    machine_changes: u64,
    /// The lines of call-chain entries printed lately.
    chain_lines: ChainLines,
    /// The functions inlined at unwound call-chain addresses, from the objects' DWARF.
    lines: SourceLines,
    /// The file offset of the last record taken, for the thread looking symbols up
    /// ahead ([`Machine::look_up_ahead`]); `u64::MAX` once all are.
    reached: Arc<AtomicU64>,
    opts: ScriptOptions,
    /// The file's CLOCK_DATA, for `-F tod`.
    clock: Option<ClockData>,
    /// The longest `-F data_src` text printed so far (perf pads each to it).
    data_src_width: usize,
    /// The time `--reltime` counts from, and the time `--deltatime` last showed (0:
    /// none yet, as perf keeps them).
    first_time: u64,
    previous_time: u64,
    /// What `-F insn`, `insnlen` and `srccode` read and remember.
    code: extra::CodeFields,
    /// How many records came out of order (see [`PerfScript::out_of_order`]).
    out_of_order: u64,
}

/// A call-chain entry to print with its source line: where it is, the name of a
/// function inlined there, and the line perf kept with it.
type ChainEntry<'m> = (Location<'m>, Option<Box<str>>, Option<Box<str>>);

/// Slots of [`PerfScript::heads`].
const HEAD_SLOTS: usize = 64;

/// The comm, pid, CPU and seconds columns of the last sample printed on a CPU.
#[derive(Default, Clone)]
struct HeadCache {
    /// `(tid, pid, cpu, fields, machine changes)`; None before the first sample.
    key: Option<(i32, i32, u32, u64, u64)>,
    /// The seconds `text` ends with, when it does.
    secs: Option<u64>,
    /// Bytes of `text` before the seconds.
    head_len: usize,
    text: Vec<u8>,
}

/// Slots of [`ChainLines`], as a power of two: room for the distinct entries of a
/// profile's hot chains.
const CHAIN_LINE_BITS: u32 = 14;

/// The lines of the call-chain entries printed lately, each under what it was made of:
/// the chains of a profile repeat a few thousand addresses, and an entry whose line is
/// here is copied rather than looked up and formatted again.
#[derive(Default)]
struct ChainLines {
    /// Allocated on first use; a slot per key's hash, the last line made wins it.
    slots: Vec<ChainLine>,
}

/// What a chain entry's line is made of: its address, the cpumode it is resolved in,
/// the process (none for the kernel's addresses, the same in every process), the
/// fields shown and the machine's [`Machine::map_changes`] (for a kernel address
/// [`Machine::kernel_map_changes`]) when it was made.
type ChainLineKey = (u64, u16, i32, u64, u64);

#[derive(Default, Clone)]
struct ChainLine {
    key: Option<ChainLineKey>,
    text: Vec<u8>,
}

impl ChainLines {
    /// The slot of `key`.
    fn slot(&mut self, key: &ChainLineKey) -> &mut ChainLine {
        if self.slots.is_empty() {
            self.slots = vec![ChainLine::default(); 1 << CHAIN_LINE_BITS];
        }
        let (addr, mode, pid, ..) = *key;
        let h = addr ^ (u64::from(pid as u32) << 32) ^ (u64::from(mode) << 24);
        let i = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CHAIN_LINE_BITS);
        &mut self.slots[i as usize]
    }

    /// Write the lines of the chain entries of `s` that `machine` resolves (the
    /// chain the sample carries, nothing unwound), as [`write_chain_entry`] writes them
    /// without inlined functions or source lines.
    fn write(
        &mut self,
        machine: &Machine,
        s: &Sample,
        max_stack: usize,
        f: u64,
        out: &mut Vec<u8>,
    ) {
        use crate::perf::data::abi::misc;
        let (changes, kernel_changes) = (machine.map_changes(), machine.kernel_map_changes());
        machine.sampled_chain_entries(s, max_stack, |mode, ip| {
            let kernel = mode == misc::KERNEL || mode == misc::GUEST_KERNEL;
            let key = if kernel {
                (ip, mode, -1, f, kernel_changes)
            } else {
                (ip, mode, s.pid, f, changes)
            };
            let slot = self.slot(&key);
            if slot.key == Some(key) {
                out.extend_from_slice(&slot.text);
                return;
            }
            let loc = machine.resolve(s.pid, mode, ip);
            let start = out.len();
            write_chain_entry(out, &loc, None, f, None);
            // The first lookup in a file whose loading failed finds no symbol, the
            // next ones may: such a line is not kept.
            if loc.sym.is_some() || !loc.object.is_some_and(|o| machine.first_lookup_differs(o)) {
                slot.key = Some(key);
                slot.text.clear();
                slot.text.extend_from_slice(&out[start..]);
            }
        });
    }
}

/// A tracepoint payload's text: the catalog's schemas looked up once per event id and its
/// print settings made once, instead of for every sample.
struct TraceText<'c> {
    catalog: &'c DatCatalog,
    env: PrintEnv<'c>,
    /// Schemas by event id, filled as the ids are met, with the plain line each prints
    /// with when it has one (called here directly, without `write_text`'s dispatch).
    schemas: Vec<Option<(&'c Schema, Option<&'c PlainLine>)>>,
}

impl<'c> TraceText<'c> {
    fn new(catalog: &'c DatCatalog) -> TraceText<'c> {
        TraceText {
            catalog,
            env: catalog.print_env(PrintStyle::TraceCmd),
            schemas: Vec::new(),
        }
    }

    /// What [`Catalog::write_info`] writes for `rec`.
    #[inline]
    fn write(&mut self, rec: &Record, out: &mut Vec<u8>) {
        let Some(id) = rec.event_id(self.env.endian) else {
            return;
        };
        let i = usize::from(id);
        let (schema, line) = match self.schemas.get(i) {
            Some(Some(s)) => *s,
            _ => {
                let Some(s) = self.catalog.registry().get(id) else {
                    return;
                };
                if self.schemas.len() <= i {
                    self.schemas.resize(i + 1, None);
                }
                let entry = (s, s.plain_line(self.env.style));
                self.schemas[i] = Some(entry);
                entry
            }
        };
        if let Some(line) = line {
            if line.write(rec.data, self.env.endian.is_big(), out) {
                return;
            }
        }
        schema.write_text(rec, &self.env, out);
    }
}

impl<'f> PerfScript<'f> {
    /// Prepare to print `file`; `user_fields` are the `-F` given, in order (none: perf's
    /// defaults per type).
    pub fn new(
        file: &'f PerfData,
        machine: Machine,
        catalog: Option<DatCatalog>,
        user_fields: &[FieldRequest],
    ) -> Result<PerfScript<'f>, ScriptError> {
        Self::with_options(
            file,
            machine,
            catalog,
            user_fields,
            ScriptOptions::default(),
        )
    }

    /// [`PerfScript::new`] with perf script's options that select samples and change
    /// how they show.
    pub fn with_options(
        file: &'f PerfData,
        machine: Machine,
        catalog: Option<DatCatalog>,
        user_fields: &[FieldRequest],
        opts: ScriptOptions,
    ) -> Result<PerfScript<'f>, ScriptError> {
        let names: Vec<String> = file
            .attrs()
            .iter()
            .map(|a| event_name(a, catalog.as_ref()))
            .collect();
        let use_callchain = !opts.hide_call_graph
            && file
                .attrs()
                .iter()
                .any(|a| a.sample_type & sample::CALLCHAIN != 0);
        let mut fields = Vec::new();
        // Events of a PMU beyond perf's fixed types (intel_pt, cs_etm) record hardware
        // traces, which perf decodes into samples with branch flags and counts.
        let hardware_trace = file.attrs().iter().any(|a| a.type_ > attr_type::BREAKPOINT);
        // perf's `print_flags`: one switch for every event type, the last `flags`,
        // `+flags` or `-flags` given setting it.
        let mut print_flags = false;
        for r in user_fields {
            match &r.fields {
                FieldSpec::Set(u) if u & field::FLAGS != 0 => print_flags = true,
                FieldSpec::Set(_) => {}
                FieldSpec::Change(c) => {
                    for &(add, fl) in c {
                        if fl == field::FLAGS {
                            print_flags = add;
                        }
                    }
                }
            }
        }
        // perf's `evlist__combined_branch_type`.
        let branch_types = file.attrs().iter().fold(0, |t, a| t | a.branch_sample_type);
        for (i, (a, name)) in file.attrs().iter().zip(&names).enumerate() {
            let tracepoint = a.type_ == attr_type::TRACEPOINT;
            // The fields and those of them named by -F: a named field the samples do
            // not carry is an error, a default one is left out.
            // Each -F for this type in turn: a list replaces what the ones before
            // chose, a change changes it.
            let mut chosen: Option<(u64, u64)> = None;
            for r in user_fields
                .iter()
                .filter(|r| r.event_type.map_or(true, |t| t == a.type_))
            {
                // As perf: only fields given for every type count as asked for by
                // name; one given after a type that the samples do not carry is left
                // out without a word.
                let typed = r.event_type.is_some();
                // `flags` is perf's one switch (`print_flags`), not a field: changes of
                // it alone leave each type's fields as they were.
                if let FieldSpec::Change(c) = &r.fields {
                    if c.iter().all(|&(_, fl)| fl == field::FLAGS) {
                        continue;
                    }
                }
                chosen = Some(match &r.fields {
                    FieldSpec::Set(u) => {
                        let u = if tracepoint { *u } else { u & !field::TRACE };
                        (u, if typed { chosen.map_or(0, |c| c.1) } else { u })
                    }
                    FieldSpec::Change(changes) => {
                        let (mut f, mut named) = chosen.unwrap_or((default_fields(a.type_), 0));
                        for &(add, fl) in changes {
                            if (fl == field::TRACE && !tracepoint) || fl == field::FLAGS {
                            } else if add {
                                f |= fl;
                                if !typed {
                                    named |= fl;
                                }
                            } else {
                                f &= !fl;
                                named &= !fl;
                            }
                        }
                        (f, named)
                    }
                });
            }
            let (mut f, named) = chosen.unwrap_or_else(|| {
                let mut d = default_fields(a.type_);
                if file.is_pipe() {
                    // A pipe's events arrive one by one: at each, perf adds the address
                    // and symbol (only) to its type's fields when any event so far
                    // records call chains.
                    // (The first event of the type decides.)
                    let first = file.attrs()[..i].iter().position(|b| b.type_ == a.type_);
                    let so_far = file.attrs()[..=first.unwrap_or(i)]
                        .iter()
                        .fold(0, |t, a| t | a.sample_type);
                    if use_callchain && so_far & sample::CALLCHAIN != 0 {
                        d |= field::IP | field::SYM;
                    }
                } else if tracepoint && use_callchain && a.sample_type & sample::CALLCHAIN != 0 {
                    d |= field::IP | field::SYM | field::SYMOFFSET | field::DSO;
                }
                (d, 0)
            });
            // perf 6.1's `evsel__check_attr`, in its order: the first failed check is
            // the one reported.
            let stype = |f: &mut u64, fl: u64, bit: u64, what: &str, fname: &str| {
                if *f & fl != 0 && a.sample_type & bit == 0 {
                    if named & fl != 0 {
                        return Err(ScriptError::Field(format!(
                            "Samples for '{name}' event do not have {what} attribute set. Cannot print '{fname}' field."
                        )));
                    }
                    // Not asked for by name: left out of perf's defaults.
                    *f &= !fl;
                }
                Ok(())
            };
            stype(&mut f, field::IP, sample::IP, "IP", "ip")?;
            stype(&mut f, field::ADDR, sample::ADDR, "ADDR", "addr")?;
            stype(
                &mut f,
                field::DATA_SRC,
                sample::DATA_SRC,
                "DATA_SRC",
                "data_src",
            )?;
            stype(
                &mut f,
                field::WEIGHT,
                sample::WEIGHT | sample::WEIGHT_STRUCT,
                "WEIGHT",
                "weight",
            )?;
            // perf asks for an address in the samples, not among the fields.
            let addressed = a.sample_type & (sample::IP | sample::ADDR) != 0;
            if f & field::SYM != 0 && !addressed {
                return Err(ScriptError::Field(
                    "Display of symbols requested but neither sample IP nor sample address\nis selected. Hence, no addresses to convert to symbols.".into(),
                ));
            }
            if f & field::SYMOFFSET != 0 && f & field::SYM == 0 {
                return Err(ScriptError::Field(
                    "Display of offsets requested but symbol is not selected.".into(),
                ));
            }
            if f & field::DSO != 0 && !addressed {
                return Err(ScriptError::Field(
                    "Display of DSO requested but no address to convert.".into(),
                ));
            }
            if f & (field::SRCLINE | field::SRCCODE) != 0 && f & field::IP == 0 {
                return Err(ScriptError::Field(
                    "Display of source line number requested but sample IP is not\nselected. Hence, no address to lookup the source line number.".into(),
                ));
            }
            if f & (field::BRSTACKINSN | field::BRSTACKINSNLEN) != 0
                && branch_types & BRANCH_ANY == 0
            {
                return Err(ScriptError::Field(
                    "Display of branch stack assembler requested, but non all-branch filter set\nHint: run 'perf record -b ...'".into(),
                ));
            }
            stype(&mut f, field::TID | field::PID, sample::TID, "TID", "tid")?;
            stype(&mut f, field::TIME, sample::TIME, "TIME", "time")?;
            stype(&mut f, field::CPU, sample::CPU, "CPU", "cpu")?;
            stype(&mut f, field::IREGS, sample::REGS_INTR, "IREGS", "iregs")?;
            stype(&mut f, field::UREGS, sample::REGS_USER, "UREGS", "uregs")?;
            stype(
                &mut f,
                field::PHYS_ADDR,
                sample::PHYS_ADDR,
                "PHYS_ADDR",
                "phys_addr",
            )?;
            stype(
                &mut f,
                field::DATA_PAGE_SIZE,
                sample::DATA_PAGE_SIZE,
                "DATA_PAGE_SIZE",
                "data_page_size",
            )?;
            stype(
                &mut f,
                field::CODE_PAGE_SIZE,
                sample::CODE_PAGE_SIZE,
                "CODE_PAGE_SIZE",
                "code_page_size",
            )?;
            stype(
                &mut f,
                field::INS_LAT,
                sample::WEIGHT_STRUCT,
                "WEIGHT_STRUCT",
                "ins_lat",
            )?;
            // Fields that show nothing on samples without their data: branch stacks,
            // and what only a decoded hardware trace gives (instruction and cycle
            // counts, synthesized events, branch flags, which are 0 elsewhere).
            let mut printed = PRINTED;
            if a.sample_type & sample::BRANCH_STACK == 0 {
                printed |= field::BRSTACK | field::BRSTACKSYM | field::BRSTACKOFF;
            }
            if !hardware_trace {
                printed |= field::IPC | field::SYNTH | field::FLAGS | field::CALLINDENT;
                // Metrics come from counts read with the samples.
                if a.sample_type & sample::READ == 0 {
                    printed |= field::METRIC;
                }
            }
            // Fields perf takes that are not printed here yet: refused by name rather
            // than printed wrong.
            if let Some((n, _)) = FIELD_NAMES.iter().find(|(_, b)| f & b & !printed != 0) {
                return Err(ScriptError::Field(format!(
                    "-F field '{n}' (for '{name}' events) is one perf takes that tracectl \
                     does not print yet; leave it out. Printed: {}",
                    FIELD_NAMES
                        .iter()
                        .filter(|(_, b)| b & printed != 0)
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(",")
                )));
            }
            fields.push(f);
        }
        let clock = file.clock_data()?;
        // As perf: any event's `tod` needs the clock's reading.
        if clock.is_none() && fields.iter().any(|f| f & field::TOD != 0) {
            return Err(ScriptError::Field(
                "Can't provide 'tod' time, missing clock data. Please record with -k/--clockid option.".into(),
            ));
        }
        let name_width = names.iter().map(|n| n.len()).max().unwrap_or(0);
        let name_columns = names
            .iter()
            .map(|n| {
                let mut v = Vec::new();
                pad_left(&mut v, n.as_bytes(), name_width);
                v.extend_from_slice(b": ");
                v
            })
            .collect();
        Ok(PerfScript {
            file,
            machine,
            catalog,
            fields,
            name_columns,
            print_flags,
            use_callchain,
            heads: vec![HeadCache::default(); HEAD_SLOTS],
            machine_changes: 0,
            chain_lines: ChainLines::default(),
            lines: SourceLines::new(),
            reached: Arc::default(),
            opts,
            clock,
            data_src_width: 0,
            code: extra::CodeFields::new(native_x86(file)),
            first_time: 0,
            previous_time: 0,
            out_of_order: 0,
        })
    }

    /// How many records of the last run were older than one already shown (perf's
    /// `nr_unordered_events`, which perf warns of).
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    /// Print every sample in time order.
    pub fn run(&mut self, out: &mut dyn Write, mode: ScriptOutput) -> Result<(), ScriptError> {
        let symbols = self
            .fields
            .iter()
            .any(|f| f & (field::SYM | field::DSO) != 0);
        if !symbols {
            return self.run_in(out, mode);
        }
        self.with_symbols_ahead(|script| script.run_in(out, mode))
    }

    /// Run `f` while a second thread looks the samples' user addresses up ahead of it
    /// (loading the files' symbol tables, building perf's trees where lookups need
    /// them, demangling the names shown), and this one first reads the kernel's
    /// symbols when samples may show them: on a machine with more than one CPU the
    /// costs overlap. With user stacks to unwind (`--call-graph dwarf`) the lookups
    /// ahead find little (the addresses come from unwinding), while unwinding keeps
    /// this thread busy from the first sample: the kernel's symbols are then read on a
    /// thread of their own. What is printed does not change.
    fn with_symbols_ahead<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let kernel = self.file.attrs().iter().zip(&self.fields).any(|(a, f)| {
            f & (field::SYM | field::DSO) != 0 && a.flags & attr_flag::EXCLUDE_KERNEL == 0
        });
        let unwinds = self
            .file
            .attrs()
            .iter()
            .any(|a| a.sample_type & sample::STACK_USER != 0);
        let file = self.file;
        let mut helper = self.machine.sharing_symbols();
        let kallsyms = self.machine.sharing_symbols();
        let reached = Arc::clone(&self.reached);
        std::thread::scope(|scope| {
            // Without a thread, symbols are loaded on first use.
            let _ = std::thread::Builder::new()
                .name("symbols".into())
                .spawn_scoped(scope, || helper.look_up_ahead(file, &reached));
            if kernel && unwinds {
                let _ = std::thread::Builder::new()
                    .name("kallsyms".into())
                    .spawn_scoped(scope, move || kallsyms.load_kernel_symbols());
            } else if kernel {
                self.machine.load_kernel_symbols();
            }
            let done = f(self);
            self.reached.store(u64::MAX, Ordering::Relaxed);
            done
        })
    }

    /// perf script's `--per-event-dump`: each event's samples written to its own writer
    /// of `dump` (by the event's place in the file), the side-band records shown to
    /// `out`.
    pub fn run_per_event_dump(
        &mut self,
        out: &mut dyn Write,
        dump: &mut PerEventDump<'_>,
    ) -> Result<(), ScriptError> {
        let symbols = self
            .fields
            .iter()
            .any(|f| f & (field::SYM | field::DSO) != 0);
        if !symbols {
            return self.run_text(out, Some(dump));
        }
        self.with_symbols_ahead(|script| script.run_text(out, Some(dump)))
    }

    /// [`PerfScript::run`] once the symbols are on their way.
    fn run_in(&mut self, out: &mut dyn Write, mode: ScriptOutput) -> Result<(), ScriptError> {
        if mode == ScriptOutput::Text {
            return self.run_text(out, None);
        }
        let (records, late) = ordered_records(self.file)?;
        self.out_of_order = late;
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 17);
        let mut folded: std::collections::HashMap<Vec<u8>, u64> = Default::default();
        let mut order: Vec<Vec<u8>> = Vec::new();
        let mut stack: Vec<u8> = Vec::new();
        for r in &records {
            self.reached.store(r.offset, Ordering::Relaxed);
            match self.file.decode(r)? {
                // perf script's filters select the samples folded too.
                Event::Sample(s) if self.filtered_out(&s) => {}
                Event::Sample(s) => {
                    stack.clear();
                    self.write_folded(&s, &mut stack);
                    match folded.get_mut(&stack) {
                        Some(n) => *n += 1,
                        None => {
                            folded.insert(stack.clone(), 1);
                            order.push(stack.clone());
                        }
                    }
                }
                other => self.machine.apply(&other),
            }
        }
        order.sort();
        for k in order {
            buf.extend_from_slice(&k);
            buf.push(b' ');
            push_dec(&mut buf, folded[&k]);
            buf.push(b'\n');
        }
        out.write_all(&buf)?;
        Ok(())
    }

    /// The text of every sample, written as the records are released in time order
    /// (in the file's order with `--show-round-events`, as perf takes them then).
    fn run_text(
        &mut self,
        out: &mut dyn Write,
        mut dump: Option<&mut PerEventDump<'_>>,
    ) -> Result<(), ScriptError> {
        /// Bytes gathered before a write.
        const FLUSH: usize = 1 << 16;
        let file = self.file;
        let mut buf: Vec<u8> = Vec::with_capacity(FLUSH + 4096);
        // A sample's text on its way to its event's writer (`--per-event-dump`).
        let mut one: Vec<u8> = Vec::new();
        // Lent to the loop, which borrows `self` mutably for the heads.
        let catalog = self.catalog.take();
        let mut trace = catalog.as_ref().map(TraceText::new);
        let in_file_order = self.opts.show.round;
        let mut read_periods = ReadPeriods::default();
        let with_marks = self.opts.dump.is_some();
        let raw_dump = self
            .opts
            .dump
            .as_deref()
            .map(|shown| RecordDump::new(file, shown, false));
        let mut each = |r: RawRecord<'f>| {
            self.reached.store(r.offset, Ordering::Relaxed);
            if let Some(d) = &raw_dump {
                d.write_record(&r, &mut buf)?;
            }
            if r.type_ == record::SAMPLE {
                file.with_sample(&r, |s| {
                    if raw_dump.is_some() {
                        // perf resolves each sample it delivers: the thread and file
                        // before its line.
                        for s in read_periods.split(file, *s) {
                            write_sample_place(&self.machine, &s, &mut buf);
                            self.write_sample(&s, trace.as_mut(), &mut buf);
                        }
                    } else if let Some(d) = dump.as_deref_mut() {
                        let split = if s.read.is_empty() {
                            vec![*s]
                        } else {
                            read_periods.split(file, *s)
                        };
                        for s in &split {
                            self.write_sample(s, trace.as_mut(), &mut one);
                            d.take(s.attr, &one)?;
                            one.clear();
                        }
                    } else if s.read.is_empty() {
                        self.write_sample(s, trace.as_mut(), &mut buf);
                    } else {
                        // A READ sample is one sample per counter value, as perf
                        // delivers it.
                        for s in read_periods.split(file, *s) {
                            self.write_sample(&s, trace.as_mut(), &mut buf);
                        }
                    }
                    Ok::<(), io::Error>(())
                })??;
            } else if raw_dump.is_some()
                && matches!(r.type_, record::FINISHED_ROUND | record::FINISHED_INIT)
            {
                // Dumped above.
            } else if r.type_ == record::FINISHED_ROUND {
                // Reached only in the file's order, which --show-round-events asks for.
                buf.extend_from_slice(b"PERF_RECORD_FINISHED_ROUND\n");
            } else if r.type_ != record::FINISHED_INIT {
                let ev = file.decode(&r)?;
                let shown = self.shows(r.type_);
                // perf prints an exit before it forgets the thread, the others after
                // they change the machine.
                if shown && r.type_ == record::EXIT {
                    self.write_side_band(r.type_, r.misc, &ev, &mut buf);
                }
                self.machine.apply(&ev);
                self.machine_changes += 1;
                if shown && r.type_ != record::EXIT {
                    self.write_side_band(r.type_, r.misc, &ev, &mut buf);
                }
            }
            if buf.len() >= FLUSH {
                out.write_all(&buf)?;
                buf.clear();
            }
            Ok::<(), ScriptError>(())
        };
        let done = if in_file_order {
            file.records()
                .try_for_each(|r| each(r.map_err(ScriptError::from)?))
        } else if with_marks {
            for_each_ordered_with_marks(file, each).map(|late| self.out_of_order = late)
        } else {
            for_each_ordered(file, each).map(|late| self.out_of_order = late)
        };
        drop(trace);
        self.catalog = catalog;
        // What came before a bad record is printed.
        out.write_all(&buf)?;
        done
    }

    /// Whether records of `type_` are shown (`--show-*-events`).
    fn shows(&self, type_: u32) -> bool {
        let show = self.opts.show;
        match type_ {
            record::COMM | record::FORK | record::EXIT => show.task,
            record::MMAP | record::MMAP2 => show.mmap,
            record::LOST => show.lost,
            record::SWITCH | record::SWITCH_CPU_WIDE => show.switch,
            record::KSYMBOL | record::BPF_EVENT => show.bpf,
            record::NAMESPACES => show.namespace,
            record::CGROUP => show.cgroup,
            _ => false,
        }
    }

    /// A side-band record's line (perf's `print_event_with_time`): the columns of a
    /// sample of the event it came with, then `PERF_RECORD_...`.
    fn write_side_band(&mut self, type_: u32, misc: u16, ev: &Event, out: &mut Vec<u8>) {
        let file = self.file;
        let attrs = file.attrs();
        let Some(first) = attrs.first() else {
            return;
        };
        let id_all = first.sample_id_all();
        let (sid, pid, tid, time) = match *ev {
            Event::Comm { pid, tid, id, .. }
            | Event::Mmap { pid, tid, id, .. }
            | Event::Namespaces { pid, tid, id, .. } => (id, pid, tid, 0),
            Event::Task {
                pid, tid, time, id, ..
            } => (id, pid, tid, time),
            // Shown with the thread of the sample id, as perf 6.1 does.
            Event::Switch { id, .. }
            | Event::Lost { id, .. }
            | Event::Ksymbol { id, .. }
            | Event::Cgroup { id, .. }
            | Event::BpfEvent { id, .. } => {
                let (pid, tid) = if id_all && first.sample_type & sample::TID != 0 {
                    (id.pid, id.tid)
                } else {
                    (-1, -1)
                };
                (id, pid, tid, 0)
            }
            _ => return,
        };
        let attr = file.attr_of_record(&sid);
        // The sample's columns: its id trailer's, or what the record says when the
        // events have none.
        let (s_pid, s_tid, cpu, s_time) = if attr.is_some() && !id_all {
            (pid, tid, Some(0), time)
        } else if id_all {
            let has_tid = first.sample_type & sample::TID != 0;
            (
                if has_tid { sid.pid } else { -1 },
                if has_tid { sid.tid } else { -1 },
                sid.cpu,
                sid.time.unwrap_or(u64::MAX),
            )
        } else {
            (-1, -1, None, u64::MAX)
        };
        if self.opts.skips_cpu(cpu) {
            return;
        }
        if let Some(a) = attr {
            let f = self.fields[a];
            if f & (field::COMM | field::PID | field::TID | field::CPU) != 0 {
                let comm = if tid != -1 {
                    self.machine.comm_of(tid)
                } else {
                    std::borrow::Cow::Borrowed(":-1")
                };
                write_head(
                    &comm,
                    self.use_callchain,
                    s_pid,
                    s_tid,
                    cpu.unwrap_or(u32::MAX),
                    f,
                    out,
                );
            }
            if f & field::MISC != 0 {
                extra::write_misc(out, misc, type_);
            }
            if f & field::TIME != 0 {
                let t = self.shown_time(s_time);
                push_dec_padded(out, t / 1_000_000_000, 5, b' ');
                out.push(b'.');
                push_fraction(out, t, self.opts.nanoseconds);
                put_array(out, *b": ");
            }
        }
        crate::render::perf_sideband::write_record_text(type_, ev, out);
    }

    /// Whether perf script's filters leave the sample out (its `process_sample_event`:
    /// the time spans, the CPUs, then the thread, file and function of the sample's
    /// address).
    fn filtered_out(&self, s: &Sample) -> bool {
        let o = &self.opts;
        if o.time.as_ref().is_some_and(|t| t.skips(s.time)) {
            return true;
        }
        let attr = &self.file.attrs()[s.attr];
        if o.skips_cpu((attr.sample_type & sample::CPU != 0).then_some(s.cpu)) {
            return true;
        }
        if !o.filters_resolved() {
            return false;
        }
        // perf's `thread__is_filtered`.
        if let Some(comms) = &o.comms {
            let comm = self.machine.comm_of(s.tid);
            if !comms.iter().any(|c| *c == comm) {
                return true;
            }
        }
        if o.pids.as_ref().is_some_and(|p| !p.contains(&s.pid))
            || o.tids.as_ref().is_some_and(|t| !t.contains(&s.tid))
        {
            return true;
        }
        let loc = self.machine.resolve(s.pid, s.cpumode, s.ip);
        if let Some(dsos) = &o.dsos {
            // perf matches the file's short name (its base name) or its long name.
            let kept = loc.dso.is_some_and(|d| {
                let base = d.rsplit('/').next().unwrap_or(d);
                dsos.iter().any(|n| n == d || n == base)
            });
            if !kept {
                return true;
            }
        }
        if let Some(syms) = &o.symbols {
            let kept = loc.sym.is_some_and(|(name, off)| {
                let start = format!("{:#x}", s.ip.wrapping_sub(off));
                syms.iter().any(|n| n == name || *n == start)
            });
            if !kept {
                return true;
            }
        }
        false
    }

    /// The time shown for a record at `time` (`--reltime`, `--deltatime`), keeping
    /// what the next one needs, as perf does for every record shown with a time.
    fn shown_time(&mut self, time: u64) -> u64 {
        match self.opts.time_style {
            TimeStyle::Absolute => time,
            TimeStyle::Relative => {
                if self.first_time == 0 {
                    self.first_time = time;
                }
                time.wrapping_sub(self.first_time)
            }
            TimeStyle::Delta => {
                let t = if self.previous_time != 0 {
                    time.wrapping_sub(self.previous_time)
                } else {
                    0
                };
                self.previous_time = time;
                t
            }
        }
    }

    /// One sample's text.
    fn write_sample(&mut self, s: &Sample, trace: Option<&mut TraceText>, out: &mut Vec<u8>) {
        let f = self.fields[s.attr];
        // perf shows no line for an event type given no fields (`-F sw:`).
        if f == 0 || self.filtered_out(s) {
            return;
        }
        let time = if f & field::TIME != 0 {
            self.shown_time(s.time)
        } else {
            0
        };
        let attr = &self.file.attrs()[s.attr];
        let slot = &mut self.heads[s.cpu as usize % HEAD_SLOTS];
        let key = Some((s.tid, s.pid, s.cpu, f, self.machine_changes));
        if slot.key != key {
            slot.text.clear();
            if f & (field::COMM | field::PID | field::TID | field::CPU) != 0 {
                let comm = self.machine.comm_of(s.tid);
                write_head(
                    &comm,
                    self.use_callchain,
                    s.pid,
                    s.tid,
                    s.cpu,
                    f,
                    &mut slot.text,
                );
            }
            slot.head_len = slot.text.len();
            slot.secs = None;
            slot.key = key;
        }
        let secs = time / 1_000_000_000;
        if f & field::TIME != 0 && slot.secs != Some(secs) {
            // `%12s` of `secs.usecs`: the seconds right-aligned in 5 (12 - 7) or wider;
            // `%5lu.%09llu` with --ns.
            slot.text.truncate(slot.head_len);
            push_dec_padded(&mut slot.text, secs, 5, b' ');
            slot.text.push(b'.');
            slot.secs = Some(secs);
        }
        if f & (field::MISC | field::TOD) != 0 {
            // Between the CPU and the time: the cached head stops before them.
            put(out, &slot.text[..slot.head_len]);
            if f & field::MISC != 0 {
                extra::write_misc(out, s.misc, record::SAMPLE);
            }
            if let (true, Some(c)) = (f & field::TOD != 0, &self.clock) {
                extra::write_tod(out, c, s.time, self.opts.nanoseconds);
            }
            put(out, &slot.text[slot.head_len..]);
        } else {
            put(out, &slot.text);
        }
        if f & field::TIME != 0 {
            push_fraction(out, time, self.opts.nanoseconds);
            put_array(out, *b": ");
        }
        if f & field::PERIOD != 0 {
            pad_dec(out, s.period as i64, 10);
            out.push(b' ');
        }
        if f & field::EVNAME != 0 {
            put(out, &self.name_columns[s.attr]);
        }
        if self.print_flags {
            // `  %-21s ` of the flags' names: none without a hardware trace.
            out.extend_from_slice(&[b' '; 24]);
        }
        if f & field::TRACE != 0 && !s.raw.is_empty() {
            if let Some(t) = trace {
                let rec = Record {
                    cpu: s.cpu,
                    ts: s.time,
                    data: s.raw,
                };
                let start = out.len();
                t.write(&rec, out);
                if out.len() > start && out.last() == Some(&b'\n') {
                    out.pop();
                }
            }
        }
        if f & field::ADDR != 0 {
            write_hex16(out, s.addr);
            if addr_correlates_sym(attr) {
                let loc = resolve_data_addr(&self.machine, s, s.addr);
                write_location(out, &loc, f & !field::IP, s.addr);
            }
        }
        if f & field::DATA_SRC != 0 {
            extra::write_data_src(out, s.data_src, &mut self.data_src_width);
        }
        if f & field::WEIGHT != 0 {
            extra::write_dec16(out, s.weight);
        }
        if f & field::INS_LAT != 0 {
            extra::write_dec16(out, u64::from(s.ins_lat));
        }
        if f & field::IP != 0 {
            let chain = self.use_callchain && attr.sample_type & sample::CALLCHAIN != 0;
            if chain {
                // perf resolves the sample's own address before its chain; which lookup
                // comes first matters for a file whose loading fails (the first finds
                // nothing).
                self.machine.resolve(s.pid, s.cpumode, s.ip);
                out.push(b'\n');
                let stop_bt = &self.opts.stop_bt;
                // perf's `sample__fprintf_callchain`: the lines end after the entry of
                // a function named by --stop-bt.
                let stops_after = |loc: &Location, inlined: Option<&str>| {
                    let name = inlined.or(loc.sym.map(|(n, _)| n));
                    name.is_some_and(|n| stop_bt.iter().any(|b| b == n))
                };
                if f & field::SRCLINE == 0
                    && stop_bt.is_empty()
                    && attr.sample_type & sample::STACK_USER == 0
                {
                    // Nothing to unwind and no --stop-bt: lines of entries seen lately
                    // are copied.
                    self.chain_lines
                        .write(&self.machine, s, self.opts.max_stack, f, out);
                } else if f & field::SRCLINE == 0 {
                    let mut stopped = false;
                    self.lines.callchain_limited(
                        &self.machine,
                        s,
                        self.opts.max_stack,
                        |loc, _, inlined, _| {
                            if !stopped {
                                write_chain_entry(out, &loc, inlined, f, None);
                                stopped = stops_after(&loc, inlined);
                            }
                        },
                    );
                } else {
                    // perf resolves the whole chain (the inlined functions too) before
                    // it asks about each entry's line.
                    // An entry the unwinder found carries the line addr2line gave
                    // with its functions, printed as it is (`??:0` too); the others
                    // are looked up as they are printed.
                    let mut entries: Vec<ChainEntry> = Vec::new();
                    self.lines.callchain_limited(
                        &self.machine,
                        s,
                        self.opts.max_stack,
                        |loc, _, inlined, kept| {
                            entries.push((loc, inlined.map(Box::from), kept.map(Box::from)));
                        },
                    );
                    for (loc, inlined, kept) in entries {
                        let line = match kept {
                            Some(line) => Some(line.into_string()),
                            None => entry_srcline(&mut self.lines, &self.machine, &loc),
                        };
                        write_chain_entry(out, &loc, inlined.as_deref(), f, line.as_deref());
                        if stops_after(&loc, inlined.as_deref()) {
                            break;
                        }
                    }
                }
            } else {
                out.push(b' ');
                let loc = self.machine.resolve(s.pid, s.cpumode, s.ip);
                write_location(out, &loc, f, s.ip);
                if f & field::SRCLINE != 0 {
                    if let Some(line) = entry_srcline(&mut self.lines, &self.machine, &loc) {
                        out.extend_from_slice(b"\n  ");
                        out.extend_from_slice(line.as_bytes());
                    }
                }
            }
        }
        if f & field::IREGS != 0 {
            extra::write_regs(out, &s.intr_regs, s.endian);
        }
        if f & field::UREGS != 0 {
            extra::write_regs(out, &s.user_regs, s.endian);
        }
        if f & field::BPF_OUTPUT != 0
            && attr.type_ == attr_type::SOFTWARE
            && attr.config == crate::perf::spec::SW_BPF_OUTPUT
        {
            extra::write_bpf_output(out, s.raw);
        }
        if f & (field::INSN | field::INSNLEN) != 0 {
            let (bytes, len) = (f & field::INSN != 0, f & field::INSNLEN != 0);
            self.code.write_insn(out, &self.machine, s, bytes, len);
        }
        if f & field::PHYS_ADDR != 0 {
            write_hex16(out, s.phys_addr);
        }
        if f & field::DATA_PAGE_SIZE != 0 {
            extra::write_page_size(out, s.data_page_size);
        }
        if f & field::CODE_PAGE_SIZE != 0 {
            extra::write_page_size(out, s.code_page_size);
        }
        out.push(b'\n');
        if f & field::SRCCODE != 0 {
            self.code
                .write_srccode(out, &self.machine, &mut self.lines, s);
        }
    }

    /// One sample as a folded stack (root first, `;`-separated; the comm is the root).
    pub fn write_folded(&mut self, s: &Sample, out: &mut Vec<u8>) {
        let comm = self.machine.comm(s.tid).to_string();
        out.extend_from_slice(comm.as_bytes());
        let attr = &self.file.attrs()[s.attr];
        // Each frame, and the name of a function inlined there.
        let mut frames: Vec<(Location, Option<String>)> = Vec::new();
        if attr.sample_type & sample::CALLCHAIN != 0 {
            // As perf script: the sample's own address is resolved before its chain.
            self.machine.resolve(s.pid, s.cpumode, s.ip);
            let max_stack = self.opts.max_stack;
            self.lines
                .callchain_limited(&self.machine, s, max_stack, |l, _, inlined, _| {
                    frames.push((l, inlined.map(str::to_string)))
                });
        } else if attr.sample_type & sample::IP != 0 {
            frames.push((self.machine.resolve(s.pid, s.cpumode, s.ip), None));
        }
        for (l, inlined) in frames.iter().rev() {
            out.push(b';');
            if let Some(name) = inlined {
                out.extend_from_slice(name.as_bytes());
                continue;
            }
            match (l.sym, l.dso) {
                (Some((name, _)), _) => out.extend_from_slice(name.as_bytes()),
                // As stackcollapse-perf: an unknown function is named after its file.
                (None, Some(dso)) => {
                    let base = dso.rsplit('/').next().unwrap_or(dso);
                    out.push(b'[');
                    out.extend_from_slice(base.trim_matches(|c| c == '[' || c == ']').as_bytes());
                    out.push(b']');
                }
                (None, None) => out.extend_from_slice(b"[unknown]"),
            }
        }
    }
}

/// The comm, pid/tid and CPU columns of a sample or side-band record.
fn write_head(
    comm: &str,
    use_callchain: bool,
    pid: i32,
    tid: i32,
    cpu: u32,
    f: u64,
    out: &mut Vec<u8>,
) {
    if f & field::COMM != 0 {
        if f & field::IP != 0 && use_callchain {
            out.extend_from_slice(comm.as_bytes());
            out.push(b' ');
        } else {
            pad_left(out, comm.as_bytes(), 16);
            out.push(b' ');
        }
    }
    if f & field::PID != 0 && f & field::TID != 0 {
        pad_dec(out, pid as i64, 5);
        out.push(b'/');
        let start = out.len();
        push_i64(out, tid as i64);
        while out.len() - start < 5 {
            out.push(b' ');
        }
        out.push(b' ');
    } else if f & field::PID != 0 {
        pad_dec(out, pid as i64, 5);
        out.push(b' ');
    } else if f & field::TID != 0 {
        pad_dec(out, tid as i64, 5);
        out.push(b' ');
    }
    if f & field::CPU != 0 {
        // `[%03d]`: an unknown CPU (-1) as C prints it.
        out.push(b'[');
        if cpu == u32::MAX {
            out.extend_from_slice(b"-01");
        } else {
            push_dec_padded(out, u64::from(cpu), 3, b'0');
        }
        out.extend_from_slice(b"] ");
    }
}

/// The digits after the seconds' point: microseconds, or nanoseconds with `--ns`.
fn push_fraction(out: &mut Vec<u8>, time: u64, nanoseconds: bool) {
    let ns = time % 1_000_000_000;
    if nanoseconds {
        push_dec_padded(out, ns, 9, b'0');
    } else {
        push_dec6(out, (ns / 1000) as u32);
    }
}

fn type_name(t: u32) -> &'static str {
    match t {
        attr_type::HARDWARE => "hardware",
        attr_type::SOFTWARE => "software",
        attr_type::TRACEPOINT => "tracepoint",
        attr_type::HW_CACHE => "hardware-cache",
        attr_type::RAW => "raw",
        attr_type::BREAKPOINT => "breakpoint",
        _ => "unknown",
    }
}

/// One call-chain entry's line: `\t%16lx sym+0xoff (dso)` as selected by `f`, an
/// inlined function (`inlined`) at the offset into the symbol it was inlined into
/// without the file, then `srcline` on a line of its own when given, and ` (inlined)`
/// after it for an inlined function (perf 6.1's `sample__fprintf_callchain`).
fn write_chain_entry(
    out: &mut Vec<u8>,
    loc: &Location,
    inlined: Option<&str>,
    f: u64,
    srcline: Option<&str>,
) {
    out.push(b'\t');
    let inlined = match (inlined, loc.sym) {
        (Some(name), Some((_, off))) => {
            let at = Location {
                sym: Some((name, off)),
                ..*loc
            };
            write_location(out, &at, f & !field::DSO, loc.addr);
            true
        }
        _ => {
            write_location(out, loc, f, loc.addr);
            false
        }
    };
    if let Some(line) = srcline {
        out.extend_from_slice(b"\n  ");
        out.extend_from_slice(line.as_bytes());
    }
    if inlined {
        out.extend_from_slice(b" (inlined)");
    }
    out.push(b'\n');
}

/// The source line perf 6.1 prints under an address `-F srcline` shows
/// (`map__fprintf_srcline`): none for an unmapped address; else addr2line's answer for
/// the address in its file, or, when there is none, `object[ADDRESS]` (perf asks
/// without the symbol, so never `symbol+OFFSET`); none where the answer is `??:0`.
fn entry_srcline(lines: &mut SourceLines, machine: &Machine, loc: &Location) -> Option<String> {
    loc.dso?;
    let unnamed = Location { sym: None, ..*loc };
    let line = lines.srcline(machine, &unnamed, loc.addr);
    (!line.starts_with(SRCLINE_UNKNOWN)).then_some(line)
}

/// Whether perf 6.1 reads the code at samples' addresses (`native_arch`): the file was
/// recorded on x86, as this machine is (perf's own decoder is x86's); a file without
/// its ARCH feature counts as recorded here.
fn native_x86(file: &PerfData) -> bool {
    use crate::perf::data::abi::feature;
    // perf's `normalize_arch`: x86_64 and iN86 are x86.
    let x86 = |arch: &str| {
        let b = arch.as_bytes();
        arch == "x86_64" || arch == "x86" || (b.len() >= 4 && b[0] == b'i' && &b[2..4] == b"86")
    };
    let recorded = match file.feature_string(feature::ARCH) {
        Ok(Some(arch)) => x86(&arch),
        _ => true,
    };
    recorded && x86(std::env::consts::ARCH)
}

/// Whether perf 6.1 shows the symbol and file of a sample's `addr` (`-F addr`,
/// `sample_addr_correlates_sym`): page faults, and branch traces (BTS).
fn addr_correlates_sym(attr: &Attr) -> bool {
    /// `PERF_COUNT_SW_PAGE_FAULTS`, `_MIN`, `_MAJ`.
    const PAGE_FAULTS: [u64; 3] = [2, 5, 6];
    /// `PERF_COUNT_HW_BRANCH_INSTRUCTIONS`.
    const BRANCH_INSTRUCTIONS: u64 = 4;
    match attr.type_ {
        attr_type::SOFTWARE => PAGE_FAULTS.contains(&attr.config),
        attr_type::HARDWARE => attr.config == BRANCH_INSTRUCTIONS && attr.sample_period == 1,
        _ => false,
    }
}

/// Where a sample's data address is (perf's `thread__find_map_fb`): looked up in the
/// address space the sample was taken in, then, when nothing maps it there, in the one
/// the address belongs to (a user address a kernel instruction touched).
fn resolve_data_addr<'m>(machine: &'m Machine, s: &Sample, addr: u64) -> Location<'m> {
    use crate::perf::data::abi::misc;
    let loc = machine.resolve(s.pid, s.cpumode, addr);
    let addr_mode = if (addr as i64) < 0 {
        misc::KERNEL
    } else {
        misc::USER
    };
    if loc.dso.is_some() || addr_mode == s.cpumode {
        return loc;
    }
    machine.resolve(s.pid, addr_mode, addr)
}

/// `%16lx`.
fn write_hex16(out: &mut Vec<u8>, v: u64) {
    let digits = (64 - v.leading_zeros()).div_ceil(4).max(1) as usize;
    out.extend_from_slice(&[b' '; 16][digits.min(16)..]);
    crate::bytes::push_hex(out, v, false);
}

/// `%16lx sym+0xoff (dso)` as selected by `f`.
fn write_location(out: &mut Vec<u8>, loc: &Location, f: u64, ip: u64) {
    if f & field::IP != 0 {
        write_hex16(out, ip);
    }
    if f & field::SYM != 0 {
        out.push(b' ');
        match loc.sym {
            Some((name, off)) => {
                out.extend_from_slice(name.as_bytes());
                if f & field::SYMOFFSET != 0 {
                    out.extend_from_slice(b"+0x");
                    crate::bytes::push_hex(out, off, false);
                }
            }
            None => out.extend_from_slice(b"[unknown]"),
        }
    }
    if f & field::DSO != 0 {
        out.extend_from_slice(b" (");
        out.extend_from_slice(loc.dso.unwrap_or("[unknown]").as_bytes());
        out.push(b')');
    }
}

fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_dec(out, v.unsigned_abs());
}

fn pad_dec(out: &mut Vec<u8>, v: i64, width: usize) {
    let n = crate::bytes::dec_len(v.unsigned_abs()) + usize::from(v < 0);
    for _ in n..width {
        out.push(b' ');
    }
    push_i64(out, v);
}

fn pad_left(out: &mut Vec<u8>, s: &[u8], width: usize) {
    for _ in s.len()..width {
        out.push(b' ');
    }
    out.extend_from_slice(s);
}
