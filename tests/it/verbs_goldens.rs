//! `tracectl mem`, `hist` and `options` against what trace-cmd 3.1.6 printed for the same
//! inputs (`tests/data/tracecmd/make-verbs.sh`); no root, tracefs or trace-cmd needed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::tree::{bin, repo};

fn data(rel: &str) -> PathBuf {
    repo().join("tests/data/tracecmd").join(rel)
}

fn run(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tracectl")
}

/// Every recording with its `trace-cmd mem` golden, byte for byte: the sums, the column
/// layout, and the order of rows of equal waste (trace-cmd's hash order).
#[test]
fn mem_is_trace_cmds_byte_for_byte() {
    for stem in ["mem/kmem", "2cpu-v7", "2cpu-noinstance-v7", "4cpu-v7"] {
        let input = data(&format!("{stem}.dat"));
        let name = Path::new(stem).file_name().unwrap().to_str().unwrap();
        let want = std::fs::read(data(&format!("results/mem/{name}.txt"))).unwrap();
        // -i FILE and the positional FILE are the same.
        for args in [
            vec!["mem", "-i", input.to_str().unwrap()],
            vec!["mem", input.to_str().unwrap()],
        ] {
            let out = run(&args, &repo());
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(want.len() > 400, "{stem}: golden has rows");
            if out.stdout != want {
                panic!(
                    "{args:?} differs from trace-cmd mem:\n--- ours\n{}\n--- trace-cmd\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&want)
                );
            }
        }
    }
}

/// Without a file `mem` reads ./trace.dat, as trace-cmd does; a missing file is named.
#[test]
fn mem_defaults_to_trace_dat_and_names_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["mem"], dir.path());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("trace.dat"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    std::fs::copy(data("mem/kmem.dat"), dir.path().join("trace.dat")).unwrap();
    let out = run(&["mem"], dir.path());
    assert!(out.status.success());
    assert_eq!(
        out.stdout,
        std::fs::read(data("results/mem/kmem.txt")).unwrap()
    );
}

/// A file that is not a trace.dat is refused with its name, and nothing is printed.
#[test]
fn mem_refuses_a_file_that_is_not_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("junk.dat");
    std::fs::write(&p, b"not a trace\n").unwrap();
    let out = run(&["mem", p.to_str().unwrap()], dir.path());
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("junk.dat"), "{err}");
}

/// `options` prints the plugins `report -O` takes exactly as `trace-cmd options` prints
/// them: the function plugin's (parent, indent, offset) and function_graph's.
#[test]
fn options_are_trace_cmds_blocks_for_the_plugins_report_takes() {
    let golden = std::fs::read_to_string(data("results/options.txt")).unwrap();
    assert!(golden.starts_with("  plugin:\tftrace\n  option:\tparent\n"));
    let out = run(&["options"], &repo());
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), golden);
    let list = run(&["list", "-O"], &repo());
    assert_eq!(list.stdout, out.stdout, "list -O is the same list");
}

/// `hist` and `hist -P` of every recording against trace-cmd's: kernel stack traces
/// (`record -T`) under their events, plain events per task, and the instance buffer of a
/// file that has one (trace-cmd reads the instances, not the top buffer).
#[test]
fn hist_is_trace_cmds_byte_for_byte() {
    for stem in [
        "hist/stack",
        "mem/kmem",
        "2cpu-v7",
        "2cpu-noinstance-v7",
        "4cpu-v7",
    ] {
        let input = data(&format!("{stem}.dat"));
        let name = Path::new(stem).file_name().unwrap().to_str().unwrap();
        for (flag, suffix) in [(None, ""), (Some("-P"), "-P")] {
            let want = std::fs::read(data(&format!("results/hist/{name}{suffix}.txt"))).unwrap();
            assert!(!want.is_empty(), "{stem}{suffix}: golden has chains");
            let mut args = vec!["hist"];
            args.extend(flag);
            args.push(input.to_str().unwrap());
            let out = run(&args, &repo());
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if out.stdout != want {
                panic!(
                    "{args:?} differs from trace-cmd hist:\n--- ours\n{}\n--- trace-cmd\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&want)
                );
            }
        }
    }
    // The stack recording's tree has branches, caller lines and event markers.
    let stack = std::fs::read_to_string(data("results/hist/stack.txt")).unwrap();
    assert!(stack.contains("--- *kmalloc*") && stack.contains("|--%"));
}

/// A file that is not a trace.dat: `hist` names it and prints nothing.
#[test]
fn hist_refuses_a_file_that_is_not_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("junk.dat");
    std::fs::write(&p, b"not a trace\n").unwrap();
    let out = run(&["hist", "-i", p.to_str().unwrap()], dir.path());
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("junk.dat"));
}

/// `hist` of function_graph traces (the entry/exit stack tracking, lost events flushing
/// the stack): recorded tracefs trees written as trace.dat files by `extract`, against
/// trace-cmd's hist of the same files (`make-verbs.sh` made them the same way).
#[test]
fn hist_of_function_graph_trees_is_trace_cmds() {
    for t in [
        "debian-6.1-function-graph-nested",
        "debian-6.1-function-graph-wrapped",
        "debian-6.12-function-graph-openat",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let dat = dir.path().join(format!("{t}.dat"));
        let tree = repo().join("tracefs-fixtures").join(t);
        let out = run(
            &[
                "--tracefs",
                tree.to_str().unwrap(),
                "extract",
                "-q",
                "-o",
                dat.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert!(
            out.status.success(),
            "{t}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (flag, suffix) in [(None, ""), (Some("-P"), "-P")] {
            let want = std::fs::read(data(&format!("results/hist/tree-{t}{suffix}.txt"))).unwrap();
            let mut args = vec!["hist"];
            args.extend(flag);
            args.push(dat.to_str().unwrap());
            let out = run(&args, dir.path());
            assert!(
                out.status.success(),
                "{t}{suffix}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.stdout == want,
                "{t}{suffix}: hist differs from trace-cmd's:\n--- ours\n{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}

/// The version-6 copies of the recordings (`make-results.sh`: trace-cmd convert) give
/// the same tables as the version-7 files; trace-cmd prints the same for both.
#[test]
fn mem_and_hist_of_v6_files_are_trace_cmds() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["2cpu", "4cpu"] {
        let packed = std::fs::read(data(&format!("{n}-v6.dat.zst"))).unwrap();
        let dat = dir.path().join(format!("{n}-v6.dat"));
        std::fs::write(&dat, zstd::decode_all(&packed[..]).unwrap()).unwrap();
        for verb in ["mem", "hist"] {
            let want = std::fs::read(data(&format!("results/{verb}/{n}-v7.txt"))).unwrap();
            let out = run(&[verb, dat.to_str().unwrap()], dir.path());
            assert!(out.status.success(), "{verb} {n}-v6");
            assert!(out.stdout == want, "{verb} {n}-v6 differs from trace-cmd's");
        }
    }
}
