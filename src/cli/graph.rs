//! `tracectl graph`: function_graph of one command in one step.

use anyhow::{Context as _, Result};
use std::io::Write;
use tracectl::session::graph::{graph, GraphView};
use tracectl::tracefs::graph::{syscall_entry_symbol, GraphOptions, GraphTarget};
use tracectl::tracefs::parse_available_functions;

use super::common::Context;

/// Options of `tracectl graph`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  tracectl graph --syscall openat -- cat /etc/hostname\n  \
                        tracectl graph -g vfs_read --max-graph-depth 3 -- dd if=/dev/zero of=/dev/null count=1\n  \
                        tracectl graph --summary -g vfs_read -p 1234 --duration 5"
)]
pub struct Args {
    /// Function to graph from (set_graph_function; repeatable, globs allowed)
    #[arg(short = 'g', value_name = "FUNC")]
    pub functions: Vec<String>,
    /// System call to graph, by name (openat -> __x64_sys_openat on x86-64)
    #[arg(long, value_name = "NAME")]
    pub syscall: Vec<String>,
    /// Function whose subtree is left out (set_graph_notrace; repeatable)
    #[arg(short = 'n', value_name = "FUNC")]
    pub notrace: Vec<String>,
    /// Depth limit (max_graph_depth)
    #[arg(long = "max-graph-depth", value_name = "N")]
    pub max_depth: Option<u32>,
    /// Trace option to set for the run, e.g. funcgraph-proc, nofuncgraph-irqs (repeatable)
    #[arg(short = 'O', value_name = "OPTION")]
    pub options: Vec<String>,
    /// Also graph the command's children (options/function-fork)
    #[arg(short = 'c', long = "fork")]
    pub fork: bool,
    /// Instance to use (instances/NAME; default: the top level, since older kernels only
    /// offer function_graph there)
    #[arg(short = 'B', value_name = "INSTANCE")]
    pub instance: Option<String>,
    /// Write the graph to FILE instead of standard output (which the command shares)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Instead of the graph: per function, the calls, total, self, average and longest
    /// time, sorted by self time
    #[arg(long, conflicts_with_all = ["folded", "json"])]
    pub summary: bool,
    /// Instead of the graph: `comm;outer;...;func SELF_NS` lines (stacks weighted by self
    /// time) for `tracectl flamegraph`
    #[arg(long, conflicts_with = "json")]
    pub folded: bool,
    /// Instead of the graph: one JSON object per outermost call (comm, pid, func, depth,
    /// calltime_ns, duration_ns, self_ns, children)
    #[arg(long)]
    pub json: bool,
    /// Graph this running process (its threads) instead of a command
    #[arg(
        short = 'p',
        long = "pid",
        value_name = "PID",
        conflicts_with = "command"
    )]
    pub pid: Option<u32>,
    /// With -p: for this many seconds (default: until Ctrl-C or until it ends)
    #[arg(long, value_name = "SECONDS", requires = "pid")]
    pub duration: Option<f64>,
    /// Show return values (options/funcgraph-retval, kernels 6.5 and later)
    #[arg(long)]
    pub retval: bool,
    /// Name the function on every closing brace (options/funcgraph-tail)
    #[arg(long)]
    pub tail: bool,
    /// The command to graph; it follows the options, with or without `--`, and everything
    /// after its name is its own
    #[arg(
        value_name = "COMMAND",
        required_unless_present = "pid",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

/// Run `tracectl graph`.
pub fn run(ctx: &Context, a: Args) -> Result<i32> {
    let t = ctx.tracefs()?;
    t.require_live("graph")?;
    let inst = t.instance(a.instance.as_deref())?;
    let mut functions = a.functions;
    if !a.syscall.is_empty() {
        let avail = t
            .read_string("available_filter_functions")
            .ok()
            .map(|s| parse_available_functions(&s));
        for s in &a.syscall {
            functions.push(syscall_entry_symbol(s, avail.as_deref()));
        }
    }
    let mut options = a.options;
    if a.retval {
        options.push("funcgraph-retval".into());
    }
    if a.tail {
        options.push("funcgraph-tail".into());
    }
    let opts = GraphOptions {
        functions,
        notrace: a.notrace,
        max_depth: a.max_depth,
        options,
        follow_forks: a.fork,
    };
    let target = match a.pid {
        Some(pid) => {
            let secs = a.duration.unwrap_or(f64::from(u32::MAX));
            if !(secs.is_finite() && secs > 0.0) {
                anyhow::bail!("--duration {secs}: give a positive number of seconds");
            }
            GraphTarget::Pid {
                pid,
                duration: std::time::Duration::from_secs_f64(secs.min(f64::from(u32::MAX))),
            }
        }
        None => GraphTarget::Command(a.command),
    };
    let view = if a.summary {
        GraphView::Summary
    } else if a.folded {
        GraphView::Folded
    } else if a.json {
        GraphView::Json
    } else {
        GraphView::Text
    };
    let output = a.output;
    let stop = tracectl::tracefs::stop_on_signals();
    let result = graph(&inst, &target, &opts, view, stop).context("function_graph run")?;
    for w in &result.warnings {
        eprintln!("tracectl: {w}");
    }
    match &output {
        Some(path) => std::fs::write(path, &result.output)
            .with_context(|| format!("writing {}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&result.output)?;
            out.flush()?;
        }
    }
    Ok(result.status.map_or(0, |s| s.code().unwrap_or(1)))
}
