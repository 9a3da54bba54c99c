//! `tracectl perf script` and `tracectl perf report`: reading perf.data files.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Parser;
use tracectl::dat::TracingData;
use tracectl::event::KallsymsSource;
use tracectl::perf::config::{ConfigSources, PerfConfig};
use tracectl::perf::data::PerfData;
use tracectl::perf::machine::{build_id_cache, Machine};
use tracectl::render::perf_script::{parse_fields, PerfScript, ScriptOptions, ScriptOutput};
use tracectl::render::tracecmd::DatCatalog;

use super::common::{with_status, Context, ExitStatus};

/// `tracectl perf script`, with `perf script`'s options.
#[derive(Debug, Parser)]
pub struct ScriptArgs {
    #[command(flatten)]
    input: InputArg,
    /// Fields to print (comm,tid,pid,time,cpu,event,trace,ip,sym,symoff,dso,addr,srcline,
    /// period), or fields to add to or take from the defaults, each with a + or a -
    /// (+pid,-period); after hw:, sw:, trace:, raw: or break: for events of that type only
    /// (sw:comm,tid), where a field the samples lack is left out. srcline prints a
    /// FILE:LINE line under each address; addr the sample's data address (with sym and
    /// dso, its symbol and file, for page faults). flags, brstack, brstacksym, brstackoff,
    /// ipc and synth are taken and show what perf shows on samples without branch stacks
    /// or hardware traces (blank flags, nothing else). Given more than once, each in turn
    #[arg(
        short = 'F',
        long = "fields",
        value_name = "FIELDS",
        allow_hyphen_values = true,
        action = clap::ArgAction::Append
    )]
    fields: Vec<String>,
    /// Write collapsed stacks (`root;...;leaf count`) for flame graphs instead
    #[arg(long = "folded")]
    folded: bool,
    /// Write each event's samples to a file of its own, INPUT.EVENT.dump (next to the
    /// input), instead of to stdout (side-band records shown still go to stdout); say
    /// on stderr what each got
    #[arg(long = "per-event-dump", conflicts_with = "folded")]
    per_event_dump: bool,
    /// Only samples of threads with these comms (COMM[,COMM...])
    #[arg(short = 'c', long = "comms", value_name = "COMMS")]
    comms: Option<String>,
    /// Only samples of these processes (PID[,PID...])
    #[arg(long = "pid", value_name = "PIDS")]
    pid: Option<String>,
    /// Only samples of these threads (TID[,TID...])
    #[arg(long = "tid", value_name = "TIDS")]
    tid: Option<String>,
    /// Only records of these CPUs (0-2,5), side-band records too; the file's events must
    /// record the CPU
    #[arg(short = 'C', long = "cpu", value_name = "CPUS")]
    cpu: Option<String>,
    /// Only samples in this time span: START,STOP in seconds (either side may be
    /// empty), several separated by spaces, or percentages of the recording (10%/2 for
    /// its second tenth, 0%-10%,30%-40%, 25%); relative to the first sample with
    /// --reltime
    #[arg(long = "time", value_name = "TIME", allow_hyphen_values = true)]
    time: Option<String>,
    /// Only samples whose address is in these functions (SYMBOL[,SYMBOL...], or a
    /// function's start address as 0x...)
    #[arg(short = 'S', long = "symbols", value_name = "SYMBOLS")]
    symbols_filter: Option<String>,
    /// Only samples whose address is in these files (DSO[,DSO...], by path or base name)
    #[arg(long = "dsos", value_name = "DSOS")]
    dsos: Option<String>,
    /// Show times with nine decimals
    #[arg(long = "ns")]
    ns: bool,
    /// Show times relative to the first record shown
    #[arg(long = "reltime")]
    reltime: bool,
    /// Show times relative to the record shown before
    #[arg(long = "deltatime")]
    deltatime: bool,
    /// Show samples on one line, without their call chains
    #[arg(short = 'G', long = "hide-call-graph")]
    hide_call_graph: bool,
    /// Take at most this many entries of a call chain (default: the kernel's
    /// perf_event_max_stack, else 127)
    #[arg(long = "max-stack", value_name = "N")]
    max_stack: Option<usize>,
    /// End a call chain's lines after the entry in one of these functions
    /// (SYMBOL[,SYMBOL...])
    #[arg(long = "stop-bt", value_name = "SYMBOLS")]
    stop_bt: Option<String>,
    /// Show the COMM, FORK and EXIT records
    #[arg(long = "show-task-events")]
    show_task_events: bool,
    /// Show the MMAP and MMAP2 records
    #[arg(long = "show-mmap-events")]
    show_mmap_events: bool,
    /// Show the LOST records
    #[arg(long = "show-lost-events")]
    show_lost_events: bool,
    /// Show the context switch records (perf record --switch-events)
    #[arg(long = "show-switch-events")]
    show_switch_events: bool,
    /// Show the FINISHED_ROUND records, taking the records in the file's order
    #[arg(long = "show-round-events")]
    show_round_events: bool,
    /// Dump every record as perf does (-D): its offset and size, its bytes in hex and
    /// what it says, with each sample's fields (call chain entries, registers, stack
    /// size, counter values) and the thread and file it was found in, before its line
    #[arg(short = 'D', long = "dump-raw-trace")]
    dump_raw_trace: bool,
    /// Show the BPF programs' KSYMBOL and BPF_EVENT records
    #[arg(long = "show-bpf-events")]
    show_bpf_events: bool,
    /// Show the NAMESPACES records (perf record --namespaces)
    #[arg(long = "show-namespace-events")]
    show_namespace_events: bool,
    /// Show the CGROUP records (perf record --all-cgroups)
    #[arg(long = "show-cgroup-events")]
    show_cgroup_events: bool,
    #[command(flatten)]
    header: HeaderArgs,
    #[command(flatten)]
    symbols: SymbolArgs,
}

