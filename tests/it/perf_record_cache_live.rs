//! `tracectl perf record` fills perf's build-id cache as Debian's perf 6.1 `perf record`
//! does: the same files, modes and links for the same objects, so that perf (and ours)
//! name the frames of a program rebuilt since from the copy kept there. Both record
//! with a HOME of the test's own. Skips (with the reason) without root, perf or cc.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use crate::support::perf::{
    build_fixture_program, cc_missing, rebuild_spin_renamed, run, skip_reason,
};

fn can_run() -> bool {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return false;
    }
    if let Some(why) = cc_missing() {
        crate::support::skips::skip(why);
        return false;
    }
    true
}

/// Runs `cmd args` in `cwd` with HOME set to `home` and perf's configuration variables
/// unset: its standard output and error; the test fails when the command does.
fn run_home(cmd: &str, args: &[&str], cwd: &Path, home: &Path) -> (String, String) {
    let mut c = Command::new(cmd);
    c.current_dir(cwd).args(args).env("HOME", home);
    for v in [
        "PERF_CONFIG",
        "PERF_CONFIG_NOSYSTEM",
        "PERF_CONFIG_NOGLOBAL",
        "PERF_BUILDID_DIR",
    ] {
        c.env_remove(v);
    }
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{cmd} {args:?}: {stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

/// `perf buildid-list` of a file: (build id, name) of each object listed.
fn listed(d: &Path, file: &str) -> BTreeSet<(String, String)> {
    run("perf", &["buildid-list", "-i", file], d)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(id, name)| (id.to_string(), name.to_string()))
        .collect()
}

/// One entry of a cache tree, as far as it must be the same in perf's and ours.
#[derive(Debug, PartialEq, Eq)]
enum Node {
    Dir { mode: u32 },
    File { mode: u32 },
    Link { target: String },
}

/// Every entry under `root`, by its path relative to it.
fn tree(root: &Path) -> BTreeMap<String, Node> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Node>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let mode = m.permissions().mode() & 0o7777;
            let node = if m.is_symlink() {
                let target = std::fs::read_link(&p).unwrap().display().to_string();
                Node::Link { target }
            } else if m.is_dir() {
                walk(root, &p, out);
                Node::Dir { mode }
            } else {
                Node::File { mode }
            };
            out.insert(rel, node);
        }
    }
    assert!(root.is_dir(), "no build-id cache at {}", root.display());
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// /proc/kallsyms copies taken moments apart: BPF programs come and go between them.
fn kallsyms_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.ends_with("[bpf]"))
        .map(str::to_string)
        .collect()
}

/// The entries of a cache that belong to the object `id`: its `.build-id` link and,
/// through it, its directory and the files in it.
fn object_entries<'t>(
    cache: &Path,
    t: &'t BTreeMap<String, Node>,
    id: &str,
) -> Vec<(String, &'t Node)> {
    let link = format!(".build-id/{}/{}", &id[..2], &id[2..]);
    let mut out = vec![(link.clone(), &t[&link])];
    let Node::Link { target } = &t[&link] else {
        panic!("{link} in {} is no link", cache.display());
    };
    let dir = target.strip_prefix("../../").unwrap().to_string();
    for (k, v) in t.range(dir.clone()..) {
        if k != &dir && !k.starts_with(&format!("{dir}/")) {
            break;
        }
        out.push((k.clone(), v));
    }
    out
}

fn same_text(ours: &str, perf: &str, what: &str) {
    crate::support::perf::assert_same_lines(ours, perf, what);
}

