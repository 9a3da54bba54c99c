//! `tracectl perf script/report --header`, `--header-only` and `-I/--show-info`: the
//! perf.data header block is what perf 6.1 prints of the same file, on files recorded
//! here by perf (call graphs, system-wide tracepoints, event groups, a group read with
//! :S), by `tracectl perf record`, and the perf files stored under tests/data/perf.
//! Nothing is masked: both read the same file, so even "captured on" (its mtime) and the
//! sample times agree. Skips (with the reason) without root or perf.

use std::path::Path;

use crate::support::perf::{assert_same_lines, run, skip_reason};

fn tracectl() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

fn ready() -> bool {
    match skip_reason() {
        Some(why) => {
            crate::support::skips::skip(why);
            false
        }
        None => true,
    }
}

/// `perf ARGS` and `tracectl perf ARGS` in `d` print the same lines.
fn same(d: &Path, args: &[&str]) -> String {
    let perf = run("perf", args, d);
    let ours = run(tracectl(), &[&["perf"][..], args].concat(), d);
    assert_same_lines(&ours, &perf, &format!("perf {}", args.join(" ")));
    perf
}

/// Every way of asking for the header, on `file` in `d`.
fn check_file(d: &Path, file: &str) {
    for cmd in ["script", "report"] {
        let short = same(d, &[cmd, "-i", file, "--header-only"]);
        let full = same(d, &[cmd, "-i", file, "--header-only", "-I"]);
        assert!(
            short.starts_with("# ========\n# captured on    : "),
            "{short}"
        );
        assert!(short.ends_with("# ========\n#\n"), "{short}");
        assert!(short.contains("# missing features: "), "{short}");
        assert!(short.contains("# event : name = "), "{short}");
        // -I shows what is otherwise only named.
        if short.contains("use -I to display") {
            assert_ne!(short, full, "{file}: -I shows the topology sections");
            assert!(!full.contains("use -I to display"), "{full}");
        }
    }
    // perf script --header: the block, then the samples as without it (their text is
    // perf_script*'s concern).
    let block = run("perf", &["script", "-i", file, "--header-only", "-I"], d);
    let perf = run("perf", &["script", "-i", file, "--header", "-I"], d);
    let ours = run(
        tracectl(),
        &["perf", "script", "-i", file, "--header", "-I"],
        d,
    );
    let plain = run(tracectl(), &["perf", "script", "-i", file], d);
    assert!(perf.starts_with(&block), "{file}: perf script --header");
    assert_eq!(ours, format!("{block}{plain}"), "{file}");
    // perf report --header: the block in place of the hint to ask for it. (The table
    // itself is perf_report*'s concern; a file of groups prints them as perf's group view.)
    let args = ["report", "-i", file, "--stdio", "--header", "-I"];
    let perf = run("perf", &args, d);
    let ours = run(tracectl(), &[&["perf"][..], &args].concat(), d);
    let plain = run(tracectl(), &["perf", "report", "-i", file, "--stdio"], d);
    let hint =
        "# To display the perf.data header info, please use --header/--header-only options.\n#\n";
    assert!(perf.starts_with(&block), "{file}: perf report --header");
    assert!(plain.starts_with(hint), "{plain}");
    assert_eq!(ours, format!("{block}{}", &plain[hint.len()..]), "{file}");
}

#[test]
fn headers_of_files_recorded_by_perf() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recordings: [&[&str]; 5] = [
        &["-o", "g.data", "-F", "999", "-g", "--", "sleep", "0.05"],
        &[
            "-o",
            "tp.data",
            "-a",
            "-e",
            "sched:sched_switch",
            "--",
            "sleep",
            "0.05",
        ],
        &[
            "-o",
            "grp.data",
            "-e",
            "{task-clock,page-faults}",
            "-e",
            "cpu-clock",
            "--",
            "true",
        ],
        &[
            "-o",
            "rd.data",
            "-e",
            "{task-clock,page-faults}:S",
            "-c",
            "1000",
            "--",
            "true",
        ],
        &[
            "-o", "kd.data", "-k", "raw", "-D", "20", "--", "sleep", "0.05",
        ],
    ];
    for args in recordings {
        run("perf", &[&["record", "-q"][..], args].concat(), d);
        check_file(d, args[1]);
    }
    let grp = run("perf", &["script", "-i", "grp.data", "--header-only"], d);
    assert!(grp.contains("# group: {task-clock,page-faults}\n"), "{grp}");
    let kd = run("perf", &["script", "-i", "kd.data", "--header-only"], d);
    assert!(kd.contains("# clockid: monotonic_raw (4)\n"), "{kd}");
    assert!(kd.contains("# event : name = dummy:HG, "), "{kd}");
}

#[test]
fn headers_of_files_recorded_by_tracectl() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recordings: [&[&str]; 3] = [
        &["-o", "t.data", "-g", "--", "sleep", "0.05"],
        &[
            "-o", "tkd.data", "-k", "boot", "-D", "20", "--", "sleep", "0.05",
        ],
        &[
            "-o",
            "ttp.data",
            "-a",
            "-e",
            "sched:sched_switch",
            "--",
            "sleep",
            "0.05",
        ],
    ];
    for args in recordings {
        run(
            tracectl(),
            &[&["perf", "record", "-q"][..], args].concat(),
            d,
        );
        check_file(d, args[1]);
    }
}

#[test]
fn headers_of_the_stored_perf_files() {
    if !ready() {
        return;
    }
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf");
    let mut n = 0;
    for e in std::fs::read_dir(&data).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "data") {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            for cmd in ["script", "report"] {
                same(&data, &[cmd, "-i", &name, "--header-only"]);
                same(&data, &[cmd, "-i", &name, "--header-only", "-I"]);
            }
            n += 1;
        }
    }
    assert!(n > 5, "the stored perf files were found ({n})");
}

/// A BPF program loaded while perf records system-wide: perf stores its info
/// (BPF_PROG_INFO) and `--header -I` prints `# bpf_prog_info ID: bpf_prog_TAG_NAME addr
/// ... size ...`; tracectl prints the same header. The program (tests/data/perf/bpfprog.c,
/// a two-instruction socket filter named tctl_tiny) is loaded by the test; skips with the
/// reason when the kernel refuses it.
#[test]
fn headers_with_bpf_program_info() {
    if !ready() || crate::support::perf::cc_missing().is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::support::perf::build_fixture_program("bpfprog", d);
    let mut holder = std::process::Command::new(d.join("bpfprog"))
        .arg("5")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    {
        use std::io::BufRead;
        let out = holder.stdout.take().unwrap();
        let _ = std::io::BufReader::new(out).read_line(&mut line);
    }
    if line.trim() != "loaded" {
        let _ = holder.wait();
        return crate::support::skips::skip("the kernel refused to load a BPF program");
    }
    run(
        "perf",
        &["record", "-q", "-a", "-o", "bpf.data", "--", "sleep", "0.1"],
        d,
    );
    let _ = holder.kill();
    let _ = holder.wait();
    let full = same(d, &["report", "-i", "bpf.data", "--header-only", "-I"]);
    same(d, &["script", "-i", "bpf.data", "--header-only", "-I"]);
    let prog = full
        .lines()
        .find(|l| l.starts_with("# bpf_prog_info ") && l.contains("_tctl_tiny addr 0x"));
    assert!(prog.is_some(), "perf shows the program: {full}");
}
