//! `tracectl flamegraph` on a function_graph trace.dat: stacks weighted by self time.
//!
//! The trace.dat is written from a recorded tree by `tracectl --tracefs TREE extract`; the
//! oracle is the kernel's own function_graph text of the same tree (its `trace` file):
//! the durations it prints, nested by its indentation, give each call's self time and
//! the time of the outermost calls.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::fixtures::{copy_tree, tree};

fn tracectl(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tracectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `tracectl --tracefs <copy of TREE> extract -o DIR/x.dat`.
fn extract(name: &str, dir: &Path) -> PathBuf {
    let t = dir.join("tree");
    copy_tree(&tree(name), &t);
    let dat = dir.join("x.dat");
    tracectl(&[
        "--tracefs",
        t.to_str().unwrap(),
        "extract",
        "-o",
        dat.to_str().unwrap(),
    ]);
    dat
}

fn folded(dat: &Path) -> BTreeMap<String, u64> {
    let out = tracectl(&["flamegraph", "--folded-only", dat.to_str().unwrap()]);
    let mut m = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        *m.entry(stack.to_string()).or_insert(0) += n.parse::<u64>().unwrap();
    }
    m
}

/// A call line of the kernel's function_graph text.
struct Call {
    /// The running task as the text's task-switch blocks name it (`cat-99`), with the CPU
    /// for the idle tasks.
    task: String,
    depth: usize,
    kind: Kind,
    /// Duration in ns as printed (cut to the digits shown) and the cut's unit in ns.
    duration: Option<(u64, u64)>,
}

enum Kind {
    Open(String),
    Leaf(String),
    Close,
    /// `} /* func */`: the entry was not in the buffer.
    CloseUnmatched(String),
}

/// `14.087` (µs) as 14087 ns with unit 1; `52999.05` as 52999050 with unit 10.
fn micros(s: &str) -> (u64, u64) {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let unit = 10u64.pow(3 - frac.len() as u32);
    let frac_ns = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().unwrap() * unit
    };
    (int.parse::<u64>().unwrap() * 1000 + frac_ns, unit)
}

fn task_label(cpu: u32, name: &str) -> String {
    if name.starts_with("<idle>") {
        format!("{name}/{cpu}")
    } else {
        name.to_string()
    }
}

/// A task-switch line ` 0)    <idle>-0    =>   tracect-98  `: CPU, from, to.
fn switch_line(line: &str) -> Option<(u32, String, String)> {
    let (from, to) = line.split_once("=>")?;
    let (cpu, from) = from.split_once(')')?;
    let cpu: u32 = cpu.trim().parse().ok()?;
    Some((
        cpu,
        task_label(cpu, from.trim()),
        task_label(cpu, to.trim()),
    ))
}

/// The call lines of a `trace` text printed with the CPU and duration columns.
fn kernel_calls(text: &str) -> Vec<Call> {
    // Each CPU runs, until its first task switch, the task that switch leaves.
    let mut current: BTreeMap<u32, String> = BTreeMap::new();
    for (cpu, from, _) in text.lines().filter_map(switch_line) {
        current.entry(cpu).or_insert(from);
    }
    let mut v = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        if !line.contains('|') {
            if let Some((cpu, _, to)) = switch_line(line) {
                current.insert(cpu, to);
            }
            continue;
        }
        let Some((head, col)) = line.rsplit_once('|') else {
            continue;
        };
        let body = col.trim_start();
        if body.starts_with("/*") {
            continue;
        }
        let cpu: u32 = head
            .trim_start()
            .split(')')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let depth = (col.len() - body.len() - 2) / 2;
        let duration = head.rfind(" us").map(|at| {
            let num = head[..at].split_whitespace().last().unwrap();
            micros(num)
        });
        let kind = if let Some(name) = body.strip_suffix("();") {
            Kind::Leaf(name.to_string())
        } else if let Some(name) = body.strip_suffix("() {") {
            Kind::Open(name.to_string())
        } else if body == "}" {
            Kind::Close
        } else if let Some(name) = body
            .strip_prefix("} /* ")
            .and_then(|b| b.strip_suffix(" */"))
        {
            Kind::CloseUnmatched(name.to_string())
        } else {
            panic!("unexpected function_graph line {line:?}");
        };
        v.push(Call {
            task: current
                .get(&cpu)
                .cloned()
                .unwrap_or_else(|| format!("cpu{cpu}")),
            depth,
            kind,
            duration,
        });
    }
    v
}

/// Time of the outermost calls in the kernel's text, and the sum of the units its
/// durations were cut to. Per task, `pending[d]` holds the durations of calls finished at
/// depth `d` that no caller has claimed yet: a call finishing at `d` claims `pending[d +
/// 1]`; an entry at `d` leaves `pending[d + 1]` to the outermost time (its caller never
/// returned within the text).
fn kernel_outermost_total(calls: &[Call]) -> (u64, u64) {
    let mut pending: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let (mut outer, mut slack) = (0u64, 0u64);
    for c in calls {
        let p = pending.entry(&c.task).or_default();
        if p.len() < c.depth + 2 {
            p.resize(c.depth + 2, 0);
        }
        match &c.kind {
            Kind::Open(_) => {
                outer += std::mem::take(&mut p[c.depth + 1]);
            }
            _ => {
                let (d, unit) = c.duration.expect("a finished call shows its duration");
                slack += unit - 1;
                p[c.depth + 1] = 0;
                p[c.depth] += d;
            }
        }
    }
    outer += pending.values().flatten().sum::<u64>();
    (outer, slack)
}

