//! `tracectl perf report` with the options of `perf report` that filter samples and
//! rows (`-c`, `--pid`, `--tid`, `-d`, `-S`, `-C`, `--time`, `-U`, `-x`), choose the
//! shares (`--percentage`), add columns (`-n`, `--show-total-period`) or cut the
//! output (`--percent-limit`, `-q`): on files recorded here by perf 6.1 (and one by
//! `tracectl perf record`), each option prints what `perf report --stdio` prints with
//! it, and changes what perf prints without it. Skips (with the reason) without root,
//! perf or a C compiler.

use std::path::Path;
use std::process::Command;

use crate::support::perf::{build_fixture_program, cc_missing, run, skip_reason};

/// perf's text without its random tip line, and ours, line for line.
fn same(ours: &str, perf: &str, what: &str) {
    // Line by line with their ends, as a last line without one (the -T --pretty raw
    // table) must stay without it.
    let perf: String = perf
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("# (Tip:"))
        .collect();
    for (i, (o, p)) in ours.lines().zip(perf.lines()).enumerate() {
        assert_eq!(o, p, "{what}: line {} differs\nperf:\n{perf}", i + 1);
    }
    assert_eq!(ours, perf, "{what}");
}

pub(crate) fn perf_and_cc() -> bool {
    match skip_reason().or_else(|| cc_missing().map(str::to_string)) {
        Some(why) => {
            crate::support::skips::skip(why);
            false
        }
        None => true,
    }
}

/// Compare `perf report --stdio ARGS` with ours on `file`, and make sure that `args`
/// without `option` (the arguments that option takes) prints something else.
pub(crate) fn check(d: &Path, file: &str, args: &[&str], option: &[&str]) {
    let what = format!("perf report {} {}", args.join(" "), option.join(" "));
    assert!(
        compare(d, file, args, option),
        "{what}: {option:?} changes perf's output"
    );
}

/// What [`check`] does but for the last step: ours must print what perf prints with
/// `option`; the answer is whether `option` changed what perf prints.
pub(crate) fn compare(d: &Path, file: &str, args: &[&str], option: &[&str]) -> bool {
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let mut full = vec!["report", "-i", file, "--stdio"];
    full.extend_from_slice(args);
    full.extend_from_slice(option);
    let perf = run("perf", &full, d);
    let ours = run(tracectl, &[&["perf"][..], &full].concat(), d);
    let what = format!("perf {}", full.join(" "));
    same(&ours, &perf, &what);
    let without = run("perf", &full[..full.len() - option.len()], d);
    let strip = |t: &str| -> String {
        t.lines()
            .filter(|l| !l.starts_with("# (Tip:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    strip(&perf) != strip(&without)
}

/// The `FIELD` of the first sample of comm `comm` (`perf script -F comm,FIELD`).
fn first_of(d: &Path, file: &str, comm: &str, field: &str) -> String {
    let f = format!("comm,{field}");
    let text = run("perf", &["script", "-i", file, "-F", &f], d);
    text.lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(comm)).then(|| w.next().unwrap_or_default().to_string())
        })
        .unwrap_or_else(|| panic!("no sample of {comm} in {file}:\n{text}"))
}

/// The time halfway between the first and the last sample, as perf's `--time` takes it.
fn middle_time(d: &Path, file: &str) -> String {
    let text = run("perf", &["script", "-i", file, "-F", "time"], d);
    let times: Vec<f64> = text
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(':').parse().ok())
        .collect();
    assert!(times.len() > 10, "{file} has samples: {text}");
    let mid = (times[0] + times[times.len() - 1]) / 2.0;
    format!("{mid:.6}")
}

