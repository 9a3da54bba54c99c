//! Bad input of every kind through the command line's own entry point, in this process:
//! each fuzz target's corpus (`fuzz/corpus`) and mutants made from it and from recorded
//! trace.dat files (truncations, bit flips, length fields made huge, deep nesting). No
//! run may panic, abort, hang or use unbounded memory, and a trace.dat that cannot be
//! read gives an error naming the file and the offset.
//!
//! The messages of individual failures are checked on the real binary (its stderr).
//!
//! One test function runs every check in turn: the command line writes to the process's
//! stdout, captured here by redirecting it, and the test harness would otherwise print
//! other tests' results into the capture.

#[path = "../src/cli/mod.rs"]
#[allow(dead_code, unused_imports)]
mod cli;

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

// ---- memory accounting ---------------------------------------------------------------

/// The global allocator, counting the bytes in use and the most at any time.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// No single allocation of a run may be this large: a length taken from the input
/// unchecked shows up here first.
const MAX_ALLOCATION: usize = 1 << 30;
/// Most memory one command may hold beyond what was in use when it started.
const MAX_GROWTH: usize = 512 << 20;

fn note_alloc(size: usize) {
    let now = IN_USE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed to the system allocator unchanged; only counters are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOCATION {
            return std::ptr::null_mut();
        }
        note_alloc(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOCATION {
            return std::ptr::null_mut();
        }
        note_alloc(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_ALLOCATION {
            return std::ptr::null_mut();
        }
        note_alloc(new_size);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

// ---- running the command line in-process ---------------------------------------------

/// What one command did.
struct Run {
    args: Vec<String>,
    /// The exit code, or the error the command line would print.
    result: Result<i32, String>,
    stdout: Vec<u8>,
    /// Most bytes held at once beyond those in use at the start.
    growth: usize,
}

/// Commands run one at a time: stdout and the memory counters are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

/// Run `tracectl ARGS` in this process, with stdout captured.
fn tracectl(args: &[&str]) -> Run {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut capture = tempfile::tempfile().unwrap();
    std::io::stdout().flush().unwrap();
    // SAFETY: dup/dup2 on valid descriptors; fd 1 is restored before returning.
    let saved = unsafe { libc::dup(1) };
    assert!(saved >= 0);
    unsafe { libc::dup2(capture.as_raw_fd(), 1) };
    let start = IN_USE.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    let argv: Vec<String> = std::iter::once("tracectl")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cli::run_args(argv.iter().cloned())
    }));
    let growth = PEAK.load(Ordering::Relaxed).saturating_sub(start);
    std::io::stdout().flush().unwrap();
    unsafe {
        libc::dup2(saved, 1);
        libc::close(saved);
    }
    let mut stdout = Vec::new();
    capture.rewind().unwrap();
    capture.read_to_end(&mut stdout).unwrap();
    let result = match outcome {
        Ok(Ok(code)) => Ok(code),
        Ok(Err(e)) => Err(format!("{e:#}")),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("tracectl {args:?} panicked: {what}");
        }
    };
    let run = Run {
        args: args.iter().map(|s| s.to_string()).collect(),
        result,
        stdout,
        growth,
    };
    assert!(
        run.growth <= MAX_GROWTH,
        "tracectl {:?} held {} MiB",
        run.args,
        run.growth >> 20
    );
    run
}

/// The real binary, for what it prints on stderr.
fn binary(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// ---- inputs --------------------------------------------------------------------------

const TREE: &str = "tracefs-fixtures/linux-6.18-sched-irq";

const KALLSYMS: &str = "ffffffff81000000 T _stext\n\
ffffffff81001000 T do_one_initcall\n\
ffffffff81002000 t schedule\n\
ffffffffc0000000 t modfn\t[kvm]\n";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A private copy of the recorded tree, in a directory that also holds scratch files.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let s = Scratch {
            dir: tempfile::tempdir().unwrap(),
        };
        copy_tree(&repo().join(TREE), &s.tree());
        // A few symbols instead of the host's: the trace.dat files stay small, and the
        // same on every machine.
        fs::write(s.tree().join("host/kallsyms"), KALLSYMS).unwrap();
        s
    }
    fn tree(&self) -> PathBuf {
        self.dir.path().join("tracing")
    }
    fn tree_arg(&self) -> String {
        self.tree().display().to_string()
    }
    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Trace.dat files written from the tree: v7 zstd, v7 uncompressed and v6.