/// perf's `strlist`: the non-empty items of a comma-separated list.
fn str_list(s: &str) -> Vec<String> {
    s.split(',')
        .filter(|i| !i.is_empty())
        .map(str::to_string)
        .collect()
}

/// perf's `intlist` of `--pid` and `--tid`.
fn int_list(s: &str, what: &str) -> Result<Vec<i32>> {
    str_list(s)
        .iter()
        .map(|i| {
            i.trim().parse().map_err(|_| {
                anyhow::anyhow!(
                    "--{what} '{s}': '{i}' is no {what}; give numbers separated by commas"
                )
            })
        })
        .collect()
}

/// The kernel's `perf_event_max_stack`, perf script's default `--max-stack`.
fn sysctl_max_stack() -> usize {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_stack")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(tracectl::render::perf_script::DEFAULT_MAX_STACK)
}

impl ScriptArgs {
    /// The options that select samples and change how they show, checked against
    /// the file as perf checks them.
    fn options(&self, file: &PerfData) -> Result<ScriptOptions> {
        use tracectl::perf::cpu_list::cpu_bitmap;
        use tracectl::perf::time_ranges::TimeRanges;
        use tracectl::render::perf_script::{SideBand, TimeStyle};
        if self.reltime && self.deltatime {
            anyhow::bail!("--reltime and --deltatime show times two ways; give one of them");
        }
        let cpus = match &self.cpu {
            Some(list) => {
                require_sample_cpu(file, list)?;
                let nr_cpus = file.nr_cpus()?.map_or(0, |(avail, _)| avail);
                Some(cpu_bitmap(list, nr_cpus)?)
            }
            None => None,
        };
        let time = match &self.time {
            Some(t) => Some(TimeRanges::parse(t, file.sample_time()?, self.reltime)?),
            None => None,
        };
        Ok(ScriptOptions {
            comms: self.comms.as_deref().map(str_list),
            pids: self
                .pid
                .as_deref()
                .map(|p| int_list(p, "pid"))
                .transpose()?,
            tids: self
                .tid
                .as_deref()
                .map(|t| int_list(t, "tid"))
                .transpose()?,
            cpus,
            time,
            symbols: self.symbols_filter.as_deref().map(str_list),
            dsos: self.dsos.as_deref().map(str_list),
            time_style: if self.reltime {
                TimeStyle::Relative
            } else if self.deltatime {
                TimeStyle::Delta
            } else {
                TimeStyle::Absolute
            },
            nanoseconds: self.ns,
            hide_call_graph: self.hide_call_graph,
            max_stack: self.max_stack.unwrap_or_else(sysctl_max_stack),
            stop_bt: self.stop_bt.as_deref().map(str_list).unwrap_or_default(),
            show: SideBand {
                task: self.show_task_events,
                mmap: self.show_mmap_events,
                lost: self.show_lost_events,
                switch: self.show_switch_events,
                round: self.show_round_events,
                bpf: self.show_bpf_events,
                namespace: self.show_namespace_events,
                cgroup: self.show_cgroup_events,
            },
            dump: self
                .dump_raw_trace
                .then(|| self.input.input.display().to_string()),
        })
    }
}

/// `-i FILE`, as perf spells it.
#[derive(Debug, Parser)]
pub struct InputArg {
    /// Input file name
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        default_value = "perf.data"
    )]
    input: PathBuf,
}

