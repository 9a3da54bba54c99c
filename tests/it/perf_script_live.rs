//! Fresh perf.data files recorded here by Debian's perf: `tracectl perf script` and
//! `tracectl perf report` print what `perf script` and `perf report` print on them.
//! Skips (with the reason) without root or without perf.

use std::path::Path;
use std::process::Command;

fn skip_reason() -> Option<String> {
    if !nix::unistd::Uid::effective().is_root() {
        return Some("needs root".into());
    }
    match Command::new("perf").arg("version").output() {
        Ok(o) if o.status.success() => None,
        _ => Some("perf is not installed".into()),
    }
}

fn run(cmd: &str, args: &[&str], cwd: &Path) -> String {
    let out = Command::new(cmd)
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn same(ours: &str, perf: &str, what: &str) {
    let perf: String = perf
        .lines()
        .filter(|l| !l.starts_with("# (Tip:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let ours: String = ours.lines().map(|l| format!("{l}\n")).collect();
    for (i, (o, p)) in ours.lines().zip(perf.lines()).enumerate() {
        assert_eq!(o, p, "{what}: line {} differs", i + 1);
    }
    assert_eq!(
        ours.lines().count(),
        perf.lines().count(),
        "{what}: line count"
    );
}

#[test]
fn perf_script_live_tracepoints_and_call_chains_match_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spin = d.join("spin");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs/tmp/tpf/spin"),
        &spin,
    )
    .unwrap();
    run(
        "perf",
        &[
            "record", "-q", "-o", "tp.data", "-e",
            "sched:sched_switch,sched:sched_wakeup,sched:sched_waking,irq:*,timer:*,raw_syscalls:sys_enter",
            "-a", "--", "sh", "-c", "ls / >/dev/null; sleep 0.05",
        ],
        d,
    );
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "cc.data",
            "-F",
            "999",
            "-g",
            "--",
            spin.to_str().unwrap(),
        ],
        d,
    );
    for file in ["tp.data", "cc.data"] {
        let perf = run("perf", &["script", "-i", file], d);
        let ours = run(tracectl, &["perf", "script", "-i", file], d);
        assert!(perf.lines().count() > 10, "{file}: perf printed samples");
        same(&ours, &perf, &format!("perf script -i {file}"));
        let perf = run("perf", &["report", "-i", file, "--stdio", "-g", "none"], d);
        let ours = run(
            tracectl,
            &["perf", "report", "-i", file, "--stdio", "-g", "none"],
            d,
        );
        same(&ours, &perf, &format!("perf report -i {file}"));
    }
    let report = run(
        tracectl,
        &[
            "perf",
            "report",
            "-i",
            "cc.data",
            "--no-children",
            "--stdio",
        ],
        d,
    );
    let top = report.lines().find(|l| l.contains('%')).unwrap();
    assert!(
        top.contains("hot_function"),
        "the hot function is on top: {top}"
    );
}
