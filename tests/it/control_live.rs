//! Live tests against this machine's tracefs, each in its own instance. They skip (and
//! say why) without root or tracefs, and a guard removes the instance on every exit path.

use crate::support::skips;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tracectl::tracefs::{
    AppendMode, DynamicEvent, EnableState, EventName, Instance, ProbeKind, Tracefs, TracefsError,
    Trigger, TriggerAction,
};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

fn live() -> Option<Tracefs> {
    if !nix::unistd::geteuid().is_root() {
        skips::skip("live tracefs tests need root");
        return None;
    }
    match Tracefs::discover() {
        Ok(t) if t.exists("instances") => Some(t),
        Ok(_) => {
            skips::skip("this tracefs has no instances/");
            None
        }
        Err(e) => {
            skips::skip(e);
            None
        }
    }
}

/// A private instance, removed (events off first) when dropped.
struct Guard {
    t: Tracefs,
    name: String,
}

impl Guard {
    fn new(t: &Tracefs, tag: &str) -> Guard {
        let name = format!("tracectl-test-{tag}-{}", std::process::id());
        t.create_instance(&name).unwrap();
        Guard { t: t.clone(), name }
    }

    fn inst(&self) -> Instance {
        self.t.instance(Some(&self.name)).unwrap()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(i) = self.t.instance(Some(&self.name)) {
            let _ = i.disable_all_events();
            let _ = i.reset();
        }
        if let Err(e) = self.t.remove_instance(&self.name) {
            eprintln!("could not remove instance {}: {e}", self.name);
        }
    }
}

