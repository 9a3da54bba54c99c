//! How long `tracectl record` takes to stop after SIGINT or SIGTERM, at several moments
//! of `record -- sleep 5` and without a command, side by side with `trace-cmd record`
//! (through `scripts/trace-cmd-record`) where it can record. Needs root and tracefs.
//! trace-cmd only gets SIGINT: SIGTERM kills it before it puts tracefs back (its events
//! would stay enabled in the top-level instance).
//!
//! Run with `cargo bench --bench record_stop`. (tests/it/record_live.rs checks that each
//! stop leaves a valid file and no instance; the time it takes is measured here.)

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Start `cmd`, signal it after `after_ms`, and time its exit.
fn stop_time(mut cmd: Command, sig: i32, after_ms: u64) -> Duration {
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(after_ms));
    unsafe { libc::kill(child.id() as i32, sig) };
    let t0 = Instant::now();
    child.wait().unwrap();
    t0.elapsed()
}

fn main() {
    if unsafe { libc::geteuid() } != 0 || !Path::new("/sys/kernel/tracing/instances").is_dir() {
        println!("record_stop: needs root and tracefs at /sys/kernel/tracing");
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let recorder = repo.join("scripts/trace-cmd-record");
    let trace_cmd = repo.join("target/tracecmd-shim.so").exists()
        && Command::new("trace-cmd").arg("--help").output().is_ok();
    let dir = tempfile::tempdir().unwrap();
    println!("signal  after  command   tracectl   trace-cmd");
    for (sig, name) in [(libc::SIGINT, "INT"), (libc::SIGTERM, "TERM")] {
        for (after_ms, with_cmd) in [(30u64, true), (400, true), (1200, true), (300, false)] {
            let run = |exe: &Path, extra: &[&str]| {
                let mut c = Command::new(exe);
                c.args(extra)
                    .args(["record", "-q", "-e", "sched", "-e", "irq", "-o"])
                    .arg(dir.path().join("stop.dat"))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                if with_cmd {
                    c.args(["--", "sleep", "5"]);
                }
                stop_time(c, sig, after_ms)
            };
            let ours = run(Path::new(env!("CARGO_BIN_EXE_tracectl")), &[]);
            let theirs = (trace_cmd && sig == libc::SIGINT).then(|| run(&recorder, &[]));
            println!(
                "{name:>6} {after_ms:>5}ms {:>8} {:>9.0}ms {:>10}",
                if with_cmd { "sleep 5" } else { "none" },
                ours.as_secs_f64() * 1e3,
                theirs.map_or("-".into(), |t| format!("{:.0}ms", t.as_secs_f64() * 1e3))
            );
        }
    }
}
