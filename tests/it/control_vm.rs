//! The control plane on a Debian stock kernel under qemu, for what this host's sandbox
//! refuses: graph filters and depth, function-filter typos, hist and count triggers,
//! per-CPU snapshot, kprobes listed by stat. Runs with TRACECTL_VM=1 and
//! TRACECTL_VM_BIN (a static tracectl; scripts/test.sh builds one), else skips.

use crate::support::vm;

use std::path::Path;
use std::process::Command;

/// Boot `linux-image-6.12-amd64`, run `script` with tracectl in /bin; returns the exit
/// status and the directory holding what the guest wrote to /out.
fn guest(bin: &Path, script: &str) -> (i32, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("guest.sh");
    std::fs::write(&script_path, script).unwrap();
    let out = tempfile::tempdir().unwrap();
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vm/harness.sh");
    let status = Command::new("bash")
        .arg(&harness)
        .arg("linux-image-6.12-amd64")
        .arg(&script_path)
        .arg(out.path())
        .arg(bin)
        .status()
        .expect("run tests/vm/harness.sh");
    (status.code().unwrap_or(-1), out)
}

fn file(out: &tempfile::TempDir, name: &str) -> String {
    std::fs::read_to_string(out.path().join(name)).unwrap_or_else(|e| {
        let log = std::fs::read_to_string(out.path().join("guest.log")).unwrap_or_default();
        panic!("guest did not write /out/{name}: {e}\n{log}")
    })
}

#[test]
fn vm_graph_filters_triggers_snapshot_and_reset() {
    let Some(bin) = vm::binary() else { return };
    let (status, out) = guest(
        &bin,
        r#"set -e
T=/sys/kernel/tracing
for f in current_tracer set_graph_function max_graph_depth set_ftrace_filter events/sched/sched_switch/trigger events/sched/sched_waking/trigger; do
    cat $T/$f > /out/before.$(echo $f | tr / _)
done
tracectl start -p function_graph -g vfs_read --max-graph-depth 3 -e sched:sched_switch
cat $T/set_graph_function > /out/sgf
cat $T/max_graph_depth > /out/depth
tracectl set -l schedul 2> /out/typo_err || echo $? > /out/typo_rc
tracectl set -e sched:sched_switch -R 'hist:keys=next_pid:vals=hitcount:sort=hitcount:size=256 if next_prio < 200'
tracectl set -e sched:sched_waking -R 'traceoff:2' -R 'stacktrace'
cat /etc/hostname > /dev/null; sleep 0.2
tracectl show --hist sched:sched_switch > /out/hist
tracectl show --trigger sched:sched_waking > /out/waking_trigger
tracectl snapshot -s --cpu 0 2> /out/snap_cpu_err || true
tracectl snapshot -s
tracectl snapshot --cpu 0 > /out/snapshot0
tracectl snapshot --json > /out/snapshot_json
tracectl snapshot -r -c 0
tracectl snapshot -f
echo 'p:kprobes/tracectl_open do_sys_openat2 dfd=$arg1' >> $T/kprobe_events
tracectl list -e 'kprobes:*' > /out/kprobes
tracectl stat > /out/stat
tracectl reset
echo '-:kprobes/tracectl_open' >> $T/kprobe_events
for f in current_tracer set_graph_function max_graph_depth set_ftrace_filter events/sched/sched_switch/trigger events/sched/sched_waking/trigger; do
    cat $T/$f > /out/after.$(echo $f | tr / _)
done
"#,
    );
    let log = std::fs::read_to_string(out.path().join("guest.log")).unwrap_or_default();
    assert_eq!(status, 0, "guest script failed:\n{log}");
    assert_eq!(file(&out, "sgf"), "vfs_read\n");
    assert_eq!(file(&out, "depth"), "3\n");
    assert_ne!(file(&out, "typo_rc").trim(), "0");
    assert!(
        file(&out, "typo_err").contains("did you mean schedule"),
        "{}",
        file(&out, "typo_err")
    );
    let hist = file(&out, "hist");
    assert!(
        hist.contains("next_pid:") && hist.contains("hitcount:"),
        "{hist}"
    );
    let waking = file(&out, "waking_trigger");
    assert!(
        waking.contains("traceoff:count=") && waking.contains("stacktrace:unlimited"),
        "{waking}"
    );
    let e = file(&out, "snap_cpu_err");
    assert!(e.is_empty() || e.contains("per-CPU snapshots"), "{e}");
    assert!(
        file(&out, "snapshot0").starts_with("# tracer: function_graph"),
        "{}",
        file(&out, "snapshot0")
    );
    for l in file(&out, "snapshot_json").lines() {
        let _: serde_json::Value = serde_json::from_str(l).unwrap();
    }
    assert_eq!(file(&out, "kprobes"), "kprobes:tracectl_open\n");
    let stat = file(&out, "stat");
    assert!(stat.contains("Tracer: function_graph"), "{stat}");
    assert!(
        stat.contains("Dynamic event: p:kprobes/tracectl_open do_sys_openat2"),
        "{stat}"
    );
    assert!(stat.contains("set_graph_function: vfs_read"), "{stat}");
    for f in [
        "current_tracer",
        "set_graph_function",
        "max_graph_depth",
        "set_ftrace_filter",
        "events_sched_sched_switch_trigger",
        "events_sched_sched_waking_trigger",
    ] {
        assert_eq!(
            file(&out, &format!("after.{f}")),
            file(&out, &format!("before.{f}")),
            "{f} not restored"
        );
    }
}

