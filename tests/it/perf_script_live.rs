//! Fresh perf.data files recorded here by Debian's perf: `tracectl perf script` and
//! `tracectl perf report` print what `perf script` and `perf report` print on them.
//! Skips (with the reason) without root or without perf.

use std::path::{Path, PathBuf};

use crate::support::perf::{
    build_fixture_program, cc_missing, rebuild_spin_renamed, run, run_with_env, skip_reason,
};

fn same(ours: &str, perf: &str, what: &str) {
    crate::support::perf::assert_same_lines(ours, perf, what);
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

/// Profiling a program whose hot function is called most from one caller: the report
/// puts the hot function on top with that caller first under it, and prints what perf
/// report prints for the same file (call graphs included).
#[test]
fn perf_report_live_call_graph_puts_the_hot_function_on_top_with_its_caller_under_it() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // tests/data/perf/calls.c: hot() runs 3M loops under caller_a, 1.5M under
    // caller_b and 0.5M under rec.
    let calls = d.join("calls");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs/tmp/tpf/calls"),
        &calls,
    )
    .unwrap();
    run(
        tracectl,
        &[
            "perf",
            "record",
            "-F",
            "999",
            "-g",
            "-o",
            "calls.data",
            "--",
            calls.to_str().unwrap(),
        ],
        d,
    );
    let report = run(
        tracectl,
        &[
            "perf",
            "report",
            "-i",
            "calls.data",
            "--no-children",
            "--stdio",
        ],
        d,
    );
    let mut lines = report.lines().skip_while(|l| !l.contains('%'));
    let top = lines.next().unwrap();
    assert!(
        top.ends_with("[.] hot"),
        "the hot function is on top: {top}"
    );
    let graph: Vec<&str> = lines.take_while(|l| !l.is_empty()).collect();
    assert_eq!(graph.get(1).map(|l| l.trim()), Some("---hot"), "{graph:?}");
    let first_branch = graph.iter().find(|l| l.contains("%--")).unwrap();
    assert!(
        first_branch.ends_with("--caller_a"),
        "caller_a, the biggest caller, comes first under hot: {graph:#?}"
    );
    for caller in ["caller_b", "rec"] {
        assert!(
            graph.iter().any(|l| l.ends_with(&format!("--{caller}"))),
            "{caller} is under hot too: {graph:#?}"
        );
    }
    for args in [&["--stdio"][..], &["--stdio", "--no-children"]] {
        let mut a = vec!["report", "-i", "calls.data"];
        a.extend_from_slice(args);
        let perf = run("perf", &a, d);
        let mut a = vec!["perf", "report", "-i", "calls.data"];
        a.extend_from_slice(args);
        let ours = run(tracectl, &a, d);
        same(&ours, &perf, &format!("perf report {args:?}"));
    }
}

/// A file `tracectl perf record -a` writes carries each CPU's core and socket id in
/// CPU_TOPOLOGY, as perf's do: perf's `--sort socket` shows the host's sockets (not
/// `-001`), and `tracectl perf report` prints the same table.
#[test]
fn perf_report_live_socket_of_an_own_recording_matches_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run(
        tracectl,
        &[
            "perf",
            "record",
            "-e",
            "cpu-clock",
            "-F",
            "499",
            "-a",
            "-o",
            "own.data",
            "--",
            "sleep",
            "0.1",
        ],
        d,
    );
    let args = [
        "report",
        "-i",
        "own.data",
        "--stdio",
        "-g",
        "none",
        "--sort",
        "socket,cpu",
    ];
    let perf = run("perf", &args, d);
    assert!(
        !perf.lines().any(|l| l.contains('%') && l.contains("-001")),
        "perf finds the sockets of the CPUs: {perf}"
    );
    let ours = run(tracectl, &[&["perf"][..], &args].concat(), d);
    same(&ours, &perf, "--sort socket,cpu");
}

/// Whether perf (with root) and a C compiler are here; when not, the reason is printed
/// as a skip.
fn perf_and_cc() -> bool {
    match skip_reason().or_else(|| cc_missing().map(str::to_string)) {
        Some(why) => {
            crate::support::skips::skip(why);
            false
        }
        None => true,
    }
}

/// Removes a file when dropped (a JIT's perf map in /tmp, whatever the test's outcome).
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A JIT in miniature (tests/data/perf/jit.c) runs code in anonymous executable memory
/// that it names in /tmp/perf-PID.map: `perf script` names the frames from that map,
/// lines perf parses its own way and entries that overlap included, and `perf report`
/// shows the object as `[JIT] tid PID`; ours print the same.
#[test]
fn perf_script_live_jit_frames_are_named_from_the_perf_map() {
    if !perf_and_cc() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("jit", d);
    let out = run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "jit.data",
            "-e",
            "cpu-clock",
            "-g",
            "--",
            "./jit",
        ],
        d,
    );
    let pid: i32 = out.trim().lines().last().unwrap().parse().unwrap();
    let map = RemoveOnDrop(format!("/tmp/perf-{pid}.map").into());
    assert!(map.0.exists(), "the program wrote {}", map.0.display());
    let perf = run("perf", &["script", "-i", "jit.data"], d);
    // jit_spin is one of three entries at its address, which perf's tree lookup
    // chooses; jit_tail_nam is the last line, without its newline and its last byte.
    for name in ["jit_spin+0x", "jit spin two [tier 2]+0x", "jit_tail_nam+0x"] {
        assert!(perf.contains(name), "perf named a frame {name}");
    }
    let ours = run(tracectl, &["perf", "script", "-i", "jit.data"], d);
    same(&ours, &perf, "perf script on a JIT");
    for args in [
        &["--stdio"][..],
        &["--stdio", "-g", "none", "--sort", "dso,sym"],
    ] {
        let mut a = vec!["report", "-i", "jit.data"];
        a.extend_from_slice(args);
        let perf = run("perf", &a, d);
        assert!(perf.contains(&format!("[JIT] tid {pid}")), "{perf}");
        let mut a = vec!["perf", "report", "-i", "jit.data"];
        a.extend_from_slice(args);
        let ours = run(tracectl, &a, d);
        same(&ours, &perf, &format!("perf report {args:?} on a JIT"));
    }
}

/// The JIT of the test above, run in its own pid and mount namespaces with a /tmp of
/// its own: it writes its map as /tmp/perf-1.map there. While it lives, perf 6.1
/// reads that map through the process's namespaces (the last `NStgid` of its status)
/// and names the frames from it, under the object /tmp/perf-HOSTPID.map; ours do the
/// same.
#[test]
fn perf_script_live_jit_in_other_namespaces_is_named_from_its_own_map() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    if !perf_and_cc() {
        return;
    }
    let in_namespaces = |cmd: &str| {
        let mut c = Command::new("unshare");
        c.args(["--pid", "--fork", "--mount-proc", "sh", "-c"]);
        c.arg(format!("mount -t tmpfs tmpfs /tmp && {cmd}"));
        c
    };
    if !in_namespaces("true")
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        crate::support::skips::skip(
            "cannot run a program in new pid and mount namespaces \
             (unshare --pid --fork --mount-proc, then mount a tmpfs)",
        );
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    // Not under /tmp, which the program's namespace covers with its own (so that the
    // program's file is the same file inside and out).
    let Some(dir) = scratch_outside_tmp() else {
        return;
    };
    let d = dir.path();
    build_fixture_program("jit", d);
    let mut child = in_namespaces("exec ./jit 2000000 hold")
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Closing its input ends the program, whatever happens below.
    struct EndOnDrop(std::process::Child);
    impl Drop for EndOnDrop {
        fn drop(&mut self) {
            drop(self.0.stdin.take());
            let _ = self.0.wait();
        }
    }
    let unshare_pid = child.id();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut child = EndOnDrop(child);
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(
        line, "ready 1\n",
        "the program runs as pid 1 of its namespace"
    );
    let children =
        std::fs::read_to_string(format!("/proc/{unshare_pid}/task/{unshare_pid}/children"))
            .unwrap();
    let pid = children.trim().to_string();
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "ns.data",
            "-e",
            "cpu-clock",
            "-g",
            "-p",
            &pid,
            "--",
            "sleep",
            "0.5",
        ],
        d,
    );
    let stdin = child.0.stdin.as_mut().unwrap();
    stdin.write_all(b"stop\n").unwrap();
    stdin.flush().unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "stopped\n");
    assert!(
        !Path::new("/tmp/perf-1.map").exists()
            && !Path::new(&format!("/tmp/perf-{pid}.map")).exists(),
        "the map is in the program's own /tmp only"
    );
    let perf = run("perf", &["script", "-i", "ns.data"], d);
    assert!(
        perf.contains(&format!("jit_spin+0x6 (/tmp/perf-{pid}.map)")),
        "perf named a frame from the map: {}",
        &perf[..perf.len().min(2000)]
    );
    let ours = run(tracectl, &["perf", "script", "-i", "ns.data"], d);
    same(&ours, &perf, "perf script on a JIT in other namespaces");
    let perf = run("perf", &["report", "-i", "ns.data", "--stdio"], d);
    let ours = run(tracectl, &["perf", "report", "-i", "ns.data", "--stdio"], d);
    same(&ours, &perf, "perf report on a JIT in other namespaces");
}

