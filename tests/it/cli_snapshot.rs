//! `snapshot` with trace-cmd's letters (-s take, -r clear, -f free, -c CPU, -B), run on a
//! copy of a recorded tree with snapshot files added: the exact bytes each command writes,
//! and that nothing else changes.

use std::path::PathBuf;

use crate::support::tree::Tree;

const TREE: &str = "linux-6.18-sched-irq";

/// A tree copy with the snapshot files a kernel with CONFIG_TRACER_SNAPSHOT has, empty.
fn tree_with_snapshots() -> Tree {
    let t = Tree::new(TREE);
    t.write("snapshot", "");
    for cpu in 0..2 {
        t.write(&format!("per_cpu/cpu{cpu}/snapshot"), "");
    }
    t
}

/// Run `args`, then check that exactly `file` changed, to `want`.
fn writes_only(args: &[&str], file: &str, want: &str) {
    let t = tree_with_snapshots();
    let mut before = t.bytes();
    t.ok(args);
    assert_eq!(t.read(file), want, "tracectl {args:?}: {file}");
    before.insert(PathBuf::from(file), want.as_bytes().to_vec());
    t.assert_unchanged(&before, &format!("tracectl {args:?}"));
}

#[test]
fn take_clear_and_free_write_the_kernels_values() {
    writes_only(&["snapshot", "-s"], "snapshot", "1");
    writes_only(&["snapshot", "-r"], "snapshot", "2");
    writes_only(&["snapshot", "-f"], "snapshot", "0");
}

#[test]
fn c_names_the_cpu() {
    writes_only(&["snapshot", "-c", "1", "-s"], "per_cpu/cpu1/snapshot", "1");
    writes_only(&["snapshot", "-s", "-c", "1"], "per_cpu/cpu1/snapshot", "1");
    writes_only(&["snapshot", "-c", "0", "-r"], "per_cpu/cpu0/snapshot", "2");
    writes_only(
        &["snapshot", "--cpu", "1", "-r"],
        "per_cpu/cpu1/snapshot",
        "2",
    );
}

#[test]
fn c_alone_prints_that_cpus_snapshot() {
    let t = tree_with_snapshots();
    t.write("per_cpu/cpu1/snapshot", "# tracer: nop\n#\n");
    let before = t.bytes();
    assert_eq!(t.ok(&["snapshot", "-c", "1"]), "# tracer: nop\n#\n");
    t.assert_unchanged(&before, "snapshot -c 1");
}

#[test]
fn refused_combinations_change_nothing() {
    let t = tree_with_snapshots();
    let before = t.bytes();
    let err = t.fails(&["snapshot", "-c", "1", "-f"]);
    assert!(err.contains("-c 1 -f") && err.contains("drop -c"), "{err}");
    // -c takes a CPU: the old meaning (clear) is -r now.
    let err = t.fails(&["snapshot", "-c"]);
    assert!(err.contains("-c"), "{err}");
    let err = t.fails(&["snapshot", "-s", "-r"]);
    assert!(err.contains("cannot be used with"), "{err}");
    t.assert_unchanged(&before, "refused snapshot commands");
}

#[test]
fn b_names_the_instance() {
    let t = tree_with_snapshots();
    t.write("instances/foo/snapshot", "");
    t.write("instances/foo/per_cpu/cpu1/snapshot", "");
    t.write("instances/foo/trace", "");
    let mut before = t.bytes();
    t.ok(&["snapshot", "-B", "foo", "-c", "1", "-s"]);
    before.insert("instances/foo/per_cpu/cpu1/snapshot".into(), b"1".to_vec());
    t.assert_unchanged(&before, "snapshot -B foo -c 1 -s");
}
