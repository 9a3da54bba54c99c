//! `tracectl start` and `set` leave the same tracefs files as `trace-cmd start` and `set`
//! (3.1.6) with the same options: each case runs trace-cmd in a fresh instance, reads the
//! instance's files, removes it, runs tracectl in a fresh instance of the same name, reads
//! again, and `tracectl reset -B NAME -d` removes it. The whole test holds
//! /tmp/tracefs-top.lock (trace-cmd touches global files, e.g. saved_cmdlines_size).

use std::collections::BTreeMap;
use std::process::{Command, Output};

use crate::support::live::{self, TRACEFS};
use crate::support::tracecmd;
use tracectl::tracefs::Tracefs;

fn tracectl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TRACEFS])
        .args(args)
        .output()
        .unwrap()
}

/// The files start and set write, as the kernel shows them: the instance's, and the
/// global saved_cmdlines_size.
fn files(t: &Tracefs, name: &str) -> BTreeMap<String, String> {
    let inst = t.instance(Some(name)).unwrap();
    let mut out = BTreeMap::new();
    let read = |f: &str| {
        inst.read_string(f)
            .unwrap_or_else(|e| format!("<{e}>"))
            .trim_end()
            .to_string()
    };
    for f in [
        "tracing_on",
        "current_tracer",
        "trace_clock",
        "buffer_size_kb",
        "buffer_percent",
        "tracing_cpumask",
        "set_event_pid",
        "events/enable",
        "events/sched/enable",
        "events/sched/sched_switch/enable",
        "events/sched/sched_switch/filter",
        "events/sched/sched_switch/trigger",
        "events/sched/sched_wakeup/enable",
        "events/sched/sched_waking/enable",
        "events/irq/enable",
        "events/irq/softirq_raise/enable",
    ] {
        out.insert(f.to_string(), read(f));
    }
    let mut set_event: Vec<String> = read("set_event").lines().map(String::from).collect();
    set_event.sort();
    out.insert("set_event".into(), set_event.join("\n"));
    for e in std::fs::read_dir(inst.path("options")).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        out.insert(format!("options/{n}"), read(&format!("options/{n}")));
    }
    out.insert(
        "saved_cmdlines_size (top)".into(),
        t.top()
            .read_string("saved_cmdlines_size")
            .unwrap()
            .trim()
            .into(),
    );
    out
}

/// Remove instance `name` (events off first) and put saved_cmdlines_size back.
fn remove(name: &str, cmdlines: &str) {
    let o = tracectl(&["reset", "-B", name, "-d"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let top = Tracefs::at(TRACEFS).top();
    if top.read_string("saved_cmdlines_size").unwrap().trim() != cmdlines {
        top.write_str("saved_cmdlines_size", cmdlines).unwrap();
    }
}

/// Removes the instance however the test ends.
struct Cleanup<'a>(&'a str, String);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        if std::path::Path::new(TRACEFS)
            .join("instances")
            .join(self.0)
            .exists()
        {
            remove(self.0, &self.1);
        }
    }
}