/// The perf.data header block (perf's `--header`, `--header-only`, `-I`).
#[derive(Debug, Parser)]
pub struct HeaderArgs {
    /// Print the perf.data header (host, command line, events, topology, sample times)
    /// before the output
    #[arg(long = "header")]
    header: bool,
    /// Print the perf.data header alone
    #[arg(long = "header-only")]
    header_only: bool,
    /// With --header or --header-only: print the CPU, NUMA, cache and memory topology
    /// sections too, not only their names
    #[arg(short = 'I', long = "show-info")]
    show_info: bool,
}

impl HeaderArgs {
    /// The header block of `file` when asked for.
    fn block(&self, file: &PerfData) -> Result<Option<Vec<u8>>> {
        if !self.header && !self.header_only {
            return Ok(None);
        }
        let mtime = std::fs::metadata(file.path())
            .and_then(|m| m.modified())
            .with_context(|| format!("{}: modification time", file.path().display()))?;
        let mut out = Vec::new();
        tracectl::render::perf_header::write_header_block(file, mtime, self.show_info, &mut out)?;
        Ok(Some(out))
    }

    /// `--header-only`: print the block of the file at `path` and say it is done.
    fn print_only(&self, path: &std::path::Path) -> Result<bool> {
        if !self.header_only {
            return Ok(false);
        }
        let file = open_file(path)?;
        if let Some(b) = self.block(&file)? {
            let mut out = io::stdout().lock();
            match out.write_all(&b).and_then(|()| out.flush()) {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => return Err(e.into()),
                _ => {}
            }
        }
        Ok(true)
    }
}

/// Where symbols come from (perf's options).
#[derive(Debug, Parser)]
pub struct SymbolArgs {
    /// kallsyms file for kernel symbols (default, as perf: /proc/kallsyms when the file
    /// lists no kernel build id or the running kernel's, else the build-id cache's copy
    /// for the listed id; none under --symfs, as perf reads only a vmlinux there)
    #[arg(long = "kallsyms", value_name = "FILE")]
    kallsyms: Option<PathBuf>,
    /// Look for the mapped files under this directory (and for the build-id cache in
    /// DIR/.debug); kernel frames then take their symbols only from --kallsyms
    #[arg(long = "symfs", value_name = "DIR")]
    symfs: Option<PathBuf>,
    /// Build-id cache directory, where perf record keeps a copy of each file by its
    /// build id (default: buildid.dir of perf's config files, $PERF_CONFIG alone when set,
    /// else /etc/perfconfig then ~/.perfconfig; else ~/.debug; --symfs DIR makes it
    /// DIR/.debug)
    #[arg(long = "buildid-dir", value_name = "DIR")]
    buildid_dir: Option<PathBuf>,
    /// Demangle C++ and Rust symbol names (the default)
    #[arg(long = "demangle", overrides_with = "no_demangle")]
    demangle: bool,
    /// Show C++ and Rust symbol names as the files store them (mangled); they also
    /// decide, as stored, which of several symbols at one address is shown
    #[arg(long = "no-demangle")]
    no_demangle: bool,
    /// Show the functions the compiler inlined at each unwound call-chain address
    /// (`--call-graph dwarf`), as entries of their own marked (inlined), from the
    /// files' DWARF (the default)
    #[arg(long = "inline", overrides_with = "no_inline")]
    inline: bool,
    /// Show each call-chain address once, in the function its code is in, without the
    /// functions inlined there
    #[arg(long = "no-inline")]
    no_inline: bool,
}

impl SymbolArgs {
    /// perf's `symbol_conf` as these options set it.
    fn conf(&self) -> tracectl::perf::machine::SymbolConf {
        tracectl::perf::machine::SymbolConf {
            demangle: !self.no_demangle,
            inline: !self.no_inline,
        }
    }
}

/// An open perf.data with its symbols and tracepoint schemas.
pub struct Opened {
    /// The file.
    pub file: PerfData,
    /// Threads, mappings, symbols.
    pub machine: Machine,
    /// Tracepoint schemas (files with TRACING_DATA).
    pub catalog: Option<DatCatalog>,
}

/// The perf.data at `path`, opened; a file that cannot be opened or whose header is
/// not perf's ends with perf's status for it (-1).
fn open_file(path: &std::path::Path) -> Result<PerfData> {
    PerfData::open(path).map_err(|e| with_status(e.into(), ExitStatus(255)))
}

