//! `tracectl perf record` and BPF programs, and `--buildid-mmap`, as perf 6.1 records
//! them: a program loaded by the test (tests/data/perf/bpfprog.c, a socket filter given a
//! name of its own) shows in perf's readers of tracectl's file as in perf's file of the
//! same workload (its BPF_PROG_INFO line, its KSYMBOL and BPF_EVENT records), per process
//! and with `-a`, loaded before or while recording; `--buildid-mmap` files show the same
//! build-id MMAP2 records. perf reads tracectl's files without a warning, and tracectl's
//! reader prints what perf prints of both, samples in a program included. Skips (with the reason) without root, perf,
//! a C compiler, or when the kernel refuses the program.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::support::perf::{
    assert_same_lines, build_fixture_program, cc_missing, run_clean, skip_reason,
};

fn tracectl() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

fn ready() -> bool {
    match skip_reason().or_else(|| cc_missing().map(str::to_string)) {
        Some(why) => {
            crate::support::skips::skip(why);
            false
        }
        None => true,
    }
}

/// A program named `name` loaded by `d`/bpfprog and held `secs` seconds, once loaded;
/// `None` (a skip) when the kernel refuses it.
fn load(d: &Path, name: &str, secs: &str) -> Option<Child> {
    let mut c = Command::new(d.join("bpfprog"))
        .args([secs, name])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let _ = std::io::BufReader::new(c.stdout.take().unwrap()).read_line(&mut line);
    if line.trim() != "loaded" {
        let _ = c.wait();
        crate::support::skips::skip("the kernel refused to load a BPF program");
        return None;
    }
    Some(c)
}

/// perf records `cmd` with `opts` into p.data, tracectl into t.data (both quietly).
fn record_both(d: &Path, opts: &[&str], cmd: &[&str]) {
    let perf = [&["record", "-q", "-o", "p.data"][..], opts, &["--"], cmd].concat();
    run_clean("perf", &perf, d);
    let ours = [
        &["perf", "record", "-q", "-o", "t.data"][..],
        opts,
        &["--"],
        cmd,
    ]
    .concat();
    run_clean(tracectl(), &ours, d);
}

/// perf's `# bpf_prog_info ID: bpf_prog_TAG_NAME addr ADDR size LEN` line of the
/// program `name` in `file`'s header (`perf report --header-only -I`), and the id.
fn prog_info_line(d: &Path, file: &str, name: &str) -> (String, String) {
    let header = run_clean("perf", &["report", "-i", file, "--header-only", "-I"], d);
    let line = header
        .lines()
        .find(|l| l.starts_with("# bpf_prog_info ") && l.contains(&format!("_{name} addr 0x")))
        .unwrap_or_else(|| panic!("{file}: no bpf_prog_info of {name}: {header}"))
        .to_string();
    let id = line["# bpf_prog_info ".len()..]
        .split(':')
        .next()
        .unwrap()
        .to_string();
    (line, id)
}

/// What `perf script --show-bpf-events` prints of the program `name` (of id `id`): its
/// KSYMBOL and BPF_EVENT records, from `PERF_RECORD_` on.
fn bpf_records(d: &Path, file: &str, name: &str, id: &str) -> Vec<String> {
    let out = run_clean("perf", &["script", "-i", file, "--show-bpf-events"], d);
    out.lines()
        .filter_map(|l| l.find("PERF_RECORD_").map(|at| &l[at..]))
        .filter(|r| {
            (r.starts_with("PERF_RECORD_KSYMBOL") && r.ends_with(&format!("_{name}")))
                || (r.starts_with("PERF_RECORD_BPF_EVENT") && r.ends_with(&format!(" id {id}")))
        })
        .map(str::to_string)
        .collect()
}

/// Without the run's own address and id: the name and size.
fn masked_info(line: &str) -> String {
    let name_on = line.find(": ").unwrap() + 2;
    let rest = &line[name_on..];
    let (name, tail) = rest.split_once(" addr 0x").unwrap();
    let size = tail.split_once(' ').unwrap().1;
    format!("{name} {size}")
}