#[test]
fn start_and_set_leave_the_files_trace_cmd_leaves_live() {
    if !live::ready() {
        return;
    }
    let Some(recorder) = tracecmd::recorder() else {
        return;
    };
    let _lock = crate::support::live::TopLock::take();
    let t = Tracefs::at(TRACEFS);
    let name = format!("tracectl-parity-{}", std::process::id());
    let cmdlines = t
        .top()
        .read_string("saved_cmdlines_size")
        .unwrap()
        .trim()
        .to_string();
    let _cleanup = Cleanup(&name, cmdlines.clone());
    let cases: &[(&str, &[&str])] = &[
        ("start", &["-e", "sched:sched_switch", "-T"]),
        (
            "start",
            &["-e", "sched", "-v", "-e", "sched:sched_wakeup", "-d"],
        ),
        (
            "start",
            &[
                "-e",
                "sched:sched_switch",
                "-f",
                "prev_pid != 0",
                "-R",
                "traceoff:1",
                "-M",
                "1",
                "-b",
                "300",
                "-C",
                "global",
            ],
        ),
        (
            "start",
            &[
                "-e",
                "sched:sched_switch",
                "-O",
                "noprint-parent",
                "-O",
                "sym-offset",
            ],
        ),
        ("start", &["-e", "sched:sched_switch", "-P", "1", "-c"]),
        (
            "start",
            &[
                "-i",
                "-e",
                "nosuchsystem:nosuchevent",
                "-e",
                "sched:sched_switch",
            ],
        ),
        (
            "start",
            &["-e", "sched:sched_switch", "--cmdlines-size", "512"],
        ),
        (
            "start",
            &["-a", "-G", "-q", "--stderr", "-e", "sched:sched_wakeup"],
        ),
        ("set", &["-e", "sched:sched_switch", "-T", "-M", "2", "-d"]),
        (
            "set",
            &[
                "-e",
                "irq",
                "-v",
                "-e",
                "irq:softirq_raise",
                "-e",
                "sched:sched_waking",
            ],
        ),
        (
            "set",
            &["-e", "sched", "-v", "-e", "sched:sched_switch", "-b", "200"],
        ),
    ];
    let mut differences = Vec::new();
    for (verb, args) in cases {
        let mut argv = vec![*verb, "-B", &name];
        argv.extend_from_slice(args);
        let o = Command::new(&recorder).args(&argv).output().unwrap();
        assert!(
            o.status.success(),
            "trace-cmd {argv:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let want = files(&t, &name);
        remove(&name, &cmdlines);
        let o = tracectl(&argv);
        assert!(
            o.status.success(),
            "tracectl {argv:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got = files(&t, &name);
        remove(&name, &cmdlines);
        for (f, w) in &want {
            let g = got.get(f).map(String::as_str).unwrap_or("<missing>");
            if g != w {
                differences.push(format!(
                    "{verb} {}: {f}: trace-cmd {w:?}, tracectl {g:?}",
                    args.join(" ")
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A `start` that runs a command: `-F` makes the command's pid the event filter of every
/// buffer configured (trace-cmd 3.1.6 writes it to the set_event_pid of the buffer -F is
/// given for and to the event filters of the others: `(common_pid==PID)||(pid==PID)` on a
/// second instance's sched_wakeup), and the exit status is the command's, as with
/// trace-cmd; `--fork` returns at once.
#[test]
fn start_runs_a_command_and_f_filters_its_pid_live() {
    if !live::ready() {
        return;
    }
    let t = Tracefs::at(TRACEFS);
    let name = format!("tracectl-startcmd-{}", std::process::id());
    let cmdlines = t
        .top()
        .read_string("saved_cmdlines_size")
        .unwrap()
        .trim()
        .to_string();
    let other = format!("{name}-other");
    let _cleanup = Cleanup(&name, cmdlines.clone());
    let _cleanup_other = Cleanup(&other, cmdlines.clone());
    let top_pids = t.top().read_string("set_event_pid").unwrap();
    let o = tracectl(&[
        "start",
        "-B",
        &name,
        "-F",
        "-e",
        "sched:sched_process_exit",
        "-B",
        &other,
        "-e",
        "sched:sched_process_exit",
        "--",
        "sh",
        "-c",
        "echo $$ > /dev/stderr; exit 3",
    ]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let pid = String::from_utf8_lossy(&o.stderr).trim().to_string();
    let inst = t.instance(Some(&name)).unwrap();
    assert_eq!(inst.read_string("set_event_pid").unwrap().trim(), pid);
    // The buffer after it follows the command too.
    let second = t.instance(Some(&other)).unwrap();
    assert_eq!(second.read_string("set_event_pid").unwrap().trim(), pid);
    // -F after -B leaves the top level alone: its pid filter is not touched.
    assert_eq!(t.top().read_string("set_event_pid").unwrap(), top_pids);
    let trace = inst.read_string("trace").unwrap();
    assert!(
        trace
            .lines()
            .any(|l| l.contains("sched_process_exit:") && l.contains(&format!("pid={pid} "))),
        "{trace}"
    );
    remove(&name, &cmdlines);
    remove(&other, &cmdlines);
    let begin = std::time::Instant::now();
    // Not through pipes: the forked command keeps them open until it ends.
    let status = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TRACEFS, "start", "-B", &name, "--fork"])
        .args(["-e", "sched:sched_switch", "sleep", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(begin.elapsed() < std::time::Duration::from_millis(1500));
    remove(&name, &cmdlines);
}

/// `-v -B OLD -B NEW`: trace-cmd removes OLD before configuring NEW; so do we.
#[test]
fn v_before_b_removes_the_instance_like_trace_cmd_live() {
    if !live::ready() {
        return;
    }
    let Some(recorder) = tracecmd::recorder() else {
        return;
    };
    let _lock = crate::support::live::TopLock::take();
    let t = Tracefs::at(TRACEFS);
    let name = format!("tracectl-vb-new-{}", std::process::id());
    let old = format!("tracectl-vb-old-{}", std::process::id());
    let cmdlines = t
        .top()
        .read_string("saved_cmdlines_size")
        .unwrap()
        .trim()
        .to_string();
    let _cleanup = (
        Cleanup(&name, cmdlines.clone()),
        Cleanup(&old, cmdlines.clone()),
    );
    let argv = [
        "set",
        "-v",
        "-B",
        &old,
        "-B",
        &name,
        "-e",
        "sched:sched_switch",
    ];
    let mut seen = Vec::new();
    for tool in ["trace-cmd", "tracectl"] {
        t.create_instance(&old).unwrap();
        let o = if tool == "trace-cmd" {
            Command::new(&recorder).args(argv).output().unwrap()
        } else {
            tracectl(&argv)
        };
        assert!(
            o.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let old_left = t.instance(Some(&old)).is_ok();
        seen.push((old_left, files(&t, &name)));
        remove(&name, &cmdlines);
    }
    assert!(!seen[0].0, "trace-cmd left {old}");
    assert_eq!(seen[0], seen[1]);
}

/// The top level's files a `start`/`set` with -B may write.
fn top_files(t: &Tracefs) -> BTreeMap<String, String> {
    let top = t.top();
    let mut out = BTreeMap::new();
    for f in [
        "tracing_on",
        "current_tracer",
        "trace_clock",
        "buffer_size_kb",
        "tracing_cpumask",
        "set_event",
        "set_event_pid",
        "events/sched/sched_switch/enable",
        "events/irq/enable",
        "options/stacktrace",
        "options/print-parent",
    ] {
        let v = top.read_string(f).unwrap_or_else(|e| format!("<{e}>"));
        out.insert(format!("top {f}"), v.trim_end().to_string());
    }
    out
}

/// Options after each -B are that instance's and those before any -B the top level's,
/// which is left alone when they name no event nor tracer, as trace-cmd start and set
/// parse them: the two instances and the top level end as trace-cmd leaves them. The
/// top level's event files are saved before and put back after each run.
#[test]
fn options_belong_to_the_buffer_of_the_b_before_them_like_trace_cmd_live() {
    if !live::ready() {
        return;
    }
    let Some(recorder) = tracecmd::recorder() else {
        return;
    };
    let _lock = crate::support::live::TopLock::take();
    let t = Tracefs::at(TRACEFS);
    let a = format!("tracectl-group-a-{}", std::process::id());
    let b = format!("tracectl-group-b-{}", std::process::id());
    let cmdlines = t
        .top()
        .read_string("saved_cmdlines_size")
        .unwrap()
        .trim()
        .to_string();
    let _cleanup = (Cleanup(&a, cmdlines.clone()), Cleanup(&b, cmdlines.clone()));
    let (a, b) = (a.as_str(), b.as_str());
    let cases: &[(&str, Vec<&str>)] = &[
        // The top level names no event: its -b and -O change nothing anywhere.
        (
            "start",
            vec![
                "-b",
                "300",
                "-O",
                "noprint-parent",
                "-B",
                a,
                "-e",
                "irq",
                "-b",
                "400",
                "-B",
                b,
                "-T",
                "-C",
                "global",
                "-e",
                "sched",
                "-v",
                "-e",
                "sched:sched_switch",
            ],
        ),
        (
            "set",
            vec![
                "-B",
                a,
                "-e",
                "sched:sched_switch",
                "-f",
                "prev_pid != 0",
                "-M",
                "1",
                "-P",
                "1",
                "-c",
                "-B",
                b,
                "-e",
                "sched:sched_wakeup",
                "-O",
                "noprint-parent",
            ],
        ),
        // --no-filter (start only) writes no pid filter, in any buffer.
        (
            "start",
            vec![
                "-B",
                a,
                "-e",
                "sched:sched_switch",
                "-P",
                "1",
                "--no-filter",
                "-B",
                b,
                "-e",
                "irq",
            ],
        ),
        // The top level names an event: it is configured too, with its own options.
        (
            "set",
            vec![
                "-e",
                "sched:sched_switch",
                "-B",
                a,
                "-e",
                "irq",
                "-b",
                "400",
                "-B",
                b,
                "-T",
            ],
        ),
    ];
    let mut differences = Vec::new();
    for (verb, args) in cases {
        let mut argv = vec![*verb];
        argv.extend_from_slice(args);
        let mut seen = Vec::new();
        for tool in ["trace-cmd", "tracectl"] {
            let top_before = top_files(&t);
            let mut ledger = tracectl::tracefs::Ledger::new();
            for f in [
                "set_event",
                "buffer_size_kb",
                "options/stacktrace",
                "options/print-parent",
            ] {
                ledger.save(&t.top(), f).unwrap();
            }
            let o = if tool == "trace-cmd" {
                Command::new(&recorder).args(&argv).output().unwrap()
            } else {
                tracectl(&argv)
            };
            let mut state = top_files(&t);
            let restored = ledger.restore();
            assert!(restored.is_empty(), "{restored:?}");
            assert_eq!(top_before, top_files(&t), "the top level is back");
            assert!(
                o.status.success(),
                "{tool} {argv:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            for (name, tag) in [(a, "A"), (b, "B")] {
                for (f, v) in files(&t, name) {
                    state.insert(format!("{tag} {f}"), v);
                }
                remove(name, &cmdlines);
            }
            seen.push(state);
        }
        for (f, w) in &seen[0] {
            let g = seen[1].get(f).map(String::as_str).unwrap_or("<missing>");
            if g != w {
                differences.push(format!(
                    "{verb} {}: {f}: trace-cmd {w:?}, tracectl {g:?}",
                    args.join(" ")
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