/// A program recorded by perf and by ours, each with a HOME of its own: each cache
/// holds exactly the objects of its recording's BUILD_ID list, and an object listed in
/// both has the same entries in both caches (paths, kinds, modes, link targets,
/// contents; an `elf` or `debug` that perf hard-linked to the recorded file is the
/// same file in ours). What may differ: which objects the samples hit (the dynamic
/// loader, the kernel), and in the kernel's copy of /proc/kallsyms the BPF programs
/// loaded or unloaded between the two recordings. Then the program is rebuilt at its
/// path with its hot function renamed: perf names the old function in our recording
/// only from our cache (not with an empty one), and `tracectl perf report` and
/// `tracectl perf script` print what perf prints.
#[test]
fn perf_record_live_fills_the_build_id_cache_as_perf_does() {
    if !can_run() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("spin", d);
    for h in ["hperf", "hours", "hempty"] {
        std::fs::create_dir(d.join(h)).unwrap();
    }
    fn record(out: &str) -> [&str; 7] {
        ["record", "-e", "cpu-clock", "-o", out, "--", "./spin"]
    }
    run_home("perf", &record("perf.data"), d, &d.join("hperf"));
    let ours_record = [&["perf"][..], &record("ours.data")].concat();
    run_home(tracectl, &ours_record, d, &d.join("hours"));

    let (pcache, ocache) = (d.join("hperf/.debug"), d.join("hours/.debug"));
    let (pt, ot) = (tree(&pcache), tree(&ocache));
    let (plist, olist) = (listed(d, "perf.data"), listed(d, "ours.data"));
    let prog = d.join("spin").canonicalize().unwrap().display().to_string();
    assert!(
        olist.iter().any(|(_, n)| *n == prog),
        "our list names the program: {olist:?}"
    );
    for (cache, t, list) in [(&pcache, &pt, &plist), (&ocache, &ot, &olist)] {
        let links: BTreeSet<String> = t
            .keys()
            .filter_map(|k| k.strip_prefix(".build-id/"))
            .filter(|k| k.len() > 3)
            .map(|k| k.replace('/', ""))
            .collect();
        let ids: BTreeSet<String> = list.iter().map(|(id, _)| id.clone()).collect();
        assert_eq!(links, ids, "the objects cached in {}", cache.display());
    }
    let mut compared = 0;
    for (id, name) in plist.intersection(&olist) {
        let pe = object_entries(&pcache, &pt, id);
        let oe = object_entries(&ocache, &ot, id);
        assert_eq!(oe, pe, "the cache entries of {name}");
        for (rel, node) in &pe {
            if !matches!(node, Node::File { .. }) {
                continue;
            }
            let (p, o) = (pcache.join(rel), ocache.join(rel));
            if rel.ends_with("/kallsyms") {
                assert_eq!(kallsyms_lines(&o), kallsyms_lines(&p), "{rel}");
            } else {
                let same = std::fs::read(&o).unwrap() == std::fs::read(&p).unwrap();
                assert!(same, "{rel}: our copy differs from perf's");
            }
            let (pm, om) = (
                std::fs::metadata(&p).unwrap(),
                std::fs::metadata(&o).unwrap(),
            );
            if rel.ends_with("/elf") || rel.ends_with("/debug") {
                if pm.nlink() > 1 {
                    assert_eq!(om.ino(), pm.ino(), "{rel}: perf's is a hard link; ours too");
                } else {
                    assert_eq!(om.nlink(), 1, "{rel}: perf's is a copy; ours too");
                }
            }
            compared += 1;
        }
    }
    assert!(
        compared >= 3,
        "the program's elf and probes, and the vDSO's, at least"
    );

    rebuild_spin_renamed(d, "hot_renamed");
    let report = ["report", "--stdio", "-i", "ours.data"];
    let script = ["script", "-i", "ours.data"];
    let (without, _) = run_home("perf", &report, d, &d.join("hempty"));
    assert!(
        !without.contains("hot_function"),
        "without the cache the old function is unknown"
    );
    for cmd in [&report[..], &script] {
        let (perf, _) = run_home("perf", cmd, d, &d.join("hours"));
        assert!(
            perf.contains("hot_function"),
            "perf {cmd:?} names the old function from our cache: {}",
            &perf[..perf.len().min(1500)]
        );
        let ours_cmd = [&["perf"][..], cmd].concat();
        let (ours, _) = run_home(tracectl, &ours_cmd, d, &d.join("hours"));
        same_text(&ours, &perf, &format!("{cmd:?}"));
    }
}

