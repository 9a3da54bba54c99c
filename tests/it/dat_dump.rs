//! `tracectl dump` against `trace-cmd dump`: byte for byte, mode by mode.
//!
//! - The committed recordings: for each `MODE ARGS` line of
//!   `tests/data/tracecmd/dump-modes.tsv`, the golden `results/STEM/dump/MODE.txt` (or,
//!   for the megabytes of `--all`, its size and digest in `MODE.digest`), made by
//!   `make-dump-results.sh` with trace-cmd run in the file's directory, as here. These
//!   are trace-cmd-written files, so the section offsets, sizes and flags the dump
//!   shows are trace-cmd's own.
//! - Files tracectl writes with the options recordings here never hold (DATE, OFFSET,
//!   HOOK, PROCMAPS, TSC2NSEC, GUEST, TIME_SHIFT, an unknown id; little- and big-endian)
//!   and a latency file: what
//!   is compared is how each dump prints the same bytes (offsets are our writer's);
//!   trace-cmd's `--all` of each is committed under `results/dat_dump/` and the files
//!   are pinned in `results/dat_dump.written`.
//! - Live, every mode and `--kallsyms` against the installed trace-cmd.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::pins;
use crate::support::skips::skip;

use tracectl::dat::{
    opt, write_dat, write_latency_dat, BufferSource, Compression, DatFile, Metadata, NewOption,
    WriteOptions,
};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd")
}

/// `(mode, args)` of each line of `dump-modes.tsv`.
fn modes() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(data().join("dump-modes.tsv")).unwrap();
    let v: Vec<_> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (mode, args) = l.split_once('\t').unwrap_or((l, ""));
            (
                mode.to_string(),
                args.split_whitespace().map(String::from).collect(),
            )
        })
        .collect();
    assert!(v.len() >= 20, "dump-modes.tsv has {} modes", v.len());
    v
}

/// `(stem, path)` of each recording: the v7 files as committed, the v6 ones unpacked.
fn inputs(tmp: &Path) -> Vec<(String, PathBuf)> {
    let mut names: Vec<String> = std::fs::read_dir(data())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    let mut v = Vec::new();
    for n in names {
        if let Some(stem) = n.strip_suffix(".dat") {
            v.push((stem.to_string(), data().join(&n)));
        } else if let Some(stem) = n.strip_suffix(".dat.zst") {
            let packed = std::fs::read(data().join(&n)).unwrap();
            let to = tmp.join(format!("{stem}.dat"));
            std::fs::write(&to, zstd::decode_all(&packed[..]).unwrap()).unwrap();
            v.push((stem.to_string(), to));
        }
    }
    assert!(
        v.len() >= 6,
        "recordings missing under {}",
        data().display()
    );
    v
}

/// `PROGRAM dump ARGS NAME`, run in the file's directory (the summary names the file as
/// given).
fn run_dump(program: &str, args: &[String], file: &Path) -> std::process::Output {
    Command::new(program)
        .current_dir(file.parent().unwrap())
        .arg("dump")
        .args(args)
        .arg(file.file_name().unwrap())
        .output()
        .unwrap()
}

fn tracectl_dump(args: &[String], file: &Path) -> std::process::Output {
    run_dump(env!("CARGO_BIN_EXE_tracectl"), args, file)
}

fn first_difference(want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let i = w
        .lines()
        .zip(g.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| w.lines().count().min(g.lines().count()));
    format!(
        "line {}: want {:?}, got {:?}",
        i + 1,
        w.lines().nth(i),
        g.lines().nth(i)
    )
}