/// Open `path` and load what printing its samples needs.
pub fn open(path: &std::path::Path, sym: &SymbolArgs) -> Result<Opened> {
    let file = open_file(path)?;
    let td = match file.tracing_data() {
        Some((block, offset)) => Some(
            TracingData::parse(block, path, offset)
                .with_context(|| format!("{}: TRACING_DATA feature", path.display()))?,
        ),
        None => None,
    };
    let own = td.as_ref().map(|t| t.sections.kallsyms.as_str());
    let kallsyms = KallsymsSource::for_file(&file, own, sym.kallsyms.as_deref());
    let catalog = td
        .as_ref()
        .map(|t| DatCatalog::from_tracing_data(t, kallsyms.clone()));
    // As perf: its config files first, the option over them (and --symfs over both).
    let config = PerfConfig::load(&ConfigSources::from_env());
    for w in config.warnings() {
        eprintln!("{w}");
    }
    let buildid_dir = sym.buildid_dir.clone().or_else(|| config.buildid_dir());
    let cache = build_id_cache(sym.symfs.as_deref(), buildid_dir.as_deref());
    let kernel = KallsymsSource::for_kernel_frames(
        &file,
        sym.kallsyms.as_deref(),
        sym.symfs.as_deref(),
        &cache,
    );
    let mut frames = kernel.symbols;
    if let Some(said) = kernel.missing {
        // perf says so when it first looks a kernel frame up.
        frames = KallsymsSource::load_with(move || {
            eprintln!("{said}");
            None
        });
    }
    let mut machine = Machine::new(frames, sym.symfs.clone());
    machine.set_symbol_conf(sym.conf());
    if let Some(modules) = kernel.modules {
        machine.set_module_kallsyms(modules);
    }
    if let Some(dir) = buildid_dir {
        machine.set_buildid_dir(dir);
    }
    machine.set_build_ids(file.build_id_entries()?);
    Ok(Opened {
        file,
        machine,
        catalog,
    })
}

/// Run `tracectl perf script`.
pub fn script(_ctx: &Context, a: ScriptArgs) -> Result<i32> {
    if a.header.print_only(&a.input.input)? {
        return Ok(0);
    }
    // As perf, -F is read (and warned of) before the file is opened.
    let fields = a
        .fields
        .iter()
        .map(|f| parse_fields(f))
        .collect::<Result<Vec<_>, _>>()?;
    for w in fields.iter().flat_map(|f| &f.warnings) {
        eprintln!("{w}");
    }
    let o = open(&a.input.input, &a.symbols)?;
    let header_block = a.header.block(&o.file)?;
    let opts = match a.options(&o.file) {
        Ok(opts) => opts,
        Err(e)
            if e.downcast_ref::<tracectl::perf::data::PerfDataError>()
                .is_some() =>
        {
            return Err(e)
        }
        Err(e) => {
            // perf refuses these with its exit status: -EINVAL (234) for a time
            // string, -1 (255) for the others.
            let code = if e
                .downcast_ref::<tracectl::perf::time_ranges::TimeRangeError>()
                .is_some()
            {
                234
            } else {
                255
            };
            eprintln!("tracectl: {e:#}");
            return Ok(code);
        }
    };
    // --per-event-dump's files are named after the events.
    let dump_names: Option<Vec<String>> = a.per_event_dump.then(|| {
        o.file
            .attrs()
            .iter()
            .map(|at| {
                let name = tracectl::render::perf_script::event_name(at, o.catalog.as_ref());
                format!("{}.{name}.dump", a.input.input.display())
            })
            .collect()
    });
    let mut s = PerfScript::with_options(&o.file, o.machine, o.catalog, &fields, opts)?;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if let Some(b) = &header_block {
        out.write_all(b)?;
    }
    if let Some(names) = dump_names {
        return per_event_dump(&mut s, &names, &mut out);
    }
    let mode = if a.folded {
        ScriptOutput::Folded
    } else {
        ScriptOutput::Text
    };
    s.run(&mut out, mode)?;
    out.flush()?;
    warn_out_of_order(s.out_of_order());
    Ok(0)
}

/// perf's warning when records came out of order (perf record's rings are read in
/// turn, and a late round can hold records older than some already shown).
fn warn_out_of_order(n: u64) {
    if n > 0 {
        eprintln!("Warning:\n{n} out of order events recorded.");
    }
}

