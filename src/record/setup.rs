//! The state of one trace buffer as `record`, `start` and `set` configure it: clock,
//! sizes, CPU mask, options, function filters, pid filters, tracer, events with their
//! filters and triggers. Every change goes through a [`Ledger`], which `record` restores
//! at its end and `start`/`set` forget once everything is written (or restore when a write
//! fails, so a failed command leaves the buffer as it was).

use std::path::Path;

use super::{refused, RecordConfig, RecordError};
use crate::tracefs::{AppendMode, EventTarget, FunctionFilter, Instance, Ledger, TracefsError};

/// What [`apply`] changed outside the ledgers and what did not stop it.
#[derive(Debug, Default)]
pub struct Applied {
    /// /proc/sys/kernel/ftrace_enabled as it was before `-d`/`-D` cleared it (not a
    /// tracefs file, so no ledger holds it).
    pub ftrace_enabled: Option<String>,
    /// Problems that did not stop the configuration.
    pub warnings: Vec<String>,
}

/// The `-l`, `-n` and `-g` lists of `cfg` with their files and option names (the
/// entries name their modules themselves, `PATTERN:mod:MODULE`), for buffer `inst` (or the
/// top level standing in for a buffer still to be made).
///
/// As trace-cmd 3.1.6 does for its top instance (set_funcs), the top buffer's `-n` goes to
/// set_graph_notrace when its tracer is function_graph, and to set_ftrace_notrace when
/// the buffer has no set_graph_notrace; an instance's `-n` always goes to
/// set_ftrace_notrace.
pub fn function_filters(
    cfg: &RecordConfig,
    inst: &Instance,
) -> Vec<(FunctionFilter, &'static str, Vec<String>)> {
    let notrace = match cfg.instance.is_none()
        && cfg.plugin.as_deref() == Some("function_graph")
        && inst.exists(FunctionFilter::GraphNotrace.file())
    {
        true => FunctionFilter::GraphNotrace,
        false => FunctionFilter::Notrace,
    };
    [
        (FunctionFilter::Filter, "-l", cfg.ftrace_filter.clone()),
        (notrace, "-n", cfg.ftrace_notrace.clone()),
        (
            FunctionFilter::GraphFunction,
            "-g",
            cfg.graph_functions.clone(),
        ),
    ]
    .into_iter()
    .filter(|(_, _, l)| !l.is_empty())
    .collect()
}

/// Whether `cfg` asks for a function tracer (`function`, `function_graph`).
pub fn function_tracer(cfg: &RecordConfig) -> bool {
    cfg.plugin
        .as_deref()
        .is_some_and(|p| p.starts_with("function"))
}

