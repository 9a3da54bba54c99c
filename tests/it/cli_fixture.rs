//! The scripting verbs run as the real binary against a temporary copy of a recorded
//! tracefs tree: what they print, and the exact bytes they write to each file.

use std::fs;

use crate::support::fixtures::copy_tree;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TREE: &str = "tracefs-fixtures/linux-6.18-sched-irq";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A private copy of the fixture tree.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tracing");
        copy_tree(&repo().join(TREE), &root);
        Tree { _dir: dir, root }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(bin())
            .arg("--tracefs")
            .arg(&self.root)
            .args(args)
            .env_remove("TRACECTL_TRACEFS")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "tracectl {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// Each file holds exactly the given text; all differences are reported at once.
    fn expect(&self, want: &[(&str, &str)]) {
        let bad: Vec<String> = want
            .iter()
            .filter(|(rel, text)| self.read(rel) != *text)
            .map(|(rel, text)| format!("{rel}: {:?}, expected {text:?}", self.read(rel)))
            .collect();
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    fn put(&self, rel: &str, text: &str) {
        fs::write(self.root.join(rel), text).unwrap()
    }
}

#[test]
fn list_sched_glob_matches_available_events() {
    let t = Tree::new();
    let out = t.ok(&["list", "-e", "sched:*"]);
    let want: Vec<String> = t
        .read("available_events")
        .lines()
        .filter(|l| l.starts_with("sched:"))
        .map(|l| l.trim().to_string())
        .collect();
    let got: Vec<String> = out.lines().map(String::from).collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn list_regex_and_json() {
    let t = Tree::new();
    // trace-cmd searches each part in its own name: `^irq$` is the irq system only.
    let out = t.ok(&["list", "-e", "^irq$:_entry$"]);
    let want: Vec<String> = t
        .read("available_events")
        .lines()
        .filter(|l| l.starts_with("irq:") && l.ends_with("_entry"))
        .map(String::from)
        .collect();
    assert_eq!(out.lines().map(String::from).collect::<Vec<_>>(), want);
    let v: serde_json::Value =
        serde_json::from_str(&t.ok(&["list", "-e", "irq", "-t", "-C", "-o", "--json"])).unwrap();
    assert!(v["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "irq_handler_entry"));
    assert_eq!(v["tracers"], serde_json::json!(["blk", "function", "nop"]));
    assert_eq!(v["clocks"]["current"], "local");
    assert_eq!(v["options"]["irq-info"], true);
}

#[test]
fn start_writes_the_expected_bytes() {
    let t = Tree::new();
    t.ok(&[
        "start",
        "-e",
        "sched:sched_switch",
        "-f",
        "prev_pid != 0",
        "-R",
        "traceoff:1",
        "-e",
        "irq",
        "-C",
        "global",
        "-b",
        "2048",
        "-P",
        "123",
        "-P",
        "456",
        "-M",
        "1",
        "-O",
        "norecord-cmd",
    ]);
    t.expect(&[
        ("events/sched/sched_switch/enable", "1"),
        ("events/sched/sched_switch/filter", "(prev_pid != 0)"),
        ("events/sched/sched_switch/trigger", "traceoff:1"),
        ("events/irq/enable", "1"),
        ("trace_clock", "global"),
        ("buffer_size_kb", "2048"),
        ("set_event_pid", "123 456"),
        ("tracing_cpumask", "1"),
        ("options/record-cmd", "0"),
        ("tracing_on", "1"),
    ]);
}

#[test]
fn filter_binds_to_the_preceding_event_and_v_inverts_the_events_after_it() {
    let t = Tree::new();
    t.ok(&[
        "set",
        "-e",
        "irq",
        "-v",
        "-e",
        "irq:softirq_raise",
        "-e",
        "sched:sched_waking",
        "-f",
        "pid == 1",
    ]);
    t.expect(&[
        ("events/irq/enable", "1"),
        ("events/irq/softirq_raise/enable", "0"),
        ("events/sched/sched_waking/filter", "(pid == 1)"),
        // As trace-cmd: the -v holds for every -e after it.
        ("events/sched/sched_waking/enable", "0"),
    ]);
    let o = t.run(&["set", "-f", "pid == 1", "-e", "irq"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("must follow the -e"));
}

#[test]
fn set_does_not_reset_but_start_does() {
    let t = Tree::new();
    t.put("events/sched/sched_waking/filter", "pid == 7\n");
    t.ok(&["set", "-e", "sched:sched_switch"]);
    assert_eq!(t.read("events/sched/sched_waking/filter"), "pid == 7\n");
    t.ok(&["start", "-e", "sched:sched_switch"]);
    assert_eq!(t.read("events/sched/sched_waking/filter"), "0");
}

#[test]
fn reset_restores_what_start_changed() {
    let t = Tree::new();
    t.ok(&[
        "start",
        "-e",
        "sched:sched_switch",
        "-f",
        "prev_pid != 0",
        "-R",
        "traceoff",
        "-e",
        "irq",
        "-C",
        "global",
        "-b",
        "2048",
        "-P",
        "123",
    ]);
    t.ok(&["reset"]);
    // The kernel takes `!TRIGGER` as removal; a copy keeps that last write.
    t.expect(&[
        ("events/sched/sched_switch/trigger", "!traceoff"),
        ("events/sched/sched_switch/enable", "0"),
        ("events/irq/enable", "0"),
        ("events/sched/sched_switch/filter", "0"),
        ("trace_clock", "local"),
        ("buffer_size_kb", "1410"),
        ("set_event_pid", ""),
        ("tracing_on", "1"),
    ]);
}

#[test]
fn reset_writes_nothing_when_already_at_defaults() {
    let t = Tree::new();
    // Bring the copy to the defaults once, then a second reset must not write at all.
    t.ok(&["reset"]);
    let before = snapshot(&t.root);
    let out = t.ok(&["reset", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["changed"], serde_json::json!([]));
    assert_eq!(before, snapshot(&t.root));
}

fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    fn walk(d: &Path, v: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), v);
            } else {
                v.push((e.path(), fs::read(e.path()).unwrap()));
            }
        }
    }
    walk(root, &mut v);
    v.sort();
    v
}