/// Without the run's own address and id.
fn masked_record(r: &str) -> String {
    let words: Vec<&str> = r.split(' ').collect();
    let mut out = Vec::new();
    let mut skip_next = false;
    for w in words {
        if skip_next {
            skip_next = false;
            continue;
        }
        if w == "addr" || w == "id" {
            skip_next = true;
        }
        out.push(w);
    }
    out.join(" ")
}

/// A program loaded before the recording starts, per process and with `-a`: perf's
/// readers show the same BPF_PROG_INFO line and KSYMBOL/BPF_EVENT records in both
/// files (same program, so the same address and id), the tracking event asks for
/// `ksymbol` and `bpf_event`, and tracectl's reader prints perf's header of both.
#[test]
fn perf_record_bpf_live_programs_loaded_at_the_start() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("bpfprog", d);
    let name = "tctl_rec_start";
    let Some(mut holder) = load(d, name, "30") else {
        return;
    };
    for opts in [&[][..], &["-a"][..]] {
        record_both(d, opts, &["sleep", "0.1"]);
        let (p_line, id) = prog_info_line(d, "p.data", name);
        let (t_line, _) = prog_info_line(d, "t.data", name);
        assert_eq!(t_line, p_line, "{opts:?}: BPF_PROG_INFO");
        let p = bpf_records(d, "p.data", name, &id);
        assert_eq!(p.len(), 2, "{opts:?}: perf's KSYMBOL and BPF_EVENT: {p:?}");
        assert_eq!(bpf_records(d, "t.data", name, &id), p, "{opts:?}");
        for file in ["p.data", "t.data"] {
            // The header of perf script shows it too.
            let script = run_clean("perf", &["script", "-i", file, "--header", "-I"], d);
            assert!(script.contains(&p_line), "{opts:?} {file}: {script}");
            for args in [
                &["report", "-i", file, "--header-only", "-I"][..],
                &["script", "-i", file, "--header-only", "-I"][..],
                &["script", "-i", file, "--show-bpf-events"][..],
            ] {
                let perf = run_clean("perf", args, d);
                let ours = run_clean(tracectl(), &[&["perf"][..], args].concat(), d);
                assert_same_lines(&ours, &perf, &format!("{opts:?} perf {args:?}"));
            }
        }
        let header = run_clean("perf", &["report", "-i", "t.data", "--header-only"], d);
        assert!(
            header.contains("ksymbol = 1, bpf_event = 1"),
            "{opts:?}: {header}"
        );
        run_clean("perf", &["report", "-i", "t.data", "--stdio"], d);
    }
    // --no-bpf-event: the program's KSYMBOL but no BPF_EVENT, no bpf_event bit, and
    // none of its info in the header, in both files.
    let (_, id) = prog_info_line(d, "p.data", name);
    record_both(d, &["--no-bpf-event"], &["sleep", "0.1"]);
    let p = bpf_records(d, "p.data", name, &id);
    assert_eq!(p.len(), 1, "perf's KSYMBOL alone: {p:?}");
    assert_eq!(bpf_records(d, "t.data", name, &id), p, "--no-bpf-event");
    for file in ["p.data", "t.data"] {
        let header = run_clean("perf", &["report", "-i", file, "--header-only", "-I"], d);
        assert!(
            !header.contains(&format!("_{name} addr 0x")),
            "{file}: {header}"
        );
    }
    let attrs = |f: &str| run_clean("perf", &["evlist", "-v", "-i", f], d);
    assert_eq!(attrs("t.data"), attrs("p.data"), "--no-bpf-event attrs");
    let _ = holder.kill();
    let _ = holder.wait();
}

