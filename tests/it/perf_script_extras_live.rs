//! `perf script -F` of what a sample records on request (perf 6.1's `misc`, `tod`,
//! `iregs`, `uregs`, `weight`, `ins_lat`, `phys_addr`, `data_page_size`,
//! `code_page_size`), and `tracectl perf record`'s options that record them
//! (`--intr-regs`, `--user-regs`, `-W`, `--phys-data`, `--data-page-size`,
//! `--code-page-size`): on files recorded here by Debian's perf 6.1 and by us,
//! `tracectl perf script -F ...` prints what `perf script -F ...` prints. Skips (with
//! the reason) without root or perf.

use std::path::Path;
use std::process::Command;

use crate::support::perf::{assert_same_lines, run};

/// The standard output of `perf script ARGS` and of `tracectl perf script ARGS` in `d`,
/// which must be the same, line for line; perf's is returned.
fn same_script(d: &Path, args: &[&str]) -> String {
    let perf = run("perf", &[&["script"][..], args].concat(), d);
    let ours = run(
        env!("CARGO_BIN_EXE_tracectl"),
        &[&["perf", "script"][..], args].concat(),
        d,
    );
    assert_same_lines(&ours, &perf, &format!("perf script {args:?}"));
    perf
}

/// Whether the live tests can run; says why not.
fn skipped() -> bool {
    match crate::support::perf::skip_reason() {
        Some(why) => {
            crate::support::skips::skip(why);
            true
        }
        None => false,
    }
}

/// The options that record every extra, on page faults (which carry a data address).
const EXTRAS: [&str; 12] = [
    "-e",
    "page-faults",
    "-c",
    "1",
    "-d",
    "-W",
    "--phys-data",
    "--data-page-size",
    "--code-page-size",
    "-I",
    "--user-regs",
    "--sample-cpu",
];

/// A short workload with user and kernel page faults.
const WORK: [&str; 4] = ["--", "sh", "-c", "ls / >/dev/null; ls /usr >/dev/null"];

/// `-F` selections of the extras: as lists, as changes to the defaults, after a type.
const SELECTIONS: [&str; 9] = [
    "comm,tid,time,misc,event,ip,sym,addr,weight,ins_lat,iregs,uregs,phys_addr,data_page_size,code_page_size",
    "+misc,+iregs",
    "+uregs,-ip,-sym,-dso,-symoff",
    "sw:comm,cpu,misc,uregs",
    "comm,tid,cpu,misc,time,weight,ins_lat,phys_addr",
    "+data_page_size,+code_page_size,-period",
    "comm,misc,iregs,ipc,synth,metric,callindent",
    "+weight,-weight,+phys_addr",
    "misc",
];

/// Page faults recorded by perf with every extra: each selection prints as perf's.
#[test]
fn perf_script_live_recorded_extras_match_perf() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let how = ["record", "-q", "-o", "x.data"];
    run("perf", &[&how[..], &EXTRAS, &WORK].concat(), d);
    let mut seen = String::new();
    for f in SELECTIONS {
        seen += &same_script(d, &["-i", "x.data", "-F", f]);
    }
    // What the recording must show for the comparison to mean something.
    for (what, shown) in [
        ("interrupt registers", " ABI:2    AX:0x"),
        ("R15 last", "   R15:0x"),
        ("a kernel sample's misc", " K     "),
        ("a user sample's misc", " U     "),
        ("a page size", " 4K"),
    ] {
        assert!(seen.contains(shown), "perf shows {what} ({shown:?})");
    }
}

