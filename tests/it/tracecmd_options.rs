//! `tracectl report` with more of trace-cmd report's options (`-N`, `-L`, `-n`, `-r`,
//! `-I`, `-S`, `--ts-diff`, `--ts2secs`, `--raw-ts`, `--align-ts`, `--nodate`,
//! `--ts-check`, `-e`, `-p`, `-P`, `-f`, `--uname`, `--version`, `--check-events`,
//! `--events`, `--event`, `-T`, `-H`) against `trace-cmd report` on the recordings of
//! `tests/data/tracecmd`, byte for byte, for every line of `options.tsv`. The expected
//! texts are trace-cmd's (`make-options.sh`); neither root, tracefs nor trace-cmd is
//! needed. Also the options refused, and why.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::pins::pin_line;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd")
}

/// The directory holding STEM.dat: the data directory, or `tmp` with the v6 recording
/// unpacked from its `.zst`.
fn dir_of(stem: &str, tmp: &Path) -> PathBuf {
    if data().join(format!("{stem}.dat")).exists() {
        return data();
    }
    let packed = std::fs::read(data().join(format!("{stem}.dat.zst"))).unwrap();
    let out = tmp.join(format!("{stem}.dat"));
    if !out.exists() {
        std::fs::write(&out, zstd::decode_all(&packed[..]).unwrap()).unwrap();
    }
    tmp.to_path_buf()
}

/// `(stem, mode, report arguments)` of options.tsv.
fn options() -> Vec<(String, String, Vec<String>)> {
    std::fs::read_to_string(data().join("options.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.split('\t').map(str::to_string);
            (f.next().unwrap(), f.next().unwrap(), f.collect())
        })
        .collect()
}

fn tracectl(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir)
        .arg("report")
        .args(args)
        .output()
        .unwrap()
}

fn report(dir: &Path, stem: &str, args: &[String]) -> Output {
    let file = format!("{stem}.dat");
    let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
    a.extend(["-i", &file]);
    tracectl(dir, &a)
}

fn first_difference(want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let (w, g): (Vec<&str>, Vec<&str>) = (w.lines().collect(), g.lines().collect());
    let i = (0..w.len().max(g.len()))
        .find(|&i| w.get(i) != g.get(i))
        .unwrap_or(0);
    format!(
        "{} vs {} lines; first difference at line {}:\n  trace-cmd: {}\n  tracectl:  {}",
        w.len(),
        g.len(),
        i + 1,
        w.get(i).unwrap_or(&"<none>"),
        g.get(i).unwrap_or(&"<none>")
    )
}

