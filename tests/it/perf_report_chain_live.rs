//! `tracectl perf report` against perf 6.1's `perf report --stdio` on call graphs where
//! one address of a library is shown without a symbol at perf's first lookup in the
//! library (its `.dynsym` names a section that does not exist, so perf's loading stops
//! part way) and with its symbol later. perf compares a call chain entry without a
//! symbol with another by object and address, so the later samples join the entry made
//! by the first one and are shown as its address; and it looks a chain up in the order
//! it prints it, so in caller order the first lookup is the outermost of the library's
//! two entries (call_outer's), in callee order the innermost (call_back's). Recorded
//! here with perf; skips (with the reason) without root, perf, a C compiler or python3.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::perf::{
    assert_same_lines, cc_missing, cc_workdir, perf_fixture, run, skip_reason,
};

#[test]
fn perf_report_live_an_address_without_a_symbol_then_with_one_is_one_entry() {
    let python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let why = skip_reason()
        .or_else(|| cc_missing().map(String::from))
        .or_else(|| (!python).then(|| "no python3".to_string()));
    if let Some(why) = why {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf");
    let src = |f: &str| data.join(f).to_str().unwrap().to_string();
    // A build id of this run's own: perf's build-id cache holds no copy of the library
    // (an unpatched one would be read instead).
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let id = format!("-Wl,--build-id=0x{nanos:032x}{:08x}", std::process::id());
    let fp = "-fno-omit-frame-pointer";
    let (alias, callback) = (src("rsyms-alias.c"), src("rsyms-callback.c"));
    let lib = ["-O1", fp, "-fPIC", "-shared", &id, "-o", "librsalias.so"];
    run("cc", &[&lib[..], &[&alias, &callback]].concat(), d);
    let patch = src("rsyms-patch.py");
    let shndx = [
        &patch[..],
        "shndx",
        "librsalias.so",
        "zz_bad_index_marker",
        "48",
    ];
    run("python3", &shndx, d);
    let rpath = format!("-Wl,-rpath,{}", d.display());
    let caller = src("rsyms-caller.c");
    let prog = [
        "-O1",
        fp,
        "-o",
        "caller",
        &caller,
        "-L.",
        "-lrsalias",
        &rpath,
    ];
    run("cc", &prog, d);
    let rec = [
        "record",
        "-q",
        "-N",
        "-o",
        "cb.data",
        "-e",
        "cpu-clock:u",
        "-c",
        "100000",
    ];
    run("perf", &[&rec[..], &["-g", "--", "./caller"]].concat(), d);
    for args in [
        &[][..],
        &["-g", "graph,0"],
        &["--no-children"],
        &["-g", "caller,0,callee"],
        &["--sort", "sym", "-g", "fractal,0"],
        &["-g", "callee"],
        &["--sort", "comm,dso,sym", "-g", "none"],
    ] {
        let perf_args = [&["report", "-i", "cb.data", "--stdio"][..], args].concat();
        // perf 6.1 allocates the symbol of its `[...]` entry (what the limits leave
        // out) without clearing it, so whether it prints ` (inlined)` after the name
        // depends on what the heap held there before (always with MALLOC_PERTURB_=255,
        // never with MALLOC_PERTURB_=1). tracectl never prints it; perf's text is
        // compared without it.
        let perf = run("perf", &perf_args, d).replace("[...] (inlined)", "[...]");
        let ours_args = [&["perf", "report", "-i", "cb.data"][..], args].concat();
        let ours = run(env!("CARGO_BIN_EXE_tracectl"), &ours_args, d);
        // The case itself: perf shows a return address in the library as an entry
        // of the call graph or as a row.
        let unresolved =
            |l: &str| l.contains("--0x") || l.trim().starts_with("0x") || l.contains("[.] 0x");
        assert!(
            perf.lines().any(unresolved),
            "{args:?}: an address without a symbol in perf's report:\n{perf}"
        );
        assert_same_lines(&ours, &perf, &format!("perf report {args:?}"));
    }
}

/// A function inlined into two functions laid out end to end (`-falign-functions=1`):
/// perf compares an inlined function's rows by name and takes two as one when the
/// spans of the functions they are inlined into touch, so `mix (inlined)` is one row
/// holding the samples of both. Unwound from the DWARF, which names the inlined frames.
#[test]
fn perf_report_live_a_function_inlined_into_touching_functions_is_one_row() {
    let Some(dir) = cc_workdir() else {
        return;
    };
    let d = dir.path();
    let src = perf_fixture("inline-touching.c");
    let cc = [
        "-O2",
        "-g",
        "-fno-omit-frame-pointer",
        "-falign-functions=1",
        "-o",
        "inline-touching",
        &src,
    ];
    run("cc", &cc, d);
    let rec = [
        "record",
        "-q",
        "-N",
        "-o",
        "it.data",
        "-e",
        "cpu-clock:u",
        "-c",
        "100000",
        "--call-graph",
        "dwarf",
        "--",
        "./inline-touching",
    ];
    run("perf", &rec, d);
    for args in [
        &["--sort", "sym"][..],
        &[],
        &["--sort", "dso,sym"],
        &["--no-children"],
        &["-g", "caller"],
    ] {
        let perf_args = [&["report", "-i", "it.data", "--stdio"][..], args].concat();
        let perf = run("perf", &perf_args, d);
        if args == ["--sort", "sym"] {
            let rows = perf
                .lines()
                .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
                .filter(|l| l.ends_with("] mix (inlined)"))
                .count();
            assert_eq!(rows, 1, "one `mix (inlined)` row in perf's report:\n{perf}");
        }
        let ours_args = [&["perf", "report", "-i", "it.data"][..], args].concat();
        let ours = run(env!("CARGO_BIN_EXE_tracectl"), &ours_args, d);
        assert_same_lines(&ours, &perf, &format!("perf report {args:?}"));
    }
}
