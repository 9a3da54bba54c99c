//! A recorded tree is a recording, not a kernel: `graph`, `record`, `profile` and a data `capture`
//! refuse it before touching anything (no command is run, no file changes), and
//! `extract` reads it as a recording, taking kallsyms and uname from the tree's `host/`
//! and never from this machine.

use crate::support::tree as tree_support;

use std::path::Path;
use std::process::Command;

use tracectl::dat::DatFile;
use tree_support::{bin, Tree};

const FIXTURE: &str = "linux-6.18-sched-irq";
const KALLSYMS: &str =
    "ffffffff81000000 T tree_only_symbol\nffffffff81000100 t another_tree_symbol\n";
const UNAME: &str = "Linux treehost 9.9.9-tree #7 SMP PREEMPT_DYNAMIC @0 x86_64\n";

/// The tree with `host/` files no machine has.
fn distinctive_tree() -> Tree {
    let t = Tree::new(FIXTURE);
    let z = zstd::encode_all(KALLSYMS.as_bytes(), 3).unwrap();
    std::fs::write(t.root.join("host/kallsyms.zst"), z).unwrap();
    t.write("host/uname", UNAME);
    t
}

#[test]
fn commands_that_need_a_kernel_refuse_a_tree_and_change_nothing() {
    let t = distinctive_tree();
    let before = t.bytes();
    let ran = t.dir.path().join("the-command-ran");
    let touch = format!("touch {}", ran.display());
    let dest = t.dir.path().join("copy");
    let dest = dest.to_str().unwrap();
    for (args, command) in [
        (vec!["graph", "--", "sh", "-c", &touch], "graph"),
        (
            vec!["graph", "-g", "vfs_read", "--", "sh", "-c", &touch],
            "graph",
        ),
        (
            vec![
                "record", "-e", "sched", "-o", "x.dat", "--", "sh", "-c", &touch,
            ],
            "record",
        ),
        (vec!["record", "-e", "sched", "-o", "x.dat"], "record"),
        (
            vec!["profile", "-o", "p.txt", "--", "sh", "-c", &touch],
            "profile",
        ),
        (
            vec!["capture", dest, "-e", "sched", "--", "sh", "-c", &touch],
            "data capture",
        ),
    ] {
        let err = t.fails(&args);
        assert!(
            err.contains("a recorded tree, not a live kernel") && err.contains(command),
            "{args:?}: {err}"
        );
        assert!(!ran.exists(), "{args:?} ran the command on this machine");
        for f in ["x.dat", "p.txt"] {
            assert!(!t.dir.path().join(f).exists(), "{args:?} wrote {f}");
        }
        assert!(!Path::new(dest).exists(), "{args:?} wrote a capture");
        t.assert_unchanged(&before, &format!("{args:?}"));
    }
}

#[test]
fn extract_of_a_tree_takes_its_metadata_from_the_tree_only() {
    let t = distinctive_tree();
    let before = t.bytes();
    let out = t.dir.path().join("tree.dat");
    t.ok(&["extract", "-q", "-o", out.to_str().unwrap()]);
    t.assert_unchanged(&before, "extract");
    let d = DatFile::open(&out).unwrap();
    assert_eq!(d.kallsyms().unwrap(), KALLSYMS);
    assert_eq!(
        d.options().uname.as_deref(),
        Some("Linux treehost 9.9.9-tree x86_64")
    );
    // The recording's events are all there: the file reads back like the tree's pages.
    let report = Command::new(bin())
        .args(["report", "-i", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(report.status.success());
    assert!(String::from_utf8_lossy(&report.stdout).contains("sched_switch"));
}

#[test]
fn a_tracefs_dir_that_is_not_one_is_an_error_not_the_live_system() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    for args in [
        vec!["extract", "-q", "-o", "x.dat"],
        vec!["record", "-q", "-e", "sched", "-o", "x.dat", "--", "true"],
    ] {
        let o = Command::new(bin())
            .arg("--tracefs")
            .arg(&missing)
            .args(&args)
            .current_dir(dir.path())
            .env_remove("TRACECTL_TRACEFS")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains("no such directory"), "{args:?}: {err}");
        assert!(!dir.path().join("x.dat").exists(), "{args:?} wrote a file");
    }
}