/// A program loaded by the recorded command while it runs: the kernel reports it
/// (KSYMBOL, BPF_EVENT) and both files store its info; one loaded by another process
/// meanwhile has its info stored (perf's BPF side band) and no record. Addresses and
/// ids are the run's own, so they are left out of the comparison.
#[test]
fn perf_record_bpf_live_programs_loaded_while_recording() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("bpfprog", d);
    let name = "tctl_rec_late";
    // Can this kernel load it at all?
    let Some(mut probe) = load(d, name, "0") else {
        return;
    };
    let _ = probe.wait();
    let prog = d.join("bpfprog").to_string_lossy().into_owned();
    record_both(d, &[], &[&prog, "1", name]);
    let mut seen = Vec::new();
    for file in ["p.data", "t.data"] {
        let (line, id) = prog_info_line(d, file, name);
        let records: Vec<String> = bpf_records(d, file, name, &id)
            .iter()
            .map(|r| masked_record(r))
            .collect();
        seen.push((masked_info(&line), records));
    }
    assert_eq!(seen[1], seen[0]);
    assert_eq!(seen[0].1.len(), 2, "{:?}", seen[0]);

    // Loaded by another process while a command is recorded: perf's side band stores
    // its info, and no record of it is in the data.
    let other = "tctl_rec_other";
    for (tool, pre, file) in [
        ("perf", &["record"][..], "p.data"),
        (tracectl(), &["perf", "record"][..], "t.data"),
    ] {
        let loader = std::thread::spawn({
            let prog = prog.clone();
            move || {
                std::thread::sleep(std::time::Duration::from_millis(1500));
                Command::new(prog).args(["2", other]).output().unwrap()
            }
        });
        let args = [pre, &["-q", "-o", file, "--", "sleep", "3"]].concat();
        run_clean(tool, &args, d);
        loader.join().unwrap();
    }
    let mut infos = Vec::new();
    for file in ["p.data", "t.data"] {
        let (line, id) = prog_info_line(d, file, other);
        assert_eq!(
            bpf_records(d, file, other, &id),
            Vec::<String>::new(),
            "{file}"
        );
        infos.push(masked_info(&line));
    }
    assert_eq!(infos[1], infos[0]);
}

/// The MMAP2 records of `file` (`perf script --show-mmap-events`) of the kernel (pid
/// -1), those synthesized for the process `running`, and those the kernel wrote for the
/// processes `commands` (the recorded command, whose maps before its exec are the
/// recorder's own), without the addresses and pids of the run: length, offset, build id
/// or device and inode, protection and name.
fn mmap2_lines(d: &Path, file: &str, running: &str, commands: &[String]) -> Vec<String> {
    let out = run_clean("perf", &["script", "-i", file, "--show-mmap-events"], d);
    out.lines()
        .filter_map(|l| {
            let (cols, r) = l.split_once("PERF_RECORD_MMAP2 ")?;
            let synthesized = cols.trim_end().ends_with(" 0.000000:");
            let (pid_tid, rest) = r.split_once(": [0x")?;
            let pid = pid_tid.split('/').next()?;
            let kept = pid == "-1"
                || (synthesized && pid == running)
                || (!synthesized && commands.iter().any(|p| p == pid));
            if !kept {
                return None;
            }
            // Kernel maps keep their address.
            let (whose, rest) = if pid == "-1" {
                ("kernel", rest)
            } else {
                ("user", rest.split_once('(')?.1)
            };
            Some(format!("{whose} {rest}"))
        })
        .collect()
}

