//! Oracle: `tracectl --tracefs TREE stream --style kernel` against the kernel's own `trace`
//! text of the same stopped buffer, for every committed data tree.
//!
//! What must be identical today: the header lines, the number and order of the lines, and
//! every line's context columns up to and including the event name (comm-pid, [cpu], the
//! latency characters, the timestamp, `name:`). The event text after the name comes from
//! the print-fmt engine of the event model; the whole-line match rate is printed, with the
//! events that still differ, and must not fall below the floor recorded here (raise it as
//! the engine improves).
//!
//! Known exceptions: none. (The writeback inode events name `I_DIRTY_*` enum constants
//! that the kernel leaves unresolved in their format files; `stream` fills them in from the
//! tree's `host/enums`, taken from the kernel's BTF by `capture`.)

use std::path::Path;
use std::process::Command;

use crate::support::fixtures::tree;

fn stream_kernel(dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs"])
        .arg(dir)
        .args(["stream", "--style", "kernel"])
        .output()
        .expect("run tracectl");
    assert!(
        out.status.success(),
        "stream failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// The line up to and including the event name's colon.
fn context(line: &str) -> &str {
    let after_ts = line
        .find("] ")
        .and_then(|i| line[i..].find(": ").map(|j| i + j + 2))
        .unwrap_or(line.len());
    match line[after_ts..].find(':') {
        Some(j) => &line[..after_ts + j + 1],
        None => line,
    }
}

fn check(name: &str, full_match_floor: f64) {
    let dir = tree(name);
    let kernel = std::fs::read_to_string(dir.join("trace")).unwrap();
    let ours = stream_kernel(&dir);
    let k_header: Vec<&str> = kernel.lines().take_while(|l| l.starts_with('#')).collect();
    let o_header: Vec<&str> = ours.lines().take_while(|l| l.starts_with('#')).collect();
    assert_eq!(o_header, k_header, "{name}: header lines");
    let k: Vec<&str> = kernel.lines().skip(k_header.len()).collect();
    let o: Vec<&str> = ours.lines().skip(o_header.len()).collect();
    assert_eq!(o.len(), k.len(), "{name}: number of body lines");
    let mut full = 0usize;
    let mut differing: std::collections::BTreeMap<String, (usize, String, String)> =
        Default::default();
    for (i, (a, b)) in o.iter().zip(&k).enumerate() {
        if a == b {
            full += 1;
            continue;
        }
        assert_eq!(
            context(a),
            context(b),
            "{name}: body line {} context columns",
            i + 1
        );
        let event = context(b)
            .rsplit(": ")
            .next()
            .unwrap_or("")
            .trim_end_matches(':')
            .to_string();
        differing
            .entry(event)
            .or_insert_with(|| (0, b.to_string(), a.to_string()))
            .0 += 1;
    }
    let mut worst: Vec<_> = differing.into_iter().collect();
    worst.sort_by_key(|w| std::cmp::Reverse(w.1 .0));
    for (event, (n, kernel, ours)) in worst.iter().take(12) {
        eprintln!("{name}: {n} x {event}\n  kernel: {kernel}\n  ours:   {ours}");
    }
    let rate = full as f64 / k.len() as f64;
    eprintln!(
        "{name}: {full}/{} body lines identical ({:.2}%)",
        k.len(),
        rate * 100.0
    );
    assert!(
        rate >= full_match_floor,
        "{name}: full-line match rate {rate:.4} fell below {full_match_floor}"
    );
}

#[test]
fn sched_irq_tree_matches_the_kernel_text() {
    check("linux-6.18-sched-irq", 1.0);
}

#[test]
fn sixteen_kib_sub_buffer_tree_matches_the_kernel_text() {
    check("linux-6.18-sched-subbuf16", 1.0);
}

#[test]
fn record_tgid_and_counter_clock_tree_matches_the_kernel_text() {
    // `(tgid)` column from saved_tgids, raw `counter` timestamps.
    check("linux-6.18-sched-tgid-counter", 1.0);
}

#[test]
fn overrun_tree_matches_the_kernel_text() {
    // The kernel's `trace` shows no [LOST] line for events overwritten before it was
    // read; the replay reports them on stderr instead (see ring_fixture.rs).
    check("linux-6.18-all-overrun", 1.0);
}

#[test]
fn all_events_tree_matches_the_kernel_text() {
    check("linux-6.18-all", 1.0);
}
