//! `perf script -F` fields beyond the defaults, on perf.data files recorded here by
//! Debian's perf 6.1: `tracectl perf script -F ...` prints what `perf script -F ...`
//! prints, and refuses what perf refuses. Skips (with the reason) without root, perf, a
//! C compiler or binutils' `addr2line`.

use std::path::Path;
use std::process::Command;

use crate::perf_script_live::srcline_skip;
use crate::support::perf::run;

/// The standard output of `perf script ARGS` and of `tracectl perf script ARGS` in `d`,
/// which must be the same, line for line; perf's is returned.
pub(crate) fn same_script(d: &Path, args: &[&str]) -> String {
    let perf = run("perf", &[&["script"][..], args].concat(), d);
    let ours = run(
        env!("CARGO_BIN_EXE_tracectl"),
        &[&["perf", "script"][..], args].concat(),
        d,
    );
    crate::support::perf::assert_same_lines(&ours, &perf, &format!("perf script {args:?}"));
    perf
}

/// Builds tests/data/perf/NAME.c into `d`/NAME with its DWARF (`-g`) and frame pointers.
pub(crate) fn build_with_lines(name: &str, d: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/perf")
        .join(format!("{name}.c"));
    let cc = ["-g", "-O1", "-fno-omit-frame-pointer", "-o", name];
    run("cc", &[&cc[..], &[src.to_str().unwrap()]].concat(), d);
}

/// `-F ...,srcline`: a `  FILE:LINE` line under each address perf can place. Samples
/// without call chains (lines.c, user and kernel addresses), with frame-pointer chains
/// (kernel frames show `[kernel.kallsyms][ADDRESS]`, as addr2line finds nothing there),
/// and with chains unwound from a stack copy (inl.c: each inlined function with its own
/// line and ` (inlined)` after it, and `??:0` where the symbol table is all addr2line
/// has), with the other address fields and as `+srcline`.
#[test]
fn perf_script_live_srcline_under_each_frame_matches_perf() {
    if srcline_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_with_lines("lines", d);
    build_with_lines("inl", d);
    let record = |out: &str, how: &[&str], prog: &str| {
        let args = [&["record", "-q", "-o", out][..], how, &["--", prog]].concat();
        run("perf", &args, d);
    };
    record(
        "flat.data",
        &["-e", "cpu-clock", "-c", "1000000"],
        "./lines",
    );
    record(
        "fp.data",
        &["-e", "cpu-clock", "-c", "1000000", "-g"],
        "./lines",
    );
    record(
        "dwarf.data",
        &[
            "-e",
            "cpu-clock:u",
            "-c",
            "2000000",
            "--call-graph",
            "dwarf,4096",
        ],
        "./inl",
    );
    let fields = [
        "ip,sym,srcline",
        "ip,srcline",
        "ip,sym,dso,symoff,srcline",
        "ip,dso,srcline",
        "+srcline",
    ];
    let mut seen = String::new();
    for file in ["flat.data", "fp.data", "dwarf.data"] {
        for f in fields {
            seen += &same_script(d, &["-i", file, "-F", f]);
        }
    }
    // What the recordings must show for the comparison to mean something.
    for (what, shown) in [
        ("a line of lines.c", "\n  lines.c:"),
        ("a kernel address without a line", "\n  [kernel.kallsyms]["),
        ("an inlined function's line", "\n  inl.c:10 (inlined)\n"),
        ("addr2line's answer from the symbol table", "\n  ??:0\n"),
    ] {
        assert!(seen.contains(shown), "perf shows {what} ({shown:?})");
    }
}

/// `srcline` under each frame of a program whose DWARF sections are zlib-compressed
/// (`objcopy --compress-debug-sections=zlib`, as Debian's detached debug files are):
/// lines and inlined functions read from the inflated sections, as perf prints them.
#[test]
fn perf_script_live_srcline_from_compressed_debug_sections_matches_perf() {
    if srcline_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_with_lines("inl", d);
    run(
        "objcopy",
        &["--compress-debug-sections=zlib", "inl", "inlz"],
        d,
    );
    // The copy's DWARF really is compressed (`C` among the section flags).
    let sections = run("readelf", &["-SW", "inlz"], d);
    let compressed = sections
        .lines()
        .find(|l| l.contains(" .debug_info "))
        .expect("inlz has .debug_info");
    assert!(
        compressed.split_whitespace().rev().nth(3) == Some("C"),
        "objcopy compressed .debug_info: {compressed}"
    );
    let args = [
        "record",
        "-q",
        "-o",
        "dwarf.data",
        "-e",
        "cpu-clock:u",
        "-c",
        "2000000",
        "--call-graph",
        "dwarf,4096",
        "--",
        "./inlz",
    ];
    run("perf", &args, d);
    let mut seen = String::new();
    for f in ["ip,sym,srcline", "+srcline"] {
        seen += &same_script(d, &["-i", "dwarf.data", "-F", f]);
    }
    assert!(
        seen.contains("\n  inl.c:10 (inlined)\n"),
        "perf shows an inlined function's line"
    );
}

