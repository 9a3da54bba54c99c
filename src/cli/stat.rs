//! `tracectl stat`: the whole current state of a buffer.

use std::io::Write;

use anyhow::Result;
use serde_json::Value;
use tracectl::render::json::text_value;
use tracectl::tracefs::{default_option, FunctionFilter, Instance, Tracefs};

use super::common::Context;

/// Options of `tracectl stat`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Instance (instances/NAME); default: the top level, then every instance
    #[arg(short = 'B', value_name = "INSTANCE")]
    pub instance: Option<String>,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

/// Run `tracectl stat`.
pub fn run(ctx: &Context, a: Args) -> Result<i32> {
    let t = ctx.tracefs()?;
    let mut states = Vec::new();
    match &a.instance {
        Some(n) => states.push(state(&t, &t.instance(Some(n))?)),
        None => {
            states.push(state(&t, &t.top()));
            for n in t.instances().unwrap_or_default() {
                states.push(state(&t, &t.instance(Some(&n))?));
            }
        }
    }
    if a.json {
        let v = if a.instance.is_some() {
            states.remove(0)
        } else {
            Value::Array(states)
        };
        super::common::print_json(&v)?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    for (i, s) in states.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        print_text(&mut out, s)?;
    }
    Ok(0)
}

/// Everything `stat` reports about one buffer, as JSON (files the kernel lacks or
/// refuses are left out).
fn state(t: &Tracefs, inst: &Instance) -> Value {
    let mut m = serde_json::Map::new();
    m.insert(
        "instance".into(),
        inst.name().map(Value::from).unwrap_or(Value::Null),
    );
    if let Ok(v) = inst.current_tracer() {
        m.insert("tracer".into(), v.into());
    }
    if let Ok(v) = inst.tracing_on() {
        m.insert("tracing_on".into(), v.into());
    }
    let enabled = inst.enabled_events().unwrap_or_default();
    m.insert(
        "events".into(),
        enabled
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .into(),
    );
    // Filters and triggers can sit on disabled events too: look at every event.
    let mut filters = serde_json::Map::new();
    let mut triggers = serde_json::Map::new();
    for e in t.available_events().unwrap_or_default() {
        if let Ok(f) = inst.filter(&e) {
            if f != "none" {
                filters.insert(e.to_string(), f.into());
            }
        }
        if let Ok(tr) = inst.trigger_lines(&e) {
            if !tr.is_empty() {
                triggers.insert(e.to_string(), tr.into());
            }
        }
    }
    m.insert("filters".into(), filters.into());
    m.insert("triggers".into(), triggers.into());
    let mut pids = serde_json::Map::new();
    for (k, r) in [
        ("set_event_pid", inst.event_pids()),
        ("set_event_notrace_pid", inst.event_notrace_pids()),
        ("set_ftrace_pid", inst.ftrace_pids()),
        ("set_ftrace_notrace_pid", inst.ftrace_notrace_pids()),
    ] {
        if let Ok(v) = r {
            pids.insert(k.into(), v.into());
        }
    }
    m.insert("pid_filters".into(), pids.into());
    let mut ff = serde_json::Map::new();
    for w in [
        FunctionFilter::Filter,
        FunctionFilter::Notrace,
        FunctionFilter::GraphFunction,
        FunctionFilter::GraphNotrace,
    ] {
        if let Ok(v) = inst.function_filter(w) {
            ff.insert(w.file().into(), v.into());
        }
    }
    m.insert("function_filters".into(), ff.into());
    if let Ok(c) = inst.trace_clock() {
        m.insert("clock".into(), c.current.into());
    }
    // Numbers as numbers; the kernel writes `X` when per-CPU sizes differ.
    if let Ok(v) = inst.read_value("buffer_size_kb") {
        m.insert("buffer_size_kb".into(), text_value(&v));
    }
    if let Ok(v) = inst.read_value("buffer_total_size_kb") {
        m.insert("buffer_total_size_kb".into(), text_value(&v));
    }
    if let Ok(v) = inst.subbuf_size_kb() {
        m.insert("buffer_subbuf_size_kb".into(), v.into());
    }
    if let Ok(v) = inst.buffer_percent() {
        m.insert("buffer_percent".into(), v.into());
    }
    if let Ok(v) = inst.cpumask() {
        m.insert("tracing_cpumask".into(), v.into());
    }
    let mut changed = serde_json::Map::new();
    for (n, on) in inst.options().unwrap_or_default() {
        if default_option(&n, inst.is_top()).is_some_and(|d| d != on) {
            changed.insert(n, on.into());
        }
    }
    m.insert("options_changed".into(), changed.into());
    if inst.is_top() {
        m.insert("instances".into(), t.instances().unwrap_or_default().into());
        if let Ok(d) = t.dynamic_events() {
            m.insert(
                "dynamic_events".into(),
                d.iter().map(|e| e.to_string()).collect::<Vec<_>>().into(),
            );
        }
    }
    let mut stats = serde_json::Map::new();
    for c in inst.cpus().unwrap_or_default() {
        if let Ok(s) = inst.cpu_stats(c) {
            let o: serde_json::Map<String, Value> = s
                .values
                .into_iter()
                .map(|(k, v)| (k, stat_value(&v)))
                .collect();
            stats.insert(format!("cpu{c}"), o.into());
        }
    }
    m.insert("cpu_stats".into(), stats.into());
    m.into()
}

