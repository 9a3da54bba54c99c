//! Verbs that run a command (record, set, graph) take it as trace-cmd does: after the options, with or without
//! `--`, everything after the command's name being its own. Run against a recorded tree,
//! so the command line is parsed in full and then refused for the tree, changing nothing.

use crate::support::tree::Tree;

const TREE: &str = "linux-6.18-sched-irq";

/// The command line parses (no clap error about the command's own options) and the verb
/// refuses the recorded tree before it writes anything or starts the command.
fn refused_for_the_tree(args: &[&str], verb: &str) {
    let t = Tree::new(TREE);
    let before = t.bytes();
    let err = t.fails(args);
    assert!(
        err.contains("a recorded tree, not a live kernel's tracefs")
            && err.contains(&format!("{verb} needs a running kernel")),
        "tracectl {args:?}: {err}"
    );
    assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    t.assert_unchanged(&before, &format!("{args:?}"));
    assert!(
        !t.dir.path().join("trace.dat").exists(),
        "{args:?} wrote trace.dat"
    );
}

#[test]
fn record_takes_the_command_after_the_options() {
    refused_for_the_tree(&["record", "-e", "sched", "ls", "-l"], "record");
    refused_for_the_tree(&["record", "-e", "sched", "--", "ls", "-l"], "record");
    refused_for_the_tree(
        &["record", "-F", "-e", "sched", "sh", "-c", "true"],
        "record",
    );
}

#[test]
fn graph_takes_the_command_after_the_options() {
    refused_for_the_tree(&["graph", "-g", "vfs_read", "ls", "-l"], "graph");
    refused_for_the_tree(&["graph", "-g", "vfs_read", "--", "ls", "-l"], "graph");
}

#[test]
fn record_f_without_a_command_says_where_it_goes() {
    let t = Tree::new(TREE);
    let err = t.fails(&["record", "-F", "-e", "sched"]);
    assert!(
        err.contains("-F needs a command after the options"),
        "{err}"
    );
}

#[test]
fn set_and_start_take_the_command_after_the_options() {
    // As in trace-cmd 3.1.6, start runs a command too (and with --fork does not wait).
    for verb in ["set", "start"] {
        let what = format!("{verb} with a command");
        refused_for_the_tree(&[verb, "-e", "sched", "ls", "-l"], &what);
        refused_for_the_tree(&[verb, "-e", "sched", "--", "ls", "-l"], &what);
    }
    let t = Tree::new(TREE);
    let before = t.bytes();
    for (args, says) in [
        (
            &["set", "-e", "sched", "--fork", "ls"][..],
            "set does not take --fork",
        ),
        (&["set", "-a", "-e", "sched"][..], "set does not take -a"),
        (
            &["start", "-e", "sched", "--fork"][..],
            "--fork needs a command",
        ),
        (&["start", "-e", "sched", "-F"][..], "-F needs a command"),
        (
            &["set", "--user", "root", "-e", "sched"][..],
            "--user needs a command",
        ),
        (&["start", "-c", "-e", "sched"][..], "give -P PID or -F"),
        (
            &["start", "--verbose=loud", "-e", "sched"][..],
            "--verbose=loud: use one of",
        ),
    ] {
        let err = t.fails(args);
        assert!(err.contains(says), "{args:?}: {err}");
        t.assert_unchanged(&before, &format!("{args:?}"));
    }
}

/// The recording-only options: trace-cmd 3.1.6 start accepts them (they change nothing
/// without a recording) and set refuses them ("has no effect with the command set").
#[test]
fn set_refuses_and_start_accepts_the_recording_only_options() {
    let t = Tree::new(TREE);
    let before = t.bytes();
    for (flag, value) in [
        ("-s", Some("1000")),
        ("-r", Some("10")),
        ("-k", None),
        ("--date", None),
        ("--ts-offset", Some("5")),
        ("--no-filter", None),
    ] {
        let mut args = vec!["set", "-e", "sched:sched_switch", flag];
        args.extend(value);
        let err = t.fails(&args);
        assert!(
            err.contains(&format!("set does not take {flag}")),
            "{args:?}: {err}"
        );
        t.assert_unchanged(&before, &format!("{args:?}"));
    }
    let o = t.run(&[
        "start",
        "-e",
        "sched:sched_switch",
        "-s",
        "1000",
        "-r",
        "10",
        "-k",
        "--date",
        "--ts-offset",
        "5",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(t.read("events/sched/sched_switch/enable"), "1");
}
