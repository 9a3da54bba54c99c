//! The options trace-cmd keeps per buffer (per instance) in record, start and set: those
//! before any -B are the top level's, those after a -B that instance's, up to the next -B.

use anyhow::Result;
use clap::ArgMatches;

use super::record::{bind_modules, function_args, FunctionArg, TraceArgs};

/// Where the options after a -B go.
#[derive(Debug, Clone, PartialEq)]
pub enum Group {
    /// The options before any -B.
    Top,
    /// `-B NAME`: that instance's.
    Instance(String),
    /// `-v -B NAME`: an instance to remove, which takes no options.
    Removed(String),
}

/// The buffers of `m` (a subcommand's matches) with where each one's options begin: the
/// top level at 0 first, then one per -B. As in trace-cmd, a -B after a -v that no -e has
/// used yet names an instance to remove (trace-cmd removes it before anything else). The
/// same instance given twice (trace-cmd would record it twice, and then fail to remove
/// it), a -v left unused and an instance both removed and configured are refused.
pub fn groups(m: &ArgMatches) -> Result<Vec<(usize, Group)>> {
    let mut marks: Vec<(usize, char, String)> = Vec::new();
    for (id, tag) in [("events", 'e'), ("instance", 'B')] {
        marks.extend(given::<String>(m, id).into_iter().map(|(i, v)| (i, tag, v)));
    }
    marks.extend(
        given_flag(m, "invert")
            .into_iter()
            .map(|i| (i, 'v', String::new())),
    );
    marks.sort_by_key(|x| x.0);
    let mut out = vec![(0, Group::Top)];
    // A -v that no -e has used yet: the next -B is one to remove.
    let mut dangling = false;
    for (pos, tag, v) in marks {
        match tag {
            'v' => dangling = true,
            'e' => dangling = false,
            _ if dangling => {
                out.push((pos, Group::Removed(v)));
                dangling = false;
            }
            _ => {
                if out.iter().any(|g| g.1 == Group::Instance(v.clone())) {
                    anyhow::bail!(
                        "-B {v} is given twice: give the options of instance {v} after one -B; nothing was changed"
                    );
                }
                out.push((pos, Group::Instance(v)));
            }
        }
    }
    if dangling {
        anyhow::bail!("-v must come before the -e EVENT it disables or the -B INSTANCE it removes");
    }
    for (_, g) in &out {
        if let Group::Removed(n) = g {
            if out.iter().any(|g| g.1 == Group::Instance(n.clone())) {
                anyhow::bail!(
                    "-v -B {n}: the instance to remove is also one to configure; nothing was changed"
                );
            }
        }
    }
    Ok(out)
}

/// The values of argument `id` given on the command line, with their positions.
/// An id the subcommand does not have (record has no --buffer-percent) gives nothing.
pub fn given<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Vec<(usize, T)> {
    if !on_command_line(m, id) {
        return Vec::new();
    }
    match (m.indices_of(id), m.get_many::<T>(id)) {
        (Some(idx), Some(vals)) => idx.zip(vals.cloned()).collect(),
        _ => Vec::new(),
    }
}

/// Whether `id` is one of the subcommand's arguments and was given on the command line
/// (asking clap about an id it does not know is a bug it reports by panicking in debug
/// builds).
fn on_command_line(m: &ArgMatches, id: &str) -> bool {
    matches!(m.try_contains_id(id), Ok(true))
        && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
}

/// The positions of a counted flag's occurrences (its default value has an index that is
/// none).
pub fn given_flag(m: &ArgMatches, id: &str) -> Vec<usize> {
    if !on_command_line(m, id) {
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
    /// A --module with no -l, -n nor -g after it in a buffer that is not the last one
    /// given: trace-cmd 3.1.6 adds `*:mod:MODULE` for the last buffer only (after parsing,
    /// to `ctx->instance`), so here it filters nothing either, and the caller warns.
    pub dropped_module: Option<String>,
}

impl BufferOptions {
    /// Whether any option but -g was given for this buffer.
    pub fn any_but_graph(&self) -> bool {
        self.given.iter().any(|f| *f != "-g")
    }
}

/// Which of the buffers a command configures one is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Place {
    /// The first one configured: the global files (saved_cmdlines_size) are written once,
    /// with it.
    pub first: bool,
    /// The top level (the top buffer of a recording): --func-stack is its only, as
    /// trace-cmd's set_funcs writes func_stack_trace for the top instance only.
    pub top: bool,
    /// The last one given: -d and -D are its only, as trace-cmd calls set_ftrace for
    /// `ctx->instance` (the buffer being parsed when the options end).
    pub last: bool,
}

/// The options of one buffer: its own per-buffer ones (`own`), with the clock of the first
/// -C given anywhere (`first_clock`) when it has none, as trace-cmd does; the -g entries
/// `graph`; and the command-wide ones of `whole` that belong to its `place`.
pub fn buffer_trace_args(
    own: TraceArgs,
    whole: &TraceArgs,
    first_clock: &[String],
    graph: Vec<String>,
    place: Place,
) -> TraceArgs {
    let first = place.first;
    let clock = match own.clock.is_empty() {
        true => first_clock.iter().take(1).cloned().collect(),
        false => own.clock.clone(),
    };
    TraceArgs {
        sleep: whole.sleep,
        ignore_missing: whole.ignore_missing,
        rt_priority: whole.rt_priority,
        cmdlines_size: whole.cmdlines_size.filter(|_| first),
        func_stack: whole.func_stack && place.top,
        disable_function_trace: whole.disable_function_trace && place.last,
        disable_all_function_trace: whole.disable_all_function_trace && place.last,
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
        let mut lists = bind_modules(args.into_iter().map(|a| a.1));
        graph.extend(positions.into_iter().zip(lists.graph));
        if let Some(m) = lists.lone_module.take() {
            match g + 1 == n {
                true => lists.filter.push(format!("*:mod:{m}")),
                false => out[g].dropped_module = Some(m),
            }
        }
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