/// tests/data/perf/ropts.c profiled with call chains and the CPU of each sample: a
/// process `ropts` (hot_main, and a thread `ro_thread` in hot_thread, both on CPU 1)
/// and its child `ro_child` (hot_child and getppid, on CPU 0).
#[test]
fn perf_report_live_filters_and_columns_match_perf() {
    if !perf_and_cc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("ropts", d);
    run(
        "perf",
        &[
            "record",
            "-q",
            "--sample-cpu",
            "-F",
            "999",
            "-g",
            "-o",
            "cc.data",
            "--",
            "./ropts",
        ],
        d,
    );
    let f = "cc.data";
    let child_pid = first_of(d, f, "ro_child", "pid");
    let thread_tid = first_of(d, f, "ro_thread", "tid");
    let mid = middle_time(d, f);
    let from_mid = format!("{mid},");
    let to_mid = format!(",{mid}");
    let g = ["-g", "none"];
    // Filters that keep the samples counted: shares of the whole event, and of what
    // is left with --percentage relative (the header's counts too).
    check(d, f, &[], &["-c", "ro_child"]);
    check(d, f, &g, &["--comms", "ro_child,ro_thread"]);
    check(d, f, &["-c", "ro_child"], &["--percentage", "relative"]);
    check(d, f, &["--no-children"], &["--pid", &child_pid]);
    check(d, f, &["--pid", &child_pid], &["--percentage", "relative"]);
    check(d, f, &g, &["--tid", &thread_tid]);
    check(d, f, &[], &["-d", "ropts"]);
    check(d, f, &g, &["--dsos", "libc.so.6,[kernel.kallsyms]"]);
    check(
        d,
        f,
        &["-d", "ropts", "--no-children"],
        &["--percentage", "relative"],
    );
    check(d, f, &[], &["-S", "hot_main"]);
    check(d, f, &g, &["--symbols", "hot_main,hot_thread"]);
    check(
        d,
        f,
        &["-c", "ro_child", "-d", "ropts"],
        &["-S", "hot_child"],
    );
    check(d, f, &["-p", "hot", "-x"], &["--percentage", "relative"]);
    // Filters that drop samples: the counts are of what is left.
    check(d, f, &[], &["-C", "0"]);
    check(d, f, &g, &["--cpu", "1"]);
    check(d, f, &g, &["--time", &from_mid]);
    check(d, f, &["--no-children"], &["--time", &to_mid]);
    // Columns and cuts.
    check(d, f, &g, &["-n"]);
    check(
        d,
        f,
        &["--no-children", "-g", "none"],
        &["--show-nr-samples"],
    );
    check(d, f, &g, &["--show-total-period"]);
    check(
        d,
        f,
        &["-n", "--no-children", "-g", "none"],
        &["--show-total-period"],
    );
    check(d, f, &g, &["--percent-limit", "20"]);
    check(d, f, &[], &["--percent-limit", "5"]);
    check(d, f, &g, &["-q"]);
    check(d, f, &["-c", "ro_child", "-g", "none"], &["--quiet"]);
}

/// A sampled address given to `-S` as a hexadecimal number selects the samples at
/// that address, and the number is no name (no `# symbol:` line, no column left out).
#[test]
fn perf_report_live_symbols_by_address_match_perf() {
    if !perf_and_cc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("ropts", d);
    run(
        "perf",
        &[
            "record", "-q", "-F", "999", "-g", "-o", "cc.data", "--", "./ropts",
        ],
        d,
    );
    let text = run(
        "perf",
        &["script", "-i", "cc.data", "-F", "ip,sym", "-G"],
        d,
    );
    let ip = text
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            let ip = w.next()?;
            (w.next() == Some("hot_main")).then(|| ip.to_string())
        })
        .unwrap_or_else(|| panic!("a sample in hot_main:\n{text}"));
    let g = ["-g", "none"];
    check(d, "cc.data", &g, &["-S", &format!("0x{ip}")]);
    check(d, "cc.data", &g, &["-S", &format!("{ip},hot_child")]);
}

