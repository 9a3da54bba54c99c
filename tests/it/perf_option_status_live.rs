//! perf 6.1's exit statuses and option values, tool against tool: the same arguments to
//! `perf record|stat|script|report` and to `tracectl perf ...` end with the same status
//! (129 for what perf's option parser refuses, 234 for -EINVAL, 237 for a CPU that is not
//! there, 255 for -1); a value perf takes is taken the same way (`-F 12x` is 12 Hz, `-m 3`
//! is rounded up to 4 pages), with perf's words on standard error, and the recorded
//! event's frequency or period is the same. Skips (with the reason) without root or perf.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::perf::skip_reason;

fn ready() -> bool {
    match skip_reason() {
        Some(why) => {
            crate::support::skips::skip(why);
            false
        }
        None => true,
    }
}

fn run(cmd: &str, args: &[&str], d: &Path) -> Output {
    Command::new(cmd)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap()
}

/// What a recording says on standard error of how it took its options: every line but
/// perf's closing summary and tracectl's own `tracectl:` lines.
fn option_words(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("[ perf record:") && !l.starts_with("tracectl:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn perf_option_status_live_record_values() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[&[&str]] = &[
        // Refused by perf's option parser: 129.
        &["-c", "abc"],
        &["-c", "-5"],
        &["-m", "xyz"],
        &["-m", "4KB"],
        &["-m", "4,x"],
        &["-r", "x"],
        &["-e", "nosuch"],
        &["-e", "sched:nosuch"],
        &["--bogus"],
        // Refused later: -EINVAL (234), -ENODEV (237), -1 (255).
        &["-F", "abc"],
        &["-F", "0"],
        &["-F", "-3", "--strict-freq"],
        &["-c", "10", "-F", "10"],
        &["-C", "99"],
        &["-r", "100"],
        // Taken, as perf takes them.
        &["-F", "12x"],
        &["-F", "+7"],
        &["-F", "-3"],
        &["-F", "-1"],
        &["-F", "max"],
        &["-c", "0"],
        &["-c", "1000"],
        &["-m", "0"],
        &["-m", "3"],
        &["-m", "512K"],
        &["-m", "5M"],
        &["-m", "K"],
        &["-m", "4,8"],
        &["-r", "5"],
    ];
    let mut taken = 0;
    for opts in cases {
        let record = |cmd: &str, pre: &[&str], file: &str| {
            let args = [pre, &["record", "-o", file][..], opts, &["--", "true"]].concat();
            run(cmd, &args, d)
        };
        let _ = std::fs::remove_file(d.join("t.data"));
        let perf = record("perf", &[], "p.data");
        let ours = record(env!("CARGO_BIN_EXE_tracectl"), &["perf"], "t.data");
        assert_eq!(
            ours.status.code(),
            perf.status.code(),
            "{opts:?}: perf said {}, tracectl {}",
            String::from_utf8_lossy(&perf.stderr),
            String::from_utf8_lossy(&ours.stderr)
        );
        if !perf.status.success() {
            assert!(!d.join("t.data").exists(), "{opts:?}: a file was left");
            continue;
        }
        taken += 1;
        assert_eq!(option_words(&ours), option_words(&perf), "{opts:?}");
        // The frequency or period recorded.
        let evlist = |file: &str| {
            let out = run("perf", &["evlist", "-F", "-i", file], d);
            assert!(out.status.success(), "perf evlist {file}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        assert_eq!(evlist("t.data"), evlist("p.data"), "{opts:?}");
    }
    assert_eq!(taken, 14);
}

/// `-r PRIO` runs the recording, not the command, under SCHED_FIFO at PRIO, as perf does:
/// the command sees its parent under SCHED_FIFO and itself under SCHED_OTHER.
#[test]
fn perf_option_status_live_record_realtime() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let script =
        "chrt -p $PPID | sed 's/pid [0-9]*/pid P/'; chrt -p $$ | sed 's/pid [0-9]*/pid C/'";
    let both: Vec<String> = [
        ("perf", vec!["record", "-q", "-r", "7", "-o", "p.data"]),
        (
            env!("CARGO_BIN_EXE_tracectl"),
            vec!["perf", "record", "-q", "-r", "7", "-o", "t.data"],
        ),
    ]
    .into_iter()
    .map(|(cmd, pre)| {
        let args = [&pre[..], &["--", "sh", "-c", script]].concat();
        let out = run(cmd, &args, d);
        assert!(out.status.success(), "{cmd} {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    })
    .collect();
    assert!(both[0].contains("SCHED_FIFO"), "perf: {}", both[0]);
    assert!(both[0].contains("SCHED_OTHER"), "perf: {}", both[0]);
    assert_eq!(both[1], both[0]);
}

#[test]
fn perf_option_status_live_stat_script_report() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[&[&str]] = &[
        &["stat", "-r", "x", "true"],
        &["stat", "-I", "abc", "true"],
        &["stat", "-D", "x", "true"],
        &["stat", "--bogus", "true"],
        &["stat", "-e", "nosuch", "true"],
        &["stat", "-e", "sched:nosuch", "true"],
        &["stat", "-G", "nosuch", "-a", "true"],
        &[
            "stat",
            "-e",
            "cs",
            "-a",
            "-G",
            "tctl-no-such-cgroup",
            "true",
        ],
        &["stat", "-e", "cs", "-G", "/", "true"],
        &[
            "stat",
            "-a",
            "--for-each-cgroup",
            "tctl-no-such-cgroup",
            "true",
        ],
        &["stat", "-e", "cs", "-a", "-G", "/,/,/", "true"],
        &["stat", "--control", "bogus", "true"],
        &["stat", "--control", "fifo:/tctl-no-such-fifo", "true"],
        &["script", "--bogus"],
        &["script", "-i"],
        &["report", "--bogus"],
        &["report", "-i"],
        // Files perf cannot open or read the header of: -1.
        &["script", "-i", "no-such.data"],
        &["report", "-i", "no-such.data"],
        &["script", "-i", "text.data"],
        &["report", "-i", "text.data"],
    ];
    std::fs::write(d.join("text.data"), "not a perf.data file\n").unwrap();
    for args in cases {
        let perf = run("perf", args, d);
        let ours = run(
            env!("CARGO_BIN_EXE_tracectl"),
            &[&["perf"][..], args].concat(),
            d,
        );
        assert_ne!(perf.status.code(), Some(0), "perf {args:?}");
        assert_eq!(
            ours.status.code(),
            perf.status.code(),
            "{args:?}: perf said {}, tracectl {}",
            String::from_utf8_lossy(&perf.stderr),
            String::from_utf8_lossy(&ours.stderr)
        );
    }
}

/// Cgroups made for a test under perf's cgroup mount point, removed (deepest first) when
/// dropped, on every exit path.
struct TestCgroups(Vec<std::path::PathBuf>);

impl Drop for TestCgroups {
    fn drop(&mut self) {
        for dir in self.0.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// `--for-each-cgroup` with regular expressions (a list holding one of perf's pattern
/// characters): the same cgroups in the same order as perf (its walk of the hierarchy),
/// basic regexes matched case-sensitively anywhere in the name, several per list; no
/// match and a regex that does not compile end with perf's status.
#[test]
fn perf_option_status_live_for_each_cgroup_patterns() {
    if !ready() {
        return;
    }
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return crate::support::skips::skip("no /proc/self/mounts");
    };
    let Some(mount) = mounts
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .find(|f| f.len() > 3 && f[2] == "cgroup2")
        .map(|f| std::path::PathBuf::from(f[1]))
    else {
        return crate::support::skips::skip("no cgroup2 mount");
    };
    let prefix = format!("tctlfe{}", std::process::id());
    let mut made = TestCgroups(Vec::new());
    for rel in ["a", "b", "b/x", "c", "Cap"] {
        let dir = mount.join(format!("{prefix}{rel}"));
        if let Err(e) = std::fs::create_dir(&dir) {
            return crate::support::skips::skip(format!("cannot make {}: {e}", dir.display()));
        }
        made.0.push(dir);
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = &prefix;
    let lists = [
        format!("{p}.*"),
        format!("^{p}[ab]"),
        format!("{p}b/x$,{p}c"),
        format!("{p}a\\|{p}c"),
        format!("{p}cap*"),
        format!("{p}C.*"),
        format!("{p}(a|b)"),
        format!("{p}["),
    ];
    for list in &lists {
        let stat = |cmd: &str, pre: &[&str]| {
            let args = [
                pre,
                &["stat", "-x", ",", "-a", "-e", "cs", "--for-each-cgroup"][..],
                &[list.as_str(), "true"],
            ]
            .concat();
            let out = run(cmd, &args, d);
            // The rows' event and cgroup (the cgroups run nothing: no counts to differ).
            let rows: Vec<String> = String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| l.contains(",cs,"))
                .map(|l| l.split(',').skip(2).take(2).collect::<Vec<_>>().join(","))
                .collect();
            (out.status.code(), rows)
        };
        let perf = stat("perf", &[]);
        let ours = stat(env!("CARGO_BIN_EXE_tracectl"), &["perf"]);
        assert_eq!(ours, perf, "--for-each-cgroup {list}");
        if list.ends_with(".*") && !list.contains('C') {
            assert_eq!(perf.1.len(), 5, "{list}: {:?}", perf.1);
        }
    }
}

/// `evlist -v` over `perf stat --control`: each event's attr as perf opened it
/// (`name: key: value, ...`), the same as perf prints for the same events and scope,
/// modifiers included (`u`, `k`, `p`, `G`, `H` and perf's exclude_guest/exclude_host
/// rules), and groups (a group of more than one event is read in one read: ID|GROUP
/// in read_format).
#[test]
fn perf_option_status_live_control_evlist_verbose() {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (ctl, ack) = (d.join("ctl"), d.join("ack"));
    for p in [&ctl, &ack] {
        nix::unistd::mkfifo(p.as_path(), nix::sys::stat::Mode::S_IRWXU).unwrap();
    }
    let spec = format!("fifo:{},{}", ctl.display(), ack.display());
    let cases: &[&[&str]] = &[
        &["-e", "cs,task-clock"],
        &["-e", "cs:u,page-faults:k,cs:p,cs:uG,cs:kH,cs:GH"],
        &["-a", "-e", "cs,sched:sched_switch"],
        &["-C", "0", "-i", "-e", "cs"],
        &["-D", "-1", "-e", "cs"],
        &["-e", "{cs,task-clock},page-faults,{faults}"],
        &[
            "-a",
            "-e",
            "{cs:u,sched:sched_switch,migrations},task-clock",
        ],
        &[],
    ];
    for opts in cases {
        let mut got = Vec::new();
        for (cmd, pre) in [
            ("perf", &[][..]),
            (env!("CARGO_BIN_EXE_tracectl"), &["perf"][..]),
        ] {
            let args = [
                pre,
                &["stat", "--control", &spec][..],
                opts,
                &["--", "sleep", "1"],
            ]
            .concat();
            let child = Command::new(cmd)
                .args(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let open = |p: &Path, write: bool| {
                std::fs::OpenOptions::new()
                    .read(!write)
                    .write(write)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(p)
            };
            let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
            let mut w = loop {
                match open(&ctl, true) {
                    Ok(w) => break w,
                    Err(_) if std::time::Instant::now() < until => {
                        std::thread::sleep(std::time::Duration::from_millis(20))
                    }
                    Err(e) => panic!("{cmd} {args:?}: {}: {e}", ctl.display()),
                }
            };
            let mut r = open(&ack, false).unwrap();
            w.write_all(b"evlist -v\n").unwrap();
            let mut acked = Vec::new();
            let until = std::time::Instant::now() + std::time::Duration::from_millis(800);
            while std::time::Instant::now() < until && acked.len() < 5 {
                let mut b = [0u8; 16];
                match r.read(&mut b) {
                    Ok(k) => acked.extend_from_slice(&b[..k]),
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                }
            }
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{cmd} {args:?}");
            let attrs: Vec<String> = String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| l.contains(": type: "))
                .map(str::to_string)
                .collect();
            got.push((acked, attrs));
        }
        assert_eq!(got[0].0, b"ack\n\0", "perf {opts:?}: no ack");
        assert!(!got[0].1.is_empty(), "perf {opts:?}: no attrs");
        assert_eq!(got[1], got[0], "{opts:?}");
    }
}

/// `--dry-run` ends as perf's does: 129 for what the option parser refuses (an unknown
/// event, clock or ring size), else 0 without running the command or writing a file,
/// whatever the later checks would have said (-F 0, -C 99, -p with -t).
#[test]
fn perf_option_status_live_record_dry_run() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[&[&str]] = &[
        &["-e", "nosuch"],
        &["-k", "bogus"],
        &["-m", "4KB"],
        &[],
        &["-F", "0"],
        &["-C", "99"],
        &["-p", "1", "-t", "1"],
        &["-e", "sched:sched_switch"],
    ];
    for opts in cases {
        let record = |cmd: &str, pre: &[&str], file: &str| {
            let args = [
                pre,
                &["record", "--dry-run", "-o", file][..],
                opts,
                &["--", "sh", "-c", "echo ran"],
            ]
            .concat();
            run(cmd, &args, d)
        };
        let perf = record("perf", &[], "p.data");
        let ours = record(env!("CARGO_BIN_EXE_tracectl"), &["perf"], "t.data");
        assert_eq!(ours.status.code(), perf.status.code(), "{opts:?}");
        assert!(perf.stdout.is_empty() && ours.stdout.is_empty(), "{opts:?}");
        assert!(
            !d.join("p.data").exists() && !d.join("t.data").exists(),
            "{opts:?}"
        );
    }
}
