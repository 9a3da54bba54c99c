//! `list -e REGEX` and `list -f REGEX` match as trace-cmd's do. The expected lists are
//! trace-cmd 3.1.6's `trace-cmd list -e PATTERN` on the kernel that
//! `tracefs-fixtures/linux-6.18-all` was captured from (its `available_events` is the
//! same, byte for byte); the tree is only read.

use std::process::{Command, Output};

use crate::support::tree::{bin, repo, Tree};

fn list(args: &[&str]) -> Output {
    Command::new(bin())
        .arg("--tracefs")
        .arg(repo().join("tracefs-fixtures/linux-6.18-all"))
        .arg("list")
        .args(args)
        .env_remove("TRACECTL_TRACEFS")
        .output()
        .unwrap()
}

fn events(pattern: &str) -> String {
    let o = list(&["-e", pattern]);
    assert!(
        o.status.success(),
        "list -e {pattern:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn e_takes_trace_cmds_regex() {
    // An unanchored, case-insensitive search in the system or the event name.
    assert_eq!(
        events("sched_sw.*"),
        "sched:sched_swap_numa\nsched:sched_switch\n"
    );
    assert_eq!(
        events("^sched_sw"),
        "sched:sched_swap_numa\nsched:sched_switch\n"
    );
    assert_eq!(events("SCHED_SWITCH$"), "sched:sched_switch\n");
    // SYS:EVENT: each part searched in its own name.
    assert_eq!(
        events("SCH:sw"),
        "sched:sched_swap_numa\nsched:sched_switch\n"
    );
    assert_eq!(events(":sched_switch"), "sched:sched_switch\n");
    assert_eq!(events("ch$:sw"), "");
    // A basic regex: `*` repeats the `w` before it, `\|` is the alternation, `|` and `{`
    // are themselves; the systems come in the order they first appear.
    assert_eq!(
        events("sched_sw*"),
        "syscalls:sys_exit_sched_setaffinity\n\
         syscalls:sys_enter_sched_setaffinity\n\
         syscalls:sys_exit_sched_setattr\n\
         syscalls:sys_enter_sched_setattr\n\
         syscalls:sys_exit_sched_setparam\n\
         syscalls:sys_enter_sched_setparam\n\
         syscalls:sys_exit_sched_setscheduler\n\
         syscalls:sys_enter_sched_setscheduler\n\
         sched:sched_skip_cpuset_numa\n\
         sched:sched_skip_vma_numa\n\
         sched:sched_swap_numa\n\
         sched:sched_stick_numa\n\
         sched:sched_stat_runtime\n\
         sched:sched_switch\n"
    );
    assert_eq!(
        events("irq:.*entry$"),
        "irq_vectors:thermal_apic_entry\n\
         irq_vectors:call_function_single_entry\n\
         irq_vectors:call_function_entry\n\
         irq_vectors:reschedule_entry\n\
         irq_vectors:irq_work_entry\n\
         irq_vectors:x86_platform_ipi_entry\n\
         irq_vectors:error_apic_entry\n\
         irq_vectors:spurious_apic_entry\n\
         irq_vectors:local_timer_entry\n\
         irq:tasklet_entry\n\
         irq:softirq_entry\n\
         irq:irq_handler_entry\n"
    );
    assert_eq!(events("sched|irq:irq_handler_entry"), "");
    assert_eq!(
        events("sched\\|irq:irq_handler_entry"),
        "irq:irq_handler_entry\n"
    );
    assert_eq!(events("x{"), "");
    assert_eq!(events("writeback").lines().count(), 37);
    assert_eq!(events("^writeback$").lines().count(), 33);
}

#[test]
fn a_glob_that_matches_nothing_as_a_regex_still_works() {
    // trace-cmd prints nothing for these (a leading `*` is literal); the glob is meant.
    let sched = events("sched:*");
    assert_eq!(sched.lines().count(), events("^sched:").lines().count());
    assert!(sched.lines().all(|l| l.starts_with("sched:")), "{sched}");
    assert_eq!(
        events("*_switch"),
        "sched:sched_switch\nxfs:xlog_iclog_switch\n"
    );
}

#[test]
fn an_invalid_regex_is_an_error_naming_it() {
    for pat in ["[", "[[:alpha:]]*_switch$", "sched\\"] {
        let o = list(&["-e", pat]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "list -e {pat:?} succeeded");
        assert!(err.contains("not a valid regular expression"), "{err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn f_takes_a_regex_and_still_a_glob() {
    let t = Tree::new("linux-6.18-sched-irq");
    t.write(
        "available_filter_functions",
        "vfs_read\nvfs_readv\nksys_read\nvfs_write\ndo_sys_openat2\n",
    );
    assert_eq!(t.ok(&["list", "-f", "^vfs_rea"]), "vfs_read\nvfs_readv\n");
    assert_eq!(t.ok(&["list", "-f", "READ$"]), "vfs_read\nksys_read\n");
    assert_eq!(
        t.ok(&["list", "-f", "vfs_read\\|openat"]),
        "vfs_read\nvfs_readv\ndo_sys_openat2\n"
    );
    assert_eq!(t.ok(&["list", "-f", "*_read"]), "vfs_read\nksys_read\n");
    assert_eq!(t.ok(&["list", "-f", "nothing_like_it"]), "");
    let err = t.fails(&["list", "-f", "["]);
    assert!(
        err.contains("-f \"[\" is not a valid regular expression"),
        "{err}"
    );
}