/// Self time per stack (without the task's name) from a text where every call is whole,
/// with the slack of the cut durations in each.
fn kernel_self_times(calls: &[Call]) -> BTreeMap<String, (u64, u64)> {
    let mut stacks: BTreeMap<&str, Vec<(String, u64, u64)>> = BTreeMap::new();
    let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for c in calls {
        let s = stacks.entry(&c.task).or_default();
        let open = usize::from(matches!(c.kind, Kind::Close));
        assert_eq!(s.len(), c.depth + open, "the oracle needs whole calls");
        let (name, callees, callee_slack) = match &c.kind {
            Kind::Open(name) => {
                s.push((name.clone(), 0, 0));
                continue;
            }
            Kind::Leaf(name) => (name.clone(), 0, 0),
            Kind::Close => s.pop().unwrap(),
            Kind::CloseUnmatched(n) => panic!("the oracle needs whole calls: {n}"),
        };
        let (d, unit) = c.duration.unwrap();
        let mut key: Vec<&str> = s.iter().map(|f| f.0.as_str()).collect();
        key.push(&name);
        let e = m.entry(key.join(";")).or_insert((0, 0));
        e.0 += d - callees;
        e.1 += unit - 1 + callee_slack;
        if let Some(caller) = s.last_mut() {
            caller.1 += d;
            caller.2 += unit - 1;
        }
    }
    m
}

fn without_comm(f: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (k, v) in f {
        let (_, rest) = k.split_once(';').unwrap();
        *m.entry(rest.to_string()).or_insert(0) += v;
    }
    m
}

#[test]
fn funcgraph_self_times_add_up_to_the_kernels_outermost_calls() {
    for name in [
        "debian-6.1-function-graph-openat",
        "debian-6.12-function-graph-openat",
        "debian-6.1-function-graph-latency",
        "debian-6.12-function-graph-latency",
        // Calls entered before the buffer's start (`} /* func */` in the text).
        "debian-6.1-function-graph-wrapped",
        "debian-6.12-function-graph-wrapped",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let f = folded(&extract(name, dir.path()));
        let ours: u64 = f.values().sum();
        let text = std::fs::read_to_string(tree(name).join("trace")).unwrap();
        let (outer, slack) = kernel_outermost_total(&kernel_calls(&text));
        assert!(outer > 0, "{name}: the text has calls");
        assert!(
            ours >= outer && ours <= outer + slack,
            "{name}: folded total {ours} ns, the kernel's outermost calls {outer} ns (+{slack})"
        );
    }
}

#[test]
fn funcgraph_stacks_have_the_kernels_self_times() {
    for name in [
        "debian-6.1-function-graph-openat",
        "debian-6.12-function-graph-openat",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let f = folded(&extract(name, dir.path()));
        let text = std::fs::read_to_string(tree(name).join("trace")).unwrap();
        let want = kernel_self_times(&kernel_calls(&text));
        let got = without_comm(&f);
        // Stacks of zero self time are not written.
        let want_keys: Vec<&String> = want
            .iter()
            .filter(|(_, (n, _))| *n > 0)
            .map(|(k, _)| k)
            .collect();
        assert_eq!(got.keys().collect::<Vec<_>>(), want_keys, "{name}");
        for (k, (n, slack)) in &want {
            let g = got.get(k).copied().unwrap_or(0);
            assert!(
                g >= *n && g <= n + slack,
                "{name}: {k}: {g} ns, the kernel's text {n} ns (+{slack})"
            );
        }
    }
    // One nesting read off debian-6.12-function-graph-openat's text by hand: the one
    // open by tracectl (CPU 0, lines 370-375 of its `trace`, after `cat-148 => tracect-146`) is
    //   do_sys_openat2() { getname() { getname_flags.part.0() {
    //     kmem_cache_alloc_noprof() { __cond_resched(); 2.605 us } 18.144 us
    // so kmem_cache_alloc_noprof's self time is 18.144 - 2.605 = 15.539 us.
    let dir = tempfile::tempdir().unwrap();
    let f = folded(&extract("debian-6.12-function-graph-openat", dir.path()));
    let stack = "tracectl;do_sys_openat2;getname;getname_flags.part.0;kmem_cache_alloc_noprof";
    assert_eq!(f[stack], 15_539);
    assert_eq!(f[&format!("{stack};__cond_resched")], 2_605);
    assert_eq!(f["tracectl;mutex_unlock"], 606_327);
}

#[test]
fn funcgraph_flamegraph_svg_is_weighted_in_ns() {
    let dir = tempfile::tempdir().unwrap();
    let dat = extract("debian-6.12-function-graph-openat", dir.path());
    let f = folded(&dat);
    let total: u64 = f.values().sum();
    let out = tracectl(&["flamegraph", dat.to_str().unwrap()]);
    let svg = String::from_utf8(out.stdout).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    let root = doc.root_element();
    assert_eq!(
        root.attribute("data-total"),
        Some(total.to_string().as_str())
    );
    let titles: Vec<&str> = root
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .collect();
    let openat: u64 = f
        .iter()
        .filter(|(k, _)| k.split(';').nth(1) == Some("do_sys_openat2"))
        .map(|(_, v)| v)
        .sum();
    // One do_sys_openat2 frame under each task that opened files.
    let frames: u64 = titles
        .iter()
        .filter_map(|t| t.strip_prefix("do_sys_openat2 ("))
        .map(|t| t.split(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(openat > 0);
    assert_eq!(frames, openat);
    assert!(titles
        .iter()
        .any(|t| t.starts_with(&format!("all ({total} ns, 100.00%)"))));
}

#[test]
fn funcgraph_flamegraph_refuses_a_trace_dat_without_function_graph() {
    let dir = tempfile::tempdir().unwrap();
    let dat = extract("linux-6.18-sched-irq", dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["flamegraph", "--folded-only", dat.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("function_graph"), "{err}");
}