/// `perf script --per-event-dump`: INPUT.EVENT.dump for each event, all made before
/// the first sample is read (those made are removed again if one cannot be), and
/// perf's line for each on stderr at the end.
fn per_event_dump(s: &mut PerfScript, names: &[String], out: &mut dyn Write) -> Result<i32> {
    use tracectl::render::perf_script::PerEventDump;
    let mut writers: Vec<Box<dyn Write>> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        match std::fs::File::create(name) {
            Ok(f) => writers.push(Box::new(io::BufWriter::new(f))),
            Err(e) => {
                drop(writers);
                for made in &names[..i] {
                    let _ = std::fs::remove_file(made);
                }
                anyhow::bail!(
                    "--per-event-dump: cannot create {name}: {e}; give an input in a \
                     directory you can write to"
                );
            }
        }
    }
    let mut dump = PerEventDump::new(writers);
    s.run_per_event_dump(out, &mut dump)?;
    warn_out_of_order(s.out_of_order());
    // perf gives each file's size before its last block is flushed (stdio's buffer of
    // one 4 KiB block): the bytes written less the part of a block after the last
    // whole one.
    for (i, name) in names.iter().enumerate() {
        let flushed = dump.bytes[i] - dump.bytes[i] % 4096;
        writeln!(
            out,
            "[ perf script: Wrote {:.3} MB {name} ({} samples) ]",
            flushed as f64 / 1024.0 / 1024.0,
            dump.samples[i]
        )?;
    }
    out.flush()?;
    dump.flush()?;
    Ok(0)
}

