//! `tracectl perf report --sort cgroup` and `--sort cgroup_id` as perf 6.1 shows them,
//! on `--namespaces --all-cgroups` recordings of a command that moves itself into a
//! cgroup made for the test (so that the samples name two cgroups): the same table
//! from perf and from tracectl, on perf's file and on tracectl's. perf 6.1's script
//! has no `cgroup` field: both refuse `-F +cgroup` alike.
//! Skips (with the reason) without root, perf or a cgroup2 hierarchy perf uses.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::perf::{assert_same_lines, skip_reason};

fn tracectl() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

/// The cgroup2 mount, when perf counts in it: no v1 hierarchy with the perf_event
/// controller is mounted (perf would use that one).
fn cgroup2_mount() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let fields: Vec<Vec<&str>> = mounts
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let v1 = fields
        .iter()
        .any(|f| f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "perf_event"));
    if v1 {
        return None;
    }
    fields
        .iter()
        .find(|f| f.len() > 2 && f[2] == "cgroup2")
        .map(|f| PathBuf::from(f[1]))
}

/// A cgroup made for the test, removed when dropped (the test's command has ended by
/// then, which leaves it empty).
struct TestCgroup(PathBuf);

impl Drop for TestCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Record, by perf or by tracectl, a shell that joins `cgroup` and counts a while.
fn record(d: &Path, by_perf: bool, file: &str, cgroup: &Path) {
    let (tool, pre) = match by_perf {
        true => ("perf", &["record"][..]),
        false => (tracectl(), &["perf", "record"][..]),
    };
    let work = format!(
        "echo $$ > {}/cgroup.procs; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; /bin/true",
        cgroup.display()
    );
    let opts = [
        "-q",
        "-o",
        file,
        "--namespaces",
        "--all-cgroups",
        "-e",
        "task-clock",
        "-c",
        "100000",
        "--",
        "sh",
        "-c",
        &work,
    ];
    let args = [pre, &opts[..]].concat();
    let out = Command::new(tool)
        .current_dir(d)
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Standard output and error of `cmd args` in `d`, and whether it succeeded.
fn output(cmd: &str, args: &[&str], d: &Path) -> (String, String, bool) {
    let out = Command::new(cmd)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

#[test]
fn perf_report_cgroup_live_sort_keys_as_perf_shows_them() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let Some(mount) = cgroup2_mount() else {
        crate::support::skips::skip("no cgroup2 hierarchy that perf counts in");
        return;
    };
    let name = format!("tracectl-test-{}", std::process::id());
    let path = mount.join(&name);
    if let Err(e) = std::fs::create_dir(&path) {
        crate::support::skips::skip(format!(
            "cannot make a cgroup under {}: {e}",
            mount.display()
        ));
        return;
    }
    let cgroup = TestCgroup(path);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    record(d, true, "p.data", &cgroup.0);
    record(d, false, "t.data", &cgroup.0);

    for file in ["p.data", "t.data"] {
        for sort in [
            "cgroup",
            "cgroup,comm",
            "comm,cgroup",
            "cgroup_id,comm",
            "cgroup,cgroup_id",
        ] {
            let args = ["report", "--stdio", "--sort", sort, "-i", file];
            let (perf, err, ok) = output("perf", &args, d);
            assert!(ok, "perf {args:?}: {err}");
            let (ours, err, ok) = output(tracectl(), &[&["perf"][..], &args].concat(), d);
            assert!(ok, "tracectl perf {args:?}: {err}");
            assert_same_lines(&ours, &perf, &format!("perf {args:?}"));
            if sort.starts_with("cgroup,") || sort == "comm,cgroup" {
                assert!(
                    ours.contains(&format!("/{name}")),
                    "{file}: no row of the test's cgroup:\n{ours}"
                );
            }
        }
    }

    // perf 6.1 knows no `cgroup` field of perf script; neither do we.
    let args = ["script", "-F", "+cgroup", "-i", "t.data"];
    let (_, perf_err, perf_ok) = output("perf", &args, d);
    let (_, err, ok) = output(tracectl(), &[&["perf"][..], &args].concat(), d);
    assert!(
        !perf_ok && perf_err.contains("Invalid field requested"),
        "{perf_err}"
    );
    assert!(!ok && err.contains("invalid -F field 'cgroup'"), "{err}");
}
