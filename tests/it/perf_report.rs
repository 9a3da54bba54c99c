//! `tracectl perf report` prints `perf report --stdio`'s table (perf 6.1) for the
//! perf.data files under tests/data/perf. The expected texts were written by perf in
//! that directory with `perf report -i NAME.data --symfs symfs --kallsyms kallsyms
//! --stdio -g none [OPTIONS] | grep -v '^# (Tip:'` (perf ends with a random tip), and
//! those with call graphs under the rows (`results/report-g.*`) by `report-graph.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf")
}

fn check(data: &str, extra: &[&str], result: &str) {
    let mut args = vec!["-g", "none"];
    args.extend_from_slice(extra);
    check_args(data, &args, result);
}

/// Compare with `results/report-g.NAME[_OPTIONS].txt` (options joined by `_`).
fn check_graph(data: &str, extra: &[&str]) {
    let mut name = data.trim_end_matches(".data").to_string();
    for a in extra {
        name.push('_');
        name.push_str(a);
    }
    check_args(data, extra, &format!("report-g.{name}.txt"));
}

fn check_args(data: &str, extra: &[&str], result: &str) {
    let mut args = vec![
        "perf",
        "report",
        "-i",
        data,
        "--symfs",
        "symfs",
        "--kallsyms",
        "kallsyms",
        "--stdio",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8(out.stdout).unwrap();
    let want = std::fs::read_to_string(dir().join("results").join(result)).unwrap();
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "{result}: line {} differs", i + 1);
    }
    assert_eq!(got, want, "{result}");
}

#[test]
fn perf_report_children_by_default_with_call_chains() {
    check("cc-spin.data", &[], "report.cc-spin.txt");
}

#[test]
fn perf_report_no_children() {
    check(
        "cc-spin.data",
        &["--no-children"],
        "report.cc-spin_--no-children.txt",
    );
    check(
        "cc-spin.data",
        &["--no-children", "--sort", "comm,dso"],
        "report.cc-spin_--no-children_--sort_comm_dso.txt",
    );
}

#[test]
fn perf_report_sort_keys() {
    check(
        "tc-spin.data",
        &["--sort", "dso,sym"],
        "report.tc-spin_--sort_dso_sym.txt",
    );
    check(
        "tp-sched.data",
        &["--sort", "pid"],
        "report.tp-sched_--sort_pid.txt",
    );
}

#[test]
fn perf_report_tracepoints_several_events() {
    check("tp-sched.data", &[], "report.tp-sched.txt");
    check("tp-mixed.data", &[], "report.tp-mixed.txt");
}

#[test]
fn perf_report_without_call_chains() {
    check("cc-nocg.data", &[], "report.cc-nocg.txt");
}

/// Samples taken in perf's child before its exec carry the comm `perf-exec`; perf sizes
/// the command column by the comm each row's thread ended with (`sh`) and cuts
/// `perf-exec` to that width.
#[test]
fn perf_report_comm_column_is_sized_by_the_last_comm() {
    check("tp-exec.data", &[], "report.tp-exec.txt");
    check(
        "tp-exec.data",
        &["--sort", "comm"],
        "report.tp-exec_--sort_comm.txt",
    );
    check(
        "tp-exec.data",
        &["--sort", "pid"],
        "report.tp-exec_--sort_pid.txt",
    );
}

/// The default with call chains: the call graph under each row, callers first
/// (`-g graph,0.5,caller` with `--children`), rows of equal Children share with the
/// callers above their callees.
#[test]
fn perf_report_call_graph_by_default() {
    check_graph("calls.data", &[]);
    check_graph("cc-spin.data", &[]);
    check_graph("tc-spin.data", &[]);
}

/// Without `--children` the chains start at the sampled function (callee order).
#[test]
fn perf_report_call_graph_orders() {
    check_graph("calls.data", &["--no-children"]);
    check_graph("calls.data", &["-g", "caller", "--no-children"]);
    check_graph("calls.data", &["-g", "callee"]);
    check_graph("cc-spin.data", &["-g", "callee"]);
}

#[test]
fn perf_report_call_graph_modes() {
    check_graph("calls.data", &["-g", "folded"]);
    check_graph("calls.data", &["-g", "flat", "--no-children"]);
    check_graph("calls.data", &["-g", "fractal"]);
    check_graph("calls.data", &["-g", "fractal,30,callee"]);
    check_graph("cc-spin.data", &["-g", "flat,0,2"]);
    check_graph("tc-spin.data", &["-g", "folded,callee", "--no-children"]);
}

/// The threshold hides small branches; the print limit cuts the branches; the values
/// can be periods or sample counts.
#[test]
fn perf_report_call_graph_threshold_limit_and_values() {
    check_graph("calls.data", &["-g", "graph,10,period"]);
    check_graph("calls.data", &["-g", "graph,0.5,count", "--no-children"]);
    check_graph("calls.data", &["-g", "graph,0,2"]);
}

/// With `sym` first in `--sort`, the row's own symbol is not repeated atop its graph.
#[test]
fn perf_report_call_graph_sort_sym_first() {
    check_graph("calls.data", &["--sort", "sym"]);
}

#[test]
fn perf_report_call_graph_refuses_unsupported_keys() {
    for g in ["address", "graph,srcline", "graph,0.5,bogus"] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(dir())
            .args(["perf", "report", "-i", "calls.data", "-g", g])
            .output()
            .unwrap();
        assert!(!out.status.success(), "-g {g} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("-g"), "-g {g}: {err}");
        assert!(out.stdout.is_empty(), "-g {g} printed a report");
    }
}

/// Many threads (a system-wide recording): the graphs match perf's.
#[test]
fn perf_report_call_graph_several_threads() {
    check_graph("tp-callchain.data", &["-g", "caller,5", "--no-children"]);
}

/// Rows of the same Children share from different threads: perf orders those by chain
/// depth only within a thread, which is no total order, and the order it ends up with
/// depends on its tree's shape; the rows and their graphs are compared as a set.
#[test]
fn perf_report_call_graph_equal_shares_across_threads() {
    let args = [
        "perf",
        "report",
        "-i",
        "tp-callchain.data",
        "--symfs",
        "symfs",
        "--kallsyms",
        "kallsyms",
        "--stdio",
        "-g",
        "graph,5",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8(out.stdout).unwrap();
    let want = std::fs::read_to_string(dir().join("results/report-g.tp-callchain_-g_graph,5.txt"))
        .unwrap();
    // Each row with the graph lines under it.
    let rows = |text: &str| {
        let mut rows: Vec<String> = Vec::new();
        for line in text.lines() {
            let row = line.starts_with("  ") && line.trim_start().starts_with(char::is_numeric);
            match rows.last_mut() {
                Some(r) if !row && !line.starts_with('#') => {
                    r.push_str(line);
                    r.push('\n');
                }
                _ => rows.push(format!("{line}\n")),
            }
        }
        rows.sort();
        rows
    };
    let (g, w) = (rows(&got), rows(&want));
    assert!(w.len() > 50, "perf printed rows");
    assert_eq!(g.len(), w.len(), "row count");
    for (a, b) in g.iter().zip(&w) {
        assert_eq!(a, b);
    }
    // Every mode gets through the same rows.
    for mode in ["flat", "folded", "fractal", "callee"] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(dir())
            .args(&args[..9])
            .args(["-g", mode])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "-g {mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
