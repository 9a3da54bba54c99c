//! trace-cmd-style lines (head, name column, plugins, dropped-events lines, -F filters)
//! against `trace-cmd report` on a file trace-cmd records during the test.
//!
//! The records are decoded independently of any trace.dat parser: trace-cmd converts its
//! file to version 6 without compression, `trace-cmd dump` tells where each CPU's pages
//! are and hands out the event formats, saved cmdlines and kallsyms, and the ring decoder
//! reads the pages. Only the print-fmt text of events without a plugin is left out of the
//! comparison (that is the event model's engine); everything before it and every plugin's
//! whole line must be identical.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tracectl::endian::Endianness;

use tracectl::dat::DatFile;
use tracectl::event::{HeaderPage, Record};
use tracectl::render::plugins::FunctionMap;
use tracectl::render::tracecmd::{
    Catalog, Cmdlines, DatSource, EntrySource, EventFilter, FieldClass, FieldSpec, RecordSource,
    TimeFormat, TraceCmdStyle,
};
use tracectl::ring::{CpuStream, Merge, PageLayout};
use tracectl::session::report::{write_report, ReportInput, ReportOptions};

use crate::support::tracecmd::recorder;

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn record(dir: &Path, events: &[&str], extra: &[&str], workload: &str) -> PathBuf {
    let rec = recorder().expect("checked by the caller");
    let file = dir.join("trace.dat");
    let mut cmd = Command::new(rec);
    cmd.arg("record").args(extra);
    for e in events {
        cmd.args(["-e", e]);
    }
    cmd.arg("-o").arg(&file);
    cmd.args(["--", "sh", "-c", workload]);
    // trace-cmd record leaves the top level's buffer size as -b set it: put it back,
    // with the top level to this test alone meanwhile.
    let _lock = crate::support::live::TopLock::take();
    let before = read_top("buffer_size_kb");
    run(&mut cmd);
    if let Some(before) = before {
        if read_top("buffer_size_kb").as_deref() != Some(before.as_str()) {
            // A never-used buffer reads `7 (expanded: 1410)`; 1410 is its real size.
            let size = before
                .split("(expanded: ")
                .nth(1)
                .map_or(before.as_str(), |r| r.trim_end_matches(')'));
            let _ = std::fs::write("/sys/kernel/tracing/buffer_size_kb", size.trim());
        }
    }
    file
}

fn read_top(file: &str) -> Option<String> {
    tracectl::tracefs::read_file(&Path::new("/sys/kernel/tracing").join(file))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
}

struct Event {
    system: String,
    name: String,
    fields: Vec<(String, FieldSpec)>,
}

struct DumpCatalog {
    events: HashMap<u16, Event>,
    functions: FunctionMap,
}

fn parse_field(line: &str) -> Option<(String, FieldSpec)> {
    let line = line.trim();
    let decl = line.strip_prefix("field:")?.split(';').next()?.trim();
    let num = |key: &str| -> Option<usize> {
        let i = line.find(key)? + key.len();
        line[i..].split(';').next()?.trim().parse().ok()
    };
    let (offset, size, signed) = (num("offset:")?, num("size:")?, num("signed:")? != 0);
    let last = decl.rsplit([' ', '*']).next()?;
    let is_array = last.ends_with(']');
    let name = last.split('[').next()?.to_string();
    let class = if decl.starts_with("__data_loc char") {
        FieldClass::DataLocString
    } else if decl.starts_with("__rel_loc char") {
        FieldClass::RelLocString
    } else if decl.starts_with("__data_loc") || decl.starts_with("__rel_loc") {
        FieldClass::Array
    } else if is_array && decl.starts_with("char") {
        FieldClass::CharArray
    } else if is_array {
        FieldClass::Array
    } else if decl.contains('*') || decl.contains("long") && size == 8 {
        FieldClass::Long
    } else {
        FieldClass::Number
    };
    Some((
        name,
        FieldSpec {
            offset,
            size,
            signed,
            class,
        },
    ))
}