/// A per_cpu `stats` value: integers as numbers (`315151 [ns]` too: the unit is the
/// kernel's, nanoseconds), timestamps (`5.123456`) as their text.
fn stat_value(v: &str) -> Value {
    let v = v.trim();
    let n = v.strip_suffix("[ns]").map(str::trim_end).unwrap_or(v);
    match text_value(n) {
        Value::String(_) => Value::from(v),
        n => n,
    }
}

fn print_text(out: &mut impl Write, s: &Value) -> Result<()> {
    let name = s["instance"]
        .as_str()
        .map(|n| format!("instance {n}"))
        .unwrap_or_else(|| "top level".into());
    writeln!(out, "{name}:")?;
    let str_of = |v: &Value| {
        v.as_str()
            .map(String::from)
            .unwrap_or_else(|| v.to_string())
    };
    for (key, label) in [
        ("tracer", "Tracer"),
        ("tracing_on", "Tracing on"),
        ("clock", "Clock"),
    ] {
        if let Some(v) = s.get(key) {
            writeln!(out, "  {label}: {}", str_of(v))?;
        }
    }
    let list = |v: &Value| {
        v.as_array()
            .map(|a| a.iter().map(str_of).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let events = list(&s["events"]);
    writeln!(
        out,
        "  Events: {}",
        if events.is_empty() {
            "none".into()
        } else {
            events.join(" ")
        }
    )?;
    for (key, label) in [("filters", "Filters"), ("triggers", "Triggers")] {
        if let Some(m) = s[key].as_object() {
            if !m.is_empty() {
                writeln!(out, "  {label}:")?;
                for (e, v) in m {
                    let text = if v.is_array() {
                        list(v).join("; ")
                    } else {
                        str_of(v)
                    };
                    writeln!(out, "    {e}: {text}")?;
                }
            }
        }
    }
    for section in ["pid_filters", "function_filters"] {
        if let Some(m) = s[section].as_object() {
            for (f, v) in m {
                let l = list(v);
                if !l.is_empty() {
                    writeln!(out, "  {f}: {}", l.join(" "))?;
                }
            }
        }
    }
    for (key, label) in [
        ("buffer_size_kb", "Buffer size (KiB per CPU)"),
        ("buffer_total_size_kb", "Buffer total (KiB)"),
        ("buffer_subbuf_size_kb", "Sub-buffer size (KiB)"),
        ("buffer_percent", "Buffer percent"),
        ("tracing_cpumask", "CPU mask"),
    ] {
        if let Some(v) = s.get(key) {
            writeln!(out, "  {label}: {}", str_of(v))?;
        }
    }
    if let Some(m) = s["options_changed"].as_object() {
        if !m.is_empty() {
            let words: Vec<String> = m
                .iter()
                .map(|(n, v)| {
                    if v.as_bool() == Some(true) {
                        n.clone()
                    } else {
                        format!("no{n}")
                    }
                })
                .collect();
            writeln!(out, "  Options (not default): {}", words.join(" "))?;
        }
    }
    if let Some(v) = s.get("instances") {
        let l = list(v);
        if !l.is_empty() {
            writeln!(out, "  Instances: {}", l.join(" "))?;
        }
    }
    if let Some(v) = s.get("dynamic_events") {
        for d in list(v) {
            writeln!(out, "  Dynamic event: {d}")?;
        }
    }
    if let Some(m) = s["cpu_stats"].as_object() {
        for (cpu, st) in m {
            let g = |k: &str| st.get(k).map(str_of).unwrap_or_default();
            writeln!(
                out,
                "  {cpu}: entries {} overrun {} dropped {}",
                g("entries"),
                g("overrun"),
                g("dropped events")
            )?;
        }
    }
    Ok(())
}