/// `record --func-stack` needs the function tracer, which this host refuses: on the stock
/// kernel the option is on while recording, the stacks reach the file, and nothing of it
/// is left at the end.
#[test]
fn vm_record_func_stack() {
    let Some(bin) = vm::binary() else { return };
    let (status, out) = guest(
        &bin,
        r#"set -e
T=/sys/kernel/tracing
tracectl record -q -p function -l vfs_read --func-stack -o /tmp/f.dat sh -c \
    'cat /sys/kernel/tracing/instances/tracectl-record-$PPID/options/func_stack_trace 2>/dev/null || cat /sys/kernel/tracing/options/func_stack_trace; cat /etc/hostname >/dev/null' > /out/during
tracectl report /tmp/f.dat | head -200 > /out/report
cat $T/options/func_stack_trace > /out/after_top
cat $T/current_tracer > /out/tracer
ls $T/instances > /out/instances
tracectl record -q --func-stack -e sched -o /tmp/g.dat true 2> /out/nofunc_err || echo $? > /out/nofunc_rc
"#,
    );
    let log = std::fs::read_to_string(out.path().join("guest.log")).unwrap_or_default();
    assert_eq!(status, 0, "guest script failed:\n{log}");
    assert_eq!(
        file(&out, "during"),
        "1\n",
        "func_stack_trace is on while recording"
    );
    let report = file(&out, "report");
    assert!(
        report.contains("function:") && report.contains("vfs_read"),
        "{report}"
    );
    assert!(
        report.contains("kernel_stack:         <stack trace >") && report.contains("\n=> "),
        "the function events come with their stacks:\n{report}"
    );
    assert_eq!(file(&out, "after_top"), "0\n");
    assert_eq!(file(&out, "tracer"), "nop\n");
    assert!(!file(&out, "instances").contains("tracectl-record"));
    assert_ne!(file(&out, "nofunc_rc").trim(), "0");
    assert!(file(&out, "nofunc_err").contains("--func-stack"));
}

/// On the stock kernel: instances have no set_graph_function (6.12 instances run
/// function_graph, but the graph filter is the top level's), so every -g goes to the top
/// level, as trace-cmd writes it; and a start that fails after resetting the top level
/// (an instance still to be made has no max_graph_depth) puts back what the reset
/// changed.
#[test]
fn vm_g_goes_to_the_top_level_and_a_failed_start_undoes_its_reset() {
    let Some(bin) = vm::binary() else { return };
    let (status, out) = guest(
        &bin,
        r#"T=/sys/kernel/tracing
mkdir $T/instances/foo
ls $T/instances/foo > /out/foo_files
tracectl set -p function_graph -B foo -p function_graph -g vfs_read 2> /out/g_err
cat $T/set_graph_function > /out/sgf
cat $T/instances/foo/current_tracer > /out/foo_tracer
tracectl reset -t -B foo
echo global > $T/trace_clock
echo 2048 > $T/buffer_size_kb
echo 1 > $T/events/irq/enable
echo 'prev_pid == 1' > $T/events/sched/sched_switch/filter
echo 'traceoff:3 if pid == 1' > $T/events/sched/sched_waking/trigger
echo 1 > $T/options/record-tgid
echo 0 > $T/tracing_on
STATE="trace_clock buffer_size_kb events/irq/enable events/sched/sched_switch/filter events/sched/sched_waking/trigger options/record-tgid tracing_on set_event"
for f in $STATE; do cat $T/$f > /out/before.$(echo $f | tr / _); done
tracectl start -e sched:sched_wakeup -B new --max-graph-depth 2 2> /out/fail_err
echo $? > /out/fail_rc
for f in $STATE; do cat $T/$f > /out/after.$(echo $f | tr / _); done
ls $T/instances > /out/instances
"#,
    );
    let log = std::fs::read_to_string(out.path().join("guest.log")).unwrap_or_default();
    assert_eq!(status, 0, "guest script failed:\n{log}");
    let foo_files = file(&out, "foo_files");
    assert!(
        foo_files.contains("set_ftrace_filter") && !foo_files.contains("set_graph_function"),
        "{foo_files}"
    );
    assert_eq!(file(&out, "sgf"), "vfs_read\n", "{}", file(&out, "g_err"));
    assert_eq!(file(&out, "foo_tracer"), "function_graph\n");
    assert_ne!(file(&out, "fail_rc").trim(), "0");
    assert!(
        file(&out, "fail_err").contains("max_graph_depth"),
        "{}",
        file(&out, "fail_err")
    );
    for f in [
        "trace_clock",
        "buffer_size_kb",
        "events_irq_enable",
        "events_sched_sched_switch_filter",
        "events_sched_sched_waking_trigger",
        "options_record-tgid",
        "tracing_on",
        "set_event",
    ] {
        assert_eq!(
            file(&out, &format!("after.{f}")),
            file(&out, &format!("before.{f}")),
            "{f} not restored"
        );
    }
    assert_eq!(file(&out, "instances"), "foo\n");
}

