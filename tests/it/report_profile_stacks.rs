//! `tracectl report --profile` of recordings with kernel stacks (`tests/data/tracecmd/
//! profile-stacks/`, see make-stacks.sh and make-results.sh there): the stack trees under
//! the entries, as trace-cmd 3.1.6 prints them.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::report_wakeup_profile::difference;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd/profile-stacks")
}

#[test]
fn report_profile_stack_trees_match_trace_cmd_goldens() {
    let modes = std::fs::read_to_string(data().join("modes.tsv")).unwrap();
    let mut failures = Vec::new();
    let mut trees = 0;
    for stem in ["triggers", "stacktrace-option"] {
        for line in modes
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let mut f = line.split('\t');
            let mode = f.next().unwrap();
            let args: Vec<&str> = f.collect();
            let golden = data()
                .join("results")
                .join(stem)
                .join(format!("{mode}.txt.zst"));
            let want = zstd::decode_all(&std::fs::read(&golden).unwrap()[..]).unwrap();
            trees += String::from_utf8_lossy(&want)
                .lines()
                .filter(|l| l.trim_start().starts_with("+ "))
                .count();
            let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
                .current_dir(data())
                .arg("report")
                .args(&args)
                .args(["-i", &format!("{stem}.dat")])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            if let Some(d) = difference(&want, &out.stdout, true) {
                failures.push(format!("{stem} `report {}`: {d}", args.join(" ")));
            }
        }
    }
    // Branches in both recordings (switches, wakeups, and with -T every sched event).
    assert!(trees > 300, "only {trees} branches in the goldens");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
