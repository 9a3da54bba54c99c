//! The options trace-cmd keeps per buffer (per instance) in record, start and set: those
//! before any -B are the top level's, those after a -B that instance's, up to the next -B.

use clap::ArgMatches;

use super::record::{bind_modules, function_args, FunctionArg, TraceArgs};

/// The values of argument `id` given on the command line, with their positions.
pub fn given<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Vec<(usize, T)> {
    if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
        return Vec::new();
    }
    match (m.indices_of(id), m.get_many::<T>(id)) {
        (Some(idx), Some(vals)) => idx.zip(vals.cloned()).collect(),
        _ => Vec::new(),
    }
}

/// The positions of a counted flag's occurrences (its default value has an index that is
/// none).
pub fn given_flag(m: &ArgMatches, id: &str) -> Vec<usize> {
    if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
        return Vec::new();
    }
    m.indices_of(id).map(|i| i.collect()).unwrap_or_default()
}

/// The per-buffer options given for one buffer.
#[derive(Debug, Default, Clone)]
pub struct BufferOptions {
    /// -C, -b, -M, -O, -P, -c, -T, --max-graph-depth, --subbuf-size, and -l and -n bound
    /// to the --module before them ([`bind_modules`]); the command-wide fields are left at
    /// their defaults and -g is not here (see [`split`]).
    pub trace: TraceArgs,
    /// -p, as often as given (one per buffer is the caller's rule).
    pub tracer: Vec<String>,
    /// --buffer-percent (start and set only).
    pub buffer_percent: Vec<u64>,
    /// Every option given for this buffer (-g included), by flag, in command-line order.
    pub given: Vec<&'static str>,
}

impl BufferOptions {
    /// Whether any option but -g was given for this buffer.
    pub fn any_but_graph(&self) -> bool {
        self.given.iter().any(|f| *f != "-g")
    }
}

/// The options of one buffer: its own per-buffer ones (`own`), with the clock of the first
/// -C given anywhere (`first_clock`) when it has none, as trace-cmd does; the -g entries
/// `graph`; and the command-wide ones of `whole`, the global files and flags for the
/// `first` buffer only (written once).
pub fn buffer_trace_args(
    own: TraceArgs,
    whole: &TraceArgs,
    first_clock: &[String],
    graph: Vec<String>,
    first: bool,
) -> TraceArgs {
    let clock = match own.clock.is_empty() {
        true => first_clock.iter().take(1).cloned().collect(),
        false => own.clock.clone(),
    };
    TraceArgs {
        sleep: whole.sleep,
        ignore_missing: whole.ignore_missing,
        rt_priority: whole.rt_priority,
        cmdlines_size: whole.cmdlines_size.filter(|_| first),
        func_stack: whole.func_stack && first,
        disable_function_trace: whole.disable_function_trace,
        disable_all_function_trace: whole.disable_all_function_trace,
        clock,
        graph,
        module: Vec::new(),
        ..own
    }
}

/// The per-buffer options of `m` (a subcommand's matches), each for the buffer it follows:
/// `starts` holds where each buffer's options begin, the top level's (0) first, then the
/// position of each -B. `tracer` is the id of -p's argument. Also returned: every -g, in
/// order, with the --module in force in its buffer; trace-cmd 3.1.6 keeps one list of
/// them and writes it to the top level's set_graph_function only (set_funcs: "graph
/// tracing currently only works for top instance").
pub fn split(m: &ArgMatches, starts: &[usize], tracer: &str) -> (Vec<BufferOptions>, Vec<String>) {
    let n = starts.len().max(1);
    let mut out = vec![BufferOptions::default(); n];
    let group = |pos: usize| starts.iter().rposition(|s| *s <= pos).unwrap_or(0);
    let mut flags: Vec<Vec<(usize, &'static str)>> = vec![Vec::new(); n];
    for (pos, v) in given::<String>(m, tracer) {
        let g = group(pos);
        out[g].tracer.push(v);
        flags[g].push((pos, "-p"));
    }
    for (pos, v) in given::<u64>(m, "buffer_percent") {
        let g = group(pos);
        out[g].buffer_percent.push(v);
        flags[g].push((pos, "--buffer-percent"));
    }
    macro_rules! per_buffer {
        ($($id:ident: $ty:ty = $flag:literal),* $(,)?) => {$(
            for (pos, v) in given::<$ty>(m, stringify!($id)) {
                let g = group(pos);
                out[g].trace.$id.push(v);
                flags[g].push((pos, $flag));
            }
        )*};
    }
    per_buffer!(
        clock: String = "-C",
        buffer_size: u64 = "-b",
        cpumask: String = "-M",
        options: String = "-O",
        pids: u32 = "-P",
        max_graph_depth: u32 = "--max-graph-depth",
        subbuf_size: u64 = "--subbuf-size",
    );
    for pos in given_flag(m, "children") {
        let g = group(pos);
        out[g].trace.children += 1;
        flags[g].push((pos, "-c"));
    }
    for pos in given_flag(m, "stacktrace") {
        let g = group(pos);
        out[g].trace.stacktrace += 1;
        flags[g].push((pos, "-T"));
    }
    // Each buffer's --module, -l, -n and -g in order, bound as trace-cmd binds them.
    let mut functions: Vec<Vec<(usize, FunctionArg)>> = vec![Vec::new(); n];
    for (pos, arg) in function_args(m) {
        let g = group(pos);
        flags[g].push((pos, arg.flag()));
        functions[g].push((pos, arg));
    }
    let mut graph: Vec<(usize, String)> = Vec::new();
    for (g, args) in functions.into_iter().enumerate() {
        let positions: Vec<usize> = args
            .iter()
            .filter(|a| matches!(a.1, FunctionArg::Graph(_)))
            .map(|a| a.0)
            .collect();
        let lists = bind_modules(args.into_iter().map(|a| a.1));
        graph.extend(positions.into_iter().zip(lists.graph));
        out[g].trace.ftrace_filter = lists.filter;
        out[g].trace.ftrace_notrace = lists.notrace;
    }
    graph.sort_by_key(|g| g.0);
    for (b, mut f) in out.iter_mut().zip(flags) {
        f.sort_by_key(|f| f.0);
        b.given = f.into_iter().map(|f| f.1).collect();
    }
    (out, graph.into_iter().map(|g| g.1).collect())
}
