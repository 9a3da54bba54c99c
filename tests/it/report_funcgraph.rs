//! function and function_graph lines against `trace-cmd report`.
//!
//! This machine refuses the function tracers, so the test builds a trace.dat itself: the
//! kernel's own `ftrace/function`, `funcgraph_entry` and `funcgraph_exit` formats, a small
//! kallsyms, and pages holding a call tree (leaves, nested calls, durations over each of
//! trace-cmd's marks, a pid switch between an entry and its exit). trace-cmd reports the
//! file; tracectl must print the same lines, also with `-O fgraph:tailprint` and
//! `-O fgraph:depth`.

use crate::support::skips;

use std::io::Cursor;
use std::path::Path;
use std::process::Command;

use tracectl::dat::{write_dat, BufferSource, Metadata, WriteOptions};

use crate::support::live::TRACEFS as ROOT;

struct Format {
    id: u16,
    size: usize,
    fields: Vec<(String, usize, usize)>,
}

fn format(text: &str) -> Format {
    let mut id = 0;
    let mut fields = Vec::new();
    let mut size = 0;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("ID: ") {
            id = v.trim().parse().unwrap();
        }
        let Some(rest) = line.trim().strip_prefix("field:") else {
            continue;
        };
        let decl = rest.split(';').next().unwrap();
        let name = decl
            .split_whitespace()
            .last()
            .unwrap()
            .split('[')
            .next()
            .unwrap()
            .to_string();
        let num = |k: &str| -> usize {
            let i = line.find(k).unwrap() + k.len();
            line[i..].split(';').next().unwrap().trim().parse().unwrap()
        };
        let (off, sz) = (num("offset:"), num("size:"));
        size = size.max(off + sz);
        fields.push((name, off, sz));
    }
    Format { id, size, fields }
}

fn payload(f: &Format, pid: i32, values: &[(&str, u64)]) -> Vec<u8> {
    let mut d = vec![0u8; f.size.div_ceil(4) * 4];
    d[0..2].copy_from_slice(&f.id.to_le_bytes());
    d[4..8].copy_from_slice(&pid.to_le_bytes());
    for (name, v) in values {
        let (_, off, sz) = f
            .fields
            .iter()
            .find(|x| x.0 == *name)
            .unwrap_or_else(|| panic!("no field {name}"));
        d[*off..*off + *sz].copy_from_slice(&v.to_le_bytes()[..*sz]);
    }
    d
}

