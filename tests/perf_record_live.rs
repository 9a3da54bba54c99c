//! `tracectl perf record` writes perf.data files that Debian's `perf report` and
//! `perf script` read without a warning, with the samples the workload must produce.
//!
//! The workloads are this test program itself (`harness = false`, so nothing else runs in
//! the workload process): with `TRACECTL_GETPID_LOOP=N` it calls getpid(2) exactly N
//! times. The profiled program with a known hot function is a small C program built with
//! frame pointers (skipped, with the reason, without a C compiler).
//!
//! A sched_switch sample of a task that is being reaped has pid -1 (the kernel's own
//! value, which perf prints as `:-1 -1`).

use std::path::Path;
use std::process::{Command, Output};

mod perf_common;

const LOOPS: u64 = 5_000;

/// The profiled program: C built with frame pointers (Rust's test binaries have none,
/// so their call chains skip frames). It spins in `hot_spin`, called from `spin_caller`,
/// and reads /dev/zero now and then so that kernel frames are sampled too.
const SPIN_C: &str = r#"
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static char buf[65536];
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) unsigned long hot_spin(double secs, int fd) {
    volatile unsigned long x = 0;
    unsigned long r = 0;
    double end = now() + secs;
    while (now() < end) {
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005UL + i;
        if (++r % 8 == 0 && read(fd, buf, sizeof buf) < 0)
            return 0;
    }
    return x;
}
__attribute__((noinline)) unsigned long spin_caller(double secs) {
    int fd = open("/dev/zero", O_RDONLY);
    return hot_spin(secs, fd) + 1;
}
volatile unsigned long sink;
int main(int argc, char **argv) {
    sink = spin_caller(argc > 1 ? atof(argv[1]) : 0.5);
    return 0;
}
"#;

/// Whether a C compiler is there to build the profiled program (else skip `test`).
fn cc_or_skip(test: &str) -> Result<bool, String> {
    let ok = Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    perf_common::run_or_skip(test, (!ok).then(|| "no C compiler (cc)".to_string()))
}

/// Build the C workload in `dir`.
fn build_spin(dir: &Path) -> Result<std::path::PathBuf, String> {
    let src = dir.join("spin.c");
    let bin = dir.join("spin");
    std::fs::write(&src, SPIN_C).map_err(|e| e.to_string())?;
    let o = Command::new("cc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
        .arg(&bin)
        .arg(&src)
        .output()
        .map_err(|e| format!("cc: {e}"))?;
    if !o.status.success() {
        return Err(format!("cc: {}", String::from_utf8_lossy(&o.stderr)));
    }
    Ok(bin)
}

fn main() {
    if let Ok(n) = std::env::var("TRACECTL_GETPID_LOOP") {
        let n: u64 = n.parse().expect("TRACECTL_GETPID_LOOP is a number");
        for _ in 0..n {
            // SAFETY: getpid has no preconditions; the raw syscall avoids any caching.
            unsafe { libc::syscall(libc::SYS_getpid) };
        }
        std::process::exit(0);
    }
    let tests: &[(&str, perf_common::Check)] = &[
        (
            "perf_record_sched_switch_all_cpus_live",
            sched_switch_all_cpus,
        ),
        (
            "perf_record_callchain_hot_function_live",
            callchain_hot_function,
        ),
        ("perf_record_getpid_exact_live", getpid_exact),
        ("perf_record_lost_samples_live", lost_samples_counted),
        ("perf_record_group_and_pid_live", group_and_pid),
        (
            "perf_record_bad_event_leaves_no_file",
            bad_event_leaves_no_file,
        ),
    ];
    perf_common::run_checks(tests);
}

fn tracectl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
}

fn self_exe() -> String {
    std::env::current_exe()
        .expect("test binary path")
        .to_string_lossy()
        .into_owned()
}

/// Skip (with the printed reason) unless root, with the syscall tracepoints and Debian's
/// perf; under TRACECTL_REQUIRE_ALL=1 a skip is a failure.
fn live_or_skip(test: &str) -> Result<bool, String> {
    // SAFETY: geteuid has no preconditions.
    let reason = if unsafe { libc::geteuid() } != 0 {
        Some("needs root".to_string())
    } else if !Path::new("/sys/kernel/tracing/events/syscalls/sys_enter_getpid").exists() {
        Some("no tracefs with syscalls:sys_enter_getpid".into())
    } else if !Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        Some("perf is not installed (apt-get install linux-perf)".into())
    } else {
        None
    };
    perf_common::run_or_skip(test, reason)
}

fn run(mut c: Command) -> Result<Output, String> {
    c.output().map_err(|e| format!("{c:?}: {e}"))
}

