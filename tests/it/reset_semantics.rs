//! `reset` with trace-cmd reset's -B/-a/-t/-d/-b, on a copy of a recorded tree that also
//! holds instances made by another tool: without -B or -a they are left exactly as they
//! are.

use crate::support::tree as tree_support;

use tree_support::Tree;

const FIXTURE: &str = "linux-6.18-sched-irq";
const CLOCKS: &str = "local [global] counter uptime perf mono mono_raw boot tai x86-tsc\n";

/// Files of an instance that another tool configured (global clock, small buffer, an
/// event on, tracing off), as `instances/NAME` of the tree.
const FOREIGN: &[(&str, &str)] = &[
    ("tracing_on", "0\n"),
    ("trace_clock", CLOCKS),
    ("buffer_size_kb", "64\n"),
    ("buffer_percent", "10\n"),
    ("current_tracer", "nop\n"),
    ("set_event", "sched:sched_switch\n"),
    ("events/sched/sched_switch/enable", "1\n"),
    ("options/record-tgid", "1\n"),
];

/// The tree with the top level stopped (so a top-level reset shows) and two instances
/// of other tools.
fn tree() -> Tree {
    let t = Tree::new(FIXTURE);
    t.write("tracing_on", "0\n");
    for name in ["other-tool", "second"] {
        for (f, text) in FOREIGN {
            t.write(&format!("instances/{name}/{f}"), text);
        }
    }
    t
}

fn assert_foreign_untouched(t: &Tree, name: &str) {
    for (f, text) in FOREIGN {
        assert_eq!(
            t.read(&format!("instances/{name}/{f}")),
            *text,
            "{name}/{f}"
        );
    }
}

fn assert_reset(t: &Tree, name: &str, buffer_kb: &str) {
    let f = |file: &str| t.read(&format!("instances/{name}/{file}"));
    assert_eq!(f("tracing_on"), "1");
    assert_eq!(f("trace_clock"), "local");
    assert_eq!(f("buffer_size_kb"), buffer_kb);
    assert_eq!(f("buffer_percent"), "50");
    assert_eq!(f("set_event"), "");
    assert_eq!(f("events/sched/sched_switch/enable"), "0");
    assert_eq!(f("options/record-tgid"), "0");
}

fn gone(t: &Tree, name: &str) -> bool {
    !t.root.join("instances").join(name).exists()
}

#[test]
fn reset_leaves_other_tools_instances_in_place() {
    let t = tree();
    t.ok(&["reset"]);
    assert_eq!(t.read("tracing_on"), "1");
    assert_foreign_untouched(&t, "other-tool");
    assert_foreign_untouched(&t, "second");
}

#[test]
fn reset_a_resets_every_instance_and_not_the_top() {
    let t = tree();
    t.ok(&["reset", "-a"]);
    assert_reset(&t, "other-tool", "1410");
    assert_reset(&t, "second", "1410");
    assert_eq!(t.read("tracing_on"), "0\n");
}

#[test]
fn reset_a_d_removes_every_instance_and_leaves_the_top() {
    let t = tree();
    let top_before = t.read("tracing_on");
    t.ok(&["reset", "-a", "-d"]);
    assert!(gone(&t, "other-tool") && gone(&t, "second"));
    assert_eq!(t.read("tracing_on"), top_before);
}

#[test]
fn reset_t_a_d_also_resets_the_top() {
    let t = tree();
    t.ok(&["reset", "-t", "-a", "-d"]);
    assert!(gone(&t, "other-tool") && gone(&t, "second"));
    assert_eq!(t.read("tracing_on"), "1");
}

#[test]
fn reset_b_name_resets_only_that_instance() {
    let t = tree();
    t.ok(&["reset", "-B", "other-tool"]);
    assert_reset(&t, "other-tool", "1410");
    assert_foreign_untouched(&t, "second");
    assert_eq!(t.read("tracing_on"), "0\n");
    // With -t the top level is reset as well.
    t.ok(&["reset", "-B", "second", "-t"]);
    assert_reset(&t, "second", "1410");
    assert_eq!(t.read("tracing_on"), "1");
}

#[test]
fn reset_b_and_d_act_on_the_instance_before_them() {
    // The man page's example: resize instance-one, delete instance-two, nothing else.
    let t = tree();
    t.ok(&[
        "reset",
        "-B",
        "other-tool",
        "-b",
        "4096",
        "-B",
        "second",
        "-d",
    ]);
    assert_reset(&t, "other-tool", "4096");
    assert!(gone(&t, "second"));
    assert_eq!(t.read("tracing_on"), "0\n");
    assert_eq!(t.read("buffer_size_kb"), "1410\n");
}

#[test]
fn reset_buffer_size_goes_to_the_top_before_any_instance() {
    let t = tree();
    t.ok(&["reset", "-b", "1024"]);
    assert_eq!(t.read("buffer_size_kb"), "1024");
    assert_eq!(t.read("tracing_on"), "1");
    assert_foreign_untouched(&t, "other-tool");
    assert_foreign_untouched(&t, "second");
}

#[test]
fn reset_buffer_size_after_a_goes_to_every_instance() {
    let t = tree();
    t.ok(&["reset", "-a", "-b", "2048", "-t"]);
    assert_reset(&t, "other-tool", "2048");
    assert_reset(&t, "second", "2048");
    // -t reset the top level, to the default size: -b came before it.
    assert_eq!(t.read("tracing_on"), "1");
    assert_eq!(t.read("buffer_size_kb"), "1410\n");
}

#[test]
fn invalid_reset_changes_nothing() {
    for (args, why) in [
        (&["reset", "-d"][..], "top level cannot be removed"),
        (
            &["reset", "-a", "-t", "-d"][..],
            "top level cannot be removed",
        ),
        (
            &["reset", "-B", "other-tool", "-t", "-d"][..],
            "top level cannot be removed",
        ),
        (&["reset", "-B", "other-tol"][..], "did you mean other-tool"),
        (
            &["reset", "-B", "second", "-B", "nosuch"][..],
            "no such instance",
        ),
        (&["reset", "-b", "0"][..], "-b 0"),
    ] {
        let t = tree();
        let before = t.bytes();
        let err = t.fails(args);
        assert!(err.contains(why), "{args:?}: {err}");
        t.assert_unchanged(&before, &format!("{args:?}"));
    }
}