/// `--buildid-mmap`: the kernel's map and the maps of running processes are synthesized
/// as MMAP2 records with the build ids, the kernel puts them in the command's, the files
/// have no BUILD_ID section, and perf reads tracectl's files without a warning; tracectl
/// prints what perf prints of perf's files.
#[test]
fn perf_record_bpf_live_buildid_mmap() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut running = Command::new("sleep").arg("20").spawn().unwrap();
    let running_pid = running.id().to_string();
    for opts in [&["--buildid-mmap"][..], &["--buildid-mmap", "-a"][..]] {
        record_both(d, opts, &["sleep", "0.1"]);
        // The command's maps ("sleep" in both files), and the running sleep's.
        // With -a, other tasks may exec a sleep too: only the running sleep's maps then.
        let comm_pids = |file: &str| -> Vec<String> {
            if opts.contains(&"-a") {
                return Vec::new();
            }
            let out = run_clean("perf", &["script", "-i", file, "--show-task-events"], d);
            out.lines()
                .filter(|l| l.contains("PERF_RECORD_COMM exec: sleep:"))
                .filter_map(|l| l.rsplit(':').next())
                .filter_map(|pt| pt.split('/').next())
                .map(str::to_string)
                .collect()
        };
        let p = mmap2_lines(d, "p.data", &running_pid, &comm_pids("p.data"));
        let t = mmap2_lines(d, "t.data", &running_pid, &comm_pids("t.data"));
        assert_eq!(t, p, "{opts:?}");
        assert!(
            p.iter().filter(|l| l.contains(" <")).count() >= 3,
            "{opts:?}: build ids in the maps: {p:?}"
        );
        // The attrs are perf's, field by field (`build_id` on the tracking event); with
        // -a perf tracks on a dummy:HG event, which tracectl does not add.
        let attrs = |file: &str| -> Vec<String> {
            run_clean("perf", &["evlist", "-v", "-i", file], d)
                .lines()
                .filter(|l| !l.starts_with('#'))
                .flat_map(|l| l.split(", ").map(str::to_string).collect::<Vec<_>>())
                .collect()
        };
        let p_attrs = attrs("p.data");
        assert!(p_attrs.iter().any(|f| f == "build_id: 1"), "{p_attrs:?}");
        if !opts.contains(&"-a") {
            assert_eq!(attrs("t.data"), p_attrs, "{opts:?}: the attrs differ");
        }
        for file in ["p.data", "t.data"] {
            let header = run_clean("perf", &["report", "-i", file, "--header-only"], d);
            let missing = header
                .lines()
                .find(|l| l.starts_with("# missing features:"))
                .unwrap();
            assert!(missing.contains(" BUILD_ID "), "{opts:?} {file}: {missing}");
            run_clean("perf", &["report", "-i", file, "--stdio"], d);
            for args in [
                &["script", "-i", file, "--show-mmap-events"][..],
                &["report", "-i", file, "--stdio"][..],
            ] {
                let perf = run_clean("perf", args, d);
                let ours = run_clean(tracectl(), &[&["perf"][..], args].concat(), d);
                assert_same_lines(&ours, &perf, &format!("{opts:?} perf {args:?}"));
            }
        }
    }
    let _ = running.kill();
    let _ = running.wait();
}

/// Samples in a BPF program (tests/data/perf/bpfbusy.c: a socket filter of 4000
/// instructions run for each of the datagrams it sends itself) recorded system-wide
/// with call chains, by perf and by tracectl: both files have frames named
/// `bpf_prog_TAG_tctl_busy+OFF (bpf_prog_TAG_tctl_busy)` as perf names them, and
/// tracectl's `perf script` prints what perf's does of both files, and its `perf
/// report` the program's lines perf's prints.
#[test]
fn perf_record_bpf_live_samples_in_a_program() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("bpfbusy", d);
    // Can this kernel load it at all?
    let probe = Command::new(d.join("bpfbusy")).arg("0").output().unwrap();
    if !probe.status.success() {
        return crate::support::skips::skip("the kernel refused to load a BPF program");
    }
    let prog = d.join("bpfbusy").to_string_lossy().into_owned();
    record_both(d, &["-a", "-g"], &[&prog, "100000"]);
    for file in ["p.data", "t.data"] {
        let script = run_clean("perf", &["script", "-i", file], d);
        let frames = script
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                l.contains(" bpf_prog_")
                    && l.ends_with("_tctl_busy)")
                    && l.contains("_tctl_busy+0x")
            })
            .count();
        assert!(frames > 0, "{file}: no sample in the program");
        let perf = script;
        let ours = run_clean(tracectl(), &["perf", "script", "-i", file], d);
        assert_same_lines(&ours, &perf, &format!("perf script -i {file}"));
        // perf report's lines of the program (the rest of a system-wide profile is
        // other tests' business).
        let busy = |s: String| -> String {
            s.lines()
                .filter(|l| l.contains("_tctl_busy"))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        for args in [
            &["report", "-i", file, "--stdio"][..],
            &["report", "-i", file, "--stdio", "--no-children"][..],
        ] {
            let perf = busy(run_clean("perf", args, d));
            assert!(!perf.is_empty(), "perf {args:?}: no line of the program");
            let ours = busy(run_clean(tracectl(), &[&["perf"][..], args].concat(), d));
            assert_same_lines(&ours, &perf, &format!("perf {args:?}"));
        }
    }
}
