//! `tracectl perf report` prints `perf report --stdio`'s table (perf 6.1) for the
//! perf.data files under tests/data/perf. The expected texts were written by perf in
//! that directory with `perf report -i NAME.data --symfs symfs --kallsyms kallsyms
//! --stdio -g none [OPTIONS] | grep -v '^# (Tip:'` (perf ends with a random tip), and
//! those with call graphs under the rows (`results/report-g.*`) by `report-graph.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf")
}

fn check(data: &str, extra: &[&str], result: &str) {
    let mut args = vec!["-g", "none"];
    args.extend_from_slice(extra);
    check_args(data, &args, result);
}

/// Compare with `results/report-g.NAME[_OPTIONS].txt` (options joined by `_`).
fn check_graph(data: &str, extra: &[&str]) {
    let mut name = data.trim_end_matches(".data").to_string();
    for a in extra {
        name.push('_');
        name.push_str(a);
    }
    check_args(data, extra, &format!("report-g.{name}.txt"));
}

fn check_args(data: &str, extra: &[&str], result: &str) {
    check_with_kallsyms(data, "kallsyms", extra, result);
}

fn check_with_kallsyms(data: &str, kallsyms: &str, extra: &[&str], result: &str) {
    let mut args = vec![
        "perf",
        "report",
        "-i",
        data,
        "--symfs",
        "symfs",
        "--kallsyms",
        kallsyms,
        "--stdio",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8(out.stdout).unwrap();
    let want = std::fs::read_to_string(dir().join("results").join(result)).unwrap();
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "{result}: line {} differs", i + 1);
    }
    assert_eq!(got, want, "{result}");
}

#[test]
fn perf_report_children_by_default_with_call_chains() {
    check("cc-spin.data", &[], "report.cc-spin.txt");
}

/// The symbols perf 6.1 chooses in syms.c (see perf_script's test of it), as rows.
#[test]
fn perf_report_symbol_choice_labels_aliases_and_sizes() {
    check("syms.data", &[], "report.syms.txt");
}

#[test]
fn perf_report_no_children() {
    check(
        "cc-spin.data",
        &["--no-children"],
        "report.cc-spin_--no-children.txt",
    );
    check(
        "cc-spin.data",
        &["--no-children", "--sort", "comm,dso"],
        "report.cc-spin_--no-children_--sort_comm_dso.txt",
    );
}

#[test]
fn perf_report_sort_keys() {
    check(
        "tc-spin.data",
        &["--sort", "dso,sym"],
        "report.tc-spin_--sort_dso_sym.txt",
    );
    check(
        "tp-sched.data",
        &["--sort", "pid"],
        "report.tp-sched_--sort_pid.txt",
    );
}

#[test]
fn perf_report_tracepoints_several_events() {
    check("tp-sched.data", &[], "report.tp-sched.txt");
    check("tp-mixed.data", &[], "report.tp-mixed.txt");
}

#[test]
fn perf_report_without_call_chains() {
    check("cc-nocg.data", &[], "report.cc-nocg.txt");
}

/// Samples taken in perf's child before its exec carry the comm `perf-exec`; perf sizes
/// the command column by the comm each row's thread ended with (`sh`) and cuts
/// `perf-exec` to that width.
#[test]
fn perf_report_comm_column_is_sized_by_the_last_comm() {
    check("tp-exec.data", &[], "report.tp-exec.txt");
    check(
        "tp-exec.data",
        &["--sort", "comm"],
        "report.tp-exec_--sort_comm.txt",
    );
    check(
        "tp-exec.data",
        &["--sort", "pid"],
        "report.tp-exec_--sort_pid.txt",
    );
}

/// The default with call chains: the call graph under each row, callers first
/// (`-g graph,0.5,caller` with `--children`), rows of equal Children share with the
/// callers above their callees.
#[test]
fn perf_report_call_graph_by_default() {
    check_graph("calls.data", &[]);
    check_graph("cc-spin.data", &[]);
    check_graph("tc-spin.data", &[]);
}

/// Without `--children` the chains start at the sampled function (callee order).
#[test]
fn perf_report_call_graph_orders() {
    check_graph("calls.data", &["--no-children"]);
    check_graph("calls.data", &["-g", "caller", "--no-children"]);
    check_graph("calls.data", &["-g", "callee"]);
    check_graph("cc-spin.data", &["-g", "callee"]);
}

