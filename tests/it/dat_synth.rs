//! Small synthesized trace.dat files for what recordings here never produce: big-endian
//! files, latency (text) files, unknown options and timestamp adjustments.

use crate::support::pins;
use crate::support::synth::HEADER_PAGE;

use tracectl::dat::{
    opt, write_dat, write_latency_dat, BufferData, BufferSource, Compression, DatFile, Metadata,
    NewOption, WriteOptions,
};
use tracectl::endian::Endianness;

fn meta() -> Metadata {
    Metadata {
        header_page: HEADER_PAGE.into(),
        header_event: "# compressed entry header\n\ttype_len    :    5 bits\n".into(),
        ftrace_formats: vec!["name: function\nID: 1\n".into()],
        event_formats: vec![
            ("sched".into(), "name: sched_switch\nID: 300\n".into()),
            ("sched".into(), "name: sched_wakeup\nID: 301\n".into()),
            ("irq".into(), "name: irq_handler_entry\nID: 40\n".into()),
        ],
        kallsyms: "ffffffff81000000 T _stext\n".into(),
        printk_formats: "0xffffffff82000000 : \"hello\\n\"\n".into(),
        cmdlines: "1 systemd\n".into(),
    }
}

fn pages(n: usize, seed: u8) -> Vec<u8> {
    (0..n * 4096)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn big_endian_files_round_trip_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    for (version, compression) in [
        (7, Compression::Zstd),
        (7, Compression::None),
        (7, Compression::Zlib),
        (6, Compression::None),
    ] {
        let path = dir
            .path()
            .join(format!("be-{version}-{}.dat", compression.name()));
        let wo = WriteOptions {
            version,
            compression,
            endian: Endianness::Big,
            long_size: 8,
            page_size: 4096,
        };
        let cpu0 = pages(23, 1); // more than two compressed chunks of 10 pages
        let cpu1 = pages(1, 2);
        let buffers = vec![
            BufferSource {
                name: String::new(),
                clock: "global".into(),
                page_size: 4096,
                cpus: vec![
                    (0, Box::new(std::io::Cursor::new(cpu0.clone()))),
                    (1, Box::new(std::io::Cursor::new(cpu1.clone()))),
                ],
            },
            BufferSource {
                name: "inst".into(),
                clock: "mono".into(),
                page_size: 4096,
                cpus: vec![(1, Box::new(std::io::Cursor::new(cpu1.clone())))],
            },
        ];
        let opts = [
            NewOption::text(opt::UNAME, "Linux s390 6.18 s390x"),
            NewOption::date(-5),
        ];
        let s = write_dat(&path, &wo, &meta(), &opts, buffers).unwrap();
        assert_eq!(s.pages, 25);
        let d = DatFile::open(&path).unwrap();
        assert_eq!(d.endian(), Endianness::Big);
        assert_eq!(d.header().version, version);
        assert_eq!(Metadata::from_dat(&d).unwrap(), meta());
        assert_eq!(d.nr_cpus(), 2);
        assert_eq!(d.options().uname.as_deref(), Some("Linux s390 6.18 s390x"));
        assert_eq!(d.ts_adjust().offset_ns, -5000);
        assert_eq!(d.ts_adjust().apply(10_000, 0), 5_000);
        assert_eq!(d.long_size(), 8);
        let names: Vec<_> = d
            .buffers()
            .iter()
            .map(|b| (b.name.as_str(), b.clock.as_deref()))
            .collect();
        assert_eq!(names, [("", Some("global")), ("inst", Some("mono"))]);
        assert_eq!(d.cpu_pages(0, 0).unwrap().read_all().unwrap(), cpu0);
        let top_cpu1 = d.buffers()[0]
            .cpus()
            .iter()
            .position(|c| c.cpu == 1)
            .unwrap();
        assert_eq!(d.cpu_pages(0, top_cpu1).unwrap().read_all().unwrap(), cpu1);
        let inst_cpu1 = d.buffers()[1]
            .cpus()
            .iter()
            .position(|c| c.cpu == 1)
            .unwrap();
        assert_eq!(d.cpu_pages(1, inst_cpu1).unwrap().read_all().unwrap(), cpu1);
        assert!(d.warnings().is_empty(), "{:?}", d.warnings());
    }
}

