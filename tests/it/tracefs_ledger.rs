//! The change ledger on a copy of a recorded tree: each kind of file is put back with the
//! exact bytes its rule gives, newest change first, also when the command fails.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::support::fixtures::copy_tree;
use tracectl::tracefs::capture::{capture, CaptureError, CaptureOptions};
use tracectl::tracefs::{Ledger, Tracefs, TracefsError};

/// A private copy of a fixture tree.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new(name: &str) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tracing");
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tracefs-fixtures")
                .join(name),
            &root,
        );
        Tree { _dir: dir, root }
    }

    fn put(&self, rel: &str, text: &str) {
        fs::write(self.root.join(rel), text).unwrap();
    }

    fn get(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    fn tracefs(&self) -> Tracefs {
        Tracefs::at(&self.root)
    }
}

/// Set `rel` (which reads `before`) to `value` through a ledger, restore, and return what
/// the restore wrote.
fn round_trip(tree: &Tree, rel: &str, before: &str, value: &str) -> String {
    tree.put(rel, before);
    let top = tree.tracefs().top();
    let mut ledger = Ledger::new();
    ledger.set(&top, rel, value).unwrap();
    assert_eq!(tree.get(rel), value, "{rel} was not written");
    let warnings = ledger.restore();
    assert!(warnings.is_empty(), "{warnings:?}");
    tree.get(rel)
}

#[test]
fn each_kind_of_file_is_restored_by_its_rule() {
    let tree = Tree::new("linux-6.18-sched-irq");
    // A buffer never used yet: the size it will get, not the 7 KiB it has now.
    assert_eq!(
        round_trip(&tree, "buffer_size_kb", "7 (expanded: 1408)\n", "64"),
        "1408"
    );
    assert_eq!(round_trip(&tree, "buffer_size_kb", "1410\n", "64"), "1410");
    assert_eq!(
        round_trip(
            &tree,
            "trace_clock",
            "[local] global counter uptime perf\n",
            "global"
        ),
        "local"
    );
    assert_eq!(round_trip(&tree, "current_tracer", "nop\n", "blk"), "nop");
    assert_eq!(round_trip(&tree, "options/hash-ptr", "1\n", "0"), "1");
    assert_eq!(round_trip(&tree, "tracing_cpumask", "3\n", "1"), "3");
    assert_eq!(
        round_trip(
            &tree,
            "set_event",
            "irq:softirq_entry\nsched:sched_switch\n",
            ""
        ),
        "irq:softirq_entry\nsched:sched_switch\n"
    );
    assert_eq!(round_trip(&tree, "set_event", "", "sched:sched_switch"), "");
    assert_eq!(round_trip(&tree, "set_event_pid", "12\n34\n", "1"), "12 34");
    assert_eq!(
        round_trip(&tree, "events/sched/sched_switch/enable", "0*\n", "1"),
        "0"
    );
    assert_eq!(
        round_trip(&tree, "events/sched/sched_switch/enable", "1\n", "0"),
        "1"
    );
    assert_eq!(
        round_trip(
            &tree,
            "events/sched/sched_switch/filter",
            "none\n",
            "prev_pid == 1"
        ),
        "0"
    );
    assert_eq!(
        round_trip(
            &tree,
            "events/sched/sched_switch/filter",
            "prev_pid == 7\n",
            "prev_pid == 1"
        ),
        "prev_pid == 7"
    );
    // A system's filter file reads a comment header when it has no filter.
    let header = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tracefs-fixtures/linux-6.18-sched-irq/events/sched/filter"),
    )
    .unwrap();
    assert!(header.starts_with("### global filter ###"), "{header}");
    assert_eq!(
        round_trip(&tree, "events/sched/filter", &header, "prev_pid == 1"),
        "0"
    );

    let graph = Tree::new("debian-6.12-function-graph-openat");
    assert_eq!(
        round_trip(
            &graph,
            "set_ftrace_filter",
            "#### all functions enabled ####\n",
            "vfs_read"
        ),
        ""
    );
    assert_eq!(
        round_trip(
            &graph,
            "set_graph_function",
            "do_sys_openat2\nvfs_read\n",
            "x"
        ),
        "do_sys_openat2\nvfs_read\n"
    );
    assert_eq!(
        round_trip(
            &graph,
            "set_graph_notrace",
            "#### no functions disabled ####\n",
            "x"
        ),
        ""
    );
    assert_eq!(round_trip(&graph, "set_ftrace_pid", "no pid\n", "42"), "");
    assert_eq!(round_trip(&graph, "max_graph_depth", "5\n", "1"), "5");
}

#[test]
fn a_mixed_system_enable_is_restored_through_set_event() {
    let tree = Tree::new("linux-6.18-sched-irq");
    tree.put("events/sched/enable", "X\n");
    tree.put("set_event", "sched:sched_switch\nirq:softirq_entry\n");
    let top = tree.tracefs().top();
    let mut ledger = Ledger::new();
    ledger.set(&top, "events/sched/enable", "1").unwrap();
    // What the kernel would show after enabling the whole system.
    tree.put(
        "set_event",
        "sched:sched_switch\nsched:sched_wakeup\nirq:softirq_entry\n",
    );
    assert!(ledger.restore().is_empty());
    assert_eq!(
        tree.get("set_event"),
        "sched:sched_switch\nirq:softirq_entry\n"
    );
}

