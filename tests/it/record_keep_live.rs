//! `record -k` (keep the tracing state afterwards) and `-K` (do not reset before), as
//! trace-cmd-record(1) documents them, on the live tracefs.

use crate::support::live;

use crate::support::dat::*;

use std::path::{Path, PathBuf};
use std::process::Command;

use tracectl::dat::DatFile;

use crate::support::live::TRACEFS;

/// Disables and removes an instance, even if an assertion fails first.
struct InstanceGuard(PathBuf);

impl Drop for InstanceGuard {
    fn drop(&mut self) {
        if self.0.exists() {
            let _ = std::fs::write(self.0.join("events/enable"), "0");
            let _ = std::fs::write(self.0.join("tracing_on"), "0");
            let _ = std::fs::remove_dir(&self.0);
        }
    }
}

fn record(args: &[&str], out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TRACEFS, "record", "-q", "-o"])
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap().trim().to_string()
}

#[test]
fn keep_after_leaves_the_private_instance_enabled_and_stopped() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.dat");
    let o = record(&["-k", "-e", "sched_switch", "--", "sleep", "0.1"], &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let name = err
        .split("kept in instance ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap_or_else(|| panic!("-k names the instance it kept: {err}"))
        .to_string();
    let inst = Path::new(TRACEFS).join("instances").join(&name);
    let _g = InstanceGuard(inst.clone());
    assert!(inst.is_dir(), "{name} kept");
    assert_eq!(read(&inst.join("events/sched/sched_switch/enable")), "1");
    assert_eq!(read(&inst.join("tracing_on")), "0");
    let dat = DatFile::open(&out).unwrap();
    assert!(
        our_counts(&dat, 0)
            .get("sched_switch")
            .copied()
            .unwrap_or(0)
            > 0
    );
    // What the message suggests cleans up.
    let o = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TRACEFS, "reset", "-B", &name, "-d"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!inst.exists(), "reset -B {name} -d removes it");
}

/// An existing instance with an event already enabled: by default the recording disables
/// it (and enables it again afterwards); with -K it stays enabled and is recorded.
#[test]
fn keep_before_records_what_was_already_enabled() {
    if !live::ready() {
        return;
    }
    let name = format!("tracectl-test-keep-{}", std::process::id());
    let inst = Path::new(TRACEFS).join("instances").join(&name);
    std::fs::create_dir(&inst).unwrap();
    let _g = InstanceGuard(inst.clone());
    std::fs::write(inst.join("events/sched/sched_waking/enable"), "1").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut counts = Vec::new();
    for (file, keep) in [("reset.dat", false), ("keep.dat", true)] {
        let out = dir.path().join(file);
        let mut args = vec!["-B", &name, "-e", "sched_switch"];
        if keep {
            args.push("-K");
        }
        args.extend(["--", "sh", "-c", "sleep 0.05; sleep 0.05; sleep 0.05"]);
        let o = record(&args, &out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let c = our_counts(&DatFile::open(&out).unwrap(), 0);
        assert!(c.get("sched_switch").copied().unwrap_or(0) > 0, "{c:?}");
        assert_eq!(
            read(&inst.join("events/sched/sched_waking/enable")),
            "1",
            "the event enabled before is enabled again (-K: {keep})"
        );
        assert_eq!(read(&inst.join("events/sched/sched_switch/enable")), "0");
        counts.push(c.get("sched_waking").copied().unwrap_or(0));
    }
    assert_eq!(counts[0], 0, "without -K the earlier event is not recorded");
    assert!(counts[1] > 0, "with -K the earlier event is recorded");
}
