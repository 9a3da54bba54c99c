//! A `start` or `set` that fails changes nothing: every value is checked before the
//! first write. Each failing invocation runs against a copy of a recorded tree, and
//! every byte of the tree is compared before and after.

use crate::support::tree as tree_support;

use tree_support::Tree;

const FIXTURE: &str = "linux-6.18-sched-irq";

#[test]
fn a_failed_start_or_set_changes_no_byte() {
    let t = Tree::new(FIXTURE);
    // Make the tree differ from what a reset writes, so a reset before failing shows.
    t.write("tracing_on", "0\n");
    t.write(
        "trace_clock",
        "local [global] counter uptime perf mono mono_raw boot tai x86-tsc\n",
    );
    let before = t.bytes();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["-e", "sched", "-O", "nosuchoption"],
            &["nosuchoption", "options"],
        ),
        (
            &["-e", "sched", "-O", "nohash-pt"],
            &["hash-pt", "did you mean hash-ptr"],
        ),
        (
            &["-e", "sched", "-M", "zz"],
            &["\"zz\" is not a hex CPU mask", "tracing_cpumask"],
        ),
        (&["-e", "sched", "-M", "3,,1"], &["not a hex CPU mask"]),
        (
            &["-e", "sched", "-M", "4"],
            &["names CPU 2, but this buffer has CPUs 0-1"],
        ),
        (
            &["-e", "sched", "--buffer-percent", "101"],
            &["101 is over 100", "buffer_percent"],
        ),
        (&["-e", "sched", "-b", "0"], &["0 KiB", "buffer_size_kb"]),
        (
            &["-e", "sched", "-b", "18014398509481984"],
            &["more bytes than a 64-bit size"],
        ),
        (&["-e", "sched", "-b", "18446744073709551616"], &["-b"]),
        (
            &["-e", "sched", "--subbuf-size", "0"],
            &["0 KiB", "buffer_subbuf_size_kb"],
        ),
        (
            &["-e", "sched", "-l", "vfs_read"],
            &["-l vfs_read", "set_ftrace_filter"],
        ),
        (
            &["-e", "sched", "-n", "vfs_read"],
            &["-n vfs_read", "set_ftrace_notrace"],
        ),
        (
            &["-e", "sched", "-g", "vfs_read"],
            &["-g vfs_read", "set_graph_function"],
        ),
        (
            &["-e", "sched", "--max-graph-depth", "3"],
            &["max_graph_depth"],
        ),
        (
            &["-e", "sched:sched_switch", "-f", "prev_pidd == 1"],
            &["no field \"prev_pidd\"", "sched:sched_switch"],
        ),
        (
            &["-e", "sched:sched_switch", "-f", "prev_comm == sh"],
            &["put \"sh\" in quotes"],
        ),
        (
            &["-e", "sched:sched_switch", "-f", "(prev_pid == 1"],
            &["'(' left open"],
        ),
        (
            &["-e", "sched", "-f", "no_such_field == 1"],
            &["no field \"no_such_field\""],
        ),
        (
            &["-e", "sched", "-R", "traceoff"],
            &["a trigger needs one event"],
        ),
        (
            &["-e", "sched:sched_switch", "-R", "snapshot"],
            &["no trigger \"snapshot\"", "it offers: traceon traceoff"],
        ),
        (
            &["-e", "sched:sched_switch", "-R", "traceoff:abc"],
            &["must be a number"],
        ),
        (
            &[
                "-e",
                "sched:sched_switch",
                "-R",
                "traceoff if prev_pidd == 1",
            ],
            &[
                "-R \"traceoff if prev_pidd == 1\" on sched:sched_switch",
                "no field \"prev_pidd\"",
            ],
        ),
        (
            &[
                "-e",
                "sched:sched_switch",
                "-R",
                "enable_event:sched:nosuch",
            ],
            &["unknown event \"sched:nosuch\""],
        ),
        (
            &["-e", "sched:sched_swich"],
            &["did you mean sched:sched_switch"],
        ),
        (
            &["-e", "sched", "-p", "nosuchtracer"],
            &["available_tracers"],
        ),
        (&["-e", "sched", "-C", "nosuchclock"], &["unknown clock"]),
        // A new instance is not even created.
        (
            &["-B", "new-one", "-e", "sched", "-O", "nosuchoption"],
            &["nosuchoption"],
        ),
    ];
    for verb in ["start", "set"] {
        for (args, says) in cases {
            let mut argv = vec![verb];
            argv.extend_from_slice(args);
            let err = t.fails(&argv);
            for s in *says {
                assert!(err.contains(s), "{argv:?}: {err:?} does not say {s:?}");
            }
            t.assert_unchanged(&before, &format!("{argv:?}"));
        }
    }
}

#[test]
fn set_with_a_missing_function_filter_fails_before_enabling_anything() {
    // It used to enable the event, warn "carrying on" and exit 1.
    let t = Tree::new(FIXTURE);
    let before = t.bytes();
    let o = t.run(&["set", "-e", "sched:sched_switch", "-l", "nosuch"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("-l nosuch") && err.contains("set_ftrace_filter"),
        "{err}"
    );
    assert!(!err.contains("carrying on"), "{err}");
    t.assert_unchanged(&before, "set -l nosuch");
}

#[test]
fn valid_values_still_go_through() {
    let t = Tree::new(FIXTURE);
    t.ok(&[
        "start",
        "-e",
        "sched:sched_switch",
        "-f",
        "prev_comm == \"bash\" && prev_pid != 0",
        "-e",
        "sched",
        "-f",
        "prev_pid > 1",
        "-O",
        "nohash-ptr",
        "-M",
        "0x3",
        "-b",
        "1",
        "--buffer-percent",
        "100",
        "--subbuf-size",
        "8",
    ]);
    assert_eq!(
        t.read("events/sched/sched_switch/filter"),
        "(prev_comm == \"bash\" && prev_pid != 0)"
    );
    // A system filter goes to the system's file; the kernel keeps it for the events it fits.
    assert_eq!(t.read("events/sched/filter"), "(prev_pid > 1)");
    assert_eq!(t.read("options/hash-ptr"), "0");
    assert_eq!(t.read("tracing_cpumask"), "3");
    assert_eq!(t.read("buffer_size_kb"), "1");
    assert_eq!(t.read("buffer_percent"), "100");
    assert_eq!(t.read("buffer_subbuf_size_kb"), "8");
}

/// `record` checks the same values before it creates its instance (live: a recording needs
/// a kernel; nothing is written, so this is safe on a shared machine).
#[test]
fn record_refuses_bad_values_before_writing_live() {
    let live = std::path::Path::new("/sys/kernel/tracing/events/header_page");
    if unsafe { libc::geteuid() } != 0 || !live.exists() {
        crate::support::skips::skip("needs root and tracefs at /sys/kernel/tracing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.dat");
    for (args, says) in [
        (&["-b", "0"][..], "buffer_size_kb: 0 KiB"),
        (&["-M", "zz"][..], "not a hex CPU mask"),
        (&["-O", "nosuchoption"][..], "no option \"suchoption\""),
        (&["--subbuf-size", "0"][..], "buffer_subbuf_size_kb: 0 KiB"),
    ] {
        let o = std::process::Command::new(tree_support::bin())
            .arg("--tracefs")
            .arg("/sys/kernel/tracing")
            .args(["record", "-q", "-e", "sched:sched_switch", "-o"])
            .arg(&out)
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
}