/// A scratch directory outside /tmp: the build's own, or /var/tmp when the build itself
/// lives under /tmp. None (the test skipped, with the reason) when there is neither.
fn scratch_outside_tmp() -> Option<tempfile::TempDir> {
    let base = [env!("CARGO_TARGET_TMPDIR"), "/var/tmp"]
        .into_iter()
        .find(|b| !Path::new(b).starts_with("/tmp") && Path::new(b).is_dir());
    let Some(base) = base else {
        crate::support::skips::skip(
            "no scratch directory outside /tmp (the build is under /tmp and /var/tmp is missing)",
        );
        return None;
    };
    Some(tempfile::tempdir_in(base).unwrap())
}

/// `sh -c "mount -t tmpfs tmpfs DIR && CMD"` in a mount namespace of its own
/// (`unshare --mount --fork --kill-child`): the tmpfs over `dir` is the namespace's
/// only, and the program ends with the unshare the test started, the namespace (with
/// the tmpfs in it) with the program.
fn in_mount_namespace(dir: &Path, cmd: &str) -> std::process::Command {
    let mut c = std::process::Command::new("unshare");
    c.args(["--mount", "--fork", "--kill-child", "sh", "-c"]);
    c.arg(format!("mount -t tmpfs tmpfs '{}' && {cmd}", dir.display()));
    c
}

/// Whether a program can run here in a mount namespace of its own with a tmpfs over
/// `dir`; when not, the test is skipped with the reason.
fn mount_namespaces_work(dir: &Path) -> bool {
    let ok = in_mount_namespace(dir, "true")
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        crate::support::skips::skip(
            "cannot run a program in a new mount namespace (unshare --mount, then mount a tmpfs)",
        );
    }
    ok
}

/// The set-up of the namespace tests: a scratch directory with two builds of
/// tests/data/perf/nsspin.c, `stage/prog` spinning in `spin_inside` (with line tables)
/// and `app/prog` in `spin_onhost` (without, so a source line shows which file
/// addr2line read), and the directory `app` a mount namespace can cover. None (with
/// the reason printed) when perf, root, cc or mount namespaces are missing.
pub(crate) fn two_builds_of_nsspin() -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    if !perf_and_cc() {
        return None;
    }
    let dir = scratch_outside_tmp()?;
    let d = dir.path();
    let app = d.join("app");
    let prog = app.join("prog");
    std::fs::create_dir_all(d.join("stage")).unwrap();
    std::fs::create_dir_all(&app).unwrap();
    build_nsspin(d, "spin_inside", "-g", &d.join("stage/prog"));
    build_nsspin(d, "spin_onhost", "-g0", &prog);
    if !mount_namespaces_work(&app) {
        return None;
    }
    Some((dir, app, prog))
}

/// Builds tests/data/perf/nsspin.c in `dir` as `out`, spinning in a function named
/// `spin`, with line tables or not (`-g`, `-g0`: the code is the same).
fn build_nsspin(dir: &Path, spin: &str, debug: &str, out: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/nsspin.c");
    let define = format!("-DSPIN={spin}");
    let args = [debug, "-O1", "-fno-omit-frame-pointer", &define, "-o"];
    let mut a: Vec<&str> = args.to_vec();
    a.extend([out.to_str().unwrap(), src.to_str().unwrap()]);
    run("cc", &a, dir);
}

/// A running tests/data/perf/nsspin.c, ended on every path: closing its input ends it;
/// should it not end, killing the command that started it (an unshare with
/// `--kill-child`) kills it.
pub(crate) struct Spinner {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
    /// Its pid, as it printed it (`ready PID`).
    pub(crate) pid: String,
}

impl Spinner {
    /// Starts `cmd` and waits until the program says it spins.
    fn start(mut cmd: std::process::Command) -> Spinner {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let mut s = Spinner {
            child,
            out,
            pid: String::new(),
        };
        s.pid = line
            .strip_prefix("ready ")
            .unwrap_or_else(|| panic!("the program started: {line:?}"))
            .trim()
            .to_string();
        s
    }

    /// Starts, in a mount namespace covering `app`, the build `stage/prog` of the
    /// scratch directory `d` copied over `prog` there (see [`two_builds_of_nsspin`]).
    pub(crate) fn start_staged_inside(d: &Path, app: &Path, prog: &Path) -> Spinner {
        Spinner::start(in_mount_namespace(
            app,
            &format!(
                "cp '{}' '{}' && exec '{}'",
                d.join("stage/prog").display(),
                prog.display(),
                prog.display()
            ),
        ))
    }

    /// Stops the spinning; the program stays until its input ends.
    fn stop(&mut self) {
        use std::io::{BufRead, Write};
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(b"stop\n").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        assert_eq!(line, "stopped\n");
    }

    /// Ends the program.
    pub(crate) fn end(&mut self) {
        drop(self.child.stdin.take());
        for _ in 0..100 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.end();
    }
}

