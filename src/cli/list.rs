//! `tracectl list`: events, tracers, clocks, options, functions, instances.

use std::io::Write;

use anyhow::Result;
use serde_json::json;

use super::common::{print_json, Context};

/// Options of `tracectl list`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// List events, optionally only those matching REGEX as trace-cmd matches it: a POSIX
    /// basic regex, case-insensitive, searched in the system or the event name, or
    /// `SYSREGEX:EVENTREGEX` for both (`sched_sw.*`, `^sched:`); a glob such as `sched:*`
    /// is taken as one when the regex matches nothing
    #[arg(short = 'e', long = "events", value_name = "REGEX", num_args = 0..=1, default_missing_value = "")]
    pub events: Option<String>,
    /// With -e: print each event's format
    #[arg(short = 'F', long = "full")]
    pub full: bool,
    /// List the tracers (available_tracers)
    #[arg(short = 't', long = "tracers")]
    pub tracers: bool,
    /// List the trace clocks, the current one in brackets
    #[arg(short = 'C', long = "clocks")]
    pub clocks: bool,
    /// List the trace options and their state
    #[arg(short = 'o', long = "options")]
    pub options: bool,
    /// List the functions that can be filtered, optionally only those matching REGEX (a
    /// POSIX basic regex, case-insensitive, searched as trace-cmd does: `^vfs_re`); a glob
    /// such as `vfs_*` is taken as one when the regex matches nothing
    #[arg(short = 'f', long = "functions", value_name = "REGEX", num_args = 0..=1, default_missing_value = "")]
    pub functions: Option<String>,
    /// List the instances (buffers under instances/)
    #[arg(short = 'B', long = "buffers")]
    pub buffers: bool,
    /// Show clocks and options of this instance instead of the top level
    #[arg(long = "instance", value_name = "NAME")]
    pub instance: Option<String>,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

/// Run `tracectl list`.
pub fn run(ctx: &Context, a: Args) -> Result<i32> {
    let t = ctx.tracefs()?;
    let inst = t.instance(a.instance.as_deref())?;
    let nothing = a.events.is_none()
        && !a.tracers
        && !a.clocks
        && !a.options
        && a.functions.is_none()
        && !a.buffers;
    let show_events = a.events.is_some() || nothing;
    let mut json = serde_json::Map::new();
    let mut out = std::io::stdout().lock();
    let mut code = 0;

    if show_events {
        let pat = a.events.as_deref().filter(|p| !p.is_empty());
        let evs = t.list_events(pat)?;
        if a.json {
            let v: Vec<serde_json::Value> = evs
                .iter()
                .map(|e| {
                    let mut o = json!({"system": e.system, "name": e.name});
                    if a.full {
                        o["format"] = t
                            .event_format(e)
                            .map(serde_json::Value::from)
                            .unwrap_or(serde_json::Value::Null);
                    }
                    o
                })
                .collect();
            json.insert("events".into(), v.into());
        } else {
            if nothing {
                writeln!(out, "events:")?;
            }
            for e in &evs {
                if a.full {
                    writeln!(out, "system: {}", e.system)?;
                    match t.event_format(e) {
                        Ok(f) => write!(out, "{f}")?,
                        Err(err) => writeln!(out, "  ({err})")?,
                    }
                    writeln!(out)?;
                } else {
                    writeln!(out, "{e}")?;
                }
            }
        }
    }
    if a.tracers || nothing {
        let v = inst.available_tracers()?;
        if a.json {
            json.insert("tracers".into(), v.into());
        } else {
            if nothing {
                writeln!(out, "\ntracers:")?;
            }
            writeln!(out, "{}", v.join(" "))?;
        }
    }
    if a.clocks {
        let c = inst.trace_clock()?;
        if a.json {
            json.insert(
                "clocks".into(),
                json!({"available": c.available, "current": c.current}),
            );
        } else {
            let words: Vec<String> = c
                .available
                .iter()
                .map(|k| {
                    if *k == c.current {
                        format!("[{k}]")
                    } else {
                        k.clone()
                    }
                })
                .collect();
            writeln!(out, "{}", words.join(" "))?;
        }
    }
    if a.options || nothing {
        let opts = inst.options()?;
        if a.json {
            let m: serde_json::Map<String, serde_json::Value> =
                opts.iter().map(|(n, v)| (n.clone(), (*v).into())).collect();
            json.insert("options".into(), m.into());
        } else {
            if nothing {
                writeln!(out, "\noptions:")?;
            }
            for (n, v) in &opts {
                writeln!(out, "{}{n}", if *v { "" } else { "no" })?;
            }
        }
    }
    if let Some(pat) = &a.functions {
        match t.available_functions() {
            Ok(funcs) => {
                let v = matching_functions(&funcs, pat)?;
                if a.json {
                    json.insert(
                        "functions".into(),
                        v.into_iter().cloned().collect::<Vec<_>>().into(),
                    );
                } else {
                    for f in v {
                        writeln!(out, "{f}")?;
                    }
                }
            }
            Err(e) if e.is_unavailable() => {
                super::common::warn_unavailable(&e);
                code = 1;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if a.buffers {
        let v = t.instances()?;
        if a.json {
            json.insert("instances".into(), v.into());
        } else {
            for n in v {
                writeln!(out, "{n}")?;
            }
        }
    }
    drop(out);
    if a.json {
        print_json(&json.into())?;
    }
    Ok(code)
}

/// The functions matching a `list -f` pattern: a basic regex searched in each name, as
/// trace-cmd does; when it matches nothing, the pattern as a glob.
fn matching_functions<'a>(funcs: &'a [String], pat: &str) -> Result<Vec<&'a String>> {
    use tracectl::tracefs::suggest::{glob_match, is_glob};
    if pat.is_empty() {
        return Ok(funcs.iter().collect());
    }
    let re = tracectl::bre::basic_regex(pat)
        .map_err(|e| anyhow::anyhow!("-f {pat:?} is not a valid regular expression: {e}"))?;
    let v: Vec<&String> = funcs.iter().filter(|f| re.is_match(f)).collect();
    if v.is_empty() && is_glob(pat) {
        return Ok(funcs.iter().filter(|f| glob_match(pat, f)).collect());
    }
    Ok(v)
}