struct Dats {
    _scratch: Scratch,
    files: Vec<(String, Vec<u8>)>,
}

fn dats() -> &'static Dats {
    static DATS: OnceLock<Dats> = OnceLock::new();
    DATS.get_or_init(|| {
        let s = Scratch::new();
        let tree = s.tree_arg();
        let mut files = Vec::new();
        for (name, extra) in [
            ("v7.dat", &[][..]),
            ("v7none.dat", &["--compression", "none"][..]),
            ("v6.dat", &["--file-version", "6"][..]),
        ] {
            let out = s.file(name);
            let mut args = vec![
                "--tracefs",
                &tree,
                "extract",
                "-q",
                "-o",
                out.to_str().unwrap(),
            ];
            args.extend(extra);
            let r = tracectl(&args);
            assert_eq!(r.result, Ok(0), "{args:?}");
            files.push((name.to_string(), fs::read(&out).unwrap()));
        }
        Dats { _scratch: s, files }
    })
}

fn dat(name: &str) -> &'static [u8] {
    &dats().files.iter().find(|(n, _)| n == name).unwrap().1
}

/// `extract` of the tree at `tree` into `out`.
fn extract(tree: &str, out: &Path) -> Run {
    tracectl(&[
        "--tracefs",
        tree,
        "extract",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ])
}

/// A deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Mutants of a trace.dat: truncations, bit flips and length fields made huge.
fn dat_mutants(orig: &[u8], seed: u64) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut cuts: Vec<usize> = (0..1500).step_by(97).collect();
    cuts.extend((1..12).map(|i| orig.len() * i / 12));
    for cut in cuts {
        out.push((format!("cut{cut}"), orig[..cut].to_vec()));
    }
    let mut rng = Rng(seed);
    for i in 0..24 {
        let mut v = orig.to_vec();
        let pos = if i % 2 == 0 {
            rng.below(8192.min(v.len()))
        } else {
            rng.below(v.len())
        };
        v[pos] ^= 1 << rng.below(8);
        out.push((format!("flip{pos}"), v));
    }
    // Length fields: the sizes after the header texts, then words in the metadata.
    for marker in [&b"header_page\0"[..], b"header_event\0"] {
        if let Some(at) = find(orig, marker) {
            for huge in [u64::MAX, 1 << 40, orig.len() as u64] {
                let mut v = orig.to_vec();
                let p = at + marker.len();
                v[p..p + 8].copy_from_slice(&huge.to_le_bytes());
                out.push((format!("len{p}-{huge}"), v));
            }
        }
    }
    for _ in 0..12 {
        let mut v = orig.to_vec();
        let p = rng.below(4096.min(v.len() - 8));
        let word: &[u8] = match rng.below(3) {
            0 => &[0xff, 0xff, 0xff, 0x7f],
            1 => &[0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f],
            _ => &[0, 0, 0, 0x40],
        };
        v[p..p + word.len()].copy_from_slice(word);
        out.push((format!("word{p}"), v));
    }
    out
}

/// The report modes, one per mutant in turn.
const MODES: &[&[&str]] = &[
    &[],
    &["--json"],
    &["--style", "kernel"],
    &["--first-event", "--last-event"],
    &["--cpus"],
    &["--stat"],
    &["-E"],
    &["--cpu", "0-4294967295"],
    &["-R"],
];

/// `report -i FILE MODE`: no panic (checked by [`tracectl`]); a failure names the file
/// and the offset.
fn report(file: &Path, mode: &[&str]) -> Run {
    let mut args = vec!["report", "-i", file.to_str().unwrap()];
    args.extend(mode);
    let r = tracectl(&args);
    if let Err(e) = &r.result {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(
            e.contains(name) && e.contains("offset"),
            "the error names the file and the offset: {e} ({args:?})"
        );
    }
    r
}

// ---- trace.dat files -------------------------------------------------------------------

fn mutated_trace_dat_files_give_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    let mut errors = 0;
    for (name, seed) in [("v7.dat", 1), ("v7none.dat", 2), ("v6.dat", 3)] {
        for (what, bytes) in dat_mutants(dat(name), seed) {
            let f = dir.path().join(format!("{name}-{what}.dat"));
            fs::write(&f, &bytes).unwrap();
            let r = report(&f, MODES[n % MODES.len()]);
            errors += r.result.is_err() as usize;
            n += 1;
            fs::remove_file(&f).unwrap();
        }
    }
    assert!(errors > n / 4, "most mutants are refused: {errors} of {n}");
}

