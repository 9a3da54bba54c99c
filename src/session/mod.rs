//! The loops that run a command from start to end: sources read, records filtered and
//! merged, sinks written.
//!
//! A session ties the layers below it together; the command line only parses arguments
//! into its options and prints what it returns.

pub mod analysis;
pub mod graph;
pub mod hist;
pub mod live;
pub mod mem;
pub mod profile_hooks;
pub mod profile_stacks;
pub mod report;
pub mod report_files;
pub mod report_profile;
pub mod report_wakeup;
pub mod split;
pub mod stream;

pub use live::{LiveError, LiveEvent, LiveTrace};

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::event::{print_fmt_identifiers, substitute_enums, FormatSource, Registry};
use crate::tracefs::capture::{CaptureError, CaptureOptions, CaptureReport};
use crate::tracefs::{resolve_event, EventName, EventTarget, Tracefs};

/// Give `reg` the formats of the events matching `specs` (all when empty) with the enum
/// constants of their `print fmt` resolved (see [`enum_resolved_formats`]).
pub fn resolve_enum_constants(t: &Tracefs, reg: &mut Registry, specs: &[String]) {
    let events: Vec<EventName> = reg.events().map(|(s, n, _)| EventName::new(s, n)).collect();
    for (system, text) in enum_resolved_formats(t, &events, specs) {
        // A format that still does not parse keeps the kernel's text and its fallback.
        let _ = reg.add_format(&system, &text);
    }
}

/// The formats of `events` whose `print fmt` names enum constants the kernel left
/// unresolved, with their values filled in from the tree's `host/enums` (or, live, from
/// /sys/kernel/btf/vmlinux), as the kernel does for the enums it knows: `(system, format
/// text)` pairs for the caller's registry. A tree without `host/enums` keeps the
/// constants as the kernel printed them (a tree's metadata comes only from the tree).
///
/// Only the events matching `specs` are looked at (`-e` specs as in [`resolve_event`];
/// empty: every event), which spares a live root reading thousands of format files.
pub fn enum_resolved_formats(
    t: &Tracefs,
    events: &[EventName],
    specs: &[String],
) -> Vec<(String, String)> {
    // Specs that match nothing select nothing here: their error belongs to the caller.
    let wanted: Vec<EventTarget> = specs
        .iter()
        .filter_map(|spec| resolve_event(spec, events).ok())
        .collect();
    // Only formats whose print fmt names a bare identifier can need a value; the BTF
    // (megabytes) is read only when there is one.
    let candidates: Vec<(String, String)> = events
        .iter()
        .filter(|e| specs.is_empty() || wanted.iter().any(|t| t.covers(&e.system, &e.name)))
        .filter_map(|e| {
            let text = t.format(&e.system, &e.name).ok()?;
            (!print_fmt_identifiers(&text).is_empty()).then(|| (e.system.clone(), text))
        })
        .collect();
    let mut out = Vec::new();
    if candidates.is_empty() {
        return out;
    }
    // A tree's values come from its host/enums only (a tree without one leaves the
    // constants as the kernel printed them); a live root's from the running kernel.
    let Some(enums) = t.host().enum_values() else {
        return out;
    };
    if enums.is_empty() {
        return out;
    }
    for (system, text) in candidates {
        if let Some(fixed) = substitute_enums(&text, &enums) {
            out.push((system, fixed));
        }
    }
    out
}

/// Copy `src` into the fixture tree `dest` ([`crate::tracefs::capture::capture`]), then
/// write the tree's `host/enums`: the value of every enum constant a copied `print fmt`
/// names, from the kernel's BTF. A tree cannot be given them later (it never reads the
/// host's), so a capture records them; when the values are unknown the file is listed
/// as skipped with the reason.
pub fn capture(
    src: &Tracefs,
    dest: &Path,
    opts: &CaptureOptions,
    stop: &AtomicBool,
) -> Result<CaptureReport, CaptureError> {
    let mut report = crate::tracefs::capture::capture(src, dest, opts, stop)?;
    match write_enums(dest, || src.host().enum_values()) {
        Ok(true) => report.files += 1,
        Ok(false) => {}
        Err(why) => report.skipped.push(("host/enums".into(), why)),
    }
    Ok(report)
}

/// Write `host/enums` into the tree `dest` for the constants its formats name, with the
/// values `known` gives (read only when a format names one). Returns whether the file was
/// written.
fn write_enums(
    dest: &Path,
    known: impl FnOnce() -> Option<HashMap<String, i64>>,
) -> Result<bool, String> {
    let tree = Tracefs::at(dest);
    let mut wanted = BTreeSet::new();
    for (system, name) in tree.events().unwrap_or_default() {
        if let Ok(text) = tree.format(&system, &name) {
            wanted.extend(print_fmt_identifiers(&text).into_iter().map(String::from));
        }
    }
    if wanted.is_empty() {
        return Ok(false);
    }
    let known =
        known().ok_or("the kernel's enum values are unknown (no /sys/kernel/btf/vmlinux)")?;
    let mut lines: Vec<String> = known
        .into_iter()
        .filter(|(n, _)| wanted.contains(n))
        .map(|(n, v)| format!("{n} {v}\n"))
        .collect();
    lines.sort();
    lines.dedup();
    if lines.is_empty() {
        return Ok(false);
    }
    let dir = dest.join("host");
    let path = dir.join("enums");
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, lines.concat()))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_enums_hold_the_constants_the_tree_formats_name() {
        let dir = tempfile::tempdir().unwrap();
        let ev = dir.path().join("events/writeback/wb");
        std::fs::create_dir_all(&ev).unwrap();
        std::fs::write(
            ev.join("format"),
            "name: wb\nID: 1\nformat:\n\tfield:unsigned long state;\toffset:8;\tsize:8;\tsigned:0;\n\n\
             print fmt: \"%s\", __print_flags(REC->state, \"|\", {I_DIRTY_SYNC, \"S\"})\n",
        )
        .unwrap();
        let known: HashMap<String, i64> =
            [("I_DIRTY_SYNC".to_string(), 16), ("OTHER".to_string(), 2)].into();
        assert_eq!(write_enums(dir.path(), || Some(known)), Ok(true));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("host/enums")).unwrap(),
            "I_DIRTY_SYNC 16\n"
        );
        let err = write_enums(dir.path(), || None).unwrap_err();
        assert!(err.contains("btf"), "{err}");
    }
}