impl DumpCatalog {
    fn load(file: &Path) -> DumpCatalog {
        let formats = run(Command::new("trace-cmd")
            .args(["dump", "--events", "-i"])
            .arg(file));
        let available =
            std::fs::read_to_string("/sys/kernel/tracing/available_events").unwrap_or_default();
        let system_of: HashMap<&str, &str> = available
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(s, n)| (n, s))
            .collect();
        let mut events = HashMap::new();
        for block in formats.split("\nname: ").skip(1) {
            let name = block.lines().next().unwrap_or("").trim().to_string();
            let id: u16 = block
                .lines()
                .find_map(|l| l.strip_prefix("ID: "))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            let fields = block.lines().filter_map(parse_field).collect();
            let system = system_of
                .get(name.as_str())
                .copied()
                .unwrap_or("unknown")
                .to_string();
            events.insert(
                id,
                Event {
                    system,
                    name,
                    fields,
                },
            );
        }
        let kallsyms = run(Command::new("trace-cmd")
            .args(["dump", "--kallsyms", "-i"])
            .arg(file));
        let kallsyms: String = kallsyms.lines().skip(1).map(|l| format!("{l}\n")).collect();
        DumpCatalog {
            events,
            functions: FunctionMap::parse(&kallsyms),
        }
    }
}

impl Catalog for DumpCatalog {
    fn events(&self) -> Vec<(u16, &str, &str)> {
        self.events
            .iter()
            .map(|(id, e)| (*id, e.system.as_str(), e.name.as_str()))
            .collect()
    }
    fn event(&self, id: u16) -> Option<(&str, &str)> {
        self.events
            .get(&id)
            .map(|e| (e.system.as_str(), e.name.as_str()))
    }
    fn field(&self, id: u16, name: &str) -> Option<FieldSpec> {
        let e = self.events.get(&id)?;
        e.fields.iter().find(|(n, _)| n == name).map(|(_, f)| *f)
    }
    fn function(&self, addr: u64) -> Option<(&str, u64)> {
        self.functions.find(addr)
    }
    fn write_info(&self, _rec: &Record, _out: &mut Vec<u8>) {}
    fn write_fields(&self, _rec: &Record, _out: &mut Vec<u8>) {}
    fn endian(&self) -> Endianness {
        Endianness::Little
    }
}

/// The file's CPU data (raw pages) and page layout, found with `trace-cmd dump`.
fn cpu_data(v6: &Path) -> (PageLayout, Vec<(u32, Vec<u8>)>) {
    let head = run(Command::new("trace-cmd")
        .args(["dump", "--head-page", "-i"])
        .arg(v6));
    let head: String = head
        .lines()
        .filter(|l| l.contains("field:"))
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    let hp = HeaderPage::parse(&head).expect("header page from trace-cmd dump");
    let layout = PageLayout::new(&hp, Some(4096), Endianness::Little);
    let fly = run(Command::new("trace-cmd")
        .args(["dump", "--flyrecord", "-i"])
        .arg(v6));
    let bytes = std::fs::read(v6).unwrap();
    let mut cpus = Vec::new();
    for line in fly.lines().filter(|l| l.contains("[offset, size of cpu")) {
        let mut it = line.split_whitespace();
        let off: usize = it.next().unwrap().parse().unwrap();
        let size: usize = it.next().unwrap().parse().unwrap();
        let cpu: u32 = line
            .rsplit(' ')
            .next()
            .unwrap()
            .trim_end_matches(']')
            .parse()
            .unwrap();
        cpus.push((cpu, bytes[off..off + size].to_vec()));
    }
    (layout, cpus)
}

fn cmdlines(file: &Path) -> Cmdlines {
    let text = run(Command::new("trace-cmd")
        .args(["dump", "--cmd-lines", "-i"])
        .arg(file));
    let mut c = Cmdlines::new();
    c.load(
        &text
            .lines()
            .filter(|l| !l.starts_with('\t'))
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    );
    c
}

/// Events whose whole line comes from a plugin.
const FULL: &[&str] = &[
    "sched_switch",
    "sched_wakeup",
    "sched_wakeup_new",
    "hrtimer_start",
    "hrtimer_expire_entry",
];

struct Compare {
    total: usize,
    same: usize,
    diffs: Vec<String>,
}

