//! What `trace-cmd profile` records, as a [`RecordConfig`]: the recording half of
//! `profile` (the other half is `report --profile` of the file).
//!
//! trace-cmd adds to the user's events: `sched:sched_switch` and `sched:sched_wakeup`
//! with a `stacktrace` trigger (or, on kernels without event triggers, the `stacktrace`
//! option for every event), then `exceptions:page_fault_user`, the `irq` handler and
//! softirq events, `sched:sched_process_exec` and `raw_syscalls`; each only when the
//! kernel has it, and an event already asked for is not added twice. With no tracer
//! chosen it runs `function_graph` at depth 1 where the kernel has `max_graph_depth`;
//! a `--max-graph-depth` given is written after that 1, so the user's depth wins.

use super::{EventSpec, RecordConfig};
use crate::tracefs::Tracefs;

/// The events `trace-cmd profile` stacks a trace under.
pub const PROFILE_STACK_EVENTS: &[&str] = &["sched:sched_switch", "sched:sched_wakeup"];

/// The other events `trace-cmd profile` records.
pub const PROFILE_EVENTS: &[&str] = &[
    "exceptions:page_fault_user",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "irq:softirq_raise",
    "sched:sched_process_exec",
    "raw_syscalls",
];

/// `base` (the user's options) with what `trace-cmd profile` adds, for the kernel behind
/// `t`. `graph`: whether to add the function_graph tracer when no tracer is chosen and
/// the kernel has `max_graph_depth` (false where function tracing is refused), at depth
/// 1 unless `base` gives one.
pub fn profile_config(t: &Tracefs, base: RecordConfig, graph: bool) -> RecordConfig {
    let mut cfg = base;
    if cfg.plugin.is_none() && graph && t.exists("max_graph_depth") {
        cfg.plugin = Some("function_graph".into());
        cfg.max_graph_depth = cfg.max_graph_depth.or(Some(1));
    }
    let triggers = t.exists("events/sched/sched_switch/trigger");
    if !triggers && !cfg.options.iter().any(|o| o == "stacktrace") {
        cfg.options.push("stacktrace".into());
    }
    for (list, stack) in [(PROFILE_STACK_EVENTS, true), (PROFILE_EVENTS, false)] {
        for &name in list {
            let dir = format!("events/{}", name.replacen(':', "/", 1));
            if !t.exists(&dir) {
                continue;
            }
            let short = name.split_once(':').map_or(name, |(_, e)| e);
            let i = match cfg
                .events
                .iter()
                .position(|e| !e.invert && (e.name == name || e.name == short))
            {
                Some(i) => i,
                None => {
                    cfg.events.push(EventSpec {
                        name: name.to_string(),
                        ..EventSpec::default()
                    });
                    cfg.events.len() - 1
                }
            };
            let e = &mut cfg.events[i];
            if stack && triggers && !e.triggers.iter().any(|t| t.contains("stacktrace")) {
                e.triggers.push("stacktrace".into());
            }
        }
    }
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Tracefs {
        Tracefs::at(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tracefs-fixtures/linux-6.18-all"
        ))
    }

    #[test]
    fn adds_trace_cmds_events_with_stack_triggers_once() {
        let base = RecordConfig {
            events: vec![EventSpec {
                name: "sched_switch".into(),
                ..EventSpec::default()
            }],
            ..RecordConfig::default()
        };
        let cfg = profile_config(&tree(), base, false);
        let names: Vec<&str> = cfg.events.iter().map(|e| e.name.as_str()).collect();
        // The user's sched_switch is kept (not added again) and gets the trigger.
        assert_eq!(
            names.iter().filter(|n| n.contains("sched_switch")).count(),
            1
        );
        assert_eq!(cfg.events[0].triggers, ["stacktrace"]);
        let wakeup = cfg
            .events
            .iter()
            .find(|e| e.name == "sched:sched_wakeup")
            .unwrap();
        assert_eq!(wakeup.triggers, ["stacktrace"]);
        for n in ["irq:irq_handler_entry", "irq:softirq_raise", "raw_syscalls"] {
            let e = cfg.events.iter().find(|e| e.name == n).unwrap();
            assert!(e.triggers.is_empty(), "{n}");
        }
        assert!(names.contains(&"exceptions:page_fault_user"));
        assert!(cfg.plugin.is_none() && cfg.options.is_empty());
    }

    #[test]
    fn function_graph_at_depth_one_only_when_asked_and_available() {
        let cfg = profile_config(&tree(), RecordConfig::default(), true);
        let has = tree().exists("max_graph_depth");
        assert_eq!(cfg.plugin.is_some(), has);
        assert_eq!(cfg.max_graph_depth, has.then_some(1));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("max_graph_depth"), "0\n").unwrap();
        let cfg = profile_config(&Tracefs::at(dir.path()), RecordConfig::default(), true);
        assert_eq!(cfg.plugin.as_deref(), Some("function_graph"));
        assert_eq!(cfg.max_graph_depth, Some(1));
        // As trace-cmd, which writes the user's --max-graph-depth after its own 1.
        let deeper = RecordConfig {
            max_graph_depth: Some(3),
            ..RecordConfig::default()
        };
        let cfg3 = profile_config(&Tracefs::at(dir.path()), deeper, true);
        assert_eq!(cfg3.plugin.as_deref(), Some("function_graph"));
        assert_eq!(cfg3.max_graph_depth, Some(3));
        // No events/ at all: none added, and no trigger files, so the stacktrace option.
        assert_eq!(cfg.options, ["stacktrace"]);
        assert!(cfg.events.is_empty());
        let mine = RecordConfig {
            plugin: Some("nop".into()),
            ..RecordConfig::default()
        };
        assert_eq!(
            profile_config(&tree(), mine, true).plugin.as_deref(),
            Some("nop")
        );
    }
}