#[test]
fn a_metadata_capture_of_a_tree_copies_the_trees_host_files() {
    let t = distinctive_tree();
    let before = t.bytes();
    let dest = t.dir.path().join("copy");
    t.ok(&["capture", dest.to_str().unwrap(), "--kallsyms"]);
    t.assert_unchanged(&before, "capture");
    assert_eq!(
        std::fs::read_to_string(dest.join("host/uname")).unwrap(),
        UNAME
    );
    let z = std::fs::read(dest.join("host/kallsyms.zst")).unwrap();
    assert_eq!(zstd::decode_all(&z[..]).unwrap(), KALLSYMS.as_bytes());
    assert_eq!(
        std::fs::read(dest.join("host/cpu_online")).unwrap(),
        std::fs::read(t.root.join("host/cpu_online")).unwrap()
    );
}

#[test]
fn extract_of_a_tree_without_kallsyms_stores_none() {
    let t = Tree::new(FIXTURE);
    assert!(!t.root.join("host/kallsyms.zst").exists());
    let out = t.dir.path().join("tree.dat");
    t.ok(&["extract", "-q", "-o", out.to_str().unwrap()]);
    let d = DatFile::open(&out).unwrap();
    // Not this machine's /proc/kallsyms.
    assert_eq!(d.kallsyms().unwrap(), "");
    assert_eq!(
        d.options().uname.as_deref(),
        Some("Linux vm 6.18.44-fc-v782 x86_64")
    );
}

/// With strace installed: the files the readers (`extract`, `stream`, `stat`, `show`,
/// `list`, `check-events`) and the writers (`start`, `reset`) open on a tree, none of
/// which may be this machine's kernel metadata. The readers leave the tree as it was.
#[test]
fn nothing_of_this_machine_is_opened_for_a_tree() {
    if Command::new("strace").arg("-V").output().is_err() {
        crate::support::skips::skip("strace is not installed");
        return;
    }
    let t = distinctive_tree();
    let before = t.bytes();
    let out = t.dir.path().join("tree.dat");
    let log = t.dir.path().join("strace.log");
    for (args, reads_only) in [
        (vec!["extract", "-q", "-o", out.to_str().unwrap()], true),
        (vec!["stream", "--style", "kernel"], true),
        (vec!["stat"], true),
        (vec!["show"], true),
        (vec!["list", "-e", "sched:*"], true),
        (vec!["check-events"], true),
        (vec!["start", "-e", "sched", "--subbuf-size", "8"], false),
        (vec!["reset", "-a", "-d"], false),
    ] {
        let o = Command::new("strace")
            .args([
                "-f",
                "-qq",
                "-e",
                "trace=open,openat,openat2,creat,truncate,unlink,rename,mkdir,rmdir",
            ])
            .arg("-o")
            .arg(&log)
            .arg(bin())
            .arg("--tracefs")
            .arg(&t.root)
            .args(&args)
            .env_remove("TRACECTL_TRACEFS")
            .output()
            .unwrap();
        if !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("ptrace") {
            crate::support::skips::skip("strace cannot trace here");
            return;
        }
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let trace = std::fs::read_to_string(&log).unwrap();
        // The log is real: it shows the tree's own files being opened.
        assert!(
            trace.contains(&format!("\"{}/", t.root.display())),
            "{args:?}: strace saw no file of the tree"
        );
        for host in [
            "/proc/kallsyms",
            "/proc/sys/kernel",
            "/proc/config",
            "/sys/kernel/btf",
            "/sys/devices/system/cpu",
            "/sys/kernel/tracing",
            "/sys/kernel/debug",
        ] {
            let seen: Vec<&str> = trace.lines().filter(|l| l.contains(host)).collect();
            assert!(seen.is_empty(), "{args:?} opened {host}: {seen:?}");
        }
        if reads_only {
            t.assert_unchanged(&before, &format!("{args:?}"));
        }
    }
}