/// Render every record like `trace-cmd report` would (up to the print-fmt text) and compare.
fn compare(
    file: &Path,
    style: TraceCmdStyle,
    filters: &[(&str, bool)],
    opts: &ReportOptions,
    args: &[&str],
) -> Compare {
    let dir = file.parent().unwrap();
    let v6 = dir.join("v6.dat");
    if !v6.exists() {
        run(Command::new("trace-cmd")
            .args([
                "convert",
                "--file-version",
                "6",
                "--compression",
                "none",
                "-i",
            ])
            .arg(file)
            .arg("-o")
            .arg(&v6));
    }
    let catalog = DumpCatalog::load(&v6);
    let (layout, cpus) = cpu_data(&v6);
    let golden = run(Command::new("trace-cmd")
        .arg("report")
        .args(args)
        .arg("-i")
        .arg(file));
    let mut golden = golden.lines();
    let golden_cpus: usize = golden
        .next()
        .and_then(|l| l.strip_prefix("cpus="))
        .and_then(|n| n.parse().ok())
        .unwrap();

    let mut filter = EventFilter::new();
    for (f, neg) in filters {
        filter.add(&catalog, f, *neg).unwrap();
    }
    let streams: Vec<_> = cpus
        .iter()
        .map(|(cpu, b)| CpuStream::new(layout, *cpu, b))
        .collect();
    // The pages come from the trace.dat reader for the file itself (v7 + zstd as recorded)
    // or, with TRACECTL_TEST_DUMP_PAGES set, straight from the v6 copy's flyrecord offsets.
    let dat;
    let source: Box<dyn RecordSource> = if std::env::var_os("TRACECTL_TEST_DUMP_PAGES").is_some() {
        Box::new(EntrySource::new(Merge::new(streams)))
    } else {
        dat = DatFile::open(file).unwrap();
        Box::new(DatSource::open(&dat, 0).unwrap())
    };
    let input = ReportInput {
        name: String::new(),
        instance: false,
        file: 0,
        catalog: &catalog,
        style,
        cmdlines: cmdlines(&v6),
        cpus: golden_cpus,
        long_size: 8,
        profile_hooks: Vec::new(),
        cpu_base: 0,
        ts_offset: 0,
        filter,
        source,
    };
    let mut out = Vec::new();
    write_report(vec![input], opts, &mut out).unwrap();
    let ours = String::from_utf8_lossy(&out).into_owned();
    let mut ours = ours.lines();
    assert_eq!(ours.next(), Some(format!("cpus={golden_cpus}").as_str()));
    let mut cmp = Compare {
        total: 0,
        same: 0,
        diffs: Vec::new(),
    };
    loop {
        let (want, got) = match (golden.next(), ours.next()) {
            (None, None) => break,
            (w, g) => (w.unwrap_or("<missing>"), g.unwrap_or("<missing>")),
        };
        cmp.total += 1;
        // Only plugin events print their whole line here; the others stop before the
        // print-fmt text, which the event model's engine writes.
        let full = want.starts_with("CPU:")
            || want.starts_with("[UNKNOWN")
            || FULL.iter().any(|n| want.contains(&format!(" {n}: ")));
        // Elsewhere ours must be exactly trace-cmd's line up to where the print-fmt text
        // starts (after the padded `name:` column).
        let ok = got == want || (!full && got == info_start(want).map_or(want, |i| &want[..i]));
        if ok {
            cmp.same += 1;
        } else if cmp.diffs.len() < 20 {
            cmp.diffs.push(format!("-{want}\n+{got}"));
        }
    }
    cmp
}

/// Events the kmem plugin prints with a `(call_site+0xoff) ` before the print-fmt text.
const CALL_SITE_PREFIXED: &[&str] = &[
    "kmalloc",
    "kmalloc_node",
    "kfree",
    "kmem_cache_alloc",
    "kmem_cache_alloc_node",
    "kmem_cache_free",
];

/// Where the print-fmt text starts in a `trace-cmd report` line: after the timestamp
/// token (`123.456789:`), the event name token (`name:`), the spaces that pad it and,
/// for the kmem plugin's events, the `(call_site) ` it prints first.
fn info_start(line: &str) -> Option<usize> {
    let at = name_column_end(line)?;
    let prefixed = CALL_SITE_PREFIXED
        .iter()
        .any(|n| line[..at].trim_end().ends_with(&format!(" {n}:")));
    if prefixed && line[at..].starts_with('(') {
        return line[at..].find(") ").map(|i| at + i + 2);
    }
    Some(at)
}

/// The end of the padded `name:` column that follows the timestamp.
fn name_column_end(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    let mut after_ts = false;
    while i < b.len() {
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i] != b' ' {
            i += 1;
        }
        let word = &line[start..i];
        if after_ts {
            if !word.ends_with(':') {
                return None;
            }
            while i < b.len() && b[i] == b' ' {
                i += 1;
            }
            return Some(i);
        }
        after_ts = word.len() > 1
            && word.ends_with(':')
            && word[..word.len() - 1]
                .bytes()
                .all(|c| c.is_ascii_digit() || c == b'.');
    }
    None
}

