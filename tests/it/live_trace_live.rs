//! `session::LiveTrace`: tracepoints enabled in a private instance and read back as typed
//! records, the library's example path.

use std::time::Duration;

use tracectl::session::{LiveError, LiveTrace};
use tracectl::tracefs::{Tracefs, TracefsError};

use crate::support::{fixtures, live};

fn own_instances(t: &Tracefs) -> Vec<String> {
    let me = format!("tracectl-live-{}", std::process::id());
    t.instances()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| *n == me)
        .collect()
}

#[test]
fn live_trace_reads_sched_switch_as_typed_fields_and_removes_its_instance() {
    if !live::ready() {
        return;
    }
    let t = Tracefs::at(live::TRACEFS);
    let mut trace = LiveTrace::start(&t, &["sched:sched_switch"]).unwrap();
    assert_eq!(
        own_instances(&t).len(),
        1,
        "the private instance exists while tracing"
    );
    let mut seen = Vec::new();
    // Switches happen while this thread sleeps in read_for's waits.
    let n = trace
        .read_for(Duration::from_millis(500), |ev| {
            seen.push((
                ev.system().to_string(),
                ev.name().to_string(),
                ev.str("next_comm"),
                ev.int("next_pid"),
                ev.int("prev_state"),
                ev.pid(),
            ));
        })
        .unwrap();
    assert_eq!(n as usize, seen.len());
    assert!(!seen.is_empty(), "no sched_switch in half a second");
    for (system, name, next_comm, next_pid, prev_state, pid) in &seen {
        assert_eq!((system.as_str(), name.as_str()), ("sched", "sched_switch"));
        assert!(next_comm.as_ref().is_some_and(|c| !c.is_empty()));
        assert!(next_pid.is_some_and(|p| p >= 0));
        assert!(prev_state.is_some());
        assert!(pid.is_some_and(|p| p >= 0));
    }
    drop(trace);
    assert!(
        own_instances(&t).is_empty(),
        "the private instance is removed on drop"
    );
}

#[test]
fn live_trace_with_a_typo_creates_nothing_and_names_the_closest_event() {
    if !live::ready() {
        return;
    }
    let t = Tracefs::at(live::TRACEFS);
    let err = LiveTrace::start(&t, &["sched:sched_switch", "sched:sched_swich"])
        .err()
        .expect("a misspelt event is an error");
    assert!(
        err.to_string().contains("did you mean sched:sched_switch"),
        "{err}"
    );
    assert!(own_instances(&t).is_empty());
}

#[test]
fn live_trace_refuses_a_recorded_tree() {
    let t = Tracefs::at(fixtures::tree("linux-6.18-sched-irq"));
    match LiveTrace::start(&t, &["sched:sched_switch"]) {
        Err(LiveError::Tracefs(TracefsError::NotLive { .. })) => {}
        other => panic!("expected a refusal, got {:?}", other.err()),
    }
}