/// `tracectl perf report`, with `perf report --stdio`'s table.
#[derive(Debug, Parser)]
pub struct ReportArgs {
    #[command(flatten)]
    input: InputArg,
    /// Sort by these keys (comm,pid,dso,sym,addr,cpu,time,trace,socket,dso_size,parent,
    /// srcline,srcfile,cgroup,cgroup_id, or the columns of -F); by default comm,dso,sym, or trace when
    /// every event of the file is a tracepoint, after the overhead columns unless -F
    /// names every column
    #[arg(short = 's', long = "sort", value_name = "KEYS")]
    sort: Option<String>,
    /// The columns, left to right: overhead, overhead_sys, overhead_us,
    /// overhead_children, sample, period and the sort keys. Without -s the rows are
    /// sorted by them in that order; a list that starts with + adds columns to the
    /// default ones (and to -n's and --show-total-period's, which a list without +
    /// leaves out). The sort keys not named are added at the end
    #[arg(short = 'F', long = "fields", value_name = "FIELDS")]
    fields: Option<String>,
    /// Put SEP between the columns instead of lining them up (no dots line under the
    /// titles; a SEP's first character inside a column becomes a dot), and between
    /// the entries of `-g folded` call chains
    #[arg(short = 't', long = "field-separator", value_name = "SEP")]
    field_separator: Option<String>,
    /// Take at most this many entries of each call chain, for the Children shares,
    /// the call graphs and the parent: the outermost callers in caller order, those
    /// nearest the sample in callee order (default: the kernel's
    /// perf_event_max_stack, else 127)
    #[arg(long = "max-stack", value_name = "N")]
    max_stack: Option<usize>,
    /// After the report, the count of each event in each thread that exited while
    /// recorded with per-thread counts (perf record -s: the file's READ records)
    #[arg(short = 'T', long = "threads")]
    threads: bool,
    /// The style of the -T table: raw (one entry per thread and event, with the
    /// event's index) or normal (the default; any other key too, as in perf)
    #[arg(long = "pretty", value_name = "KEY")]
    pretty: Option<String>,
    /// Show the events of each group (perf record -e '{a,b}') together, in the
    /// leader's table with a column of each event's share (the default for a file
    /// with groups); for a file without groups, all its events as one group
    #[arg(long = "group", overrides_with = "no_group")]
    group: bool,
    /// Show each event of a group in a table of its own
    #[arg(long = "no-group")]
    no_group: bool,
    /// Accumulate call chains of children to the parent entry (the default with call chains)
    #[arg(long = "children", overrides_with = "no_children")]
    children: bool,
    /// Only self overhead
    #[arg(long = "no-children")]
    no_children: bool,
    /// Regex of parent symbols for --sort parent (default ^sys_|^do_page_fault): a
    /// sample's parent is the first symbol of its call chain that matches; giving
    /// -p adds the parent key
    #[arg(short = 'p', long = "parent", value_name = "REGEX")]
    parent: Option<String>,
    /// Only rows with a parent (see -p)
    #[arg(short = 'x', long = "exclude-other")]
    exclude_other: bool,
    /// Width of a row of the time key: nanoseconds, or a number with s, ms, us or ns
    #[arg(long = "time-quantum", value_name = "TIME", default_value = "100ms")]
    time_quantum: String,
    /// Print the table to stdout (the only output this command has; accepted for perf's sake)
    #[arg(long = "stdio")]
    stdio: bool,
    /// Call graphs under the rows: graph|flat|fractal|folded|none, caller|callee,
    /// function, percent|period|count, threshold percent, print limit. Without -g:
    /// graph,0.5 in caller order with --children, callee order without; a bare -g is
    /// graph,0.5,caller,function,percent. Given more than once, each -g changes what it
    /// names and keeps the rest
    #[arg(
        short = 'g',
        long = "call-graph",
        value_name = "TYPE,MIN[,LIMIT],ORDER,KEY,VALUE",
        num_args = 0..=1,
        action = clap::ArgAction::Append,
        default_missing_value = "graph,0.5,caller,function,percent"
    )]
    call_graph: Vec<String>,
    /// Call graphs in caller order (callers first), whatever -g says
    #[arg(short = 'G', long = "inverted")]
    inverted: bool,
    /// Only samples of threads with these comms (at the sample's time); the others
    /// still count in the event's total. One comm leaves out the Command column
    #[arg(short = 'c', long = "comms", value_name = "COMM[,COMM...]")]
    comms: Option<String>,
    /// Only samples of these processes (the others still count in the total)
    #[arg(long = "pid", value_name = "PID[,PID...]")]
    pid: Option<String>,
    /// Only samples of these threads (the others still count in the total)
    #[arg(long = "tid", value_name = "TID[,TID...]")]
    tid: Option<String>,
    /// Only samples in these objects, by file name or path (the others still count in
    /// the total). One object leaves out the Shared Object column
    #[arg(short = 'd', long = "dsos", value_name = "DSO[,DSO...]")]
    dsos: Option<String>,
    /// Only samples in these symbols, by name, or at these addresses (hexadecimal, as
    /// sampled); the others still count in the total. One name leaves out the Symbol
    /// column
    #[arg(short = 'S', long = "symbols", value_name = "SYMBOL[,SYMBOL...]")]
    symbols_filter: Option<String>,
    /// Only samples taken on these CPUs (0,2-3); the file must record the CPU
    #[arg(short = 'C', long = "cpu", value_name = "CPUS")]
    cpu: Option<String>,
    /// Only samples taken from START to STOP, in seconds (1269.5,1269.6); either may be
    /// left out
    #[arg(long = "time", value_name = "START,STOP")]
    time: Option<String>,
    /// Shares of the event's whole period (absolute, the default) or of what -c, --pid,
    /// --tid, -d, -S and -x leave (relative, which the header's counts follow)
    #[arg(long = "percentage", value_name = "relative|absolute")]
    percentage: Option<String>,
    /// A Samples column: the samples of each row's own
    #[arg(short = 'n', long = "show-nr-samples")]
    show_nr_samples: bool,
    /// A Period column: the period of each row's own
    #[arg(long = "show-total-period")]
    show_total_period: bool,
    /// Leave out rows under this share (percent); it also becomes the call graph's
    /// threshold, as in perf
    #[arg(long = "percent-limit", value_name = "PERCENT")]
    percent_limit: Option<String>,
    /// The rows alone, without the comment lines
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,
    /// Leave out samples and call chain entries without a symbol
    #[arg(short = 'U', long = "hide-unresolved")]
    hide_unresolved: bool,
    /// Show only the rows whose symbol's name holds this text (of the first event; the
    /// others still count in the shares unless --percentage relative). Needs `sym` among
    /// the sort keys
    #[arg(long = "symbol-filter", value_name = "TEXT")]
    symbol_filter: Option<String>,
    /// perf's spelling of --symbol-filter: a text after the options
    #[arg(value_name = "SYMBOL_FILTER")]
    symbol_filter_arg: Option<String>,
    /// Instead of the table: how many records of each type the file holds (with their
    /// share of all), and how many samples each event has
    #[arg(long = "stats")]
    stats: bool,
    /// Instead of the table: every record as perf dumps it (-D), its offset and size,
    /// its bytes in hex and what it says, with each sample's fields and the thread and
    /// file it was found in, then the counts of --stats
    #[arg(short = 'D', long = "dump-raw-trace", conflicts_with_all = ["stats", "tasks", "mmaps"])]
    dump_raw_trace: bool,
    /// Instead of the table: the threads the records name, each under the thread that
    /// forked it (pid, tid, parent's tid, comm)
    #[arg(long = "tasks")]
    tasks: bool,
    /// --tasks with each thread's process's mappings (addresses, protection, file
    /// offset, inode, file)
    #[arg(long = "mmaps")]
    mmaps: bool,
    /// With --stats, leave out record types and events without any (the default)
    #[arg(long = "skip-empty", overrides_with = "no_skip_empty")]
    skip_empty: bool,
    /// With --stats, list every record type and event, those without any too
    #[arg(long = "no-skip-empty")]
    no_skip_empty: bool,
    #[command(flatten)]
    header: HeaderArgs,
    #[command(flatten)]
    symbols: SymbolArgs,
}

