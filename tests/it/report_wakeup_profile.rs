//! `tracectl report -w` (wakeup latency) and `--profile` against trace-cmd 3.1.6: its
//! outputs for the recordings in `tests/data/tracecmd/wakeup/` (see make-wakeup.sh and
//! make-results.sh there), byte for byte, and on recordings made during the test.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::tracecmd::recorder;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd/wakeup")
}

/// `(mode name, report arguments)` from the directory's modes.tsv.
fn modes() -> Vec<(String, Vec<String>)> {
    std::fs::read_to_string(data().join("modes.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.split('\t').map(str::to_string);
            (f.next().unwrap(), f.collect())
        })
        .collect()
}

/// `tracectl report ARGS` in `dir`: stdout, or the failure.
fn tracectl(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir)
        .arg("report")
        .args(args)
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(out.stdout)
}

/// The key under which trace-cmd's profile may list entries in any order: the event
/// name and total time of an `  Event:` line, the name alone for wakeups (its sort
/// compares no more of them). trace-cmd orders entries of equal keys by its hash
/// tables' memory addresses, which change from run to run.
fn tie_key(line: &str) -> Option<(String, Option<String>)> {
    let rest = line.strip_prefix("  Event: ")?;
    let name = rest.split(':').next()?.to_string();
    if name == "sched_wakeup" {
        return Some((name, None));
    }
    let total = rest
        .split_once(" Total: ")
        .map(|(_, t)| t.split(' ').next().unwrap_or("").to_string());
    Some((name, total))
}

/// A profile text with each run of tied entries sorted (see `tie_key`). An entry is its
/// `  Event:` line with the stack tree printed under it (the indented lines that follow).
fn untie(text: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let under = |l: &str| l.starts_with(' ') && !l.starts_with("  Event: ");
    // Each line with the stack lines under it.
    let mut blocks: Vec<&[&str]> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i + 1;
        if tie_key(lines[i]).is_some() {
            while j < lines.len() && under(lines[j]) {
                j += 1;
            }
        }
        blocks.push(&lines[i..j]);
        i = j;
    }
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < blocks.len() {
        let k = tie_key(blocks[i][0]);
        let mut j = i + 1;
        if k.is_some() {
            while j < blocks.len() && tie_key(blocks[j][0]) == k {
                j += 1;
            }
        }
        let mut run = blocks[i..j].to_vec();
        run.sort_unstable();
        run.into_iter().for_each(|b| out.extend_from_slice(b));
        i = j;
    }
    out.join("\n").into_bytes()
}