/// `tracectl perf script` and `perf report --stdio` print what perf's print on each
/// file in `d`, and `--sort dso,sym,srcline` the same rows of the program `prog`.
fn same_as_perf_with_lines(d: &Path, files: &[&str], when: &str) {
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let srcline = ["--stdio", "-g", "none", "--sort", "dso,sym,srcline"];
    for file in files {
        let perf = run("perf", &["script", "-i", file], d);
        let ours = run(tracectl, &["perf", "script", "-i", file], d);
        same(&ours, &perf, &format!("perf script -i {file} {when}"));
        let perf = run("perf", &["report", "-i", file, "--stdio"], d);
        let ours = run(tracectl, &["perf", "report", "-i", file, "--stdio"], d);
        same(&ours, &perf, &format!("perf report -i {file} {when}"));
        // The program's rows only: perf 6.1 here leaves some of libc's lines unnamed
        // in some recordings (not ours to match in these tests).
        let own = |t: &str| -> String {
            t.lines()
                .filter(|l| l.contains("  prog  "))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        let perf = own(&run(
            "perf",
            &[&["report", "-i", file][..], &srcline].concat(),
            d,
        ));
        let ours = own(&run(
            tracectl,
            &[&["perf", "report", "-i", file][..], &srcline].concat(),
            d,
        ));
        assert!(!perf.is_empty(), "perf showed the program's lines");
        same(
            &ours,
            &perf,
            &format!("perf report -i {file} {srcline:?} {when}"),
        );
    }
}

/// Records cpu-clock samples with call chains of the processes `pids` (comma
/// separated) for half a second into `ids.data`, and into `noids.data` without build
/// ids (`-B`). `-N`: the build-id cache, where perf would keep a copy of each file, is
/// left alone.
fn record_with_and_without_build_ids(d: &Path, pids: &str) {
    for (file, no_ids) in [("ids.data", false), ("noids.data", true)] {
        let mut a = vec!["record", "-q", "-N", "-o", file, "-e", "cpu-clock", "-g"];
        if no_ids {
            a.push("-B");
        }
        a.extend(["-p", pids, "--", "sleep", "0.5"]);
        run("perf", &a, d);
    }
}

/// A program (tests/data/perf/nsspin.c) copied only into a mount namespace of its own,
/// at a path where the host has another build of it whose spinning function has another
/// name, profiled with call chains by perf. While it lives, perf 6.1 reads the file
/// inside the namespace (frames in `spin_inside`); once it is gone, perf reads the
/// host's file at the recorded path: with the build ids recorded, that file's build id
/// differs and its frames stay `[unknown]`; without them (`-B`), they are named from the
/// host's file (`spin_onhost`). Source lines come from the host's file in both cases
/// (perf runs addr2line here, on the path): it has no line tables. Ours print the same.
#[test]
fn perf_script_live_files_of_a_process_in_another_mount_namespace_are_read_inside_it() {
    let Some((dir, app, prog)) = two_builds_of_nsspin() else {
        return;
    };
    let d = dir.path();
    let mut child = Spinner::start_staged_inside(d, &app, &prog);
    record_with_and_without_build_ids(d, &child.pid);
    child.stop();
    let spin_named = |text: &str, name: &str| {
        text.contains(&format!("{name}+0x")) && text.contains(&format!("({})", prog.display()))
    };
    let files = ["ids.data", "noids.data"];
    for file in files {
        let perf = run("perf", &["script", "-i", file], d);
        assert!(
            spin_named(&perf, "spin_inside") && !perf.contains("spin_onhost"),
            "perf read the file inside the namespace: {}",
            &perf[..perf.len().min(2000)]
        );
    }
    same_as_perf_with_lines(d, &files, "while the process lives");
    child.end();
    assert!(
        !std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .contains(app.to_str().unwrap()),
        "the tmpfs was the namespace's only"
    );
    let perf = run("perf", &["script", "-i", "ids.data"], d);
    assert!(
        !perf.contains("spin_inside") && perf.contains(&format!("[unknown] ({})", prog.display())),
        "perf read the host's file, whose build id differs: {}",
        &perf[..perf.len().min(2000)]
    );
    let perf = run("perf", &["script", "-i", "noids.data"], d);
    assert!(
        spin_named(&perf, "spin_onhost") && !perf.contains("spin_inside"),
        "perf read the host's file: {}",
        &perf[..perf.len().min(2000)]
    );
    same_as_perf_with_lines(d, &files, "once the process is gone");
}

/// Two processes run a program at one path that is two files: one on the host
/// (tests/data/perf/nsspin.c spinning in `spin_onhost`), one in a mount namespace of
/// its own, where another build (spinning in `spin_inside`) lies over the path. perf
/// 6.1 keeps two objects of that path (its MMAP2 records tell the files apart by
/// device and inode) and reads each file for its own process: without build ids
/// (`-B`), the host's process has frames in `spin_onhost`, the other in
/// `spin_inside`. With them, the file lists the path twice, and both objects take
/// the id listed last, which one of the two files lacks. With the build-id cache
/// (perf keeps a copy of each file under its path and id), both objects read the
/// copy of the id listed last. Once the namespace is gone, both objects read the
/// host's file (or that copy). Ours print the same, while the processes live and
/// after.
#[test]
fn perf_script_live_two_files_at_one_path_are_two_objects() {
    let Some((dir, app, prog)) = two_builds_of_nsspin() else {
        return;
    };
    let d = dir.path();
    let mut host = Spinner::start(std::process::Command::new(&prog));
    let mut inside = Spinner::start_staged_inside(d, &app, &prog);
    let pids = format!("{},{}", host.pid, inside.pid);
    record_with_and_without_build_ids(d, &pids);
    // A HOME of the test's own for the build-id cache perf fills and reads.
    let home = d.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = [("HOME", home.as_path())];
    let record = [
        "record",
        "-q",
        "-o",
        "cache.data",
        "-e",
        "cpu-clock",
        "-g",
        "-p",
        &pids,
        "--",
        "sleep",
        "0.5",
    ];
    run_with_env("perf", &record, d, &env);
    host.stop();
    inside.stop();
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let same_with_cache = |when: &str| {
        let script = ["script", "-i", "cache.data"];
        let perf = run_with_env("perf", &script, d, &env);
        let ours = run_with_env(tracectl, &[&["perf"][..], &script].concat(), d, &env);
        same(&ours, &perf, &format!("perf script -i cache.data {when}"));
        let report = ["report", "-i", "cache.data", "--stdio"];
        let perf = run_with_env("perf", &report, d, &env);
        let ours = run_with_env(tracectl, &[&["perf"][..], &report].concat(), d, &env);
        same(&ours, &perf, &format!("perf report -i cache.data {when}"));
    };
    let named = |text: &str, pid: &str, name: &str| {
        let frame = format!("{name}+0x");
        let file = format!("({})", prog.display());
        text.split("\n\n")
            // perf pads the pid to five columns (`prog  7196`).
            .filter(|s| {
                let mut words = s.split_whitespace();
                words.next() == Some("prog") && words.next() == Some(pid)
            })
            .any(|s| s.contains(&frame) && s.contains(&file))
    };
    let perf = run("perf", &["script", "-i", "noids.data"], d);
    assert!(
        named(&perf, &host.pid, "spin_onhost")
            && named(&perf, &inside.pid, "spin_inside")
            && !named(&perf, &host.pid, "spin_inside")
            && !named(&perf, &inside.pid, "spin_onhost"),
        "perf read each process's own file: {}",
        &perf[..perf.len().min(3000)]
    );
    let files = ["ids.data", "noids.data"];
    same_as_perf_with_lines(d, &files, "while the processes live");
    let perf = run_with_env("perf", &["script", "-i", "cache.data"], d, &env);
    assert!(
        ["spin_onhost", "spin_inside"]
            .iter()
            .any(|n| named(&perf, &host.pid, n) && named(&perf, &inside.pid, n)),
        "perf read one cached copy for both: {}",
        &perf[..perf.len().min(3000)]
    );
    same_with_cache("while the processes live");
    inside.end();
    assert!(
        !std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .contains(app.to_str().unwrap()),
        "the tmpfs was the namespace's only"
    );
    let perf = run("perf", &["script", "-i", "noids.data"], d);
    assert!(
        named(&perf, &inside.pid, "spin_onhost") && !perf.contains("spin_inside"),
        "perf read the host's file for both: {}",
        &perf[..perf.len().min(3000)]
    );
    same_as_perf_with_lines(d, &files, "once the namespace is gone");
    same_with_cache("once the namespace is gone");
    let pids = [host.pid.as_str(), inside.pid.as_str()];
    build_id_lists_read_as_perf_reads_them(d, &prog, "ids.data", pids);
}

/// perf 6.1 makes an object for each path of a file's BUILD_ID list before it reads a
/// record (the last id listed for a path holds), and files it in its tree of objects,
/// where the MMAP2 records of the path's two files find it or make one more. An
/// object made so copies the list's id from the object of its path that a lookup by
/// name alone meets first: the list's, or itself, as the shape of the tree has it,
/// and that shape depends on every path listed. So `file` (the two-objects set-up,
/// read once the namespace is gone) is read again with lists of its program's two ids
/// and other paths (the processes' libraries, the vDSO, paths sorting first and last),
/// in several orders: ours name each frame as perf does with every list. `pids`: the
/// processes, whose frames are named alike with some lists and not with others.
fn build_id_lists_read_as_perf_reads_them(d: &Path, prog: &Path, file: &str, pids: [&str; 2]) {
    use tracectl::perf::data::{Event, PerfData};
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let data = PerfData::open(d.join(file)).unwrap();
    let prog_name = prog.display().to_string();
    let ids: Vec<Vec<u8>> = data
        .build_ids()
        .unwrap()
        .into_iter()
        .filter(|(n, _)| *n == prog_name)
        .map(|(_, id)| id)
        .collect();
    assert_eq!(ids.len(), 2, "{file} lists the program's path twice");
    let kernel = data
        .build_ids()
        .unwrap()
        .into_iter()
        .find(|(n, _)| n == "[kernel.kallsyms]")
        .expect("the kernel is listed")
        .1;
    let mut mapped: Vec<String> = Vec::new();
    for r in data.records() {
        if let Ok(Event::Mmap {
            filename,
            exec: true,
            ..
        }) = data.decode(&r.unwrap())
        {
            let name = String::from_utf8_lossy(filename).into_owned();
            if name != prog_name && !name.starts_with("[kernel") && !mapped.contains(&name) {
                mapped.push(name);
            }
        }
    }
    assert!(
        mapped.len() >= 3,
        "the processes' other mappings: {mapped:?}"
    );
    let other: &[u8] = &[0x11; 20];
    let path = |part: &str| -> &str {
        let found = mapped.iter().find(|m| m.contains(part));
        found.unwrap_or_else(|| panic!("a mapping of {part}: {mapped:?}"))
    };
    let (libc, ld) = (path("/libc."), path("/ld-linux"));
    let (host, inside) = (&ids[0][..], &ids[1][..]);
    let prog = prog_name.as_str();
    let entry = |name: &'static str| (false, other, name);
    // A path sorting just before the program's, wherever the build's directory is.
    let before = {
        let (head, last) = prog.split_at(prog.len() - 1);
        format!("{head}{}", (last.as_bytes()[0] - 1) as char)
    };
    // Lists whose shapes part the processes' objects: with the program's path sorting
    // before /usr (the libraries', the vDSO's, listed as perf lists them), and after it
    // (with a path just before the program's among others).
    let mut lists: Vec<Vec<(bool, &[u8], &str)>> = vec![
        vec![
            (false, host, prog),
            (false, other, libc),
            entry("[vdso]"),
            (false, inside, prog),
        ],
        vec![
            (false, other, libc),
            (false, host, prog),
            entry("[vdso]"),
            (false, inside, prog),
        ],
        vec![
            (false, host, prog),
            entry("[vdso]"),
            (false, other, libc),
            (false, inside, prog),
        ],
        vec![
            (false, host, prog),
            (false, inside, prog),
            (false, other, libc),
            entry("[vdso]"),
        ],
        vec![
            (false, inside, prog),
            (false, other, libc),
            entry("[vdso]"),
            (false, host, prog),
        ],
        vec![
            (true, &kernel[..], "[kernel.kallsyms]"),
            (false, host, prog),
            (false, other, libc),
            entry("[vdso]"),
            (false, inside, prog),
        ],
        vec![
            (false, host, prog),
            entry("/u"),
            (false, other, &before),
            entry("~"),
            (false, other, libc),
            entry("[kernel.kallsyms]x"),
            (false, inside, prog),
        ],
        vec![
            (false, host, prog),
            entry("[vsyscall]"),
            entry("[vdso]"),
            (false, other, &before),
            entry("/u"),
            (false, inside, prog),
        ],
    ];
    // And lists of other paths, sorting first, last and between.
    let others = [ld, "[vsyscall]", "/", "~", "/u"];
    for mask in 0..1u32 << others.len() {
        let mut l = vec![(false, host, prog)];
        for (i, o) in others.iter().enumerate() {
            if mask >> i & 1 == 1 {
                l.push((false, other, o));
            }
        }
        l.push((false, inside, prog));
        if mask % 5 == 0 {
            l.reverse();
        }
        if mask % 2 == 0 {
            lists.push(l);
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for (n, list) in lists.iter().enumerate() {
        let out = format!("list{n}.data");
        with_build_id_list(d, file, &out, list);
        let perf = run("perf", &["script", "-i", &out], d);
        let ours = run(tracectl, &["perf", "script", "-i", &out], d);
        let names: Vec<&str> = list.iter().map(|e| e.2).collect();
        same(
            &ours,
            &perf,
            &format!("perf script with the BUILD_ID list {names:?}"),
        );
        // Whether the processes' frames in the program are named alike (one object).
        let [a, b] = pids.map(|p| spin_names_of(&perf, p, Path::new(prog)));
        seen.insert(a == b);
        std::fs::remove_file(d.join(&out)).unwrap();
    }
    // Which lists give two objects depends on where the program's path sorts among
    // the others (the build's directory); these lists part them wherever that is.
    assert_eq!(
        seen.len(),
        2,
        "some lists give the processes one object, some two"
    );
}

/// `file` in `d` with its BUILD_ID feature replaced by `entries` (the kernel's or not,
/// the id, the path), as `out`: the list goes at the end of the file and the feature's
/// entry in the table of features points there.
fn with_build_id_list(d: &Path, file: &str, out: &str, entries: &[(bool, &[u8], &str)]) {
    let mut f = std::fs::read(d.join(file)).unwrap();
    let u64_at = |f: &[u8], at: usize| u64::from_le_bytes(f[at..at + 8].try_into().unwrap());
    // The header: the data section's offset and size, then the feature bits.
    let (data_at, data_size) = (u64_at(&f, 40), u64_at(&f, 48));
    let bit = |b: usize| f[72 + b / 8] >> (b % 8) & 1 == 1;
    const BUILD_ID: usize = 2;
    assert!(bit(BUILD_ID), "{file} has a BUILD_ID feature");
    let index = (0..BUILD_ID).filter(|&b| bit(b)).count();
    let entry = (data_at + data_size) as usize + 16 * index;
    let mut list = Vec::new();
    for (kernel, id, name) in entries {
        let padded = (name.len() + 1).div_ceil(64) * 64;
        // The cpumode, and that the id's size is stored.
        let misc: u16 = if *kernel { 1 } else { 2 } | 1 << 15;
        list.extend_from_slice(&0u32.to_le_bytes());
        list.extend_from_slice(&misc.to_le_bytes());
        list.extend_from_slice(&((36 + padded) as u16).to_le_bytes());
        list.extend_from_slice(&(-1i32).to_le_bytes());
        let mut bid = [0u8; 24];
        bid[..id.len()].copy_from_slice(id);
        bid[20] = id.len() as u8;
        list.extend_from_slice(&bid);
        list.extend_from_slice(name.as_bytes());
        list.resize(list.len() + padded - name.len(), 0);
    }
    let at = f.len() as u64;
    f[entry..entry + 8].copy_from_slice(&at.to_le_bytes());
    f[entry + 8..entry + 16].copy_from_slice(&(list.len() as u64).to_le_bytes());
    f.extend_from_slice(&list);
    std::fs::write(d.join(out), f).unwrap();
}

/// A program whose symbols put perf's choices to work (tests/data/perf/syms.c: labels
/// without a size, aliases, a `SyS` alias, a hidden label, labels inside functions),
/// profiled with call chains here: ours name every frame as `perf script` and `perf
/// report` do.
#[test]
fn perf_script_live_symbol_choice_matches_perf() {
    if !perf_and_cc() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("syms", d);
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "syms.data",
            "-e",
            "cpu-clock",
            "-g",
            "--",
            "./syms",
        ],
        d,
    );
    let perf = run("perf", &["script", "-i", "syms.data"], d);
    for name in [
        "a_glob_label+0x",
        "zzz_tie+0x",
        "e_fn+0x",
        "a::b::c::d::e+0x",
    ] {
        assert!(perf.contains(name), "perf named a frame {name}");
    }
    let ours = run(tracectl, &["perf", "script", "-i", "syms.data"], d);
    same(&ours, &perf, "perf script on syms");
    let fields = ["-F", "ip,sym,symoff,dso"];
    let perf = run(
        "perf",
        &[&["script", "-i", "syms.data"][..], &fields].concat(),
        d,
    );
    let ours = run(
        tracectl,
        &[&["perf", "script", "-i", "syms.data"][..], &fields].concat(),
        d,
    );
    same(&ours, &perf, "perf script -F ip,sym,symoff,dso on syms");
    let perf = run("perf", &["report", "-i", "syms.data", "--stdio"], d);
    let ours = run(
        tracectl,
        &["perf", "report", "-i", "syms.data", "--stdio"],
        d,
    );
    same(&ours, &perf, "perf report on syms");
}

/// A program that reads the clock in a loop samples mostly in the kernel's vDSO: perf
/// names those frames (`__vdso_clock_gettime+0x..`) from the image it keeps in its
/// build-id cache, and so do we.
#[test]
fn perf_script_live_vdso_frames_are_named_from_the_build_id_cache() {
    if !perf_and_cc() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("clock.c"),
        "#include <time.h>\nint main(void) { struct timespec t; long s = 0;\n\
         for (int i = 0; i < 3000000; i++) { clock_gettime(CLOCK_MONOTONIC, &t); s += t.tv_nsec; }\n\
         return s == 42; }\n",
    )
    .unwrap();
    run("cc", &["-O1", "-o", "clock", "clock.c"], d);
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "clock.data",
            "-e",
            "cpu-clock",
            "--",
            "./clock",
        ],
        d,
    );
    let perf = run("perf", &["script", "-i", "clock.data"], d);
    if !perf.contains("([vdso])") {
        crate::support::skips::skip(
            "no sample fell in the vDSO (clock_gettime is a system call here)",
        );
        return;
    }
    assert!(
        perf.lines()
            .any(|l| l.contains("([vdso])") && !l.contains("[unknown]")),
        "perf named a vDSO frame: {perf}"
    );
    let ours = run(tracectl, &["perf", "script", "-i", "clock.data"], d);
    same(&ours, &perf, "perf script on vDSO samples");
}