/// A v6 latency file, built byte by byte as the v6 spec describes it.
fn v6_latency(options: &[(u16, Vec<u8>)], text: &[u8]) -> Vec<u8> {
    let mut v = b"\x17\x08\x44tracing6\0".to_vec();
    v.extend_from_slice(&[0, 8]);
    v.extend_from_slice(&4096u32.to_le_bytes());
    v.extend_from_slice(b"header_page\0");
    v.extend_from_slice(&(HEADER_PAGE.len() as u64).to_le_bytes());
    v.extend_from_slice(HEADER_PAGE.as_bytes());
    v.extend_from_slice(b"header_event\0");
    v.extend_from_slice(&0u64.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes()); // ftrace formats
    v.extend_from_slice(&0u32.to_le_bytes()); // systems
    v.extend_from_slice(&0u32.to_le_bytes()); // kallsyms
    v.extend_from_slice(&0u32.to_le_bytes()); // printk
    v.extend_from_slice(&0u64.to_le_bytes()); // cmdlines
    v.extend_from_slice(&1u32.to_le_bytes()); // nr_cpus
    v.extend_from_slice(b"options  \0");
    for (id, data) in options {
        v.extend_from_slice(&id.to_le_bytes());
        v.extend_from_slice(&(data.len() as u32).to_le_bytes());
        v.extend_from_slice(data);
    }
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(b"latency  \0");
    v.extend_from_slice(text);
    v
}

#[test]
fn v6_latency_file_with_unknown_option_and_adjustments() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lat.dat");
    let text = b"# tracer: irqsoff\n#\n  <idle>-0  0d.h1  1us : irq_enter\n";
    let mut tsc = Vec::new();
    tsc.extend_from_slice(&3u32.to_le_bytes()); // mult
    tsc.extend_from_slice(&1u32.to_le_bytes()); // shift
    tsc.extend_from_slice(&100u64.to_le_bytes()); // offset
    let options = vec![
        (opt::DATE, b"0x10\0".to_vec()),
        (99, vec![1, 2, 3]),
        (opt::OFFSET, b"7\0".to_vec()),
        (opt::TSC2NSEC, tsc),
        (opt::TRACECLOCK, b"[x86-tsc] local\0".to_vec()),
    ];
    std::fs::write(&path, v6_latency(&options, text)).unwrap();
    let d = DatFile::open(&path).unwrap();
    assert_eq!(d.buffers().len(), 1);
    assert!(matches!(d.buffers()[0].data, BufferData::Latency { .. }));
    assert_eq!(d.latency_text(0).unwrap(), text);
    assert_eq!(d.warnings().len(), 1);
    assert!(
        d.warnings()[0].contains("unknown option 99"),
        "{:?}",
        d.warnings()
    );
    assert_eq!(d.options().all.len(), 5, "unknown options are kept raw");
    let adj = d.ts_adjust();
    assert_eq!(adj.offset_ns, 16_000 + 7);
    assert_eq!(adj.tsc2nsec, Some((3, 1, 100)));
    // (1100 - 100) * 3 >> 1 = 1500, plus 16007.
    assert_eq!(adj.apply(1100, 0), 17_507);
    assert_eq!(d.options().trace_clock.as_deref(), Some("[x86-tsc] local"));
}

#[test]
fn chunk_walk_ignores_a_short_size() {
    // trace-cmd <= 3.1 stores compressed CPU sizes 4 bytes short; a reader that trusted
    // them would lose data. Patch our own file the same way and read it back.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.dat");
    let data = pages(12, 9);
    write_zstd_one_cpu(&path, &data);
    let d = DatFile::open(&path).unwrap();
    let c = d.buffers()[0].cpus()[0];
    let mut bytes = std::fs::read(&path).unwrap();
    // Find the size in the BUFFER option (cpu u32, offset u64, size u64) and shorten it by 4.
    let mut needle = Vec::new();
    needle.extend_from_slice(&0u32.to_le_bytes());
    needle.extend_from_slice(&c.offset.to_le_bytes());
    needle.extend_from_slice(&c.size.to_le_bytes());
    let at = bytes
        .windows(needle.len())
        .rposition(|w| w == needle.as_slice())
        .unwrap();
    bytes[at + 12..at + 20].copy_from_slice(&(c.size - 4).to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let d = DatFile::open(&path).unwrap();
    assert_eq!(d.buffers()[0].cpus()[0].size, c.size - 4);
    assert_eq!(d.cpu_pages(0, 0).unwrap().read_all().unwrap(), data);
}

#[test]
fn events_of_a_system_are_stored_together() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.dat");
    let mut m = meta();
    m.event_formats.swap(1, 2); // sched, irq, sched
    write_dat(&path, &WriteOptions::default(), &m, &[], vec![]).unwrap();
    let d = DatFile::open(&path).unwrap();
    let systems: Vec<&str> = d.event_formats().iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(systems, ["sched", "sched", "irq"]);
}

