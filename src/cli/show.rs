//! `tracectl show`: the trace, trace_pipe, the snapshot or one control file.

use std::io::{BufRead, BufReader, Write};

use anyhow::{Context as _, Result};

use super::common::Context;

/// Options of `tracectl show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read trace_pipe (consuming; waits for new events until interrupted)
    #[arg(short = 'p', long = "pipe", group = "what")]
    pub pipe: bool,
    /// Show the snapshot buffer
    #[arg(short = 's', long = "snapshot", group = "what")]
    pub snapshot: bool,
    /// Only this CPU (per_cpu/cpuN/...)
    #[arg(short = 'c', long = "cpu", value_name = "CPU")]
    pub cpu: Option<u32>,
    /// Instance (instances/NAME)
    #[arg(short = 'B', value_name = "INSTANCE")]
    pub instance: Option<String>,
    /// Print the path of the file shown before its contents
    #[arg(short = 'f', long = "show-path")]
    pub show_path: bool,
    /// Print trace lines as JSON (one object per line), control files as JSON values
    #[arg(long)]
    pub json: bool,
    /// Show tracing_on
    #[arg(long = "tracing_on", group = "what")]
    pub tracing_on: bool,
    /// Show current_tracer
    #[arg(long = "current_tracer", group = "what")]
    pub current_tracer: bool,
    /// Show buffer_size_kb
    #[arg(long = "buffer_size", group = "what")]
    pub buffer_size: bool,
    /// Show buffer_total_size_kb
    #[arg(long = "buffer_total_size", group = "what")]
    pub buffer_total_size: bool,
    /// Show buffer_subbuf_size_kb
    #[arg(long = "buffer_subbuf_size", group = "what")]
    pub buffer_subbuf_size: bool,
    /// Show buffer_percent
    #[arg(long = "buffer_percent", group = "what")]
    pub buffer_percent: bool,
    /// Show set_ftrace_filter
    #[arg(long = "ftrace_filter", group = "what")]
    pub ftrace_filter: bool,
    /// Show set_ftrace_notrace
    #[arg(long = "ftrace_notrace", group = "what")]
    pub ftrace_notrace: bool,
    /// Show set_ftrace_pid
    #[arg(long = "ftrace_pid", group = "what")]
    pub ftrace_pid: bool,
    /// Show set_graph_function
    #[arg(long = "graph_function", group = "what")]
    pub graph_function: bool,
    /// Show set_graph_notrace
    #[arg(long = "graph_notrace", group = "what")]
    pub graph_notrace: bool,
    /// Show tracing_cpumask
    #[arg(long = "cpumask", group = "what")]
    pub cpumask: bool,
    /// Show trace_clock
    #[arg(long = "clock", group = "what")]
    pub clock: bool,
    /// Show set_event_pid
    #[arg(long = "event_pid", group = "what")]
    pub event_pid: bool,
    /// Show error_log
    #[arg(long = "error_log", group = "what")]
    pub error_log: bool,
    /// Show the trigger file of SYSTEM:EVENT
    #[arg(long = "trigger", value_name = "EVENT", group = "what")]
    pub trigger: Option<String>,
    /// Show the filter file of SYSTEM:EVENT
    #[arg(long = "filter", value_name = "EVENT", group = "what")]
    pub filter: Option<String>,
    /// Show the hist file of SYSTEM:EVENT
    #[arg(long = "hist", value_name = "EVENT", group = "what")]
    pub hist: Option<String>,
}

/// The file a shortcut flag names, relative to the instance.
fn shortcut(a: &Args, t: &tracectl::tracefs::Tracefs) -> Result<Option<String>> {
    let flags: [(bool, &str); 14] = [
        (a.tracing_on, "tracing_on"),
        (a.current_tracer, "current_tracer"),
        (a.buffer_size, "buffer_size_kb"),
        (a.buffer_total_size, "buffer_total_size_kb"),
        (a.buffer_subbuf_size, "buffer_subbuf_size_kb"),
        (a.buffer_percent, "buffer_percent"),
        (a.ftrace_filter, "set_ftrace_filter"),
        (a.ftrace_notrace, "set_ftrace_notrace"),
        (a.ftrace_pid, "set_ftrace_pid"),
        (a.graph_function, "set_graph_function"),
        (a.graph_notrace, "set_graph_notrace"),
        (a.cpumask, "tracing_cpumask"),
        (a.clock, "trace_clock"),
        (a.event_pid, "set_event_pid"),
    ];
    if let Some((_, f)) = flags.iter().find(|(on, _)| *on) {
        return Ok(Some(f.to_string()));
    }
    if a.error_log {
        return Ok(Some("error_log".into()));
    }
    for (ev, file) in [
        (&a.trigger, "trigger"),
        (&a.filter, "filter"),
        (&a.hist, "hist"),
    ] {
        if let Some(ev) = ev {
            let avail = t.available_events()?;
            let e = match tracectl::tracefs::resolve_event(ev, &avail)? {
                tracectl::tracefs::EventTarget::Events(v) if v.len() == 1 => {
                    v.into_iter().next().unwrap_or_else(|| unreachable!())
                }
                _ => anyhow::bail!("--{file} needs one event as SYSTEM:EVENT, not {ev:?}"),
            };
            return Ok(Some(format!("events/{}/{}/{file}", e.system, e.name)));
        }
    }
    Ok(None)
}