/// A profile text with its `group: COMM` blocks (`--by-comm`) in comm order. trace-cmd
/// 3.1.6 sorts them by comparing the bytes of their memory addresses as strings (its
/// `compare_groups` is handed pointers), an order that changes from run to run; tracectl
/// prints them by comm. Each block is still compared whole, and everything around the
/// groups keeps its place.
fn order_groups(text: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let Some(start) = lines.iter().position(|l| l.starts_with("group: ")) else {
        return text.as_bytes().to_vec();
    };
    let stop = (start..lines.len())
        .find(|&i| lines[i].starts_with("task: "))
        .unwrap_or(lines.len());
    let region = &lines[start..stop];
    // The blank lines that end the region (before the first task) stay where they are.
    let trailing = region.iter().rev().take_while(|l| l.is_empty()).count();
    let mut groups: Vec<Vec<&str>> = Vec::new();
    for l in &region[..region.len() - trailing] {
        if l.starts_with("group: ") {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("starts with a group").push(l);
    }
    for g in &mut groups {
        while g.last().is_some_and(|l| l.is_empty()) {
            g.pop();
        }
    }
    groups.sort();
    let mut out: Vec<&str> = lines[..start].to_vec();
    for (k, g) in groups.iter().enumerate() {
        if k > 0 {
            out.push("");
        }
        out.extend_from_slice(g);
    }
    out.extend(std::iter::repeat("").take(trailing));
    out.extend_from_slice(&lines[stop..]);
    out.join("\n").into_bytes()
}

/// None when equal, else where the texts part. A profile (`--profile`) is compared
/// with its tied entries sorted, and its groups (`--by-comm`) in comm order.
pub(crate) fn difference(want: &[u8], got: &[u8], profile: bool) -> Option<String> {
    let (want, got) = if profile {
        (untie(&order_groups(want)), untie(&order_groups(got)))
    } else {
        (want.to_vec(), got.to_vec())
    };
    if want == got {
        return None;
    }
    let (w, g) = (
        String::from_utf8_lossy(&want),
        String::from_utf8_lossy(&got),
    );
    let (w, g): (Vec<&str>, Vec<&str>) = (w.lines().collect(), g.lines().collect());
    let n = w.len().max(g.len());
    let differing: Vec<usize> = (0..n).filter(|&i| w.get(i) != g.get(i)).collect();
    let first = differing.first().copied().unwrap_or(n);
    Some(format!(
        "{} of {} lines differ ({} vs {} lines); first at line {}:\n  trace-cmd: {}\n  tracectl:  {}",
        differing.len(),
        n,
        w.len(),
        g.len(),
        first + 1,
        w.get(first).unwrap_or(&"<none>"),
        g.get(first).unwrap_or(&"<none>"),
    ))
}

#[test]
fn report_w_and_profile_match_trace_cmd_goldens() {
    let mut stems: Vec<String> = std::fs::read_dir(data())
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .into_string()
                .ok()?
                .strip_suffix(".dat")
                .map(str::to_string)
        })
        .collect();
    stems.sort();
    assert!(stems.len() >= 3, "recordings: {stems:?}");
    let modes = modes();
    let mut failures = Vec::new();
    let mut latencies = 0;
    let mut profiled = std::collections::BTreeSet::new();
    let mut groups = 0;
    for stem in &stems {
        for (mode, args) in &modes {
            let golden = data()
                .join("results")
                .join(stem)
                .join(format!("{mode}.txt.zst"));
            let packed = std::fs::read(&golden)
                .unwrap_or_else(|e| panic!("{}: {e} (run make-results.sh)", golden.display()));
            let want = zstd::decode_all(&packed[..]).unwrap();
            if mode == "w" {
                latencies += String::from_utf8_lossy(&want).matches(" Latency: ").count();
            }
            if mode.starts_with("profile-by-comm") {
                groups += String::from_utf8_lossy(&want).matches("\ngroup: ").count();
            }
            if mode == "profile" {
                let text = String::from_utf8_lossy(&want);
                for kind in [
                    "sched_switch:",
                    "sched_wakeup:",
                    "sys_enter:",
                    "softirq_entry:",
                ] {
                    if text.contains(&format!("Event: {kind}")) {
                        profiled.insert(kind);
                    }
                }
            }
            let file = format!("{stem}.dat");
            let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
            a.extend(["-i", &file]);
            match tracectl(&data(), &a) {
                Ok(got) => {
                    if let Some(d) = difference(&want, &got, mode.starts_with("profile")) {
                        failures.push(format!("{stem} `report {}`: {d}", args.join(" ")));
                    }
                }
                Err(e) => failures.push(format!("{stem} `report {}` failed: {e}", args.join(" "))),
            }
        }
    }
    // The recordings hold many wakeups, RT ones among them.
    assert!(latencies > 200, "only {latencies} latencies in the goldens");
    // The profiles time switches, wakeups, syscalls and softirqs.
    assert_eq!(profiled.len(), 4, "{profiled:?}");
    // --by-comm merges tasks into groups in every recording.
    assert!(
        groups > 4 * 2,
        "only {groups} groups in the --by-comm goldens"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Several files: each record's file label is printed (trace-cmd prints it before it
/// hands the record to the profiler), then the profiles, the last file's first.
#[test]
fn report_profile_of_two_files_matches_trace_cmd() {
    let packed = std::fs::read(data().join("results/multi/profile.txt.zst")).unwrap();
    let want = zstd::decode_all(&packed[..]).unwrap();
    let got = tracectl(
        &data(),
        &[
            "--profile",
            "-i",
            "sched-only.dat",
            "-i",
            "wakeup-switch.dat",
        ],
    )
    .unwrap();
    assert!(String::from_utf8_lossy(&want).contains("sched-only.dat: wakeup-switch.dat: "));
    if let Some(d) = difference(&want, &got, true) {
        panic!("{d}");
    }
}

#[test]
fn report_w_refuses_several_files_and_prints_nothing() {
    let f = data().join("sched-only.dat");
    let f = f.to_str().unwrap();
    let err = tracectl(&data(), &["-w", "-i", f, "-i", f]).unwrap_err();
    assert!(err.contains("-w") && err.contains("single -i"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["report", "-w", "-i", f, "-i", f])
        .output()
        .unwrap();
    assert!(out.stdout.is_empty());
}

/// A file without sched_wakeup: -w adds nothing (as in trace-cmd).
#[test]
fn report_w_without_wakeup_events_is_the_plain_report() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd");
    let f = "2cpu-noinstance-v7.dat";
    let plain = tracectl(&dir, &["-F", "irq/.*", "-i", f]).unwrap();
    let w = tracectl(&dir, &["-w", "-F", "irq/.*", "-i", f]).unwrap();
    assert!(plain.len() > 1000);
    assert_eq!(plain, w);
}

fn output(cmd: &mut Command) -> Vec<u8> {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn record(dir: &Path, name: &str, events: &[&str], workload: &str) -> PathBuf {
    let file = dir.join(name);
    let mut cmd = Command::new(recorder().expect("checked by the caller"));
    cmd.args(["record", "-q"]);
    for e in events {
        cmd.args(["-e", e]);
    }
    cmd.arg("-o").arg(&file).args(["--", "sh", "-c", workload]);
    output(&mut cmd);
    file
}

/// Fresh recordings of several event mixes and workloads: `report ARGS` of each, for
/// every `ARGS` of `modes`, byte for byte as trace-cmd prints it.
fn live_compare(modes: &[&[&str]], marker: &str) {
    if recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mixes: [(&str, &[&str], &str); 3] = [
        (
            "sis.dat",
            &["sched", "irq", "raw_syscalls"],
            "for i in 1 2; do (seq 2000 | cat | wc -l >/dev/null) & done; \
             chrt -f 30 sh -c 'sleep 0.001; sleep 0.002'; wait",
        ),
        (
            "sched.dat",
            &["sched"],
            "for i in 1 2 3; do (sleep 0.00$i) & done; seq 5000 | gzip -c >/dev/null; wait",
        ),
        (
            "ws.dat",
            &["sched:sched_wakeup", "sched:sched_switch", "irq"],
            "for i in 1 2 3 4; do (echo $i | cat >/dev/null) & done; wait; sleep 0.005",
        ),
    ];
    let mut seen = 0;
    for (name, events, work) in mixes {
        let f = record(dir.path(), name, events, work);
        let f = f.to_str().unwrap();
        for args in modes {
            let mut a: Vec<&str> = args.to_vec();
            a.extend(["-i", f]);
            let want = output(Command::new("trace-cmd").arg("report").args(&a));
            let got = tracectl(dir.path(), &a).unwrap_or_else(|e| panic!("{a:?}: {e}"));
            seen += String::from_utf8_lossy(&want).matches(marker).count();
            if let Some(d) = difference(&want, &got, a.contains(&"--profile")) {
                let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-mismatch");
                let _ = std::fs::create_dir_all(&keep);
                let _ = std::fs::copy(f, keep.join(name));
                panic!(
                    "`report {}` of {name} (kept in {}): {d}",
                    a.join(" "),
                    keep.display()
                );
            }
        }
    }
    assert!(seen > 0, "no {marker:?} in any output");
}

#[test]
fn report_w_live_matches_trace_cmd() {
    live_compare(&[&["-w"], &["-w", "--cpu", "0"]], " Latency: ");
}

#[test]
fn report_profile_live_matches_trace_cmd() {
    live_compare(
        &[
            &["--profile"],
            &["--profile", "-G"],
            &["--profile", "--cpu", "1"],
        ],
        "  Event: sched_switch:",
    );
}

/// Groups are put in comm order, each compared whole; a task is not a group.
#[test]
fn profile_comparison_orders_groups_only() {
    let a = b"Global CPU[0] Events\n  Event: x (1)\n\ngroup: b\n  Event: y (1)\n\ngroup: a\n  Event: z (2)\n\ntask: c-1\n  Event: w (1)\n";
    let b = b"Global CPU[0] Events\n  Event: x (1)\n\ngroup: a\n  Event: z (2)\n\ngroup: b\n  Event: y (1)\n\ntask: c-1\n  Event: w (1)\n";
    assert!(difference(a, b, true).is_none());
    let c = b"Global CPU[0] Events\n  Event: x (1)\n\ngroup: a\n  Event: z (3)\n\ngroup: b\n  Event: y (1)\n\ntask: c-1\n  Event: w (1)\n";
    assert!(difference(a, c, true).is_some());
    let d = b"\ntask: c-1\n  Event: w (1)\n\ntask: a-2\n  Event: w (1)\n";
    let e = b"\ntask: a-2\n  Event: w (1)\n\ntask: c-1\n  Event: w (1)\n";
    assert!(difference(d, e, true).is_some());
}

/// Ties are sorted, everything else is kept: a changed count or order still differs.
#[test]
fn profile_comparison_only_forgives_tied_entries() {
    let a = b"\ntask: sh-1\n  Event: sched_waking:0x1 (1)\n  Event: sched_waking:0x0 (2)\n";
    let b = b"\ntask: sh-1\n  Event: sched_waking:0x0 (2)\n  Event: sched_waking:0x1 (1)\n";
    assert!(difference(a, b, true).is_none());
    assert!(difference(a, b, false).is_some());
    let c = b"\ntask: sh-1\n  Event: sched_waking:0x0 (3)\n  Event: sched_waking:0x1 (1)\n";
    assert!(difference(a, c, true).is_some());
    let d = b"\ntask: sh-1\n  Event: sched_switch:S (1) Total: 5 Avg: 5 Max: 5(ts:1.000000) Min:5(ts:1.000000)\n  Event: sched_waking:0x0 (2)\n";
    let e = b"\ntask: sh-1\n  Event: sched_waking:0x0 (2)\n  Event: sched_switch:S (1) Total: 5 Avg: 5 Max: 5(ts:1.000000) Min:5(ts:1.000000)\n";
    assert!(difference(d, e, true).is_some());
    // A tied entry moves with the stack tree under it; a tree under another entry differs.
    let f = b"\ntask: sh-1\n  Event: sched_waking:0x1 (1)\n          + a (0x1)\n  Event: sched_waking:0x0 (1)\n          + b (0x2)\n";
    let g = b"\ntask: sh-1\n  Event: sched_waking:0x0 (1)\n          + b (0x2)\n  Event: sched_waking:0x1 (1)\n          + a (0x1)\n";
    let h = b"\ntask: sh-1\n  Event: sched_waking:0x0 (1)\n          + a (0x1)\n  Event: sched_waking:0x1 (1)\n          + b (0x2)\n";
    assert!(difference(f, g, true).is_none());
    assert!(difference(f, h, true).is_some());
}