/// Buffer options renamed: the file then holds no trace data at all.
fn without_buffers(orig: &[u8]) -> Vec<u8> {
    let mut v = orig.to_vec();
    let mut changed = 0;
    // A BUFFER option: id 3, a size, the data offset, an empty name, a clock name.
    for i in 0..v.len().saturating_sub(24) {
        if v[i..i + 2] == [3, 0] {
            let size = u32::from_le_bytes(v[i + 2..i + 6].try_into().unwrap()) as usize;
            if (20..200).contains(&size) && v[i + 14] == 0 && v[i + 15..i + 20] == *b"local" {
                v[i] = 99;
                changed += 1;
            }
        }
    }
    assert_eq!(changed, 1, "one BUFFER option");
    v
}

fn r_no_flyrecord_buffer_is_an_error_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nobuf.dat");
    fs::write(&f, without_buffers(dat("v7none.dat"))).unwrap();
    for mode in MODES {
        let r = report(&f, mode);
        if !matches!(mode, [] | ["--stat"] | ["-E"]) {
            let e = r.result.expect_err("no data is an error");
            assert!(e.contains("holds no trace data"), "{e}");
        }
    }
}

fn r_non_ascii_kallsyms_address_does_not_panic_any_mode() {
    let dir = tempfile::tempdir().unwrap();
    let orig = dat("v6.dat");
    // The first kallsyms line: 16 hex digits, a space, a type letter, a space.
    let at = (0..orig.len() - 20)
        .find(|&i| {
            orig[i] == b'\n'
                && orig[i + 1..i + 17].iter().all(u8::is_ascii_hexdigit)
                && orig[i + 17] == b' '
                && orig[i + 19] == b' '
        })
        .expect("a kallsyms line");
    let mut v = orig.to_vec();
    v[at + 16..at + 18].copy_from_slice("é".as_bytes());
    let f = dir.path().join("kallsyms.dat");
    fs::write(&f, &v).unwrap();
    for mode in MODES {
        assert_eq!(report(&f, mode).result, Ok(0), "{mode:?}");
    }
}

fn r_huge_cpu_list_selects_the_cpus_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    fs::write(&f, dat("v7.dat")).unwrap();
    let all = report(&f, &[]);
    let huge = report(&f, &["--cpu", "0-4294967295"]);
    assert_eq!(huge.result, Ok(0));
    assert_eq!(huge.stdout, all.stdout);
    assert!(huge.growth < 64 << 20, "{} MiB", huge.growth >> 20);
    let none = report(&f, &["--cpu", "7-4294967295"]);
    assert_eq!(String::from_utf8_lossy(&none.stdout), "cpus=2\n");
    let bad = tracectl(&["report", "-i", f.to_str().unwrap(), "--cpu", "3-1"]);
    assert!(bad.result.unwrap_err().contains("bad CPU list"));
}

fn r_dat_error_messages_say_the_one_right_thing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.dat");
    let (code, _, err) = binary(&["report", "-i", missing.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(!err.contains("offset"), "{err}");

    let (code, _, err) = binary(&["report", "-i", "/dev/zero"]);
    assert_eq!(code, 1);
    assert!(err.contains("/dev/zero: not a regular file"), "{err}");
    assert!(!err.contains("interrupted"), "{err}");

    // A length field past the end of the file.
    let mut v = dat("v6.dat").to_vec();
    let p = find(&v, b"header_page\0").unwrap() + 12;
    v[p..p + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let f = dir.path().join("long.dat");
    fs::write(&f, &v).unwrap();
    let (_, _, err) = binary(&["report", "-i", f.to_str().unwrap()]);
    let left = v.len() - p - 8;
    assert!(
        err.contains(&format!(
            "length 1099511627776 exceeds the {left} bytes left: the file is corrupt"
        )),
        "{err}"
    );
}

// ---- fixture trees -------------------------------------------------------------------------

/// The corpus files of one fuzz target.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = repo().join("fuzz/corpus").join(target);
    let mut v: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "{} is empty", dir.display());
    v
}

const SWITCH_FORMAT: &str = "events/sched/sched_switch/format";

