//! The report session over trace.dat files, driven as a library: it writes what trace-cmd
//! prints and hands warnings back instead of printing them. The expected texts are
//! trace-cmd's own (`tests/data/tracecmd/results/`).

use std::path::{Path, PathBuf};

use tracectl::session::report::{ReportThreads, WholeLines};
use tracectl::session::report_files::{
    report_files, FilesError, FilesMode, FilesOptions, FilesStyle, Note,
};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd")
}

fn options(mode: FilesMode, filters: &[&str]) -> FilesOptions {
    FilesOptions {
        files: vec![data().join("2cpu-v7.dat")],
        mode,
        cpu_lists: Vec::new(),
        filters: filters.iter().map(|f| f.to_string()).collect(),
        first_negated: filters.len(),
        ts_offsets: Some(vec![0]),
        json: false,
        style: FilesStyle::TraceCmd,
        nsecs: false,
        latency: false,
        raw: false,
        quiet: false,
        verbose: false,
        more: Default::default(),
        wakeup: false,
        profile: false,
        profile_global: false,
        profile_hooks: Vec::new(),
        profile_by_comm: false,
    }
}

fn run(opts: &FilesOptions) -> (Result<(), FilesError>, Vec<u8>, Vec<Note>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let res = report_files(opts, &mut out, &mut |n| notes.push(n)).map(|_| ());
    (res, out, notes)
}

fn golden(mode: &str) -> String {
    std::fs::read_to_string(data().join("results/2cpu-v7").join(mode)).unwrap()
}

#[test]
fn session_report_is_trace_cmds_text_with_no_notes() {
    let (res, out, notes) = run(&options(FilesMode::Report, &[]));
    res.unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert!(String::from_utf8(out).unwrap() == golden("plain.txt"));
}

#[test]
fn session_report_is_trace_cmds_text_on_one_thread_and_with_and_without_whole_lines_on_the_second()
{
    // On one thread, or with the report's second thread writing infos (and whole lines
    // too for small files): each way the text is trace-cmd's, with the sched events'
    // comm changes, -t, -l and -R.
    let ways = [
        (ReportThreads::Never, WholeLines::Never),
        (ReportThreads::Always, WholeLines::Always),
        (ReportThreads::Always, WholeLines::Never),
    ];
    for file in ["2cpu-v7", "4cpu-v7", "function-v7"] {
        for mode in ["plain", "t", "l", "R"] {
            for (threads, whole) in ways {
                let mut opts = options(FilesMode::Report, &[]);
                opts.files = vec![data().join(format!("{file}.dat"))];
                opts.nsecs = mode == "t";
                opts.latency = mode == "l";
                opts.raw = mode == "R";
                opts.more.whole_lines = whole;
                opts.more.threads = threads;
                let (res, out, _) = run(&opts);
                res.unwrap();
                let want = std::fs::read_to_string(
                    data()
                        .join("results")
                        .join(file)
                        .join(format!("{mode}.txt")),
                )
                .unwrap();
                assert!(
                    String::from_utf8(out).unwrap() == want,
                    "{file} {mode} with {threads:?} threads, {whole:?} whole lines: not trace-cmd's text"
                );
            }
        }
    }
}

#[test]
fn session_cpu_list_names_the_file_as_given() {
    let opts = options(
        FilesMode::CpuList {
            first: false,
            last: false,
        },
        &[],
    );
    let (res, out, notes) = run(&opts);
    res.unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    let want = golden("cpus.txt").replace("2cpu-v7.dat", &opts.files[0].display().to_string());
    assert_eq!(String::from_utf8(out).unwrap(), want);
}

#[test]
fn session_hands_back_a_filter_on_no_field_as_a_warning() {
    let (res, _, notes) = run(&options(FilesMode::Report, &["sched_switch:nosuch==1"]));
    res.unwrap();
    assert_eq!(
        notes,
        vec![Note::Warning(
            "filter 'sched_switch:nosuch==1': no event matched by 'sched_switch' has a field \
             named 'nosuch'; its comparisons are false"
                .into()
        )]
    );
}

#[test]
fn session_refuses_a_filter_on_no_event_naming_the_file() {
    let opts = options(FilesMode::Report, &["nosuch:event"]);
    let (res, out, _) = run(&opts);
    match res {
        Err(FilesError::Filter {
            file: Some(f),
            source,
        }) => {
            assert_eq!(f, opts.files[0]);
            assert!(source.to_string().contains("'nosuch'"), "{source}");
        }
        other => panic!("expected a filter error, got {other:?}"),
    }
    assert!(out.is_empty());
}

/// The buffers of one file share one comm table, as trace-cmd's share one tep handle: a
/// comm a sched plugin prints in the top buffer (`sh`) does not replace the file's
/// (`sleep`) once the instance buffer's first line has sorted the table
/// (`tests/data/tracecmd/comm-shared/README.md`).
#[test]
fn session_buffers_of_one_file_share_the_comm_table() {
    let dir = data().join("comm-shared");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("instance-comm.dat");
    let packed = std::fs::read(dir.join("instance-comm.dat.zst")).unwrap();
    std::fs::write(&file, zstd::decode_all(&packed[..]).unwrap()).unwrap();
    for (cpus, want) in [(None, "report.txt"), (Some("0"), "report-cpu0.txt")] {
        let mut opts = options(FilesMode::Report, &[]);
        opts.files = vec![file.clone()];
        opts.cpu_lists = cpus.into_iter().map(String::from).collect();
        let (res, out, _) = run(&opts);
        res.unwrap();
        let want = std::fs::read_to_string(dir.join(want)).unwrap();
        let got = String::from_utf8(out).unwrap();
        let first = want.lines().zip(got.lines()).find(|(w, g)| w != g);
        assert!(got == want, "{cpus:?}: first difference {first:?}");
    }
}