/// `record`'s -p, -l and -n after a -B are that instance's (trace-cmd 3.1.6 binds them
/// per instance; see cli_fixture::function_filters_after_b_are_that_instances), on a
/// stock kernel whose instances have the function filters this host refuses: while the
/// command runs, the top buffer (tracectl's private instance) and instance b1 hold their
/// own filters; at the end b1, made for the recording, is gone; a bad -l of b1 fails
/// before anything is made; and an instance that existed gets its filter back.
#[test]
fn vm_record_function_filters_after_b_are_that_instances() {
    let Some(bin) = vm::binary() else { return };
    let (status, out) = guest(
        &bin,
        r#"set -e
T=/sys/kernel/tracing
head -1 $T/set_ftrace_filter > /out/top_before
tracectl record -q -e sched:sched_switch -n schedule -B b1 -p function -l vfs_read \
    -n vfs_write -B b2 -e irq -o /tmp/f.dat sh -c \
    'T=/sys/kernel/tracing; P=$T/instances/tracectl-record-$PPID
     cat $P/set_ftrace_filter > /out/top_filter; cat $P/set_ftrace_notrace > /out/top_notrace
     cat $P/current_tracer > /out/top_tracer
     cat $T/instances/b1/set_ftrace_filter > /out/b1_filter
     cat $T/instances/b1/set_ftrace_notrace > /out/b1_notrace
     cat $T/instances/b1/current_tracer > /out/b1_tracer
     head -1 $T/instances/b2/set_ftrace_filter > /out/b2_filter
     cat /etc/hostname >/dev/null'
ls $T/instances > /out/instances
head -1 $T/set_ftrace_filter > /out/top_after
tracectl record -q -e sched -B b1 -p function -l no_such_function_xyz -o /tmp/g.dat true \
    2> /out/bad_err || echo $? > /out/bad_rc
ls $T/instances > /out/instances_bad
mkdir $T/instances/mine
echo vfs_write > $T/instances/mine/set_ftrace_filter
tracectl record -q -e sched:sched_switch -B mine -p function -l vfs_read -o /tmp/h.dat sh -c \
    'cat /sys/kernel/tracing/instances/mine/set_ftrace_filter > /out/mine_during'
cat $T/instances/mine/set_ftrace_filter > /out/mine_after
cat $T/instances/mine/current_tracer > /out/mine_tracer
rmdir $T/instances/mine
"#,
    );
    let log = std::fs::read_to_string(out.path().join("guest.log")).unwrap_or_default();
    assert_eq!(status, 0, "guest script failed:\n{log}");
    let all = "#### all functions enabled ####\n";
    for (name, want) in [
        ("top_filter", all),
        ("top_notrace", "schedule\n"),
        ("top_tracer", "nop\n"),
        ("b1_filter", "vfs_read\n"),
        ("b1_notrace", "vfs_write\n"),
        ("b1_tracer", "function\n"),
        ("b2_filter", all),
        ("instances", ""),
    ] {
        assert_eq!(file(&out, name), want, "{name}");
    }
    assert_eq!(file(&out, "top_after"), file(&out, "top_before"));
    assert_ne!(file(&out, "bad_rc").trim(), "0");
    let err = file(&out, "bad_err");
    assert!(err.contains("no_such_function_xyz"), "{err}");
    assert_eq!(file(&out, "instances_bad"), "");
    // An instance that was there before gets its filter and tracer back.
    assert_eq!(file(&out, "mine_during"), "vfs_read\n");
    assert_eq!(file(&out, "mine_after"), "vfs_write\n");
    assert_eq!(file(&out, "mine_tracer"), "nop\n");
}
