//! The checks that run before `start`/`set` write anything, against the kernel itself:
//! every filter, trigger and CPU mask of a corpus is written to a private instance of the
//! live tracefs (sched_switch's `filter` and `trigger`, `tracing_cpumask`), and the
//! kernel's verdict must be the check's. Only that instance is touched; it is removed on
//! every path.

use tracectl::event::{check_filter, Schema};
use tracectl::tracefs::{AppendMode, EventName, Instance, Tracefs};

const ROOT: &str = "/sys/kernel/tracing";

const CORPUS: &[&str] = &[
    "prev_pid != 0",
    "prev_pid!=0",
    "(prev_pid == 1 || next_pid == 0x10) && !(prev_prio < 120)",
    "prev_comm == \"bash\"",
    "next_comm ~ \"kworker*\"",
    "prev_comm==sh",
    "common_pid > 0 && CPU == 1",
    "COMM ~ 'ls*'",
    "prev_state & 1",
    "prev_prio >= -1",
    "((((prev_pid == 1))))",
    "prev_pidd == 1",
    "prev_pid = 1",
    "prev_pid == ",
    "prev_pid == abc",
    "prev_comm < \"a\"",
    "prev_pid ~ \"a\"",
    "prev_pid == \"1\"",
    "(prev_pid == 1",
    "prev_pid == 1)",
    "prev_pid == 1 &&",
    "prev_pid == 1 next_pid == 2",
    "prev_comm == \"bash",
    "[",
    "prev_pid == 010",
    "prev_pid == 09",
    "cpu == 1",
    "comm == \"x\"",
    "prev_pid == 1 || ",
    "!prev_pid == 1",
    "prev_pid == 1 && && prev_pid == 2",
    "&& prev_pid == 1",
    "prev_pid == 1 &&)",
    "prev_pid==1&&next_pid==2",
    "prev_pid == -0x10",
    "()",
    "!(prev_pid == 1)",
    "prev_comm == \"\"",
    "common_flags == -1",
    "common_flags == 300",
    "prev_pid == 99999999999",
    "prev_pid == 0x",
    "prev_comm == \"a b\"",
    "prev_pid == 1a",
    "prev_pid > 18446744073709551616",
    "prev_pid == +1",
    "prev_state == -9223372036854775808",
    "prev_pid == 9223372036854775808",
    "common_flags == 18446744073709551615",
    "common_flags == 0777",
];

/// A private instance of the live tracefs, removed on drop; None (with the reason
/// printed) without root or tracefs.
struct Private {
    t: Tracefs,
    name: String,
    inst: Instance,
}

impl Private {
    fn new(tag: &str) -> Option<Private> {
        if unsafe { libc::geteuid() } != 0 || !std::path::Path::new(ROOT).join("instances").is_dir()
        {
            crate::support::skips::skip(format!("needs root and tracefs with instances at {ROOT}"));
            return None;
        }
        let t = Tracefs::at(ROOT);
        let name = format!("tracectl-{tag}-{}", std::process::id());
        let inst = t.create_instance(&name).unwrap();
        Some(Private { t, name, inst })
    }

    /// sched_switch's schema, from the live format.
    fn sched_switch(&self) -> Schema {
        let format = self
            .t
            .read_string("events/sched/sched_switch/format")
            .expect("sched_switch format");
        Schema::parse("sched", &format, 8).unwrap()
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        let _ = self.t.remove_instance(&self.name);
    }
}

