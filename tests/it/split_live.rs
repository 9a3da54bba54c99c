//! `tracectl split` of a fresh trace-cmd recording against `trace-cmd split` of it: the
//! same parts, and `trace-cmd report` of each of ours equal to its report of trace-cmd's
//! part, `tracectl report` too. Records the top level (split takes the top buffer), under
//! the machine's lock for it, `/tmp/tracefs-top.lock`.

use std::path::Path;
use std::process::Command;

use crate::support::dat::tracecmd_record;
use crate::support::{live, tracecmd};

/// Every file of `dir` but the input, in name order.
fn parts(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "in.dat")
        .collect();
    v.sort();
    v
}

fn report(program: &str, dir: &Path, name: &str) -> Vec<u8> {
    let out = Command::new(program)
        .args(["report", "-i", name])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{program} report {name}");
    out.stdout
}

#[test]
fn split_of_a_fresh_recording_matches_trace_cmd_split() {
    if !live::ready() || tracecmd::recorder().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.dat");
    {
        let _lock = crate::support::live::TopLock::take();
        tracecmd_record(&input, &["-e", "sched", "-e", "irq", "-e", "timer"]);
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    for args in [
        &["-e", "300", "-r"][..],
        &["-m", "50", "-r"],
        &["-p", "1", "-r"],
        &["-c", "-e", "250", "-r"],
        &["-C", "0", "-u", "20000", "-r"],
        &["-e", "100"],
    ] {
        let theirs = tmp.path().join("theirs");
        let ours = tmp.path().join("ours");
        for (dir, program) in [(&theirs, "trace-cmd"), (&ours, tracectl)] {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::create_dir(dir).unwrap();
            std::fs::copy(&input, dir.join("in.dat")).unwrap();
            let out = Command::new(program)
                .args(["split", "-i", "in.dat"])
                .args(args)
                .current_dir(dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{program} split {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let names = parts(&theirs);
        assert!(!names.is_empty(), "trace-cmd split {args:?} wrote nothing");
        assert_eq!(parts(&ours), names, "split {args:?}: the parts");
        for n in &names {
            let want = report("trace-cmd", &theirs, n);
            assert!(
                report("trace-cmd", &ours, n) == want,
                "split {args:?}: trace-cmd report of our {n} differs from its own part"
            );
            assert!(
                report(tracectl, &ours, n) == want,
                "split {args:?}: tracectl report of our {n} differs from trace-cmd's part"
            );
        }
    }
}
