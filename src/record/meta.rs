//! The metadata a trace.dat needs, read from a tracefs root.

use std::path::Path;

use crate::dat::Metadata;
use crate::tracefs::{Tracefs, TracefsError};

fn text(t: &Tracefs, rel: &str) -> Result<String, TracefsError> {
    Ok(String::from_utf8_lossy(&t.read(rel)?).into_owned())
}

/// Every `(system, event)` under `events/` (ftrace's own excluded: they are stored apart).
pub fn all_events(t: &Tracefs) -> Vec<(String, String)> {
    let mut v = Vec::new();
    let Ok(systems) = std::fs::read_dir(t.path("events")) else {
        return v;
    };
    let mut systems: Vec<_> = systems
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    systems.sort();
    for s in systems {
        if s == "ftrace" {
            continue;
        }
        let Ok(evs) = std::fs::read_dir(t.path(format!("events/{s}"))) else {
            continue;
        };
        let mut evs: Vec<_> = evs
            .flatten()
            .filter(|e| e.path().join("format").exists())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        evs.sort();
        v.extend(evs.into_iter().map(|e| (s.clone(), e)));
    }
    v
}

/// The `(system, event)`s enabled in an instance, from its `set_event` file.
pub fn enabled_events(
    t: &Tracefs,
    instance_rel: &Path,
) -> Result<Vec<(String, String)>, TracefsError> {
    let s = text(t, &instance_rel.join("set_event").to_string_lossy())?;
    Ok(s.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect())
}

/// Metadata for `events` (with every ftrace format, as trace-cmd stores them).
pub fn metadata(t: &Tracefs, events: &[(String, String)]) -> Result<Metadata, TracefsError> {
    let mut m = formats(t, events)?;
    // A tree's own copy, or /proc/kallsyms with real addresses.
    m.kallsyms = t.host().kallsyms_with_addresses().unwrap_or_default();
    Ok(m)
}

/// [`metadata`] without kallsyms (perf.data's tracing data leaves them out: perf reads
/// the kernel's symbols itself), so `kptr_restrict` is not touched.
pub fn formats(t: &Tracefs, events: &[(String, String)]) -> Result<Metadata, TracefsError> {
    let mut m = Metadata {
        header_page: text(t, "events/header_page")?,
        header_event: text(t, "events/header_event")?,
        ..Metadata::default()
    };
    if let Ok(rd) = std::fs::read_dir(t.path("events/ftrace")) {
        let mut names: Vec<_> = rd
            .flatten()
            .filter(|e| e.path().join("format").exists())
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for n in names {
            let rel = format!("events/ftrace/{}/format", n.to_string_lossy());
            // Some ftrace formats are unreadable on locked-down systems; they are optional.
            if let Ok(f) = text(t, &rel) {
                m.ftrace_formats.push(f);
            }
        }
    }
    for (s, e) in events {
        if s == "ftrace" {
            continue;
        }
        m.event_formats
            .push((s.clone(), text(t, &format!("events/{s}/{e}/format"))?));
    }
    m.printk_formats = text(t, "printk_formats").unwrap_or_default();
    m.cmdlines = text(t, "saved_cmdlines").unwrap_or_default();
    Ok(m)
}