/// `-F misc` on side-band records (`--show-*-events`): `E` on a comm set by exec, `S`
/// and `Sp` on switches out (plain and preempted), `M` on data mappings, after the
/// kernel/user letters, as perf prints them, in files perf records here with
/// `--switch-events -a` and `-d`.
#[test]
fn perf_script_live_side_band_misc_matches_perf() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run(
        "perf",
        &[
            "record",
            "-q",
            "--switch-events",
            "-a",
            "-o",
            "sw.data",
            "--",
            "sleep",
            "0.3",
        ],
        d,
    );
    run(
        "perf",
        &[
            "record",
            "-q",
            "-d",
            "-o",
            "dm.data",
            "--",
            "sh",
            "-c",
            "ls / >/dev/null",
        ],
        d,
    );
    let show = [
        "--show-mmap-events",
        "--show-task-events",
        "--show-switch-events",
    ];
    let mut seen = String::new();
    for (file, f) in [
        ("sw.data", "misc,comm,tid,cpu,time"),
        ("sw.data", "misc"),
        ("dm.data", "misc,comm,tid"),
    ] {
        seen += &same_script(d, &[&["-i", file, "-F", f][..], &show].concat());
    }
    for (what, shown) in [
        ("an exec's comm", "E     PERF_RECORD_COMM exec"),
        ("a switch out", "S     PERF_RECORD_SWITCH"),
        ("a preemption", "Sp    PERF_RECORD_SWITCH"),
        ("a user mapping", "U     PERF_RECORD_MMAP2"),
    ] {
        assert!(seen.contains(shown), "perf shows {what} ({shown:?})");
    }
}

/// `-F tod` on files recorded with a clock (`-k`): the time of day before the
/// time, with microseconds or (`--ns`) nanoseconds; without clock data, perf's
/// refusal.
#[test]
fn perf_script_live_tod_matches_perf() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (out, clock) in [("mono.data", "monotonic"), ("real.data", "realtime")] {
        let how = ["record", "-q", "-o", out, "-e", "cpu-clock", "-c", "200000"];
        run("perf", &[&how[..], &["-k", clock], &WORK].concat(), d);
        for f in ["comm,tid,misc,tod,time", "+tod", "tod", "sw:tod,event"] {
            same_script(d, &["-i", out, "-F", f]);
        }
        let seen = same_script(d, &["-i", out, "-F", "+tod", "--ns"]);
        assert!(seen.contains(": "), "perf prints samples of {out}");
    }
    run(
        "perf",
        &[
            &["record", "-q", "-o", "plain.data", "-e", "cpu-clock"][..],
            &WORK,
        ]
        .concat(),
        d,
    );
    for f in ["tod", "+tod", "sw:comm,tod"] {
        let args = ["script", "-i", "plain.data", "-F", f];
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
            !perf.status.success() && said.contains("missing clock data"),
            "perf -F {f} is refused: {said}"
        );
        assert!(!ours.status.success() && ours.stdout.is_empty(), "-F {f}");
        let ours_said = String::from_utf8_lossy(&ours.stderr);
        assert!(
            ours_said.contains(said.trim_end()),
            "-F {f}: perf said {said:?}, we said {ours_said:?}"
        );
    }
}

/// The `sample_type` and register masks of a file's events, as `perf evlist -v`
/// shows them.
fn sample_layout(d: &Path, file: &str) -> Vec<String> {
    run("perf", &["evlist", "-v", "-i", file], d)
        .split(", ")
        .filter(|f| f.starts_with("sample_type") || f.starts_with("sample_regs"))
        .map(str::to_string)
        .collect()
}

