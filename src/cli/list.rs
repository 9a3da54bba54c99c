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
    /// With -e: print each event's format without its print fmt, as `trace-cmd list -F`
    #[arg(short = 'F', long = "fields")]
    pub fields: bool,
    /// With -e: print each event's whole format, print fmt included (implies -F)
    #[arg(long = "full")]
    pub full: bool,
    /// With -e: print each event's filter
    #[arg(short = 'l', long = "filters")]
    pub filters: bool,
    /// With -e: print each event's triggers
    #[arg(short = 'R', long = "triggers")]
    pub triggers: bool,
    /// List the event systems
    #[arg(short = 's', long = "systems")]
    pub systems: bool,
    /// The same as -t (trace-cmd keeps it for old scripts)
    #[arg(short = 'p', hide = true)]
    pub tracers_legacy: bool,
    /// List the plugins `report` uses (tracectl's are built in)
    #[arg(short = 'P', long = "plugins")]
    pub plugins: bool,
    /// List the plugin options `report -O` takes
    #[arg(short = 'O', long = "plugin-options")]
    pub plugin_options: bool,
    /// List the compression algorithms `record`/`extract` can write (trace.dat version 7)
    #[arg(short = 'c', long = "compressions")]
    pub compressions: bool,
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
    let mut a = a;
    a.tracers |= a.tracers_legacy;
    a.fields |= a.full;
    if a.events.is_none() && (a.fields || a.filters || a.triggers) {
        anyhow::bail!(
            "-F, --full, -l and -R show details of the events -e selects: add -e REGEX (or -e alone for all)"
        );
    }
    let mut out = std::io::stdout().lock();
    // The lists that need no tracefs.
    if a.plugins || a.plugin_options || a.compressions {
        let mut json = serde_json::Map::new();
        if a.plugins {
            if a.json {
                json.insert("plugins".into(), PLUGINS.to_vec().into());
            } else {
                writeln!(out, "tracectl's report plugins are built in:")?;
                for p in PLUGINS {
                    writeln!(out, "  {p}")?;
                }
            }
        }
        if a.plugin_options {
            if a.json {
                let v: Vec<serde_json::Value> = PLUGIN_OPTIONS
                    .iter()
                    .map(|o| {
                        json!({"plugin": o.plugin, "option": o.name,
                            "description": o.description, "set": o.default})
                    })
                    .collect();
                json.insert("plugin_options".into(), v.into());
            } else {
                write_plugin_options(&mut out)?;
            }
        }
        if a.compressions {
            if a.json {
                json.insert("compressions".into(), json!(["zstd", "zlib"]));
            } else {
                writeln!(out, "Supported compression algorithms:\n\tzstd\n\tzlib")?;
            }
        }
        let only_these = a.events.is_none()
            && !a.systems
            && !a.tracers
            && !a.clocks
            && !a.options
            && a.functions.is_none()
            && !a.buffers;
        if only_these {
            drop(out);
            if a.json {
                print_json(&json.into())?;
            }
            return Ok(0);
        }
        if a.json {
            anyhow::bail!("--json with -P, -O or -c and other lists: ask for them separately");
        }
    }
    let t = ctx.tracefs()?;
    let inst = t.instance(a.instance.as_deref())?;
    let nothing = a.events.is_none()
        && !a.systems
        && !a.tracers
        && !a.clocks
        && !a.options
        && a.functions.is_none()
        && !a.buffers;
    let show_events = a.events.is_some() || nothing;
    let mut json = serde_json::Map::new();
    let mut code = 0;
    if a.systems {
        let v = t.event_systems()?;
        if a.json {
            json.insert("systems".into(), v.into());
        } else {
            for s in &v {
                writeln!(out, "{s}")?;
            }
            writeln!(out)?;
        }
    }

    if show_events {
        let pat = a.events.as_deref().filter(|p| !p.is_empty());
        let evs = t.list_events(pat)?;
        if a.json {
            let v: Vec<serde_json::Value> = evs
                .iter()
                .map(|e| {
                    let mut o = json!({"system": e.system, "name": e.name});
                    if a.fields {
                        o["format"] = t
                            .event_format(e)
                            .map(|f| {
                                serde_json::Value::from(if a.full {
                                    f
                                } else {
                                    without_print_fmt(&f).to_string()
                                })
                            })
                            .unwrap_or(serde_json::Value::Null);
                    }
                    if a.filters {
                        o["filter"] = t
                            .event_file(e, "filter")
                            .map(|f| f.trim_end().to_string().into())
                            .unwrap_or(serde_json::Value::Null);
                    }
                    if a.triggers {
                        o["triggers"] = t
                            .event_file(e, "trigger")
                            .map(|f| f.to_string().into())
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
                // trace-cmd's layouts: the format after `system:`, cut before the print
                // fmt without --full; the filter and trigger files after the name, each
                // followed by a blank line.
                if a.fields {
                    writeln!(out, "system: {}", e.system)?;
                    let f = t.event_format(e)?;
                    write!(out, "{}", if a.full { &f } else { without_print_fmt(&f) })?;
                } else if !a.filters && !a.triggers {
                    writeln!(out, "{e}")?;
                }
                if a.filters {
                    writeln!(out, "{e}\n{}", t.event_file(e, "filter")?)?;
                }
                if a.triggers && !a.filters {
                    // trace-cmd shows the filters alone when asked for both.
                    writeln!(out, "{e}\n{}", t.event_file(e, "trigger")?)?;
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

/// The plugins `report` applies, built into tracectl (trace-cmd loads them as files).
const PLUGINS: &[&str] = &[
    "function (ftrace:function, func_repeats)",
    "function_graph (ftrace:funcgraph_entry/exit)",
    "sched_switch (sched:sched_switch, sched_wakeup)",
    "kmem (kmem:kmalloc, kfree, ...: call sites)",
    "hrtimer (timer:hrtimer_*)",
    "jbd2, kvm, mac80211, cfg80211, scsi, xen, futex, tlb (as libtraceevent's)",
];

use tracectl::render::plugins::PLUGIN_OPTIONS;

/// Write the plugin options as `trace-cmd list -O` and `trace-cmd options` do: one
/// block per option, `------------` between options of a plugin, `============` between
/// plugins, nothing after the last.
pub(super) fn write_plugin_options(out: &mut dyn Write) -> std::io::Result<()> {
    for (i, o) in PLUGIN_OPTIONS.iter().enumerate() {
        let sep = match PLUGIN_OPTIONS.get(i + 1) {
            None => "",
            Some(next) if next.plugin != o.plugin => "============\n",
            Some(_) => "------------\n",
        };
        write!(
            out,
            "  plugin:\t{}\n  option:\t{}\n    desc:\t{}\n     set:\t{}\n{sep}",
            o.plugin,
            o.name,
            o.description,
            u8::from(o.default)
        )?;
    }
    Ok(())
}

/// A `format` text without its `print fmt:` line (what `trace-cmd list -F` shows).
fn without_print_fmt(f: &str) -> &str {
    match f.find("\nprint fmt:") {
        Some(i) => &f[..i + 1],
        None => f,
    }
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
