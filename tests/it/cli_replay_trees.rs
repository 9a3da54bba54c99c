//! Read-only replay of every committed fixture tree: listing matches the tree's own
//! files and every line of the kernel's `trace` text parses.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn trees() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures");
    let mut v: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("available_events").exists())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no fixture trees under {}", root.display());
    v
}

fn run(tree: &PathBuf, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(tree)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{} {args:?}: {}",
        tree.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn list_events_is_available_events_in_every_tree() {
    for t in trees() {
        let want = fs::read_to_string(t.join("available_events")).unwrap();
        assert_eq!(run(&t, &["list", "-e"]), want, "{}", t.display());
        let sched: String = want
            .lines()
            .filter(|l| l.starts_with("sched:"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            run(&t, &["list", "-e", "sched:*"]),
            sched,
            "{}",
            t.display()
        );
        let tracers = fs::read_to_string(t.join("available_tracers")).unwrap();
        assert_eq!(run(&t, &["list", "-t"]).trim(), tracers.trim());
    }
}

#[test]
fn every_trace_line_of_every_tree_parses() {
    for t in trees() {
        let Ok(text) = fs::read_to_string(t.join("trace")) else {
            continue;
        };
        if fs::read_to_string(t.join("current_tracer")).is_ok_and(|s| s.trim() == "function_graph")
        {
            continue;
        } // graph layout: tests/it/oracle_graph.rs
        let mut n = 0;
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let p = tracectl::text::parse_line(line)
                .unwrap_or_else(|| panic!("{}: cannot parse {line:?}", t.display()));
            assert!(line.contains(&format!("[{:03}]", p.cpu)), "{line}");
            assert!(line.contains(&format!("{}-{}", p.comm, p.pid)), "{line}");
            assert!(
                line.contains(&format!(" {}", p.event)) && line.ends_with(p.body),
                "{line}"
            );
            n += 1;
        }
        let json = run(&t, &["show", "--json"]);
        assert_eq!(json.lines().count(), n, "{}", t.display());
        for l in json.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["event"].is_string(), "{l}");
        }
    }
}

#[test]
fn stat_reads_every_tree() {
    for t in trees() {
        let v: serde_json::Value = serde_json::from_str(&run(&t, &["stat", "--json"])).unwrap();
        let clock = fs::read_to_string(t.join("trace_clock")).unwrap();
        assert!(
            clock.contains(&format!("[{}]", v[0]["clock"].as_str().unwrap())),
            "{}",
            t.display()
        );
        let enabled = fs::read_to_string(t.join("set_event")).unwrap();
        assert_eq!(
            v[0]["events"].as_array().unwrap().len(),
            enabled.lines().count()
        );
    }
}
