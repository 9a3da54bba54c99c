//! An interrupted split leaves nothing behind: SIGINT or SIGTERM in the middle of a long
//! split (one part per record of a recording with thousands) removes the `.partial`
//! parts already written, and the library's stop flag does the same.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tracectl::session::split::{split_until, SplitBy, SplitError, SplitOptions};

const INPUT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/tracecmd/wakeup/sched-irq-sys.dat"
);

/// The files of `dir` but the input, in name order.
fn left(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "in.dat")
        .collect();
    v.sort();
    v
}

#[test]
fn a_signal_during_split_removes_the_partial_parts() {
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(INPUT, dir.path().join("in.dat")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .args(["split", "-i", "in.dat", "-e", "1", "-r"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for the first parts to be on disk.
        let begin = Instant::now();
        while !left(dir.path()).iter().any(|n| n.ends_with(".partial")) {
            assert!(
                begin.elapsed() < Duration::from_secs(60),
                "no .partial part after a minute"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "split ended before it could be interrupted"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        kill(Pid::from_raw(child.id() as i32), signal).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{signal}: {err}");
        assert!(err.contains("interrupted; no part was written"), "{err}");
        assert_eq!(left(dir.path()), Vec::<String>::new(), "{signal}");
    }
}

#[test]
fn a_set_stop_flag_writes_no_part() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.dat");
    std::fs::copy(INPUT, &input).unwrap();
    let opts = SplitOptions {
        input,
        output: None,
        by: Some(SplitBy::Events(100)),
        repeat: true,
        per_cpu: false,
        cpu: None,
        start_ns: 0,
        end_ns: 0,
    };
    let stop = AtomicBool::new(true);
    assert!(matches!(
        split_until(&opts, &stop),
        Err(SplitError::Interrupted)
    ));
    assert_eq!(left(dir.path()), Vec::<String>::new());
    // Not stopped, the same split writes its parts.
    stop.store(false, std::sync::atomic::Ordering::Relaxed);
    let summary = split_until(&opts, &stop).unwrap();
    assert!(summary.parts.len() > 10);
    assert_eq!(left(dir.path()).len(), summary.parts.len());
}
