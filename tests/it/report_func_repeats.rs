//! `tracectl report` of a recording with `ftrace:func_repeats` records
//! (`tests/data/tracecmd/func-repeats/record.dat`: `tracectl record -p function -O
//! func-no-repeats` of `ls` in a qemu guest, `make-recording.sh`). The function plugin
//! prints such a record as the function it repeats, then ` (count: N  last_ts: TIME)`.
//! The expected texts are trace-cmd 3.1.6's reports of the file (`make-results.sh`, one
//! per line of `modes.tsv`). The recordings: Debian's 6.1 kernel (the directory itself)
//! and 6.12 (`debian-6.12/`), made the same way.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The recordings, as directories under func-repeats/.
const RECORDINGS: [&str; 2] = [".", "debian-6.12"];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd/func-repeats")
}

fn golden(mode: &str) -> String {
    golden_of(".", mode)
}

fn golden_of(rec: &str, mode: &str) -> String {
    std::fs::read_to_string(dir().join(rec).join(format!("results/{mode}.txt"))).unwrap()
}

fn report(args: &[&str], file: &str) -> String {
    report_of(".", args, &[file])
}

/// `tracectl report ARGS -i FILE...` in recording `rec`'s directory.
fn report_of(rec: &str, args: &[&str], files: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tracectl"));
    cmd.current_dir(dir().join(rec)).arg("report").args(args);
    for f in files {
        cmd.args(["-i", f]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{rec}: report {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `(mode, report arguments)` of each line of modes.tsv.
fn modes() -> Vec<(String, Vec<String>)> {
    std::fs::read_to_string(dir().join("modes.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.split('\t').map(str::to_string);
            (f.next().unwrap(), f.collect())
        })
        .collect()
}

fn repeats_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains(" func_repeats: "))
        .collect()
}

#[test]
fn func_repeats_reports_match_trace_cmd_byte_for_byte() {
    let modes = modes();
    assert!(modes.len() >= 10, "{} modes", modes.len());
    let mut failures = Vec::new();
    for ((mode, args), rec) in modes
        .iter()
        .flat_map(|m| RECORDINGS.iter().map(move |r| (m, *r)))
    {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let want = golden_of(rec, mode);
        let got = report_of(rec, &args, &["record.dat"]);
        if got != want {
            let first = want
                .lines()
                .zip(got.lines())
                .find(|(w, g)| w != g)
                .map(|(w, g)| format!("trace-cmd: {w:?}\n  tracectl: {g:?}"))
                .unwrap_or_else(|| {
                    format!(
                        "{} lines against {}",
                        want.lines().count(),
                        got.lines().count()
                    )
                });
            failures.push(format!("{rec} {mode} {args:?}:\n  {first}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The line trace-cmd prints: the function indented as a `function` record of the same
/// call would be, then the count and the time of the last repeated call.
#[test]
fn a_repeats_line_is_its_function_line_with_the_count_and_last_time() {
    let plain = golden("plain");
    let lines = repeats_lines(&plain);
    assert_eq!(lines.len(), 3, "{plain}");
    assert!(lines[0].ends_with(
        "    16.169885: func_repeats:                  filldir64 (count: 10  last_ts:    16.159357)"
    ));
    // The same indent as the `function` records of filldir64 just before it.
    let before = plain
        .lines()
        .take_while(|l| !l.contains(" func_repeats: "))
        .last()
        .unwrap();
    assert!(before.ends_with("function:                      filldir64"));
    // `ftrace:parent` adds the parent before the count.
    assert!(repeats_lines(&golden("parent"))[0]
        .ends_with("filldir64 <-- dcache_readdir (count: 10  last_ts:    16.159357)"));
    // Without the plugin (-N, or -n for this event) the print fmt shows the delta itself.
    for mode in ["N", "n"] {
        assert!(repeats_lines(&golden(mode))[0]
            .ends_with("filldir64 <-dcache_readdir\t(repeats:10  delta: -10527616)"));
    }
}

/// last_ts is the record's time less `top_delta_ts << 32 | bottom_delta_ts`, printed as
/// the time column is: nanoseconds with `-t`, the raw count with `--raw-ts`.
#[test]
fn last_ts_is_the_time_less_the_delta_in_the_time_columns_format() {
    let t = golden("t");
    let line = repeats_lines(&t)[0];
    assert!(
        line.contains("    16.169884670: func_repeats:")
            && line.ends_with("(count: 10  last_ts:    16.159357054)"),
        "{line}"
    );
    assert_eq!(16_169_884_670u64 - 10_527_616, 16_159_357_054);
    assert!(repeats_lines(&golden("raw-ts"))[0].ends_with(
        " 16169884670: func_repeats:                  filldir64 (count: 10  last_ts:  16159357054)"
    ));
    // The raw count wins over -t, for the time column and last_ts alike.
    assert_eq!(golden("t-raw-ts"), golden("raw-ts"));
}

/// With the counter clock the time column and last_ts are raw counts (`%12u`).
#[test]
fn a_counter_clocks_last_ts_is_a_raw_count() {
    let want = golden("extract-counter");
    assert!(repeats_lines(&want)[0].ends_with(
        "          21: func_repeats:                  filldir64 (count: 10  last_ts:           20)"
    ));
    assert_eq!(report(&[], "extract-counter.dat"), want);
}

/// trace-cmd sets the plugin's one last_ts format as it opens each file, so the last
/// file's clock decides for every file: a counter clock's deltas shown in seconds when a
/// nanosecond file comes last, and nanoseconds shown as counts the other way round.
#[test]
fn the_last_files_clock_formats_every_files_last_ts() {
    let first = golden("two-files-counter-first");
    assert!(repeats_lines(&first)[0].ends_with(
        "          21: func_repeats:                  filldir64 (count: 10  last_ts:     0.000000)"
    ));
    let last = golden("two-files-counter-last");
    assert!(last.contains(
        "    16.169885: func_repeats:                  filldir64 (count: 10  last_ts:  16159357054)\n"
    ));
    let two = |a: &str, b: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(dir())
            .args(["report", "-i", a, "-i", b])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(two("extract-counter.dat", "record.dat"), first);
    assert_eq!(two("record.dat", "extract-counter.dat"), last);
}

/// The kernel prints the record itself (`trace_func_repeats_print`): `ip <-parent
/// (repeats: N, last_ts: TIME)`, without the event's name, TIME as its time column
/// shows it. `--style kernel` gives the kernel's `trace` text of the buffer the file was
/// extracted from, with the nanosecond clock and with the counter clock.
#[test]
fn the_kernel_style_prints_the_kernels_repeats_text() {
    for (file, text) in [
        ("extract.dat", "extract-trace.txt"),
        ("extract-counter.dat", "extract-counter-trace.txt"),
    ] {
        let kernel = std::fs::read_to_string(dir().join(text)).unwrap();
        let body: String = kernel
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(body.contains(" (repeats: 269, last_ts: "), "{kernel}");
        assert_eq!(report(&["--style", "kernel"], file), body, "{file}");
    }
    let counter = std::fs::read_to_string(dir().join("extract-counter-trace.txt")).unwrap();
    assert!(counter.contains(
        "          21: filldir64 <-dcache_readdir (repeats: 10, last_ts:           20)\n"
    ));
}

/// The 6.12 recording: its files have func_repeats records, and the counter clock, the two
/// files in one report and the kernel's text compare as the 6.1 ones do.
#[test]
fn the_6_12_recording_reports_as_trace_cmd_and_the_kernel_print_it() {
    let rec = "debian-6.12";
    assert!(!repeats_lines(&golden_of(rec, "plain")).is_empty());
    let counter = golden_of(rec, "extract-counter");
    assert!(!repeats_lines(&counter).is_empty(), "{counter}");
    assert_eq!(report_of(rec, &[], &["extract-counter.dat"]), counter);
    assert_eq!(
        report_of(rec, &[], &["extract-counter.dat", "record.dat"]),
        golden_of(rec, "two-files-counter-first")
    );
    assert_eq!(
        report_of(rec, &[], &["record.dat", "extract-counter.dat"]),
        golden_of(rec, "two-files-counter-last")
    );
    for (file, text) in [
        ("extract.dat", "extract-trace.txt"),
        ("extract-counter.dat", "extract-counter-trace.txt"),
    ] {
        let kernel = std::fs::read_to_string(dir().join(rec).join(text)).unwrap();
        let body: String = kernel
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(body.contains(" (repeats: "), "{kernel}");
        assert_eq!(
            report_of(rec, &["--style", "kernel"], &[file]),
            body,
            "{file}"
        );
    }
}