/// `-U` leaves out the samples without a symbol and the entries of call chains
/// without one: a program without symbols (stripped, and without a build id, so that
/// no copy in the build-id cache names its functions).
#[test]
fn perf_report_live_hide_unresolved_matches_perf() {
    if !perf_and_cc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/ropts.c");
    run(
        "cc",
        &[
            "-O1",
            "-fno-omit-frame-pointer",
            "-s",
            "-Wl,--build-id=none",
            "-o",
            "ropts",
            src.to_str().unwrap(),
        ],
        d,
    );
    run(
        "perf",
        &[
            "record",
            "-q",
            "-F",
            "999",
            "-g",
            "-o",
            "strip.data",
            "--",
            "./ropts",
        ],
        d,
    );
    check(d, "strip.data", &[], &["-U"]);
    check(d, "strip.data", &["--no-children"], &["--hide-unresolved"]);
    check(d, "strip.data", &["-g", "none", "-n"], &["-U"]);
}

/// A file of tracepoints alone, which perf sorts by their text unless told otherwise;
/// with `--percentage relative` the call graph's threshold is a share of what the
/// filters leave, while its percentages stay shares of the whole event.
#[test]
fn perf_report_live_filters_on_tracepoints_match_perf() {
    if !perf_and_cc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("ropts", d);
    run(
        "perf",
        &[
            "record",
            "-q",
            "-e",
            "sched:sched_switch,raw_syscalls:sys_enter",
            "-g",
            "-o",
            "tp.data",
            "--",
            "./ropts",
        ],
        d,
    );
    let f = "tp.data";
    check(d, f, &["-g", "none"], &["-c", "ro_child"]);
    check(d, f, &["-g", "none"], &["-s", "comm,sym"]);
    check(
        d,
        f,
        &["-s", "pid,sym", "-c", "ro_child"],
        &["--percentage", "relative"],
    );
    check(d, f, &["-n"], &["-d", "libc.so.6"]);
    check(d, f, &["-g", "none"], &["-S", "__GI___getppid"]);
}

/// A file written by `tracectl perf record`, with tracepoints of two processes.
#[test]
fn perf_report_live_filters_on_an_own_recording_match_perf() {
    if !perf_and_cc() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("ropts", d);
    run(
        tracectl,
        &[
            "perf",
            "record",
            "-e",
            "raw_syscalls:sys_enter,cpu-clock",
            "-F",
            "999",
            "-g",
            "-o",
            "own.data",
            "--",
            "./ropts",
        ],
        d,
    );
    let g = ["-g", "none"];
    check(d, "own.data", &g, &["-c", "ro_child"]);
    check(
        d,
        "own.data",
        &["-c", "ro_child"],
        &["--percentage", "relative"],
    );
    check(d, "own.data", &["--no-children"], &["-d", "libc.so.6"]);
    check(d, "own.data", &g, &["-n", "--show-total-period"]);
}

/// Bad values are refused with a message that names them.
#[test]
fn perf_report_bad_option_values_are_named() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/cc-spin.data");
    let data = data.to_str().unwrap();
    for (args, named) in [
        (&["-C", "0-x"][..], "0-x"),
        (&["--cpu", "5000"][..], "5000"),
        (&["--time", "12.5,abc"][..], "abc"),
        (&["--time", "20,10"][..], "20,10"),
        (&["--time", "10%/x"][..], "10%/x"),
        (&["--percent-limit", "lots"][..], "lots"),
        (&["--percentage", "some"][..], "some"),
        (&["--pid", "12,x"][..], "x"),
        (&["-c", "sh,sh"][..], "sh"),
        (&["-C", "0"][..], "-C 0: "),
        (&["-t", "."][..], "'.'"),
        (&["-F", "comm,bogus"][..], "bogus"),
        (&["-F", "+"][..], "'+'"),
        (&["-s", "+"][..], "'+'"),
        (&["-s", "overhead_guest_us"][..], "overhead_guest_us"),
        (&["--max-stack", "x"][..], "'x'"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .args(["perf", "report", "--stdio", "-i", data])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} fails");
        assert!(
            err.contains(named),
            "{args:?}: the error names {named}: {err}"
        );
        assert!(
            out.stdout.is_empty(),
            "{args:?}: no table: {:?}",
            out.stdout
        );
    }
}
