//! `tracectl perf report` against perf 6.1's `perf report --stdio` on a dwarf recording
//! of tests/data/perf/inlined_ties.c (built here with `-O2 -g`) run as three processes
//! at once. perf's comparison of rows by symbol is no total order (an inlined function
//! is compared by name, other symbols by start; a symbol and an address by object, two
//! addresses by address alone) and a row's symbol changes when a location of another
//! process lands in it, so perf's tree misses rows it already has and makes several
//! rows of one symbol, merges some of them again when `comm` is a key, and orders rows
//! of equal shares by where they were filed; the call graphs' siblings likewise (an
//! inlined function matched by name). Every line is compared with perf's. Skips (with the reason) without root, perf or a C compiler.

use std::path::Path;

use crate::support::perf::{cc_workdir, perf_fixture, run};

/// `perf report --stdio ARGS` less its closing tip, and `tracectl perf report ARGS`.
fn both(d: &Path, args: &[&str]) -> (String, String) {
    let mut perf_args = vec!["report", "-i", "ties.data", "--stdio"];
    perf_args.extend_from_slice(args);
    let perf = run("perf", &perf_args, d)
        .lines()
        .filter(|l| !l.starts_with("# (Tip:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut ours_args = vec!["perf", "report", "-i", "ties.data"];
    ours_args.extend_from_slice(args);
    let ours = run(env!("CARGO_BIN_EXE_tracectl"), &ours_args, d);
    (perf, ours)
}

#[test]
fn perf_report_live_rows_of_one_symbol_in_several_processes_match_perf() {
    let Some(dir) = cc_workdir() else {
        return;
    };
    let d = dir.path();
    let src = perf_fixture("inlined_ties.c");
    run("cc", &["-O2", "-g", "-o", "ties", &src], d);
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "ties.data",
            "-F",
            "999",
            "--call-graph",
            "dwarf,4096",
            "--",
            "sh",
            "-c",
            "./ties 40 & ./ties 40 & ./ties 40; wait",
        ],
        d,
    );
    // The case itself: perf shows some symbol on more than one row.
    let (perf, _) = both(d, &["--sort", "sym", "-g", "none"]);
    let mut names: Vec<&str> = perf
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('%'))
        .filter_map(|l| l.split_once("  [").map(|(_, s)| s))
        .collect();
    let rows = names.len();
    names.sort_unstable();
    names.dedup();
    assert!(names.len() < rows, "a symbol on two rows:\n{perf}");
    for args in [
        &["--sort", "sym", "-g", "none"][..],
        &["--sort", "sym", "--no-children", "-g", "none"],
        &["-g", "none"],
        &["--sort", "dso,sym", "-g", "none"],
        // `dso` after `sym`: perf compares the symbols without their objects first.
        &["--sort", "sym,dso", "-g", "none"],
        &["--sort", "pid,sym", "-g", "none"],
        &["--sort", "comm,sym", "-g", "none"],
        // The call graphs too: inlined siblings of equal shares in perf's order.
        &[],
        &["--no-children"],
        &["--sort", "sym"],
        &["--sort", "dso,sym", "-g", "caller"],
    ] {
        let (perf, ours) = both(d, args);
        // perf printed a table (a quiet machine can leave few rows: no count is asked).
        assert!(
            perf.lines().any(|l| !l.starts_with('#') && l.contains('%')),
            "{args:?}: perf's rows:\n{perf}"
        );
        assert_eq!(ours, perf, "{args:?}");
    }
}