#[test]
fn buffer_sizes_that_differ_per_cpu_are_restored_per_cpu() {
    let tree = Tree::new("linux-6.18-sched-irq");
    tree.put("buffer_size_kb", "X\n");
    tree.put("per_cpu/cpu0/buffer_size_kb", "1410\n");
    tree.put("per_cpu/cpu1/buffer_size_kb", "7 (expanded: 2048)\n");
    let top = tree.tracefs().top();
    let mut ledger = Ledger::new();
    ledger.set(&top, "buffer_size_kb", "64").unwrap();
    tree.put("per_cpu/cpu0/buffer_size_kb", "64\n");
    tree.put("per_cpu/cpu1/buffer_size_kb", "64\n");
    assert!(ledger.restore().is_empty());
    assert_eq!(tree.get("per_cpu/cpu0/buffer_size_kb"), "1410");
    assert_eq!(tree.get("per_cpu/cpu1/buffer_size_kb"), "2048");
}

#[test]
fn a_trigger_is_undone_by_its_removal_line() {
    let tree = Tree::new("linux-6.18-sched-irq");
    let top = tree.tracefs().top();
    let mut ledger = Ledger::new();
    ledger
        .add_trigger(
            &top,
            "events/sched/sched_switch",
            "traceoff:5 if prev_pid == 1",
            tracectl::tracefs::AppendMode::Append,
        )
        .unwrap();
    assert!(ledger.restore().is_empty());
    // The tree's file keeps every line appended to it; the last is the removal.
    let text = tree.get("events/sched/sched_switch/trigger");
    assert!(
        text.ends_with("traceoff:5 if prev_pid == 1!traceoff"),
        "{text:?}"
    );
    // A trigger file and a read-only file cannot be saved as read.
    assert!(ledger
        .save(&top, "events/sched/sched_switch/trigger")
        .is_err());
    assert!(ledger.save(&top, "buffer_total_size_kb").is_err());
}

#[test]
fn changes_are_restored_newest_first() {
    let tree = Tree::new("linux-6.18-sched-irq");
    tree.put("trace_clock", "[local] global counter\n");
    let top = tree.tracefs().top();
    let mut ledger = Ledger::new();
    ledger.set(&top, "trace_clock", "global").unwrap();
    ledger.set(&top, "trace_clock", "counter").unwrap();
    assert_eq!(ledger.len(), 2);
    assert!(ledger.restore().is_empty());
    // Oldest last: the value from before the first change wins.
    assert_eq!(tree.get("trace_clock"), "local");
    assert!(ledger.is_empty());
}

#[test]
fn a_ledger_dropped_on_an_error_or_a_panic_restores() {
    let tree = Tree::new("linux-6.18-sched-irq");
    let top = tree.tracefs().top();
    let fails = || -> Result<(), tracectl::tracefs::TracefsError> {
        let mut ledger = Ledger::new();
        ledger.set(&top, "tracing_on", "0")?;
        ledger.set(&top, "current_tracer", "blk")?;
        ledger.set(&top, "no_such_file", "1")?;
        Ok(())
    };
    assert!(fails().is_err());
    assert_eq!(tree.get("tracing_on"), "1");
    assert_eq!(tree.get("current_tracer"), "nop");

    let r = std::panic::catch_unwind(|| {
        let mut ledger = Ledger::new();
        ledger.set(&top, "buffer_percent", "10").unwrap();
        panic!("in the middle of a command");
    });
    assert!(r.is_err());
    let before = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tracefs-fixtures/linux-6.18-sched-irq/buffer_percent"),
    )
    .unwrap();
    assert_eq!(tree.get("buffer_percent"), before.trim());
}

/// A data capture needs a running kernel: on a tree it is refused before its first write,
/// so every file the ledger would have restored is as it was.
#[test]
fn a_refused_top_level_capture_changes_nothing() {
    let tree = Tree::new("linux-6.18-sched-irq");
    tree.put("options/hash-ptr", "1\n");
    tree.put("events/sched/sched_switch/enable", "0\n");
    let files = [
        "tracing_on",
        "buffer_size_kb",
        "trace_clock",
        "options/hash-ptr",
        "options/record-tgid",
        "events/sched/sched_switch/enable",
        "current_tracer",
    ];
    let before: Vec<String> = files.iter().map(|f| tree.get(f)).collect();
    let dest = tempfile::tempdir().unwrap();
    let opts = CaptureOptions {
        events: vec!["sched:sched_switch".into()],
        top_level: true,
        buffer_size_kb: Some(64),
        clock: Some("global".into()),
        options: vec!["record-tgid".into()],
        tracer: Some("function_graph".into()),
        ..CaptureOptions::default()
    };
    let err = capture(
        &tree.tracefs(),
        &dest.path().join("out"),
        &opts,
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(
        matches!(err, CaptureError::Tracefs(TracefsError::NotLive { .. })),
        "{err}"
    );
    let after: Vec<String> = files.iter().map(|f| tree.get(f)).collect();
    assert_eq!(after, before);
}
