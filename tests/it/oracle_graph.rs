//! Oracle: `tracectl --tracefs TREE stream --style kernel` on trees recorded with the
//! function_graph tracer (Debian 6.1 and 6.12 under qemu) against the kernel's own `trace`
//! text of the same stopped buffer: header and every body line must be identical.
//!
//! Debian 6.1 prints the first `%s` of an event inside a graph comment empty
//! (`/* sched_switch: prev_comm= prev_pid=104 ... next_comm=swapper/1 ... */`) while 6.12
//! prints it; the renderer emulates that for 6.1 trees (src/render/graph.rs). No line is
//! excepted.

use std::path::Path;
use std::process::Command;

use crate::support::fixtures::tree;

fn stream_kernel(dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(dir)
        .args(["stream", "--style", "kernel"])
        .output()
        .expect("run tracectl")
}

fn without_cpu(line: &str) -> String {
    match line.find("CPU#") {
        Some(i) => {
            let rest = &line[i + 4..];
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            format!("{}CPU#{}", &line[..i], &rest[end..])
        }
        None => line.to_string(),
    }
}

fn check(name: &str) {
    let dir = tree(name);
    let kernel = std::fs::read_to_string(dir.join("trace")).unwrap();
    let out = stream_kernel(&dir);
    assert!(
        out.status.success(),
        "{name}: stream failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = String::from_utf8(out.stdout).expect("utf-8 output");
    let k: Vec<&str> = kernel.lines().collect();
    let o: Vec<&str> = ours.lines().collect();
    for (i, (a, b)) in o.iter().zip(&k).enumerate() {
        if a == b {
            continue;
        }
        // The latency header names the CPU the reader of `trace` ran on, which no tree
        // records; everything else on that line must match.
        if b.starts_with("# latency:") && without_cpu(a) == without_cpu(b) {
            continue;
        }
        panic!(
            "{name}: line {} differs\n  kernel: {b:?}\n  ours:   {a:?}",
            i + 1
        );
    }
    assert_eq!(o.len(), k.len(), "{name}: number of lines");
    assert!(
        k.iter().any(|l| l.contains("() {")),
        "{name}: the tree holds no graph"
    );
    eprintln!("{name}: {}/{} lines identical", k.len(), k.len());
}

/// leaves, comments (trace_marker, sched_process_exec) and task switches.
#[test]
fn debian_6_1_openat() {
    check("debian-6.1-function-graph-openat");
}

/// funcgraph-proc, -abstime and -tail.
#[test]
fn debian_6_1_proc_abstime() {
    check("debian-6.1-function-graph-proc-abstime");
}

/// funcgraph-overrun on, -cpu and -overhead off, two graph functions.
#[test]
fn debian_6_1_overrun_nocpu() {
    check("debian-6.1-function-graph-overrun-nocpu");
}

/// sched_switch comments inside sleeping calls, funcgraph-duration off.
#[test]
fn debian_6_1_nested() {
    check("debian-6.1-function-graph-nested");
}

/// leaves, comments (trace_marker, sched_process_exec) and task switches.
#[test]
fn debian_6_12_openat() {
    check("debian-6.12-function-graph-openat");
}

/// funcgraph-proc, -abstime and -tail.
#[test]
fn debian_6_12_proc_abstime() {
    check("debian-6.12-function-graph-proc-abstime");
}

/// funcgraph-overrun on, -cpu and -overhead off, two graph functions.
#[test]
fn debian_6_12_overrun_nocpu() {
    check("debian-6.12-function-graph-overrun-nocpu");
}

/// sched_switch comments inside sleeping calls, funcgraph-duration off.
#[test]
fn debian_6_12_nested() {
    check("debian-6.12-function-graph-nested");
}

/// latency-format (latency header, legend and the irqs-off .. migrate-disable column) with funcgraph-proc.
#[test]
fn debian_6_1_latency() {
    check("debian-6.1-function-graph-latency");
}

/// context-info off: the function column only, no legend.
#[test]
fn debian_6_1_nocontext() {
    check("debian-6.1-function-graph-nocontext");
}

/// latency-format (latency header, legend and the irqs-off .. migrate-disable column) with funcgraph-proc.
#[test]
fn debian_6_12_latency() {
    check("debian-6.12-function-graph-latency");
}

/// context-info off: the function column only, no legend.
#[test]
fn debian_6_12_nocontext() {
    check("debian-6.12-function-graph-nocontext");
}

/// Unfiltered graph in a 16 KiB buffer that overwrote thousands of events, funcgraph-irqs
/// off: exits whose entries were overwritten print `} /* func */`.
#[test]
fn debian_6_1_wrapped() {
    check("debian-6.1-function-graph-wrapped");
}

/// Unfiltered graph in a 16 KiB buffer that overwrote thousands of events, funcgraph-irqs
/// off: exits whose entries were overwritten print `} /* func */`.
#[test]
fn debian_6_12_wrapped() {
    check("debian-6.12-function-graph-wrapped");
}

#[test]
fn graph_tree_without_funcgraph_formats_is_a_clear_error() {
    let src = tree("debian-6.12-function-graph-openat");
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("t");
    let status = Command::new("cp")
        .arg("-a")
        .arg(&src)
        .arg(&dst)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_dir_all(dst.join("events/ftrace/funcgraph_exit")).unwrap();
    let out = stream_kernel(&dst);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("funcgraph_exit") && err.contains("capture"),
        "unexpected error: {err}"
    );
}