/// Format texts: the format and print_fmt corpora, their truncations and deep nesting.
fn format_inputs() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (name, bytes) in corpus("format") {
        for cut in (0..bytes.len()).step_by(bytes.len() / 6 + 1) {
            out.push((format!("{name}-cut{cut}"), bytes[..cut].to_vec()));
        }
        out.push((name, bytes));
    }
    for (name, bytes) in corpus("print_fmt") {
        let text = bytes.split(|&b| b == 0).next().unwrap().to_vec();
        out.push((name, text));
    }
    let switch = fs::read_to_string(repo().join(TREE).join(SWITCH_FORMAT)).unwrap();
    let nested = |what: &str, arg: String| {
        (
            what.to_string(),
            switch.replacen("REC->prev_pid", &arg, 1).into_bytes(),
        )
    };
    out.push(nested(
        "parens-12k",
        format!("{}REC->prev_pid{}", "(".repeat(12_000), ")".repeat(12_000)),
    ));
    out.push(nested(
        "parens-5k",
        format!("{}REC->prev_pid{}", "(".repeat(5_000), ")".repeat(5_000)),
    ));
    out.push(nested("open-1m", "(".repeat(1_000_000)));
    out.push(nested("not-100k", "!".repeat(100_000) + "REC->prev_pid"));
    out.push(nested(
        "sum-100k",
        "REC->prev_pid".to_string() + &" + 1".repeat(100_000),
    ));
    out.push(nested(
        "index-100k",
        "REC->prev_pid".to_string() + &"[0]".repeat(100_000),
    ));
    out
}

fn format_corpus_and_mutants_through_stream_and_check_events() {
    let s = Scratch::new();
    let tree = s.tree_arg();
    let path = s.tree().join(SWITCH_FORMAT);
    for (i, (what, text)) in format_inputs().into_iter().enumerate() {
        fs::write(&path, &text).unwrap();
        let style = if i % 2 == 0 { "kernel" } else { "json" };
        for args in [
            &["--tracefs", &tree, "check-events"][..],
            &["--tracefs", &tree, "stream", "--style", style],
        ] {
            let r = tracectl(args);
            if let Err(e) = &r.result {
                assert!(
                    e.contains("tracing"),
                    "{what}: the error names the tree: {e}"
                );
            }
        }
    }
}

fn r_deep_print_fmt_reads_as_far_as_trace_cmd_in_every_command() {
    let s = Scratch::new();
    let tree = s.tree_arg();
    let path = s.tree().join(SWITCH_FORMAT);
    let plain = tracectl(&["--tracefs", &tree, "stream"]);
    let switch = fs::read_to_string(&path).unwrap();
    let n = 5_000;
    let deep = switch.replacen(
        "REC->prev_pid",
        &format!("{}REC->prev_pid{}", "(".repeat(n), ")".repeat(n)),
        1,
    );
    fs::write(&path, deep).unwrap();
    let r = tracectl(&["--tracefs", &tree, "stream"]);
    assert_eq!(r.stdout, plain.stdout, "5,000 parentheses change nothing");
    let out = s.file("deep.dat");
    assert_eq!(extract(&tree, &out).result, Ok(0));
    for mode in MODES {
        assert_eq!(report(&out, mode).result, Ok(0), "{mode:?}");
    }
}

/// Sub-buffer inputs: the page corpus, and mutants of the tree's own data.
fn page_inputs(orig: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = corpus("page");
    let mut rng = Rng(7);
    for i in 0..16 {
        let mut v = orig.to_vec();
        for _ in 0..=i % 4 {
            let p = rng.below(v.len());
            v[p] ^= 1 << rng.below(8);
        }
        out.push((format!("flip{i}"), v));
    }
    for i in 0..4 {
        let mut v = orig.to_vec();
        // The commit word of a sub-buffer made huge or negative.
        let page = rng.below(v.len() / 4096) * 4096;
        v[page + 8..page + 16].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x80 >> i]);
        out.push((format!("commit{i}"), v));
    }
    out.push(("cut".into(), orig[..orig.len() - 100].to_vec()));
    out.push(("empty".into(), Vec::new()));
    out
}

