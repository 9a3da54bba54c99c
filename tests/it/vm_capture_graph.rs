//! `tracectl capture -p function_graph --top-level` on Debian's stock kernels under qemu
//! (this host's sandbox has no function_graph): the tree's own replay must reproduce the
//! kernel's graph text, and every top-level file the capture changed must be back.
//!
//! Runs when `TRACECTL_VM=1` and `TRACECTL_VM_BIN` names a static tracectl (see
//! tests/it/vm_kernels.rs); otherwise it prints why it skips.

use crate::support::vm;

use std::path::Path;
use std::process::Command;

const GUEST: &str = r#"
T=/sys/kernel/tracing
state() { awk "{print \$1}" $T/buffer_size_kb; cat $T/current_tracer $T/set_graph_function $T/max_graph_depth $T/options/funcgraph-proc $T/events/sched/sched_switch/enable $T/tracing_on; }
echo 1 > $T/events/sched/sched_switch/enable
state > /out/before
tracectl capture /out/tree --top-level --kallsyms -b 64 -p function_graph -g do_sys_openat2 --max-graph-depth 3 -O funcgraph-proc -e sched:sched_switch -- cat /etc/hostname
echo "capture=$?"
state > /out/after
echo 0 > $T/events/sched/sched_switch/enable
tracectl --tracefs /out/tree stream --style kernel > /out/ours
"#;

#[test]
fn vm_top_level_graph_capture_replays_and_restores() {
    let Some(bin) = vm::binary() else { return };
    for kernel in ["linux-image-amd64", "linux-image-6.12-amd64"] {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("guest.sh");
        std::fs::write(&script, GUEST).unwrap();
        let out = tempfile::tempdir().unwrap();
        let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vm/harness.sh");
        let status = Command::new("bash")
            .arg(&harness)
            .arg(kernel)
            .arg(&script)
            .arg(out.path())
            .arg(&bin)
            .status()
            .unwrap();
        let read = |n: &str| std::fs::read_to_string(out.path().join(n)).unwrap_or_default();
        let log = read("guest.log");
        assert!(
            status.success() && log.contains("capture=0"),
            "{kernel}: {log}"
        );
        assert_eq!(
            read("after"),
            read("before"),
            "{kernel}: top-level files not restored"
        );
        let kernel_text = read("tree/trace");
        assert!(
            kernel_text.contains("do_sys_openat2() {"),
            "{kernel}: no graph in {kernel_text}"
        );
        assert_eq!(
            read("ours"),
            kernel_text,
            "{kernel}: replay differs from the kernel's text"
        );
    }
}