#[test]
fn misspelt_event_fails_and_suggests_and_changes_nothing() {
    let t = Tree::new();
    let before = snapshot(&t.root);
    let o = t.run(&["start", "-e", "sched:sched_swich"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did you mean sched:sched_switch"), "{err}");
    assert_eq!(before, snapshot(&t.root));
}

#[test]
fn stop_restart_clear_marker() {
    let t = Tree::new();
    t.ok(&["stop"]);
    assert_eq!(t.read("tracing_on"), "0");
    t.ok(&["restart"]);
    assert_eq!(t.read("tracing_on"), "1");
    t.ok(&["clear"]);
    assert_eq!(t.read("trace"), "");
    t.put("trace_marker", "");
    t.ok(&["marker", "hello", "world"]);
    assert_eq!(t.read("trace_marker"), "hello world");
}

#[test]
fn instances_are_created_by_set_and_removed_by_reset() {
    let t = Tree::new();
    fs::create_dir_all(t.root.join("instances")).unwrap();
    t.ok(&["list", "-B"]);
    // A copied tree has no kernel behind mkdir; give the new instance the files it needs.
    let inst = t.root.join("instances/work");
    copy_tree(&t.root.join("events"), &inst.join("events"));
    for f in [
        "trace_clock",
        "tracing_on",
        "set_event",
        "set_event_pid",
        "buffer_size_kb",
        "available_tracers",
        "current_tracer",
    ] {
        fs::copy(t.root.join(f), inst.join(f)).unwrap();
    }
    t.ok(&[
        "set",
        "-B",
        "work",
        "-e",
        "sched:sched_switch",
        "-C",
        "global",
    ]);
    assert_eq!(
        t.read("instances/work/events/sched/sched_switch/enable"),
        "1"
    );
    assert_eq!(t.read("instances/work/trace_clock"), "global");
    // The top level is untouched.
    assert_eq!(
        t.read("events/sched/sched_switch/enable"),
        fs::read_to_string(repo().join(TREE).join("events/sched/sched_switch/enable")).unwrap()
    );
    assert_eq!(t.ok(&["list", "-B"]), "work\n");
    // A plain reset leaves instances alone (another tool may own them); -a -d removes them.
    t.ok(&["reset"]);
    assert!(inst.exists());
    t.ok(&["reset", "-a", "-d"]);
    assert!(!inst.exists());
}

#[test]
fn show_shortcuts_and_json() {
    let t = Tree::new();
    assert_eq!(t.ok(&["show", "--tracing_on"]), t.read("tracing_on"));
    assert_eq!(
        t.ok(&["show", "--current_tracer"]),
        t.read("current_tracer")
    );
    assert_eq!(
        t.ok(&["show", "--trigger", "sched:sched_switch"]),
        t.read("events/sched/sched_switch/trigger")
    );
    assert_eq!(t.ok(&["show"]), t.read("trace"));
    let body: Vec<String> = t
        .read("trace")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(String::from)
        .collect();
    let json = t.ok(&["show", "--json"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), body.len());
    // Every line of the kernel's own text parses into its columns.
    for (l, text) in lines.iter().zip(&body) {
        assert!(l.get("event").is_some(), "unparsed: {text}");
        assert!(text.contains(l["event"].as_str().unwrap()));
        assert!(text.contains(l["timestamp"].as_str().unwrap()));
    }
    let v: serde_json::Value = serde_json::from_str(&t.ok(&["stat", "--json"])).unwrap();
    assert_eq!(v[0]["tracer"], "nop");
    assert_eq!(
        v[0]["clock"],
        t.read("trace_clock")
            .split('[')
            .nth(1)
            .unwrap()
            .split(']')
            .next()
            .unwrap()
    );
}

#[test]
fn bad_tracefs_dir_is_a_clear_error() {
    let o = Command::new(bin())
        .args(["--tracefs", "/nonexistent/dir", "stat"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/dir: no such directory"));
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .arg("--tracefs")
        .arg(d.path())
        .arg("stat")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not look like a tracefs root"));
}

#[test]
fn man_pages_are_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .args(["man", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    let man = repo().join("man");
    if std::env::var_os("TRACECTL_UPDATE_MAN").is_some() {
        for e in fs::read_dir(dir.path()).unwrap() {
            let e = e.unwrap();
            fs::copy(e.path(), man.join(e.file_name())).unwrap();
        }
        return;
    }
    let mut stale = Vec::new();
    for e in fs::read_dir(dir.path()).unwrap() {
        let e = e.unwrap();
        let committed = fs::read(man.join(e.file_name())).unwrap_or_default();
        if committed != fs::read(e.path()).unwrap() {
            stale.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    for e in fs::read_dir(&man).unwrap() {
        let e = e.unwrap();
        if !dir.path().join(e.file_name()).exists() {
            stale.push(format!(
                "{} (no such subcommand any more)",
                e.file_name().to_string_lossy()
            ));
        }
    }
    assert!(stale.is_empty(), "man/ is out of date: {stale:?}; regenerate with `cargo run -- man --out man` (or TRACECTL_UPDATE_MAN=1 cargo test --test cli_fixture)");
}

/// Every page has a DESCRIPTION longer than the one-line summary of `--help`, and
/// EXAMPLES with at least one tracectl command line.
#[test]
fn man_pages_have_a_description_and_examples() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .args(["man", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    let mut pages = 0;
    for e in fs::read_dir(dir.path()).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let page = fs::read_to_string(e.path()).unwrap();
        let section = |title: &str| -> String {
            let start = page
                .find(&format!(".SH {title}\n"))
                .unwrap_or_else(|| panic!("{name}: no {title} section"));
            let body = &page[start + title.len() + 5..];
            body[..body.find("\n.SH ").unwrap_or(body.len())].to_string()
        };
        let description = section("DESCRIPTION");
        assert!(
            description.split_whitespace().count() >= 12,
            "{name}: the DESCRIPTION is only {description:?}"
        );
        assert!(
            section("EXAMPLES").contains("\ntracectl "),
            "{name}: EXAMPLES without a tracectl command line"
        );
        pages += 1;
    }
    assert!(pages > 20, "only {pages} pages");
}

#[test]
fn unknown_tracer_or_clock_changes_nothing() {
    let t = Tree::new();
    let before = snapshot(&t.root);
    let o = t.run(&["start", "-e", "sched", "-p", "nosuch"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not in available_tracers (blk function nop)")
    );
    let o = t.run(&["start", "-e", "sched", "-C", "sundial"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown clock \"sundial\""));
    assert_eq!(before, snapshot(&t.root));
}

#[test]
fn function_filters_are_checked_against_available_filter_functions() {
    let t = Tree::new();
    // This sandboxed kernel refused these files at capture time; give the copy some.
    t.put(
        "available_filter_functions",
        "schedule\nschedule_idle\nvfs_read\next4_sync_fs [ext4]\n",
    );
    t.put("set_ftrace_filter", "#### all functions enabled ####\n");
    t.put("set_ftrace_notrace", "");
    t.put("set_graph_function", "");
    t.put("max_graph_depth", "0\n");
    let before = snapshot(&t.root);
    let o = t.run(&["set", "-l", "schedul"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("\"schedul\" is not in available_filter_functions; did you mean schedule"),
        "{err}"
    );
    assert_eq!(before, snapshot(&t.root));
    t.ok(&[
        "set",
        "-l",
        "vfs_*",
        "-l",
        ":mod:ext4",
        "-n",
        "schedule_idle",
        "-g",
        "schedule",
        "--max-graph-depth",
        "2",
    ]);
    t.expect(&[
        ("set_ftrace_filter", "vfs_*\n:mod:ext4\n"),
        ("set_ftrace_notrace", "schedule_idle\n"),
        ("set_graph_function", "schedule\n"),
        ("max_graph_depth", "2"),
    ]);
    assert_eq!(t.ok(&["show", "--ftrace_filter"]), "vfs_*\n:mod:ext4\n");
    t.ok(&["reset"]);
    t.expect(&[
        ("set_ftrace_filter", ""),
        ("set_graph_function", ""),
        ("max_graph_depth", "0"),
    ]);
}

#[test]
fn list_full_prints_each_format() {
    let t = Tree::new();
    let format = t.read("events/sched/sched_switch/format");
    // --full: the whole format file (as trace-cmd list -F --full prints it).
    let out = t.ok(&["list", "-e", "sched:sched_switch", "--full"]);
    assert_eq!(out, format!("system: sched\n{format}"));
    // -F: as trace-cmd list -F, the fields without the print fmt.
    let out = t.ok(&["list", "-e", "sched:sched_switch", "-F"]);
    let fields = &format[..format.find("print fmt:").unwrap()];
    assert_eq!(out, format!("system: sched\n{fields}"));
    let v: serde_json::Value =
        serde_json::from_str(&t.ok(&["list", "-e", "sched:sched_switch", "--full", "--json"]))
            .unwrap();
    assert_eq!(
        v["events"][0]["format"],
        t.read("events/sched/sched_switch/format")
    );
}

#[test]
fn start_and_set_take_records_function_options() {
    let t = Tree::new();
    t.put(
        "available_filter_functions",
        "schedule\nschedule_idle\nvfs_read\next4_sync_fs [ext4]\n",
    );
    t.put("set_ftrace_filter", "#### all functions enabled ####\n");
    t.put("set_ftrace_notrace", "");
    let before = snapshot(&t.root);
    // --func-stack needs the function tracer (checked before anything is written).
    let o = t.run(&["start", "--func-stack", "-e", "sched"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--func-stack") && err.contains("-p function"),
        "{err}"
    );
    assert_eq!(before, snapshot(&t.root));
    // --module limits each -l/-n (trace-cmd writes PATTERN:mod:MODULE); -T and -d set
    // options/stacktrace and clear options/function-trace.
    t.ok(&[
        "set", "--module", "ext4", "-l", "ext4_*", "-n", "*sync*", "-T", "-d", "-e", "sched",
    ]);
    t.expect(&[
        ("set_ftrace_filter", "ext4_*:mod:ext4\n"),
        ("set_ftrace_notrace", "*sync*:mod:ext4\n"),
        ("options/stacktrace", "1"),
        ("options/function-trace", "0"),
    ]);
    // A module alone filters all of its functions; -D on a tree clears the option only
    // (a tree has no /proc/sys/kernel/ftrace_enabled to write).
    t.ok(&["start", "--module", "ext4", "-D", "-e", "sched"]);
    t.expect(&[
        ("set_ftrace_filter", "*:mod:ext4\n"),
        ("options/function-trace", "0"),
    ]);
}

/// The functions of `available_filter_functions` that the entries of a function-filter
/// file select: `PATTERN[:mod:MODULE]` (only `*` globs here), or an index as libtracefs
/// writes them (1-based line numbers).
fn selected(avail: &str, entries: &str) -> std::collections::BTreeSet<String> {
    fn glob(p: &str, s: &str) -> bool {
        match p.split_once('*') {
            None => p == s,
            Some((head, rest)) => {
                s.starts_with(head)
                    && (0..=s.len() - head.len()).any(|i| glob(rest, &s[head.len() + i..]))
            }
        }
    }
    let funcs: Vec<(&str, Option<&str>)> = avail
        .lines()
        .map(|l| match l.split_once(" [") {
            Some((f, m)) => (f, Some(m.trim_end_matches(']'))),
            None => (l, None),
        })
        .collect();
    let mut out = std::collections::BTreeSet::new();
    for e in entries.split_whitespace() {
        if let Ok(i) = e.parse::<usize>() {
            out.insert(funcs[i - 1].0.to_string());
            continue;
        }
        let (pat, module) = match e.split_once(":mod:") {
            Some((p, m)) => (p, Some(m)),
            None => (e, None),
        };
        for (f, m) in &funcs {
            if glob(pat, f) && (module.is_none() || module == *m) {
                out.insert(f.to_string());
            }
        }
    }
    out
}

/// `--module` limits only the -l, -n and -g given after it; a pattern before any
/// --module takes none; a --module another replaces, or with no pattern after it, filters
/// all of its functions. The expected files are what trace-cmd 3.1.6 (libtracefs 1.6.4)
/// wrote for the same command line on a copy of this tree (bind-mounted over
/// /sys/kernel/tracing in a private mount namespace): the indices of the selected lines
/// of available_filter_functions for set_ftrace_filter/set_ftrace_notrace, the patterns
/// for set_graph_function. tracectl writes the patterns the kernel expands itself, so the
/// check is on the functions they select.
#[test]
fn module_limits_the_function_patterns_after_it() {
    let avail = "schedule\nschedule_idle\nvfs_read\next4_sync_fs [ext4]\n\
                 ext4_file_open [ext4]\nkvm_vcpu_ioctl [kvm]\n";
    // (arguments after `set -e sched`, set_ftrace_filter, set_ftrace_notrace,
    // set_graph_function as trace-cmd wrote them)
    let cases: &[(&[&str], &str, &str, &str)] = &[
        (
            &["-l", "vfs_read", "--module", "ext4", "-l", "ext4_*"],
            "4 5 3 ",
            "",
            "",
        ),
        (&["-l", "schedule", "--module", "ext4"], "4 5 1 ", "", ""),
        (
            &[
                "--module",
                "ext4",
                "-l",
                "ext4_sync*",
                "--module",
                "kvm",
                "-n",
                "kvm_*",
            ],
            "4 5 4 ",
            "6 ",
            "",
        ),
        (
            &["-g", "schedule", "--module", "ext4", "-g", "ext4_*"],
            "",
            "",
            "ext4_*:mod:ext4 schedule ",
        ),
        (&["--module", "ext4", "--module", "kvm"], "6 4 5 ", "", ""),
        (
            &["-n", "schedule", "--module", "ext4", "-l", "ext4_file*"],
            "5 ",
            "1 ",
            "",
        ),
    ];
    for (args, filter, notrace, graph) in cases {
        let t = Tree::new();
        t.put("available_filter_functions", avail);
        t.put("set_ftrace_filter", "#### all functions enabled ####\n");
        t.put("set_ftrace_notrace", "");
        t.put("set_graph_function", "");
        let mut full = vec!["set", "-e", "sched"];
        full.extend_from_slice(args);
        t.ok(&full);
        for (file, want) in [
            ("set_ftrace_filter", filter),
            ("set_ftrace_notrace", notrace),
            ("set_graph_function", graph),
        ] {
            let got = t.read(file);
            let got = got.trim_start_matches("#### all functions enabled ####\n");
            assert_eq!(
                selected(avail, got),
                selected(avail, want),
                "{args:?}: {file} is {got:?}"
            );
        }
        // set_graph_function takes the patterns as they are: the same entries.
        let written = t.read("set_graph_function");
        let mut g: Vec<&str> = written.split_whitespace().collect();
        let mut w: Vec<&str> = graph.split_whitespace().collect();
        g.sort();
        w.sort();
        assert_eq!(g, w, "{args:?}");
    }
}

#[test]
fn v_before_b_removes_that_instance_first() {
    let t = Tree::new();
    // A copied tree has no kernel behind mkdir: give an instance the files it needs.
    let make = |name: &str| {
        let inst = t.root.join("instances").join(name);
        copy_tree(&t.root.join("events"), &inst.join("events"));
        for f in ["trace_clock", "tracing_on", "set_event", "current_tracer"] {
            fs::copy(t.root.join(f), inst.join(f)).unwrap();
        }
    };
    make("old");
    let before = snapshot(&t.root);
    for (args, says) in [
        (
            &["set", "-e", "sched", "-v", "-B", "nosuch"][..],
            "no such instance to remove",
        ),
        (
            &["set", "-v", "-B", "old", "-B", "old"][..],
            "also one to configure",
        ),
        // As trace-cmd: an instance to remove takes no options.
        (
            &["set", "-v", "-B", "old", "-e", "sched"][..],
            "instance old is to be removed",
        ),
        (&["set", "-B", "a", "-B", "a"][..], "given twice"),
    ] {
        let o = t.run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
        assert_eq!(before, snapshot(&t.root), "{args:?}");
    }
    // The new one made by hand, as a kernel's mkdir would.
    make("new");
    t.ok(&[
        "set",
        "-v",
        "-B",
        "old",
        "-B",
        "new",
        "-e",
        "sched:sched_switch",
    ]);
    assert!(!t.root.join("instances/old").exists());
    assert_eq!(
        t.read("instances/new/events/sched/sched_switch/enable"),
        "1"
    );
}

/// start and set configure the top level and every -B instance, each with the options
/// that follow it; one bad value anywhere changes nothing anywhere.
#[test]
fn each_b_configures_its_own_instance_and_a_bad_one_changes_nothing() {
    let t = Tree::new();
    let make = |name: &str| {
        let inst = t.root.join("instances").join(name);
        copy_tree(&t.root.join("events"), &inst.join("events"));
        for f in ["trace_clock", "tracing_on", "set_event", "current_tracer"] {
            fs::copy(t.root.join(f), inst.join(f)).unwrap();
        }
    };
    make("one");
    make("two");
    let before = snapshot(&t.root);
    let top_irq = t.read("events/irq/enable");
    let one_switch = t.read("instances/one/events/sched/sched_switch/enable");
    let top_wakeup_filter = t.read("events/sched/sched_wakeup/filter");
    for args in [
        &[
            "set",
            "-e",
            "sched:sched_switch",
            "-B",
            "one",
            "-e",
            "irq",
            "-B",
            "two",
            "-e",
            "nosuch:event",
        ][..],
        &[
            "set",
            "-e",
            "sched:sched_switch",
            "-B",
            "one",
            "-C",
            "sundial",
            "-e",
            "irq",
        ][..],
        &[
            "start", "-e", "irq", "-B", "one", "-e", "sched", "-B", "two", "-e", "irq", "-p",
            "nosuch",
        ][..],
        &["set", "-B", "one", "-e", "irq", "-p", "nop", "-p", "blk"][..],
    ] {
        let o = t.run(args);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(before, snapshot(&t.root), "{args:?}");
    }
    t.ok(&[
        "set",
        "-e",
        "sched:sched_switch",
        "-B",
        "one",
        "-e",
        "irq",
        "-B",
        "two",
        "-e",
        "sched:sched_wakeup",
        "-f",
        "pid == 1",
    ]);
    assert_eq!(t.read("events/sched/sched_switch/enable"), "1");
    assert_eq!(t.read("events/irq/enable"), top_irq);
    assert_eq!(t.read("instances/one/events/irq/enable"), "1");
    assert_eq!(
        t.read("instances/one/events/sched/sched_switch/enable"),
        one_switch
    );
    assert_eq!(
        t.read("instances/two/events/sched/sched_wakeup/enable"),
        "1"
    );
    assert_eq!(
        t.read("instances/two/events/sched/sched_wakeup/filter"),
        "(pid == 1)"
    );
    assert_eq!(
        t.read("events/sched/sched_wakeup/filter"),
        top_wakeup_filter
    );
}

/// A copy with instances made by hand, as a kernel's mkdir would (a copied tree has no
/// kernel behind mkdir).
fn make_instance(t: &Tree, name: &str) {
    let inst = t.root.join("instances").join(name);
    copy_tree(&t.root.join("events"), &inst.join("events"));
    for f in ["trace_clock", "tracing_on", "set_event", "current_tracer"] {
        fs::copy(t.root.join(f), inst.join(f)).unwrap();
    }
}

/// As trace-cmd (set_funcs writes set_graph_function for the top instance only; the
/// kernel has the file at the top level only), every -g goes to the top level, wherever
/// it is given, with the --module of its buffer.
#[test]
fn g_after_b_goes_to_the_top_level_set_graph_function() {
    let t = Tree::new();
    t.put(
        "available_filter_functions",
        "schedule\nvfs_read\next4_sync_fs [ext4]\n",
    );
    t.put("set_graph_function", "");
    make_instance(&t, "one");
    t.ok(&[
        "set", "-e", "sched", "-g", "schedule", "-B", "one", "-e", "irq", "-g", "vfs_read",
    ]);
    t.expect(&[
        ("set_graph_function", "schedule\nvfs_read\n"),
        ("instances/one/events/irq/enable", "1"),
    ]);
    assert!(!t.root.join("instances/one/set_graph_function").exists());
    t.ok(&[
        "set",
        "-e",
        "sched",
        "-B",
        "one",
        "--module",
        "ext4",
        "-g",
        "ext4_sync_fs",
    ]);
    t.expect(&[("set_graph_function", "ext4_sync_fs:mod:ext4\n")]);
    // The top level names no event nor tracer: it is left alone, -g with it, as
    // trace-cmd does; a warning says so.
    let before = t.read("set_graph_function");
    let o = t.run(&["set", "-B", "one", "-e", "irq", "-g", "vfs_read"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("-g: set_graph_function is the top level's only"),
        "{err}"
    );
    assert_eq!(t.read("set_graph_function"), before);
    // Each buffer takes its own -p.
    t.ok(&["set", "-p", "nop", "-B", "one", "-p", "blk"]);
    t.expect(&[
        ("current_tracer", "nop"),
        ("instances/one/current_tracer", "blk"),
    ]);
}

/// `start -a` (record's "save the formats of all events") writes exactly what `start`
/// without it writes, as in trace-cmd, where -a only fills the list of formats a
/// recording stores.
#[test]
fn start_a_writes_what_start_writes() {
    let (with, without) = (Tree::new(), Tree::new());
    with.ok(&["start", "-a", "-e", "sched"]);
    without.ok(&["start", "-e", "sched"]);
    let rel = |t: &Tree| -> Vec<(PathBuf, Vec<u8>)> {
        snapshot(&t.root)
            .into_iter()
            .map(|(p, b)| (p.strip_prefix(&t.root).unwrap().to_path_buf(), b))
            .collect()
    };
    assert_eq!(rel(&with), rel(&without));
    assert_eq!(with.read("events/sched/enable"), "1");
}

/// A start whose write fails after the reset puts back what the reset changed, too:
/// each file gets the value it had, in the form the kernel takes back.
#[test]
fn a_start_failing_after_its_reset_undoes_the_reset() {
    let t = Tree::new();
    // State that differs from what a reset writes.
    t.put("tracing_on", "0");
    t.put("buffer_size_kb", "2048");
    t.put("set_event_pid", "123");
    t.put("events/sched/sched_waking/filter", "pid == 7");
    t.put("options/record-tgid", "1");
    t.put(
        "trace_clock",
        "local [global] counter uptime perf mono mono_raw boot tai x86-tsc\n",
    );
    t.put(
        "events/sched/sched_switch/trigger",
        "traceoff:unlimited if prev_pid == 1\n",
    );
    // The kernel lists sched_wakeup but refuses its enable file: the write after the
    // reset fails.
    fs::remove_file(t.root.join("events/sched/sched_wakeup/enable")).unwrap();
    let o = t.run(&["start", "-e", "sched:sched_wakeup"]);
    assert!(!o.status.success());
    t.expect(&[
        ("tracing_on", "0"),
        ("buffer_size_kb", "2048"),
        ("set_event_pid", "123"),
        ("events/sched/sched_waking/filter", "pid == 7"),
        ("options/record-tgid", "1"),
        // Written back as the kernel takes it.
        ("trace_clock", "global"),
        ("events/irq/enable", "1"),
        ("events/sched/sched_switch/enable", "1"),
        // The reset's removal, then the trigger added back (a copy keeps both writes).
        (
            "events/sched/sched_switch/trigger",
            "!traceofftraceoff if prev_pid == 1",
        ),
    ]);
    // A set failing the same way had nothing reset to undo.
    t.put("tracing_on", "1");
    let o = t.run(&["set", "-e", "sched:sched_wakeup"]);
    assert!(!o.status.success());
    assert_eq!(t.read("buffer_size_kb"), "2048");
}

/// -l, -n, -p, -b, -C and -M given after a -B are that instance's, -g the top level's
/// only, and the top level is left alone when -B is given and its options name no event
/// nor tracer. The expected files are what trace-cmd 3.1.6 (libtracefs 1.6.4) wrote for the
/// same options (`trace-cmd start`, which binds them as record does) on a copy of this tree
/// with instances b1 and b2 made by hand, bind-mounted over /sys/kernel/tracing in a
/// private mount namespace: for set_ftrace_filter/set_ftrace_notrace the indices of the
/// lines of available_filter_functions it selected, compared by the functions selected; a
/// file left out was not written.
/// Files written, and what.
type Wrote<'a> = &'a [(&'a str, &'a str)];

#[test]
fn function_filters_after_b_are_that_instances() {
    let avail = "schedule\nschedule_idle\nvfs_read\nvfs_write\next4_sync_fs [ext4]\n\
                 ext4_file_open [ext4]\n";
    // (options after `set`, the files trace-cmd wrote and what it wrote)
    #[rustfmt::skip]
    let cases: &[(&[&str], Wrote)] = &[
        (
            &["-p", "function", "-l", "schedule", "-B", "b1", "-l", "vfs_read", "-n", "vfs_write", "-g", "schedule_idle"],
            &[("current_tracer", "function"), ("set_ftrace_filter", "1 "), ("set_graph_function", "schedule_idle "),
              ("instances/b1/set_ftrace_filter", "3 "), ("instances/b1/set_ftrace_notrace", "4 ")],
        ),
        (
            &["-B", "b1", "-p", "function", "-l", "schedule"],
            &[("instances/b1/current_tracer", "function"), ("instances/b1/set_ftrace_filter", "1 ")],
        ),
        (
            &["-p", "function", "-B", "b1", "-p", "function", "--module", "ext4", "-l", "ext4_*"],
            &[("current_tracer", "function"), ("instances/b1/current_tracer", "function"),
              ("instances/b1/set_ftrace_filter", "5 6 ")],
        ),
        (
            &["-p", "function", "-l", "schedule", "-B", "b1", "-p", "function", "-l", "vfs_read",
              "-B", "b2", "-p", "function", "-n", "vfs_write", "-l", "schedule_idle"],
            &[("current_tracer", "function"), ("set_ftrace_filter", "1 "),
              ("instances/b1/current_tracer", "function"), ("instances/b1/set_ftrace_filter", "3 "),
              ("instances/b2/current_tracer", "function"), ("instances/b2/set_ftrace_filter", "2 "),
              ("instances/b2/set_ftrace_notrace", "4 ")],
        ),
        (
            &["-e", "sched", "-n", "schedule", "-B", "b1", "-e", "irq", "-g", "vfs_read"],
            &[("set_ftrace_notrace", "1 "), ("set_graph_function", "vfs_read ")],
        ),
        (
            &["-B", "b1", "-e", "irq", "-l", "vfs_read", "-g", "schedule"],
            &[("instances/b1/set_ftrace_filter", "3 ")],
        ),
        (
            &["-l", "schedule", "-B", "b1", "-e", "irq", "-l", "vfs_read"],
            &[("instances/b1/set_ftrace_filter", "3 ")],
        ),
        (
            &["-e", "sched", "-B", "b1", "-e", "irq", "-n", "vfs_write", "--module", "ext4", "-g", "ext4_sync_fs"],
            &[("instances/b1/set_ftrace_notrace", "4 "), ("set_graph_function", "ext4_sync_fs:mod:ext4 ")],
        ),
        (
            &["-e", "sched", "-B", "b1", "-e", "irq", "-b", "2048", "-C", "global", "-M", "1"],
            &[("trace_clock", "global"), ("instances/b1/trace_clock", "global"),
              ("instances/b1/buffer_size_kb", "2048"), ("instances/b1/tracing_cpumask", "1")],
        ),
        // A --module with nothing after it in a buffer that is not the last: trace-cmd
        // left set_ftrace_filter alone.
        (
            &["-p", "function", "--module", "ext4", "-B", "b1", "-e", "irq"],
            &[("current_tracer", "function")],
        ),
        (
            &["-e", "irq", "-B", "b1", "-p", "function", "--module", "ext4"],
            &[("instances/b1/current_tracer", "function"), ("instances/b1/set_ftrace_filter", "5 6 ")],
        ),
        // -d and -D are the last buffer's: trace-cmd wrote 0 to b1's function-trace only.
        (
            &["-e", "irq", "-d", "-B", "b1", "-e", "irq"],
            &[("instances/b1/options/function-trace", "0")],
        ),
        (
            &["-d", "-e", "irq", "-B", "b1", "-e", "irq", "-B", "b2", "-e", "irq"],
            &[("instances/b2/options/function-trace", "0")],
        ),
    ];
    let files = [
        "current_tracer",
        "set_ftrace_filter",
        "set_ftrace_notrace",
        "set_graph_function",
        "trace_clock",
        "buffer_size_kb",
        "tracing_cpumask",
        "options/function-trace",
    ];
    for (args, wrote) in cases {
        let t = Tree::new();
        t.put("available_filter_functions", avail);
        t.put("set_ftrace_filter", "#### all functions enabled ####\n");
        t.put("set_ftrace_notrace", "");
        t.put("set_graph_function", "");
        t.put("options/function-trace", "1\n");
        let mut paths: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        for b in ["b1", "b2"] {
            make_instance(&t, b);
            fs::create_dir_all(t.root.join("instances").join(b).join("options")).unwrap();
            for f in [
                "set_ftrace_filter",
                "set_ftrace_notrace",
                "buffer_size_kb",
                "tracing_cpumask",
                "options/function-trace",
            ] {
                fs::copy(t.root.join(f), t.root.join("instances").join(b).join(f)).unwrap();
            }
            // The kernel has set_graph_function at the top level only here.
            paths.extend(
                files
                    .iter()
                    .filter(|f| **f != "set_graph_function")
                    .map(|f| format!("instances/{b}/{f}")),
            );
        }
        let before: Vec<String> = paths.iter().map(|p| t.read(p)).collect();
        let mut full = vec!["set"];
        full.extend_from_slice(args);
        t.ok(&full);
        for (path, old) in paths.iter().zip(before) {
            let got = t.read(path);
            match wrote.iter().find(|w| w.0 == path) {
                None => assert_eq!(got, old, "{args:?}: {path} was written"),
                Some((_, want))
                    if path.ends_with("set_ftrace_filter") || path.ends_with("notrace") =>
                {
                    let got = got.trim_start_matches("#### all functions enabled ####\n");
                    assert_eq!(
                        selected(avail, got),
                        selected(avail, want),
                        "{args:?}: {path} is {got:?}"
                    );
                }
                Some((_, want)) => {
                    let w: Vec<&str> = want.split_whitespace().collect();
                    let g: Vec<&str> = got.split_whitespace().collect();
                    assert_eq!(g, w, "{args:?}: {path}");
                }
            }
        }
    }
}

/// With function_graph, the top level's -n goes to set_graph_notrace, an instance's to
/// set_ftrace_notrace, as trace-cmd 3.1.6 writes them (set_funcs; seen with `trace-cmd
/// start` on a copy of this tree in a private mount namespace: `-p function_graph -n
/// schedule` wrote "schedule " to set_graph_notrace and left set_ftrace_notrace alone;
/// `-e sched -B b1 -p function_graph -n vfs_read` wrote instances/b1/set_ftrace_notrace).
#[test]
fn n_with_function_graph_goes_to_set_graph_notrace_at_the_top_level_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tracing");
    copy_tree(
        &repo().join("tracefs-fixtures/debian-6.1-function-graph-nested"),
        &root,
    );
    let t = Tree { _dir: dir, root };
    t.put(
        "available_filter_functions",
        "schedule\nschedule_idle\nvfs_read\nvfs_write\n",
    );
    for f in ["set_ftrace_notrace", "set_graph_notrace"] {
        t.put(f, "");
    }
    make_instance(&t, "b1");
    t.put("instances/b1/set_ftrace_notrace", "");
    t.ok(&["set", "-p", "function_graph", "-n", "schedule"]);
    t.expect(&[
        ("set_graph_notrace", "schedule\n"),
        ("set_ftrace_notrace", ""),
    ]);
    t.put("set_graph_notrace", "");
    t.ok(&[
        "set",
        "-e",
        "sched",
        "-B",
        "b1",
        "-p",
        "function_graph",
        "-n",
        "vfs_read",
    ]);
    t.expect(&[
        ("instances/b1/set_ftrace_notrace", "vfs_read\n"),
        ("set_graph_notrace", ""),
        ("set_ftrace_notrace", ""),
    ]);
    // Another tracer: set_ftrace_notrace, as before.
    t.ok(&["set", "-p", "function", "-n", "vfs_write"]);
    t.expect(&[
        ("set_ftrace_notrace", "vfs_write\n"),
        ("set_graph_notrace", ""),
    ]);
}