/// Latency files as trace-cmd reads them: its report of the v7 files is committed
/// (`results/dat_synth/latency-v7.txt`) and the written files are pinned (see `pins`), so
/// the comparison holds without trace-cmd; with it, its report is compared too.
#[test]
fn latency_files_round_trip_and_trace_cmd_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let text: Vec<u8> = (0..3000)
        .flat_map(|i| format!("  <idle>-0       0d.h1  {i}us : irq_enter\n").into_bytes())
        .collect();
    let have_trace_cmd = pins::trace_cmd_installed();
    let golden_path = pins::results("dat_synth/latency-v7.txt");
    let mut pins = pins::Pins::open("dat_synth.written");
    for (version, compression) in [
        (7, Compression::Zstd),
        (7, Compression::None),
        (6, Compression::None),
    ] {
        let name = format!("lat-{version}-{}.dat", compression.name());
        let path = dir.path().join(&name);
        let wo = WriteOptions {
            version,
            compression,
            ..WriteOptions::default()
        };
        write_latency_dat(&path, &wo, &meta(), &[], "local", &text).unwrap();
        let d = DatFile::open(&path).unwrap();
        assert_eq!(d.buffers().len(), 1);
        assert!(matches!(d.buffers()[0].data, BufferData::Latency { .. }));
        assert_eq!(d.latency_text(0).unwrap(), text, "{}", path.display());
        let theirs = have_trace_cmd.then(|| {
            let o = std::process::Command::new("trace-cmd")
                .arg("report")
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).into_owned()
        });
        if let Some(out) = &theirs {
            assert_eq!(
                out.matches("irq_enter").count(),
                3000,
                "{}: {out:.300}",
                path.display()
            );
            if version == 7 && pins::updating() {
                std::fs::create_dir_all(golden_path.parent().unwrap()).unwrap();
                std::fs::write(&golden_path, out).unwrap();
            }
        }
        // trace-cmd 3.1.6 reads a version 6 latency file's first 8 bytes of text as the
        // size of a trace-clock trailer that such files do not have, and drops them;
        // there the expected text is the file's own.
        let expected = if version == 6 {
            format!("cpus=0\n{}\n", String::from_utf8_lossy(&text))
        } else {
            let golden = std::fs::read_to_string(&golden_path).unwrap();
            if let Some(out) = &theirs {
                assert!(*out == golden, "trace-cmd reads {name} differently");
            }
            golden
        };
        let ours = std::process::Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .arg("report")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            ours.status.success(),
            "{}",
            String::from_utf8_lossy(&ours.stderr)
        );
        let ours = String::from_utf8_lossy(&ours.stdout);
        let first = ours.lines().zip(expected.lines()).position(|(a, b)| a != b);
        assert!(
            ours == expected,
            "tracectl report prints a latency file as trace-cmd does: {}: {} vs {} lines, first difference at {first:?}: {:?} / {:?}",
            path.display(),
            ours.lines().count(),
            expected.lines().count(),
            first.and_then(|i| ours.lines().nth(i)),
            first.and_then(|i| expected.lines().nth(i)),
        );
        if let Some(why) = pins.check(&name, &std::fs::read(&path).unwrap()) {
            panic!("{why}");
        }
    }
    pins.finish(
        "The latency files tests/it/dat_synth.rs writes; results/dat_synth/latency-v7.txt is \
         trace-cmd's report of the v7 ones.",
    );
}