/// Run `tracectl show`.
pub fn run(ctx: &Context, a: Args) -> Result<i32> {
    let t = ctx.tracefs()?;
    let inst = t.instance(a.instance.as_deref())?;
    if let Some(file) = shortcut(&a, &t)? {
        let file = match a.cpu {
            Some(c) if file == "buffer_size_kb" => format!("per_cpu/cpu{c}/buffer_size_kb"),
            _ => file,
        };
        if a.show_path {
            eprintln!("{}", inst.path(&file).display());
        }
        let text = inst.read_string(&file)?;
        if a.json {
            super::common::print_json(&serde_json::json!({
                "file": file,
                "value": tracectl::render::json::text_value(&text)
            }))?;
        } else {
            std::io::stdout().lock().write_all(text.as_bytes())?;
        }
        return Ok(0);
    }
    let file = match (a.pipe, a.snapshot, a.cpu) {
        (true, _, Some(c)) => format!("per_cpu/cpu{c}/trace_pipe"),
        (true, _, None) => "trace_pipe".into(),
        (_, true, Some(c)) => format!("per_cpu/cpu{c}/snapshot"),
        (_, true, None) => "snapshot".into(),
        (_, _, Some(c)) => format!("per_cpu/cpu{c}/trace"),
        _ => "trace".into(),
    };
    if a.show_path {
        eprintln!("{}", inst.path(&file).display());
    }
    let mut typer = a.json.then(|| typer(&t));
    if a.pipe {
        return stream_pipe(&inst.path(&file), typer.as_mut());
    }
    let text = inst.read_string(&file)?;
    print_trace_text(&text, typer.as_mut())?;
    Ok(0)
}

/// Typed JSON lines through the tree's event formats (raw bodies when it has none).
pub fn typer(t: &tracectl::tracefs::Tracefs) -> tracectl::text::LineTyper {
    tracectl::text::LineTyper::new(tracectl::event::Registry::from_source(t).ok())
}

/// Say on stderr how many lines kept their raw body.
fn report_raw(typer: &tracectl::text::LineTyper) {
    let n: u64 = typer.raw.values().sum();
    if n > 0 {
        let events: Vec<String> = typer
            .raw
            .iter()
            .map(|(e, c)| format!("{e} ({c})"))
            .collect();
        eprintln!(
            "tracectl: {n} line(s) kept their raw body (no invertible print fmt): {}",
            events.join(", ")
        );
    }
}

/// Print trace text as it is, or as JSON lines typed by `typer` (header lines dropped).
pub fn print_trace_text(text: &str, typer: Option<&mut tracectl::text::LineTyper>) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let Some(typer) = typer else {
        out.write_all(text.as_bytes())?;
        return Ok(out.flush()?);
    };
    for line in text.lines() {
        write_json_line(&mut out, line, typer)?;
    }
    out.flush()?;
    report_raw(typer);
    Ok(())
}

fn write_json_line(
    out: &mut impl Write,
    line: &str,
    typer: &mut tracectl::text::LineTyper,
) -> Result<()> {
    let v = match tracectl::text::parse_line(line) {
        Some(l) => typer.to_json(&l),
        None if line.trim_start().starts_with('#') || line.trim().is_empty() => return Ok(()),
        None => serde_json::json!({ "text": line }),
    };
    // Encode first: serde_json wraps write errors, which would hide a closed pipe.
    let mut buf = serde_json::to_vec(&v)?;
    buf.push(b'\n');
    out.write_all(&buf)?;
    Ok(())
}

/// Follow trace_pipe line by line; each line is flushed so `| head` and `| grep` see it
/// at once. A fixture tree's trace_pipe is a plain file and ends. Comms and markers may
/// hold any bytes: a line is read as bytes and shown with invalid UTF-8 replaced.
fn stream_pipe(
    path: &std::path::Path,
    mut typer: Option<&mut tracectl::text::LineTyper>,
) -> Result<i32> {
    tracectl::tracefs::check_regular(path)?;
    let f =
        std::fs::File::open(path).map_err(|e| tracectl::tracefs::TracefsError::from_io(path, e))?;
    let mut r = BufReader::new(f);
    let mut out = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            if let Some(t) = typer {
                report_raw(t);
            }
            return Ok(0);
        }
        let text = String::from_utf8_lossy(&line);
        if let Some(t) = typer.as_deref_mut() {
            write_json_line(&mut out, text.trim_end_matches('\n'), t)?;
        } else {
            out.write_all(text.as_bytes())?;
        }
        out.flush()?;
    }
}