/// `tracectl perf record` with the options that record the extras: the samples have
/// the layout perf's have with the same options, and perf script and tracectl print
/// the same of them.
#[test]
fn perf_record_live_extras_options_match_perf() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let with = |out: &'static str, regs: &[&'static str]| {
        let mut v = vec!["record", "-q", "-o", out];
        v.extend_from_slice(&EXTRAS[..9]);
        v.extend_from_slice(regs);
        v.extend_from_slice(&WORK);
        v
    };
    let regs = ["--user-regs=ax,sp,ip", "--intr-regs=bx,r15"];
    run("perf", &with("perf.data", &regs), d);
    let ours = with("ours.data", &regs);
    run(
        env!("CARGO_BIN_EXE_tracectl"),
        &[&["perf"][..], &ours].concat(),
        d,
    );
    let layout = sample_layout(d, "perf.data");
    assert!(
        layout.iter().any(|l| l.contains("REGS_INTR")),
        "perf records the registers: {layout:?}"
    );
    assert_eq!(sample_layout(d, "ours.data"), layout);
    for f in SELECTIONS.iter().filter(|f| !f.contains("cpu")) {
        same_script(d, &["-i", "ours.data", "-F", f]);
    }
    // The registers by default: perf's set.
    for (file, tool) in [("p2.data", "perf"), ("o2.data", "tracectl")] {
        let mut args = with(file, &["--user-regs", "-I"]);
        if tool == "tracectl" {
            args.insert(0, "perf");
            run(env!("CARGO_BIN_EXE_tracectl"), &args, d);
        } else {
            run("perf", &args, d);
        }
    }
    assert_eq!(sample_layout(d, "o2.data"), sample_layout(d, "p2.data"));
    // A register x86-64 does not sample is refused before anything is recorded.
    let bad = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args([
            "perf",
            "record",
            "-o",
            "bad.data",
            "--intr-regs=ds",
            "--",
            "true",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown register 'ds'"));
    assert!(!d.join("bad.data").exists());
}

/// `-F data_src`: the raw value and perf's decoding of it (operation, level with hops
/// and level numbers, snoop, TLB, lock, block), cut at perf's 99 bytes and padded to the
/// widest so far. This machine's samples only say "not available", so the test writes
/// other values into the samples of a file perf records here (every value of each field
/// alone, then pseudo-random mixes) and compares with what perf prints of the result.
#[test]
fn perf_script_live_data_src_matches_perf() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run(
        "perf",
        &[
            "record",
            "-q",
            "-e",
            "page-faults",
            "-c",
            "1",
            "-d",
            "-W",
            "-o",
            "ds.data",
            "--",
            "sh",
            "-c",
            "ls -R /usr/share/doc >/dev/null",
        ],
        d,
    );
    // The samples' layout: the data source is the eighth word after the header.
    let evlist = run("perf", &["evlist", "-v", "-i", "ds.data"], d);
    assert!(
        evlist.contains("sample_type: IP|TID|TIME|ADDR|DATA_SRC|WEIGHT_STRUCT,"),
        "{evlist}"
    );
    let file = std::fs::read(d.join("ds.data")).unwrap();
    let samples: Vec<usize> = sample_offsets(&file).iter().map(|p| p + 48).collect();
    assert!(samples.len() > 100, "{} samples", samples.len());
    // Every value of each field on its own (bit offset, width), then mixes.
    let fields = [
        (0, 5),
        (5, 14),
        (19, 5),
        (24, 2),
        (26, 7),
        (33, 4),
        (37, 1),
        (38, 2),
        (40, 3),
        (43, 3),
    ];
    let mut values: Vec<u64> = Vec::new();
    for (at, width) in fields {
        for v in 0..(1u64 << width).min(64) {
            values.push(v << at);
        }
    }
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..1500 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        values.push(seed & ((1 << 46) - 1));
    }
    let mut start = 0;
    while start < values.len() {
        let mut patched = file.clone();
        for (i, &at) in samples.iter().enumerate() {
            let v = values[(start + i) % values.len()];
            patched[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        std::fs::write(d.join("dsx.data"), &patched).unwrap();
        same_script(d, &["-i", "dsx.data", "-F", "comm,addr,data_src,weight"]);
        start += samples.len();
    }
}

/// `-F bpf-output`: a bpf-output event's raw bytes, dumped as perf 6.1 dumps them (eight
/// to a line, with their characters), and `BPF string:` when they are one C string.
/// No BPF program writes here, so the test makes such samples from a file perf records:
/// its one tracepoint becomes the software event bpf-output in the attr, and each
/// sample's raw bytes are rewritten (texts with and without their NUL, bytes after the
/// NUL, bytes that are not printable, lengths from none to every byte the record has);
/// then `perf script` on that file is the oracle, with defaults, lists and changes.
#[test]
fn perf_script_live_bpf_output_matches_perf() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run(
        "perf",
        &[
            "record",
            "-q",
            "-e",
            "sched:sched_switch",
            "-o",
            "sw.data",
            "--",
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do sleep 0.001; done",
        ],
        d,
    );
    let evlist = run("perf", &["evlist", "-v", "-i", "sw.data"], d);
    assert!(
        evlist.contains("sample_type: IP|TID|TIME|CPU|PERIOD|RAW,"),
        "{evlist}"
    );
    let mut file = std::fs::read(d.join("sw.data")).unwrap();
    let word = |f: &[u8], at: usize| u64::from_le_bytes(f[at..at + 8].try_into().unwrap());
    // The attr: type 1 (software), config 10 (bpf-output).
    let attrs = word(&file, 24) as usize;
    file[attrs..attrs + 4].copy_from_slice(&1u32.to_le_bytes());
    file[attrs + 8..attrs + 16].copy_from_slice(&10u64.to_le_bytes());
    let texts: Vec<Vec<u8>> = vec![
        b"hello\0".to_vec(),
        b"abc\0def".to_vec(),
        b"\x01\x02\x03".to_vec(),
        b"0123456789abcdef0123456789abcdef\0".to_vec(),
        Vec::new(),
        b"tab\there\0".to_vec(),
        b"\0".to_vec(),
        b"no nul".to_vec(),
        b"pad\0\0\0\0".to_vec(),
        b"~ \x7f\x80\xff\0".to_vec(),
        (0..=255u8).collect(),
        b"exactly8".to_vec(),
        b"seven7\0".to_vec(),
        b"caf\xe9 \xa0\0".to_vec(),
    ];
    let samples = sample_offsets(&file);
    for (n, p) in samples.iter().enumerate() {
        // After the header: ip, pid/tid, time, cpu, period, then RAW's size.
        let raw = p + 48;
        let room = u32::from_le_bytes(file[raw..raw + 4].try_into().unwrap()) as usize;
        let t = &texts[n % texts.len()];
        let m = &t[..t.len().min(room)];
        let len = m.len() as u32;
        file[raw..raw + 4].copy_from_slice(&len.to_le_bytes());
        file[raw + 4..raw + 4 + m.len()].copy_from_slice(m);
    }
    let n = samples.len();
    assert!(n >= texts.len(), "{n} samples");
    std::fs::write(d.join("bo.data"), &file).unwrap();
    for fields in [
        None,
        Some("bpf-output"),
        Some("comm,bpf-output"),
        Some("comm,tid,time,ip,sym,bpf-output,period"),
        Some("sw:comm,bpf-output"),
        Some("sw:comm,tid"),
        Some("-bpf-output"),
        Some("+bpf-output,-ip"),
    ] {
        let args = match fields {
            Some(f) => vec!["-i", "bo.data", "-F", f],
            None => vec!["-i", "bo.data"],
        };
        let perf = same_script(d, &args);
        if fields.is_none() {
            assert!(perf.contains("BPF string: \"hello\""), "{perf}");
        }
    }
}

