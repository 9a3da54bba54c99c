//! `tracectl perf list` against perf 6.1's `perf list` on this machine: the same lines,
//! in the same order, for the kinds of event tracectl opens (PMU events such as
//! `msr/tsc/`, the `cpu/t1=v1.../` descriptor, the tool events and the `mem:`
//! breakpoint descriptor included). perf's lines for what tracectl does not take (SDT
//! events, metric groups) are left out of perf's text before comparing.

use std::path::Path;

use crate::support::perf::{assert_same_lines, run};

/// perf's `perf list` text without the kinds tracectl does not take (and the blank
/// lines around its metric groups).
fn perf_list_taken(args: &[&str]) -> String {
    let text = run("perf", &[&["list"][..], args].concat(), Path::new("/"));
    let mut out = String::new();
    for l in text.lines() {
        if l.starts_with("Metric Groups:") {
            break;
        }
        let dropped = l.ends_with("[SDT event]") || l.is_empty();
        if !dropped {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[test]
fn perf_list_live_matches_perf() {
    if let Some(why) = crate::support::perf::skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    if !Path::new("/sys/kernel/tracing/events/sched/sched_switch/id").exists() {
        crate::support::skips::skip("no tracefs with sched:sched_switch");
        return;
    }
    let ours = |args: &[&str]| {
        run(
            env!("CARGO_BIN_EXE_tracectl"),
            &[&["perf", "list"][..], args].concat(),
            Path::new("/"),
        )
    };
    let cases: [&[&str]; 19] = [
        &[],
        &["sw"],
        &["hw"],
        &["cache"],
        &["tracepoint"],
        &["sched:*"],
        &["sched:sched_sw*"],
        &["*:*wake*"],
        &["faults"],
        &["clock"],
        &["switch"],
        &["sw", "sched:sched_switch"],
        &["pmu"],
        &["tsc"],
        &["msr"],
        &["msr*"],
        &["time"],
        &["tool"],
        &["mem"],
    ];
    for args in cases {
        let perf = perf_list_taken(args);
        assert_same_lines(&ours(args), &perf, &format!("perf list {args:?}"));
        if args.is_empty() {
            assert!(perf.contains("  context-switches OR cs "), "{perf}");
            assert!(perf.contains("  sched:sched_switch "), "{perf}");
            assert!(perf.contains("  cpu/t1=v1"), "{perf}");
            assert!(perf.contains("  duration_time "), "{perf}");
            assert!(perf.contains("  mem:<addr>[/len][:access] "), "{perf}");
        }
    }
    // The names alone: perf's software events, then its tool events, which tracectl
    // does not take.
    let perf = run("perf", &["list", "--raw-dump", "sched:*"], Path::new("/"));
    assert_eq!(ours(&["--raw-dump", "sched:*"]), perf);
    let perf = run("perf", &["list", "--raw-dump", "sw"], Path::new("/"));
    let sw = ours(&["--raw-dump", "sw"]);
    assert!(
        perf.starts_with(&sw) && sw.contains("task-clock "),
        "{sw}\n{perf}"
    );
}