fn page_corpus_and_mutants_through_stream_extract_and_report() {
    let s = Scratch::new();
    let tree = s.tree_arg();
    let raw = s.tree().join("per_cpu/cpu0/trace_pipe_raw");
    let orig = fs::read(&raw).unwrap();
    let out = s.file("pages.dat");
    for (i, (what, bytes)) in page_inputs(&orig).into_iter().enumerate() {
        fs::write(&raw, &bytes).unwrap();
        let r = tracectl(&["--tracefs", &tree, "stream"]);
        if let Err(e) = &r.result {
            assert!(e.contains("trace_pipe_raw"), "{what}: {e}");
        }
        if extract(&tree, &out).result.is_ok() {
            report(&out, MODES[i % MODES.len()]);
        }
    }
}

fn r_trace_text_of_any_shape_through_show() {
    let s = Scratch::new();
    let tree = s.tree_arg();
    let trace = s.tree().join("trace");
    let normal = fs::read(&trace).unwrap();
    let mut lines: Vec<Vec<u8>> = vec![
        "[".repeat(1 << 20).into_bytes(),
        " [0] 1.0: e ".repeat(15_000).into_bytes(),
        "a-1 (5 [0] 1.0: e ".repeat(10_000).into_bytes(),
        b"  a\xffb-1 [000] ..... 1.000001: tracing_mark_write: hi\xfe there".to_vec(),
        b"  a-1 [000] ..... 99999999999999.000001: e: x=1".to_vec(),
    ];
    lines.extend(normal.split(|&b| b == b'\n').take(50).map(<[u8]>::to_vec));
    let text = lines.join(&b'\n');
    fs::write(&trace, &text).unwrap();
    fs::write(s.tree().join("trace_pipe"), &text).unwrap();
    for args in [
        &["--tracefs", &tree, "show", "--json"][..],
        &["--tracefs", &tree, "show", "-p", "--json"],
        &["--tracefs", &tree, "show", "-p"],
    ] {
        let r = tracectl(args);
        assert_eq!(r.result, Ok(0), "{args:?}");
        let out = String::from_utf8(r.stdout).expect("valid UTF-8 out");
        // The line with invalid UTF-8 is kept, the bytes replaced.
        assert!(out.contains("hi\u{fffd} there"), "{args:?}");
        assert!(out.contains("a\u{fffd}b"), "{args:?}");
        if args.contains(&"--json") {
            for l in out.lines() {
                let v = serde_json::from_str::<serde_json::Value>(l);
                assert!(v.is_ok(), "{args:?}: {v:?} {}", &l[..l.len().min(200)]);
            }
            // A timestamp too large for nanoseconds has none, rather than a wrapped one.
            let huge = out.lines().find(|l| l.contains("99999999999999")).unwrap();
            assert!(!huge.contains("timestamp_ns"), "{huge}");
        }
    }
}

fn r_devices_and_fifos_in_a_tree_are_refused() {
    for file in [
        "per_cpu/cpu0/trace_pipe_raw",
        SWITCH_FORMAT,
        "events/header_page",
        "trace_pipe",
    ] {
        for fifo in [false, true] {
            let s = Scratch::new();
            let tree = s.tree_arg();
            let path = s.tree().join(file);
            let _ = fs::remove_file(&path);
            if fifo {
                nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
            } else {
                std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
            }
            let out = s.file("x.dat");
            let runs: &[&[&str]] = &[
                &["--tracefs", &tree, "stream"],
                &["--tracefs", &tree, "check-events"],
                &[
                    "--tracefs",
                    &tree,
                    "extract",
                    "-q",
                    "-o",
                    out.to_str().unwrap(),
                ],
                &["--tracefs", &tree, "show", "-p"],
            ];
            let mut refused = false;
            for args in runs {
                let (_, _, err) = binary(args);
                refused |= err.contains(&format!("{file}: not a regular file"));
            }
            assert!(refused, "{file} (fifo: {fifo}) is refused by name");
            // A failed extract leaves none of its per-CPU capture files behind.
            let left: Vec<_> = fs::read_dir(s.dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("x.dat.cpu"))
                .collect();
            assert!(left.is_empty(), "{file}: {left:?}");
        }
    }
}