/// Configure `inst` as `cfg` says, the events `targets` (one per `cfg.events`, `None` for
/// one `-i` skipped) included, saving each file in `ledger` before writing it; global
/// files (saved_cmdlines_size, a tracer's own options) go to `global`.
///
/// Values are expected to be checked already; a file the kernel refuses is an error
/// naming the option that needs it.
pub fn apply(
    inst: &Instance,
    cfg: &RecordConfig,
    targets: &[Option<EventTarget>],
    ledger: &mut Ledger,
    global: &mut Ledger,
) -> Result<Applied, RecordError> {
    let mut applied = Applied::default();
    if let Some(kb) = cfg.subbuf_size_kb {
        ledger.save(inst, "buffer_subbuf_size_kb")?;
        inst.set_subbuf_size_kb(kb)?;
    }
    if let Some(n) = cfg.cmdlines_size {
        // Global, so always restored, also when the instance is private.
        global.set(&inst.tracefs().top(), "saved_cmdlines_size", &n.to_string())?;
    }
    if let Some(d) = cfg.max_graph_depth {
        let refused = || RecordError::Refused {
            what: "--max-graph-depth".into(),
            file: inst.path("max_graph_depth"),
        };
        match ledger
            .save(inst, "max_graph_depth")
            .and_then(|()| inst.set_max_graph_depth(d))
        {
            Err(
                TracefsError::PermissionDenied { .. }
                | TracefsError::NotFound { .. }
                | TracefsError::NotSupported { .. },
            ) => return Err(refused()),
            r => r?,
        }
    }
    if let Some(c) = &cfg.clock {
        ledger.save(inst, "trace_clock")?;
        inst.set_trace_clock(c)?;
    }
    if let Some(kb) = cfg.buffer_size_kb {
        ledger.save(inst, "buffer_size_kb")?;
        inst.set_buffer_size(kb)?;
    }
    if let Some(p) = cfg.buffer_percent {
        ledger.save(inst, "buffer_percent")?;
        inst.set_buffer_percent(p)?;
    }
    if let Some(m) = &cfg.cpumask {
        ledger.save(inst, "tracing_cpumask")?;
        inst.set_cpumask(m)?;
    }
    for o in &cfg.options {
        ledger.apply_option(inst, o)?;
    }
    if cfg.stacktrace {
        ledger.apply_option(inst, "stacktrace")?;
    }
    if cfg.disable_function_trace > 0 {
        disable_function_trace(inst, cfg.disable_function_trace > 1, ledger, &mut applied)?;
    }
    for (which, flag, list) in function_filters(cfg, inst) {
        let what = format!("{flag} ({})", which.file());
        let f: Vec<&str> = list.iter().map(String::as_str).collect();
        ledger
            .save(inst, which.file())
            .and_then(|()| inst.set_function_filter(which, &f, AppendMode::Truncate))
            .map_err(refused(&what, inst, which.file()))?;
    }
    let function = function_tracer(cfg);
    if !cfg.pids.is_empty() {
        ledger.save(inst, "set_event_pid")?;
        inst.set_event_pids(&cfg.pids, AppendMode::Truncate)?;
        if cfg.follow_children {
            ledger.apply_option(inst, "event-fork")?;
            // trace-cmd sets function-fork too wherever the kernel has it, so that a
            // function tracer set later follows the forks as well.
            if inst.exists(Path::new("options/function-fork")) {
                ledger.apply_option(inst, "function-fork")?;
            }
        }
        if function {
            ledger
                .save(inst, "set_ftrace_pid")
                .and_then(|()| inst.set_ftrace_pids(&cfg.pids, AppendMode::Truncate))
                .map_err(refused("-P with a function tracer", inst, "set_ftrace_pid"))?;
        }
    }
    if let Some(p) = &cfg.plugin {
        ledger
            .save(inst, "current_tracer")
            .and_then(|()| inst.set_tracer(p))
            .map_err(refused(&format!("-p {p}"), inst, "current_tracer"))?;
        // A tracer's own option exists while it is the current tracer. Its flag is the
        // tracer's, shared by every instance (a private one's removal does not clear
        // it), so it is always saved and put back, like a global file.
        if cfg.func_stack {
            global
                .save(inst, "options/func_stack_trace")
                .and_then(|()| inst.set_option("func_stack_trace", true))
                .map_err(refused("--func-stack", inst, "options/func_stack_trace"))?;
        }
    }
    for (ev, target) in cfg.events.iter().zip(targets) {
        let Some(target) = target else { continue };
        for dir in target.dirs() {
            if !ev.filters.is_empty() {
                ledger.set(inst, dir.join("filter"), &joined_filter(&ev.filters))?;
            }
            for (n, tr) in ev.triggers.iter().enumerate() {
                // Like trace-cmd (and `echo TRIGGER > trigger`), the first trigger opens
                // the file with O_TRUNC; the kernel adds it. Further ones append, since
                // O_TRUNC also drops hist triggers.
                let mode = if n == 0 {
                    AppendMode::Truncate
                } else {
                    AppendMode::Append
                };
                ledger.add_trigger(inst, &dir, tr, mode)?;
            }
            ledger.save(inst, dir.join("enable"))?;
        }
    }
    // Filters and triggers before enabling, so the first events already obey them; the
    // events a -v carves out go last, after the systems they belong to.
    for invert in [false, true] {
        for (ev, target) in cfg.events.iter().zip(targets) {
            match target {
                Some(target) if ev.invert == invert => {
                    inst.set_target_enabled(target, !invert)?;
                }
                _ => {}
            }
        }
    }
    Ok(applied)
}

/// The filters of one `-e`, each in parentheses and joined with `&&`, as trace-cmd writes
/// them (`-f A -f B` is `(A)&&(B)`).
pub fn joined_filter(filters: &[String]) -> String {
    filters
        .iter()
        .map(|f| format!("({f})"))
        .collect::<Vec<_>>()
        .join("&&")
}

/// `-d`: clear options/function-trace, or where the kernel has none,
/// /proc/sys/kernel/ftrace_enabled; `-D` (`all`): clear both.
fn disable_function_trace(
    inst: &Instance,
    all: bool,
    ledger: &mut Ledger,
    applied: &mut Applied,
) -> Result<(), RecordError> {
    let has_option = inst.exists(Path::new("options/function-trace"));
    if has_option {
        ledger.apply_option(inst, "nofunction-trace")?;
    }
    if all || !has_option {
        let host = inst.tracefs().host();
        if let Some(old) = host.ftrace_enabled() {
            if old != "0" {
                match host.set_ftrace_enabled("0") {
                    Ok(()) => applied.ftrace_enabled = Some(old),
                    // A kernel that refuses it refuses function tracing too.
                    Err(e @ TracefsError::PermissionDenied { .. }) => applied
                        .warnings
                        .push(format!("{e}; function tracing stays as the kernel has it")),
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
    Ok(())
}
