//! Live oracle: capture every event of this kernel during a short busy workload, then
//! replay the tree with `stream --style kernel` and compare with the kernel's own `trace`
//! text, as the acceptance check does on held-out trees. Needs root and tracefs (skips
//! otherwise, saying why); the capture runs in a private instance that it removes.

use crate::support::live;

use std::process::Command;

#[test]
fn fresh_all_events_capture_replays_as_the_kernel_printed_it() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", "/sys/kernel/tracing", "capture"])
        .arg(&tree)
        .args([
            "-e",
            "all",
            "--kallsyms",
            "--",
            "sh",
            "-c",
            "ls -l /usr/bin >/dev/null 2>&1; cat /etc/os-release >/dev/null; sleep 0.05",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replay = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(&tree)
        .arg("stream")
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let ours = String::from_utf8_lossy(&replay.stdout).into_owned();
    let kernel = std::fs::read_to_string(tree.join("trace")).unwrap();
    let (o, k): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), kernel.lines().collect());
    assert_eq!(o.len(), k.len(), "line count");
    let mut differing = Vec::new();
    for (a, b) in o.iter().zip(&k) {
        if a != b {
            differing.push((*b, *a));
        }
    }
    for (kline, oline) in differing.iter().take(10) {
        eprintln!("kernel: {kline}\nours:   {oline}");
    }
    let rate = 1.0 - differing.len() as f64 / k.len() as f64;
    eprintln!(
        "{} of {} lines identical ({:.3}%)",
        k.len() - differing.len(),
        k.len(),
        rate * 100.0
    );
    assert!(rate >= 0.999, "match rate {rate:.5} below 99.9%");
}