/// Record with `args` into a fresh file; returns its path (and keeps the dir alive).
fn record(args: &[&str], env: &[(&str, String)]) -> Result<(tempfile::TempDir, String), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("perf.data").to_string_lossy().into_owned();
    let mut c = tracectl();
    c.args(["perf", "record", "-o", &file]).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = run(c)?;
    if !o.status.success() {
        return Err(format!(
            "tracectl perf record {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok((dir, file))
}

/// Run Debian's perf on the file; its stderr must be empty (no warning of any kind).
fn perf_clean(args: &[&str], file: &str) -> Result<String, String> {
    let mut c = Command::new("perf");
    c.args(args).args(["-i", file]);
    let o = run(c)?;
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() || !err.trim().is_empty() {
        return Err(format!(
            "perf {args:?} -i {file}: status {:?}, stderr:\n{err}",
            o.status
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

fn sched_switch_all_cpus() -> Result<(), String> {
    if !live_or_skip("perf_record_sched_switch_all_cpus_live")? {
        return Ok(());
    }
    let (_d, file) = record(
        &["-e", "sched:sched_switch", "-a", "--", "sleep", "0.2"],
        &[],
    )?;
    perf_clean(&["report", "--stdio"], &file)?;
    let script = perf_clean(&["script"], &file)?;
    let line = regex::Regex::new(
        r"^ *\S.* +-?\d+ \[\d{3}\] +\d+\.\d{6}: +sched:sched_switch: prev_comm=.* prev_pid=\d+ prev_prio=\d+ prev_state=\S+ ==> next_comm=.* next_pid=\d+ next_prio=\d+$",
    )
    .unwrap();
    let lines: Vec<&str> = script.lines().collect();
    if lines.is_empty() {
        return Err("perf script printed no sample".into());
    }
    if let Some(bad) = lines.iter().find(|l| !line.is_match(l)) {
        return Err(format!("not a sched_switch sample line: {bad:?}"));
    }
    // The sleep itself switched out at least once, on some CPU.
    if !lines.iter().any(|l| l.contains("prev_comm=sleep")) {
        return Err("no sched_switch of the sleep command".into());
    }
    Ok(())
}

fn callchain_hot_function() -> Result<(), String> {
    if !live_or_skip("perf_record_callchain_hot_function_live")?
        || !cc_or_skip("perf_record_callchain_hot_function_live")?
    {
        return Ok(());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let spin = build_spin(dir.path())?;
    let spin = spin.to_string_lossy();
    let (_d, file) = record(&["-F", "999", "-g", "--", &spin, "0.7"], &[])?;
    let report = perf_clean(&["report", "--stdio", "--no-children"], &file)?;
    // The first entry is the hot function, its call graph naming the caller.
    let mut entries = report
        .split("\n\n")
        .filter(|b| b.lines().any(|l| l.contains('%') && !l.starts_with('#')));
    let top = entries.next().ok_or("perf report printed no entry")?;
    let head = top
        .lines()
        .find(|l| !l.starts_with('#') && l.contains('%'))
        .unwrap_or("");
    if !head.ends_with("[.] hot_spin") {
        return Err(format!("the top entry is not hot_spin: {head:?}\n{report}"));
    }
    let under: Vec<&str> = top
        .lines()
        .map(|l| l.trim_start_matches([' ', '|', '-']))
        .collect();
    let at = under
        .iter()
        .position(|l| *l == "---hot_spin" || *l == "hot_spin");
    if at.map_or(true, |i| under.get(i + 1) != Some(&"spin_caller")) {
        return Err(format!("the caller is not under the hot function:\n{top}"));
    }
    // Kernel frames are symbolized (from kallsyms), none left as raw addresses.
    let script = perf_clean(&["script"], &file)?;
    let kframes: Vec<&str> = script
        .lines()
        .filter(|l| l.ends_with("([kernel.kallsyms])"))
        .collect();
    if kframes.is_empty() {
        return Err("no kernel frame in any call chain".into());
    }
    if let Some(bad) = kframes.iter().find(|l| l.contains("[unknown]")) {
        return Err(format!("kernel frame not symbolized: {bad:?}"));
    }
    Ok(())
}

/// Exactly the getpid calls made, as samples; and a second recording into the same file
/// keeps the first as `perf.data.old`.
fn getpid_exact() -> Result<(), String> {
    if !live_or_skip("perf_record_getpid_exact_live")? {
        return Ok(());
    }
    let exe = self_exe();
    let (_d, file) = record(
        &["-e", "syscalls:sys_enter_getpid", "--", &exe],
        &[("TRACECTL_GETPID_LOOP", LOOPS.to_string())],
    )?;
    perf_clean(&["report", "--stdio"], &file)?;
    let script = perf_clean(&["script"], &file)?;
    let n = script
        .lines()
        .filter(|l| l.contains("syscalls:sys_enter_getpid:"))
        .count();
    let total = script.lines().count();
    if n as u64 != LOOPS || total != n {
        return Err(format!(
            "perf script printed {n} getpid samples ({total} lines), expected exactly {LOOPS}"
        ));
    }
    // Recording again into the same file keeps the first one as perf.data.old, as perf does.
    let first = std::fs::read(&file).map_err(|e| e.to_string())?;
    let mut c = tracectl();
    c.args(["perf", "record", "-o", &file])
        .args(["-e", "syscalls:sys_enter_getpid", "--", "true"]);
    let o = run(c)?;
    if !o.status.success() {
        return Err(format!(
            "second record failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    if std::fs::read(format!("{file}.old")).ok() != Some(first) {
        return Err(format!("{file}.old is not the first recording"));
    }
    perf_clean(&["script"], &file)?;
    Ok(())
}

/// With a one-page ring, much of a burst of getpid samples is lost: the samples in the
/// file and the losses the kernel counted add up to the calls made. The kernel's count
/// also takes in the side-band records it dropped (the command's COMM, MMAP2s and EXIT),
/// so the sum may pass the calls by those few. perf report sees the same total in the
/// file (its LOST_SAMPLES records) and the LOST records the rings carried.
fn lost_samples_counted() -> Result<(), String> {
    if !live_or_skip("perf_record_lost_samples_live")? {
        return Ok(());
    }
    let n: u64 = 200_000;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("perf.data").to_string_lossy().into_owned();
    let exe = self_exe();
    let mut c = tracectl();
    c.args(["perf", "record", "-m", "1", "-o", &file])
        .args(["-e", "syscalls:sys_enter_getpid", "--", &exe])
        .env("TRACECTL_GETPID_LOOP", n.to_string());
    let o = run(c)?;
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() {
        return Err(format!("tracectl perf record -m 1 failed: {err}"));
    }
    let lost: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("Warning: ")?.split(' ').next()?.parse().ok())
        .unwrap_or(0);
    let mut c = Command::new("perf");
    c.args(["script", "-i", &file]);
    let script = run(c)?;
    let samples = String::from_utf8_lossy(&script.stdout)
        .lines()
        .filter(|l| l.contains("syscalls:sys_enter_getpid:"))
        .count() as u64;
    if lost == 0 {
        return Err(format!(
            "no loss reported with a one-page ring ({samples} samples of {n}):\n{err}"
        ));
    }
    if samples > n || samples + lost < n || samples + lost > n + 64 {
        return Err(format!(
            "{samples} samples + {lost} lost do not account for {n} getpid calls\n{err}"
        ));
    }
    // perf sees the same losses in the file.
    let mut c = Command::new("perf");
    c.args(["report", "--stdio", "-i", &file]);
    let report = run(c)?;
    let rerr = String::from_utf8_lossy(&report.stderr);
    let rout = String::from_utf8_lossy(&report.stdout);
    if !rout.contains(&format!("# Total Lost Samples: {lost}\n")) {
        return Err(format!(
            "perf report does not count the {lost} lost samples:\n{rout}"
        ));
    }
    if !rerr.contains("lost") {
        return Err(format!(
            "perf report does not see the PERF_RECORD_LOST records: {rerr}"
        ));
    }
    Ok(())
}

/// A group of two clocks sampled in a process that already runs (-p): perf report reads
/// it as perf's own group, puts the hot function on top, and the recording ends with the
/// process (whose maps were synthesized from /proc, so its symbols resolve).
fn group_and_pid() -> Result<(), String> {
    if !live_or_skip("perf_record_group_and_pid_live")?
        || !cc_or_skip("perf_record_group_and_pid_live")?
    {
        return Ok(());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let spin = build_spin(dir.path())?;
    let mut target = Command::new(&spin)
        .arg("3")
        .spawn()
        .map_err(|e| format!("{}: {e}", spin.display()))?;
    // Let it reach its hot loop (and map everything) before attaching.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let pid = target.id().to_string();
    let rec = record(&["-e", "{cpu-clock,task-clock}", "-p", &pid], &[]);
    let _ = target.wait();
    let (_d, file) = rec?;
    let report = perf_clean(&["report", "--stdio"], &file)?;
    if !report.contains("of events 'anon group { cpu-clock, task-clock }'") {
        return Err(format!("not read as a group:\n{report}"));
    }
    let top = report
        .lines()
        .find(|l| !l.starts_with('#') && l.contains('%'))
        .unwrap_or("");
    if !top.ends_with("[.] hot_spin") {
        return Err(format!("the top entry is not hot_spin: {top:?}\n{report}"));
    }
    Ok(())
}

fn bad_event_leaves_no_file() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("perf.data");
    std::fs::write(&file, b"old").map_err(|e| e.to_string())?;
    let mut c = tracectl();
    c.args(["perf", "record", "-o"])
        .arg(&file)
        .args(["-e", "no_such_event_xyz", "--", "true"]);
    let o = run(c)?;
    if o.status.success() {
        return Err("an unknown event was accepted".into());
    }
    if std::fs::read(&file).map_err(|e| e.to_string())? != b"old" {
        return Err("the existing perf.data was changed by a failed record".into());
    }
    if dir.path().join("perf.data.old").exists() {
        return Err("a failed record renamed the existing file".into());
    }
    Ok(())
}