fn check(name: &str, c: Compare) {
    let rate = 100.0 * c.same as f64 / c.total.max(1) as f64;
    eprintln!("{name}: {}/{} lines match ({rate:.3}%)", c.same, c.total);
    for d in &c.diffs {
        eprintln!("{d}");
    }
    // A filtered view of a quiet recording can be small; it still has to hold something.
    let min = if name.starts_with("-F") { 10 } else { 100 };
    assert!(
        c.total > min,
        "{name}: too few lines recorded ({})",
        c.total
    );
    assert_eq!(
        c.same, c.total,
        "{name}: lines differ from trace-cmd report"
    );
}

#[test]
fn sched_irq_timer_kmem_lines_match_trace_cmd() {
    if recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let workload =
        "ls -R /usr/share/doc >/dev/null; sleep 0.05; cat /proc/self/status >/dev/null; \
                    for i in 1 2 3 4 5 6 7 8; do sleep 0.01; done";
    let file = record(
        dir.path(),
        &["sched", "irq", "timer", "kmem", "workqueue"],
        &[],
        workload,
    );
    let all = ReportOptions::default();
    check(
        "default",
        compare(&file, TraceCmdStyle::default(), &[], &all, &[]),
    );
    let ns = TraceCmdStyle {
        time: TimeFormat::Nsecs,
        ..TraceCmdStyle::default()
    };
    check("-t", compare(&file, ns, &[], &all, &["-t"]));
    let lat = TraceCmdStyle {
        latency: true,
        ..TraceCmdStyle::default()
    };
    check("-l", compare(&file, lat, &[], &all, &["-l"]));
    check(
        "-F sched_switch,sched_wakeup:prev_pid==0||pid>100",
        compare(
            &file,
            TraceCmdStyle::default(),
            &[("sched_switch,sched_wakeup:prev_pid==0||pid>100", false)],
            &all,
            &["-F", "sched_switch,sched_wakeup:prev_pid==0||pid>100"],
        ),
    );
    check(
        "-F sched/.*:COMM regex, -v -F timer",
        compare(
            &file,
            TraceCmdStyle::default(),
            &[(".*:COMM=~\"^ls\"", false), ("kmem/k.*", true)],
            &all,
            &["-F", ".*:COMM=~\"^ls\"", "-v", "-F", "kmem/k.*"],
        ),
    );
    check(
        "-F kmem string compare",
        compare(
            &file,
            TraceCmdStyle::default(),
            &[("kmem_cache_alloc:name==\"filp\" && bytes_alloc>=192", false)],
            &all,
            &["-F", "kmem_cache_alloc:name==\"filp\" && bytes_alloc>=192"],
        ),
    );
    let cpu1 = ReportOptions {
        cpus: Some(vec![1]),
        ..ReportOptions::default()
    };
    check(
        "--cpu 1",
        compare(&file, TraceCmdStyle::default(), &[], &cpu1, &["--cpu", "1"]),
    );
}

#[test]
fn dropped_events_lines_match_trace_cmd() {
    if recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A 4 KiB buffer per CPU cannot keep up with kmem events: the kernel drops some.
    let file = record(
        dir.path(),
        &["sched", "kmem"],
        &["-b", "4"],
        "ls -R /usr/share >/dev/null",
    );
    let golden = run(Command::new("trace-cmd").arg("report").arg("-i").arg(&file));
    let dropped = golden
        .lines()
        .filter(|l| l.contains("EVENTS DROPPED]"))
        .count();
    assert!(
        dropped > 0,
        "a 4 KiB buffer kept every event: nothing was dropped, so this test checks nothing"
    );
    let all = ReportOptions::default();
    check(
        "-b 4",
        compare(&file, TraceCmdStyle::default(), &[], &all, &[]),
    );
    check(
        "-b 4 --cpu 0",
        compare(
            &file,
            TraceCmdStyle::default(),
            &[],
            &ReportOptions {
                cpus: Some(vec![0]),
                ..ReportOptions::default()
            },
            &["--cpu", "0"],
        ),
    );
    check(
        "-b 4 -F sched",
        compare(
            &file,
            TraceCmdStyle::default(),
            &[("sched", false)],
            &all,
            &["-F", "sched"],
        ),
    );
}