#[test]
fn filter_check_agrees_with_the_kernel_live() {
    let Some(p) = Private::new("filtercheck") else {
        return;
    };
    let schema = p.sched_switch();
    let inst = &p.inst;
    let mut disagree = Vec::new();
    for f in CORPUS {
        let kernel = inst
            .write(
                "events/sched/sched_switch/filter",
                format!("{f}\n").as_bytes(),
                AppendMode::Truncate,
            )
            .is_ok();
        let ours = check_filter(&schema, f);
        if kernel != ours.is_ok() {
            disagree.push(format!("{f:?}: kernel {kernel}, check_filter {ours:?}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

const TRIGGERS: &[&str] = &[
    "traceoff",
    "traceoff:1",
    "traceoff:abc",
    "traceoff:1:2",
    "traceoff if prev_pidd == 1",
    "traceoff if prev_pid == 1",
    "traceoff:3 if prev_comm == \"x\"",
    "bogus",
    "snapshot",
    "hist:keys=prev_pid",
    "enable_event:sched:sched_wakeup",
    "enable_event:sched:nosuch",
    "enable_event:sched",
    "stacktrace:count=2",
    "traceon:unlimited",
    "traceoff if prev_comm == x",
    "traceoff if",
    "stacktrace:5 if (prev_pid == 1",
];

#[test]
fn trigger_check_agrees_with_the_kernel_live() {
    let Some(p) = Private::new("triggercheck") else {
        return;
    };
    let schema = p.sched_switch();
    let inst = &p.inst;
    let ev = EventName::new("sched", "sched_switch");
    let mut disagree = Vec::new();
    for r in TRIGGERS {
        // Checked first, while the file still lists the available triggers.
        let ours = inst
            .check_trigger(&ev, r)
            .map_err(|e| e.to_string())
            .and_then(|f| match f {
                Some(f) => check_filter(&schema, &f).map_err(|e| e.to_string()),
                None => Ok(()),
            });
        let kernel = inst
            .write(
                "events/sched/sched_switch/trigger",
                r.as_bytes(),
                AppendMode::Truncate,
            )
            .is_ok();
        inst.clear_triggers(&ev).unwrap();
        if kernel != ours.is_ok() {
            disagree.push(format!("{r:?}: kernel {kernel}, checks {ours:?}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

#[test]
fn cpumask_check_agrees_with_the_kernel_live() {
    let Some(p) = Private::new("maskcheck") else {
        return;
    };
    let inst = &p.inst;
    let ncpus = inst.cpus().unwrap().len();
    let all = format!("{:x}", (1u128 << ncpus) - 1);
    let beyond = format!("{:x}", 1u128 << ncpus);
    let mut corpus: Vec<String> = [
        "1",
        "0",
        "0x1",
        "zz",
        "3,,1",
        "1,0",
        "ffffffff,ffffffff",
        "00000001",
        "0,1",
        "000000001",
        "0000000000000003",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    corpus.extend([all, beyond]);
    let mut disagree = Vec::new();
    for m in &corpus {
        // What is written is what the check returns (it drops a `0x`).
        let (ours, text) = match inst.check_cpumask(m) {
            Ok(t) => (true, t.to_string()),
            Err(_) => (false, m.clone()),
        };
        let kernel = inst
            .write(
                "tracing_cpumask",
                format!("{text}\n").as_bytes(),
                AppendMode::Truncate,
            )
            .is_ok();
        if kernel != ours {
            disagree.push(format!("{m:?}: kernel {kernel}, check_cpumask {ours}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

#[test]
fn buffer_checks_agree_with_the_kernel_live() {
    let Some(p) = Private::new("bufcheck") else {
        return;
    };
    let inst = &p.inst;
    let page_kb = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .unwrap()
        .unwrap() as u64
        / 1024;
    let mut disagree = Vec::new();
    let mut compare = |file: &str, v: u64, ours: bool| {
        let kernel = inst
            .write(file, format!("{v}\n").as_bytes(), AppendMode::Truncate)
            .is_ok();
        if kernel != ours {
            disagree.push(format!("{file} {v}: kernel {kernel}, check {ours}"));
        }
    };
    for v in [0, 1, 7] {
        compare("buffer_size_kb", v, inst.check_buffer_size(v).is_ok());
    }
    if inst.exists("buffer_subbuf_size_kb") {
        for v in [0, 1, page_kb, 128 * page_kb, 128 * page_kb + 1] {
            compare(
                "buffer_subbuf_size_kb",
                v,
                inst.check_subbuf_size_kb(v).is_ok(),
            );
        }
    }
    for v in [0, 100, 101] {
        compare("buffer_percent", v, inst.check_buffer_percent(v).is_ok());
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}