#[test]
fn dump_matches_tracecmd_goldens() {
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    let modes = modes();
    for (stem, path) in inputs(tmp.path()) {
        let results = pins::results(&stem).join("dump");
        for (mode, args) in &modes {
            let out = tracectl_dump(args, &path);
            assert!(
                out.status.success(),
                "tracectl dump {args:?} {stem}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            compared += 1;
            let txt = results.join(format!("{mode}.txt"));
            if txt.exists() {
                let want = std::fs::read(&txt).unwrap();
                if out.stdout != want {
                    failures.push(format!(
                        "{stem} {mode}: {}",
                        first_difference(&want, &out.stdout)
                    ));
                }
            } else {
                let digest = results.join(format!("{mode}.digest"));
                let want = std::fs::read_to_string(&digest)
                    .unwrap_or_else(|_| panic!("no {} nor {}", txt.display(), digest.display()));
                let got = pins::pin_line(mode, &out.stdout);
                if want.trim_end() != got {
                    failures.push(format!(
                        "{stem} {mode}: trace-cmd's output was `{}`, tracectl's is `{got}` (mode, size, FNV-1a)",
                        want.trim_end()
                    ));
                }
            }
        }
    }
    assert!(compared >= 6 * 20, "only {compared} comparisons");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn dump_live_tracecmd_oracle() {
    if !pins::trace_cmd_installed() {
        skip("trace-cmd is not installed: nothing to compare tracectl dump with");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut modes = modes();
    modes.push(("kallsyms".into(), vec!["--kallsyms".into()]));
    for (stem, path) in inputs(tmp.path()) {
        for (mode, args) in &modes {
            let want = run_dump("trace-cmd", args, &path);
            assert!(
                want.status.success(),
                "trace-cmd dump {args:?} {stem} failed"
            );
            let got = tracectl_dump(args, &path);
            if got.stdout != want.stdout {
                failures.push(format!(
                    "{stem} {mode}: {}",
                    first_difference(&want.stdout, &got.stdout)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn meta() -> Metadata {
    Metadata {
        header_page: crate::support::synth::HEADER_PAGE.into(),
        header_event: "# compressed entry header\n\ttype_len    :    5 bits\n".into(),
        ftrace_formats: vec!["name: function\nID: 1\n".into()],
        event_formats: vec![
            ("sched".into(), "name: sched_switch\nID: 300\n".into()),
            ("irq".into(), "name: irq_handler_entry\nID: 40\n".into()),
        ],
        kallsyms: "ffffffff81000000 T _stext\n".into(),
        // Longer than trace-cmd's 1023-byte print pieces, with a NUL inside.
        printk_formats: format!(
            "{}\0hidden after a NUL\n0xffffffff82000000 : \"hello\\n\"\n",
            "x".repeat(1500)
        ),
        cmdlines: "1 systemd\n".into(),
    }
}

/// A number's bytes in the file's byte order.
fn en<const N: usize>(big_endian: bool, mut b: [u8; N]) -> [u8; N] {
    if big_endian {
        b.reverse();
    }
    b
}

/// The options recordings here never hold, big-endian when `be`.
fn rare_options(be: bool) -> Vec<NewOption> {
    let mut guest = b"guest-1\0".to_vec();
    guest.extend_from_slice(&en(be, 0x1122_3344_5566_7788u64.to_le_bytes()));
    guest.extend_from_slice(&en(be, 2u32.to_le_bytes()));
    for (cpu, pid) in [(0u32, 4001u32), (1, 4002)] {
        guest.extend_from_slice(&en(be, cpu.to_le_bytes()));
        guest.extend_from_slice(&en(be, pid.to_le_bytes()));
    }
    let mut shift = en(be, 0xabcd_ef01_2345_6789u64.to_le_bytes()).to_vec();
    shift.extend_from_slice(&en(be, 1u32.to_le_bytes())); // flags
    shift.extend_from_slice(&en(be, 2u32.to_le_bytes())); // CPUs
    for (times, offsets) in [(vec![100i64, 200], vec![-5i64, 7]), (vec![300], vec![9])] {
        shift.extend_from_slice(&en(be, (times.len() as u32).to_le_bytes()));
        for t in &times {
            shift.extend_from_slice(&en(be, t.to_le_bytes()));
        }
        for o in &offsets {
            shift.extend_from_slice(&en(be, o.to_le_bytes()));
        }
        for _ in &times {
            shift.extend_from_slice(&en(be, 3i64.to_le_bytes())); // scaling
        }
    }
    for f in [1i64, 2, 4] {
        shift.extend_from_slice(&en(be, f.to_le_bytes())); // fractions
    }
    let mut tsc = en(be, 1000u32.to_le_bytes()).to_vec();
    tsc.extend_from_slice(&en(be, 10u32.to_le_bytes()));
    tsc.extend_from_slice(&en(be, 123_456u64.to_le_bytes()));
    vec![
        NewOption::date(-5),
        NewOption::text(opt::OFFSET, "12345"),
        NewOption::text(
            opt::HOOK,
            "sched:sched_waking,pid/sched:sched_switch,next_pid",
        ),
        NewOption::text(opt::PROCMAPS, "1 2 /bin/true\n"),
        NewOption {
            id: opt::GUEST,
            data: guest,
        },
        NewOption {
            id: opt::TIME_SHIFT,
            data: shift,
        },
        NewOption {
            id: opt::TSC2NSEC,
            data: tsc,
        },
        NewOption {
            id: 99,
            data: vec![1, 2, 3],
        },
    ]
}

/// Dumps of written files with rare options (little- and big-endian), latency data and
/// text longer than trace-cmd's print pieces: trace-cmd's `--all` output is committed.
#[test]
fn dump_of_written_files_matches_tracecmd() {
    let dir = tempfile::tempdir().unwrap();
    let have_trace_cmd = pins::trace_cmd_installed();
    let mut pins = pins::Pins::open("dat_dump.written");
    let mut failures = Vec::new();
    let all = vec!["--all".to_string()];
    for (version, compression, latency, be) in [
        (7, Compression::Zstd, false, false),
        (7, Compression::None, false, false),
        (6, Compression::None, false, false),
        (7, Compression::Zstd, true, false),
        (7, Compression::Zstd, false, true),
        (6, Compression::None, false, true),
    ] {
        let name = format!(
            "{}{}-{version}-{}.dat",
            if latency { "latency" } else { "rare" },
            if be { "-be" } else { "" },
            compression.name()
        );
        let path = dir.path().join(&name);
        let wo = WriteOptions {
            version,
            compression,
            endian: if be {
                tracectl::endian::Endianness::Big
            } else {
                tracectl::endian::Endianness::Little
            },
            long_size: 8,
            page_size: 4096,
        };
        if latency {
            let text = b"  <idle>-0       0d.h1  1us : irq_enter\n";
            write_latency_dat(&path, &wo, &meta(), &rare_options(be)[..2], "local", text).unwrap();
        } else {
            let pages: Vec<u8> = (0..2 * 4096).map(|i| (i % 251) as u8).collect();
            let buffers = vec![BufferSource {
                name: String::new(),
                clock: "local".into(),
                page_size: 4096,
                cpus: vec![(
                    0,
                    Box::new(std::io::Cursor::new(pages)) as Box<dyn std::io::Read>,
                )],
            }];
            let mut options = vec![NewOption::text(opt::TRACECLOCK, "[local] global")];
            options.extend(rare_options(be));
            write_dat(&path, &wo, &meta(), &options, buffers).unwrap();
        }
        DatFile::open(&path).unwrap();
        if let Some(why) = pins.check(&name, &std::fs::read(&path).unwrap()) {
            failures.push(why);
        }
        let golden = pins::results("dat_dump").join(format!("{name}.all.txt"));
        if have_trace_cmd {
            let theirs = run_dump("trace-cmd", &all, &path);
            assert!(
                theirs.status.success(),
                "trace-cmd dump --all {name}: {}",
                String::from_utf8_lossy(&theirs.stderr)
            );
            if pins::updating() {
                std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
                std::fs::write(&golden, &theirs.stdout).unwrap();
            }
            let want = std::fs::read(&golden).unwrap();
            assert!(
                theirs.stdout == want,
                "trace-cmd dumps {name} differently from {}",
                golden.display()
            );
        }
        let want = std::fs::read(&golden).unwrap();
        let ours = tracectl_dump(&all, &path);
        assert!(
            ours.status.success(),
            "tracectl dump --all {name}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        if ours.stdout != want {
            failures.push(format!("{name}: {}", first_difference(&want, &ours.stdout)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    pins.finish("tests/it/dat_dump.rs: files with rare options and a latency file, and trace-cmd's dump --all of each");
}

#[test]
fn dump_bad_input_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("not-a-trace.dat");
    std::fs::write(&bad, b"hello, not a trace file").unwrap();
    for args in [&["--head-page"][..], &[], &["-v"]] {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let out = tracectl_dump(&args, &bad);
        assert!(!out.status.success(), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not-a-trace.dat"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let level = tracectl_dump(&["--verbose=loud".into()], &bad);
    assert!(!level.status.success());
    assert!(String::from_utf8_lossy(&level.stderr).contains("--verbose level \"loud\""));
}

/// A v7 file cut inside its sections: the dump says where, prints no panic, and `-v`
/// does not call it valid.
#[test]
fn dump_truncated_v7_names_the_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = std::fs::read(data().join("2cpu-noinstance-v7.dat")).unwrap();
    let cut = tmp.path().join("cut.dat");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    for args in [vec!["--all".to_string()], vec!["-v".to_string()]] {
        let out = tracectl_dump(&args, &cut);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cut.dat") && err.contains("offset"), "{err}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("valid"));
    }
}
