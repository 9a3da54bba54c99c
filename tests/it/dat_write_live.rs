//! Writing trace.dat files: trace-cmd's files read by us, rewritten in every format,
//! read back by us and by `trace-cmd report` / `trace-cmd dump` with the same events.

use crate::support::skips;

use crate::support::dat::*;

use std::process::Command;

use tracectl::dat::{Compression, DatFile, Metadata};

/// Records the sched and irq events and, in an instance, `instance_event`, with
/// trace-cmd (`record_args` added), and rewrites the file in every format.
fn roundtrip(record_args: &[&str], instance_event: &str) {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let orig = dir.path().join("orig.dat");
    let inst = format!("dat-write-{}", std::process::id());
    let mut a = vec![
        "-e",
        "sched",
        "-e",
        "irq",
        "-B",
        &inst,
        "-e",
        instance_event,
    ];
    a.extend_from_slice(record_args);
    tracecmd_record(&orig, &a);
    let want = report_counts(&orig, &[]);
    assert!(!want.is_empty());
    for (version, compression, name) in [
        (7, Compression::Zstd, "v7zstd.dat"),
        (7, Compression::None, "v7none.dat"),
        (7, Compression::Zlib, "v7zlib.dat"),
        (6, Compression::None, "v6.dat"),
    ] {
        let out = dir.path().join(name);
        let d = rewrite(&orig, &out, version, compression);
        // Our reader sees the same metadata and events.
        let back = DatFile::open(&out).unwrap();
        assert_eq!(back.header().version, version);
        assert_eq!(
            Metadata::from_dat(&back).unwrap(),
            Metadata::from_dat(&d).unwrap(),
            "{name}"
        );
        assert_eq!(back.buffers().len(), 2, "{name}");
        assert_eq!(back.options().cpustats, d.options().cpustats);
        assert_eq!(back.options().uname, d.options().uname);
        assert_eq!(back.nr_cpus(), d.nr_cpus());
        for b in 0..2 {
            assert_eq!(back.buffers()[b].name, d.buffers()[b].name);
            assert_eq!(back.buffers()[b].clock, d.buffers()[b].clock);
            assert_eq!(our_counts(&back, b), our_counts(&d, b), "{name} buffer {b}");
            // Byte-identical pages, CPU by CPU. trace-cmd's v7 files list only the
            // CPUs of a buffer that hold data; a v6 file lists every CPU, empty or not.
            assert_eq!(
                pages_by_cpu(&back, b),
                pages_by_cpu(&d, b),
                "{name} buffer {b}"
            );
        }
        // zlib is not built into every trace-cmd; only check it with our reader.
        if compression == Compression::Zlib {
            continue;
        }
        assert_eq!(
            report_counts(&out, &[]),
            want,
            "trace-cmd report on our {name}"
        );
        let dump = Command::new("trace-cmd")
            .args(["dump", "--all", "-i"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            dump.status.success(),
            "trace-cmd dump {name}: {}",
            String::from_utf8_lossy(&dump.stderr)
        );
        let v = Command::new("trace-cmd")
            .args(["dump", "-v", "-i"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            v.status.success() && v.stderr.is_empty(),
            "trace-cmd dump -v {name}: {}",
            String::from_utf8_lossy(&v.stderr)
        );
        let dumped = String::from_utf8_lossy(&dump.stdout);
        assert!(
            dumped.contains(inst.as_str()),
            "{name}: dump lists the instance"
        );
    }
}

/// The pages of each CPU of buffer `b` that holds any, by CPU number.
fn pages_by_cpu(d: &DatFile, b: usize) -> std::collections::BTreeMap<u32, Vec<u8>> {
    let mut m = std::collections::BTreeMap::new();
    for (i, c) in d.buffers()[b].cpus().iter().enumerate() {
        let pages = d.cpu_pages(b, i).unwrap().read_all().unwrap();
        if !pages.is_empty() {
            m.insert(c.cpu, pages);
        }
    }
    m
}

#[test]
fn roundtrip_from_v7_zstd() {
    roundtrip(&[], "sched_switch");
}

/// trace-cmd's v7 file lists only the CPUs of a buffer that recorded something: here
/// the instance's one exec, on one CPU. Rewritten as v6, the buffer lists every CPU.
#[test]
fn roundtrip_of_a_buffer_with_cpus_left_out() {
    roundtrip(&[], "sched_process_exec");
}

#[test]
fn roundtrip_from_v6() {
    roundtrip(&["--file-version", "6"], "sched_switch");
}