#[test]
fn report_options_match_trace_cmd_goldens_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = options();
    assert!(lines.len() >= 30, "only {} options.tsv lines", lines.len());
    let mut failures = Vec::new();
    for (stem, mode, args) in &lines {
        let dir = dir_of(stem, tmp.path());
        let results = data().join("results").join(stem);
        let out = report(&dir, stem, args);
        let shown = format!("{stem} `report {}`", args.join(" "));
        if !out.status.success() {
            failures.push(format!(
                "{shown} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let txt = results.join(format!("{mode}.txt"));
        let digest = results.join(format!("{mode}.digest"));
        if txt.exists() {
            let want = std::fs::read(&txt).unwrap();
            if want != out.stdout {
                failures.push(format!("{shown}: {}", first_difference(&want, &out.stdout)));
            }
        } else {
            let want = std::fs::read_to_string(&digest)
                .unwrap_or_else(|_| panic!("no {} nor {}", txt.display(), digest.display()));
            let got = pin_line(mode, &out.stdout);
            if want.trim_end() != got {
                failures.push(format!(
                    "{shown}: trace-cmd's output was `{}`, tracectl's is `{got}` (name, size, FNV-1a)",
                    want.trim_end()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The goldens show what each option is about, so that a golden equal to the plain
/// report (an option that did nothing) would not pass unnoticed.
#[test]
fn report_option_goldens_differ_from_the_plain_report() {
    let r = |stem: &str, mode: &str| {
        std::fs::read_to_string(
            data()
                .join("results")
                .join(stem)
                .join(format!("{mode}.txt")),
        )
        .unwrap()
    };
    let ni = "2cpu-noinstance-v7";
    let cpu1 = r(ni, "cpu1");
    // -I and -S leave out interrupt-context records of CPU 1 (`-l` shows the flags).
    for mode in ["I", "S"] {
        let got = r(ni, mode);
        assert!(
            got.lines().count() < cpu1.lines().count(),
            "{mode}: nothing left out"
        );
    }
    let isl = r(ni, "I-S-l");
    // `%8.8s-%-5d %3d` then the flags: irqs-off, need-resched, hard/soft irq, ...
    let l = r(ni, "l");
    let irq_context = |l: &str| matches!(l.as_bytes().get(20), Some(b'h' | b's' | b'H'));
    assert!(
        l.lines().any(irq_context),
        "no irq-context record in the recording"
    );
    assert!(
        !isl.lines().any(irq_context),
        "-I -S kept an irq-context record"
    );
    let plain = r(ni, "plain");
    let n = r(ni, "N");
    assert_eq!(n.lines().count(), plain.lines().count());
    assert_ne!(n, plain, "-N changed nothing");
    assert!(
        !plain.contains("prev_comm=") && n.contains("prev_comm="),
        "-N: sched_switch's plugin"
    );
    assert!(r(ni, "ts-diff").contains(": (+"));
    assert!(r(ni, "raw-ts").lines().nth(1).unwrap().contains("]6"));
    assert!(r(ni, "align-ts").contains("     0.00"));
    assert!(r(ni, "P").lines().count() > 50);
    assert_eq!(
        r(ni, "e"),
        "file is little endian and host is little endian\n"
    );
    assert!(r(ni, "uname").lines().nth(1).unwrap().starts_with("Linux "));
    let formats = r("2cpu-noinstance-v6", "formats");
    assert!(formats.starts_with("\nsystem: sched\nname: "));
    // -T: libtraceevent's collapsed filters, constants folded, per event.
    let t = r(ni, "T-collapse");
    for want in [
        " 'sched_switch: FALSE'",
        " 'sched_waking: common_pid == 2'",
        " 'sched_switch: prev_pid == 1'",
    ] {
        assert!(t.lines().any(|l| l == want), "-T: no {want:?} in\n{t}");
    }
    let switch = r("2cpu-noinstance-v6", "formats-sched-switch");
    assert_eq!(switch.matches("name: ").count(), 1);
}

/// trace-cmd 3.1.6 prints the event formats of a version 6 file only (a version 7
/// file's are read before, and `--events` prints nothing): tracectl prints them for
/// both, the same text.
#[test]
fn report_events_prints_the_formats_of_v7_files_too() {
    let tmp = tempfile::tempdir().unwrap();
    let want = std::fs::read(data().join("results/2cpu-noinstance-v6/formats.txt")).unwrap();
    let v7 = report(&data(), "2cpu-noinstance-v7", &["--events".to_string()]);
    assert!(v7.status.success());
    assert_eq!(
        String::from_utf8_lossy(&v7.stdout),
        String::from_utf8_lossy(&want)
    );
    let v6 = report(
        &dir_of("2cpu-noinstance-v6", tmp.path()),
        "2cpu-noinstance-v6",
        &["--events".to_string()],
    );
    assert_eq!(v6.stdout, want);
}

/// trace-cmd ignores a `-O` option no plugin knows; tracectl refuses it, naming the
/// options it knows (the ones `tracectl list -O` lists), and prints nothing.
#[test]
fn report_refuses_unknown_plugin_options_and_lists_the_known_ones() {
    let dir = data();
    for bad in [
        "fgraph:bogus",
        "bogus",
        "function:indent",
        "fgraph:depth=maybe",
    ] {
        let out = report(
            &dir,
            "2cpu-noinstance-v7",
            &["-O".to_string(), bad.to_string()],
        );
        assert!(!out.status.success(), "-O {bad} accepted");
        assert!(out.stdout.is_empty(), "-O {bad}: output before the error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(bad)
                && err.contains(
                    "ftrace:parent, ftrace:indent, ftrace:offset, fgraph:tailprint, fgraph:depth"
                ),
            "-O {bad}: {err}"
        );
    }
    // Every option `list -O` lists is taken, with or without its plugin and value.
    let list = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["list", "-O"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    let mut plugin = "";
    let mut seen = 0;
    for line in text.lines() {
        if let Some(p) = line.trim().strip_prefix("plugin:") {
            plugin = p.trim();
        } else if let Some(o) = line.trim().strip_prefix("option:") {
            let o = o.trim();
            for given in [format!("{plugin}:{o}"), o.to_string(), format!("{o}=0")] {
                let out = report(
                    &dir,
                    "2cpu-noinstance-v7",
                    &["-O".to_string(), given.clone(), "-e".to_string()],
                );
                assert!(out.status.success(), "-O {given} refused");
            }
            seen += 1;
        }
    }
    assert!(seen >= 2, "list -O listed {seen} options:\n{text}");
}

/// The options that cannot apply say why, and the text-only options are refused with
/// `--json` rather than ignored.
#[test]
fn report_refuses_options_it_cannot_apply() {
    let dir = data();
    let run = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["-i", "2cpu-noinstance-v7.dat"]);
        tracectl(&dir, &a)
    };
    for (args, says) in [
        (vec!["-V"], "libtracecmd"),
        (vec!["--verbose=info"], "libtracecmd"),
        (vec!["--json", "-I"], "-I applies to trace-cmd's text only"),
        (vec!["--json", "--ts-diff"], "--ts-diff"),
        (vec!["-n", "sched\\("], "-n"),
        (vec!["--event", ":"], "--event"),
    ] {
        let out = run(&args);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(out.stdout.is_empty(), "{args:?}: output before the error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // -T without -F does nothing, as in trace-cmd.
    let plain = run(&["-T", "--cpu", "1"]);
    assert!(plain.status.success());
    assert_eq!(
        plain.stdout,
        std::fs::read(data().join("results/2cpu-noinstance-v7/cpu1.txt")).unwrap()
    );
}

/// `--uname` and `--version` of several files: each file's lines after its name, as
/// trace-cmd prints them.
#[test]
fn report_uname_of_two_files_names_each() {
    let out = tracectl(
        &data(),
        &[
            "--uname",
            "-i",
            "2cpu-noinstance-v7.dat",
            "-i",
            "4cpu-v7.dat",
        ],
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert_eq!(lines[0], "2cpu-noinstance-v7.dat: cpus=2");
    assert_eq!(lines[3], "           4cpu-v7.dat: cpus=4");
    assert!(lines[1].starts_with("Linux ") && lines[4].starts_with("Linux "));
}

/// `--nodate`: a recording rewritten with a DATE option (`record --date`: wall-clock
/// minus trace-clock time) prints wall-clock seconds, and `--nodate` the trace clock's,
/// as trace-cmd prints them for that very file (pinned in `results/report_date*.written`).
#[test]
fn report_nodate_ignores_the_date_offset_as_trace_cmd_does() {
    use tracectl::dat::{buffers_of, write_dat, DatFile, Metadata, NewOption, WriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("date.dat");
    let d = DatFile::open(data().join("2cpu-noinstance-v7.dat")).unwrap();
    let mut opts: Vec<NewOption> = d.options().all.iter().map(NewOption::from).collect();
    opts.push(NewOption::date(1_764_100_000_123_456));
    let wo = WriteOptions {
        version: 7,
        compression: tracectl::dat::Compression::Zstd,
        endian: d.endian(),
        long_size: d.header().file_long_size,
        page_size: d.header().page_size,
    };
    write_dat(
        &f,
        &wo,
        &Metadata::from_dat(&d).unwrap(),
        &opts,
        buffers_of(&d).unwrap(),
    )
    .unwrap();
    let mut texts = Vec::new();
    for (args, golden, list) in [
        (
            vec!["--cpu", "1"],
            "report_date/date.txt",
            "report_date.written",
        ),
        (
            vec!["--nodate", "--cpu", "1"],
            "report_date/nodate.txt",
            "report_nodate.written",
        ),
    ] {
        let want = crate::support::pins::trace_cmd_report(
            &f,
            &args,
            golden,
            list,
            "The file tests/it/tracecmd_options.rs writes (2cpu-noinstance-v7.dat with a DATE \
             option); results/report_date/ holds trace-cmd's report of it, with and without \
             --nodate.",
        );
        let mut a = args.clone();
        a.extend(["-i", "date.dat"]);
        let out = tracectl(dir.path(), &a);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{args:?}");
        texts.push(want);
    }
    assert_ne!(texts[0], texts[1], "the DATE option changed nothing");
    let cpu1 = std::fs::read_to_string(data().join("results/2cpu-noinstance-v7/cpu1.txt")).unwrap();
    assert_eq!(texts[1], cpu1, "--nodate is not the plain report");
}

/// `--check-events`: silent; exit status 22 (EINVAL) when a stored format's name or ID
/// cannot be read, and 0 otherwise, even when a format's fields do not parse (trace-cmd
/// 3.1.6 keeps such an event, it prints `[FAILED TO PARSE]`), as trace-cmd answers for
/// the same files: a recording, and the recording rewritten with `sched_wakeup`'s
/// `format:` line or its `ID:` line left out (pinned in
/// `results/report_check_events.written`).
#[test]
fn report_check_events_exit_status_is_trace_cmds() {
    use tracectl::dat::{buffers_of, write_dat, DatFile, Metadata, NewOption, WriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let d = DatFile::open(data().join("2cpu-noinstance-v7.dat")).unwrap();
    let opts: Vec<NewOption> = d.options().all.iter().map(NewOption::from).collect();
    let wo = WriteOptions {
        version: 7,
        compression: tracectl::dat::Compression::Zstd,
        endian: d.endian(),
        long_size: d.header().file_long_size,
        page_size: d.header().page_size,
    };
    let mut pins = crate::support::pins::Pins::open("report_check_events.written");
    let mut cases = vec![(data(), "2cpu-noinstance-v7.dat".to_string(), 0)];
    for (name, cut, want) in [
        ("noformat.dat", "format:\n", 0),
        ("noid.dat", "ID: 374\n", 22),
    ] {
        let mut meta = Metadata::from_dat(&d).unwrap();
        let mut broken = 0;
        for (_, text) in meta.event_formats.iter_mut() {
            if text.starts_with("name: sched_wakeup\n") && text.contains(cut) {
                *text = text.replacen(cut, "", 1);
                broken += 1;
            }
        }
        assert_eq!(broken, 1, "{name}");
        let f = dir.path().join(name);
        write_dat(&f, &wo, &meta, &opts, buffers_of(&d).unwrap()).unwrap();
        if let Some(why) = pins.check(name, &std::fs::read(&f).unwrap()) {
            panic!("{why}");
        }
        cases.push((dir.path().to_path_buf(), name.to_string(), want));
    }
    for (dir, file, want) in &cases {
        if crate::support::pins::trace_cmd_installed() {
            let o = Command::new("trace-cmd")
                .current_dir(dir)
                .args(["report", "--check-events", "-i", file])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(*want), "trace-cmd on {file}");
        }
        let out = tracectl(dir, &["--check-events", "-i", file]);
        assert_eq!(out.status.code(), Some(*want), "{file}");
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "{file}: not silent"
        );
        // With --verbose the format that cannot be read is named.
        let out = tracectl(dir, &["--check-events", "--verbose", "-i", file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.contains("sched_wakeup"), *want != 0, "{file}: {err}");
    }
    pins.finish(
        "The files tests/it/tracecmd_options.rs writes (2cpu-noinstance-v7.dat with \
         sched_wakeup's `format:` or `ID:` line left out); trace-cmd report --check-events \
         exits 0 and 22 on them.",
    );
}

/// `-H`: trace-cmd 3.1.6 crashes on a hook it cannot split (after a warning shown only
/// with --verbose); tracectl refuses it before printing anything, naming the hook and
/// the part missing; under --profile, a field the event lacks is an error.
#[test]
fn hook_errors() {
    let d = data();
    for (hook, part) in [
        ("bad", "no start match field"),
        ("a,b/c", "no end match field"),
    ] {
        let out = tracectl(&d, &["-H", hook, "-i", "2cpu-noinstance-v7.dat"]);
        assert!(!out.status.success(), "{hook}");
        assert!(out.stdout.is_empty(), "{hook}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("'{hook}'")) && err.contains(part),
            "{hook}: {err}"
        );
    }
    // With --profile the fields are looked up: trace-cmd dies naming the event and field.
    let out = tracectl(
        &d,
        &[
            "-H",
            "sched_waking,nofield/sched_switch,next_pid",
            "--profile",
            "-i",
            "2cpu-noinstance-v7.dat",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sched_waking") && err.contains("no field nofield"),
        "{err}"
    );
    // The hook lines are trace-cmd's text: JSON lines would be broken by them.
    let out = tracectl(
        &d,
        &["-H", "a,b/c,d", "--json", "-i", "2cpu-noinstance-v7.dat"],
    );
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--json"));
    // An unknown flag is a warning; the report goes on.
    let out = tracectl(
        &d,
        &["-H", "a,b/c,d,Px", "--stat", "-i", "2cpu-noinstance-v7.dat"],
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown flag x"));
    assert!(String::from_utf8_lossy(&out.stdout)
        .starts_with("start (null):a:b ((null)) end (null):c:d (Px)\n"));
}