/// Some scheduling and interrupt activity.
fn workload() {
    for _ in 0..5 {
        let _ = Command::new("true").status();
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Read trace_pipe without blocking until `want` all appear or time runs out.
fn pipe_until(inst: &Instance, want: &[&str], timeout: Duration) -> String {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(inst.path("trace_pipe"))
        .unwrap();
    let mut text = String::new();
    let start = Instant::now();
    let mut buf = vec![0u8; 1 << 16];
    while start.elapsed() < timeout && !want.iter().all(|w| text.contains(w)) {
        match f.read(&mut buf) {
            Ok(n) if n > 0 => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            _ => {
                workload();
            }
        }
    }
    text
}

/// The control files a reset must bring back, with their contents.
fn state(inst: &Instance) -> Vec<(String, String)> {
    let mut files: Vec<String> = [
        "tracing_on",
        "current_tracer",
        "trace_clock",
        "buffer_size_kb",
        "buffer_subbuf_size_kb",
        "buffer_percent",
        "tracing_cpumask",
        "set_event",
        "set_event_pid",
        "set_event_notrace_pid",
        "trace_options",
        "events/enable",
        "events/sched/enable",
        "events/irq/enable",
        "events/sched/filter",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for e in [
        "sched/sched_switch",
        "sched/sched_waking",
        "irq/irq_handler_entry",
        "irq/softirq_entry",
    ] {
        for f in ["enable", "filter", "trigger"] {
            files.push(format!("events/{e}/{f}"));
        }
    }
    files
        .into_iter()
        .map(|f| {
            (
                f.clone(),
                inst.read_string(&f).unwrap_or_else(|e| format!("<{e}>")),
            )
        })
        .collect()
}

#[test]
fn library_enables_sched_and_irq_and_sees_them_in_trace_pipe() {
    let Some(t) = live() else { return };
    let g = Guard::new(&t, "lib");
    let i = g.inst();
    i.set_events_enabled("sched:sched_switch", true).unwrap();
    i.set_events_enabled("irq", true).unwrap();
    assert_eq!(
        i.event_state(&EventName::new("sched", "sched_switch"))
            .unwrap(),
        EnableState::Enabled
    );
    assert_eq!(i.enable_state("events/sched").unwrap(), EnableState::Mixed);
    assert_eq!(i.enable_state("events/irq").unwrap(), EnableState::Enabled);
    let text = pipe_until(&i, &["sched_switch:", "_entry: "], Duration::from_secs(5));
    assert!(
        text.contains("sched_switch: prev_comm="),
        "no sched_switch in trace_pipe"
    );
    assert!(
        text.contains("irq_handler_entry:") || text.contains("softirq_entry:"),
        "no irq events in trace_pipe"
    );
    let parsed = text.lines().filter_map(tracectl::text::parse_line).count();
    assert_eq!(
        parsed,
        text.lines().filter(|l| !l.trim().is_empty()).count(),
        "every trace_pipe line parses"
    );
    i.set_events_enabled("all", false).unwrap();
    assert!(i.enabled_events().unwrap().is_empty());
}

#[test]
fn cli_start_show_pipe_and_reset_restore_the_instance() {
    let Some(t) = live() else { return };
    let g = Guard::new(&t, "cli");
    let i = g.inst();
    let before = state(&i);
    let run = |args: &[&str]| {
        let o = Command::new(bin()).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "tracectl {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    run(&[
        "start",
        "-B",
        &g.name,
        "-e",
        "sched:sched_switch",
        "-f",
        "prev_pid >= 0",
        "-R",
        "stacktrace:1",
        "-e",
        "irq",
        "-C",
        "global",
        "-b",
        "512",
        "-P",
        &std::process::id().to_string(),
        "-O",
        "noannotate",
        "--buffer-percent",
        "30",
    ]);
    assert_eq!(
        i.read_value("events/sched/sched_switch/filter").unwrap(),
        "(prev_pid >= 0)"
    );
    assert_eq!(i.trace_clock().unwrap().current, "global");
    // The kernel rounds the size up to whole sub-buffers.
    let kb = i.buffer_size().unwrap().effective_kb().unwrap();
    assert!((512..520).contains(&kb), "buffer_size_kb {kb}");
    assert!(!i.option("annotate").unwrap());
    assert_eq!(
        i.trigger_lines(&EventName::new("sched", "sched_switch"))
            .unwrap(),
        vec!["stacktrace:count=1".to_string()]
    );
    // The pid filter keeps only us; drop it to see the machine's activity.
    run(&["set", "-B", &g.name, "-e", "sched:sched_switch"]);
    i.set_event_pids(&[], AppendMode::Truncate).unwrap();
    // `show -p` follows trace_pipe until killed.
    let mut child = Command::new(bin())
        .args(["show", "-p", "-B", &g.name])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let (mut sw, mut irq) = (false, false);
    let start = Instant::now();
    let mut line = String::new();
    while !(sw && irq) && start.elapsed() < Duration::from_secs(10) {
        workload();
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        sw |= line.contains("sched_switch:");
        irq |= line.contains("irq_handler_entry: ") || line.contains("softirq_entry: ");
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(sw && irq, "show -p saw sched_switch={sw} irq={irq}");
    run(&["reset", "-B", &g.name]);
    let after = state(&i);
    for ((f, b), (_, a)) in before.iter().zip(&after) {
        assert_eq!(b, a, "{f} differs after reset");
    }
}

#[test]
fn bad_filter_reports_the_kernels_error_log() {
    let Some(t) = live() else { return };
    let g = Guard::new(&t, "filter");
    let o = Command::new(bin())
        .args([
            "set",
            "-B",
            &g.name,
            "-e",
            "sched:sched_switch",
            "-f",
            "no_such_field == 1",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    // The filter is checked against the event's format before anything is written.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no field \"no_such_field\""), "{err}");
    assert!(err.contains("nothing was changed"), "{err}");
    let i = g.inst();
    assert_eq!(
        i.event_state(&EventName::new("sched", "sched_switch"))
            .unwrap(),
        EnableState::Disabled
    );
    // What gets past the check and is still refused carries the kernel's error_log.
    match i.set_filter(
        &i.resolve_event("sched:sched_switch").unwrap(),
        "prev_pid === 1",
    ) {
        Err(TracefsError::Rejected {
            error_log: Some(log),
            ..
        }) => assert!(log.contains("prev_pid === 1"), "{log}"),
        r => panic!("{r:?}"),
    }
    i.clear_error_log().unwrap();
    assert!(i.error_log().unwrap().is_empty());
}

#[test]
fn misspelt_event_suggests_the_real_one() {
    let Some(t) = live() else { return };
    let g = Guard::new(&t, "typo");
    let o = Command::new(bin())
        .args(["start", "-B", &g.name, "-e", "sched:sched_swich"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean sched:sched_switch"));
}

#[test]
fn triggers_round_trip_through_the_kernel() {
    let Some(t) = live() else { return };
    let g = Guard::new(&t, "trig");
    let i = g.inst();
    let sw = EventName::new("sched", "sched_switch");
    let tr = Trigger::new(TriggerAction::TraceOff)
        .count(3)
        .when("prev_pid == 1");
    i.add_trigger(&sw, &tr).unwrap();
    let en = Trigger::new(TriggerAction::EnableEvent(EventName::new(
        "irq",
        "softirq_entry",
    )));
    i.add_trigger(&sw, &en).unwrap();
    let listed = i.triggers(&sw).unwrap();
    assert!(listed.contains(&tr), "{listed:?}");
    assert!(listed.contains(&en), "{listed:?}");
    // enable_event soft-disables its target until the trigger fires.
    assert!(matches!(
        i.event_state(&EventName::new("irq", "softirq_entry"))
            .unwrap(),
        EnableState::Soft(_)
    ));
    i.remove_trigger(&sw, &tr).unwrap();
    assert_eq!(i.triggers(&sw).unwrap(), vec![en]);
    assert_eq!(i.clear_triggers(&sw).unwrap(), 1);
    assert!(i.triggers(&sw).unwrap().is_empty());
}

#[test]
fn options_clock_buffers_stats_and_marker() {
    let Some(t) = live() else { return };
    let g = Guard::new(&t, "opts");
    let i = g.inst();
    i.set_option("event-fork", true).unwrap();
    assert!(i.option("event-fork").unwrap());
    i.apply_option("noevent-fork").unwrap();
    assert!(!i.option("event-fork").unwrap());
    assert!(matches!(
        i.set_option("no-such-option", true),
        Err(TracefsError::UnknownOption { .. })
    ));
    assert!(i
        .set_trace_clock("nosuchclock")
        .unwrap_err()
        .to_string()
        .contains("local"));
    i.set_buffer_size(256).unwrap();
    // The kernel rounds the size up to whole sub-buffers.
    let kb = i.buffer_size().unwrap().effective_kb().unwrap();
    assert!((256..264).contains(&kb), "{kb}");
    let cpus = i.cpus().unwrap();
    assert_eq!(i.cpu_buffer_size(cpus[0]).unwrap().effective_kb(), Some(kb));
    i.mark("tracectl live marker").unwrap();
    let text = i.trace_text(None).unwrap();
    assert!(
        text.contains("tracing_mark_write: tracectl live marker"),
        "{text}"
    );
    let total: u64 = cpus
        .iter()
        .map(|c| i.cpu_stats(*c).unwrap().entries().unwrap())
        .sum();
    assert!(total >= 1);
    i.clear().unwrap();
    let total: u64 = cpus
        .iter()
        .map(|c| i.cpu_stats(*c).unwrap().entries().unwrap())
        .sum();
    assert_eq!(total, 0);
}

#[test]
fn refused_files_say_so_and_the_rest_carries_on() {
    let Some(t) = live() else { return };
    let g = Guard::new(&t, "eperm");
    let i = g.inst();
    match i.function_filter(tracectl::tracefs::FunctionFilter::Filter) {
        Err(e @ TracefsError::PermissionDenied { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("set_ftrace_filter") && m.contains("sandbox"),
                "{m}"
            );
            // set with -l: the refused function filter fails the command before anything
            // is written, so the event is not enabled either.
            let o = Command::new(bin())
                .args([
                    "set",
                    "-B",
                    &g.name,
                    "-l",
                    "schedule",
                    "-e",
                    "sched:sched_switch",
                ])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{err}");
            assert!(
                err.contains("-l schedule") && err.contains("set_ftrace_filter"),
                "{err}"
            );
            assert_eq!(
                i.event_state(&EventName::new("sched", "sched_switch"))
                    .unwrap(),
                EnableState::Disabled
            );
        }
        Ok(_) => eprintln!("set_ftrace_filter is readable here; nothing refused to test"),
        Err(e) => panic!("{e}"),
    }
    // Snapshot is not built into every kernel: a missing file is "not supported".
    if !i.exists("snapshot") {
        assert!(matches!(
            i.snapshot_take(None),
            Err(TracefsError::NotSupported { .. })
        ));
    }
}

#[test]
fn uprobe_create_list_remove() {
    let Some(t) = live() else { return };
    if !t.exists("uprobe_events") {
        skips::skip("no uprobe_events");
        return;
    }
    let target = PathBuf::from("/bin/true").canonicalize().unwrap();
    let ev = DynamicEvent {
        kind: ProbeKind::Uprobe,
        group: Some("tracectl_test".into()),
        name: format!("true_{}", std::process::id()),
        maxactive: None,
        location: format!("{}:0x0", target.display()),
        args: vec![],
    };
    match t.create_dynamic_event(&ev) {
        Ok(()) => {}
        Err(e) => {
            skips::skip(format!("the kernel refused a uprobe here: {e}"));
            return;
        }
    }
    let listed = t.dynamic_events().unwrap();
    let found = listed.iter().find(|d| d.name == ev.name).cloned();
    t.remove_dynamic_event(&ev).unwrap();
    let found = found.expect("uprobe listed");
    assert_eq!(found.kind, ProbeKind::Uprobe);
    assert_eq!(found.group.as_deref(), Some("tracectl_test"));
    assert!(!t
        .dynamic_events()
        .unwrap()
        .iter()
        .any(|d| d.name == ev.name));
}

/// The top level: `start -e sched:sched_switch -e irq`, `show`, `reset` leaves every
/// control file as it was. Runs only when the top level is at its defaults, and puts
/// back what it found on every exit path.
#[test]
fn top_level_start_show_reset_round_trip() {
    let Some(t) = live() else { return };
    let top = t.top();
    let at_defaults = top.enabled_events().map(|v| v.is_empty()).unwrap_or(false)
        && top.current_tracer().map(|c| c == "nop").unwrap_or(false)
        && top
            .trace_clock()
            .map(|c| c.current == "local")
            .unwrap_or(false)
        && top.tracing_on().unwrap_or(false)
        && top.buffer_size().ok().and_then(|b| b.effective_kb())
            == Some(tracectl::tracefs::DEFAULT_BUFFER_KB);
    if !at_defaults {
        skips::skip("the top-level buffer is not at the kernel defaults (events, tracer, clock or buffer size in use)");
        return;
    }
    struct Restore(Instance, Vec<(String, String)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = self.0.disable_all_events();
            for e in [
                "sched/sched_switch",
                "sched/sched_waking",
                "irq/irq_handler_entry",
                "irq/softirq_entry",
            ] {
                let _ = self.0.write_str(format!("events/{e}/filter"), "0");
            }
            for (f, v) in &self.1 {
                if ["tracing_on", "buffer_size_kb", "buffer_percent"].contains(&f.as_str()) {
                    let _ = self.0.write_str(f, v.trim());
                }
            }
        }
    }
    let before = state(&top);
    let _restore = Restore(top.clone(), before.clone());
    let o = Command::new(bin())
        .args(["start", "-e", "sched:sched_switch", "-e", "irq"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut seen = (false, false);
    let start = Instant::now();
    while !(seen.0 && seen.1) && start.elapsed() < Duration::from_secs(5) {
        workload();
        let out = Command::new(bin()).arg("show").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        seen = (
            text.contains("sched_switch: "),
            text.contains("irq_handler_entry: ") || text.contains("softirq_entry: "),
        );
    }
    assert!(
        seen.0 && seen.1,
        "show saw sched_switch={} irq={}",
        seen.0,
        seen.1
    );
    // Other work on this machine keeps its instances: test the top-level part of reset.
    let o = Command::new(bin())
        .args(["reset", "--keep-instances"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = state(&top);
    for ((f, b), (_, a)) in before.iter().zip(&after) {
        assert_eq!(b, a, "{f} differs after reset");
    }
}

#[test]
fn two_triggers_on_one_event_both_stay() {
    let Some(t) = live() else { return };
    let g = Guard::new(&t, "trig2");
    let o = Command::new(bin())
        .args([
            "set",
            "-B",
            &g.name,
            "-e",
            "sched:sched_switch",
            "-R",
            "traceoff:2",
            "-R",
            "stacktrace if prev_pid == 1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = g
        .inst()
        .trigger_lines(&EventName::new("sched", "sched_switch"))
        .unwrap();
    // The count goes down as the trigger fires.
    assert!(
        lines.iter().any(|l| l.starts_with("traceoff:count=")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("stacktrace:unlimited if prev_pid == 1")),
        "{lines:?}"
    );
    let o = Command::new(bin())
        .args(["show", "-B", &g.name, "--trigger", "sched:sched_switch"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("traceoff:count="));
}

#[test]
fn discovery_finds_the_mount_listed_in_proc_mounts() {
    let Some(t) = live() else { return };
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let listed = tracectl::tracefs::parse_mounts(&mounts);
    assert!(
        listed.iter().any(|m| m.root == t.root()),
        "{} not among {listed:?}",
        t.root().display()
    );
    assert!(tracectl::tracefs::looks_like_tracefs(t.root()));
    // The same root through the CLI's global option and environment variable.
    let o = Command::new(bin())
        .args(["show", "--tracing_on"])
        .env("TRACECTL_TRACEFS", t.root())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        t.top().read_value("tracing_on").unwrap()
    );
}