/// `-F addr` on page faults recorded with `-d`: the data address, with the symbol and
/// file that hold it (looked up in the other address space when a kernel instruction
/// touched a user address), as perf prints it, alone, with the other fields, as
/// `+addr`; and, given after a type (`sw:`), the same.
#[test]
fn perf_script_live_addr_of_page_faults_matches_perf() {
    if srcline_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_with_lines("lines", d);
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "pf.data",
            "-e",
            "page-faults",
            "-c",
            "1",
            "-d",
            "--",
            "./lines",
        ],
        d,
    );
    let mut seen = String::new();
    for f in [
        "comm,addr",
        "comm,ip,sym,addr",
        "comm,addr,sym,dso,symoff",
        "comm,tid,time,addr,ip,sym,dso",
        "ip,addr,event,period,srcline",
        "+addr",
        "sw:comm,addr,ip,sym",
    ] {
        seen += &same_script(d, &["-i", "pf.data", "-F", f]);
    }
    assert!(
        seen.lines()
            .any(|l| l.contains(" (/") && l.contains("[kernel.kallsyms]")),
        "perf places a user address touched in the kernel"
    );
}

/// Fields the samples do not carry, and `srcline` without `ip`: perf refuses them with
/// its message, and so do we; given after a type (`sw:addr`), perf leaves such a field
/// out and prints the others, and so do we.
#[test]
fn perf_script_live_fields_without_their_data_are_refused_as_perf_does() {
    if srcline_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "t.data",
            "-e",
            "cpu-clock",
            "-c",
            "100000",
            "--",
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8; do ls / >/dev/null; done",
        ],
        d,
    );
    for f in [
        "srcline",
        "sym,srcline",
        "comm,srcline",
        "addr",
        "+addr",
        "comm,iregs",
        "comm,uregs",
        "comm,data_src",
        "comm,weight",
        "comm,phys_addr",
        "comm,data_page_size",
        "comm,code_page_size",
        "comm,ins_lat",
        "comm,brstackinsn",
        "comm,brstackinsnlen",
    ] {
        let args = ["script", "-i", "t.data", "-F", f];
        let perf = Command::new("perf")
            .args(args)
            .current_dir(d)
            .output()
            .unwrap();
        let ours = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .arg("perf")
            .args(args)
            .current_dir(d)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&perf.stderr);
        assert!(
            !perf.status.success() && !said.trim().is_empty(),
            "perf -F {f} is refused: {said}"
        );
        assert!(!ours.status.success() && ours.stdout.is_empty(), "-F {f}");
        let ours_said = String::from_utf8_lossy(&ours.stderr);
        assert!(
            ours_said.contains(said.trim_end()),
            "-F {f}: perf said {said:?}, we said {ours_said:?}"
        );
    }
    for f in ["sw:comm,addr", "sw:comm,tid,iregs", "sw:ip,sym,weight"] {
        same_script(d, &["-i", "t.data", "-F", f]);
    }
}

/// Fields that show nothing on samples without their data (`brstack`, `brstacksym`,
/// `brstackoff` without branch stacks; `ipc` and `synth` without a hardware trace) and
/// `flags`, perf's one switch for every type (blank flags without a hardware trace):
/// printed as perf prints them, with and without call chains, as lists and as changes.
#[test]
fn perf_script_live_fields_without_data_in_the_samples_match_perf() {
    if let Some(why) = crate::support::perf::skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let work = [
        "--",
        "sh",
        "-c",
        "for i in 1 2 3 4 5 6 7 8; do ls / >/dev/null; done",
    ];
    for (out, chains) in [("flat.data", &[][..]), ("fp.data", &["-g"][..])] {
        let how = ["record", "-q", "-o", out, "-e", "cpu-clock", "-c", "100000"];
        run("perf", &[&how[..], chains, &work].concat(), d);
        for f in [
            "comm,event,flags,ip,sym",
            "comm,tid,time,flags,period,event",
            "+flags",
            "+flags,-flags",
            "sw:comm,flags,ip",
            "comm,event,brstack,ip,sym",
            "comm,event,brstacksym,brstackoff,ip",
            "+ipc,+synth",
            "comm,brstack",
        ] {
            same_script(d, &["-i", out, "-F", f]);
        }
    }
}