/// perf's `--percent-limit` and `--percentage` values, checked.
fn parse_percent_limit(s: &str) -> Result<f32> {
    match s.trim().parse::<f32>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => anyhow::bail!(
            "--percent-limit '{s}': give a share in percent, a number such as 0.5 or 5"
        ),
    }
}

/// The report's filters from the options.
/// `-C LIST` needs the CPU of every sample: perf refuses a file that lacks it, as its
/// samples would all be taken for CPU 0.
fn require_sample_cpu(file: &PerfData, list: &str) -> Result<()> {
    use tracectl::perf::data::abi::sample;
    if file
        .attrs()
        .iter()
        .any(|a| a.sample_type & sample::CPU == 0)
    {
        anyhow::bail!(
            "-C {list}: {} does not record the CPU of its samples; leave out -C, or record \
             with the CPU (perf record -a, or --sample-cpu)",
            file.path().display()
        );
    }
    Ok(())
}

fn sample_filter(
    a: &ReportArgs,
    file: &PerfData,
) -> Result<tracectl::render::perf_report_filter::SampleFilter> {
    use tracectl::render::perf_report_filter::SampleFilter;
    let mut f = SampleFilter::default();
    if let Some(c) = &a.comms {
        f.set_comms(c).map_err(anyhow::Error::msg)?;
    }
    if let Some(d) = &a.dsos {
        f.set_dsos(d).map_err(anyhow::Error::msg)?;
    }
    if let Some(s) = &a.symbols_filter {
        f.set_symbols(s).map_err(anyhow::Error::msg)?;
    }
    if let Some(p) = &a.pid {
        f.pids = Some(SampleFilter::parse_ids("--pid", p).map_err(anyhow::Error::msg)?);
    }
    if let Some(t) = &a.tid {
        f.tids = Some(SampleFilter::parse_ids("--tid", t).map_err(anyhow::Error::msg)?);
    }
    if let Some(c) = &a.cpu {
        require_sample_cpu(file, c)?;
        let nr_cpus = file.nr_cpus()?.map_or(0, |(avail, _)| avail);
        f.set_cpus(c, nr_cpus).map_err(anyhow::Error::msg)?;
    }
    if let Some(t) = &a.time {
        f.set_time(t, file.sample_time()?)
            .map_err(anyhow::Error::msg)?;
    }
    f.hide_unresolved = a.hide_unresolved;
    Ok(f)
}

/// `perf report --stats`, `--tasks` and `--mmaps`: what the records say, after the
/// header block when asked for.
fn report_records(a: &ReportArgs) -> Result<i32> {
    use tracectl::render::perf_report_tasks::{write_dump, write_stats, write_tasks};
    let o = open(&a.input.input, &a.symbols)?;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if let Some(b) = a.header.block(&o.file)? {
        out.write_all(&b)?;
    }
    if a.dump_raw_trace {
        let shown = a.input.input.display().to_string();
        write_dump(&o.file, o.machine, o.catalog.as_ref(), &shown, &mut out)?;
    } else if a.stats {
        write_stats(&o.file, o.catalog.as_ref(), !a.no_skip_empty, &mut out)?;
    } else {
        write_tasks(&o.file, a.mmaps, &mut out)?;
    }
    out.flush()?;
    Ok(0)
}