/// One sub-buffer: u64 timestamp, u64 commit, then records with 27-bit time deltas.
fn page(start: u64, records: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut data = Vec::new();
    let mut ts = start;
    for (t, p) in records {
        let delta = (t - ts) as u32;
        assert!(delta < (1 << 27));
        ts = *t;
        assert!(p.len() % 4 == 0 && p.len() <= 112);
        let type_len = (p.len() / 4) as u32;
        data.extend_from_slice(&(type_len | (delta << 5)).to_le_bytes());
        data.extend_from_slice(p);
    }
    let mut pg = vec![0u8; 4096];
    pg[0..8].copy_from_slice(&start.to_le_bytes());
    pg[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
    pg[16..16 + data.len()].copy_from_slice(&data);
    pg
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn function_graph_lines_match_trace_cmd() {
    if Command::new("trace-cmd").arg("--help").output().is_err() {
        skips::skip("trace-cmd is not installed");
        return;
    }
    // tracefs files must be read in one large read (a short read gives a cut text).
    let read = |p: &str| {
        tracectl::tracefs::read_file(&Path::new(ROOT).join(p))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    let (Ok(fn_fmt), Ok(ent_fmt), Ok(exit_fmt), Ok(hp), Ok(he)) = (
        read("events/ftrace/function/format"),
        read("events/ftrace/funcgraph_entry/format"),
        read("events/ftrace/funcgraph_exit/format"),
        read("events/header_page"),
        read("events/header_event"),
    ) else {
        skips::skip(format!(
            "the ftrace event formats are not readable under {ROOT}"
        ));
        return;
    };
    let (func, ent, exit) = (format(&fn_fmt), format(&ent_fmt), format(&exit_fmt));
    let base = 0xffffffff81000000u64;
    let sym = |i: u64| base + i * 0x100;
    let kallsyms: String = [
        "do_work",
        "lock_it",
        "unlock_it",
        "compute",
        "inner_leaf",
        "slow_path",
        "after",
    ]
    .iter()
    .enumerate()
    .map(|(i, n)| format!("{:016x} T {n}\n", sym(i as u64)))
    .collect();

    let t0 = 5_000_000_000u64;
    let mut recs: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut t = t0;
    let mut push = |dt: u64, p: Vec<u8>| {
        t += dt;
        recs.push((t, p));
    };
    let entry = |pid, f: u64, depth: u64| payload(&ent, pid, &[("func", f), ("depth", depth)]);
    let exit_ = |pid, f: u64, depth: u64, call: u64, ret: u64| {
        payload(
            &exit,
            pid,
            &[
                ("func", f),
                ("depth", depth),
                ("calltime", call),
                ("rettime", ret),
            ],
        )
    };
    // do_work() { lock_it(); compute() { inner_leaf(); } slow_path(); unlock_it(); }
    push(0, entry(100, sym(0), 0));
    push(100, entry(100, sym(1), 1));
    push(300, exit_(100, sym(1), 1, t0 + 100, t0 + 400)); // 300 ns leaf
    push(50, entry(100, sym(3), 1));
    push(40, entry(100, sym(4), 2));
    push(15_000, exit_(100, sym(4), 2, t0 + 490, t0 + 15_490)); // 15 us leaf: "+"
    push(200_000, exit_(100, sym(3), 1, t0 + 450, t0 + 215_490)); // 215 us: "!"
    push(10, entry(100, sym(5), 1));
    push(
        2_000_000,
        exit_(100, sym(5), 1, t0 + 215_500, t0 + 2_215_500),
    ); // 2 ms: "#"
    push(10, entry(100, sym(2), 1));
    push(10, function_payload(&func, 200, sym(6), sym(0))); // another pid in between
    push(10, exit_(100, sym(2), 1, t0 + 2_215_510, t0 + 2_215_530));
    push(100_000_000, exit_(100, sym(0), 0, t0, t0 + 1_500_000_000)); // over a second: "$"
    push(
        10,
        payload(&func, 100, &[("ip", sym(6)), ("parent_ip", sym(0))]),
    );
    push(
        10,
        payload(
            &func,
            100,
            &[("ip", 0xffffffffa0000000), ("parent_ip", sym(0))],
        ),
    ); // no symbol
       // Deltas over 27 bits need a TIME_EXTEND; keep the test's pages within one delta each.
    let mut pages = Vec::new();
    let mut chunk: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut start = t0;
    for (t, p) in recs {
        if t - start >= (1 << 27) {
            pages.extend(page(start, &chunk));
            chunk.clear();
            start = t;
        }
        chunk.push((t, p));
    }
    pages.extend(page(start, &chunk));

    let dir = tempfile::tempdir().unwrap();
    let file = match std::env::var_os("KEEP_GRAPH_DAT") {
        Some(p) => std::path::PathBuf::from(p),
        None => dir.path().join("graph.dat"),
    };
    let meta = Metadata {
        header_page: hp,
        header_event: he,
        ftrace_formats: vec![fn_fmt, ent_fmt, exit_fmt],
        event_formats: vec![],
        kallsyms,
        printk_formats: String::new(),
        cmdlines: "100 worker\n200 other\n".into(),
    };
    let buffers = vec![BufferSource {
        name: String::new(),
        clock: "local".into(),
        page_size: 4096,
        cpus: vec![(0, Box::new(Cursor::new(pages)) as Box<dyn std::io::Read>)],
    }];
    write_dat(&file, &WriteOptions::default(), &meta, &[], buffers).unwrap();

    let f = file.to_str().unwrap();
    for extra in [
        &[][..],
        &["-O", "fgraph:tailprint"],
        &["-O", "fgraph:depth"],
        &["-t"],
    ] {
        let theirs = run(Command::new("trace-cmd")
            .arg("report")
            .args(extra)
            .args(["-i", f]));
        let ours = run(Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .arg("report")
            .args(extra)
            .args(["-i", f]));
        eprintln!("trace-cmd report {extra:?}:\n{theirs}");
        assert!(theirs.lines().count() > 10, "trace-cmd printed too little");
        assert_eq!(
            ours, theirs,
            "tracectl report {extra:?} differs from trace-cmd"
        );
    }
}

fn function_payload(f: &Format, pid: i32, ip: u64, parent: u64) -> Vec<u8> {
    payload(f, pid, &[("ip", ip), ("parent_ip", parent)])
}