fn r_silent_wrong_results_are_errors_or_warnings() {
    let s = Scratch::new();
    let tree = s.tree_arg();
    // -e naming nothing.
    for spec in ["nosuch:event", "["] {
        let (code, _, err) = binary(&["--tracefs", &tree, "stream", "-e", spec]);
        assert_eq!(code, 1, "{spec}");
        assert!(err.contains(&format!("unknown event {spec:?}")), "{err}");
    }
    let (code, _, err) = binary(&["--tracefs", &tree, "list", "-e", "["]);
    assert_eq!(code, 1);
    assert!(err.contains("unclosed `[`"), "{err}");
    // A field that no event of the filter has: false, as trace-cmd has it, and a warning.
    let f = s.file("t.dat");
    fs::write(&f, dat("v7.dat")).unwrap();
    for mode in [&[][..], &["--json"]] {
        let mut args = vec!["report", "-i", f.to_str().unwrap()];
        args.extend(mode);
        args.extend(["-F", "sched_switch:nosuch==1"]);
        let (code, out, err) = binary(&args);
        assert_eq!(code, 0);
        assert!(!out.contains("sched_switch"), "{mode:?}");
        assert_eq!(
            err.matches("no event matched by 'sched_switch' has a field named 'nosuch'")
                .count(),
            1,
            "{mode:?}: {err}"
        );
    }
    // A format that does not parse: its records are named on stderr.
    let path = s.tree().join(SWITCH_FORMAT);
    let good = fs::read(&path).unwrap();
    fs::write(&path, "garbage\n").unwrap();
    let (code, out, err) = binary(&["--tracefs", &tree, "stream"]);
    assert_eq!(code, 0);
    assert!(out.contains("<unknown event id "));
    assert!(
        err.contains("warning: events/sched/format: no `name:` line"),
        "{err}"
    );
    fs::write(&path, good).unwrap();
    // A sub-buffer size that does not match the data.
    for kb in ["4000000", "8", "3"] {
        fs::write(s.tree().join("buffer_subbuf_size_kb"), kb).unwrap();
        let (code, _, err) = binary(&["--tracefs", &tree, "stream"]);
        assert_eq!(code, 1, "{kb}");
        assert!(
            err.contains("buffer_subbuf_size_kb") && err.contains("sub-buffer"),
            "{err}"
        );
    }
}

fn r_write_and_record_errors_name_what_is_wrong() {
    let s = Scratch::new();
    let tree = s.tree_arg();
    let out = s.file("missing-dir/x.dat");
    let (code, _, err) = binary(&["--tracefs", &tree, "extract", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("the directory") && err.contains("missing-dir"),
        "{err}"
    );
    assert!(!err.contains("trace_pipe_raw"), "{err}");
    let out = s.file("r.dat");
    let (code, _, err) = binary(&[
        "--tracefs",
        &tree,
        "record",
        "-e",
        "nosuch:event",
        "-o",
        out.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(code, 1);
    assert!(!err.contains("instances/"), "{err}");
    assert!(
        err.contains("nosuch:event") || err.contains("tree"),
        "{err}"
    );
}

fn r_report_filters_nest_without_limit_errors_only() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    fs::write(&f, dat("v7.dat")).unwrap();
    let file = f.to_str().unwrap();
    let deep = |s: String| {
        let r = tracectl(&["report", "-i", file, "-F", &s]);
        r.result
    };
    assert_eq!(
        deep(format!(
            "sched_switch:{}prev_pid>=0{}",
            "(".repeat(200),
            ")".repeat(200)
        )),
        Ok(0)
    );
    for filter in [
        format!(
            "sched_switch:{}prev_pid>=0{}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
        format!("sched_switch:{}prev_pid>=0", "!".repeat(100_000)),
        format!(
            "sched_switch:prev_pid>=0{}",
            " && prev_pid>=0".repeat(10_000)
        ),
    ] {
        let e = deep(filter).unwrap_err();
        assert!(e.contains("nests deeper than"), "{e}");
    }
}

#[test]
fn every_input_through_the_command_line() {
    mutated_trace_dat_files_give_errors_not_panics();
    r_no_flyrecord_buffer_is_an_error_in_every_mode();
    r_non_ascii_kallsyms_address_does_not_panic_any_mode();
    r_huge_cpu_list_selects_the_cpus_there_are();
    r_dat_error_messages_say_the_one_right_thing();
    format_corpus_and_mutants_through_stream_and_check_events();
    r_deep_print_fmt_reads_as_far_as_trace_cmd_in_every_command();
    page_corpus_and_mutants_through_stream_extract_and_report();
    r_trace_text_of_any_shape_through_show();
    r_devices_and_fifos_in_a_tree_are_refused();
    r_silent_wrong_results_are_errors_or_warnings();
    r_write_and_record_errors_name_what_is_wrong();
    r_report_filters_nest_without_limit_errors_only();
}
