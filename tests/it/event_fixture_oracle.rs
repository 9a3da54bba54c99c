//! The print-fmt engine against the kernel's own `trace` text of the committed trees.

use crate::support::skips;

use crate::support::event_oracle;

use std::path::Path;

use tracectl::event::Kallsyms;
use tracectl::tracefs::Tracefs;

fn tree(name: &str) -> Option<Tracefs> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tracefs-fixtures")
        .join(name);
    p.join("trace").exists().then(|| Tracefs::at(p))
}

fn kallsyms(t: &Tracefs) -> Option<Kallsyms> {
    let z = std::fs::read(t.path("host/kallsyms.zst")).ok()?;
    let text = zstd::decode_all(&z[..]).ok()?;
    Some(Kallsyms::parse(&String::from_utf8_lossy(&text)))
}

fn run(name: &str, min_rate: f64) {
    let Some(t) = tree(name) else {
        skips::skip(format!("tracefs-fixtures/{name} is not in this checkout"));
        return;
    };
    let k = kallsyms(&t);
    let text = std::fs::read_to_string(t.path("trace")).unwrap();
    let report = event_oracle::check_tree(&t, k.as_ref(), &text, &event_oracle::fixture_raw(&t));
    report.print(name);
    let (ok, bad) = report.total();
    assert_eq!(
        report.unpaired, 0,
        "{name}: records and kernel text lines without a partner (see above)"
    );
    assert!(
        ok + bad > 100,
        "{name}: too few records paired ({ok} + {bad}); the walker or the line parser is broken"
    );
    let rate = ok as f64 / (ok + bad) as f64;
    assert!(
        rate >= min_rate,
        "{name}: {:.2}% of records match, expected at least {:.2}%",
        rate * 100.0,
        min_rate * 100.0
    );
}

#[test]
fn sched_irq_tree_matches_the_kernel_text() {
    run("linux-6.18-sched-irq", 1.0);
}

#[test]
fn sixteen_kib_sub_buffer_tree_matches_the_kernel_text() {
    run("linux-6.18-sched-subbuf16", 1.0);
}

#[test]
fn overrun_tree_matches_the_kernel_text() {
    run("linux-6.18-all-overrun", 1.0);
}

#[test]
fn all_events_tree_matches_the_kernel_text() {
    run("linux-6.18-all", 1.0);
}