#[test]
fn perf_report_call_graph_modes() {
    check_graph("calls.data", &["-g", "folded"]);
    check_graph("calls.data", &["-g", "flat", "--no-children"]);
    check_graph("calls.data", &["-g", "fractal"]);
    check_graph("calls.data", &["-g", "fractal,30,callee"]);
    check_graph("cc-spin.data", &["-g", "flat,0,2"]);
    check_graph("tc-spin.data", &["-g", "folded,callee", "--no-children"]);
}

/// The threshold hides small branches; the print limit cuts the branches; the values
/// can be periods or sample counts.
#[test]
fn perf_report_call_graph_threshold_limit_and_values() {
    check_graph("calls.data", &["-g", "graph,10,period"]);
    check_graph("calls.data", &["-g", "graph,0.5,count", "--no-children"]);
    check_graph("calls.data", &["-g", "graph,0,2"]);
}

/// With `sym` first in `--sort`, the row's own symbol is not repeated atop its graph.
#[test]
fn perf_report_call_graph_sort_sym_first() {
    check_graph("calls.data", &["--sort", "sym"]);
}

/// `addr`: the sampled address; perf 6.1 offsets a call chain entry's address by its
/// mapping once more (`0x7fcc0d51f829` shows as `0xff981a93d829`), and so does this.
#[test]
fn perf_report_sort_addr() {
    check(
        "tp-callchain.data",
        &["--sort", "addr,sym"],
        "report.tp-callchain_--sort_addr,sym.txt",
    );
    check(
        "tp-callchain.data",
        &["--no-children", "--sort", "addr,dso"],
        "report.tp-callchain_--no-children_--sort_addr,dso.txt",
    );
    check_graph("calls.data", &["--sort", "addr"]);
}

/// `cpu`: `-001` when the samples carry no CPU (the column stays 3 wide).
#[test]
fn perf_report_sort_cpu() {
    check(
        "calls.data",
        &["--sort", "cpu"],
        "report.calls_--sort_cpu.txt",
    );
    check(
        "tp-sched.data",
        &["--sort", "cpu,comm"],
        "report.tp-sched_--sort_cpu,comm.txt",
    );
    check_graph(
        "tp-callchain.data",
        &["--sort", "comm,cpu,addr", "-g", "callee,5"],
    );
}

/// `time`: 100 ms buckets. perf checks a sample's entries for repeats through a
/// stand-in without a time, so with `--children` every call chain entry counts again
/// (Children far above 100%, one column wider past 1000%).
#[test]
fn perf_report_sort_time() {
    check(
        "tp-callchain.data",
        &["--sort", "time"],
        "report.tp-callchain_--sort_time.txt",
    );
    check(
        "calls.data",
        &["--sort", "time,sym"],
        "report.calls_--sort_time,sym.txt",
    );
}

/// `trace`: the tracepoint's text. perf sizes the column by the texts it made while
/// comparing rows, so a lone row (one sample) is cut to the header's width; `N/A`
/// for events that are no tracepoints.
#[test]
fn perf_report_sort_trace() {
    check(
        "tp-mixed.data",
        &["--sort", "trace"],
        "report.tp-mixed_--sort_trace.txt",
    );
    check(
        "tp-mixed.data",
        &["--sort", "comm,trace"],
        "report.tp-mixed_--sort_comm,trace.txt",
    );
    check(
        "calls.data",
        &["--sort", "trace,comm"],
        "report.calls_--sort_trace,comm.txt",
    );
}

/// Graphs more than 32 levels deep: perf's depth mask is an `int` shifted by the
/// depth, which x86 takes modulo 32.
#[test]
fn perf_report_call_graph_deeper_than_32_levels() {
    check_graph(
        "tp-callchain.data",
        &["--sort", "time,trace", "-g", "callee,20"],
    );
}