/// `-N` (`--no-buildid-cache`) lists the build ids but caches nothing; `-B`
/// (`--no-buildid`) does neither and the file has no BUILD_ID section; perf's summary
/// then has no sample count. As perf.
#[test]
fn perf_record_live_no_buildid_cache_and_no_buildid_leave_the_cache_alone() {
    if !can_run() {
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_fixture_program("spin", d);
    let missing_build_id = |file: &str| {
        run("perf", &["report", "--header-only", "-i", file], d)
            .lines()
            .find(|l| l.starts_with("# missing features:"))
            .is_some_and(|l| l.split_whitespace().any(|w| w == "BUILD_ID"))
    };
    for opt in ["-N", "--no-buildid-cache", "-B", "--no-buildid"] {
        let skip = matches!(opt, "-B" | "--no-buildid");
        let mut last_lines = Vec::new();
        for (who, out) in [("perf", "perf.data"), (tracectl, "ours.data")] {
            let home = d.join(format!("h{opt}-{}", out.trim_end_matches(".data")));
            std::fs::create_dir(&home).unwrap();
            let args = ["record", opt, "-e", "cpu-clock", "-o", out, "--", "./spin"];
            let args = if who == "perf" {
                args.to_vec()
            } else {
                [&["perf"][..], &args].concat()
            };
            let (_, err) = run_home(who, &args, d, &home);
            assert!(
                !home.join(".debug").exists(),
                "{who} {opt} made a build-id cache"
            );
            assert_eq!(missing_build_id(out), skip, "{who} {opt}: BUILD_ID section");
            if !skip {
                let prog = d.join("spin").canonicalize().unwrap().display().to_string();
                assert!(
                    listed(d, out).iter().any(|(_, n)| *n == prog),
                    "{who} {opt} lists the program"
                );
            }
            let last = err.lines().last().unwrap_or_default().to_string();
            last_lines.push(last.ends_with("samples) ]"));
        }
        assert_eq!(
            last_lines[0], last_lines[1],
            "{opt}: the summary's sample count"
        );
    }
}

/// A program copied only into a mount namespace of its own (tests/data/perf/nsspin.c,
/// over a path where the host has another build of it), profiled by perf and by ours
/// while it runs: both copy the file from inside the namespace into the cache (a copy,
/// mode 0755, not a link to the host's file), with the same entries.
#[test]
fn perf_record_live_a_file_in_another_mount_namespace_is_copied_from_inside_it() {
    use crate::perf_script_live::{two_builds_of_nsspin, Spinner};
    let Some((dir, app, prog)) = two_builds_of_nsspin() else {
        return;
    };
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let d = dir.path();
    let mut child = Spinner::start_staged_inside(d, &app, &prog);
    let pid = child.pid.clone();
    let record = |out: &'static str| -> Vec<&str> {
        vec![
            "record",
            "-e",
            "cpu-clock",
            "-o",
            out,
            "-p",
            &pid,
            "--",
            "sleep",
            "0.5",
        ]
    };
    std::fs::create_dir(d.join("hperf")).unwrap();
    std::fs::create_dir(d.join("hours")).unwrap();
    run_home("perf", &record("perf.data"), d, &d.join("hperf"));
    let ours = [&["perf"][..], &record("ours.data")].concat();
    run_home(tracectl, &ours, d, &d.join("hours"));
    child.end();

    let inside = std::fs::read(d.join("stage/prog")).unwrap();
    let name = prog.display().to_string();
    let id_of = |file: &str| {
        listed(d, file)
            .into_iter()
            .find(|(_, n)| *n == name)
            .map(|(id, _)| id)
            .unwrap_or_else(|| panic!("{file} lists {name}"))
    };
    let id = id_of("perf.data");
    assert_eq!(id_of("ours.data"), id, "the inside file's build id");
    let (pcache, ocache) = (d.join("hperf/.debug"), d.join("hours/.debug"));
    let (pt, ot) = (tree(&pcache), tree(&ocache));
    let pe = object_entries(&pcache, &pt, &id);
    assert_eq!(
        object_entries(&ocache, &ot, &id),
        pe,
        "the cache entries of {name}"
    );
    let elf = format!("{}/{id}/elf", name.trim_start_matches('/'));
    assert!(
        pe.contains(&(elf.clone(), &Node::File { mode: 0o755 })),
        "{pe:?}"
    );
    for cache in [&pcache, &ocache] {
        let f = cache.join(&elf);
        let copied = std::fs::read(&f).unwrap() == inside;
        assert!(
            copied,
            "{} is not the file inside the namespace",
            f.display()
        );
        assert_eq!(std::fs::metadata(&f).unwrap().nlink(), 1, "{}", f.display());
    }
}