/// Kallsyms compressed ahead of time (as `record` does while the command runs) give the
/// very bytes of a file compressed at write time; one compressed for another text, byte
/// order or compression is not used.
#[test]
fn precompressed_kallsyms_write_the_same_bytes() {
    use tracectl::dat::{write_dat_with, Precompressed};
    let dir = tempfile::tempdir().unwrap();
    let mut m = meta();
    m.kallsyms = (0..20_000)
        .map(|i| format!("ffffffff81{i:06x} T symbol_{i}\n"))
        .collect();
    for (compression, endian) in [
        (Compression::Zstd, Endianness::Little),
        (Compression::Zlib, Endianness::Big),
    ] {
        let wo = WriteOptions {
            version: 7,
            compression,
            endian,
            long_size: 8,
            page_size: 4096,
        };
        let write = |name: &str, pre: &[Precompressed]| {
            let path = dir.path().join(name);
            let buffers = vec![BufferSource {
                name: String::new(),
                clock: "local".into(),
                page_size: 4096,
                cpus: vec![(0, Box::new(std::io::Cursor::new(pages(3, 7))))],
            }];
            write_dat_with(&path, &wo, &m, &[], buffers, pre).unwrap();
            std::fs::read(path).unwrap()
        };
        let plain = write(&format!("plain-{}", compression.name()), &[]);
        let good = Precompressed::kallsyms(&m.kallsyms, compression, endian).unwrap();
        assert!(plain == write("pre", &[good]), "{}", compression.name());
        let other = [
            Precompressed::kallsyms("ffffffff81000000 T other\n", compression, endian).unwrap(),
            Precompressed::kallsyms(&m.kallsyms, Compression::None, endian).unwrap(),
            Precompressed::kallsyms(
                &m.kallsyms,
                compression,
                match endian {
                    Endianness::Little => Endianness::Big,
                    _ => Endianness::Little,
                },
            )
            .unwrap(),
        ];
        assert!(plain == write("other", &other), "{}", compression.name());
        assert_eq!(
            DatFile::open(dir.path().join("other"))
                .unwrap()
                .kallsyms()
                .unwrap(),
            m.kallsyms
        );
    }
}

#[test]
fn compressed_chunks_larger_than_a_read_and_a_chunk_past_the_end() {
    // Pages that do not compress: each 10-page chunk is stored at about its 40 KiB, more
    // than the compressed data a CPU's pages read from the file at a time.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("noise.dat");
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..23 * 4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    write_zstd_one_cpu(&path, &data);
    let d = DatFile::open(&path).unwrap();
    let c = d.buffers()[0].cpus()[0];
    assert!(c.size as usize >= data.len(), "stored {} bytes", c.size);
    assert_eq!(d.cpu_pages(0, 0).unwrap().read_all().unwrap(), data);

    // The second chunk's compressed size made to reach past the end of the file.
    let mut bytes = std::fs::read(&path).unwrap();
    let first = u32::from_le_bytes(bytes[c.offset as usize + 4..][..4].try_into().unwrap());
    let second = c.offset as usize + 4 + 8 + first as usize;
    bytes[second..second + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let d = DatFile::open(&path).unwrap();
    let mut pages = d.cpu_pages(0, 0).unwrap();
    for _ in 0..10 {
        assert!(pages.next_page().unwrap().is_some());
    }
    let e = pages.next_page().unwrap_err().to_string();
    assert!(
        e.contains("flyrecord cpu0") && e.contains(&format!("{}", second + 8)),
        "{e}"
    );
}

/// A zstd-compressed v7 trace.dat at `path` of one CPU whose pages are `data`.
fn write_zstd_one_cpu(path: &std::path::Path, data: &[u8]) {
    let wo = WriteOptions {
        version: 7,
        compression: Compression::Zstd,
        endian: Endianness::Little,
        long_size: 8,
        page_size: 4096,
    };
    let buffers = vec![BufferSource {
        name: String::new(),
        clock: "local".into(),
        page_size: 4096,
        cpus: vec![(0, Box::new(std::io::Cursor::new(data.to_vec())))],
    }];
    write_dat(path, &wo, &meta(), &[], buffers).unwrap();
}
