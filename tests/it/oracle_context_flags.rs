//! The kernel's latency columns in every state a tree shows them: irqs-off (`d`, `D`,
//! `b`), need-resched with the lazy bit (`l`), NMI (`Z`), softirq and hardirq, preempt
//! depth and the migrate-disable depth. The tree `debian-6.12-rt-lazy-nmi` was captured
//! on Debian's PREEMPT_RT 6.12 kernel booted with `preempt=lazy` (spinlocks disable
//! migration there), with `echo l > /proc/sysrq-trigger` sending NMIs (`nmi:nmi_handler`
//! fires in NMI context). Its `trace` text is the kernel's, so a renderer that prints `.`
//! for any of these columns fails here.

use crate::support::skips;

use std::path::{Path, PathBuf};
use std::process::Command;

fn tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/debian-6.12-rt-lazy-nmi")
}

/// The five latency characters of a `trace` line (`d.Z1.`), after `[cpu] `.
fn flags(line: &str) -> Option<&str> {
    let at = line.find("] ")? + 2;
    line.get(at..at + 5)
}

#[test]
fn the_kernel_text_shows_every_column_in_a_non_default_state() {
    let text = std::fs::read_to_string(tree().join("trace")).unwrap();
    let cols: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(flags)
        .collect();
    assert!(cols.len() > 500, "{} lines", cols.len());
    let any = |i: usize, set: &str| cols.iter().any(|c| set.contains(&c[i..i + 1]));
    assert!(
        any(0, "d") && any(0, "D") && any(0, "b"),
        "irqs-off/BH-disabled"
    );
    assert!(
        any(1, "N") && any(1, "lLbB"),
        "need-resched and its lazy bit"
    );
    assert!(
        any(2, "zZ") && any(2, "h") && any(2, "s"),
        "NMI, hardirq, softirq"
    );
    assert!(any(3, "123456789abcdef"), "preempt depth");
    assert!(any(4, "123456789abcdef"), "migrate-disable depth");
    assert!(text.contains("#                              ||| / _-=> migrate-disable"));
}

#[test]
fn replay_prints_the_latency_columns_as_the_kernel_did() {
    let dir = tree();
    if !dir.join("trace").exists() {
        skips::skip("tracefs-fixtures/debian-6.12-rt-lazy-nmi is not in this checkout");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(&dir)
        .args(["stream", "--style", "kernel"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kernel = std::fs::read_to_string(dir.join("trace")).unwrap();
    let ours = String::from_utf8(out.stdout).unwrap();
    let first = kernel.lines().zip(ours.lines()).position(|(k, o)| k != o);
    assert!(
        ours == kernel,
        "first difference at line {:?}:\n  kernel: {:?}\n  ours:   {:?}",
        first.map(|i| i + 1),
        first.and_then(|i| kernel.lines().nth(i)),
        first.and_then(|i| ours.lines().nth(i)),
    );
}