/// A field given for every event type that some types cannot print (`trace`,
/// `bpf-output`) is warned of on stderr for each such type, in perf's words and order,
/// once per time it is named, and the output is perf's.
#[test]
fn perf_script_live_field_warnings_as_perf() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run(
        "perf",
        &[
            "record", "-q", "-e", "cs", "-o", "cs.data", "--", "sleep", "0.01",
        ],
        d,
    );
    let stderr = |prog: &str, args: &[&str]| {
        let o = Command::new(prog)
            .args(args)
            .current_dir(d)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    for fields in [
        "trace",
        "comm,trace",
        "comm,tid,bpf-output",
        "comm,bpf-output,trace,trace",
        "+trace",
        "-bpf-output",
        "trace:comm,bpf-output",
    ] {
        let args = ["-i", "cs.data", "-F", fields];
        same_script(d, &args);
        let perf = stderr("perf", &[&["script"][..], &args].concat());
        let ours = stderr(
            env!("CARGO_BIN_EXE_tracectl"),
            &[&["perf", "script"][..], &args].concat(),
        );
        assert_eq!(ours, perf, "-F {fields}");
        if fields.contains("trace,") || fields.ends_with("trace") {
            assert!(
                perf.contains("'trace' not valid for software events"),
                "{perf}"
            );
        }
    }
}

/// Where each PERF_RECORD_SAMPLE of a little-endian perf.data starts (its header's
/// offset in the file), walking the data section record by record.
fn sample_offsets(file: &[u8]) -> Vec<usize> {
    let word = |at: usize| u64::from_le_bytes(file[at..at + 8].try_into().unwrap()) as usize;
    let (data_off, data_size) = (word(40), word(48));
    let mut samples = Vec::new();
    let mut p = data_off;
    while p + 8 <= data_off + data_size {
        let kind = u32::from_le_bytes(file[p..p + 4].try_into().unwrap());
        let size = usize::from(u16::from_le_bytes(file[p + 6..p + 8].try_into().unwrap()));
        if size == 0 {
            break;
        }
        if kind == 9 {
            samples.push(p);
        }
        p += size;
    }
    samples
}
