//! The BTF enum reader on this kernel's own `/sys/kernel/btf/vmlinux`.

use crate::support::skips;

#[test]
fn reads_enums_from_this_kernels_btf_live() {
    let Ok(btf) = std::fs::read("/sys/kernel/btf/vmlinux") else {
        skips::skip("no /sys/kernel/btf/vmlinux");
        return;
    };
    let found = tracectl::btf::enums(&btf).unwrap();
    let find = |n: &str| found.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    // Stable across kernels: the hrtimer mode constants.
    assert_eq!(find("HRTIMER_MODE_ABS"), Some(0));
    assert_eq!(find("HRTIMER_MODE_REL"), Some(1));
    assert!(found.len() > 1000, "{}", found.len());
}