/// perf's keys that need data these files cannot have are refused with the reason,
/// before anything is printed.
#[test]
fn perf_report_refuses_keys_it_cannot_do_faithfully() {
    for (key, why) in [
        ("dso_from", "perf record -b"),
        ("sym,symbol_to", "perf record -b"),
        ("mem", "perf mem record"),
        ("transaction", "not supported"),
        ("sym,weight", "not supported"),
        ("bogus", "unknown --sort key 'bogus'"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(dir())
            .args(["perf", "report", "-i", "calls.data", "--sort", key])
            .output()
            .unwrap();
        assert!(!out.status.success(), "--sort {key} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "--sort {key}: {err}");
        assert!(err.contains("supported: comm"), "--sort {key}: {err}");
        assert!(out.stdout.is_empty(), "--sort {key} printed a report");
    }
}

/// `socket`: the socket of the sample's CPU from the file's CPU_TOPOLOGY (`000`),
/// `-001` for samples without a CPU. perf checks call chain entries for repeats
/// through a stand-in of socket 0, so with `-001` every entry counts again.
#[test]
fn perf_report_sort_socket() {
    check(
        "tp-sched.data",
        &["--sort", "socket,cpu"],
        "report.tp-sched_socket,cpu.txt",
    );
    check(
        "cc-spin.data",
        &["--sort", "socket"],
        "report.cc-spin_socket.txt",
    );
    check(
        "tp-callchain.data",
        &["--sort", "socket,sym"],
        "report.tp-callchain_socket,sym.txt",
    );
}

/// `dso_size`: the size of the mapping (the kernel's reaches its last symbol's end),
/// right-aligned; `unknown` without a mapping.
#[test]
fn perf_report_sort_dso_size() {
    check(
        "cc-spin.data",
        &["--no-children", "--sort", "dso_size,dso"],
        "report.cc-spin_dso_size,dso.txt",
    );
    check(
        "calls.data",
        &["--sort", "dso_size,sym"],
        "report.calls_dso_size,sym.txt",
    );
}

/// `parent`: the first symbol of the chain, in print order, that `-p` matches
/// (`[other]` when none does; inlined functions and DWARF-unwound frames are not
/// matched); `-p` alone adds the key after the others; `-x` hides
/// the `[other]` rows (all rows when `parent` is no key) and keeps the shares.
#[test]
fn perf_report_sort_parent() {
    check(
        "cc-spin.data",
        &["--sort", "parent"],
        "report.cc-spin_parent.txt",
    );
    check(
        "tp-callchain.data",
        &["--sort", "parent", "-p", "schedule|^do_"],
        "report.tp-callchain_parent.txt",
    );
    check(
        "tp-callchain.data",
        &["--sort", "comm", "-p", "^__x64_sys|^do_"],
        "report.tp-callchain_comm_p.txt",
    );
    check(
        "tp-callchain.data",
        &[
            "--no-children",
            "--sort",
            "comm,parent",
            "-x",
            "-p",
            "^__x64_sys|^do_",
        ],
        "report.tp-callchain_comm,parent_x.txt",
    );
    check(
        "tp-callchain.data",
        &["--sort", "comm", "-x"],
        "report.tp-callchain_comm_x.txt",
    );
    // The regex is matched against the symbol of each sampled address: not the
    // inlined functions' names there, nor the frames DWARF unwinding finds.
    check(
        "inl-fp.data",
        &["--sort", "parent", "-p", "^mix|^stir"],
        "report.inl-fp_parent_inlined.txt",
    );
    check(
        "inl-fp.data",
        &["--sort", "parent,sym", "-p", "^work"],
        "report.inl-fp_parent_work.txt",
    );
    check(
        "inl-dwarf.data",
        &["--sort", "parent", "-p", "^mix|^stir|^work|^main"],
        "report.inl-dwarf_parent_inlined.txt",
    );
}

/// `srcline`: `file:LINE` from the DWARF line table where there is one; where addr2line
/// answers from the symbol table (libc in a static binary, a file built without -g),
/// `file.o:0` or `??:0`; where it finds nothing, `symbol+OFFSET` (kernel addresses, and
/// call chain entries, whose address as sampled perf hands addr2line as if it were
/// file-relative). `srcfile`: the file part, empty for the others. Columns are sized by
/// the texts perf had made when it filed each row.
#[test]
fn perf_report_sort_srcline_and_srcfile() {
    let k = "kallsyms-lines";
    check(
        "cc-spin.data",
        &["--sort", "srcline,srcfile,sym"],
        "report.cc-spin_srcline,srcfile,sym.txt",
    );
    for (extra, result) in [
        (
            &["--sort", "srcline,sym"][..],
            "report.lines_srcline,sym.txt",
        ),
        (
            &["--no-children", "--sort", "srcline,sym"],
            "report.lines_srcline,sym_--no-children.txt",
        ),
        (&["--sort", "srcline"], "report.lines_srcline.txt"),
        (
            &["--sort", "srcfile,srcline"],
            "report.lines_srcfile,srcline.txt",
        ),
        (
            &["--no-children", "--sort", "comm,srcfile"],
            "report.lines_comm,srcfile_--no-children.txt",
        ),
    ] {
        let mut args = vec!["-g", "none"];
        args.extend_from_slice(extra);
        check_with_kallsyms("lines.data", k, &args, result);
    }
}

/// The rows made from unwound call-chain entries show the line perf kept with the
/// entry: for a function inlined there, addr2line's line of that inline frame (the
/// call's line for the functions it was inlined into), and `??:0` for an object
/// without DWARF; the sample's own row shows the address's line.
#[test]
fn perf_report_srcline_of_unwound_and_inlined_entries() {
    check(
        "inl-dwarf.data",
        &["--sort", "srcline"],
        "report.inl-dwarf_srcline.txt",
    );
    check(
        "inl-dwarf.data",
        &["--sort", "srcline,sym"],
        "report.inl-dwarf_srcline,sym.txt",
    );
    check(
        "inl-dwarf.data",
        &["--sort", "sym,srcline"],
        "report.inl-dwarf_sym,srcline.txt",
    );
    check(
        "dwarf-calls.data",
        &["--sort", "sym,srcline"],
        "report.dwarf-calls_sym,srcline.txt",
    );
}

/// `--time-quantum`: the width of a `time` row, with a unit or in nanoseconds (any
/// base C's strtoul reads).
#[test]
fn perf_report_time_quantum() {
    check(
        "tp-callchain.data",
        &["--sort", "time", "--time-quantum", "10ms"],
        "report.tp-callchain_time_10ms.txt",
    );
    check(
        "calls.data",
        &["--sort", "time,sym", "--time-quantum", "0x1000000"],
        "report.calls_time,sym_0x1000000.txt",
    );
}

/// A bad `-p` regex or `--time-quantum` is refused with what to give, before any
/// output.
#[test]
fn perf_report_bad_parent_regex_or_time_quantum() {
    for (args, why) in [
        (&["-p", "(sys_"][..], "-p/--parent '(sys_'"),
        (&["--sort", "time", "--time-quantum", "0"], "cannot be 0"),
        (
            &["--sort", "time", "--time-quantum", "10xs"],
            "s, ms, us or ns",
        ),
        (
            &["--sort", "time", "--time-quantum", "ms"],
            "s, ms, us or ns",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(dir())
            .args(["perf", "report", "-i", "calls.data"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed a report");
    }
}

#[test]
fn perf_report_call_graph_refuses_unsupported_keys() {
    for g in ["address", "graph,srcline", "graph,0.5,bogus"] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(dir())
            .args(["perf", "report", "-i", "calls.data", "-g", g])
            .output()
            .unwrap();
        assert!(!out.status.success(), "-g {g} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("-g"), "-g {g}: {err}");
        assert!(out.stdout.is_empty(), "-g {g} printed a report");
    }
}

/// Many threads (a system-wide recording): the graphs match perf's.
#[test]
fn perf_report_call_graph_several_threads() {
    check_graph("tp-callchain.data", &["-g", "caller,5", "--no-children"]);
}

/// A system-wide file: many rows tie on Children and Self. perf files its rows in
/// red-black trees (as made, merged by command, sorted for output) with comparisons
/// that leave rows of different threads, or two raw addresses, unordered, so the tree
/// shapes decide; here `0x8000000000000005` comes before `0x1` (a wrapping difference).
#[test]
fn perf_report_equal_shares_in_perfs_tree_order() {
    check("tp-callchain.data", &[], "report.tp-callchain.txt");
    check(
        "tp-callchain.data",
        &["--sort", "dso,sym"],
        "report.tp-callchain_--sort_dso,sym.txt",
    );
}

/// cpu-clock samples of a busy machine (`-a`): hundreds of rows tie, across dozens
/// of threads, with and without call graphs.
#[test]
fn perf_report_equal_shares_system_wide_cpu_clock() {
    let k = "kallsyms-mt";
    check_with_kallsyms("mt-clock.data", k, &["-g", "none"], "report.mt-clock.txt");
    check_with_kallsyms("mt-clock.data", k, &[], "report-g.mt-clock.txt");
    check_with_kallsyms(
        "mt-clock.data",
        k,
        &["-g", "callee"],
        "report-g.mt-clock_-g_callee.txt",
    );
    check_with_kallsyms(
        "mt-clock.data",
        k,
        &["--sort", "pid,sym"],
        "report-g.mt-clock_--sort_pid,sym.txt",
    );
}

/// With call graphs perf also puts a thread's callers above its callees when their
/// Children shares are equal (below them in callee order), which is no total order
/// either.
#[test]
fn perf_report_call_graph_equal_shares_across_threads() {
    check_graph("tp-callchain.data", &["-g", "graph,5"]);
    check_graph("tp-callchain.data", &["-g", "callee,5"]);
    check_graph("tp-callchain.data", &["-g", "fractal,5"]);
}

/// A bare `-g` is perf's `graph,0.5,caller,function,percent`: caller order even
/// without `--children`; `-G` (`--inverted`) asks for caller order whatever `-g` says.
#[test]
fn perf_report_bare_g_and_inverted() {
    check_graph("calls.data", &["-g", "--no-children"]);
    check_graph("calls.data", &["-G", "--no-children"]);
    // perf prints the default report for these (the same bytes).
    check_args("calls.data", &["-g"], "report-g.calls.txt");
    check_args("calls.data", &["-G"], "report-g.calls.txt");
    check_args("calls.data", &["-g", "callee", "-G"], "report-g.calls.txt");
    check_args("calls.data", &["--children"], "report-g.calls.txt");
    check_args(
        "calls.data",
        &["--no-children", "--children"],
        "report-g.calls.txt",
    );
}

/// The symbol column is padded when another column follows it; a row made at an
/// address without a symbol widens the object column even when `sym` is not shown.
#[test]
fn perf_report_column_widths() {
    check_graph("calls.data", &["--sort", "sym,dso"]);
    check(
        "calls.data",
        &["--sort", "dso"],
        "report.calls_--sort_dso.txt",
    );
}

/// perf keeps a symbol's name length in 16 bits and sizes the Symbol column by it:
/// a name of 65,840 characters counts as 304 and is cut to the column, which the
/// 512-character name sets (a demangled template name of 485 stays whole); padded
/// when `dso` follows.
#[test]
fn perf_report_symbol_column_width_of_long_names() {
    check("longsym.data", &[], "report.longsym.txt");
    check(
        "longsym.data",
        &["--sort", "sym,dso"],
        "report.longsym_sym,dso.txt",
    );
    check("longsym-t.data", &[], "report.longsym-t.txt");
    check(
        "longsym-t.data",
        &["--sort", "sym"],
        "report.longsym-t_sym.txt",
    );
    check(
        "longsym-t.data",
        &["--sort", "sym,dso"],
        "report.longsym-t_sym,dso.txt",
    );
}

/// `--no-inline`: no rows or call graph entries of inlined functions; `--no-demangle`:
/// C++ names as stored, in the rows and the column's width.
#[test]
fn perf_report_no_inline_and_no_demangle() {
    check_graph("inl-dwarf.data", &["--no-inline"]);
    check(
        "longsym-t.data",
        &["--no-demangle"],
        "report.longsym-t_no-demangle.txt",
    );
}

/// `--stats`, `--tasks` and `--mmaps`: the records of each type (those inside
/// `perf record -z`'s COMPRESSED records too), each event's samples, and the threads
/// in perf's order under their parents with their processes' mappings, as perf prints
/// them; `--stats` with `--tasks` is refused before the file is read.
#[test]
fn perf_report_stats_tasks_and_mmaps() {
    let results = dir().join("results");
    let mut compared = 0;
    for entry in std::fs::read_dir(&results).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name
            .strip_prefix("report-records.")
            .and_then(|n| n.strip_suffix(".txt"))
        else {
            continue;
        };
        let mut parts = stem.split('_');
        let data = format!("{}.data", parts.next().unwrap());
        let extra: Vec<&str> = parts.collect();
        let mut args = vec!["perf", "report", "-i", &data];
        args.extend_from_slice(&extra);
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(dir())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        let got = String::from_utf8(out.stdout).unwrap();
        let want = std::fs::read_to_string(results.join(&name)).unwrap();
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "{name}: line {} differs", i + 1);
        }
        assert_eq!(got, want, "{name}");
        compared += 1;
    }
    assert!(compared >= 12, "{compared} outputs compared");
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args([
            "perf",
            "report",
            "-i",
            "nonexistent.data",
            "--stats",
            "--tasks",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("can't be used together with --stats"),
        "{err}"
    );
}

/// `--symbol-filter TEXT` (or the text after the options) shows only the rows whose
/// symbol's name holds the text; the others still count in the shares, and the
/// columns are as wide as the rows shown need.
#[test]
fn perf_report_symbol_filter() {
    check_graph("calls.data", &["--symbol-filter=caller"]);
    check_graph("calls.data", &["--no-children", "-g", "caller", "hot"]);
    check_with_kallsyms(
        "mt-clock.data",
        "kallsyms-mt",
        &["--symbol-filter=irq"],
        "report-g.mt-clock_--symbol-filter=irq.txt",
    );
    // With `--percentage relative` the shares are of the rows shown (Children can pass
    // 100%), and the call graphs' threshold stays a share of what the samples' own
    // filters leave.
    check_graph(
        "calls.data",
        &["--percentage", "relative", "--symbol-filter=a"],
    );
    for (extra, result) in [
        (
            &[
                "--percentage",
                "relative",
                "--symbol-filter=a",
                "--no-children",
            ][..],
            "report-g.mt-clock_--percentage_relative_--symbol-filter=a_--no-children.txt",
        ),
        (
            &["--percentage", "relative", "--symbol-filter=_", "-n"],
            "report-g.mt-clock_--percentage_relative_--symbol-filter=__-n.txt",
        ),
    ] {
        check_with_kallsyms("mt-clock.data", "kallsyms-mt", extra, result);
    }
}

/// perf refuses `-g` for samples without call chains (it prints an error and no
/// table); `-g none` still prints the table.
#[test]
fn perf_report_g_without_call_chains_is_refused() {
    for g in [&["-g"][..], &["-g", "caller"], &["-g", "folded"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(dir())
            .args(["perf", "report", "-i", "cc-nocg.data"])
            .args(g)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{g:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cc-nocg.data") && err.contains("no call chains"),
            "{g:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{g:?} printed a report");
    }
    check("cc-nocg.data", &[], "report.cc-nocg.txt");
}

/// `--call-graph dwarf`: the user frames unwound from each sample's stack copy make the
/// same graphs and folded chains as perf's.
#[test]
fn perf_report_dwarf_call_graphs() {
    check_graph("dwarf-calls.data", &[]);
    check_graph("dwarf-calls.data", &["--no-children"]);
    check_graph("dwarf-calls.data", &["-g", "folded", "--no-children"]);
}

/// `-g` given more than once: each changes what it names and keeps the rest, as in
/// perf (`-g caller -g fractal` is fractal in caller order).
#[test]
fn perf_report_g_given_twice() {
    check_graph(
        "calls.data",
        &["-g", "caller", "-g", "fractal", "--no-children"],
    );
    check_graph(
        "calls.data",
        &["-g", "flat,0,2", "-g", "callee", "--no-children"],
    );
    check_graph(
        "calls.data",
        &["-g", "none", "-g", "graph", "--no-children"],
    );
}

/// After `-g none`, a `-g` that names no print type is refused (perf: "Can't register
/// callchain params"), with what to give instead.
#[test]
fn perf_report_g_after_none_needs_a_print_type() {
    let run = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args(["perf", "report", "-i", "calls.data", "--stdio"])
        .args(["-g", "none", "-g", "caller"])
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(!run.status.success(), "refused: {out}");
    assert!(
        err.contains("-g caller") && err.contains("-g none"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
}

/// Functions inlined at the entries perf's unwinder found (`--call-graph dwarf`) are
/// rows and call graph entries of their own, `stir (inlined)`, as in perf 6.1.
#[test]
fn perf_report_inlined_functions_in_unwound_chains() {
    check_graph("inl-dwarf.data", &[]);
    check_graph("inl-dwarf.data", &["--no-children"]);
    check_graph("inl-dwarf.data", &["-g", "callee"]);
    check_graph("inl-dwarf.data", &["-g", "folded", "--no-children"]);
}
