//! `tracectl perf record --max-size=SIZE`: as perf 6.1, the recording stops after the
//! write that reaches SIZE, says so (`[ perf record: perf size limit reached (N KB),
//! stopping session ]`), ends the command with SIGTERM (exit status 143) and leaves a
//! file that perf reads without a warning; a size without a unit is refused with perf's
//! usage status before anything runs. Skips (with the reason) without root or perf.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::perf::{run_clean, skip_reason};

/// A workload that never ends by itself.
const ENDLESS: &str = "while :; do ls -R /usr/lib >/dev/null; done";

fn record(tool: &str, d: &Path, file: &str, opts: &[&str]) -> Output {
    let (bin, pre) = match tool {
        "perf" => ("perf", &["record"][..]),
        _ => (env!("CARGO_BIN_EXE_tracectl"), &["perf", "record"][..]),
    };
    let args = [pre, &["-o", file], opts, &["--", "sh", "-c", ENDLESS]].concat();
    Command::new(bin)
        .current_dir(d)
        .args(&args)
        .output()
        .unwrap()
}

/// The N of `[ perf record: perf size limit reached (N KB), stopping session ]`.
fn limit_kb(stderr: &str) -> Option<u64> {
    stderr.lines().find_map(|l| {
        l.strip_prefix("[ perf record: perf size limit reached (")?
            .strip_suffix(" KB), stopping session ]")?
            .parse()
            .ok()
    })
}

#[test]
fn perf_record_limit_live_max_size_stops_the_session() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for tool in ["perf", "tracectl"] {
        let file = format!("{tool}.data");
        let out = record(tool, d, &file, &["--max-size=20K", "-F", "4999"]);
        let err = String::from_utf8_lossy(&out.stderr);
        // perf dies of the command's SIGTERM (which it raises on itself); tracectl
        // exits with the shell's status for it.
        use std::os::unix::process::ExitStatusExt as _;
        let status = out.status.code().or(out.status.signal().map(|s| 128 + s));
        assert_eq!(status, Some(143), "{tool}: {err}");
        let kb = limit_kb(&err).unwrap_or_else(|| panic!("{tool}: no limit line:\n{err}"));
        assert!(kb >= 20, "{tool}: stopped at {kb} KB");
        let lines: Vec<&str> = err.lines().collect();
        let at = lines.iter().position(|l| l.contains("size limit")).unwrap();
        assert!(
            lines[at + 1].starts_with("[ perf record: Woken up ")
                && lines[at + 2].starts_with("[ perf record: Captured and wrote "),
            "{tool}: {err}"
        );
        let stats = run_clean("perf", &["report", "--stats", "-i", &file], d);
        assert!(stats.contains("SAMPLE events:"), "{tool}: {stats}");
        // Stopped: far less than the endless workload would write.
        let size = std::fs::metadata(d.join(&file)).unwrap().len();
        assert!(size < 4 << 20, "{tool}: {size} bytes");
    }
    let ours = run_clean(
        env!("CARGO_BIN_EXE_tracectl"),
        &["perf", "script", "-i", "tracectl.data"],
        d,
    );
    let perf = run_clean("perf", &["script", "-i", "tracectl.data"], d);
    assert_eq!(ours, perf);

    // A size without its unit: perf's usage status, nothing run, no file.
    for tool in ["perf", "tracectl"] {
        let out = record(tool, d, "bad.data", &["--max-size=20"]);
        assert_eq!(out.status.code(), Some(129), "{tool}");
        assert!(!d.join("bad.data").exists(), "{tool}");
    }
}
