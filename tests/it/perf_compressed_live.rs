//! `tracectl perf script` and `perf report` on files perf 6.1 records with `-z`
//! (`PERF_RECORD_COMPRESSED`: the records of each ring-buffer read as one zstd stream),
//! against `perf script` and `perf report --stdio` on the same file: samples with call
//! chains of tracepoints and a software event, the side-band records, and the header
//! (whose data section is the compressed one). Skips (with the reason) without root or
//! without perf.

use std::path::Path;

use crate::support::perf::{assert_same_lines, run, skip_reason};

fn same(d: &Path, file: &str, tool: &str, args: &[&str]) {
    let mut perf_args = vec![tool, "-i", file];
    if tool == "report" {
        perf_args.push("--stdio");
    }
    perf_args.extend_from_slice(args);
    let perf = run("perf", &perf_args, d);
    let ours_args = [&["perf", tool, "-i", file][..], args].concat();
    let ours = run(env!("CARGO_BIN_EXE_tracectl"), &ours_args, d);
    assert_same_lines(&ours, &perf, &format!("perf {tool} -i {file} {args:?}"));
}

#[test]
fn perf_compressed_live_records_of_perf_record_z_match_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let work = "ls -R /usr/lib >/dev/null; ls -R /usr/share/doc >/dev/null";
    for (file, level) in [("z1.data", "-z"), ("z9.data", "--compression-level=9")] {
        let events = ["-e", "sched:sched_switch,sched:sched_process_exec"];
        let rec = [&["record", "-q", "-o", file, level][..], &events];
        let rest = [
            "-e",
            "cpu-clock",
            "-F",
            "4999",
            "-g",
            "--",
            "sh",
            "-c",
            work,
        ];
        run("perf", &[&rec.concat()[..], &rest].concat(), d);
        // The case itself: perf wrote compressed records.
        let header = run("perf", &["script", "-i", file, "--header-only"], d);
        assert!(
            header.lines().any(|l| l.starts_with("# compressed : Zstd")),
            "{file}: perf's header says the data is compressed:\n{header}"
        );
        same(d, file, "script", &[]);
        same(
            d,
            file,
            "script",
            &["--show-task-events", "--show-mmap-events"],
        );
        same(
            d,
            file,
            "script",
            &["--show-round-events", "-F", "comm,tid,time,event"],
        );
        same(d, file, "script", &["--header"]);
        same(d, file, "report", &[]);
        same(
            d,
            file,
            "report",
            &["--no-children", "--sort", "comm,dso,sym"],
        );
        // The COMPRESSED records counted with the records they hold.
        let stats = run("perf", &["report", "-i", file, "--stats"], d);
        assert!(stats.contains("COMPRESSED events:"), "{file}:\n{stats}");
        same(d, file, "report", &["--stats"]);
        same(d, file, "report", &["--mmaps"]);
    }
}