/// perf 6.1 stops asking addr2line about an object after 123 lookups there without an
/// answer (`A2L_FAIL_LIMIT`). A program (tests/data/perf/libc-late.c) that first
/// runs in the kernel under libc's `read()` and only then runs libc's `memset` in
/// user mode, profiled once it runs: with `--children`, every early sample asks about libc's call-chain
/// entries as sampled, which has no answer, so the later `memset` samples show
/// `symbol+OFFSET` instead of their source line. Without `--children` nothing asks
/// about the chain entries and the line shows. Ours print libc's rows the same.
#[test]
fn perf_report_live_srcline_gives_up_on_an_object_as_perf_does() {
    if !perf_and_cc() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("libc-late", d);
    // libc's rows only: the object perf gives up on.
    let libc = |t: &str| -> String {
        t.lines()
            .filter(|l| l.contains("libc.so"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    // Whether every row of memset's own samples shows perf's fallback,
    // `symbol+OFFSET` (decimal), rather than a line `file:LINE`.
    let memset_fallback = |t: &str| -> bool {
        let rows: Vec<&str> = t
            .lines()
            .filter(|l| l.contains("__memset") && !l.contains(" 0.00% "))
            .collect();
        assert!(!rows.is_empty(), "perf showed memset's samples: {t}");
        rows.iter()
            .all(|l| l.rsplit(' ').next().is_some_and(|t| t.contains('+')))
    };
    let report = |extra: &[&str]| -> Vec<String> {
        [
            &["report", "-i", "late.data", "--stdio", "-g", "none"][..],
            &["--sort", "dso,sym,srcline"],
            extra,
        ]
        .concat()
        .into_iter()
        .map(str::to_string)
        .collect()
    };
    // A user-mode sample in libc before the 123rd lookup (a rare one in `read()`)
    // keeps perf asking; a few recordings make the case.
    let mut gave_up = false;
    for _ in 0..5 {
        record_from_ready(d, "libc-late", "late.data");
        let args = report(&[]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let perf = libc(&run("perf", &args, d));
        let ours = libc(&run(tracectl, &[&["perf"][..], &args].concat(), d));
        same(&ours, &perf, &format!("perf {args:?} on libc-late"));
        if memset_fallback(&perf) {
            gave_up = true;
            break;
        }
    }
    assert!(gave_up, "perf gave up on libc in one of 5 recordings");
    let args = report(&["--no-children"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let perf = libc(&run("perf", &args, d));
    assert!(
        !memset_fallback(&perf),
        "perf showed memset's lines: {perf}"
    );
    let ours = libc(&run(tracectl, &[&["perf"][..], &args].concat(), d));
    same(&ours, &perf, &format!("perf {args:?} on libc-late"));
}

/// Runs the program `name` built in `d` and records it with call chains into `out`
/// from the moment it says it is ready until it ends.
fn record_from_ready(d: &Path, name: &str, out: &str) {
    let mut prog = std::process::Command::new(d.join(name))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(prog.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    let pid = ready.trim().strip_prefix("ready ").unwrap().to_string();
    // perf stops when the program ends.
    let record = [
        "record",
        "-q",
        "-N",
        "-o",
        out,
        "-e",
        "cpu-clock",
        "-g",
        "-p",
        &pid,
    ];
    let recorded = std::process::Command::new("perf")
        .args(record)
        .current_dir(d)
        .output();
    let _ = prog.kill();
    let _ = prog.wait();
    let recorded = recorded.unwrap();
    assert!(
        recorded.status.success(),
        "perf {record:?}: {}",
        String::from_utf8_lossy(&recorded.stderr)
    );
}

/// The standard output and error of `cmd args` run in `cwd` with `env` set and perf's
/// other configuration variables unset; the test fails when the command does.
fn run_in_env(cmd: &str, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> (String, String) {
    let mut c = std::process::Command::new(cmd);
    c.current_dir(cwd).args(args);
    for v in [
        "PERF_CONFIG",
        "PERF_CONFIG_NOSYSTEM",
        "PERF_CONFIG_NOGLOBAL",
        "PERF_BUILDID_DIR",
    ] {
        c.env_remove(v);
    }
    let out = c.envs(env.iter().copied()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{cmd} {args:?} {env:?}: {stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

/// A program recorded by perf, which kept a copy of it in its build-id cache, then
/// rebuilt at its path with its hot function renamed: perf names the old frames only
/// from the cache. The cache moved to a directory that only perf's configuration
/// names (`buildid.dir` in ~/.perfconfig, or in the file `PERF_CONFIG` names, which is
/// then the only one read; perf reads the lines before a bad one and warns, names
/// the file and the line; `PERF_CONFIG_NOGLOBAL` turns ~/.perfconfig off;
/// `PERF_BUILDID_DIR` is nothing to perf; `--buildid-dir` wins over the file). Ours
/// print what perf prints, and warn as perf does. HOME is the test's own.
#[test]
fn perf_script_live_build_id_cache_named_by_perf_config() {
    if !perf_and_cc() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |p: &str| d.join(p).display().to_string();
    build_fixture_program("spin", d);
    std::fs::create_dir_all(d.join("rec")).unwrap();
    let record = [
        "record",
        "-q",
        "-o",
        "spin.data",
        "-e",
        "cpu-clock",
        "-g",
        "--",
        "./spin",
    ];
    run_in_env("perf", &record, d, &[("HOME", &path("rec"))]);
    std::fs::rename(d.join("rec/.debug"), d.join("cache")).unwrap();
    rebuild_spin_renamed(d, "hot_elsewise");
    let config = format!("[buildid]\n\tdir = {}\n", path("cache"));
    for (home, text) in [("h0", None), ("h1", Some(config.as_str()))] {
        std::fs::create_dir_all(d.join(home)).unwrap();
        if let Some(t) = text {
            std::fs::write(d.join(home).join(".perfconfig"), t).unwrap();
        }
    }
    std::fs::create_dir_all(d.join("empty")).unwrap();
    std::fs::write(d.join("good.cfg"), &config).unwrap();
    std::fs::write(d.join("bad-after.cfg"), format!("{config}bogus line !\n")).unwrap();
    std::fs::write(d.join("bad-before.cfg"), format!("bogus line !\n{config}")).unwrap();
    let (h0, h1) = (path("h0"), path("h1"));
    let (good, after, before) = (
        path("good.cfg"),
        path("bad-after.cfg"),
        path("bad-before.cfg"),
    );
    let (empty, cache) = (path("empty"), path("cache"));
    // (environment, perf's global options, whether perf names the frames from the cache)
    type Env<'a> = Vec<(&'a str, &'a str)>;
    let cases: Vec<(Env, Vec<&str>, bool)> = vec![
        (vec![("HOME", &h0)], vec![], false),
        (vec![("HOME", &h1)], vec![], true),
        (vec![("HOME", &h0), ("PERF_CONFIG", &good)], vec![], true),
        (
            vec![("HOME", &h1), ("PERF_CONFIG", "/dev/null")],
            vec![],
            false,
        ),
        (
            vec![("HOME", &h1), ("PERF_CONFIG_NOGLOBAL", "1")],
            vec![],
            false,
        ),
        (
            vec![("HOME", &h0), ("PERF_BUILDID_DIR", &cache)],
            vec![],
            false,
        ),
        (vec![("HOME", &h0), ("PERF_CONFIG", &after)], vec![], true),
        (vec![("HOME", &h0), ("PERF_CONFIG", &before)], vec![], false),
        (vec![("HOME", &h1)], vec!["--buildid-dir", &empty], false),
        (vec![("HOME", &h0)], vec!["--buildid-dir", &cache], true),
    ];
    let warned = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter(|l| l.contains("bad config"))
            .map(str::to_string)
            .collect()
    };
    for (env, global, named) in &cases {
        let what = format!("{env:?} {global:?}");
        for cmd in [
            &["script", "-i", "spin.data"][..],
            &["report", "-i", "spin.data", "--stdio"],
        ] {
            let perf_args = [&global[..], cmd].concat();
            let (perf, perf_err) = run_in_env("perf", &perf_args, d, env);
            assert_eq!(
                perf.contains("hot_function"),
                *named,
                "perf {perf_args:?} {what} named the frames from the cache: {}",
                &perf[..perf.len().min(2000)]
            );
            let ours_args = [&["perf"][..], cmd, &global[..]].concat();
            let (ours, ours_err) = run_in_env(tracectl, &ours_args, d, env);
            same(&ours, &perf, &format!("perf {cmd:?} {what}"));
            assert_eq!(warned(&ours_err), warned(&perf_err), "warnings {what}");
        }
    }
}

/// The functions perf names in the frames of `prog` of the samples of process `pid`
/// (`spin_onhost`, `spin_inside`, `[unknown]`), in `perf script` text.
fn spin_names_of(text: &str, pid: &str, prog: &Path) -> Vec<&'static str> {
    let file = format!("({})", prog.display());
    let samples: Vec<&str> = text
        .split("\n\n")
        .filter(|s| {
            let mut words = s.split_whitespace();
            words.next() == Some("prog") && words.next() == Some(pid)
        })
        .collect();
    ["spin_onhost+0x", "spin_inside+0x", "[unknown]"]
        .into_iter()
        .filter(|name| {
            samples
                .iter()
                .any(|s| s.lines().any(|l| l.contains(name) && l.contains(&file)))
        })
        .collect()
}

/// perf 6.1's `perf record` lists in its BUILD_ID table one entry per object a sample's
/// address hit (and the vDSO), in the order it made the objects, each with the build
/// id of its own file, read in the mount namespace of the process that mapped it: the
/// two files at one path of the two-objects set-up are two entries, the host's file
/// first, the one inside the namespace listed last. `tracectl perf record -p` of the
/// same processes lists the program's and the vDSO's entries as perf does (which of
/// libc's files a sample lands in varies between recordings), and perf reads our file
/// as its own: `perf buildid-list`, and the functions `perf script` and `perf report`
/// name for each process, while the processes live and once the namespace is gone.
/// As the list decides which object a process's frames are read from (see
/// [`build_id_lists_read_as_perf_reads_them`]), perf's file is read with our list.
#[test]
fn perf_record_live_two_files_at_one_path_get_a_build_id_each() {
    let Some((dir, app, prog)) = two_builds_of_nsspin() else {
        return;
    };
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let d = dir.path();
    let mut host = Spinner::start(std::process::Command::new(&prog));
    let mut inside = Spinner::start_staged_inside(d, &app, &prog);
    let pids = format!("{},{}", host.pid, inside.pid);
    let args = ["-e", "cpu-clock", "-g", "-p", &pids, "--", "sleep", "0.5"];
    // perf keeps no copy in a build-id cache (-N); HOME is the test's own all the same.
    let home = d.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = [("HOME", home.as_path())];
    let perf_record = [&["record", "-q", "-N", "-o", "perf.data"][..], &args].concat();
    run_with_env("perf", &perf_record, d, &env);
    let ours_record = [&["perf", "record", "-o", "ours.data"][..], &args].concat();
    run_with_env(tracectl, &ours_record, d, &env);
    host.stop();
    inside.stop();
    let prog_name = prog.display().to_string();
    let listed = |file: &str| -> Vec<(String, Vec<u8>)> {
        tracectl::perf::data::PerfData::open(d.join(file))
            .unwrap()
            .build_ids()
            .unwrap()
            .into_iter()
            .filter(|(n, _)| *n == prog_name || n == "[vdso]")
            .collect()
    };
    let perf = listed("perf.data");
    assert_eq!(
        perf.iter().filter(|(n, _)| *n == prog_name).count(),
        2,
        "perf listed the path twice: {perf:?}"
    );
    assert_eq!(listed("ours.data"), perf, "the BUILD_ID entries");
    let buildid_list = |file: &str| -> String {
        run_with_env("perf", &["buildid-list", "-i", file], d, &env)
            .lines()
            .filter(|l| l.ends_with(&prog_name) || l.ends_with("[vdso]"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(buildid_list("ours.data"), buildid_list("perf.data"));
    // perf's recording with our list: the paths a list holds beside these (libraries
    // the samples happened to hit) shape perf's tree of objects too.
    use tracectl::perf::data::abi::misc::KERNEL;
    let ours = tracectl::perf::data::PerfData::open(d.join("ours.data")).unwrap();
    let ours_list = ours.build_id_entries().unwrap();
    let entries: Vec<(bool, &[u8], &str)> = ours_list
        .iter()
        .map(|e| (e.misc == KERNEL, &e.id[..], e.filename.as_str()))
        .collect();
    with_build_id_list(d, "perf.data", "perf-ours-list.data", &entries);
    let pids = [host.pid.clone(), inside.pid.clone()];
    let read_alike = |when: &str| {
        let script = |file: &str| run_with_env("perf", &["script", "-i", file], d, &env);
        let (theirs, ours) = (script("perf-ours-list.data"), script("ours.data"));
        for pid in &pids {
            let names = spin_names_of(&theirs, pid, &prog);
            assert!(!names.is_empty(), "perf showed process {pid}: {when}");
            assert_eq!(
                spin_names_of(&ours, pid, &prog),
                names,
                "perf script: the frames of process {pid} {when}"
            );
        }
        let report = |file: &str| -> std::collections::BTreeSet<String> {
            let args = ["report", "-i", file, "--stdio", "-g", "none"];
            let args = [&args[..], &["--sort", "pid,dso,sym"]].concat();
            run_with_env("perf", &args, d, &env)
                .lines()
                .filter(|l| l.contains(" prog ") && !l.starts_with('#'))
                // Rows of unnamed addresses differ by the addresses sampled.
                .map(|l| {
                    l.split_whitespace()
                        .filter(|w| !w.ends_with('%'))
                        .map(|w| if w.starts_with("0x") { "ADDRESS" } else { w })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                // The two recordings sample different instants: compare the rows of
                // the spinning functions (named or not), which both always hold, not
                // the few samples that land in their callers.
                .filter(|r| r.ends_with(" ADDRESS") || r.contains(" spin_"))
                .filter(|r| !r.ends_with(" spin_caller"))
                .collect()
        };
        assert_eq!(
            report("ours.data"),
            report("perf-ours-list.data"),
            "perf report: the program's rows {when}"
        );
    };
    read_alike("while the processes live");
    inside.end();
    read_alike("once the namespace is gone");
}

/// perf 6.1 reads the kernel's symbols under `--symfs DIR` only from a vmlinux there
/// or the file `--kallsyms` names, never from /proc/kallsyms or the kallsyms of its
/// build-id cache: with an empty DIR, kernel frames are `[unknown]`. A recording of
/// `dd` (mostly in the kernel), with call chains: ours print what perf prints, with
/// an empty DIR alone and with `--kallsyms /proc/kallsyms` besides.
#[test]
fn perf_script_live_kernel_frames_under_an_empty_symfs_are_unknown() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("empty")).unwrap();
    std::fs::create_dir_all(d.join("home")).unwrap();
    let env = [("HOME", d.join("home"))];
    let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let record = [
        "record",
        "-q",
        "-N",
        "-o",
        "dd.data",
        "-e",
        "cpu-clock",
        "-g",
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=4096",
        "count=100000",
    ];
    run_with_env("perf", &record, d, &env);
    let kernel_frame = |t: &str, named: bool| {
        t.lines()
            .any(|l| l.ends_with("([kernel.kallsyms])") && l.contains("[unknown]") != named)
    };
    let symfs = ["--symfs", "empty"];
    let with_kallsyms = ["--symfs", "empty", "--kallsyms", "/proc/kallsyms"];
    for (extra, named) in [(&symfs[..], false), (&with_kallsyms[..], true)] {
        let script = [&["script", "-i", "dd.data"][..], extra].concat();
        let perf = run_with_env("perf", &script, d, &env);
        assert!(
            kernel_frame(&perf, named) && !kernel_frame(&perf, !named),
            "perf {script:?}: kernel frames named: {named}: {}",
            &perf[..perf.len().min(2000)]
        );
        let ours = run_with_env(tracectl, &[&["perf"][..], &script].concat(), d, &env);
        same(&ours, &perf, &format!("perf {script:?}"));
        let report = [&["report", "-i", "dd.data", "--stdio"][..], extra].concat();
        let perf = run_with_env("perf", &report, d, &env);
        let ours = run_with_env(tracectl, &[&["perf"][..], &report].concat(), d, &env);
        same(&ours, &perf, &format!("perf {report:?}"));
    }
}

/// perf 6.1 takes the kernel's symbols by the kernel's build id in the BUILD_ID list:
/// none listed, or the running kernel's, is /proc/kallsyms; another is the copy of
/// kallsyms `perf record` keeps in the build-id cache under that id, and without one
/// the kernel frames are `[unknown]` and perf says it found no kallsyms for the id. A
/// recording of `dd` with call chains, read with each list (the cache's copy names
/// three functions otherwise): ours print what perf prints, and say what perf says.
#[test]
fn perf_script_live_kernel_symbols_follow_the_kernel_s_build_id() {
    use tracectl::perf::data::abi::misc::KERNEL;
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = d.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let home_s = home.display().to_string();
    let env = [("HOME", home_s.as_str())];
    let record = [
        "record",
        "-q",
        "-N",
        "-o",
        "dd.data",
        "-e",
        "cpu-clock",
        "-g",
        "--",
    ];
    let dd = [
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=4096",
        "count=100000",
    ];
    run_in_env("perf", &[&record[..], &dd].concat(), d, &env);
    let entries = tracectl::perf::data::PerfData::open(d.join("dd.data"))
        .unwrap()
        .build_id_entries()
        .unwrap();
    let running = entries
        .iter()
        .find(|e| e.misc == KERNEL && e.filename == "[kernel.kallsyms]")
        .expect("perf listed the kernel")
        .id
        .clone();
    let other: Vec<u8> = running.iter().map(|b| b ^ 0x5a).collect();
    let hex: String = other.iter().map(|b| format!("{b:02x}")).collect();
    /// The recording's user entries, after the kernel's `kernel` when given.
    fn list<'a>(
        entries: &'a [tracectl::perf::data::write::BuildIdEntry],
        kernel: Option<&'a [u8]>,
    ) -> Vec<(bool, &'a [u8], &'a str)> {
        let users = entries.iter().filter(|e| e.misc != KERNEL);
        let users = users.map(|e| (false, &e.id[..], e.filename.as_str()));
        let kernel = kernel.map(|id| (true, id, "[kernel.kallsyms]"));
        kernel.into_iter().chain(users).collect()
    }
    with_build_id_list(
        d,
        "dd.data",
        "running.data",
        &list(&entries, Some(&running)),
    );
    with_build_id_list(d, "dd.data", "none.data", &list(&entries, None));
    with_build_id_list(d, "dd.data", "other.data", &list(&entries, Some(&other)));
    let copy = home.join(".debug/[kernel.kallsyms]").join(&hex);
    let renamed = ["do_syscall_64", "ksys_read", "ksys_write"];
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let cached: String = kallsyms
        .lines()
        .map(|l| match l.rsplit_once(' ') {
            Some((head, name)) if renamed.contains(&name) => format!("{head} cached_{name}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    let compare = |file: &str, want: &str| {
        let script = ["script", "-i", file];
        let (perf, perf_err) = run_in_env("perf", &script, d, &env);
        let (ours, ours_err) = run_in_env(tracectl, &[&["perf"][..], &script].concat(), d, &env);
        let frames: Vec<&str> = perf
            .lines()
            .filter(|l| l.ends_with("([kernel.kallsyms])"))
            .collect();
        let shown = match want {
            "[unknown]" => frames.iter().all(|l| l.contains(want)),
            _ => frames.iter().any(|l| l.contains(want)),
        };
        assert!(
            !frames.is_empty() && shown,
            "perf {script:?}: kernel frames with {want}: {}",
            &perf[..perf.len().min(2000)]
        );
        same(&ours, &perf, &format!("perf {script:?}"));
        let said = |t: &str| {
            t.lines()
                .filter(|l| l.contains("kallsyms"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            said(&ours_err),
            said(&perf_err),
            "what perf {script:?} says"
        );
        let report = ["report", "-i", file, "--stdio"];
        let (perf, _) = run_in_env("perf", &report, d, &env);
        let (ours, _) = run_in_env(tracectl, &[&["perf"][..], &report].concat(), d, &env);
        same(&ours, &perf, &format!("perf {report:?}"));
    };
    compare("running.data", "do_syscall_64+");
    compare("none.data", "do_syscall_64+");
    compare("other.data", "[unknown]");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::write(copy.join("kallsyms"), cached).unwrap();
    compare("other.data", "cached_");
}

/// perf reads /proc/kallsyms for the running kernel's frames, ours the cache's copy when it
/// agrees through the first text symbol. `dd` (listing the running kernel, or none), with
/// this boot's copy (other modules), then another boot's (renamed): ours print as perf.
#[test]
fn perf_script_live_kernel_symbols_from_the_cached_copy_of_this_boot() {
    use tracectl::perf::data::abi::misc::KERNEL;
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = d.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let home_s = home.display().to_string();
    let env = [("HOME", home_s.as_str())];
    let record = [
        "record",
        "-q",
        "-N",
        "-o",
        "dd.data",
        "-e",
        "cpu-clock",
        "-g",
    ];
    let dd = [
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=4096",
        "count=100000",
    ];
    run_in_env("perf", &[&record[..], &dd].concat(), d, &env);
    let entries = tracectl::perf::data::PerfData::open(d.join("dd.data"))
        .unwrap()
        .build_id_entries()
        .unwrap();
    let users: Vec<(bool, &[u8], &str)> = entries
        .iter()
        .filter(|e| e.misc != KERNEL)
        .map(|e| (false, &e.id[..], e.filename.as_str()))
        .collect();
    with_build_id_list(d, "dd.data", "none.data", &users);
    let running = tracectl::perf::data::host::kernel_build_id().expect("the kernel's build id");
    let hex: String = running.iter().map(|b| format!("{b:02x}")).collect();
    let copy = home.join(".debug/[kernel.kallsyms]").join(&hex);
    std::fs::create_dir_all(&copy).unwrap();
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let core: String = kallsyms
        .lines()
        .filter(|l| !l.contains('['))
        .map(|l| format!("{l}\n"))
        .collect();
    let this_boot = format!("{core}ffffffffc0000000 t gone_fn\t[gone]\n");
    let mut moved = false;
    let other_boot: String = kallsyms
        .lines()
        .map(|l| {
            let mut w = l.splitn(3, ' ');
            let (addr, ty, name) = (
                w.next().unwrap(),
                w.next().unwrap_or(""),
                w.next().unwrap_or(""),
            );
            let addr = match u64::from_str_radix(addr, 16) {
                Ok(a) if !moved && matches!(ty, "t" | "T") => {
                    moved = true;
                    format!("{:016x}", a ^ 0x0100_0000)
                }
                _ => addr.to_string(),
            };
            let name = match name {
                "do_syscall_64" | "ksys_read" | "ksys_write" => format!("cached_{name}"),
                n => n.to_string(),
            };
            format!("{addr} {ty} {name}\n")
        })
        .collect();
    for (what, text) in [
        ("this boot's copy", this_boot),
        ("another boot's copy", other_boot),
    ] {
        std::fs::write(copy.join("kallsyms"), text).unwrap();
        for file in ["dd.data", "none.data"] {
            let script = ["script", "-i", file];
            let (perf, _) = run_in_env("perf", &script, d, &env);
            let (ours, _) = run_in_env(tracectl, &[&["perf"][..], &script].concat(), d, &env);
            assert!(
                perf.contains("do_syscall_64+") && !perf.contains("cached_"),
                "perf names the kernel's functions from /proc/kallsyms"
            );
            same(&ours, &perf, &format!("{what}: perf {script:?}"));
            let report = ["report", "-i", file, "--stdio"];
            let (perf, _) = run_in_env("perf", &report, d, &env);
            let (ours, _) = run_in_env(tracectl, &[&["perf"][..], &report].concat(), d, &env);
            same(&ours, &perf, &format!("{what}: perf {report:?}"));
        }
    }
}

/// perf 6.1 formats each column title of `perf report` into a buffer of 1024 bytes, so
/// the title of a Symbol column wider than that is cut to 1023 characters (its row of
/// dots is not), and so is each entry of a call graph. A program spinning in a
/// function with a name of 1,100 characters: ours print the table as perf does, with
/// and without Children, and the graph in perf's modes.
#[test]
fn perf_report_live_a_title_wider_than_perf_s_buffer_is_cut() {
    if !perf_and_cc() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let long = format!("spin_{}", "x".repeat(1095));
    let src = format!(
        "volatile unsigned long n;\n\
         __attribute__((noinline)) void {long}(void) {{ for (unsigned long i = 0; i < 400000000UL; i++) n += i; }}\n\
         int main(void) {{ {long}(); return 0; }}\n"
    );
    std::fs::write(d.join("long.c"), src).unwrap();
    run(
        "cc",
        &["-O1", "-fno-omit-frame-pointer", "-o", "long", "long.c"],
        d,
    );
    let record = ["record", "-q", "-o", "long.data", "-e", "cpu-clock", "-g"];
    run("perf", &[&record[..], &["--", "./long"]].concat(), d);
    for extra in [
        &[][..],
        &["--no-children"],
        &["-g", "none", "--sort", "dso,sym"],
        &["-g", "folded"],
        &["-g", "flat"],
    ] {
        let report = [&["report", "-i", "long.data", "--stdio"][..], extra].concat();
        let perf = run("perf", &report, d);
        let title = perf.lines().find(|l| l.contains("Symbol")).unwrap_or("");
        assert!(
            perf.contains(&long) && title.len() < long.len(),
            "perf {report:?} cut the title: {}",
            title.len()
        );
        let ours = run(tracectl, &[&["perf"][..], &report].concat(), d);
        same(&ours, &perf, &format!("perf {report:?}"));
    }
}

/// perf 6.1 matches a call chain entry of a function inlined there by the function's
/// name alone (`match_chain`), so a function inlined into two callers is one entry of
/// the call graph, which parts below it. tests/data/perf/inline-twice.c (`mid` inlined
/// into `caller_a` and `caller_b`, both calling `leaf`), unwound with DWARF: ours print
/// the graphs of `perf report --no-children` as perf does, callee and caller first.
#[test]
fn perf_report_live_a_function_inlined_twice_is_one_entry_of_the_graph() {
    if srcline_skip() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/inline-twice.c");
    let cc = ["-O1", "-g", "-fno-omit-frame-pointer", "-o", "inline-twice"];
    run("cc", &[&cc[..], &[src.to_str().unwrap()]].concat(), d);
    let record = ["record", "-q", "-o", "inl.data", "-e", "cpu-clock"];
    let dwarf = ["--call-graph", "dwarf", "--", "./inline-twice"];
    run("perf", &[&record[..], &dwarf].concat(), d);
    for extra in [&["--no-children"][..], &["--no-children", "-g", "caller"]] {
        let report = [&["report", "-i", "inl.data", "--stdio"][..], extra].concat();
        let perf = run("perf", &report, d);
        // The graph of `leaf` shows `mid` over both callers (once, bar cut-short stacks).
        let mids = perf.lines().filter(|l| l.contains("mid (inlined)")).count();
        let head = &perf[..perf.len().min(3000)];
        assert!(mids >= 1, "perf {report:?} shows mid: {head}");
        let ours = run(tracectl, &[&["perf"][..], &report].concat(), d);
        same(&ours, &perf, &format!("perf {report:?}"));
    }
}

/// `perf report` on a file without samples prints its first two lines, then says
/// on its error output that the file has no samples, and exits with 0: a recording of
/// `true` with a tracepoint it never fires. Ours print and say the same.
#[test]
fn perf_report_live_a_file_without_samples() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let record = [
        "record",
        "-q",
        "-o",
        "none.data",
        "-e",
        "syscalls:sys_enter_getpid",
    ];
    run("perf", &[&record[..], &["--", "true"]].concat(), d);
    let (perf, perf_err) = run_in_env("perf", &["report", "-i", "none.data", "--stdio"], d, &[]);
    assert!(
        perf_err.contains("has no samples"),
        "perf said the file has no samples: {perf_err}"
    );
    let args = ["perf", "report", "-i", "none.data", "--stdio"];
    let (ours, ours_err) = run_in_env(tracectl, &args, d, &[]);
    assert_eq!(ours, perf, "what perf report prints");
    assert_eq!(ours_err, perf_err, "what perf report says");
}

/// Why the source-line tests cannot run here (no perf, root, C compiler, or binutils'
/// `addr2line`, which perf 6.1 asks); None when they can. A reason is printed as a skip.
pub(crate) fn srcline_skip() -> bool {
    let addr2line = std::process::Command::new("addr2line")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let why = skip_reason()
        .or_else(|| cc_missing().map(str::to_string))
        .or_else(|| (!addr2line).then(|| "binutils' addr2line is not installed".to_string()));
    if let Some(why) = &why {
        crate::support::skips::skip(why);
    }
    why.is_some()
}

/// binutils 2.40 names the rows of a DWARF 5 line sequence before its first
/// `DW_LNS_set_file` after file 0, not file 1 (the file register's initial value).
/// tests/data/perf/file-zero.c has `step` and `spin` in those rows, written in `spin.h`
/// (file 1) inside `file-zero.c` (file 0): perf prints `file-zero.c:LINE` for them, for
/// the sampled addresses and for `spin` as a caller unwound from the stack copy, and
/// ours print the same.
#[test]
fn perf_report_live_srcline_names_a_sequences_first_rows_after_file_zero() {
    if srcline_skip() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/file-zero.c");
    let cc = ["-g", "-O1", "-fno-omit-frame-pointer", "-o", "file-zero"];
    run("cc", &[&cc[..], &[src.to_str().unwrap()]].concat(), d);
    let reports: [&[&str]; 4] = [
        &["--sort", "dso,sym,srcline,srcfile"],
        &["--no-children", "-g", "none", "--sort", "srcline,sym"],
        &["--sort", "srcline", "-g", "caller"],
        &["--sort", "sym,srcline", "-g", "callee"],
    ];
    let record = |chains: &[&str]| {
        let record = [
            &[
                "record",
                "-q",
                "-o",
                "fz.data",
                "-e",
                "cpu-clock:u",
                "-c",
                "100000",
            ][..],
            chains,
            &["--", "./file-zero", "100000000"],
        ]
        .concat();
        run("perf", &record, d);
    };
    let report = |extra: &[&str], rows: &dyn Fn(&str) -> String| {
        let args = [&["report", "-i", "fz.data", "--stdio"][..], extra].concat();
        let perf = rows(&run("perf", &args, d));
        let ours = rows(&run(tracectl, &[&["perf"][..], &args].concat(), d));
        same(&ours, &perf, &format!("perf {args:?}"));
        perf
    };
    let whole = |t: &str| t.to_string();
    // Frame pointers: every report whole.
    record(&["-g"]);
    for extra in reports {
        let perf = report(extra, &whole);
        if extra[1].ends_with("srcfile") {
            let step = perf.lines().find(|l| l.contains("[.] step "));
            assert!(
                step.is_some_and(|l| l.contains("file-zero.c:") && !l.contains("spin.h")),
                "perf names step's lines after file 0: {perf}"
            );
        }
    }
    // The stack copy: spin is also an unwound caller. The program's own rows (the
    // loader's, with --children, are not all matched yet).
    record(&["--call-graph", "dwarf,4096"]);
    let own = |t: &str| -> String {
        t.lines()
            .filter(|l| l.contains(" file-zero "))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    for extra in [&["-g", "none"][..], &["--no-children", "-g", "none"]] {
        let perf = report(
            &[extra, &["--sort", "dso,sym,srcline,srcfile"]].concat(),
            &own,
        );
        assert!(
            perf.lines()
                .any(|l| l.contains("[.] spin ") && l.contains("file-zero.c:")),
            "perf names spin's lines after file 0: {perf}"
        );
    }
}

/// The separate debug file of the dynamic loader, where the system's package of
/// detached debug information (Debian's libc6-dbg) put it; None without one.
fn loader_debug_file() -> Option<PathBuf> {
    use object::Object;
    let loader = std::fs::read("/lib64/ld-linux-x86-64.so.2").ok()?;
    let id = object::File::parse(&*loader).ok()?.build_id().ok()??;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let path = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        hex.get(..2)?,
        hex.get(2..)?
    ));
    path.exists().then_some(path)
}

/// Samples in the dynamic loader, whose lines come from glibc's detached debug file,
/// where DWARF 5 units with another file 1 than file 0 are common (`handle_amd`, in
/// `dl-cacheinfo.h`, shows as `dl-get-cpu-features.c`): `perf report --sort
/// dso,sym,srcline,srcfile` on runs of /bin/true prints what perf prints.
#[test]
fn perf_report_live_srcline_of_the_dynamic_loader_matches_perf() {
    if srcline_skip() {
        return;
    }
    if loader_debug_file().is_none() {
        crate::support::skips::skip(
            "no debug file for /lib64/ld-linux-x86-64.so.2 under /usr/lib/debug/.build-id \
             (Debian's libc6-dbg)",
        );
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let record = [
        "record",
        "-q",
        "-o",
        "ld.data",
        "-e",
        "cpu-clock:u",
        "-c",
        "20000",
        "--",
        "sh",
        "-c",
        "for i in $(seq 200); do /bin/true; done",
    ];
    run("perf", &record, d);
    let args = [
        "report",
        "-i",
        "ld.data",
        "--stdio",
        "--sort",
        "dso,sym,srcline,srcfile",
    ];
    let perf = run("perf", &args, d);
    assert!(
        perf.lines()
            .any(|l| l.contains("ld-linux-x86-64.so.2") && l.contains(".c:")),
        "perf shows the loader's lines: {perf}"
    );
    let ours = run(tracectl, &[&["perf"][..], &args].concat(), d);
    same(&ours, &perf, &format!("perf {args:?}"));
}