/// Run `tracectl perf report`.
pub fn report(_ctx: &Context, a: ReportArgs) -> Result<i32> {
    if a.header.print_only(&a.input.input)? {
        return Ok(0);
    }
    if a.stats && (a.tasks || a.mmaps) {
        anyhow::bail!(
            "--tasks and --mmaps can't be used together with --stats: give --stats for the \
             counts of records and samples, or --tasks/--mmaps for the threads"
        );
    }
    if a.stats || a.tasks || a.mmaps || a.dump_raw_trace {
        return report_records(&a);
    }
    use tracectl::render::perf_callgraph::{CallGraph, ChainOrder, GraphMode};
    let mut graph = CallGraph::default();
    for g in &a.call_graph {
        graph.parse_onto(g).map_err(anyhow::Error::msg)?;
    }
    if a.inverted {
        graph.order = Some(ChainOrder::Caller);
    }
    use tracectl::render::perf_report::{parse_time_quantum, PerfReportOptions, SortKey};
    use tracectl::render::perf_report_fields::{parse_field_separator, ColumnOptions, Columns};
    let mut keys = vec![SortKey::Comm, SortKey::Dso, SortKey::Sym];
    let mut columns = ColumnOptions {
        sort: a.sort.as_deref(),
        fields: a.fields.as_deref(),
        default_sort: &[],
        children: false,
        show_nr_samples: a.show_nr_samples,
        show_total_period: a.show_total_period,
        parent: a.parent.is_some(),
    };
    // The lists are checked before the file is read.
    Columns::setup(&columns).map_err(anyhow::Error::msg)?;
    let field_separator = match &a.field_separator {
        Some(s) => parse_field_separator(s).map_err(anyhow::Error::msg)?,
        None => None,
    };
    let relative = match a.percentage.as_deref() {
        None | Some("absolute") => false,
        Some("relative") => true,
        Some(other) => anyhow::bail!(
            "--percentage '{other}': give relative (shares of what the filters leave) or \
             absolute (shares of the whole event)"
        ),
    };
    let percent_limit = match &a.percent_limit {
        Some(p) => parse_percent_limit(p)?,
        None => 0.0,
    };
    if a.percent_limit.is_some() {
        // perf takes the limit for the call graph's threshold too.
        graph.min_percent = f64::from(percent_limit);
    }
    let mut opts = PerfReportOptions {
        graph,
        exclude_other: a.exclude_other,
        time_quantum_ns: parse_time_quantum(&a.time_quantum).map_err(anyhow::Error::msg)?,
        relative,
        field_separator,
        max_stack: a.max_stack.unwrap_or_else(sysctl_max_stack),
        show_threads: a.threads,
        threads_raw: a.pretty.as_deref() == Some("raw"),
        group: if a.no_group {
            Some(false)
        } else if a.group {
            Some(true)
        } else {
            None
        },
        percent_limit,
        quiet: a.quiet,
        time_str: a.time.clone(),
        // perf takes a word left after the options for the filter, over the option.
        symbol_filter: a
            .symbol_filter_arg
            .clone()
            .or_else(|| a.symbol_filter.clone()),
        ..PerfReportOptions::default()
    };

    if let Some(p) = &a.parent {
        opts.parent = regex::Regex::new(p).with_context(|| {
            format!("-p/--parent '{p}' is no valid regex; give one such as '^sys_|^do_page_fault'")
        })?;
    }
    let o = open(&a.input.input, &a.symbols)?;
    opts.header_block = a.header.block(&o.file)?;
    opts.filter = sample_filter(&a, &o.file)?;
    let attrs = o.file.attrs();
    if a.sort.is_none()
        && !attrs.is_empty()
        && attrs
            .iter()
            .all(|at| at.type_ == tracectl::perf::data::abi::attr_type::TRACEPOINT)
    {
        // perf's default for a file of tracepoints alone is their text.
        keys = vec![SortKey::Trace];
    }
    if !a.call_graph.is_empty()
        && opts.graph.mode != GraphMode::None
        && !tracectl::render::perf_report::has_call_chains(&o.file)
    {
        // perf prints its error and no table.
        anyhow::bail!(
            "{}: -g asks for call graphs, but the samples have no call chains; record \
             with `perf record -g`, or leave out -g (or give -g none) for the table alone",
            a.input.input.display()
        );
    }
    opts.children = if a.no_children {
        Some(false)
    } else if a.children {
        Some(true)
    } else {
        None
    };
    // As perf: a parent regex of one's own sorts by it too, after the other keys.
    columns.default_sort = &keys;
    columns.children = tracectl::render::perf_report::accumulates(&o.file, opts.children);
    let columns = Columns::setup(&columns).map_err(anyhow::Error::msg)?;
    if opts.symbol_filter.is_some() && !columns.keys().contains(&SortKey::Sym) {
        anyhow::bail!(
            "--symbol-filter matches the rows' symbols: give sym among the sort keys \
             (-s, or -F), or leave out the filter"
        );
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let (rows, out_of_order) = tracectl::render::perf_report::write_report(
        &o.file,
        o.machine,
        o.catalog.as_ref(),
        &columns,
        &opts,
        &mut out,
    )?;
    out.flush()?;
    warn_out_of_order(out_of_order);
    if rows == 0 {
        // perf says so, and exits with 0.
        eprintln!(
            "Error:\nThe {} data has no samples!",
            a.input.input.display()
        );
    }
    Ok(0)
}
